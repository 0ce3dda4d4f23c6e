"""A run's configuration, and its plan: the services, database and generators it names, loaded
and checked.

Kept apart from engine.run, whose imports (the servers, the test workers, the generation and
execution machinery) cost a command ~0.55 s of CPU: a bad input (an unknown service, a broken
requirements file, a generator that does not load, a missing key) is reported before them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from restbench.benchmark import Service, Variant, recorded_name, resolve_services
from restbench.benchmark.selection import select_requirements
from restbench.engine.events import EventHandler, Notice, ignore
from restbench.errors import RestbenchError
from restbench.generators import Generator, GeneratorSpec
from restbench.generators.registry import load_generator
from restbench.mutation import check_edits
from restbench.serving.databases import DatabaseChoice, check_database_tools, require_support
from restbench.serving.memory_folders import memory_root

_T = TypeVar("_T")


def _once(values: Iterable[_T]) -> tuple[_T, ...]:
    return tuple(dict.fromkeys(values))


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
    ray: str | None = None  # execute on this Ray cluster (an address or "auto"); see cluster
    # A test that never ran a mutant's edited code on the original gets the original's outcome
    # on it without running (serving.reach); False: --execute-all, every execution runs.
    infer_unreached: bool = True
    # The most one generation may take, its waits for model slots aside; None: no limit.
    generation_timeout_s: float | None = None

    def __post_init__(self) -> None:
        # From Python the wordings may be named as on the command line: variants=("precise",).
        # A value given twice counts once: models=("a", "a") would score model a twice and
        # count its generations and cost twice in the totals.
        object.__setattr__(self, "variants", _once(Variant(v) for v in self.variants))
        for name in ("services", "models", "requirements"):
            object.__setattr__(self, name, _once(getattr(self, name)))
        by_key: dict[tuple[str, tuple[tuple[str, str], ...]], GeneratorSpec] = {}
        for spec in self.generators:
            by_key.setdefault((spec.name, tuple(sorted(spec.args.items()))), spec)
        object.__setattr__(self, "generators", tuple(by_key.values()))

    def describe(self) -> dict[str, Any]:
        return {"services": [recorded_name(s) for s in self.services],
                "variants": [v.value for v in self.variants],
                "generators": [{"name": g.name, "args": g.args} for g in self.generators],
                "models": list(self.models), "repetitions": self.repetitions,
                "timeout_s": self.timeout_s,
                "database": DatabaseChoice.parse(self.database).describe(),
                "requirements": list(self.requirements),
                "infer_unreached": self.infer_unreached,
                "generation_timeout_s": self.generation_timeout_s}


@dataclass(frozen=True)
class RunPlan:
    """What a `RunConfig` names, loaded and checked (`plan_run`)."""

    services: list[Service]  # with only the chosen requirements
    database: DatabaseChoice
    generators: list[tuple[GeneratorSpec, Generator]]


def plan_run(config: RunConfig, on_event: EventHandler = ignore) -> RunPlan:
    """Loads and checks everything `config` names; raises RestbenchError for a bad input,
    before a run makes its store in the output folder."""
    if config.repetitions < 1:
        raise RestbenchError(f"repetitions must be at least 1, not {config.repetitions}")
    services = resolve_services(config.services)
    database = DatabaseChoice.parse(config.database)
    services = _services_for_database(config, services, database, on_event)
    check_database_tools(database)  # before the store is made in the output folder
    services = select_requirements(services, config.requirements)
    for service in services:
        check_edits(service)
    generators = [(spec, load_generator(spec)) for spec in config.generators]
    _check_models(config, generators)
    if config.ray is None:
        memory_root()  # a wrong $RESTBENCH_MEMORY_DIR ends the run before it makes a store
    return RunPlan(services, database, generators)


def _services_for_database(config: RunConfig, services: list[Service],
                           database: DatabaseChoice, on_event: EventHandler) -> list[Service]:
    """A service named on purpose must support the database; by default, those that do run."""
    if config.services:
        for service in services:
            require_support(service, database)
        return services
    supported = [s for s in services if database.kind in s.data.databases]
    left_out = [s.name for s in services if s not in supported]
    if not supported:
        raise RestbenchError(f"no built-in service runs on {database.kind.value}")
    if left_out:
        on_event(Notice(f"left out (no {database.kind.value} support): " + ", ".join(left_out)))
    return supported


def _check_models(config: RunConfig, generators: list[tuple[GeneratorSpec, Generator]]) -> None:
    """Model names and credentials are checked before anything runs, not one cell at a time."""
    users = [spec.name for spec, g in generators if getattr(g, "uses_model", False)]
    if not users:
        return
    if not config.models:
        raise RestbenchError(f"generator '{users[0]}' needs a model: pass --models NAME[,NAME]")
    from restbench.generators.llm import THROUGH_RESTBENCH_ENDPOINTS  # with httpx: ~100 ms
    from restbench.llm import ModelSettings, check_credentials

    for spec, generator in generators:
        if not isinstance(generator, THROUGH_RESTBENCH_ENDPOINTS):
            continue  # another's generator reaches its models its own way: not ours to check
        # A generator given its own model config (-a NAME.config=PATH) resolves through it.
        path = spec.args.get("config")
        settings = ModelSettings.load(Path(path) if path else None)
        for model in [*config.models, *getattr(generator, "extra_models", ())]:
            check_credentials(settings.resolve(model))
