"""Finding the processes that are still alive after a run."""

from __future__ import annotations

import os
from pathlib import Path

from restbench.engine.process_table import process_table


def processes_mentioning(*texts: str) -> list[str]:
    """`PID: command line` of each live process whose command line holds any of `texts`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ") \
                .decode(errors="replace")
        except OSError:
            continue
        if any(text in command for text in texts):
            found.append(f"{entry}: {command[:200]}")
    return found


def live_children(parent: int) -> set[int]:
    """The processes whose parent is `parent`, zombies left out."""
    return {pid for pid, fields in process_table().items()
            if int(fields[1]) == parent and fields[0] != "Z"}
