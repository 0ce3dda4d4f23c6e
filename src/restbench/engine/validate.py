"""`restbench validate`: is the benchmark data of a service sound?

For every requirement: its golden test passes on the original, kills each of its mutants, and
passes on every benign variant; every mutant and benign variant applies and starts.

A golden test that passed on the original without running any statement a benign variant's edit
changes passes on that variant too (serving.reach: the same requests meet the same code and
state), so that pass is recorded without running it, as `run` does; `execute_all` runs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from restbench.benchmark.models import Service
from restbench.engine.backend import ExecutionBackend, LocalBackend
from restbench.engine.events import Advanced, Event, EventHandler, PhaseStarted, ignore
from restbench.engine.jobs import UNREACHED_OUTPUT, UNREACHED_REASON, Job, open_executor
from restbench.engine.validate_document import check_document, original_document
from restbench.errors import ServiceBuildError, ServiceStartError
from restbench.execution import ExecutionResult, Outcome
from restbench.mutation import Implementation, implementations_of
from restbench.mutation.apply import ORIGINAL, broken_edits
from restbench.runners.base import named_test_file
from restbench.scratch import scratch_folder
from restbench.serving import ServerPool
from restbench.serving.databases import DatabaseChoice, require_support
from restbench.wording import counted

NOT_JUDGED = "its runs on the mutants and benign variants were not judged"


@dataclass
class RequirementCheck:
    requirement: str
    mutants: list[str]
    golden: Outcome | None = None
    golden_reason: str = ""
    # The mutants its golden test did not pass on; they count as killed only if the test is
    # valid (see `kills`).
    failed_on: list[str] = field(default_factory=list)
    golden_problem: str = ""  # its golden test does not pass on the original: why
    broken: list[str] = field(default_factory=list)  # its mutants whose edit does not apply
    # What its runs on the mutants and benign variants found wrong (see `judged`)
    variant_problems: list[str] = field(default_factory=list)
    # Its mutants whose server did not start (their problem is the service's: it names the
    # error and where, and shows as its own line)
    not_started: list[str] = field(default_factory=list)
    not_built: list[str] = field(default_factory=list)  # the same, for a failed build
    # Its operations the service's OpenAPI document does not have
    document_problems: list[str] = field(default_factory=list)

    @property
    def judged(self) -> bool:
        """Whether its runs on the mutants and benign variants say anything about them: not
        when its golden test does not pass on the original, where an invalid test kills nothing
        and fails on a benign variant as it did there."""
        return self.golden is Outcome.PASS or self.golden is None

    @property
    def killed(self) -> list[str]:
        """The mutants its golden test kills: none if the test is invalid."""
        return self.failed_on if self.golden is Outcome.PASS else []

    @property
    def problems(self) -> list[str]:
        if not self.judged:
            return [f"{self.golden_problem}; {NOT_JUDGED}", *self.broken,
                    *self.document_problems]
        return [*([self.golden_problem] if self.golden_problem else []), *self.broken,
                *self.variant_problems, *self.document_problems]

    @property
    def ok(self) -> bool:
        return not self.problems and not self.not_started and not self.not_built and \
            self.golden is Outcome.PASS


@dataclass
class ValidationReport:
    service: str
    checks: list[RequirementCheck]
    benign: int
    executions: int
    wall_s: float
    service_problems: list[str] = field(default_factory=list)
    database: str = "sqlite"
    # (requirement, implementation id) -> outcome of the golden test there
    outcomes: dict[tuple[str, str], str] = field(default_factory=dict)
    # Passes on benign variants recorded without running: the test never reached their edit.
    not_run: int = 0
    # What is worth fixing but no problem (answers the OpenAPI document does not declare)
    notes: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        return self.service_problems + [p for c in self.checks for p in c.problems]

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def mutants(self) -> int:
        return sum(len(c.mutants) for c in self.checks)

    def summary(self) -> str:
        verdict = "all sound" if self.ok else counted(len(self.problems), "problem")
        per_execution = self.wall_s / self.executions * 1000 if self.executions else 0.0
        not_run = f", {self.not_run} not run: never reached" if self.not_run else ""
        return (f"{self.service}: {counted(len(self.checks), 'requirement')}, "
                f"{counted(self.mutants, 'mutant')}, "
                f"{counted(self.benign, 'benign variant')}: {verdict} "
                f"({counted(self.executions, 'execution')} in {self.wall_s:.1f} s, "
                f"{per_execution:.0f} ms each{not_run}, on {self.database})")


def _applicable(service: Service) -> tuple[dict[str, Implementation], dict[str, str]]:
    broken = broken_edits(service)
    usable = {id_: implementation for id_, implementation in implementations_of(service).items()
              if id_ not in broken}
    return usable, broken


@contextlib.asynccontextmanager
async def open_validation_backend(*, workers: int | None = None, timeout_s: float = 30.0,
                                  database: DatabaseChoice | str = "sqlite",
                                  sandbox: bool = True, ray: str | None = None,
                                  on_event: EventHandler = ignore,
                                  services: Sequence[Service] = (),
                                  mark_reach: bool = True,
                                  ) -> AsyncIterator[ExecutionBackend]:
    """The servers and test workers that validate runs on (`database`: `sqlite`, `postgres` or a
    PostgreSQL URL; `ray`: an address or `auto`, to run on that Ray cluster's nodes). Opened once
    for several services, its launcher, workers and warm-ups are paid once; given the
    `services`, the launcher starts while the workers do. With `mark_reach`, the original's
    servers tell which edits each test never reached (what `execute_all=False` needs)."""
    database = DatabaseChoice.parse(database)
    with scratch_folder("restbench-validate-") as scratch:
        if ray is not None:
            from restbench.cluster import open_ray_backend  # Ray is imported only when asked for

            async with open_ray_backend(ray, database=database, workers=workers,
                                        timeout_s=timeout_s, sandbox=sandbox, trusted_only=True,
                                        on_event=on_event, mark_reach=mark_reach,
                                        services=services) as backend:
                yield backend
        else:
            async with ServerPool(Path(scratch) / "servers", database,
                                  mark_reach=mark_reach) as pool:
                pool.prepare(services)
                async with open_executor(workers, timeout_s, Path(scratch) / "exec",
                                         sandbox=sandbox, trusted_only=True,
                                         on_event=on_event) as executor, \
                        LocalBackend(pool, executor) as local:
                    yield local


async def validate_service(service: Service, *, workers: int | None = None,
                           timeout_s: float = 30.0, database: DatabaseChoice | str = "sqlite",
                           sandbox: bool = True, ray: str | None = None,
                           on_event: EventHandler = ignore,
                           backend: ExecutionBackend | None = None,
                           execute_all: bool = False) -> ValidationReport:
    """Runs every golden test on the original, its mutants and the benign variants, with every
    server on `database` (`sqlite`, `postgres` or a PostgreSQL URL); with `ray` (an address or
    `auto`) on the nodes of that Ray cluster. With `backend` (from `open_validation_backend`,
    opened with the same `database`), on that one; the other options then only name the
    database. A benign variant's run waits for the original's, and is not made where that one
    passed without reaching the variant's edit (its pass is recorded), unless `execute_all`."""
    database = DatabaseChoice.parse(database)
    require_support(service, database)
    started = time.perf_counter()
    usable, broken = _applicable(service)
    checks = {r.id: RequirementCheck(r.id, [m.id for m in r.mutants]) for r in service.requirements}
    benign_ids = [b.id for b in service.data.benign]
    outcomes: dict[tuple[str, str], str] = {}
    golden_exchanges: dict[str, tuple[dict[str, Any], ...]] = {}  # on the original
    jobs: list[Job] = []
    for requirement in service.requirements:
        code = service.golden_code(requirement)
        checks[requirement.id].broken += [broken[m.id] for m in requirement.mutants
                                          if m.id in broken]
        if (syntax := _syntax_error(service.golden_path(requirement), code)) is not None:
            # Not run: pytest would say only "collection error", without the file or line.
            checks[requirement.id].golden = Outcome.ERROR
            checks[requirement.id].golden_problem = f"{requirement.id}: golden test {syntax}"
            continue
        targets = [ORIGINAL, *(m.id for m in requirement.mutants), *benign_ids]
        jobs += [Job(code, usable[t], requirement.id) for t in targets if t in usable]
    plan = _Plan(jobs, execute_all)

    def record(job: Job, result: ExecutionResult) -> None:
        check = checks[job.label]
        outcomes[(job.label, job.implementation.id)] = result.outcome.value
        kind = job.implementation.kind
        if kind == ORIGINAL:
            check.golden, check.golden_reason = result.outcome, result.reason
            golden_exchanges[job.label] = result.exchanges
            if result.outcome is not Outcome.PASS:
                reason = _in_user_terms(result.reason, job.label,
                                        service.requirement(job.label).golden)
                check.golden_problem = (f"{job.label}: golden test does not pass on the "
                                        f"original ({result.outcome.value}: {reason})")
        elif kind == "mutant":
            if result.outcome is Outcome.PASS:
                check.variant_problems.append(f"{job.label}: golden test does not kill mutant "
                                              f"{job.implementation.id}")
            else:
                check.failed_on.append(job.implementation.id)
        elif result.outcome is not Outcome.PASS:
            check.variant_problems.append(f"{job.label}: golden test fails on benign variant "
                                          f"{job.implementation.id} ({result.reason})")
        on_event(Advanced("execute", f"{job.label} on {job.implementation.id}"))

    on_event(PhaseStarted("execute", len(jobs)))
    if backend is not None:
        failures, document = await _execute_and_read_document(backend, service, plan, record,
                                                              checks, database)
    else:
        async with open_validation_backend(workers=workers, timeout_s=timeout_s,
                                           database=database, sandbox=sandbox, ray=ray,
                                           on_event=on_event, services=[service],
                                           mark_reach=not execute_all) as own:
            failures, document = await _execute_and_read_document(own, service, plan, record,
                                                                  checks, database)
    found = check_document(service, document, golden_exchanges)
    for requirement, problems in found.by_requirement.items():
        checks[requirement].document_problems += problems
    service_problems = [f"{service.name}: {broken[b]}" for b in benign_ids if b in broken]
    service_problems += found.problems
    service_problems += _start_problems(service, failures, checks)
    storage = "its own storage" if service.manifest is not None and \
        service.manifest.own_storage else database.describe()
    return ValidationReport(service.name, list(checks.values()), len(benign_ids),
                            len(outcomes) - plan.not_run, time.perf_counter() - started,
                            service_problems, storage, outcomes, plan.not_run, found.notes)


async def _execute_and_read_document(
        backend: ExecutionBackend, service: Service, plan: _Plan,
        record: Callable[[Job, ExecutionResult], None], checks: dict[str, RequirementCheck],
        database: DatabaseChoice
) -> tuple[dict[str, ServiceStartError], dict[str, Any] | str | None]:
    """The executions, and meanwhile the reading of the original's OpenAPI document."""
    reading = asyncio.ensure_future(original_document(service, backend, database))
    try:
        failures = await _execute_and_diagnose(backend, service, plan, record, checks)
        return failures, await reading
    finally:
        reading.cancel()
        await asyncio.gather(reading, return_exceptions=True)


def _in_user_terms(reason: str, label: str, golden: str) -> str:
    """A reason naming the service's golden file where it names the sandbox's copy (the
    executor runs a test named after its label as test_<label>.py), and without pytest's advice
    about its own -v, which the user cannot pass."""
    if reason == "no test ran":
        return f"no test ran: {golden} has no test function (named test_...)"
    copy = f"{named_test_file(label, '.py')}::"
    return reason.replace(copy, f"{golden}::").replace("\n  Use -v to get more diff", "") \
        .removesuffix("Use -v to get more diff").rstrip()


def _syntax_error(path: Path, code: str) -> str | None:
    """`FILE:LINE: SyntaxError: ...` for a golden pytest file that does not compile."""
    if path.suffix != ".py":
        return None
    try:
        compile(code, str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"{path}:{exc.lineno}: SyntaxError: {exc.msg}"
    return None


def _start_problems(service: Service, failures: dict[str, ServiceStartError],
                    checks: dict[str, RequirementCheck]) -> list[str]:
    """The service's problems of the implementations that did not start, one each; a mutant's
    requirement notes it too. Where the original did not start, the others (the original with
    an edit) would fail the same way, and are not tried once it has: counted, not listed."""
    if ORIGINAL in failures:
        others = len(failures) - 1
        return [_named(service, ORIGINAL, failures[ORIGINAL])
                + (f" (so its {counted(others, 'mutant or benign variant', 'mutants and benign variants')}"
                   " did not run either)" if others else "")]
    requirement_of = {m.id: r.id for r in service.requirements for m in r.mutants}
    for implementation, error in failures.items():
        if implementation in requirement_of:
            check = checks[requirement_of[implementation]]
            (check.not_built if isinstance(error, ServiceBuildError)
             else check.not_started).append(implementation)
    return [_named(service, implementation, error) for implementation, error in failures.items()]


def _named(service: Service, implementation: str, error: ServiceStartError) -> str:
    """`error`'s message, led by the service and implementation unless it names them already
    (a server's start failure does: `todo TODO-01-M1 did not start: ...`)."""
    name = f"{service.name} {implementation}"
    message = str(error)
    return message if message.startswith((f"{name} ", f"{name}:")) else f"{name}: {message}"


class _Plan:
    """A service's jobs, in two parts: those that run at once (on the original and the mutants,
    or every job with `execute_all`), and each requirement's jobs on the benign variants, held
    until the original's outcome of its golden test tells which of them need running."""

    def __init__(self, jobs: list[Job], execute_all: bool) -> None:
        self.first: list[Job] = []
        self.held: dict[str, list[Job]] = {}
        for job in jobs:
            if execute_all or job.implementation.kind != "benign":
                self.first.append(job)
            else:
                self.held.setdefault(job.label, []).append(job)
        self.not_run = 0

    def release(self, requirement: str, original: ExecutionResult | None,
                record: Callable[[Job, ExecutionResult], None]) -> list[Job]:
        """The held jobs of `requirement` that must run, given the original's `original` result
        (None: it has none); the others' passes are recorded."""
        unreached = set(original.unreached) \
            if original is not None and original.outcome is Outcome.PASS else set()
        to_run = []
        for job in self.held.pop(requirement, []):
            if job.implementation.id in unreached:
                self.not_run += 1
                record(job, ExecutionResult(Outcome.PASS, 0.0, UNREACHED_OUTPUT,
                                            UNREACHED_REASON))
            else:
                to_run.append(job)
        return to_run


async def _execute_and_diagnose(backend: ExecutionBackend, service: Service, plan: _Plan,
                                record: Callable[[Job, ExecutionResult], None],
                                checks: dict[str, RequirementCheck]
                                ) -> dict[str, ServiceStartError]:
    """Runs the `plan`'s jobs, each requirement's benign ones once its original's ended; then
    each golden test that did not pass on the original goes to `_diagnose`."""
    failed: set[str] = set()  # the requirements whose golden test did not pass on the original
    released: list[asyncio.Future[dict[str, ServiceStartError]]] = []

    def run_released(requirement: str, original: ExecutionResult | None) -> None:
        to_run = plan.release(requirement, original, note)
        if to_run:
            released.append(asyncio.ensure_future(backend.execute(to_run, note)))

    def note(job: Job, result: ExecutionResult) -> None:
        record(job, result)
        if job.implementation.id == ORIGINAL:
            if result.outcome is not Outcome.PASS:
                failed.add(job.label)
            run_released(job.label, result)

    try:
        failures = dict(await backend.execute(plan.first, note))
        for requirement in list(plan.held):  # its original did not start: no outcome to go by
            run_released(requirement, None)
        for batch in released:
            failures.update(await batch)
    finally:
        for batch in released:
            batch.cancel()
    if failed:
        await _diagnose(backend, service, [job for job in plan.first
                                           if job.implementation.id == ORIGINAL
                                           and job.label in failed], checks)
    return failures


async def _diagnose(backend: ExecutionBackend, service: Service, jobs: list[Job],
                    checks: dict[str, RequirementCheck]) -> None:
    """Each golden test that failed on the original runs again on a new server, as it is and
    (a Python service, whose new server is in its seed state without a reset) after a reset
    there. Which of those pass points at the service's reset or its create_app, as a hint on
    the test's problem (a flaky test passes too, hence "if it always does"); these runs count
    in no outcome."""
    python = service.manifest is None  # another language's server is reset before each test
    passed: dict[tuple[str, bool], bool] = {}

    def seen(job: Job, result: ExecutionResult) -> None:
        passed[(job.label, job.reset_first)] = result.outcome is Outcome.PASS

    await backend.execute([replace(job, fresh_server=True, reset_first=reset)
                           for job in jobs for reset in ((False, True) if python else (False,))],
                          seen)
    reset_by = (f"{service.name}'s reset" if python
                else f"{service.name}'s reset ([reset] of service.toml)")
    for job in jobs:
        alone = passed.get((job.label, False), False)
        after_reset = passed.get((job.label, True), alone) if python else alone
        if alone and after_reset:
            hint = (f"alone on a new server it passed: if it always does, the tests run before it "
                    f"on the same server left state that {reset_by} does not undo")
        elif after_reset:
            hint = (f"on a new server it passed after a reset and failed without one: if it "
                    f"always does, {service.name}'s create_app does not leave the seed state "
                    "that reset gives, which a new server's first test sees")
        elif alone:
            hint = (f"on a new server it passed, and failed after a reset there: if it always "
                    f"does, {reset_by} does not give the seed state that create_app leaves")
        else:
            continue
        checks[job.label].golden_problem += f"; {hint} (docs/service-contract.md)"


async def validate_in_turn(services: Sequence[Service], backend: ExecutionBackend, *,
                           database: DatabaseChoice | str = "sqlite",
                           on_event: Callable[[Service], EventHandler] = lambda _: ignore,
                           execute_all: bool = False) -> AsyncIterator[ValidationReport]:
    """Validates `services` on one backend (from `open_validation_backend`), one after the
    other; yields each one's report, in order, as soon as it is complete. A service's jobs go
    in once the last jobs of the one before are all running, so that the lanes that finish
    first start on the next service instead of waiting for the slowest (three services: ~1 s
    less idle time on 2 cores). `on_event(service)` handles that service's events."""
    started: list[asyncio.Task[ValidationReport]] = []
    try:
        previous: asyncio.Task[ValidationReport] | None = None
        for service in services:
            last_running = asyncio.Event()
            task = asyncio.ensure_future(validate_service(
                service, database=database, backend=backend, execute_all=execute_all,
                on_event=_watching_the_last_jobs(on_event(service), backend.size, last_running)))
            started.append(task)
            if previous is not None:
                yield await previous
            waiting = asyncio.ensure_future(last_running.wait())
            try:
                await asyncio.wait([task, waiting], return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiting.cancel()
            previous = task
        if previous is not None:
            yield await previous
    finally:
        for task in started:
            task.cancel()
        await asyncio.gather(*started, return_exceptions=True)


def _watching_the_last_jobs(handle: EventHandler, lanes: int,
                            last_running: asyncio.Event) -> EventHandler:
    """`handle`, and `last_running` set once no more jobs wait than `lanes` can run at once."""
    total: int | None = None
    done = 0

    def watch(event: Event) -> None:
        nonlocal total, done
        if isinstance(event, PhaseStarted) and event.phase == "execute":
            total = event.total
        elif isinstance(event, Advanced) and event.phase == "execute":
            done += 1
        if total is not None and total - done <= lanes:
            last_running.set()
        handle(event)

    return watch
