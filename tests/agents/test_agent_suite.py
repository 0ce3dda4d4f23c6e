"""Agent test files: the published schema, one error per problem with its JSON path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from restbench.agents.suite import (
    SuiteError,
    builtin_suite,
    load_suites,
    parse_suites,
    suite_schema,
)
from restbench.benchmark.loader import builtin_service_names


def _case(**expected: object) -> dict[str, object]:
    output = {"response": "ok", "keywords": [], "tool_calls": []}
    output.update(expected)
    return {"name": "c", "description": "d", "intent": "i", "expected_output": output}


def _problems(document: object) -> list[str]:
    with pytest.raises(SuiteError) as caught:
        parse_suites(document, "suite.json")
    return caught.value.problems


def test_every_problem_is_reported_with_its_json_path() -> None:
    document = {"name": "s", "test_cases": [
        _case(),
        {"name": "no intent", "description": "d", "expected_output": {"response": "r",
                                                                       "keywords": ["k", 3]}},
        _case(tool_calls=[{"args": {}}, {"name": "x", "args": {}, "arguments": {}},
                          {"name": "y"}, {"name": "z", "args": []}]),
    ]}
    assert _problems(document) == [
        "suite.json: $.test_cases[1]: 'intent' is a required property",
        "suite.json: $.test_cases[1].expected_output: 'tool_calls' is a required property",
        "suite.json: $.test_cases[1].expected_output.keywords[1]: 3 is not of type 'string'",
        ("suite.json: $.test_cases[2].expected_output.tool_calls[0]: 'name' is a required "
        "property"),
        ("suite.json: $.test_cases[2].expected_output.tool_calls[1]: give 'args' or its synonym "
        "'arguments', not both"),
        ("suite.json: $.test_cases[2].expected_output.tool_calls[2]: 'args' (or its synonym "
        "'arguments') is a required property"),
        ("suite.json: $.test_cases[2].expected_output.tool_calls[3].args: [] is not of type "
        "'object'"),
    ]


def test_a_list_of_suites_and_the_arguments_synonym() -> None:
    first = {"name": "one", "test_cases": [_case(tool_calls=[{"name": "t", "arguments": {"a": 1}}])]}
    second = {"test_cases": [_case(), _case(keywords=["k"]) | {"name": "c2"}]}
    suites = parse_suites([first, second], "dir/many.json")
    assert [s.name for s in suites] == ["one", "many-2"]
    assert suites[0].cases[0].expected.tool_calls[0].args == {"a": 1}
    assert suites[1].cases[1].path == "$[1].test_cases[1]"
    assert _problems([first, {"test_cases": []}]) == [
        "suite.json: $[1].test_cases: [] should be non-empty"]
    assert _problems("text") == [
        ("suite.json: $: expected a test suite (an object with 'test_cases') or a list of them, "
        "got str")]


def test_unreadable_files_name_the_file_and_place(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"test_cases": [\n  {"name": "a",}\n]}')
    with pytest.raises(SuiteError, match=r"broken.json: line 2, column 16: not valid JSON"):
        load_suites(broken)
    with pytest.raises(SuiteError, match="missing.json: no such file"):
        load_suites(tmp_path / "missing.json")


@pytest.mark.parametrize("service", builtin_service_names())
def test_the_shipped_examples_fit_the_published_schema(service: str) -> None:
    document = json.loads(builtin_suite(service).read_text())
    Draft202012Validator(suite_schema()).validate(document)
    suite = load_suites(builtin_suite(service))[0]
    assert suite.service == service and len(suite.cases) >= 10
    assert all(call.name.startswith(f"{service}_") for case in suite.cases
               for call in case.expected.tool_calls)
