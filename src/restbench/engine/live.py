"""The live services refining generators talk to while they write: one server per
implementation, reset before every draft, a bounded number kept running between drafts."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import replace

from restbench.execution import ExecutionResult, Executor
from restbench.mutation import Implementation
from restbench.serving import ServerPool
from restbench.serving.pool import RunningServer

LIVE_SERVERS = 8  # servers kept up for refining generators' drafts


def _live_key(implementation: Implementation) -> str:
    return f"{implementation.service.name}/{implementation.id}"


class LiveServers:
    """The servers refining generators talk to, kept running between drafts (a start costs
    0.3–0.5 s, a reset a few ms). At most `limit` stay up; the least recently used idle one is
    stopped first, so a matrix with hundreds of mutants does not hold hundreds of servers."""

    def __init__(self, pool: ServerPool, limit: int = LIVE_SERVERS) -> None:
        self._pool, self._limit = pool, limit
        self._running: OrderedDict[str, RunningServer] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}

    def lock(self, implementation: Implementation) -> asyncio.Lock:
        return self._locks.setdefault(_live_key(implementation), asyncio.Lock())

    async def ready(self, implementation: Implementation) -> RunningServer:
        """A freshly reset server of `implementation`; the caller holds its lock."""
        server = self._running.pop(_live_key(implementation), None)
        if server is not None:
            try:
                await server.reset()
            except Exception:  # noqa: BLE001 - a draft may have brought it down: start anew
                await self._pool.stop(server)
                server = None
        if server is None:
            server = await self._pool.start(implementation, replica=1000)
            await server.reset()
        self._running[_live_key(implementation)] = server
        await self._evict()
        return server

    async def _evict(self) -> None:
        while len(self._running) > self._limit:
            idle = next((key for key in self._running if not self._locks[key].locked()), None)
            if idle is None:
                return
            await self._pool.stop(self._running.pop(idle))

    async def close(self) -> None:
        while self._running:
            await self._pool.stop(self._running.popitem()[1])


class LiveService:
    """What a refining generator talks to: one implementation, reset before every draft run.
    Drafts for one implementation take turns on its server."""

    def __init__(self, servers: LiveServers, executor: Executor,
                 implementation: Implementation) -> None:
        self._servers, self._executor, self._implementation = servers, executor, implementation

    async def execute(self, code: str, runner: str = "pytest") -> ExecutionResult:
        async with self._servers.lock(self._implementation):
            server = await self._servers.ready(self._implementation)
            result = await self._executor.execute(code, server, name="draft", runner=runner)
            return replace(result, exchanges=tuple(await server.exchanges()))
