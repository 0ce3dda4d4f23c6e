"""Where a `restbench run` (or `validate`) spends its CPU, by the role of each process of its tree.

Runs `restbench run ARGS` (in a scratch output folder unless ARGS name one), or with
`--command validate` `restbench validate ARGS`, reads /proc every
few milliseconds meanwhile, and prints the CPU time (user and system) of each role: the harness,
the test workers (with the templates that fork them) and the test processes they fork, the
launcher and the service servers it forks, servers in other languages (Node.js), the helper that
draws Schemathesis requests. The total is
exact (the run's rusage, as `time` reports it); the roles are read from /proc:

- a process that ends before it is seen once is still counted, through its parent: a worker
  reaps its test processes and the launcher its servers, and the kernel adds a reaped child's CPU
  to the parent's (cutime, cstime), which this reads;
- what a process used between its last reading and its end is missed (a few ms each), and shows
  as "not attributed".

    python benchmarks/cpu_by_role.py [--interval 0.1] [--command run|validate] [-- arguments]

Linux only. The machine's load average at the start and the end is printed beside the figures.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from restbench.engine.process_table import descendants, process_table

TICKS_PER_S = os.sysconf("SC_CLK_TCK")
WORKER = "restbench.execution.worker"  # in the command line of the template and what it forks
ROLES = ("harness", "test processes", "test workers", "service servers (Python)", "launcher",
         "servers in other languages", "Schemathesis draws", "other")


@dataclass
class _Seen:
    """The last reading of one process."""

    parent: int
    command: str = ""
    own: tuple[float, float] = (0.0, 0.0)  # user, system (s)
    children: tuple[float, float] = (0.0, 0.0)  # of reaped children


@dataclass
class _Census:
    processes: dict[int, _Seen] = field(default_factory=dict)

    def read(self, root: int) -> None:
        """Reads every process of the tree below `root` (its descendants by parent links)."""
        stats = process_table()
        for pid in descendants(root, stats) & stats.keys():
            fields = stats[pid]
            parent = int(fields[1])
            seen = self.processes.setdefault(pid, _Seen(parent))
            seen.parent = parent
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as file:
                    command = file.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                command = ""
            if command:  # after a fork and before an exec it is still the parent's
                seen.command = command
            seen.own = (int(fields[11]) / TICKS_PER_S, int(fields[12]) / TICKS_PER_S)
            seen.children = (int(fields[13]) / TICKS_PER_S, int(fields[14]) / TICKS_PER_S)


def _forked_by_a_worker(seen: _Seen, census: _Census) -> bool:
    """Whether `seen`'s parent runs the workers' command line (the template or a worker)."""
    return WORKER in census.processes.get(seen.parent, _Seen(0)).command


def _role(pid: int, census: _Census, root: int) -> str:
    seen = census.processes[pid]
    if pid == root:
        return "harness"
    command = seen.command
    parent = census.processes.get(seen.parent, _Seen(0))
    parent_command = parent.command
    if WORKER in command:
        # the workers' template (the harness's child), a worker it forked, or a test process
        # that worker forked: all three show the template's command line
        return "test processes" if _forked_by_a_worker(parent, census) else "test workers"
    if "restbench.serving.launcher" in command:
        return "service servers (Python)" if "restbench.serving.launcher" in parent_command \
            else "launcher"
    if "schemathesis_cases" in command:
        return "Schemathesis draws"
    if Path(command.split(" ", 1)[0]).name.startswith("node"):
        return "servers in other languages"
    return "other"


def attribute(census: _Census, root: int) -> dict[str, list[float]]:
    """CPU (user, system) by role, and the number of processes seen in each."""
    totals = {role: [0.0, 0.0, 0] for role in ROLES}
    for pid, seen in census.processes.items():
        role = _role(pid, census, root)
        totals[role][0] += seen.own[0]
        totals[role][1] += seen.own[1]
        totals[role][2] += 1
        # A child reaped before it was seen is in its parent's children's time; the children
        # that were seen are counted on their own, so only the part they do not explain counts.
        seen_children = [c for c in census.processes.values() if c.parent == pid]
        unexplained = [max(0.0, seen.children[i] - sum(c.own[i] + c.children[i]
                                                        for c in seen_children))
                       for i in (0, 1)]
        if role == "test workers":  # a worker's test processes; a template's workers
            child_role = "test processes" if _forked_by_a_worker(seen, census) \
                else "test workers"
        elif role == "launcher":
            child_role = "service servers (Python)"
        else:
            child_role = "other"
        totals[child_role][0] += unexplained[0]
        totals[child_role][1] += unexplained[1]
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between readings")
    parser.add_argument("--command", choices=("run", "validate"), default="run",
                        help="the restbench command to measure (default: run)")
    parser.add_argument("run_args", nargs="*", help="its arguments (after --)")
    options = parser.parse_args()
    if not options.interval > 0:
        parser.error("--interval must be a positive number of seconds")
    run_args = list(options.run_args)
    scratch = None
    if options.command == "run" and not any(
            a in ("-o", "--output-dir") or a.startswith("--output-dir=") for a in run_args):
        scratch = tempfile.mkdtemp(prefix="restbench-cpu-")
        run_args += ["-o", scratch]
    load_before = os.getloadavg()
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "restbench.cli", options.command, *run_args],
                             stdout=subprocess.DEVNULL)
    census = _Census()
    done = threading.Event()

    def read_until_done() -> None:
        while not done.is_set():
            census.read(child.pid)
            time.sleep(options.interval)

    reader = threading.Thread(target=read_until_done, daemon=True)
    reader.start()
    _, status, usage = os.wait4(child.pid, 0)
    done.set()
    reader.join()
    wall = time.perf_counter() - started
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)
    total = usage.ru_utime + usage.ru_stime
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        print(f"restbench {options.command} {' '.join(options.run_args)} failed with exit "
              f"status {code} (its message is above): no figures", file=sys.stderr)
        sys.exit(code if code > 0 else 1)
    # The harness's own reading is its own time; its children's is what the roles add up to.
    if child.pid in census.processes:
        census.processes[child.pid].children = (0.0, 0.0)
    totals = attribute(census, child.pid)
    attributed = sum(u + s for u, s, _ in totals.values())
    print(f"restbench {options.command} {' '.join(options.run_args)}: {wall:.1f} s wall, "
          f"{total:.1f} s CPU ({usage.ru_utime:.1f} user, {usage.ru_stime:.1f} system); load average "
          f"{' '.join(f'{x:.2f}' for x in load_before)} -> "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'role':28} {'processes':>9} {'CPU s':>8} {'user':>7} {'system':>7} {'share':>6}")
    for role in ROLES:
        user, system, count = totals[role]
        if user + system == 0 and count == 0:
            continue
        print(f"{role:28} {count:>9} {user + system:>8.1f} {user:>7.1f} {system:>7.1f} "
              f"{(user + system) / total:>6.1%}")
    print(f"{'not attributed':28} {'':>9} {total - attributed:>8.1f} {'':>7} {'':>7} "
          f"{(total - attributed) / total:>6.1%}")


if __name__ == "__main__":
    main()
