"""`restbench bench`: what one execution costs, restbench's harness against a naive one, in one run.

Takes the first N executions of `restbench validate` for a service (each golden test on the
original, on its requirement's mutants and on the benign variants, in that order) and runs them
twice, interleaved in rounds so that both modes share the machine's load:

- naive: per execution a fresh server process (`python` imports the implementation and runs
  uvicorn; a service in another language, its start command, tests reaching its own port) and a
  fresh `python -m pytest` subprocess, what a container-style harness does at best (no container
  start counted, and an external service's build made once per implementation);
- normal: restbench's own path (`engine.backend.LocalBackend`: servers forked by the launcher,
  kept warm, reset before each execution, tests in the sandboxed pre-warmed workers).

Prints per-execution medians and 95th percentiles, the ratio, a breakdown (server start, reset,
sandbox, pytest, the test's own HTTP work as the service timed it, and the server's CPU time and
page faults in an execution: its first, on a new server, against a later one) and the peak
memory of the whole process tree (the sum of proportional set sizes, so pages shared after a
fork count once, and the plain sum of resident set sizes).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import select
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self, TypeVar

from restbench.benchmark import resolve_services
from restbench.benchmark.selection import select_requirements
from restbench.engine.backend import LocalBackend
from restbench.engine.jobs import Job
from restbench.engine.process_table import (
    cpu_ns_and_minor_faults,
    descendants,
    process_table,
    stat_fields,
)
from restbench.errors import RestbenchError, ServiceStartError
from restbench.execution import ExecutionResult, Executor, Outcome
from restbench.execution.environment import clean_environment
from restbench.mutation import Implementation, implementations_of, materialize
from restbench.mutation.apply import ORIGINAL
from restbench.mutation.start_errors import start_failure
from restbench.scratch import scratch_folder
from restbench.serving import ServerPool
from restbench.serving.databases import DatabaseChoice, open_databases
from restbench.serving.external import ExternalServer
from restbench.wording import counted

ROUND = 10
STOP_POLL_S = 0.05  # how often the naive mode's thread looks whether it is to stop
T = TypeVar("T")
EXTERNAL_START = "own process"  # how a service in another language's server is made
NAIVE_SERVER = """
import sys
sys.path.insert(0, sys.argv[1])
sys.dont_write_bytecode = True
import uvicorn
from app.main import create_app
uvicorn.run(create_app(sys.argv[2]), host="127.0.0.1", port=int(sys.argv[3]),
            log_level="warning", access_log=False)
"""


def validate_jobs(service_name: str, requirements: Sequence[str] = ()) -> list[Job]:
    """The executions of `restbench validate -s SERVICE [-R ...]`, in its order."""
    service = select_requirements(resolve_services([service_name]), requirements)[0]
    implementations = implementations_of(service)
    benign = [b.id for b in service.data.benign]
    jobs = []
    for requirement in service.requirements:
        code = service.golden_code(requirement)
        for target in [ORIGINAL, *(m.id for m in requirement.mutants), *benign]:
            jobs.append(Job(code, implementations[target], requirement.id))
    return jobs


def _should_pass(job: Job) -> bool:
    """As validate judges: a golden test passes on the original and the benign variants and
    does not pass on a mutant (failing or erring both kill it)."""
    return job.implementation.kind != "mutant"


# --- memory ------------------------------------------------------------------------------------


class TreeMemory:
    """Samples the memory of this process and all its descendants: the sum of their
    proportional set sizes and of their resident set sizes."""

    def __init__(self, interval_s: float = 0.05) -> None:
        self.interval_s = interval_s
        self.peak = (0, 0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    def reset_peak(self) -> None:
        self.peak = (0, 0)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            pss, rss = tree_memory_bytes(os.getpid())
            self.peak = (max(self.peak[0], pss), max(self.peak[1], rss))


def tree_memory_bytes(root: int) -> tuple[int, int]:
    """(sum of PSS, sum of RSS) of `root` and its descendants, in bytes."""
    pss = rss = 0
    for pid in descendants(root, process_table()):
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    pss += int(line.split()[1]) * 1024
                elif line.startswith("Rss:"):
                    rss += int(line.split()[1]) * 1024
        except OSError:
            continue
    return pss, rss


# --- the two modes -----------------------------------------------------------------------------


@dataclass
class Timings:
    total: list[float] = field(default_factory=list)
    parts: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    wrong: list[str] = field(default_factory=list)
    peak_pss: int = 0
    peak_rss: int = 0
    starts: int = 0
    most_servers: int = 0  # servers alive at once, at most; the warm-up's among them
    warm_up_servers: int = 0  # started in the untimed warm-up, so not among `starts`
    switches: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    # the server's minor page faults in an execution: FIRST (on a new server) or LATER
    faults: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))


FIRST, LATER = "first", "later"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Stopped(Exception):
    """The naive mode's thread was told to stop (bench was interrupted)."""


def _check(stop: threading.Event) -> None:
    if stop.is_set():
        raise _Stopped


async def _in_thread_until_cancelled(work: Callable[[threading.Event], T]) -> T:
    """`work(stop)` in a thread. Cancelled, it sets `stop` and returns only once the thread
    has: a thread left running would go on making folders in the scratch folder while it is
    removed, and they would stay for good."""
    stop = threading.Event()
    thread = asyncio.ensure_future(asyncio.to_thread(work, stop))
    try:
        return await asyncio.shield(thread)
    except asyncio.CancelledError:
        stop.set()
        while not thread.done():
            with contextlib.suppress(asyncio.CancelledError):  # a second Ctrl-C: still wait
                await asyncio.wait([thread])
        if not thread.cancelled():
            thread.exception()  # retrieved: it is the interruption that is reported
        raise


def _wait_stoppable(process: subprocess.Popen[bytes], stop: threading.Event,
                    timeout_s: float) -> int:
    """`process`'s exit status; killed (and `_Stopped` raised) once `stop` is set, killed
    (and `subprocess.TimeoutExpired` raised) after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    # A pidfd is readable the moment the process exits: Popen.wait(timeout) polls instead, up
    # to 50 ms late, which the naive mode's timings would carry.
    exited = os.pidfd_open(process.pid)
    try:
        while True:
            _check(stop)
            if select.select([exited], [], [], STOP_POLL_S)[0]:
                return process.wait()
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(process.args, timeout_s)
    finally:
        os.close(exited)
        if process.poll() is None:
            process.kill()
            process.wait()


def _wait_for_port(port: int, process: subprocess.Popen[bytes], stop: threading.Event,
                   timeout_s: float = 30) -> str | None:
    """None once the server listens on `port`; else why it does not."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        _check(stop)
        if process.poll() is not None:
            return f"exited with {process.returncode}"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return None
        except OSError:
            time.sleep(0.005)
    return f"did not listen on its port within {timeout_s:g} s"


def _naive_start_failure(implementation: Implementation, why: str, log_file: Path,
                         source: Path) -> str:
    """As validate tells it: the server's last error line and where in the user's files."""
    log_text = log_file.read_text(errors="replace")
    last = next((line for line in reversed(log_text.splitlines()) if line.strip()), "")
    name = f"{implementation.service.name} {implementation.id} (naive mode's server)"
    return start_failure(name, f"{why}: {last}" if last else why, log_text, source,
                         implementation)


def _fresh_pytest(job: Job, folder: Path, base_url: str, stop: threading.Event) -> int:
    """The naive mode's test run: a new `python -m pytest` process; its exit status."""
    _check(stop)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test_generated.py").write_text(job.code, encoding="utf-8")
    pytest = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "test_generated.py"], cwd=folder,
                              env={**clean_environment(), "BASE_URL": base_url},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return _wait_stoppable(pytest, stop, timeout_s=60)


def _record_naive(timings: Timings, job: Job, times: tuple[float, float, float],
                  exit_status: int) -> None:
    started, up, ended = times
    timings.total.append(ended - started)
    timings.parts["server start"].append(up - started)
    timings.parts["pytest (fresh process)"].append(ended - up)
    timings.starts += 1
    if (exit_status == 0) != _should_pass(job):
        timings.wrong.append(f"naive {job.implementation.id}: pytest exit {exit_status}")


def run_naive(jobs: list[Job], scratch: Path, database: DatabaseChoice, timings: Timings,
              stop: threading.Event) -> None:
    """The naive mode, in a thread of its own; it returns soon after `stop` is set, its
    processes killed."""
    with contextlib.suppress(_Stopped):
        _run_naive_jobs(jobs, scratch, database, timings, stop)


def _run_naive_jobs(jobs: list[Job], scratch: Path, database: DatabaseChoice, timings: Timings,
                    stop: threading.Event) -> None:
    databases = open_databases(database)
    env = clean_environment()
    try:
        for number, job in enumerate(jobs):
            _check(stop)
            folder = scratch / f"naive-{number}"
            started = time.perf_counter()
            source = materialize(job.implementation, folder / "src")
            url = databases.create(folder, f"naive-{number}")
            port = _free_port()
            log_file = folder / "server.log"
            with log_file.open("wb") as log:
                server = subprocess.Popen([sys.executable, "-c", NAIVE_SERVER, str(source), url,
                                           str(port)], env=env, stdout=subprocess.DEVNULL,
                                          stderr=log)
            try:
                why = _wait_for_port(port, server, stop)
                if why is not None:
                    raise ServiceStartError(_naive_start_failure(job.implementation, why,
                                                                 log_file, source))
                up = time.perf_counter()
                exit_status = _fresh_pytest(job, folder, f"http://127.0.0.1:{port}", stop)
                ended = time.perf_counter()
            finally:
                server.kill()
                server.wait()
                databases.drop(url)
            _record_naive(timings, job, (started, up, ended), exit_status)
    finally:
        databases.close()


async def run_naive_external(jobs: list[Job], pool: ServerPool, scratch: Path,
                             timings: Timings) -> None:
    """The naive mode for a service in another language: per execution a new instance (its
    start command, ready when its `ready` request answers; the pool builds each implementation
    once, as an image would be) and a fresh pytest that reaches the instance's own port."""
    for number, job in enumerate(jobs):
        started = time.perf_counter()
        server = await pool.start(job.implementation, number)
        try:
            up = time.perf_counter()
            url = f"http://127.0.0.1:{server.port}"
            exit_status = await _in_thread_until_cancelled(
                functools.partial(_fresh_pytest, job, scratch / f"naive-{number}", url))
            ended = time.perf_counter()
        finally:
            await pool.stop(server)
        _record_naive(timings, job, (started, up, ended), exit_status)


class _TimedExecutor:
    """The executor as the backend sees it, timing each execution and the service's own work."""

    def __init__(self, executor: Executor, timings: Timings,
                 servers: dict[str, Any], new_servers: set[int]) -> None:
        self._executor = executor
        self.size = executor.size
        self.timings = timings
        self._servers = servers
        self._new_servers = new_servers  # ids of the servers no execution has run on yet

    async def execute(self, code: str, target: Any, *, name: str = "generated",
                      runner: str = "pytest") -> ExecutionResult:
        server = self._servers[target if isinstance(target, str) else target.base_url]
        before = cpu_ns_and_minor_faults(server.pid)
        started = time.perf_counter()
        result = await self._executor.execute(code, target, name=name, runner=runner)
        wall = time.perf_counter() - started
        after = cpu_ns_and_minor_faults(server.pid)
        # What the execution took beyond the test's own run: the sandbox and its test process
        # (with --no-sandbox, only the process: named so, not "sandbox").
        overhead = "sandbox" if self._executor.isolated else UNSANDBOXED
        self.timings.parts[overhead].append(max(0.0, wall - result.duration_s))
        self.timings.parts["pytest"].append(result.duration_s)
        self.timings.parts["test's HTTP work"].append(await server.busy_s())
        which = FIRST if id(server) in self._new_servers else LATER
        self._new_servers.discard(id(server))
        if before is not None and after is not None:
            # What the server spent on the test's requests: on a new server the first use of
            # everything the fork shares (copy-on-write faults, per-process caches) comes too.
            self.timings.parts[f"server CPU, {which} execution on it"].append(
                (after[0] - before[0]) / 1e9)
            self.timings.faults[which].append(after[1] - before[1])
        return result


def _process_cpu_s(pid: int) -> float:
    """The CPU time process `pid` has used so far (0 if it is gone)."""
    fields = stat_fields(pid)
    if fields is None:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _TimedPool:
    """The server pool as the backend sees it, timing starts and resets."""

    def __init__(self, pool: ServerPool, timings: Timings, servers: dict[str, Any],
                 new_servers: set[int]) -> None:
        self._pool = pool
        self.timings = timings
        self._servers = servers
        self._new_servers = new_servers
        self._alive: set[int] = set()

    @property
    def alive(self) -> int:
        return len(self._alive)

    async def start(self, implementation: Implementation, replica: int = 0) -> Any:
        started = time.perf_counter()
        server = await self._pool.start(implementation, replica)
        self.timings.parts["server start (per start)"].append(time.perf_counter() - started)
        if isinstance(server, ExternalServer):  # its own process, started by its command
            cpu_s, way = _process_cpu_s(server.pid), EXTERNAL_START
        else:
            cpu_s, way = server.start_cpu_s, server.switch
        self.timings.parts["  its CPU time in the server"].append(cpu_s)
        self.timings.switches[way] += 1
        self.timings.starts += 1
        self._alive.add(id(server))
        self._new_servers.add(id(server))
        self.timings.most_servers = max(self.timings.most_servers, len(self._alive))
        self._servers[server.base_url] = server
        reset = server.reset

        async def timed_reset() -> None:
            began = time.perf_counter()
            await reset()
            self.timings.parts["reset"].append(time.perf_counter() - began)

        server.reset = timed_reset  # type: ignore[method-assign]
        return server

    async def stop(self, server: Any) -> None:
        self._alive.discard(id(server))
        self._new_servers.discard(id(server))
        await self._pool.stop(server)


async def run_normal(jobs: list[Job], backend: LocalBackend, timings: Timings) -> None:
    """Runs `jobs` through `backend` (whose pool and executor are the timed ones above)."""
    finished: list[float] = []
    last = [time.perf_counter()]
    started = last[0]

    def done(job: Job, result: ExecutionResult) -> None:
        now = time.perf_counter()
        finished.append(now - last[0])
        last[0] = now
        if (result.outcome is Outcome.PASS) != _should_pass(job):
            timings.wrong.append(f"normal {job.implementation.id}: {result.outcome.value} "
                                 f"{result.reason}")

    for mode in (backend.pool, backend.executor):
        mode.timings = timings  # type: ignore[union-attr]
    failures = await backend.execute(jobs, done)
    wall = time.perf_counter() - started
    timings.wrong += [f"normal {name}: {exc}" for name, exc in failures.items()]
    # With one lane the time between two finished executions is one execution's cost, its
    # share of server starts included.
    timings.total += finished
    timings.parts["wall per execution (throughput)"].append(wall / max(1, len(jobs)))


# --- report ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BenchConfig:
    service: str = "todo"
    count: int = 60  # executions per mode: the first N of `validate -s SERVICE`
    requirements: tuple[str, ...] = ()  # ids or globs, as validate's -R
    database: str = "sqlite"
    sandbox: bool = True


@dataclass
class BenchResult:
    config: BenchConfig
    executions: int
    naive: Timings
    normal: Timings
    load: tuple[float, float, float]

    @property
    def ratio(self) -> float | None:
        if not self.naive.total or not self.normal.total:
            return None
        return statistics.median(self.naive.total) / statistics.median(self.normal.total)

    @property
    def wrong(self) -> list[str]:
        return self.naive.wrong + self.normal.wrong


def _ms(values: list[float], share: float | None = None) -> str:
    if not values:
        return "-"
    if share is None:
        return f"{statistics.median(values) * 1000:.1f}"
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000:.1f}"


# The breakdown's lines in this order (a mode's parts come in the order they first happened).
UNSANDBOXED = "test process (no sandbox)"
_PARTS = ("server start", "pytest (fresh process)", "reset", "sandbox", UNSANDBOXED, "pytest",
          "test's HTTP work", f"server CPU, {FIRST} execution on it",
          f"server CPU, {LATER} execution on it", "server start (per start)",
          "  its CPU time in the server", "wall per execution (throughput)")


def _part_order(item: tuple[str, list[float]]) -> int:
    return _PARTS.index(item[0]) if item[0] in _PARTS else len(_PARTS)


def _servers_alive_line(timings: Timings) -> str:
    """The most servers alive at once, the warm-up's included: they were alive, so they count
    here, but they were started before the measurement, so not among its starts."""
    line = f"  {'servers alive at once, at most':<34}{timings.most_servers:>10}"
    if timings.warm_up_servers:
        line += (f"  ({timings.warm_up_servers} of them started in the untimed warm-up, "
                 "not among the server starts)")
    return line


def format_result(result: BenchResult) -> str:
    config, load = result.config, result.load
    chosen = "".join(f" -R {pattern}" for pattern in config.requirements)
    lines = [(f"restbench bench: {result.executions} executions of `validate -s {config.service}"
              f"{chosen}` per mode, db {DatabaseChoice.parse(config.database).describe()}, "
              f"{'sandboxed' if config.sandbox else 'no sandbox'}, {os.cpu_count()} CPUs, "
              f"load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"),
             "", f"{'per execution (ms)':<36}{'median':>10}{'p95':>10}"]
    for name, timings in (("naive", result.naive), ("normal", result.normal)):
        lines.append(f"{name + ' total':<36}{_ms(timings.total):>10}"
                     f"{_ms(timings.total, 0.95):>10}")
        for part, values in sorted(timings.parts.items(), key=_part_order):
            lines.append(f"  {part:<34}{_ms(values):>10}{_ms(values, 0.95):>10}")
        if name == "normal":
            overhead = [t - w for t, w in zip(timings.total, timings.parts["test's HTTP work"],
                                              strict=False)]
            lines.append(f"  {'harness overhead (total - HTTP)':<34}{_ms(overhead):>10}"
                         f"{_ms(overhead, 0.95):>10}")
        ways = ", ".join(f"{count} {way}" for way, count in sorted(timings.switches.items())
                         if way)
        if timings.faults:
            medians = " / ".join(f"{statistics.median(timings.faults[which]):,.0f} {which}"
                                 for which in (FIRST, LATER) if timings.faults[which])
            lines.append(f"  {'server page faults in an execution':<34}  {medians} (medians)")
        lines.append(f"  {'server starts':<34}{timings.starts:>10}"
                     + (f"  ({ways})" if ways else ""))
        if timings.most_servers:
            lines.append(_servers_alive_line(timings))
        lines.append(f"  {'peak memory of the process tree':<34}"
                     f"{timings.peak_pss / 2**20:>9.0f} MiB PSS, {timings.peak_rss / 2**20:.0f} "
                     "MiB RSS")
    if result.ratio is not None:
        lines += ["", f"naive / normal (medians): {result.ratio:.1f} x"]
    if result.wrong:
        lines += ["", f"{counted(len(result.wrong), 'execution')} with an unexpected outcome:",
                  *(f"  {w}" for w in result.wrong[:10])]
    return "\n".join(lines)


async def run_bench(config: BenchConfig) -> BenchResult:
    """Runs the first `config.count` executions of validate in both modes, interleaved."""
    if config.count < 1:
        raise RestbenchError(f"bench: --count must be at least 1, not {config.count}")
    jobs = validate_jobs(config.service, config.requirements)[:config.count]
    external = jobs[0].implementation.service.manifest is not None
    database = DatabaseChoice.parse(config.database)
    naive, normal = Timings(), Timings()
    with scratch_folder("restbench-bench-") as scratch_name, \
            TreeMemory() as memory:
        scratch = Path(scratch_name)
        servers: dict[str, Any] = {}
        new_servers: set[int] = set()
        async with contextlib.AsyncExitStack() as stack, \
                ServerPool(scratch / "servers", database) as pool, \
                Executor(1, 30, scratch / "exec", isolated=config.sandbox) as executor, \
                LocalBackend(timed_pool := _TimedPool(pool, Timings(),  # type: ignore[arg-type]
                                                      servers, new_servers),
                             _TimedExecutor(executor, Timings(), servers,  # type: ignore[arg-type]
                                            new_servers)) as backend:
            # Warm the launcher and the executor once, outside the measurement, as a run would.
            await run_normal(jobs[:1], backend, Timings())
            normal.warm_up_servers = timed_pool.alive
            naive_pool: ServerPool | None = None
            for begin in range(0, len(jobs), ROUND):
                chunk = jobs[begin:begin + ROUND]
                memory.reset_peak()
                if external:  # a pool of its own, that starts a new instance each time
                    naive_pool = naive_pool or await stack.enter_async_context(
                        ServerPool(scratch / "naive-servers", database))
                    await run_naive_external(chunk, naive_pool, scratch, naive)
                else:
                    await _in_thread_until_cancelled(
                        functools.partial(run_naive, chunk, scratch, database, naive))
                naive.peak_pss = max(naive.peak_pss, memory.peak[0])
                naive.peak_rss = max(naive.peak_rss, memory.peak[1])
                memory.reset_peak()
                await run_normal(chunk, backend, normal)
                normal.peak_pss = max(normal.peak_pss, memory.peak[0])
                normal.peak_rss = max(normal.peak_rss, memory.peak[1])
    return BenchResult(config, len(jobs), naive, normal, os.getloadavg())
