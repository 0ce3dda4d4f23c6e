"""The machine's processes as /proc lists them (Linux): for measuring a run's process tree."""

from __future__ import annotations

import os
from pathlib import Path

MINOR_FAULTS = 7  # in `stat_fields`: the process's own minor page faults


def stat_fields(pid: int | str) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (the state first, then the parent's
    pid; user and system CPU ticks at 11 and 12, its reaped children's at 13 and 14), or None
    once the process is gone. The name is cut at the last ")": it may hold spaces and ")"."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None


def cpu_ns_and_minor_faults(pid: int) -> tuple[int, int] | None:
    """The CPU time process `pid` has used so far, in nanoseconds (/proc/PID/schedstat, finer
    than stat's clock ticks), and its minor page faults; None once it is gone or where the
    kernel keeps no schedstat."""
    fields = stat_fields(pid)
    if fields is None:
        return None
    try:
        runtime = Path(f"/proc/{pid}/schedstat").read_text().split()[0]
    except (OSError, IndexError):
        return None
    return int(runtime), int(fields[MINOR_FAULTS])


def process_table() -> dict[int, list[str]]:
    """Every process's stat fields, by pid (those that end while it reads are left out)."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := stat_fields(entry)) is not None:
            table[int(entry)] = fields
    return table


def descendants(root: int, table: dict[int, list[str]]) -> set[int]:
    """`root` and every process below it by parent links in `table`."""
    children: dict[int, list[int]] = {}
    for pid, fields in table.items():
        children.setdefault(int(fields[1]), []).append(pid)
    found = {root}
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:  # a reused pid cannot loop the walk
                found.add(child)
                todo.append(child)
    return found
