"""`pytest`: Python test files, run by pytest inside the sandbox's own (pre-warmed) Python
process (see execution/worker.py); this object only describes it."""

from __future__ import annotations

from restbench.runners.base import PYTEST, ToolReport


class PytestRunner:
    name = PYTEST
    suffixes = (".py",)
    address_space_bytes = None

    def host_paths(self) -> list[str]:
        return []  # the Python installation is in the sandbox's view already

    def check(self) -> None:
        return None

    def command(self, test_file: str, report_file: str, base_url: str) -> list[str]:
        raise NotImplementedError("pytest runs in the sandbox's Python process")

    def read_report(self, data: bytes, exit_code: int) -> ToolReport:
        raise NotImplementedError("pytest reports through its plugin")
