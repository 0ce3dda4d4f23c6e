"""Requirements-based mutation scores.

For requirement r with mutants M_r and test t: t is valid when it passes on the original service;
t kills mutant m when t is valid and does not pass on m.

    MS         = sum_r |killed(t_r, M_r)| / sum_r |M_r|
    MS_mutated = sum_r ( (1/|M_r|) * sum_i |killed(t_{r,i}, M_r)| ) / sum_r |M_r|

t_r is generated against the original, t_{r,i} against mutant i of r (refining generators only).
MS_valid is MS computed on the t_r of a refining generator.

A mutant subset S (the semantic mutants; the mutants the vague wording gives a basis to detect)
gives MS over S alone:

    MS_S = sum_r |killed(t_r, M_r ∩ S)| / sum_r |M_r ∩ S|
"""

from __future__ import annotations

import array
import functools
import random
from collections.abc import Collection, Mapping, Sequence
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
    # subset name -> (killed, mutants) of this requirement's mutants in the subset
    subsets: Mapping[str, tuple[int, int]] = field(default_factory=dict)

    def subset_ms(self, name: str) -> float | None:
        killed, mutants = self.subsets.get(name, (0, 0))
        return killed / mutants if mutants else None


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
    subset_ms: Mapping[str, float | None] = field(default_factory=dict)  # None: empty subset


def score(records: Sequence[TestRecord], mutants_of: Mapping[str, Sequence[str]],
          subsets: Mapping[str, Collection[str]] | None = None) -> Score:
    """Scores one set of tests; a requirement without a t_r counts as an invalid test.

    `subsets` names sets of mutant ids (e.g. "semantic"); each gets its own MS_S."""
    subsets = subsets or {}
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
        in_subsets = {name: (len(killed & set(members)), sum(m in members for m in mutants))
                      for name, members in subsets.items()}
        rows.append(RequirementScore(requirement, len(mutants), record.valid, len(killed),
                                     tuple(sorted(killed)), mutated, in_subsets))
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
        subset_ms={name: _pooled(rows, name) for name in subsets},
    )


def _pooled(rows: Sequence[RequirementScore], name: str) -> float | None:
    killed = sum(row.subsets[name][0] for row in rows)
    mutants = sum(row.subsets[name][1] for row in rows)
    return killed / mutants if mutants else None


@dataclass(frozen=True)
class SubsetAggregate:
    """MS over one mutant subset, over repetitions: the mean and a 95% interval."""

    ms: float
    ci95: tuple[float, float]
    killed: float
    mutants: int


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
    subsets: Mapping[str, SubsetAggregate | None] = field(default_factory=dict)  # None: empty
    # each repetition's MS, in repetition order: the spread the interval (over requirements)
    # does not show, for a researcher's own statistics
    ms_per_repetition: tuple[float, ...] = ()


def _mean_or_none(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return fmean(present) if present else None


def bootstrap_interval(killed: Sequence[float], mutants: Sequence[int], *, resamples: int = 2000,
                       seed: int = 0) -> tuple[float, float]:
    """95% percentile interval of MS, resampling requirements with replacement."""
    if not killed:
        return (0.0, 0.0)
    n = len(killed)
    picks = _resample_picks(n, resamples, seed)
    killed_at, mutants_at = list(killed).__getitem__, list(mutants).__getitem__
    estimates = []
    for start in range(0, n * resamples, n):
        drawn = picks[start:start + n]
        total = sum(map(mutants_at, drawn))
        estimates.append(sum(map(killed_at, drawn)) / total if total else 0.0)
    estimates.sort()
    return (estimates[int(0.025 * (resamples - 1))], estimates[int(0.975 * (resamples - 1))])


@functools.lru_cache(maxsize=16)
def _resample_picks(n: int, resamples: int, seed: int) -> array.array[int]:
    """The indices every resample draws, one after the other: the draws of
    Random(seed).randrange(n), spelled out (the same picks, and so the same intervals, as earlier
    releases; ~2.5x faster). They depend on n alone, and a run scores ~100 rows and subsets of
    a few sizes, so each size's are drawn once."""
    draw, bits = random.Random(seed).getrandbits, n.bit_length()
    picks = array.array("I")
    for _ in range(n * resamples):
        pick = draw(bits)
        while pick >= n:
            pick = draw(bits)
        picks.append(pick)
    return picks


def _nonempty(killed: Sequence[float], mutants: Sequence[int]
              ) -> tuple[list[float], list[int]]:
    pairs = [(k, m) for k, m in zip(killed, mutants, strict=True) if m]
    return [k for k, _ in pairs], [m for _, m in pairs]


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
    subsets: dict[str, SubsetAggregate | None] = {}
    for name in scores[0].subset_ms:
        sub_killed = [fmean(r.subsets[name][0] for r in rows) for rows in by_requirement.values()]
        sub_mutants = [rows[0].subsets[name][1] for rows in by_requirement.values()]
        values = [s.subset_ms[name] for s in scores]
        subsets[name] = None if not sum(sub_mutants) else SubsetAggregate(
            ms=fmean(v for v in values if v is not None),
            # requirements without a mutant in the subset add nothing to MS_S: leave them out
            ci95=bootstrap_interval(*_nonempty(sub_killed, sub_mutants)),
            killed=sum(sub_killed), mutants=sum(sub_mutants))
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
        subsets=subsets,
        ms_per_repetition=tuple(ms_values),
    )
