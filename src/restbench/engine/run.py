"""`restbench run`: generate tests, execute them on every implementation, score them.

Every generation and execution lands in the result store the moment it exists, under a key
derived from what determines it; a rerun of the same matrix reuses what is there, so an
interrupted run resumes and nothing is paid or counted twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import AsyncIterator, Awaitable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from restbench import __version__
from restbench.benchmark import Service, Variant
from restbench.benchmark.openapi_doc import service_openapi
from restbench.engine.backend import ExecutionBackend, GenerationBackend, open_backend
from restbench.engine.events import Advanced, EventHandler, Notice, PhaseStarted, ignore
from restbench.engine.generation import NO_MODEL, GenerationRequest, generate, release_thread
from restbench.engine.implied import IMPLIED_OUTPUT, IMPLIED_REASON, implies
from restbench.engine.jobs import UNREACHED_OUTPUT, UNREACHED_REASON, Job, open_executor
from restbench.engine.live import LiveServers
from restbench.engine.run_plan import RunConfig, RunPlan, plan_run
from restbench.engine.subsets import mutant_subsets, requirement_columns
from restbench.errors import DataError, ServiceStartError
from restbench.execution import ExecutionResult, Executor, Outcome
from restbench.generators import Generator
from restbench.llm.config import ModelEnvironment, model_environment
from restbench.mutation import Implementation, implementations_of
from restbench.mutation.apply import ORIGINAL
from restbench.plugins import source_fingerprint
from restbench.runners.setup import ToolMissing
from restbench.scoring import AggregateScore, Score, TestRecord, aggregate, score
from restbench.scratch import scratch_folder
from restbench.serving import ServerPool
from restbench.serving.databases import Database
from restbench.store import ExecutionRow, GenerationRow, ResultStore
from restbench.store.sqlite import digest

log = logging.getLogger(__name__)
ALL_SERVICES = "all"


@dataclass(frozen=True)
class ScoreRow:
    """One line of the score table: generator x model x service x variant, over repetitions."""

    generator: str
    model: str
    service: str
    variant: str
    requirements: int
    score: AggregateScore
    cost_usd: float
    input_tokens: int
    output_tokens: int
    generation_s: float
    failed_generations: int


@dataclass
class RunResult:
    rows: list[ScoreRow]
    per_requirement: list[dict[str, Any]]
    store_path: Path
    counts: dict[str, int] = field(default_factory=dict)
    refines: bool = False


@dataclass(frozen=True)
class _Cell:
    """One generation to make (or reuse), with the generator that makes it here."""

    request: GenerationRequest
    generator: Generator

    @property
    def key(self) -> str:
        return self.request.key

    @property
    def requirement_id(self) -> str:
        return self.request.requirement_id


def execution_key(code_sha: str, implementation: Implementation, timeout_s: float,
                  database: Database = Database.SQLITE, runner: str = "pytest") -> str:
    extra = () if runner == "pytest" else (runner,)  # pytest's keys stay as they were
    return digest("execution", code_sha, implementation.service.name, implementation.id,
                  implementation.fingerprint(), timeout_s, database.value, *extra)


def runner_of(generation: GenerationRow) -> str:
    return str(generation.details.get("runner", "pytest"))


GENERATIONS_IN_FLIGHT = 16  # cells generated at once; each endpoint bounds its own calls


class _Runner:
    def __init__(self, config: RunConfig, on_event: EventHandler,
                 plan: RunPlan | None = None) -> None:
        self.config = config
        self.on_event = on_event
        plan = plan if plan is not None else plan_run(config, on_event)
        self.services = plan.services
        self.database = plan.database
        self.generators = plan.generators
        self.store = ResultStore(config.output_dir / "results.sqlite3")
        self._remote: GenerationBackend | None = None
        self._cuts_told: set[tuple[str, str]] = set()
        self.counts = {"generations": 0, "generations_reused": 0, "generation_failures": 0,
                       "executions": 0, "executions_reused": 0, "executions_inferred": 0,
                       "executions_implied": 0}
        # Each cell's generation once made (None if it never is), by where it sits in the
        # matrix: a test looks up the tests that may imply its pass (engine.implied) there.
        self._made: dict[tuple[str, ...], list[asyncio.Future[GenerationRow | None]]] = {}

    def model_environment(self) -> ModelEnvironment:
        """What Ray nodes get to reach the models: nothing (no keys leave this process) unless a
        generator of the run uses a model."""
        if not any(getattr(g, "uses_model", False) for _, g in self.generators):
            return ModelEnvironment({}, {}, None)
        return model_environment(spec.args["config"] for spec, _ in self.generators
                                 if spec.args.get("config"))

    def cells(self) -> list[_Cell]:
        cells = []
        for spec, generator in self.generators:
            fingerprint = source_fingerprint(generator)
            models = (list(self.config.models) or [NO_MODEL]) \
                if getattr(generator, "uses_model", False) else [NO_MODEL]
            for model in models:
                for service in self.services:
                    for requirement in service.requirements:
                        targets = [ORIGINAL]
                        if generator.refines:
                            targets += [m.id for m in requirement.mutants]
                        for variant in self.config.variants:
                            for repetition in range(self.config.repetitions):
                                cells += [_Cell(GenerationRequest(
                                    spec, model, service, requirement.id, variant, repetition,
                                    target, self.config.fresh, fingerprint,
                                    self.config.generation_timeout_s), generator)
                                    for target in targets]
        return cells

    async def openapi_documents(self, pool: ServerPool) -> dict[str, dict[str, Any]]:
        """Each service's OpenAPI document, from a server of its original on `pool`."""
        return {service.name: await self._openapi(pool, service) for service in self.services}

    async def _openapi(self, pool: ServerPool, service: Service) -> dict[str, Any]:
        server = await pool.start(implementations_of(service)[ORIGINAL], replica=999)
        try:
            document = await service_openapi(service, server.base_url)
        finally:
            await pool.stop(server)
        _check_operations(service, document)
        if warning := _auth_unused(service, document):
            self.on_event(Notice(warning))
        return document

    async def generate(self, pool: ServerPool, executor: Executor | None,
                       documents: Awaitable[dict[str, dict[str, Any]]]) -> list[GenerationRow]:
        """Makes (or takes from the store) every cell's generation once `documents` (the
        services' OpenAPI documents) are there, handing each to `execute` as it comes;
        `executor` runs the tests a local generator runs while it generates (none with Ray,
        whose nodes generate)."""
        cells = self.cells()
        made = {}
        for cell in cells:
            made[cell.key] = asyncio.get_running_loop().create_future()
            self._made.setdefault(_place(cell.request.spec.name, cell.request), []).append(
                made[cell.key])
        openapi = await documents
        if self._remote is not None:
            await self._remote.prepare_generation(self.model_environment(), self.store)
        self.on_event(PhaseStarted("generate", len(cells)))
        rows: dict[int, GenerationRow] = {}
        pending = []
        for index, cell in enumerate(cells):
            cached = None if self.config.fresh or not getattr(cell.generator, "cacheable", True) \
                else self.store.generation(cell.key)
            if cached is None or cached.status != "ok":  # failures are tried again
                pending.append((index, cell))
                continue
            rows[index] = cached
            self.counts["generations_reused"] += 1
            self.on_event(Advanced("generate", cell.requirement_id, reused=True))
            self.execute(cached)
            made[cell.key].set_result(cached)
        in_flight = asyncio.Semaphore(GENERATIONS_IN_FLIGHT * (
            self._remote.nodes_alive if self._remote is not None else 1))

        async def make(index: int, cell: _Cell) -> None:
            try:
                async with in_flight:
                    row = await self._generate_one(cell, openapi[cell.request.service.name],
                                                   live_servers, executor)
                self.store.save_generation(row)  # at once: a killed run keeps every finished cell
                rows[index] = row
                self.counts["generations"] += 1
                self.on_event(Advanced("generate", cell.requirement_id))
                self.execute(row)
            finally:
                if not made[cell.key].done():
                    made[cell.key].set_result(rows.get(index))

        live_servers = LiveServers(pool)
        try:
            await asyncio.gather(*(make(index, cell) for index, cell in pending))
        finally:
            await live_servers.close()
            _close_generators(cell.generator for _, cell in pending)
        return [rows[index] for index in range(len(cells))]

    async def _generate_one(self, cell: _Cell, openapi: dict[str, Any],
                            live_servers: LiveServers, executor: Executor | None
                            ) -> GenerationRow:
        if self._remote is not None:
            row = await self._remote.generate(cell.request, openapi)
        else:
            assert executor is not None, "a local run opens its executor"
            row = await generate(cell.request, cell.generator, openapi, live_servers=live_servers,
                                 executor=executor, call_cache=self.store,
                                 not_the_generators=(ToolMissing,))
        if row.status != "ok":
            self.counts["generation_failures"] += 1
            model = f" ({cell.request.model})" if cell.request.model != NO_MODEL else ""
            self.on_event(Notice(f"{cell.request.spec.label()}{model} failed on "
                                 f"{row.requirement} ({_wording_and_target(row)}): {row.error}"))
        self._tell_cuts(row)
        return row

    def _tell_cuts(self, row: GenerationRow) -> None:
        """Once per generator and model: prompts were cut to fit the model's context. Each
        generation's cuts are in its details; a reader of the table should know to look."""
        cuts = _prompt_cuts(row.details)
        told = (row.generator, row.model)
        if cuts and told not in self._cuts_told:
            self._cuts_told.add(told)
            self.on_event(Notice(f"{row.generator} with model {row.model}: prompts cut to fit "
                                 f"its context, first on {row.requirement} "
                                 f"({_wording_and_target(row)}): {'; '.join(cuts)} (every "
                                 "generation's cuts: details in the generations table of "
                                 "results.sqlite3)"))

    def start_executions(self, backend: ExecutionBackend) -> None:
        """From here on every generation handed to `execute` runs at once, overlapping the
        generations still being made."""
        self._backend = backend
        self._remote = backend if isinstance(backend, GenerationBackend) else None
        self._implementations = {s.name: implementations_of(s) for s in self.services}
        self._executions: dict[str, asyncio.Future[None]] = {}  # by store key, each run once
        # By generation key: set once that test's executions on the mutants and benign variants
        # are registered in `_executions` (or it failed on the original and has none).
        self._targets_known: dict[str, asyncio.Future[None]] = {}
        self._tests: list[asyncio.Task[None]] = []
        self._execute_total = 0

    def execute(self, generation: GenerationRow) -> None:
        """Runs `generation`'s test on the original as soon as it exists; on the mutants of its
        requirement and the benign variants once it passed there."""
        if generation.status == "ok":
            self._targets_known.setdefault(generation.key,
                                           asyncio.get_running_loop().create_future())
            self._tests.append(asyncio.ensure_future(self._execute_test(generation)))

    async def executions_done(self) -> None:
        await asyncio.gather(*self._tests)

    async def cancel_executions(self) -> None:
        """Stops the executions still running (after a failure or an interruption)."""
        for task in self._tests:
            task.cancel()
        await asyncio.gather(*self._tests, return_exceptions=True)

    async def _execute_test(self, g: GenerationRow) -> None:
        known = self._targets_known[g.key]
        try:
            implementations = self._implementations[g.service]
            await self._run_targets(g, [ORIGINAL])
            original_key = execution_key(g.code_sha, implementations[ORIGINAL],
                                         self.config.timeout_s, self.database.kind, runner_of(g))
            if self.store.outcome(original_key) != Outcome.PASS.value:
                return
            service = next(s for s in self.services if s.name == g.service)
            unreached = set(self.store.unreached(original_key)) \
                if self.config.infer_unreached else set()
            stronger = await self._stronger_tests(g) if self.config.infer_unreached else []
            await self._run_targets(g, [m.id for m in service.requirement(g.requirement).mutants]
                                    + [b.id for b in service.data.benign], unreached, stronger,
                                    known)
        finally:
            if not known.done():
                known.set_result(None)

    async def _stronger_tests(self, g: GenerationRow) -> list[GenerationRow]:
        """The tests of this run whose pass implies `g`'s (engine.implied), once each has its
        executions on the mutants and benign variants registered."""
        generator = next((gen for spec, gen in self.generators if spec.name == g.generator), None)
        candidates: list[asyncio.Future[GenerationRow | None]] = []
        names = getattr(generator, "implied_by", ())
        for name in (names,) if isinstance(names, str) else names:
            candidates += self._made.get(_place(str(name), g), [])
        stronger = [row for row in await asyncio.gather(*candidates)
                    if row is not None and implies(row, g) and row.key in self._targets_known]
        await asyncio.gather(*(self._targets_known[row.key] for row in stronger))
        return stronger

    async def _run_targets(self, g: GenerationRow, targets: list[str],
                           unreached: set[str] | None = None,
                           stronger: list[GenerationRow] | None = None,
                           registered: asyncio.Future[None] | None = None) -> None:
        """Executes `g` on `targets`, each unless the store has it, another test with the same
        code already runs it there, or it is `unreached` (the original's pass is recorded), or
        a `stronger` test passes there (that pass implies `g`'s, which is recorded). Sets
        `registered` once every target's execution is known to `_executions`."""
        jobs, waits, after_stronger = [], [], []
        for target in targets:
            implementation = self._implementations[g.service][target]
            key = execution_key(g.code_sha, implementation, self.config.timeout_s,
                                self.database.kind, runner_of(g))
            if key in self._executions:
                waits.append(self._executions[key])
                continue
            self._executions[key] = asyncio.get_running_loop().create_future()
            if self._stored_outcome(key) is not None:
                self.counts["executions_reused"] += 1
                self._executions[key].set_result(None)
                continue
            if unreached and target in unreached:
                self._save_inferred(g, implementation, key)
                self._executions[key].set_result(None)
                continue
            job = Job(g.code, implementation, g.requirement, key, runner_of(g))
            their_keys = [(row, execution_key(row.code_sha, implementation,
                                              self.config.timeout_s, self.database.kind,
                                              runner_of(row))) for row in stronger or ()]
            their_keys = [(row, k) for row, k in their_keys if k in self._executions]
            if their_keys:
                after_stronger.append(self._run_unless_implied(g, job, their_keys))
            else:
                jobs.append(job)
        if registered is not None and not registered.done():
            registered.set_result(None)
        if after_stronger:
            waits.append(asyncio.gather(*after_stronger))
        if jobs:
            self._execute_total += len(jobs)
            self.on_event(PhaseStarted("execute", self._execute_total))
            try:
                await self._run(jobs, self._backend)
            finally:
                for job in jobs:
                    if not self._executions[job.key].done():
                        self._executions[job.key].set_result(None)
        if waits:
            await asyncio.gather(*waits)

    async def _run_unless_implied(self, g: GenerationRow, job: Job,
                                  their_keys: list[tuple[GenerationRow, str]]) -> None:
        """Once the stronger tests' executions on `job`'s implementation end: `g`'s pass there
        is recorded if one of them passed, else `job` runs."""
        try:
            await asyncio.gather(*(self._executions[key] for _, key in their_keys))
            passed = next((row for row, key in their_keys
                           if self.store.outcome(key) == Outcome.PASS.value), None)
            if passed is not None:
                self._save_inferred(g, job.implementation, job.key, IMPLIED_REASON,
                                    IMPLIED_OUTPUT.format(stronger=passed.generator))
                return
            self._execute_total += 1
            self.on_event(PhaseStarted("execute", self._execute_total))
            await self._run([job], self._backend)
        finally:
            if not self._executions[job.key].done():
                self._executions[job.key].set_result(None)

    def _stored_outcome(self, key: str) -> str | None:
        """The store's outcome for `key`; with --execute-all, none for an execution an earlier
        run left out as never reached or implied (it is run now)."""
        if self.config.infer_unreached:
            return self.store.outcome(key)
        row = self.store.execution(key)
        return None if row is None or row.reason in (UNREACHED_REASON, IMPLIED_REASON) \
            else row.outcome

    def _save_inferred(self, g: GenerationRow, implementation: Implementation, key: str,
                       reason: str = UNREACHED_REASON, output: str = UNREACHED_OUTPUT) -> None:
        self.store.save_execution(ExecutionRow(
            key, digest_code(g.code), implementation.service.name, implementation.id,
            implementation.fingerprint(), Outcome.PASS.value, reason, 0.0, output, [], []))
        self.counts["executions_implied" if reason == IMPLIED_REASON
                    else "executions_inferred"] += 1

    async def _run(self, jobs: list[Job], backend: ExecutionBackend) -> None:
        def save(job: Job, result: ExecutionResult) -> None:
            if result.unreached:
                self.store.save_unreached(job.key, result.unreached)
            self.store.save_execution(ExecutionRow(
                job.key, digest_code(job.code), job.implementation.service.name,
                job.implementation.id, job.implementation.fingerprint(), result.outcome.value,
                result.reason, result.duration_s, result.output,
                [t.__dict__ for t in result.tests], list(result.exchanges)))
            self.counts["executions"] += 1
            self.on_event(Advanced("execute", f"{job.label} on {job.implementation.id}"))
            done = self._executions.get(job.key)
            if done is not None and not done.done():  # what waits on this one goes on now
                done.set_result(None)

        failures = await backend.execute(jobs, save)
        if failures:
            implementation_id, error = next(iter(failures.items()))
            raise ServiceStartError(f"{implementation_id}: {error} (run 'restbench validate')")

    def records(self, generations: list[GenerationRow]) -> dict[tuple[str, ...], TestRecord]:
        implementations = {s.name: implementations_of(s) for s in self.services}
        services = {s.name: s for s in self.services}
        records = {}
        for g in generations:
            impls = implementations[g.service]

            def outcome(target: str, g: GenerationRow = g,
                        impls: dict[str, Implementation] = impls) -> Outcome | None:
                stored = self.store.outcome(execution_key(g.code_sha, impls[target],
                                                          self.config.timeout_s,
                                                          self.database.kind, runner_of(g)))
                return Outcome(stored) if stored is not None else None

            requirement = services[g.service].requirement(g.requirement)
            ok = g.status == "ok"
            records[(g.generator, g.model, g.service, g.variant, str(g.repetition),
                     g.requirement, g.target)] = TestRecord(
                requirement=g.requirement, target=g.target, generated=ok,
                original=outcome(ORIGINAL) if ok else None,
                on_mutants={m.id: o for m in requirement.mutants
                            if ok and (o := outcome(m.id)) is not None},
                on_benign={b.id: o for b in services[g.service].data.benign
                           if ok and (o := outcome(b.id)) is not None})
        return records


def _place(generator: str, cell: GenerationRow | GenerationRequest) -> tuple[str, ...]:
    """Where a generator's cell sits in the run's matrix: the same place for every generator
    that writes a test for the same requirement, wording, repetition, model and target."""
    if isinstance(cell, GenerationRequest):
        return (generator, cell.model, cell.service.name, cell.requirement_id,
                cell.variant.value, str(cell.repetition), cell.target)
    return (generator, cell.model, cell.service, cell.requirement, cell.variant,
            str(cell.repetition), cell.target)


def digest_code(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


def _score_rows(runner: _Runner, generations: list[GenerationRow]
                ) -> tuple[list[ScoreRow], list[dict[str, Any]]]:
    records = runner.records(generations)
    services = {s.name: s for s in runner.services}
    cells: dict[tuple[str, str, str], list[GenerationRow]] = {}
    for g in generations:
        cells.setdefault((g.generator, g.model, g.variant), []).append(g)
    rows, per_requirement = [], []
    for (generator, model, variant), gens in cells.items():
        scopes = [(s, [s]) for s in sorted({g.service for g in gens})]
        if len(scopes) > 1:
            scopes.append((ALL_SERVICES, [name for name, _ in scopes]))
        for scope, names in scopes:
            mutants_of = {f"{n}/{r.id}": [m.id for m in r.mutants]
                          for n in names for r in services[n].requirements}
            subsets = mutant_subsets((r for n in names for r in services[n].requirements),
                                     Variant(variant))
            by_repetition: list[Score] = []
            for repetition in range(runner.config.repetitions):
                chosen = [replace(rec, requirement=f"{key[2]}/{rec.requirement}")
                          for key, rec in records.items()
                          if key[:2] == (generator, model) and key[3] == variant
                          and key[4] == str(repetition) and key[2] in names]
                by_repetition.append(score(chosen, mutants_of, subsets))
                if scope != ALL_SERVICES:
                    for req in by_repetition[-1].requirements:
                        per_requirement.append({
                            "generator": generator, "model": model, "service": scope,
                            "variant": variant, "repetition": repetition,
                            "requirement": req.requirement.split("/", 1)[1],
                            "mutants": req.mutants, "valid": req.valid, "killed": req.killed,
                            "killed_mutants": " ".join(req.killed_mutants),
                            "mutated_killed": req.mutated_killed, **requirement_columns(req)})
            in_scope = [g for g in gens if g.service in names]
            rows.append(ScoreRow(
                generator, model, scope, variant, len(mutants_of), aggregate(by_repetition),
                sum(g.cost_usd for g in in_scope), sum(g.input_tokens for g in in_scope),
                sum(g.output_tokens for g in in_scope), sum(g.wall_s for g in in_scope),
                sum(g.status != "ok" for g in in_scope)))
    return rows, per_requirement


def _close_generators(generators: Iterable[object]) -> None:
    """Lets each generator that has a `close()` free what it kept for its generations (the
    Schemathesis baseline's drawing helper: ~90 MB held through the executions otherwise, and a
    process nobody reaped, whose CPU `time` left out)."""
    for generator in {id(g): g for g in generators}.values():  # each instance once
        release_thread(generator)
        close = getattr(generator, "close", None)
        if not callable(close):
            continue
        try:
            close()
        except Exception as exc:  # noqa: BLE001 - the generations are made and saved
            log.warning("generator %s: close() failed: %s", type(generator).__name__, exc)


def _trusted(generator: object) -> bool:
    """Only restbench's own generators may declare their tests safe to run unsandboxed."""
    return bool(getattr(generator, "trusted", False)) and \
        type(generator).__module__.startswith("restbench.generators.")


async def run_benchmark(config: RunConfig, on_event: EventHandler = ignore,
                        plan: RunPlan | None = None) -> RunResult:
    """Runs the matrix of `config`, storing and scoring it. Reuses whatever the store has.
    `plan`: `plan_run(config)` if it was made already (the command line makes it first, to
    report a bad input without importing this module)."""
    runner = _Runner(config, on_event, plan)
    run_id = runner.store.start_run(config.describe(), __version__)
    try:
        with scratch_folder("restbench-run-") as scratch:
            trusted_only = all(_trusted(g) for _, g in runner.generators)
            async with ServerPool(Path(scratch) / "servers", config.database,
                                  mark_reach=config.infer_unreached) as pool:
                # The launcher imports the first service, and the OpenAPI documents are fetched
                # from its servers, while the test workers (or the Ray nodes) start.
                pool.prepare(runner.services)
                documents = asyncio.ensure_future(runner.openapi_documents(pool))
                try:
                    async with _local_executor(config, Path(scratch) / "exec", trusted_only,
                                               on_event) as executor, \
                            open_backend(config.ray, pool, executor, database=config.database,
                                         workers=config.workers, timeout_s=config.timeout_s,
                                         sandbox=config.sandbox, trusted_only=trusted_only,
                                         on_event=on_event, mark_reach=config.infer_unreached,
                                         services=runner.services) as backend:
                        runner.start_executions(backend)
                        try:
                            generations = await runner.generate(pool, executor, documents)
                            await runner.executions_done()
                        finally:
                            await runner.cancel_executions()
                finally:
                    documents.cancel()
                    await asyncio.gather(documents, return_exceptions=True)
        rows, per_requirement = _score_rows(runner, generations)
        runner.store.finish_run(run_id)
    finally:
        runner.store.close()
    refines = any(g.refines for _, g in runner.generators)
    return RunResult(rows, per_requirement, runner.store.path, runner.counts, refines)


@contextlib.asynccontextmanager
async def _local_executor(config: RunConfig, scratch: Path, trusted_only: bool,
                          on_event: EventHandler) -> AsyncIterator[Executor | None]:
    """The test workers of a local run; none for a run on Ray, whose nodes open their own (and
    whose driver would only pay their start, ~0.8 s of CPU, on a machine that is often a node
    too)."""
    if config.ray is not None:
        yield None
        return
    async with open_executor(config.workers, config.timeout_s, scratch,
                             sandbox=config.sandbox, trusted_only=trusted_only,
                             on_event=on_event) as executor:
        yield executor


def _check_operations(service: Service, document: dict[str, Any]) -> None:
    """Every operation a requirement names is in the service's OpenAPI document: one that is
    not fails the baselines' generations and cuts a model's prompt to nothing useful, which a
    rerun would only repeat."""
    from restbench.generators.baselines.openapi import missing_operations

    if missing := missing_operations(service, document):
        raise DataError("\n".join(m.describe(service.data_file) for m in missing))


def _auth_unused(service: Service, document: dict[str, Any]) -> str | None:
    """The warning for an `auth` block that no baseline will use: the baselines send the token
    only to operations that declare `security`, and none does."""
    from restbench.generators.baselines.openapi import METHODS, Operation

    if service.data.auth is None:
        return None
    for path, item in (document.get("paths") or {}).items():
        for method, spec in (item.items() if isinstance(item, dict) else ()):
            if method in METHODS and isinstance(spec, dict) and \
                    Operation(method.upper(), path, spec).needs_auth(document):
                return None
    return (f"{service.data_file}: auth: no operation of the OpenAPI document declares "
            "`security`, so the baselines never send the login's token (declare a security "
            "scheme on the operations that need one; in FastAPI, depend on HTTPBearer or "
            "OAuth2PasswordBearer)")


def _prompt_cuts(details: dict[str, Any]) -> list[str]:
    """What a generation's prompts lost to fit (single-step's `prompt`, refine's rounds')."""
    prompts = [details.get("prompt")] + [prompt for round_ in details.get("rounds") or []
                                         if isinstance(round_, dict)
                                         for prompt in (round_.get("prompts") or {}).values()]
    found = [cut for prompt in prompts if isinstance(prompt, dict)
             for cut in prompt.get("cuts") or [] if isinstance(cut, str)]
    return list(dict.fromkeys(found))


def _wording_and_target(row: GenerationRow) -> str:
    """'precise', or 'precise, against TODO-01-M3' for a refining generator's test of a mutant:
    which of a requirement's generations failed."""
    return row.variant if row.target == ORIGINAL else f"{row.variant}, against {row.target}"
