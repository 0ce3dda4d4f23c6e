"""What the value resolvers share: the "no constant" marker, limits, and small helpers."""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable
from typing import Any

NO = object()  # "not a constant"
MAX_DEPTH = 24
MAX_CONST = 100_000
STEP_BUDGET = 100_000  # steps per file (real tests need ~2,000); hostile code must not stall us
BUILTIN_NAMES = frozenset(dir(builtins))
BUILTIN_FIXTURES = frozenset({
    "tmp_path", "tmpdir", "tmp_path_factory", "tmpdir_factory", "monkeypatch", "request",
    "capsys", "capfd", "capsysbinary", "capfdbinary", "caplog", "recwarn", "pytestconfig",
    "record_property", "record_testsuite_property", "cache", "testdir", "pytester",
    "doctest_namespace", "mocker",
})
STR_METHODS = frozenset({"decode", "encode", "lower", "upper", "strip", "lstrip", "rstrip",
                         "replace", "join", "format", "removeprefix", "removesuffix", "title",
                         "swapcase", "casefold", "capitalize", "zfill", "hex", "translate",
                         "split", "rsplit", "center", "ljust", "rjust", "expandtabs"})



def worst(states: Iterable[Any], empty: Any) -> Any:
    chosen = None
    for state in states:
        if chosen is None or state.rank > chosen.rank:
            chosen = state
    return chosen if chosen is not None else empty


def snippet(node: ast.AST, limit: int = 60) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001 - unparse of a synthetic node; the message only suffers
        return type(node).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


class TooComplex(Exception):
    """The code needs more resolution steps than `STEP_BUDGET`: it is not analysed further."""

