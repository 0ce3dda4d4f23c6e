"""The mutant subsets that get their own score: MS_semantic and MS_vague-fair.

MS_semantic counts only `semantic` mutants (wrong value, state, permission, order, filter or
validation). MS_vague-fair counts only mutants whose requirement's vague wording gives a basis to
detect them (`vague_basis: true`); it is reported for the vague wording alone, because the precise
wording gives a basis for every mutant.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from restbench.benchmark.models import MutantKind, Requirement, Variant
from restbench.scoring.scores import RequirementScore

SEMANTIC = "semantic"
VAGUE_FAIR = "vague_fair"
SUBSETS = (SEMANTIC, VAGUE_FAIR)


def mutant_subsets(requirements: Iterable[Requirement], variant: Variant) -> dict[str, set[str]]:
    """Subset name -> mutant ids, for tests written from `variant`."""
    mutants = [m for r in requirements for m in r.mutants]
    subsets = {SEMANTIC: {m.id for m in mutants if m.kind is MutantKind.SEMANTIC}}
    if variant is Variant.VAGUE:
        subsets[VAGUE_FAIR] = {m.id for m in mutants if m.vague_basis}
    return subsets


def requirement_columns(row: RequirementScore) -> dict[str, Any]:
    """The subset columns of one requirements.csv row (empty where the subset is)."""
    columns: dict[str, Any] = {}
    for name in SUBSETS:
        killed, mutants = row.subsets.get(name, (0, 0))
        present = name in row.subsets
        columns[f"{name}_mutants"] = mutants if present else None
        columns[f"{name}_killed"] = killed if present else None
        ms = row.subset_ms(name)
        columns[f"ms_{name}"] = None if ms is None else round(ms, 6)
    return columns
