"""scores.json, scores.csv and requirements.csv next to the result store."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import TYPE_CHECKING, Any

from restbench.documents import standard_json
from restbench.engine.subsets import SUBSETS
from restbench.llm.prices import rounded_usd

if TYPE_CHECKING:  # types only: the engine's imports would cost `restbench run`'s input checks
    from restbench.engine.run import RunResult, ScoreRow


def _flat(row: ScoreRow) -> dict[str, Any]:
    score = row.score
    return {
        "generator": row.generator, "model": row.model, "service": row.service,
        "variant": row.variant, "requirements": row.requirements,
        "repetitions": score.repetitions, "ms": round(score.ms, 6),
        "ms_max_deviation": round(score.ms_max_deviation, 6),
        "ms_per_repetition": [round(ms, 6) for ms in score.ms_per_repetition],
        "ms_ci95_low": round(score.ms_ci95[0], 6), "ms_ci95_high": round(score.ms_ci95[1], 6),
        **_subset_columns(row),
        "killed_mean": round(score.killed, 4), "mutants": score.mutants,
        "validity_rate": round(score.validity_rate, 6),
        "ms_mutated": None if score.ms_mutated is None else round(score.ms_mutated, 6),
        "self_kill_rate": None if score.self_kill_rate is None else round(score.self_kill_rate, 6),
        "overspecification_rate": (None if score.overspecification_rate is None
                                   else round(score.overspecification_rate, 6)),
        "cost_usd": rounded_usd(row.cost_usd), "input_tokens": row.input_tokens,
        "output_tokens": row.output_tokens, "generation_s": round(row.generation_s, 3),
        "failed_generations": row.failed_generations,
    }


def _subset_columns(row: ScoreRow) -> dict[str, Any]:
    """ms_semantic and ms_vague_fair with their intervals; None where the subset is empty or
    does not apply (vague-fair on the precise wording)."""
    columns: dict[str, Any] = {}
    for name in SUBSETS:
        subset = row.score.subsets.get(name)
        columns[f"ms_{name}"] = None if subset is None else round(subset.ms, 6)
        columns[f"ms_{name}_ci95_low"] = None if subset is None else round(subset.ci95[0], 6)
        columns[f"ms_{name}_ci95_high"] = None if subset is None else round(subset.ci95[1], 6)
        columns[f"{name}_mutants"] = None if subset is None else subset.mutants
    return columns


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    """A list (`ms_per_repetition`) is one cell, its values joined by ";"."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        if not rows:
            return
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({key: ";".join(map(str, value)) if isinstance(value, list) else value
                          for key, value in row.items()} for row in rows)


def total_cost(result: RunResult) -> dict[str, float | int]:
    """What the whole run's generations cost (service rows only: 'all' rows repeat them)."""
    rows = [row for row in result.rows if row.service != "all"]
    return {"usd": rounded_usd(sum(r.cost_usd for r in rows)), "input_tokens": sum(r.input_tokens for r in rows),
            "output_tokens": sum(r.output_tokens for r in rows)}


# The files `write_results` writes beside the store, by their key in its answer.
SCORE_FILES = {"json": "scores.json", "csv": "scores.csv", "requirements": "requirements.csv"}


def write_results(result: RunResult, output_dir: Path) -> dict[str, Path]:
    output_dir.mkdir(parents=True, exist_ok=True)
    flat = [_flat(row) for row in result.rows]
    files = {key: output_dir / name for key, name in SCORE_FILES.items()}
    files["store"] = result.store_path
    files["json"].write_text(standard_json(
        {"scores": flat, "requirements": result.per_requirement, "counts": result.counts,
         "total_cost": total_cost(result)},
        indent=2), encoding="utf-8")
    _write_csv(files["csv"], flat)
    _write_csv(files["requirements"], result.per_requirement)
    return files


__all__ = ["SCORE_FILES", "total_cost", "write_results"]
