"""A fake OpenAI-compatible endpoint for tests: a real HTTP server on loopback replaying a script.

    with FakeLLMServer(["```python\\ndef test_x(): ...\\n```", Reply(status=429), ...]) as fake:
        ... point a ModelConfig (or RESTBENCH_LLM_BASE_URL) at fake.base_url ...

A script is a list of answers served in order (a `str` is the content of a normal answer), or a
callable that picks the answer for each request body. Once a list is used up, the server answers
500 so a test that makes more calls than it scripted fails loudly.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from restbench.llm.fitting import estimate_tokens


@dataclass(frozen=True)
class Reply:
    content: str | None = None
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    status: int = 200
    delay_s: float = 0.0
    body: str | None = None  # sent as it is (a malformed answer) instead of a proper one
    content_type: str = "application/json"  # of `body`
    usage: tuple[int, int] = (100, 50)
    finish_reason: str | None = None  # default: "tool_calls" with tool calls, else "stop"


@dataclass(frozen=True)
class Quirks:
    """Behaviours of real local servers (llama-cpp-python's, llama.cpp's) to reproduce."""

    tools_need_choice: bool = False  # tools without "tool_choice" are ignored: a plain answer
    rejects_null_content: bool = False  # HTTP 500 for a message whose content is null
    context_tokens: int | None = None  # HTTP 400 when the prompt's estimate exceeds it
    one_at_a_time: bool = False  # requests are answered in turn, as a single-slot server does
    count_usage: bool = False  # usage reports the estimated prompt tokens, not the scripted one


def estimated_prompt_tokens(request: dict[str, Any]) -> int:
    """The fake's token count: restbench's own estimate (a server whose tokenizer it matches)."""
    return estimate_tokens(request.get("messages", []), request.get("tools"))


Script = Sequence["Reply | str"] | Callable[[dict[str, Any]], "Reply | str"]


def _completion(reply: Reply, model: str, number: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{number}_{i}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments)}}
            for i, (name, arguments) in enumerate(reply.tool_calls)]
    return {"id": f"chatcmpl-fake-{number}", "object": "chat.completion", "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": reply.finish_reason
                         or ("tool_calls" if reply.tool_calls else "stop")}],
            "usage": {"prompt_tokens": reply.usage[0], "completion_tokens": reply.usage[1],
                      "total_tokens": sum(reply.usage)}}


class _QuietServer(ThreadingHTTPServer):
    """A client that goes away mid-answer (a killed run) is not an error worth a traceback."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeLLMServer:
    def __init__(self, script: Script, quirks: Quirks = Quirks(),
                 models: list[dict[str, Any]] | None = None) -> None:
        self._script = script
        self.quirks = quirks
        self.models = models or []  # what GET /v1/models lists
        self._turn = threading.Lock()
        self.most_in_flight = 0
        self._in_flight = 0
        self._position = 0
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []  # request bodies, in arrival order
        self.headers: list[dict[str, str]] = []
        self._server = _QuietServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(request)
            if callable(self._script):
                answer = self._script(request)
            elif self._position < len(self._script):
                answer = self._script[self._position]
                self._position += 1
            else:
                answer = Reply(status=500, content="the fake's script is used up")
        return Reply(content=answer) if isinstance(answer, str) else answer

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: Any) -> None:
                pass

            def _send(self, status: int, payload: str, extra: dict[str, str] | None = None,
                      content_type: str = "application/json") -> None:
                data = payload.encode()
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                for name, value in (extra or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/v1/models":
                    self._send(200, json.dumps({"object": "list", "data": fake.models}))
                else:
                    self._send(404, json.dumps({"error": {"message": "not found"}}))

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, json.dumps({"error": {"message": "not found"}}))
                    return
                try:
                    request = json.loads(raw)
                except json.JSONDecodeError:
                    self._send(400, json.dumps({"error": {"message": "body is not JSON"}}))
                    return
                with fake._lock:
                    fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                if fake.quirks.one_at_a_time:
                    with fake._turn:
                        self._answer(request)
                else:
                    self._answer(request)

            def _answer(self, request: dict[str, Any]) -> None:
                with fake._lock:
                    fake._in_flight += 1
                    fake.most_in_flight = max(fake.most_in_flight, fake._in_flight)
                try:
                    self._reply(request)
                finally:
                    with fake._lock:
                        fake._in_flight -= 1

            def _reply(self, request: dict[str, Any]) -> None:
                quirks = fake.quirks
                problem = _refusal(request, quirks)
                if problem is not None:
                    with fake._lock:
                        fake.requests.append(request)
                    self._send(problem[0], json.dumps({"error": {"message": problem[1]}}))
                    return
                number = len(fake.requests)
                reply = fake._next(request)
                if quirks.tools_need_choice and request.get("tools") \
                        and "tool_choice" not in request and reply.tool_calls:
                    reply = Reply(content=json.dumps([{"name": n, "arguments": a}
                                                      for n, a in reply.tool_calls]),
                                  usage=reply.usage)
                if quirks.count_usage:
                    reply = replace(reply, usage=(estimated_prompt_tokens(request),
                                                  len(reply.content or "") // 4))
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.status != 200:
                    self._send(reply.status, json.dumps(
                        {"error": {"message": reply.content or "scripted failure",
                                   "type": "scripted"}}), {"retry-after": "0"})
                elif reply.body is not None:
                    self._send(200, reply.body, content_type=reply.content_type)
                else:
                    self._send(200, json.dumps(_completion(reply, request.get("model", ""),
                                                           number)))

        return Handler


def _refusal(request: dict[str, Any], quirks: Quirks) -> tuple[int, str] | None:
    """What a real server with these quirks would refuse the request with, if anything."""
    if quirks.rejects_null_content and any(m.get("content") is None
                                           for m in request.get("messages", [])):
        # llama-cpp-python validates content as a string and answers 500 with the detail
        return 500, ("1 validation error for ChatCompletionRequestAssistantMessage content: "
                     "Input should be a valid string [type=string_type, input_value=None]")
    if quirks.context_tokens is not None:
        wanted = estimated_prompt_tokens(request) + int(request.get("max_tokens") or 0)
        if wanted > quirks.context_tokens:
            return 400, (f"Requested tokens ({wanted}) exceed context window of "
                         f"{quirks.context_tokens}")
    return None
