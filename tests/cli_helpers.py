"""Running the real `restbench` command in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def restbench(*args: str | Path, cwd: Path | None = None,
              timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "restbench.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout,
                          check=False)


def start_interruptible(*args: str | Path, cwd: Path | None = None,
                        env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """`restbench ARGS` in the background, for a test to interrupt (see conftest.py on SIGINT)."""
    return subprocess.Popen([sys.executable, "-m", "restbench.cli", *map(str, args)],
                            cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
