"""The service servers run on uvloop with httptools (launcher.SERVER_LOOP, SERVER_HTTP), chosen
for speed over asyncio's loop with h11. The choice must not change what a test sees: the same
raw requests get the same bytes back from both, but the Date header and the letter case of
header names (h11 writes uvicorn's `Connection: close` as given, httptools's path lowercases it;
names are case-insensitive in HTTP, and the clients tests use compare them so)."""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from restbench.benchmark import resolve_services
from restbench.serving import launcher

SERVE = """
import socket, sys
import uvicorn
sys.path.insert(0, sys.argv[1])
from restbench.serving import inline_sync
inline_sync.install()
from app.main import create_app
app = create_app(sys.argv[2])
sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
sock.bind(("127.0.0.1", 0))
sock.listen(16)
print(sock.getsockname()[1], flush=True)
config = uvicorn.Config(app, loop=sys.argv[3], http=sys.argv[4], ws="none", lifespan="on",
                        log_level="warning", access_log=False)
uvicorn.Server(config).run(sockets=[sock])
"""
LOGIN = b'{"email": "alice@example.com", "password": "wrong"}'
# Kept-alive and pipelined on one connection; the last one closes it.
PIPELINED = b"".join([
    b"GET /todos HTTP/1.1\r\nHost: localhost:8000\r\n\r\n",
    b"GET /todos HTTP/1.1\r\nHost: localhost:8000\r\nAuthorization: Bearer nonsense\r\n\r\n",
    b"GET /no/such/route?x=1 HTTP/1.1\r\nHost: localhost:8000\r\n\r\n",
    b"DELETE /users/login HTTP/1.1\r\nHost: localhost:8000\r\n\r\n",
    b"HEAD /todos HTTP/1.1\r\nHost: localhost:8000\r\n\r\n",
    (b"POST /users/register HTTP/1.1\r\nHost: localhost:8000\r\nContent-Type: application/json"
     b"\r\nContent-Length: 9\r\n\r\n{\"email\":"),
    (b"POST /users/register HTTP/1.1\r\nHost: localhost:8000\r\nContent-Type: application/json"
     b"\r\nContent-Length: 47\r\n\r\n{\"email\": \"x@example.com\", \"password\": \"short\"}"),
    b"POST /users/login HTTP/1.1\r\nHost: localhost:8000\r\nContent-Type: application/json\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n" + f"{len(LOGIN):x}".encode() + b"\r\n" + LOGIN
    + b"\r\n0\r\n\r\n",
    b"POST /users/login HTTP/1.1\r\nHost: localhost:8000\r\nContent-Type: application/json\r\n"
    b"Content-Length: " + str(len(LOGIN)).encode() + b"\r\nConnection: close\r\n\r\n" + LOGIN,
])


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, int]]:
    """The todo service's original under both configurations: name -> port."""
    service_root = resolve_services(["todo"])[0].root
    folder = tmp_path_factory.mktemp("protocol")
    started: dict[str, subprocess.Popen[str]] = {}
    ports: dict[str, int] = {}
    try:
        for name, loop, http in (("asyncio+h11", "asyncio", "h11"),
                                 ("chosen", launcher.SERVER_LOOP, launcher.SERVER_HTTP)):
            database = f"sqlite:///{folder / name}.db"
            process = subprocess.Popen([sys.executable, "-c", SERVE, str(service_root), database,
                                        loop, http], stdout=subprocess.PIPE, text=True)
            started[name] = process
            assert process.stdout is not None
            ports[name] = int(process.stdout.readline())
        yield ports
    finally:
        for process in started.values():
            process.kill()
            process.wait()


def _normalized(answer: bytes) -> bytes:
    """Without Date headers, header names in lower case."""
    answer = re.sub(rb"(?im)^date: [^\r\n]*\r\n", b"", answer)
    return re.sub(rb"\r\n([A-Za-z0-9-]+): ", lambda name: name.group(0).lower(), answer)


def _exchange(port: int, data: bytes) -> bytes:
    """Sends `data` and reads until the server closes the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(data)
        received = []
        while chunk := connection.recv(65536):
            received.append(chunk)
    return _normalized(b"".join(received))


def test_the_chosen_loop_and_parser_are_not_asyncio_and_h11() -> None:
    assert (launcher.SERVER_LOOP, launcher.SERVER_HTTP) == (
        "uvloop", "restbench.serving.bounded_http:BoundedHttpToolsProtocol")


def _send_endless_header(port: int) -> bytes:
    """Sends a head whose header never ends, a KiB at a time, until the server answers; the
    answer (b"" if it never came within 4 MiB)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(b"GET /todos HTTP/1.1\r\nHost: localhost:8000\r\nX-Endless: ")
        for _ in range(4096):
            if select.select([connection], [], [], 0.002)[0]:
                break
            try:
                connection.sendall(b"a" * 1024)
            except OSError:  # closed by the server: its answer is waiting
                break
        received = []
        with contextlib.suppress(ConnectionResetError):
            while chunk := connection.recv(65536):
                received.append(chunk)
    return _normalized(b"".join(received))


def _status_and_body(answer: bytes) -> tuple[bytes, bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return head.split(b"\r\n")[0], body


def test_a_head_without_end_is_refused_as_h11_refused_it(servers: dict[str, int]) -> None:
    reference = _send_endless_header(servers["asyncio+h11"])
    assert reference.startswith(b"HTTP/1.1 400 ") and b"Invalid HTTP request" in reference
    # The same status and text, and the connection closed; the headers differ (uvicorn's h11
    # path sends neither Server nor Content-Length with it).
    answer = _send_endless_header(servers["chosen"])
    assert _status_and_body(answer) == _status_and_body(reference)
    assert b"\r\nconnection: close\r\n" in answer


def test_a_head_within_the_bound_is_answered_by_both(servers: dict[str, int]) -> None:
    """12 KiB of header, in separate chunks: under the bound, so the route answers."""
    answers = []
    for name in ("asyncio+h11", "chosen"):
        with socket.create_connection(("127.0.0.1", servers[name]), timeout=30) as connection:
            connection.sendall(b"GET /todos HTTP/1.1\r\nHost: localhost:8000\r\n"
                               b"Connection: close\r\nX-Large: ")
            for _ in range(12):
                connection.sendall(b"a" * 1024)
                time.sleep(0.005)
            connection.sendall(b"\r\n\r\n")
            answers.append(b"".join(iter(lambda: connection.recv(65536), b"")))
    assert all(answer.startswith(b"HTTP/1.1 401 ") for answer in answers), answers


def test_pipelined_requests_get_the_same_bytes_from_both(servers: dict[str, int]) -> None:
    reference = _exchange(servers["asyncio+h11"], PIPELINED)
    assert reference.count(b"HTTP/1.1 ") == 9, reference  # every request was answered
    for status in (b"401", b"404", b"405", b"400"):
        assert b"HTTP/1.1 " + status in reference, status
    assert _exchange(servers["chosen"], PIPELINED) == reference


@pytest.mark.parametrize("request_bytes", [
    b"GET /todos HTTP/1.1\r\nHost: localhost:8000\r\nConnection: close\r\n\r\n",
    b"GET /todos HTTP/1.0\r\n\r\n",
], ids=["connection-close", "http-1.0"])
def test_single_requests_get_the_same_bytes_from_both(servers: dict[str, int],
                                                      request_bytes: bytes) -> None:
    reference = _exchange(servers["asyncio+h11"], request_bytes)
    assert reference.startswith(b"HTTP/1.1 401 "), reference
    assert _exchange(servers["chosen"], request_bytes) == reference


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_restbench_serve_uses_the_same_bounded_protocol(tmp_path: Path, own_memory: Path,
                                                       stop_signal: signal.Signals) -> None:
    """`restbench serve`, for a person to try a service by hand, serves as the harness does,
    and Ctrl-C (or SIGTERM) stops it with nothing left in memory or in its scratch folder."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    said = tmp_path / "stderr.txt"  # outside the scratch folder, whose emptiness is checked
    with said.open("wb") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "restbench.cli", "serve", "todo",
                                    "--port", str(port)], cwd=tmp_path,
                                   stdout=subprocess.DEVNULL, stderr=stderr,
                                   env={**os.environ, "TMPDIR": str(scratch)})
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)):
                break
            assert process.poll() is None and time.monotonic() < deadline, "serve did not start"
            time.sleep(0.1)
        assert list(own_memory.iterdir())  # its database
        answer = _send_endless_header(port)
        assert answer.startswith(b"HTTP/1.1 400 ") and b"Invalid HTTP request" in answer
        assert list(scratch.iterdir())  # the service's copy
        process.send_signal(stop_signal)
        assert process.wait(timeout=30) == 0, said.read_text(errors="replace")
        assert list(own_memory.iterdir()) == []
        assert list(scratch.iterdir()) == []
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
