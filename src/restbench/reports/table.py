"""Rich tables for the terminal."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from restbench.benchmark.models import MutantKind, Service
from restbench.engine.subsets import SEMANTIC, VAGUE_FAIR
from restbench.llm.prices import usd

if TYPE_CHECKING:  # types only: the engine's imports would cost `restbench run`'s input checks
    from restbench.engine.run import RunResult, ScoreRow
    from restbench.engine.validate import RequirementCheck, ValidationReport


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _subset(row: ScoreRow, name: str) -> str:
    if name not in row.score.subsets:
        return "–"  # does not apply: vague-fair on the precise wording
    subset = row.score.subsets[name]
    if subset is None:
        return "n/a"  # no mutant of this kind in scope
    return f"{subset.ms * 100:.1f}% [{subset.ci95[0] * 100:.0f}–{subset.ci95[1] * 100:.0f}]"


def score_table(result: RunResult) -> Table:
    """One row per generator x model x service x variant; columns that say nothing are left out."""
    rows = result.rows
    show_model = any(row.model != "-" for row in rows)
    show_deviation = any(row.score.repetitions > 1 for row in rows)
    show_overspec = any(row.score.overspecification_rate is not None for row in rows)
    show_cost = any(row.cost_usd or row.input_tokens or row.output_tokens for row in rows)
    show_failed = any(row.failed_generations for row in rows)
    columns: list[tuple[str, Callable[[ScoreRow], str]]] = [
        ("generator", lambda r: r.generator)]
    if show_model:
        columns.append(("model", lambda r: r.model))
    columns += [("service", lambda r: r.service), ("variant", lambda r: r.variant),
                ("reqs", lambda r: str(r.requirements)),
                ("valid", lambda r: _pct(r.score.validity_rate)),
                ("MS", lambda r: _pct(r.score.ms))]
    if show_deviation:
        columns.append(("±max", lambda r: f"{r.score.ms_max_deviation * 100:.1f}pp"))
    columns += [("95% CI", lambda r: f"{r.score.ms_ci95[0] * 100:.0f}–"
                                     f"{r.score.ms_ci95[1] * 100:.0f}%"),
                ("killed", lambda r: f"{r.score.killed:g}/{r.score.mutants}"),
                ("MS_semantic [95% CI]", lambda r: _subset(r, SEMANTIC))]
    if any(VAGUE_FAIR in row.score.subsets for row in rows):
        columns.append(("MS_vague-fair [95% CI]", lambda r: _subset(r, VAGUE_FAIR)))
    if show_failed:
        columns.append(("failed", lambda r: str(r.failed_generations)))
    if result.refines:
        # For a refining generator MS is computed from the tests made on the original: MS_valid.
        columns += [("MS_valid", lambda r: _pct(r.score.ms)
                     if r.score.ms_mutated is not None else "–"),
                    ("MS_mutated", lambda r: _pct(r.score.ms_mutated)),
                    ("self-kill", lambda r: _pct(r.score.self_kill_rate))]
    if show_overspec:
        columns.append(("over-spec", lambda r: _pct(r.score.overspecification_rate)))
    if show_cost:
        columns += [("cost $", lambda r: usd(r.cost_usd)),
                    ("tokens in/out", lambda r: f"{r.input_tokens}/{r.output_tokens}")]
    table = Table(title="Requirements-based mutation score", title_justify="left")
    for name, _ in columns:
        table.add_column(name, no_wrap=True, justify="left" if name in
                         ("generator", "model", "service", "variant") else "right")
    for row in rows:
        table.add_row(*(render(row) for _, render in columns),
                      style="bold" if row.service == "all" else None)
    return table


STATUS_WIDTH = 80  # a problem's part of a status cell; the problem lines below give it whole


def validation_table(report: ValidationReport) -> Table:
    """A row per requirement; a problem's status cell is the start of its first line (the
    command prints every problem in full below the table)."""
    table = Table(title=f"validate {report.service}", title_justify="left")
    for column in ("requirement", "golden on original", "mutants killed", "status"):
        table.add_column(column)
    for check in report.checks:
        golden = check.golden.value if check.golden else "not run"
        troubles = [*(_in_brief(problem, check.requirement) for problem in check.problems),
                    *(f"{m} did not start (below)" for m in check.not_started),
                    *(f"{m} did not build (below)" for m in check.not_built)]
        status = "[green]sound[/]" if check.ok else \
            f"[red]{escape('; '.join(troubles) or 'not checked (see the problems below)')}[/]"
        table.add_row(check.requirement, golden, _killed_cell(check), status)
    return table


def _killed_cell(check: RequirementCheck) -> str:
    """Killed of its mutants; an invalid golden test kills nothing (the README's definition),
    one that did not run is not judged."""
    if check.golden is None:
        return "–"
    return f"{len(check.killed)}/{len(check.mutants)}"


def _in_brief(problem: str, requirement: str) -> str:
    """`problem` without its requirement (the row names it), to the end of its first line and
    at most STATUS_WIDTH characters; `(below)` where it was cut."""
    text = problem.removeprefix(f"{requirement}: ")
    first = text.split("\n", 1)[0].rstrip()
    if first == text and len(text) <= STATUS_WIDTH:
        return text
    return f"{first[:STATUS_WIDTH].rstrip()}… (below)"


def services_table(services: list[Service]) -> Table:
    """Requirement and mutant counts per service, the mutants split by kind."""
    table = Table(title="Services", title_justify="left")
    kinds = [kind.value for kind in MutantKind]
    columns = ["service", "title", "requirements", "mutants", *kinds, "vague basis",
               "benign variants"]
    for column in columns:
        table.add_column(column, justify="left" if column in ("service", "title") else "right")
    for service in services:
        mutants = service.mutants()
        by_kind = [sum(m.kind.value == kind for m in mutants) for kind in kinds]
        table.add_row(escape(service.name), escape(service.data.title),
                      str(len(service.requirements)), str(len(mutants)),
                      *(str(n) for n in by_kind), str(sum(m.vague_basis for m in mutants)),
                      str(len(service.data.benign)))
    return table
