"""The harness side of a generation: building the task a generator sees, and handing the golden
test to the one generator that is trusted with it.

A task holds plain values (strings, the OpenAPI document, login and seed facts) and two handles:
`live` (refining generators) and `call_cache`. A handle keeps only a number; what it stands for
(the server pool with every implementation, the result store) stays in a table of this module,
so nothing reachable from the task by attribute access leads to a mutant or a golden test.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from restbench.benchmark.models import Requirement, Service, Variant
from restbench.generators.base import GenerationTask, Generator, LiveService
from restbench.generators.golden import GoldenGenerator

if TYPE_CHECKING:
    from restbench.execution.outcome import ExecutionResult
    from restbench.llm.client import CallCache

_behind: dict[int, Any] = {}  # handle number -> what it stands for; harness only
_numbers = itertools.count(1)


class _Handle:
    __slots__ = ("_number",)

    def __init__(self, target: Any) -> None:
        self._number = next(_numbers)
        _behind[self._number] = target

    def _target(self) -> Any:
        try:
            return _behind[self._number]
        except KeyError:
            raise RuntimeError("this handle belongs to a finished generation") from None

    def release(self) -> None:
        _behind.pop(self._number, None)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} #{self._number}>"


class LiveHandle(_Handle):
    """`task.live`: runs a draft against the implementation the task targets."""

    __slots__ = ()

    async def execute(self, code: str, runner: str = "pytest") -> ExecutionResult:
        live: LiveService = self._target()
        return await live.execute(code, runner)


class CallCacheHandle(_Handle):
    """`task.call_cache`: model answers only, not the rest of the result store."""

    __slots__ = ()

    def llm_call(self, key: str) -> dict[str, Any] | None:
        cache: CallCache = self._target()
        return cache.llm_call(key)

    def save_llm_call(self, key: str, model: str, response: dict[str, Any]) -> None:
        cache: CallCache = self._target()
        cache.save_llm_call(key, model, response)


@contextmanager
def make_task(service: Service, requirement: Requirement, variant: Variant,
              openapi: dict[str, Any], base_url: str, *, model: str | None = None,
              repetition: int = 0, target: str = "original", live: LiveService | None = None,
              call_cache: CallCache | None = None,
              fresh_calls: bool = False) -> Iterator[GenerationTask]:
    """The task for one generation; its handles stop working when the block ends."""
    handles: list[_Handle] = []
    live_handle = cache_handle = None
    if live is not None:
        live_handle = LiveHandle(live)
        handles.append(live_handle)
    if call_cache is not None:
        cache_handle = CallCacheHandle(call_cache)
        handles.append(cache_handle)
    try:
        yield GenerationTask(
            service_name=service.name, requirement_id=requirement.id, variant=variant,
            requirement_text=requirement.text(variant), operations=tuple(requirement.operations),
            openapi=openapi, base_url=base_url, auth=service.data.auth, seed=service.data.seed,
            model=model, repetition=repetition, target=target, live=live_handle,
            call_cache=cache_handle, fresh_calls=fresh_calls)
    finally:
        for handle in handles:
            handle.release()


def produce(generator: Generator, task: GenerationTask, golden: Path) -> Any:
    """What `generator` makes for `task`. Only restbench's own golden generator (not a subclass)
    is given the golden test, from the harness; every other generator sees the task alone."""
    if type(generator) is GoldenGenerator:
        return generator.from_golden(golden)
    return generator.generate(task)
