"""Requirements-based mutation scores.

For requirement r with mutants M_r and test t: t is valid when it passes on the original service;
t kills mutant m when t is valid and does not pass on m.

    MS         = sum_r |killed(t_r, M_r)| / sum_r |M_r|
    MS_mutated = sum_r ( (1/|M_r|) * sum_i |killed(t_{r,i}, M_r)| ) / sum_r |M_r|

t_r is generated against the original, t_{r,i} against mutant i of r (refining generators only).
MS_valid is MS computed on the t_r of a refining generator.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import fmean

from restbench.execution.outcome import Outcome

ORIGINAL = "original"


@dataclass(frozen=True)
class TestRecord:
    """One generated test of one requirement and the outcomes of its executions."""

    __test__ = False  # not a pytest test class

    requirement: str
    target: str = ORIGINAL  # the implementation it was generated against
    generated: bool = True  # False when the generator failed to produce code
    original: Outcome | None = None
    on_mutants: Mapping[str, Outcome] = field(default_factory=dict)
    on_benign: Mapping[str, Outcome] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        return self.generated and self.original is Outcome.PASS

    def killed(self, mutants: Sequence[str]) -> set[str]:
        if not self.valid:
            return set()
        return {m for m in mutants if self.on_mutants.get(m, Outcome.PASS) is not Outcome.PASS}

    @property
    def overspecified(self) -> bool:
        return self.valid and any(o is not Outcome.PASS for o in self.on_benign.values())


@dataclass(frozen=True)
class RequirementScore:
    requirement: str
    mutants: int
    valid: bool
    killed: int
    killed_mutants: tuple[str, ...]
    mutated_killed: float | None = None  # (1/|M_r|) * sum_i |killed(t_{r,i})|, refiners only


@dataclass(frozen=True)
class Score:
    """The scores of one generator x model x service(s) x variant x repetition."""

    requirements: tuple[RequirementScore, ...]
    tests: int
    valid_tests: int
    mutants: int
    killed: int
    ms: float
    validity_rate: float
    ms_mutated: float | None = None
    self_kill_rate: float | None = None
    overspecification_rate: float | None = None


def score(records: Sequence[TestRecord], mutants_of: Mapping[str, Sequence[str]]) -> Score:
    """Scores one set of tests; a requirement without a t_r counts as an invalid test."""
    main = {r.requirement: r for r in records if r.target == ORIGINAL}
    per_target = {(r.requirement, r.target): r for r in records if r.target != ORIGINAL}
    refined = bool(per_target)
    rows = []
    self_kills = targets = 0
    mutated_total = 0.0
    for requirement, mutants in mutants_of.items():
        record = main.get(requirement, TestRecord(requirement, generated=False))
        killed = record.killed(mutants)
        mutated: float | None = None
        if refined:
            kills = 0
            for mutant in mutants:
                t_ri = per_target.get((requirement, mutant),
                                      TestRecord(requirement, mutant, generated=False))
                kills += len(t_ri.killed(mutants))
                targets += 1
                self_kills += mutant in t_ri.killed([mutant])
            mutated = kills / len(mutants) if mutants else 0.0
            mutated_total += mutated
        rows.append(RequirementScore(requirement, len(mutants), record.valid, len(killed),
                                     tuple(sorted(killed)), mutated))
    total_mutants = sum(len(m) for m in mutants_of.values())
    total_killed = sum(row.killed for row in rows)
    valid = sum(row.valid for row in rows)
    benign_judged = [r for r in main.values() if r.valid and r.on_benign]
    return Score(
        requirements=tuple(rows),
        tests=len(rows),
        valid_tests=valid,
        mutants=total_mutants,
        killed=total_killed,
        ms=total_killed / total_mutants if total_mutants else 0.0,
        validity_rate=valid / len(rows) if rows else 0.0,
        ms_mutated=(mutated_total / total_mutants if total_mutants else 0.0) if refined else None,
        self_kill_rate=(self_kills / targets if targets else 0.0) if refined else None,
        overspecification_rate=(sum(r.overspecified for r in benign_judged) / len(benign_judged)
                                if benign_judged else None),
    )


@dataclass(frozen=True)
class AggregateScore:
    """Scores over repetitions: the mean, the largest deviation from it, a 95% interval."""

    repetitions: int
    ms: float
    ms_max_deviation: float
    ms_ci95: tuple[float, float]
    validity_rate: float
    killed: float
    mutants: int
    ms_mutated: float | None
    self_kill_rate: float | None
    overspecification_rate: float | None


def _mean_or_none(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return fmean(present) if present else None


def bootstrap_interval(killed: Sequence[float], mutants: Sequence[int], *, resamples: int = 2000,
                       seed: int = 0) -> tuple[float, float]:
    """95% percentile interval of MS, resampling requirements with replacement."""
    if not killed:
        return (0.0, 0.0)
    rng = random.Random(seed)
    n = len(killed)
    estimates = []
    for _ in range(resamples):
        picks = [rng.randrange(n) for _ in range(n)]
        total = sum(mutants[i] for i in picks)
        estimates.append(sum(killed[i] for i in picks) / total if total else 0.0)
    estimates.sort()
    return (estimates[int(0.025 * (resamples - 1))], estimates[int(0.975 * (resamples - 1))])


def aggregate(scores: Sequence[Score]) -> AggregateScore:
    """Combines the scores of several repetitions of the same configuration."""
    if not scores:
        raise ValueError("nothing to aggregate")
    ms_values = [s.ms for s in scores]
    mean_ms = fmean(ms_values)
    by_requirement: dict[str, list[RequirementScore]] = {}
    for s in scores:
        for row in s.requirements:
            by_requirement.setdefault(row.requirement, []).append(row)
    killed = [fmean(r.killed for r in rows) for rows in by_requirement.values()]
    mutants = [rows[0].mutants for rows in by_requirement.values()]
    return AggregateScore(
        repetitions=len(scores),
        ms=mean_ms,
        ms_max_deviation=max(abs(v - mean_ms) for v in ms_values),
        ms_ci95=bootstrap_interval(killed, mutants),
        validity_rate=fmean(s.validity_rate for s in scores),
        killed=fmean(s.killed for s in scores),
        mutants=scores[0].mutants,
        ms_mutated=_mean_or_none([s.ms_mutated for s in scores]),
        self_kill_rate=_mean_or_none([s.self_kill_rate for s in scores]),
        overspecification_rate=_mean_or_none([s.overspecification_rate for s in scores]),
    )
