"""Benchmark data: services, requirements, mutants and golden tests."""

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
    Variant,
)

__all__ = [
    "BenignVariant",
    "Edit",
    "Mutant",
    "Requirement",
    "Service",
    "ServiceData",
    "Variant",
    "builtin_service_names",
    "load_service",
    "recorded_name",
    "resolve_services",
]
