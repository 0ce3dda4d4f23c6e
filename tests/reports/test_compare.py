"""`restbench compare` end to end: two real runs of the `files` generator on the mini service
that differ in one test file, which kills one more mutant in the second run."""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from restbench.reports.compare import compare_runs
from tests.cli_helpers import restbench

FIXTURES = Path(__file__).parents[1] / "fixtures"
MINI = FIXTURES / "mini"

# Checks the first increment's value: kills "adds two" (MINI-02-M1), but not "does not store the
# new value" (MINI-02-M2), which answers 2 on the first call too.
CHECKS_FIRST_VALUE = """import requests


def test_increment():
    response = requests.post("http://localhost:8000/counters/a/increment", timeout=10)
    assert response.json() == {"value": 2}
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    root = tmp_path_factory.mktemp("compare")
    base_tests, new_tests = root / "base-tests", root / "new-tests"
    shutil.copytree(FIXTURES / "mini_tests", base_tests)
    shutil.copytree(FIXTURES / "mini_tests", new_tests)
    (new_tests / "precise" / "MINI-02.py").write_text(CHECKS_FIRST_VALUE)
    for name, tests in (("base", base_tests), ("new", new_tests)):
        result = restbench("run", "-s", MINI, "-g", "files", "-a", f"dir={tests}",
                           "-o", root / name)
        assert result.returncode == 0, result.stderr
    yield {"base": root / "base", "new": root / "new", "root": root}


def test_compare_shows_exactly_the_one_changed_mutant(runs: dict[str, Path]) -> None:
    comparison = compare_runs(runs["base"], runs["new"])
    by_variant = {row.variant: row for row in comparison.rows}
    precise, vague = by_variant["precise"], by_variant["vague"]
    assert precise.delta == pytest.approx(1 / 3)  # 1/3 -> 2/3 of the 3 mutants
    assert [(c.requirement, c.mutant, c.gained) for c in precise.changes] == \
        [("MINI-02", "MINI-02-M1", True)]
    assert vague.delta == 0 and vague.changes == ()
    assert vague.interval == (0.0, 0.0)
    # two requirements: resampling both picks MINI-01 (no change) or both MINI-02 (+1/2)
    low, high = precise.interval
    assert 0 <= low <= high <= 0.5 + 1e-9

    result = restbench("compare", runs["base"], runs["new"], "--markdown", "-")
    assert result.returncode == 0, result.stderr
    assert "mini · precise: MINI-02: MINI-02-M1 now killed" in result.stdout
    assert result.stdout.count("now killed") == 2  # the terminal line and the Markdown line
    assert "no longer killed" not in result.stdout
    assert "| files | - | mini | precise | 33.3% | 66.7% | **+33.3pp** |" in result.stdout
    assert "### restbench: `base` → `new`" in result.stdout  # the terminal table's order
    assert "| files | - | mini | vague | 66.7% | 66.7% | **+0.0pp** |" in result.stdout


def test_fail_below_gates_a_regression_not_an_improvement(runs: dict[str, Path]) -> None:
    improved = restbench("compare", runs["base"], runs["new"], "--fail-below", "0")
    assert improved.returncode == 0, improved.stderr
    regressed = restbench("compare", runs["new"], runs["base"], "--fail-below", "5",
                          "--markdown", runs["root"] / "comment.md")
    assert regressed.returncode == 1
    assert "regression: files · mini · precise: MS -33.3pp (allowed: -5pp)" in regressed.stderr
    assert "MINI-02-M1 no longer killed" in regressed.stdout
    comment = (runs["root"] / "comment.md").read_text()
    assert "**-33.3pp** ⚠️" in comment and "FAILED" in comment
    # a drop smaller than the allowance passes
    tolerant = restbench("compare", runs["new"], runs["base"], "--fail-below", "40")
    assert tolerant.returncode == 0, tolerant.stderr


def test_compare_refuses_a_folder_without_scores(runs: dict[str, Path], tmp_path: Path) -> None:
    result = restbench("compare", runs["base"], tmp_path)
    assert result.returncode == 2
    assert f"{tmp_path}: no scores.json" in result.stderr
    assert "Traceback" not in result.stderr
    # Before: "not a `restbench run` output folder", of a run that only had not finished
    unfinished = tmp_path / "unfinished"
    unfinished.mkdir()
    shutil.copy(runs["new"] / "results.sqlite3", unfinished)
    result = restbench("compare", runs["base"], unfinished)
    assert result.returncode == 2
    assert result.stderr == (f"error: {unfinished}: an unfinished `restbench run` (its "
                             "results.sqlite3 is there, its scores.json is not): rerunning the "
                             "same command finishes it, reusing what the store holds\n")


@pytest.mark.parametrize(("table", "key", "value", "wanted"), [
    ("scores", "ms", "high", "a number or null"),
    ("requirements", "killed", "lots", "a number or null"),
    ("requirements", "valid", "yes", "true or false"),
    # Before: report's traceback (compare does not read it)
    (None, "total_cost", "lots", "an object of numbers"),
    (None, "counts", {"executions": "many"}, "an object of numbers"),
])
def test_a_scores_json_with_a_value_of_the_wrong_type_is_one_line(
        runs: dict[str, Path], tmp_path: Path, table: str | None, key: str, value: object,
        wanted: str) -> None:
    """Before: compare and report ended in a TypeError or ValueError traceback."""
    edited = tmp_path / "edited"
    shutil.copytree(runs["new"], edited)
    scores = json.loads((edited / "scores.json").read_text())
    if table is None:
        scores[key] = value
    else:
        scores[table][0][key] = value
    (edited / "scores.json").write_text(json.dumps(scores))
    where = key if table is None else f"{table}[0].{key}"
    expected = f"error: {edited / 'scores.json'}: {where} must be {wanted}, not {value!r}"
    for command in (("compare", runs["base"], edited), ("report", edited, "-o",
                                                        tmp_path / "r.html")):
        result = restbench(*command)
        assert result.returncode == 2, result.stderr
        assert result.stderr.strip().splitlines()[-1] == expected, result.stderr


def test_a_requirement_row_without_its_keys_is_one_line(runs: dict[str, Path],
                                                        tmp_path: Path) -> None:
    """Before: compare ended in a KeyError traceback ('generator')."""
    edited = tmp_path / "edited"
    shutil.copytree(runs["new"], edited)
    scores = json.loads((edited / "scores.json").read_text())
    scores["requirements"][0] = {"service": "mini"}
    (edited / "scores.json").write_text(json.dumps(scores))
    result = restbench("compare", runs["base"], edited)
    assert result.returncode == 2, result.stderr
    assert result.stderr == (f"error: {edited / 'scores.json'}: requirements[0] lacks generator, "
                             "model, variant, requirement, mutants, killed\n")


def test_rows_without_a_requirement_in_common_show_no_interval(runs: dict[str, Path],
                                                               tmp_path: Path) -> None:
    """Before (scores.json files edited to hold no requirement rows): an interval of width 0,
    [+0.0, +0.0], as if the change were known exactly."""
    edited = {}
    for name in ("base", "new"):
        edited[name] = tmp_path / name
        shutil.copytree(runs[name], edited[name])
        scores = json.loads((edited[name] / "scores.json").read_text())
        scores["requirements"] = []
        (edited[name] / "scores.json").write_text(json.dumps(scores))
    result = restbench("compare", edited["base"], edited["new"], "--markdown", tmp_path / "c.md")
    assert result.returncode == 0, result.stderr
    assert "[+0.0, +0.0]" not in result.stdout and "n/a" in result.stdout
    assert ": no requirement scored in both runs: the MS are each run's own score, and the " \
        "change has no interval" in " ".join(result.stdout.split())
    assert "| n/a |" in (tmp_path / "c.md").read_text()


@pytest.fixture(scope="module")
def other_runs(runs: dict[str, Path]) -> dict[str, Path]:
    """BASE's generator on one wording only, and another generator: rows BASE has that these
    lack."""
    precise = restbench("run", "-s", MINI, "-g", "files", "-a", f"dir={FIXTURES / 'mini_tests'}",
                        "-V", "precise", "-o", runs["root"] / "precise-only")
    assert precise.returncode == 0, precise.stderr
    golden = restbench("run", "-s", MINI, "-g", "golden", "-o", runs["root"] / "golden")
    assert golden.returncode == 0, golden.stderr
    return {"precise-only": runs["root"] / "precise-only", "golden": runs["root"] / "golden"}


def test_rows_missing_from_new_are_shown_and_fail_the_gate(runs: dict[str, Path],
                                                           other_runs: dict[str, Path]) -> None:
    comment = runs["root"] / "missing.md"
    result = restbench("compare", runs["base"], other_runs["precise-only"], "--fail-below", "5",
                       "--markdown", comment)
    assert result.returncode == 1
    assert "only in base: files · mini · vague" in result.stdout
    assert result.stderr == "missing: 1 row of BASE not in NEW: files · mini · vague\n"
    text = comment.read_text()
    assert "#### Only in base\n\n- files · mini · vague\n" in text
    assert "\n\n\n" not in text  # before: two blank lines after "No mutant changed its fate."
    assert "FAILED" in text and "- missing: 1 row of BASE not in NEW" in text
    # rows only NEW has are shown, and are no reason to fail
    grown = restbench("compare", other_runs["precise-only"], runs["base"], "--fail-below", "5")
    assert grown.returncode == 0, grown.stderr
    assert "only in new: files · mini · vague" in grown.stdout


def test_runs_without_a_row_in_common_fail_the_gate(runs: dict[str, Path],
                                                    other_runs: dict[str, Path]) -> None:
    result = restbench("compare", runs["base"], other_runs["golden"], "--fail-below", "0")
    assert result.returncode == 1
    assert result.stderr.startswith("nothing compared: no row of NEW matches a row of BASE")
    assert result.stderr.count("\n") == 1
    for line in ("only in base: files · mini · precise", "only in new: golden · mini · vague"):
        assert line in result.stdout
    ungated = restbench("compare", runs["base"], other_runs["golden"])
    assert ungated.returncode == 0, ungated.stderr
    # before: "no mutant changed its fate", as if something had been compared
    assert "nothing compared: no row of NEW matches a row of BASE" in ungated.stdout
    assert "no mutant changed its fate" not in ungated.stdout


def test_requirements_missing_from_new_are_named_and_fail_the_gate(
        runs: dict[str, Path]) -> None:
    """Before: NEW with one of BASE's two requirements was compared on that one alone, showed
    a base MS that was not BASE's, and passed the gate."""
    one = runs["root"] / "one-requirement"
    result = restbench("run", "-s", MINI, "-g", "files", "-a", f"dir={FIXTURES / 'mini_tests'}",
                       "-R", "MINI-01", "-o", one)
    assert result.returncode == 0, result.stderr
    comparison = compare_runs(runs["base"], one)
    precise = next(row for row in comparison.rows if row.variant == "precise")
    assert (precise.requirements, precise.only_base, precise.only_new) == (1, ("MINI-02",), ())
    assert precise.base_own_ms == pytest.approx(1 / 3, abs=1e-4)
    assert [(f.kind, f.reason) for f in comparison.gate_failures(5)] == [
        ("missing", f"files · mini · {variant}: 1 requirement of BASE not in NEW: MINI-02")
        for variant in ("precise", "vague")]
    gated = restbench("compare", runs["base"], one, "--fail-below", "5")
    assert gated.returncode == 1
    assert "files · mini · precise: compared on the 1 requirement both runs scored " \
        "(base MS" in gated.stdout
    assert "BASE also has 1 that NEW lacks (MINI-02)" in gated.stdout
    assert gated.stderr.splitlines()[0] == \
        "missing: files · mini · precise: 1 requirement of BASE not in NEW: MINI-02"
    # requirements only NEW has are named, and are no reason to fail
    grown = restbench("compare", one, runs["base"], "--fail-below", "5")
    assert grown.returncode == 0, grown.stderr
    assert "NEW also has 1 that BASE lacks (MINI-02)" in grown.stdout


def test_a_markdown_path_under_a_file_is_one_line_naming_it(runs: dict[str, Path],
                                                            tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    result = restbench("compare", runs["base"], runs["new"], "--markdown", tmp_path / "afile/x.md")
    assert result.returncode == 2
    assert result.stderr == f"error: {tmp_path / 'afile/x.md'}: cannot write it " \
        f"({tmp_path / 'afile'} is a file, not a folder)\n"
    assert "MINI-02-M1 now killed" in result.stdout  # the comparison is still shown


def test_rows_repeated_a_different_number_of_times_are_said_to_be(
        runs: dict[str, Path]) -> None:
    """Before: a mean over three repetitions was set against one run without a word."""
    repeated = runs["root"] / "repeated"
    done = restbench("run", "-s", MINI, "-g", "files", "-a", f"dir={FIXTURES / 'mini_tests'}",
                     "-V", "precise", "-r", "2", "-o", repeated)
    assert done.returncode == 0, done.stderr
    (row,) = json.loads((repeated / "scores.json").read_text())["scores"]
    assert row["ms_per_repetition"] == [row["ms"], row["ms"]]  # the same files both times
    with (repeated / "scores.csv").open() as handle:
        assert next(csv.DictReader(handle))["ms_per_repetition"] == f"{row['ms']};{row['ms']}"
    result = restbench("compare", runs["base"], repeated, "--markdown", "-")
    assert result.returncode == 0, result.stderr
    line = ("files · mini · precise: BASE has 1 repetition, NEW 2: each MS is the mean over its "
            "own")
    assert line in result.stdout  # on the terminal
    assert f"#### Where the runs differ\n\n- {line}" in result.stdout  # and in the comment
