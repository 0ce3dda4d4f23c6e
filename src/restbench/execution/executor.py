"""Harness-side pool of pre-warmed test workers (see worker.py)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sys
import tempfile
from itertools import count
from pathlib import Path
from typing import Any, Self
from urllib.parse import urlsplit

from restbench.execution.environment import clean_environment
from restbench.execution.outcome import ExecutionResult, Outcome, TestReport, classify

CANONICAL_BASE_URL = "http://localhost:8000"
DEFAULT_TIMEOUT_S = 30.0
# How long past its own time limit a worker may take to answer before it is replaced.
WORKER_GRACE_S = 15.0


class _Worker:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def ask(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write((json.dumps(request) + "\n").encode())
        await self.process.stdin.drain()
        line = await asyncio.wait_for(self.process.stdout.readline(), timeout)
        if not line:
            raise RuntimeError("test worker exited")
        return dict(json.loads(line))

    async def close(self) -> None:
        if self.process.returncode is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                await asyncio.wait_for(self.process.wait(), 5)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()


class Executor:
    """Runs test files against running services, `workers` at a time.

    Each execution gets a fresh scratch folder, a clean environment whose BASE_URL is the
    implementation's real URL, and a time limit; requests to the canonical base URL given to
    generators are redirected to that implementation inside the sandbox.
    """

    def __init__(self, workers: int | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
                 scratch_root: Path | None = None) -> None:
        self.size = max(1, workers or os.cpu_count() or 1)
        self.timeout_s = timeout_s
        self._scratch_root = scratch_root
        self._owns_scratch = scratch_root is None
        self._idle: asyncio.Queue[_Worker] = asyncio.Queue()
        self._all: list[_Worker] = []
        self._numbers = count()

    async def __aenter__(self) -> Self:
        if self._scratch_root is None:
            self._scratch_root = Path(tempfile.mkdtemp(prefix="restbench-exec-"))
        self._scratch_root.mkdir(parents=True, exist_ok=True)
        workers = await asyncio.gather(*(self._spawn() for _ in range(self.size)))
        for worker in workers:
            self._idle.put_nowait(worker)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await asyncio.gather(*(w.close() for w in self._all), return_exceptions=True)
        if self._owns_scratch and self._scratch_root is not None:
            shutil.rmtree(self._scratch_root, ignore_errors=True)

    async def _spawn(self) -> _Worker:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "restbench.execution.worker",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            env=clean_environment(), start_new_session=True)
        assert process.stdout is not None
        if not await process.stdout.readline():
            raise RuntimeError("a test worker failed to start")
        worker = _Worker(process)
        self._all.append(worker)
        return worker

    async def execute(self, code: str, base_url: str, *, name: str = "generated") -> ExecutionResult:
        """Runs `code` (a pytest file) against the implementation listening at `base_url`."""
        assert self._scratch_root is not None, "use 'async with Executor()'"
        workdir = self._scratch_root / f"exec-{next(self._numbers)}"
        workdir.mkdir()
        test_file = workdir / f"test_{re.sub(r'[^A-Za-z0-9_]', '_', name)}.py"
        test_file.write_text(code, encoding="utf-8")
        request = {
            "workdir": str(workdir), "test_file": str(test_file), "timeout_s": self.timeout_s,
            "canonical_port": urlsplit(CANONICAL_BASE_URL).port,
            "actual_port": urlsplit(base_url).port,
            "env": clean_environment(BASE_URL=base_url, HOME=str(workdir), TMPDIR=str(workdir)),
        }
        worker = await self._idle.get()
        try:
            answer = await worker.ask(request, self.timeout_s + WORKER_GRACE_S)
        except (TimeoutError, RuntimeError, OSError) as exc:
            self._all.remove(worker)
            worker.process.kill()
            worker = await self._spawn()
            return ExecutionResult(Outcome.ERROR, self.timeout_s, reason=f"worker failed: {exc!r}")
        finally:
            self._idle.put_nowait(worker)
            shutil.rmtree(workdir, ignore_errors=True)
        tests = [TestReport(**t) for t in answer["tests"]]
        outcome, reason = classify(tests, answer["collect_errors"], answer["exit_code"],
                                   answer["timed_out"])
        return ExecutionResult(outcome, round(answer["duration_s"], 4), answer["output"], reason,
                               tuple(tests))
