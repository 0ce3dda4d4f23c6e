"""Orchestration: validating benchmark data and running generators x models x requirements."""

from restbench.engine.events import Advanced, Event, Notice, PhaseStarted
from restbench.engine.run import RunConfig, RunResult, ScoreRow, run_benchmark
from restbench.engine.validate import (
    RequirementCheck,
    ValidationReport,
    validate_in_turn,
    validate_service,
)

__all__ = [
    "Advanced",
    "Event",
    "Notice",
    "PhaseStarted",
    "RequirementCheck",
    "RunConfig",
    "RunResult",
    "ScoreRow",
    "ValidationReport",
    "run_benchmark",
    "validate_in_turn",
    "validate_service",
]
