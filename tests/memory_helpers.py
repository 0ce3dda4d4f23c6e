"""restbench's scratch folders in /dev/shm, told apart from those of other runs on the machine.

Each folder is held by a shared `flock` from its creation until its owner exits
(restbench.serving.memory_folders). The tests that check that a run left nothing behind run
beside other tests (pytest-xdist) and other runs, whose folders come and go meanwhile: a new
folder counts as left behind unless a live process of another process tree holds it.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

MEMORY_ROOT = Path("/dev/shm")


def memory_folders() -> set[Path]:
    return set(MEMORY_ROOT.glob("restbench-*"))


def is_held(folder: Path) -> bool:
    """Whether a live process holds the folder's lock (the test process included)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(descriptor)
    return False


def _parent(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def _ancestors(pid: int) -> list[int]:
    found = []
    parent = _parent(pid)
    while parent:
        found.append(parent)
        parent = _parent(parent)
    return found


def _lock_holders(folder: Path) -> list[int]:
    """The processes /proc/locks names for the folder's flock (the ones that took it)."""
    inode = folder.stat().st_ino
    holders = []
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "FLOCK" not in fields or "->" in fields:
            continue
        pid, device_inode = fields[-4], fields[-3]
        if int(device_inode.rsplit(":", 1)[1]) == inode:
            holders.append(int(pid))
    return holders


def held_by_another_tree(folder: Path) -> bool:
    """Held by a live process of another process tree: another test worker's run, or another
    run on the machine. Not by this process or its descendants, nor by an orphan (a process
    whose parent is pid 1): what this test's own run left running has been handed to pid 1."""
    me = os.getpid()
    try:
        holders = _lock_holders(folder)
    except OSError:
        return False
    chains = [(pid, _ancestors(pid)) for pid in holders]
    return is_held(folder) and any(pid != me and me not in chain and chain and chain[0] != 1
                                   for pid, chain in chains)


def left_behind(before: set[Path]) -> set[Path]:
    """The folders made since `before` that no other process tree holds."""
    return {folder for folder in memory_folders() - before
            if folder.exists() and not held_by_another_tree(folder)}
