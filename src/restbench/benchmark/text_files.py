"""Reading a service's text files (its data, manifest and golden tests) with one-line errors."""

from __future__ import annotations

from pathlib import Path

from restbench.errors import DataError


def read_text(path: Path) -> str:
    """`path`'s UTF-8 text; DataError naming the file and the problem when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text (byte {exc.start})") from None
