"""Reach: which edits a test never ran on the original (serving.reach), and that a run on such
a mutant is the run on the original."""

from __future__ import annotations

import asyncio
import builtins
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from restbench.benchmark import resolve_services
from restbench.engine.jobs import Job, execute_on
from restbench.execution import Executor, Outcome
from restbench.mutation import implementations_of
from restbench.serving import ServerPool, originals, reach

ORIGINAL_MAIN = textwrap.dedent('''\
    """A module with functions that edits change."""

    import functools

    LIMIT = 3


    def classify(n):
        """Sorts n."""
        seen = n
        if n > LIMIT:
            label = "big"
        else:
            label = "small"
        try:
            value = int(seen)
        except ValueError:
            value = 0
        return label, value


    @functools.cache
    def settings():
        return {"limit": LIMIT}


    def create_app(database_url):
        return None
''')

EDITS = {
    "else-branch": ('label = "small"', 'label = "tiny"'),
    "condition": ("if n > LIMIT:", "if n >= LIMIT:"),
    "handler": ("except ValueError:", "except TypeError:"),
    "inserted": ("        value = 0\n", "        value = 0\n        value = -1\n"),
    "new-local": ('label = "small"', 'labels = "small"'),  # `labels` becomes a local
    "constant": ("LIMIT = 3", "LIMIT = 4"),  # import time: not a patch edit, always run
    "cached": ('return {"limit": LIMIT}', 'return {"limit": LIMIT + 1}'),
}


@pytest.fixture
def loaded(tmp_path: Path) -> Iterator[tuple[originals.Original, reach.ReachPlan]]:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "main.py").write_text(ORIGINAL_MAIN)
    original = originals.load(tmp_path, None)
    edits = [(name, "app/main.py", ORIGINAL_MAIN.replace(find, replace))
             for name, (find, replace) in EDITS.items()]
    yield original, reach.plan(original, edits)
    if hasattr(builtins, reach.MARKER):
        delattr(builtins, reach.MARKER)


def test_each_edit_needs_the_statements_it_changes(
        loaded: tuple[originals.Original, reach.ReachPlan]) -> None:
    _, plan = loaded
    assert set(plan.needs) == set(EDITS) - {"constant"}
    first = min(number for needs in plan.needs.values() for number in needs)  # `seen = n`
    # In the order of the function's statements: seen = n, if, label = "big", label = "small",
    # try, value = int(seen), value = 0, return.
    assert plan.needs["else-branch"] == {first + 3}
    assert plan.needs["condition"] == {first + 1}
    assert plan.needs["handler"] == {first + 4}  # the `except` clause is the try's own line
    assert plan.needs["inserted"] == {first}  # where it runs is not known: the function ran
    assert plan.needs["new-local"] == {first}


def test_marked_code_behaves_as_the_original_and_records_what_ran(
        loaded: tuple[originals.Original, reach.ReachPlan]) -> None:
    original, plan = loaded
    recorder = reach.install(original, plan)
    classify = original.modules["app.main"].classify
    recorder.started()
    # A server's first test runs before any reset: what a reset runs is not known yet, and on
    # another server the same test may follow one, so nothing counts as never reached.
    assert classify(5) == ("big", 5)
    assert recorder.unreached() == []
    recorder.before_reset()
    recorder.after_reset()
    assert recorder.unreached() == sorted(plan.needs)  # nothing ran since
    assert classify(5) == ("big", 5)
    assert recorder.unreached() == ["cached", "else-branch"]
    recorder.before_reset()
    recorder.after_reset()
    assert recorder.unreached() == sorted(plan.needs)  # a reset forgets the last test's run
    assert classify(1) == ("small", 1)
    assert recorder.unreached() == ["cached"]


def test_a_cached_result_counts_as_reached_by_every_later_test_on_the_server(
        loaded: tuple[originals.Original, reach.ReachPlan]) -> None:
    """The first test that asks for settings() runs its body; a later test gets the kept
    result without running it, and still depends on what the body computed."""
    original, plan = loaded
    recorder = reach.install(original, plan)
    settings = original.modules["app.main"].settings
    recorder.started()
    recorder.before_reset()
    recorder.after_reset()
    assert settings() == {"limit": 3}
    assert "cached" not in recorder.unreached()
    recorder.before_reset()
    recorder.after_reset()
    assert settings() == {"limit": 3}  # from the cache: no statement of it runs
    assert "cached" not in recorder.unreached()


def test_what_ran_while_starting_or_resetting_counts_for_every_test() -> None:
    plan = reach.ReachPlan(needs={"started": frozenset({1}), "reset": frozenset({2}),
                                  "tested": frozenset({3}), "never": frozenset({4})})
    recorder = reach.ReachRecorder(plan)
    recorder.ran.add(1)  # while the server started
    recorder.started()
    recorder.ran.add(3)  # the first test, before any reset
    assert recorder.unreached() == []  # what a reset runs is not known yet
    recorder.before_reset()
    recorder.ran.add(2)  # the reset itself
    recorder.after_reset()
    recorder.ran.add(3)  # the second test
    assert recorder.unreached() == ["never"]
    recorder.before_reset()
    recorder.after_reset()
    assert recorder.unreached() == ["never", "tested"]


SAMPLE = ("TODO-24-M3", "TODO-14-M1", "TODO-05-M2", "TODO-21-M2")
UNAUTHENTICATED = '''
import requests


def test_todos_need_a_token():
    answer = requests.get("http://localhost:8000/todos", timeout=10)
    assert answer.status_code == 401
'''


def test_a_test_passes_on_what_it_never_reached_as_on_the_original(tmp_path: Path) -> None:
    """A server of the original names the todo mutants an unauthenticated list request never
    reached: it does reach the 401 challenge (TODO-12-M2 changes it) but not the check of a
    token's kind that follows the missing-token check in the same function (TODO-24-M3). The
    test run on a few of the unreached mutants passes as it did on the original."""
    service = resolve_services(["todo"])[0]
    implementations = implementations_of(service)

    async def scenario() -> tuple[list[str], dict[str, Outcome]]:
        async with ServerPool(tmp_path / "servers", mark_reach=True) as pool, \
                Executor(1, 30, tmp_path / "exec") as executor:
            outcomes = {}
            server = await pool.start(implementations["original"])
            await server.reset()
            result = await execute_on(executor, server, Job(UNAUTHENTICATED,
                                                           implementations["original"], "t"))
            outcomes["original"] = result.outcome
            for mutant_id in SAMPLE:
                if mutant_id in result.unreached:
                    mutant = await pool.start(implementations[mutant_id])
                    await mutant.reset()
                    outcomes[mutant_id] = (await execute_on(
                        executor, mutant, Job(UNAUTHENTICATED, implementations[mutant_id],
                                              "t"))).outcome
            return list(result.unreached), outcomes

    unreached, outcomes = asyncio.run(scenario())
    assert outcomes.pop("original") is Outcome.PASS
    assert "TODO-12-M2" not in unreached
    assert set(SAMPLE) <= set(unreached)
    assert outcomes == {m: Outcome.PASS for m in SAMPLE}
    # re-imported mutants and those of other services are never claimed
    assert all(m in implementations for m in unreached)


def test_without_mark_reach_an_original_server_claims_nothing(tmp_path: Path) -> None:
    service = resolve_services(["todo"])[0]
    original = implementations_of(service)["original"]

    async def scenario() -> tuple[Outcome, tuple[str, ...]]:
        async with ServerPool(tmp_path / "servers") as pool, \
                Executor(1, 30, tmp_path / "exec") as executor:
            server = await pool.start(original)
            await server.reset()
            result = await execute_on(executor, server, Job(UNAUTHENTICATED, original, "t"))
            return result.outcome, result.unreached

    assert asyncio.run(scenario()) == (Outcome.PASS, ())
