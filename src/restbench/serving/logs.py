"""The end of a server's log, folded into one line for an error message."""

from __future__ import annotations

import itertools
from pathlib import Path

LINES = 6  # at most, a line repeated in a row counting once
READ_BYTES = 64 * 1024  # of the log's end: a server may log for hours


def log_tail(log_file: Path, limit: int = 600) -> str:
    """The log's last `LINES` lines joined by " | ", at most its last `limit` characters; a line
    repeated in a row is shown once with its count (a ready route polled many times)."""
    try:
        with log_file.open("rb") as log:
            log.seek(max(0, log.seek(0, 2) - READ_BYTES))
            text = log.read().decode(errors="replace").strip()
    except OSError:
        return "(no log)"
    runs = [(line, len(list(same))) for line, same in itertools.groupby(text.splitlines())]
    folded = " | ".join(line if count == 1 else f"{line} (x{count})"
                        for line, count in runs[-LINES:])
    return folded[-limit:] or "(empty log)"
