"""Reading result folders back: a `restbench run` folder (scores.json and its store), an
`agent-eval` folder (results.json) or a `grade` folder (evaluation_results_*.json).

What a run's tests did comes from the store, restricted to the generations of the last finished
run (their keys are recomputed from its configuration, as the engine derives them), so a folder
reused by several runs shows what its scores.json was computed from.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from restbench.benchmark import Service, resolve_services
from restbench.documents import parse_json
from restbench.errors import RestbenchError
from restbench.execution import Outcome
from restbench.mutation import implementations_of
from restbench.mutation.apply import ORIGINAL
from restbench.scoring import TestRecord
from restbench.store.sqlite import digest

NO_MODEL = "-"


class ResultsError(RestbenchError):
    """A folder given to `report` or `compare` is not a result folder, or its files are broken."""


@dataclass(frozen=True)
class Execution:
    implementation: str
    outcome: str
    reason: str
    duration_s: float
    output: str
    exchanges: list[dict[str, Any]]


@dataclass(frozen=True)
class Test:
    """One generation of a run with the executions of its code."""

    __test__ = False  # not a pytest test class

    generator: str
    model: str
    service: str
    requirement: str
    variant: str
    repetition: int
    target: str
    status: str
    error: str
    code: str
    code_sha: str
    cost_usd: float
    input_tokens: int
    output_tokens: int
    wall_s: float
    details: dict[str, Any]
    executions: dict[str, Execution] = field(default_factory=dict)

    def record(self, mutants: list[str], benign: list[str]) -> TestRecord:
        """The scoring view of this test, so kills are decided exactly as the scores are."""
        ok = self.status == "ok"

        def outcome(target: str) -> Outcome | None:
            found = self.executions.get(target)
            return Outcome(found.outcome) if found and ok else None

        return TestRecord(
            self.requirement, self.target, ok, outcome(ORIGINAL),
            {m: o for m in mutants if (o := outcome(m)) is not None},
            {b: o for b in benign if (o := outcome(b)) is not None})


@dataclass
class RunResults:
    """A `restbench run` output folder."""

    path: Path
    scores: list[dict[str, Any]]
    per_requirement: list[dict[str, Any]]
    counts: dict[str, Any]
    total_cost: dict[str, Any]
    config: dict[str, Any]
    services: dict[str, Service]
    tests: list[Test]
    problems: list[str] = field(default_factory=list)  # what could not be shown, and why


@dataclass
class AgentEvalResults:
    path: Path
    summary: dict[str, Any]
    results: list[dict[str, Any]]


@dataclass
class GradeResults:
    path: Path
    runs: list[dict[str, Any]]  # one evaluation_results_*.json each


Results = RunResults | AgentEvalResults | GradeResults


def _read_json(path: Path) -> Any:
    try:
        return parse_json(path.read_text(encoding="utf-8"), non_finite=True)
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{path}: not readable JSON ({exc})") from None


def _unfinished_run(path: Path) -> str:
    """The store fills as a run goes; scores.json is written once every test has run."""
    return (f"{path}: an unfinished `restbench run` (its results.sqlite3 is there, its "
            "scores.json is not): rerunning the same command finishes it, reusing what the "
            "store holds")


def load_results(path: Path) -> Results:
    """Whatever kind of result folder `path` is, told by the files it holds."""
    if not path.is_dir():
        raise ResultsError(f"{path}: not a folder")
    if (path / "scores.json").is_file():
        return load_run(path)
    if (path / "results.json").is_file():
        data = _read_json(path / "results.json")
        if not isinstance(data, dict) or "summary" not in data or "results" not in data:
            raise ResultsError(f"{path / 'results.json'}: no 'summary' and 'results' "
                               "(not an agent-eval results file)")
        return AgentEvalResults(path, data["summary"], list(data["results"]))
    graded = sorted(path.glob("evaluation_results_*.json"))
    if graded:
        runs = []
        for file in graded:
            data = _read_json(file)
            if not isinstance(data, dict) or "summary" not in data or "cases" not in data:
                raise ResultsError(f"{file}: no 'summary' and 'cases' (not a grade results file)")
            runs.append(data | {"file": file.name})
        return GradeResults(path, runs)
    if (path / "results.sqlite3").is_file():
        raise ResultsError(f"{_unfinished_run(path)}; then report it")
    raise ResultsError(f"{path}: no scores.json (restbench run), results.json (agent-eval) or "
                       "evaluation_results_*.json (grade) in it")


def load_scores(path: Path) -> dict[str, Any]:
    """scores.json of a run folder, checked for the parts compare and report read."""
    file = path / "scores.json"
    if not file.is_file():
        if (path / "results.sqlite3").is_file():
            raise ResultsError(_unfinished_run(path))
        raise ResultsError(f"{path}: no scores.json (not a `restbench run` output folder)")
    data = _read_json(file)
    if not isinstance(data, dict) or not isinstance(data.get("scores"), list) \
            or not isinstance(data.get("requirements"), list):
        raise ResultsError(f"{file}: no 'scores' and 'requirements' lists")
    for index, row in enumerate(data["scores"]):
        if not isinstance(row, dict):
            raise ResultsError(f"{file}: scores[{index}] is not an object")
        missing = [k for k in ("generator", "model", "service", "variant", "ms", "mutants")
                   if k not in row]
        if missing:
            raise ResultsError(f"{file}: scores[{index}] lacks {', '.join(missing)}")
        _check_types(file, f"scores[{index}]", row)
    for index, row in enumerate(data["requirements"]):
        if not isinstance(row, dict):
            raise ResultsError(f"{file}: requirements[{index}] is not an object")
        missing = [k for k in ("generator", "model", "service", "variant", "requirement",
                               "mutants", "killed") if k not in row]
        if missing:
            raise ResultsError(f"{file}: requirements[{index}] lacks {', '.join(missing)}")
        _check_types(file, f"requirements[{index}]", row)
    for key in ("counts", "total_cost"):
        value = data.get(key, {})
        if not isinstance(value, dict) or not all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in value.values()):
            raise ResultsError(f"{file}: {key} must be an object of numbers, not "
                               f"{_shortened(value)}")
    return data


def _shortened(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_TEXT_KEYS = {"generator", "model", "service", "variant", "requirement", "killed_mutants"}
_FLAG_KEYS = {"valid"}
_NUMBER_LIST_KEYS = {"ms_per_repetition"}


def _check_types(file: Path, where: str, row: dict[str, Any]) -> None:
    """Names are text, `valid` true or false, `ms_per_repetition` a list of numbers, everything
    else a number or null: what compare and report compute with (a hand-edited "ms": "high" was
    a traceback)."""
    for key, value in row.items():
        if key in _TEXT_KEYS:
            fine = isinstance(value, str)
            wanted = "text"
        elif key in _FLAG_KEYS:
            fine = isinstance(value, bool)
            wanted = "true or false"
        elif key in _NUMBER_LIST_KEYS:
            fine = isinstance(value, list) and all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in value)
            wanted = "a list of numbers"
        else:
            fine = value is None or (isinstance(value, int | float)
                                     and not isinstance(value, bool))
            wanted = "a number or null"
        if not fine:
            raise ResultsError(f"{file}: {where}.{key} must be {wanted}, not {value!r:.40}")


def _last_config(db: sqlite3.Connection, store: Path, problems: list[str]) -> dict[str, Any]:
    row = db.execute("SELECT id, config FROM runs WHERE finished_at IS NOT NULL "
                     "ORDER BY id DESC LIMIT 1").fetchone()
    if row is None:
        return {}
    try:
        config = json.loads(row[1])
    except (TypeError, json.JSONDecodeError):
        config = None
    if not isinstance(config, dict):
        problems.append(f"{store}: runs.config of run {row[0]} is not a JSON object; the report "
                        "goes on without it (tests of earlier runs in this folder may show too)")
        return {}
    return config


def _services(store: Path, config: dict[str, Any], names: set[str],
              problems: list[str]) -> dict[str, Service]:
    """The services the run scored, from the names or folders it was given."""
    found: dict[str, Service] = {}
    for spec in config.get("services") or []:
        try:
            (service,) = resolve_services([spec])
        except RestbenchError as exc:
            problems.append(f"{store}: service {spec}: {exc}")
            continue
        found[service.name] = service
    for name in sorted(names - set(found)):
        try:
            (service,) = resolve_services([name])
            found[service.name] = service
        except RestbenchError:
            problems.append(f"{store}: service {name}: its requirements file was not found; "
                            "wordings and mutants are not shown")
    return found


def _covered_only(services: dict[str, Service],
                  covered: set[tuple[str, str]]) -> dict[str, Service]:
    """Each service with only the requirements the run scored (fewer with -R), so that no
    report counts the others as not generated."""
    found = {}
    for name, service in services.items():
        kept = [r for r in service.requirements if (name, r.id) in covered]
        found[name] = replace(service, data=service.data.model_copy(
            update={"requirements": kept})) if kept else service
    return found


def _generation_keys(config: dict[str, Any], services: dict[str, Service],
                     scored: set[tuple[str, str, str]]) -> set[str]:
    """The generation keys the last run used (see engine.run._Cell.key)."""
    keys = set()
    models = [*config.get("models", []), NO_MODEL]
    for generator in config.get("generators", []):
        for model in models:
            for service in services.values():
                for requirement in service.requirements:
                    targets = [ORIGINAL, *(m.id for m in requirement.mutants)]
                    for variant in config.get("variants", []):
                        if (model, service.name, variant) not in scored:
                            continue
                        for repetition in range(int(config.get("repetitions", 1))):
                            keys.update(
                                digest("generation", generator["name"], generator["args"],
                                       model, service.name, requirement.id, variant,
                                       repetition, target) for target in targets)
    return keys


_GENERATION_COLUMNS = ("key, generator, model, service, requirement, variant, repetition, "
                       "target, status, error, code, code_sha, cost_usd, input_tokens, "
                       "output_tokens, wall_s, details")


def _tests(db: sqlite3.Connection, keys: set[str] | None,
           scored: set[tuple[str, str, str, str]], covered: set[tuple[str, str]]) -> list[Test]:
    tests = []
    for row in db.execute(f"SELECT {_GENERATION_COLUMNS} FROM generations "
                          "ORDER BY service, requirement, generator, model, variant, repetition"):
        key, generator, model, service, requirement, variant = row[:6]
        if keys is not None and key not in keys:
            continue
        if (generator, model, service, variant) not in scored \
                or (service, requirement) not in covered:
            continue
        tests.append(Test(generator, model, service, requirement, variant, row[6], row[7],
                          row[8], row[9], row[10], row[11], row[12], row[13], row[14], row[15],
                          json.loads(row[16] or "{}")))
    return tests


def _attach_executions(db: sqlite3.Connection, tests: list[Test],
                       services: dict[str, Service]) -> None:
    """The newest execution of each code on each implementation, preferring one made from the
    implementation's current source when the service is at hand."""
    fingerprints = {(name, impl_id): impl.fingerprint()
                    for name, service in services.items()
                    for impl_id, impl in implementations_of(service).items()}
    wanted = {t.code_sha for t in tests if t.status == "ok"}
    best: dict[tuple[str, str, str], tuple[tuple[bool, float], Execution]] = {}
    for row in db.execute("SELECT code_sha, service, implementation, implementation_fingerprint, "
                          "outcome, reason, duration_s, output, exchanges, created_at "
                          "FROM executions"):
        sha, service, impl = row[0], row[1], row[2]
        if sha not in wanted:
            continue
        rank = (fingerprints.get((service, impl)) == row[3], row[9])
        key = (sha, service, impl)
        if key in best and best[key][0] >= rank:
            continue
        best[key] = (rank, Execution(impl, row[4], row[5], row[6], row[7],
                                     json.loads(row[8] or "[]")))
    by_code: dict[tuple[str, str], dict[str, Execution]] = {}
    for (sha, service, impl), (_, execution) in best.items():
        by_code.setdefault((sha, service), {})[impl] = execution
    for test in tests:
        if test.status == "ok":
            test.executions.update(by_code.get((test.code_sha, test.service), {}))


def _open_store(store: Path, problems: list[str]) -> sqlite3.Connection:
    """The store, read-only. A reader of a WAL database still creates its -shm index file
    beside it, which fails on read-only storage; there the store is opened as immutable (no
    process can be writing it), which reads no -wal file."""
    db = sqlite3.connect(f"{store.absolute().as_uri()}?mode=ro", uri=True)
    try:
        db.execute("SELECT 1 FROM sqlite_master LIMIT 1")  # connect() opens nothing yet
        return db
    except sqlite3.DatabaseError as exc:
        db.close()
        if exc.sqlite_errorcode != sqlite3.SQLITE_CANTOPEN:
            raise
    wal = store.with_name(f"{store.name}-wal")
    if wal.is_file() and wal.stat().st_size:
        problems.append(f"{wal}: not read (the folder is read-only); the last results the "
                        "run wrote may be missing")
    return sqlite3.connect(f"{store.absolute().as_uri()}?immutable=1", uri=True)


def load_run(path: Path) -> RunResults:
    data = load_scores(path)
    store = path / "results.sqlite3"
    problems: list[str] = []
    scores = [row for row in data["scores"] if isinstance(row, dict)]
    scored = {(r["generator"], r["model"], r["service"], r["variant"]) for r in scores}
    covered = {(r.get("service"), r.get("requirement")) for r in data["requirements"]
               if isinstance(r, dict)}
    services: dict[str, Service] = {}
    tests: list[Test] = []
    config: dict[str, Any] = {}
    if not store.is_file():
        problems.append(f"{store}: missing; tests, kill matrix and drill-down are not shown")
    else:
        try:
            db = _open_store(store, problems)
        except sqlite3.DatabaseError as exc:
            raise ResultsError(f"{store}: not a readable result store ({exc})") from None
        try:
            config = _last_config(db, store, problems)
            names = {r["service"] for r in scores if r["service"] != "all"}
            services = _covered_only(_services(store, config, names, problems), covered)
            keys = None
            if config.get("generators"):
                keys = _generation_keys(config, services,
                                        {(r["model"], r["service"], r["variant"])
                                         for r in scores})
            tests = _tests(db, keys, scored, covered)
            _attach_executions(db, tests, services)
        except sqlite3.DatabaseError as exc:
            raise ResultsError(f"{store}: not a readable result store ({exc})") from None
        finally:
            db.close()
    return RunResults(path, scores, list(data["requirements"]), dict(data.get("counts", {})),
                      dict(data.get("total_cost", {})), config, services, tests, problems)


__all__ = ["AgentEvalResults", "Execution", "GradeResults", "Results", "ResultsError",
           "RunResults", "Test", "load_results", "load_run", "load_scores"]
