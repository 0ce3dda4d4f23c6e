"""Parsing the JSON and TOML files people write, and writing JSON every reader takes."""

from __future__ import annotations

import json
import math

import pytest

from restbench.documents import DocumentError, parse_json, parse_toml, standard_json

DEEP_JSON = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(("text", "problem"), [
    ('{"a": 1,}', ("line 1, column 9: not valid JSON: Expecting property name enclosed in "
                  "double quotes")),
    # Before: a RecursionError out of json.loads, a traceback in every command that read one
    (DEEP_JSON, "not valid JSON: nested too deeply"),
    # Python's parser takes these; a browser's JSON.parse (the report's page) does not
    ('{"limit": NaN}', "not valid JSON: NaN is not a JSON number"),
    ("[-Infinity]", "not valid JSON: -Infinity is not a JSON number"),
])
def test_json_problems_are_one_line(text: str, problem: str) -> None:
    with pytest.raises(DocumentError) as caught:
        parse_json(text)
    assert str(caught.value) == problem


def test_non_finite_numbers_are_read_from_files_an_earlier_version_wrote() -> None:
    assert math.isnan(parse_json('{"x": NaN}', non_finite=True)["x"])
    with pytest.raises(DocumentError, match="nested too deeply"):
        parse_json(DEEP_JSON, non_finite=True)


@pytest.mark.parametrize(("text", "problem"), [
    ("a = [1,", "not valid TOML (Invalid value (at end of document))"),
    ("a = " + "[" * 100_000 + "]" * 100_000, "not valid TOML: nested too deeply"),
])
def test_toml_problems_are_one_line(text: str, problem: str) -> None:
    with pytest.raises(DocumentError) as caught:
        parse_toml(text)
    assert str(caught.value) == problem


def test_written_json_is_standard_and_otherwise_what_json_dumps_writes() -> None:
    plain = {"a": [1, 2.5, None, True], "b": {"c": "é"}}
    assert standard_json(plain, indent=2, ensure_ascii=False) == \
        json.dumps(plain, indent=2, ensure_ascii=False)
    odd = {"args": {"x": float("nan"), "y": [float("inf"), -float("inf")]}, "n": (1, 2)}
    text = standard_json(odd, separators=(",", ":"))
    assert text == '{"args":{"x":"NaN","y":["Infinity","-Infinity"]},"n":[1,2]}'
    parse_json(text)  # and strict readers take it
