"""The end of a server's log, folded into one line for an error message."""

from __future__ import annotations

from pathlib import Path


def log_tail(log_file: Path, limit: int = 600) -> str:
    try:
        text = log_file.read_text(errors="replace").strip()
    except OSError:
        return "(no log)"
    return " | ".join(text[-limit:].splitlines()[-6:]) or "(empty log)"
