"""Executions spread over a Ray cluster (the optional `ray` extra).

Importing this package does not import Ray; `open_ray_backend` does, and says what to install
when Ray is missing. Each node runs a `NodeRunner` actor (node.py) with its own servers and
sandboxed executor; the driver (backend.py) hands out work and keeps the one result store.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence

from restbench.benchmark import Service
from restbench.engine.backend import ExecutionBackend
from restbench.engine.events import EventHandler
from restbench.errors import RestbenchError
from restbench.serving.databases import DatabaseChoice

INSTALL_HINT = "pip install 'restbench[ray]'"


class RayUnavailable(RestbenchError):
    """--ray was asked for, but Ray is not installed."""


def require_ray() -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        raise RayUnavailable(f"--ray needs Ray, which is not installed: {INSTALL_HINT}") from None


@contextlib.asynccontextmanager
async def open_ray_backend(address: str, *, database: DatabaseChoice | str,
                           workers: int | None, timeout_s: float, sandbox: bool, trusted_only: bool,
                           on_event: EventHandler, mark_reach: bool = False,
                           services: Sequence[Service] = ()) -> AsyncIterator[ExecutionBackend]:
    """A `RayBackend` connected to the cluster at `address` (`auto`: the local one), with a
    node runner started on every node that offers CPUs, its launcher importing the first of
    `services` ahead of the first job; closed (actors gone) on exit."""
    require_ray()
    from restbench.cluster.backend import RayBackend

    backend = RayBackend(address, database=database, workers=workers, timeout_s=timeout_s,
                         sandbox=sandbox, trusted_only=trusted_only, on_event=on_event,
                         mark_reach=mark_reach, services=services)
    await backend.start()
    try:
        yield backend
    finally:
        await backend.close()
