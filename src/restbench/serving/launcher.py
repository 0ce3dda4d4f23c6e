"""The service launcher: a pre-warmed process that forks one child per service implementation.

Run as `python -m restbench.serving.launcher [--postgres] [FOLDER...]` (the folders, in /dev/shm,
are removed when it exits). It imports the heavy service dependencies once (FastAPI, SQLAlchemy,
uvicorn, and with --postgres the PostgreSQL driver), then answers JSON lines on stdin, each
request with an "id" that its answer repeats (answers come in the order the work ends: starts
overlap, a re-import start takes its child 50-100 ms):

    {"op": "start", "source": DIR, "database_url": URL, "token": T, "log": FILE,
     "control_socket": PATH, "handoff_socket": PATH[, "original": SERVICE_DIR,
     "changed": [FILE], "warm_up": BOOL, "warm_up_database": URL, "database_seeded": BOOL,
     "reach_edits": [[ID, FILE, TEXT], ...]]}
        -> {"ok": true, "pid": P, "port": N, "switch": HOW, "cpu_s": S, "warm_template": NAME}
           | {"ok": false, "error": "..."}
    {"op": "stop", "pid": P} -> {"ok": true}
    {"op": "load", "original": SERVICE_DIR, "warm_up": BOOL, "warm_up_database": URL,
     "reach_edits": [[ID, FILE, TEXT], ...]}
        -> {"ok": BOOL, "warm_template": NAME}  (the original imported ahead of its first start)

With "original" (the service's own folder) and "changed" (the files of DIR that differ from it),
the launcher imports the original app once per service and each child only applies the edit
(`serving.originals`; HOW says which way: warm app, patch, reimport or full); without, each
child imports the app from DIR. Each child binds a free loopback port (the service), a Unix socket
for the harness's control routes and one on which the harness hands it a sandbox's listening
sockets (it then serves the service on them too, until told to stop); it reports the port once
uvicorn serves on them, so there is no race and no health check to wait for. Children die with
the launcher (PR_SET_PDEATHSIG), and the launcher stops them all when its stdin closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import gc
import io
import json
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import time
import tokenize
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from restbench import process_names
from restbench.errors import RestbenchError
from restbench.execution.limits import SERVER_FILE_SIZE_LIMIT_BYTES, limit_file_size, limit_memory
from restbench.execution.namespaces import die_with_parent
from restbench.reaping import reap_children
from restbench.serving import (
    inline_sync,
    memory_folders,
    originals,
    reach,
    server_limits,
    shared_field_adapters,
)

PRELOAD = ("fastapi", "fastapi.openapi.utils", "fastapi.security", "pydantic", "pydantic.v1",
           "sqlalchemy", "sqlalchemy.orm", "sqlalchemy.ext.hybrid", "email.utils",
           "sqlalchemy.dialects.sqlite", "jwt", "uvicorn", "uvicorn.config", "uvicorn.server",
           "uvicorn.protocols.http.httptools_impl", "uvicorn.lifespan.on", "httptools",
           "restbench.serving.bounded_http", "restbench.serving.control",
           "restbench.execution.channel",  # the servers' hand-off channel to the harness
           "uvicorn.loops.uvloop", "uvloop",
           "fastapi.telemetry._runtime",  # imported by FastAPI's lifespan
           # anyio's asyncio backend (cancel scopes, task groups): imported on the first request
           # otherwise.
           "anyio._backends._asyncio")
# With --postgres: the driver and SQLAlchemy's dialect for it (absent: SQLite only). Left out
# otherwise: ~70 ms of CPU before the first server, and 11 MB that every fork would copy the
# page tables of.
PRELOAD_POSTGRES = ("psycopg", "sqlalchemy.dialects.postgresql",
                    "sqlalchemy.dialects.postgresql.psycopg")
POSTGRES_FLAG = "--postgres"
# uvloop's event loop and httptools's parser (both C), not asyncio's loop and h11 (pure Python):
# the default run used ~9% less CPU in all, every answer the same (tests/serving/
# test_server_protocol.py compares the bytes). Named, not "auto": auto probes for them (and
# websockets) in every child, where a failed import scans all of sys.path. The protocol is
# httptools's with h11's bound on a request's head (serving/bounded_http.py).
SERVER_LOOP = "uvloop"
SERVER_HTTP = "restbench.serving.bounded_http:BoundedHttpToolsProtocol"
# set in `main` (serving.server_limits)
START_TIMEOUT_S = server_limits.DEFAULT_START_S
SERVER_MEMORY_MB = server_limits.DEFAULT_MEMORY_MB
STACK_SIGNAL = signal.SIGUSR1  # a start out of time: its stack to its log, then SIGKILL
STACK_WAIT_S = 0.3
CLEAN_UP_REAP_S = 5.0  # how long an ending launcher waits for its killed servers to exit
SERVER_LOG_LEVEL = "warning"

_originals: dict[str, originals.Original] = {}
_unloadable: set[str] = set()
# Originals whose import did not end within START_TIMEOUT_S (a wait at import time): the
# reason; their starts fail at once, where each child would wait that long again.
_hung: dict[str, str] = {}
_warm_up_folders: list[Path] = []
_reach_plans: dict[str, reach.ReachPlan] = {}  # by original root, made in `_plan_reach`


def _preload(postgres: bool) -> None:
    import importlib

    for name in PRELOAD + (PRELOAD_POSTGRES if postgres else ()):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    inline_sync.install()
    shared_field_adapters.install()
    _warm_up_tokenize()
    _configure_server_logging()


def _configure_server_logging() -> None:
    """uvicorn's logging set-up (a `dictConfig` of its loggers, their levels), made once here:
    the servers forked from here inherit it and skip it (`log_config=None, log_level=None`), which
    cost ~3 ms of CPU and ~350 copy-on-write faults in each server's start."""
    import uvicorn

    uvicorn.Config(_no_app, log_level=SERVER_LOG_LEVEL, access_log=False)


async def _no_app(scope: Any, receive: Any, send: Any) -> None:
    raise RuntimeError("never served: the launcher's Config only sets up logging")


def _warm_up_tokenize() -> None:
    """FastAPI reads the source lines of an endpoint on its first request (for its error
    messages); `tokenize` compiles its regular expressions on first use. Done here, the servers
    inherit them compiled (~1-3 ms of CPU per server)."""
    source = ('a = 1\nb = "x" + \'y\' + f"{a}" + rb"z" + b\'w\' + r"v" + u"u"'
              ' + """d""" + \'\'\'d\'\'\' + f\'\'\'{a}\'\'\'\n')
    for _ in tokenize.generate_tokens(io.StringIO(source).readline):
        pass


def _serve_child(request: dict[str, Any], report_fd: int) -> None:
    """Runs in the forked child: import the implementation, bind, report the port, serve."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    process_names.name_this_process(process_names.SERVER)
    die_with_parent(signal.SIGKILL)
    limit_file_size(SERVER_FILE_SIZE_LIMIT_BYTES)
    held_mib = _data_mib()
    if held_mib >= SERVER_MEMORY_MB:  # its first allocation would fail, before it could say why
        _report_start_failure(report_fd, {
            "error": server_limits.over_the_memory_limit(held_mib, SERVER_MEMORY_MB)})
    limit_memory(SERVER_MEMORY_MB * 1024**2)
    log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    # A start that does not finish in time gets SIGUSR1 first: where it is stuck goes to its log
    # (the import, create_app or the app's startup), and from there into the start error.
    faulthandler.register(STACK_SIGNAL, file=sys.stderr, all_threads=False)
    sys.dont_write_bytecode = True
    switch = originals.FULL
    try:
        original = _originals.get(request.get("original", ""))
        if original is None:
            sys.path.insert(0, request["source"])
        else:
            switch = originals.activate(original, Path(request["source"]),
                                        list(request.get("changed", [])))
        reach_plan = _reach_plans.get(request.get("original", ""))
        recorder = reach.install(original, reach_plan) \
            if original is not None and reach_plan is not None and switch == originals.PATCH \
            and not request.get("changed") else None
        import uvicorn

        from restbench.serving.control import ControlledApp

        service_main = __import__("app.main", fromlist=["create_app", "reset"])
        app = originals.reusable_app(original, switch, request["database_url"],
                                     bool(request.get("database_seeded"))) \
            if original is not None else None
        if app is None:
            app = service_main.create_app(request["database_url"])
        else:
            switch = originals.WARM_APP
        controlled = ControlledApp(app, lambda: service_main.reset(app), request["token"],
                                   recorder)
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says TCP,
        # and without it every kept-alive response stalls ~40 ms on delayed ACKs.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", int(request.get("port", 0))))
        sock.listen(128)
        control = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        control.bind(request["control_socket"])
        os.chmod(request["control_socket"], 0o600)
        control.listen(16)
        handoff = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        handoff.bind(request["handoff_socket"])
        os.chmod(request["handoff_socket"], 0o600)
        handoff.listen(1)
    except BaseException as exc:  # noqa: BLE001 - any failure must reach the harness
        import traceback

        with contextlib.suppress(OSError):  # the log's device may be the one that is full
            traceback.print_exc()  # first: the harness reads the log as soon as the report comes
            sys.stderr.flush()
        report: dict[str, Any] = {"error": f"{type(exc).__name__}: {exc}" if str(exc)
                                  else type(exc).__name__}
        if isinstance(exc, MemoryError):
            report["error"] += f" ({server_limits.out_of_memory(SERVER_MEMORY_MB)})"
        if memory_folders.is_no_space(exc) or memory_folders.SQLITE_FULL_TEXT in str(exc):
            report["full"] = True  # the SQLite copy, or the service's own writes to it
        _report_start_failure(report_fd, report)
    port = sock.getsockname()[1]

    def report_started(ok: bool) -> None:
        """Once uvicorn serves (or gave up): the harness's next request needs no health check.
        The CPU time is the child's so far (its counters start at the fork): what the start cost
        without waiting for a core, for benchmarks on a busy machine."""
        answer = {"port": port, "switch": switch, "cpu_s": time.process_time()} if ok \
            else {"error": "the app's startup (its lifespan) failed"}
        os.write(report_fd, json.dumps(answer).encode())
        os.close(report_fd)

    config = uvicorn.Config(controlled, loop=SERVER_LOOP, http=SERVER_HTTP, ws="none",
                            lifespan="on", log_config=None, log_level=None, access_log=False)
    server = _handing_off_server_class()(config, controlled, handoff, report_started)
    try:
        server.run(sockets=[sock, control])
    except SystemExit:  # how uvicorn ends when the app's lifespan startup raised
        pass
    if not server.reported:
        report_started(False)
    os._exit(0)


def _handing_off_server_class() -> type:
    """Built in the server's child, where uvicorn is imported (the launcher preloads it)."""
    import uvicorn

    class HandingOffServer(uvicorn.Server):
        """uvicorn's server, also serving on listening sockets the harness hands over."""

        def __init__(self, config: Any, controlled: Any, handoff: socket.socket,
                     report_started: Callable[[bool], None]) -> None:
            super().__init__(config)
            self.controlled = controlled
            self.handoff = handoff
            self.report_started = report_started
            self.reported = False

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.controlled.reach is not None:
                self.controlled.reach.started()
            self.reported = True
            self.report_started(self.started and not self.should_exit)

        async def serve(self, sockets: list[socket.socket] | None = None) -> None:
            task = asyncio.ensure_future(self._take_handoffs())
            try:
                await super().serve(sockets=sockets)
            finally:
                task.cancel()

        def _protocol(self) -> asyncio.Protocol:
            return self.config.http_protocol_class(  # type: ignore[no-any-return]
                config=self.config, server_state=self.server_state,
                app_state=self.lifespan.state)

        async def _take_handoffs(self) -> None:
            from restbench.execution import channel

            loop = asyncio.get_running_loop()
            self.handoff.setblocking(False)
            connection, _ = await loop.sock_accept(self.handoff)
            connection.setblocking(False)
            attached: dict[str, list[asyncio.Server]] = {}
            while True:
                try:
                    message, fds = await channel.receive(connection)
                except channel.ChannelClosed:
                    return
                if "attach" in message:
                    servers = []
                    try:
                        for fd in fds:
                            servers.append(await loop.create_server(
                                self._protocol, sock=socket.socket(fileno=fd)))
                        reply = {"attached": message["attach"]}
                    except Exception as exc:  # noqa: BLE001 - the harness relays instead
                        for server in servers:
                            server.close()
                        reply = {"error": f"{type(exc).__name__}: {exc}"}
                    attached[message["attach"]] = servers
                    channel.send(connection, {**reply, "id": message.get("id")})
                elif "detach" in message:
                    for server in attached.pop(message["detach"], []):
                        server.close()
                elif "control" in message:
                    self._answer_control(connection, message)

        def _answer_control(self, connection: socket.socket, message: dict[str, Any]) -> None:
            """A control action asked over the channel; the answer travels in a memory file
            (the exchanges can outgrow a packet)."""
            from restbench.execution import channel

            try:
                answer = json.dumps(self.controlled.perform(str(message["control"]))).encode()
            except Exception as exc:  # noqa: BLE001 - the harness decides what a failure means
                import traceback

                traceback.print_exc()
                channel.send(connection, {"id": message.get("id"),
                                          "error": f"{type(exc).__name__}: {exc}"})
                return
            answer_file = os.memfd_create("answer")
            try:
                written = 0
                while written < len(answer):
                    written += os.write(answer_file, answer[written:])
                channel.send(connection, {"id": message.get("id")}, [answer_file])
            finally:
                os.close(answer_file)

    return HandingOffServer


def _stop(pid: int, wait: bool = True) -> None:
    """Kills a server at once: its database is a scratch file that nobody reads afterwards.
    Without `wait`, `reap_children` collects it later: its exit (~10-20 ms of a forked server's
    address space to tear down, longer on a busy machine) does not hold up the starts queued
    behind."""
    try:
        os.kill(pid, signal.SIGKILL)
        if wait:
            os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


class _OutOfTime(Exception):
    pass


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raises _OutOfTime in the code under way once `seconds` have passed (SIGALRM)."""
    def expire(_signum: int, _frame: object) -> None:
        raise _OutOfTime

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _load_original(request: dict[str, Any]) -> None:
    """Imports (and warms up) a service's original app once, before its first child forks."""
    root = request.get("original")
    if not root or root in _originals or root in _unloadable:
        return
    _unloadable.add(root)
    warm_up_database = request.get("warm_up_database")
    warm_up_in = _warm_up_folder() if request.get("warm_up") and not warm_up_database else None
    devnull = os.open(os.devnull, os.O_WRONLY)
    saved = os.dup(1), os.dup(2)
    os.dup2(devnull, 1)  # stdout is the protocol channel: the service's prints stay out
    os.dup2(devnull, 2)
    try:
        with _time_limit(START_TIMEOUT_S):
            _originals[root] = originals.load(Path(root), warm_up_in, warm_up_database)
        _unloadable.discard(root)
    except _OutOfTime:
        _hung[root] = (f"its app did not finish importing and warming up within "
                       f"{START_TIMEOUT_S:g} s (does app/main.py, or a module it imports, "
                       "wait for something at import time?)")
    except BaseException:  # noqa: BLE001, S110 - the child imports it itself, reports why
        pass
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (devnull, *saved):
            os.close(fd)
    if warm_up_in is not None and (root not in _originals or _originals[root].template is None):
        # Not kept (it is, while its seeded database is the template of the app's servers).
        shutil.rmtree(warm_up_in, ignore_errors=True)
        _warm_up_folders.remove(warm_up_in)
    gc.freeze()


def _plan_reach(original: originals.Original, request: dict[str, Any]) -> None:
    """Once per service, from the first request that brings its edits: which statements the
    original's servers mark (see serving.reach)."""
    root = request["original"]
    edits = request.get("reach_edits")
    if not edits or root in _reach_plans:
        return
    try:
        _reach_plans[root] = reach.plan(original, [tuple(edit) for edit in edits])
    except Exception as exc:  # noqa: BLE001 - without a plan every test runs on every mutant
        print(f"restbench launcher: no reach plan for {root}: {exc!r}", file=sys.stderr)
        _reach_plans[root] = reach.ReachPlan()
    gc.freeze()


@dataclass
class _Starting:
    """A server forked and not yet reported: its start report comes through `read_fd`."""

    request_id: object
    pid: int
    read_fd: int
    deadline: float
    original: originals.Original | None
    chunks: list[bytes] = field(default_factory=list)


def _begin_start(request: dict[str, Any]) -> _Starting:
    """Forks the server of `request`; its report is read as it comes (see `_serve`), so that
    other starts go on meanwhile (a re-import start takes 50-100 ms in the child)."""
    _load_original(request)
    original = _originals.get(request.get("original", ""))
    if original is not None:
        originals.prepare(original, list(request.get("changed", [])))
        _plan_reach(original, request)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            _serve_child(request, write_fd)
        finally:
            os._exit(1)
    os.close(write_fd)
    return _Starting(request.get("id"), pid, read_fd, time.monotonic() + START_TIMEOUT_S,
                     original)


def _report_start_failure(report_fd: int, report: dict[str, Any]) -> NoReturn:
    os.write(report_fd, json.dumps(report).encode())
    os.close(report_fd)
    os._exit(1)


def _data_mib() -> int:
    """This process's data (VmData), what RLIMIT_DATA bounds, in MiB."""
    with open("/proc/self/status", "rb") as status:
        for line in status:
            if line.startswith(b"VmData:"):
                return int(line.split()[1]) // 1024
    return 0


def _finish_start(starting: _Starting, timed_out: bool) -> dict[str, Any]:
    os.close(starting.read_fd)
    if timed_out:
        with contextlib.suppress(ProcessLookupError):
            os.kill(starting.pid, STACK_SIGNAL)
            time.sleep(STACK_WAIT_S)
        _stop(starting.pid)
        report: dict[str, Any] = {"error": f"not started within {START_TIMEOUT_S:g} s (its "
                                  "import, create_app or startup did not finish)"}
    else:
        try:
            report = json.loads(b"".join(starting.chunks) or b"{}") \
                or {"error": "exited before it started"}
        except json.JSONDecodeError:
            report = {"error": "sent an unreadable start report"}
    original = starting.original
    if "port" not in report:
        reap_children()
        return {"ok": False, "pid": starting.pid, "error": report.get("error", "failed to start"),
                "full": bool(report.get("full"))}
    return {"ok": True, "pid": starting.pid, "port": report["port"],
            "switch": report.get("switch", originals.FULL), "cpu_s": report.get("cpu_s", 0.0),
            "warm_template": original.template_database if original is not None else None}


def main() -> None:
    global START_TIMEOUT_S, SERVER_MEMORY_MB
    # the harness refused bad values already
    START_TIMEOUT_S = server_limits.start_timeout_s()
    SERVER_MEMORY_MB = server_limits.server_memory_mb()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The harness gone, its end of stdin closes; but a launcher stuck in a service's import
    # does not read it. SIGTERM then ends what it is doing, and it cleans up as on end of input.
    signal.signal(signal.SIGTERM, _end)
    die_with_parent(signal.SIGTERM)
    process_names.name_this_process(process_names.LAUNCHER)
    postgres = POSTGRES_FLAG in sys.argv[1:]
    folders = [argument for argument in sys.argv[1:] if argument != POSTGRES_FLAG]
    children: set[int] = set()
    try:
        _preload(postgres)
        gc.freeze()
        _serve(children)
    except (BrokenPipeError, SystemExit):  # the harness is gone: nobody to answer
        pass
    finally:
        # A killed harness both closes stdin and sends SIGTERM. When the end of input came
        # first, the SIGTERM could raise SystemExit here, before the clean-up could ignore it,
        # and the clean-up was skipped (its folders stayed in memory): then it runs again.
        try:
            _clean_up(children, folders)
        except SystemExit:
            _clean_up(children, folders)


_ending = False  # the clean-up has begun: a SIGTERM changes nothing any more


def _end(_signum: int, _frame: object) -> None:
    if not _ending:
        raise SystemExit


def _clean_up(children: set[int], folders: list[str]) -> None:
    """Stops the servers and removes the folders; doing it twice does no harm."""
    global _ending
    _ending = True
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for pid in children:
        _stop(pid)
    reap_children(within_s=CLEAN_UP_REAP_S)  # also those stopped without waiting, just before
    _remove_scratch(folders)
    for folder in _warm_up_folders:
        shutil.rmtree(folder, ignore_errors=True)


def _remove_scratch(folders: list[str]) -> None:
    """Removes the pool's in-memory folders (databases, implementation copies) once the harness
    is gone, also when it was killed: tmpfs is memory, and nothing else would free it."""
    try:
        root = memory_folders.memory_root()
    except RestbenchError:  # the chosen folder itself is gone, and ours with it
        return
    for folder in folders:
        path = Path(folder)
        if root is not None and path.parent == Path(root) and path.name.startswith("restbench-"):
            shutil.rmtree(path, ignore_errors=True)


def _warm_up_folder() -> Path:
    """Held until this launcher exits (its descriptor stays open): if it is killed, the next
    pool frees the folder (see serving.memory_folders). In memory where the machine has a tmpfs:
    no fsync cost. Listed for the clean-up as it is made: a SIGTERM (the harness killed) waits
    until then, so that no folder is made that the clean-up does not know."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        root = memory_folders.memory_root()
        if root is None:
            folder = Path(tempfile.mkdtemp(prefix="restbench-warm-"))
        else:
            folder, _held = memory_folders.make_held("restbench-warm-", root)
        _warm_up_folders.append(folder)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    return folder


def _answer(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(payload) + "\n")
    sys.stdout.flush()


def _serve(children: set[int]) -> None:
    """Answers the harness's requests (one JSON line each, answered with its "id") until its
    end of the pipe closes. Starts overlap: a forked server's report is read as it comes."""
    _answer({"ready": True})
    starting: dict[int, _Starting] = {}
    unread = b""
    while True:
        timeout = max(0.0, min(s.deadline for s in starting.values()) - time.monotonic()) \
            if starting else None
        readable, _, _ = select.select([0, *starting], [], [], timeout)
        for fd in readable:
            if fd != 0:
                chunk = os.read(fd, 65536)
                if chunk:
                    starting[fd].chunks.append(chunk)
                    continue
                _report_start(starting.pop(fd), False, children)
                continue
            chunk = os.read(0, 65536)
            if not chunk:
                return  # the harness is done (or gone)
            unread += chunk
            while b"\n" in unread:
                line, _, unread = unread.partition(b"\n")
                if line.strip():
                    request = json.loads(line)
                    if request["op"] == "start":
                        _load_original(request)
                        if request.get("original") in _hung:
                            _answer({"id": request.get("id"), "ok": False,
                                     "error": _hung[request["original"]]})
                            continue
                        started = _begin_start(request)
                        children.add(started.pid)
                        starting[started.read_fd] = started
                    else:
                        _answer({"id": request.get("id"), **_perform(request, children)})
        for fd, started in list(starting.items()):
            if time.monotonic() >= started.deadline:
                _report_start(starting.pop(fd), True, children)
        reap_children()


def _report_start(starting: _Starting, timed_out: bool, children: set[int]) -> None:
    answer = _finish_start(starting, timed_out)
    if not answer["ok"]:
        children.discard(starting.pid)
    _answer({"id": starting.request_id, **answer})


def _perform(request: dict[str, Any], children: set[int]) -> dict[str, Any]:
    if request["op"] == "load":
        _load_original(request)
        original = _originals.get(request.get("original", ""))
        if original is not None:
            _plan_reach(original, request)
        return {"ok": original is not None,
                "warm_template": original.template_database if original else None}
    if request["op"] == "stop":
        _stop(request["pid"], wait=False)
        children.discard(request["pid"])
        return {"ok": True}
    return {"ok": False, "error": f"unknown op {request['op']!r}"}


if __name__ == "__main__":
    main()
