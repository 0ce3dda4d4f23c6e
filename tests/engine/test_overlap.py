"""`restbench run` executes each test as soon as it exists, with the same results as when every
generation is there before the first execution."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from pathlib import Path

import pytest

from restbench.engine import Advanced, Event, PhaseStarted, RunConfig, run_benchmark
from restbench.engine.run import RunResult
from restbench.generators import GeneratedTest, GenerationTask, GeneratorSpec
from restbench.generators.files import FilesGenerator
from restbench.scoring import AggregateScore

FIXTURES = Path(__file__).parents[1] / "fixtures"
MINI = FIXTURES / "mini"
TESTS = FIXTURES / "mini_tests"
# Seconds each generation takes: staggered, so that the last one ends well after the first.
DELAYS = {("MINI-01", "precise"): 0.0, ("MINI-02", "precise"): 1.5,
          ("MINI-01", "vague"): 3.0, ("MINI-02", "vague"): 4.5}


class StaggeredFiles(FilesGenerator):
    """The files generator, slowed down like a model that answers one cell at a time; its
    generations are stored and reused like a model's."""

    name = "staggered-files"
    cacheable = True

    async def generate(self, task: GenerationTask) -> GeneratedTest:  # type: ignore[override]
        await asyncio.sleep(DELAYS[(task.requirement_id, task.variant.value)])
        return super().generate(task)


def _run(output: Path) -> tuple[list[Event], RunResult]:
    events: list[Event] = []
    config = RunConfig(services=(str(MINI),), output_dir=output,
                       generators=(GeneratorSpec(f"{__name__}:StaggeredFiles",
                                                 {"dir": str(TESTS)}),))
    result = asyncio.run(run_benchmark(config, on_event=events.append))
    return events, result


def _executions(output: Path) -> list[tuple[str, str, str]]:
    db = sqlite3.connect(output / "results.sqlite3")
    return sorted(db.execute("SELECT key, implementation, outcome FROM executions"))


def _scores(result: RunResult) -> list[tuple[str, str, AggregateScore]]:
    return [(row.service, row.variant, row.score) for row in result.rows]


def test_tests_execute_while_others_are_generated_with_unchanged_results(tmp_path: Path) -> None:
    overlapped = tmp_path / "overlapped"
    events, result = _run(overlapped)
    progress = [(type(e).__name__, e.phase) for e in events
                if isinstance(e, Advanced | PhaseStarted)]
    last_generation = max(i for i, item in enumerate(progress)
                          if item == ("Advanced", "generate"))
    first_execution = progress.index(("Advanced", "execute"))
    assert first_execution < last_generation, progress
    # The execute bar's total grows as tests pass on the original; it ends at what was run.
    totals = [e.total for e in events if isinstance(e, PhaseStarted) and e.phase == "execute"]
    assert totals == sorted(totals) and totals[-1] == result.counts["executions"]
    # precise: MINI-01 strong (1/1), MINI-02 status-only (0/2); vague: MINI-01 invalid, MINI-02
    # strong (2/2): the numbers of the files tests, as without overlap
    scores = {variant: score.ms for _, variant, score in _scores(result)}
    assert scores["precise"] == pytest.approx(1 / 3, abs=1e-6)
    assert scores["vague"] == pytest.approx(2 / 3, abs=1e-6)

    # The same matrix with every generation stored before the first execution (the old order:
    # all generations, then all executions): the same execution rows and the same scores.
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    shutil.copy(overlapped / "results.sqlite3", barrier / "results.sqlite3")
    db = sqlite3.connect(barrier / "results.sqlite3")
    db.execute("DELETE FROM executions")
    db.commit()
    db.close()
    _, again = _run(barrier)
    assert (again.counts["generations_reused"], again.counts["generations"]) == (4, 0)
    assert _executions(barrier) == _executions(overlapped)
    assert _scores(again) == _scores(result)
