"""Agent evaluation: intents in, tool calls and answers out, scored on the live services."""

from restbench.agents.base import (
    Agent,
    AgentAnswer,
    AgentError,
    AgentTask,
    ClaimedCall,
    available_agents,
    load_agent,
)
from restbench.agents.evaluate import EvalConfig, EvalReport, evaluate_agent
from restbench.agents.scoring import ArgsMatch, ResponseScoring
from restbench.agents.session import BoundTool, ToolResult
from restbench.agents.suite import SuiteError, load_suites, schema_text
from restbench.agents.tools import Tool, tool_name, tools_from_openapi

__all__ = [
    "Agent",
    "AgentAnswer",
    "AgentError",
    "AgentTask",
    "ArgsMatch",
    "BoundTool",
    "ClaimedCall",
    "EvalConfig",
    "EvalReport",
    "ResponseScoring",
    "SuiteError",
    "Tool",
    "ToolResult",
    "available_agents",
    "evaluate_agent",
    "load_agent",
    "load_suites",
    "schema_text",
    "tool_name",
    "tools_from_openapi",
]
