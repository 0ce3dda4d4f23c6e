"""The limits on each server of a service of the built-in kind (an `app/` package), which a
service that needs more sets in restbench's environment:

- its start (import, warm-up, `create_app`, startup): 30 s, or $RESTBENCH_START_TIMEOUT_S (it
  loads a model at import, say);
- its memory (data: heap and private mappings, as RLIMIT_DATA counts them, what it inherits
  from the launcher's import of the app included): 1 GiB, or $RESTBENCH_SERVER_MEMORY_MB. It
  bounds what a test can make a server hold: a body of gigabytes made a server hold twice its
  size, and two such tests at once could take a machine's memory. Past it, a server's
  allocations fail (the request gets an error or a closed connection) and it goes on serving; a
  built-in service's server holds ~70 MiB.

Read by the harness, which refuses a bad value before anything starts, and passed on to the
service launcher, which applies them (and by a Ray run's driver to its nodes)."""

from __future__ import annotations

import math
import os

from restbench.errors import RestbenchError

START_VARIABLE = "RESTBENCH_START_TIMEOUT_S"
DEFAULT_START_S = 30.0
MAX_START_S = 86_400.0  # a day; 1e12 s overflowed the launcher's timers
MEMORY_VARIABLE = "RESTBENCH_SERVER_MEMORY_MB"
DEFAULT_MEMORY_MB = 1024
MAX_MEMORY_MB = 1024**2  # 1 TiB: no limit in practice (past 2**43 MiB no rlimit can hold it)


def start_timeout_s() -> float:
    raw = _setting(START_VARIABLE)
    if not raw:
        return DEFAULT_START_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= MAX_START_S):
        raise RestbenchError(f"{START_VARIABLE}={raw}: not a number of seconds above 0 and at "
                             f"most {MAX_START_S:g} (a day)")
    return value


def server_memory_mb() -> int:
    raw = _setting(MEMORY_VARIABLE)
    if not raw:
        return DEFAULT_MEMORY_MB
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_MEMORY_MB:
        raise RestbenchError(f"{MEMORY_VARIABLE}={raw}: not a whole number of MiB from 1 to "
                             f"{MAX_MEMORY_MB}")
    return int(raw)


def passed_on() -> dict[str, str]:
    """The settings made, checked, for the launcher (which starts with a clean environment)."""
    settings = {START_VARIABLE: str(start_timeout_s()), MEMORY_VARIABLE: str(server_memory_mb())}
    return {name: value for name, value in settings.items() if _setting(name)}


def over_the_memory_limit(held_mib: int, limit_mib: int) -> str:
    """The start error of a server that holds more than the limit before it serves."""
    return (f"the app holds {held_mib} MiB of memory once imported, over the {limit_mib} MiB a "
            f"server may hold ({MEMORY_VARIABLE} raises it)")


def out_of_memory(limit_mib: int) -> str:
    """What a start error that is a MemoryError adds."""
    return f"a server may hold {limit_mib} MiB of memory; {MEMORY_VARIABLE} raises it"


def _setting(variable: str) -> str:
    return os.environ.get(variable, "").strip()
