"""How long a service of the built-in kind (an `app/` package) may take to import, warm up and
start: 30 s, or $RESTBENCH_START_TIMEOUT_S for one that needs longer (it loads a model at import,
say). Read by the harness, which refuses a bad value before anything starts, and passed on to
the service launcher, which applies it."""

from __future__ import annotations

import math
import os

from restbench.errors import RestbenchError

VARIABLE = "RESTBENCH_START_TIMEOUT_S"
DEFAULT_S = 30.0


def start_timeout_s() -> float:
    raw = os.environ.get(VARIABLE, "").strip()
    if not raw:
        return DEFAULT_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise RestbenchError(f"{VARIABLE}={raw}: not a number of seconds above 0")
    return value


def passed_on() -> dict[str, str]:
    """The setting, for the launcher, which starts with a clean environment."""
    return {VARIABLE: str(start_timeout_s())} if os.environ.get(VARIABLE, "").strip() else {}
