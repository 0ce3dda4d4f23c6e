"""Parsing from several threads at once: on CPython 3.11, a garbage collection inside one
thread's `ast.parse` that lets another thread parse makes one of them fail with SystemError
(it made a baseline's generation fail under load). restbench's conversions take turns."""

from __future__ import annotations

import ast
import gc
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from restbench import python_ast

SOURCE = "\n".join(f"def f{i}(a):\n    return [x + {i} for x in a]" for i in range(50))


def _interrupted_parse(parse: Callable[[str], Any], source: str = SOURCE) -> list[str]:
    """`parse(source)` in this thread, and in another while this one's is at its fifth garbage
    collection (every allocation collects; the callback hands the interpreter over). Returns
    how each parse ended, in the order they did."""
    handed_over = threading.Event()
    events: list[str] = []
    collections = 0

    def collecting(phase: str, _info: dict[str, Any]) -> None:
        nonlocal collections
        if phase == "start":
            collections += 1
            if collections == 5:
                handed_over.set()
                time.sleep(0.2)  # the other thread runs meanwhile

    def parse_in(name: str) -> None:
        try:
            parse(source)
            events.append(f"{name} parsed")
        except SystemError as error:
            events.append(f"{name}: {error}")

    other = threading.Thread(target=lambda: handed_over.wait(10) and parse_in("other"))
    other.start()
    threshold = gc.get_threshold()
    gc.collect()
    gc.callbacks.append(collecting)
    gc.set_threshold(1)
    try:
        parse_in("this")
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(collecting)
        handed_over.set()
        other.join()
    return events


def test_a_parse_interrupted_by_another_threads_waits_for_it() -> None:
    assert _interrupted_parse(python_ast.parse) == ["this parsed", "other parsed"]


def test_the_interruption_breaks_a_plain_parse_on_python_3_11() -> None:
    """What the lock is for (fixed, or not, in later Pythons)."""
    events = _interrupted_parse(ast.parse)
    if sys.version_info[:2] == (3, 11):
        assert any("recursion depth mismatch" in event for event in events), events


def test_the_error_met_anyway_is_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A library's thread converting without the lock can still cause it: the parse is made
    again, and any other SystemError is not."""
    calls = []
    real_parse = ast.parse

    def flaky(source: str, filename: str = "<unknown>") -> ast.Module:
        calls.append(source)
        if len(calls) == 1:
            raise SystemError("AST constructor recursion depth mismatch (before=48, after=13)")
        return real_parse(source, filename)

    monkeypatch.setattr(ast, "parse", flaky)
    assert isinstance(python_ast.parse("x = 1"), ast.Module) and len(calls) == 2

    def broken(source: str, filename: str = "<unknown>") -> ast.Module:
        raise SystemError("something else")

    monkeypatch.setattr(ast, "parse", broken)
    with pytest.raises(SystemError, match="^something else$"):
        python_ast.parse("x = 1")


def test_literals_are_read_back_in_turn_too() -> None:
    literal = repr([{"id": i, "tags": [str(i), None, i / 2]} for i in range(100)])
    assert _interrupted_parse(python_ast.literal_eval, literal) == ["this parsed", "other parsed"]
    if sys.version_info[:2] == (3, 11):
        assert any("recursion depth mismatch" in event
                   for event in _interrupted_parse(ast.literal_eval, literal))
    assert python_ast.literal_eval("  {'a': [1, 2.5, None]}") == {"a": [1, 2.5, None]}
    with pytest.raises(ValueError, match="malformed"):
        python_ast.literal_eval("len('x')")
