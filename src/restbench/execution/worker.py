"""Pre-warmed test workers: each forks one sandboxed child per execution.

Run as `python -m restbench.execution.worker CONTROL_FD MOUNT_POINT ISOLATED KIND` with a clean
environment, this process is the template of the workers of its kind. It imports pytest and the
usual HTTP clients and runs pytest once, so that each test process starts warm (tens of ms
instead of hundreds); the template of KIND `schemathesis` also warms Schemathesis up, for the
tests that import it (the harness sends only those to its workers). Then it forks a worker each
time the harness asks, so that a run's workers, and those that replace a failed one, cost a fork
instead of a warm-up each (~0.8 s of CPU for a plain worker, ~5 s for a Schemathesis one). The
template never runs a test. Its control channel and each worker's channel are SOCK_SEQPACKET
sockets to the harness: one JSON message per packet, file descriptors passed alongside.

    harness  -> template {"fork": true} + fds [the worker's channel, its log file]
    template -> harness  {"pid"} + fds [a pidfd of the worker]
    worker   -> harness  {"ready": true} or {"ready": false, "error"}, once its first sandbox is
                         prepared (or could not be)

A worker is in a session of its own, as a child of the template, which reaps it; the harness
waits for it and signals it through its pidfd. On its channel:

    harness -> {"nonce", "test_path", "test_name", "timeout_s", "workdir",
                "redirect_port"}                     (the last two only without isolation)
               + fds [code, pyc]                      (the pyc when the harness compiled one)
    worker  -> {"event": "started", "nonce"} + fds [output, report, listeners...]
    worker  -> {"event": "finished", "nonce", "timed_out", "duration_s", "status"}

Per execution the worker forks the test process straight into new user, mount, pid, network, IPC
and UTS namespaces (`namespaces.fork_into`): it is pid 1 of its pid namespace, so when it ends the
kernel kills everything it left behind. It opens the canonical port (127.0.0.1:8000 and
[::1]:8000) inside its network namespace; those listening sockets go to the harness, which hands
their connections to the implementation under test (or relays them), so nothing in the sandbox
knows which implementation that is. Its output and its pytest report go to two memory files that
only the harness reads, so the worker itself never holds a test's code, output or verdict.

One fork per execution, not two: a first child that unshared the namespaces and then forked the
test process cost 7-10% of `restbench validate`'s CPU (its fork of the worker's address space,
its copy-on-write faults and its exit).
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import json
import os
import resource
import select
import signal
import socket
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from restbench import process_names
from restbench.execution import rewritten, sandbox
from restbench.execution.limits import (
    FILE_SIZE_LIMIT_BYTES,
    MEMORY_LIMIT_BYTES,
    OPEN_FILES_LIMIT,
    PROCESS_LIMIT,
)
from restbench.execution.preconfigured import PreconfiguredPytest
from restbench.execution.sandbox import ReportCollector, SandboxView
from restbench.execution.warm_up_stub import stub_service
from restbench.reaping import reap_children
from restbench.runners import PYTEST
from restbench.runners.base import Runner
from restbench.runners.sandboxed import run_tool, tool_runner

PACKET_LIMIT = 65536
CODE_FILES = 2  # the test's code, and its assertion-rewritten pyc when the harness compiled it
CODE_LIMIT_BYTES = 64 * 1024**2
PREPARE_TIMEOUT_S = 60.0
REAP_EVERY_S = 1.0  # how often the template reaps the workers that ended
# How long a template whose harness is done waits for its workers to exit (the harness has
# killed them by then): reaped by it, their CPU time counts in the run's (reaping.py).
END_REAP_S = 5.0
# Plugins a generated test never needs; the exception-hook plugins cost a full gc per run.
# --noconftest: a conftest.py the test writes into its scratch folder is never loaded.
PYTEST_ARGS = ["-q", "--no-header", "--noconftest", "-o", "addopts=", "-W",
               "ignore::DeprecationWarning",
               *(arg for plugin in ("cacheprovider", "unraisableexception", "threadexception",
                                    "pastebin", "junitxml", "doctest")
                 for arg in ("-p", f"no:{plugin}"))]
PYTEST_INI = b"[pytest]\n"
_WARM_UP_TEST = """import os

import requests

BASE_URL = os.environ["WARM_UP_STUB"]


def test_passes():
    token = requests.post(f"{BASE_URL}/login", data={"username": "a", "password": "b"},
                          timeout=5).json()["access_token"]
    answer = requests.get(f"{BASE_URL}/items", headers={"Authorization": f"Bearer {token}"},
                          timeout=5)
    assert answer.status_code == 200 and answer.json()[0]["id"] == 1
    assert requests.put(f"{BASE_URL}/items/1", json={"name": "pen"}, timeout=5).status_code == 401


def test_fails():
    expected = {"id": 1, "title": "warm"}
    assert {"id": 2, "title": "warm"} == expected
"""


def _warm_up(schemathesis: bool = False) -> None:
    """Runs pytest once on a passing and a failing test, so that what every run imports and
    caches (assertion rewriting, failure reports, the HTTP clients) is in the worker's memory
    before the test processes fork from it. The passing test makes requests (to a stub on the
    loopback): a test process's first request cost ~1 ms of CPU more without. With
    `schemathesis`, Schemathesis's warm-up too (`_warm_up_schemathesis`).

    The other warm-ups come first: importing jsonschema, Schemathesis and what their first runs
    load registers abstract base classes, which empties every `isinstance` cache that pytest's
    run filled (each child then refilled them: ~70 copy-on-write faults per test process)."""
    _warm_up_jsonschema()
    import http.client  # noqa: F401
    import netrc  # noqa: F401 - requests imports it on its first request (~0.5-1 ms per test)
    import unittest.mock  # noqa: F401

    import requests  # noqa: F401

    _import_httpx_without_its_command_line()
    if schemathesis:
        _warm_up_schemathesis()

    with tempfile.TemporaryDirectory() as folder:
        test = Path(folder) / "test_warm_up.py"
        test.write_text(_WARM_UP_TEST)
        (Path(folder) / "pytest.ini").write_bytes(PYTEST_INI)
        saved = os.dup(1)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        collector = ReportCollector()
        try:
            with stub_service() as base_url:
                os.environ["WARM_UP_STUB"] = base_url
                pytest.main([str(test), "--rootdir", folder, *PYTEST_ARGS], plugins=[collector])
        finally:
            os.environ.pop("WARM_UP_STUB", None)
            os.dup2(saved, 1)
        outcomes = [(r.nodeid.rpartition("::")[2], r.outcome) for r in collector.tests
                    if r.when == "call"]
        if outcomes != [("test_passes", "passed"), ("test_fails", "failed")]:
            # the warm-up itself broke: every test would run cold, so the worker says so
            raise RuntimeError(f"the worker's warm-up test went wrong: {collector.tests}")
        sys.modules.pop("test_warm_up", None)


def _import_httpx_without_its_command_line() -> None:
    """httpx imports its command-line client whenever click and rich are installed (they are:
    restbench's own CLI uses them): ~70 modules and ~3.5 MB that a test never uses, which every
    test process's fork would copy the page tables of and its exit unmap. Here httpx is imported
    as where they are missing, and `httpx.main` then imports the client on first use, the same
    object as before."""
    if "httpx" in sys.modules:
        return  # already imported, whole: nothing to save
    sys.modules["httpx._main"] = None  # type: ignore[assignment] # its import fails, as without
    try:
        import httpx
    except ImportError:
        return
    finally:
        del sys.modules["httpx._main"]
    vars(httpx).pop("main", None)  # httpx's stand-in, which says to install the extras

    def command_line_on_first_use(name: str) -> Any:
        if name != "main":
            raise AttributeError(f"module 'httpx' has no attribute {name!r}")
        from httpx._main import main

        httpx.main = main  # type: ignore[attr-defined]
        return main

    httpx.__getattr__ = command_line_on_first_use  # type: ignore[attr-defined] # PEP 562


def _map_module_files() -> None:
    """Has `inspect` note the file of every module loaded so far. A failure report looks up the
    test's module by file, and that lookup first resolves the real path of every module it has
    not seen (~7 lstat calls each): done here, every child inherits the map and resolves only
    its own test module (`TestModuleFiles`). A file name nothing has forces the walk (a known
    one returns early)."""
    inspect.getmodule(None, "<restbench: map the file of every loaded module>")


class TestModuleFiles:
    """A pytest plugin that notes each test module's file in `inspect`'s map as it is collected,
    as `inspect.getmodule` itself would. Without it, a failing test's report looked its module up
    by walking every loaded module (~700 in a test process), which wrote to their objects'
    reference counts and so copied ~700 of the worker's pages into the test process: ~3.5 ms of
    CPU per failing test. Every other file is mapped as before, on the lookup that needs it."""

    __test__ = False  # not a test class, for pytest's collection of this project's own tests

    @staticmethod
    def pytest_itemcollected(item: pytest.Item) -> None:
        map_module_file(getattr(item, "module", None))


def map_module_file(module: object) -> None:
    """What `inspect.getmodule`'s walk over the loaded modules does for `module`."""
    name, file = getattr(module, "__name__", None), getattr(module, "__file__", None)
    if not isinstance(name, str) or not isinstance(file, str) \
            or inspect._filesbymodname.get(name) == file:  # type: ignore[attr-defined]
        return
    try:
        absolute = inspect.getabsfile(module)  # type: ignore[arg-type]
        real = os.path.realpath(absolute)
    except Exception:  # noqa: BLE001 - left to the lookup, as before (a test's own odd module)
        return
    inspect._filesbymodname[name] = file  # type: ignore[attr-defined]
    inspect.modulesbyfile[absolute] = inspect.modulesbyfile[real] = name


def _warm_up_jsonschema() -> None:
    """Tests that check answers against the OpenAPI document's schemas (the schema-oracle
    baseline's, and many written by models) import jsonschema: ~40 ms of CPU in each test
    process otherwise. One validation with a reference, formats and an error builds what the
    first one in a process builds (validator classes, reference resolution, error ranking)."""
    try:
        import jsonschema
    except ImportError:
        return
    schema = {"$ref": "#/components/schemas/Item", "components": {"schemas": {"Item": {
        "type": "object", "required": ["id", "email"],
        "properties": {"id": {"type": "integer"}, "email": {"type": "string", "format": "email"},
                       "at": {"type": "string", "format": "date-time"},
                       "tags": {"type": "array", "items": {"type": "string"}}}}}}}
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    jsonschema.exceptions.best_match(validator.iter_errors(
        {"id": "1", "email": "ann@example.com", "at": "2024-01-01T00:00:00Z", "tags": [1]}))


def _warm_up_schemathesis() -> None:
    """Imports Schemathesis and fills its and Hypothesis's caches here, once, not in every child
    (see schemathesis_warm_up)."""
    from restbench.execution import schemathesis_warm_up

    schemathesis_warm_up.warm_up()


# ----- the test process (pid 1 of the execution's pid namespace) -----


def _limit_resources(timeout_s: float, address_space: int | None = None) -> None:
    """Limits that bind: the process has no capability left to raise them (not even as root
    outside, since it is mapped to an unprivileged user of its own user namespace)."""
    cpu = int(timeout_s) + 2
    for limit, value in ((resource.RLIMIT_CPU, (cpu, cpu + 1)),
                         (resource.RLIMIT_AS, (address_space or MEMORY_LIMIT_BYTES,) * 2),
                         (resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT_BYTES,) * 2),
                         (resource.RLIMIT_NPROC, (PROCESS_LIMIT,) * 2),
                         (resource.RLIMIT_NOFILE, (OPEN_FILES_LIMIT,) * 2),
                         (resource.RLIMIT_CORE, (0, 0))):
        resource.setrlimit(limit, value)


@dataclass
class _Execution:
    """What a test process runs, once its request has come."""

    request: dict[str, Any]
    test_name: str
    workdir: str
    environment: dict[str, str]
    output: int
    report: int
    runner: Runner | None


class _ExecutionArrived(BaseException):
    """Raised in a test process once its test file is in place. It unwinds the worker's loop
    (the frames the process inherited, closing its copies of the worker's sockets on the way) up
    to `main`, which runs the test: in the session the worker configured (see
    execution.preconfigured) or, without the sandbox, in a fresh one."""

    def __init__(self, execution: _Execution) -> None:
        super().__init__()
        self.execution = execution


def _test_process(feed: socket.socket, view: SandboxView | None, mount_point: str,
                  output: int, report: int) -> None:
    """Builds the sandbox, then waits for the execution it is for (prepared ahead, it costs
    the execution nothing but the test itself) and raises `_ExecutionArrived`. Returns when the
    worker closes without using it."""
    os.setsid()
    if view is not None:
        sandbox.build_root(view, mount_point)
        socket.sethostname("sandbox")
        sandbox.become_sandbox_user()
    feed.send(b"ready")
    data, fds, _, _ = socket.recv_fds(feed, PACKET_LIMIT, CODE_FILES)
    feed.close()
    if not data:
        return  # not used: the worker is closing
    request = json.loads(data)
    files = [os.pread(fd, CODE_LIMIT_BYTES, 0) for fd in fds]
    for fd in fds:
        os.close(fd)
    code, pyc = (files + [b"", b""])[:2]
    del files
    test_name = request["test_name"]
    if view is not None:
        workdir = sandbox.SCRATCH
        base_url = f"http://localhost:{sandbox.CANONICAL_PORT}"
        environment = {"HOME": workdir, "TMPDIR": "/tmp", "USER": sandbox.SANDBOX_USER}
    else:
        from restbench.execution.unisolated import redirect_canonical_port

        workdir = request["workdir"]
        os.chdir(workdir)
        Path(workdir, "pytest.ini").write_bytes(PYTEST_INI)
        redirect_canonical_port(sandbox.CANONICAL_PORT, int(request["redirect_port"]))
        base_url = f"http://127.0.0.1:{request['redirect_port']}"
        environment = {"HOME": workdir, "TMPDIR": workdir}
    Path(workdir, test_name).write_bytes(code)
    if pyc:
        rewritten.place_pyc(workdir, test_name, pyc)
    del code, pyc
    runner = tool_runner(request.get("runner", PYTEST))
    _limit_resources(float(request["timeout_s"]),
                     runner.address_space_bytes if runner is not None else None)
    raise _ExecutionArrived(_Execution(request, test_name, workdir,
                                       {**environment, "BASE_URL": base_url}, output, report,
                                       runner))


def _enter(execution: _Execution, keep: set[int]) -> None:
    """The test process's last steps before its test: the output on stdout and stderr, nothing
    on stdin, every other file descriptor closed but `keep`, the clean environment. A tool
    runner's command runs here, to its end."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(execution.output, 1)
    os.dup2(execution.output, 2)
    _close_all_but({execution.output, execution.report, *keep})
    os.environ.clear()
    os.environ.update(execution.request["env"])
    os.environ.update(execution.environment)
    if execution.runner is not None:  # a tool (node, newman): it runs as this process's child
        _write_report(execution.report, run_tool(execution.runner, execution.request["command"],
                                                 execution.workdir,
                                                 execution.request["nonce"]))
        os._exit(0)


def _close_all_but(keep: set[int]) -> None:
    """Closes file descriptors 3 and up but `keep` (also any above the lowered limit)."""
    low = 3
    for fd in sorted(fd for fd in keep if fd >= low):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 65536)


def _run_pytest_afresh(execution: _Execution) -> None:
    """Without the sandbox each execution has its own folder, so pytest is configured here."""
    collector = ReportCollector()
    try:
        exit_code = int(pytest.main([execution.test_name, "--rootdir", execution.workdir, "-c",
                                     "pytest.ini", *PYTEST_ARGS],
                                    plugins=[collector, TestModuleFiles()]))
    except BaseException as exc:  # noqa: BLE001 - the test broke pytest itself
        _report_crash(execution, exc)
        return
    _report_results(execution, exit_code, collector)


def _report_results(execution: _Execution, exit_code: int, collector: ReportCollector) -> None:
    _write_report(execution.report, {"nonce": execution.request["nonce"], "exit_code": exit_code,
                                     "tests": [t.__dict__ for t in collector.tests],
                                     "collect_errors": collector.collect_errors})


def _report_crash(execution: _Execution, exc: BaseException) -> None:
    _write_report(execution.report, {"nonce": execution.request["nonce"],
                                     "crashed": f"{type(exc).__name__}: {exc}"[:500]})


def _write_report(fd: int, payload: dict[str, Any]) -> None:
    """Replaces whatever the test wrote into the report file: it may misreport itself through
    its own plugins, but the last word on the file is the harness code's."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(payload).encode(), 0)


def _listen_on_canonical_port() -> list[socket.socket]:
    listeners = []
    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind((host, sandbox.CANONICAL_PORT))
            sock.listen(64)
        except OSError:
            sock.close()
            if family == socket.AF_INET:
                raise
            continue  # no IPv6 on this machine
        listeners.append(sock)
    return listeners


def _settle(link: socket.socket, feed: socket.socket, view: SandboxView | None,
            mount_point: str, output: int, report: int, outside_ids: tuple[int, int]) -> None:
    """The test process's start, in the namespaces it was forked into (pid 1 of its own pid
    namespace): the sandbox user mapped, loopback up, the canonical port opened and its
    listeners handed to the worker; then it waits for its execution (see `_test_process`)."""
    from restbench.execution import namespaces

    namespaces.die_with_parent(signal.SIGKILL)
    listeners: list[socket.socket] = []
    if view is not None:
        def ask_parent_to_map() -> None:
            link.send(json.dumps({"map": True}).encode())
            if link.recv(16) != b"mapped":
                raise OSError("the worker did not map the sandbox user")

        sandbox.settle_namespaces(*outside_ids, ask_parent_to_map)
        listeners = _listen_on_canonical_port()
    socket.send_fds(link, [json.dumps({"listening": True}).encode()],
                    [s.fileno() for s in listeners])
    for sock in listeners:
        sock.close()
    link.close()
    try:
        _test_process(feed, view, mount_point, output, report)
    except _ExecutionArrived:
        raise
    except BaseException as exc:  # noqa: BLE001 - any failure is the execution's error
        with contextlib.suppress(OSError):
            feed.send(json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode())
            _write_report(report, {"sandbox_error": f"{type(exc).__name__}: {exc}"})


# ----- the worker -----


class SandboxFailed(Exception):
    """A sandbox could not be prepared."""


class _Sandbox:
    """One sandbox, prepared before its execution is known: its test process, forked into new
    namespaces and waiting for the code, the canonical port's listeners and the two memory
    files."""

    def __init__(self, view: SandboxView | None, mount_point: str) -> None:
        from restbench.execution import namespaces

        self.output = os.memfd_create("output")
        self.report = os.memfd_create("report")
        self.link, child_link = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.feed, child_feed = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        outside_ids = os.geteuid(), os.getegid()
        try:
            self.test_pid = namespaces.fork_into(namespaces.SANDBOX_NAMESPACES) \
                if view is not None else os.fork()
        except OSError:
            for fd in (self.output, self.report):
                os.close(fd)
            for sock in (self.link, child_link, self.feed, child_feed):
                sock.close()
            raise
        if self.test_pid == 0:
            try:
                process_names.name_this_process(process_names.TEST)
                self.link.close()
                self.feed.close()
                _settle(child_link, child_feed, view, mount_point, self.output, self.report,
                        outside_ids)
            except _ExecutionArrived:
                raise  # the test process, its execution come
            except BaseException as exc:  # noqa: BLE001 - reported to the worker, never raised
                with contextlib.suppress(OSError):
                    child_link.send(json.dumps({"error": f"{type(exc).__name__}: {exc}"})
                                    .encode())
            os._exit(0)
        child_link.close()
        child_feed.close()
        self.pidfd = os.pidfd_open(self.test_pid)
        self.test_reaped = False
        self.listeners: list[int] = []
        try:
            self._await_ready(time.monotonic() + PREPARE_TIMEOUT_S)
        except BaseException:
            self.discard()
            raise

    def _await_ready(self, deadline: float) -> None:
        message = self._next_message(deadline)
        if message is not None and "map" in message[0]:
            sandbox.map_to_nobody(self.test_pid)
            self.link.send(b"mapped")
            message = self._next_message(deadline)
        if message is None or "error" in message[0]:
            raise SandboxFailed(message[0]["error"] if message else "the sandbox did not start")
        self.listeners = message[1]
        ready, _, _ = select.select([self.feed], [], [], max(0.0, deadline - time.monotonic()))
        answer = self.feed.recv(PACKET_LIMIT) if ready else b""
        if answer != b"ready":
            error = json.loads(answer).get("error") if answer.startswith(b"{") else None
            raise SandboxFailed(error or "the sandbox's test process did not get ready")

    def _next_message(self, deadline: float) -> tuple[dict[str, Any], list[int]] | None:
        """The test process's next message while it starts, or None once it has exited or time
        is up."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([self.link, self.pidfd], [], [], remaining)
            if self.link in ready:
                data, fds, _, _ = socket.recv_fds(self.link, PACKET_LIMIT, 4)
                if not data:
                    return None
                return json.loads(data), fds
            if self.pidfd in ready:
                # Exited: a message it sent just before is still readable.
                ready, _, _ = select.select([self.link], [], [], 0)
                if not ready:
                    return None

    def _await_end(self, deadline: float) -> dict[str, Any] | None:
        """How the test process ended, or None if it still runs when time is up."""
        ready, _, _ = select.select([self.pidfd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            return None
        _, status = os.waitpid(self.test_pid, 0)
        self.test_reaped = True
        if os.WIFSIGNALED(status):
            return {"signal": os.WTERMSIG(status)}
        return {"code": os.waitstatus_to_exitcode(status)}

    def run(self, request: dict[str, Any], code_fds: list[int],
            channel: socket.socket) -> dict[str, Any]:
        """Hands the execution to the waiting test process and waits for it to end."""
        started = time.perf_counter()
        deadline = time.monotonic() + float(request["timeout_s"])
        try:
            socket.send_fds(self.feed, [json.dumps(request).encode()], code_fds)
            socket.send_fds(channel, [json.dumps({"event": "started", "nonce":
                                                  request["nonce"]}).encode()],
                            [self.output, self.report, *self.listeners])
            ended = self._await_end(deadline)
            return {"event": "finished", "nonce": request["nonce"],
                    "timed_out": ended is None, "duration_s": time.perf_counter() - started,
                    "status": ended}
        finally:
            self.discard()

    def discard(self) -> None:
        # The test process's pid is only safe to signal while nothing has reaped it.
        if not self.test_reaped:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.test_pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.test_pid, 0)
            self.test_reaped = True
        for fd in (self.output, self.report, self.pidfd, *self.listeners):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.listeners = []
        self.link.close()
        self.feed.close()


@dataclass
class _Served:
    """The channel of the worker this process became (set in a forked worker)."""

    channel: socket.socket | None = None


def _fork_workers(control: socket.socket, view: SandboxView | None, mount_point: str,
                  served: _Served) -> None:
    """The template's loop: forks a worker for each request on `control`. Returns when the
    harness is gone, in the template and in each worker (see `_serve`); in a test process,
    raises `_ExecutionArrived`."""
    control.send(json.dumps({"ready": True}).encode())
    while True:
        ready, _, _ = select.select([control], [], [], REAP_EVERY_S)
        reap_children()
        if not ready:
            continue
        try:
            data, fds, _, _ = socket.recv_fds(control, PACKET_LIMIT, 2)
        except ConnectionResetError:
            data, fds = b"", []
        if not data:  # the harness is gone or done, and has closed its workers' channels
            reap_children(within_s=END_REAP_S)
            return
        if len(fds) != 2:
            for fd in fds:
                os.close(fd)
            control.send(json.dumps({"error": "a fork request needs two descriptors"}).encode())
            continue
        channel_fd, log_fd = fds
        pid = os.fork()
        if pid == 0:
            control.close()
            os.setsid()  # its own process group, which the harness kills as one
            os.dup2(log_fd, 2)
            os.close(log_fd)
            process_names.name_this_process(process_names.WORKER)
            served.channel = socket.socket(fileno=channel_fd)
            _serve(served.channel, view, mount_point)
            return
        os.close(channel_fd)
        os.close(log_fd)
        # Taken before anything reaps the worker, so the pid cannot belong to another process.
        pidfd = os.pidfd_open(pid)
        try:
            socket.send_fds(control, [json.dumps({"pid": pid}).encode()], [pidfd])
        finally:
            os.close(pidfd)


def _serve(channel: socket.socket, view: SandboxView | None, mount_point: str) -> None:
    """A worker's loop: one execution per request, each in a sandbox prepared ahead. Returns
    when the harness is gone. In a test process forked inside, raises `_ExecutionArrived`."""
    try:
        prepared: _Sandbox | None = _Sandbox(view, mount_point)
    except (SandboxFailed, OSError) as exc:
        channel.send(json.dumps({"ready": False, "error": str(exc)}).encode())
        return
    channel.send(json.dumps({"ready": True}).encode())
    while True:
        try:
            data, code_fds, _, _ = socket.recv_fds(channel, PACKET_LIMIT, CODE_FILES)
        except ConnectionResetError:
            data = b""
        if not data:
            if prepared is not None:
                prepared.discard()
            return  # the harness is gone (done, interrupted or killed)
        request = json.loads(data)
        try:
            if prepared is None:
                prepared = _Sandbox(view, mount_point)
            answer = prepared.run(request, code_fds, channel)
        except (SandboxFailed, OSError) as exc:
            answer = {"event": "finished", "nonce": request["nonce"], "timed_out": False,
                      "duration_s": 0.0, "status": None, "error": str(exc)}
        finally:
            for fd in code_fds:
                os.close(fd)
        prepared = None
        try:
            channel.send(json.dumps(answer).encode())
        except (BrokenPipeError, ConnectionResetError):
            return
        try:
            prepared = _Sandbox(view, mount_point)  # while the harness reads the results
        except (SandboxFailed, OSError):
            prepared = None  # tried again when the next request comes


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    process_names.name_this_process(process_names.WORKER_TEMPLATE)
    control = socket.socket(fileno=int(sys.argv[1]))
    mount_point = sys.argv[2]
    isolated = sys.argv[3] == "1"
    schemathesis = sys.argv[4] == "schemathesis"
    here = os.getcwd()
    sys.path[:] = [entry for entry in sys.path if entry and entry != here]
    view = SandboxView.for_this_interpreter() if isolated else None
    _warm_up(schemathesis)
    _map_module_files()
    gc.freeze()  # forked children then skip the warm objects when they collect

    served = _Served()

    def serve() -> _Execution | None:
        try:
            _fork_workers(control, view, mount_point, served)
        except _ExecutionArrived as arrived:
            assert served.channel is not None  # a test process, forked by a worker
            served.channel.close()  # its copy of the worker's channel goes first
            return arrived.execution
        return None

    if view is None:
        execution = serve()
        if execution is not None:
            _enter(execution, set())
            _run_pytest_afresh(execution)
            os._exit(0)
        return
    collector = ReportCollector()
    session: PreconfiguredPytest[_Execution] = PreconfiguredPytest(sandbox.SCRATCH, PYTEST_ARGS,
                                                                   [collector, TestModuleFiles()])
    try:
        exit_code = session.run(serve, _enter)
    except BaseException as exc:  # the test broke pytest itself, or the worker failed
        if session.started is None:
            raise
        _report_crash(session.started, exc)
        os._exit(0)
    if session.started is None:  # still the worker: pytest stopped before the hook
        sys.stderr.write(f"pytest could not be configured (exit code {exit_code})\n")
        return
    _report_results(session.started, exit_code, collector)
    os._exit(0)


if __name__ == "__main__":
    main()
