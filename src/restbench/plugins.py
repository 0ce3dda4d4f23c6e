"""Finding plugins (generators, agents): an entry-point name in a group, or `module:attribute`."""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from restbench.errors import RestbenchError


def available_plugins(group: str) -> dict[str, str]:
    """Entry-point name -> 'module:attribute' for every installed plugin of `group`."""
    return {ep.name: ep.value for ep in entry_points(group=group)}


def resolve_plugin(name: str, group: str, kind: str,
                   error: type[RestbenchError] = RestbenchError) -> Any:
    """The object `name` points to; a problem raises `error` naming the `kind` ('generator')."""
    found = {ep.name: ep for ep in entry_points(group=group)}
    if name in found:
        try:
            return found[name].load()
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - a broken plugin is the user's
            raise error(f"{kind} '{name}': entry point {found[name].value} failed "
                        f"to load: {exc}") from None
    if ":" not in name:
        known = ", ".join(sorted(found)) or "none"
        raise error(f"unknown {kind} '{name}' (installed: {known}; or give module:attribute)")
    module_name, _, attribute = name.partition(":")
    try:
        module = _import_here_too(module_name)
    except ImportError as exc:
        raise error(f"{kind} '{name}': cannot import {module_name}: {exc}") from None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the module's own code failed
        raise error(f"{kind} '{name}': importing {module_name} failed: "
                    f"{type(exc).__name__}: {exc}") from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise error(f"{kind} '{name}': {module_name} has no attribute {attribute}") from None


def _import_here_too(module_name: str) -> Any:
    """Imports `module_name`, also from the current folder when nothing installed has it (as
    `python -m` would). The folder goes last on `sys.path`, so it shadows no installed module."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        here = os.getcwd()
        if exc.name != module_name.partition(".")[0] or here in sys.path:
            raise
        sys.path.append(here)
        return importlib.import_module(module_name)


def source_fingerprint(plugin: object) -> str:
    """A digest of the source file that defines `plugin`'s class, for a generator or agent
    outside restbench: what it made before its code was edited is not reused. "" for
    restbench's own (their code changes only with restbench, and the results they made keep
    their keys), and where the source file cannot be read."""
    module = sys.modules.get(type(plugin).__module__)
    path = getattr(module, "__file__", None)
    if module is None or path is None or module.__name__.partition(".")[0] == "restbench":
        return ""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    except OSError:
        return ""
