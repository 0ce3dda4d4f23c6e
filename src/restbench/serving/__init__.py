"""Running service implementations: a pre-warmed launcher, hidden control routes, a pool."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from restbench.serving.pool import RunningServer, ServerPool

__all__ = ["RunningServer", "ServerPool"]


def __getattr__(name: str) -> Any:
    """The pool, imported on first use: the launcher (`python -m restbench.serving.launcher`)
    runs this package's __init__ too, and without the pool it leaves out the harness's side (the
    benchmark loader, the executor, httpx, rich, YAML): ~230 modules and ~12 MB that every
    server's fork would copy the page tables of and its exit unmap."""
    if name in __all__:
        from restbench.serving import pool

        return getattr(pool, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
