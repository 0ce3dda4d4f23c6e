"""Mutants as unified diffs: applied strictly, named precisely when they do not apply; and
find/replace edits keep their fingerprints (the store's keys) now that edits may be diffs."""

from __future__ import annotations

import pytest

from restbench.benchmark.models import Edit
from restbench.errors import MutationError
from restbench.mutation.diff import apply_diff

SOURCE = "a\nb\nc\nd\nb\n"


def test_a_hunk_replaces_its_old_lines_wherever_they_are() -> None:
    diff = "--- a/x\n+++ b/x\n@@ -40,3 +40,3 @@\n b\n-c\n+C\n d\n"
    assert apply_diff(SOURCE, diff, item="mutant M", where="r.yaml", file="x") == "a\nb\nC\nd\nb\n"


@pytest.mark.parametrize(("diff", "problem"), [
    ("@@ -1 +1 @@\n-b\n+B\n", "the old lines of hunk 1 occur 2 times in x"),
    ("@@ -1 +1 @@\n-z\n+Z\n", "the old lines of hunk 1 do not occur in x"),
    ("-b\n+B\n", "not a unified diff: line '-b' before the first '@@' hunk header"),
    ("@@ -1 +1 @@\n+only added\n", "hunk 1 of the diff of x has no context or removed lines"),
])
def test_a_diff_that_does_not_apply_is_one_line_naming_the_mutant(diff: str, problem: str) -> None:
    with pytest.raises(MutationError) as caught:
        apply_diff(SOURCE, diff, item="mutant M", where="r.yaml", file="x")
    assert str(caught.value).startswith("r.yaml: mutant M: ") and problem in str(caught.value)


def test_an_edit_is_either_find_and_replace_or_a_diff() -> None:
    with pytest.raises(ValueError, match="not both"):
        Edit(file="x", find="a", replace="b", diff="@@ -1 +1 @@\n-a\n+b\n")
    with pytest.raises(ValueError, match="needs 'find' and 'replace'"):
        Edit(file="x", find="a")


def test_find_replace_edits_serialize_as_before_diffs_existed() -> None:
    edit = Edit(file="app/x.py", find="a", replace="b")
    assert edit.model_dump_json(exclude_none=True) == \
        '{"file":"app/x.py","find":"a","replace":"b"}'
