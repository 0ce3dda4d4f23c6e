"""A service that fails to start, told in terms of the user's files rather than the copy run.

The harness runs each implementation from a temporary copy of the service's app folder (with the
mutant's edit applied), which is deleted afterwards; a traceback naming that copy helps nobody.
This maps the failing frame back to the service folder: file, line and the error, on one line.
"""

from __future__ import annotations

import re
from pathlib import Path

from restbench.mutation.apply import Implementation

_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')


def _user_file(copied: str, copy_root: Path, implementation: Implementation) -> Path | None:
    """The service file a path inside the copy stands for (or the service's own file, where
    the launcher imported the original from the service folder); None outside both."""
    path = Path(copied).resolve()
    try:
        return implementation.service.root / path.relative_to(copy_root.resolve())
    except ValueError:
        pass
    try:
        return implementation.service.root / path.relative_to(implementation.service.root.resolve())
    except ValueError:
        return None


def start_failure(name: str, error: str, log_text: str, copy_root: Path,
                  implementation: Implementation) -> str:
    """One line: what failed to start, the error, and where in the user's files it was raised
    (the innermost frame in the service's code; a SyntaxError's own file and line)."""
    where = ""
    # A traceback lists the innermost frame last; a stack dumped for a start out of time
    # (faulthandler's "most recent call first") lists it first.
    innermost_first = False
    for line in log_text.splitlines():
        if "(most recent call first)" in line:
            innermost_first, where = True, ""
            continue
        frame = _FRAME.match(line)
        if frame is None:
            continue
        mapped = _user_file(frame["file"], copy_root, implementation)
        if mapped is not None and not (innermost_first and where):
            where = f"{mapped}:{frame['line']}"
    error = " ".join(error.split())
    # The error text itself may name the copy (a SyntaxError's filename): name the user's file.
    error = error.replace(str(copy_root.resolve()), str(implementation.service.root)).replace(
        str(copy_root), str(implementation.service.root))
    edited = ""
    if implementation.edit is not None and where.startswith(
            str(implementation.service.root / implementation.edit.file)):
        edited = f" (with the edit of {implementation.kind} {implementation.id} applied)"
    return f"{name} did not start: {error}" + (f" at {where}{edited}" if where else "")
