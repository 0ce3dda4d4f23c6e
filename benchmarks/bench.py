"""What one execution costs: restbench's harness against a naive one, in one run.

Takes the first N executions of `restbench validate` for a service (each golden test on the
original, on its requirement's mutants and on the benign variants, in that order) and runs them
twice, interleaved in rounds so that both modes share the machine's load:

- naive: per execution a fresh server process (`python` imports the implementation and runs
  uvicorn) and a fresh `python -m pytest` subprocess, what a container-style harness does at best
  (no container start counted);
- normal: restbench's own path (`engine.jobs.execute_jobs`: servers forked by the launcher, one
  per implementation, reset before each execution, tests in the sandboxed pre-warmed workers).

Prints per-execution medians and 95th percentiles, the ratio, a breakdown (server start, reset,
sandbox, pytest, the test's own HTTP work as the service timed it) and the peak memory of the
whole process tree (sum of proportional set sizes, so pages shared after fork count once).

    python benchmarks/bench.py [-s todo] [-n 60] [--db sqlite|postgres] [--no-sandbox]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from restbench.benchmark import resolve_services
from restbench.engine.jobs import Job, execute_jobs
from restbench.execution import ExecutionResult, Executor, Outcome
from restbench.execution.environment import clean_environment
from restbench.mutation import Implementation, implementations_of, materialize
from restbench.mutation.apply import ORIGINAL
from restbench.serving import ServerPool
from restbench.serving.databases import DatabaseChoice, open_databases

ROUND = 10
NAIVE_SERVER = """
import sys
sys.path.insert(0, sys.argv[1])
sys.dont_write_bytecode = True
import uvicorn
from app.main import create_app
uvicorn.run(create_app(sys.argv[2]), host="127.0.0.1", port=int(sys.argv[3]),
            log_level="warning", access_log=False)
"""


def validate_jobs(service_name: str) -> list[Job]:
    service = resolve_services([service_name])[0]
    implementations = implementations_of(service)
    benign = [b.id for b in service.data.benign]
    jobs = []
    for requirement in service.requirements:
        code = service.golden_path(requirement).read_text(encoding="utf-8")
        for target in [ORIGINAL, *(m.id for m in requirement.mutants), *benign]:
            jobs.append(Job(code, implementations[target], requirement.id))
    return jobs


def _expected(job: Job) -> Outcome:
    return Outcome.FAIL if job.implementation.kind == "mutant" else Outcome.PASS


# --- memory ------------------------------------------------------------------------------------


class TreeMemory:
    """Samples the proportional set size of this process and all its descendants."""

    def __init__(self, interval_s: float = 0.05) -> None:
        self.interval_s = interval_s
        self.peak_bytes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    def reset_peak(self) -> None:
        self.peak_bytes = 0

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.peak_bytes = max(self.peak_bytes, tree_pss_bytes(os.getpid()))


def tree_pss_bytes(root: int) -> int:
    children: dict[int, list[int]] = defaultdict(list)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent = int(stat.rpartition(")")[2].split()[1])
            children[parent].append(int(entry))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
                    break
        except OSError:
            continue
    return total


# --- the two modes -----------------------------------------------------------------------------


@dataclass
class Timings:
    total: list[float] = field(default_factory=list)
    parts: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    wrong: list[str] = field(default_factory=list)
    peak_bytes: int = 0
    starts: int = 0
    switches: dict[str, int] = field(default_factory=lambda: defaultdict(int))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"naive server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.005)
    raise RuntimeError("naive server did not listen in time")


def run_naive(jobs: list[Job], scratch: Path, database: DatabaseChoice, timings: Timings) -> None:
    databases = open_databases(database)
    env = clean_environment()
    try:
        for number, job in enumerate(jobs):
            folder = scratch / f"naive-{number}"
            started = time.perf_counter()
            source = materialize(job.implementation, folder / "src")
            url = databases.create(folder, f"naive-{number}")
            port = _free_port()
            server = subprocess.Popen([sys.executable, "-c", NAIVE_SERVER, str(source), url,
                                       str(port)], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
            try:
                _wait_for_port(port, server)
                up = time.perf_counter()
                (folder / "test_generated.py").write_text(job.code, encoding="utf-8")
                done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p",
                                       "no:cacheprovider", "test_generated.py"],
                                      check=False, cwd=folder,
                                      env={**env, "BASE_URL": f"http://127.0.0.1:{port}"},
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      timeout=60)
                ended = time.perf_counter()
            finally:
                server.kill()
                server.wait()
                databases.drop(url)
            timings.total.append(ended - started)
            timings.parts["server start"].append(up - started)
            timings.parts["pytest (fresh process)"].append(ended - up)
            timings.starts += 1
            passed = done.returncode == 0
            if passed != (_expected(job) is Outcome.PASS):
                timings.wrong.append(f"naive {job.implementation.id}: pytest exit "
                                     f"{done.returncode}")
    finally:
        databases.close()


class _TimedExecutor:
    """The executor as execute_jobs sees it, timing each execution and the service's own work."""

    def __init__(self, executor: Executor, timings: Timings,
                 servers: dict[str, Any]) -> None:
        self._executor = executor
        self.size = executor.size
        self._timings = timings
        self._servers = servers

    async def execute(self, code: str, target: Any, *, name: str = "generated"
                      ) -> ExecutionResult:
        started = time.perf_counter()
        result = await self._executor.execute(code, target, name=name)
        wall = time.perf_counter() - started
        server = self._servers[target if isinstance(target, str) else target.base_url]
        self._timings.parts["sandbox"].append(max(0.0, wall - result.duration_s))
        self._timings.parts["pytest"].append(result.duration_s)
        if hasattr(server, "busy_s"):  # older restbench: no such control route
            self._timings.parts["test's HTTP work"].append(await server.busy_s())
        return result


class _TimedPool:
    """The server pool as execute_jobs sees it, timing starts and resets."""

    def __init__(self, pool: ServerPool, timings: Timings, servers: dict[str, Any]) -> None:
        self._pool = pool
        self._timings = timings
        self._servers = servers

    async def start(self, implementation: Implementation, replica: int = 0) -> Any:
        started = time.perf_counter()
        server = await self._pool.start(implementation, replica)
        self._timings.parts["server start (per start)"].append(time.perf_counter() - started)
        self._timings.parts["  its CPU time in the server"].append(
            getattr(server, "start_cpu_s", 0.0))
        self._timings.switches[getattr(server, "switch", "")] += 1
        self._timings.starts += 1
        self._servers[server.base_url] = server
        reset = server.reset

        async def timed_reset() -> None:
            began = time.perf_counter()
            await reset()
            self._timings.parts["reset"].append(time.perf_counter() - began)

        server.reset = timed_reset  # type: ignore[method-assign]
        return server

    async def stop(self, server: Any) -> None:
        await self._pool.stop(server)


async def run_normal(jobs: list[Job], pool: ServerPool, executor: Executor,
                     timings: Timings) -> None:
    servers: dict[str, Any] = {}
    finished: dict[int, float] = {}
    started = time.perf_counter()
    order = {id(job): number for number, job in enumerate(jobs)}
    last = [started]

    def done(job: Job, result: ExecutionResult) -> None:
        now = time.perf_counter()
        finished[order[id(job)]] = now - last[0]
        last[0] = now
        if result.outcome is not _expected(job):
            timings.wrong.append(f"normal {job.implementation.id}: {result.outcome.value} "
                                 f"{result.reason}")

    failures = await execute_jobs(jobs, _TimedPool(pool, timings, servers),  # type: ignore[arg-type]
                                  _TimedExecutor(executor, timings, servers),  # type: ignore[arg-type]
                                  done)
    wall = time.perf_counter() - started
    timings.wrong += [f"normal {name}: {exc}" for name, exc in failures.items()]
    # With one worker the time between two finished executions is one execution's cost,
    # its share of the server start included.
    timings.total += list(finished.values())
    timings.parts["wall per execution (throughput)"].append(wall / max(1, len(jobs)))


# --- report ------------------------------------------------------------------------------------


def _ms(values: list[float], share: float | None = None) -> str:
    if not values:
        return "-"
    if share is None:
        return f"{statistics.median(values) * 1000:.1f}"
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000:.1f}"


def report(naive: Timings, normal: Timings, count: int, args: argparse.Namespace) -> str:
    load = os.getloadavg()
    lines = [(f"restbench bench: {count} executions of `validate -s {args.service}` per mode, "
              f"db {args.db}, {'sandboxed' if args.sandbox else 'no sandbox'}, "
              f"{os.cpu_count()} CPUs, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"),
             "", f"{'per execution (ms)':<36}{'median':>10}{'p95':>10}"]
    for name, timings in (("naive", naive), ("normal", normal)):
        lines.append(f"{name + ' total':<36}{_ms(timings.total):>10}"
                     f"{_ms(timings.total, 0.95):>10}")
        for part, values in timings.parts.items():
            lines.append(f"  {part:<34}{_ms(values):>10}{_ms(values, 0.95):>10}")
        if name == "normal":
            overhead = [t - w for t, w in zip(normal.total, normal.parts["test's HTTP work"],
                                              strict=False)]
            lines.append(f"  {'harness overhead (total - HTTP)':<34}{_ms(overhead):>10}"
                         f"{_ms(overhead, 0.95):>10}")
        ways = ", ".join(f"{count} {way}" for way, count in sorted(timings.switches.items())
                         if way)
        lines.append(f"  {'server starts':<34}{timings.starts:>10}"
                     + (f"  ({ways})" if ways else ""))
        lines.append(f"  {'peak memory of the process tree':<34}"
                     f"{timings.peak_bytes / 2**20:>9.0f} MiB (PSS)")
    if naive.total and normal.total:
        ratio = statistics.median(naive.total) / statistics.median(normal.total)
        lines += ["", f"naive / normal (medians): {ratio:.1f} x"]
    wrong = naive.wrong + normal.wrong
    if wrong:
        lines += ["", f"{len(wrong)} execution(s) with an unexpected outcome:",
                  *(f"  {w}" for w in wrong[:10])]
    return "\n".join(lines)


async def main_async(args: argparse.Namespace) -> int:
    jobs = validate_jobs(args.service)[:args.count]
    database = DatabaseChoice.parse(args.db)
    naive, normal = Timings(), Timings()
    with tempfile.TemporaryDirectory(prefix="restbench-bench-") as scratch_name, \
            TreeMemory() as memory:
        scratch = Path(scratch_name)
        async with ServerPool(scratch / "servers", database) as pool, \
                Executor(1, 30, scratch / "exec", isolated=args.sandbox) as executor:
            # Warm the launcher and the executor once, outside the measurement, as a run would.
            await run_normal(jobs[:1], pool, executor, Timings())
            for begin in range(0, len(jobs), ROUND):
                chunk = jobs[begin:begin + ROUND]
                memory.reset_peak()
                await asyncio.to_thread(run_naive, chunk, scratch, database, naive)
                naive.peak_bytes = max(naive.peak_bytes, memory.peak_bytes)
                memory.reset_peak()
                await run_normal(chunk, pool, executor, normal)
                normal.peak_bytes = max(normal.peak_bytes, memory.peak_bytes)
    print(report(naive, normal, len(jobs), args))
    return 1 if naive.wrong or normal.wrong else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-s", "--service", default="todo")
    parser.add_argument("-n", "--count", type=int, default=60,
                        help="executions per mode (the first N of validate's)")
    parser.add_argument("--db", default="sqlite", help="sqlite, postgres or a postgresql:// URL")
    parser.add_argument("--no-sandbox", dest="sandbox", action="store_false")
    sys.exit(asyncio.run(main_async(parser.parse_args())))


if __name__ == "__main__":
    main()
