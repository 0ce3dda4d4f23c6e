"""What one execution is (`Job`), how it runs on a reset server (`execute_on`) and reports
(`Done`), and the executor a run opens. Backends (`engine.backend`, `cluster`) decide where
and in what order jobs run."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from pathlib import Path

from restbench.engine.events import EventHandler, Notice
from restbench.execution import ExecutionResult, Executor, SandboxUnavailable
from restbench.mutation import Implementation
from restbench.mutation.apply import ORIGINAL
from restbench.serving import RunningServer

# A queue of executions on one implementation gets another server only when each would still
# get at least this many executions.
MIN_CHUNK = 6


@dataclass(frozen=True)
class Job:
    code: str
    implementation: Implementation
    label: str
    key: str = ""
    runner: str = "pytest"  # what runs `code` (restbench.runners)
    # Reset the server first even when it is fresh from its start (see engine.backend): to tell a
    # service whose `create_app` does not leave the seed state (validate's hint)
    reset_first: bool = False
    # Run on a server started for this job alone, stopped after (validate's diagnosis of a
    # golden test that failed on a server other tests had used)
    fresh_server: bool = False


Done = Callable[[Job, ExecutionResult], None]

# A test's outcome on a mutant or benign variant that is not run: on the original it passed
# without running any statement the implementation's edit changes (serving.reach).
UNREACHED_REASON = "not run: never reached"
UNREACHED_OUTPUT = ("Not run: on the original, this test passed without running any statement "
                    "this implementation's edit changes, so it would pass here too (`run` or "
                    "`validate` with --execute-all runs it anyway).")


async def execute_on(executor: Executor, server: RunningServer, job: Job) -> ExecutionResult:
    """Runs `job` on `server` (already reset), with the HTTP exchanges the server recorded and,
    on the original, the mutants the test never reached."""
    result = await executor.execute(job.code, server, name=job.label, runner=job.runner)
    unreached = tuple(await server.unreached()) if job.implementation.id == ORIGINAL else ()
    return replace(result, exchanges=tuple(await server.exchanges()), unreached=unreached)


@contextlib.asynccontextmanager
async def open_executor(workers: int | None, timeout_s: float, scratch: Path, *, sandbox: bool,
                        trusted_only: bool, on_event: EventHandler) -> AsyncIterator[Executor]:
    """The executor of a run: sandboxed unless the user opted out. Where this machine cannot
    sandbox, tests that restbench wrote itself (golden, the baselines) still run, unsandboxed,
    with a notice; anything else is refused with the one-line reason."""
    if not sandbox:
        on_event(Notice("tests run without the sandbox (--no-sandbox): a test can read your "
                        "files and environment, and a JavaScript or Postman test reaches the "
                        "service only through BASE_URL, not a hard-coded localhost:8000"))
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
