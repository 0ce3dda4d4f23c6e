"""Generators turn a requirement into a pytest file: the interface, the registry, built-ins."""

from restbench.generators.base import (
    Cost,
    GeneratedTest,
    GenerationFailure,
    GenerationTask,
    Generator,
    GeneratorSpec,
    LiveService,
)
from restbench.generators.registry import available_generators, load_generator

__all__ = [
    "Cost",
    "GeneratedTest",
    "GenerationFailure",
    "GenerationTask",
    "Generator",
    "GeneratorSpec",
    "LiveService",
    "available_generators",
    "load_generator",
]
