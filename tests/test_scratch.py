"""A run killed with SIGKILL leaves its scratch folders; the next one with the same prefix
removes them."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from restbench.scratch import OWNER_FILE, scratch_folder
from restbench.serving import ServerPool

KILLED_RUN = """
import os, signal, sys
from restbench.scratch import scratch_folder
with scratch_folder("restbench-run-") as folder:
    (folder / "servers").mkdir()
    print(folder, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_runs_scratch_folder_is_removed_by_the_next(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    killed = subprocess.run([sys.executable, "-c", KILLED_RUN], capture_output=True, text=True,
                            env={"TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin"}, check=False)
    assert killed.returncode == -9, killed.stderr
    left = Path(killed.stdout.strip())
    assert left.parent == tmp_path and (left / "servers").is_dir()
    unowned = tmp_path / "restbench-run-foreign"  # no owner recorded: left alone
    unowned.mkdir()
    with scratch_folder("restbench-run-") as mine:
        assert not left.exists()
        assert unowned.exists() and mine.exists()
    assert not mine.exists()


KILLED_POOL = """
import os, signal
from pathlib import Path
from restbench.serving import ServerPool
pool = ServerPool(Path(os.environ["TMPDIR"]) / "servers")
print(pool._sockets, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.fixture
def short_tmp_path() -> Iterator[Path]:
    """A temporary directory short enough for sockets in it (pytest's, under a worker of
    pytest-xdist, is not: the pools then put their sockets in /tmp)."""
    folder = Path(tempfile.mkdtemp(prefix="rbtest-", dir="/tmp"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_killed_harness_control_socket_folder_goes_with_the_next_pool(
        short_tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder of a pool's control sockets is owned like a scratch folder: a harness killed
    with SIGKILL leaves it, the next pool on the machine removes it."""
    tmp_path = short_tmp_path
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("RESTBENCH_MEMORY_DIR", str(tmp_path))
    killed = subprocess.run([sys.executable, "-c", KILLED_POOL], capture_output=True, text=True,
                            env={**os.environ, "TMPDIR": str(tmp_path)}, check=False)
    assert killed.returncode == -9, killed.stderr
    left = Path(killed.stdout.strip())
    assert left.parent == tmp_path and left.name.startswith("restbench-ctl-")

    async def next_pool() -> Path:
        async with ServerPool(tmp_path / "servers") as pool:
            assert not left.exists()
            assert (pool._sockets / OWNER_FILE).read_text() == str(os.getpid())
            return pool._sockets

    assert not asyncio.run(next_pool()).exists()
