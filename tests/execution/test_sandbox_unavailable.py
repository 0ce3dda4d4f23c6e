"""A machine without user namespaces: generated tests are refused, restbench's own still run.

The machine is made for real: restbench runs inside a user namespace (util-linux `unshare`)
whose limit on further user namespaces is 0, as in a container that forbids them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parents[1] / "fixtures"


def _restbench_without_namespaces(*args: str | Path) -> subprocess.CompletedProcess[str]:
    if shutil.which("unshare") is None:
        pytest.fail("util-linux's unshare is missing: apt-get install util-linux")
    script = ("echo 0 > /proc/sys/user/max_user_namespaces && exec \"$@\"")
    command = ["unshare", "--user", "--map-root-user", "sh", "-c", script, "sh",
               sys.executable, "-m", "restbench.cli", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "COLUMNS": "200"})


def test_generated_tests_are_refused_with_the_opt_out_named(tmp_path: Path) -> None:
    result = _restbench_without_namespaces(
        "run", "-s", FIXTURES / "mini", "-g", "files", "-a", f"dir={FIXTURES / 'mini_tests'}",
        "-o", tmp_path / "out")
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot sandbox generated tests" in lines[0]
    assert "--no-sandbox" in lines[0]
    # the limit of 0 is what stops them here, and the line says which setting that is
    assert "their limit is reached or 0: sysctl user.max_user_namespaces" in lines[0]
    assert "Traceback" not in result.stderr


def test_restbench_own_tests_still_run_with_a_notice(tmp_path: Path) -> None:
    result = _restbench_without_namespaces("run", "-s", FIXTURES / "mini", "-g", "golden",
                                           "-o", tmp_path / "out")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "cannot sandbox" in result.stdout + result.stderr
    assert "100" in result.stdout  # golden scores 100%


def test_the_opt_out_runs_generated_tests_unsandboxed(tmp_path: Path) -> None:
    result = _restbench_without_namespaces(
        "run", "-s", FIXTURES / "mini", "-g", "files", "-a", f"dir={FIXTURES / 'mini_tests'}",
        "-o", tmp_path / "out", "--no-sandbox")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "without the sandbox" in result.stdout + result.stderr
