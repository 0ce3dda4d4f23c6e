"""ASGI wrapper that adds the harness's hidden control routes and records HTTP exchanges.

The routes live under CONTROL_PREFIX, are served only on the server's control socket (a Unix
socket in a folder the sandbox cannot see; on the TCP port the service answers the path like any
unknown one), require the per-server secret in CONTROL_HEADER, and never appear in the service's
OpenAPI document (the wrapper sits outside the FastAPI app).
"""

from __future__ import annotations

import hmac
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from restbench.serving.reach import ReachRecorder

CONTROL_PREFIX = "/__restbench__/"
CONTROL_HEADER = b"x-restbench-control"
BODY_LIMIT = 2000
# A request's line and headers, at most, on every road into a service (its servers' protocol,
# serving/bounded_http.py, and the recording proxy): h11's bound, as uvicorn configures it.
HEAD_LIMIT_BYTES = 16 * 1024
EXCHANGE_LIMIT = 200
ACTIONS = frozenset({"reset", "exchanges", "busy", "health", "unreached"})
# Request headers an exchange does not keep: the transport's, the content negotiation's and the
# credentials' (OpenAPI ignores header parameters named Accept, Content-Type or Authorization).
# What is left is what a header parameter can carry (Idempotency-Key, If-Match, X-Request-Id).
UNRECORDED_HEADERS = frozenset({
    b"host", b"content-length", b"content-type", b"content-encoding", b"transfer-encoding",
    b"connection", b"keep-alive", b"proxy-connection", b"te", b"trailer", b"upgrade", b"expect",
    b"accept", b"accept-encoding", b"user-agent",
    b"authorization", b"proxy-authorization", b"cookie", CONTROL_HEADER})
HEADERS_KEPT = 20
HEADER_VALUE_LIMIT = 200

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def _text(body: bytes) -> str:
    text = body[:BODY_LIMIT].decode("utf-8", errors="replace")
    return text + "…" if len(body) > BODY_LIMIT else text


def recorded_headers(headers: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """The request headers an exchange keeps, by lower-case name (repeated ones joined by ", ",
    as HTTP allows): none of UNRECORDED_HEADERS, at most HEADERS_KEPT, values cut."""
    kept: dict[str, str] = {}
    for name, value in headers:
        name = name.lower()
        if name in UNRECORDED_HEADERS:
            continue
        key = name.decode("latin-1")
        if key not in kept and len(kept) >= HEADERS_KEPT:
            continue
        text = value.decode("latin-1")[:HEADER_VALUE_LIMIT]
        kept[key] = f"{kept[key]}, {text}" if key in kept else text
    return kept


class ControlledApp:
    """Serves `app`, plus reset/health/exchanges routes for the harness."""

    def __init__(self, app: ASGIApp, reset: Callable[[], None], token: str,
                 reach: ReachRecorder | None = None) -> None:
        self.app = app
        self.reset = reset
        self.token = token.encode()
        self.reach = reach  # in a server of the original: what its tests reached
        self.exchanges: list[dict[str, Any]] = []
        self.busy_s = 0.0  # time spent answering the service's requests since the last reset

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(CONTROL_PREFIX) \
                and _via_unix_socket(scope):
            await self._control(scope, send)
        elif scope["type"] == "http":
            await self._recorded(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _control(self, scope: Scope, send: Send) -> None:
        headers = dict(scope["headers"])
        if not hmac.compare_digest(headers.get(CONTROL_HEADER, b""), self.token):
            await _respond(send, 404, {"detail": "Not Found"})
            return
        action = scope["path"][len(CONTROL_PREFIX):]
        if action not in ACTIONS or (action == "reset" and scope["method"] != "POST"):
            await _respond(send, 404, {"detail": "unknown control route"})
            return
        await _respond(send, 200, self.perform(action))

    def perform(self, action: str) -> object:
        """The answer to one of ACTIONS, asked over HTTP on the control socket or over the
        server's hand-off channel (the harness's usual road: no HTTP round trip)."""
        if action == "reset":
            if self.reach is not None:
                self.reach.before_reset()
            self.reset()
            if self.reach is not None:
                self.reach.after_reset()
            self.exchanges.clear()
            self.busy_s = 0.0
            return {"status": "reset"}
        if action == "exchanges":
            return self.exchanges
        if action == "busy":
            return {"seconds": self.busy_s}
        if action == "health":
            return {"status": "ok"}
        if action == "unreached":  # see serving.reach
            return self.reach.unreached() if self.reach is not None else []
        raise ValueError(f"unknown control action {action!r}")

    async def _recorded(self, scope: Scope, receive: Receive, send: Send) -> None:
        request_body = bytearray()
        response_body = bytearray()
        exchange: dict[str, Any] = {
            "method": scope["method"],
            "url": scope["path"] + (f"?{scope['query_string'].decode()}"
                                    if scope.get("query_string") else ""),
            "status": None,
        }
        headers = recorded_headers(scope["headers"])
        if headers:
            exchange["request_headers"] = headers

        async def recording_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request" and len(request_body) <= BODY_LIMIT:
                request_body.extend(message.get("body", b""))
            return message

        recorded = False
        answered = False  # the response's last body message went out

        def record() -> None:
            nonlocal recorded
            if recorded:
                return
            recorded = True
            exchange["request_body"] = _text(bytes(request_body))
            exchange["response_body"] = _text(bytes(response_body))
            if len(self.exchanges) < EXCHANGE_LIMIT:
                self.exchanges.append(exchange)

        async def recording_send(message: Message) -> None:
            nonlocal answered
            if message["type"] == "http.response.start":
                exchange["status"] = message["status"]
            elif message["type"] == "http.response.body":
                if len(response_body) <= BODY_LIMIT:
                    response_body.extend(message.get("body", b""))
                if not message.get("more_body", False):
                    # Recorded before the last byte goes out: a client that asks for the
                    # exchanges right after its response arrived must find this one.
                    record()
                    await send(message)
                    answered = True
                    return
            await send(message)

        started = time.perf_counter()
        try:
            await self.app(scope, recording_receive, recording_send)
        except Exception:
            if not answered:
                raise  # uvicorn answers 500, or closes a response it cannot finish
            # Raised after the whole response went out: Starlette's error middleware re-raises
            # once its 500 is sent. uvicorn would log it and close the connection, and whether a
            # client that had already sent its next request on that kept-alive connection got an
            # answer or a reset was up to timing (a test's outcome too: a fail or an error). The
            # error is logged as uvicorn logs it; the connection goes on.
            logging.getLogger("uvicorn.error").exception("Exception in ASGI application\n")
        finally:
            record()  # also a request whose handler failed before responding
            self.busy_s += time.perf_counter() - started


def _via_unix_socket(scope: Scope) -> bool:
    """uvicorn gives a Unix socket's server address as (path, None), a TCP one as (host, port)."""
    server = scope.get("server")
    return server is not None and server[1] is None


async def _respond(send: Send, status: int, payload: object) -> None:
    body = json.dumps(payload).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
