"""How much memory (data: heap and private mappings) each server of a service of the built-in kind
(an `app/` package) may hold: 1 GiB, or $RESTBENCH_SERVER_MEMORY_MB for one that needs more (it
loads a model at import, say). It bounds what a test can make a server hold: a body of gigabytes
made a server hold twice its size, and two such tests at once could take a machine's memory.
Past it, a server's allocations fail (the request gets an error or a closed connection) and it
goes on serving; a built-in service's server holds ~70 MiB. Read by the harness, which refuses a
bad value before anything starts, and passed on to the service launcher, which sets it on each
server it forks."""

from __future__ import annotations

import os

from restbench.errors import RestbenchError

VARIABLE = "RESTBENCH_SERVER_MEMORY_MB"
DEFAULT_MB = 1024


def server_memory_mb() -> int:
    raw = os.environ.get(VARIABLE, "").strip()
    if not raw:
        return DEFAULT_MB
    if not raw.isdigit() or int(raw) < 1:
        raise RestbenchError(f"{VARIABLE}={raw}: not a whole number of MiB above 0")
    return int(raw)


def passed_on() -> dict[str, str]:
    """The setting, for the launcher, which starts with a clean environment."""
    return {VARIABLE: str(server_memory_mb())} if os.environ.get(VARIABLE, "").strip() else {}


def over_the_limit(held_mib: int, limit_mib: int) -> str:
    """The start error of a server that holds more than the limit before it serves."""
    return (f"the app holds {held_mib} MiB of memory once imported, over the {limit_mib} MiB a "
            f"server may hold ({VARIABLE} raises it)")


def out_of_memory(limit_mib: int) -> str:
    """What a start error that is a MemoryError adds."""
    return f"a server may hold {limit_mib} MiB of memory; {VARIABLE} raises it"
