"""Scratch folders that a killed run does not leave behind for good.

Each folder holds the id of the process that made it; the next run removes the folders whose
process is gone (a run killed with SIGKILL never cleans up after itself).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

OWNER_FILE = "restbench-owner.pid"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale(prefix: str, root: Path | None = None) -> list[Path]:
    """Removes `<tmp>/<prefix>*` folders (`root`: instead of the temporary directory) whose
    owning process has exited; returns them."""
    removed = []
    for folder in (root or Path(tempfile.gettempdir())).glob(f"{prefix}*"):
        try:
            pid = int((folder / OWNER_FILE).read_text().strip())
        except (OSError, ValueError):
            continue  # not ours to judge: no owner recorded (or still being made)
        if pid != os.getpid() and not _alive(pid):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def owned_folder(prefix: str, root: Path | None = None) -> Path:
    """A new folder `<tmp>/<prefix>*` (`root`: instead of the temporary directory) owned by this
    process, for the caller to remove (a killed process's then goes with the next one made with
    `prefix`); stale ones go first."""
    remove_stale(prefix, root)
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=root))
    (folder / OWNER_FILE).write_text(str(os.getpid()))
    return folder


@contextmanager
def scratch_folder(prefix: str) -> Iterator[Path]:
    """A temporary folder owned by this process, removed on exit; stale ones go first."""
    folder = owned_folder(prefix)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# The longest temporary directory that leaves room in a socket's path for the control folder
# and a socket's name (`/restbench-ctl-xxxxxxxx/NNNNN.handoff`; Linux allows 107 bytes).
SOCKET_DIRECTORY_LIMIT = 64


def short_temporary_directory() -> Path | None:
    """None (the temporary directory) where its path is short enough for a socket in it, else
    /tmp: a TMPDIR deep in a build tree would make every socket's path too long."""
    if len(os.fsencode(tempfile.gettempdir())) <= SOCKET_DIRECTORY_LIMIT:
        return None
    return Path("/tmp")
