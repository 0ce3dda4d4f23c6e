"""`restbench compare BASE NEW`: how the mutation score moved between two runs, and whether
the move is more than resampling noise.

Per generator x model x service x variant present in both runs: the MS difference, a 95% paired
bootstrap interval over requirements (both runs resampled with the same picks, through the same
bootstrap as the score intervals), and the requirements and mutants whose kills changed. A row
is compared on the requirements both runs scored; those only one run has are named, and those
only BASE has fail the gate, as rows only BASE has do. Reads only the two scores.json files
(per-requirement rows with their killed mutants).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.table import Table

from restbench.reports.load import load_scores
from restbench.scoring import bootstrap_interval
from restbench.wording import counted

ALL_SERVICES = "all"
RowKey = tuple[str, str, str, str]  # generator, model, service, variant


def row_label(key: RowKey) -> str:
    generator, model, service, variant = key
    model = "" if model == "-" else f" / {model}"
    return f"{generator}{model} · {service} · {variant}"


@dataclass(frozen=True)
class MutantChange:
    service: str
    requirement: str
    mutant: str
    base_kills: int  # in how many repetitions it was killed
    new_kills: int
    base_runs: int
    new_runs: int

    @property
    def gained(self) -> bool:
        return self.new_kills / self.new_runs > self.base_kills / self.base_runs


@dataclass(frozen=True)
class RowComparison:
    generator: str
    model: str
    service: str
    variant: str
    base_ms: float
    new_ms: float
    interval: tuple[float, float]  # of new - base
    requirements: int  # compared: scored in both runs; base_ms and new_ms are over these
    changes: tuple[MutantChange, ...]
    base_own_ms: float = 0.0  # the MS BASE's own scores give the row, over all its requirements
    only_base: tuple[str, ...] = ()  # requirements BASE scored and NEW did not
    only_new: tuple[str, ...] = ()
    repetitions: tuple[int, int] = (1, 1)  # BASE's and NEW's (each MS is a mean over its own)

    @property
    def delta(self) -> float:
        return self.new_ms - self.base_ms

    @property
    def partial(self) -> bool:
        return bool(self.only_base or self.only_new or not self.requirements)

    @property
    def label(self) -> str:
        return row_label((self.generator, self.model, self.service, self.variant))


NO_ROW_IN_COMMON = "no row of NEW matches a row of BASE (generator × model × service × wording)"


@dataclass(frozen=True)
class GateFailure:
    kind: str  # regression, missing, nothing compared
    reason: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.reason}"


@dataclass
class Comparison:
    base: Path
    new: Path
    rows: list[RowComparison]
    only_base: list[RowKey] = field(default_factory=list)
    only_new: list[RowKey] = field(default_factory=list)

    def worst_delta(self) -> float | None:
        return min((row.delta for row in self.rows), default=None)

    def regressions(self, threshold_points: float) -> list[RowComparison]:
        """Rows whose MS dropped by more than `threshold_points` percentage points."""
        return [row for row in self.rows if row.delta * 100 < -threshold_points - 1e-9]

    def gate_failures(self, threshold_points: float) -> list[GateFailure]:
        """Why the `--fail-below` gate fails (none: it passes). Rows of BASE that NEW lacks fail
        it too, and so do requirements of a row that BASE scored and NEW did not: what was not
        compared cannot show its drop."""
        failures = [GateFailure("regression", f"{row.label}: MS {_pp(row.delta)} "
                                              f"(allowed: -{threshold_points:g}pp)")
                    for row in self.regressions(threshold_points)]
        if not self.rows:
            failures.append(GateFailure("nothing compared", NO_ROW_IN_COMMON))
        elif self.only_base:
            failures.append(GateFailure("missing", f"{counted(len(self.only_base), 'row')} of BASE "
                                        "not in NEW: " + ", ".join(row_label(key)
                                                               for key in self.only_base)))
        failures += [GateFailure("missing", f"{row.label}: {counted(len(row.only_base), 'requirement')}"
                                 f" of BASE not in NEW: {', '.join(row.only_base)}")
                     for row in self.rows if row.only_base and row.service != ALL_SERVICES]
        return failures


@dataclass
class _Requirement:
    mutants: int
    killed: list[float] = field(default_factory=list)  # per repetition
    kills: Counter[str] = field(default_factory=Counter)  # mutant -> repetitions killing it

    @property
    def runs(self) -> int:
        return len(self.killed)

    @property
    def mean_killed(self) -> float:
        return sum(self.killed) / len(self.killed) if self.killed else 0.0


def _requirements(data: dict[str, Any]) -> dict[tuple[str, str, str], dict[tuple[str, str],
                                                                           _Requirement]]:
    """(generator, model, variant) -> (service, requirement) -> kills over repetitions."""
    found: dict[tuple[str, str, str], dict[tuple[str, str], _Requirement]] = {}
    for row in data["requirements"]:
        cell = found.setdefault((row["generator"], row["model"], row["variant"]), {})
        entry = cell.setdefault((row["service"], row["requirement"]),
                                _Requirement(int(row["mutants"])))
        entry.killed.append(float(row["killed"]))
        entry.kills.update(str(row.get("killed_mutants") or "").split())
    return found


def _changes(base: dict[tuple[str, str], _Requirement],
             new: dict[tuple[str, str], _Requirement]) -> list[MutantChange]:
    changes = []
    for key in sorted(set(base) & set(new)):
        b, n = base[key], new[key]
        for mutant in sorted(set(b.kills) | set(n.kills)):
            if b.kills[mutant] / b.runs != n.kills[mutant] / n.runs:
                changes.append(MutantChange(key[0], key[1], mutant, b.kills[mutant],
                                            n.kills[mutant], b.runs, n.runs))
    return changes


def compare_runs(base: Path, new: Path) -> Comparison:
    base_data, new_data = load_scores(base), load_scores(new)
    base_rows = {(r["generator"], r["model"], r["service"], r["variant"]): r
                 for r in base_data["scores"]}
    new_rows = {(r["generator"], r["model"], r["service"], r["variant"]): r
                for r in new_data["scores"]}
    base_reqs, new_reqs = _requirements(base_data), _requirements(new_data)
    rows = []
    for key in [k for k in base_rows if k in new_rows]:
        generator, model, service, variant = key
        b_cell = base_reqs.get((generator, model, variant), {})
        n_cell = new_reqs.get((generator, model, variant), {})
        shared = sorted(k for k in set(b_cell) & set(n_cell)
                        if service == ALL_SERVICES or k[0] == service)
        only_base, only_new = (tuple(_names(sorted(k for k in set(one) - set(other)
                                                   if service == ALL_SERVICES or k[0] == service),
                                            service))
                               for one, other in ((b_cell, n_cell), (n_cell, b_cell)))
        differences = [n_cell[k].mean_killed - b_cell[k].mean_killed for k in shared]
        mutants = [b_cell[k].mutants for k in shared]
        total = sum(mutants)
        # MS from the per-requirement kills (unrounded, the same numbers the interval resamples)
        base_ms = sum(b_cell[k].mean_killed for k in shared) / total if total \
            else float(base_rows[key]["ms"])
        new_ms = sum(n_cell[k].mean_killed for k in shared) / total if total \
            else float(new_rows[key]["ms"])
        rows.append(RowComparison(
            generator, model, service, variant, base_ms, new_ms,
            bootstrap_interval(differences, mutants),
            len(shared), tuple(_changes({k: b_cell[k] for k in shared},
                                        {k: n_cell[k] for k in shared})),
            float(base_rows[key]["ms"]), only_base, only_new,
            (int(base_rows[key].get("repetitions") or 1),
             int(new_rows[key].get("repetitions") or 1))))
    return Comparison(base, new, rows, [k for k in base_rows if k not in new_rows],
                      [k for k in new_rows if k not in base_rows])


def _names(keys: list[tuple[str, str]], service: str) -> list[str]:
    """Requirement names; in an all-services row, with their service."""
    return [f"{svc}/{req}" if service == ALL_SERVICES else req for svc, req in keys]


def _pp(value: float) -> str:
    return f"{value * 100:+.1f}pp"


def _interval(row: RowComparison) -> str:
    if not row.requirements:  # nothing to resample: not an interval of width 0
        return "n/a"
    return f"[{row.interval[0] * 100:+.1f}, {row.interval[1] * 100:+.1f}]"


def _change_text(change: MutantChange) -> str:
    if change.base_runs == change.new_runs == 1:
        return f"{change.mutant} {'now killed' if change.gained else 'no longer killed'}"
    return (f"{change.mutant} killed {change.base_kills}/{change.base_runs} → "
            f"{change.new_kills}/{change.new_runs}")


def comparison_table(comparison: Comparison) -> Table:
    table = Table(title=f"MS change: {comparison.base} → {comparison.new}",
                  title_justify="left")
    for name in ("generator", "model", "service", "variant", "base MS", "new MS", "Δ",
                 "95% CI of Δ", "gained", "lost"):
        table.add_column(name, no_wrap=True, justify="left" if name in
                         ("generator", "model", "service", "variant") else "right")
    for row in comparison.rows:
        gained = sum(c.gained for c in row.changes if row.service != ALL_SERVICES)
        lost = sum(not c.gained for c in row.changes if row.service != ALL_SERVICES)
        style = "red" if row.interval[1] < 0 else "green" if row.interval[0] > 0 else None
        table.add_row(row.generator, row.model, row.service, row.variant,
                      f"{row.base_ms * 100:.1f}%", f"{row.new_ms * 100:.1f}%", _pp(row.delta),
                      _interval(row), str(gained) if row.service != ALL_SERVICES else "",
                      str(lost) if row.service != ALL_SERVICES else "", style=style)
    return table


def changed_lines(comparison: Comparison) -> list[str]:
    """One line per requirement whose kills changed, for the terminal."""
    lines = []
    for row in comparison.rows:
        if row.service == ALL_SERVICES:
            continue
        by_requirement: dict[str, list[MutantChange]] = {}
        for change in row.changes:
            by_requirement.setdefault(change.requirement, []).append(change)
        for requirement, changes in by_requirement.items():
            lines.append(f"{row.label}: {requirement}: "
                         + ", ".join(_change_text(c) for c in changes))
    return lines


def one_sided_lines(comparison: Comparison) -> list[str]:
    """The rows only one of the two runs has, then what a row compared when the runs did not
    score the same requirements, for the terminal."""
    return [f"only in {side}: {row_label(key)}"
            for side, keys in (("base", comparison.only_base), ("new", comparison.only_new))
            for key in keys] + [partial_line(row) for row in comparison.rows if row.partial] \
        + repetition_lines(comparison)


def repetition_lines(comparison: Comparison) -> list[str]:
    """The rows whose runs repeated their generations a different number of times."""
    return [f"{row.label}: BASE has {counted(row.repetitions[0], 'repetition')}, NEW "
            f"{row.repetitions[1]}: each MS is the mean over its own"
            for row in comparison.rows if row.repetitions[0] != row.repetitions[1]]


def partial_line(row: RowComparison) -> str:
    sides = [f"{side} also has {len(names)} that {other} lacks ({', '.join(names)})"
             for side, other, names in (("BASE", "NEW", row.only_base),
                                        ("NEW", "BASE", row.only_new)) if names]
    if not row.requirements:
        compared = ("no requirement scored in both runs: the MS are each run's own score, and "
                    "the change has no interval")
    else:
        compared = (f"compared on the {counted(row.requirements, 'requirement')} both runs "
                    f"scored (base MS {row.base_ms * 100:.1f}% over these; BASE's own: "
                    f"{row.base_own_ms * 100:.1f}%)")
    return "; ".join([f"{row.label}: {compared}", *sides])


def markdown(comparison: Comparison, fail_below: float | None = None) -> str:
    """A pull-request comment: the table, then what changed."""
    out = [f"### restbench: `{comparison.base.name}` → `{comparison.new.name}`", "",
           "| generator | model | service | variant | base MS | new MS | Δ | 95% CI of Δ |",
           "| --- | --- | --- | --- | ---: | ---: | ---: | ---: |"]
    for row in comparison.rows:
        mark = " ⚠️" if fail_below is not None and row in comparison.regressions(fail_below) \
            else ""
        out.append(f"| {row.generator} | {row.model} | {row.service} | {row.variant} | "
                   f"{row.base_ms * 100:.1f}% | {row.new_ms * 100:.1f}% | "
                   f"**{_pp(row.delta)}**{mark} | {_interval(row)} |")
    changes = changed_lines(comparison)
    out += (["", "#### Changed kills", "", *(f"- {line}" for line in changes)] if changes
            else ["", "No mutant changed its fate."])
    for title, keys in (("Only in base", comparison.only_base),
                        ("Only in new", comparison.only_new)):
        if keys:
            out += ["", f"#### {title}", ""] + [f"- {row_label(k)}" for k in keys]
    partial = [partial_line(row) for row in comparison.rows if row.partial] \
        + repetition_lines(comparison)
    if partial:
        out += ["", "#### Where the runs differ", ""] + [f"- {line}" for line in partial]
    if fail_below is not None:
        failed = comparison.gate_failures(fail_below)
        out += ["", (f"**Gate (MS may drop at most {fail_below:g} points): "
                    f"{'FAILED' if failed else 'passed'}.**"), ""]
        out += [f"- {line}" for line in failed]
    return "\n".join(out).rstrip() + "\n"
