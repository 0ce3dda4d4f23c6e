"""Stryker's mutation-testing-report-schema (schema version 2): one JSON file per generator x
model x wording, which Stryker's report viewer (mutation-testing-elements) and badges read.

Mapping: every mutated source file of a service is a file of the report (key `SERVICE/PATH`,
its original source); every mutant is a mutant of that file at the place its edit changes, with
the requirement as `mutatorName`. Its status is Killed or Survived when the requirement's test is
valid, NoCoverage when there is no valid test (it failed on the original, or was not
generated). The generated tests are the report's test files, one per requirement. With several
repetitions, repetition 0 is reported (the HTML report shows them all).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from restbench.benchmark import Mutant, Service
from restbench.errors import RestbenchError
from restbench.mutation.apply import ORIGINAL
from restbench.reports.load import NO_MODEL, RunResults, Test
from restbench.reports.output import write_output
from restbench.runners import PYTEST, load_runner

SCHEMA_VERSION = "2"
THRESHOLDS = {"high": 80, "low": 60}


def _position(text: str, offset: int) -> dict[str, int]:
    """1-based line and column of a character offset."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return {"line": line, "column": column}


def _anchor(mutant: Mutant) -> str:
    """The text the mutant changes: its find text, or a diff's first removed line."""
    if mutant.find is not None:
        return mutant.find
    removed = [line[1:] for line in (mutant.diff or "").splitlines()
               if line.startswith("-") and not line.startswith("---")]
    return removed[0] if removed and removed[0].strip() else "\0"


def _location(source: str, mutant: Mutant) -> dict[str, dict[str, int]]:
    anchor = _anchor(mutant)
    start = source.find(anchor)
    if start < 0:  # the source changed since the run: point at the file's start
        return {"start": {"line": 1, "column": 1}, "end": {"line": 1, "column": 1}}
    return {"start": _position(source, start), "end": _position(source, start + len(anchor))}


def _test_id(test: Test) -> str:
    return f"{test.service}/{test.requirement}"


def _mutant(service: Service, mutant: Mutant, requirement: str, source: str,
            test: Test | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": f"{service.name}/{mutant.id}", "mutatorName": requirement,
        "description": mutant.description, "replacement": mutant.replace if mutant.diff is None else mutant.diff,
        "location": _location(source, mutant)}
    if test is None or test.status != "ok":
        reason = test.error if test is not None else "no test was generated"
        return entry | {"status": "NoCoverage", "statusReason": reason or "generation failed"}
    benign = [b.id for b in service.data.benign]
    mutants = [m.id for m in service.requirement(requirement).mutants]
    record = test.record(mutants, benign)
    original = test.executions.get(ORIGINAL)
    if not record.valid:
        reason = original.reason if original else "not executed on the original"
        return entry | {"status": "NoCoverage",
                        "statusReason": f"the test fails on the original service: {reason}"}
    test_id = _test_id(test)
    on_mutant = test.executions.get(mutant.id)
    entry |= {"coveredBy": [test_id], "testsCompleted": 1}
    if on_mutant is not None:
        entry["duration"] = round(on_mutant.duration_s * 1000, 1)
    if mutant.id in record.killed(mutants):
        return entry | {"status": "Killed", "killedBy": [test_id],
                        "statusReason": (on_mutant.reason if on_mutant else "") or "killed"}
    if on_mutant is not None and on_mutant.reason:  # e.g. "not run: never reached"
        entry["statusReason"] = on_mutant.reason
    return entry | {"status": "Survived"}


# The schema's language names for a source file, by its ending (what the viewer highlights).
_LANGUAGES = {".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
              ".ts": "typescript", ".java": "java", ".cs": "csharp", ".scala": "scala",
              ".php": "php", ".html": "html", ".vue": "vue", ".svelte": "svelte"}


def _language(file: str) -> str:
    return _LANGUAGES.get(Path(file).suffix, Path(file).suffix.lstrip(".") or "text")


def _test_suffix(test: Test) -> str:
    """The file ending its runner (kept in the generation's details) gives a test in the
    sandbox; `.txt` for a runner not installed here."""
    try:
        return load_runner(str(test.details.get("runner", PYTEST))).suffixes[0]
    except RestbenchError:
        return ".txt"


def stryker_report(run: RunResults, generator: str, model: str, variant: str,
                   repetition: int = 0) -> dict[str, Any]:
    tests = {(t.service, t.requirement): t for t in run.tests
             if (t.generator, t.model, t.variant, t.repetition, t.target)
             == (generator, model, variant, repetition, ORIGINAL)}
    files: dict[str, dict[str, Any]] = {}
    test_files: dict[str, dict[str, Any]] = {}
    for service_name in sorted({service for service, _ in tests}):
        service = run.services.get(service_name)
        if service is None:
            continue
        for requirement in service.requirements:
            test = tests.get((service_name, requirement.id))
            for mutant in requirement.mutants:
                key = f"{service_name}/{mutant.file}"
                if key not in files:
                    source = (service.root / mutant.file).read_text(encoding="utf-8")
                    files[key] = {"language": _language(mutant.file), "source": source,
                                  "mutants": []}
                files[key]["mutants"].append(
                    _mutant(service, mutant, requirement.id, files[key]["source"], test))
            if test is not None and test.status == "ok":
                test_files[f"{_test_id(test)}{_test_suffix(test)}"] = {
                    "source": test.code,
                    "tests": [{"id": _test_id(test), "name": f"{requirement.id}: "
                               f"{requirement.title}"}]}
    return {
        "schemaVersion": SCHEMA_VERSION, "thresholds": THRESHOLDS,
        "projectRoot": str(run.path.resolve()),
        "config": {"generator": generator, "model": model, "variant": variant,
                   "repetition": repetition, "tool": "restbench"},
        "framework": {"name": "restbench"},
        "files": files, "testFiles": test_files,
    }


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "none"


def write_stryker_reports(run: RunResults, directory: Path) -> list[Path]:
    """One file per generator x model x variant, named GENERATOR__MODEL__VARIANT.json
    (GENERATOR__VARIANT.json for generators without a model)."""
    cells = sorted({(t.generator, t.model, t.variant) for t in run.tests})
    written = []
    for generator, model, variant in cells:
        report = stryker_report(run, generator, model, variant)
        if not report["files"]:
            continue
        parts = [generator, variant] if model == NO_MODEL else [generator, model, variant]
        path = directory / ("__".join(_safe(p) for p in parts) + ".json")
        write_output(path, json.dumps(report, indent=1) + "\n")
        written.append(path)
    return written
