"""`restbench run`: generate tests, execute them on every implementation, score them.

Every generation and execution lands in the result store the moment it exists, under a key
derived from what determines it; a rerun of the same matrix reuses what is there, so an
interrupted run resumes and nothing is paid or counted twice.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import logging
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from restbench import __version__
from restbench.benchmark import Service, Variant, resolve_services
from restbench.benchmark.openapi_doc import service_openapi
from restbench.benchmark.selection import select_requirements
from restbench.engine.backend import ExecutionBackend, LocalBackend
from restbench.engine.events import Advanced, EventHandler, Notice, PhaseStarted, ignore
from restbench.engine.jobs import Job, open_executor
from restbench.engine.live import LiveServers, LiveService
from restbench.engine.scratch import scratch_folder
from restbench.engine.subsets import mutant_subsets, requirement_columns
from restbench.errors import RestbenchError, ServiceStartError
from restbench.execution import ExecutionResult, Executor, Outcome
from restbench.execution.executor import CANONICAL_BASE_URL
from restbench.generators import (
    GeneratedTest,
    GenerationFailure,
    Generator,
    GeneratorSpec,
)
from restbench.generators.registry import load_generator
from restbench.generators.tasks import make_task, produce
from restbench.llm import ModelSettings, check_credentials, queue_wait
from restbench.mutation import Implementation, check_edits, implementations_of
from restbench.mutation.apply import ORIGINAL
from restbench.scoring import AggregateScore, Score, TestRecord, aggregate, score
from restbench.serving import ServerPool
from restbench.serving.databases import Database, DatabaseChoice, require_support
from restbench.store import ExecutionRow, GenerationRow, ResultStore
from restbench.store.sqlite import digest

log = logging.getLogger(__name__)
NO_MODEL = "-"
ALL_SERVICES = "all"


@dataclass(frozen=True)
class RunConfig:
    services: tuple[str, ...] = ()  # empty: every built-in service
    variants: tuple[Variant, ...] = (Variant.PRECISE, Variant.VAGUE)
    generators: tuple[GeneratorSpec, ...] = (GeneratorSpec("golden"),)
    models: tuple[str, ...] = ()
    repetitions: int = 1
    output_dir: Path = Path("restbench-results")
    workers: int | None = None
    timeout_s: float = 30.0
    fresh: bool = False  # regenerate even what the store already has
    database: str = "sqlite"  # or "postgres", or a postgresql:// URL of the user's server
    sandbox: bool = True  # False: --no-sandbox, generated tests run without isolation
    requirements: tuple[str, ...] = ()  # ids or globs (FS-1*); empty: every requirement

    def describe(self) -> dict[str, Any]:
        return {"services": list(self.services), "variants": [v.value for v in self.variants],
                "generators": [{"name": g.name, "args": g.args} for g in self.generators],
                "models": list(self.models), "repetitions": self.repetitions,
                "timeout_s": self.timeout_s, "database": DatabaseChoice.parse(self.database).describe(),
                "requirements": list(self.requirements)}


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
    """One generation to make (or reuse)."""

    spec: GeneratorSpec
    generator: Generator
    model: str
    service: Service
    requirement_id: str
    variant: Variant
    repetition: int
    target: str

    @property
    def key(self) -> str:
        return digest("generation", self.spec.name, self.spec.args, self.model,
                      self.service.name, self.requirement_id, self.variant.value,
                      self.repetition, self.target)


def execution_key(code_sha: str, implementation: Implementation, timeout_s: float,
                  database: Database = Database.SQLITE, runner: str = "pytest") -> str:
    extra = () if runner == "pytest" else (runner,)  # pytest's keys stay as they were
    return digest("execution", code_sha, implementation.service.name, implementation.id,
                  implementation.fingerprint(), timeout_s, database.value, *extra)


def runner_of(generation: GenerationRow) -> str:
    return str(generation.details.get("runner", "pytest"))


GENERATIONS_IN_FLIGHT = 16  # cells generated at once; each endpoint bounds its own calls


class _Runner:
    def __init__(self, config: RunConfig, on_event: EventHandler) -> None:
        self.config = config
        self.on_event = on_event
        self.services = resolve_services(config.services)
        self.database = DatabaseChoice.parse(config.database)
        self._choose_services_for_database()
        self.services = select_requirements(self.services, config.requirements)
        for service in self.services:
            check_edits(service)
        self.generators = [(spec, load_generator(spec)) for spec in config.generators]
        self._check_models()
        self.store = ResultStore(config.output_dir / "results.sqlite3")
        self.counts = {"generations": 0, "generations_reused": 0, "generation_failures": 0,
                       "executions": 0, "executions_reused": 0}

    def _choose_services_for_database(self) -> None:
        """A service named on purpose must support the database; by default, those that do run."""
        if self.config.services:
            for service in self.services:
                require_support(service, self.database)
            return
        supported = [s for s in self.services if self.database.kind in s.data.databases]
        left_out = [s.name for s in self.services if s not in supported]
        if not supported:
            raise RestbenchError(f"no built-in service runs on {self.database.kind.value}")
        if left_out:
            self.on_event(Notice(f"left out (no {self.database.kind.value} support): "
                                 + ", ".join(left_out)))
        self.services = supported

    def _check_models(self) -> None:
        """Model names and credentials are checked before anything runs, not one cell at a time."""
        users = [spec.name for spec, g in self.generators if getattr(g, "uses_model", False)]
        if not users:
            return
        if not self.config.models:
            raise RestbenchError(f"generator '{users[0]}' needs a model: pass --models NAME[,NAME]")
        settings = ModelSettings.load()
        extra = [m for _, g in self.generators for m in getattr(g, "extra_models", ())]
        for model in [*self.config.models, *extra]:
            check_credentials(settings.resolve(model))

    def cells(self) -> list[_Cell]:
        cells = []
        for spec, generator in self.generators:
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
                                cells += [_Cell(spec, generator, model, service, requirement.id,
                                                variant, repetition, target)
                                          for target in targets]
        return cells

    async def _openapi(self, pool: ServerPool, service: Service) -> dict[str, Any]:
        server = await pool.start(implementations_of(service)[ORIGINAL], replica=999)
        try:
            return await service_openapi(service, server.base_url)
        finally:
            await pool.stop(server)

    async def generate(self, pool: ServerPool, executor: Executor) -> list[GenerationRow]:
        cells = self.cells()
        openapi = {s.name: await self._openapi(pool, s) for s in self.services}
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
        in_flight = asyncio.Semaphore(GENERATIONS_IN_FLIGHT)

        async def make(index: int, cell: _Cell) -> None:
            async with in_flight:
                row = await self._generate_one(cell, openapi[cell.service.name], live_servers,
                                               executor)
            self.store.save_generation(row)  # at once: a killed run keeps every finished cell
            rows[index] = row
            self.counts["generations"] += 1
            self.on_event(Advanced("generate", cell.requirement_id))

        live_servers = LiveServers(pool)
        try:
            await asyncio.gather(*(make(index, cell) for index, cell in pending))
        finally:
            await live_servers.close()
        return [rows[index] for index in range(len(cells))]

    async def _generate_one(self, cell: _Cell, openapi: dict[str, Any],
                            live_servers: LiveServers, executor: Executor) -> GenerationRow:
        live = None
        if cell.generator.refines:
            live = LiveService(live_servers, executor,
                                implementations_of(cell.service)[cell.target])
        requirement = cell.service.requirement(cell.requirement_id)
        started = time.perf_counter()
        waited: list[float] = []  # for a free slot at the model's endpoint: not generation time
        queue_wait.set(waited)
        status, error, test = "ok", "", GeneratedTest("")
        try:
            with make_task(cell.service, requirement, cell.variant, openapi, CANONICAL_BASE_URL,
                           model=None if cell.model == NO_MODEL else cell.model,
                           repetition=cell.repetition, target=cell.target, live=live,
                           call_cache=self.store, fresh_calls=self.config.fresh) as task:
                produced = produce(cell.generator, task, cell.service.golden_path(requirement))
                test = await produced if inspect.isawaitable(produced) else produced
            if not isinstance(test, GeneratedTest):
                raise TypeError(f"generate() returned {type(test).__name__}, not GeneratedTest")
        except (KeyboardInterrupt, asyncio.CancelledError):
            raise
        except Exception as exc:  # noqa: BLE001 - a failed generation is a result, not a crash
            if isinstance(exc, GenerationFailure):  # it failed, but it was paid for
                test = GeneratedTest("", exc.cost, exc.details)
                error = str(exc)
            else:
                error = f"{type(exc).__name__}: {exc}"
            status, error = "error", error.splitlines()[0][:500] if error else type(exc).__name__
            self.counts["generation_failures"] += 1
            self.on_event(Notice(f"{cell.spec.label()} failed on {cell.requirement_id} "
                                 f"({cell.variant.value}): {error}"))
        return GenerationRow(cell.key, cell.spec.label(),
                             {"name": cell.spec.name, "args": cell.spec.args}, cell.model,
                             cell.service.name, cell.requirement_id, cell.variant.value,
                             cell.repetition, cell.target, status, error, test.code,
                             test.cost.usd, test.cost.input_tokens, test.cost.output_tokens,
                             round(time.perf_counter() - started - sum(waited), 4),
                             {**test.details, **({"runner": test.runner}
                                                 if test.runner != "pytest" else {})})

    async def execute(self, generations: list[GenerationRow], backend: ExecutionBackend) -> None:
        """Original first; mutants and benign variants only for tests valid on the original."""
        implementations = {s.name: implementations_of(s) for s in self.services}
        services = {s.name: s for s in self.services}
        usable = [g for g in generations if g.status == "ok"]
        first = self._pending(usable, lambda g: [ORIGINAL], implementations)
        self.on_event(PhaseStarted("execute", len(first)))
        await self._run(first, backend)

        def others(g: GenerationRow) -> list[str]:
            original = self.store.execution(execution_key(
                g.code_sha, implementations[g.service][ORIGINAL], self.config.timeout_s,
                self.database.kind, runner_of(g)))
            if original is None or original.outcome != Outcome.PASS.value:
                return []
            mutants = [m.id for m in services[g.service].requirement(g.requirement).mutants]
            return mutants + [b.id for b in services[g.service].data.benign]

        second = self._pending(usable, others, implementations)
        self.on_event(PhaseStarted("execute", len(first) + len(second)))
        await self._run(second, backend)

    def _pending(self, generations: list[GenerationRow], targets: Any,
                 implementations: dict[str, dict[str, Implementation]]) -> list[Job]:
        jobs, seen = [], set()
        for g in generations:
            for target in targets(g):
                implementation = implementations[g.service][target]
                key = execution_key(g.code_sha, implementation, self.config.timeout_s,
                                    self.database.kind, runner_of(g))
                if key in seen:
                    continue
                seen.add(key)
                if self.store.execution(key) is not None:
                    self.counts["executions_reused"] += 1
                    continue
                jobs.append(Job(g.code, implementation, g.requirement, key, runner_of(g)))
        return jobs

    async def _run(self, jobs: list[Job], backend: ExecutionBackend) -> None:
        def save(job: Job, result: ExecutionResult) -> None:
            self.store.save_execution(ExecutionRow(
                job.key, digest_code(job.code), job.implementation.service.name,
                job.implementation.id, job.implementation.fingerprint(), result.outcome.value,
                result.reason, result.duration_s, result.output,
                [t.__dict__ for t in result.tests], list(result.exchanges)))
            self.counts["executions"] += 1
            self.on_event(Advanced("execute", f"{job.label} on {job.implementation.id}"))

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
                row = self.store.execution(execution_key(g.code_sha, impls[target],
                                                         self.config.timeout_s,
                                                         self.database.kind, runner_of(g)))
                return Outcome(row.outcome) if row else None

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


def _trusted(generator: object) -> bool:
    """Only restbench's own generators may declare their tests safe to run unsandboxed."""
    return bool(getattr(generator, "trusted", False)) and \
        type(generator).__module__.startswith("restbench.generators.")


async def run_benchmark(config: RunConfig, on_event: EventHandler = ignore) -> RunResult:
    """Runs the matrix of `config`, storing and scoring it. Reuses whatever the store has."""
    if config.repetitions < 1:
        raise RestbenchError(f"repetitions must be at least 1, not {config.repetitions}")
    runner = _Runner(config, on_event)
    run_id = runner.store.start_run(config.describe(), __version__)
    try:
        with scratch_folder("restbench-run-") as scratch:
            trusted_only = all(_trusted(g) for _, g in runner.generators)
            async with ServerPool(Path(scratch) / "servers", config.database) as pool, \
                    open_executor(config.workers, config.timeout_s, Path(scratch) / "exec",
                                  sandbox=config.sandbox, trusted_only=trusted_only,
                                  on_event=on_event) as executor:
                generations = await runner.generate(pool, executor)
                await runner.execute(generations, LocalBackend(pool, executor))
        rows, per_requirement = _score_rows(runner, generations)
        runner.store.finish_run(run_id)
    finally:
        runner.store.close()
    refines = any(g.refines for _, g in runner.generators)
    return RunResult(rows, per_requirement, runner.store.path, runner.counts, refines)

