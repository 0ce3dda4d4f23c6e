"""One node's share of a run: a Ray actor with its own server pool and sandboxed executor.

Nothing here imports Ray: the driver wraps `NodeRunner` with `ray.remote` and places one on each
node. The driver sends chunks of jobs that share one implementation, each on a `replica` (a
slot of this node's executor); the runner keeps the last server of each slot warm, so a slot
that gets the same implementation again does not start it again.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from restbench.engine.events import Event, Notice
from restbench.engine.jobs import Job, execute_on, open_executor
from restbench.engine.scratch import scratch_folder
from restbench.errors import ServiceStartError
from restbench.execution import ExecutionResult, Executor
from restbench.serving import ServerPool
from restbench.serving.databases import DatabaseChoice
from restbench.serving.pool import RunningServer

# What `run` yields for each job: ("done", index in the chunk, result), or once, when the
# implementation cannot start: ("failed", reason); the chunk's later jobs then do not run.
Report = tuple[str, int, ExecutionResult] | tuple[str, str]


class NodeRunner:
    def __init__(self, database: DatabaseChoice | str, workers: int, timeout_s: float,
                 sandbox: bool, trusted_only: bool) -> None:
        self.database = database
        self.workers = workers
        self.timeout_s = timeout_s
        self.sandbox = sandbox
        self.trusted_only = trusted_only
        self._stack = contextlib.AsyncExitStack()
        self._pool: ServerPool | None = None
        self._executor: Executor | None = None
        self._warm: dict[int, RunningServer] = {}

    async def start(self) -> dict[str, Any]:
        """Opens the pool and pre-warms the executor's workers; returns this node's host name,
        its number of slots and the notices a local run would have printed."""
        notices: list[str] = []

        def keep(event: Event) -> None:
            if isinstance(event, Notice):
                notices.append(event.message)

        scratch: Path = self._stack.enter_context(scratch_folder("restbench-node-"))
        self._pool = await self._stack.enter_async_context(
            ServerPool(scratch / "servers", self.database))
        self._executor = await self._stack.enter_async_context(open_executor(
            self.workers, self.timeout_s, scratch / "exec", sandbox=self.sandbox,
            trusted_only=self.trusted_only, on_event=keep))
        return {"host": socket.gethostname(), "size": self._executor.size, "notices": notices}

    async def _server(self, replica: int, job: Job) -> RunningServer:
        implementation = job.implementation
        server = self._warm.get(replica)
        if server is not None and (server.implementation.service.name, server.implementation.id) \
                == (implementation.service.name, implementation.id):
            return server
        if server is not None:
            del self._warm[replica]
            await self._pool.stop(server)  # type: ignore[union-attr]
        server = await self._pool.start(implementation, replica)  # type: ignore[union-attr]
        self._warm[replica] = server
        return server

    async def _restart(self, replica: int, job: Job) -> RunningServer:
        """A test brought the server down or made it hang: a new one, reset."""
        server = self._warm.pop(replica)
        await self._pool.stop(server)  # type: ignore[union-attr]
        server = await self._server(replica, job)
        await server.reset()
        return server

    async def run(self, replica: int, jobs: list[Job]) -> AsyncIterator[Report]:
        """Runs `jobs` (one implementation) after a reset each, on slot `replica`."""
        assert self._executor is not None
        try:
            server = await self._server(replica, jobs[0])
        except ServiceStartError as exc:
            yield ("failed", str(exc))
            return
        for index, job in enumerate(jobs):
            try:
                await server.reset()
            except ServiceStartError:
                try:
                    server = await self._restart(replica, job)
                except ServiceStartError as exc:
                    yield ("failed", str(exc))
                    return
            yield ("done", index, await execute_on(self._executor, server, job))

    async def close(self) -> None:
        self._warm.clear()
        await self._stack.aclose()
