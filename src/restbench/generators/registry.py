"""Finding generators: the `restbench.generators` entry-point group, or `module:attribute`."""

from __future__ import annotations

import importlib
import inspect
from importlib.metadata import entry_points
from typing import Any

from restbench.errors import GeneratorError
from restbench.generators.base import Generator, GeneratorSpec

GROUP = "restbench.generators"


def available_generators() -> dict[str, str]:
    """Entry-point name -> 'module:attribute' for every installed generator."""
    return {ep.name: ep.value for ep in entry_points(group=GROUP)}


def _resolve(name: str) -> Any:
    found = {ep.name: ep for ep in entry_points(group=GROUP)}
    if name in found:
        try:
            return found[name].load()
        except Exception as exc:  # noqa: BLE001 - a broken plugin is the user's to fix
            raise GeneratorError(f"generator '{name}': entry point {found[name].value} failed "
                                 f"to load: {exc}") from None
    if ":" not in name:
        known = ", ".join(sorted(found)) or "none"
        raise GeneratorError(f"unknown generator '{name}' (installed: {known}; "
                             "or give module:attribute)")
    module_name, _, attribute = name.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise GeneratorError(f"generator '{name}': cannot import {module_name}: {exc}") from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise GeneratorError(f"generator '{name}': {module_name} has no "
                             f"attribute {attribute}") from None


def load_generator(spec: GeneratorSpec) -> Generator:
    """Builds the generator named by `spec` and checks that it fits the interface."""
    target = _resolve(spec.name)
    if inspect.isclass(target) or (callable(target) and not hasattr(target, "generate")):
        try:
            generator = target(**spec.args)
        except TypeError as exc:
            raise GeneratorError(f"generator '{spec.name}': bad arguments "
                                 f"{spec.args or '{}'}: {exc}") from None
    else:
        if spec.args:
            raise GeneratorError(f"generator '{spec.name}' is an object and takes no arguments")
        generator = target
    problems = [f"no '{attr}' attribute" for attr in ("name", "refines")
                if not hasattr(generator, attr)]
    if not callable(getattr(generator, "generate", None)):
        problems.append("no generate(task) method")
    if problems:
        raise GeneratorError(f"generator '{spec.name}' does not fit the interface: "
                             + ", ".join(problems))
    return generator  # type: ignore[no-any-return]
