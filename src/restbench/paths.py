"""Why a path cannot be made or written: questions the store and the writers of results share."""

from __future__ import annotations

import os
import pwd
from collections.abc import Iterable
from pathlib import Path

from restbench.errors import RestbenchError


def file_in_the_way(path: Path) -> Path | None:
    """The file that stands where a folder above `path` should be, if any (then no folder can be
    made for `path`: `mkdir` says only "Not a directory")."""
    return next((p for p in path.parents if p.exists() and not p.is_dir()), None)


_EFFECTIVE = os.access in os.supports_effective_ids  # the ids a write is checked with


def not_writable(path: Path) -> str | None:
    """Why this process cannot write the existing file `path` (None when it can): read-only,
    or another user's."""
    if not path.exists() or os.access(path, os.W_OK, effective_ids=_EFFECTIVE):
        return None
    owner = path.stat().st_uid
    if owner != os.geteuid():
        try:
            name = pwd.getpwuid(owner).pw_name
        except KeyError:
            name = f"uid {owner}"
        return f"the file belongs to {name}, and this user may not write it"
    return "the file is read-only"


def check_files_writable(paths: Iterable[Path], what: str, option: str) -> None:
    """Raises a RestbenchError for the first of `paths` that is a folder or a file this user may
    not write: found before the work whose `what` (e.g. "the run's scores") goes there, not
    after it. `option` is the one that chooses another folder."""
    for path in paths:
        if path.is_dir():
            raise RestbenchError(f"{path}: is a folder, where {what} go: move it away, or "
                                 f"choose another {option}")
        if (why := not_writable(path)) is not None:
            raise RestbenchError(f"{path}: cannot write {what} there: {why}")


def write_whole(path: Path, text: str) -> None:
    """`text` into `path` whole or not at all (a file rewritten as work goes on: a reader, or a
    write cut short by Ctrl-C, never meets half of it)."""
    partial = path.with_name(f".{path.name}.partial")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
