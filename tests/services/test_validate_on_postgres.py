"""`restbench validate -s fullstack --db postgres` end to end: all sound on PostgreSQL, and the
harness's own PostgreSQL server, its databases and its scratch folders gone afterwards. (A file of
its own, so that the test processes run it beside test_validate_builtin.py's long test.)"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from tests.cli_helpers import restbench
from tests.memory_helpers import FolderWatch
from tests.postgres_helpers import needs_postgres
from tests.process_helpers import processes_mentioning


@pytest.mark.slow
@needs_postgres
def test_validate_fullstack_on_postgresql_and_nothing_left(
        monkeypatch: pytest.MonkeyPatch, own_memory: Path) -> None:
    """The harness starts its own PostgreSQL server (data in memory, else under TMPDIR) and
    removes it, its servers' databases and copies."""
    # Short, and open to the `postgres` account the server runs as when we are root.
    scratch = Path(tempfile.mkdtemp(prefix="restbench-pgtest-", dir="/tmp"))
    scratch.chmod(0o755)
    monkeypatch.setenv("TMPDIR", str(scratch))
    try:
        with FolderWatch(own_memory) as watch:
            result = restbench("validate", "-s", "fullstack", "--db", "postgres", timeout=1200)
        assert watch.prefixes() == {"restbench-pg-", "restbench-src-"}  # data, sources
        assert list(own_memory.iterdir()) == []
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
        assert "Traceback" not in result.stderr
        assert "fullstack: " in result.stdout and "all sound" in result.stdout
        assert "on postgresql" in result.stdout
        assert list(scratch.iterdir()) == []
        assert processes_mentioning(str(scratch)) == []
        assert processes_mentioning(str(own_memory)) == []
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
