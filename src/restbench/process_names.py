"""The names the harness's processes show in `ps`, `top` and `perf report --sort comm`: what
each one is for, where all would otherwise show `python3`."""

from __future__ import annotations

import contextlib

LAUNCHER = "rb-launcher"  # imports the services once; forks their servers
SERVER = "rb-server"  # serves one implementation (the original, a mutant, a benign variant)
WORKER_TEMPLATE = "rb-worker-tmpl"  # a pre-warmed pytest; forks the test workers
WORKER = "rb-worker"  # forks one test process per execution
TEST = "rb-test"  # runs one generated test, in its sandbox


def name_this_process(name: str) -> None:
    """Sets this process's name (the kernel keeps 15 characters); where /proc cannot say it,
    the process keeps the name it had."""
    with contextlib.suppress(OSError), open("/proc/self/comm", "w") as comm:
        comm.write(name)
