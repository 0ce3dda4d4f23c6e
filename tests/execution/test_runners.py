"""Runners beyond pytest: JavaScript (node --test) and Postman collections (newman), run in the
real sandbox against the notes service (Node.js, external) and mapped to pass / fail / error
with pytest's rules; each runner's golden-style check; files picks the runner by extension."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from restbench.benchmark import load_service, resolve_services
from restbench.cache_folder import CACHE_ENV
from restbench.execution import ExecutionResult, Executor, Outcome
from restbench.mutation import implementations_of
from restbench.runners import runner_for_file
from restbench.runners.setup import NEWMAN, ToolMissing, installed_script
from restbench.serving import ServerPool
from tests.cli_helpers import restbench

NOTES = Path(__file__).parents[1] / "fixtures" / "notes"


@pytest.fixture(autouse=True)
def _tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which("node") is None:
        pytest.fail("Node.js is missing: apt-get install nodejs")
    try:
        installed_script(NEWMAN)
    except ToolMissing as exc:
        pytest.fail(str(exc))  # names `restbench setup newman`
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))


def _run_all(tests: dict[str, tuple[str, str]], implementations: list[str],
             workdir: Path, timeout_s: float = 30.0) -> dict[tuple[str, str], ExecutionResult]:
    """Runs each (code, runner) test on each implementation of notes, after a reset."""
    async def main() -> dict[tuple[str, str], ExecutionResult]:
        service = load_service(NOTES)
        results = {}
        async with ServerPool(workdir / "servers") as pool, \
                Executor(1, timeout_s, workdir / "exec") as executor:
            for implementation_id in implementations:
                server = await pool.start(implementations_of(service)[implementation_id])
                try:
                    for name, (code, runner) in tests.items():
                        await server.reset()
                        results[(name, implementation_id)] = await executor.execute(
                            code, server, name=name, runner=runner)
                finally:
                    await pool.stop(server)
        return results
    return asyncio.run(main())


JS_HEADER = """import { test } from "node:test";
import assert from "node:assert/strict";
const BASE = process.env.BASE_URL ?? "http://localhost:8000";
const create = () => fetch(`${BASE}/notes`, { method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ title: "Trip", body: "pack bags" }) });
"""
JS = {
    "strong": JS_HEADER + """
test("a new note is stored with its text", async () => {
  const response = await create();
  assert.equal(response.status, 201);
  const note = await response.json();
  const read = await fetch(`${BASE}/notes/${note.id}`);
  assert.equal(read.status, 200);
  assert.equal((await read.json()).body, "pack bags");
});
""",
    "status_only": JS_HEADER + """
test("creating answers 201", async () => {
  assert.equal((await create()).status, 201);
});
""",
    "wrong": JS_HEADER + """
test("expects a status the service never gives", async () => {
  assert.equal((await create()).status, 202);
});
""",
}


def _collection(*items: dict[str, Any]) -> str:
    return json.dumps({"info": {"name": "notes", "schema": "https://schema.getpostman.com/json/"
                                "collection/v2.1.0/collection.json"}, "item": list(items)})


def _item(name: str, method: str, url: str, tests: list[str],
          body: dict[str, Any] | None = None) -> dict[str, Any]:
    request: dict[str, Any] = {"method": method, "url": url}
    if body is not None:
        request["header"] = [{"key": "Content-Type", "value": "application/json"}]
        request["body"] = {"mode": "raw", "raw": json.dumps(body)}
    return {"name": name, "request": request,
            "event": [{"listen": "test", "script": {"exec": tests}}]}


CREATE = {"title": "Trip", "body": "pack bags"}
POSTMAN = {
    "strong": _collection(
        _item("create", "POST", "{{baseUrl}}/notes", [
            "pm.test('201', () => pm.response.to.have.status(201));",
            "pm.collectionVariables.set('id', pm.response.json().id);"], CREATE),
        _item("read", "GET", "{{base_url}}/notes/{{id}}", [
            "pm.test('stored text', () => pm.expect(pm.response.json().body).to.eql('pack bags'));"
        ])),
    "status_only": _collection(_item("create", "POST", "{{baseUrl}}/notes", [
        "pm.test('201', () => pm.response.to.have.status(201));"], CREATE)),
    "wrong": _collection(_item("create", "POST", "{{baseUrl}}/notes", [
        "pm.test('202', () => pm.response.to.have.status(202));"], CREATE)),
}


@pytest.mark.parametrize("runner", ["node", "newman"])
def test_golden_style_check(runner: str, tmp_path: Path) -> None:
    """A strong test kills both mutants of NOTE-01, a status-only one only the status mutant,
    and one that fails on the original is invalid (its kills do not count)."""
    corpus = JS if runner == "node" else POSTMAN
    tests = {name: (code, runner) for name, code in corpus.items()}
    results = _run_all(tests, ["original", "NOTE-01-M1", "NOTE-01-M2"], tmp_path)
    outcome = {key: result.outcome for key, result in results.items()}
    assert outcome[("strong", "original")] is Outcome.PASS, results[("strong", "original")]
    assert outcome[("strong", "NOTE-01-M1")] is Outcome.FAIL
    assert outcome[("strong", "NOTE-01-M2")] is Outcome.FAIL
    assert outcome[("status_only", "original")] is Outcome.PASS
    assert outcome[("status_only", "NOTE-01-M1")] is Outcome.FAIL
    assert outcome[("status_only", "NOTE-01-M2")] is Outcome.PASS
    assert outcome[("wrong", "original")] is Outcome.FAIL
    strong = results[("strong", "original")]
    assert len(strong.tests) >= 1 and all(t.outcome == "passed" for t in strong.tests)


def test_results_map_to_pass_fail_error_as_pytest_s_do(tmp_path: Path) -> None:
    tests = {
        "js_exception": (JS_HEADER + 'test("x", () => { null.boom(); });\n', "node"),
        "js_syntax": (JS_HEADER + 'test("x", () => { assert.ok(true) ;;; }}\n', "node"),
        "js_no_test": (JS_HEADER, "node"),
        "js_skipped": (JS_HEADER + 'test("x", { skip: true }, () => {});\n', "node"),
        "js_cjs": (('const { test } = require("node:test");\n'
                   'const assert = require("node:assert");\n'
                   'test("x", async () => { const r = await fetch(process.env.BASE_URL + '
                   '"/notes"); assert.strictEqual(r.status, 200); });\n'), "node"),
        "js_loops": (JS_HEADER + 'test("x", () => { for (;;) {} });\n', "node"),
        "pm_no_answer": (_collection(_item("x", "GET", "http://127.0.0.1:5999/", [
            "pm.test('200', () => pm.response.to.have.status(200));"])), "newman"),
        "pm_script_error": (_collection(_item("x", "GET", "{{baseUrl}}/notes", [
            "pm.test('t', () => { undefinedFunction(); });"])), "newman"),
        "pm_not_json": (_collection(_item("x", "GET", "{{baseUrl}}/notes", [
            "pm.test('t', () => pm.expect(JSON.parse('{').a).to.eql(1));"])), "newman"),
        "pm_no_assertion": (_collection(_item("x", "GET", "{{baseUrl}}/notes", [])), "newman"),
        "pm_broken": ("{ not json", "newman"),
    }
    results = _run_all(tests, ["original"], tmp_path, timeout_s=8.0)
    outcome = {name: results[(name, "original")] for name in tests}
    assert outcome["js_cjs"].outcome is Outcome.PASS, outcome["js_cjs"]
    for name in tests:
        if name != "js_cjs":
            assert outcome[name].outcome is Outcome.ERROR, (name, outcome[name])
    assert "TypeError" in outcome["js_exception"].reason
    assert "collection error" in outcome["js_syntax"].reason
    assert "failed outside its tests" in outcome["js_syntax"].reason
    assert outcome["js_no_test"].reason == "no test ran"
    assert outcome["js_skipped"].reason == "every test was skipped"
    assert outcome["js_loops"].reason == "time limit (8 s, --timeout) reached: timed out"
    assert outcome["pm_no_answer"].reason.startswith("x (request) (call): Error: connect")
    assert "ReferenceError" in outcome["pm_script_error"].reason
    assert outcome["pm_no_assertion"].reason == "no test ran"


def test_a_javascript_test_that_fills_its_heap_is_an_error_naming_the_limit(
        tmp_path: Path) -> None:
    """Before: "failed outside its tests (a syntax error, or an error at load time)". Node
    takes seconds of collection before it gives up, so this one has a time limit of its own."""
    hoard = JS_HEADER + ('test("hoards memory", () => {\n  const kept = [];\n'
                         '  for (;;) { kept.push(new Array(3e7)); }\n});\n')
    result = _run_all({"hoard": (hoard, "node")}, ["original"], tmp_path,
                      timeout_s=120.0)[("hoard", "original")]
    assert result.outcome is Outcome.ERROR
    assert result.reason.startswith("memory limit (JS heap 1024 MiB) reached: "), result.reason


def test_files_picks_the_runner_by_extension_and_scores(tmp_path: Path) -> None:
    assert runner_for_file("NOTE-01.test.js") == "node"
    assert runner_for_file("NOTE-01.test.mjs") == "node"
    assert runner_for_file("test_NOTE-01.postman_collection.json") == "newman"
    assert runner_for_file("NOTE-01.py") == "pytest"
    folder = tmp_path / "tests" / "precise"
    folder.mkdir(parents=True)
    (folder / "NOTE-01.test.mjs").write_text(JS["strong"])
    (folder / "test_NOTE-02.postman_collection.json").write_text(_collection(
        _item("refused", "POST", "{{baseUrl}}/notes", [
            "pm.test('refused', () => pm.expect(pm.response.code).to.be.within(400, 499));"],
              {"title": "", "body": "x"})))
    shutil.copy(NOTES / "golden" / "test_NOTE-03.py", folder / "NOTE-03.py")
    out = tmp_path / "out"
    ran = restbench("run", "-s", NOTES, "-g", "files", "-a", f"files.dir={tmp_path / 'tests'}",
                    "-V", "precise", "-o", out)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    rows = {row["requirement"]: row for row in _csv(out / "requirements.csv")}
    assert float(rows["NOTE-01"]["killed"]) == 2  # the strong JavaScript test
    assert float(rows["NOTE-02"]["killed"]) == 1  # "any 4xx" kills M1 (201), not M2 (400)
    assert float(rows["NOTE-03"]["killed"]) == 1
    again = restbench("run", "-s", NOTES, "-g", "files", "-a",
                      f"files.dir={tmp_path / 'tests'}", "-V", "precise", "-o", out)
    assert "0 executions made, 11 reused" in again.stdout  # the runner is part of the key
    # Stryker's format names each test file as the sandbox does (by its runner) and each source
    # by its language
    # (before: every test a .py file, and the notes service's JavaScript "python")
    from restbench.reports.load import load_run
    from restbench.reports.stryker import stryker_report

    exported = stryker_report(load_run(out), "files", "-", "precise")
    assert sorted(exported["testFiles"]) == [
        "notes/NOTE-01.test.js", "notes/NOTE-02.postman_collection.json", "notes/NOTE-03.py"]
    assert {file["language"] for file in exported["files"].values()} == {"javascript"}


def _csv(path: Path) -> list[dict[str, str]]:
    import csv

    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_a_missing_newman_names_the_setup_command(tmp_path: Path) -> None:
    folder = tmp_path / "tests"
    folder.mkdir()
    (folder / "NOTE-01.postman_collection.json").write_text(POSTMAN["strong"])
    import os
    import subprocess
    import sys

    env = {**os.environ, "RESTBENCH_TOOLS_DIR": str(tmp_path / "no-tools"), "COLUMNS": "300"}
    ran = subprocess.run([sys.executable, "-m", "restbench.cli", "run", "-s", str(NOTES), "-g",
                          "files", "-a", f"files.dir={folder}", "-R", "NOTE-01", "-V", "precise",
                          "-o", str(tmp_path / "out")], capture_output=True, text=True, env=env,
                         timeout=300, check=False)
    assert ran.returncode == 2, ran.stdout + ran.stderr  # the run stops: no test was to blame
    error = [line for line in ran.stderr.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and error[0].startswith("error: newman 6.2.2 is not installed")
    assert error[0].endswith("run 'restbench setup newman'")


def test_setup_where_no_folder_can_be_made_is_one_line(tmp_path: Path) -> None:
    """Before: a NotADirectoryError traceback."""
    (tmp_path / "a-file").write_text("")
    done = restbench("setup", "newman", env={**os.environ,
                                              "RESTBENCH_TOOLS_DIR": str(tmp_path / "a-file")})
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"error: {tmp_path / 'a-file' / 'newman-6.2.2'} "
                           "($RESTBENCH_TOOLS_DIR): cannot make the folder newman goes in: "
                           f"{tmp_path / 'a-file'} is a file, not a folder\n")
    # Before: "Invalid value for '{newman}'", the choices where the argument's name goes
    done = restbench("setup", "nosuch")
    assert done.stderr.startswith("error: Invalid value for 'TOOL': 'nosuch' is not 'newman'.")


@pytest.mark.parametrize("node", ["missing", "broken"])
def test_a_missing_or_broken_node_stops_the_run_instead_of_failing_the_generator(
        tmp_path: Path, node: str) -> None:
    """Before: each JavaScript test was a failed generation (MS 0%, "a rerun tries them again"),
    and a node that does not run was reported as "version 0"."""
    import os
    import subprocess
    import sys

    folder = tmp_path / "tests"
    folder.mkdir()
    (folder / "TODO-01.test.mjs").write_text(TODO_01_JS)
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    if node == "broken":
        (bin_folder / "node").write_text("#!/bin/sh\nexit 3\n")
        (bin_folder / "node").chmod(0o755)
    env = {**os.environ, "PATH": str(bin_folder)}
    ran = subprocess.run([sys.executable, "-m", "restbench.cli", "run", "-s", "todo", "-g",
                          "files", "-a", f"files.dir={folder}", "-R", "TODO-01", "-V", "precise",
                          "-o", str(tmp_path / "out")], capture_output=True, text=True, env=env,
                         timeout=300, check=False)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    error = [line for line in ran.stderr.splitlines() if line.startswith("error:")]
    expected = "which is not installed" if node == "missing" else \
        f"{bin_folder / 'node'} does not run"
    assert len(error) == 1 and "runner 'node' needs Node.js" in error[0], ran.stderr
    assert expected in error[0] and "failed on TODO-01" not in ran.stderr


TODO_01_JS = """import { test } from "node:test";
import assert from "node:assert/strict";
const BASE_URL = process.env.BASE_URL ?? "http://localhost:8000";
const post = (path, body) => fetch(`${BASE_URL}${path}`, { method: "POST",
  headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

test("a new account logs in and starts with no todos", async () => {
  const account = { email: "carol@example.com", password: "Carol123!" };
  const registered = await post("/users/register", account);
  assert.equal(registered.status, 200);
  const login = await post("/users/login", account);
  assert.equal(login.status, 200);
  const { accessToken } = await login.json();
  const todos = await fetch(`${BASE_URL}/todos`,
                            { headers: { authorization: `Bearer ${accessToken}` } });
  assert.equal(todos.status, 200);
  assert.deepEqual(await todos.json(), []);
  const info = await fetch(`${BASE_URL}/users/manage/info`,
                           { headers: { authorization: `Bearer ${accessToken}` } });
  assert.equal(info.status, 200);
  assert.deepEqual(await info.json(), { email: "carol@example.com", isEmailConfirmed: false });
});
"""


def test_todo_scored_through_files_in_javascript_and_postman(tmp_path: Path) -> None:
    """On the built-in todo service: the JavaScript port of TODO-01's golden test kills all its
    mutants; a collection that checks only registration's status kills one."""
    folder = tmp_path / "tests"
    (folder / "precise").mkdir(parents=True)
    (folder / "vague").mkdir()
    (folder / "precise" / "TODO-01.test.mjs").write_text(TODO_01_JS)
    (folder / "vague" / "TODO-01.postman_collection.json").write_text(_collection(
        _item("register", "POST", "{{baseUrl}}/users/register",
              ["pm.test('200', () => pm.response.to.have.status(200));"],
              {"email": "carol@example.com", "password": "Carol123!"})))
    out = tmp_path / "out"
    ran = restbench("run", "-s", "todo", "-R", "TODO-01", "-g", "files", "-a", f"dir={folder}",
                    "-o", out)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    rows = {row["variant"]: row for row in _csv(out / "requirements.csv")}
    mutants = len(resolve_services(["todo"])[0].requirement("TODO-01").mutants)
    assert float(rows["precise"]["killed"]) == mutants == float(rows["precise"]["mutants"])
    assert float(rows["vague"]["killed"]) == 1


def test_test_workers_look_for_tools_where_the_harness_does(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: a worker starts without the harness's HOME, so with another HOME (and no
    $RESTBENCH_TOOLS_DIR) the sandbox showed, and newman ran from, the account's default
    folder, not the one `restbench setup newman` had installed into."""
    from restbench.execution import Executor

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("RESTBENCH_TOOLS_DIR", raising=False)

    async def worker_environment() -> dict[str, str]:
        async with Executor(1, 10, tmp_path / "exec") as executor:
            deadline = asyncio.get_running_loop().time() + 60
            while not executor._all:
                assert asyncio.get_running_loop().time() < deadline
                await asyncio.sleep(0.05)
            raw = Path(f"/proc/{executor._all[0].pid}/environ").read_bytes()
        return dict(item.split("=", 1) for item in raw.decode().split("\0") if "=" in item)

    environment = asyncio.run(worker_environment())
    assert environment["RESTBENCH_TOOLS_DIR"] == str(tmp_path / "home/.local/share/restbench/tools")
