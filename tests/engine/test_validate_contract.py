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

    diagnosed = [p for p in report.problems
                 if "on a new server it passed after a reset and failed without one" in p]
    assert diagnosed, report.problems
    assert all(p.startswith("MINI-0") and "golden test does not pass on the original" in p
               and "mini's create_app does not leave the seed state that reset gives" in p
               for p in diagnosed)
    # On the unchanged service nothing is diagnosed: every golden test passes on the original.
    main.write_text(main.read_text().replace(SEEDED.replace('{"a": 1}', "{}"), SEEDED))
    assert asyncio.run(validate_service(load_service(mini_service), workers=1)).ok


def test_validate_hints_at_a_reset_that_does_not_undo_what_tests_did(mini_service: Path) -> None:
    """Before: the golden tests after the first on each server just failed, with no hint (and
    with --repeat, differently each time, as if flaky)."""
    main = mini_service / "app" / "main.py"
    text = main.read_text()
    assert 'app.state.counters = {"a": 1}\n' in text.split("def reset")[1]
    main.write_text(text.split("def reset")[0] + "def reset(app: FastAPI) -> None:\n    pass\n")
    # MINI-01's test, which runs first on the original's server, now leaves counter a at 2
    golden = mini_service / "golden" / "test_MINI-01.py"
    golden.write_text(golden.read_text() + "    requests.post(f\"{BASE_URL}/counters/a/increment\","
                      " timeout=10)\n")

    report = asyncio.run(validate_service(load_service(mini_service), workers=1))

    diagnosed = [p for p in report.problems if "alone on a new server it passed" in p]
    assert diagnosed, report.problems
    assert diagnosed[0].startswith("MINI-02: golden test does not pass on the original")
    assert all("the tests run before it on the same server left state that mini's reset does "
               "not undo" in p for p in diagnosed)
