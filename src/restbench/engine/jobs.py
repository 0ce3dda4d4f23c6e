"""Running many executions: grouped by implementation so each server starts once."""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from pathlib import Path

from restbench.engine.events import EventHandler, Notice
from restbench.errors import ServiceStartError
from restbench.execution import ExecutionResult, Executor, SandboxUnavailable
from restbench.mutation import Implementation
from restbench.serving import ServerPool

# A group of executions on one implementation is split over several server replicas only when
# each replica would still get at least this many executions.
MIN_CHUNK = 6


@dataclass(frozen=True)
class Job:
    code: str
    implementation: Implementation
    label: str
    key: str = ""
    runner: str = "pytest"  # what runs `code` (restbench.runners)


Done = Callable[[Job, ExecutionResult], None]


def _chunks(jobs: list[Job], workers: int) -> list[list[Job]]:
    parts = max(1, min(workers, len(jobs) // MIN_CHUNK))
    size = math.ceil(len(jobs) / parts)
    return [jobs[i:i + size] for i in range(0, len(jobs), size)]


async def execute_jobs(jobs: list[Job], pool: ServerPool, executor: Executor,
                       on_done: Done) -> dict[str, ServiceStartError]:
    """Runs every job after a reset of its implementation; returns the implementations that
    failed to start (by id), whose jobs were not run."""
    groups: dict[tuple[str, str], list[Job]] = {}
    for job in jobs:
        key = (job.implementation.service.name, job.implementation.id)
        groups.setdefault(key, []).append(job)
    chunks = [(replica, chunk) for group in groups.values()
              for replica, chunk in enumerate(_chunks(group, executor.size))]
    chunks.sort(key=lambda item: -len(item[1]))
    slots = asyncio.Semaphore(executor.size)
    failures: dict[str, ServiceStartError] = {}

    async def run_chunk(replica: int, chunk: list[Job]) -> None:
        implementation = chunk[0].implementation
        async with slots:
            try:
                server = await pool.start(implementation, replica)
            except ServiceStartError as exc:
                failures[implementation.id] = exc
                return
            try:
                for job in chunk:
                    try:
                        await server.reset()
                    except ServiceStartError:  # a test brought it down or made it hang
                        await pool.stop(server)
                        try:
                            server = await pool.start(implementation, replica)
                            await server.reset()
                        except ServiceStartError as exc:
                            failures[implementation.id] = exc
                            return
                    result = await executor.execute(job.code, server, name=job.label,
                                                    runner=job.runner)
                    result = replace(result, exchanges=tuple(await server.exchanges()))
                    on_done(job, result)
            finally:
                await pool.stop(server)

    await asyncio.gather(*(run_chunk(replica, chunk) for replica, chunk in chunks))
    return failures


@contextlib.asynccontextmanager
async def open_executor(workers: int | None, timeout_s: float, scratch: Path, *, sandbox: bool,
                        trusted_only: bool, on_event: EventHandler) -> AsyncIterator[Executor]:
    """The executor of a run: sandboxed unless the user opted out. Where this machine cannot
    sandbox, tests that restbench wrote itself (golden, the baselines) still run, unsandboxed,
    with a notice; anything else is refused with the one-line reason."""
    if not sandbox:
        on_event(Notice("tests run without the sandbox (--no-sandbox): a test can read your "
                        "files and environment"))
    try:
        async with Executor(workers, timeout_s, scratch, isolated=sandbox) as executor:
            yield executor
            return
    except SandboxUnavailable as exc:
        if not trusted_only:
            raise
        on_event(Notice(f"{exc}; the tests of this run are restbench's own, so they run "
                        "without it"))
    async with Executor(workers, timeout_s, scratch, isolated=False) as executor:
        yield executor
