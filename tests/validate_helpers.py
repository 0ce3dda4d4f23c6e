"""Validating a service in-process and seeing how many servers it started."""

from __future__ import annotations

import asyncio

from restbench.benchmark.models import Service
from restbench.engine.validate import ValidationReport, open_validation_backend, validate_service


def validate_counting_starts(service: Service) -> tuple[ValidationReport, int]:
    """`validate_service` with one lane; its report and how many servers it started."""
    async def validate() -> tuple[ValidationReport, int]:
        async with open_validation_backend(workers=1, services=[service]) as backend:
            report = await validate_service(service, backend=backend)
            return report, backend.starts  # type: ignore[attr-defined]

    return asyncio.run(validate())
