"""The one road out of a sandbox: the canonical port inside, relayed to one implementation.

The listening sockets live in the execution's own network namespace (the worker passes them to
the harness); every connection the test makes to localhost:8000 is accepted here, in the harness,
and copied byte for byte to the implementation's real address on the host's loopback. Nothing
else listens in the sandbox's namespace, so nothing else is reachable from it.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket

CHUNK = 65536


class Relay:
    def __init__(self, listeners: list[socket.socket], target: tuple[str, int]) -> None:
        self._listeners = listeners
        self._target = target
        self._servers: list[asyncio.Server] = []
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        for sock in self._listeners:
            self._servers.append(await asyncio.start_server(self._accepted, sock=sock))

    async def _accepted(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self._target)
        except OSError:
            writer.transport.abort()
            return
        self._writers.add(upstream_writer)
        copies = [asyncio.ensure_future(_copy(reader, upstream_writer)),
                  asyncio.ensure_future(_copy(upstream_reader, writer))]
        self._tasks.update(copies)
        try:
            await asyncio.gather(*copies, return_exceptions=True)
        finally:
            self._tasks.difference_update(copies)
            for end in (writer, upstream_writer):
                end.transport.abort()
                self._writers.discard(end)

    async def close(self) -> None:
        """Closes the listeners and cuts every connection still open, both ways."""
        for server in self._servers:
            server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        for task in list(self._tasks):
            task.cancel()
        for server in self._servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()
        for sock in self._listeners:
            sock.close()


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(CHUNK):
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.transport.abort()
