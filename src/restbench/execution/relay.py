"""The one road out of a sandbox: the canonical port inside, relayed to one implementation.

The listening sockets live in the execution's own network namespace (the worker passes them to
the harness); every connection the test makes to localhost:8000 is accepted here, in the harness,
and copied byte for byte to the implementation's real address on the host's loopback. Nothing
else listens in the sandbox's namespace, so nothing else is reachable from it.

Plain protocols, not streams: a byte arriving on one side is written to the other from the same
callback, which keeps the relay's cost per request low (it carries every request of the test).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket


class _Side(asyncio.Protocol):
    """One end of a relayed connection; writes what it receives to its peer."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.transport: asyncio.Transport | None = None
        self.peer: _Side | None = None
        self.pending = bytearray()
        self.eof = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.relay.transports.add(transport)  # type: ignore[arg-type]

    def pair(self, peer: _Side) -> None:
        self.peer = peer
        if self.pending:
            peer.write(bytes(self.pending))
            self.pending.clear()
        if self.eof:
            peer.write_eof()

    def write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def write_eof(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            if self.transport.can_write_eof():
                self.transport.write_eof()
            else:
                self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self.peer is None:
            self.pending += data
        else:
            self.peer.write(data)

    def eof_received(self) -> bool:
        self.eof = True
        if self.peer is not None:
            self.peer.write_eof()
        return True  # keep the other direction open until the peer is done too

    def pause_writing(self) -> None:  # our peer's buffer is full: stop reading from it
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.transport is not None:
            self.relay.transports.discard(self.transport)
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.close()


class _Inbound(_Side):
    """The test's connection: opens the implementation's side when it arrives."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self.relay.connect(self)


class Relay:
    def __init__(self, listeners: list[socket.socket], target: tuple[str, int]) -> None:
        self._listeners = listeners
        self._target = target
        self._servers: list[asyncio.Server] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self.transports: set[asyncio.Transport] = set()

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        for sock in self._listeners:
            self._servers.append(await loop.create_server(lambda: _Inbound(self), sock=sock))

    def connect(self, inbound: _Inbound) -> None:
        task = asyncio.ensure_future(self._connect(inbound))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _connect(self, inbound: _Inbound) -> None:
        loop = asyncio.get_running_loop()
        try:
            _, outbound = await loop.create_connection(lambda: _Side(self), *self._target)
        except OSError:
            if inbound.transport is not None:
                inbound.transport.abort()
            return
        outbound.pair(inbound)
        inbound.pair(outbound)

    async def close(self) -> None:
        """Closes the listeners and cuts every connection still open, both ways."""
        for server in self._servers:
            server.close()
        for task in list(self._tasks):
            task.cancel()
        for transport in list(self.transports):
            transport.abort()
        for server in self._servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()
        for sock in self._listeners:
            sock.close()
