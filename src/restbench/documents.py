"""JSON and TOML as people write them: parsed with errors fit for one line after the file's name,
and JSON written so that every other parser reads it back."""

from __future__ import annotations

import json
import math
import tomllib
from typing import Any


class DocumentError(ValueError):
    """What is wrong with a document's text; the caller puts the file's name in front."""


def parse_json(text: str, *, non_finite: bool = False) -> Any:
    """Standard JSON: Python's parser also takes NaN and Infinity, which no other reader of the
    file would (a browser's JSON.parse among them), so they are an error here unless
    `non_finite` (files an earlier restbench may have written with them)."""
    try:
        return json.loads(text, parse_constant=None if non_finite else _no_constant)
    except json.JSONDecodeError as exc:
        raise DocumentError(f"line {exc.lineno}, column {exc.colno}: not valid JSON: "
                            f"{exc.msg}") from None
    except RecursionError:
        raise DocumentError("not valid JSON: nested too deeply") from None


def _no_constant(name: str) -> Any:
    raise DocumentError(f"not valid JSON: {name} is not a JSON number")


def parse_toml(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DocumentError(f"not valid TOML ({exc})") from None
    except RecursionError:
        raise DocumentError("not valid TOML: nested too deeply") from None


def standard_json(value: Any, **options: Any) -> str:
    """`json.dumps(value, **options)`, with NaN and the infinities (a model's tool-call arguments
    may hold them) written as the strings "NaN", "Infinity" and "-Infinity" instead of the bare
    words only Python reads back."""
    try:
        return json.dumps(value, allow_nan=False, **options)
    except ValueError as exc:
        if "Out of range float" not in str(exc):
            raise
    return json.dumps(_finite(value), allow_nan=False, **options)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value
