"""The requirements-based mutation scores of DESIGN.md, as pure functions."""

from restbench.scoring.scores import (
    AggregateScore,
    RequirementScore,
    Score,
    SubsetAggregate,
    TestRecord,
    aggregate,
    bootstrap_interval,
    score,
)

__all__ = [
    "AggregateScore",
    "RequirementScore",
    "Score",
    "SubsetAggregate",
    "TestRecord",
    "aggregate",
    "bootstrap_interval",
    "score",
]
