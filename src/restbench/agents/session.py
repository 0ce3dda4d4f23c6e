"""The live session: tool calls become real HTTP requests against the running service.

Login rule: when any call answers 2xx with a JSON object that holds a token (a string member
`accessToken`, `access_token` or `token`, at the top level or one object down, as in conduit's
`{"user": {"token": ...}}`), the session keeps it and sends it with every later call of an
operation that declares security, in the form its security scheme names: `Bearer <token>` for
HTTP bearer and OAuth2 schemes, and for an API-key header the prefix its description shows
(`Authorization: Token <jwt>`), else the bare token. Logging in again replaces the token.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Self

import httpx

from restbench.agents.tools import ArgumentError, Tool, build_request

TOKEN_KEYS = ("accessToken", "access_token", "token")
RESULT_BODY_LIMIT = 4000


@dataclass(frozen=True)
class ToolResult:
    """What a tool call gave back: the HTTP status and body, or why no request was made."""

    status: int | None
    body: Any = None
    error: str | None = None

    def as_text(self, limit: int = RESULT_BODY_LIMIT) -> str:
        """The result as an agent reads it: compact JSON, truncated."""
        payload: dict[str, Any] = {"status": self.status}
        if self.error:
            payload["error"] = self.error
        else:
            payload["body"] = self.body
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        return text if len(text) <= limit else text[:limit] + "…(truncated)"


def find_token(body: Any) -> str | None:
    if not isinstance(body, dict):
        return None
    for key in TOKEN_KEYS:
        if isinstance(body.get(key), str) and body[key]:
            return str(body[key])
    for value in body.values():
        if isinstance(value, dict):
            for key in TOKEN_KEYS:
                if isinstance(value.get(key), str) and value[key]:
                    return str(value[key])
    return None


@dataclass(frozen=True)
class Credential:
    """How one security scheme carries a token."""

    location: str  # header | query
    name: str
    prefix: str  # "Bearer", "Token" or ""

    def apply(self, token: str, headers: dict[str, str], query: list[tuple[str, str]]) -> None:
        value = f"{self.prefix} {token}" if self.prefix else token
        if self.location == "query":
            query.append((self.name, value))
        else:
            headers[self.name] = value


def credentials(document: dict[str, Any]) -> dict[str, Credential]:
    """Security scheme name -> how it sends a token; schemes that cannot carry one are left out."""
    schemes = (document.get("components") or {}).get("securitySchemes") or {}
    found = {}
    for name, scheme in schemes.items():
        kind = scheme.get("type")
        if kind in ("oauth2", "openIdConnect") or (
                kind == "http" and str(scheme.get("scheme", "")).lower() == "bearer"):
            found[name] = Credential("header", "Authorization", "Bearer")
        elif kind == "apiKey" and scheme.get("in") in ("header", "query"):
            header = str(scheme.get("name", "Authorization"))
            shown = re.search(rf"{re.escape(header)}:\s*([A-Za-z][\w-]*)\s+<",
                              str(scheme.get("description", "")), re.IGNORECASE)
            found[name] = Credential(scheme["in"], header, shown.group(1) if shown else "")
    return found


class LiveSession:
    """One case's conversation with the service: the tools bound to its base URL and token."""

    def __init__(self, base_url: str, tools: list[Tool], document: dict[str, Any],
                 timeout_s: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.tools = {tool.name: tool for tool in tools}
        self._credentials = credentials(document)
        self._client = httpx.AsyncClient(base_url=self.base_url, timeout=timeout_s,
                                         trust_env=False, follow_redirects=False)
        self.token: str | None = None
        self.requests_sent = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    async def __aenter__(self) -> Self:
        self._loop = asyncio.get_running_loop()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self._client.aclose()

    def bound(self) -> list[BoundTool]:
        return [BoundTool(tool, self) for tool in self.tools.values()]

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        tool = self.tools.get(name)
        if tool is None:
            return ToolResult(None, error=f"unknown tool '{name}'")
        if not isinstance(arguments, dict):
            return ToolResult(None, error="arguments must be a JSON object")
        try:
            request = build_request(tool, arguments)
        except ArgumentError as exc:
            return ToolResult(None, error=str(exc))
        headers, query = dict(request.headers), list(request.query)
        if self.token and tool.security:
            credential = next((self._credentials[s] for s in tool.security
                               if s in self._credentials), None)
            if credential is not None:
                credential.apply(self.token, headers, query)
        self.requests_sent += 1
        try:
            response = await self._client.request(
                request.method, request.path, params=query or None, headers=headers,
                json=request.json_body if request.has_json_body else None,
                data=request.form_body)
        except httpx.HTTPError as exc:
            return ToolResult(None, error=f"request failed: {type(exc).__name__}: {exc}")
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text
        if 200 <= response.status_code < 300:
            token = find_token(body)
            if token:
                self.token = token
        return ToolResult(response.status_code, body)

    def call_sync(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """For agents that run in a worker thread: the call runs on the session's event loop."""
        if self._loop is None:
            raise RuntimeError("the session is not open")
        future = asyncio.run_coroutine_threadsafe(self.call(name, arguments), self._loop)
        return future.result()


@dataclass(frozen=True)
class BoundTool:
    """A tool as handed to an agent: its description, and calls that reach the live service."""

    spec: Tool
    session: LiveSession

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def description(self) -> str:
        return self.spec.description

    @property
    def parameters(self) -> dict[str, Any]:
        return self.spec.parameters

    def as_openai(self, name: str | None = None) -> dict[str, Any]:
        return self.spec.as_openai(name)

    def call(self, arguments: dict[str, Any]) -> Awaitable[ToolResult]:
        return self.session.call(self.spec.name, arguments)

    def call_sync(self, arguments: dict[str, Any]) -> ToolResult:
        return self.session.call_sync(self.spec.name, arguments)
