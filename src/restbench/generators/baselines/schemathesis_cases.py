"""The requests of a `schemathesis` baseline test, drawn once when the test is written.

Schemathesis draws each operation's requests with Hypothesis, derandomized: the same document,
operations and settings give the same requests wherever they are drawn, and which of them a test
sends never depends on the answers (no shrinking; a failure ends the operation's draws). So the
generator draws them here, once per test, and writes them into the file, which sends and checks
them without drawing again. The draws were ~45% of the CPU of every execution of such a test
(the test runs on the original, its requirement's mutants and the benign variants).

The draws run in a helper process of their own: they take 30-150 ms of CPU per test, which would
stall the harness's event loop, and Hypothesis keeps process-wide state (the constants of the
"local" modules it has seen) that must be the same for every draw.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import hashlib
import json
import multiprocessing
import signal
import sys
import threading
from concurrent.futures.process import BrokenProcessPool
from typing import Any

# The seed of every draw. The tests used to draw in the sandbox with `derandomize=True`, which
# seeds Hypothesis from the digest of the drawing function's source; that function was the same in
# every test file and its digest is this number. Keeping it keeps the requests (and so every
# outcome) of earlier versions.
SEED = 26006423746474240798931010119876679846420407179056585072511314854163128997601658406041277971069214538973030552248134

DrawnCase = dict[str, Any]  # the keyword arguments of `APIOperation.Case`


def draw_cases(document: dict[str, Any], operations: list[tuple[str, str]],
               path_parameters: dict[str, Any], examples: int) -> list[list[DrawnCase]]:
    """For each (method, path) of `operations`, the requests Schemathesis generates (positive
    mode, `examples` at most), in the order it generates them."""
    import schemathesis
    from hypothesis import HealthCheck, Phase, given, seed, settings

    _forget_local_modules()
    schema = schemathesis.openapi.from_dict(document)
    drawn_per_operation = []
    for method, path in operations:
        known = {k: v for k, v in path_parameters.items() if "{" + k + "}" in path}
        strategy = schema[path][method].as_strategy(path_parameters=known or None)
        drawn: list[DrawnCase] = []

        @seed(SEED)
        @settings(max_examples=examples, derandomize=True, database=None, deadline=None,
                  phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck),
                  print_blob=False)
        @given(case=strategy)
        def record(case: Any) -> None:
            drawn.append(_plain(case))  # noqa: B023 - called at once

        record()
        drawn_per_operation.append(drawn)
    return drawn_per_operation


def _plain(case: Any) -> DrawnCase:
    from schemathesis.core import NOT_SET

    plain: DrawnCase = {}
    for name in ("path_parameters", "headers", "cookies", "query", "multipart_content_types"):
        value = getattr(case, name, None)
        if value:
            plain[name] = dict(value)
    if case.body is not NOT_SET:
        plain["body"] = case.body
    if case.media_type is not None:
        plain["media_type"] = case.media_type
    return copy.deepcopy(plain)


def _forget_local_modules() -> None:
    """Hypothesis also draws values from the constants of the user's own ("local") modules it
    finds loaded. In a test process none counts (the test file's name excludes it; the worker
    marks its own modules as seen, see execution.schemathesis_warm_up), so none may count here:
    every module loaded so far is marked as seen (the helper process is new, so nothing is in
    the pool yet, and what the draws import is installed code)."""
    try:
        from hypothesis.internal.conjecture import providers

        providers._seen_modules.update(id(module) for module in list(sys.modules.values()))
        providers._sys_modules_len = len(sys.modules)
    except (ImportError, AttributeError):
        pass


def _helper_start() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the harness's to handle
    import schemathesis  # noqa: F401 - before the first draw, off its clock


class CaseDrawer:
    """Draws in one helper process (started on first use), each distinct draw once. A draw that
    failed is tried again when asked for again, in a new helper if the last one died."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._draws: dict[str, concurrent.futures.Future[list[list[DrawnCase]]]] = {}

    def draw(self, document: dict[str, Any], operations: list[tuple[str, str]],
             path_parameters: dict[str, Any], examples: int
             ) -> concurrent.futures.Future[list[list[DrawnCase]]]:
        key = hashlib.sha256(json.dumps([document, operations, path_parameters, examples],
                                        sort_keys=True, default=str).encode()).hexdigest()
        with self._lock:
            known = self._draws.get(key)
            if known is not None and not (known.done() and known.exception() is not None):
                return known
            arguments = (document, operations, path_parameters, examples)
            try:
                future = self._helper().submit(draw_cases, *arguments)
            except BrokenProcessPool:  # the helper died (killed, out of memory): a new one
                self._pool = None
                future = self._helper().submit(draw_cases, *arguments)
            self._draws[key] = future
            return future

    def _helper(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._pool is None:
            self._pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                initializer=_helper_start)
        return self._pool

    async def draw_async(self, *args: Any) -> list[list[DrawnCase]]:
        return await asyncio.wrap_future(self.draw(*args))

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
            self._draws.clear()
