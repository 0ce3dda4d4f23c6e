"""Mutant kinds, vague basis and no_semantic_reason: checked on load, counted by `restbench list`."""

from __future__ import annotations

from pathlib import Path

import pytest

from restbench.benchmark import builtin_service_names, resolve_services
from restbench.benchmark.models import MutantKind
from tests.benchmark.test_bad_input import edit, one_line_error
from tests.cli_helpers import restbench


def test_a_bad_kind_names_file_mutant_and_value(mini_service: Path) -> None:
    edit(mini_service, "        kind: status\n", "        kind: typo\n")
    message = one_line_error(restbench("validate", "-s", mini_service))
    assert str(mini_service / "requirements.yaml") in message
    assert "mutant MINI-01-M1" in message
    assert "'typo'" in message and "semantic" in message


@pytest.mark.parametrize("field", ["kind: semantic", "vague_basis: true"])
def test_kind_and_vague_basis_are_required(mini_service: Path, field: str) -> None:
    text = (mini_service / "requirements.yaml").read_text()
    start = text.index("      - id: MINI-02-M1\n")
    line = text.index(f"        {field}\n", start)
    (mini_service / "requirements.yaml").write_text(
        text[:line] + text[line + len(f"        {field}\n"):])
    message = one_line_error(restbench("run", "-s", mini_service))
    assert "mutant MINI-02-M1" in message
    assert f"missing field '{field.split(':')[0]}'" in message


def test_a_requirement_without_semantic_mutant_needs_a_reason(mini_service: Path) -> None:
    edit(mini_service, "    no_semantic_reason: a test fixture kept to one status-only mutant\n", "")
    message = one_line_error(restbench("validate", "-s", mini_service))
    assert "requirement MINI-01" in message and "no_semantic_reason" in message


def test_a_reason_beside_a_semantic_mutant_is_an_error(mini_service: Path) -> None:
    edit(mini_service, "    golden: golden/test_MINI-02.py\n",
         "    golden: golden/test_MINI-02.py\n    no_semantic_reason: none needed\n")
    message = one_line_error(restbench("validate", "-s", mini_service))
    assert "requirement MINI-02" in message and "must be left out" in message


def test_list_shows_the_counts_per_kind() -> None:
    result = restbench("list")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    (header,) = [row for row in lines if "┃ service" in row]
    names = [cell.strip() for cell in header.split("┃") if cell.strip()]
    assert names[4:10] == [*(k.value for k in MutantKind), "vague basis"]
    for service in resolve_services(builtin_service_names()):
        (line,) = [row for row in lines if f"│ {service.name} " in row]
        cells = [cell.strip() for cell in line.split("│") if cell.strip()]
        mutants = service.mutants()
        assert int(cells[3]) == len(mutants)
        for position, kind in enumerate(MutantKind, start=4):
            assert int(cells[position]) == sum(m.kind is kind for m in mutants)
        assert sum(int(cells[p]) for p in range(4, 9)) == len(mutants)
        assert int(cells[9]) == sum(m.vague_basis for m in mutants)


def test_every_builtin_requirement_has_a_semantic_mutant_or_says_why() -> None:
    for service in resolve_services(builtin_service_names()):
        for requirement in service.requirements:
            assert requirement.has_semantic_mutant() or requirement.no_semantic_reason, \
                requirement.id
