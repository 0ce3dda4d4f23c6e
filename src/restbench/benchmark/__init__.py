"""Benchmark data: services, requirements, mutants and golden tests."""

from typing import TYPE_CHECKING

from restbench.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from restbench.benchmark.loader import (
        builtin_service_names,
        load_service,
        recorded_name,
        resolve_services,
    )
    from restbench.benchmark.models import (
        BenignVariant,
        Edit,
        Mutant,
        Requirement,
        Service,
        ServiceData,
    )
    from restbench.benchmark.variant import Variant

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "loader": ("builtin_service_names", "load_service", "recorded_name", "resolve_services"),
    "models": ("BenignVariant", "Edit", "Mutant", "Requirement", "Service", "ServiceData"),
    "variant": ("Variant",),
})
