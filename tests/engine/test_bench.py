"""`restbench bench` end to end: both modes run real servers and real pytest processes."""

from __future__ import annotations

import os
import re
import shutil
import signal
import time
from pathlib import Path

import pytest

from tests.cli_helpers import killed_if_left, restbench, start_interruptible
from tests.process_helpers import processes_mentioning


def test_bench_runs_both_modes_and_reports() -> None:
    done = restbench("bench", "-n", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    for line in ("naive total", "normal total", "server start (per start)", "reset", "sandbox",
                 "pytest", "test's HTTP work", "harness overhead", "servers alive at once",
                 "peak memory of the process tree", "naive / normal"):
        assert line in done.stdout, line
    medians = dict(re.findall(r"^(naive|normal) total\s+([\d.]+)", done.stdout, re.MULTILINE))
    assert float(medians["normal"]) > 0 and float(medians["naive"]) > 0
    memory = re.search(r"peak memory of the process tree\s+(\d+) MiB PSS, (\d+) MiB RSS",
                       done.stdout)
    assert memory and 0 < int(memory[1]) <= int(memory[2])
    # todo's first three: the original, on its server warmed by bench's own first execution,
    # then two mutants, each on a new server, whose first execution copies what it touches of
    # the pages it shares with the launcher.
    for which in ("first", "later"):
        cpu = re.search(rf"server CPU, {which} execution on it\s+([\d.]+)", done.stdout)
        assert cpu and float(cpu[1]) > 0, done.stdout
    faults = re.search(r"server page faults in an execution\s+([\d,]+) first / ([\d,]+) later",
                       done.stdout)
    assert faults, done.stdout
    first, later = (int(count.replace(",", "")) for count in faults.groups())
    assert first > max(100, later), done.stdout
    assert_servers_alive_add_up(done.stdout)


def test_bench_names_an_unknown_service() -> None:
    done = restbench("bench", "-s", "nope", "-n", "1")
    assert done.returncode == 2
    assert "nope" in done.stderr and "Traceback" not in done.stderr


def test_a_mutant_that_does_not_start_is_one_line(mini_service: Path) -> None:
    """Before: a traceback ending in `RuntimeError: naive server exited with 1`."""
    data = mini_service / "requirements.yaml"
    data.write_text(data.read_text().replace('replace: "status_code=400"',
                                             'replace: "status_code=400)("'))
    done = restbench("bench", "-s", mini_service, "-R", "MINI-01", "-n", "2")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    message = done.stderr.strip()
    assert len(message.splitlines()) == 1, message
    assert ("error: mini MINI-01-M1 (naive mode's server) did not start: exited with 1: "
            f"SyntaxError: invalid syntax at {mini_service / 'app' / 'main.py'}:13 (with the "
            "edit of mutant MINI-01-M1 applied)") in message


def test_a_mutant_killed_by_an_error_is_an_expected_outcome() -> None:
    """CONDUIT-02-M3 makes its golden test err (a KeyError on the answer), which kills it for
    validate as a failure would; bench must not count it as wrong. -R picks its requirement's
    executions, as it does validate's."""
    done = restbench("bench", "-s", "conduit", "-R", "CONDUIT-02", "-n", "5")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "unexpected outcome" not in done.stdout
    assert "5 executions of `validate -s conduit -R CONDUIT-02`" in done.stdout


def test_bench_measures_a_service_in_another_language() -> None:
    """The ledger (Node.js) gets no launcher: in both modes each implementation is a process of
    its own, started by its command; naive adds a fresh pytest and a fresh instance per
    execution."""
    if shutil.which("node") is None:
        pytest.fail("Node.js is missing: apt-get install nodejs")
    done = restbench("bench", "-s", "ledger", "-n", "4")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "unexpected outcome" not in done.stdout and "Traceback" not in done.stderr
    medians = dict(re.findall(r"^(naive|normal) total\s+([\d.]+)", done.stdout, re.MULTILINE))
    assert float(medians["normal"]) > 0 and float(medians["naive"]) > 0
    naive_starts = re.search(r"^\s+server starts\s+(\d+)$", done.stdout, re.MULTILINE)
    assert naive_starts and int(naive_starts[1]) == 4  # one instance per execution
    assert re.search(r"server starts\s+\d+\s+\(\d+ own process\)", done.stdout), done.stdout
    assert_servers_alive_add_up(done.stdout)


def assert_servers_alive_add_up(output: str) -> None:
    """Before: "servers alive at once, at most 4" under "server starts 3": the server of the
    untimed warm-up was counted alive but not started, and the output did not say so."""
    normal = output[output.index("normal total"):]
    starts = re.search(r"^\s+server starts\s+(\d+)", normal, re.MULTILINE)
    alive = re.search(r"^\s+servers alive at once, at most\s+(\d+)  \((\d+) of them started in "
                      r"the untimed warm-up, not among the server starts\)$", normal, re.MULTILINE)
    assert starts and alive, output
    assert int(alive[2]) >= 1 and int(alive[1]) <= int(starts[1]) + int(alive[2]), output



def _slow_tests(service: Path) -> Path:
    """`service` whose golden tests take 3 s: bench's own cleanup after an interruption is done
    while a naive execution's pytest still runs."""
    for test in (service / "golden").glob("test_*.py"):
        test.write_text(test.read_text().replace("def test_", "def test_0_slow():\n    "
                                                 "import time\n    time.sleep(3)\n\n\n"
                                                 "def test_", 1))
    return service


@pytest.mark.parametrize(("service", "stop_signal"), [("slow", signal.SIGINT),
                                                      ("slow", signal.SIGTERM),
                                                      ("ledger", signal.SIGINT)])
def test_an_interrupted_bench_leaves_nothing(service: str, stop_signal: signal.Signals,
                                             mini_service: Path, tmp_path: Path) -> None:
    """Before: the naive mode's thread went on after the interruption, its pytest and then the
    next executions, whose folders it made in the scratch folder once that had been removed;
    they stayed for good, the owner file that marks them stale gone with the rest."""
    if service == "ledger" and shutil.which("node") is None:
        pytest.fail("Node.js is missing: apt-get install nodejs")
    target = _slow_tests(mini_service) if service == "slow" else service
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    process = start_interruptible("bench", "-s", target, "-n", "40",
                                  env={**os.environ, "TMPDIR": str(scratch)})
    with killed_if_left(process):
        deadline = time.monotonic() + 120
        # the naive mode's first pytest is running
        while not list(scratch.glob("restbench-bench-*/naive-0/test_generated.py")):
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.05)
        process.send_signal(stop_signal)
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr, stderr
    assert list(scratch.iterdir()) == []
    assert processes_mentioning(str(scratch)) == []


def test_bench_without_the_sandbox_names_its_overhead_as_such(mini_service: Path) -> None:
    """Before: --no-sandbox still printed a "sandbox" line."""
    done = restbench("bench", "-s", mini_service, "-n", "2", "--no-sandbox")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "test process (no sandbox)" in done.stdout
    assert not any(line.strip().startswith("sandbox ") for line in done.stdout.splitlines())
