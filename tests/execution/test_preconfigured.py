"""pytest configured once in the worker (execution.preconfigured): each test process must still
report as a fresh pytest would, and nothing of one execution may reach the next."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from restbench.benchmark import load_service
from restbench.execution import ExecutionResult, Executor, Outcome
from restbench.mutation import implementations_of
from restbench.serving import ServerPool

MINI = Path(__file__).parents[1] / "fixtures" / "mini"

REPORTED = """import requests

def test_passes(tmp_path):
    print("a line the report leaves out")
    (tmp_path / "note").write_text("fixtures work")
    assert requests.get("http://localhost:8000/counters/a", timeout=5).json() == {"value": 1}

def test_fails():
    print("a line the report shows")
    assert {"value": 1} == {"value": 2}
"""
LEAVES_OUTPUT_BEHIND = """import time

def test_killed_while_its_output_is_captured():
    print("LEFT-BEHIND-BY-THE-FIRST")
    time.sleep(30)
"""
FAILS_TO_IMPORT = "import a_module_nobody_has\n\ndef test_never_runs():\n    pass\n"
CRASHES = "import ctypes\n\ndef test_crashes():\n    ctypes.string_at(0)\n"
WAITED = "def test_passes():\n    assert True\n"


def _run(workdir: Path, codes: list[str], *, isolated: bool = True, pause_s: float = 0.0,
         timeout_s: float = 30.0) -> list[ExecutionResult]:
    """Runs the codes one after the other in one worker. The time limit is roomy by default:
    without the sandbox each execution is a fresh pytest, which took over 3 s on a busy
    machine."""
    async def run_all() -> list[ExecutionResult]:
        service = load_service(MINI)
        results = []
        async with ServerPool(workdir / "servers") as pool, \
                Executor(workers=1, timeout_s=timeout_s, scratch_root=workdir / "exec",
                         isolated=isolated) as executor:
            server = await pool.start(implementations_of(service)["original"])
            await asyncio.sleep(pause_s)
            for code in codes:
                await server.reset()
                results.append(await executor.execute(code, server.base_url, name="probe"))
        return results

    return asyncio.run(run_all())


def _comparable(output: str) -> str:
    """Output without what differs from run to run or between the two modes: durations."""
    return re.sub(r" in \d+\.\d+s", " in Ns", output)


def test_a_test_process_reports_what_a_fresh_pytest_reports(tmp_path: Path) -> None:
    sandboxed = _run(tmp_path / "sandboxed", [REPORTED])[0]
    fresh = _run(tmp_path / "fresh", [REPORTED], isolated=False)[0]
    assert sandboxed.outcome is fresh.outcome is Outcome.FAIL
    assert [t.nodeid for t in sandboxed.tests] == [t.nodeid for t in fresh.tests]
    assert "a line the report shows" in sandboxed.output
    assert _comparable(sandboxed.output) == _comparable(fresh.output)


def test_output_captured_in_one_execution_never_reaches_the_next(tmp_path: Path) -> None:
    """The first test is killed while pytest holds its output in the capture files the worker's
    configuration opened; the second, in the same worker, must start with empty ones (pytest
    reads them first when it collects, and shows what it read if collecting fails)."""
    first, second = _run(tmp_path, [LEAVES_OUTPUT_BEHIND, FAILS_TO_IMPORT], timeout_s=3)
    assert first.reason.endswith("reached: timed out")
    assert second.reason.startswith("collection error: ModuleNotFoundError"), second.reason
    assert "LEFT-BEHIND-BY-THE-FIRST" not in second.output


def test_a_crash_report_reaches_the_output(tmp_path: Path) -> None:
    """pytest's fault handler writes to the copy of stderr it made while configuring."""
    crashed = _run(tmp_path, [CRASHES])[0]
    assert crashed.outcome is Outcome.ERROR
    assert "Fatal Python error: Segmentation fault" in crashed.output
    assert "test_probe.py" in crashed.output


def test_the_session_clock_starts_in_the_test_process(tmp_path: Path) -> None:
    """The worker configured pytest seconds before; "passed in" must not count them."""
    result = _run(tmp_path, [WAITED], pause_s=2.5)[0]
    assert result.outcome is Outcome.PASS
    seconds = float(re.search(r"passed in (\d+\.\d+)s", result.output).group(1))  # type: ignore[union-attr]
    assert seconds < 2.0, result.output
