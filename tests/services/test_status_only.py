"""The benchmark data of every built-in service: a test that checks nothing but status codes
must score below the golden test on every requirement, so each requirement needs a mutant whose
status codes are all right (it breaks a value, a message or stored state)."""

import asyncio
from pathlib import Path

import pytest

from restbench.benchmark.loader import builtin_services_root, load_service
from restbench.execution import Outcome
from tests.services.status_only import status_only_copy, status_only_twin, survivors

# MINI-01's only mutant changes a status code; this one, after it, keeps them
MESSAGE_MUTANT = """      - id: MINI-01-M2
        kind: message
        vague_basis: false
        description: Unknown counters are reported with another message
        file: app/main.py
        find: 'detail="Counter not found"'
        replace: 'detail="No such counter"'
"""


def test_twin_keeps_only_status_checks():
    golden = (
        "def check(r):\n"
        "    assert r.content == b''\n"
        "def test_x(r):\n"
        "    assert r.status_code == 200, 'first'\n"
        "    assert r.json() == []\n"
        "    assert r.status_code == 401 and r.json()['detail'] == 'Failed'\n"
        "    assert (r.status_code, r.json()) == (400, {'detail': 'x'})\n"
        "    check(r)\n"
    )
    assert status_only_twin(golden) == (
        "def check(r):\n"
        "    pass\n\n"
        "def test_x(r):\n"
        "    assert r.status_code == 200\n"
        "    pass\n"
        "    assert r.status_code == 401\n"
        "    assert r.status_code == 400\n"
        "    check(r)"
    )


def test_survivors_are_looked_for_until_found(mini_service: Path, tmp_path: Path) -> None:
    """MINI-02's status-only test survives its first semantic mutant; MINI-01's kills its only
    mutant, and with a second one added after it, survives that."""
    twin = load_service(status_only_copy(mini_service, tmp_path / "twin"))
    originals, found = asyncio.run(survivors(twin))
    assert {label: result.outcome for label, result in originals.items()} == \
        {"MINI-01": Outcome.PASS, "MINI-02": Outcome.PASS}
    assert found == {"MINI-02": "MINI-02-M1"}

    requirements = mini_service / "requirements.yaml"
    text = requirements.read_text()
    anchor = "  - id: MINI-02\n"
    requirements.write_text(text.replace(anchor, MESSAGE_MUTANT + anchor))
    twin = load_service(status_only_copy(mini_service, tmp_path / "twin-2"))
    assert asyncio.run(survivors(twin))[1] == {"MINI-01": "MINI-01-M2", "MINI-02": "MINI-02-M1"}


@pytest.mark.slow
@pytest.mark.parametrize("service", ["todo", "conduit", "fullstack", "ledger"])
def test_status_only_tests_leave_a_survivor_on_every_requirement(service, tmp_path):
    """Only what it takes to find a survivor runs (`survivors`); `restbench validate` of the
    built-in services (test_validate_builtin.py) runs every golden test on every mutant."""
    twin = load_service(status_only_copy(builtin_services_root() / service, tmp_path / service))
    originals, found = asyncio.run(survivors(twin))
    not_passing = {label: f"{result.outcome.value}: {result.reason}"
                   for label, result in originals.items() if result.outcome is not Outcome.PASS}
    assert not_passing == {}
    all_killed = [r.id for r in twin.requirements if r.id not in found]
    assert all_killed == [], f"a status-only test kills every mutant of {all_killed}"
