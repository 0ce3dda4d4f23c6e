"""`restbench validate --repeat N`: outcomes that change between repetitions."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from restbench.engine.validate import ValidationReport

NOT_RUN = "not run"  # the implementation did not start in that repetition


@dataclass(frozen=True)
class Flaky:
    """A golden test whose outcome on one implementation differed between repetitions."""

    requirement: str
    implementation: str
    outcomes: tuple[tuple[str, int], ...]  # (outcome, repetitions), most frequent first

    def describe(self) -> str:
        counts = ", ".join(f"{outcome} x{n}" for outcome, n in self.outcomes)
        return f"{self.requirement} on {self.implementation}: {counts}"


def flaky_outcomes(reports: Sequence[ValidationReport]) -> list[Flaky]:
    """Every (requirement, implementation) whose outcome was not the same in all `reports`."""
    keys = sorted({key for report in reports for key in report.outcomes})
    flaky = []
    for key in keys:
        counts = Counter(report.outcomes.get(key, NOT_RUN) for report in reports)
        if len(counts) > 1:
            flaky.append(Flaky(key[0], key[1], tuple(counts.most_common())))
    return flaky
