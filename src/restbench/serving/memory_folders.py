"""restbench's scratch folders in memory (tmpfs), and freeing those whose owners were killed.

Each folder is held, from its creation until its owner exits, by a shared `flock` on the
folder itself; the kernel drops the lock when the owner dies, however it dies. A process killed
with SIGKILL (a Ray node's worker and its launcher, reaped by Ray) cannot remove its folders, and
tmpfs is memory that nothing else frees: the next pool removes every folder of ours that nobody
holds and that is old enough not to be one being made right now.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from restbench.errors import RestbenchError

# The machine's tmpfs: scratch files there cost no fsync (SQLite commits, copies of services,
# PostgreSQL's data) and nobody reads them after the run.
MEMORY_ROOT = "/dev/shm"
# Where a user puts them instead: a bigger tmpfs where /dev/shm is small (a container's is 64 MB
# by default), a disk, or a folder of one's own that holds only one run's.
ROOT_VARIABLE = "RESTBENCH_MEMORY_DIR"
PREFIXES = ("restbench-db-", "restbench-src-", "restbench-warm-", "restbench-pg-")
# Between mkdtemp and the lock a folder is unheld for microseconds; only older ones are swept.
ORPHAN_AGE_S = 120.0


class FolderFullError(RestbenchError):
    """A folder restbench writes its scratch files in has no space left."""


# How a full device shows where the errno is lost (shutil.Error's list, a launcher's report)
NO_SPACE_TEXT = os.strerror(errno.ENOSPC)
SQLITE_FULL_TEXT = "database or disk is full"


def is_no_space(exc: BaseException) -> bool:
    """Whether `exc` is (or, for copytree's shutil.Error, holds) ENOSPC."""
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return True
    return isinstance(exc, shutil.Error) and NO_SPACE_TEXT in str(exc)


def folder_full(folder: Path | str) -> FolderFullError:
    """The one line for a full scratch folder: in memory, where to put it instead."""
    hint = f"; set {ROOT_VARIABLE} to a folder with more room (README: Databases)" \
        if _in_memory(Path(folder)) else ""
    return FolderFullError(f"{folder}: full (ENOSPC, no space left on device) while restbench "
                           f"wrote its scratch files there{hint}")


@contextlib.contextmanager
def full_is_one_line(folder: Path | str) -> Iterator[None]:
    """Turns ENOSPC met while writing in `folder` into `folder_full`'s error."""
    try:
        yield
    except OSError as exc:  # shutil.Error is one too
        if is_no_space(exc):
            raise folder_full(folder) from None
        raise


def _in_memory(folder: Path) -> bool:
    try:
        root = memory_root()
    except RestbenchError:
        return False
    return root is not None and folder.is_relative_to(root)


def memory_root() -> str | None:
    """$RESTBENCH_MEMORY_DIR if set, else MEMORY_ROOT where this process may write there, else
    None (scratch goes to the run's folder on disk)."""
    chosen = os.environ.get(ROOT_VARIABLE)
    if chosen:
        root = os.path.abspath(chosen)
        if not (os.path.isdir(root) and os.access(root, os.W_OK | os.X_OK)):
            raise RestbenchError(f"{ROOT_VARIABLE}={chosen}: not a folder restbench may write in")
        return root
    return MEMORY_ROOT if os.access(MEMORY_ROOT, os.W_OK) else None


def passed_on() -> dict[str, str]:
    """The root chosen, for the harness's helper processes (the service launcher, the PostgreSQL
    supervisor), which otherwise start with a clean environment."""
    root = memory_root()
    return {ROOT_VARIABLE: root} if root is not None and os.environ.get(ROOT_VARIABLE) else {}


def make_held(prefix: str, root: str) -> tuple[Path, int]:
    """A new folder under `root` and the descriptor whose lock holds it (close it after the
    folder is removed, or let the process's exit close it)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=root))
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(descriptor, fcntl.LOCK_SH)
    return folder, descriptor


def release(descriptor: int | None) -> None:
    if descriptor is not None:
        with contextlib.suppress(OSError):
            os.close(descriptor)


def sweep_orphans(root: str, *, older_than_s: float = ORPHAN_AGE_S,
                  prefixes: tuple[str, ...] = PREFIXES) -> list[Path]:
    """Removes the folders of ours under `root` that no live process holds; returns them."""
    removed = []
    now = time.time()
    for path in Path(root).glob("restbench-*"):
        if not path.name.startswith(prefixes):
            continue
        try:
            if now - path.stat().st_mtime < older_than_s:
                continue
        except OSError:
            continue
        descriptor = lock_if_unheld(path)
        if descriptor is None:  # a live run's (or gone meanwhile)
            continue
        shutil.rmtree(path, ignore_errors=True)
        os.close(descriptor)
        removed.append(path)
    return removed


def lock_if_unheld(folder: Path) -> int | None:
    """The folder opened and locked for this process alone, when no live process holds it; None
    when one does or the folder cannot be opened."""
    try:
        descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(descriptor)
        return None
    return descriptor
