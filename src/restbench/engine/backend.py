"""Where executions happen: this machine, or (through `restbench.cluster`) a cluster.

`run` and `validate` hand batches of jobs to a backend and learn each result through a
callback. A backend may be called again before an earlier batch finishes; it decides where
each execution runs and keeps servers warm across batches where it can. Generations, the
store and the scores stay with the caller, so every backend yields the same rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, Self, runtime_checkable

from restbench.engine.events import EventHandler
from restbench.engine.jobs import MIN_CHUNK, Done, Job, execute_on
from restbench.errors import ServiceStartError
from restbench.execution import Executor
from restbench.mutation import Implementation
from restbench.mutation.apply import ORIGINAL
from restbench.serving import RunningServer, ServerPool
from restbench.serving.databases import DatabaseChoice

if TYPE_CHECKING:
    from restbench.benchmark import Service
    from restbench.engine.generation import GenerationRequest
    from restbench.llm.config import ModelEnvironment
    from restbench.store import GenerationRow, ResultStore


class ExecutionBackend(Protocol):
    """Runs jobs, each after a reset of its implementation, calling `on_done` as each ends."""

    @property
    def size(self) -> int:
        """How many executions it runs at once."""
        ...

    async def execute(self, jobs: Sequence[Job], on_done: Done) -> dict[str, ServiceStartError]:
        """Runs `jobs`; returns the implementations that could not start (by id), whose jobs
        were not run."""
        ...


@runtime_checkable
class GenerationBackend(Protocol):
    """A backend that also makes the generations (a Ray cluster: on its nodes). The caller still
    decides what to generate, and stores each row it gets back."""

    @property
    def nodes_alive(self) -> int: ...

    async def prepare_generation(self, environment: ModelEnvironment, calls: ResultStore) -> None:
        """Before the first `generate`: how to reach the models (`environment`), and the run's
        store, whose model answers are reused and where each new one is saved once known."""
        ...

    async def generate(self, request: GenerationRequest, openapi: dict[str, Any]
                       ) -> GenerationRow: ...


# Idle servers kept warm beyond those in use; the least recently used one beyond this stops.
# Each costs ~10-20 MB (pages shared with the launcher count once); a start costs ~40-60 ms.
WARM_SERVERS = 8

_Key = tuple[str, str]  # (service name, implementation id)


@dataclass(eq=False)
class _Entry:
    """One job of one `execute` call: its callback, and what its caller waits on."""

    job: Job
    on_done: Done
    done: asyncio.Future[ServiceStartError | None]


@dataclass(eq=False)
class _Lane:
    """One execution slot and the server it holds (or that is starting for it), if any."""

    server: RunningServer | None = None
    starting: asyncio.Task[RunningServer] | None = field(default=None, repr=False)
    entry: _Entry | None = None
    task: asyncio.Task[None] | None = field(default=None, repr=False)
    # Chosen while the lane runs the last job queued for its server (see `_look_ahead`).
    next: tuple[_Key, RunningServer | None, asyncio.Task[RunningServer] | None] | None = None


def _key(implementation: Implementation) -> _Key:
    return (implementation.service.name, implementation.id)


class LocalBackend:
    """Executions on this machine, with its server pool and sandboxed executor.

    Jobs of every pending `execute` call share one queue per implementation and `size` lanes.
    A lane keeps its server while that implementation has work, then parks it among at most
    `warm` idle servers (least recently used ones beyond stop), and picks next an implementation
    with an idle server, else the original (its results unlock more work), else the one with
    most work. A large queue gets a second server when another lane is free. Use it as an async
    context manager (or call `close`) so that idle servers stop with it."""

    def __init__(self, pool: ServerPool, executor: Executor, *, warm: int = WARM_SERVERS) -> None:
        self.pool = pool
        self.executor = executor
        self.warm = warm
        self.starts = 0  # servers started, for benchmarks and tests
        self._pending: dict[_Key, deque[_Entry]] = {}
        self._idle: OrderedDict[_Key, list[RunningServer]] = OrderedDict()
        self._held: dict[_Key, int] = {}
        self._lanes: list[_Lane] = []
        self._replicas = itertools.count()
        self._closed = False
        self._originals_down: dict[str, ServiceStartError] = {}  # by service name

    @property
    def size(self) -> int:
        return self.executor.size

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def execute(self, jobs: Sequence[Job], on_done: Done) -> dict[str, ServiceStartError]:
        if self._closed:
            raise RuntimeError("LocalBackend is closed")
        loop = asyncio.get_running_loop()
        entries = [_Entry(job, on_done, loop.create_future()) for job in jobs]
        for entry in entries:
            self._pending.setdefault(_key(entry.job.implementation), deque()).append(entry)
        self._add_lanes()
        failures: dict[str, ServiceStartError] = {}
        try:
            for entry in entries:
                error = await entry.done
                if error is not None:
                    failures[entry.job.implementation.id] = error
        except BaseException:
            for entry in entries:  # cancelled, or a callback failed: what did not start, won't
                queue = self._pending.get(_key(entry.job.implementation))
                if queue is not None and entry in queue:
                    queue.remove(entry)
                if not entry.done.done():
                    entry.done.cancel()
                elif not entry.done.cancelled():
                    # Failed too (a harness error meets every start alike): the one raised says
                    # it; the others, left unread, would each be logged with a traceback.
                    entry.done.exception()
            raise
        return failures

    async def close(self) -> None:
        """Stops the lanes (a running execution is cancelled) and every server they kept."""
        self._closed = True
        lanes, self._lanes = self._lanes, []
        for lane in lanes:
            if lane.task is not None:
                lane.task.cancel()
        for lane in lanes:
            if lane.task is not None:
                with contextlib.suppress(BaseException):
                    await lane.task
        for queue in self._pending.values():
            for entry in queue:
                if not entry.done.done():
                    entry.done.cancel()
        self._pending.clear()
        idle = [server for servers in self._idle.values() for server in servers]
        self._idle.clear()
        for server in idle:
            with contextlib.suppress(Exception):
                await self.pool.stop(server)

    # --- lanes ------------------------------------------------------------------------------

    def _add_lanes(self) -> None:
        """Up to `size` lanes; one with nothing to take ends at once."""
        self._lanes = [lane for lane in self._lanes
                       if lane.task is not None and not lane.task.done()]
        while len(self._lanes) < self.size:
            lane = _Lane()
            lane.task = asyncio.ensure_future(self._run_lane(lane))
            self._lanes.append(lane)

    def _choose(self) -> tuple[_Key, RunningServer | None] | None:
        """The implementation a free lane serves next, and an idle server of it if there is
        one; None when there is nothing a free lane should take."""
        for key in [key for key, queue in self._pending.items() if not queue]:
            del self._pending[key]
        if not self._pending:
            return None

        def rank(key: _Key) -> tuple[bool, bool, int]:
            return (bool(self._idle.get(key)), key[1] == ORIGINAL, len(self._pending[key]))

        # A queue another lane serves gets one more server only when it is long: the original's
        # queue, whose results unlock the rest, goes before short queues of other servers.
        free = [key for key, queue in self._pending.items()
                if len(queue) >= MIN_CHUNK * (self._held.get(key, 0) + 1)
                or not self._held.get(key)]
        if not free:
            return None
        key = max(free, key=rank)
        servers = self._idle.get(key)
        server = servers.pop() if servers else None
        if servers is not None and not servers:
            del self._idle[key]
        return key, server

    async def _run_lane(self, lane: _Lane) -> None:
        key: _Key | None = None
        try:
            while True:
                queue = self._pending.get(key) if key is not None else None
                if not queue:
                    if key is not None:
                        self._held[key] -= 1
                        key = None
                        await self._park(lane)
                    choice = None if lane.next is not None else self._choose()
                    if choice is None and lane.next is None:
                        # Nothing left to choose: take over what a busy lane chose ahead.
                        for other in self._lanes:
                            if other is not lane and other.next is not None:
                                lane.next, other.next = other.next, None
                                break
                    if lane.next is not None:
                        key, lane.server, lane.starting = lane.next
                        lane.next = None
                        continue
                    if choice is None:
                        return
                    key, lane.server = choice
                    self._held[key] = self._held.get(key, 0) + 1
                    continue
                lane.entry = queue.popleft()
                if not lane.entry.done.done():  # else its caller gave up
                    await self._run_entry(lane, lane.entry, key)
                lane.entry = None
        finally:
            if lane.entry is not None and not lane.entry.done.done():
                lane.entry.done.cancel()
            if key is not None:
                self._held[key] -= 1
            servers = [lane.server, *await self._settle(lane.starting)]
            if lane.next is not None:
                self._held[lane.next[0]] -= 1
                servers += [lane.next[1], *await self._settle(lane.next[2])]
            lane.server, lane.starting, lane.next = None, None, None
            for server in servers:
                if server is not None:
                    with contextlib.suppress(Exception):
                        await self.pool.stop(server)

    def _look_ahead(self, lane: _Lane, key: _Key) -> None:
        """When the lane runs the last job queued for its server, it chooses now what it serves
        next and, without an idle server of that, starts and resets one meanwhile: the start
        (~20-40 ms) then overlaps this execution instead of preceding the next."""
        if self._pending.get(key) or lane.next is not None or self._closed:
            return
        choice = self._choose()
        if choice is None:
            return
        next_key, server = choice
        self._held[next_key] = self._held.get(next_key, 0) + 1
        starting = None
        if server is None:
            starting = asyncio.ensure_future(
                self._start_and_reset(self._pending[next_key][0].job))
        lane.next = (next_key, server, starting)

    async def _start_and_reset(self, job: Job) -> RunningServer:
        lane = _Lane(server=await self._start(job))
        try:
            await self._reset(lane, job)
        except BaseException:
            if lane.server is not None:
                with contextlib.suppress(Exception):
                    await self.pool.stop(lane.server)
            raise
        assert lane.server is not None
        return lane.server

    @staticmethod
    async def _settle(starting: asyncio.Task[RunningServer] | None, *,
                      cancel: bool = True) -> list[RunningServer]:
        """The server a start ahead gave, once the lane no longer wants it (the start is
        cancelled if the lane is ending); none if it failed."""
        if starting is None:
            return []
        if cancel:
            starting.cancel()
        try:
            return [await starting]
        except BaseException:  # noqa: BLE001 - cancelled or failed: nothing to stop
            return []

    async def _run_entry(self, lane: _Lane, entry: _Entry, key: _Key) -> None:
        job = entry.job
        if job.fresh_server:
            await self._run_on_a_new_server(entry)
            return
        try:
            if lane.server is None and lane.starting is not None:
                starting, lane.starting = lane.starting, None
                lane.server = await starting  # started and reset ahead, nothing ran on it since
            else:
                if lane.server is None:
                    lane.server = await self._start(job)
                await self._reset(lane, job)
        except ServiceStartError as exc:
            self._fail_queue(_key(job.implementation), entry, exc)
            return
        except Exception as exc:  # noqa: BLE001 - the caller's to raise, not the lane's
            if not entry.done.done():  # its caller may have given up on it already
                entry.done.set_exception(exc)
            return
        self._look_ahead(lane, key)
        try:
            entry.on_done(job, await execute_on(self.executor, lane.server, job))
        except Exception as exc:  # noqa: BLE001 - the caller's to raise, not the lane's
            if not entry.done.done():
                entry.done.set_exception(exc)
            return
        if not entry.done.done():
            entry.done.set_result(None)

    async def _run_on_a_new_server(self, entry: _Entry) -> None:
        """A job that must meet a server no other test ran on: one started for it alone and
        stopped after (the lane's own server, if any, stays as it is)."""
        job = entry.job
        try:
            server = await self._start(job)
        except ServiceStartError as exc:
            if not entry.done.done():
                entry.done.set_result(exc)
            return
        try:
            await _seed_state(server, job.reset_first)
            entry.on_done(job, await execute_on(self.executor, server, job))
        except Exception as exc:  # noqa: BLE001 - the caller's to raise, not the lane's
            if not entry.done.done():
                entry.done.set_exception(exc)
            return
        finally:
            await self.pool.stop(server)
        if not entry.done.done():
            entry.done.set_result(None)

    async def _reset(self, lane: _Lane, job: Job) -> None:
        assert lane.server is not None
        try:
            await _seed_state(lane.server, job.reset_first)
        except ServiceStartError:  # a test brought it down or made it hang
            server, lane.server = lane.server, None
            await self.pool.stop(server)
            lane.server = await self._start(job)
            await _seed_state(lane.server, job.reset_first)

    async def _start(self, job: Job) -> RunningServer:
        implementation = job.implementation
        service = implementation.service.name
        down = self._originals_down.get(service)
        if down is not None and implementation.id != ORIGINAL:
            # Its edit of an original that does not start would not either: trying would cost
            # each a full start timeout (a ready route that never answers, an app that hangs).
            raise ServiceStartError(f"{service} {implementation.id} not started: the original "
                                    f"did not start ({down})")
        self.starts += 1
        try:
            return await self.pool.start(implementation, next(self._replicas))
        except ServiceStartError as exc:
            if implementation.id == ORIGINAL:
                self._originals_down[service] = exc
            raise

    def _fail_queue(self, key: _Key, entry: _Entry, error: ServiceStartError) -> None:
        """The implementation cannot start: its queued jobs are not run, their callers learn
        why."""
        for failed in [entry, *self._pending.pop(key, deque())]:
            if not failed.done.done():
                failed.done.set_result(error)

    async def _park(self, lane: _Lane) -> None:
        """The lane's server joins the idle ones; the least recently used beyond `warm` stop."""
        server, lane.server = lane.server, None
        if server is None and lane.starting is not None:  # started ahead, then not needed
            starting, lane.starting = lane.starting, None
            server = next(iter(await self._settle(starting, cancel=False)), None)
        if server is None:
            return
        key = _key(server.implementation)
        self._idle.setdefault(key, []).append(server)
        self._idle.move_to_end(key)
        while sum(map(len, self._idle.values())) > self.warm:
            oldest, servers = next(iter(self._idle.items()))
            victim = servers.pop(0)
            if not servers:
                del self._idle[oldest]
            await self.pool.stop(victim)


async def _seed_state(server: RunningServer, reset_anyway: bool) -> None:
    """Resets `server`, unless nothing ran on it since it started (and not `reset_anyway`): a
    fresh server is in the seed state already (~6-9 ms of a mutant server's CPU saved, see
    RunningServer)."""
    fresh, server.seeded_at_start = server.seeded_at_start, False
    if not fresh or reset_anyway:
        await server.reset()


@contextlib.asynccontextmanager
async def open_backend(ray: str | None, pool: ServerPool, executor: Executor | None, *,
                       database: DatabaseChoice | str, workers: int | None, timeout_s: float,
                       sandbox: bool, trusted_only: bool, on_event: EventHandler,
                       mark_reach: bool = False, services: Sequence[Service] = ()
                       ) -> AsyncIterator[ExecutionBackend]:
    """This machine's backend (on `pool` and `executor`), or with `ray` (a cluster address or
    `auto`) a `RayBackend` whose nodes each open their own pool (marking reach if asked, see
    serving.reach), prepared for `services`, and executor with these settings."""
    if ray is None:
        assert executor is not None, "a local backend runs on this machine's executor"
        async with LocalBackend(pool, executor) as local:
            yield local
        return
    from restbench.cluster import open_ray_backend  # Ray is imported only when asked for

    async with open_ray_backend(ray, database=database, workers=workers, timeout_s=timeout_s,
                                sandbox=sandbox, trusted_only=trusted_only,
                                on_event=on_event, mark_reach=mark_reach,
                                services=services) as backend:
        yield backend
