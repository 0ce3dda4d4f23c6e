"""A new server's first test runs without a reset (the service contract: `create_app` leaves the
seed state). `restbench validate` points at a service that breaks that (a hint on the failing
golden test), instead of leaving its golden tests to look wrong."""

from __future__ import annotations

import asyncio
from pathlib import Path

from restbench.benchmark import load_service
from restbench.engine.validate import validate_service

SEEDED = '    app = FastAPI(title="Mini counter")\n    app.state.counters = {"a": 1}\n'


def test_validate_hints_at_a_create_app_that_leaves_another_state_than_reset(
        mini_service: Path) -> None:
    main = mini_service / "app" / "main.py"
    assert SEEDED in main.read_text()
    main.write_text(main.read_text().replace(SEEDED, SEEDED.replace('{"a": 1}', "{}")))

    report = asyncio.run(validate_service(load_service(mini_service), workers=1))

    diagnosed = [p for p in report.problems if "run again after a reset it passed" in p]
    assert diagnosed, report.problems
    assert all(p.startswith("MINI-0") and "golden test does not pass on the original" in p
               and "mini's create_app does not leave the seed state that reset gives" in p
               for p in diagnosed)
    # On the unchanged service nothing is diagnosed: every golden test passes on the original.
    main.write_text(main.read_text().replace(SEEDED.replace('{"a": 1}', "{}"), SEEDED))
    assert asyncio.run(validate_service(load_service(mini_service), workers=1)).ok
