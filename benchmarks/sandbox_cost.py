"""What the sandbox costs per execution, measured in one run so the machine's load is shared.

Runs the same test file against the same todo server N times through a sandboxed executor and
N times through an unsandboxed one (interleaved in rounds), and prints the medians and 95th
percentiles of the harness's wall time per execution (reset, execution, exchange fetch), and the
difference. Optionally also times a bubblewrap sandbox that starts a fresh Python with pytest,
the cost of a sandbox that cannot fork from a warm worker.

    python benchmarks/sandbox_cost.py [-n 200] [--bwrap]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from restbench.benchmark import resolve_services
from restbench.execution import Executor, Outcome
from restbench.mutation import implementations_of
from restbench.serving import ServerPool

ROUND = 10


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def _measure(count: int) -> dict[str, list[float]]:
    todo = resolve_services(["todo"])[0]
    requirement = todo.requirements[0]
    code = todo.golden_path(requirement).read_text()
    timings: dict[str, list[float]] = {"sandboxed": [], "unsandboxed": []}
    with tempfile.TemporaryDirectory(prefix="restbench-bench-") as scratch:
        async with ServerPool(Path(scratch) / "servers") as pool, \
                Executor(1, 30, Path(scratch) / "isolated", isolated=True) as isolated, \
                Executor(1, 30, Path(scratch) / "plain", isolated=False) as plain:
            server = await pool.start(implementations_of(todo)["original"])
            executors = {"sandboxed": isolated, "unsandboxed": plain}
            for name, executor in executors.items():  # warm both once
                await server.reset()
                await executor.execute(code, server)
            done = 0
            while done < count:
                for name, executor in executors.items():
                    for _ in range(min(ROUND, count - done)):
                        started = time.perf_counter()
                        await server.reset()
                        result = await executor.execute(code, server)
                        await server.exchanges()
                        timings[name].append(time.perf_counter() - started)
                        if result.outcome is not Outcome.PASS:
                            raise SystemExit(f"{name}: {result.outcome.value}: {result.reason}")
                done += ROUND
    return timings


def _bwrap_python(count: int) -> list[float]:
    """A fresh interpreter per execution inside bubblewrap: what a sandbox that cannot fork
    from a warm worker pays (Python start and pytest import included)."""
    binds = ["--ro-bind", "/usr", "/usr", "--ro-bind", sys.base_prefix, sys.base_prefix,
             "--ro-bind", sys.prefix, sys.prefix]
    for name in ("bin", "lib", "lib64", "sbin"):
        if os.path.islink(f"/{name}"):
            binds += ["--symlink", os.readlink(f"/{name}"), f"/{name}"]
    command = ["bwrap", "--unshare-all", "--die-with-parent", *binds, "--proc", "/proc", "--dev",
               "/dev", "--tmpfs", "/tmp", sys.executable, "-c", "import pytest, requests"]
    times = []
    for _ in range(count):
        started = time.perf_counter()
        subprocess.run(command, check=True)
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200, help="executions per mode")
    parser.add_argument("--bwrap", action="store_true", help="also time bubblewrap + python")
    arguments = parser.parse_args()
    load = os.getloadavg()
    timings = asyncio.run(_measure(arguments.n))
    print(f"{arguments.n} executions per mode of the golden test of TODO-01 against todo, one "
          f"worker; load average before {load[0]:.2f} after {os.getloadavg()[0]:.2f}")
    for name, values in timings.items():
        print(f"  {name:12} median {statistics.median(values) * 1000:7.1f} ms   "
              f"p95 {_percentile(values, 0.95) * 1000:7.1f} ms")
    difference = statistics.median(timings["sandboxed"]) - statistics.median(timings["unsandboxed"])
    print(f"  sandbox cost (difference of medians): {difference * 1000:.1f} ms per execution")
    if arguments.bwrap:
        if shutil.which("bwrap") is None:
            raise SystemExit("bubblewrap is missing: apt-get install bubblewrap")
        times = _bwrap_python(max(10, arguments.n // 10))
        print(f"  bubblewrap + fresh python importing pytest: median "
              f"{statistics.median(times) * 1000:.1f} ms (the floor of a sandbox per process)")


if __name__ == "__main__":
    main()
