"""A small recording reverse proxy in front of an external service instance.

The harness cannot look inside a service written in another language, so what it needs from
an execution (the HTTP exchanges, a canonical base URL) comes from here: every request a test
makes reaches the proxy (on its own loopback port, or on listening sockets handed over from a
sandbox), is forwarded to the instance, and is recorded with its answer. The service's reset
route belongs to the harness: the proxy answers it 404 as an unknown route, so a test cannot
reset the service behind the harness's back.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
from typing import Any

import h11
import httpx

from restbench.serving.control import BODY_LIMIT, EXCHANGE_LIMIT, _text

# Headers about one hop of a connection, never forwarded (RFC 9110 section 7.6.1), plus the
# ones the proxy sets itself.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "proxy-authenticate",
                        "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade",
                        "host", "content-length"})
READ_CHUNK = 65536
UPSTREAM_TIMEOUT_S = 120.0


class RecordingProxy:
    """Forwards HTTP/1.1 requests to `upstream` and records them; refuses `hidden` routes
    ((METHOD, path) pairs)."""

    def __init__(self, upstream: str, hidden: set[tuple[str, str]] | None = None) -> None:
        self.upstream = upstream
        self.hidden = hidden or set()
        self.exchanges: list[dict[str, Any]] = []
        self.busy_s = 0.0
        self._client = httpx.AsyncClient(base_url=upstream, trust_env=False,
                                         timeout=UPSTREAM_TIMEOUT_S)
        self._servers: dict[str, list[asyncio.Server]] = {}
        self._connections: dict[str, set[asyncio.StreamWriter]] = {}
        self.port = 0

    async def start(self) -> int:
        """Listens on a free loopback port of its own; returns it."""
        server = await asyncio.start_server(self._serving("own"), "127.0.0.1", 0)
        self._servers["own"] = [server]
        self.port = server.sockets[0].getsockname()[1]
        return self.port

    async def attach(self, listeners: list[socket.socket]) -> str:
        handle = secrets.token_hex(8)
        self._servers[handle] = [await asyncio.start_server(self._serving(handle), sock=sock)
                                 for sock in listeners]
        return handle

    async def detach(self, handle: str) -> None:
        for server in self._servers.pop(handle, []):
            server.close()
        for writer in self._connections.pop(handle, set()):  # the test is over: cut them
            writer.transport.abort()

    def _serving(self, handle: str) -> Any:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            connections = self._connections.setdefault(handle, set())
            connections.add(writer)
            try:
                await self._serve(reader, writer)
            finally:
                connections.discard(writer)
        return serve

    def clear(self) -> None:
        self.exchanges.clear()
        self.busy_s = 0.0

    async def close(self) -> None:
        for servers in self._servers.values():
            for server in servers:
                server.close()
        self._servers.clear()
        for connections in self._connections.values():
            for writer in list(connections):
                writer.transport.abort()
        self._connections.clear()
        await self._client.aclose()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = h11.Connection(h11.SERVER)
        try:
            while True:
                request, body = await self._read_request(connection, reader)
                if request is None:
                    break
                status, headers, answer = await self._forward(request, body)
                data = connection.send(h11.Response(status_code=status, headers=[
                    *headers, ("content-length", str(len(answer)))]))
                data += connection.send(h11.Data(data=answer)) if answer else b""
                data += connection.send(h11.EndOfMessage())
                writer.write(data)
                await writer.drain()
                if connection.our_state is h11.MUST_CLOSE:
                    break
                connection.start_next_cycle()
        except (h11.RemoteProtocolError, h11.LocalProtocolError):
            with contextlib.suppress(Exception):
                writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n"
                             b"connection: close\r\n\r\n")
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _read_request(self, connection: h11.Connection, reader: asyncio.StreamReader,
                            ) -> tuple[h11.Request | None, bytes]:
        request: h11.Request | None = None
        body = bytearray()
        while True:
            event = connection.next_event()
            if event is h11.NEED_DATA:
                chunk = await reader.read(READ_CHUNK)
                connection.receive_data(chunk)
                continue
            if isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                return request, bytes(body)
            elif isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
                return None, b""

    async def _forward(self, request: h11.Request, body: bytes,
                       ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        method = request.method.decode()
        target = request.target.decode()
        path = target.split("?", 1)[0]
        exchange: dict[str, Any] = {"method": method, "url": target, "status": None}
        started = asyncio.get_running_loop().time()
        if (method, path) in self.hidden:
            status, headers, answer = 404, [(b"content-type", b"application/json")], \
                b'{"detail":"Not Found"}'
        else:
            forwarded = [(name, value) for name, value in request.headers
                         if name.decode().lower() not in HOP_BY_HOP]
            try:
                upstream = await self._client.send(
                    self._client.build_request(method, target, headers=forwarded, content=body),
                    stream=True)
                try:
                    answer = b"".join([chunk async for chunk in upstream.aiter_raw()])
                finally:
                    await upstream.aclose()
                status = upstream.status_code
                headers = [(name, value) for name, value in upstream.headers.raw
                           if name.decode().lower() not in HOP_BY_HOP]
            except httpx.HTTPError as exc:
                status, headers = 502, [(b"content-type", b"text/plain")]
                answer = f"restbench proxy: the service did not answer: {exc!r}".encode()
        self.busy_s += asyncio.get_running_loop().time() - started
        exchange.update(status=status, request_body=_text(body[:BODY_LIMIT + 1]),
                        response_body=_text(answer[:BODY_LIMIT + 1]))
        if len(self.exchanges) < EXCHANGE_LIMIT:
            self.exchanges.append(exchange)
        return status, headers, answer
