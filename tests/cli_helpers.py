"""Running the real `restbench` command in a process of its own, as a user would.

`restbench(...)` forks each command from a server that has imported the harness's libraries once
(tests/cli_forkserver.py): the command is still a process of its own, with its arguments,
environment, working folder, output and exit status, but skips the 0.6-0.7 s of CPU a fresh
interpreter spends on imports, a tenth of the suite's CPU. RESTBENCH_TESTS_FORKSERVER=0 starts a
fresh interpreter per command instead. The tests that interrupt a command or watch its process
tree start it fresh (`start_interruptible`)."""

from __future__ import annotations

import atexit
import json
import os
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
FORKSERVER_VARIABLE = "RESTBENCH_TESTS_FORKSERVER"


def restbench(*args: str | Path, cwd: Path | None = None, timeout: float = 600,
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Without `cwd`, in a throwaway folder: a command that writes to the current folder (a
    `run` without `-o` makes `restbench-results/`) leaves nothing in the one the tests were
    started from, which the test processes share. `env` adds to (or overrides) the
    environment."""
    env = {**os.environ, "COLUMNS": "200", **(env or {})}
    command = [sys.executable, "-m", "restbench.cli", *map(str, args)]
    with tempfile.TemporaryDirectory(prefix="restbench-cli-") as throwaway:
        folder = str(cwd or throwaway)
        if os.environ.get(FORKSERVER_VARIABLE) == "0":
            return subprocess.run(command, capture_output=True, text=True, cwd=folder, env=env,
                                  timeout=timeout, check=False)
        return _forked(command, folder, env, timeout)


class _ForkServer:
    """One per test process, started on its first command; it ends when this process does (it
    reads the end of its stdin)."""

    _lock = threading.Lock()
    _started: _ForkServer | None = None

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="rbtest-fork-")
        self.path = os.path.join(self.folder, "socket")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.cli_forkserver", self.path], cwd=REPOSITORY,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.process.stdout is not None
        ready = self.process.stdout.readline()
        if ready != b"ready\n":
            self.process.kill()
            raise RuntimeError(f"the tests' fork server did not start (exit "
                               f"{self.process.wait()}); {FORKSERVER_VARIABLE}=0 does without")
        atexit.register(self.stop)

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        shutil.rmtree(self.folder, ignore_errors=True)

    @classmethod
    def get(cls) -> _ForkServer:
        with cls._lock:
            if cls._started is None or cls._started.process.poll() is not None:
                cls._started = cls()
            return cls._started


def _forked(command: list[str], cwd: str, env: dict[str, str],
            timeout: float) -> subprocess.CompletedProcess[str]:
    deadline = time.monotonic() + timeout
    server = _ForkServer.get()
    outputs = {"stdout": os.pipe(), "stderr": os.pipe()}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection, \
            open(os.devnull, "rb") as stdin:
        try:
            connection.connect(server.path)
            request = {"argv": command[3:], "cwd": cwd, "env": env}
            socket.send_fds(connection, [json.dumps(request).encode() + b"\n"],
                            [stdin.fileno(), outputs["stdout"][1], outputs["stderr"][1]])
        finally:
            for _read, write in outputs.values():
                os.close(write)
        answers = connection.makefile("rb")
        connection.settimeout(60)
        answers.readline()  # {"pid"}: the command has started
        captured, finished = _read_until_closed(
            {name: read for name, (read, _) in outputs.items()}, deadline)
        stdout, stderr = (_text(captured[name]) for name in ("stdout", "stderr"))
        if not finished:  # closing the connection has the server kill the command
            raise subprocess.TimeoutExpired(command, timeout, stdout, stderr)
        connection.settimeout(max(1.0, deadline - time.monotonic()))
        try:
            returncode = json.loads(answers.readline())["returncode"]
        except TimeoutError:
            raise subprocess.TimeoutExpired(command, timeout) from None
    return subprocess.CompletedProcess(command, returncode, stdout, stderr)


def _read_until_closed(pipes: dict[str, int],
                       deadline: float) -> tuple[dict[str, bytes], bool]:
    """What was written to `pipes` until every writer closed them (what
    `subprocess.run(capture_output=True)` waits for) or until `deadline`, and whether they
    were closed."""
    chunks: dict[str, list[bytes]] = {name: [] for name in pipes}
    with selectors.DefaultSelector() as selector:
        for name, fd in pipes.items():
            selector.register(fd, selectors.EVENT_READ, name)
        try:
            while selector.get_map():
                ready = selector.select(timeout=max(0.0, deadline - time.monotonic()))
                if not ready:
                    break
                for key, _ in ready:
                    data = os.read(key.fd, 1 << 16)
                    if data:
                        chunks[key.data].append(data)
                    else:
                        selector.unregister(key.fd)
                        os.close(key.fd)
            return {name: b"".join(parts) for name, parts in chunks.items()}, \
                not selector.get_map()
        finally:
            for key in list(selector.get_map().values()):
                os.close(key.fd)


def _text(output: bytes) -> str:
    """As `subprocess.run(text=True)` decodes: universal newlines."""
    return output.decode().replace("\r\n", "\n").replace("\r", "\n")


def start_interruptible(*args: str | Path, cwd: Path | None = None,
                        env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """`restbench ARGS` in the background, for a test to interrupt (see conftest.py on SIGINT)."""
    return subprocess.Popen([sys.executable, "-m", "restbench.cli", *map(str, args)],
                            cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


@contextmanager
def killed_if_left(process: subprocess.Popen[str]) -> Iterator[subprocess.Popen[str]]:
    """`process`, killed on the way out if it is still running (a test that failed before it
    ended leaves nothing behind)."""
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


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
