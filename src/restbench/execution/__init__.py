"""Running untrusted test files: sandboxed worker processes and outcome classification."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from restbench.execution.executor import Executor, SandboxUnavailable
    from restbench.execution.outcome import ExecutionResult, Outcome, TestReport, classify

__all__ = ["ExecutionResult", "Executor", "Outcome", "SandboxUnavailable", "TestReport",
           "classify"]
_HOMES = {"Executor": "executor", "SandboxUnavailable": "executor", "ExecutionResult": "outcome",
          "Outcome": "outcome", "TestReport": "outcome", "classify": "outcome"}


def __getattr__(name: str) -> Any:
    """Imported on first use: the service servers import `execution.channel`, and with it this
    package's __init__, which must not bring the executor's side (pytest's assertion rewriting,
    asyncio's subprocesses) into the launcher or into every server."""
    if name in _HOMES:
        return getattr(import_module(f"restbench.execution.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
