"""The agent interface, and how agents are found.

An agent is any object with a `name` and a `run(task)` method, plain or `async`, that returns an
`AgentAnswer` (or just the answer text). It gets the user's intent and the service's operations
as tools whose calls reach the live service; what it says it called is kept for reference, but
the score counts the calls the service actually saw.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from restbench.errors import RestbenchError
from restbench.plugins import available_plugins, resolve_plugin

if TYPE_CHECKING:
    from restbench.agents.session import BoundTool
    from restbench.agents.suite import ExpectedOutput
    from restbench.llm import ChatClient

GROUP = "restbench.agents"


class AgentError(RestbenchError):
    """An agent cannot be found, loaded or constructed."""


@dataclass(frozen=True)
class AgentTask:
    intent: str
    tools: tuple[BoundTool, ...]
    service: str
    base_url: str  # the live service, for agents that bring their own HTTP client
    openapi: dict[str, Any]
    max_steps: int = 10
    chat: ChatClient | None = None  # the model chosen with --model, when one was
    expected: ExpectedOutput | None = None  # only for agents that declare `uses_expected`

    def tool(self, name: str) -> BoundTool:
        return next(t for t in self.tools if t.name == name)


@dataclass(frozen=True)
class ClaimedCall:
    name: str
    args: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "args": self.args}


@dataclass(frozen=True)
class AgentAnswer:
    answer: str
    tool_calls: tuple[ClaimedCall, ...] = ()  # what the agent says it called
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    steps: int = 0
    error: str | None = None  # why the agent stopped short (its model failed, ...)
    details: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Agent(Protocol):
    name: str

    def run(self, task: AgentTask) -> Any:
        """Returns an AgentAnswer (or the answer text), or an awaitable of one."""
        ...


def available_agents() -> dict[str, str]:
    return available_plugins(GROUP)


def load_agent(name: str, args: dict[str, str] | None = None) -> Agent:
    """Builds the agent `name` (entry point or module:attribute) and checks it fits."""
    target = resolve_plugin(name, GROUP, "agent", AgentError)
    args = args or {}
    if inspect.isclass(target) or (callable(target) and not hasattr(target, "run")):
        try:
            agent = target(**args)
        except TypeError as exc:
            raise AgentError(f"agent '{name}': bad arguments {args or '{}'}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - its constructor's failure is the user's to fix
            raise AgentError(f"agent '{name}' with arguments {args or '{}'} failed to start: "
                             f"{type(exc).__name__}: {exc}") from None
    else:
        if args:
            raise AgentError(f"agent '{name}' is an object and takes no arguments")
        agent = target
    problems = [] if hasattr(agent, "name") else ["no 'name' attribute"]
    if not callable(getattr(agent, "run", None)):
        problems.append("no run(task) method")
    if problems:
        raise AgentError(f"agent '{name}' does not fit the interface: " + ", ".join(problems))
    return agent  # type: ignore[no-any-return]


def as_answer(result: Any) -> AgentAnswer:
    if isinstance(result, AgentAnswer):
        return result
    if isinstance(result, str):
        return AgentAnswer(result)
    raise TypeError(f"run() returned {type(result).__name__}, expected AgentAnswer or str")
