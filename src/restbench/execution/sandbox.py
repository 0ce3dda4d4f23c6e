"""Code that runs inside the forked child that executes one untrusted test file.

Two jobs: keep the test's network traffic on the service under test (connections to the canonical
base URL's port are redirected to the implementation being tested; connections off the machine are
refused), and collect pytest's reports.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import pytest

from restbench.execution.outcome import TestReport

MESSAGE_LIMIT = 500
REPORT_LIMIT = 200


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return host == "localhost"


def install_network_guard(canonical_port: int, actual_port: int) -> None:
    """Redirects loopback:canonical_port to 127.0.0.1:actual_port; refuses non-loopback hosts."""
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex

    def target(sock: socket.socket, address: Any) -> Any:
        if sock.family not in (socket.AF_INET, socket.AF_INET6) or not isinstance(address, tuple):
            return address
        host, port = address[0], address[1]
        if not _is_loopback(str(host)):
            raise ConnectionRefusedError(
                f"restbench sandbox: connections to {host}:{port} are blocked; "
                "only the service under test is reachable")
        if port == canonical_port:
            if sock.family == socket.AF_INET6:
                return ("::ffff:127.0.0.1", actual_port, *address[2:])
            return ("127.0.0.1", actual_port)
        return address

    def connect(sock: socket.socket, address: Any) -> None:
        original_connect(sock, target(sock, address))

    def connect_ex(sock: socket.socket, address: Any) -> int:
        return original_connect_ex(sock, target(sock, address))

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]


class ReportCollector:
    """A pytest plugin object that keeps every report in a JSON-friendly form."""

    def __init__(self) -> None:
        self.tests: list[TestReport] = []
        self.collect_errors: list[str] = []

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        outcome = yield
        report = outcome.get_result()
        if len(self.tests) >= REPORT_LIMIT:
            return
        assertion = False
        message = ""
        if report.failed and call.excinfo is not None:
            assertion = call.excinfo.errisinstance((AssertionError, pytest.fail.Exception))
            message = f"{call.excinfo.typename}: {call.excinfo.value}"[:MESSAGE_LIMIT]
        elif report.skipped:
            message = str(report.longrepr)[:MESSAGE_LIMIT]
        self.tests.append(TestReport(report.nodeid, report.when, report.outcome, assertion,
                                     message))

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collect_errors.append(str(report.longrepr)[-2000:])
