"""The built-in `llm` agent: OpenAI-compatible tool calling over the service's tools.

Each step is one model call; the model either calls tools (each call is a real HTTP request, and
its status and body go back to the model) or answers. The agent stops at the answer or after
`max_steps` model calls.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from restbench.agents.base import AgentAnswer, AgentError, AgentTask, ClaimedCall
from restbench.agents.session import BoundTool, ToolResult
from restbench.llm import LLMError
from restbench.llm.fitting import estimate_tokens, trimmed

NAME_LIMIT = 64  # what OpenAI accepts as a function name

SYSTEM = """\
You carry out a user's request on the {title} REST API, using the tools. Each tool is one API \
operation: calling it sends the real HTTP request and gives back its status and JSON body.

Login: call the operation that logs in (or registers) with the right account; the session keeps \
the token it returns and sends it with every later call that needs it, so you never pass a \
token yourself. Logging in again switches the account.

Call only the operations the request needs, with exactly the values it gives; do not change data \
it does not ask to change. When you are done, reply to the user in one to three sentences that \
state the facts you found or what you changed (names, titles, ids, counts, values).

About the API:
{description}"""


def api_name(name: str) -> str:
    """A tool name the OpenAI API accepts: at most 64 of [a-zA-Z0-9_-]."""
    clean = re.sub(r"[^a-zA-Z0-9_-]", "_", name)
    if len(clean) <= NAME_LIMIT:
        return clean
    return f"{clean[:NAME_LIMIT - 9]}_{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def system_prompt(openapi: dict[str, Any], with_description: bool = True) -> str:
    info = openapi.get("info") or {}
    description = info.get("description", "").strip() if with_description else ""
    return SYSTEM.format(title=info.get("title", "service"),
                         description=description or "(none given)")


async def fitted_start(chat: Any, task: AgentTask, tools: list[dict[str, Any]]
                       ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """The first prompt and the tools, shrunk to fit the model's context when it is known:
    first the tools' descriptions cut to their first sentence (examples removed), then the API
    description left out of the system prompt. What was cut is returned."""
    def start(with_description: bool) -> list[dict[str, Any]]:
        return [{"role": "system", "content": system_prompt(task.openapi, with_description)},
                {"role": "user", "content": task.intent}]

    budget = await chat.prompt_budget()
    candidates = [(start(True), tools, []),
                  (start(True), trimmed(tools), ["tool descriptions trimmed"]),
                  (start(False), trimmed(tools), ["tool descriptions trimmed",
                                                  "API description left out"])]
    for messages, offered, cuts in candidates:
        if budget is None or estimate_tokens(messages, offered) <= budget:
            return messages, offered, cuts
    return candidates[-1]  # the client refuses it before the call, with the sizes


class LLMAgent:
    name = "llm"
    uses_model = True  # needs --model

    def __init__(self, result_chars: str = "4000") -> None:
        self.result_chars = int(result_chars)

    async def run(self, task: AgentTask) -> AgentAnswer:
        if task.chat is None:
            raise AgentError("the llm agent needs a model: pass --model NAME")
        by_api_name: dict[str, BoundTool] = {api_name(t.name): t for t in task.tools}
        messages, tools, cuts = await fitted_start(
            task.chat, task, [tool.as_openai(alias) for alias, tool in by_api_name.items()])
        details: dict[str, Any] = {"prompt_cuts": cuts} if cuts else {}
        claimed: list[ClaimedCall] = []
        cost, tokens_in, tokens_out, answer = 0.0, 0, 0, ""
        for step in range(1, task.max_steps + 1):
            try:
                result = await task.chat.complete(messages, tools=tools)
            except LLMError as exc:
                return AgentAnswer(answer, tuple(claimed), cost, tokens_in, tokens_out, step - 1,
                                   error=str(exc), details=details)
            cost += result.cost_usd
            tokens_in += result.usage.input_tokens
            tokens_out += result.usage.output_tokens
            answer = result.content.strip() or answer
            if not result.tool_calls:
                return AgentAnswer(answer, tuple(claimed), cost, tokens_in, tokens_out, step,
                                   details=details)
            messages.append(result.message)
            for call in result.tool_calls:
                tool = by_api_name.get(call.name)
                if tool is None:
                    outcome = ToolResult(None, error=f"unknown tool '{call.name}'")
                elif call.raw_arguments:
                    outcome = ToolResult(None, error="the arguments are not a JSON object")
                else:
                    claimed.append(ClaimedCall(tool.name, call.arguments))
                    outcome = await tool.call(call.arguments)
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": outcome.as_text(self.result_chars)})
        return AgentAnswer(answer, tuple(claimed), cost, tokens_in, tokens_out, task.max_steps,
                           details={**details,
                                    "stopped": f"step limit ({task.max_steps}) reached"})

