"""The score formulas against examples computed by hand."""

from __future__ import annotations

import random

import pytest

from restbench.execution import Outcome
from restbench.scoring import TestRecord, aggregate, bootstrap_interval, score

P, F, E = Outcome.PASS, Outcome.FAIL, Outcome.ERROR
MUTANTS = {"R1": ["R1-M1", "R1-M2"], "R2": ["R2-M1", "R2-M2", "R2-M3"], "R3": ["R3-M1"]}


def test_single_step_ms_counts_kills_over_all_mutants() -> None:
    records = [
        TestRecord("R1", original=P, on_mutants={"R1-M1": F, "R1-M2": P}),
        TestRecord("R2", original=P, on_mutants={"R2-M1": E, "R2-M2": F, "R2-M3": F}),
        TestRecord("R3", original=P, on_mutants={"R3-M1": P}),
    ]
    result = score(records, MUTANTS)
    # killed: R1 1 of 2, R2 3 of 3 (an error on a mutant kills it too), R3 0 of 1 -> 4 / 6
    assert result.killed == 4
    assert result.mutants == 6
    assert result.ms == pytest.approx(4 / 6)
    assert result.validity_rate == 1.0
    assert result.ms_mutated is None and result.self_kill_rate is None


def test_invalid_test_kills_nothing_even_when_it_fails_on_mutants() -> None:
    records = [
        TestRecord("R1", original=F, on_mutants={"R1-M1": F, "R1-M2": F}),
        TestRecord("R2", original=E, on_mutants={"R2-M1": F, "R2-M2": F, "R2-M3": F}),
        TestRecord("R3", original=P, on_mutants={"R3-M1": F}),
    ]
    result = score(records, MUTANTS)
    assert result.killed == 1
    assert result.ms == pytest.approx(1 / 6)
    assert result.valid_tests == 1
    assert result.validity_rate == pytest.approx(1 / 3)


def test_missing_or_failed_generation_counts_as_invalid() -> None:
    records = [TestRecord("R1", generated=False),
               TestRecord("R3", original=P, on_mutants={"R3-M1": F})]
    result = score(records, MUTANTS)
    assert result.tests == 3
    assert result.valid_tests == 1
    assert result.ms == pytest.approx(1 / 6)


def test_refinement_formulas_by_hand() -> None:
    # t_r (generated against the original)
    records = [
        TestRecord("R1", original=P, on_mutants={"R1-M1": F, "R1-M2": F}),
        TestRecord("R3", original=P, on_mutants={"R3-M1": P}),
        # t_{R1,M1}: valid, kills M1 only; t_{R1,M2}: invalid (fails on the original)
        TestRecord("R1", "R1-M1", original=P, on_mutants={"R1-M1": F, "R1-M2": P}),
        TestRecord("R1", "R1-M2", original=F, on_mutants={"R1-M1": F, "R1-M2": F}),
        # t_{R3,M1}: valid, kills M1
        TestRecord("R3", "R3-M1", original=P, on_mutants={"R3-M1": E}),
    ]
    mutants = {"R1": ["R1-M1", "R1-M2"], "R3": ["R3-M1"]}
    result = score(records, mutants)
    # MS_valid = (2 + 0) / 3
    assert result.ms == pytest.approx(2 / 3)
    # MS_mutated = ((1/2) * (1 + 0) + (1/1) * 1) / 3 = 1.5 / 3
    assert result.ms_mutated == pytest.approx(0.5)
    # self-kill: t_{R1,M1} kills M1 yes, t_{R1,M2} no (invalid), t_{R3,M1} yes -> 2 / 3
    assert result.self_kill_rate == pytest.approx(2 / 3)
    assert [r.mutated_killed for r in result.requirements] == [0.5, 1.0]


def test_overspecification_counts_valid_tests_failing_on_a_benign_variant() -> None:
    records = [
        TestRecord("R1", original=P, on_mutants={"R1-M1": F}, on_benign={"B1": F}),
        TestRecord("R2", original=P, on_mutants={"R2-M1": F}, on_benign={"B1": P}),
        TestRecord("R3", original=F, on_benign={"B1": F}),
    ]
    result = score(records, MUTANTS)
    assert result.overspecification_rate == pytest.approx(1 / 2)


def test_aggregate_over_repetitions() -> None:
    first = score([TestRecord("R1", original=P, on_mutants={"R1-M1": F, "R1-M2": F}),
                   TestRecord("R2", original=P, on_mutants={"R2-M1": F, "R2-M2": F,
                                                            "R2-M3": F}),
                   TestRecord("R3", original=P, on_mutants={"R3-M1": F})], MUTANTS)
    second = score([TestRecord("R1", original=F)], MUTANTS)
    combined = aggregate([first, second])
    assert combined.repetitions == 2
    assert combined.ms == pytest.approx(0.5)  # (6/6 + 0/6) / 2
    assert combined.ms_max_deviation == pytest.approx(0.5)
    assert combined.ms_per_repetition == pytest.approx((1.0, 0.0))  # in repetition order
    assert combined.killed == pytest.approx(3.0)
    low, high = combined.ms_ci95
    assert 0.0 <= low <= 0.5 <= high <= 1.0


def test_bootstrap_interval_is_degenerate_when_every_requirement_scores_the_same() -> None:
    assert bootstrap_interval([2, 1, 3], [2, 1, 3]) == (1.0, 1.0)
    low, high = bootstrap_interval([0, 1, 2, 3], [3, 3, 3, 3])
    assert low < 0.5 < high


def test_bootstrap_interval_keeps_the_resamples_of_randrange() -> None:
    """Published intervals stay reproducible: the same picks as Random(seed).randrange(n)."""
    def by_randrange(killed: list[float], mutants: list[int], seed: int) -> tuple[float, float]:
        rng, n, estimates = random.Random(seed), len(killed), []
        for _ in range(2000):
            picks = [rng.randrange(n) for _ in range(n)]
            total = sum(mutants[i] for i in picks)
            estimates.append(sum(killed[i] for i in picks) / total if total else 0.0)
        estimates.sort()
        return estimates[int(0.025 * 1999)], estimates[int(0.975 * 1999)]

    cases = random.Random(7)
    for n, seed in ((1, 0), (3, 1), (64, 0), (65, 2), (167, 0)):
        mutants = [cases.randint(0, 6) for _ in range(n)]
        killed = [cases.randint(0, m) / (2 if m % 2 else 1) for m in mutants]
        assert bootstrap_interval(killed, mutants, seed=seed) == \
            by_randrange(killed, mutants, seed)


def test_subset_ms_counts_only_the_subset_mutants() -> None:
    records = [
        TestRecord("R1", original=P, on_mutants={"R1-M1": F, "R1-M2": P}),
        TestRecord("R2", original=P, on_mutants={"R2-M1": P, "R2-M2": F, "R2-M3": F}),
        TestRecord("R3", original=F, on_mutants={"R3-M1": F}),  # invalid: kills nothing
    ]
    subsets = {"semantic": {"R1-M2", "R2-M2", "R2-M3", "R3-M1"}, "none": set()}
    result = score(records, MUTANTS, subsets)
    # semantic: R1 0 of 1, R2 2 of 2, R3 0 of 1 -> 2 / 4; the overall MS is 3 / 6
    assert result.subset_ms["semantic"] == pytest.approx(2 / 4)
    assert result.subset_ms["none"] is None
    assert result.ms == pytest.approx(3 / 6)
    rows = {row.requirement: row for row in result.requirements}
    assert rows["R2"].subsets["semantic"] == (2, 2)
    assert rows["R1"].subset_ms("semantic") == 0.0
    assert rows["R3"].subsets["semantic"] == (0, 1)


def test_aggregate_subset_interval_leaves_out_requirements_without_subset_mutants() -> None:
    strong = [TestRecord("R1", original=P, on_mutants={"R1-M1": F, "R1-M2": F}),
              TestRecord("R2", original=P, on_mutants={"R2-M1": F, "R2-M2": F, "R2-M3": F}),
              TestRecord("R3", original=P, on_mutants={"R3-M1": P})]
    subsets = {"semantic": {"R1-M1", "R2-M1"}}  # R3 has none: it must not drag the interval
    result = aggregate([score(strong, MUTANTS, subsets)])
    semantic = result.subsets["semantic"]
    assert semantic is not None
    assert semantic.ms == 1.0 and semantic.ci95 == (1.0, 1.0)
    assert (semantic.killed, semantic.mutants) == (2, 2)
    empty = aggregate([score(strong, MUTANTS, {"x": set()})])
    assert empty.subsets["x"] is None
