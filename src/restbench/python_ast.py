"""Python source to `ast` trees and trees to code, safe from several threads at once.

CPython 3.11 keeps the depth counter of its tree conversions (`ast.parse`, and `compile` of a
tree) in state the whole interpreter shares. When a garbage collection inside one thread's
conversion lets another thread run and convert too, one of them fails with
SystemError("AST constructor recursion depth mismatch"). restbench converts from several threads
(each generator of a run has one: the baselines read their runtime and check their literals,
the LLM generators check each answer's syntax), and that error made a generation fail at random
under load. So its conversions take one lock, and one that meets the error all the same (a
library's thread converting at that moment) is made again.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Callable
from types import CodeType
from typing import Any, TypeVar

# Reentrant: a finalizer that a collection runs inside a conversion may convert too.
_CONVERTING = threading.RLock()
_ATTEMPTS = 3
_MISMATCH = "recursion depth mismatch"

_T = TypeVar("_T")


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse(source, filename)`."""
    return _converting(lambda: ast.parse(source, filename))


def literal_eval(source: str) -> Any:
    """`ast.literal_eval(source)`, which parses too."""
    return ast.literal_eval(_converting(lambda: ast.parse(source.lstrip(" \t"), mode="eval")))


def compile_tree(tree: ast.Module, filename: str) -> CodeType:
    """`compile(tree, filename, "exec", dont_inherit=True)`."""
    return _converting(lambda: compile(tree, filename, "exec", dont_inherit=True))


def _converting(conversion: Callable[[], _T]) -> _T:
    for attempt in range(1, _ATTEMPTS + 1):
        with _CONVERTING:
            try:
                return conversion()
            except SystemError as error:
                if _MISMATCH not in str(error) or attempt == _ATTEMPTS:
                    raise
    raise AssertionError("unreachable")
