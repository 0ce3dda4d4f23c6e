"""Validating a service in-process and seeing how many servers it started; running chosen
golden tests on chosen implementations."""

from __future__ import annotations

import asyncio

from restbench.benchmark.models import Service
from restbench.engine.backend import ExecutionBackend
from restbench.engine.jobs import Job
from restbench.engine.validate import ValidationReport, open_validation_backend, validate_service
from restbench.execution import ExecutionResult
from restbench.mutation import implementations_of


def validate_counting_starts(service: Service) -> tuple[ValidationReport, int]:
    """`validate_service` with one lane; its report and how many servers it started."""
    async def validate() -> tuple[ValidationReport, int]:
        async with open_validation_backend(workers=1, services=[service]) as backend:
            report = await validate_service(service, backend=backend)
            return report, backend.starts  # type: ignore[attr-defined]

    return asyncio.run(validate())


async def run_golden_tests(backend: ExecutionBackend, service: Service,
                           pairs: list[tuple[str, str]]) -> dict[tuple[str, str], ExecutionResult]:
    """Each (requirement, implementation) pair's golden test on that implementation, by pair;
    every implementation must start."""
    implementations = implementations_of(service)
    results: dict[tuple[str, str], ExecutionResult] = {}

    def done(job: Job, result: ExecutionResult) -> None:
        results[(job.label, job.implementation.id)] = result

    jobs = [Job(service.golden_code(service.requirement(requirement)),
                implementations[implementation], requirement)
            for requirement, implementation in pairs]
    failures = await backend.execute(jobs, done)
    assert not failures, failures
    return results
