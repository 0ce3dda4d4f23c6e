"""What a service server writes to its log: uvicorn's warnings and errors in uvicorn's format,
no access log. The launcher sets uvicorn's logging up once and its servers inherit it."""

from __future__ import annotations

import asyncio
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
