"""`restbench validate` on implementations that do not start: each problem where it belongs,
once, and no requirement called sound that was not checked."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from rich.console import Console

from restbench.benchmark import load_service
from restbench.engine.validate import ValidationReport, validate_service
from restbench.reports import validation_table


def _validate(service: Path) -> ValidationReport:
    return asyncio.run(validate_service(load_service(service), workers=1))


def render(report: ValidationReport) -> str:
    console = Console(width=300, record=True, file=io.StringIO())
    console.print(validation_table(report))
    return console.export_text()


def test_a_mutant_that_does_not_start_is_its_requirements_problem(mini_service: Path) -> None:
    requirements = mini_service / "requirements.yaml"
    requirements.write_text(requirements.read_text().replace(
        'replace: "status_code=400"', 'replace: "status_code=400)\\n    raise RuntimeError(\'x\'"'))
    report = _validate(mini_service)
    by_id = {check.requirement: check for check in report.checks}
    assert not by_id["MINI-01"].ok and by_id["MINI-02"].ok
    assert by_id["MINI-01"].not_started == ["MINI-01-M1"]
    assert len(report.problems) == 1
    # Before: "mini: MINI-01-M1: mini MINI-01-M1 did not start", the names twice
    assert report.problems[0].startswith("mini MINI-01-M1 did not start: ")
    assert report.executions == 6  # the mutant's golden test never ran
    assert "MINI-01-M1 did not start (below)" in render(report)


def test_an_original_that_does_not_start_is_one_problem_and_nothing_is_sound(
        mini_service: Path) -> None:
    main = mini_service / "app" / "main.py"
    main.write_text(main.read_text() + "raise RuntimeError('broken original')\n")
    report = _validate(mini_service)
    assert len(report.problems) == 1
    assert report.problems[0].startswith("mini original did not start: ")
    assert report.problems[0].endswith("(and so did 4 mutants and benign variants)")
    assert report.executions == 0
    assert not any(check.ok for check in report.checks)
    assert "sound" not in render(report)


def test_a_benign_variant_whose_edit_does_not_apply_is_one_service_problem(
        mini_service: Path) -> None:
    requirements = mini_service / "requirements.yaml"
    requirements.write_text(requirements.read_text().replace(
        "find: 'return {\"value\": value}'", "find: 'return {\"valeu\": value}'"))
    report = _validate(mini_service)
    assert all(check.ok for check in report.checks)
    assert len(report.problems) == 1 and "MINI-B1" in report.problems[0]
