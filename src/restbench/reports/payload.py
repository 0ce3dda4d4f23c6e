"""The data a report page shows, built once in Python and embedded in the page as JSON.

Light parts (score rows, figures, kill matrices, requirement texts and mutant diffs) are plain
JSON. The heavy drill-down of a requirement (every test's code, its executions' pytest output
and HTTP exchanges, refine rounds) is one gzip-compressed chunk per requirement, decompressed
by the page only when that requirement is opened: a run of thousands of tests loads as fast as
a small one.
"""

from __future__ import annotations

import base64
import difflib
import gzip
import json
from collections.abc import Sequence
from typing import Any

from restbench.benchmark import Service
from restbench.mutation import implementations_of
from restbench.mutation.apply import ORIGINAL, edited_text
from restbench.reports.figures import figures
from restbench.reports.load import AgentEvalResults, GradeResults, Results, RunResults, Test

EXCHANGES_KEPT = 60  # per execution; the store keeps them all
KNOWN_COLUMNS: dict[str, tuple[str, str]] = {  # key -> (label, format)
    "generator": ("generator", "text"), "model": ("model", "text"),
    "service": ("service", "text"), "variant": ("variant", "text"),
    "requirements": ("reqs", "int"), "repetitions": ("runs", "int"),
    "ms": ("MS", "pct"), "ms_max_deviation": ("±max", "pp"),
    "ms_ci95_low": ("95% CI", "ci"), "killed_mean": ("killed", "num"),
    "mutants": ("mutants", "int"), "validity_rate": ("valid", "pct"),
    "ms_valid": ("MS_valid", "pct"), "ms_mutated": ("MS_mutated", "pct"), "self_kill_rate": ("self-kill", "pct"),
    "overspecification_rate": ("over-spec", "pct"), "cost_usd": ("cost $", "usd"),
    "input_tokens": ("tokens in", "int"), "output_tokens": ("tokens out", "int"),
    "generation_s": ("wall s", "num"), "failed_generations": ("failed", "int"),
    "ms_semantic": ("MS_semantic", "pct"), "semantic_mutants": ("semantic mutants", "int"),
    "ms_vague_fair": ("MS_vague-fair", "pct"),
    "vague_fair_mutants": ("vague-fair mutants", "int"),
}
CI_LOW, CI_HIGH = "_ci95_low", "_ci95_high"  # an interval's high end is shown in its low's column


def _format_of(key: str, values: list[Any]) -> tuple[str, str]:
    """Columns other versions add (new scores) are shown too, labelled and formatted by their
    name."""
    if key in KNOWN_COLUMNS:
        return KNOWN_COLUMNS[key]
    if key.endswith(CI_LOW):  # ms_semantic_ci95_low: the interval of MS_semantic
        of = KNOWN_COLUMNS.get(key.removesuffix(CI_LOW), (key.removesuffix(CI_LOW), ""))[0]
        return f"95% CI of {of}", "ci"
    label = key.replace("_", " ")
    if key.startswith("ms") or key.endswith("_rate"):
        return label, "pct"
    if all(isinstance(v, int | float) or v is None for v in values):
        return label, "num"
    return label, "text"


def columns(rows: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    keys: list[str] = ["run"] if len({r["run"] for r in rows}) > 1 else []
    for row in rows:
        keys += [k for k in row if k not in keys and k != "run" and not k.endswith(CI_HIGH)]
    found = []
    for key in keys:
        label, kind = ("run", "text") if key == "run" else \
            _format_of(key, [r.get(key) for r in rows])
        found.append({"key": key, "label": label, "format": kind})
    return found


def mutant_diff(service: Service, implementation_id: str) -> str:
    """The mutant's change as a unified diff against the original source file."""
    implementation = implementations_of(service)[implementation_id]
    try:
        relative, mutated = edited_text(implementation)
    except Exception as exc:  # noqa: BLE001 - shown in the report; validate names the problem
        return f"(the edit does not apply to the current source: {exc})"
    original = (service.root / relative).read_text(encoding="utf-8")
    return "".join(difflib.unified_diff(original.splitlines(keepends=True),
                                        mutated.splitlines(keepends=True),
                                        f"a/{relative}", f"b/{relative}", n=3))


def requirement_entry(service: Service, requirement_id: str) -> dict[str, Any]:
    requirement = service.requirement(requirement_id)
    return {
        "service": service.name, "id": requirement.id, "title": requirement.title,
        "operations": list(requirement.operations), "precise": requirement.precise,
        "vague": requirement.vague,
        "mutants": [{"id": m.id, "description": m.description, "file": m.file,
                     "diff": mutant_diff(service, m.id),
                     **{k: v for k, v in m.model_dump().items()
                        if k not in ("id", "description", "file", "find", "replace", "diff")}}
                    for m in requirement.mutants],
    }


def _kind(service: Service | None, implementation: str) -> str:
    if implementation == ORIGINAL:
        return ORIGINAL
    if service is not None and any(b.id == implementation for b in service.data.benign):
        return "benign"
    return "mutant"


def _test_entry(test: Test, service: Service | None) -> dict[str, Any]:
    mutants = [m.id for m in service.requirement(test.requirement).mutants] \
        if service is not None else []
    benign = [b.id for b in service.data.benign] if service is not None else []
    record = test.record(mutants, benign)
    details = dict(test.details)
    if isinstance(details.get("answer"), str) and len(details["answer"]) > 20000:
        details["answer"] = details["answer"][:20000] + "\n[cut]"
    return {
        "generator": test.generator, "model": test.model, "variant": test.variant,
        "repetition": test.repetition, "target": test.target, "status": test.status,
        "error": test.error, "code_sha": test.code_sha, "cost_usd": test.cost_usd,
        "input_tokens": test.input_tokens, "output_tokens": test.output_tokens,
        "wall_s": test.wall_s, "valid": record.valid,
        "killed": sorted(record.killed(mutants)), "overspecified": record.overspecified,
        "details": details,
    }


def _execution_entry(service: Service | None, implementation: str,
                     execution: Any) -> dict[str, Any]:
    return {"implementation": implementation, "kind": _kind(service, implementation),
            "outcome": execution.outcome, "reason": execution.reason,
            "duration_s": execution.duration_s, "output": execution.output,
            "exchanges": execution.exchanges[:EXCHANGES_KEPT],
            "exchanges_total": len(execution.exchanges)}


def pack(value: Any) -> str:
    raw = json.dumps(value, separators=(",", ":"), default=str).encode()
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")


def _drilldown(tests: list[Test], service: Service | None) -> dict[str, Any]:
    order = {ORIGINAL: 0, "mutant": 1, "benign": 2}
    codes: dict[str, str] = {}
    executions: dict[str, list[dict[str, Any]]] = {}
    for test in tests:
        codes.setdefault(test.code_sha, test.code)
        if test.code_sha not in executions and test.executions:
            executions[test.code_sha] = sorted(
                (_execution_entry(service, impl, e) for impl, e in test.executions.items()),
                key=lambda e: (order[e["kind"]], e["implementation"]))
    return {"tests": [_test_entry(t, service) for t in tests], "codes": codes,
            "executions": executions}


def _matrices(run_name: str, run: RunResults) -> list[dict[str, Any]]:
    """Requirement x mutant kill matrices, one per generator x model x variant x repetition.

    A cell is K (killed), S (survived), I (the test is invalid: it fails on the original) or
    N (no test: the generation failed or is missing).
    """
    by_cell: dict[tuple[str, str, str, int], dict[tuple[str, str], Test]] = {}
    for test in run.tests:
        if test.target == ORIGINAL:
            by_cell.setdefault((test.generator, test.model, test.variant, test.repetition),
                               {})[(test.service, test.requirement)] = test
    found = []
    for (generator, model, variant, repetition), tests in sorted(by_cell.items()):
        rows = []
        for service_name in sorted({s for s, _ in tests}):
            service = run.services.get(service_name)
            if service is None:
                continue
            benign = [b.id for b in service.data.benign]
            for requirement in service.requirements:
                mutants = [m.id for m in requirement.mutants]
                test = tests.get((service_name, requirement.id))
                if test is None or test.status != "ok":
                    cells = "N" * len(mutants)
                else:
                    record = test.record(mutants, benign)
                    killed = record.killed(mutants)
                    cells = "".join("I" if not record.valid else "K" if m in killed else "S"
                                    for m in mutants)
                rows.append([service_name, requirement.id, cells])
        found.append({"run": run_name, "generator": generator, "model": model,
                      "variant": variant, "repetition": repetition, "rows": rows})
    return found


def _with_ms_valid(row: dict[str, Any]) -> dict[str, Any]:
    """For refining generators MS is MS_valid (the tests made on the original): shown under
    that name too, beside MS_mutated, as the terminal table does."""
    if "ms_mutated" not in row or "ms_valid" in row:
        return row
    found: dict[str, Any] = {}
    for key, value in row.items():
        if key == "ms_mutated":
            found["ms_valid"] = row["ms"] if value is not None else None
        found[key] = value
    return found


def _run_payload(run_name: str, run: RunResults, payload: dict[str, Any]) -> None:
    payload["runs"].append({"name": run_name, "path": str(run.path), "config": run.config,
                            "counts": run.counts, "total_cost": run.total_cost,
                            "problems": run.problems, "tests": len(run.tests)})
    payload["scores"] += [{"run": run_name, **_with_ms_valid(row)} for row in run.scores]
    payload["per_requirement"] += [{"run": run_name, **row} for row in run.per_requirement]
    payload["matrices"] += _matrices(run_name, run)
    by_requirement: dict[tuple[str, str], list[Test]] = {}
    for test in run.tests:
        by_requirement.setdefault((test.service, test.requirement), []).append(test)
    wanted = {(r["service"], r["requirement"]) for r in run.per_requirement}
    for service_name, service in sorted(run.services.items()):
        for requirement in service.requirements:
            if (service_name, requirement.id) not in wanted \
                    and (service_name, requirement.id) not in by_requirement:
                continue
            key = f"{run_name}|{service_name}|{requirement.id}"
            payload["requirements"][key] = requirement_entry(service, requirement.id) \
                | {"run": run_name}
            payload["details"][key] = pack(_drilldown(
                by_requirement.get((service_name, requirement.id), []), service))
    for (service_name, requirement_id), tests in sorted(by_requirement.items()):
        key = f"{run_name}|{service_name}|{requirement_id}"
        if key not in payload["requirements"]:  # its service definition is not at hand
            payload["requirements"][key] = {"run": run_name, "service": service_name,
                                            "id": requirement_id, "title": "", "operations": [],
                                            "precise": "", "vague": "", "mutants": []}
            payload["details"][key] = pack(_drilldown(tests, None))


def _run_names(results: Sequence[Results]) -> list[str]:
    names = [r.path.resolve().name or str(r.path) for r in results]
    return [name if names.count(name) == 1 else f"{name} ({index + 1})"
            for index, name in enumerate(names)]


def build_payload(results: Sequence[Results], title: str, generated_at: str,
                  version: str) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "title": title, "generated_at": generated_at, "version": version, "runs": [],
        "scores": [], "per_requirement": [], "matrices": [], "requirements": {},
        "details": {}, "agent_eval": [], "grade": []}
    for name, result in zip(_run_names(results), results, strict=True):
        if isinstance(result, RunResults):
            _run_payload(name, result, payload)
        elif isinstance(result, AgentEvalResults):
            payload["agent_eval"].append({"name": name, "path": str(result.path),
                                          "summary": result.summary,
                                          "results": result.results})
        elif isinstance(result, GradeResults):
            payload["grade"].append({"name": name, "path": str(result.path),
                                     "runs": result.runs})
    # figures name the run only where two runs have the same generator and model
    runs_of: dict[tuple[str, str], set[str]] = {}
    for row in payload["scores"]:
        runs_of.setdefault((row["generator"], row["model"]), set()).add(row["run"])
    with_run = any(len(runs) > 1 for runs in runs_of.values())
    payload["columns"] = columns(payload["scores"]) if payload["scores"] else []
    payload["figures"] = figures(payload["scores"], payload["per_requirement"], with_run) \
        if payload["runs"] else {}
    del payload["per_requirement"]  # in the spread figure already; the page does not need it
    return payload

