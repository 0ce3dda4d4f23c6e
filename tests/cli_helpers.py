"""Running the real `restbench` command in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path


def restbench(*args: str | Path, cwd: Path | None = None, timeout: float = 600,
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Without `cwd`, in a throwaway folder: a command that writes to the current folder (a
    `run` without `-o` makes `restbench-results/`) leaves nothing in the one the tests were
    started from, which the test processes share. `env` adds to (or overrides) the
    environment."""
    env = {**os.environ, "COLUMNS": "200", **(env or {})}
    with tempfile.TemporaryDirectory(prefix="restbench-cli-") as throwaway:
        return subprocess.run([sys.executable, "-m", "restbench.cli", *map(str, args)],
                              capture_output=True, text=True, cwd=cwd or throwaway, env=env,
                              timeout=timeout, check=False)


def start_interruptible(*args: str | Path, cwd: Path | None = None,
                        env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """`restbench ARGS` in the background, for a test to interrupt (see conftest.py on SIGINT)."""
    return subprocess.Popen([sys.executable, "-m", "restbench.cli", *map(str, args)],
                            cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def serve_until_its_child_is_killed(*args: str | Path, marker: bytes) -> tuple[int, list[str]]:
    """`restbench serve ARGS` until it serves; then SIGKILL its child process whose command line
    holds `marker` (its service, its database supervisor). Returns serve's exit status and its
    `error` lines."""
    import signal

    from tests.process_helpers import live_children

    serve = start_interruptible("serve", *args)
    try:
        assert serve.stdout is not None and serve.stderr is not None
        announced = serve.stdout.readline()  # serve's address line, once it serves
        assert " at http://127.0.0.1:" in announced, announced + serve.stderr.read()
        (child,) = [pid for pid in live_children(serve.pid)
                    if marker in Path(f"/proc/{pid}/cmdline").read_bytes()]
        os.kill(child, signal.SIGKILL)
        serve.wait(timeout=30)
        return serve.returncode, [line for line in serve.stderr.read().splitlines()
                                  if line.startswith("error")]
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()
