"""The harness's packet channel: a receive cancelled once its socket is readable ends quietly."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any

from restbench.execution import channel


def test_a_receive_cancelled_as_its_socket_turns_readable_logs_nothing() -> None:
    """Ctrl-C cancels a task waiting in `receive` in the same loop iteration that finds its
    socket readable: the reader's callback then runs after the cancellation. It once set the
    result of the cancelled future, and asyncio printed an InvalidStateError traceback under
    the harness's one-line 'interrupted' message."""
    errors: list[dict[str, Any]] = []

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _, context: errors.append(context))
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.setblocking(False)
        with ours, theirs:
            task = asyncio.ensure_future(channel.receive(ours))
            await asyncio.sleep(0)  # the task waits for the socket
            theirs.send(b"{}")
            # Queued before the next poll, which queues the reader's callback after it.
            loop.call_soon(task.cancel)
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await asyncio.sleep(0)
        assert task.cancelled()

    asyncio.run(scenario())
    assert errors == []


def test_a_message_and_its_descriptors_arrive() -> None:
    async def scenario() -> tuple[dict[str, Any], list[int]]:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.setblocking(False)
        with ours, theirs:
            reading = asyncio.ensure_future(channel.receive(ours))
            await asyncio.sleep(0)
            channel.send(theirs, {"hello": 1}, [theirs.fileno()])
            return await reading

    message, fds = asyncio.run(scenario())
    channel.close_all(fds)
    assert message == {"hello": 1} and len(fds) == 1
