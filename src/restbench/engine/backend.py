"""Where executions happen: this machine, or (through `restbench.cluster`) a cluster.

`run` and `validate` hand batches of jobs to a backend and learn each result through a
callback. A backend may be called again before an earlier batch finishes; it decides where
each execution runs and keeps servers warm across batches where it can. Generations, the
store and the scores stay with the caller, so every backend yields the same rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from restbench.engine.jobs import Done, Job, execute_jobs
from restbench.errors import ServiceStartError
from restbench.execution import Executor
from restbench.serving import ServerPool


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
