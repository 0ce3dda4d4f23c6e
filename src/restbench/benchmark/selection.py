"""`-R/--requirement`: cutting services down to the requirements a user names."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from fnmatch import fnmatchcase

from restbench.benchmark.models import Service
from restbench.errors import SelectionError


def select_requirements(services: Sequence[Service], patterns: Sequence[str]) -> list[Service]:
    """Each service with only the requirements an id or glob (`FS-1*`) names; services left
    with none are dropped. A pattern that names nothing in any service is an error."""
    if not patterns:
        return list(services)
    unmatched = [p for p in patterns
                 if not any(fnmatchcase(r.id, p) for s in services for r in s.requirements)]
    if unmatched:
        names = ", ".join(s.name for s in services)
        quoted = ", ".join(repr(p) for p in unmatched)
        verb = "matches" if len(unmatched) == 1 else "match"
        raise SelectionError(f"-R/--requirement: {quoted} {verb} no requirement of {names}")
    chosen = []
    for service in services:
        kept = [r for r in service.requirements if any(fnmatchcase(r.id, p) for p in patterns)]
        if kept:
            chosen.append(replace(service, data=service.data.model_copy(
                update={"requirements": kept})))
    return chosen
