"""Test runners: what executes one test artifact (a pytest file, a Node.js test file, a Postman
collection) inside the sandbox and turns its result into pytest-style reports, so that one rule
(`restbench.execution.outcome.classify`) maps every runner's result to pass / fail / error."""

from restbench.runners.base import PYTEST, Runner, ToolReport
from restbench.runners.registry import (
    available_runners,
    load_runner,
    ready_runner,
    runner_for_file,
    sandbox_paths,
)

__all__ = ["PYTEST", "Runner", "ToolReport", "available_runners", "load_runner", "ready_runner",
           "runner_for_file", "sandbox_paths"]
