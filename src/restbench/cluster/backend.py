"""`RayBackend`: the `ExecutionBackend` of a Ray cluster.

The driver (this process) keeps one queue of chunks: jobs grouped by implementation, the big
groups cut so that every slot of the cluster can take a part. Every node runs one `NodeRunner`
actor, pinned to it; each of its slots pulls the next chunk when it has finished the last, so
fast or idle nodes take more (no fixed split). Results stream back one execution at a time and
go to the caller's `on_done` at once, in this process: the caller writes its store and its
progress as in a local run. When a node is lost, what it had not reported goes back to the
front of the queue and the other nodes do it.

Generations go to the node with the fewest in flight (`generate`); a generation a lost node was
making is made again elsewhere, where the model answers it had already received (collected
every second) are reused, not paid again. One `EndpointLimits` actor holds every model
endpoint's concurrency limit for the whole cluster. Nodes that join while a run goes on are
given work as soon as their runner has started (`NODE_WATCH_S`).
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

from restbench.benchmark import Service
from restbench.cluster.limits import EndpointLimits, SlotsUnavailable
from restbench.cluster.node import NewCall, NodeRunner
from restbench.engine.events import EventHandler, Notice
from restbench.engine.generation import GenerationRequest
from restbench.engine.jobs import MIN_CHUNK, Done, Job
from restbench.errors import RestbenchError, ServiceBuildError, ServiceStartError
from restbench.llm.config import ModelEnvironment
from restbench.serving import server_limits
from restbench.serving.databases import DatabaseChoice
from restbench.serving.pool import first_in_launcher
from restbench.store import GenerationRow, ResultStore

log = logging.getLogger(__name__)

# What a lost node looks like from the driver.
NODE_LOST = (RayActorError, NodeDiedError, ObjectLostError, OwnerDiedError, WorkerCrashedError)
# A chunk is at most this long, so that nodes can still even out near the end of a batch.
MAX_CHUNK = 24
NODE_START_TIMEOUT_S = 180.0
CONNECT_TIMEOUT_S = 10.0
NODE_CLOSE_TIMEOUT_S = 30.0
NODE_WATCH_S = 2.0  # how often the cluster is asked for nodes that joined
CALLS_COLLECTED_S = 1.0  # how often nodes hand over the model answers they received
# A generation whose calls could not take their endpoint slot is made again this many times.
SLOT_RETRIES = 5


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
    generating: int = 0  # generations in flight
    generated: int = 0


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
                 on_event: EventHandler, mark_reach: bool = False,
                 services: Sequence[Service] = ()) -> None:
        self.address = address
        self.mark_reach = mark_reach
        # What each node's launcher imports as it starts (ServerPool.prepare): the first that
        # runs there, sent alone (a node gets each job's service with the job).
        first = first_in_launcher(services)
        self.services = [first] if first is not None else []
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
        self._seen_nodes: set[str] = set()  # node ids a runner was started on (or tried)
        self._watcher: asyncio.Task[None] | None = None
        self._collector: asyncio.Task[None] | None = None
        # Set by prepare_generation: what every node (also one joining later) is given.
        self._generation: tuple[ModelEnvironment, Any, Any] | None = None
        self._store: ResultStore | None = None
        self._openapi: dict[str, Any] = {}  # service name -> its document, put in Ray once

    @property
    def size(self) -> int:
        return sum(node.size for node in self.nodes if node.alive)

    @property
    def nodes_alive(self) -> int:
        return sum(node.alive for node in self.nodes)

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
        if self.address.startswith("ray://"):
            # Ray Client: the driver would be outside the cluster, where no node can be placed
            # next to it, and `restbench[ray]` installs Ray's core without the client.
            raise ClusterError(f"--ray {self.address}: Ray Client (ray://) addresses are not "
                               "supported; run restbench on a node of the cluster and give the "
                               "cluster's address (HOST:6379) or auto")
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
        candidates = [info for info in ray.nodes() if _offers_cpus(info)]
        if not candidates:
            raise ClusterError(f"the Ray cluster at '{self.address}' has no node with CPUs")
        started = await asyncio.gather(*(self._start_node(info, fatal=True)
                                         for info in candidates))
        if not any(started):
            raise ClusterError(f"no node of the Ray cluster at '{self.address}' could start")
        log.info("Ray nodes: %s", ", ".join(f"{n.name}: {n.size} slots" for n in self.nodes))
        self._watcher = asyncio.create_task(self._watch_nodes())

    async def _start_node(self, info: dict[str, Any], *, fatal: bool) -> bool:
        """Starts a runner on the node `info` describes and gives it work; a node that cannot
        start is left out with a notice (a restbench error at the start of a run: the run's)."""
        self._seen_nodes.add(info["NodeID"])
        name = info.get("NodeManagerAddress", info["NodeID"][:8])
        cpus = int(info.get("Resources", {}).get("CPU", 0))
        options: dict[str, Any] = {
            "scheduling_strategy": NodeAffinitySchedulingStrategy(info["NodeID"], soft=False)}
        if settings := server_limits.passed_on():  # the servers' limits set for this run
            options["runtime_env"] = {"env_vars": settings}
        actor = _runner_class().options(**options).remote(
            self.database, self.workers or cpus, self.timeout_s, self.sandbox, self.trusted_only,
            self.mark_reach)
        try:
            answer = await asyncio.wait_for(_awaitable(actor.start.remote(self.services)),
                                            NODE_START_TIMEOUT_S)
            if self._generation is not None:
                await self._prepare_node(actor, info["NodeID"])
        except Exception as exc:  # noqa: BLE001 - Ray raises several kinds
            with contextlib.suppress(Exception):
                ray.kill(actor)
            if fatal and (ours := _unwrapped(exc)) is not exc:
                raise ClusterError(f"Ray node {name}: {ours}") from None
            self.on_event(Notice(f"Ray node {name} left out: it could not start "
                                 f"({_first_line(exc)})"))
            return False
        for notice in answer["notices"]:
            self.on_event(Notice(f"Ray node {name}: {notice}"))
        name = f"{name} ({answer['host']})" if answer["host"] not in name else name
        node = _Node(info["NodeID"], name, actor, int(answer["size"]))
        self.nodes.append(node)
        self._slots += [asyncio.create_task(self._slot(node)) for _ in range(node.size)]
        return True

    async def _watch_nodes(self) -> None:
        """Starts a runner on every node that joins the cluster while the run goes on."""
        while True:
            await asyncio.sleep(NODE_WATCH_S)
            try:
                joined = [info for info in ray.nodes()
                          if _offers_cpus(info) and info["NodeID"] not in self._seen_nodes]
            except Exception as exc:  # noqa: BLE001 - the cluster may be going away
                log.info("cannot list the Ray nodes: %s", exc)
                continue
            for info in joined:
                if await self._start_node(info, fatal=False):
                    self.on_event(Notice(f"Ray node {self.nodes[-1].name} joined; it takes "
                                         "work from now on"))

    async def prepare_generation(self, environment: ModelEnvironment,
                                 calls: ResultStore) -> None:
        """From here on every node can generate: it gets the model environment, the answers
        `calls` (the run's store) already has, and the cluster's endpoint limits."""
        # Restarted (empty) wherever a node is left if its own node is lost: the calls then in
        # flight are not counted until they end, so the bound may be exceeded for that long.
        limits = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1,
                            max_concurrency=10_000)(EndpointLimits).options(
            scheduling_strategy=_on_the_head()).remote()
        self._generation = (environment, ray.put(calls.llm_calls()), limits)
        self._store = calls
        await asyncio.gather(*(self._prepare_node(node.actor, node.node_id)
                               for node in self.nodes if node.alive))
        self._collector = asyncio.create_task(self._collect_calls())

    async def _prepare_node(self, actor: Any, node_id: str) -> None:
        assert self._generation is not None
        environment, known_calls, limits = self._generation
        await actor.prepare_generation.remote(environment, known_calls, limits, node_id)

    async def generate(self, request: GenerationRequest, openapi: dict[str, Any]
                       ) -> GenerationRow:
        """Makes the generation on the node with the fewest in flight; again on another when
        that node is lost."""
        if request.service.name not in self._openapi:
            self._openapi[request.service.name] = ray.put(openapi)
        slot_failures = 0
        while True:
            alive = [node for node in self.nodes if node.alive]
            if not alive:
                raise ClusterError("every node of the Ray cluster was lost; everything "
                                   "finished is saved, rerun the same command to resume")
            node = min(alive, key=lambda n: n.generating / n.size)
            node.generating += 1
            try:
                row, calls = await node.actor.generate.remote(
                    request, self._openapi[request.service.name])
            except NODE_LOST as exc:
                self._lose(node, exc, 0)
                continue
            except ray.exceptions.RayTaskError as exc:
                if not isinstance(exc.cause, SlotsUnavailable) or slot_failures >= SLOT_RETRIES:
                    raise
                slot_failures += 1  # e.g. that node is being lost: again, where one is left
                log.info("generation %s again: %s", request.key[:12], exc.cause)
                await asyncio.sleep(min(5.0, 0.5 * 2 ** slot_failures))
                continue
            finally:
                node.generating -= 1
            self._save_calls(calls)
            node.generated += 1
            return row

    async def _collect_calls(self) -> None:
        """Keeps the answers of generations still in flight, so that a lost node's (or a
        killed run's) are not paid again."""
        while True:
            await asyncio.sleep(CALLS_COLLECTED_S)
            for node in [n for n in self.nodes if n.alive and n.generating]:
                with contextlib.suppress(*NODE_LOST):
                    self._save_calls(await node.actor.new_calls.remote())

    def _save_calls(self, calls: list[NewCall]) -> None:
        assert self._store is not None
        for key, model, response in calls:
            self._store.save_llm_call(key, model, response)

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

    async def _slot(self, node: _Node) -> None:
        while node.alive:
            item = await self._queue.get()
            if not node.alive:
                self._queue.put_nowait(item)
                return
            if item.batch.error is not None:  # its caller is gone already
                continue
            await self._run(node, item)

    async def _run(self, node: _Node, item: _Item) -> None:
        reported: set[int] = set()
        try:
            async for ref in node.actor.run.remote(item.jobs):
                report = await ref
                if report[0] == "done":
                    _, index, result = report
                    reported.add(index)
                    node.executed += 1
                    item.batch.on_done(item.jobs[index], result)
                else:
                    implementation = item.jobs[0].implementation.id
                    failure = ServiceBuildError if report[2] else ServiceStartError
                    item.batch.failures.setdefault(implementation, failure(
                        f"{report[1]} (on Ray node {node.name})"))
        except NODE_LOST as exc:
            left = [job for index, job in enumerate(item.jobs) if index not in reported]
            if left:
                self._queue.put_nowait(_Item((0, next(self._arrivals)), left, item.batch))
            self._lose(node, exc, len(left))
            if left:
                return
        except Exception as exc:  # noqa: BLE001 - a fault of ours or of on_done: the caller's
            item.batch.fail(_unwrapped(exc))
            return
        item.batch.close_chunk()

    def _lose(self, node: _Node, error: BaseException, unfinished: int) -> None:
        if node.alive:
            node.alive = False
            self.on_event(Notice(f"Ray node {node.name} was lost ({_first_line(error)}); its "
                                 f"unfinished executions run on the other nodes"))
            with contextlib.suppress(Exception):
                ray.kill(node.actor)
            if self._generation is not None:  # the calls it was making give their slots back
                self._generation[2].release_node.remote(node.node_id)
        log.info("%d executions of %s go back to the queue", unfinished, node.name)
        if not any(n.alive for n in self.nodes):
            for batch in list(self._batches):
                batch.fail(ClusterError("every node of the Ray cluster was lost; everything "
                                        "finished is saved, rerun the same command to resume"))

    async def close(self) -> None:
        background = [t for t in (self._watcher, self._collector) if t is not None]
        for task in [*self._slots, *background]:
            task.cancel()
        await asyncio.gather(*self._slots, *background, return_exceptions=True)
        self._slots = []
        self._watcher = self._collector = None
        if self._generation is not None and self._store is not None:
            for node in [n for n in self.nodes if n.alive]:  # what came in since the last time
                with contextlib.suppress(Exception):
                    self._save_calls(await asyncio.wait_for(
                        _awaitable(node.actor.new_calls.remote()), NODE_CLOSE_TIMEOUT_S))
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


def _offers_cpus(info: dict[str, Any]) -> bool:
    """A live node with CPUs (a head given none only coordinates)."""
    return bool(info.get("Alive")) and int(info.get("Resources", {}).get("CPU", 0)) >= 1


def _runner_class() -> Any:
    return ray.remote(num_cpus=0, max_restarts=0, max_concurrency=1000)(NodeRunner)


def _on_the_head() -> NodeAffinitySchedulingStrategy:
    """On the head node, the one a cluster cannot lose and go on (else the driver's)."""
    heads = [info["NodeID"] for info in ray.nodes()
             if info.get("Alive") and "node:__internal_head__" in info.get("Resources", {})]
    return NodeAffinitySchedulingStrategy(heads[0] if heads else
                                          ray.get_runtime_context().get_node_id(), soft=True)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:300] if text else type(error).__name__


def _unwrapped(error: Exception) -> Exception:
    """A restbench error raised on a node as itself: Ray wraps it in a RayTaskError whose
    message is the remote traceback, in colour."""
    if isinstance(error, ray.exceptions.RayTaskError) and isinstance(error.cause, RestbenchError):
        return error.cause
    return error
