"""`restbench validate` on implementations that do not start: each problem where it belongs,
once, and no requirement called sound that was not checked."""

from __future__ import annotations

import asyncio
import io
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from rich.console import Console

from restbench.benchmark import load_service
from restbench.engine.validate import ValidationReport, validate_service
from restbench.reports import validation_table
from tests.cli_helpers import start_interruptible
from tests.process_helpers import processes_mentioning
from tests.validate_helpers import validate_counting_starts


def _validate(service: Path) -> ValidationReport:
    return asyncio.run(validate_service(load_service(service), workers=1))


def render(report: ValidationReport) -> str:
    console = Console(width=300, record=True, file=io.StringIO())
    console.print(validation_table(report))
    return console.export_text()


def test_a_mutant_that_does_not_start_is_its_requirements_problem(mini_service: Path) -> None:
    requirements = mini_service / "requirements.yaml"
    requirements.write_text(requirements.read_text().replace(
        'replace: "status_code=400"', 'replace: "status_code=400)\\n    raise RuntimeError(\'x\'"'))
    report = _validate(mini_service)
    by_id = {check.requirement: check for check in report.checks}
    assert not by_id["MINI-01"].ok and by_id["MINI-02"].ok
    assert by_id["MINI-01"].not_started == ["MINI-01-M1"]
    assert len(report.problems) == 1
    # Before: "mini: MINI-01-M1: mini MINI-01-M1 did not start", the names twice
    assert report.problems[0].startswith("mini MINI-01-M1 did not start: ")
    assert report.executions == 6  # the mutant's golden test never ran
    assert "MINI-01-M1 did not start (below)" in render(report)


def test_an_original_that_does_not_start_is_one_problem_and_nothing_is_sound(
        mini_service: Path) -> None:
    main = mini_service / "app" / "main.py"
    main.write_text(main.read_text() + "raise RuntimeError('broken original')\n")
    report = _validate(mini_service)
    assert len(report.problems) == 1
    assert report.problems[0].startswith("mini original did not start: ")
    assert report.problems[0].endswith("(so its 4 mutants and benign variants did not run either)")
    assert report.executions == 0
    assert not any(check.ok for check in report.checks)
    assert "sound" not in render(report)


def test_a_benign_variant_whose_edit_does_not_apply_is_one_service_problem(
        mini_service: Path) -> None:
    requirements = mini_service / "requirements.yaml"
    requirements.write_text(requirements.read_text().replace(
        "find: 'return {\"value\": value}'", "find: 'return {\"valeu\": value}'"))
    report = _validate(mini_service)
    assert all(check.ok for check in report.checks)
    assert len(report.problems) == 1 and "MINI-B1" in report.problems[0]


def _hang_at_import(service: Path) -> None:
    main = service / "app" / "main.py"
    main.write_text("import time\ntime.sleep(100000)\n" + main.read_text())


def test_an_original_that_hangs_at_import_is_one_problem_after_the_start_limit(
        mini_service: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the launcher waited in the import for good, and validate with it. (The limit is
    30 s; RESTBENCH_START_TIMEOUT_S sets it, here to keep the test short.)"""
    monkeypatch.setenv("RESTBENCH_START_TIMEOUT_S", "4")
    _hang_at_import(mini_service)
    report = _validate(mini_service)
    assert len(report.problems) == 1, report.problems
    assert "did not finish importing and warming up within 4 s" in report.problems[0]
    assert report.problems[0].endswith("(so its 4 mutants and benign variants did not run either)")
    assert report.executions == 0


STARTUP_HANG = """
    @app.on_event("startup")
    def wait_for_the_cache() -> None:
        import time
        time.sleep(100000)
"""


def test_a_server_stuck_in_its_startup_is_named_by_its_line_and_stops_the_others(
        mini_service: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: "no answer within 30 s", nothing about where, and each mutant and benign variant
    waited its own 30 s (210 s for a small service)."""
    monkeypatch.setenv("RESTBENCH_START_TIMEOUT_S", "4")
    main = mini_service / "app" / "main.py"
    anchor = '    app.state.counters = {"a": 1}\n'
    main.write_text(main.read_text().replace(anchor, anchor + STARTUP_HANG, 1))
    report, starts = validate_counting_starts(load_service(mini_service))
    assert starts == 1  # the original's: one start limit, not one per implementation
    assert report.problems == [(
        "mini original did not start: not started within 4 s (its import, create_app or "
        f"startup did not finish) at {main}:13 (so its 4 mutants and benign variants did not run either)")]


def _stuck_validate(service: Path, memory: Path) -> subprocess.Popen[str]:
    """`restbench validate` of `service`, whose app hangs at import, once its launcher is in
    that import (it made its warm-up folder just before)."""
    _hang_at_import(service)
    memory.mkdir()
    process = start_interruptible("validate", "-s", service,
                                  env={**os.environ, "RESTBENCH_MEMORY_DIR": str(memory)})
    deadline = time.monotonic() + 60
    while not list(memory.glob("restbench-warm-*")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_mentioning(str(memory)), "the launcher did not start"
    time.sleep(0.5)
    return process


def _assert_nothing_left(memory: Path) -> None:
    """No process of the run (the launcher names its folders in `memory`), no folder."""
    deadline = time.monotonic() + 10
    while processes_mentioning(str(memory)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_mentioning(str(memory)) == []
    assert list(memory.iterdir()) == []


def test_sigterm_stops_a_validate_whose_service_hangs_at_import(mini_service: Path,
                                                                tmp_path: Path) -> None:
    """Before: SIGTERM did nothing (the pool waited for the stuck launcher's answer), and a
    SIGKILL left the launcher sleeping in the import, holding its folders in memory."""
    process = _stuck_validate(mini_service, tmp_path / "memory")
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=20)
    assert process.returncode == 130, stderr
    _assert_nothing_left(tmp_path / "memory")


def test_a_launcher_stuck_in_an_import_goes_with_a_killed_harness(mini_service: Path,
                                                                  tmp_path: Path) -> None:
    """It gets SIGTERM when its parent dies, and cleans up as on end of input."""
    process = _stuck_validate(mini_service, tmp_path / "memory")
    process.kill()
    process.communicate(timeout=20)
    _assert_nothing_left(tmp_path / "memory")


def test_a_golden_test_that_does_not_compile_is_named_by_file_and_line(
        mini_service: Path) -> None:
    """Before: "collection error: SyntaxError: invalid syntax", no file, no line."""
    golden = next((mini_service / "golden").glob("*MINI-01*"))
    golden.write_text(golden.read_text() + "\ndef broken(:\n    pass\n")
    report = _validate(mini_service)
    line = len(golden.read_text().splitlines()) - 1
    problems = [p for p in report.problems if "MINI-01" in p]
    assert problems == [(f"MINI-01: golden test {golden}:{line}: SyntaxError: invalid "
                         "syntax; its runs on the mutants and benign variants were not judged")]
    assert any(check.ok for check in report.checks)  # MINI-02 is validated as usual


@pytest.mark.parametrize("value", ["soon", "0", "-5", "nan", "inf", "1e12"])
def test_a_start_limit_that_is_not_a_positive_number_is_one_line(value: str,
                                                                  mini_service: Path) -> None:
    from tests.cli_helpers import restbench

    done = restbench("validate", "-s", mini_service,
                     env={"RESTBENCH_START_TIMEOUT_S": value})
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"error: RESTBENCH_START_TIMEOUT_S={value}: not a number of seconds "
                           "above 0 and at most 86400 (a day)\n")


def _hold_at_import(mini_service: Path, mib: int) -> None:
    main = mini_service / "app" / "main.py"
    main.write_text(f"MODEL = bytearray({mib} * 1024**2)  # a model loaded at import, say\n"
                    + main.read_text())


def test_an_app_that_holds_more_than_a_server_may_is_named_with_the_setting(
        mini_service: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server may hold 1 GiB of data (RESTBENCH_SERVER_MEMORY_MB, here 200 MiB): before the
    message, a server forked from a launcher holding more exited before it could say why."""
    _hold_at_import(mini_service, 300)
    monkeypatch.setenv("RESTBENCH_SERVER_MEMORY_MB", "200")
    report = _validate(mini_service)
    assert len(report.problems) == 1, report.problems
    assert re.fullmatch(r"mini original did not start: the app holds 3\d\d MiB of memory once "
                        r"imported, over the 200 MiB a server may hold "
                        r"\(RESTBENCH_SERVER_MEMORY_MB raises it\) \(so its 4 mutants and "
                        r"benign variants did not run either\)", report.problems[0]), report.problems
    monkeypatch.delenv("RESTBENCH_SERVER_MEMORY_MB")  # the default, 1 GiB, lets it start
    assert _validate(mini_service).problems == []


def test_an_app_that_runs_out_of_a_servers_memory_at_import_is_named_with_the_setting(
        mini_service: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An app whose create_app needs more than a server may hold: the server's start ends in a
    MemoryError, named with the setting and the line."""
    monkeypatch.setenv("RESTBENCH_SERVER_MEMORY_MB", "200")
    main = mini_service / "app" / "main.py"
    main.write_text(main.read_text().replace(
        "def create_app(database_url: str) -> FastAPI:\n",
        "def create_app(database_url: str) -> FastAPI:\n"
        "    app_model = bytearray(300 * 1024**2)  # noqa: F841\n", 1))
    report = _validate(mini_service)
    assert len(report.problems) == 1, report.problems
    assert report.problems[0].startswith(
        "mini original did not start: MemoryError (a server may hold 200 MiB of memory; "
        f"RESTBENCH_SERVER_MEMORY_MB raises it) at {main}:7"), report.problems


@pytest.mark.parametrize("value", ["lots", "0", "-5", "1.5", "99999999999999"])
def test_a_server_memory_setting_that_is_not_a_positive_number_is_one_line(
        value: str, mini_service: Path) -> None:
    from tests.cli_helpers import restbench

    done = restbench("validate", "-s", mini_service, env={"RESTBENCH_SERVER_MEMORY_MB": value})
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"error: RESTBENCH_SERVER_MEMORY_MB={value}: not a whole number of "
                           "MiB from 1 to 1048576\n")
