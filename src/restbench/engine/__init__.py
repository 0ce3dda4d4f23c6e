"""Orchestration: validating benchmark data and running generators x models x requirements."""

from typing import TYPE_CHECKING

from restbench.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from restbench.engine.events import Advanced, Event, Notice, PhaseStarted
    from restbench.engine.run import RunResult, ScoreRow, run_benchmark
    from restbench.engine.run_plan import RunConfig, RunPlan, plan_run
    from restbench.engine.validate import (
        RequirementCheck,
        ValidationReport,
        validate_in_turn,
        validate_service,
    )

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "events": ("Advanced", "Event", "Notice", "PhaseStarted"),
    "run": ("RunResult", "ScoreRow", "run_benchmark"),
    "run_plan": ("RunConfig", "RunPlan", "plan_run"),
    "validate": ("RequirementCheck", "ValidationReport", "validate_in_turn", "validate_service"),
})
