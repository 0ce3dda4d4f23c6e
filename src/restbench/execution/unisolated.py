"""What `--no-sandbox` keeps of the old in-process guard: a convenience, not a boundary.

Without namespaces a test shares the harness's network, files and processes. To keep generated
tests that hard-code the canonical base URL working, connections to its port are redirected to
the implementation's real port by patching `socket.socket.connect` inside the test's process;
a subprocess, `_socket` or ctypes walks around it. Trusted generators' tests only.
"""

from __future__ import annotations

import socket
from typing import Any


def redirect_canonical_port(canonical_port: int, actual_port: int) -> None:
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex

    def target(sock: socket.socket, address: Any) -> Any:
        if sock.family not in (socket.AF_INET, socket.AF_INET6) or not isinstance(address, tuple):
            return address
        if address[1] != canonical_port:
            return address
        if sock.family == socket.AF_INET6:
            return ("::ffff:127.0.0.1", actual_port, *address[2:])
        return ("127.0.0.1", actual_port)

    def connect(sock: socket.socket, address: Any) -> None:
        original_connect(sock, target(sock, address))

    def connect_ex(sock: socket.socket, address: Any) -> int:
        return original_connect_ex(sock, target(sock, address))

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
