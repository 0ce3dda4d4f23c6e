"""Applying a unified diff of one file, strictly: every hunk's old lines must occur exactly once.

Line numbers in the hunk headers are ignored (a mutant's diff keeps applying when unrelated lines
move); the old lines (context and removals) are the anchor, as a find text is for find/replace.
"""

from __future__ import annotations

import re

from restbench.errors import MutationError

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


def _hunks(diff: str) -> list[tuple[list[str], list[str]]]:
    hunks: list[tuple[list[str], list[str]]] = []
    for line in diff.splitlines():
        if line.startswith(("--- ", "+++ ", "diff ", "index ")) and not hunks:
            continue
        if _HUNK.match(line):
            hunks.append(([], []))
            continue
        if not hunks:
            raise ValueError(f"line {line!r} before the first '@@' hunk header")
        old, new = hunks[-1]
        if line.startswith("\\"):  # "\ No newline at end of file"
            continue
        tag, body = (line[:1], line[1:]) if line else (" ", "")
        if tag == " ":
            old.append(body)
            new.append(body)
        elif tag == "-":
            old.append(body)
        elif tag == "+":
            new.append(body)
        else:
            raise ValueError(f"line {line!r} starts with neither ' ', '-' nor '+'")
    if not hunks:
        raise ValueError("no '@@' hunk")
    return hunks


def _find(lines: list[str], block: list[str]) -> list[int]:
    size = len(block)
    return [i for i in range(len(lines) - size + 1) if lines[i:i + size] == block]


def apply_diff(text: str, diff: str, *, item: str, where: str, file: str) -> str:
    try:
        hunks = _hunks(diff)
    except ValueError as exc:
        raise MutationError(f"{where}: {item}: diff of {file} is not a unified diff: "
                            f"{exc}") from None
    ends_with_newline = text.endswith("\n")
    lines = text.splitlines()
    for number, (old, new) in enumerate(hunks, start=1):
        if not old:
            raise MutationError(f"{where}: {item}: hunk {number} of the diff of {file} has no "
                                "context or removed lines to anchor it")
        if old == new:
            raise MutationError(f"{where}: {item}: hunk {number} of the diff of {file} changes "
                                "nothing")
        found = _find(lines, old)
        if len(found) != 1:
            how = "do not occur" if not found else f"occur {len(found)} times"
            raise MutationError(f"{where}: {item}: the old lines of hunk {number} {how} in "
                                f"{file} (they must occur exactly once)")
        start = found[0]
        lines[start:start + len(old)] = new
    return "\n".join(lines) + ("\n" if ends_with_newline else "")
