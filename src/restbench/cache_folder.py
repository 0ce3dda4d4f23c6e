"""The folder where restbench keeps what it builds once and reuses from run to run (the trees of
services in other languages, the assertion-rewritten code of test files):
$RESTBENCH_CACHE_DIR, else ~/.cache/restbench. Everything in it can be deleted at any time."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "RESTBENCH_CACHE_DIR"


def cache_root() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "restbench"
