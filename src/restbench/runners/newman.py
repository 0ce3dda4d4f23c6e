"""`newman`: Postman collections (`*.postman_collection.json`), run by newman on Node.js.

newman is not bundled: `restbench setup newman` installs the pinned version from npm into a
folder restbench manages (see `restbench.runners.setup`). Postman's `{{baseUrl}}` and
`{{base_url}}` variables are the base URL of the service under test."""

from __future__ import annotations

import json
from functools import cached_property
from typing import Any

from restbench.execution.outcome import TestReport
from restbench.runners.base import ToolReport
from restbench.runners.node import (
    ADDRESS_SPACE_BYTES,
    HEAP_LIMIT_MB,
    check_node,
    node_executable,
    node_host_paths,
)
from restbench.runners.setup import NEWMAN, installed_script, tools_root


def _message(failure: dict[str, Any]) -> str:
    error = failure.get("error") or {}
    test = f" ({error['test']})" if error.get("test") else ""
    return f"{error.get('name', 'Error')}{test}: {error.get('message', '')}"[:500]


class NewmanRunner:
    name = "newman"
    suffixes = (".postman_collection.json",)
    address_space_bytes = ADDRESS_SPACE_BYTES

    @cached_property
    def _node(self) -> str | None:
        return node_executable()

    def host_paths(self) -> list[str]:
        tools = tools_root()
        return node_host_paths(self._node) + ([str(tools)] if tools.is_dir() else [])

    def check(self) -> None:
        check_node(self.name)
        installed_script(NEWMAN)  # raises, naming `restbench setup newman`

    def command(self, test_file: str, report_file: str, base_url: str) -> list[str]:
        if self._node is None:
            raise FileNotFoundError("node")
        return [self._node, f"--max-old-space-size={HEAP_LIMIT_MB}",
                str(installed_script(NEWMAN)), "run", test_file,
                "--env-var", f"baseUrl={base_url}", "--env-var", f"base_url={base_url}",
                "--reporters", "cli,json", "--reporter-json-export", report_file,
                "--color", "off", "--disable-unicode", "--timeout-request", "20000"]

    def read_report(self, data: bytes, exit_code: int) -> ToolReport:
        report = ToolReport()
        try:
            run = json.loads(data)["run"]
        except (ValueError, KeyError, TypeError):
            if data:
                report.collect_errors.append("newman wrote an unreadable report")
            elif exit_code != 0:  # e.g. a collection that is not valid JSON
                report.collect_errors.append(f"newman exited with {exit_code} before running")
            return report
        failures = run.get("failures") or []
        for execution in run.get("executions") or []:
            item = (execution.get("item") or {}).get("name", "?")
            for assertion in execution.get("assertions") or []:
                name = f"{item} > {assertion.get('assertion', '?')}"
                error = assertion.get("error")
                if assertion.get("skipped"):
                    report.tests.append(TestReport(name, "call", "skipped"))
                elif error is None:
                    report.tests.append(TestReport(name, "call", "passed"))
        for failure in failures:
            error = failure.get("error") or {}
            item = (failure.get("source") or {}).get("name", "?")
            at = str(failure.get("at", ""))
            in_assertion = at.startswith("assertion:")
            name = f"{item} > {error.get('test')}" if in_assertion else f"{item} ({at})"
            # Only a failed pm.test expectation is the test's verdict; a request that got no
            # answer, a script error or a response that is not JSON is an error, as in pytest.
            assertion = in_assertion and error.get("name") == "AssertionError"
            report.tests.append(TestReport(name, "call", "failed", assertion,
                                           _message(failure)))
        return report
