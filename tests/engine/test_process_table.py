"""The process tree as bench and the CPU census read it from /proc, and the tests' view of a
process's live children."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from restbench.engine.process_table import (
    cpu_ns_and_minor_faults,
    descendants,
    process_table,
    stat_fields,
)
from tests.process_helpers import live_children

# A child that starts a grandchild, prints its pid and waits for stdin to close.
PARENT_OF_ONE = """
import subprocess, sys
grandchild = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                              stdin=subprocess.PIPE)
print(grandchild.pid, flush=True)
sys.stdin.read()
grandchild.stdin.close()
grandchild.wait()
"""


def test_the_tree_below_a_process_and_its_live_children() -> None:
    child = subprocess.Popen([sys.executable, "-c", PARENT_OF_ONE], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        grandchild = int(child.stdout.readline())
        assert {os.getpid(), child.pid, grandchild} <= descendants(os.getpid(), process_table())
        assert grandchild not in descendants(child.pid + 10**9, process_table())
        assert child.pid in live_children(os.getpid())
        assert grandchild not in live_children(os.getpid())
        assert live_children(child.pid) == {grandchild}
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=30)
    assert stat_fields(child.pid) is None  # reaped: gone from /proc


def test_a_zombie_is_not_a_live_child() -> None:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    try:
        deadline = time.monotonic() + 10
        while (stat_fields(pid) or ["?"])[0] != "Z" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert stat_fields(pid) is not None  # exited, not yet reaped
        assert pid not in live_children(os.getpid())
    finally:
        os.waitpid(pid, 0)


def test_a_command_name_with_spaces_and_parentheses_keeps_the_fields_in_place() -> None:
    renamed = ("import ctypes, sys; ctypes.CDLL(None).prctl(15, b'a b) (c')"  # PR_SET_NAME
               "; print(flush=True); sys.stdin.read()")
    child = subprocess.Popen([sys.executable, "-c", renamed], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        child.stdout.readline()  # the name is set
        assert Path(f"/proc/{child.pid}/comm").read_text().strip() == "a b) (c"
        fields = stat_fields(child.pid)
        assert fields is not None
        assert fields[0] in "RSD"
        assert int(fields[1]) == os.getpid()
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=30)


# A child that, on each line it reads, spins for ~50 ms of CPU, or writes to 1,000 new pages.
WORKS_ON_REQUEST = """
import mmap, sys, time
for line in sys.stdin:
    if line.strip() == "spin":
        until = time.process_time() + 0.05
        while time.process_time() < until:
            pass
    else:
        pages = mmap.mmap(-1, 1000 * 4096)
        for offset in range(0, 1000 * 4096, 4096):
            pages[offset] = 1
    print(flush=True)
"""


def test_another_process_s_cpu_time_and_page_faults_as_bench_reads_them() -> None:
    child = subprocess.Popen([sys.executable, "-c", WORKS_ON_REQUEST], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdin is not None and child.stdout is not None

        def ask(work: str) -> tuple[int, int]:
            before = cpu_ns_and_minor_faults(child.pid)
            child.stdin.write(work + "\n")
            child.stdin.flush()
            child.stdout.readline()
            after = cpu_ns_and_minor_faults(child.pid)
            assert before is not None and after is not None
            return after[0] - before[0], after[1] - before[1]

        ask("spin")  # the interpreter's own first-use faults, out of the way
        cpu_ns, faults = ask("spin")
        assert 45e6 <= cpu_ns < 1e9 and faults < 200  # nanoseconds, not clock ticks
        cpu_ns, faults = ask("touch")
        assert faults >= 1000
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=30)
    assert cpu_ns_and_minor_faults(child.pid) is None  # reaped: gone from /proc
