"""Why a path cannot be made: the one question the store and the report writers share."""

from __future__ import annotations

from pathlib import Path


def file_in_the_way(path: Path) -> Path | None:
    """The file that stands where a folder above `path` should be, if any (then no folder can be
    made for `path`: `mkdir` says only "Not a directory")."""
    return next((p for p in path.parents if p.exists() and not p.is_dir()), None)
