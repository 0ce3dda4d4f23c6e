"""Persistent results: every generation and every execution, keyed so that runs resume."""

from restbench.store.sqlite import ExecutionRow, GenerationRow, ResultStore

__all__ = ["ExecutionRow", "GenerationRow", "ResultStore"]
