"""`restbench validate` of a requirement whose golden test fails on the original: one problem,
the table row short, the problem whole below it."""

from __future__ import annotations

import re
from pathlib import Path

from tests.cli_helpers import restbench


def _golden_fails_on_the_original(service: Path) -> None:
    """MINI-01's golden test expects a field the service never sends; pytest's reason for it
    runs to several lines, a blank one among them."""
    golden = service / "golden" / "test_MINI-01.py"
    text = golden.read_text()
    assert text.count('== {"value": 1}') == 1
    golden.write_text(text.replace('== {"value": 1}', '== {"value": 1, "extra": 2}'))


def test_a_golden_test_that_fails_on_the_original_is_one_problem(mini_service: Path) -> None:
    """Before: its row read `5/5` mutants killed, its status cell ran to many lines with
    pytest's blank ones inside, the failures on the benign variants that follow from it were
    problems of their own, and the summary said `1 requirements` and `3 problem(s)`."""
    _golden_fails_on_the_original(mini_service)
    done = restbench("validate", "-s", mini_service, "-R", "MINI-01", "-j", "2")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("│")]
    assert len(rows) == 1, done.stdout  # the row is one line: the cell holds the first line only
    cells = [cell.strip() for cell in rows[0].strip("│").split("│")]
    # an invalid test kills nothing (README, "valid"): none of its mutants counts as killed
    assert cells[:3] == ["MINI-01", "fail", "0/1"], cells
    assert cells[3].startswith("golden test does not pass on the original (fail: "), cells
    assert cells[3].endswith("… (below)"), cells
    problems = [line for line in done.stderr.splitlines() if line.startswith("problem:")]
    assert len(problems) == 1, done.stderr
    # the service's file, not the sandbox's copy (test_MINI_01.py), and no "Use -v" advice
    assert problems[0].startswith("problem: MINI-01: golden test does not pass on the original "
                                  "(fail: golden/test_MINI-01.py::test_read_counter: "
                                  "AssertionError"), problems[0]
    whole = done.stderr[done.stderr.index("problem:"):]
    assert "Right contains 1 more item" in whole  # pytest's diff, below the table
    assert "Use -v" not in whole
    assert "\n\n" not in whole.strip()
    assert "its runs on the mutants and benign variants were not judged" in whole
    assert "benign variant MINI-B1" not in done.stdout + done.stderr
    assert re.search(r"^mini: 1 requirement, 1 mutant, 1 benign variant: 1 problem \(",
                     done.stdout, re.MULTILINE), done.stdout


def test_a_golden_test_without_a_test_function_is_named(mini_service: Path) -> None:
    """Before: "(error: no test ran)", naming no file."""
    (mini_service / "golden" / "test_MINI-02.py").write_text("import requests\n")
    done = restbench("validate", "-s", mini_service, "-R", "MINI-02")
    assert done.returncode == 1, done.stdout + done.stderr
    assert ("problem: MINI-02: golden test does not pass on the original (error: no test ran: "
            "golden/test_MINI-02.py has no test function (named test_...)); its runs on the "
            "mutants and benign variants were not judged") in done.stderr.splitlines()
