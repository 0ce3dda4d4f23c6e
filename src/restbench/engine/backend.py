"""Where executions happen: this machine, or (through `restbench.cluster`) a cluster.

`run` and `validate` hand batches of jobs to a backend and learn each result through a
callback. A backend may be called again before an earlier batch finishes; it decides where
each execution runs and keeps servers warm across batches where it can. Generations, the
store and the scores stay with the caller, so every backend yields the same rows.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Protocol

from restbench.engine.events import EventHandler
from restbench.engine.jobs import Done, Job, execute_jobs
from restbench.errors import ServiceStartError
from restbench.execution import Executor
from restbench.serving import ServerPool
from restbench.serving.databases import DatabaseChoice


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


class LocalBackend:
    """Executions on this machine, with its server pool and sandboxed executor."""

    def __init__(self, pool: ServerPool, executor: Executor) -> None:
        self.pool = pool
        self.executor = executor

    @property
    def size(self) -> int:
        return self.executor.size

    async def execute(self, jobs: Sequence[Job], on_done: Done) -> dict[str, ServiceStartError]:
        return await execute_jobs(list(jobs), self.pool, self.executor, on_done)


@contextlib.asynccontextmanager
async def open_backend(ray: str | None, pool: ServerPool, executor: Executor, *,
                       database: DatabaseChoice | str, workers: int | None, timeout_s: float,
                       sandbox: bool, trusted_only: bool,
                       on_event: EventHandler) -> AsyncIterator[ExecutionBackend]:
    """This machine's backend, or with `ray` (a cluster address or `auto`) a `RayBackend` whose
    nodes each open their own pool and executor with these settings."""
    if ray is None:
        yield LocalBackend(pool, executor)
        return
    from restbench.cluster import open_ray_backend  # Ray is imported only when asked for

    async with open_ray_backend(ray, database=database, workers=workers, timeout_s=timeout_s,
                                sandbox=sandbox, trusted_only=trusted_only,
                                on_event=on_event) as backend:
        yield backend
