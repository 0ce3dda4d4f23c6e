"""The harness's control of a running server (reset, recorded exchanges, busy time): over the
server's hand-off channel, the usual road, and over HTTP on its control socket, the fallback."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from restbench.benchmark import resolve_services
from restbench.errors import ServiceStartError
from restbench.execution import channel
from restbench.mutation import implementations_of
from restbench.serving import RunningServer, ServerPool

MINI = Path(__file__).parents[1] / "fixtures" / "mini"
PADDING = "x" * 5000  # 30 such URLs make an answer of ~150 KB, far over one packet (64 KiB)


@contextlib.asynccontextmanager
async def _mini_server(tmp_path: Path) -> AsyncIterator[RunningServer]:
    """The mini service's original, reset once."""
    original = implementations_of(resolve_services([str(MINI)])[0])["original"]
    async with ServerPool(tmp_path / "servers") as pool:
        server = await pool.start(original)
        await server.reset()
        yield server
        await pool.stop(server)


async def _make_exchanges(server: RunningServer, count: int) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, trust_env=False) as client:
        for number in range(count):
            response = await client.get(f"/counters/a?n={number}&pad={PADDING}")
            assert response.status_code == 200


def test_control_over_the_channel_and_over_http_gives_the_same_answers(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with _mini_server(tmp_path) as server:
            assert server.handoff is not None
            await _make_exchanges(server, 30)
            over_channel = await server.exchanges()
            assert [e["url"] for e in over_channel] == \
                [f"/counters/a?n={n}&pad={PADDING}" for n in range(30)]
            assert all(e["status"] == 200 and e["response_body"] == '{"value":1}'
                       for e in over_channel)
            assert await server.busy_s() > 0

            handoff, server.handoff = server.handoff, None  # the fallback: HTTP
            try:
                assert await server.exchanges() == over_channel
                await server.reset()
                assert await server.exchanges() == []
                assert await server.busy_s() == 0.0
                await _make_exchanges(server, 1)
            finally:
                server.handoff = handoff
            assert len(await server.exchanges()) == 1
            await server.reset()
            assert await server.exchanges() == []

    asyncio.run(scenario())


def test_a_late_answer_is_not_taken_for_the_next_request(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with _mini_server(tmp_path) as server:
            await _make_exchanges(server, 2)
            # An answer to an earlier request (its id already used) that its asker gave up on.
            assert server.handoff is not None
            channel.send(server.handoff, {"control": "busy", "id": server._asked})
            await asyncio.sleep(0.2)  # the late answer (a number) is waiting on the channel
            exchanges = await server.exchanges()
            assert [e["url"].split("&")[0] for e in exchanges] == \
                ["/counters/a?n=0", "/counters/a?n=1"]

    asyncio.run(scenario())


def test_a_dead_server_fails_its_reset_with_its_log(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with _mini_server(tmp_path) as server:
            os.kill(server.pid, signal.SIGKILL)
            with pytest.raises(ServiceStartError, match="reset failed: reset: "):
                await server.reset()
            assert await server.exchanges() == []

    asyncio.run(scenario())


def test_an_exchange_keeps_the_headers_a_parameter_can_carry_and_no_credential(
        tmp_path: Path) -> None:
    async def scenario() -> list[dict]:
        async with _mini_server(tmp_path) as server:
            async with httpx.AsyncClient(base_url=server.base_url, trust_env=False) as client:
                await client.get("/counters/a")  # httpx's own headers only: none is kept
                await client.get("/counters/a", headers=[
                    ("Idempotency-Key", "k-1"), ("If-Match", '"v2"'), ("X-Tag", "a"),
                    ("X-Tag", "b"), ("Authorization", "Bearer secret"), ("Cookie", "s=1"),
                    ("X-Long", "v" * 500)])
            return await server.exchanges()

    plain, marked = asyncio.run(scenario())
    assert "request_headers" not in plain
    assert marked["request_headers"] == {"idempotency-key": "k-1", "if-match": '"v2"',
                                         "x-tag": "a, b", "x-long": "v" * 200}
