"""Graded evaluation datasets: a folder with `<folder>.json` and the input files it names.

The JSON document is checked against the published schema (`restbench grade --schema`), then for
what a schema cannot say (unique test ids, input files that exist and parse, regular expressions
that compile). Every problem is reported, one line each, naming the file and the JSON path.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator

from restbench.documents import DocumentError, parse_json
from restbench.errors import DataError

DEFAULT_BASE_URL = "http://localhost:8000"
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # C: fast, and no recursion limit
SCHEMA_FILE = "dataset.schema.json"
REGEX_FLAGS = {"IGNORECASE": re.IGNORECASE, "MULTILINE": re.MULTILINE, "DOTALL": re.DOTALL,
               "VERBOSE": re.VERBOSE}


class DatasetError(DataError):
    """One or more problems in datasets; the message has one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Check:
    type: str
    description: str
    value: str = ""
    ignore_case: bool = False
    pattern: str = ""
    flags: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    allowed: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def regex(self) -> re.Pattern[str]:
        flags = 0
        for name in self.flags:
            flags |= REGEX_FLAGS[name]
        return re.compile(self.pattern, flags)


@dataclass(frozen=True)
class TestCase:
    __test__ = False  # not a pytest class, despite the name

    test_id: str
    name: str
    base_url: str
    openapi_file: Path
    requirement_file: Path
    seed_test_file: Path | None
    criteria: tuple[str, ...]
    checks: tuple[Check, ...]
    description: str = ""

    @property
    def requirement(self) -> str:
        return self.requirement_file.read_text(encoding="utf-8").strip()

    @property
    def seed_test(self) -> str | None:
        return self.seed_test_file.read_text(encoding="utf-8") if self.seed_test_file else None

    def openapi(self) -> dict[str, Any]:
        return _read_document(self.openapi_file)


@dataclass(frozen=True)
class Dataset:
    name: str
    root: Path
    file: Path
    cases: tuple[TestCase, ...]
    description: str = ""


@cache
def schema() -> dict[str, Any]:
    text = (resources.files("restbench.grading") / SCHEMA_FILE).read_text(encoding="utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


def schema_text() -> str:
    return json.dumps(schema(), indent=2)


def builtin_datasets_root() -> Path:
    return Path(str(resources.files("restbench.grading") / "datasets"))


def builtin_dataset_names() -> list[str]:
    root = builtin_datasets_root()
    return sorted(p.name for p in root.iterdir() if (p / f"{p.name}.json").is_file())


def resolve_dataset_path(name: str) -> Path:
    """A dataset folder, its JSON file, or the name of a shipped dataset -> the JSON file."""
    path = Path(name).expanduser()
    if path.is_file():
        return path
    if path.is_dir():
        return path / f"{path.name}.json"
    builtin = builtin_datasets_root() / name
    if builtin.is_dir():
        return builtin / f"{name}.json"
    known = ", ".join(builtin_dataset_names())
    raise DatasetError([f"unknown dataset '{name}': not a folder, not a file and not a "
                        + f"shipped dataset ({known})"])


def load_datasets(names: list[str]) -> list[Dataset]:
    """Loads every dataset; all problems of all of them are raised together."""
    problems: list[str] = []
    datasets = []
    for name in names:
        try:
            datasets.append(load_dataset(resolve_dataset_path(name)))
        except DatasetError as exc:
            problems.extend(exc.problems)
    seen: dict[str, Path] = {}
    for dataset in datasets:
        if dataset.name in seen:
            problems.append(f"{dataset.file}: $.dataset_name: '{dataset.name}' is also the name of "
                            f"{seen[dataset.name]}")
        seen[dataset.name] = dataset.file
    if problems:
        raise DatasetError(problems)
    return datasets


def load_dataset(file: Path) -> Dataset:
    if not file.is_file():
        raise DatasetError([f"{file}: missing: a dataset folder holds <folder>.json"])
    try:
        raw = parse_json(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DatasetError([f"{file}: cannot read: {exc.strerror}"]) from None
    except UnicodeDecodeError as exc:
        raise DatasetError([f"{file}: not UTF-8 text (byte {exc.start})"]) from None
    except DocumentError as exc:
        raise DatasetError([f"{file}: {exc}"]) from None
    validator = Draft202012Validator(schema())
    problems = [f"{file}: {error.json_path}: {error.message}"
                for error in sorted(validator.iter_errors(raw), key=lambda e: list(e.path))]
    problems += _content_problems(file, raw)
    if problems:
        raise DatasetError(list(dict.fromkeys(problems)))
    return _build(file, raw)


def _content_problems(file: Path, raw: Any) -> list[str]:
    """What the schema cannot check, on whatever parts of the document are shaped well enough:
    unique test ids, input files that exist and parse, regular expressions that compile."""
    cases = raw.get("test_cases") if isinstance(raw, dict) else None
    if not isinstance(cases, list):
        return []
    problems = []
    seen: set[str] = set()
    for position, item in enumerate(cases):
        if not isinstance(item, dict):
            continue
        where = f"{file}: $.test_cases[{position}]"
        test_id = item.get("test_id")
        if isinstance(test_id, str):
            if test_id in seen:
                problems.append(f"{where}.test_id: duplicate test id '{test_id}'")
            seen.add(test_id)
        inputs = item.get("inputs")
        for key, relative in (inputs.items() if isinstance(inputs, dict) else []):
            if not isinstance(relative, str) or not relative:
                continue
            path = file.parent / relative
            problem = _input_problem(file.parent, relative)
            if problem:
                problems.append(f"{where}.inputs.{key}: {problem}")
            elif key == "openapi":
                try:
                    _read_document(path)
                except ValueError as exc:
                    problems.append(f"{where}.inputs.openapi: {exc}")
            elif key in ("requirement", "seed_test"):
                try:
                    text = path.read_text(encoding="utf-8")
                except OSError as exc:
                    problems.append(f"{where}.inputs.{key}: cannot read {relative}: "
                                    f"{exc.strerror}")
                except UnicodeDecodeError as exc:
                    problems.append(f"{where}.inputs.{key}: {relative} is not UTF-8 text "
                                    f"(byte {exc.start})")
                else:
                    if key == "requirement" and not text.strip():
                        problems.append(f"{where}.inputs.requirement: {relative} is empty")
        checks = item.get("checks")
        for number, spec in enumerate(checks if isinstance(checks, list) else []):
            pattern = spec.get("pattern") if isinstance(spec, dict) else None
            if isinstance(pattern, str):
                try:
                    re.compile(pattern)
                except re.error as exc:
                    problems.append(f"{where}.checks[{number}].pattern: not a valid regular "
                                    f"expression: {exc}")
        if item.get("evaluation_criteria") == [] and not checks:
            problems.append(f"{where}: no evaluation_criteria and no checks: nothing to grade")
    return problems


def _input_problem(folder: Path, relative: str) -> str | None:
    """What keeps `relative` from naming an input file of the dataset in `folder`, if anything."""
    path = folder / relative
    if not path.resolve().is_relative_to(folder.resolve()):
        return f"input file {relative} is outside the dataset folder {folder}"
    if path.is_dir():
        return f"input file {relative} is a folder, not a file, in {folder}"
    if path.exists() and not path.is_file():
        return f"input file {relative} is not a regular file (a pipe, socket or device) in {folder}"
    if not path.is_file():
        return f"input file {relative} does not exist in {folder}"
    return None


def _build(file: Path, raw: dict[str, Any]) -> Dataset:
    root = file.parent
    default_base = raw.get("base_url", DEFAULT_BASE_URL)
    cases = []
    for item in raw["test_cases"]:
        inputs = item["inputs"]
        cases.append(TestCase(
            test_id=item["test_id"], name=item["name"],
            base_url=item.get("base_url", default_base),
            openapi_file=root / inputs["openapi"], requirement_file=root / inputs["requirement"],
            seed_test_file=root / inputs["seed_test"] if inputs.get("seed_test") else None,
            criteria=tuple(item["evaluation_criteria"]),
            checks=tuple(_check(spec) for spec in item.get("checks", [])),
            description=item.get("description", "")))
    return Dataset(name=raw["dataset_name"], root=root, file=file, cases=tuple(cases),
                   description=raw.get("description", ""))


def _check(spec: dict[str, Any]) -> Check:
    kind = spec["type"]
    return Check(type=kind, description=spec.get("description") or _describe(spec),
                 value=spec.get("value", ""), ignore_case=spec.get("ignore_case", False),
                 pattern=spec.get("pattern", ""), flags=tuple(spec.get("flags", ())),
                 required=tuple(spec.get("required", ())),
                 forbidden=tuple(spec.get("forbidden", ())),
                 allowed=tuple(spec.get("allowed", ())), ignore=tuple(spec.get("ignore", ())))


def _describe(spec: dict[str, Any]) -> str:
    kind = spec["type"]
    if kind == "contains":
        return f"the test contains {spec['value']!r}"
    if kind == "not_contains":
        return f"the test does not contain {spec['value']!r}"
    if kind == "regex_match":
        return f"the test matches /{spec['pattern']}/"
    if kind == "regex_not_match":
        return f"the test does not match /{spec['pattern']}/"
    if kind == "imports":
        parts = []
        for key, verb in (("required", "imports"), ("forbidden", "does not import"),
                          ("allowed", "imports only")):
            if spec.get(key):
                parts.append(f"{verb} {', '.join(spec[key])}")
        return "the test " + "; ".join(parts)
    return ("static security: no network calls beyond the base URL, no environment reads, no "
            "file access outside the scratch directory, no processes, no dynamic code, no "
            "sockets, no disabled assertions")


def _read_document(path: Path) -> dict[str, Any]:
    """An OpenAPI document, JSON or YAML; ValueError with a one-line reason when it is not one."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path.name}: cannot read: {exc}") from None
    try:
        data = parse_json(text) if path.suffix == ".json" else yaml.load(text, Loader=_YAML_LOADER)
    except DocumentError as exc:
        raise ValueError(f"{path.name}: {exc}") from None
    except (yaml.YAMLError, RecursionError) as exc:
        reason = str(exc).splitlines()[0] if isinstance(exc, yaml.YAMLError) else \
            "nested too deeply"
        raise ValueError(f"{path.name} is not valid YAML: {reason}") from None
    if not isinstance(data, dict) or not ("openapi" in data or "swagger" in data):
        raise ValueError(f"{path.name} is not an OpenAPI document (no 'openapi' field)")
    return data
