"""Writing the files `report` and `compare` make, with a one-line error where one cannot be."""

from __future__ import annotations

from pathlib import Path

from restbench.errors import RestbenchError
from restbench.paths import file_in_the_way


class OutputError(RestbenchError):
    """A file the user asked for cannot be written there."""


def write_output(path: Path, text: str) -> None:
    """`text` into `path`, making its folders."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        file = file_in_the_way(path)
        why = f"{file} is a file, not a folder" if file is not None else exc.strerror or str(exc)
        raise OutputError(f"{path}: cannot write it ({why})") from None
