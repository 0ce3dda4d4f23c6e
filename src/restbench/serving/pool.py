"""Harness-side control of running service implementations.

`ServerPool` owns one launcher process and the servers forked from it. A server is started once per
implementation (and replica) and kept alive across executions; before each execution the harness
resets it to the seed state through the hidden control route. Every server gets a database of its
own (see `serving.databases`), created when it starts and dropped when it stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import secrets
import shutil
import signal
import socket
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import httpx

from restbench.benchmark.models import Database, Service
from restbench.errors import MutationError, ServiceStartError
from restbench.execution import channel
from restbench.execution.environment import clean_environment
from restbench.mutation import Implementation, implementations_of, materialize
from restbench.mutation.apply import ORIGINAL, edited_text
from restbench.mutation.start_errors import start_failure
from restbench.scratch import owned_folder, short_temporary_directory
from restbench.serving import node_reach, server_limits
from restbench.serving.control import CONTROL_HEADER, CONTROL_PREFIX
from restbench.serving.databases import DatabaseChoice, open_databases, require_support
from restbench.serving.external import ExternalServer, build, start_external
from restbench.serving.logs import log_tail
from restbench.serving.memory_folders import (
    folder_full,
    full_is_one_line,
    make_held,
    memory_root,
    passed_on,
    release,
    sweep_orphans,
)
from restbench.serving.node_reach import NodePlan
from restbench.serving.postgres import sweep_left_servers

log = logging.getLogger(__name__)
HANDOFF_TIMEOUT_S = 10.0
CONTROL_TIMEOUT_S = 30.0  # a reset or a read of the exchanges; a server past it is replaced


class ControlFailed(Exception):
    """A server did not perform a control action (it died, hung or failed)."""


@dataclass
class RunningServer:
    implementation: Implementation
    replica: int
    pid: int
    port: int
    log_file: Path
    control_socket: Path
    token: str = field(repr=False)
    database_url: str = field(default="", repr=False)
    switch: str = ""  # how the launcher made this implementation (see serving.originals)
    start_cpu_s: float = 0.0  # CPU time the server process used to start
    # Nothing has run on it since `create_app` left the seed state, the state a reset gives
    # (docs/service-contract.md): its first execution needs no reset (LocalBackend).
    seeded_at_start: bool = False
    handoff: socket.socket | None = field(default=None, repr=False)
    _handoff_lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)
    _asked: int = field(default=0, repr=False)
    _client: httpx.AsyncClient | None = field(default=None, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def attach(self, listeners: list[socket.socket]) -> str:
        """Hands a sandbox's listening sockets to this server, which serves the service on
        them until `detach`: the test's connections reach it with no relay in between."""
        if self.handoff is None:
            raise ServiceStartError(f"{self.implementation.id}: no hand-off channel")
        handle = secrets.token_hex(8)
        reply, _ = await self._ask({"attach": handle}, listeners, HANDOFF_TIMEOUT_S)
        if "attached" not in reply:
            raise ServiceStartError(f"{self.implementation.id}: {reply.get('error')}")
        return handle

    async def detach(self, handle: str) -> None:
        if self.handoff is not None:
            with contextlib.suppress(OSError):
                channel.send(self.handoff, {"detach": handle})

    async def _ask(self, message: dict[str, Any], listeners: list[socket.socket] | None = None,
                   timeout_s: float = CONTROL_TIMEOUT_S) -> tuple[dict[str, Any], list[int]]:
        """One request over the hand-off channel and its answer. Ids pair them: an answer that
        comes after its request timed out is dropped, not taken for the next one's. Once sent,
        `listeners` are closed here (the server holds its own copies); unsent, they stay open
        (the caller can still relay them)."""
        assert self.handoff is not None
        async with self._handoff_lock:
            self._asked += 1
            channel.send(self.handoff, {**message, "id": self._asked},
                         [sock.fileno() for sock in listeners or []])
            for sock in listeners or []:
                sock.close()
            async with asyncio.timeout(timeout_s):
                while True:
                    reply, fds = await channel.receive(self.handoff)
                    if reply.get("id") == self._asked:
                        return reply, fds
                    channel.close_all(fds)

    async def _control(self, action: str) -> Any:
        """Performs a control action (see serving.control): over the hand-off channel, else
        over HTTP on the control socket. Raises ControlFailed."""
        if self.handoff is None:
            return await self._control_over_http(action)
        try:
            reply, fds = await self._ask({"control": action})
        except (TimeoutError, channel.ChannelClosed, OSError) as exc:
            raise ControlFailed(f"{action}: {exc!r}") from None
        try:
            if "error" in reply or len(fds) != 1:
                raise ControlFailed(f"{action}: {reply.get('error', 'no answer')}")
            return json.loads(os.pread(fds[0], os.fstat(fds[0]).st_size, 0))
        finally:
            channel.close_all(fds)

    async def _control_over_http(self, action: str) -> Any:
        if self._client is None:
            # verify=False: plain HTTP over a Unix socket; loading the CA bundle for nothing
            # cost 100-250 ms.
            self._client = httpx.AsyncClient(
                timeout=CONTROL_TIMEOUT_S, trust_env=False, base_url="http://control",
                transport=httpx.AsyncHTTPTransport(uds=str(self.control_socket), verify=False),
                headers={CONTROL_HEADER.decode(): self.token})
        try:
            response = await self._client.request("POST" if action == "reset" else "GET",
                                                   f"{CONTROL_PREFIX}{action}")
            response.raise_for_status()
            return response.json()
        except httpx.HTTPError as exc:
            raise ControlFailed(f"{action}: {exc!r}") from None

    async def reset(self) -> None:
        """Back to the seed state; also forgets the recorded HTTP exchanges."""
        try:
            await self._control("reset")
        except ControlFailed as exc:
            raise ServiceStartError(f"{self.implementation.id}: reset failed: {exc}; "
                                    f"server log: {self.log_tail()}") from None

    async def exchanges(self) -> list[dict[str, Any]]:
        """The HTTP exchanges the service saw since the last reset."""
        try:
            return list(await self._control("exchanges"))
        except ControlFailed:
            return []

    async def unreached(self) -> list[str]:
        """On a server of the original started with `mark_reach`: the mutants and benign
        variants whose edited statements the requests since the last reset never ran (see
        serving.reach); else, or if the server cannot say, none."""
        try:
            return [str(i) for i in await self._control("unreached")]
        except ControlFailed:
            return []

    async def busy_s(self) -> float:
        """Seconds the service spent answering requests since the last reset (benchmarks)."""
        return float((await self._control("busy"))["seconds"])

    async def close_control(self) -> None:
        if self._client is not None:
            await self._client.aclose()
        if self.handoff is not None:
            self.handoff.close()

    def log_tail(self, limit: int = 600) -> str:
        return log_tail(self.log_file, limit)


def _edits(service: Service) -> list[list[str]]:
    """(implementation id, file, edited text) of each mutant and benign variant whose edit
    applies: what the launcher plans the original's marks from. One that does not apply never
    starts; the caller reports it (a Ray node loads the service whole, broken edits too)."""
    edits = []
    for implementation in implementations_of(service).values():
        if implementation.edit is None:
            continue
        with contextlib.suppress(MutationError):
            edits.append([implementation.id, Path(implementation.edit.file).as_posix(),
                          edited_text(implementation)[1]])
    return edits


async def _connect_handoff(path: Path) -> socket.socket | None:
    """The server's hand-off channel, or None (executions then go through the relay)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    sock.setblocking(False)
    try:
        await asyncio.get_running_loop().sock_connect(sock, str(path))
    except OSError as exc:
        log.warning("no hand-off channel at %s: %s", path, exc)
        sock.close()
        return None
    return sock


def _in_user_terms(message: str, implementation: Implementation, copy: Path | None) -> str:
    """An external instance's start or build failure naming the user's folder, not the copy,
    and the edit it ran with."""
    if copy is not None:
        root = str(implementation.service.root)
        message = message.replace(str(copy.resolve()), root).replace(str(copy), root)
    if implementation.edit is not None:
        message += f" (with the edit of {implementation.kind} {implementation.id} applied)"
    return message


def first_in_launcher(services: Iterable[Service]) -> Service | None:
    """The first of `services` whose servers the launcher forks (a Python service; an external
    one runs its own command): the one `ServerPool.prepare` imports ahead."""
    return next((service for service in services if service.manifest is None), None)


class ServerPool:
    """Starts, resets and stops service implementations under `workdir`, on `database`
    (`sqlite`, `postgres` or a PostgreSQL URL).

    With `switch_mutants` (the default) the launcher imports each service's original app once and
    a server for a mutant or benign variant only applies its edit (see `serving.originals`);
    without, every server imports its implementation afresh (slower; for comparisons)."""

    def __init__(self, workdir: Path, database: DatabaseChoice | str = "sqlite", *,
                 switch_mutants: bool = True, mark_reach: bool = False) -> None:
        self.workdir = workdir
        self.switch_mutants = switch_mutants
        # Servers of an original report which mutants each test never reached (serving.reach).
        self.mark_reach = mark_reach and switch_mutants
        self._reach_sent: set[str] = set()
        self._node_plans: dict[str, NodePlan | None] = {}
        self.database = DatabaseChoice.parse(database)
        self._launcher_environment = {**passed_on(), **server_limits.passed_on()}  # checks both
        in_memory = memory_root()
        if in_memory is not None:  # what killed runs left in memory
            sweep_orphans(in_memory)
        sweep_left_servers()  # throwaway PostgreSQL servers' folders outside memory
        self._databases = open_databases(self.database)
        self._launcher: asyncio.subprocess.Process | None = None
        self._preparing: asyncio.Future[bool] | None = None
        self._lock = asyncio.Lock()  # one launcher start at a time
        self._reader: asyncio.Future[None] | None = None
        self._answers: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._request_ids = itertools.count()
        self._servers: list[RunningServer] = []
        self._external: list[ExternalServer] = []
        self._materialized: dict[tuple[str, str], Path] = {}
        self._building: dict[tuple[str, str], asyncio.Lock] = {}
        # Control sockets: a short path (Unix socket paths are limited to 108 bytes), in a
        # folder only this user can enter.
        self._sockets = owned_folder("restbench-ctl-", short_temporary_directory())
        # Implementation copies (and server logs) in memory where the machine has a tmpfs:
        # copying a service to a busy disk took tens of ms per implementation.
        self._sources, self._sources_held = make_held("restbench-src-", in_memory) \
            if in_memory is not None else (workdir, None)
        self._scratch_root = Path(in_memory) if in_memory is not None else workdir
        self._socket_numbers = itertools.count()
        # Names a server's database, data and log by: unique in the pool. Callers' replica
        # numbers are not (a live server for refine and an execution server could share one),
        # and a stopping server drops its database by name, a new one's if they were equal.
        self._instances = itertools.count()
        # PostgreSQL: per service, the database its original app was warmed up on, and once that
        # is seeded, its name as the template of the service's server databases
        self._warm_databases: dict[str, asyncio.Future[str]] = {}
        self._templates: dict[str, str] = {}

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def prepare(self, services: Iterable[Service]) -> asyncio.Future[bool]:
        """Starts the launcher now, in the background, and has it import the original app of the
        first of `services` that runs in it: that work (~0.8 s of CPU) then overlaps with what
        the caller opens next (the test workers) instead of delaying the first server. The
        future says whether that original is ready (false where nothing runs in the launcher
        or its import failed: its first server then reports why)."""
        first = first_in_launcher(services)
        if self._preparing is None:
            self._preparing = asyncio.ensure_future(self._prepare(first))
        return self._preparing

    async def _prepare(self, service: Service | None) -> bool:
        if service is None:
            return False
        if not self.switch_mutants:
            await self._ask({"op": "load"})  # starts the launcher; nothing to import ahead
            return False
        source = self._source_for(implementations_of(service)[ORIGINAL])
        warm_up = await self._warm_up_request(service, source)
        answer = await self._ask({"op": "load", "original": str(service.root.resolve()),
                                  **warm_up, **self._reach_request(service)})
        self._remember_template(service, answer, warm_up)
        return bool(answer["ok"])

    def _remember_template(self, service: Service, answer: dict[str, Any],
                           warm_up: dict[str, Any]) -> None:
        if answer.get("warm_template") and "warm_up_database" in warm_up:
            # The warm-up left its database seeded: the next servers' databases are copies.
            self._templates[service.name] = str(answer["warm_template"])

    async def _ensure_launcher(self) -> asyncio.subprocess.Process:
        async with self._lock:
            if self._launcher is None or self._launcher.returncode is not None:
                self._launcher = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "restbench.serving.launcher",
                    *self._launcher_options(), stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    env=clean_environment(**self._launcher_environment),
                    start_new_session=True)
                assert self._launcher.stdout is not None
                ready = await self._launcher.stdout.readline()
                if not ready:
                    raise ServiceStartError("the service launcher did not start")
                self._answers = {}  # the requests to this launcher that await their answer
                self._reader = asyncio.ensure_future(self._read_answers(self._launcher,
                                                                        self._answers))
            return self._launcher

    async def _read_answers(self, launcher: asyncio.subprocess.Process,
                            answers: dict[int, asyncio.Future[dict[str, Any]]]) -> None:
        """Hands each of the launcher's answers to the request with its id. A started server
        whose request was given up (its caller cancelled) is stopped."""
        assert launcher.stdout is not None
        try:
            while line := await launcher.stdout.readline():
                answer = json.loads(line)
                waiting = answers.pop(answer.pop("id", None), None)
                if waiting is not None and not waiting.done():
                    waiting.set_result(answer)
                elif answer.get("ok") and "port" in answer:
                    await self._send(launcher, {"op": "stop", "pid": answer["pid"]})
        except (ValueError, ServiceStartError):
            pass  # an unreadable line or a launcher gone: every request still waiting fails
        finally:
            for waiting in answers.values():
                if not waiting.done():
                    waiting.set_exception(ServiceStartError(
                        "the service launcher exited unexpectedly"))
            answers.clear()

    def _launcher_options(self) -> list[str]:
        # Imported here: the launcher process runs that module as __main__ and imports this one
        # (through the package), which must not import it a second time under its own name.
        from restbench.serving.launcher import POSTGRES_FLAG

        postgres = [POSTGRES_FLAG] if self.database.kind is Database.POSTGRESQL else []
        return postgres + self._memory_folders()

    def _memory_folders(self) -> list[str]:
        """Folders in memory that the launcher removes when it exits, even after a SIGKILL of
        this process (it exits when its stdin closes)."""
        folders = [getattr(self._databases, "memory_folder", None)]
        if self._sources != self.workdir:
            folders.append(self._sources)
        return [str(folder) for folder in folders if folder is not None]

    async def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        launcher = await self._ensure_launcher()
        answers = self._answers  # this launcher's: its reader fails them if it exits
        request_id = next(self._request_ids)
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        answers[request_id] = answer
        try:
            await self._send(launcher, {**request, "id": request_id})
            return await answer
        finally:
            answers.pop(request_id, None)

    @staticmethod
    async def _send(launcher: asyncio.subprocess.Process, request: dict[str, Any]) -> None:
        assert launcher.stdin is not None
        try:
            launcher.stdin.write((json.dumps(request) + "\n").encode())
            await launcher.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            raise ServiceStartError("the service launcher exited unexpectedly") from None

    def _source_for(self, implementation: Implementation) -> Path:
        key = (implementation.service.name, implementation.id)
        if key not in self._materialized:
            folder = self._sources / implementation.service.name / implementation.id
            with full_is_one_line(self._scratch_root):
                self._materialized[key] = materialize(implementation, folder)
        return self._materialized[key]

    async def _built_source_for(self, implementation: Implementation) -> Path:
        """An external service's copy, built (once per implementation, from the build cache
        where the same build was made before)."""
        key = (implementation.service.name, implementation.id)
        async with self._building.setdefault(key, asyncio.Lock()):
            if key not in self._materialized:
                folder = self._sources / implementation.service.name / implementation.id
                shutil.rmtree(folder, ignore_errors=True)
                with full_is_one_line(self._scratch_root):
                    materialize(implementation, folder)
                assert implementation.service.manifest is not None
                tree = folder / implementation.service.manifest.source.tree
                await build(implementation, tree, implementation.service.manifest)
                self._materialized[key] = folder
            return self._materialized[key]

    async def _start_external(self, implementation: Implementation) -> ExternalServer:
        manifest = implementation.service.manifest
        assert manifest is not None
        try:
            source = await self._built_source_for(implementation)
        except ServiceStartError as exc:
            copy = self._sources / implementation.service.name / implementation.id
            raise type(exc)(_in_user_terms(str(exc), implementation, copy)) from None
        instance = next(self._instances)
        database_url = "" if manifest.own_storage else await asyncio.to_thread(
            self._databases.create, source,
            f"{implementation.service.name}-{implementation.id}-{instance}")
        try:
            server = await start_external(implementation, instance, source, database_url,
                                          self._node_plan(implementation))
        except ServiceStartError as exc:
            if database_url:
                await asyncio.to_thread(self._databases.drop, database_url)
            raise ServiceStartError(_in_user_terms(str(exc), implementation, source)) from None
        except BaseException:
            if database_url:
                await asyncio.to_thread(self._databases.drop, database_url)
            raise
        self._external.append(server)
        return server

    def _node_plan(self, implementation: Implementation) -> NodePlan | None:
        """With `mark_reach`, for an original of a Node.js service: its reach plan."""
        service = implementation.service
        if not self._marks_reach(implementation):
            return None
        if service.name not in self._node_plans:
            self._node_plans[service.name] = node_reach.plan(service)
        return self._node_plans[service.name]

    def wait_for_database_server_exit(self) -> bool:
        """Blocks until the throwaway database server the pool started exits; False at once
        when it started none (SQLite, a user's server)."""
        return self._databases.wait_for_server_exit()

    async def start(self, implementation: Implementation, replica: int = 0,
                    ) -> RunningServer | ExternalServer:
        require_support(implementation.service, self.database)
        if implementation.service.manifest is not None:
            return await self._start_external(implementation)
        source = self._source_for(implementation)
        service = implementation.service
        warm_up: dict[str, Any] = {}
        if self.switch_mutants:
            warm_up = await self._warm_up_request(service, source)
        if self._preparing is not None and not self._preparing.done():
            # On PostgreSQL its answer names the seeded database that this server's is a copy
            # of; a start sent before it made an empty one, which the server then seeded itself
            # (the seed hashes passwords). The launcher answers one request at a time, so the
            # start waits no longer than it did.
            await asyncio.wait([self._preparing])
        template = self._templates.get(service.name)
        instance = next(self._instances)
        database_url = await asyncio.to_thread(
            self._databases.create, source, f"{service.name}-{implementation.id}-{instance}",
            template)
        log_file = source / f"server-{instance}.log"
        token = secrets.token_urlsafe(24)
        number = next(self._socket_numbers)
        control_socket = self._sockets / f"{number}.sock"
        handoff_socket = self._sockets / f"{number}.handoff"
        request: dict[str, Any] = {"op": "start", "source": str(source), "token": token,
                                   "database_url": database_url, "log": str(log_file),
                                   "control_socket": str(control_socket),
                                   "handoff_socket": str(handoff_socket)}
        if self.switch_mutants:
            edit = implementation.edit
            request.update(original=str(service.root.resolve()),
                           changed=[Path(edit.file).as_posix()] if edit else [],
                           database_seeded=template is not None, **warm_up)
            if edit is None:
                request.update(self._reach_request(service))
        try:
            answer = await self._ask(request)
        except BaseException:
            await asyncio.to_thread(self._databases.drop, database_url)
            raise
        self._remember_template(service, answer, warm_up)
        name = f"{implementation.service.name} {implementation.id}"
        if not answer["ok"]:
            await asyncio.to_thread(self._databases.drop, database_url)
            if answer.get("full"):
                raise folder_full(self._scratch_root)
            log_text = log_file.read_text(errors="replace") if log_file.exists() else ""
            raise ServiceStartError(start_failure(name, answer["error"], log_text, source,
                                                  implementation))
        server = RunningServer(implementation, replica, answer["pid"], answer["port"], log_file,
                               control_socket, token, database_url, answer.get("switch", ""),
                               float(answer.get("cpu_s", 0.0)),
                               seeded_at_start=True)
        self._servers.append(server)  # it answered once it served: no health check needed
        server.handoff = await _connect_handoff(handoff_socket)
        log.debug("started %s on port %s", name, server.port)
        return server

    def _marks_reach(self, implementation: Implementation) -> bool:
        return self.mark_reach and implementation.edit is None

    def _reach_request(self, service: Service) -> dict[str, Any]:
        """The first time a service's original is asked for, with `mark_reach`: its edits, for
        the launcher's reach plan (serving.reach)."""
        if not self.mark_reach or service.name in self._reach_sent:
            return {}
        self._reach_sent.add(service.name)
        return {"reach_edits": _edits(service)}

    async def _warm_up_request(self, service: Service, source: Path) -> dict[str, Any]:
        """How the launcher warms up `service`'s original app: on a SQLite file of its own, or
        on PostgreSQL on a database made for it once (which then serves as the template of the
        service's server databases)."""
        if self.database.kind is Database.SQLITE:
            return {"warm_up": True}
        if service.name not in self._warm_databases:  # one, also for starts at the same time
            self._warm_databases[service.name] = asyncio.ensure_future(asyncio.to_thread(
                self._databases.create, source, f"{service.name}-warm-up"))
        return {"warm_up": True, "warm_up_database": await self._warm_databases[service.name]}

    async def stop(self, server: RunningServer | ExternalServer) -> None:
        if isinstance(server, ExternalServer):
            if server in self._external:
                self._external.remove(server)
                await server.stop()
                if server.database_url:
                    await asyncio.to_thread(self._databases.drop, server.database_url)
            return
        if server in self._servers:
            self._servers.remove(server)
            await server.close_control()
            if self._launcher is not None and self._launcher.returncode is None:
                await self._ask({"op": "stop", "pid": server.pid})
            await asyncio.to_thread(self._databases.drop, server.database_url)

    async def close(self) -> None:
        """Stops every server, then drops their databases (and a throwaway PostgreSQL server)."""
        try:
            for external in list(self._external):
                await self.stop(external)
            for server in list(self._servers):
                await server.close_control()
            self._servers.clear()
            if self._preparing is not None:  # its errors, if any, met the servers' starts too
                self._preparing.cancel()  # if it still waits for the launcher: nobody will use it
                await asyncio.wait([self._preparing])
                if not self._preparing.cancelled():
                    self._preparing.exception()  # retrieved, so asyncio does not log it
            if self._launcher is not None and self._launcher.returncode is None:
                assert self._launcher.stdin is not None
                self._launcher.stdin.close()
                # Then SIGTERM, which ends what it is stuck in (a service's import) and has it
                # clean up as on end of input; SIGKILL leaves its folders to the next run.
                # os.kill, not Process.send_signal: see executor._Worker.kill.
                for signal_number, grace_s in ((signal.SIGTERM, 2), (signal.SIGKILL, 8)):
                    try:
                        await asyncio.wait_for(self._launcher.wait(), timeout=grace_s)
                        break
                    except TimeoutError:
                        os.kill(self._launcher.pid, signal_number)
                await self._launcher.wait()
            if self._reader is not None:
                await asyncio.wait([self._reader], timeout=10)
        finally:
            shutil.rmtree(self._sockets, ignore_errors=True)
            if self._sources != self.workdir:
                shutil.rmtree(self._sources, ignore_errors=True)
            release(self._sources_held)
            await asyncio.to_thread(self._databases.close)
