"""Inside the sandbox: running a tool runner's command as a child of the test process.

Called by the test process (pid 1 of the execution's pid namespace) once the sandbox is built,
privileges are dropped, limits are set and the environment is clean; the tool inherits all of
that. The worker's deadline kills pid 1, and with it the tool and everything it started.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from restbench.runners.base import PYTEST, Runner
from restbench.runners.registry import load_runner

REPORT_FILE = ".restbench-report"
SCRATCH = "/tmp"  # the sandbox's working folder (execution.sandbox.SCRATCH)
REPORT_LIMIT_BYTES = 8 * 1024**2


def tool_command(runner: Runner, test_file: str, workdir: str, base_url: str) -> list[str]:
    """Made in the harness, where the tool's installation is found; run in the sandbox."""
    return runner.command(test_file, str(Path(workdir, REPORT_FILE)), base_url)


def tool_runner(name: str) -> Runner | None:
    """The runner named in a request, or None for pytest (run in-process)."""
    return None if name == PYTEST else load_runner(name)


def run_tool(runner: Runner, command: list[str], workdir: str, nonce: str) -> dict[str, Any]:
    """Runs the tool's command (made by the harness, see `tool_command`) to its end; returns
    the payload the harness reads as the test's report."""
    report_path = Path(workdir, REPORT_FILE)
    pid = os.fork()
    if pid == 0:
        try:
            os.execve(command[0], command, dict(os.environ))
        except OSError as exc:
            os.write(2, f"cannot run {command[0]}: {exc.strerror}\n".encode())
        os._exit(127)
    _, status = os.waitpid(pid, 0)
    exit_code = os.waitstatus_to_exitcode(status)
    try:
        with report_path.open("rb") as file:
            data = file.read(REPORT_LIMIT_BYTES)
    except OSError:
        data = b""
    result = runner.read_report(data, exit_code)
    payload: dict[str, Any] = {"nonce": nonce, "exit_code": exit_code,
                               "tests": [t.__dict__ for t in result.tests],
                               "collect_errors": result.collect_errors}
    if exit_code < 0 and not result.tests:
        payload["crashed"] = f"{Path(command[0]).name} was killed by signal {-exit_code}"
    return payload
