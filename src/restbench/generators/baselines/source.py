"""Writing a baseline's pytest file: a header, embedded data as Python literals, a test."""

from __future__ import annotations

import functools
import hashlib
import json
import pprint
import textwrap
from pathlib import Path
from typing import Any

from restbench import python_ast
from restbench.generators.base import GenerationTask

RUNTIME = Path(__file__).with_name("runtime.py")
WIDTH = 99


@functools.cache  # read and parsed once per process, not for each of a run's ~1,000 tests
def runtime_source() -> str:
    """runtime.py without its module docstring, to paste into a generated test."""
    text = RUNTIME.read_text(encoding="utf-8")
    docstring = python_ast.parse(text).body[0]
    return "\n".join(text.splitlines()[docstring.end_lineno:]).strip() + "\n"


def calls_digest(plan: dict[str, Any]) -> str:
    """What the requests of a plan-running test (status-oracle, schema-oracle) depend on: the
    runtime that sends them and the plan without what is only checked (declared responses and
    their schemas). Two tests with the same digest send the same requests, in the same order."""
    calls = {key: value for key, value in plan.items() if key != "components"}
    calls["steps"] = [{k: v for k, v in step.items() if k != "responses"}
                      for step in plan["steps"]]
    text = runtime_source() + json.dumps(calls, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


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
    """The file's docstring. It names neither the wording nor the requirement: a baseline's file
    depends only on the operations it calls (and the service), so every requirement that lists
    the same operations in the same order gets the same file, and its executions are shared."""
    text = (f"{generator} baseline for {task.service_name}, written by restbench from the "
            f"OpenAPI document without reading any requirement's text: every requirement that "
            f"lists these operations, in this order, gets this file.\n\n"
            f"Operations: {', '.join(task.operations)}.\n\n{what}")
    paragraphs = [textwrap.fill(p, width=WIDTH) for p in text.split("\n\n")]
    return '"""' + "\n\n".join(paragraphs) + '\n"""\n'


def test_file(*parts: str) -> str:
    return "\n\n".join(part.strip("\n") for part in parts if part) + "\n"


def test_name(prefix: str, task: GenerationTask) -> str:
    """Named after the service, not the requirement (see `header`)."""
    suffix = "".join(c if c.isalnum() else "_" for c in task.service_name.lower())
    return f"test_{prefix}_{suffix}"
