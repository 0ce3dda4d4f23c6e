"""Environments for the processes that run services and untrusted tests: no secrets pass."""

from __future__ import annotations

import os

# Only what a Python interpreter needs to start and find its packages. API keys, tokens,
# proxies and everything else in the harness's environment stay behind.
PASSED_THROUGH = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH", "VIRTUAL_ENV",
                  "SYSTEMROOT")


def clean_environment(**extra: str) -> dict[str, str]:
    env = {key: os.environ[key] for key in PASSED_THROUGH if key in os.environ}
    env.setdefault("LANG", "C.UTF-8")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env.update(extra)
    return env
