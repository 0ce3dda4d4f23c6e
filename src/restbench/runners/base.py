"""The runner interface.

A runner is found by name in the `restbench.runners` entry-point group. pytest runs inside the
sandbox's Python process (see execution/worker.py); every other runner names a tool that the
sandboxed test process executes, after the sandbox is built and its privileges are dropped, with
the test's clean environment and time limit. The tool writes a machine-readable report into the
scratch folder; the runner reads it back as pytest-style test reports:

- a test that failed on an assertion: `outcome="failed", assertion=True` (the test's verdict);
- anything else that failed (an exception, a request that got no answer, a syntax error):
  `outcome="failed", assertion=False` (an error);
- a file in which no test ran is an error, as with pytest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from restbench.execution.outcome import TestReport

PYTEST = "pytest"


@dataclass
class ToolReport:
    """What a tool's report says, in the form the harness classifies."""

    tests: list[TestReport] = field(default_factory=list)
    collect_errors: list[str] = field(default_factory=list)


@runtime_checkable
class Runner(Protocol):
    name: str
    # Endings of the file names it runs (".py", ".test.mjs"); the first is used for new files.
    suffixes: tuple[str, ...]
    # Address space a test process may map (None: the sandbox's default). JavaScript engines
    # reserve large virtual ranges (WebAssembly guard regions) that they never touch.
    address_space_bytes: int | None

    def host_paths(self) -> list[str]:
        """Host folders the sandbox must show read-only (the tool's installation)."""
        ...

    def check(self) -> None:
        """Raises a RestbenchError naming the command that installs the tool, if missing."""
        ...

    def command(self, test_file: str, report_file: str, base_url: str) -> list[str]:
        """The command (absolute executable first) that runs `test_file` in the current folder
        and writes its report to `report_file`."""
        ...

    def read_report(self, data: bytes, exit_code: int) -> ToolReport:
        """The tests in the tool's report (`data` may be empty: the tool did not get that far)."""
        ...


def test_file_name(runner: Runner, label: str) -> str:
    """The file name a test gets in the sandbox: pytest's test_*.py, else label + suffix."""
    return named_test_file(label, runner.suffixes[0])


def named_test_file(label: str, suffix: str) -> str:
    """`test_<label>` (every character a name may not hold made `_`) with `suffix`: the name a
    test labelled `label` has in the sandbox, and so in its reports."""
    import re

    return f"test_{re.sub(r'[^A-Za-z0-9_]', '_', label)}{suffix}"
