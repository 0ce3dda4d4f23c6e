"""A small recording reverse proxy in front of an external service instance.

The harness cannot look inside a service written in another language, so what it needs from
an execution (the HTTP exchanges, a canonical base URL) comes from here: every request a test
makes reaches the proxy (on its own loopback port, or on listening sockets handed over from a
sandbox), is forwarded to the instance, and is recorded with its answer. The service's reset
route belongs to the harness: the proxy answers it 404 as an unknown route, so a test cannot
reset the service behind the harness's back.

The proxy forwards over kept-alive HTTP/1.1 connections of its own, not through an HTTP client
library: it adds no header but Host and Content-Length and keeps no cookie jar, so the instance
sees the test's request as sent, and nothing of one test's requests (a session cookie the service
set) travels with the next test's. It is on the path of every request of an external service's
tests, so it is built for little CPU per request: asyncio protocols, not streams, and httptools's
parser (C, as uvicorn uses), ~0.2 ms of the harness's CPU a request where h11 on streams took
~0.45 ms. What it writes is what it wrote with h11 byte for byte, and it keeps h11's rules for
what a test may send (a Host header, one; a head of 16 KiB at most; keep-alive only for
HTTP/1.1 without `Connection: close`): tests/serving/test_proxy.py checks the bytes. Stricter
than h11 in two places, as the services' own servers (httptools too) are: bare LF line ends,
and Content-Length beside Transfer-Encoding, are a 400.
"""

from __future__ import annotations

import asyncio
import secrets
import socket
from collections import deque
from typing import Any
from urllib.parse import urlsplit

import httptools

from restbench.serving.control import (
    BODY_LIMIT,
    EXCHANGE_LIMIT,
    HEAD_LIMIT_BYTES,
    _text,
    recorded_headers,
)

# Headers about one hop of a connection, never forwarded (RFC 9110 section 7.6.1), plus the
# ones the proxy sets itself.
HOP_BY_HOP = frozenset({b"connection", b"keep-alive", b"proxy-connection", b"proxy-authenticate",
                        b"proxy-authorization", b"te", b"trailer", b"transfer-encoding",
                        b"upgrade", b"host", b"content-length"})
UPSTREAM_TIMEOUT_S = 120.0
# Methods whose request carries a body by definition: sent with Content-Length 0 when empty.
BODY_METHODS = frozenset({b"POST", b"PUT", b"PATCH"})
# A request's body, held whole in the harness before it is forwarded: a test must not be able
# to grow the harness without end (h11 did not bound it).
BODY_LIMIT_BYTES = 64 * 1024**2
TOO_LARGE = (b"HTTP/1.1 413 Content Too Large\r\ncontent-length: 0\r\nconnection: close"
             b"\r\n\r\n")
PIPELINED_LIMIT = 16  # requests read ahead of their answers before the proxy stops reading
BAD_REQUEST = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
WHITESPACE = b" \t"

Headers = list[tuple[bytes, bytes]]


class UpstreamError(Exception):
    """The instance did not answer a forwarded request."""


def _close_requested(headers: Headers) -> bool:
    return any(name == b"connection" and b"close" in
               (token.strip().lower() for token in value.split(b","))
               for name, value in headers)


class _Message:
    """What a parser's callbacks gather for one message: names lowercased, values stripped of
    surrounding whitespace (as h11 gives them)."""

    def __init__(self) -> None:
        self.url = bytearray()
        self.headers: Headers = []
        self.body = bytearray()
        self.head_complete = False

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name.lower(), value.strip(WHITESPACE)))

    def on_body(self, body: bytes) -> None:
        self.body += body


class _UpstreamConnection(asyncio.Protocol):
    """One kept-alive HTTP/1.1 connection to the instance, one request at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.reusable_after = False
        self._answer: asyncio.Future[tuple[int, Headers, bytes]] | None = None
        self._message = _Message()
        self._parser = httptools.HttpResponseParser(self)
        self._head_only = False

    # -- asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(ConnectionError(f"the service's answer is not HTTP: {exc}"))

    def eof_received(self) -> bool:
        self._ended()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._ended()

    # -- the parser's callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        self._message.on_header(name, value)

    def on_headers_complete(self) -> None:
        self._message.head_complete = True
        if self._head_only:  # the answer to HEAD: no body, whatever its headers announce
            self.reusable_after = False
            self._complete()

    def on_body(self, body: bytes) -> None:
        self._message.on_body(body)

    def on_message_complete(self) -> None:
        status = self._parser.get_status_code()
        if 100 <= status < 200 and status != 101:  # an interim answer: the real one follows
            self._message = _Message()
            return
        self.reusable_after = self._parser.get_http_version() == "1.1" and \
            not _close_requested(self._message.headers)
        self._complete()

    # -- the exchange
    def reusable(self) -> bool:
        """Idle, and not closed by the instance meanwhile (Node closes idle connections)."""
        return self.reusable_after and not self.closed and self._answer is None and \
            self.transport is not None and not self.transport.is_closing()

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    async def exchange(self, request: bytes, head_only: bool) -> tuple[int, Headers, bytes]:
        """Sends one request (its bytes); returns the answer. Raises OSError when the instance
        does not answer it whole."""
        assert self.transport is not None
        self._answer = asyncio.get_running_loop().create_future()
        self._message = _Message()
        self._head_only = head_only
        self.reusable_after = False
        self.transport.write(request)
        try:
            return await self._answer
        finally:
            self._answer = None

    def _complete(self) -> None:
        if self._answer is not None and not self._answer.done():
            self._answer.set_result((self._parser.get_status_code(), self._message.headers,
                                     bytes(self._message.body)))

    def _fail(self, exc: Exception) -> None:
        self.reusable_after = False
        if self._answer is not None and not self._answer.done():
            self._answer.set_exception(exc)
        self.close()

    def _ended(self) -> None:
        self.closed = True
        message = self._message
        if self._answer is None or self._answer.done():
            return
        framed = any(name in (b"content-length", b"transfer-encoding")
                     for name, _ in message.headers)
        if message.head_complete and not framed:  # a body that ends with the connection
            self.reusable_after = False
            self._complete()
        else:
            self._fail(ConnectionError("the service closed the connection without an answer"))


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
        lines = [b"%s %s HTTP/1.1\r\nhost: %s\r\n" % (method, target, self.host_header)]
        lines += [b"%s: %s\r\n" % header for header in headers]
        if body or method in BODY_METHODS:
            lines.append(b"content-length: %d\r\n" % len(body))
        lines += [b"\r\n", body]
        # Never sent twice: a request the instance may have acted on is not repeated, so a
        # connection it closed while idle is left out before, not retried after.
        connection = self._take() or await self._connect()
        try:
            async with asyncio.timeout(self.timeout_s):
                answer = await connection.exchange(b"".join(lines), method == b"HEAD")
        except (OSError, TimeoutError) as exc:
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
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.timeout_s):
                _, connection = await loop.create_connection(_UpstreamConnection, self.host,
                                                             self.port)
        except (OSError, TimeoutError) as exc:
            raise UpstreamError(repr(exc)) from None
        self._open.add(connection)
        return connection

    def _discard(self, connection: _UpstreamConnection) -> None:
        connection.close()
        self._open.discard(connection)

    def close(self) -> None:
        for connection in list(self._open):
            self._discard(connection)
        self._idle.clear()


class _TooLarge(Exception):
    """A request body past BODY_LIMIT_BYTES."""


class _Request(_Message):
    """A request as read from a test's connection."""

    def __init__(self) -> None:
        super().__init__()
        self.method = b""
        self.keep_alive = True


class _TestConnection(asyncio.Protocol):
    """One connection from a test: its requests, read ahead and answered in order."""

    def __init__(self, proxy: RecordingProxy, handle: str) -> None:
        self.proxy = proxy
        self.handle = handle
        self.transport: asyncio.Transport | None = None
        self._parser = httptools.HttpRequestParser(self)
        self._request = _Request()
        self._head_bytes = 0
        # Requests to answer, in order, and last, once the connection is to end, the bytes that
        # end it: a refusal (400, 413) or nothing (the test's end of input).
        self._pending: deque[_Request | bytes] = deque()
        self._reading_paused = False
        self._write_paused = False
        self._in_message = False
        self._answering: asyncio.Task[None] | None = None
        self._ended = False

    # -- asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.proxy._connections.setdefault(self.handle, set()).add(self)

    def data_received(self, data: bytes) -> None:
        if self._ended:
            return
        if not self._request.head_complete:
            self._head_bytes += len(data)  # what the head of the request being read has taken
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade as upgrade:
            # A request that asks to switch protocols (Upgrade, CONNECT) is forwarded like any
            # other, and the instance's answer to it is no 101 the proxy would act on: as h11
            # did, the connection goes on with what follows it.
            offset = upgrade.args[0] if upgrade.args else len(data)
            self._parser = httptools.HttpRequestParser(self)
            if offset < len(data):
                self.data_received(data[offset:])
        except httptools.HttpParserCallbackError as exc:
            self._end(TOO_LARGE if isinstance(exc.__context__, _TooLarge) else BAD_REQUEST)
        except httptools.HttpParserError:
            self._end(BAD_REQUEST)
        else:
            if not self._request.head_complete and self._head_bytes > HEAD_LIMIT_BYTES:
                self._end(BAD_REQUEST)

    def eof_received(self) -> bool:
        # A request cut short is a bad one (h11: the peer closed unexpectedly).
        self._end(BAD_REQUEST if self._in_message else b"")
        return True  # the answers to what came before still go out

    def connection_lost(self, exc: Exception | None) -> None:
        # A request being forwarded is still answered by the instance and recorded.
        self._ended = True
        self.proxy._connections.get(self.handle, set()).discard(self)

    def pause_writing(self) -> None:  # the test reads slowly: read no further ahead meanwhile
        self._write_paused = True
        self._pause_reading()

    def resume_writing(self) -> None:
        self._write_paused = False
        self._resume_reading()

    # -- the parser's callbacks
    def on_message_begin(self) -> None:
        self._request = _Request()
        self._in_message = True

    def on_url(self, url: bytes) -> None:
        self._request.on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._request.on_header(name, value)

    def on_headers_complete(self) -> None:
        request = self._request
        request.head_complete = True
        request.method = self._parser.get_method()
        hosts = sum(name == b"host" for name, _ in request.headers)
        version = self._parser.get_http_version()
        if hosts > 1 or (hosts == 0 and version == "1.1"):
            raise httptools.HttpParserError("a request needs one Host header")
        request.keep_alive = version == "1.1" and not _close_requested(request.headers)

    def on_body(self, body: bytes) -> None:
        if len(self._request.body) + len(body) > BODY_LIMIT_BYTES:
            raise _TooLarge
        self._request.on_body(body)

    def on_message_complete(self) -> None:
        self._pending.append(self._request)
        self._request = _Request()
        self._head_bytes = 0
        self._in_message = False
        if len(self._pending) >= PIPELINED_LIMIT:
            self._pause_reading()
        self._answer_soon()

    # -- answering
    def _end(self, last: bytes) -> None:
        if not self._ended:
            self._ended = True
            self._pending.append(last)
            self._answer_soon()

    def _answer_soon(self) -> None:
        if self._answering is None or self._answering.done():
            self._answering = asyncio.get_running_loop().create_task(self._answer_pending())

    async def _answer_pending(self) -> None:
        transport = self.transport
        assert transport is not None
        while self._pending and not transport.is_closing():
            item = self._pending.popleft()
            if isinstance(item, bytes):
                transport.write(item)
                transport.close()
                return
            status, headers, answer = await self.proxy._forward(item)
            lines = [b"HTTP/1.1 %d \r\n" % status]
            lines += [b"%s: %s\r\n" % header for header in headers]
            lines.append(b"content-length: %d\r\n" % len(answer))
            if not item.keep_alive:
                lines.append(b"Connection: close\r\n")
            lines += [b"\r\n", answer]
            transport.write(b"".join(lines))
            if not item.keep_alive:
                self._ended = True
                transport.close()
                return
            self._resume_reading()

    def _pause_reading(self) -> None:
        if not self._reading_paused and self.transport is not None:
            self._reading_paused = True
            self.transport.pause_reading()

    def _resume_reading(self) -> None:
        if self._reading_paused and not self._write_paused and \
                len(self._pending) < PIPELINED_LIMIT and self.transport is not None and \
                not self.transport.is_closing():
            self._reading_paused = False
            self.transport.resume_reading()

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()


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
        self._connections: dict[str, set[_TestConnection]] = {}
        self.port = 0

    async def start(self) -> int:
        """Listens on a free loopback port of its own; returns it."""
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: _TestConnection(self, "own"), "127.0.0.1", 0)
        self._servers["own"] = [server]
        self.port = server.sockets[0].getsockname()[1]
        return self.port

    async def attach(self, listeners: list[socket.socket]) -> str:
        handle = secrets.token_hex(8)
        loop = asyncio.get_running_loop()
        self._servers[handle] = [
            await loop.create_server(lambda: _TestConnection(self, handle), sock=sock)
            for sock in listeners]
        return handle

    async def detach(self, handle: str) -> None:
        for server in self._servers.pop(handle, []):
            server.close()
        for connection in self._connections.pop(handle, set()):  # the test is over: cut them
            connection.abort()

    def clear(self) -> None:
        self.exchanges.clear()
        self.busy_s = 0.0

    async def close(self) -> None:
        for servers in self._servers.values():
            for server in servers:
                server.close()
        self._servers.clear()
        for connections in self._connections.values():
            for connection in list(connections):
                connection.abort()
        self._connections.clear()
        self._upstream.close()

    async def _forward(self, request: _Request) -> tuple[int, Headers, bytes]:
        target = bytes(request.url)
        method = request.method.decode()
        url = target.decode("ascii", errors="replace")
        body = bytes(request.body)
        exchange: dict[str, Any] = {"method": method, "url": url, "status": None}
        if sent := recorded_headers(request.headers):
            exchange["request_headers"] = sent
        started = asyncio.get_running_loop().time()
        if (method, url.split("?", 1)[0]) in self.hidden:
            status, headers, answer = 404, [(b"content-type", b"application/json")], \
                b'{"detail":"Not Found"}'
        else:
            forwarded = [(name, value) for name, value in request.headers
                         if name not in HOP_BY_HOP]
            try:
                status, answered, answer = await self._upstream.request(
                    request.method, target, forwarded, body)
                headers = [(name, value) for name, value in answered if name not in HOP_BY_HOP]
            except UpstreamError as exc:
                status, headers = 502, [(b"content-type", b"text/plain")]
                answer = f"restbench proxy: the service did not answer: {exc}".encode()
        self.busy_s += asyncio.get_running_loop().time() - started
        exchange.update(status=status, request_body=_text(body[:BODY_LIMIT + 1]),
                        response_body=_text(answer[:BODY_LIMIT + 1]))
        if len(self.exchanges) < EXCHANGE_LIMIT:
            self.exchanges.append(exchange)
        return status, headers, answer
