"""Several services validated on one backend (one launcher, one set of test workers, as
`restbench validate -s A -s B` does) give each the outcomes it gets on a backend of its own."""

from __future__ import annotations

import asyncio
from pathlib import Path

from restbench.benchmark import resolve_services
from restbench.engine.validate import open_validation_backend, validate_service

FIXTURES = Path(__file__).parents[1] / "fixtures"


def test_services_on_one_backend_get_the_outcomes_of_their_own() -> None:
    services = resolve_services([str(FIXTURES / "mini"), str(FIXTURES / "layered")])

    async def scenario() -> tuple[list[dict[tuple[str, str], str]], list[dict[tuple[str, str],
                                                                               str]]]:
        async with open_validation_backend(workers=2) as backend:
            shared = [(await validate_service(service, backend=backend)).outcomes
                      for service in services]
        alone = [(await validate_service(service, workers=2)).outcomes for service in services]
        return shared, alone

    shared, alone = asyncio.run(scenario())
    # Both services have an implementation called `original`: had a lane served one's jobs
    # with the other's server, golden tests would have failed there.
    assert shared == alone
    assert all(outcome == "pass" for outcome in [shared[0][("MINI-01", "original")],
                                                 shared[1][("LAYER-01", "original")]])
