"""A package's public names, imported on first use (PEP 562), so that importing one light
submodule (the CLI's events, a variant) does not import the whole package: `restbench --help`
and a usage error need none of the harness."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, modules: dict[str, tuple[str, ...]]
                 ) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """`modules`: submodule -> the names the package takes from it. Returns the package's
    `__all__`, its module-level `__getattr__`, and its `__dir__` (which lists the names not
    loaded yet too, for completion in an interactive session)."""
    where = {name: module for module, names in modules.items() for name in names}
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value  # found directly from now on
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(where))

    return sorted(where), __getattr__, __dir__
