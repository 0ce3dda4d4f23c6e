"""One generation: a generator asked for the test of one requirement, wording, repetition and
target, with the result as the store keeps it. The same code runs in a local run and on a Ray
node (`restbench.cluster.node`), so a generation gives the same row wherever it runs."""

from __future__ import annotations

import asyncio
import inspect
import time
from dataclasses import dataclass
from typing import Any

from restbench.benchmark import Service, Variant
from restbench.engine.live import LiveServers, LiveService
from restbench.execution import Executor
from restbench.execution.executor import CANONICAL_BASE_URL
from restbench.generators import GeneratedTest, GenerationFailure, Generator, GeneratorSpec
from restbench.generators.tasks import make_task, produce
from restbench.llm import queue_wait
from restbench.llm.client import CallCache
from restbench.mutation import implementations_of
from restbench.store import GenerationRow
from restbench.store.sqlite import digest

NO_MODEL = "-"


@dataclass(frozen=True)
class GenerationRequest:
    """What one generation is, in plain values (it travels to Ray nodes as it is)."""

    spec: GeneratorSpec
    model: str  # NO_MODEL for generators without one
    service: Service
    requirement_id: str
    variant: Variant
    repetition: int
    target: str
    fresh_calls: bool = False  # ask the model again even where the call cache has the answer

    @property
    def key(self) -> str:
        return digest("generation", self.spec.name, self.spec.args, self.model,
                      self.service.name, self.requirement_id, self.variant.value,
                      self.repetition, self.target)


async def generate(request: GenerationRequest, generator: Generator, openapi: dict[str, Any], *,
                   live_servers: LiveServers, executor: Executor, call_cache: CallCache | None,
                   not_the_generators: tuple[type[BaseException], ...] = ()) -> GenerationRow:
    """Runs `generator` for `request`. A failed generation is a row with status "error" (and
    what it cost, when the generator says), not an exception; except for the exceptions
    `not_the_generators` names (failures of the machinery around it), which propagate."""
    live = None
    if generator.refines:
        live = LiveService(live_servers, executor,
                           implementations_of(request.service)[request.target])
    requirement = request.service.requirement(request.requirement_id)
    started = time.perf_counter()
    waited: list[float] = []  # for a free slot at the model's endpoint: not generation time
    queue_wait.set(waited)
    status, error, test = "ok", "", GeneratedTest("")
    try:
        with make_task(request.service, requirement, request.variant, openapi,
                       CANONICAL_BASE_URL,
                       model=None if request.model == NO_MODEL else request.model,
                       repetition=request.repetition, target=request.target, live=live,
                       call_cache=call_cache, fresh_calls=request.fresh_calls) as task:
            produced = produce(generator, task, request.service.golden_path(requirement))
            test = await produced if inspect.isawaitable(produced) else produced
        if not isinstance(test, GeneratedTest):
            raise TypeError(f"generate() returned {type(test).__name__}, not GeneratedTest")
    except (KeyboardInterrupt, asyncio.CancelledError):
        raise
    except Exception as exc:  # a failed generation is a result, not a crash
        if isinstance(exc, not_the_generators):
            raise
        if isinstance(exc, GenerationFailure):  # it failed, but it was paid for
            test = GeneratedTest("", exc.cost, exc.details)
            error = str(exc)
        else:
            test = GeneratedTest("")  # what the generator returned, if anything, is not a test
            error = f"{type(exc).__name__}: {exc}"
        status, error = "error", error.splitlines()[0][:500] if error else type(exc).__name__
    return GenerationRow(request.key, request.spec.label(),
                         {"name": request.spec.name, "args": request.spec.args}, request.model,
                         request.service.name, request.requirement_id, request.variant.value,
                         request.repetition, request.target, status, error, test.code,
                         test.cost.usd, test.cost.input_tokens, test.cost.output_tokens,
                         round(time.perf_counter() - started - sum(waited), 4),
                         {**test.details, **({"runner": test.runner}
                                             if test.runner != "pytest" else {})})
