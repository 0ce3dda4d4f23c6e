"""`-a single-step.language=javascript|postman|python` (and refine's): the writer is asked for
that kind of test, the answer's code is taken out, and the test runs on the matching runner.
End to end against the scripted fake endpoint, on the notes service (Node.js, external)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from restbench.cache_folder import CACHE_ENV
from restbench.errors import GeneratorError
from restbench.generators.languages import JAVASCRIPT, POSTMAN, language_named
from restbench.generators.prompts import WRITER_SYSTEM
from restbench.llm.extract import NoCodeError
from restbench.llm.fake import FakeLLMServer
from tests.cli_helpers import restbench

NOTES = Path(__file__).parents[1] / "fixtures" / "notes"

STRONG_JS = """import { test } from "node:test";
import assert from "node:assert/strict";
const BASE_URL = process.env.BASE_URL ?? "http://localhost:8000";

test("a new note is stored with its text", async () => {
  const response = await fetch(`${BASE_URL}/notes`, { method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ title: "Trip", body: "pack bags" }) });
  assert.equal(response.status, 201);
  const note = await response.json();
  const read = await fetch(`${BASE_URL}/notes/${note.id}`);
  assert.equal((await read.json()).body, "pack bags");
});
"""

STATUS_ONLY_COLLECTION = json.dumps({
    "info": {"name": "NOTE-01", "schema": "https://schema.getpostman.com/json/collection/"
             "v2.1.0/collection.json"},
    "item": [{"name": "create", "request": {
        "method": "POST", "url": "{{baseUrl}}/notes",
        "header": [{"key": "Content-Type", "value": "application/json"}],
        "body": {"mode": "raw", "raw": "{\"title\": \"Trip\", \"body\": \"pack bags\"}"}},
        "event": [{"listen": "test", "script": {
            "exec": ["pm.test('201', () => pm.response.to.have.status(201));"]}}]}]},
    indent=1)


@pytest.fixture
def endpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
             ) -> Iterator[Callable[[Any], FakeLLMServer]]:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    servers: list[FakeLLMServer] = []

    def start(script: Any) -> FakeLLMServer:
        fake = FakeLLMServer(script).__enter__()
        servers.append(fake)
        config = tmp_path / "models.toml"
        config.write_text(f'[defaults]\nbase_url = "{fake.base_url}"\napi_key_env = "TEST_KEY"\n'
                          "max_retries = 2\nretry_base_s = 0.01\ntimeout_s = 10\n")
        monkeypatch.setenv("RESTBENCH_LLM_CONFIG", str(config))
        monkeypatch.setenv("TEST_KEY", "sk-test")
        return fake

    yield start
    for fake in servers:
        fake.__exit__()


def _run(output: Path, generator: str, *args: str) -> Any:
    return restbench("run", "-s", NOTES, "-R", "NOTE-01", "-V", "precise", "-g", generator,
                     "-m", "gpt-5-mini", *args, "-o", output)


def _generations(output: Path, target: str = "") -> list[tuple[str, str, dict[str, Any]]]:
    with sqlite3.connect(output / "results.sqlite3") as db:
        rows = db.execute("SELECT generator, code, details FROM generations"
                          + (" WHERE target = ?" if target else ""),
                          (target,) if target else ()).fetchall()
    return [(generator, code, json.loads(details)) for generator, code, details in rows]


def _score(output: Path) -> dict[str, Any]:
    (row,) = json.loads((output / "scores.json").read_text())["scores"]
    return dict(row)


def test_single_step_writes_javascript_run_by_node(
        tmp_path: Path, endpoint: Callable[[Any], FakeLLMServer]) -> None:
    fake = endpoint(lambda request: f"Here it is.\n```javascript\n{STRONG_JS}```\n")
    output = tmp_path / "out"
    ran = _run(output, "single-step", "-a", "single-step.language=javascript")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    system = fake.requests[0]["messages"][0]["content"]
    assert system == JAVASCRIPT.writer_system and "node --test" in system
    assert fake.requests[0]["messages"][1]["content"].endswith(
        "Write the JavaScript test file for the requirement.")
    ((generator, code, details),) = _generations(output)
    assert generator == "single-step[language=javascript]"
    assert code == STRONG_JS and details["runner"] == "node"
    score = _score(output)
    assert score["validity_rate"] == 1.0 and score["killed_mean"] == 2  # both NOTE-01 mutants


def test_single_step_writes_a_postman_collection_run_by_newman(
        tmp_path: Path, endpoint: Callable[[Any], FakeLLMServer]) -> None:
    fake = endpoint(lambda request: f"```json\n{STATUS_ONLY_COLLECTION}\n```")
    output = tmp_path / "out"
    ran = _run(output, "single-step", "-a", "single-step.language=postman")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert fake.requests[0]["messages"][0]["content"] == POSTMAN.writer_system
    ((_, code, details),) = _generations(output)
    assert json.loads(code)["item"][0]["name"] == "create" and details["runner"] == "newman"
    score = _score(output)
    assert score["validity_rate"] == 1.0 and score["killed_mean"] == 1  # the status mutant only


def test_refine_runs_its_javascript_drafts_on_the_live_service(
        tmp_path: Path, endpoint: Callable[[Any], FakeLLMServer]) -> None:
    wrong = STRONG_JS.replace("assert.equal(response.status, 201)",
                              "assert.equal(response.status, 200)")

    def script(request: dict[str, Any]) -> str:
        system = request["messages"][0]["content"]
        if system.startswith("You review"):
            user = request["messages"][1]["content"]
            assert "```javascript" in user and "Test runner output:" in user
            return "REFINE\nThe status is wrong." if "status, 200" in user else "FINISH\nGood."
        if len(request["messages"]) > 2:  # the revision request
            assert "Test runner output:" in request["messages"][-1]["content"]
            return f"```javascript\n{STRONG_JS}```"
        return f"```javascript\n{wrong}```"

    endpoint(script)
    output = tmp_path / "out"
    ran = _run(output, "refine", "-a", "refine.language=javascript", "-a", "refine.rounds=2")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # the draft written for the original; those for mutants ran on the mutant's live server
    original = next(d for g, _, d in _generations(output, "original")
                    if d["rounds"][0]["code"] == wrong
                    and d["stopped"] == "finished" and len(d["rounds"]) == 2)
    first, second = original["rounds"]
    assert first["outcome"] == "fail" and "POST /notes -> 201" in first["trace"]
    assert second["outcome"] == "pass" and original["runner"] == "node"


def test_unknown_language_and_answers_of_the_wrong_kind() -> None:
    with pytest.raises(GeneratorError, match="unknown language 'cobol'"):
        language_named("cobol", "single-step")
    with pytest.raises(NoCodeError):
        POSTMAN.extract("```python\ndef test_x():\n    assert True\n```")
    with pytest.raises(NoCodeError):
        JAVASCRIPT.extract("```json\n{\"item\": []}\n```")
    assert JAVASCRIPT.extract(f"```js\n{STRONG_JS}```") == STRONG_JS
    assert language_named("python", "refine").writer_system == WRITER_SYSTEM
