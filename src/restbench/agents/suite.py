"""Agent test files: the published JSON Schema, loading, and one error per problem with its JSON path.

A test file holds one suite (`{"name", "test_cases": [...]}`) or a list of suites. A tool call's
arguments may be given as `args` or, as a synonym, `arguments`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, ValidationError

from restbench.documents import DocumentError, parse_json
from restbench.errors import DataError

SCHEMA_FILE = "suite.schema.json"
MESSAGE_LIMIT = 160


class SuiteError(DataError):
    """A test file that is not valid; `problems` has one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class ExpectedCall:
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    status: int | None = None  # the answer the call must get; None: any success (below 400)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "args": self.args,
                **({"status": self.status} if self.status is not None else {})}


@dataclass(frozen=True)
class ExpectedOutput:
    response: str
    keywords: tuple[str, ...]
    tool_calls: tuple[ExpectedCall, ...]


@dataclass(frozen=True)
class EvalCase:
    name: str
    description: str
    intent: str
    expected: ExpectedOutput
    suite: str
    path: str  # where the case is in its file, e.g. "$[1].test_cases[3]"


@dataclass(frozen=True)
class EvalSuite:
    name: str
    service: str | None
    cases: tuple[EvalCase, ...]
    path: str  # "$" or "$[i]"


@cache
def suite_schema() -> dict[str, Any]:
    """The published JSON Schema of a test file."""
    text = (resources.files("restbench.agents") / SCHEMA_FILE).read_text(encoding="utf-8")
    return dict(json.loads(text))


def schema_text() -> str:
    return json.dumps(suite_schema(), indent=2)


def json_path(parts: list[str | int] | tuple[str | int, ...], root: str = "$") -> str:
    text = root
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part.isidentifier():
            text += f".{part}"
        else:
            text += f"[{json.dumps(part)}]"
    return text


def _message(error: ValidationError) -> str:
    if error.validator == "oneOf" and isinstance(error.instance, dict):
        if "args" in error.instance and "arguments" in error.instance:
            return "give 'args' or its synonym 'arguments', not both"
        return "'args' (or its synonym 'arguments') is a required property"
    message = " ".join(error.message.split())
    return message if len(message) <= MESSAGE_LIMIT else message[:MESSAGE_LIMIT] + "…"


def _sort_key(error: ValidationError) -> list[tuple[bool, Any]]:
    return [(isinstance(part, str), part) for part in error.absolute_path]


def _schema_problems(document: Any, where: str) -> list[str]:
    schema = suite_schema()
    suite_only = {"$schema": schema["$schema"], "$defs": schema["$defs"],
                  "$ref": "#/$defs/TestSuite"}
    validator = Draft202012Validator(suite_only)
    if isinstance(document, list):
        if not document:
            return [f"{where}: $: the list of test suites is empty"]
        items = [(f"$[{i}]", item) for i, item in enumerate(document)]
    elif isinstance(document, dict):
        items = [("$", document)]
    else:
        return [(f"{where}: $: expected a test suite (an object with 'test_cases') "
                f"or a list of them, got {type(document).__name__}")]
    problems = []
    for root, item in items:
        for error in sorted(validator.iter_errors(item), key=_sort_key):
            problems.append(f"{where}: {json_path(list(error.absolute_path), root)}: "
                            f"{_message(error)}")
    return problems


def _suite(raw: dict[str, Any], root: str, default_name: str) -> EvalSuite:
    name = str(raw.get("name") or default_name)
    cases = []
    for i, case in enumerate(raw["test_cases"]):
        expected = case["expected_output"]
        calls = tuple(ExpectedCall(str(call["name"]),
                                   dict(call.get("args", call.get("arguments", {}))),
                                   call.get("status"))
                      for call in expected["tool_calls"])
        cases.append(EvalCase(
            name=case["name"], description=case["description"], intent=case["intent"],
            expected=ExpectedOutput(expected["response"], tuple(expected["keywords"]), calls),
            suite=name, path=f"{root}.test_cases[{i}]"))
    return EvalSuite(name, raw.get("service"), tuple(cases), root)


def parse_suites(document: Any, where: str) -> list[EvalSuite]:
    """Checks `document` (already parsed JSON) against the schema; every problem is reported."""
    problems = _schema_problems(document, where)
    if problems:
        raise SuiteError(problems)
    if isinstance(document, dict):
        suites = [_suite(document, "$", Path(where).stem)]
    else:
        suites = [_suite(raw, f"$[{i}]", f"{Path(where).stem}-{i + 1}")
                  for i, raw in enumerate(document)]
    problems = [problem for suite in suites for problem in _duplicate_names(suite, where)]
    named: dict[str, str] = {}
    for suite in suites:
        if suite.name in named:
            problems.append(f"{where}: {suite.path}.name: duplicate suite name '{suite.name}' "
                            f"(also {named[suite.name]}); a case is known by its suite and name")
        named.setdefault(suite.name, suite.path)
    if problems:
        raise SuiteError(problems)
    return suites


def _duplicate_names(suite: EvalSuite, where: str) -> list[str]:
    """A case's name is its id in the results (as a test id is in grade): one per suite."""
    seen: set[str] = set()
    problems = []
    for case in suite.cases:
        if case.name in seen:
            problems.append(f"{where}: {case.path}.name: duplicate test name '{case.name}' in "
                            f"suite '{suite.name}'")
        seen.add(case.name)
    return problems


def load_suites(path: Path) -> list[EvalSuite]:
    """Reads a test file; any problem raises SuiteError before anything runs."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SuiteError([f"{path}: no such file"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError([f"{path}: cannot read: {exc}"]) from None
    try:
        document = parse_json(text)
    except DocumentError as exc:
        raise SuiteError([f"{path}: {exc}"]) from None
    return parse_suites(document, str(path))


def builtin_suite(service: str) -> Path:
    """The example test file shipped for a built-in service."""
    return Path(str(resources.files("restbench.agents") / "examples" / f"{service}.json"))
