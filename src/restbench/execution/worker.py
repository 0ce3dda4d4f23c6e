"""A pre-warmed test worker: forks one sandboxed child per execution.

Run as `python -m restbench.execution.worker` with a clean environment. It imports pytest and the
usual HTTP clients and runs pytest once, so that each forked child starts warm (tens of ms instead
of hundreds). Protocol: one JSON request per stdin line, one JSON answer per stdout line.

Request: {"workdir", "test_file", "env", "canonical_port", "actual_port", "timeout_s"}
Answer:  {"exit_code", "tests", "collect_errors", "timed_out", "duration_s", "output"}
"""

from __future__ import annotations

import gc
import json
import os
import resource
import select
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from restbench.execution.sandbox import ReportCollector, install_network_guard

OUTPUT_FILE = "output.txt"
OUTPUT_HEAD = 4000
OUTPUT_TAIL = 4000
MEMORY_LIMIT_BYTES = 2 * 1024**3
FILE_SIZE_LIMIT_BYTES = 64 * 1024**2
# Plugins a generated test never needs; the exception-hook plugins cost a full gc per run.
PYTEST_ARGS = ["-q", "--no-header", "-o", "addopts=", "-W", "ignore::DeprecationWarning",
               *(arg for plugin in ("cacheprovider", "unraisableexception", "threadexception",
                                    "pastebin", "junitxml", "doctest")
                 for arg in ("-p", f"no:{plugin}"))]


def _warm_up() -> None:
    import http.client  # noqa: F401
    import unittest.mock  # noqa: F401

    import httpx  # noqa: F401
    import requests  # noqa: F401

    with tempfile.TemporaryDirectory() as folder:
        test = Path(folder) / "test_warm_up.py"
        test.write_text("import requests\n\ndef test_warm():\n    assert requests\n")
        (Path(folder) / "pytest.ini").write_text("[pytest]\n")
        saved = os.dup(1)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        try:
            pytest.main([str(test), "--rootdir", folder, *PYTEST_ARGS],
                         plugins=[ReportCollector()])
        finally:
            os.dup2(saved, 1)
        sys.modules.pop("test_warm_up", None)


_schemathesis_warm = False
# One operation with a path parameter and a JSON body: drawing a case imports what a test needs.
_WARM_UP_DOCUMENT = {
    "openapi": "3.1.0", "info": {"title": "warm-up", "version": "1"},
    "paths": {"/items/{id}": {"put": {
        "parameters": [{"name": "id", "in": "path", "required": True,
                        "schema": {"type": "integer"}}],
        "requestBody": {"required": True, "content": {"application/json": {"schema": {
            "type": "object", "properties": {"name": {"type": "string"}}}}}},
        "responses": {"200": {"description": "ok"}}}}},
}


def _warm_up_schemathesis(test_file: str) -> None:
    """Before the first test that imports Schemathesis, imports it here, once, not in every child
    (1.5 to 4.5 s each on a busy 2-core machine). Workers that never see one do not pay for it."""
    global _schemathesis_warm
    if _schemathesis_warm:
        return
    try:
        if "import schemathesis" not in Path(test_file).read_text(errors="replace"):
            return
    except OSError:
        return
    _schemathesis_warm = True
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # stdout is the harness's protocol channel
    os.close(devnull)
    try:
        import schemathesis
        from hypothesis import given, settings
        from schemathesis.specs.openapi import checks  # noqa: F401

        operation = schemathesis.openapi.from_dict(_WARM_UP_DOCUMENT)["/items/{id}"]["PUT"]

        @settings(max_examples=1, database=None, derandomize=True)
        @given(case=operation.as_strategy())
        def draw(case: Any) -> None:
            case.as_transport_kwargs(base_url="http://localhost")

        draw()
    except Exception:  # noqa: BLE001, S110 - not installed or broken: each child imports it
        pass
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    gc.freeze()


def _child(request: dict[str, Any], report_fd: int) -> None:
    os.setsid()
    workdir = request["workdir"]
    os.chdir(workdir)
    output = os.open(OUTPUT_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(output, 1)
    os.dup2(output, 2)
    timeout = float(request["timeout_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (int(timeout) + 2, int(timeout) + 3))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT_BYTES, FILE_SIZE_LIMIT_BYTES))
    os.environ.clear()
    os.environ.update(request["env"])
    install_network_guard(int(request["canonical_port"]), int(request["actual_port"]))
    collector = ReportCollector()
    exit_code = int(pytest.main([request["test_file"], "--rootdir", workdir, "-c", "pytest.ini",
                                 *PYTEST_ARGS], plugins=[collector]))
    payload = {"exit_code": exit_code, "tests": [t.__dict__ for t in collector.tests],
               "collect_errors": collector.collect_errors}
    os.write(report_fd, json.dumps(payload).encode())


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        ready, _, _ = select.select([fd], [], [], 0)
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _truncated_output(workdir: str) -> str:
    try:
        text = (Path(workdir) / OUTPUT_FILE).read_text(errors="replace")
    except OSError:
        return ""
    if len(text) <= OUTPUT_HEAD + OUTPUT_TAIL:
        return text
    skipped = len(text) - OUTPUT_HEAD - OUTPUT_TAIL
    return f"{text[:OUTPUT_HEAD]}\n… [{skipped} characters left out] …\n{text[-OUTPUT_TAIL:]}"


def execute(request: dict[str, Any]) -> dict[str, Any]:
    """Runs one test file in a forked, time-limited child and reports what pytest saw."""
    _warm_up_schemathesis(request["test_file"])
    (Path(request["workdir"]) / "pytest.ini").write_text("[pytest]\n")
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            _child(request, write_fd)
        finally:
            os._exit(0)
    os.close(write_fd)
    pidfd = os.pidfd_open(pid)
    chunks: list[bytes] = []
    deadline = started + float(request["timeout_s"])
    timed_out = False
    while True:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            timed_out = True
            os.killpg(pid, signal.SIGKILL)
            break
        ready, _, _ = select.select([pidfd, read_fd], [], [], remaining)
        if read_fd in ready:
            chunks.append(_read_all(read_fd))
        if pidfd in ready:
            break
    os.waitpid(pid, 0)
    duration = time.perf_counter() - started
    os.close(pidfd)
    chunks.append(_read_all(read_fd))
    os.close(read_fd)
    try:
        os.killpg(pid, signal.SIGKILL)  # whatever the test left running
    except (ProcessLookupError, PermissionError):
        pass
    try:
        report = json.loads(b"".join(chunks) or b"{}")
    except json.JSONDecodeError:
        report = {}
    return {"exit_code": report.get("exit_code"), "tests": report.get("tests", []),
            "collect_errors": report.get("collect_errors", []), "timed_out": timed_out,
            "duration_s": duration, "output": _truncated_output(request["workdir"])}


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _warm_up()
    gc.freeze()  # forked children then skip the warm objects when they collect
    try:
        print(json.dumps({"ready": True}), flush=True)
        for line in sys.stdin:
            print(json.dumps(execute(json.loads(line))), flush=True)
    except BrokenPipeError:  # the harness is gone (interrupted or killed): nobody to answer
        pass


if __name__ == "__main__":
    main()
