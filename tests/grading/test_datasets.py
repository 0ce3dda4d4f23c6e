"""Datasets: the shipped ones load, the schema is published, bad ones get one line per problem."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from restbench.grading import DatasetError, Kind, builtin_dataset_names, load_datasets
from restbench.grading.dataset import builtin_datasets_root, schema
from restbench.grading.security import analyze
from tests.cli_helpers import restbench


def test_shipped_datasets_are_valid_and_large_enough() -> None:
    assert builtin_dataset_names() == ["conventions", "prompt-injection"]
    injection, conventions = load_datasets(["prompt-injection", "conventions"])
    assert len(injection.cases) >= 8 and len(conventions.cases) >= 6
    for case in [*injection.cases, *conventions.cases]:
        assert case.openapi()["openapi"].startswith("3.")
        assert case.requirement
        assert case.criteria and any(check.type == "static-security" for check in case.checks)


def test_injections_are_planted_where_an_untrusted_document_can_carry_them() -> None:
    injection = load_datasets(["prompt-injection"])[0]
    planted = " ".join(case.description for case in injection.cases)
    for place in ("info.description", "description of POST", "query parameter", "schema",
                  "example", "response description", "security scheme", "servers"):
        assert place in planted, place
    services = {json.loads(case.openapi_file.read_text())["info"]["title"]
                for case in injection.cases}
    assert len(services) == 3


def test_the_schema_is_published_and_names_every_finding_kind() -> None:
    Draft202012Validator.check_schema(schema())
    result = restbench("grade", "--schema")
    assert result.returncode == 0
    assert json.loads(result.stdout) == schema()
    static = schema()["$defs"]["check"]["allOf"][3]["then"]["properties"]["ignore"]
    assert static["items"]["enum"] == [kind.value for kind in Kind]


def test_a_dataset_path_may_be_its_folder_or_its_file(tmp_path: Path) -> None:
    copy = tmp_path / "my-suite"
    shutil.copytree(builtin_datasets_root() / "conventions", copy)
    (copy / "conventions.json").rename(copy / "my-suite.json")
    by_folder = load_datasets([str(copy)])[0]
    by_file = load_datasets([str(copy / "my-suite.json")])[0]
    assert by_folder.name == by_file.name == "conventions"
    assert by_folder.cases[0].openapi_file.parent == copy / "inputs"


def _write(folder: Path, data: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{folder.name}.json").write_text(json.dumps(data))
    return folder


def _case(**changes: object) -> dict[str, object]:
    case: dict[str, object] = {"test_id": "C-1", "name": "a case",
                               "inputs": {"openapi": "api.json", "requirement": "req.txt"},
                               "evaluation_criteria": ["it is fine"]}
    case.update(changes)
    return case


def test_every_problem_is_one_line_naming_file_and_json_path(tmp_path: Path) -> None:
    folder = _write(tmp_path / "bad", {"dataset_name": "bad", "test_cases": [
        _case(checks=[{"type": "contains"}, {"type": "regex_match", "pattern": "("},
                      {"type": "static-security", "ignore": ["network", "nope"]}]),
        _case(name="", inputs={"openapi": "api.json"}, surprise=1),
        _case(evaluation_criteria=[], inputs={"openapi": "api.json", "requirement": "req.txt",
                                              "seed_test": "seed.py"}),
        # Before: both said "does not exist" (the first file does exist, outside the folder)
        _case(test_id="C-4", inputs={"openapi": "api.json", "requirement": "../outside.txt",
                                     "seed_test": "inputs"}),
    ]})
    (tmp_path / "outside.txt").write_text("A requirement from elsewhere.\n")
    (folder / "inputs").mkdir()
    (folder / "api.json").write_text('{"openapi": "3.1.0", "info": {}, "paths": {}}')
    (folder / "req.txt").write_text("The thing works.\n")
    result = restbench("grade", "-d", folder, "-m", "never-called")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ")  # before: an empty line first
    lines = result.stderr.strip().splitlines()
    file = str(folder / "bad.json")
    expected = [
        ("$.test_cases[0].checks[0]", "'value' is a required property"),
        ("$.test_cases[0].checks[1].pattern", "not a valid regular expression"),
        ("$.test_cases[0].checks[2].ignore[1]", "'nope' is not one of"),
        ("$.test_cases[1]", "'surprise' was unexpected"),
        ("$.test_cases[1].inputs", "'requirement' is a required property"),
        ("$.test_cases[1].name", "should be non-empty"),
        ("$.test_cases[1].test_id", "duplicate test id 'C-1'"),
        ("$.test_cases[2].inputs.seed_test", "input file seed.py does not exist"),
        ("$.test_cases[2]", "no evaluation_criteria and no checks"),
        ("$.test_cases[3].inputs.requirement",
         f"input file ../outside.txt is outside the dataset folder {folder}"),
        ("$.test_cases[3].inputs.seed_test", "input file inputs is a folder, not a file, in "
                                             + str(folder)),
    ]
    for path, problem in expected:
        assert any(line.startswith(f"error: {file}: {path}: ") and problem in line
                   for line in lines), (path, problem, lines)
    assert len(lines) == len(expected) + 1  # and the third case's duplicate id


@pytest.mark.parametrize(("content", "problem"), [
    ("{not json", "line 1, column 2: not valid JSON: Expecting property name"),
    ('{"dataset_name": "x"}', "$: 'test_cases' is a required property"),
    # Before: RecursionError tracebacks; NaN was taken, and is no JSON
    ('{"a":' * 100_000 + "1" + "}" * 100_000, "not valid JSON: nested too deeply"),
    ('{"dataset_name": "x", "test_cases": [], "n": NaN}',
     "not valid JSON: NaN is not a JSON number"),
])
def test_unreadable_documents(tmp_path: Path, content: str, problem: str) -> None:
    folder = tmp_path / "x"
    folder.mkdir()
    (folder / "x.json").write_text(content)
    with pytest.raises(DatasetError) as caught:
        load_datasets([str(folder)])
    assert len(caught.value.problems) == 1
    assert caught.value.problems[0].startswith(f"{folder / 'x.json'}: {problem}")


def test_inputs_that_cannot_be_read_as_text_are_found_before_anything_runs(
        tmp_path: Path) -> None:
    """Before: a requirement or seed test that is not UTF-8 passed, and each case it was in
    ended ungraded ("generation failed: UnicodeDecodeError"), naming no file; a FIFO was said
    not to exist (and reading it would have waited for a writer)."""
    folder = _write(tmp_path / "t", {"dataset_name": "t", "test_cases": [
        _case(), _case(test_id="C-2", inputs={"openapi": "api.json", "requirement": "ok.txt",
                                              "seed_test": "seed.py"}),
        _case(test_id="C-3", inputs={"openapi": "api.json", "requirement": "ok.txt",
                                     "seed_test": "pipe"})]})
    (folder / "api.json").write_text('{"openapi": "3.1.0", "info": {}, "paths": {}}')
    (folder / "req.txt").write_bytes(b"\xff\xfe the thing works")
    (folder / "ok.txt").write_text("The thing works.\n")
    (folder / "seed.py").write_bytes(b"def test_x():\n    assert '\xe9'\n")  # Latin-1
    os.mkfifo(folder / "pipe")
    with pytest.raises(DatasetError) as caught:
        load_datasets([str(folder)])
    file = folder / "t.json"
    assert caught.value.problems == [
        f"{file}: $.test_cases[0].inputs.requirement: req.txt is not UTF-8 text (byte 0)",
        f"{file}: $.test_cases[1].inputs.seed_test: seed.py is not UTF-8 text (byte 26)",
        (f"{file}: $.test_cases[2].inputs.seed_test: input file pipe is not a regular file (a "
         f"pipe, socket or device) in {folder}")]


def test_empty_model_names_are_refused_not_replaced_by_the_default(tmp_path: Path) -> None:
    """Before: `-m ''` and `--grader ''` fell back to gpt-5-mini, and the error named that
    model, which the user never gave."""
    for options, problem in ((("-m", ""), ("-m/--models '': names no model (it is empty); leave "
                              "-m out for the default, gpt-5-mini")),
                             (("-m", ","), "-m/--models ',': names no model"),
                             (("-m", "x", "--grader", " "), "--grader ' ': names no model")):
        done = restbench("grade", "-d", "conventions", *options, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("error: " + problem) and done.stderr.count("\n") == 1
        assert not (tmp_path / "grading-results").exists()


def test_an_input_that_is_not_an_openapi_document(tmp_path: Path) -> None:
    folder = _write(tmp_path / "s", {"dataset_name": "s", "test_cases": [_case()]})
    (folder / "api.json").write_text('{"swaggerish": true}')
    (folder / "req.txt").write_text("")
    with pytest.raises(DatasetError) as caught:
        load_datasets([str(folder)])
    assert caught.value.problems == [
        (f"{folder / 's.json'}: $.test_cases[0].inputs.openapi: api.json is not an OpenAPI "
         "document (no 'openapi' field)"),
        f"{folder / 's.json'}: $.test_cases[0].inputs.requirement: req.txt is empty"]


def test_unknown_names_and_clashing_datasets(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="unknown dataset 'nope'.*prompt-injection"):
        load_datasets(["nope"])
    copy = tmp_path / "again"
    shutil.copytree(builtin_datasets_root() / "conventions", copy)
    (copy / "conventions.json").rename(copy / "again.json")
    with pytest.raises(DatasetError, match=r"\$\.dataset_name: 'conventions' is also the name"):
        load_datasets(["conventions", str(copy)])


def test_a_clean_answer_passes_the_static_grader_on_every_shipped_case() -> None:
    """The golden test of each case's requirement stands for a model that ignores injections."""
    from tests.grading.answers import golden

    for dataset in load_datasets(["prompt-injection", "conventions"]):
        for case in dataset.cases:
            code = golden(case.requirement_file.stem, case.base_url)
            assert analyze(code, case.base_url) == [], case.test_id
