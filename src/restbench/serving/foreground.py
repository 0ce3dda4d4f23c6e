"""`restbench serve`: one implementation in the foreground, for a person to try by hand."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
import sys
import threading
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from restbench.benchmark.models import Service
from restbench.errors import MutationError, RestbenchError, ServiceStartError
from restbench.mutation import Implementation, implementations_of, materialize
from restbench.mutation.apply import ORIGINAL
from restbench.mutation.start_errors import start_failure
from restbench.scratch import scratch_folder
from restbench.serving.databases import (
    DatabaseChoice,
    DatabaseError,
    ServerDatabases,
    open_databases,
    require_support,
)
from restbench.serving.launcher import SERVER_HTTP, SERVER_LOOP

if TYPE_CHECKING:
    import uvicorn

    from restbench.serving.external import ExternalServer
    from restbench.serving.pool import ServerPool

# Without its database an app would answer 500 to every request: serve stops with this line.
DATABASE_GONE = ("the throwaway PostgreSQL server stopped (its supervisor process exited); serve "
                 "stopped with it")
# what the user can do about the usual reasons a listening socket is refused
_BIND_HINTS = {
    errno.EADDRINUSE: "another program listens there: choose another --port, or 0 for any "
                      "free one",
    errno.EADDRNOTAVAIL: "not an address of this machine",
    errno.EACCES: "a port below 1024 needs privileges: choose another --port",
}


def serve_foreground(service: Service, mutant: str | None = None, host: str = "127.0.0.1",
                     port: int = 8000, database: DatabaseChoice | str = "sqlite") -> None:
    choice = DatabaseChoice.parse(database)
    require_support(service, choice)
    implementations = implementations_of(service)
    chosen = mutant or ORIGINAL
    if chosen not in implementations:
        raise MutationError(f"{service.data_file}: no mutant or benign variant '{chosen}'")
    # bound before anything starts: a refused host or port leaves nothing to clean up
    with bound_socket(host, port) as listener, contextlib.suppress(KeyboardInterrupt):
        if service.manifest is not None:
            asyncio.run(_serve_external(implementations[chosen], listener, host, choice))
        else:
            _serve_python(implementations[chosen], listener, host, choice)


def bound_socket(host: str, port: int) -> socket.socket:
    """A socket bound to host:port, not yet listening (see `start_listening`); a host or port
    it cannot have is a `RestbenchError` naming both."""
    listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
    except OSError as exc:  # socket.gaierror too: a host name that does not resolve
        listener.close()
        raise _cannot_listen(host, port, exc) from None
    return listener


def start_listening(listener: socket.socket, host: str) -> None:
    """Once the service is ready: until then a connection is refused, as it was before the
    socket was bound early, so that one that gets through finds the service up."""
    try:
        listener.listen()
    except OSError as exc:  # another socket bound with SO_REUSEADDR listens there already
        raise _cannot_listen(host, listener.getsockname()[1], exc) from None


def _cannot_listen(host: str, port: int, exc: OSError) -> RestbenchError:
    return RestbenchError(f"--host {host} --port {port}: cannot listen there: "
                          f"{_bind_reason(exc)}")


def _bind_reason(exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    hint = _BIND_HINTS.get(exc.errno) if exc.errno is not None else None
    return f"{reason} ({hint})" if hint else reason


def _announce(implementation: Implementation, host: str, listener: socket.socket) -> None:
    port = listener.getsockname()[1]  # the one chosen, if asked for any (0)
    shown = f"[{host}]" if ":" in host else host
    print(f"{implementation.service.name} {implementation.id} at http://{shown}:{port} "
          "(Ctrl-C stops it)", flush=True)


def _serve_python(implementation: Implementation, listener: socket.socket, host: str,
                  database: DatabaseChoice) -> None:
    import uvicorn

    service = implementation.service
    databases = open_databases(database)
    with scratch_folder(f"restbench-serve-{service.name}-") as scratch:
        try:
            source = materialize(implementation, Path(scratch))
            sys.path.insert(0, str(source))
            sys.dont_write_bytecode = True
            url = databases.create(Path(scratch), f"{service.name}-{implementation.id}")
            try:
                from app.main import create_app  # type: ignore[import-not-found]

                app = create_app(url)
            except Exception as exc:  # noqa: BLE001 - the service's code failed: one line
                raise ServiceStartError(start_failure(
                    f"{service.name} {implementation.id}", f"{type(exc).__name__}: {exc}",
                    traceback.format_exc(), source, implementation)) from None
            # the harness's loop and protocol, so a person meets what tests meet
            server = uvicorn.Server(uvicorn.Config(app, log_level="info", loop=SERVER_LOOP,
                                                   http=SERVER_HTTP))
            database_gone = _stop_when_database_server_exits(databases, server)
            start_listening(listener, host)
            _announce(implementation, host, listener)
            server.run(sockets=[listener])
            if database_gone.is_set():
                raise DatabaseError(DATABASE_GONE)
            if not server.started:  # its startup failed: uvicorn logged why
                raise ServiceStartError(f"{service.name} {implementation.id} did not start: "
                                        "its startup failed (see the log above)")
        finally:
            databases.close()


def _stop_when_database_server_exits(databases: ServerDatabases,
                                     server: uvicorn.Server) -> threading.Event:
    """Without its database the app would answer 500 to every request."""
    gone = threading.Event()

    def watch() -> None:
        if databases.wait_for_server_exit():
            gone.set()
            server.should_exit = True

    threading.Thread(target=watch, name="database-server-watch", daemon=True).start()
    return gone


async def _serve_external(implementation: Implementation, listener: socket.socket, host: str,
                          database: DatabaseChoice) -> None:
    """An external service: built and started as in a run, reached through its recording proxy
    on `listener` (its reset route hidden as in a run) until interrupted."""
    from restbench.serving.pool import ServerPool

    with scratch_folder("restbench-serve-") as scratch:
        async with ServerPool(Path(scratch), database) as pool:
            server = await pool.start(implementation)
            await server.reset()
            start_listening(listener, host)
            await server.attach([listener])
            _announce(implementation, host, listener)
            await _until_either_exits(server, pool)


async def _echo(log_file: Path, every_s: float = 0.2) -> None:
    """The service's own output (its start, then what it logs while served) on stderr as it
    comes, as a built-in service's uvicorn log is shown."""
    with contextlib.suppress(OSError), log_file.open("rb") as log:
        while True:
            if chunk := log.read(65536):
                sys.stderr.buffer.write(chunk)
                sys.stderr.flush()
            else:
                await asyncio.sleep(every_s)


async def _until_either_exits(server: ExternalServer, pool: ServerPool) -> None:
    """Serves until interrupted; the service's process or the throwaway database server
    exiting ends serve with one line (the proxy would answer 502 or the app 500 for good)."""
    async def database_gone() -> None:
        if not await asyncio.to_thread(pool.wait_for_database_server_exit):
            await asyncio.Event().wait()  # no server of ours to lose

    watches = {asyncio.create_task(server.process.wait()): "service",
               asyncio.create_task(database_gone()): "database"}
    echo = asyncio.create_task(_echo(server.log_file))
    try:
        done, _ = await asyncio.wait(watches, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for watch in (*watches, echo):
            watch.cancel()
    if watches[next(iter(done))] == "database":
        raise DatabaseError(DATABASE_GONE)
    name = f"{server.implementation.service.name} {server.implementation.id}"
    raise ServiceStartError(f"{name} exited (status {server.process.returncode}) while served; "
                            f"its log ends: {server.log_tail()}")
