"""uvicorn's httptools protocol with a bound on a request's head (request line and headers).

h11 refuses a head that grows past 16 KiB (uvicorn's `h11_max_incomplete_event_size`); the
httptools protocol keeps whatever comes: a test that sends a header without end grows the
service server's memory for as long as its time limit lets it (200 MB of header made a server
of 80 MB one of 360 MB). This one answers such a head as h11 did, 400 "Invalid HTTP request
received." and a closed connection, once more than HEAD_LIMIT_BYTES of it have come.

Only whole chunks are counted, from the one after the chunk where the head began (the parser
does not say where in a chunk a head starts): a head never counts bytes of the body before it,
and the memory a head may take stays bounded by the limit and two chunks.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from restbench.serving.control import HEAD_LIMIT_BYTES

INVALID_REQUEST = "Invalid HTTP request received."  # what uvicorn answers a malformed request


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._in_head = False
        self._head_began_in_this_chunk = False
        self._head_bytes = 0

    def data_received(self, data: bytes) -> None:
        self._head_began_in_this_chunk = False
        super().data_received(data)
        if not self._in_head or self._head_began_in_this_chunk or self.transport.is_closing():
            return
        self._head_bytes += len(data)
        if self._head_bytes > HEAD_LIMIT_BYTES:
            self._in_head = False
            self.logger.warning(INVALID_REQUEST)
            self.send_400_response(INVALID_REQUEST)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True
        self._head_began_in_this_chunk = True
        self._head_bytes = 0

    def on_headers_complete(self) -> None:
        self._in_head = False
        super().on_headers_complete()
