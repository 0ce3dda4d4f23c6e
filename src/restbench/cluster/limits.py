"""The model endpoints' concurrency limits, held once for the whole cluster.

Nothing here imports Ray: the driver wraps `EndpointLimits` with `ray.remote` (one actor per run)
and each node's model calls take their slot from it through `ClusterSlots`. A slot's holder names
its node, so that the slots of a node that dies are given back (`release_node`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from restbench.llm.config import ModelConfig


class SlotsUnavailable(Exception):
    """A call could not take its endpoint slot: the limits actor is gone (it is restarted) or
    the run gave this node up. Not the generation's fault: it is made again, on another node."""


class EndpointLimits:
    """An async Ray actor: at most `limit` slots of an endpoint are held at once."""

    def __init__(self) -> None:
        self._held: dict[str, list[str]] = {}
        self._changed: dict[str, asyncio.Condition] = {}
        self._lost_nodes: set[str] = set()
        self.most_held: dict[str, int] = {}  # for tests and logs

    def _condition(self, endpoint: str) -> asyncio.Condition:
        return self._changed.setdefault(endpoint, asyncio.Condition())

    async def acquire(self, endpoint: str, limit: int, holder: str) -> bool:
        """Waits for a free slot; False (and nothing held) when the holder's node is lost."""
        held = self._held.setdefault(endpoint, [])
        async with self._condition(endpoint):
            await self._condition(endpoint).wait_for(
                lambda: len(held) < max(1, limit) or _node(holder) in self._lost_nodes)
            if _node(holder) in self._lost_nodes:
                return False
            held.append(holder)
            self.most_held[endpoint] = max(self.most_held.get(endpoint, 0), len(held))
            return True

    async def release(self, endpoint: str, holder: str) -> None:
        async with self._condition(endpoint):
            held = self._held.get(endpoint, [])
            if holder in held:
                held.remove(holder)
            self._condition(endpoint).notify_all()

    async def release_node(self, node: str) -> int:
        """Gives back every slot held by `node`'s calls, and refuses it any more."""
        self._lost_nodes.add(node)
        freed = 0
        for endpoint, held in self._held.items():
            async with self._condition(endpoint):
                mine = [h for h in held if _node(h) == node]
                for holder in mine:
                    held.remove(holder)
                freed += len(mine)
                self._condition(endpoint).notify_all()
        return freed

    def peak(self) -> dict[str, int]:
        return dict(self.most_held)


def _node(holder: str) -> str:
    return holder.partition("/")[0]


class ClusterSlots:
    """A node's model calls, each holding a slot of the cluster-wide `EndpointLimits` actor
    while it is sent (give it to `restbench.llm.client.share_endpoint_slots`)."""

    def __init__(self, limits: Any, node: str) -> None:
        self._limits = limits  # the EndpointLimits actor's handle
        self._node = node
        self._numbers = itertools.count()

    def __call__(self, config: ModelConfig) -> AbstractAsyncContextManager[None]:
        return self._slot(config.base_url, config.max_concurrency)

    @asynccontextmanager
    async def _slot(self, endpoint: str, limit: int) -> AsyncIterator[None]:
        holder = f"{self._node}/{next(self._numbers)}"
        try:
            granted = await self._limits.acquire.remote(endpoint, limit, holder)
        except Exception as exc:  # noqa: BLE001 - Ray raises several kinds
            raise SlotsUnavailable(f"the endpoint limits are unreachable: {exc}") from None
        if not granted:
            raise SlotsUnavailable("this node was given up by the run")
        try:
            yield
        finally:
            with contextlib.suppress(Exception):  # a restarted actor no longer holds it anyway
                await self._limits.release.remote(endpoint, holder)
