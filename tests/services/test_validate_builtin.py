"""`restbench validate` on the built-in services, against real servers over real HTTP."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from restbench.benchmark import builtin_service_names
from tests.cli_helpers import restbench
from tests.postgres_helpers import needs_postgres


@pytest.mark.slow
@pytest.mark.parametrize("service", builtin_service_names())
def test_validate_builtin_service_is_sound(service: str) -> None:
    result = restbench("validate", "-s", service, timeout=1200)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert f"{service}: " in result.stdout and "all sound" in result.stdout


def test_todo_meets_the_benchmark_size() -> None:
    result = restbench("list")
    assert result.returncode == 0, result.stderr
    (line,) = [row for row in result.stdout.splitlines() if "│ todo " in row]
    cells = [cell.strip() for cell in line.split("│") if cell.strip()]
    requirements, mutants = int(cells[2]), int(cells[3])
    assert requirements >= 16 and mutants >= 28 and mutants >= requirements


def _processes_mentioning(text: str) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            command = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in command:
            found.append(command)
    return found


@pytest.mark.slow
@needs_postgres
def test_validate_fullstack_on_postgresql_and_nothing_left(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness starts its own PostgreSQL server (data in /dev/shm, else under TMPDIR) and
    removes it, its servers' databases and copies."""
    # Short, and open to the `postgres` account the server runs as when we are root.
    scratch = Path(tempfile.mkdtemp(prefix="restbench-pgtest-", dir="/tmp"))
    scratch.chmod(0o755)
    monkeypatch.setenv("TMPDIR", str(scratch))
    in_memory_before = set(Path("/dev/shm").glob("restbench-*"))
    try:
        result = restbench("validate", "-s", "fullstack", "--db", "postgres", timeout=1200)
        left = set(Path("/dev/shm").glob("restbench-*")) - in_memory_before
        assert not left, left  # other runs on this machine may own the ones that were there
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
        assert "Traceback" not in result.stderr
        assert "fullstack: " in result.stdout and "all sound" in result.stdout
        assert "on postgresql" in result.stdout
        assert list(scratch.iterdir()) == []
        assert _processes_mentioning(str(scratch)) == []
        assert [p for p in _processes_mentioning("/dev/shm/restbench-pg-")
                if not any(str(folder) in p for folder in in_memory_before)] == []
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
