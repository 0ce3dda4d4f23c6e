"""The `golden` agent: makes exactly the expected tool calls, in order, and answers the reference.

It checks a test file against the live service: on a consistent file every case scores 1.0 on
all three scores, and a call that fails on the seed state shows in `details.actual_tool_calls`.
"""

from __future__ import annotations

from restbench.agents.base import AgentAnswer, AgentError, AgentTask, ClaimedCall


class GoldenAgent:
    name = "golden"
    uses_expected = True  # the evaluator hands it the case's expected output

    async def run(self, task: AgentTask) -> AgentAnswer:
        if task.expected is None:
            raise AgentError("the golden agent needs the expected output")
        names = {tool.name for tool in task.tools}
        claimed = []
        for call in task.expected.tool_calls:
            if call.name in names:
                claimed.append(ClaimedCall(call.name, call.args))
                await task.tool(call.name).call(call.args)
        return AgentAnswer(task.expected.response, tuple(claimed), steps=len(claimed))
