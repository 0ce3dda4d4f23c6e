"""Messages with file descriptors over a Unix SOCK_SEQPACKET socket, for asyncio.

One JSON message per packet, descriptors passed alongside (SCM_RIGHTS). Used between the harness
and its test workers, and between the harness and its servers (which accept a sandbox's
connections on listening sockets handed to them).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
from typing import Any

PACKET_LIMIT = 65536
MAX_DESCRIPTORS = 8


class ChannelClosed(Exception):
    """The other end closed the channel, or sent something that is not a message."""


def close_all(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def send(sock: socket.socket, payload: dict[str, Any], fds: list[int] | None = None) -> None:
    data = json.dumps(payload).encode()
    if fds:
        socket.send_fds(sock, [data], fds)
    else:
        sock.send(data)


async def receive(sock: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """The next message and its descriptors; `sock` must be non-blocking."""
    loop = asyncio.get_running_loop()
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(sock, PACKET_LIMIT, MAX_DESCRIPTORS)
        except BlockingIOError:
            ready = loop.create_future()
            loop.add_reader(sock.fileno(), wake, ready)
            try:
                await ready
            finally:
                loop.remove_reader(sock.fileno())
            continue
        except OSError as exc:
            raise ChannelClosed(str(exc)) from None
        if not data:
            raise ChannelClosed("closed")
        try:
            message = json.loads(data)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            close_all(fds)
            raise ChannelClosed("an unreadable message")
        return message, fds


def wake(ready: asyncio.Future[None]) -> None:
    """A reader's callback (also for a pidfd: execution.executor). The awaiting task may have
    been cancelled (an interrupt) after the socket became readable and before its `finally`
    removed the reader: the callback then still runs once, on a cancelled future, and must not
    fail (asyncio would print its traceback)."""
    if not ready.done():
        ready.set_result(None)
