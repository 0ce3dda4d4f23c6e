"""A stub service on the loopback for the test workers' warm-ups: it answers the operations of
the Schemathesis warm-up's document (`schemathesis_warm_up.DOCUMENT`), some right and some wrong,
so that the clients' and the checks' code paths run once in the worker, before it forks."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any

ITEM = {"id": 1, "name": "pen", "email": "ann@example.com", "tags": ["office"], "note": None}


class _StubHandler(http.server.BaseHTTPRequestHandler):
    """Answers the warm-up document's operations: right, except DELETE (500)."""

    protocol_version = "HTTP/1.1"
    timeout = 0.5  # a kept-alive connection left open ends soon after the warm-up
    disable_nagle_algorithm = True  # headers and body go out in two writes

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = self.path.split("?")[0]
        if self.command == "POST" and path == "/login":
            status, body = 200, {"access_token": "warm", "token_type": "bearer"}
        elif self.command == "GET" and path == "/items":
            status, body = 200, [ITEM]
        elif not self.headers.get("Authorization"):
            status, body = 401, {"detail": "Not authenticated"}
        elif self.command == "PUT":
            status, body = 200, ITEM
        else:
            status, body = 500, {"detail": "Internal Server Error"}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def stub_service() -> Iterator[str]:
    """The stub on a free loopback port, for the duration; its thread is gone afterwards (the
    worker forks test processes from a single-threaded state)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _StubHandler)
    server.daemon_threads = False  # server_close() then waits for every connection's thread
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), name="warm-up stub",
                              daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
