"""The hostile corpus (tests/fixtures/hostile) scored through `restbench run -g files` on todo.

One real run, as a user would start it, with canary API keys in restbench's environment and a
listener on another loopback port, beside golden tests for the requirements no hostile file
takes. Every hostile file must be contained: no secret, file or connection reaches it, no process
outlives its execution, no kill is earned without HTTP behaviour, and the golden tests keep
their scores.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from restbench.benchmark import resolve_services
from tests.process_helpers import processes_mentioning

CORPUS = Path(__file__).parents[1] / "fixtures" / "hostile"
TIMEOUT_S = 5


@dataclass(frozen=True)
class Case:
    name: str
    kind: str  # contained | identify | forge | limit
    reason: str = ""
    suffix: str = ".py"  # or .test.mjs: JavaScript, run by the node runner


def _cases() -> list[Case]:
    cases = []
    for path in [*sorted(CORPUS.glob("*.py")), *sorted(CORPUS.glob("*.test.mjs"))]:
        lines = path.read_text().splitlines()
        suffix = ".test.mjs" if path.name.endswith(".test.mjs") else ".py"
        kind = lines[0].removeprefix("# ").removeprefix("// ").split(":", 1)[0]
        second = lines[1].removeprefix("# ").removeprefix("// ")
        reason = second.removeprefix("reason: ") if second.startswith("reason:") else ""
        cases.append(Case(path.name.removesuffix(suffix), kind, reason, suffix))
    return cases


CASES = _cases()


class Listener:
    """A TCP listener on the host's loopback that counts every connection it gets."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.received = b""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.connections += 1
            with connection:
                connection.settimeout(0.5)
                try:
                    self.received += connection.recv(4096)
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()


@dataclass
class HostileRun:
    completed: subprocess.CompletedProcess[str]
    canary: str
    listener: Listener
    host_dir: Path
    scratch: Path
    output_dir: Path
    assigned: dict[str, tuple[str, str]]  # case name -> (variant, requirement)
    golden: list[str]

    def outcomes(self, case: str) -> dict[str, tuple[str, str]]:
        """implementation -> (outcome, reason) of the case's executions."""
        variant, requirement = self.assigned[case]
        with sqlite3.connect(self.output_dir / "results.sqlite3") as db:
            rows = db.execute(
                "SELECT e.implementation, e.outcome, e.reason FROM generations g JOIN executions e"
                " ON e.code_sha = g.code_sha WHERE g.requirement = ? AND g.variant = ?",
                (requirement, variant)).fetchall()
        return {implementation: (outcome, reason) for implementation, outcome, reason in rows}

    def kills(self, variant: str, requirement: str) -> tuple[int, int, bool]:
        import csv

        with open(self.output_dir / "requirements.csv", newline="") as handle:
            for row in csv.DictReader(handle):
                if row["variant"] == variant and row["requirement"] == requirement:
                    return (int(float(row["killed"])), int(row["mutants"]),
                            row["valid"] in ("True", "1", "1.0"))
        raise KeyError((variant, requirement))


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostileRun]:
    root = tmp_path_factory.mktemp("hostile")
    host_dir, files, output_dir, scratch, home = (root / name for name in
                                                   ("host", "files", "out", "tmp", "home"))
    for folder in (host_dir, files / "precise", files / "vague", scratch, home):
        folder.mkdir(parents=True)
    canary = f"sk-CANARY-{secrets.token_hex(12)}"
    (home / ".netrc").write_text(f"machine api.example.com password {canary}\n")
    listener = Listener()
    todo = resolve_services(["todo"])[0]
    requirements = [r.id for r in todo.requirements]
    slots = [("precise", r) for r in requirements] + [("vague", r) for r in requirements]
    assert len(CASES) >= 25 and len(CASES) <= len(slots)
    assigned: dict[str, tuple[str, str]] = {}
    for case, (variant, requirement) in zip(CASES, slots, strict=False):
        text = (CORPUS / f"{case.name}{case.suffix}").read_text()
        text = text.replace("@LISTENER_PORT@", str(listener.port))
        text = text.replace("@HOST_DIR@", str(host_dir))
        (files / variant / f"{requirement}{case.suffix}").write_text(text)
        assigned[case.name] = (variant, requirement)
    golden = []
    for variant, requirement in slots[len(CASES):]:
        source = todo.root / next(r for r in todo.requirements if r.id == requirement).golden
        (files / variant / f"{requirement}.py").write_text(source.read_text())
        golden.append(requirement)
    environment = {**os.environ, "OPENAI_API_KEY": canary, "RESTBENCH_LLM_API_KEY": canary,
                   "ANTHROPIC_API_KEY": canary, "HOME": str(home), "TMPDIR": str(scratch),
                   "COLUMNS": "200"}
    try:
        completed = subprocess.run(
            [sys.executable, "-m", "restbench.cli", "run", "-s", "todo", "-g", "files",
             "-a", f"dir={files}", "-o", str(output_dir), "--timeout", str(TIMEOUT_S), "-j",
             "2"], capture_output=True, text=True, env=environment, timeout=900, check=False)
        time.sleep(0.5)  # anything that survived would still be running now
        yield HostileRun(completed, canary, listener, host_dir, scratch, output_dir, assigned,
                         golden)
    finally:
        listener.close()


def test_the_run_finishes(hostile_run: HostileRun) -> None:
    completed = hostile_run.completed
    assert completed.returncode == 0, completed.stderr[-3000:] + completed.stdout[-3000:]
    assert "Traceback" not in completed.stderr


def test_no_connection_leaves_the_sandbox(hostile_run: HostileRun) -> None:
    assert hostile_run.listener.connections == 0, hostile_run.listener.received[:500]


def test_no_secret_reaches_a_test_or_the_store(hostile_run: HostileRun) -> None:
    token = hostile_run.canary.split("-")[-1].encode()
    for path in hostile_run.output_dir.rglob("*"):
        if path.is_file():
            assert token not in path.read_bytes(), path
    assert hostile_run.canary not in hostile_run.completed.stdout + hostile_run.completed.stderr


def test_nothing_written_outside(hostile_run: HostileRun) -> None:
    assert list(hostile_run.host_dir.iterdir()) == []
    assert not (Path.home() / "planted.txt").exists()


def test_no_process_outlives_its_execution(hostile_run: HostileRun) -> None:
    assert processes_mentioning("restbench-hostile-marker", str(hostile_run.scratch)) == []


@pytest.mark.parametrize("case", [c for c in CASES if c.kind in ("contained", "identify")],
                         ids=lambda c: c.name)
def test_contained_attacks_pass_everywhere_and_kill_nothing(hostile_run: HostileRun,
                                                            case: Case) -> None:
    outcomes = hostile_run.outcomes(case.name)
    assert outcomes, f"{case.name} was not executed"
    assert {o for o, _ in outcomes.values()} == {"pass"}, outcomes
    killed, _, valid = hostile_run.kills(*hostile_run.assigned[case.name])
    assert valid and killed == 0


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "forge"], ids=lambda c: c.name)
def test_forged_reports_earn_no_kill(hostile_run: HostileRun, case: Case) -> None:
    outcomes = hostile_run.outcomes(case.name)
    assert len({o for o, _ in outcomes.values()}) == 1, outcomes
    assert hostile_run.kills(*hostile_run.assigned[case.name])[0] == 0


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "limit"], ids=lambda c: c.name)
def test_limits_end_in_an_error_naming_them(hostile_run: HostileRun, case: Case) -> None:
    outcomes = hostile_run.outcomes(case.name)
    assert outcomes
    for implementation, (outcome, reason) in outcomes.items():
        assert outcome == "error", (implementation, reason)
        assert re.search(re.escape(case.reason), reason), (implementation, reason)
    killed, _, valid = hostile_run.kills(*hostile_run.assigned[case.name])
    assert not valid and killed == 0


def test_golden_tests_in_the_same_run_keep_their_scores(hostile_run: HostileRun) -> None:
    assert hostile_run.golden
    for requirement in hostile_run.golden:
        killed, mutants, valid = hostile_run.kills("vague", requirement)
        assert valid and killed == mutants, requirement
