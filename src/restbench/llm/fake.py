"""A fake OpenAI-compatible endpoint for tests: a real HTTP server on loopback replaying a script.

    with FakeLLMServer(["```python\\ndef test_x(): ...\\n```", Reply(status=429), ...]) as fake:
        ... point a ModelConfig (or RESTBENCH_LLM_BASE_URL) at fake.base_url ...

A script is a list of answers served in order (a `str` is the content of a normal answer), or a
callable that picks the answer for each request body. Once a list is used up, the server answers
500 so a test that makes more calls than it scripted fails loudly.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass(frozen=True)
class Reply:
    content: str | None = None
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    status: int = 200
    delay_s: float = 0.0
    body: str | None = None  # sent as it is (a malformed answer) instead of a proper one
    usage: tuple[int, int] = (100, 50)


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
                         "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
            "usage": {"prompt_tokens": reply.usage[0], "completion_tokens": reply.usage[1],
                      "total_tokens": sum(reply.usage)}}


class FakeLLMServer:
    def __init__(self, script: Script) -> None:
        self._script = script
        self._position = 0
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []  # request bodies, in arrival order
        self.headers: list[dict[str, str]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
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

            def _send(self, status: int, payload: str, extra: dict[str, str] | None = None) -> None:
                data = payload.encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in (extra or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, json.dumps({"object": "list", "data": []}))
                else:
                    self._send(404, json.dumps({"error": {"message": "not found"}}))

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, json.dumps({"error": {"message": "not found"}}))
                    return
                try:
                    request = json.loads(raw)
                except json.JSONDecodeError:
                    self._send(400, json.dumps({"error": {"message": "body is not JSON"}}))
                    return
                with fake._lock:
                    fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                number = len(fake.requests)
                reply = fake._next(request)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.status != 200:
                    self._send(reply.status, json.dumps(
                        {"error": {"message": reply.content or "scripted failure",
                                   "type": "scripted"}}), {"retry-after": "0"})
                elif reply.body is not None:
                    self._send(200, reply.body)
                else:
                    self._send(200, json.dumps(_completion(reply, request.get("model", ""),
                                                           number)))

        return Handler
