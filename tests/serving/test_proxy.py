"""The recording proxy in front of external services, against a real HTTP server on the
loopback: what reaches the service, kept-alive connections, a service that closes idle ones or
does not answer, and what is recorded."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import httpx
import pytest

from restbench.serving.proxy import RecordingProxy


class _Upstream(BaseHTTPRequestHandler):
    """Answers every request with what it received; sets a session cookie on /login; answers
    /chunked in chunks; closes a connection left idle for 1 s (as Node does after 5 s)."""

    protocol_version = "HTTP/1.1"
    timeout = 1.0  # idle kept-alive connections end after this
    seen: ClassVar[list[dict[str, Any]]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        self.seen.append({"method": self.command, "path": self.path, "body": body,
                          "headers": {k.lower(): v for k, v in self.headers.items()},
                          "connection": self.client_address[1]})
        if self.path == "/chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for part in (b"first,", b"second"):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
            return
        answer = f"{self.command} {self.path} {body}".encode()
        self.send_response(201 if self.command == "POST" else 200)
        if self.path == "/login":
            self.send_header("Set-Cookie", "session=alice; Path=/")
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    do_GET = do_POST = do_PUT = do_DELETE = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def upstream() -> Iterator[str]:
    _Upstream.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


async def _through_proxy(upstream: str, steps: Any) -> RecordingProxy:
    proxy = RecordingProxy(upstream, hidden={("POST", "/__reset")})
    port = await proxy.start()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            await steps(client)
    finally:
        await proxy.close()
    return proxy


def test_the_service_sees_the_test_s_request_and_no_cookie_of_an_earlier_one(
        upstream: str) -> None:
    async def steps(client: httpx.AsyncClient) -> None:
        login = await client.post("/login", json={"user": "alice"})
        assert login.status_code == 201 and login.headers["set-cookie"].startswith("session=")
        client.cookies.clear()  # this test sends no cookie: the next request must carry none
        answer = await client.get("/notes?page=2", headers={"X-Trace": "t1"})
        assert answer.status_code == 200 and answer.text == "GET /notes?page=2 "
        assert (await client.put("/notes/1", content=b"")).status_code == 200
        hidden = await client.post("/__reset")
        assert hidden.status_code == 404 and hidden.json() == {"detail": "Not Found"}
        # A bare request: the service gets it with no header the test did not send
        reader, writer = await asyncio.open_connection("127.0.0.1", client.base_url.port)
        writer.write(b"GET /bare HTTP/1.1\r\nHost: sandbox\r\nConnection: close\r\n\r\n")
        assert (await reader.read()).startswith(b"HTTP/1.1 200 ")
        writer.close()

    proxy = asyncio.run(_through_proxy(upstream, steps))
    login, notes, put, bare = _Upstream.seen
    assert login["body"] == '{"user":"alice"}' and login["headers"]["host"] == upstream[7:]
    assert "cookie" not in notes["headers"], notes["headers"]
    assert notes["headers"]["x-trace"] == "t1"
    assert put["headers"]["content-length"] == "0"
    assert bare["headers"] == {"host": upstream[7:]}, bare["headers"]
    assert [(e["method"], e["url"], e["status"]) for e in proxy.exchanges] == [
        ("POST", "/login", 201), ("GET", "/notes?page=2", 200), ("PUT", "/notes/1", 200),
        ("POST", "/__reset", 404), ("GET", "/bare", 200)]
    assert proxy.exchanges[1]["response_body"] == "GET /notes?page=2 "


def test_connections_are_kept_alive_and_one_closed_while_idle_is_replaced(upstream: str) -> None:
    async def steps(client: httpx.AsyncClient) -> None:
        for number in range(3):
            assert (await client.get(f"/a/{number}")).status_code == 200
        await asyncio.sleep(1.6)  # the service closes the idle connection meanwhile
        assert (await client.get("/b")).text == "GET /b "
        chunked = await client.get("/chunked")
        assert chunked.text == "first,second"
        assert chunked.headers["content-length"] == str(len("first,second"))

    asyncio.run(_through_proxy(upstream, steps))
    connections = [request["connection"] for request in _Upstream.seen]
    assert len(set(connections[:3])) == 1, connections  # one connection for the first three
    assert connections[3] != connections[0]


def test_concurrent_requests_each_get_their_own_answer(upstream: str) -> None:
    async def steps(client: httpx.AsyncClient) -> None:
        answers = await asyncio.gather(*(client.post(f"/c/{n}", content=f"body {n}".encode())
                                         for n in range(8)))
        assert [a.text for a in answers] == [f"POST /c/{n} body {n}" for n in range(8)]

    proxy = asyncio.run(_through_proxy(upstream, steps))
    assert sorted(e["request_body"] for e in proxy.exchanges) == [f"body {n}" for n in range(8)]


def test_a_service_that_does_not_answer_is_a_502_and_is_recorded() -> None:
    async def steps(client: httpx.AsyncClient) -> None:
        answer = await client.get("/anything")
        assert answer.status_code == 502
        assert answer.text.startswith("restbench proxy: the service did not answer:")

    started = time.monotonic()
    proxy = asyncio.run(_through_proxy("http://127.0.0.1:9", steps))  # discard port: refused
    assert time.monotonic() - started < 10
    assert [(e["url"], e["status"]) for e in proxy.exchanges] == [("/anything", 502)]
