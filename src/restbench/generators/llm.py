"""The LLM generators: `single-step` (one call) and `refine` (draft, run, judge, revise).

Both reach a model through any OpenAI-compatible endpoint (restbench.llm). Every answer is kept
in the run's store, keyed by the request, so a rerun or a resumed run never pays for a call twice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from restbench.errors import GeneratorError
from restbench.generators.base import (
    Cost,
    GeneratedTest,
    GenerationFailure,
    GenerationTask,
    oversized,
)
from restbench.generators.languages import PYTHON, Language, language_named
from restbench.generators.prompts import (
    format_trace,
    judge_messages,
    revision_messages,
    writer_messages,
)
from restbench.generators.shrink import PromptPlan, check_mode, fit, plans
from restbench.llm import ChatClient, ChatResult, CutOffAnswer, LLMError, ModelSettings, NoCodeError
from restbench.store.sqlite import digest

TRACE_KEPT_CHARS = 6000
ANSWER_KEPT_CHARS = 20_000  # of an answer, in a run's details: the call cache has it whole


def _cost(result: ChatResult) -> Cost:
    return Cost(result.cost_usd, result.usage.input_tokens, result.usage.output_tokens)


def _usable_code(result: ChatResult, language: Language = PYTHON) -> bool:
    """Whether the answer holds a test the run can keep: only such answers are cached."""
    try:
        return not oversized(language.extract(result.content))
    except NoCodeError:
        return False


def _code(result: ChatResult, language: Language) -> str:
    """The answer's test code; NoCodeError without one, or with one too big to keep."""
    code = language.extract(result.content)
    if too_big := oversized(code):
        raise NoCodeError(f"the model's code is {too_big}")
    return code


async def write_test(client: ChatClient, requirement_text: str, openapi: dict[str, Any] | str,
                     base_url: str, seed_test: str | None = None,
                     cache_tag: str | None = None, *, operations: Sequence[str] = (),
                     openapi_mode: str = "full",
                     answer_chars: int | None = None,
                     language: Language = PYTHON) -> GeneratedTest:
    """One writer call: requirement + OpenAPI document + base URL in, a pytest file out.

    The document shrinks to fit the model's context (restbench.llm.fitting); `operations` are
    the requirement's. Raises GenerationFailure (carrying what the call cost) when the prompt
    cannot fit, the answer was cut off at the token limit or holds no test code; such an answer
    is not kept in the call cache, so a rerun asks again. The answer is in the details, its
    first `answer_chars` when given (the call cache holds it whole).
    """
    chosen = None if language is PYTHON else language  # Python's prompt stays as it was
    if isinstance(openapi, str):
        fitted_messages = writer_messages(requirement_text, openapi, base_url, seed_test, chosen)
        prompt: dict[str, Any] = {"openapi": "as given"}
    else:
        fitted = await fit(client, lambda plan: writer_messages(
            requirement_text, plan.openapi, base_url, seed_test, chosen),
            plans(openapi, operations, openapi_mode))
        fitted_messages, prompt = fitted.messages, fitted.record(openapi_mode)
    try:
        result = await client.complete(fitted_messages, cache_tag=cache_tag,
                                       usable=lambda answer: _usable_code(answer, language))
    except CutOffAnswer as exc:
        raise GenerationFailure(str(exc), _cost(exc.result), {
            "calls": 1, "cached_calls": 0, "prompt": prompt, "stopped": "token limit",
            "answer": exc.result.content[:answer_chars]}) from None
    except LLMError as exc:
        raise GenerationFailure(str(exc), details={"prompt": prompt}) from None
    details = {"calls": 1, "cached_calls": int(result.cached), "prompt": prompt,
               "answer": result.content[:answer_chars]}
    try:
        code = _code(result, language)
    except NoCodeError as exc:
        raise GenerationFailure(str(exc), _cost(result), details) from None
    return GeneratedTest(code, _cost(result), details, runner=language.runner)


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

    def __init__(self, config: str | None = None, openapi: str = "full",
                 language: str = "python") -> None:
        self._models = _ModelAccess(config)
        self.openapi_mode = check_mode(openapi, self.name)
        self.language = language_named(language, self.name)

    async def generate(self, task: GenerationTask) -> GeneratedTest:
        async with self._models.client(task.model, task) as client:
            return await write_test(client, task.requirement_text, task.openapi, task.base_url,
                                    cache_tag=_tag(task), operations=list(task.operations),
                                    openapi_mode=self.openapi_mode,
                                    answer_chars=ANSWER_KEPT_CHARS, language=self.language)


_VERDICT = re.compile(r"\b(FINISH|REFINE(?:MENT)?)\b")


def parse_verdict(text: str) -> tuple[str | None, str]:
    """('FINISH' | 'REFINE' | None, reason). A first line that is only a verdict word (in any
    case, with any punctuation) decides; else the verdict word in upper case on the first line,
    else in the whole answer. Both words in the same place are no verdict ("Do not FINISH yet;
    REFINE")."""
    text = (text or "").strip()
    first, _, rest = text.partition("\n")
    bare = re.sub(r"[^A-Za-z]", "", first).upper()
    if _VERDICT.fullmatch(bare):
        return _verdict_word(bare), _reason(rest)
    for scope in (first, text):
        found = list(_VERDICT.finditer(scope))
        if len({_verdict_word(m.group(1)) for m in found}) > 1:
            return None, ""
        if found:
            after = rest if scope is first and rest.strip() else scope[found[0].end():]
            return _verdict_word(found[0].group(1)), _reason(after)
    return None, ""


def _verdict_word(word: str) -> str:
    return "FINISH" if word == "FINISH" else "REFINE"


def _reason(text: str) -> str:
    return " ".join(text.split()).lstrip(":.-– ")[:500]


class _JudgeFailed(Exception):
    def __init__(self, message: str, spent: Cost) -> None:
        super().__init__(message)
        self.spent = spent


@dataclass
class _Round:
    number: int
    code: str
    outcome: str = ""
    trace: str = ""
    exchanges: tuple[dict[str, Any], ...] = ()
    output: str = ""
    verdict: str = ""
    reason: str = ""
    cost: Cost = field(default_factory=Cost)
    prompts: dict[str, Any] = field(default_factory=dict)  # what was cut, per call

    def record(self) -> dict[str, Any]:
        return {"round": self.number, "code": self.code, "outcome": self.outcome,
                "verdict": self.verdict, "reason": self.reason, "prompts": self.prompts,
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
                 config: str | None = None, openapi: str = "full",
                 language: str = "python") -> None:
        self.openapi_mode = check_mode(openapi, self.name)
        self.language = language_named(language, self.name)
        self._chosen = None if self.language is PYTHON else self.language
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
                                 cache_tag=_tag(task), operations=list(task.operations),
                                 openapi_mode=self.openapi_mode, answer_chars=ANSWER_KEPT_CHARS,
                                 language=self.language)
        total = first.cost
        rounds = [_Round(1, first.code, cost=first.cost,
                         prompts={"writer": first.details.get("prompt")})]

        unrevised = ""  # why the last revision asked for gave no draft

        def failure(message: str, stop: str = "error") -> GenerationFailure:
            return GenerationFailure(message, total, self._details(rounds, stop))

        while True:
            current = rounds[-1]
            # Traces vary between runs (timings, random ids), so judge and revision calls are
            # keyed by what decides them: the task, the round and the draft.
            identity = digest(_tag(task), task.target, task.service_name, task.requirement_id,
                              task.variant.value, current.number, current.code)
            result = await task.live.execute(current.code, self.language.runner)
            current.outcome, current.output = result.outcome.value, result.output
            current.exchanges = tuple(result.exchanges)
            current.trace = format_trace(result.exchanges)
            try:
                verdict, reason, spent = await self._judge(judge, task, current, identity)
            except _JudgeFailed as exc:
                current.cost, total = current.cost + exc.spent, total + exc.spent
                current.verdict, current.reason = "failed", str(exc)
                # The draft was never reviewed (no judge, or no verdict): a failure to see in
                # the results, not a test.
                raise failure(f"round {current.number}: {exc}", "judge failed") from None
            current.cost, total = current.cost + spent, total + spent
            current.verdict, current.reason = verdict, reason
            if verdict == "FINISH":
                stop = "finished"
                break
            if current.number >= self.rounds:
                stop = "round limit"
                break
            try:
                fitted = await fit(writer, lambda plan, draft=current, why=reason:
                                   revision_messages(
                    writer_messages(task.requirement_text, plan.openapi, task.base_url,
                                    language=self._chosen),
                    draft.code, plan.output(draft.output),
                    format_trace(draft.exchanges, plan.trace_last),
                    why, self._chosen), self._plans(task, with_trace=True), "revision prompt")
                answer = await writer.complete(
                    fitted.messages, cache_key=f"revise:{identity}",
                    usable=lambda result: _usable_code(result, self.language))
            except GenerationFailure as exc:
                raise failure(f"round {current.number + 1}: {exc}") from None
            except CutOffAnswer as exc:
                # The writer answered, but no revision came of it: the last draft is the test,
                # as at the round limit (the answer is not stored; a rerun asks again).
                total += _cost(exc.result)
                stop, unrevised = "revision cut off", f"round {current.number + 1}: {exc}"
                break
            except LLMError as exc:
                raise failure(str(exc)) from None
            total += _cost(answer)
            try:
                code = _code(answer, self.language)
            except NoCodeError as exc:
                stop, unrevised = "revision without a test", f"round {current.number + 1}: {exc}"
                break
            rounds.append(_Round(current.number + 1, code, cost=_cost(answer),
                                 prompts={"writer": fitted.record(self.openapi_mode)}))
        details = self._details(rounds, stop)
        if unrevised:
            details["revision_error"] = unrevised
        return GeneratedTest(rounds[-1].code, total, details, runner=self.language.runner)

    def _plans(self, task: GenerationTask, with_trace: bool) -> list[PromptPlan]:
        return plans(task.openapi, list(task.operations), self.openapi_mode, with_trace)

    async def _judge(self, judge: ChatClient, task: GenerationTask, draft: _Round,
                     identity: str) -> tuple[str, str, Cost]:
        """The verdict and its reason. An answer with neither word is asked once more; a judge
        that cannot be asked (unreachable, prompt too long) or gives no verdict twice raises
        _JudgeFailed."""
        try:
            fitted = await fit(judge, lambda plan: judge_messages(
                task.requirement_text, plan.openapi, draft.code, plan.output(draft.output),
                format_trace(draft.exchanges, plan.trace_last), self._chosen),
                self._plans(task, with_trace=True), "judge prompt")
        except GenerationFailure as exc:
            raise _JudgeFailed(str(exc), Cost()) from None
        draft.prompts["judge"] = fitted.record(self.openapi_mode)
        spent = Cost()
        for attempt in range(2):
            try:
                # An answer without a verdict is not kept: a rerun asks the judge again.
                answer = await judge.complete(
                    fitted.messages, cache_key=f"judge:{identity}:{attempt}",
                    usable=lambda result: parse_verdict(result.content)[0] is not None)
            except CutOffAnswer as exc:
                answer = exc.result  # a verdict is its first line: a long tail does not matter
            except LLMError as exc:
                raise _JudgeFailed(f"judge call failed: {exc}", spent) from None
            spent += _cost(answer)
            verdict, reason = parse_verdict(answer.content)
            if verdict is not None:
                return verdict, reason, spent
        raise _JudgeFailed(f"the judge answered neither FINISH nor REFINE, twice (last answer: "
                           f"{' '.join(answer.content.split())[:80]!r})", spent)

    def _details(self, rounds: list[_Round], stop: str) -> dict[str, Any]:
        return {"rounds": [r.record() for r in rounds], "stopped": stop,
                "judge": self.judge or "same as writer", "max_rounds": self.rounds}


# The generators that call models through restbench's endpoints and keys (`restbench.llm`): a
# run checks their models' credentials before it starts.
THROUGH_RESTBENCH_ENDPOINTS = (SingleStepGenerator, RefineGenerator)
