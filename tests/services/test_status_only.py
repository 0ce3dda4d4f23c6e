"""The benchmark data of every built-in service: a test that checks nothing but status codes
must score below the golden test on every requirement, so each requirement needs a mutant whose
status codes are all right (it breaks a value, a message or stored state)."""

import asyncio

import pytest

from restbench.benchmark.loader import builtin_services_root, load_service
from restbench.engine.validate import validate_service
from restbench.execution import Outcome
from tests.services.status_only import status_only_copy, status_only_twin


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


@pytest.mark.slow
@pytest.mark.parametrize("service", ["todo", "conduit", "fullstack", "ledger"])
def test_status_only_tests_leave_a_survivor_on_every_requirement(service, tmp_path):
    twin = status_only_copy(builtin_services_root() / service, tmp_path / service)
    report = asyncio.run(validate_service(load_service(twin)))
    assert not report.service_problems, report.service_problems
    assert all(check.golden is Outcome.PASS for check in report.checks)
    all_killed = [check.requirement for check in report.checks
                  if set(check.killed) == set(check.mutants)]
    assert all_killed == [], f"a status-only test kills every mutant of {all_killed}"
