"""What a service server writes to its log (uvicorn's warnings and errors in uvicorn's format, no
access log: the launcher sets uvicorn's logging up once and its servers inherit it), and how it
goes on after an endpoint raised."""

from __future__ import annotations

import asyncio
import shutil
import socket
from pathlib import Path

import httpx

from restbench.benchmark import resolve_services
from restbench.mutation import implementations_of
from restbench.serving import ServerPool

MINI = Path(__file__).parents[1] / "fixtures" / "mini"


def _send_garbage(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        return connection.recv(4096)


def test_a_server_logs_uvicorns_warnings_in_its_format_and_no_access_lines(
        tmp_path: Path) -> None:
    async def scenario() -> str:
        implementations = implementations_of(resolve_services([str(MINI)])[0])
        async with ServerPool(tmp_path / "servers") as pool:
            for implementation_id in ("original", "MINI-01-M1"):  # a first and a forked start
                server = await pool.start(implementations[implementation_id])
                async with httpx.AsyncClient(base_url=server.base_url, trust_env=False) as client:
                    assert (await client.get("/counters/a")).status_code == 200
                answer = await asyncio.to_thread(_send_garbage, server.port)
                assert answer.startswith(b"HTTP/1.1 400")
                await asyncio.sleep(0.2)
                log = server.log_tail(4000)
                assert "WARNING:  Invalid HTTP request received." in log, log
                assert "/counters/a" not in log, log
            return log

    asyncio.run(scenario())


def _pipelined(port: int, requests: list[bytes]) -> bytes:
    """Sends `requests` at once on one connection; everything that comes back until it closes
    or is quiet for a second."""
    answer = b""
    with socket.create_connection(("127.0.0.1", port), timeout=1) as connection:
        connection.sendall(b"".join(requests))
        try:
            while chunk := connection.recv(65536):
                answer += chunk
        except (TimeoutError, ConnectionResetError):
            pass
    return answer


def test_a_request_queued_behind_an_endpoint_that_raised_is_answered(tmp_path: Path) -> None:
    """Starlette re-raises an endpoint's exception once its 500 is out, and uvicorn then closed
    the connection: a request already sent on it got no answer or a reset, by the timing (a
    generated test with a kept-alive session failed or errored by luck). Pipelined here, the
    second request is always there when the first one raises."""
    service = tmp_path / "mini"
    shutil.copytree(MINI, service, ignore=shutil.ignore_patterns("__pycache__"))
    main = service / "app" / "main.py"
    main.write_text(main.read_text().replace(
        "    return app\n",
        "    @app.get('/boom')\n"
        "    def boom() -> None:\n"
        "        raise RuntimeError('boom')\n\n"
        "    return app\n", 1))

    async def scenario() -> tuple[bytes, str]:
        implementations = implementations_of(resolve_services([str(service)])[0])
        async with ServerPool(tmp_path / "servers") as pool:
            server = await pool.start(implementations["original"])
            answer = await asyncio.to_thread(_pipelined, server.port, [
                b"GET /boom HTTP/1.1\r\nHost: t\r\n\r\n",
                b"GET /counters/a HTTP/1.1\r\nHost: t\r\n\r\n"])
            await asyncio.sleep(0.2)
            return answer, server.log_file.read_text()

    answer, log = asyncio.run(scenario())
    assert answer.startswith(b"HTTP/1.1 500 ")
    assert answer.count(b"HTTP/1.1 ") == 2 and b'{"value":1}' in answer, answer
    assert "ERROR:    Exception in ASGI application" in log and "RuntimeError: boom" in log, log


def test_a_log_tail_shows_a_line_repeated_in_a_row_once_with_its_count(tmp_path: Path) -> None:
    """Before: a ready route polled until the start's time limit filled the error's quote of the
    log with six copies of its access line, hiding what came before."""
    from restbench.serving.logs import log_tail

    log = tmp_path / "server.log"
    log.write_text("listening on 8080\nwarning: no seed file\n"
                   + '"GET /healthz" 404\n' * 40 + "shutting down\n")
    assert log_tail(log) == ('listening on 8080 | warning: no seed file | "GET /healthz" 404 (x40) '
                             "| shutting down")
    log.write_text("")
    assert log_tail(log) == "(empty log)"
    assert log_tail(tmp_path / "missing.log") == "(no log)"
