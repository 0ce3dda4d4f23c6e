"""Writing a baseline's pytest file: a header, embedded data as Python literals, a test."""

from __future__ import annotations

import ast
import functools
import pprint
import textwrap
from pathlib import Path
from typing import Any

from restbench.generators.base import GenerationTask

RUNTIME = Path(__file__).with_name("runtime.py")
WIDTH = 99


@functools.cache  # read and parsed once per process, not for each of a run's ~1,000 tests
def runtime_source() -> str:
    """runtime.py without its module docstring, to paste into a generated test."""
    text = RUNTIME.read_text(encoding="utf-8")
    docstring = ast.parse(text).body[0]
    return "\n".join(text.splitlines()[docstring.end_lineno:]).strip() + "\n"


def literal(name: str, value: Any) -> str:
    """`name = value` as pprint writes it. Memoized by the value's repr (the same repr, the same
    text): precise and vague give the same plans, and pprint is most of writing a file."""
    key = (name, repr(value))
    text = _written.get(key)
    if text is None:
        text = f"{name} = {pprint.pformat(value, width=WIDTH, sort_dicts=False)}\n"
        if len(_written) >= LITERALS_KEPT:
            _written.pop(next(iter(_written)))
        _written[key] = text
    return text


LITERALS_KEPT = 512
_written: dict[tuple[str, str], str] = {}


def header(generator: str, task: GenerationTask, what: str) -> str:
    """The file's docstring. It names no wording: precise and vague give the same file."""
    text = (f"{generator} baseline for {task.requirement_id} ({task.service_name}), written by "
            f"restbench without reading the requirement's text.\n\n"
            f"Operations: {', '.join(task.operations)}.\n\n{what}")
    paragraphs = [textwrap.fill(p, width=WIDTH) for p in text.split("\n\n")]
    return '"""' + "\n\n".join(paragraphs) + '\n"""\n'


def test_file(*parts: str) -> str:
    return "\n\n".join(part.strip("\n") for part in parts if part) + "\n"


def test_name(prefix: str, task: GenerationTask) -> str:
    suffix = "".join(c if c.isalnum() else "_" for c in task.requirement_id.lower())
    return f"test_{prefix}_{suffix}"
