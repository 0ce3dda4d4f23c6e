"""`-R/--requirement` for run and validate, and `validate --repeat N`, as a user runs them."""

from __future__ import annotations

import asyncio
import csv
import re
import signal
import time
from pathlib import Path

import pytest

from restbench.engine.events import Advanced, Notice, PhaseStarted
from restbench.engine.flaky import NOT_RUN, flaky_outcomes
from restbench.engine.validate import ValidationReport, _watching_the_last_jobs
from tests.cli_helpers import restbench, start_interruptible


def report(outcomes: dict[tuple[str, str], str]) -> ValidationReport:
    return ValidationReport("s", [], 0, len(outcomes), 0.0, outcomes=outcomes)


def test_flaky_outcomes_lists_only_changing_outcomes() -> None:
    steady = {("R1", "original"): "pass", ("R1", "R1-M1"): "fail"}
    changed = {("R1", "original"): "pass", ("R1", "R1-M1"): "pass"}
    flaky = flaky_outcomes([report(steady), report(changed), report(steady)])
    assert [f.describe() for f in flaky] == ["R1 on R1-M1: fail x2, pass x1"]
    assert flaky_outcomes([report(steady)] * 3) == []
    missing = flaky_outcomes([report(steady), report({("R1", "original"): "pass"})])
    assert missing[0].outcomes == (("fail", 1), (NOT_RUN, 1))


def test_validate_checks_only_the_selected_requirements() -> None:
    result = restbench("validate", "-s", "todo", "-R", "TODO-0[12],TODO-25", "-j", "2")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "todo: 3 requirements, 11 mutants" in result.stdout
    assert "TODO-03" not in result.stdout and "TODO-25" in result.stdout


def test_validate_of_several_services_reports_each_in_turn() -> None:
    """The next service's executions start while the last of the one before run; the reports
    still come one per service, in the order given, each with its own executions."""
    result = restbench("validate", "-s", "conduit,todo", "-R", "CONDUIT-0[12],TODO-0[12]")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    conduit, conduit_executions = _summary(result.stdout, "conduit: 2 requirements, 6 mutants, "
                                                          "4 benign variants: all sound")
    todo, todo_executions = _summary(result.stdout, "todo: 2 requirements, 8 mutants, 2 benign "
                                                    "variants: all sound")
    # golden tests x (original + benign) + mutants: made, or never reached and not made
    assert (conduit_executions, todo_executions) == (16, 14)
    assert conduit < todo
    assert "CONDUIT-01" in result.stdout[:conduit] and "TODO-01" in result.stdout[conduit:todo]


def _summary(stdout: str, verdict: str) -> tuple[int, int]:
    """Where the summary line that starts with `verdict` is, and the executions it counts
    (those made and those not run)."""
    found = re.search(re.escape(verdict) + r" \((\d+) executions in [\d.]+ s, \d+ ms each"
                      r"(?:, (\d+) not run: never reached)?, on sqlite\)", stdout)
    assert found is not None, stdout
    return found.start(), int(found[1]) + int(found[2] or 0)


def test_an_interrupted_validate_says_it_kept_nothing_but_its_reports() -> None:
    process = start_interruptible("validate", "-s", "conduit,todo")
    time.sleep(5)  # started: its servers and workers take ~2 s, its executions ~20 s
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "interrupted; validate stores nothing, the reports above are all it finished" \
        in stderr
    assert "Traceback" not in stderr and "resume" not in stderr


def test_the_next_service_goes_in_once_no_more_jobs_wait_than_lanes_run() -> None:
    last_running = asyncio.Event()
    seen: list[object] = []
    watch = _watching_the_last_jobs(seen.append, 3, last_running)
    watch(Notice("servers start"))
    assert not last_running.is_set()  # nothing known yet
    watch(PhaseStarted("execute", 5))
    watch(Advanced("execute", "R1 on original"))
    assert not last_running.is_set()  # four to go, three lanes
    watch(Advanced("execute", "R1 on R1-M1"))
    assert last_running.is_set()
    assert len(seen) == 4  # every event still reaches the handler


def test_run_scores_only_the_selected_requirements(tmp_path: Path) -> None:
    result = restbench("run", "-s", "todo", "-R", "TODO-1*", "-R", "TODO-21", "-g", "golden",
                       "-V", "precise", "-o", tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    rows = list(csv.DictReader((tmp_path / "requirements.csv").open()))
    assert sorted(r["requirement"] for r in rows) == [
        *(f"TODO-1{n}" for n in range(10)), "TODO-21"]
    assert all(r["killed"] == r["mutants"] for r in rows)


@pytest.mark.parametrize("command", ["run", "validate"])
def test_an_id_or_glob_that_names_nothing_is_a_one_line_error(command: str,
                                                              tmp_path: Path) -> None:
    extra = ["-o", str(tmp_path)] if command == "run" else []
    result = restbench(command, "-s", "todo", "-R", "TODO-01,TODO-99,FS-*", *extra)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert "'TODO-99', 'FS-*' match no requirement of todo" in lines[0]
    assert not (tmp_path / "scores.json").exists()


@pytest.mark.parametrize("command", ["run", "validate", "bench"])
@pytest.mark.parametrize("empty", ["", " , "])
def test_an_empty_selection_is_a_one_line_error(command: str, empty: str, mini_service: Path,
                                                tmp_path: Path) -> None:
    """Before: an empty -R chose nothing, which meant every requirement."""
    extra = {"run": ["-g", "golden", "-o", str(tmp_path)], "bench": ["-n", "1"]}.get(command, [])
    result = restbench(command, "-s", mini_service, "-R", empty, *extra)
    assert result.returncode == 2, result.stdout[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert f"-R/--requirement {empty!r}: names no requirement (it is empty)" in lines[0]
    assert not (tmp_path / "results.sqlite3").exists()


def test_repeat_reports_an_outcome_that_changes(mini_service: Path, tmp_path: Path) -> None:
    # MINI-01's golden test fails on the original in the first repetition only.
    counter = tmp_path / "runs-on-original"
    golden = mini_service / "golden" / "test_MINI-01.py"
    golden.write_text(golden.read_text() + f'''

def test_flaky_on_the_original():
    from pathlib import Path
    marker = Path({str(counter)!r})
    if requests.get(f"{{BASE_URL}}/counters/zzz", timeout=10).status_code == 404:
        seen = int(marker.read_text()) if marker.exists() else 0
        marker.write_text(str(seen + 1))
        assert seen >= 1
''')
    # The flakiness is state kept in a host file between executions, which only an unsandboxed
    # run allows (golden tests are restbench's own, so --no-sandbox is fair here).
    result = restbench("validate", "-s", mini_service, "--repeat", "3", "-j", "1",
                       "--no-sandbox")
    # it runs on the original and the benign variant, one after the other (-j 1), and twice more
    # on new servers of the original after its failure in repetition 1, without and with a reset
    # (validate's hint; not an outcome)
    assert counter.read_text() == "8", result.stdout + result.stderr
    assert result.returncode == 1, result.stdout + result.stderr
    assert "flaky: MINI-01 on original: pass x2, fail x1" in result.stdout
    assert "problem in repetition 1: MINI-01: golden test does not pass on the original" \
        in result.stdout.replace("\n", " ")
    assert "mini: 1 flaky outcome over 3 repetitions; 1 repetition with problems" \
        in result.stdout
    steady = restbench("validate", "-s", mini_service, "-R", "MINI-02", "--repeat", "2")
    assert steady.returncode == 0, steady.stdout + steady.stderr
    assert "mini: 0 flaky outcomes over 2 repetitions" in steady.stdout
