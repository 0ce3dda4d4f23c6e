"""A memory folder of the test's own, for the tests that check that a run leaves nothing behind.

restbench keeps its scratch folders in /dev/shm unless $RESTBENCH_MEMORY_DIR names another
folder. Other tests (pytest-xdist runs two processes) and other runs make and leave folders
meanwhile: a test that points restbench at a folder of its own (`memory_folder`; the `own_memory`
fixture in conftest.py) sees only what its own run left.
"""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path
from typing import Self

from restbench.serving.memory_folders import MEMORY_ROOT, lock_if_unheld


def memory_folder(prefix: str) -> Path:
    """A new folder in the machine's tmpfs, for $RESTBENCH_MEMORY_DIR; the caller removes it."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=MEMORY_ROOT))
    # Open to all, as /dev/shm is: as root, PostgreSQL's server runs as the `postgres` account
    # and test_sandbox_as_user.py runs restbench as `nobody`.
    folder.chmod(0o1777)
    return folder


def is_held(folder: Path) -> bool:
    """Whether a live process holds the folder's lock (the test process included)."""
    descriptor = lock_if_unheld(folder)
    if descriptor is not None:
        os.close(descriptor)
    return descriptor is None and folder.is_dir()


class FolderWatch:
    """Records the names that appear in a folder while the `with` block runs (polled), so that a
    test that finds the folder empty afterwards knows that the run did use it."""

    def __init__(self, folder: Path, interval_s: float = 0.05) -> None:
        self.folder = folder
        self.interval_s = interval_s
        self.seen: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def prefixes(self) -> set[str]:
        """What each name seen starts with, up to its last '-' (restbench-pg-, restbench-db-...)."""
        return {name.rsplit("-", 1)[0] + "-" for name in self.seen}

    def _poll(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.seen.update(path.name for path in self.folder.iterdir())

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
