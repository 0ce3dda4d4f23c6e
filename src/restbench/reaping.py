"""Collecting a process's exited children. A child its parent does not reap goes to init, and
its CPU time (with that of its own children) is then missing from its parent's, and so from a
run's rusage and from `time restbench ...`, which the speed figures come from. The launcher
(its servers) and the test workers' template (its workers) both reap theirs with this."""

from __future__ import annotations

import contextlib
import os
import time

POLL_S = 0.005


def reap_children(within_s: float = 0.0) -> None:
    """Reaps the children that have exited; with `within_s`, waits up to that long for all of
    them to exit (those still running then are left to init)."""
    deadline = time.monotonic() + within_s
    with contextlib.suppress(ChildProcessError):  # none left
        while True:
            if os.waitpid(-1, os.WNOHANG)[0]:
                continue
            if time.monotonic() >= deadline:
                return
            time.sleep(POLL_S)
