"""Running service implementations: a pre-warmed launcher, hidden control routes, a pool."""

from restbench.serving.pool import RunningServer, ServerPool

__all__ = ["RunningServer", "ServerPool"]
