"""The requests of a `schemathesis` baseline test, drawn once when the test is written.

Schemathesis draws each operation's requests with Hypothesis, derandomized: the same document,
operations and settings give the same requests wherever they are drawn, and which of them a test
sends never depends on the answers (no shrinking; a failure ends the operation's draws). So the
generator draws them here, once per operation (each operation's draw is a Hypothesis run of its
own, so it does not depend on the file's other operations), and writes them into the file, which
sends and checks them without drawing again. The draws were ~45% of the CPU of every execution
of such a test (the test runs on the original, its requirement's mutants and the benign
variants).

The draws run in a helper process of their own (`python -m` this module, talking pickles over
its standard input and output): they take 30-150 ms of CPU per test, which would stall the
harness's event loop, and Hypothesis keeps process-wide state (the constants of the "local"
modules it has seen) that must be the same for every draw. A plain subprocess, not
multiprocessing's spawn, which would import the caller's main script again in the helper.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import copy
import hashlib
import json
import os
import pickle
import subprocess
import sys
import threading
import time
from typing import Any, BinaryIO

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
    """The twin of execution.schemathesis_warm_up._skip_loaded_modules_for_hypothesis (the layers
    may not import each other). Hypothesis also draws values from the constants of the user's own
    ("local") modules it finds loaded. In a test process none counts (the test file's name excludes it; the worker
    marks its own modules as seen, see execution.schemathesis_warm_up), so none may count here:
    every module loaded so far is marked as seen (the helper process is new, so nothing is in
    the pool yet, and what the draws import is installed code)."""
    try:
        from hypothesis.internal.conjecture import providers

        providers._seen_modules.update(id(module) for module in list(sys.modules.values()))
        providers._sys_modules_len = len(sys.modules)
    except (ImportError, AttributeError):
        pass


def _serve(requests: BinaryIO, answers: BinaryIO) -> None:
    """The helper's loop: (document, operations, path_parameters, examples) in, ("ok", cases)
    or ("error", reason) out, until its input closes."""
    import schemathesis  # noqa: F401 - before the first draw

    while True:
        try:
            request = pickle.load(requests)
        except EOFError:
            return
        try:
            answer: tuple[str, Any] = ("ok", draw_cases(*request))
        except Exception as exc:  # noqa: BLE001 - the generation's error, reported as such
            answer = ("error", f"{type(exc).__name__}: {exc}")
        pickle.dump(answer, answers)
        answers.flush()


def draw_key(document: dict[str, Any], operations: list[tuple[str, str]],
             path_parameters: dict[str, Any], examples: int) -> str:
    """What tells one draw from another: the same key, the same cases."""
    return hashlib.sha256(json.dumps([document, operations, path_parameters, examples],
                                     sort_keys=True, default=str).encode()).hexdigest()


class CaseDrawer:
    """Draws in one helper process (started on first use), each distinct draw once. A draw that
    failed is tried again when asked for again, in a new helper if the last one died."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # One draw at a time, in this thread, so the caller's event loop never waits on the pipe.
        self._thread = concurrent.futures.ThreadPoolExecutor(1, "schemathesis-draws")
        self._helper: subprocess.Popen[bytes] | None = None
        self._stopped = False  # the draw under way was stopped on purpose
        self._draws: dict[str, concurrent.futures.Future[list[list[DrawnCase]]]] = {}
        self._waiting: dict[concurrent.futures.Future[list[list[DrawnCase]]], int] = {}

    def draw(self, document: dict[str, Any], operations: list[tuple[str, str]],
             path_parameters: dict[str, Any], examples: int
             ) -> concurrent.futures.Future[list[list[DrawnCase]]]:
        key = draw_key(document, operations, path_parameters, examples)
        with self._lock:
            known = self._draws.get(key)
            if known is not None and not (known.done() and (known.cancelled()
                                                               or known.exception() is not None)):
                return known
            future = self._thread.submit(self._ask, (document, operations, path_parameters,
                                                     examples))
            self._draws[key] = future
            return future

    async def draw_async(self, *args: Any) -> list[list[DrawnCase]]:
        future = self.draw(*args)
        with self._lock:
            self._waiting[future] = self._waiting.get(future, 0) + 1
        try:
            return await _awaitable(future)
        except asyncio.CancelledError:
            # The generation that asked ran out of time, or the run was interrupted. When no
            # other generation waits on this draw (the other wording's asks for the same one),
            # a draw not begun is dropped and one under way (Hypothesis may take minutes for
            # many examples) is stopped, so that the draws behind it, and close(), do not wait.
            with self._lock:
                alone = self._waiting[future] == 1
            if alone and not future.cancel() and future.running():
                self._stop_draw_under_way()
            raise
        finally:
            with self._lock:
                self._waiting[future] -= 1
                if not self._waiting[future]:
                    del self._waiting[future]

    def _stop_draw_under_way(self) -> None:
        with self._lock:
            helper, self._stopped = self._helper, True
        if helper is not None:
            with contextlib.suppress(OSError):
                helper.kill()

    def _ask(self, request: tuple[Any, ...]) -> list[list[DrawnCase]]:
        self._stopped = False
        helper = self._running_helper()
        assert helper.stdin is not None and helper.stdout is not None
        try:
            pickle.dump(request, helper.stdin)
            helper.stdin.flush()
            status, value = pickle.load(helper.stdout)
        except (OSError, EOFError, pickle.UnpicklingError):
            self._stop_helper()
            if self._stopped:
                raise RuntimeError("the draw was stopped: the generation that asked for it "
                                   "ran out of time or was interrupted") from None
            raise RuntimeError("the helper process that draws Schemathesis requests exited "
                               "(it is started again for the next draw)") from None
        if status != "ok":
            raise RuntimeError(value)
        return value  # type: ignore[no-any-return]

    def _running_helper(self) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._helper is None or self._helper.poll() is not None:
                self._helper = subprocess.Popen(
                    [sys.executable, "-m", __name__, str(os.getpid())], stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                    start_new_session=True)  # Ctrl-C is the harness's to handle
            return self._helper

    def _stop_helper(self) -> None:
        helper, self._helper = self._helper, None
        if helper is not None:
            with contextlib.suppress(OSError):
                helper.kill()
            helper.wait()
            for stream in (helper.stdin, helper.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()

    def close(self) -> None:
        """Stops the helper, and a draw under way in it; draws not begun are dropped (the
        helper also stops by itself once this process has gone)."""
        with self._lock:
            for future in self._draws.values():
                future.cancel()  # only those not begun
            self._draws.clear()
        self._stop_draw_under_way()
        self._thread.submit(self._stop_helper).result()


def _awaitable(future: concurrent.futures.Future[Any]) -> asyncio.Future[Any]:
    """An asyncio future settled as `future` is. Unlike asyncio.wrap_future's, cancelling it
    leaves `future` alone (other generations may wait on the same draw), and a result that comes
    after it was cancelled, or after its loop has closed, is dropped without a warning."""
    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[Any] = loop.create_future()

    def settle() -> None:
        if waiter.done():
            return
        if future.cancelled():
            waiter.cancel()
        elif (error := future.exception()) is not None:
            waiter.set_exception(error)
        else:
            waiter.set_result(future.result())

    def on_done(_: concurrent.futures.Future[Any]) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits any more
            loop.call_soon_threadsafe(settle)

    future.add_done_callback(on_done)
    return waiter


def _exit_when_orphaned(parent: int) -> None:
    """A draw does not read the input, so the helper would not see the harness go (killed,
    say) before the draw ends, which for many examples may take hours."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


def _main() -> None:
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever else prints goes to stderr, not into the answers
    if len(sys.argv) > 1:
        threading.Thread(target=_exit_when_orphaned, args=(int(sys.argv[1]),),
                         daemon=True).start()
    _serve(sys.stdin.buffer, answers)


if __name__ == "__main__":
    _main()
