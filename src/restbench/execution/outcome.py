"""What one execution of a test file produced, and how pytest's reports map to an outcome."""

from __future__ import annotations

import enum
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

    def to_record(self) -> dict[str, Any]:
        return {"outcome": self.outcome.value, "duration_s": self.duration_s,
                "output": self.output, "reason": self.reason,
                "tests": [t.__dict__ for t in self.tests], "exchanges": list(self.exchanges)}


def classify(tests: list[TestReport], collect_errors: list[str], exit_code: int | None,
             timed_out: bool) -> tuple[Outcome, str]:
    """Maps pytest's reports to pass/fail/error, with a short reason for anything but pass."""
    if timed_out:
        return Outcome.ERROR, "timed out"
    if collect_errors:
        return Outcome.ERROR, "collection error: " + collect_errors[0][:300]
    failures = [t for t in tests if t.outcome == "failed"]
    errors = [t for t in failures if not t.assertion or t.when != "call"]
    if errors:
        return Outcome.ERROR, f"{errors[0].nodeid} ({errors[0].when}): {errors[0].message}"
    if failures:
        return Outcome.FAIL, f"{failures[0].nodeid}: {failures[0].message}"
    if not any(t.when == "call" and t.outcome == "passed" for t in tests):
        return Outcome.ERROR, "no test ran" if not tests else "every test was skipped"
    if exit_code not in (0, None):
        return Outcome.ERROR, f"pytest exited with code {exit_code}"
    return Outcome.PASS, ""
