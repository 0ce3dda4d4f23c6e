"""Running untrusted test files: sandboxed worker processes and outcome classification."""

from restbench.execution.executor import Executor, SandboxUnavailable
from restbench.execution.outcome import ExecutionResult, Outcome, TestReport, classify

__all__ = ["ExecutionResult", "Executor", "Outcome", "SandboxUnavailable", "TestReport",
           "classify"]
