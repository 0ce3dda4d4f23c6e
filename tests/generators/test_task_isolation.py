"""A generator's task leads to no mutant, no golden test and no other wording.

Plugin generators below walk everything reachable from their task by plain attribute access
(dataclass fields, slots, __dict__, every public attribute, bound methods' __self__, closure
cells, container items) during a real run. The walk stops at modules, classes and a function's
globals: from those any Python object reaches the whole program, and gc tricks are out of scope.
"""

from __future__ import annotations

import asyncio
import types
import warnings
from pathlib import Path
from typing import Any, ClassVar

import pytest

from restbench.benchmark import resolve_services
from restbench.benchmark.models import (
    BenignVariant,
    Edit,
    Requirement,
    Service,
    ServiceData,
    Variant,
)
from restbench.engine import RunConfig, run_benchmark
from restbench.generators import GeneratedTest, GenerationTask, GeneratorSpec
from restbench.mutation import Implementation
from restbench.serving import ServerPool
from restbench.store import ResultStore

MINI = Path(__file__).parents[1] / "fixtures" / "mini"
FORBIDDEN_TYPES = (Requirement, Edit, BenignVariant, Service, ServiceData, Implementation,
                   ServerPool, ResultStore)
PRIMITIVES = (str, bytes, int, float, bool, type(None))
BOUNDARY = (type, types.ModuleType, types.BuiltinFunctionType, types.BuiltinMethodType)


def reachable(root: object) -> list[object]:
    seen: set[int] = set()
    found: list[object] = []
    stack: list[object] = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        found.append(obj)
        if isinstance(obj, (*PRIMITIVES, *BOUNDARY)):
            continue
        if isinstance(obj, dict):
            stack += [*obj.keys(), *obj.values()]
            continue
        if isinstance(obj, (list, tuple, set, frozenset)):
            stack += list(obj)
            continue
        if isinstance(obj, types.MethodType):
            stack += [obj.__self__, obj.__func__]
            continue
        if isinstance(obj, types.FunctionType):  # closures and defaults, not globals
            stack += [cell.cell_contents for cell in obj.__closure__ or ()]
            stack += list(obj.__defaults__ or ()) + list((obj.__kwdefaults__ or {}).values())
            continue
        stack += list(getattr(obj, "__dict__", {}).values())
        for cls in type(obj).__mro__:
            slots = getattr(cls, "__slots__", ())
            stack += [getattr(obj, slot) for slot in ([slots] if isinstance(slots, str) else slots)
                      if hasattr(obj, slot)]
        with warnings.catch_warnings():  # pydantic deprecates some class attributes on instances
            warnings.simplefilter("ignore")
            for name in dir(obj):
                if name.startswith("__"):
                    continue
                try:
                    stack.append(getattr(obj, name))
                except Exception:  # noqa: BLE001, S112 - a property that refuses is no leak
                    continue
    return found


def secrets_of(service: Service, requirement_id: str, variant: Variant) -> list[str]:
    """Text a generator must not be able to see for this task."""
    requirement = service.requirement(requirement_id)
    other = Variant.VAGUE if variant is Variant.PRECISE else Variant.PRECISE
    texts = [requirement.text(other), requirement.golden, str(service.golden_path(requirement)),
             service.golden_path(requirement).read_text(), str(service.root)]
    for item in [*service.mutants(), *service.data.benign]:
        texts += [item.description, item.find, item.replace]
    return [t for t in texts if len(t.strip()) >= 8]


class Peeker:
    """Records what it can reach from each task, then writes a harmless test."""

    name = "peeker"
    refines = False
    seen: ClassVar[list[tuple[GenerationTask, list[object]]]] = []

    async def generate(self, task: GenerationTask) -> GeneratedTest:
        type(self).seen.append((task, reachable(task)))
        return GeneratedTest("def test_nothing():\n    pass\n")


class RefiningPeeker(Peeker):
    """The same, as a refining generator: its task carries a live handle, which must work."""

    name = "refining-peeker"
    refines = True
    seen: ClassVar[list[tuple[GenerationTask, list[object]]]] = []
    outcomes: ClassVar[list[str]] = []

    async def generate(self, task: GenerationTask) -> GeneratedTest:
        assert task.live is not None
        result = await task.live.execute("def test_nothing():\n    pass\n")
        type(self).outcomes.append(result.outcome.value)
        return await super().generate(task)


def _leaks(task: GenerationTask, objects: list[object], service: Service) -> list[str]:
    secrets = secrets_of(service, task.requirement_id, task.variant)
    leaks = [f"{type(o).__name__} object" for o in objects if isinstance(o, FORBIDDEN_TYPES)]
    for text in (o for o in objects if isinstance(o, str)):
        leaks += [f"text {secret[:40]!r}" for secret in secrets if secret in text]
    return leaks


@pytest.mark.parametrize("generator", [Peeker, RefiningPeeker])
def test_a_plugin_generator_finds_no_mutant_golden_test_or_other_wording(
        tmp_path: Path, generator: type[Peeker]) -> None:
    generator.seen.clear()
    spec = GeneratorSpec(f"{__name__}:{generator.__name__}")
    asyncio.run(run_benchmark(RunConfig(services=(str(MINI),), generators=(spec,),
                                        output_dir=tmp_path)))
    service = resolve_services([str(MINI)])[0]
    # two requirements x two wordings, and for the refiner one task per mutant besides
    expected = 4 + (2 * len(service.mutants()) if generator.refines else 0)
    assert len(generator.seen) == expected
    for task, objects in generator.seen:
        requirement = service.requirement(task.requirement_id)
        # what a test writer may know is there...
        assert task.requirement_text == requirement.text(task.variant)
        assert task.operations == tuple(requirement.operations)
        assert task.openapi["paths"] and task.base_url.startswith("http")
        assert task.seed == service.data.seed
        # ...and nothing else
        assert _leaks(task, objects, service) == [], task.requirement_id
    if generator.refines:
        assert RefiningPeeker.outcomes and set(RefiningPeeker.outcomes) == {"pass"}
        task, _ = generator.seen[0]
        with pytest.raises(RuntimeError, match="finished generation"):
            asyncio.run(task.live.execute("def test_nothing():\n    pass\n"))  # type: ignore[union-attr]


def test_the_walk_would_find_the_old_task_s_requirement() -> None:
    """The walker is not blind: handed a requirement, as tasks used to be, it reports it."""
    service = resolve_services([str(MINI)])[0]
    objects = reachable({"requirement": service.requirements[1]})
    assert any(isinstance(o, Edit) for o in objects)
    task_like: Any = types.SimpleNamespace(requirement_id="MINI-02", variant=Variant.PRECISE)
    assert _leaks(task_like, objects, service)
