"""One node's share of a run: a Ray actor with its own server pool and sandboxed executor.

Nothing here imports Ray: the driver wraps `NodeRunner` with `ray.remote` and places one on each
node. The driver sends chunks of jobs that share one implementation; the node runs them on its
own `LocalBackend` (engine.backend), exactly as a local run would: its lanes, resets, restarts
after a test brought a server down, and warm servers kept across chunks.

Generations run here too (`generate`), with the driver's model environment (`prepare_generation`):
its endpoint variables and keys, its config files, the answers its store already has, and the
cluster's endpoint limits. Every new model answer is kept until the driver collects it
(`new_calls`), which it does at the end of each generation and every second in between.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from restbench.benchmark import Service
from restbench.cluster.limits import ClusterSlots, SlotsUnavailable
from restbench.engine.backend import LocalBackend
from restbench.engine.events import Event, Notice
from restbench.engine.generation import GenerationRequest, generate, release_thread
from restbench.engine.jobs import Job, open_executor
from restbench.engine.live import LiveServers
from restbench.errors import ServiceBuildError
from restbench.execution import ExecutionResult, Executor
from restbench.generators import Generator, GeneratorSpec
from restbench.generators.registry import load_generator
from restbench.llm.client import share_endpoint_slots
from restbench.llm.config import CONFIG_ENV, ModelEnvironment
from restbench.scratch import scratch_folder
from restbench.serving import ServerPool
from restbench.serving.databases import DatabaseChoice
from restbench.store import GenerationRow

# A model answer made here: (cache key, model name, response), as the store saves it.
NewCall = tuple[str, str, dict[str, Any]]


class NodeCalls:
    """The call cache of this node's generations: the driver's stored answers, and the new ones,
    kept until the driver has them."""

    def __init__(self, known: dict[str, dict[str, Any]]) -> None:
        self.known = known
        self.new: list[NewCall] = []

    def llm_call(self, key: str) -> dict[str, Any] | None:
        return self.known.get(key)

    def save_llm_call(self, key: str, model: str, response: dict[str, Any]) -> None:
        self.known[key] = response
        self.new.append((key, model, response))


# What `run` yields for each job: ("done", index in the chunk, result), or once, when the
# implementation cannot start: ("failed", reason, whether its build failed); the chunk's later
# jobs then do not run.
Report = tuple[str, int, ExecutionResult] | tuple[str, str]


class NodeRunner:
    def __init__(self, database: DatabaseChoice | str, workers: int, timeout_s: float,
                 sandbox: bool, trusted_only: bool, mark_reach: bool = False) -> None:
        self.database = database
        self.mark_reach = mark_reach
        self.workers = workers
        self.timeout_s = timeout_s
        self.sandbox = sandbox
        self.trusted_only = trusted_only
        self._stack = contextlib.AsyncExitStack()
        self._pool: ServerPool | None = None
        self._executor: Executor | None = None
        self._backend: LocalBackend | None = None
        self._scratch: Path | None = None
        self._calls = NodeCalls({})
        self._config_files: dict[str, str] = {}  # the driver's path -> this node's copy
        self._generators: dict[str, Generator] = {}
        self._live: LiveServers | None = None

    async def start(self, services: Sequence[Service] = ()) -> dict[str, Any]:
        """Opens the pool, whose launcher imports the first of `services` meanwhile (as a local
        run's does), and pre-warms the executor's workers; returns this node's host name, its
        number of slots and the notices a local run would have printed."""
        notices: list[str] = []

        def keep(event: Event) -> None:
            if isinstance(event, Notice):
                notices.append(event.message)

        scratch: Path = self._stack.enter_context(scratch_folder("restbench-node-"))
        self._scratch = scratch
        self._pool = await self._stack.enter_async_context(
            ServerPool(scratch / "servers", self.database, mark_reach=self.mark_reach))
        self._pool.prepare(services)
        self._executor = await self._stack.enter_async_context(open_executor(
            self.workers, self.timeout_s, scratch / "exec", sandbox=self.sandbox,
            trusted_only=self.trusted_only, on_event=keep))
        self._backend = await self._stack.enter_async_context(
            LocalBackend(self._pool, self._executor))
        return {"host": socket.gethostname(), "size": self._executor.size, "notices": notices}

    async def run(self, jobs: list[Job]) -> AsyncIterator[Report]:
        """Runs `jobs` on this node's `LocalBackend` (the same lanes, resets and warm servers
        as a local run), reporting each as it ends."""
        assert self._backend is not None
        reports: asyncio.Queue[Report] = asyncio.Queue()

        def done(job: Job, result: ExecutionResult) -> None:
            reports.put_nowait(("done", int(job.key), result))

        # Numbered, since equal jobs may come in one chunk; the key is the driver's business.
        running = asyncio.ensure_future(self._backend.execute(
            [replace(job, key=str(index)) for index, job in enumerate(jobs)], done))
        try:
            while not running.done():
                next_report = asyncio.ensure_future(reports.get())
                await asyncio.wait({next_report, running}, return_when=asyncio.FIRST_COMPLETED)
                if next_report.done():
                    yield next_report.result()
                else:
                    next_report.cancel()  # not started: it took nothing from the queue
            while not reports.empty():
                yield reports.get_nowait()
            for error in running.result().values():
                yield ("failed", str(error), isinstance(error, ServiceBuildError))
        finally:
            running.cancel()

    async def prepare_generation(self, environment: ModelEnvironment,
                                 known_calls: dict[str, dict[str, Any]], limits: Any,
                                 node: str) -> None:
        """Makes this node reach the models as the driver does, with the cluster's limits."""
        assert self._scratch is not None and self._pool is not None
        folder = self._scratch / "models"
        folder.mkdir(exist_ok=True)
        for number, (path, text) in enumerate(sorted(environment.files.items())):
            copy = folder / f"{number}-{Path(path).name}"
            copy.write_text(text, encoding="utf-8")
            self._config_files[path] = str(copy)
        os.environ.update(environment.variables)
        if environment.config_file in self._config_files:
            os.environ[CONFIG_ENV] = self._config_files[environment.config_file]
        else:
            os.environ.pop(CONFIG_ENV, None)
        self._calls = NodeCalls(known_calls)  # this node's own copy, from the object store
        share_endpoint_slots(ClusterSlots(limits, node))
        self._live = LiveServers(self._pool)

    def _generator(self, spec: GeneratorSpec) -> Generator:
        """The node's own instance of the generator `spec` names; a config file given by
        argument is this node's copy of the driver's."""
        label = repr((spec.name, sorted(spec.args.items())))
        if label not in self._generators:
            args = dict(spec.args)
            if args.get("config") in self._config_files:
                args["config"] = self._config_files[args["config"]]
            self._generators[label] = load_generator(GeneratorSpec(spec.name, args))
        return self._generators[label]

    async def generate(self, request: GenerationRequest, openapi: dict[str, Any]
                       ) -> tuple[GenerationRow, list[NewCall]]:
        """One generation, as a local run makes it; with the model answers not yet collected."""
        assert self._executor is not None and self._live is not None, "prepare_generation first"
        row = await generate(request, self._generator(request.spec), openapi,
                             live_servers=self._live, executor=self._executor,
                             call_cache=self._calls, not_the_generators=(SlotsUnavailable,))
        return row, self.new_calls()

    def new_calls(self) -> list[NewCall]:
        calls, self._calls.new = self._calls.new, []
        return calls

    async def close(self) -> None:
        for generator in self._generators.values():
            release_thread(generator)
        if self._live is not None:
            await self._live.close()
        await self._stack.aclose()
