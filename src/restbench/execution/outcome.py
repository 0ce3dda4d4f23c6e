"""What one execution of a test file produced, and how pytest's reports map to an outcome."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import Any


class Outcome(str, enum.Enum):
    PASS = "pass"
    FAIL = "fail"    # an assertion failed
    ERROR = "error"  # anything else: collection error, exception, timeout, no test ran


@dataclass(frozen=True)
class TestReport:
    """One pytest report of one phase (setup, call, teardown) of one test."""

    __test__ = False  # not a pytest test class

    nodeid: str
    when: str
    outcome: str  # passed | failed | skipped
    assertion: bool = False  # failed by AssertionError or pytest.fail()
    message: str = ""


@dataclass(frozen=True)
class ExecutionResult:
    outcome: Outcome
    duration_s: float
    output: str = ""
    reason: str = ""
    tests: tuple[TestReport, ...] = ()
    exchanges: tuple[dict[str, Any], ...] = field(default=())
    # On the original: the mutants and benign variants whose edited code the test never ran
    # (serving.reach); the same test would behave the same on them.
    unreached: tuple[str, ...] = field(default=())

    def to_record(self) -> dict[str, Any]:
        return {"outcome": self.outcome.value, "duration_s": self.duration_s,
                "output": self.output, "reason": self.reason,
                "tests": [t.__dict__ for t in self.tests], "exchanges": list(self.exchanges)}


_ERROR_LINE = re.compile(r"^E?\s*((?:[A-Za-z_][\w.]*)?(?:Error|Exception|Exit|Interrupt)\b.*)$")


def error_line(report: str) -> str:
    """The line of a pytest report that names the error ("SyntaxError: ...",
    "ModuleNotFoundError: ..."): its last such line, else its last non-empty line."""
    lines = [line.rstrip() for line in report.splitlines() if line.strip()]
    for line in reversed(lines):
        match = _ERROR_LINE.match(line)
        if match and ":" in match.group(1):
            return match.group(1).strip()[:300]
    return (lines[-1].strip() if lines else report)[:300]


def classify(tests: list[TestReport], collect_errors: list[str], exit_code: int | None,
             timed_out: bool, runner: str = "pytest") -> tuple[Outcome, str]:
    """Maps a runner's reports (pytest's, or the same shape from node and newman) to
    pass/fail/error, with a short reason for anything but pass."""
    if timed_out:
        return Outcome.ERROR, "timed out"
    if collect_errors:
        return Outcome.ERROR, "collection error: " + error_line(collect_errors[0])
    failures = [t for t in tests if t.outcome == "failed"]
    errors = [t for t in failures if not t.assertion or t.when != "call"]
    if errors:
        return Outcome.ERROR, f"{errors[0].nodeid} ({errors[0].when}): {errors[0].message}"
    if failures:
        return Outcome.FAIL, f"{failures[0].nodeid}: {failures[0].message}"
    if not any(t.when == "call" and t.outcome == "passed" for t in tests):
        return Outcome.ERROR, "no test ran" if not tests else "every test was skipped"
    if exit_code not in (0, None):
        return Outcome.ERROR, f"{runner} exited with code {exit_code}"
    return Outcome.PASS, ""
