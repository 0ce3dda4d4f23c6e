"""`restbench grade`: for each dataset x model x case, produce the test, keep it, grade it.

The model under test writes the test with the chosen generator (default `single-step`: one call
with the requirement, the OpenAPI document, the base URL and the optional seed test). The test
file and the model's raw answer are saved under
`<output-dir>/generated-files/<dataset>_<timestamp>/<test_id>/`, then graded by the case's
deterministic checks and by one judge call with all of its criteria.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
import os
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from restbench.engine.events import Advanced, EventHandler, Notice, PhaseStarted, ignore
from restbench.errors import GeneratorError, RestbenchError
from restbench.generators.base import GeneratedTest, GenerationFailure
from restbench.grading.checks import run_check
from restbench.grading.dataset import Dataset, DatasetError, TestCase, load_datasets
from restbench.grading.judge import DEFAULT_RETRIES, judge
from restbench.grading.results import (
    PARTLY_GRADED,
    CaseResult,
    CriterionResult,
    RunResult,
    Spend,
    safe_name,
    write_run,
)
from restbench.llm import MODEL_CALL_STORE, ChatClient, ModelSettings, check_credentials
from restbench.store import ResultStore

log = logging.getLogger(__name__)
DEFAULT_MODEL = "gpt-5-mini"
GRADER_ENV = "RESTBENCH_GRADER_MODEL"
PHASE = "grade"
CASES_IN_FLIGHT = 8

WriteTest = Callable[..., Awaitable[GeneratedTest]]


@dataclass(frozen=True)
class GradeConfig:
    datasets: tuple[str, ...]
    models: tuple[str, ...] = ()  # empty: the default model
    grader: str | None = None  # None: $RESTBENCH_GRADER_MODEL, else the default model
    test_ids: tuple[str, ...] = ()  # empty: every case
    output_dir: Path = Path("grading-results")
    generator: str = "single-step"
    llm_config: Path | None = None
    judge_retries: int = DEFAULT_RETRIES
    fresh: bool = False  # ask the models again even when an identical call is in the store


@dataclass
class GradeReport:
    runs: list[RunResult]

    @property
    def files(self) -> list[Path]:
        return [run.results_file for run in self.runs if run.results_file is not None]


def grader_model(option: str | None) -> str:
    return option or os.environ.get(GRADER_ENV) or DEFAULT_MODEL


def load_generator(name: str) -> WriteTest:
    """`single-step`, or `module:attribute` naming an async function with the signature of
    `restbench.generators.llm.write_test`."""
    if name == "single-step":
        from restbench.generators.llm import write_test

        return write_test
    module_name, sep, attribute = name.partition(":")
    if not sep:
        raise GeneratorError(f"unknown generator '{name}' for grading (single-step, or "
                             "module:attribute naming a write_test-like async function)")
    try:
        target = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise GeneratorError(f"generator '{name}': cannot load it: {exc}") from None
    if not inspect.iscoroutinefunction(target):
        raise GeneratorError(f"generator '{name}' is not an async function")
    return target  # type: ignore[no-any-return]


def select_cases(datasets: list[Dataset], test_ids: tuple[str, ...]) -> dict[str, list[TestCase]]:
    wanted = set(test_ids)
    known = {case.test_id for d in datasets for case in d.cases}
    unknown = sorted(wanted - known)
    if unknown:
        raise DatasetError([f"--test-ids: no test case '{test_id}' in "
                            f"{', '.join(d.name for d in datasets)}" for test_id in unknown])
    return {d.name: [c for c in d.cases if not wanted or c.test_id in wanted] for d in datasets}


def timestamp(output_dir: Path, names: list[str]) -> str:
    """UTC time to the second; a later suffix if a run in the same second already used it."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    candidate, number = stamp, 1
    while any((output_dir / "generated-files" / f"{name}_{candidate}").exists() for name in names):
        number += 1
        candidate = f"{stamp}-{number}"
    return candidate


async def grade(config: GradeConfig, on_event: EventHandler = ignore) -> GradeReport:
    datasets = load_datasets(list(config.datasets))
    chosen = select_cases(datasets, config.test_ids)
    write_test = load_generator(config.generator)
    settings = ModelSettings.load(config.llm_config)
    models = list(dict.fromkeys(config.models)) or [DEFAULT_MODEL]
    grader_name = grader_model(config.grader)
    # The grader is looked up only when a case has criteria for it: a config file whose
    # [models] table does not list it is no problem for datasets of assertion checks alone.
    needs_grader = any(c.criteria for cases in chosen.values() for c in cases)
    endpoints = {name: settings.resolve(name)
                 for name in [*models, *([grader_name] if needs_grader else [])]}
    for endpoint in endpoints.values():
        check_credentials(endpoint)
    with_model = len(models) > 1
    folder_names = [_folder(d.name, m, with_model) for d in datasets for m in models]
    stamp = timestamp(config.output_dir, folder_names)
    on_event(PhaseStarted(PHASE, sum(len(c) for c in chosen.values()) * len(models)))
    runs = []
    async with AsyncExitStack() as stack:
        # Answers are kept, so rerunning an interrupted or repeated grade pays for no call twice.
        calls = ResultStore(config.output_dir / MODEL_CALL_STORE)
        stack.callback(calls.close)
        clients = {name: await stack.enter_async_context(
                       ChatClient(endpoint, settings.prices, cache=calls,
                                  read_cache=not config.fresh))
                   for name, endpoint in endpoints.items()}
        limit = asyncio.Semaphore(CASES_IN_FLIGHT)
        for dataset in datasets:
            for model in models:
                run = RunResult(dataset=dataset.name, dataset_file=str(dataset.file), model=model,
                                grader=grader_name, generator=config.generator, timestamp=stamp,
                                generated_dir=config.output_dir / "generated-files"
                                / f"{_folder(dataset.name, model, with_model)}_{stamp}")
                grader = _CaseGrader(clients[model], clients.get(grader_name, clients[model]),
                                     write_test, run.generated_dir, config.judge_retries)

                cases = chosen[dataset.name]
                run.planned = len(cases)
                finished: dict[int, CaseResult] = {}

                async def one(index: int, case: TestCase, run: RunResult = run,
                              grader: _CaseGrader = grader,
                              finished: dict[int, CaseResult] = finished) -> None:
                    async with limit:
                        result = await grader.grade(case)
                    # The file grows with every finished case ("complete": false until the
                    # last): an interrupted grade keeps what it graded.
                    finished[index] = result
                    run.cases = [finished[i] for i in sorted(finished)]
                    write_run(run, config.output_dir, with_model)
                    on_event(Advanced(PHASE, case.test_id))
                    if result.status != "graded":
                        on_event(Notice(f"{case.test_id}: {result.status}: {result.error}"))

                runs.append(run)
                await asyncio.gather(*(one(i, c) for i, c in enumerate(cases)))
                if not cases:
                    write_run(run, config.output_dir, with_model)
    return GradeReport(runs)


def _folder(dataset: str, model: str, with_model: bool) -> str:
    return f"{safe_name(dataset)}_{safe_name(model)}" if with_model else safe_name(dataset)


class _CaseGrader:
    def __init__(self, model: ChatClient, grader: ChatClient, write_test: WriteTest,
                 folder: Path, retries: int) -> None:
        self.model = model
        self.grader = grader
        self.write_test = write_test
        self.folder = folder
        self.retries = retries

    async def grade(self, case: TestCase) -> CaseResult:
        # Made with its first file: a case interrupted before one leaves no empty folder.
        folder = self.folder / safe_name(case.test_id)
        try:
            generated = await self.write_test(self.model, case.requirement, case.openapi(),
                                              case.base_url, case.seed_test)
            if not isinstance(generated, GeneratedTest):  # a -g module:attribute of the user's
                raise GeneratorError(f"the generator returned {type(generated).__name__} "
                                     f"{generated!r:.80}, not a GeneratedTest")
        except GenerationFailure as exc:
            return self._failed(case, folder, exc)
        except Exception as exc:  # noqa: BLE001 - one case's failure is recorded, the run goes on
            message = str(exc) if isinstance(exc, RestbenchError) else \
                f"{type(exc).__name__}: {exc}"
            _save(folder / "error.txt", f"{message}\n")
            return CaseResult(case.test_id, case.name, "ungraded", self._pending(case),
                              error=f"generation failed: {message}")
        artifact = folder / f"test_{safe_name(case.test_id)}.py"
        _save(artifact, generated.code)
        answer = _answer_file(folder, generated.details)
        spend = Spend(generated.cost.input_tokens, generated.cost.output_tokens, generated.cost.usd)
        criteria = self._checks(case, generated.code)
        result = CaseResult(case.test_id, case.name, "graded", criteria, generation=spend,
                            artifact=str(artifact), answer_file=answer)
        broken = [c for c in criteria if c.met is None]
        if broken:
            result.status = "ungraded"
            result.error = f"check {broken[0].index} could not run: {broken[0].reason}"
        if case.criteria:
            outcome = await judge(self.grader, case.requirement, case.base_url, generated.code,
                                  list(case.criteria), retries=self.retries)
            result.judge = Spend(outcome.input_tokens, outcome.output_tokens, outcome.cost_usd)
            result.judge_attempts = outcome.attempts
            result.judge_answers = outcome.answers
            if outcome.verdicts is None:
                # The checks that need no model keep their verdicts: the case is partly graded.
                checked = any(c.met is not None for c in criteria)
                result.status = PARTLY_GRADED if checked and result.status == "graded" \
                    else "ungraded"
                result.error = outcome.error
                judged = [CriterionResult("judge", i, text, None, "not graded")
                          for i, text in enumerate(case.criteria, start=1)]
            else:
                judged = [CriterionResult("judge", v.index, case.criteria[v.index - 1], v.met,
                                          v.reason) for v in outcome.verdicts]
            result.criteria = judged + criteria
        return result

    def _checks(self, case: TestCase, code: str) -> list[CriterionResult]:
        out = []
        for number, check in enumerate(case.checks, start=1):
            try:
                verdict = run_check(check, code, case.base_url)
            except Exception as exc:  # a grader bug must not end the run
                log.exception("%s: check %d (%s) failed", case.test_id, number, check.type)
                out.append(CriterionResult("check", number, check.description, None,
                                           f"{type(exc).__name__}: {exc}", check.type))
                continue
            out.append(CriterionResult("check", number, check.description, verdict.met,
                                       verdict.reason, check.type,
                                       tuple(f.to_json() for f in verdict.findings)))
        return out

    def _pending(self, case: TestCase) -> list[CriterionResult]:
        return ([CriterionResult("judge", i, text, None, "not graded")
                 for i, text in enumerate(case.criteria, start=1)]
                + [CriterionResult("check", i, check.description, None, "not graded", check.type)
                   for i, check in enumerate(case.checks, start=1)])

    def _failed(self, case: TestCase, folder: Path, exc: GenerationFailure) -> CaseResult:
        """The model answered without a test (graded: nothing met), or was not reached, or
        its answer was cut off at the token limit, which the endpoint's settings set, not the
        model (ungraded, as `run` and agent-eval count such an answer)."""
        answer = _answer_file(folder, exc.details)
        _save(folder / "error.txt", f"{exc}\n")
        spend = Spend(exc.cost.input_tokens, exc.cost.output_tokens, exc.cost.usd)
        if "answer" not in exc.details or exc.details.get("stopped") == "token limit":
            return CaseResult(case.test_id, case.name, "ungraded", self._pending(case),
                              generation=spend, error=f"generation failed: {exc}",
                              answer_file=answer)
        reason = f"no test was produced: {exc}"
        criteria = [CriterionResult("judge", i, text, False, reason)
                    for i, text in enumerate(case.criteria, start=1)]
        criteria += [CriterionResult("check", i, check.description, False, reason, check.type)
                     for i, check in enumerate(case.checks, start=1)]
        return CaseResult(case.test_id, case.name, "graded", criteria, generation=spend,
                          error=str(exc), answer_file=answer)


def _answer_file(folder: Path, details: dict[str, Any]) -> str | None:
    answer = details.get("answer")
    if answer is None:
        return None
    path = folder / "answer.md"
    _save(path, str(answer))
    return str(path)


def _save(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
