"""Finding generators: the `restbench.generators` entry-point group, or `module:attribute`."""

from __future__ import annotations

import inspect
from typing import Any

from restbench.errors import GeneratorError
from restbench.generators.base import Generator, GeneratorSpec
from restbench.plugins import available_plugins, resolve_plugin

GROUP = "restbench.generators"


def available_generators() -> dict[str, str]:
    """Entry-point name -> 'module:attribute' for every installed generator."""
    return available_plugins(GROUP)


def _resolve(name: str) -> Any:
    return resolve_plugin(name, GROUP, "generator", GeneratorError)


def load_generator(spec: GeneratorSpec) -> Generator:
    """Builds the generator named by `spec` and checks that it fits the interface."""
    target = _resolve(spec.name)
    if inspect.isclass(target) or (callable(target) and not hasattr(target, "generate")):
        try:
            generator = target(**spec.args)
        except TypeError as exc:
            raise GeneratorError(f"generator '{spec.name}': bad arguments "
                                 f"{spec.args or '{}'}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - e.g. a value its constructor cannot parse
            raise GeneratorError(f"generator '{spec.name}' with arguments {spec.args or '{}'} "
                                 f"failed to start: {type(exc).__name__}: {exc}") from None
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
