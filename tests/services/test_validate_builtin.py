"""`restbench validate` on the built-in services, against real servers over real HTTP."""

from __future__ import annotations

import re

import pytest

from restbench.benchmark import builtin_service_names
from tests.cli_helpers import restbench


@pytest.mark.slow
def test_validate_of_every_builtin_service_is_sound() -> None:
    """`restbench validate` as the README gives it: every built-in service, one command."""
    result = restbench("validate", timeout=1200)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    verdicts = dict(re.findall(r"^(\w+): \d+ requirements?, .*?: (all sound|.*?) \(",
                               result.stdout, re.MULTILINE))
    assert verdicts == {service: "all sound" for service in builtin_service_names()}, \
        result.stdout[-3000:]


def test_todo_meets_the_benchmark_size() -> None:
    result = restbench("list")
    assert result.returncode == 0, result.stderr
    (line,) = [row for row in result.stdout.splitlines() if "│ todo " in row]
    cells = [cell.strip() for cell in line.split("│") if cell.strip()]
    requirements, mutants = int(cells[2]), int(cells[3])
    assert requirements >= 16 and mutants >= 28 and mutants >= requirements
