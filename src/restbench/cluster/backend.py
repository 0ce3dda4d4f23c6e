"""`RayBackend`: the `ExecutionBackend` of a Ray cluster.

The driver (this process) keeps one queue of chunks: jobs grouped by implementation, the big
groups cut so that every slot of the cluster can take a part. Every node runs one `NodeRunner`
actor, pinned to it; each of its slots pulls the next chunk when it has finished the last, so
fast or idle nodes take more (no fixed split). Results stream back one execution at a time and
go to the caller's `on_done` at once, in this process: the caller writes its store and its
progress as in a local run. When a node is lost, what it had not reported goes back to the
front of the queue and the other nodes do it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import ray
from ray.exceptions import (
    NodeDiedError,
    ObjectLostError,
    OwnerDiedError,
    RayActorError,
    WorkerCrashedError,
)
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from restbench.cluster.node import NodeRunner
from restbench.engine.events import EventHandler, Notice
from restbench.engine.jobs import MIN_CHUNK, Done, Job
from restbench.errors import RestbenchError, ServiceStartError
from restbench.serving.databases import DatabaseChoice

log = logging.getLogger(__name__)

# What a lost node looks like from the driver.
NODE_LOST = (RayActorError, NodeDiedError, ObjectLostError, OwnerDiedError, WorkerCrashedError)
# A chunk is at most this long, so that nodes can still even out near the end of a batch.
MAX_CHUNK = 24
NODE_START_TIMEOUT_S = 180.0
CONNECT_TIMEOUT_S = 10.0
NODE_CLOSE_TIMEOUT_S = 30.0


class ClusterError(RestbenchError):
    """The Ray cluster cannot be reached or has no node left to run on."""


@dataclass(eq=False)  # compared and hashed by identity
class _Batch:
    on_done: Done
    open_chunks: int = 0
    failures: dict[str, ServiceStartError] = field(default_factory=dict)
    error: BaseException | None = None
    finished: asyncio.Event = field(default_factory=asyncio.Event)

    def close_chunk(self) -> None:
        self.open_chunks -= 1
        if self.open_chunks == 0:
            self.finished.set()

    def fail(self, error: BaseException) -> None:
        if self.error is None:
            self.error = error
        self.finished.set()


@dataclass(order=True)
class _Item:
    order: tuple[int, int]  # (0 for work a lost node left, else 1; arrival)
    jobs: list[Job] = field(compare=False)
    batch: _Batch = field(compare=False)


@dataclass
class _Node:
    node_id: str
    name: str
    actor: Any
    size: int
    alive: bool = True
    executed: int = 0


def chunks(jobs: Sequence[Job], slots: int) -> list[list[Job]]:
    """Jobs grouped by implementation, big groups cut in parts of at least MIN_CHUNK (as a local
    run does) and at most MAX_CHUNK jobs; the biggest first."""
    groups: dict[tuple[str, str], list[Job]] = {}
    for job in jobs:
        groups.setdefault((job.implementation.service.name, job.implementation.id), []).append(job)
    parts = []
    for group in groups.values():
        count = max(1, min(slots, len(group) // MIN_CHUNK), math.ceil(len(group) / MAX_CHUNK))
        size = math.ceil(len(group) / count)
        parts += [group[i:i + size] for i in range(0, len(group), size)]
    parts.sort(key=len, reverse=True)
    return parts


class RayBackend:
    """Runs jobs on every node of a Ray cluster that offers CPUs, one slot per CPU (or
    `workers` slots a node, when given)."""

    def __init__(self, address: str, *, database: DatabaseChoice | str, workers: int | None,
                 timeout_s: float, sandbox: bool, trusted_only: bool,
                 on_event: EventHandler) -> None:
        self.address = address
        self.database = database
        self.workers = workers
        self.timeout_s = timeout_s
        self.sandbox = sandbox
        self.trusted_only = trusted_only
        self.on_event = on_event
        self.nodes: list[_Node] = []
        self._queue: asyncio.PriorityQueue[_Item] = asyncio.PriorityQueue()
        self._arrivals = itertools.count()
        self._batches: set[_Batch] = set()
        self._slots: list[asyncio.Task[None]] = []
        self._connected = False

    @property
    def size(self) -> int:
        return sum(node.size for node in self.nodes if node.alive)

    async def start(self) -> None:
        await self._check_reachable()
        try:
            ray.init(address=self.address, logging_level=logging.ERROR, log_to_driver=False,
                     configure_logging=False)
        except Exception as exc:  # noqa: BLE001 - Ray raises several kinds, all "cannot connect"
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ClusterError(f"cannot connect to the Ray cluster at '{self.address}': "
                               f"{reason}") from None
        self._connected = True
        try:
            await self._start_nodes()
        except BaseException:
            await self.close()
            raise

    async def _check_reachable(self) -> None:
        """A HOST:PORT that nothing answers on is an error at once (Ray itself retries for
        minutes before it gives up)."""
        host, _, port = self.address.rpartition(":")
        if not host or not port.isdigit() or "://" in self.address:
            return  # `auto`, or a form Ray resolves itself
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)),
                                               CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            reason = f"no answer within {CONNECT_TIMEOUT_S:.0f} s" \
                if isinstance(exc, TimeoutError) else "connection refused" \
                if isinstance(exc, ConnectionRefusedError) else exc.strerror or str(exc)
            raise ClusterError(f"cannot connect to the Ray cluster at '{self.address}': "
                               f"{reason}") from None
        writer.close()

    async def _start_nodes(self) -> None:
        runner = ray.remote(num_cpus=0, max_restarts=0, max_concurrency=1000)(NodeRunner)
        candidates = []
        for info in ray.nodes():
            cpus = int(info.get("Resources", {}).get("CPU", 0))
            if not info.get("Alive") or cpus < 1:
                continue  # e.g. a head node given no CPUs so that it only coordinates
            actor = runner.options(scheduling_strategy=NodeAffinitySchedulingStrategy(
                info["NodeID"], soft=False)).remote(self.database, self.workers or cpus,
                                                    self.timeout_s, self.sandbox,
                                                    self.trusted_only)
            candidates.append((info, actor))
        if not candidates:
            raise ClusterError(f"the Ray cluster at '{self.address}' has no node with CPUs")
        answers = await asyncio.gather(
            *(asyncio.wait_for(_awaitable(actor.start.remote()), NODE_START_TIMEOUT_S)
              for _, actor in candidates), return_exceptions=True)
        for (info, actor), answer in zip(candidates, answers, strict=True):
            name = info.get("NodeManagerAddress", info["NodeID"][:8])
            if isinstance(answer, BaseException):
                if isinstance(answer, ray.exceptions.RayTaskError) and \
                        isinstance(answer.cause, RestbenchError):
                    raise ClusterError(f"Ray node {name}: {answer.cause}") from None
                self.on_event(Notice(f"Ray node {name} left out: it could not start "
                                     f"({_first_line(answer)})"))
                ray.kill(actor)
                continue
            for notice in answer["notices"]:
                self.on_event(Notice(f"Ray node {name}: {notice}"))
            name = f"{name} ({answer['host']})" if answer["host"] not in name else name
            self.nodes.append(_Node(info["NodeID"], name, actor, int(answer["size"])))
        if not self.nodes:
            raise ClusterError(f"no node of the Ray cluster at '{self.address}' could start")
        log.info("Ray nodes: %s", ", ".join(f"{n.name}: {n.size} slots" for n in self.nodes))
        self._slots = [asyncio.create_task(self._slot(node, replica))
                       for node in self.nodes for replica in range(node.size)]

    async def execute(self, jobs: Sequence[Job], on_done: Done) -> dict[str, ServiceStartError]:
        if not jobs:
            return {}
        if not any(node.alive for node in self.nodes):
            raise ClusterError("no node of the Ray cluster is left; rerun the same command to "
                               "resume")
        batch = _Batch(on_done)
        parts = chunks(jobs, self.size)
        batch.open_chunks = len(parts)
        self._batches.add(batch)
        for part in parts:
            self._queue.put_nowait(_Item((1, next(self._arrivals)), part, batch))
        try:
            await batch.finished.wait()
        finally:
            self._batches.discard(batch)
        if batch.error is not None:
            raise batch.error
        return batch.failures

    async def _slot(self, node: _Node, replica: int) -> None:
        while node.alive:
            item = await self._queue.get()
            if not node.alive:
                self._queue.put_nowait(item)
                return
            if item.batch.error is not None:  # its caller is gone already
                continue
            await self._run(node, replica, item)

    async def _run(self, node: _Node, replica: int, item: _Item) -> None:
        reported: set[int] = set()
        try:
            async for ref in node.actor.run.remote(replica, item.jobs):
                report = await ref
                if report[0] == "done":
                    _, index, result = report
                    reported.add(index)
                    node.executed += 1
                    item.batch.on_done(item.jobs[index], result)
                else:
                    implementation = item.jobs[0].implementation.id
                    item.batch.failures.setdefault(implementation, ServiceStartError(
                        f"{report[1]} (on Ray node {node.name})"))
        except NODE_LOST as exc:
            left = [job for index, job in enumerate(item.jobs) if index not in reported]
            if left:
                self._queue.put_nowait(_Item((0, next(self._arrivals)), left, item.batch))
            self._lose(node, exc, len(left))
            if left:
                return
        except Exception as exc:  # noqa: BLE001 - a fault of ours or of on_done: the caller's
            item.batch.fail(exc)
            return
        item.batch.close_chunk()

    def _lose(self, node: _Node, error: BaseException, unfinished: int) -> None:
        if node.alive:
            node.alive = False
            self.on_event(Notice(f"Ray node {node.name} was lost ({_first_line(error)}); its "
                                 f"unfinished executions run on the other nodes"))
            with contextlib.suppress(Exception):
                ray.kill(node.actor)
        log.info("%d executions of %s go back to the queue", unfinished, node.name)
        if not any(n.alive for n in self.nodes):
            for batch in list(self._batches):
                batch.fail(ClusterError("every node of the Ray cluster was lost; everything "
                                        "finished is saved, rerun the same command to resume"))

    async def close(self) -> None:
        for task in self._slots:
            task.cancel()
        await asyncio.gather(*self._slots, return_exceptions=True)
        self._slots = []
        alive = [node for node in self.nodes if node.alive]
        await asyncio.gather(*(asyncio.wait_for(_awaitable(node.actor.close.remote()),
                                                NODE_CLOSE_TIMEOUT_S) for node in alive),
                             return_exceptions=True)
        for node in alive:
            with contextlib.suppress(Exception):
                ray.kill(node.actor)
        self.nodes = []
        if self._connected:
            self._connected = False
            ray.shutdown()


async def _awaitable(ref: Any) -> Any:
    return await ref


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:300] if text else type(error).__name__
