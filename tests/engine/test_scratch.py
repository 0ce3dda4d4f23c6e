"""A run killed with SIGKILL leaves its scratch folder; the next start removes it."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from restbench.engine.scratch import scratch_folder

KILLED_RUN = """
import os, signal, sys
from restbench.engine.scratch import scratch_folder
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
