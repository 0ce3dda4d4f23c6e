"""pytest configured once, in the worker, and run in every test process the worker forks.

Configuring pytest (parsing its options, importing and registering its plugins, building the
fixture manager from them) costs a fresh process ~30 ms of CPU, more than most generated tests
take. So the worker starts one pytest session itself and stops it at the end of
`pytest_sessionstart`: it serves executions from inside that hook. A test process forked there
returns from the hook with its test file as the session's argument, and pytest carries on in it
as if it had started there; the worker never runs a test.

The session is configured for a working folder that exists at the same path in the worker and
in the sandbox (`rootdir`), so that every path pytest computed matches the test process's view.

Two things of the worker's must not reach a test: the stdout and stderr that pytest saved while
it configured (the test process points them at the execution's output), and the temporary files
its output capture writes into (the test process gets empty ones of its own).
"""

from __future__ import annotations

import gc
import os
import stat
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

import pytest

ARGUMENT_PLACEHOLDER = "test_placeholder.py"  # replaced by the test file in each test process


class TestProcessStart(Protocol):
    test_name: str
    output: int


Start = TypeVar("Start", bound=TestProcessStart)


class PreconfiguredPytest(Generic[Start]):
    """A pytest plugin and the session it belongs to (see the module's docstring)."""

    def __init__(self, rootdir: str, args: list[str], plugins: list[object]) -> None:
        self.rootdir = rootdir
        self.args = args
        self.plugins = plugins
        self.started: Start | None = None  # set in a test process
        self._serve: Callable[[], Start | None] = lambda: None
        self._enter: Callable[[Start, set[int]], None] = lambda start, keep: None
        self._known_fds: set[int] = set()
        self._saved_stdio: tuple[int, int] = (1, 2)
        self._stdio_identity: tuple[int, int] = (0, 0)
        self._devnull_device = 0
        self._home = ""

    def run(self, serve: Callable[[], Start | None],
            enter: Callable[[Start, set[int]], None]) -> int:
        """In the worker: configures pytest, then calls `serve`, which forks test processes;
        exits when `serve` returns None. In a test process `serve` returns what to run; `enter`
        gets it ready (its output on stdout and stderr, every file descriptor closed but the
        given ones), and `run` returns pytest's exit code once the test file has run."""
        self._serve, self._enter = serve, enter
        self._known_fds = _open_fds()
        stdio = os.memfd_create("pytest-stdio")
        self._stdio_identity = _identity(stdio)
        self._devnull_device = os.stat(os.devnull).st_rdev
        self._saved_stdio = (os.dup(1), os.dup(2))
        self._known_fds |= {stdio, *self._saved_stdio}
        for fd in (1, 2):
            os.dup2(stdio, fd)
        self._home = os.getcwd()
        os.chdir(self.rootdir)  # pytest's invocation folder: the test process's working folder
        return int(pytest.main([ARGUMENT_PLACEHOLDER, "--rootdir", self.rootdir, "-c", os.devnull,
                                *self.args], plugins=[*self.plugins, self]))

    # Registered before the terminal reporter, so that its session start (the clock of
    # "passed in 0.05s") runs after this one, in the test process.
    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        os.chdir(self._home)
        for fd, saved in zip((1, 2), self._saved_stdio, strict=True):
            os.dup2(saved, fd)
            os.close(saved)
        configured = {fd for fd in _open_fds() - self._known_fds if _is_open(fd)}
        gc.freeze()  # the configured session, shared by every test process
        start = self._serve()
        if start is None:
            os._exit(0)  # the worker is done; nothing of the session is worth finishing
        self.started = start
        self._enter(start, configured)
        for fd in configured:
            self._make_private(fd, start.output)
        session.config.args = [start.test_name]

    def _make_private(self, fd: int, output: int) -> None:
        """A file descriptor the configuration opened, made this test process's own; one of a
        kind not foreseen here points at /dev/null, so that none reaches the worker's files."""
        info = os.fstat(fd)
        if (info.st_dev, info.st_ino) == self._stdio_identity:
            os.dup2(output, fd)  # pytest's saved stdout or stderr, the fault handler's copy
            return
        if stat.S_ISCHR(info.st_mode) and info.st_rdev == self._devnull_device:
            return  # where pytest sends what nobody reads (logging's file, the capture's stdin)
        if stat.S_ISREG(info.st_mode) and info.st_nlink == 0:
            fresh = os.memfd_create("capture")  # a capture file, shared with the worker
        else:
            fresh = os.open(os.devnull, os.O_RDWR)
        os.dup2(fresh, fd)
        os.close(fresh)


def _open_fds() -> set[int]:
    return {int(name) for name in os.listdir("/proc/self/fd")}


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino
