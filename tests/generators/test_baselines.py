"""The no-LLM baselines: valid on the originals, the same scores twice, and able to fail."""

from __future__ import annotations

import asyncio
import csv
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
import requests
import yaml

from restbench.benchmark import Variant, resolve_services
from restbench.engine import RunConfig, RunResult, run_benchmark
from restbench.generators import GenerationTask, GeneratorSpec
from restbench.generators.baselines.plan import build_plan
from restbench.generators.baselines.runtime import schema_problems
from restbench.generators.tasks import make_task
from tests.cli_helpers import restbench

BASELINES = ("status-oracle", "schema-oracle", "schemathesis")
CRASH = {"id": "MINI-01-M9", "description": "Reading a counter crashes", "kind": "blunt",
         "vague_basis": True,
         "file": "app/main.py", "find": 'return {"value": app.state.counters[name]}',
         "replace": 'raise RuntimeError("boom")'}


def _edit_data(folder: Path, change: Any) -> None:
    path = folder / "requirements.yaml"
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def _run(service: Path, output: Path) -> RunResult:
    config = RunConfig(services=(str(service),), output_dir=output,
                       generators=tuple(GeneratorSpec(name) for name in BASELINES))
    return asyncio.run(run_benchmark(config))


def _numbers(result: RunResult) -> tuple[list[Any], list[Any]]:
    rows = sorted((r.generator, r.variant, r.score.ms, r.score.validity_rate, r.score.killed)
                  for r in result.rows)
    kills = sorted((p["generator"], p["variant"], p["requirement"], p["valid"],
                    p["killed_mutants"]) for p in result.per_requirement)
    return rows, kills


def test_default_run_scores_the_baselines_and_the_status_oracle_catches_a_crash(
        mini_service: Path, tmp_path: Path) -> None:
    _edit_data(mini_service, lambda data: data["requirements"][0]["mutants"].append(CRASH))
    result = restbench("run", "-s", mini_service, "-o", tmp_path)  # no -g: the default set
    assert result.returncode == 0, result.stderr
    scores = json.loads((tmp_path / "scores.json").read_text())["scores"]
    assert {(row["generator"], row["variant"]) for row in scores} == {
        (g, v) for g in ("golden", *BASELINES) for v in ("precise", "vague")}
    assert all(row["validity_rate"] == 1.0 for row in scores)
    kills = {(row["generator"], row["variant"], row["requirement"]): row["killed_mutants"]
             for row in csv.DictReader((tmp_path / "requirements.csv").open())}
    for variant in ("precise", "vague"):
        # the mini mutants answer 200 with wrong values: only the crash shows to an oracle
        assert kills[("status-oracle", variant, "MINI-01")] == "MINI-01-M9"
        assert kills[("status-oracle", variant, "MINI-02")] == ""
        assert kills[("schema-oracle", variant, "MINI-01")] == "MINI-01-M9"
        assert kills[("schemathesis", variant, "MINI-01")] == "MINI-01-M9"

    db = sqlite3.connect(tmp_path / "results.sqlite3")
    codes = db.execute("SELECT generator, requirement, count(DISTINCT code_sha) FROM generations "
                       "GROUP BY generator, requirement").fetchall()
    assert all(count == 1 for _, _, count in codes)  # precise and vague: the same file
    # so each file runs once per implementation: original, its mutants, the benign variant
    per_generator = (1 + 2 + 1) + (1 + 2 + 1)
    executions = db.execute("SELECT count(*) FROM executions").fetchone()[0]
    assert executions == 4 * per_generator
    # Schemathesis's requests to the canonical URL reached the service through the sandbox
    exchanges = db.execute(
        "SELECT e.exchanges FROM executions e JOIN generations g ON g.code_sha = e.code_sha "
        "WHERE g.generator = 'schemathesis' AND g.requirement = 'MINI-02' "
        "AND e.implementation = 'original'").fetchone()[0]
    urls = {exchange["url"] for exchange in json.loads(exchanges)}
    assert urls == {"/counters/a/increment"}


def test_requirements_that_list_the_same_operations_share_a_baseline_file_and_its_runs(
        mini_service: Path, tmp_path: Path) -> None:
    """A baseline reads only a requirement's operations: a requirement listing MINI-02's gets
    MINI-02's file, byte for byte, so the two share its runs on the original and the benign
    variant, while each requirement's own mutants still run."""
    def add_twin(data: dict[str, Any]) -> None:
        twin = {**data["requirements"][1], "id": "MINI-03", "title": "Counting up",
                "precise": "POST /counters/a/increment returns 200 and {\"value\": 2}.",
                "vague": "A counter can be counted up."}
        twin["mutants"] = [{**data["requirements"][1]["mutants"][0], "id": "MINI-03-M1",
                            "description": "Increment adds three",
                            "replace": "app.state.counters.get(name, 0) + 3"}]
        data["requirements"].append(twin)

    _edit_data(mini_service, add_twin)
    result = restbench("run", "-s", mini_service, "-o", tmp_path, "-g", ",".join(BASELINES))
    assert result.returncode == 0, result.stderr
    db = sqlite3.connect(tmp_path / "results.sqlite3")
    for generator in BASELINES:
        files = dict(db.execute("SELECT DISTINCT requirement, code FROM generations "
                                "WHERE generator = ?", (generator,)).fetchall())
        assert files["MINI-03"] == files["MINI-02"] != files["MINI-01"], generator
        assert not any(f"MINI-0{n}" in files["MINI-02"] for n in (1, 2, 3))
    # per baseline: MINI-01's file on the original, MINI-01-M1 and MINI-B1; the shared file on
    # the original, MINI-B1, MINI-02-M1, MINI-02-M2 and MINI-03-M1 (once each, not 3 + 2 more)
    runs = db.execute("SELECT count(*) FROM executions").fetchone()[0]
    assert runs == len(BASELINES) * (3 + 5)
    kills = {(row["generator"], row["variant"], row["requirement"]): row["killed_mutants"]
             for row in csv.DictReader((tmp_path / "requirements.csv").open())}
    # each requirement is still scored on its own mutants
    assert {kills[(g, "precise", "MINI-03")] for g in BASELINES} <= {"", "MINI-03-M1"}
    assert {(g, v, r) for g, v, r in kills} == {
        (g, v, f"MINI-0{n}") for g in BASELINES for v in ("precise", "vague") for n in (1, 2, 3)}


@pytest.fixture(scope="module")
def todo_subset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built-in todo service with two requirements, to keep the runs short."""
    folder = tmp_path_factory.mktemp("services") / "todo"
    shutil.copytree(resolve_services(["todo"])[0].root, folder,
                    ignore=shutil.ignore_patterns("__pycache__"))

    def keep(data: dict[str, Any]) -> None:
        data["requirements"] = [r for r in data["requirements"]
                                if r["id"] in ("TODO-14", "TODO-21")]

    _edit_data(folder, keep)
    return folder


def test_baselines_on_todo_are_valid_and_score_the_same_twice(todo_subset: Path,
                                                             tmp_path: Path) -> None:
    first = _run(todo_subset, tmp_path / "first")
    second = _run(todo_subset, tmp_path / "second")
    assert _numbers(first) == _numbers(second)
    assert all(row.score.validity_rate == 1.0 for row in first.rows)
    kills = {(p["generator"], p["requirement"]): p["killed_mutants"]
             for p in first.per_requirement if p["variant"] == "precise"}
    # answers with status codes the document does not declare (201 -> 200, 200 -> 204)
    assert kills[("schema-oracle", "TODO-14")] == "TODO-14-M2"
    assert kills[("schema-oracle", "TODO-21")] == "TODO-21-M1"
    assert kills[("status-oracle", "TODO-14")] == kills[("status-oracle", "TODO-21")] == ""


def _task(base_url: str, service: str, requirement: str) -> GenerationTask:
    chosen = resolve_services([service])[0]
    document = httpx.get(f"{base_url}/openapi.json").json()
    with make_task(chosen, chosen.requirement(requirement), Variant.VAGUE, document,
                   "http://localhost:8000") as task:
        return task


def test_plan_logs_in_first_and_takes_path_ids_from_what_it_created(conduit_url: str) -> None:
    plan = build_plan(_task(conduit_url, "conduit", "CONDUIT-36"))
    steps = plan["steps"]
    assert [s["label"] for s in steps] == [
        "log in: POST /api/users/login", "set up: POST /api/articles",
        "set up: POST /api/articles/{slug}/comments", "DELETE /api/articles/{slug}/comments/{id}",
        "GET /api/articles/{slug}/comments"]
    assert steps[0]["token"] == ["user", "token"]
    assert plan["auth"] == {"header": "Authorization", "format": "Token {token}"}
    assert steps[3]["path_params"] == {
        "slug": {"$from": 1, "$at": ["article", "slug"], "$default": "welcome-to-conduit"},
        "id": {"$from": 2, "$at": ["comment", "id"], "$default": 3}}


def test_plan_uses_the_form_login_and_paths_with_a_trailing_slash(fullstack_url: str) -> None:
    steps = build_plan(_task(fullstack_url, "fullstack", "FS-57"))["steps"]
    assert steps[0]["form"] == {"username": "admin@example.com", "password": "changethis"}
    assert [s["label"] for s in steps[1:]] == [
        "set up: POST /api/v1/items/", "DELETE /api/v1/items/{id}", "GET /api/v1/items/{id}",
        "GET /api/v1/items/"]
    assert steps[2]["path_params"]["id"]["$from"] == 1


def _answer(status: int, body: bytes, content_type: str = "application/json") -> requests.Response:
    answer = requests.Response()
    answer.status_code, answer._content = status, body
    answer.headers["content-type"] = content_type
    return answer


def test_schema_problems_name_undeclared_statuses_and_bodies_that_break_the_schema() -> None:
    components = {"schemas": {"Item": {"type": "object", "required": ["id"],
                                       "properties": {"id": {"type": "integer"}}}}}
    step = {"label": "GET /items/{id}", "responses": {
        "200": {"application/json": {"$ref": "#/components/schemas/Item"}}, "404": {}}}
    assert schema_problems(step, _answer(200, b'{"id": 4}'), components) == []
    assert schema_problems(step, _answer(404, b""), components) == []
    (wrong,) = schema_problems(step, _answer(200, b'{"id": "4"}'), components)
    assert "breaks its schema at id" in wrong
    (missing,) = schema_problems(step, _answer(200, b"{}"), components)
    assert "'id' is a required property" in missing
    (undeclared,) = schema_problems(step, _answer(201, b'{"id": 4}'), components)
    assert "answered 201, which the document does not declare (declared: 200, 404)" in undeclared
    (media,) = schema_problems(step, _answer(200, b"<p>4</p>", "text/html"), components)
    assert "content type text/html" in media


def test_the_schema_oracle_implies_the_status_oracle_only_for_the_same_calls_without_a_5xx(
        conduit_url: str) -> None:
    """Both oracles name their calls by one digest and their checks; a schema-oracle test
    implies a status-oracle pass (engine.implied) only when no call declares a 5xx."""
    from restbench.engine.implied import implies
    from restbench.generators.baselines.schema_oracle import (
        SchemaOracleGenerator,
        declares_server_errors,
    )
    from restbench.generators.baselines.status_oracle import StatusOracleGenerator
    from restbench.store import GenerationRow

    def row(generator: str, details: dict[str, Any], key: str) -> GenerationRow:
        return GenerationRow(key, generator, {}, "-", "conduit", "CONDUIT-05", "precise", 0,
                             "original", "ok", "", "code " + key, 0.0, 0, 0, 0.0, details)

    task = _task(conduit_url, "conduit", "CONDUIT-05")
    status = StatusOracleGenerator().generate(task).details
    schema = SchemaOracleGenerator().generate(task).details
    assert status["plan"] == schema["plan"] and status["checks"] == ["no_5xx"]
    assert "no_5xx" in schema["checks"]
    assert implies(row("schema-oracle", schema, "a"), row("status-oracle", status, "b"))
    assert not implies(row("status-oracle", status, "b"), row("schema-oracle", schema, "a"))
    other = _task(conduit_url, "conduit", "CONDUIT-10")
    assert StatusOracleGenerator().generate(other).details["plan"] != status["plan"]
    # a document that declares a 5xx (or `default`) for a call: the schema test accepts one
    without = {**schema, "checks": [c for c in schema["checks"] if c != "no_5xx"]}
    assert not implies(row("schema-oracle", without, "a"), row("status-oracle", status, "b"))
    # a plugin's details are whatever it wrote: nothing implied from what is not a list of names
    for odd in ({"plan": schema["plan"], "checks": [["no_5xx"], {}]},
                {"plan": schema["plan"], "checks": "no_5xx"}, {"plan": None, "checks": []}, {}):
        assert not implies(row("schema-oracle", schema, "a"), row("plugin", odd, "b"))
        assert not implies(row("plugin", odd, "b"), row("status-oracle", status, "c"))
    assert declares_server_errors({"200": {}, "default": {}})
    assert declares_server_errors({"503": {}}) and declares_server_errors({"5XX": {}})
    assert not declares_server_errors({"200": {}, "404": {}, "422": {}})
