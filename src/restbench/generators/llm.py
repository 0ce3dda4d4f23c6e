"""The LLM generators: `single-step` (one call) and `refine` (draft, run, judge, revise).

Both reach a model through any OpenAI-compatible endpoint (restbench.llm). Every answer is kept
in the run's store, keyed by the request, so a rerun or a resumed run never pays for a call twice.
"""

from __future__ import annotations

import re
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from restbench.errors import GeneratorError
from restbench.generators.base import Cost, GeneratedTest, GenerationFailure, GenerationTask
from restbench.generators.prompts import (
    format_trace,
    judge_messages,
    revision_messages,
    writer_messages,
)
from restbench.llm import ChatClient, ChatResult, LLMError, ModelSettings, NoCodeError
from restbench.llm.extract import extract_python
from restbench.store.sqlite import digest

TRACE_KEPT_CHARS = 6000


def _cost(result: ChatResult) -> Cost:
    return Cost(result.cost_usd, result.usage.input_tokens, result.usage.output_tokens)


async def write_test(client: ChatClient, requirement_text: str, openapi: dict[str, Any] | str,
                     base_url: str, seed_test: str | None = None,
                     cache_tag: str | None = None) -> GeneratedTest:
    """One writer call: requirement + OpenAPI document + base URL in, a pytest file out.

    Raises GenerationFailure (carrying what the call cost) when the answer holds no test code.
    """
    messages = writer_messages(requirement_text, openapi, base_url, seed_test)
    try:
        result = await client.complete(messages, cache_tag=cache_tag)
    except LLMError as exc:
        raise GenerationFailure(str(exc)) from None
    details = {"calls": 1, "cached_calls": int(result.cached), "answer": result.content}
    try:
        code = extract_python(result.content)
    except NoCodeError as exc:
        raise GenerationFailure(str(exc), _cost(result), details) from None
    return GeneratedTest(code, _cost(result), details)


class _ModelAccess:
    """Builds clients for the models a task names, from the config file or the environment."""

    def __init__(self, config: str | None) -> None:
        self._config = config
        self._settings: ModelSettings | None = None

    def client(self, model: str | None, task: GenerationTask) -> ChatClient:
        if not model:
            raise GeneratorError("this generator needs a model: pass --models NAME")
        if self._settings is None:
            self._settings = ModelSettings.load(Path(self._config) if self._config else None)
        return ChatClient(self._settings.resolve(model), self._settings.prices,
                          cache=task.call_cache, read_cache=not task.fresh_calls)


def _tag(task: GenerationTask) -> str:
    return f"repetition={task.repetition}"


class SingleStepGenerator:
    """One call per requirement; the generator never contacts the service."""

    name = "single-step"
    refines = False
    uses_model = True

    def __init__(self, config: str | None = None) -> None:
        self._models = _ModelAccess(config)

    async def generate(self, task: GenerationTask) -> GeneratedTest:
        async with self._models.client(task.model, task) as client:
            return await write_test(client, task.requirement_text, task.openapi, task.base_url,
                                    cache_tag=_tag(task))


_VERDICT = re.compile(r"\b(FINISH|REFINE(?:MENT)?)\b")


def parse_verdict(text: str) -> tuple[str | None, str]:
    """('FINISH' | 'REFINE' | None, reason). The first line decides; else the first verdict word
    in upper case anywhere in the answer."""
    text = (text or "").strip()
    first, _, rest = text.partition("\n")
    match = _VERDICT.search(first.upper())
    if match is None:
        match = _VERDICT.search(text)
        if match is None:
            return None, ""
        rest = text[match.end():]
    elif not rest.strip():
        rest = first[match.end():]
    verdict = "FINISH" if match.group(1) == "FINISH" else "REFINE"
    return verdict, " ".join(rest.split()).lstrip(":.-– ")[:500]


@dataclass
class _Round:
    number: int
    code: str
    outcome: str = ""
    trace: str = ""
    output: str = ""
    verdict: str = ""
    reason: str = ""
    cost: Cost = field(default_factory=Cost)

    def record(self) -> dict[str, Any]:
        return {"round": self.number, "code": self.code, "outcome": self.outcome,
                "verdict": self.verdict, "reason": self.reason,
                "trace": self.trace[:TRACE_KEPT_CHARS], "output": self.output[-2000:],
                "cost_usd": self.cost.usd, "input_tokens": self.cost.input_tokens,
                "output_tokens": self.cost.output_tokens}


class RefineGenerator:
    """Draft as `single-step` does, then up to `rounds` times: run the draft on the live, freshly
    reset service, show code, output and HTTP trace to a judge (FINISH or REFINE), and on REFINE
    have the writer revise it. The last draft is the test; every round is kept in the details."""

    name = "refine"
    refines = True
    uses_model = True

    def __init__(self, rounds: str | int = 3, judge: str | None = None,
                 config: str | None = None) -> None:
        try:
            self.rounds = int(rounds)
        except ValueError:
            raise GeneratorError(f"refine: rounds must be a whole number, not {rounds!r}") from None
        if self.rounds < 1:
            raise GeneratorError(f"refine: rounds must be at least 1, not {self.rounds}")
        self.judge = judge or None
        self.extra_models = (self.judge,) if self.judge else ()  # checked before the run
        self._models = _ModelAccess(config)

    async def generate(self, task: GenerationTask) -> GeneratedTest:
        if task.live is None:
            raise GeneratorError("refine needs the live service (task.live)")
        async with AsyncExitStack() as stack:
            writer = await stack.enter_async_context(self._models.client(task.model, task))
            judge = writer if self.judge in (None, task.model) else \
                await stack.enter_async_context(self._models.client(self.judge, task))
            return await self._loop(task, writer, judge)

    async def _loop(self, task: GenerationTask, writer: ChatClient,
                    judge: ChatClient) -> GeneratedTest:
        first = await write_test(writer, task.requirement_text, task.openapi, task.base_url,
                                 cache_tag=_tag(task))
        total, rounds = first.cost, [_Round(1, first.code, cost=first.cost)]
        first_messages = writer_messages(task.requirement_text, task.openapi, task.base_url)

        def failure(message: str) -> GenerationFailure:
            return GenerationFailure(message, total, self._details(rounds, "error"))

        while True:
            current = rounds[-1]
            # Traces vary between runs (timings, random ids), so judge and revision calls are
            # keyed by what decides them: the task, the round and the draft.
            identity = digest(_tag(task), task.target, task.service_name, task.requirement_id,
                              task.variant.value, current.number, current.code)
            result = await task.live.execute(current.code)
            current.outcome, current.output = result.outcome.value, result.output
            current.trace = format_trace(result.exchanges)
            verdict, reason, spent = await self._judge(judge, task, current, identity)
            current.cost, total = current.cost + spent, total + spent
            current.verdict, current.reason = verdict or "unclear", reason
            if verdict != "REFINE":
                stop = "finished" if verdict == "FINISH" else "unclear verdict"
                break
            if current.number >= self.rounds:
                stop = "round limit"
                break
            try:
                answer = await writer.complete(
                    revision_messages(first_messages, current.code, current.output,
                                      current.trace, reason), cache_key=f"revise:{identity}")
            except LLMError as exc:
                raise failure(str(exc)) from None
            total += _cost(answer)
            try:
                code = extract_python(answer.content)
            except NoCodeError as exc:
                raise failure(f"round {current.number + 1}: {exc}") from None
            rounds.append(_Round(current.number + 1, code, cost=_cost(answer)))
        return GeneratedTest(rounds[-1].code, total, self._details(rounds, stop))

    async def _judge(self, judge: ChatClient, task: GenerationTask, draft: _Round,
                     identity: str) -> tuple[str | None, str, Cost]:
        """The verdict; an answer with neither word is asked once more, then called unclear."""
        messages = judge_messages(task.requirement_text, task.openapi, draft.code, draft.output,
                                  draft.trace)
        spent = Cost()
        for attempt in range(2):
            try:
                answer = await judge.complete(messages, cache_key=f"judge:{identity}:{attempt}")
            except LLMError:
                return None, "judge unreachable", spent
            spent += _cost(answer)
            verdict, reason = parse_verdict(answer.content)
            if verdict is not None:
                return verdict, reason, spent
        return None, "the judge answered neither FINISH nor REFINE", spent

    def _details(self, rounds: list[_Round], stop: str) -> dict[str, Any]:
        return {"rounds": [r.record() for r in rounds], "stopped": stop,
                "judge": self.judge or "same as writer", "max_rounds": self.rounds}
