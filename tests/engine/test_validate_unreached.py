"""`restbench validate` does not run a golden test on a benign variant whose edit that test
never reached on the original (it records the pass, as `run` does); `--execute-all` runs it.
The outcomes are the same either way."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from restbench.benchmark import load_service, resolve_services
from restbench.engine.validate import ValidationReport, open_validation_backend, validate_service
from restbench.mutation import implementations_of
from tests.cli_helpers import restbench
from tests.validate_helpers import run_golden_tests

FIXTURES = Path(__file__).parents[1] / "fixtures"
# The layered fixture, with a second requirement whose golden test only reads, and two benign
# variants: one edits a step of incrementing (LAYER-02's test never increments), the other is
# not benign at all (reading answers a wrong value: both golden tests read, and must catch it).
READING = r"""  - id: LAYER-02
    title: Read a counter
    operations: ["GET /counters/{name}"]
    precise: >-
      GET /counters/a returns 200 and {"value": 1}; GET /counters/zzz returns 404.
    vague: Counters can be read, unknown ones are reported missing.
    golden: golden/test_LAYER-02.py
    mutants:
      - id: LAYER-02-M1
        description: Unknown counters answer 400
        kind: semantic
        vague_basis: true
        file: app/routes.py
        find: "status_code=404"
        replace: "status_code=400"
benign:
  - id: LAYER-B1
    description: A step written another way
    file: app/logic.py
    find: "    return 1\n"
    replace: "    return int('1')\n"
  - id: LAYER-B2
    description: Reading answers a wrong value
    file: app/routes.py
    find: "Counter not found\")\n        return {\"value\": counter.value}"
    replace: "Counter not found\")\n        return {\"value\": counter.value - 1}"
"""
READING_TEST = """import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def test_read_counter():
    assert requests.get(f"{BASE_URL}/counters/a", timeout=10).json() == {"value": 1}
    assert requests.get(f"{BASE_URL}/counters/zzz", timeout=10).status_code == 404
"""


@pytest.fixture
def two_requirements(tmp_path: Path) -> Path:
    folder = tmp_path / "layered"
    shutil.copytree(FIXTURES / "layered", folder, ignore=shutil.ignore_patterns("__pycache__"))
    requirements = folder / "requirements.yaml"
    requirements.write_text(requirements.read_text() + READING)
    (folder / "golden" / "test_LAYER-02.py").write_text(READING_TEST)
    return folder


def _validate(service_folder: Path, execute_all: bool) -> ValidationReport:
    return asyncio.run(validate_service(load_service(service_folder), workers=2,
                                        execute_all=execute_all))


def test_a_benign_variant_is_run_only_where_the_golden_test_reached_its_edit(
        two_requirements: Path) -> None:
    inferred = _validate(two_requirements, execute_all=False)
    everything = _validate(two_requirements, execute_all=True)

    assert inferred.not_run == 1 and everything.not_run == 0  # LAYER-02 on LAYER-B1
    assert everything.executions == inferred.executions + 1
    assert inferred.outcomes == everything.outcomes
    assert inferred.outcomes[("LAYER-02", "LAYER-B1")] == "pass"
    assert inferred.outcomes[("LAYER-01", "LAYER-B1")] == "pass"  # reached, and run
    # The variant that is not benign is run wherever it is reached, and caught there.
    assert inferred.outcomes[("LAYER-01", "LAYER-B2")] == "fail"
    assert inferred.outcomes[("LAYER-02", "LAYER-B2")] == "fail"
    assert sorted(inferred.problems) == sorted(everything.problems)
    assert sorted(p.partition(" (")[0] for p in inferred.problems) == [
        "LAYER-01: golden test does not kill mutant LAYER-01-M4",  # it makes no new counter
        "LAYER-01: golden test fails on benign variant LAYER-B2",
        "LAYER-02: golden test fails on benign variant LAYER-B2"]
    assert "1 not run: never reached" in inferred.summary()
    assert "not run" not in everything.summary()


def test_nothing_is_inferred_from_a_golden_test_that_fails_on_the_original(
        two_requirements: Path) -> None:
    golden = two_requirements / "golden" / "test_LAYER-02.py"
    golden.write_text(golden.read_text().replace('{"value": 1}', '{"value": 7}'))

    report = _validate(two_requirements, execute_all=False)

    assert report.outcomes[("LAYER-02", "original")] == "fail"
    assert report.outcomes[("LAYER-02", "LAYER-B1")] == "fail"  # run: not taken as a pass
    assert report.not_run == 0


def test_the_cli_says_what_it_did_not_run_and_execute_all_runs_it(
        two_requirements: Path) -> None:
    inferred = restbench("validate", "-s", two_requirements, "-j", "2")
    everything = restbench("validate", "-s", two_requirements, "-j", "2", "--execute-all")
    for result in (inferred, everything):
        assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
        assert "Traceback" not in result.stderr
    assert "layered: 2 requirements, 6 mutants, 2 benign variants: 3 problems " \
           "(11 executions" in inferred.stdout
    assert "1 not run: never reached" in inferred.stdout
    assert "3 problems (12 executions" in everything.stdout
    assert "not run" not in everything.stdout


@pytest.mark.slow
def test_on_a_builtin_service_the_outcomes_are_those_of_running_everything() -> None:
    """Only the benign variants' runs are ever left out (the mutants' always run), so running
    every golden test on every benign variant as well shows what running everything gives."""
    (todo,) = resolve_services(["todo"])
    implementations = implementations_of(todo)
    executed: dict[tuple[str, str], str] = {}

    async def validate_and_run_the_variants() -> ValidationReport:
        async with open_validation_backend(services=[todo]) as backend:
            report = await validate_service(todo, backend=backend)
            results = await run_golden_tests(backend, todo, [
                (r.id, b.id) for r in todo.requirements for b in todo.data.benign])
        executed.update({key: result.outcome.value for key, result in results.items()})
        return report

    inferred = asyncio.run(validate_and_run_the_variants())
    assert inferred.ok, inferred.problems
    assert 0 < inferred.not_run < len(executed)
    assert {key: inferred.outcomes[key] for key in executed} == executed
    assert set(executed) == {key for key in inferred.outcomes
                             if implementations[key[1]].kind == "benign"}
