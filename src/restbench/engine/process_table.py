"""The machine's processes as /proc lists them (Linux): for measuring a run's process tree."""

from __future__ import annotations

import os
from pathlib import Path


def stat_fields(pid: int | str) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (the state first, then the parent's
    pid; user and system CPU ticks at 11 and 12, its reaped children's at 13 and 14), or None
    once the process is gone. The name is cut at the last ")": it may hold spaces and ")"."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None


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
