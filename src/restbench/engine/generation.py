"""One generation: a generator asked for the test of one requirement, wording, repetition and
target, with the result as the store keeps it. The same code runs in a local run and on a Ray
node (`restbench.cluster.node`), so a generation gives the same row wherever it runs."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import json
import math
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from restbench.benchmark import Service, Variant
from restbench.engine.live import LiveServers, LiveService
from restbench.errors import RestbenchError
from restbench.execution import Executor
from restbench.execution.executor import CANONICAL_BASE_URL
from restbench.generators import Cost, GeneratedTest, GenerationFailure, Generator, GeneratorSpec
from restbench.generators.base import oversized_file
from restbench.generators.tasks import make_task, produce
from restbench.llm import ChatResult, WaitLedger, answers_seen, queue_wait
from restbench.llm.client import CallCache, spent
from restbench.mutation import implementations_of
from restbench.runners import load_runner
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
    # A digest of the generator's source file (plugins.source_fingerprint), for generators outside
    # restbench: a generation that an edited generator made is not reused. "" for restbench's own.
    code_fingerprint: str = ""
    # The most one generation may take (--generation-timeout), not counting its waits for a
    # free model slot or for the generator's earlier calls; None: no limit. Not in the key.
    timeout_s: float | None = None

    @property
    def key(self) -> str:
        return digest("generation", self.spec.name, self.spec.args, self.model,
                      self.service.name, self.requirement_id, self.variant.value,
                      self.repetition, self.target,
                      *((self.code_fingerprint,) if self.code_fingerprint else ()))


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
    limit = asyncio.timeout(None)
    waited = _Deadline(limit)  # for a free model slot, for earlier calls: not generation time
    queue_wait.set(waited)
    seen: list[ChatResult] = []  # the model's answers, for what a generation out of time paid
    answers_seen.set(seen)
    status, error, test = "ok", "", GeneratedTest("")
    try:
        with make_task(request.service, requirement, request.variant, openapi,
                       CANONICAL_BASE_URL,
                       model=None if request.model == NO_MODEL else request.model,
                       repetition=request.repetition, target=request.target, live=live,
                       call_cache=call_cache, fresh_calls=request.fresh_calls) as task:
            golden = request.service.golden_path(requirement)
            async with limit:
                if request.timeout_s is not None:
                    limit.reschedule(asyncio.get_running_loop().time() + request.timeout_s)
                test = await _produced(generator, task, golden, waited)
        if problem := _not_a_test(test):
            # A test whose cost is in order (too big, say) was still paid for.
            raise GenerationFailure(f"TypeError: generate() returned {problem}", _paid(test))
    except (KeyboardInterrupt, asyncio.CancelledError):
        raise
    except (Exception, SystemExit) as exc:  # a failed generation is a result, not a crash
        if isinstance(exc, not_the_generators):
            raise
        if limit.expired():
            usd, usage = spent(seen)
            test = GeneratedTest("", Cost(usd, usage.input_tokens, usage.output_tokens))
            error = (f"no test within the {request.timeout_s:g} s a generation may take "
                     "(--generation-timeout)")
        elif isinstance(exc, GenerationFailure):  # it failed, but it was paid for
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
                         round(time.perf_counter() - started - waited.total, 4),
                         {**test.details, **({"runner": test.runner}
                                             if test.runner != "pytest" else {})})


async def _produced(generator: Generator, task: Any, golden: Any, waited: WaitLedger) -> Any:
    if inspect.iscoroutinefunction(generator.generate):
        produced = produce(generator, task, golden)
    else:
        produced = await _in_its_thread(generator, waited, produce, generator, task, golden)
    return await produced if inspect.isawaitable(produced) else produced


class _Deadline(WaitLedger):
    """A generation's waits that are not its own time (for a free slot at the model's endpoint,
    for its generator's earlier calls): its time limit, if it has one, stops while it waits."""

    def __init__(self, limit: asyncio.Timeout) -> None:
        super().__init__()
        self._limit = limit
        self._left: float | None = None

    def paused(self) -> None:
        deadline = self._limit.when()
        if deadline is not None and not self._limit.expired():
            self._left = deadline - asyncio.get_running_loop().time()
            self._limit.reschedule(None)

    def resumed(self) -> None:
        if self._left is not None and not self._limit.expired():
            self._limit.reschedule(asyncio.get_running_loop().time() + self._left)
        self._left = None


class _GeneratorThread:
    """The thread a plain (not async) generate() runs in: one call at a time, as it would on the
    event loop, without stopping the loop (the executions, the other generators). A daemon: a
    call still under way when the command is interrupted does not hold up its exit."""

    def __init__(self, name: str) -> None:
        self._calls: queue.SimpleQueue[tuple[Callable[[], Any], asyncio.Future[Any]] | None] = \
            queue.SimpleQueue()
        threading.Thread(target=self._serve, name=name, daemon=True).start()

    def _serve(self) -> None:
        while (item := self._calls.get()) is not None:
            call, future = item
            try:
                outcome: tuple[Any, BaseException | None] = (call(), None)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, as it was raised
                outcome = (None, exc)
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
                future.get_loop().call_soon_threadsafe(_settle, future, *outcome)

    def run(self, call: Callable[[], Any]) -> asyncio.Future[Any]:
        future = asyncio.get_running_loop().create_future()
        self._calls.put((call, future))
        return future

    def stop(self) -> None:
        self._calls.put(None)


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


_threads: dict[int, _GeneratorThread] = {}
_turns: dict[int, asyncio.Lock] = {}  # one call at a time per generator


async def _in_its_thread(generator: Generator, waited: WaitLedger,
                         function: Callable[..., Any], *args: Any) -> Any:
    """`function(*args)` in `generator`'s thread; the time it waits for the calls before it
    goes to `waited` (it is not this generation's time). A call given up on (out of time, or
    interrupted) goes on in its thread, which is left to it: the next call gets a new one."""
    turn = _turns.setdefault(id(generator), asyncio.Lock())
    with waited.waiting():
        await turn.acquire()
    try:
        thread = _threads.get(id(generator))
        if thread is None:
            thread = _threads[id(generator)] = _GeneratorThread(
                f"generator-{getattr(generator, 'name', '?')}")
        context = contextvars.copy_context()
        try:
            return await thread.run(lambda: context.run(function, *args))
        except asyncio.CancelledError:
            if _threads.get(id(generator)) is thread:
                del _threads[id(generator)]
            thread.stop()  # it ends once the call it is in returns, if ever
            raise
    finally:
        turn.release()


def release_thread(generator: object) -> None:
    """Ends the thread that `generator`'s plain generate() ran in, if any: its generations are
    made. A call still running there finishes first."""
    _turns.pop(id(generator), None)
    thread = _threads.pop(id(generator), None)
    if thread is not None:
        thread.stop()


def _not_a_test(test: object) -> str:
    """What is wrong with what a generator returned for the store to keep it; "" if nothing."""
    if not isinstance(test, GeneratedTest):
        return f"{type(test).__name__}, not GeneratedTest"
    if not isinstance(test.code, str):
        return f"a GeneratedTest whose code is {type(test.code).__name__}, not str"
    if not _is_cost(test.cost):
        return f"a GeneratedTest whose cost is {test.cost!r}, not Cost(usd, input_tokens, " \
            "output_tokens) of finite numbers, 0 or more"
    try:
        encoded = test.code.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"a GeneratedTest whose code is not text (a lone surrogate at character " \
            f"{exc.start})"
    if too_big := oversized_file(len(encoded)):
        return f"a test of {too_big}"
    if not isinstance(test.runner, str):
        return f"a GeneratedTest whose runner is {type(test.runner).__name__}, not str"
    try:
        load_runner(test.runner)
    except RestbenchError as exc:
        return f"a GeneratedTest whose runner cannot be used: {exc}"
    if not isinstance(test.details, dict):
        return f"a GeneratedTest whose details are {type(test.details).__name__}, not dict"
    try:
        json.dumps(test.details)
    except (TypeError, ValueError) as exc:
        return f"a GeneratedTest whose details cannot be stored as JSON ({exc})"
    return ""


def _is_cost(cost: object) -> bool:
    """Numbers the store can keep and sums can add: NaN, an infinity, a negative amount or a
    count past SQLite's integers crashed the run when it was stored, or printed $inf."""
    return isinstance(cost, Cost) and isinstance(cost.usd, (int, float)) \
        and not isinstance(cost.usd, bool) and math.isfinite(cost.usd) and cost.usd >= 0 \
        and all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 2**63
                for n in (cost.input_tokens, cost.output_tokens))


def _paid(test: object) -> Cost:
    """What a generator's result says it cost, when that is a cost at all."""
    cost = getattr(test, "cost", None) if isinstance(test, GeneratedTest) else None
    return cost if _is_cost(cost) else Cost()  # type: ignore[return-value]
