"""`node`: JavaScript tests for Node.js's built-in test runner (`node --test`), using plain
`fetch`. Files end in `.test.js` or `.test.mjs`; ES modules and CommonJS both load."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from functools import cached_property
from pathlib import Path

from restbench.execution.outcome import TestReport
from restbench.runners.base import ToolReport

REPORTER = Path(__file__).with_name("node_reporter.mjs")
MINIMUM_VERSION = (20, 10)  # --experimental-detect-module; custom reporters
HEAP_LIMIT_MB = 1024  # the JS heap; the address space limit is raised for V8's reservations
ADDRESS_SPACE_BYTES = 32 * 1024**3
INSTALL_HINT = "apt-get install nodejs (Node.js 20.10 or later)"
# What Node.js calls a failed assertion: node:assert's AssertionError (code ERR_ASSERTION), and
# the AssertionError of chai-style libraries.
ASSERTION_NAMES = ("AssertionError",)


def node_executable() -> str | None:
    found = shutil.which("node")
    return os.path.realpath(found) if found else None


def node_host_paths(executable: str | None) -> list[str]:
    """Node's installation, where it is not under /usr (which the sandbox shows anyway)."""
    if executable is None or executable.startswith("/usr/"):
        return []
    return [str(Path(executable).parents[1])]


def check_node(runner: str) -> str:
    """Node.js's path; ToolMissing (which stops a run: a tool missing from the machine is not a
    failure of the tests' generator) when it is not there, does not run, or is too old."""
    from restbench.runners.setup import ToolMissing

    executable = node_executable()
    if executable is None:
        raise ToolMissing(f"runner '{runner}' needs Node.js, which is not installed: "
                          f"{INSTALL_HINT}")
    version = _version(executable)
    if version == _DOES_NOT_RUN:
        raise ToolMissing(f"runner '{runner}' needs Node.js; {executable} does not run "
                          f"('{executable} --version' failed): {INSTALL_HINT}")
    if version < MINIMUM_VERSION:
        raise ToolMissing(f"runner '{runner}' needs Node.js {MINIMUM_VERSION[0]}."
                          f"{MINIMUM_VERSION[1]} or later; {executable} is "
                          f"{'.'.join(map(str, version))}: {INSTALL_HINT}")
    return executable


_DOES_NOT_RUN = (0,)


def _version(executable: str) -> tuple[int, ...]:
    try:
        text = subprocess.run([executable, "--version"], capture_output=True, text=True,
                              timeout=30, check=False).stdout.strip().lstrip("v")
        return tuple(int(part) for part in text.split(".")[:2])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return _DOES_NOT_RUN


class NodeRunner:
    name = "node"
    suffixes = (".test.js", ".test.mjs")
    address_space_bytes = ADDRESS_SPACE_BYTES

    @cached_property
    def _node(self) -> str | None:
        return node_executable()

    def host_paths(self) -> list[str]:
        return node_host_paths(self._node)

    def check(self) -> None:
        check_node(self.name)

    def command(self, test_file: str, report_file: str, base_url: str) -> list[str]:
        if self._node is None:
            raise FileNotFoundError("node")
        return [self._node, f"--max-old-space-size={HEAP_LIMIT_MB}",
                "--experimental-detect-module", "--no-warnings", "--test",
                f"--test-reporter={REPORTER.as_uri()}",
                f"--test-reporter-destination={report_file}",
                "--test-reporter=spec", "--test-reporter-destination=stdout", test_file]

    def read_report(self, data: bytes, exit_code: int) -> ToolReport:
        report = ToolReport()
        for line in data.decode(errors="replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if not isinstance(event, dict) or event.get("suite"):
                continue  # a suite passes or fails with its tests, which are reported
            if event.get("failureType") in ("subtestsFailed", "cancelledByParent"):
                continue  # said of a test whose own failure (or parent's) is reported
            name = str(event.get("name", "?"))
            if event.get("fileLevel"):
                if not event.get("passed"):  # it did not load, or failed outside any test
                    report.collect_errors.append(f"{Path(name).name} failed outside its tests "
                                                 "(a syntax error, or an error at load time; "
                                                 "see the output)")
                continue
            if event.get("skipped"):
                report.tests.append(TestReport(name, "call", "skipped"))
            elif event.get("passed"):
                report.tests.append(TestReport(name, "call", "passed"))
            else:
                assertion = event.get("errorName") in ASSERTION_NAMES \
                    or event.get("errorCode") == "ERR_ASSERTION"
                message = f"{event.get('errorName') or 'Error'}: {event.get('message', '')}"
                report.tests.append(TestReport(name, "call", "failed", assertion,
                                               message[:500]))
        return report
