"""`restbench validate`'s wall and CPU time over several rounds, for one restbench install or
for several side by side, with the state of the machine printed beside each figure.

On a shared virtual machine the wall time of the same work moves by 10-20% from one minute to
the next, so a single `time restbench validate` says little about a change. This script runs
validate `--rounds` times. When `--python` names several installs (each the Python of a virtual
environment with restbench installed, another commit's for instance), each round runs them one
after the other, so they share the machine's hour. Every run prints four figures:

- its wall time;
- the CPU time of its whole process tree, as `time` counts it (the rusage of wait4), and the
  system time within it (a slow hour on a virtual machine can show there first: the harness's
  forks, exits and copy-on-write faults are kernel work);
- the load average at its start;
- three calibrations, run just before it:
  - `loop`: the time of a fixed pure-Python loop (`--calibration-loops` turns, 30 million by
    default). It measures the CPU alone, and has been seen normal in hours when validate took
    twice its usual CPU, user time included.
  - `imports`: the CPU time of a fresh interpreter of the install importing what a service's
    server imports (FastAPI, SQLAlchemy's ORM, uvicorn), the median of `--calibration-imports`
    interpreters (three by default). That is work like validate's: a new process building a
    large heap, with its page faults and cache misses.
  - `faults`: the time a process takes to touch a fresh page of memory (100,000 of them), in
    microseconds: a page fault, and on a virtual machine whatever the host does to back the
    page. A validate of the three built-in services makes ~5 million of them (its processes'
    copy-on-write and fresh pages), and they took ~5 us each on hours when it took twice its
    CPU.

Then, for each install, it prints the median and range of the wall and CPU times, and how many
runs finished within `--target-s`. The default is 45 s, issue 12's target for the three built-in
services.

    python benchmarks/validate_timing.py [--rounds 3] [-s todo,conduit,fullstack]
        [--python [LABEL=]PATH ...] [--target-s 45] [--calibration-loops N]
        [--calibration-imports N] [-- more validate arguments]

It exits 1 if a validate run fails: a non-zero exit, or a service not reported sound.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

CALIBRATION_LOOPS = 30_000_000
# What every service server of a validate imports (through the launcher): the `imports`
# calibration times a fresh interpreter importing them.
CALIBRATION_IMPORTS = "import fastapi, sqlalchemy.orm, uvicorn"
CALIBRATION_IMPORT_RUNS = 3
CALIBRATION_FAULT_PAGES = 100_000
CALIBRATION_FAULTS = f"""
import mmap, time
pages = {CALIBRATION_FAULT_PAGES}
memory = mmap.mmap(-1, pages * mmap.PAGESIZE)
started = time.perf_counter()
for offset in range(0, pages * mmap.PAGESIZE, mmap.PAGESIZE):
    memory[offset] = 1
print((time.perf_counter() - started) / pages * 1e6)
"""


@dataclass(frozen=True)
class Install:
    label: str
    python: str


@dataclass(frozen=True)
class Timing:
    wall_s: float
    cpu_s: float
    system_s: float  # of cpu_s: forks, exits and page faults are most of it
    loop_s: float
    imports_cpu_s: float
    fault_us: float
    load: float
    sound: bool
    detail: str


def calibrate(loops: int) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"for i in range({loops}): pass"], check=True)
    return time.perf_counter() - started


def calibrate_imports(python: str, runs: int = CALIBRATION_IMPORT_RUNS) -> float:
    """The median CPU time (user and system) of `runs` interpreters `python` importing
    CALIBRATION_IMPORTS."""
    cpu_s = []
    for _ in range(runs):
        child = subprocess.Popen([python, "-c", CALIBRATION_IMPORTS])
        _, status, usage = os.wait4(child.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{python} -c {CALIBRATION_IMPORTS!r} failed (is restbench "
                             "installed there?)")
        cpu_s.append(usage.ru_utime + usage.ru_stime)
    return statistics.median(cpu_s)


def calibrate_faults() -> float:
    """Microseconds per fresh page touched (CALIBRATION_FAULTS, in a process of its own)."""
    return float(subprocess.run([sys.executable, "-c", CALIBRATION_FAULTS], capture_output=True,
                                text=True, check=True).stdout)


def time_validate(install: Install, services: str, extra: list[str],
                  calibration_loops: int = CALIBRATION_LOOPS,
                  calibration_imports: int = CALIBRATION_IMPORT_RUNS) -> Timing:
    loop_s = calibrate(calibration_loops)
    imports_cpu_s = calibrate_imports(install.python, calibration_imports)
    fault_us = calibrate_faults()
    load = os.getloadavg()[0]
    started = time.perf_counter()
    child = subprocess.Popen([install.python, "-m", "restbench.cli", "validate", "-s", services,
                              *extra], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    assert child.stdout is not None
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall_s = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    summaries = [line for line in output.splitlines() if "requirements," in line]
    sound = code == 0 and bool(summaries) and all("all sound" in s for s in summaries)
    detail = "all sound" if sound else (
        f"exit status {code}: " + (output.strip().splitlines() or ["no output"])[-1])
    return Timing(wall_s, usage.ru_utime + usage.ru_stime, usage.ru_stime, loop_s, imports_cpu_s,
                  fault_us, load, sound, detail)


def parse_install(text: str) -> Install:
    label, _, path = text.rpartition("=")
    return Install(label or path, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs per install (default: 3)")
    parser.add_argument("-s", "--services", default="todo,conduit,fullstack",
                        help="validate's -s (default: todo,conduit,fullstack)")
    parser.add_argument("--python", action="append", type=parse_install, metavar="[LABEL=]PATH",
                        help="the Python of an install to time (repeatable; default: this one)")
    parser.add_argument("--target-s", type=float, default=45.0,
                        help="the wall time a run should stay within (default: 45)")
    parser.add_argument("--calibration-loops", type=int, default=CALIBRATION_LOOPS,
                        help=f"turns of the calibration loop (default: {CALIBRATION_LOOPS:,})")
    parser.add_argument("--calibration-imports", type=int, default=CALIBRATION_IMPORT_RUNS,
                        help="interpreters timed for the import calibration, the median taken "
                             f"(default: {CALIBRATION_IMPORT_RUNS})")
    parser.add_argument("validate_args", nargs="*", help="more validate arguments (after --)")
    options = parser.parse_args()
    for option in ("rounds", "calibration_imports"):
        if getattr(options, option) < 1:
            parser.error(f"--{option.replace('_', '-')} must be at least 1")
    installs: list[Install] = options.python or [Install("this install", sys.executable)]
    for install in installs:
        if not Path(install.python).is_file():
            parser.error(f"--python {install.python}: no such file")
    timings: dict[str, list[Timing]] = {install.label: [] for install in installs}
    width = max(len(install.label) for install in installs)
    print(f"restbench validate -s {options.services} {' '.join(options.validate_args)}".rstrip()
          + f": {options.rounds} rounds x {len(installs)} installs, {os.cpu_count()} CPUs",
          flush=True)
    failed = False
    for round_number in range(1, options.rounds + 1):
        for install in installs:
            timing = time_validate(install, options.services, options.validate_args,
                                   options.calibration_loops, options.calibration_imports)
            timings[install.label].append(timing)
            failed |= not timing.sound
            print(f"round {round_number}/{options.rounds}  {install.label:{width}}  "
                  f"{timing.wall_s:6.1f} s wall  {timing.cpu_s:6.1f} s CPU "
                  f"({timing.system_s:5.1f} system)  "
                  f"loop {timing.loop_s:.2f} s  imports {timing.imports_cpu_s:.2f} s CPU  "
                  f"faults {timing.fault_us:.2f} us  load {timing.load:.2f}  {timing.detail}",
                  flush=True)
    print()
    for label, runs in timings.items():
        walls = [t.wall_s for t in runs]
        cpus = [t.cpu_s for t in runs]
        within = sum(wall <= options.target_s for wall in walls)
        print(f"{label:{width}}  wall median {statistics.median(walls):.1f} s "
              f"({min(walls):.1f}-{max(walls):.1f}), CPU median {statistics.median(cpus):.1f} s "
              f"({min(cpus):.1f}-{max(cpus):.1f}); {within} of {len(runs)} runs within "
              f"{options.target_s:g} s")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
