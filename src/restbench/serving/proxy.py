"""A small recording reverse proxy in front of an external service instance.

The harness cannot look inside a service written in another language, so what it needs from
an execution (the HTTP exchanges, a canonical base URL) comes from here: every request a test
makes reaches the proxy (on its own loopback port, or on listening sockets handed over from a
sandbox), is forwarded to the instance, and is recorded with its answer. The service's reset
route belongs to the harness: the proxy answers it 404 as an unknown route, so a test cannot
reset the service behind the harness's back.

The proxy forwards over kept-alive HTTP/1.1 connections of its own (h11 on asyncio streams, not
an HTTP client library): it adds no header but Host and Content-Length and keeps no cookie jar,
so the instance sees the test's request as sent, and nothing of one test's requests (a session
cookie the service set) travels with the next test's. It is also on the path of every request
of an external service's tests, where a client library's machinery cost the harness about as
much CPU as everything else it did.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
from typing import Any
from urllib.parse import urlsplit

import h11

from restbench.serving.control import BODY_LIMIT, EXCHANGE_LIMIT, _text

# Headers about one hop of a connection, never forwarded (RFC 9110 section 7.6.1), plus the
# ones the proxy sets itself.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "proxy-authenticate",
                        "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade",
                        "host", "content-length"})
READ_CHUNK = 65536
UPSTREAM_TIMEOUT_S = 120.0
# Methods whose request carries a body by definition: sent with Content-Length 0 when empty.
BODY_METHODS = frozenset({b"POST", b"PUT", b"PATCH"})

Headers = list[tuple[bytes, bytes]]


class UpstreamError(Exception):
    """The instance did not answer a forwarded request."""


class _UpstreamConnection:
    """One kept-alive HTTP/1.1 connection to the instance."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.protocol = h11.Connection(h11.CLIENT)

    def reusable(self) -> bool:
        """Idle, and not closed by the instance meanwhile (Node closes idle connections)."""
        return self.protocol.our_state is h11.IDLE and not self.writer.is_closing() \
            and not self.reader.at_eof()

    def close(self) -> None:
        self.writer.transport.abort()

    async def exchange(self, request: h11.Request, body: bytes) -> tuple[int, Headers, bytes]:
        """Sends one request; returns the answer. Raises OSError or h11.ProtocolError when the
        instance does not answer it whole."""
        data = self.protocol.send(request)
        if body:
            data += self.protocol.send(h11.Data(data=body))
        data += self.protocol.send(h11.EndOfMessage())
        self.writer.write(data)
        await self.writer.drain()
        response: h11.Response | None = None
        chunks: list[bytes] = []
        while True:
            event = self.protocol.next_event()
            if event is h11.NEED_DATA:
                # b"" at the end: h11 then knows whether the answer was complete
                self.protocol.receive_data(await self.reader.read(READ_CHUNK))
            elif isinstance(event, h11.Response):
                response = event
            elif isinstance(event, h11.Data):
                chunks.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                break
            elif isinstance(event, h11.ConnectionClosed):
                raise ConnectionError("the service closed the connection without an answer")
        assert response is not None
        if self.protocol.our_state is h11.DONE and self.protocol.their_state is h11.DONE:
            self.protocol.start_next_cycle()
        return response.status_code, list(response.headers), b"".join(chunks)


class Upstream:
    """Forwards requests to the instance at `base_url` over kept-alive connections, one per
    request in flight."""

    def __init__(self, base_url: str, timeout_s: float = UPSTREAM_TIMEOUT_S) -> None:
        address = urlsplit(base_url)
        self.host = address.hostname or "127.0.0.1"
        self.port = address.port or 80
        self.host_header = address.netloc.encode()
        self.timeout_s = timeout_s
        self._idle: list[_UpstreamConnection] = []
        self._open: set[_UpstreamConnection] = set()

    async def request(self, method: bytes, target: bytes, headers: Headers,
                      body: bytes) -> tuple[int, Headers, bytes]:
        framing = [(b"content-length", str(len(body)).encode())] \
            if body or method in BODY_METHODS else []
        request = h11.Request(method=method, target=target,
                              headers=[(b"host", self.host_header), *headers, *framing])
        # Never sent twice: a request the instance may have acted on is not repeated, so a
        # connection it closed while idle is left out before, not retried after.
        connection = self._take() or await self._connect()
        try:
            async with asyncio.timeout(self.timeout_s):
                answer = await connection.exchange(request, body)
        except (OSError, TimeoutError, h11.ProtocolError) as exc:
            self._discard(connection)
            raise UpstreamError(repr(exc)) from None
        except BaseException:
            self._discard(connection)
            raise
        if connection.reusable():
            self._idle.append(connection)
        else:
            self._discard(connection)
        return answer

    def _take(self) -> _UpstreamConnection | None:
        while self._idle:
            connection = self._idle.pop()
            if connection.reusable():
                return connection
            self._discard(connection)
        return None

    async def _connect(self) -> _UpstreamConnection:
        try:
            async with asyncio.timeout(self.timeout_s):
                reader, writer = await asyncio.open_connection(self.host, self.port)
        except (OSError, TimeoutError) as exc:
            raise UpstreamError(repr(exc)) from None
        connection = _UpstreamConnection(reader, writer)
        self._open.add(connection)
        return connection

    def _discard(self, connection: _UpstreamConnection) -> None:
        connection.close()
        self._open.discard(connection)

    def close(self) -> None:
        for connection in list(self._open):
            self._discard(connection)
        self._idle.clear()


class RecordingProxy:
    """Forwards HTTP/1.1 requests to `upstream` and records them; refuses `hidden` routes
    ((METHOD, path) pairs)."""

    def __init__(self, upstream: str, hidden: set[tuple[str, str]] | None = None) -> None:
        self.upstream = upstream
        self.hidden = hidden or set()
        self.exchanges: list[dict[str, Any]] = []
        self.busy_s = 0.0
        self._upstream = Upstream(upstream)
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
        self._upstream.close()

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
                status, answered, answer = await self._upstream.request(
                    request.method, request.target, forwarded, body)
                headers = [(name, value) for name, value in answered
                           if name.decode().lower() not in HOP_BY_HOP]
            except UpstreamError as exc:
                status, headers = 502, [(b"content-type", b"text/plain")]
                answer = f"restbench proxy: the service did not answer: {exc}".encode()
        self.busy_s += asyncio.get_running_loop().time() - started
        exchange.update(status=status, request_body=_text(body[:BODY_LIMIT + 1]),
                        response_body=_text(answer[:BODY_LIMIT + 1]))
        if len(self.exchanges) < EXCHANGE_LIMIT:
            self.exchanges.append(exchange)
        return status, headers, answer
