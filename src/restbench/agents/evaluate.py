"""`agent-eval`: run an agent on every case of a test file against the live service, and score it.

Before any case runs, the test file is checked against its schema (and its tool names against the
service's tools, which only warns). Each case gets the service freshly reset to its seed state; the tool calls that count are
the HTTP exchanges the service recorded, mapped back to tools and arguments.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from restbench.agents.base import AgentAnswer, AgentError, AgentTask, as_answer, load_agent
from restbench.agents.embeddings import similarity
from restbench.agents.judge import Judgement, judge
from restbench.agents.llm import system_prompt
from restbench.agents.results import (
    JUDGE_ERROR,
    RESULT_FILES,
    REUSED,
    CaseResult,
    EarlierRun,
    Unrecorded,
    check_writable,
    earlier_run,
    summary,
    write_results,
)
from restbench.agents.scoring import (
    ArgsMatch,
    Call,
    ResponseScoring,
    exact_score,
    fuzzy_score,
    grounded_keyword_score,
    keyword_score,
    tool_call_score,
)
from restbench.agents.session import LiveSession
from restbench.agents.suite import EvalCase, EvalSuite, SuiteError, load_suites
from restbench.agents.tools import Tool, calls_from_exchanges, normalize_args, tools_from_openapi
from restbench.benchmark import resolve_services
from restbench.benchmark.loader import builtin_service_names
from restbench.benchmark.models import Service
from restbench.benchmark.openapi_doc import service_openapi
from restbench.engine.events import Advanced, EventHandler, Notice, PhaseStarted, ignore
from restbench.errors import RestbenchError
from restbench.llm import (
    MODEL_CALL_STORE,
    ChatClient,
    ChatResult,
    LLMError,
    ModelSettings,
    Replay,
    answers_seen,
    check_credentials,
    replay,
)
from restbench.llm.client import spent
from restbench.mutation import implementations_of
from restbench.mutation.apply import ORIGINAL
from restbench.plugins import source_fingerprint
from restbench.scratch import scratch_folder
from restbench.serving import RunningServer, ServerPool
from restbench.serving.databases import DatabaseChoice
from restbench.store.sqlite import ResultStore, digest

PHASE = "cases"


@dataclass(frozen=True)
class EvalConfig:
    test_file: Path
    results_dir: Path = Path("agent-results")
    service: str | None = None  # overrides what the file says or implies
    agent: str = "llm"
    agent_args: dict[str, str] = field(default_factory=dict)
    model: str | None = None
    judge_model: str | None = None
    llm_config: Path | None = None
    scoring: ResponseScoring = ResponseScoring.FUZZY
    match_args: ArgsMatch = ArgsMatch.EXACT
    max_steps: int = 10
    workers: int = 1
    database: str = "sqlite"
    case_timeout_s: float = 300.0  # an agent that has not answered by then fails the case
    fresh: bool = False  # run every case, also those results.json holds finished, and ask the
    # models again, also what the folder's model-call store holds


@dataclass
class EvalReport:
    summary: dict[str, Any]
    results: list[CaseResult]
    files: dict[str, Path]


@dataclass
class _Target:
    """A service the file's suites run against, with its tools and document."""

    service: Service
    openapi: dict[str, Any] = field(default_factory=dict)
    tools: list[Tool] = field(default_factory=list)
    # The original that served the document, kept running for the first worker's cases.
    server: RunningServer | None = None


# Part of every case's key: a result scored by other rules is not reused. 2: header arguments
# are compared, and a call matches only with the expected answer (a success by default). 3: the
# grounded keyword score is over the keywords the agent was not given.
SCORING_RULES = 3


def normalize_name(name: str) -> str:
    """Tool names in a test file are read with the naming rule's case and separator folding."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _service_of(suite: EvalSuite, override: str | None, where: Path) -> str:
    if override:
        return override
    if suite.service:
        return suite.service
    builtins = builtin_service_names()
    if suite.name in builtins:
        return suite.name
    names = [normalize_name(c.name) for case in suite.cases for c in case.expected.tool_calls]
    fitting = [s for s in builtins if names and all(n.startswith(f"{s}_") for n in names)]
    if len(fitting) == 1:
        return fitting[0]
    raise SuiteError([(f"{where}: {suite.path}: cannot tell which service suite '{suite.name}' "
                      "is for: pass --service (or give the suite a \"service\" member)")])


def _check_tool_names(cases: list[EvalCase], tools: list[Tool], service: str,
                      where: Path) -> list[str]:
    known = {tool.name for tool in tools}
    problems = []
    for case in cases:
        for i, call in enumerate(case.expected.tool_calls):
            if normalize_name(call.name) not in known:
                problems.append(f"{where}: {case.path}.expected_output.tool_calls[{i}].name: "
                                f"unknown tool '{call.name}' for service {service}: it can "
                                f"never match (see `restbench agent-eval --list-tools -s "
                                f"{service}`)")
    return problems


def _expected_calls(case: EvalCase, tools: dict[str, Tool]) -> list[Call]:
    calls = []
    for call in case.expected.tool_calls:
        name = normalize_name(call.name)
        tool = tools.get(name)
        calls.append(Call(name, normalize_args(tool, call.args) if tool else dict(call.args),
                          call.status))
    return calls


async def fetch_openapi(server: RunningServer) -> dict[str, Any]:
    return await service_openapi(server.implementation.service, server.base_url)


async def _served_target(name: str, pool: ServerPool) -> _Target:
    """A service's original, started, with the OpenAPI document it serves and its tools."""
    service = resolve_services([name])[0]
    server = await pool.start(implementations_of(service)[ORIGINAL])
    try:
        openapi = await fetch_openapi(server)
    except BaseException:
        await pool.stop(server)
        raise
    return _Target(service, openapi, tools_from_openapi(service.name, openapi), server)


async def service_tools(name: str, pool: ServerPool) -> tuple[Service, dict[str, Any],
                                                              list[Tool]]:
    """A service's OpenAPI document, served by its running original, and its tools."""
    target = await _served_target(name, pool)
    assert target.server is not None
    await pool.stop(target.server)
    return target.service, target.openapi, target.tools


async def list_tools(name: str, database: str = "sqlite") -> list[Tool]:
    with scratch_folder("restbench-agent-tools-") as scratch:
        async with ServerPool(Path(scratch) / "servers", database) as pool:
            return (await service_tools(name, pool))[2]


def _check_service(name: str, suite: EvalSuite, config: EvalConfig) -> None:
    """An unknown service is an error naming where its name came from."""
    try:
        resolve_services([name])
    except RestbenchError as exc:
        where = "--service" if config.service else f"{config.test_file}: {suite.path}.service"
        raise RestbenchError(f"{where}: {exc}") from None


async def load_targets(suites: list[EvalSuite], config: EvalConfig,
                       pool: ServerPool) -> tuple[dict[str, _Target], list[str]]:
    """The services the suites run against, by name, and a warning per expected tool name that
    none of them has (a warning, not an error: the case still runs, and that call is missing)."""
    wanted: dict[str, list[EvalSuite]] = {}
    for suite in suites:
        wanted.setdefault(_service_of(suite, config.service, config.test_file), []).append(suite)
    for name, its_suites in wanted.items():
        _check_service(name, its_suites[0], config)
    targets: dict[str, _Target] = {}
    problems: list[str] = []
    for name, its_suites in wanted.items():
        target = targets[name] = await _served_target(name, pool)
        cases = [case for suite in its_suites for case in suite.cases]
        problems += _check_tool_names(cases, target.tools, target.service.name,
                                      config.test_file)
    return targets, problems


class _Evaluation:
    def __init__(self, config: EvalConfig, on_event: EventHandler,
                 agent_fingerprint: str = "") -> None:
        self.config = config
        self.on_event = on_event
        self.agent_fingerprint = agent_fingerprint  # plugins.source_fingerprint of the agent
        self.results: list[CaseResult] = []
        self.planned = 0
        self.settings: dict[str, Any] = {}
        self._target_keys: dict[str, str] = {}
        self._replay_bases: dict[str, str] = {}
        self.started = time.monotonic()
        self._write_lock = asyncio.Lock()
        self.unrecorded = Unrecorded()

    def _summary(self) -> dict[str, Any]:
        return summary(self.results, self.planned, self.settings,
                       {"duration_s": round(time.monotonic() - self.started, 2),
                        **self.unrecorded.as_summary()})

    def take_over(self, earlier: EarlierRun, work: list[tuple[int, EvalCase, _Target]]
                  ) -> tuple[list[tuple[int, EvalCase, _Target]], list[_Unjudged]]:
        """Reuses what `earlier` finished, and the agent's part of the cases where only the
        judge failed (to be judged again); what its other cases cost stays in the summary.
        Returns the cases left to run, and those to judge."""
        left = self.reuse(earlier.finished(), work)
        unjudged = earlier.unjudged()
        to_judge = [_Unjudged(index, case, target, unjudged[key]) for index, case, target in left
                    if (key := self.case_key(case, target)) in unjudged]
        judging = {item.index for item in to_judge}
        taken = {result.key for result in self.results} | {item.earlier.key for item in to_judge}
        self.unrecorded = earlier.unrecorded
        for result in earlier.results:
            if result.key not in taken or not result.key:
                self.unrecorded.add(result.cost_usd + result.judge_cost_usd,
                                    result.input_tokens + result.judge_input_tokens,
                                    result.output_tokens + result.judge_output_tokens)
        return [item for item in left if item[0] not in judging], to_judge

    def interrupted(self, seen: list[ChatResult]) -> None:
        """A case cancelled (Ctrl-C) before its result was recorded: what its answers cost goes
        into the summary, written at once (nothing awaits during a cancellation). Answers it
        reused were counted when they were paid."""
        paid = [answer for answer in seen if not answer.cached]
        if paid:
            usd, usage = spent(paid)
            self.unrecorded.add(usd, usage.input_tokens, usage.output_tokens)
            write_results(self.config.results_dir, self._summary(), self.results)

    def answers_reused(self, seen: list[ChatResult]) -> int:
        """Takes the answers of `seen` that came from the store out of the unrecorded cost (the
        case's own cost holds them); returns how many there were."""
        reused = [answer for answer in seen if answer.cached]
        if reused:
            usd, usage = spent(reused)
            self.unrecorded.take_back(usd, usage.input_tokens, usage.output_tokens)
        return len(reused)

    def replay_for(self, case: EvalCase, target: _Target) -> Replay:
        """What a case's model calls depend on besides their requests, so that a rerun of the
        case gets the answers an earlier attempt got (`restbench.llm.Replay`): the case, its
        service's code and OpenAPI document, the agent, the database. The scoring settings are
        left out: changing them reruns the case, and its agent is not paid again."""
        name = target.service.name
        if name not in self._replay_bases:
            config = self.config
            self._replay_bases[name] = digest(
                "agent-replay", name, implementations_of(target.service)[ORIGINAL].fingerprint(),
                target.openapi, config.agent, config.agent_args, self.agent_fingerprint,
                DatabaseChoice.parse(config.database).describe())
        return Replay(digest(self._replay_bases[name], case.suite, case.path, case.name,
                             case.intent))

    def case_key(self, case: EvalCase, target: _Target) -> str:
        """What a case's result depends on: the case, and its target's key."""
        return digest("agent-case", SCORING_RULES, case.suite, case.path, case.name, case.intent,
                      case.expected.response, case.expected.keywords,
                      [c.as_dict() for c in case.expected.tool_calls],
                      self._target_key(target))

    def _target_key(self, target: _Target) -> str:
        """What every case of `target` depends on: its service's code and OpenAPI document, the
        settings that reach the agent or the scores, and the code of an agent outside restbench
        (made once per service)."""
        name = target.service.name
        if name not in self._target_keys:
            config = self.config
            self._target_keys[name] = digest(
                name, implementations_of(target.service)[ORIGINAL].fingerprint(),
                target.openapi, config.agent, config.agent_args, config.model,
                config.judge_model if config.scoring is ResponseScoring.LLM_JUDGE else None,
                config.scoring.value, config.match_args.value, config.max_steps,
                config.case_timeout_s, DatabaseChoice.parse(config.database).describe(),
                *((self.agent_fingerprint,) if self.agent_fingerprint else ()))
        return self._target_keys[name]

    def reuse(self, finished: dict[str, CaseResult], work: list[tuple[int, EvalCase, _Target]]
              ) -> list[tuple[int, EvalCase, _Target]]:
        """Takes over the cases of `work` that `finished` holds (by key); returns the others."""
        left = []
        for index, case, target in work:
            earlier = finished.get(self.case_key(case, target))
            if earlier is None:
                left.append((index, case, target))
            else:
                self.results.append(replace(earlier, index=index))
        return left

    async def record(self, result: CaseResult) -> None:
        async with self._write_lock:
            self.results.append(result)
            write_results(self.config.results_dir, self._summary(), self.results)

    async def response_score(self, case: EvalCase, answer: str, judge_client: ChatClient | None
                             ) -> tuple[float | None, dict[str, Any], Judgement | None]:
        """The answer's score, what to add to the case's details, and the judge's verdict (for
        llm-judge scoring; its score is None when it gave none)."""
        expected = case.expected.response
        scoring = self.config.scoring
        if scoring is ResponseScoring.EXACT:
            return exact_score(expected, answer), {}, None
        if scoring is ResponseScoring.FUZZY:
            return fuzzy_score(expected, answer), {}, None
        if scoring is ResponseScoring.SEMANTIC:
            return await asyncio.to_thread(similarity, expected, answer), {}, None
        assert judge_client is not None
        verdict = await judge(judge_client, case.intent, expected, answer)
        return verdict.score, {"judge_reason": verdict.reason}, verdict


async def _run_agent(agent: Any, task: AgentTask) -> AgentAnswer:
    if inspect.iscoroutinefunction(agent.run):
        result = await agent.run(task)
    else:
        result = await asyncio.to_thread(agent.run, task)
        if inspect.isawaitable(result):
            result = await result
    return as_answer(result)


async def _run_case(evaluation: _Evaluation, index: int, case: EvalCase, target: _Target,
                    server: RunningServer, agent: Any, chat: ChatClient | None,
                    judge_client: ChatClient | None, seen: list[ChatResult]) -> None:
    config = evaluation.config
    key = evaluation.case_key(case, target)
    started = time.monotonic()
    await server.reset()
    error: str | None = None
    async with LiveSession(server.base_url, target.tools, target.openapi) as session:
        task = AgentTask(case.intent, tuple(session.bound()), target.service.name,
                         server.base_url, target.openapi, config.max_steps, chat,
                         case.expected if getattr(agent, "uses_expected", False) else None)
        answers_seen.set(seen)  # for a case cut off by the time limit, or interrupted
        replay.set(evaluation.replay_for(case, target))
        try:
            answer = await asyncio.wait_for(_run_agent(agent, task), config.case_timeout_s)
            error = answer.error
        except TimeoutError:
            usd, usage = spent(seen)
            answer = AgentAnswer("", cost_usd=usd, input_tokens=usage.input_tokens,
                                 output_tokens=usage.output_tokens, steps=len(seen))
            error = f"the agent did not answer within {config.case_timeout_s:g} s"
        except Exception as exc:  # noqa: BLE001 - a failing agent is recorded with its case
            answer = AgentAnswer("")
            error = f"{type(exc).__name__}: {exc}"
    # The service records an exchange before the response's last byte leaves, so every call the
    # agent saw answered is already there.
    exchanges = await server.exchanges()
    recorded = calls_from_exchanges(target.tools, exchanges)
    by_name = {tool.name: tool for tool in target.tools}
    expected = _expected_calls(case, by_name)
    calls = tool_call_score(expected, [Call(c.name, c.args, c.status) for c in recorded],
                            config.match_args)
    keywords = keyword_score(case.expected.keywords, answer.answer)
    grounded = grounded_keyword_score(
        case.expected.keywords, answer.answer, f"{case.intent}\n{system_prompt(target.openapi)}",
        "\n".join(str(e.get("response_body") or "") for e in exchanges))
    extra: dict[str, Any] = {}
    verdict = None
    response: float | None = None  # no score, not 0.0: a judge that failed rated nothing
    if error and not answer.answer.strip() and config.scoring is ResponseScoring.LLM_JUDGE:
        # An agent that failed without answering: nothing for a paid judge to rate.
        response, extra = 0.0, {"judge_reason": "not asked: the agent gave no answer"}
    else:
        response, extra, verdict, judge_error = await _response(evaluation, case, answer.answer,
                                                                judge_client)
        error = error or judge_error
    if answer.details:
        extra["agent_details"] = answer.details
    if reused := evaluation.answers_reused(seen):
        extra[REUSED] = reused
    result = CaseResult(
        index=index, suite=case.suite, test_name=case.name, path=case.path,
        service=target.service.name, intent=case.intent,
        keyword_score=keywords.score, tool_call_score=calls.score, response_score=response,
        response_scoring_type=config.scoring.value, missing_keywords=keywords.missing,
        expected_keywords=case.expected.keywords,
        expected_tool_calls=tuple(c.as_dict() for c in expected),
        actual_tool_calls=tuple(c.as_dict() for c in recorded),
        claimed_tool_calls=tuple(c.as_dict() for c in answer.tool_calls),
        tool_call_mismatches=tuple(m.as_dict() for m in calls.mismatches),
        response_expected=case.expected.response, response_actual=answer.answer,
        steps=answer.steps, cost_usd=answer.cost_usd, input_tokens=answer.input_tokens,
        output_tokens=answer.output_tokens, duration_s=time.monotonic() - started, error=error,
        extra=extra, grounded_keyword_score=grounded.score,
        judge_cost_usd=verdict.cost_usd if verdict else 0.0,
        judge_input_tokens=verdict.input_tokens if verdict else 0,
        judge_output_tokens=verdict.output_tokens if verdict else 0, key=key)
    await evaluation.record(result)
    if error:
        evaluation.on_event(Notice(f"case {index} ({case.name}): {error}"))
    evaluation.on_event(Advanced(PHASE, case.name))


async def _response(evaluation: _Evaluation, case: EvalCase, answer: str,
                    judge_client: ChatClient | None
                    ) -> tuple[float | None, dict[str, Any], Judgement | None, str | None]:
    """`response_score`, with the judge's failure as an error (JUDGE_ERROR ...) instead."""
    try:
        response, extra, verdict = await evaluation.response_score(case, answer, judge_client)
    except LLMError as exc:
        return None, {}, None, f"{JUDGE_ERROR}{exc}"
    if verdict is not None and verdict.score is None:
        return response, extra, verdict, f"{JUDGE_ERROR}{verdict.reason}"
    return response, extra, verdict, None


@dataclass(frozen=True)
class _Unjudged:
    """A case of an earlier run whose agent finished and whose judge failed."""

    index: int
    case: EvalCase
    target: _Target
    earlier: CaseResult


async def _judge_again(evaluation: _Evaluation, item: _Unjudged,
                       judge_client: ChatClient | None) -> None:
    """Asks the judge about the earlier answer; the agent is not run (nor paid) again. The
    case's judge cost is both judges' answers."""
    earlier = item.earlier
    seen: list[ChatResult] = []
    answers_seen.set(seen)
    replay.set(evaluation.replay_for(item.case, item.target))
    response, extra, verdict, error = await _response(evaluation, item.case,
                                                      earlier.response_actual, judge_client)
    kept = {k: v for k, v in earlier.extra.items() if k != "judge_reason"}
    if reused := evaluation.answers_reused(seen):
        kept[REUSED] = int(kept.get(REUSED, 0)) + reused
    result = replace(
        earlier, index=item.index, response_score=response, error=error,
        extra={**kept, **extra},
        judge_cost_usd=earlier.judge_cost_usd + (verdict.cost_usd if verdict else 0.0),
        judge_input_tokens=earlier.judge_input_tokens + (verdict.input_tokens if verdict else 0),
        judge_output_tokens=earlier.judge_output_tokens
        + (verdict.output_tokens if verdict else 0))
    await evaluation.record(result)
    if error:
        evaluation.on_event(Notice(f"case {item.index} ({item.case.name}): {error}"))
    evaluation.on_event(Advanced(PHASE, item.case.name))


def _settings(config: EvalConfig, agent: Any, targets: dict[str, _Target]) -> dict[str, Any]:
    return {"response_scoring_type": config.scoring.value,
            "agent": getattr(agent, "name", config.agent), "agent_spec": config.agent,
            "model": config.model, "judge_model": config.judge_model,
            "match_args": config.match_args.value, "max_steps": config.max_steps,
            "services": sorted(t.service.name for t in targets.values()),
            "test_file": str(config.test_file),
            "started_at": datetime.now(UTC).isoformat(timespec="seconds")}


def _earlier_notes(config: EvalConfig, earlier: EarlierRun,
                   work: list[tuple[int, EvalCase, _Target]]) -> list[str]:
    """What of the results folder's earlier results.json this run cannot keep: all of it when
    it is unreadable, the cases that are not in this run's test file otherwise."""
    path = config.results_dir / RESULT_FILES["json"]
    if earlier.unreadable is not None:
        return [(f"{path}: not readable ({earlier.unreadable}): every case runs, and the file "
                 "is written anew")]
    planned = {(case.suite, case.name) for _, case, _ in work}
    gone = [r for r in earlier.results if (r.suite, r.test_name) not in planned]
    if not gone:
        return []
    return [(f"{path}: {len(gone)} of its {len(earlier.results)} cases are not in "
             f"{config.test_file}; results.json is rewritten with this run's cases only (what "
             "they cost stays in its summary)")]


def _check_config(config: EvalConfig, agent: Any) -> None:
    if getattr(agent, "uses_model", False) and not config.model:
        raise AgentError(f"agent '{config.agent}' needs a model: pass --model NAME")
    if config.scoring is ResponseScoring.LLM_JUDGE and not config.judge_model:
        raise RestbenchError("--scoring llm-judge needs a judge model: pass --judge-model NAME")
    check_writable(config.results_dir)
    if config.scoring is ResponseScoring.SEMANTIC:
        similarity("ready", "ready")  # loads the model now: a missing one fails before any case


async def evaluate_agent(config: EvalConfig, on_event: EventHandler = ignore) -> EvalReport:
    """Runs every case of `config.test_file`; results are on disk after each case."""
    suites = load_suites(config.test_file)
    agent = load_agent(config.agent, config.agent_args)
    _check_config(config, agent)
    settings = ModelSettings.load(config.llm_config)
    models = {}
    judging = config.scoring is ResponseScoring.LLM_JUDGE
    for role, name in (("chat", config.model), ("judge", config.judge_model if judging else None)):
        if name:
            models[role] = settings.resolve(name)
            check_credentials(models[role])
    evaluation = _Evaluation(config, on_event, source_fingerprint(agent))
    with scratch_folder("restbench-agent-eval-") as scratch:
        async with AsyncExitStack() as stack:
            pool = await stack.enter_async_context(ServerPool(Path(scratch) / "servers",
                                                                config.database))
            targets, warnings = await load_targets(suites, config, pool)
            for warning in warnings:
                on_event(Notice(warning))
            chat = judge_client = None
            if models:
                # Answers are kept: a rerun of a failed or interrupted case, or one whose scoring
                # changed, pays for no answer twice (see _Evaluation.replay_for).
                calls = ResultStore(config.results_dir / MODEL_CALL_STORE)
                stack.callback(calls.close)
                clients = {role: await stack.enter_async_context(ChatClient(
                               endpoint, settings.prices, cache=calls,
                               read_cache=not config.fresh))
                           for role, endpoint in models.items()}
                chat, judge_client = clients.get("chat"), clients.get("judge")
            evaluation.settings = {**_settings(config, agent, targets), "warnings": warnings}
            work: list[tuple[int, EvalCase, _Target]] = []
            for suite in suites:
                target = targets[_service_of(suite, config.service, config.test_file)]
                work += [(len(work) + i, case, target) for i, case in enumerate(suite.cases)]
            evaluation.planned = len(work)
            to_judge: list[_Unjudged] = []
            if not config.fresh:
                earlier = earlier_run(config.results_dir)
                for note in _earlier_notes(config, earlier, work):
                    on_event(Notice(note))
                work, to_judge = evaluation.take_over(earlier, work)
                if evaluation.results or to_judge:
                    judged = f", {len(to_judge)} to judge again" if to_judge else ""
                    on_event(Notice(f"{len(evaluation.results)} finished cases taken from "
                                    f"{config.results_dir / 'results.json'}; {len(work)} to run"
                                    f"{judged} (--fresh runs every case)"))
            write_results(config.results_dir, evaluation._summary(), evaluation.results)
            on_event(PhaseStarted(PHASE, len(work) + len(to_judge)))
            for item in to_judge:
                await _judge_again(evaluation, item, judge_client)
            await _run_all(evaluation, work, pool, agent, chat, judge_client)
    files = write_results(config.results_dir, evaluation._summary(), evaluation.results)
    return EvalReport(evaluation._summary(), sorted(evaluation.results, key=lambda r: r.index),
                      files)


async def _run_all(evaluation: _Evaluation, work: list[tuple[int, EvalCase, _Target]],
                   pool: ServerPool, agent: Any, chat: ChatClient | None,
                   judge_client: ChatClient | None) -> None:
    """Cases in file order; with several workers, each works on its own replica of the service."""
    by_service: dict[str, list[tuple[int, EvalCase, _Target]]] = {}
    for item in work:
        by_service.setdefault(item[2].service.name, []).append(item)
    for items in by_service.values():
        queue: asyncio.Queue[tuple[int, EvalCase, _Target]] = asyncio.Queue()
        for item in items:
            queue.put_nowait(item)
        target = items[0][2]
        replicas = min(evaluation.config.workers, len(items))
        servers = [target.server or await pool.start(implementations_of(target.service)[ORIGINAL])]
        servers += [await pool.start(implementations_of(target.service)[ORIGINAL], replica)
                    for replica in range(1, replicas)]

        async def worker(server: RunningServer,
                         queue: asyncio.Queue[tuple[int, EvalCase, _Target]]) -> None:
            while not queue.empty():
                index, case, its_target = queue.get_nowait()
                seen: list[ChatResult] = []  # the model's answers in this case
                try:
                    await _run_case(evaluation, index, case, its_target, server, agent, chat,
                                    judge_client, seen)
                except asyncio.CancelledError:
                    if not any(result.index == index for result in evaluation.results):
                        evaluation.interrupted(seen)
                    raise

        try:
            await asyncio.gather(*(worker(server, queue) for server in servers))
        finally:
            for server in servers:
                await pool.stop(server)
