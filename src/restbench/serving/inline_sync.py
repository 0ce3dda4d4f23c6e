"""Sync endpoints and dependencies run on the server's event loop thread, not in a thread pool.

FastAPI runs every `def` endpoint and every `def` dependency (and each half of a `def` dependency
that yields) through `anyio.to_thread.run_sync`: a hand-off to a pool thread and back, with the
GIL changing hands both ways. A request of the built-in services makes two to five such
hand-offs; measured on a 2-core machine they cost ~0.35 ms of the server's CPU per request (25%
of a simple one) and more in latency, as the woken thread waits for the GIL.

Run inline, a function gets what the pool gave it: a copy of the caller's context variables,
and its exceptions and return value. What changes is only that a service server answers one
request at a time, in arrival order: concurrent requests from one test are serialized (one of
the interleavings the pool allows, and the one a single-worker deployment sees). Installed once
in the launcher, before any server is forked.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def run_inline(func: Callable[..., T], *args: Any, abandon_on_cancel: bool = False,
                     cancellable: bool | None = None, limiter: Any = None) -> T:
    """`anyio.to_thread.run_sync`'s signature, run in the calling thread."""
    return contextvars.copy_context().run(func, *args)


def install() -> None:
    import anyio.to_thread

    anyio.to_thread.run_sync = run_inline  # type: ignore[assignment]
