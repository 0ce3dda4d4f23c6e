"""`restbench serve`: one implementation in the foreground, for a person to try by hand."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from restbench.benchmark.models import Service
from restbench.errors import MutationError
from restbench.mutation import Implementation, implementations_of, materialize
from restbench.mutation.apply import ORIGINAL
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

# uvicorn.run's exit status when the server did not start (uvicorn.main.STARTUP_FAILURE)
STARTUP_FAILURE = 3


def serve_foreground(service: Service, mutant: str | None = None, host: str = "127.0.0.1",
                     port: int = 8000, database: DatabaseChoice | str = "sqlite") -> None:
    import uvicorn

    choice = DatabaseChoice.parse(database)
    require_support(service, choice)
    implementations = implementations_of(service)
    chosen = mutant or ORIGINAL
    if chosen not in implementations:
        raise MutationError(f"{service.data_file}: no mutant or benign variant '{chosen}'")
    if service.manifest is not None:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_serve_external(implementations[chosen], host, port, choice))
        return
    databases = open_databases(choice)
    with scratch_folder(f"restbench-serve-{service.name}-") as scratch:
        try:
            source = materialize(implementations[chosen], Path(scratch))
            sys.path.insert(0, str(source))
            sys.dont_write_bytecode = True
            from app.main import create_app  # type: ignore[import-not-found]

            app = create_app(databases.create(Path(scratch), f"{service.name}-{chosen}"))
            # the harness's loop and protocol, so a person meets what tests meet
            server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="info",
                                                   loop=SERVER_LOOP, http=SERVER_HTTP))
            database_gone = _stop_when_database_server_exits(databases, server)
            with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: uvicorn stopped, as asked
                server.run()
            if database_gone.is_set():
                raise DatabaseError("the throwaway PostgreSQL server stopped (its supervisor "
                                    "process exited); serve stopped with it")
            if not server.started:
                sys.exit(STARTUP_FAILURE)  # uvicorn said why, as uvicorn.run would
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


async def _serve_external(implementation: Implementation, host: str, port: int,
                          database: DatabaseChoice) -> None:
    """An external service: built and started as in a run, reached through its recording proxy
    on host:port (its reset route hidden as in a run) until interrupted."""
    from restbench.serving.pool import ServerPool

    with scratch_folder("restbench-serve-") as scratch:
        async with ServerPool(Path(scratch), database) as pool:
            server = await pool.start(implementation)
            await server.reset()
            listener = socket.create_server((host, port))
            await server.attach([listener])
            port = listener.getsockname()[1]  # the one chosen, if asked for any (0)
            print(f"{implementation.service.name} {implementation.id} at http://{host}:{port} "
                  "(Ctrl-C stops it)", flush=True)
            await asyncio.Event().wait()
