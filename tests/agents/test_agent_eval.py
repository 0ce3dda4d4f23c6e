"""`restbench agent-eval` end to end: real todo service, the fake LLM endpoint, real subprocesses."""

from __future__ import annotations

import csv
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from restbench.llm.fake import FakeLLMServer, Reply
from restbench.llm.prices import usd
from tests.cli_helpers import restbench, start_interruptible

ROOT = Path(__file__).parents[2]
LOGIN = "todo_login_users_login_post"
ALICE = {"email": "alice@example.com", "password": "Alice123!"}
BOB = {"email": "bob@example.com", "password": "Bob123!"}
LIST = "todo_list_todos_todos_get"
GET = "todo_get_todo_todos_id_get"
CREATE = "todo_create_todo_todos_post"
PERFECT = "Alice has Buy milk and Pay the electricity bill."


def _case(name: str, intent: str, response: str, keywords: list[str],
          calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return {"name": name, "description": name, "intent": intent,
            "expected_output": {"response": response, "keywords": keywords,
                                "tool_calls": [{"name": n, "args": a} for n, a in calls]}}


SUITE = {"name": "todo-e2e", "test_cases": [
    _case("perfect", "List alice's todos.", PERFECT, ["Buy milk", "electricity bill"],
          [(LOGIN, ALICE), (LIST, {})]),
    _case("missing_and_unexpected", "Is alice's todo 2 done?", "Yes, todo 2 is done.",
          ["electricity"], [(LOGIN, ALICE), (GET, {"id": 2})]),
    _case("keyword_miss", "Which todos does bob have?", "Bob has todo 3, Book a dentist "
          "appointment.", ["dentist", "todo 3"], [(LOGIN, BOB), (LIST, {})]),
    _case("claimed_not_sent", "Show alice's todo 1.", "Todo 1 is Buy milk.", ["Buy milk"],
          [(LOGIN, ALICE), (GET, {"id": 1})]),
    _case("step_limit", "List my todos.", "You have no todos.", ["todos"],
          [(LOGIN, ALICE), (LIST, {})]),
]}

# What the model does for each intent, step by step (a step is one model call).
SCRIPTS: dict[str, list[Reply]] = {
    "List alice's todos.": [Reply(tool_calls=[(LOGIN, ALICE)]), Reply(tool_calls=[(LIST, {})]),
                            Reply(content=PERFECT)],
    "Is alice's todo 2 done?": [Reply(tool_calls=[(LOGIN, ALICE)]),
                                Reply(tool_calls=[(LIST, {})]),
                                Reply(content="Yes: Pay the electricity bill is done.")],
    "Which todos does bob have?": [Reply(tool_calls=[(LOGIN, BOB), (LIST, {})]),
                                   Reply(content="Bob has one: Book a dentist appointment.")],
    "Show alice's todo 1.": [Reply(tool_calls=[(LOGIN, ALICE)]), Reply(tool_calls=[(GET, {})]),
                             Reply(content="Todo 1 is Buy milk.")],
    "List my todos.": [Reply(tool_calls=[(LIST, {})])] * 3,
}


def _script(delay_intent: str | None = None):
    def reply(request: dict[str, Any]) -> Reply:
        intent = request["messages"][1]["content"]
        step = sum(1 for m in request["messages"] if m["role"] == "assistant")
        if intent == delay_intent and step >= 1:  # its first answer comes, and is paid for
            return Reply(content="late", delay_s=30)
        return SCRIPTS[intent][step]
    return reply


@pytest.fixture
def suite_file(tmp_path: Path) -> Path:
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(SUITE))
    return path


@pytest.fixture
def fake_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESTBENCH_LLM_API_KEY", "test-key")
    monkeypatch.delenv("RESTBENCH_LLM_CONFIG", raising=False)


def _scores(result: dict[str, Any]) -> tuple[float, float, float]:
    score = result["score"]
    return score["keyword_score"], score["tool_call_score"], score["response_score"]


def test_llm_agent_scored_from_the_http_side(suite_file: Path, tmp_path: Path,
                                             fake_env: None,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeLLMServer(_script()) as fake:
        monkeypatch.setenv("RESTBENCH_LLM_BASE_URL", fake.base_url)
        out = tmp_path / "out"
        done = restbench("agent-eval", "-t", suite_file, "-s", "todo", "-r", out,
                         "-m", "fake-model", "--max-steps", "3", "--scoring", "exact",
                         cwd=tmp_path)
        requests = fake.requests
    assert done.returncode == 0, done.stderr
    assert "Agent evaluation: llm (fake-model)" in done.stdout and "Traceback" not in done.stderr
    data = json.loads((out / "results.json").read_text())
    results = {r["test_name"]: r for r in data["results"]}
    assert [r["index"] for r in data["results"]] == [0, 1, 2, 3, 4]

    perfect = results["perfect"]
    assert _scores(perfect) == (1.0, 1.0, 1.0)
    assert perfect["score"]["response_scoring_type"] == "exact"
    assert perfect["agent"] == {"steps": 3, "cost_usd": 0.0, "input_tokens": 300,
                                "output_tokens": 150, "duration_s": perfect["agent"][
                                    "duration_s"], "error": None}
    assert [c["status"] for c in perfect["details"]["actual_tool_calls"]] == [200, 200]

    # login + list instead of login + get(2): 1 matched / (2 expected + 1 unexpected)
    missing = results["missing_and_unexpected"]
    assert _scores(missing) == (1.0, 0.3333, 0.0)
    assert [(m["type"], (m["expected"] or m["actual"])["name"])
            for m in missing["details"]["tool_call_mismatches"]] == [
        ("missing", GET), ("unexpected", LIST)]

    keyword = results["keyword_miss"]
    assert keyword["score"]["keyword_score"] == 0.5
    assert keyword["details"]["missing_keywords"] == ["todo 3"]
    assert keyword["details"]["expected_keywords"] == ["dentist", "todo 3"]

    # the model asked for get_todo without an id: no request reached the service, so it is
    # missing even though the agent claims it
    claimed = results["claimed_not_sent"]
    assert [c["name"] for c in claimed["details"]["claimed_tool_calls"]] == [LOGIN, GET]
    assert [c["name"] for c in claimed["details"]["actual_tool_calls"]] == [LOGIN]
    assert claimed["score"]["tool_call_score"] == 0.5

    # three unauthenticated list calls, no answer: the right call answered 401 is no match, but
    # a failed call (not an extra one); 0 matched / (2 + 2 extra)
    limited = results["step_limit"]
    assert _scores(limited) == (0.0, 0.0, 0.0)
    assert [c["status"] for c in limited["details"]["actual_tool_calls"]] == [401] * 3
    assert [m["type"] for m in limited["details"]["tool_call_mismatches"]] == [
        "failed call", "missing", "unexpected", "unexpected"]
    assert limited["details"]["tool_call_mismatches"][0]["actual"]["status"] == 401
    assert limited["details"]["agent_details"]["stopped"] == "step limit (3) reached"

    summary = data["summary"]
    assert summary["total_tests"] == summary["planned_tests"] == 5 and summary["complete"]
    assert summary["avg_tool_call_score"] == round((1 + 1 / 3 + 1 + 0.5 + 0) / 5, 4)
    assert summary["input_tokens"] == 100 * len(requests)
    with (out / "results.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["test_name"], r["tool_call_score"]) for r in rows][:2] == [
        ("perfect", "1.0"), ("missing_and_unexpected", "0.3333")]
    assert rows[1]["tool_call_mismatches"] == f"missing: {GET}; unexpected: {LIST}"

    # what the model saw: every operation as a tool (names cut to 64 characters), the seeded
    # accounts from the API description, then the service's real answers
    first = requests[0]
    names = [tool["function"]["name"] for tool in first["tools"]]
    assert LIST in names and len(names) == 14 and max(map(len, names)) <= 64
    assert "alice@example.com" in first["messages"][0]["content"]
    tool_answer = next(m for m in requests[2]["messages"] if m["role"] == "tool"
                       and "Buy milk" in m["content"])
    assert json.loads(tool_answer["content"])["status"] == 200


def test_an_interrupted_run_keeps_the_finished_cases(suite_file: Path, tmp_path: Path,
                                                     fake_env: None) -> None:
    out = tmp_path / "out"
    scripts = {"slow": _script(delay_intent="Is alice's todo 2 done?"), "quick": _script()}
    script = "slow"
    with FakeLLMServer(lambda request: scripts[script](request)) as fake:
        env = {**os.environ, "RESTBENCH_LLM_BASE_URL": fake.base_url}
        process = start_interruptible("agent-eval", "-t", suite_file, "-s", "todo", "-r", out,
                                      "-m", "fake-model", "--max-steps", "3", cwd=tmp_path,
                                      env=env)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            done = out / "results.json"
            if done.exists() and json.loads(done.read_text())["summary"]["total_tests"] == 1:
                break
            time.sleep(0.2)
        while time.monotonic() < deadline:  # until the second case waits for its second answer
            if sum(r["messages"][1]["content"] == "Is alice's todo 2 done?"
                   for r in fake.requests) == 2:
                break
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 130, stderr
        assert "interrupted; the finished cases are in" in stderr
        data = json.loads((out / "results.json").read_text())
        assert data["summary"]["total_tests"] == 1 and not data["summary"]["complete"]
        # the interrupted case's first answer was paid for: before, it was recorded nowhere
        assert (data["summary"]["unrecorded_input_tokens"],
                data["summary"]["unrecorded_output_tokens"]) == (100, 50)
        assert data["summary"]["planned_tests"] == 5
        assert data["results"][0]["test_name"] == "perfect"
        assert len((out / "results.csv").read_text().splitlines()) == 2
        script = "quick"

        def resume(*extra: str) -> tuple[dict[str, Any], list[str], str]:
            asked = len(fake.requests)
            done = subprocess.run([sys.executable, "-m", "restbench.cli", "agent-eval", "-t",
                                   suite_file, "-s", "todo", "-r", out, "-m", "fake-model",
                                   "--max-steps", "3", *extra], cwd=tmp_path, env=env,
                                  capture_output=True, text=True, timeout=300, check=False)
            intents = [request["messages"][1]["content"] for request in fake.requests[asked:]]
            assert done.returncode == 0, done.stderr
            return json.loads((out / "results.json").read_text()), intents, done.stderr

        # The same command again runs only the cases that did not finish.
        resumed, intents, stderr = resume()
        assert "1 finished cases taken from" in stderr
        assert "List alice's todos." not in intents
        assert resumed["summary"]["total_tests"] == 5 and resumed["summary"]["complete"]
        # the interrupted case's paid first answer was kept and reused: its two other steps
        # were asked, and its cost is the case's now, not unrecorded
        assert intents.count("Is alice's todo 2 done?") == 2
        assert resumed["summary"]["unrecorded_input_tokens"] == 0
        rerun_case = resumed["results"][1]
        assert rerun_case["details"]["reused_model_calls"] == 1
        assert rerun_case["agent"]["input_tokens"] == 300
        assert resumed["results"][0] == data["results"][0]
        # Nothing left to run; --fresh runs every case again and asks the model again.
        again, intents, _ = resume()
        assert intents == [] and again["results"] == resumed["results"]
        fresh, intents, _ = resume("--fresh")
        assert "List alice's todos." in intents
        assert fresh["summary"]["unrecorded_input_tokens"] == 0
        assert fresh["summary"]["reused_model_calls"] == 0
        assert [_scores(r) for r in fresh["results"]] == [_scores(r) for r in resumed["results"]]


def test_a_rerun_replays_the_answers_an_earlier_attempt_paid_for(
        tmp_path: Path, fake_env: None) -> None:
    """Before: agent-eval kept no model answers. A case whose model failed at its third step
    paid for its first two again, and changing only the scoring paid for every case's agent
    again. The service's answers hold a new login token on each run, so the requests are not
    byte-identical; the replay holds as long as the case, the agent and the service's code do."""
    suite = {"name": "todo", "test_cases": [SUITE["test_cases"][0]]}
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite))
    agent = _script()
    down = True

    def reply(request: dict[str, Any]) -> Reply:
        step = sum(1 for m in request["messages"] if m["role"] == "assistant")
        return Reply(status=500) if down and step == 2 else agent(request)

    def tool_answers(request: dict[str, Any]) -> list[str]:
        return [m["content"] for m in request["messages"] if m["role"] == "tool"]

    out = tmp_path / "out"
    with FakeLLMServer(reply) as fake:
        config = tmp_path / "models.toml"
        config.write_text(f'[defaults]\nbase_url = "{fake.base_url}"\nmax_retries = 0\n'
                          '[models.fake-model]\nmodel = "fake-model"\n')

        def evaluate(*extra: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
            asked = len(fake.requests)
            done = restbench("agent-eval", "-t", path, "-s", "todo", "-r", out, "-m",
                             "fake-model", "--llm-config", config, *extra, cwd=tmp_path)
            assert done.returncode == (1 if down else 0), done.stderr
            return json.loads((out / "results.json").read_text()), fake.requests[asked:]

        failed, first_requests = evaluate()
        down = False
        data, requests = evaluate()
        rescored, rescoring_requests = evaluate("--scoring", "exact")
        fresh, fresh_requests = evaluate("--scoring", "exact", "--fresh")

    assert "HTTP 500" in failed["results"][0]["agent"]["error"]
    assert failed["results"][0]["agent"]["input_tokens"] == 200
    # only the third step was asked; the login's token in the service's answer is new
    assert len(requests) == 1
    assert tool_answers(requests[0]) != tool_answers(first_requests[2])
    [result] = data["results"]
    assert result["agent"]["error"] is None and result["score"]["tool_call_score"] == 1.0
    assert (result["agent"]["steps"], result["agent"]["input_tokens"]) == (3, 300)
    assert result["details"]["reused_model_calls"] == 2
    # the failed attempt's 200 tokens are in this case's 300 now, not counted twice
    assert data["summary"]["unrecorded_input_tokens"] == 0
    assert data["summary"]["reused_model_calls"] == 2

    # other scoring: the case is scored again, and its agent is not paid again
    assert rescoring_requests == []
    [rescored_result] = rescored["results"]
    assert rescored_result["score"]["response_scoring_type"] == "exact"
    assert rescored_result["details"]["reused_model_calls"] == 3
    assert rescored_result["details"]["actual_tool_calls"] == result["details"][
        "actual_tool_calls"]
    assert rescored["summary"]["unrecorded_input_tokens"] == 0  # 300 taken back
    # --fresh asks the model again
    assert len(fresh_requests) == 3 and "reused_model_calls" not in fresh["results"][0]["details"]
    assert fresh["results"][0]["score"] == rescored_result["score"]


def test_a_plugin_agent_by_module_attribute_graded_by_a_judge(
        tmp_path: Path, fake_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = {"name": "todo", "test_cases": [SUITE["test_cases"][0]]}
    path = tmp_path / "plugin.json"
    path.write_text(json.dumps(suite))
    verdict = Reply(content='{"score": 0.9, "reason": "same facts"}', usage=(40, 10))
    with FakeLLMServer([verdict]) as judge:
        monkeypatch.setenv("RESTBENCH_LLM_BASE_URL", judge.base_url)
        done = restbench("agent-eval", "-t", path, "-r", tmp_path / "out", "-a",
                         "tests.agents.plugin_agents:DirectHttpAgent", "--scoring", "llm-judge",
                         "--judge-model", "fake-judge", cwd=ROOT)
        judged = judge.requests
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    result = data["results"][0]
    assert result["score"]["tool_call_score"] == 1.0  # what the service saw, not the claim
    assert result["score"]["keyword_score"] == 1.0
    assert (result["score"]["response_score"], result["score"]["response_scoring_type"]) == \
        (0.9, "llm-judge")
    assert result["details"]["judge_reason"] == "same facts"
    assert data["summary"]["judge_input_tokens"] == 40 and data["summary"]["agent"] == \
        "direct-http"
    assert "Alice has Buy milk and Pay the electricity bill." in \
        judged[0]["messages"][1]["content"]
    assert result["details"]["claimed_tool_calls"] == [
        {"name": "todo_delete_todo_todos_id_delete", "args": {"id": 1}}]
    assert [c["request"] for c in result["details"]["actual_tool_calls"]] == [
        "POST /users/login", "GET /todos"]


def test_a_judge_that_gives_no_score_scores_nothing_and_fails_its_case(
        tmp_path: Path, fake_env: None) -> None:
    """Before: a judge down (HTTP 500) gave the case 0.0, and one answering with code 1.0 (the
    "8000" of localhost:8000 read as 80, clamped): both went into avg_response_score."""
    suite = {"name": "todo", "test_cases": [
        _case(name, intent, PERFECT, [], [(LOGIN, ALICE), (LIST, {})])
        for name, intent in (("down", "Judge down."), ("code", "Judge answers with code."),
                             ("scored", "Judge scores."))]}
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite))
    verdicts = {"Judge down.": Reply(status=500),
                "Judge answers with code.": Reply(
                    content='```python\nBASE_URL = "http://localhost:8000"\n```',
                    usage=(40, 10)),
                "Judge scores.": Reply(content='{"score": 0.5, "reason": "half"}')}

    def reply(request: dict[str, Any]) -> Reply:
        return next(v for intent, v in verdicts.items()
                    if intent in request["messages"][1]["content"])

    with FakeLLMServer(reply) as judge:
        config = tmp_path / "models.toml"
        config.write_text(f'[defaults]\nbase_url = "{judge.base_url}"\nmax_retries = 0\n'
                          '[models.judge]\nmodel = "judge"\nprice = "gpt-5-mini"\n')
        command = ("agent-eval", "-t", path, "-s", "todo", "-r", tmp_path / "out", "-a",
                   "golden", "--scoring", "llm-judge", "--judge-model", "judge",
                   "--llm-config", config)
        done = restbench(*command, cwd=tmp_path)
        first = json.loads((tmp_path / "out" / "results.json").read_text())
        rerun = restbench(*command, cwd=tmp_path)  # the two failed cases are judged again
    assert rerun.returncode == 1, rerun.stderr
    assert "1 finished cases taken from" in rerun.stderr + rerun.stdout
    assert "0 to run, 2 to judge again" in rerun.stderr + rerun.stdout
    assert first["summary"]["unrecorded_input_tokens"] == 0
    again = json.loads((tmp_path / "out" / "results.json").read_text())
    # the "code" case's result holds both of its judge answers (40 + 40 tokens): none is lost
    assert again["summary"]["unrecorded_input_tokens"] == 0
    assert {r["test_name"]: r["judge"]["input_tokens"] for r in again["results"]}["code"] == 80
    assert again["summary"]["judge_input_tokens"] == \
        first["summary"]["judge_input_tokens"] + 40 + 0  # the 500 of "down" costs nothing
    assert done.returncode == 1, done.stderr
    assert "error: 2 of 3 cases ended in an error" in done.stderr
    data = first
    results = {r["test_name"]: r for r in data["results"]}
    assert [results[n]["score"]["response_score"] for n in ("down", "code", "scored")] == \
        [None, None, 0.5]
    assert "HTTP 500" in results["down"]["agent"]["error"]
    assert "gave no score (a JSON object with a \"score\" from 0 to 1)" in \
        results["code"]["agent"]["error"]
    assert results["code"]["judge"]["input_tokens"] == 40  # a judge answer is paid for
    summary = data["summary"]
    assert (summary["avg_response_score"], summary["response_scored_tests"]) == (0.5, 1)
    assert summary["errors"] == 2 and summary["judge_cost_usd"] > 0
    footer = next(line for line in done.stdout.splitlines() if "average of 3" in line)
    assert "0.50 (of 1)" in footer
    assert f"judge ${usd(summary['judge_cost_usd'])})" in footer
    with (tmp_path / "out" / "results.csv").open() as handle:
        assert [r["response_score"] for r in csv.DictReader(handle)] == ["", "", "0.5"]


def test_a_case_whose_judge_failed_is_judged_again_without_running_the_agent(
        tmp_path: Path, fake_env: None) -> None:
    """Before: a rerun ran (and paid) the agent again for a case whose answer only lacked a
    verdict."""
    suite = {"name": "todo", "test_cases": [SUITE["test_cases"][0]]}
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite))
    judge_up = False
    agent = _script()

    def reply(request: dict[str, Any]) -> Reply:
        if request["model"] != "judge":
            return agent(request)
        return Reply(content='{"score": 0.75, "reason": "close"}', usage=(30, 5)) if judge_up \
            else Reply(status=500)

    with FakeLLMServer(reply) as fake:
        config = tmp_path / "models.toml"
        config.write_text(f'[defaults]\nbase_url = "{fake.base_url}"\nmax_retries = 0\n'
                          '[models.judge]\nmodel = "judge"\n'
                          '[models.fake-model]\nmodel = "fake-model"\n')
        command = ("agent-eval", "-t", path, "-s", "todo", "-r", tmp_path / "out",
                   "-m", "fake-model", "--scoring", "llm-judge", "--judge-model", "judge",
                   "--llm-config", config)
        failed = restbench(*command, cwd=tmp_path)
        first = json.loads((tmp_path / "out" / "results.json").read_text())["results"][0]
        asked = len(fake.requests)
        judge_up = True
        rerun = restbench(*command, cwd=tmp_path)
        again = [r["model"] for r in fake.requests[asked:]]
    assert failed.returncode == 1 and first["agent"]["error"].startswith("judge: ")
    assert rerun.returncode == 0, rerun.stderr
    assert again == ["judge"]  # the agent's three model calls were not made again
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    [result] = data["results"]
    assert result["score"]["response_score"] == 0.75 and result["agent"]["error"] is None
    assert result["details"]["judge_reason"] == "close"
    assert (result["agent"]["steps"], result["agent"]["input_tokens"]) == (3, 300)
    assert result["score"]["tool_call_score"] == 1.0
    assert result["details"]["actual_tool_calls"] == first["details"]["actual_tool_calls"]
    assert result["judge"]["input_tokens"] == 30
    assert data["summary"]["errors"] == 0 and data["summary"]["unrecorded_input_tokens"] == 0


def test_an_agent_that_never_answers_fails_its_case_on_the_time_limit(
        tmp_path: Path, fake_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its empty answer scores 0 without a paid judge call (before: the judge was asked)."""
    suite = {"name": "todo", "test_cases": [SUITE["test_cases"][0]]}
    path = tmp_path / "hang.json"
    path.write_text(json.dumps(suite))
    with FakeLLMServer([Reply(content='{"score": 1, "reason": "?"}')]) as judge:
        monkeypatch.setenv("RESTBENCH_LLM_BASE_URL", judge.base_url)
        done = restbench("agent-eval", "-t", path, "-r", tmp_path / "out", "-a",
                         "tests.agents.plugin_agents:HangingAgent", "--case-timeout", "2",
                         "--scoring", "llm-judge", "--judge-model", "fake-judge", cwd=ROOT)
        assert judge.requests == []
    assert done.returncode == 1, done.stderr  # a case that failed for an error
    result = json.loads((tmp_path / "out" / "results.json").read_text())["results"][0]
    assert result["agent"]["error"] == "the agent did not answer within 2 s"
    assert result["score"]["response_score"] == 0.0
    assert result["details"]["judge_reason"] == "not asked: the agent gave no answer"
    assert [c["request"] for c in result["details"]["actual_tool_calls"]] == ["POST /users/login"]


def test_cases_that_fail_for_an_error_fail_the_command(tmp_path: Path) -> None:
    """Before: agent-eval exited 0 when the model endpoint was down for every case. (An agent
    that merely scores low exits 0: test_llm_agent_scored_from_the_http_side.)"""
    with socket.socket() as closed:  # a port where nothing listens
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    config = tmp_path / "models.toml"
    config.write_text(f'[defaults]\nbase_url = "http://127.0.0.1:{port}/v1"\n'
                      'max_retries = 0\n')
    suite = {"name": "todo", "test_cases": SUITE["test_cases"][:2]}
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite))
    done = restbench("agent-eval", "-t", path, "-r", tmp_path / "out", "-m", "down",
                     "--llm-config", config, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "error: 2 of 2 cases ended in an error (reasons above, and in the error column of "
        f"{tmp_path / 'out' / 'results.csv'})")
    results = json.loads((tmp_path / "out" / "results.json").read_text())["results"]
    assert [bool(r["agent"]["error"]) for r in results] == [True, True]  # written first


def test_an_agent_whose_constructor_raises_is_one_line(tmp_path: Path) -> None:
    """Before: a traceback ending in the constructor's RuntimeError."""
    done = restbench("agent-eval", "-t", ROOT / "src/restbench/agents/examples/todo.json",
                     "-r", tmp_path / "out", "-a", "tests.agents.plugin_agents:ConstructorRaises",
                     cwd=ROOT)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "error: agent 'tests.agents.plugin_agents:ConstructorRaises' with arguments {} failed "
        "to start: RuntimeError: no model configured")
    assert not (tmp_path / "out").exists()


def test_bad_input_is_one_line_per_problem_and_nothing_runs(tmp_path: Path) -> None:
    bad = {"name": "todo", "test_cases": [
        SUITE["test_cases"][0],
        {"name": "x", "description": "d", "intent": "i",
         "expected_output": {"response": "r", "keywords": [],
                             "tool_calls": [{"args": {}}]}}]}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    done = restbench("agent-eval", "-t", path, "-r", tmp_path / "out", "-a", "golden",
                     cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"error: {path}: $.test_cases[1].expected_output.tool_calls[0]: 'name' is a " \
           "required property" in done.stderr
    assert not (tmp_path / "out").exists()
    # well-formed, but a tool the service does not have: a warning, and that call is missing
    bad["test_cases"][1]["expected_output"]["tool_calls"] = [{"name": "todo_fly", "args": {}}]
    path.write_text(json.dumps(bad))
    done = restbench("agent-eval", "-t", path, "-r", tmp_path / "out", "-a", "golden",
                     cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    warning = "$.test_cases[1].expected_output.tool_calls[0].name: unknown tool 'todo_fly'"
    assert warning in " ".join(done.stderr.split())
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert warning in data["summary"]["warnings"][0]
    assert [r["score"]["tool_call_score"] for r in data["results"]] == [1.0, 0.0]
    missing_model = restbench("agent-eval", "-t", path, cwd=tmp_path)
    assert missing_model.returncode == 2
    assert "agent 'llm' needs a model: pass --model NAME" in missing_model.stderr
    schema = restbench("agent-eval", "--schema", cwd=tmp_path)
    assert json.loads(schema.stdout)["$defs"]["ToolCall"]["required"] == ["name"]


@pytest.mark.parametrize(("change", "extra", "problem"), [
    # Before: "unknown service ...", naming neither the file nor the field, after an empty line
    ({"service": "nosuchservice"}, (), "{path}: $.service: unknown service 'nosuchservice': "),
    ({}, ("-s", "nosuchservice"), "--service: unknown service 'nosuchservice': "),
    # Before: accepted, two results with the same name
    ({"test_cases": [SUITE["test_cases"][0]] * 2}, (),
     "{path}: $.test_cases[1].name: duplicate test name 'perfect' in suite 'todo'"),
    # Before: taken; results.json then held a bare NaN, and the report's page stayed blank
    ({"test_cases": [_case("nan", "List alice's todos.", PERFECT, [],
                           [(LIST, {"limit": float("nan")})])]}, (),
     "{path}: not valid JSON: NaN is not a JSON number"),
])
def test_a_bad_service_or_a_duplicate_name_is_one_line_naming_file_and_field(
        tmp_path: Path, change: dict[str, Any], extra: tuple[str, ...], problem: str) -> None:
    path = tmp_path / "suite.json"
    path.write_text(json.dumps({"name": "todo", "test_cases": SUITE["test_cases"][:1],
                                **change}))
    done = restbench("agent-eval", "-t", path, "-r", tmp_path / "out", "-a", "golden", *extra,
                     cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: " + problem.format(path=path))
    assert done.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_suites_of_one_name_and_a_file_nested_too_deeply_are_one_line(tmp_path: Path) -> None:
    """Before: two suites of one name ran, giving results of one (suite, name) twice; a deeply
    nested file was a RecursionError traceback."""
    path = tmp_path / "suites.json"
    path.write_text(json.dumps([{"name": "todo", "test_cases": SUITE["test_cases"][:1]}] * 2))
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    for file, problem in ((path, ("$[1].name: duplicate suite name 'todo' (also $[0]); a case is "
                                 "known by its suite and name")),
                          (deep, "not valid JSON: nested too deeply")):
        done = restbench("agent-eval", "-t", file, "-r", tmp_path / "out", "-a", "golden",
                         cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert done.stderr == f"error: {file}: {problem}\n"
    assert not (tmp_path / "out").exists()


def test_results_that_cannot_be_written_are_found_before_any_case_runs(tmp_path: Path) -> None:
    """Before: the cases ran, then writing results.csv over a folder was a traceback that left
    a .partial file, and the case run last was lost from results.json."""
    out = tmp_path / "out"
    (out / "results.csv").mkdir(parents=True)
    done = restbench("agent-eval", "-t", ROOT / "src/restbench/agents/examples/todo.json",
                     "-r", out, "-a", "golden", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"error: {out / 'results.csv'}: is a folder, where agent-eval's "
                           "results go: move it away, or choose another --results-dir\n")
    assert sorted(p.name for p in out.iterdir()) == ["results.csv"]


def test_what_a_run_cannot_keep_of_the_earlier_results_file_is_told(tmp_path: Path) -> None:
    """Before: an unreadable results.json, or one holding cases this test file does not have,
    was rewritten without a word."""
    two = tmp_path / "two.json"
    two.write_text(json.dumps({"name": "todo", "test_cases": SUITE["test_cases"][:2]}))
    one = tmp_path / "one.json"
    one.write_text(json.dumps({"name": "todo", "test_cases": SUITE["test_cases"][:1]}))
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").write_text("{half a file")

    def said(test_file: Path) -> str:
        done = restbench("agent-eval", "-t", test_file, "-r", out, "-a", "golden", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return " ".join(done.stderr.split())  # the console wraps long lines

    assert (f"note: {out / 'results.json'}: not readable (line 1, column 2: not valid JSON: "
            "Expecting property name enclosed in double quotes): every case runs, and the file "
            "is written anew") in said(two)
    assert (f"note: {out / 'results.json'}: 1 of its 2 cases are not in {one}; results.json is "
            "rewritten with this run's cases only (what they cost stays in its summary)"
            ) in said(one)
    results = json.loads((out / "results.json").read_text())["results"]
    assert [r["test_name"] for r in results] == ["perfect"]


def test_a_made_up_answer_earns_no_grounded_keywords(tmp_path: Path, fake_env: None,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A keyword already in the intent scores under CUGA's keyword score, not grounded: it is
    left out of the grounded score, and a case given every keyword has none (before: such
    keywords counted as misses, so a perfect agent scored 0.0 on every todo example)."""
    suite = {"name": "grounding", "test_cases": [
        _case("made_up", "Is the todo Water the plants done?", "No, it is open.",
              ["Water the plants", "open"], [(LOGIN, ALICE), (LIST, {})]),
        _case("looked_up", "Add a todo Fix the bike for bob; which id did it get?",
              "It got id 4.", ["Fix the bike", "id 4"],
              [(LOGIN, BOB), (CREATE, {"title": "Fix the bike"})]),
        _case("all_given", "Is Buy milk on alice's list?", "Yes, Buy milk is there.",
              ["Buy milk"], [(LOGIN, ALICE), (LIST, {})])]}
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite))
    scripts = {"Is the todo Water the plants done?": [
        Reply(content="No, Water the plants is still open.")],
        "Add a todo Fix the bike for bob; which id did it get?": [
            Reply(tool_calls=[(LOGIN, BOB), (CREATE, {"title": "Fix the bike"})]),
            Reply(content="Fix the bike was added with id 4.")],
        "Is Buy milk on alice's list?": [
            Reply(tool_calls=[(LOGIN, ALICE), (LIST, {})]),
            Reply(content="Yes, Buy milk is on it.")]}

    def reply(request: dict[str, Any]) -> Reply:
        step = sum(1 for m in request["messages"] if m["role"] == "assistant")
        return scripts[request["messages"][1]["content"]][step]

    with FakeLLMServer(reply) as fake:
        monkeypatch.setenv("RESTBENCH_LLM_BASE_URL", fake.base_url)
        done = restbench("agent-eval", "-t", path, "-s", "todo", "-r", tmp_path / "out",
                         "-m", "fake-model", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    scores = {r["test_name"]: r["score"] for r in data["results"]}
    assert scores["made_up"]["keyword_score"] == 1.0  # no API call, full keyword score
    assert scores["made_up"]["grounded_keyword_score"] == 0.0  # "open" was not looked up
    assert scores["looked_up"]["keyword_score"] == 1.0
    # "Fix the bike" was in the intent; the id, the one keyword left, came from the service
    assert scores["looked_up"]["grounded_keyword_score"] == 1.0
    # "Buy milk" is in the intent and in todo's API description
    assert (scores["all_given"]["keyword_score"], scores["all_given"]["grounded_keyword_score"]
            ) == (1.0, None)
    summary = data["summary"]
    assert (summary["avg_grounded_keyword_score"], summary["grounded_scored_tests"]) == (0.5, 2)
    footer = next(line for line in done.stdout.splitlines() if "average of 3" in line)
    assert "0.50 (of 2)" in footer
    with (tmp_path / "out" / "results.csv").open() as handle:
        assert [r["grounded_keyword_score"] for r in csv.DictReader(handle)] == [
            "0.0", "1.0", ""]


def test_a_timed_out_case_keeps_the_tokens_its_model_used(tmp_path: Path, fake_env: None,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    suite = {"name": "slow", "test_cases": [
        _case("slow", "List alice's todos.", PERFECT, [], [(LOGIN, ALICE), (LIST, {})])]}
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite))
    script = [Reply(tool_calls=[(LOGIN, ALICE)], usage=(120, 30)),
              Reply(content="late", delay_s=20)]
    with FakeLLMServer(script) as fake:
        monkeypatch.setenv("RESTBENCH_LLM_BASE_URL", fake.base_url)
        done = restbench("agent-eval", "-t", path, "-s", "todo", "-r", tmp_path / "out",
                         "-m", "fake-model", "--case-timeout", "2", cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # a case that failed for an error
    (result,) = json.loads((tmp_path / "out" / "results.json").read_text())["results"]
    assert result["agent"]["error"] == "the agent did not answer within 2 s"
    assert (result["agent"]["input_tokens"], result["agent"]["output_tokens"]) == (120, 30)


def test_semantic_scoring_without_its_extra_is_one_line_with_the_install_command(
        suite_file: Path, tmp_path: Path) -> None:
    """A base install has no onnxruntime: the run stops before any case, in one line."""
    blocked = ("import sys; sys.modules['onnxruntime'] = None; "
               "from restbench.cli import main; main()")
    done = subprocess.run(
        [sys.executable, "-c", blocked, "agent-eval", "-t", str(suite_file), "-s", "todo",
         "-r", str(tmp_path / "out"), "-a", "golden", "--scoring", "semantic"],
        capture_output=True, text=True, cwd=tmp_path, check=False, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "error: semantic scoring needs the embedding model, which is not installed "
        "(onnxruntime is missing): pip install 'restbench[semantic]'")


def test_the_agents_first_prompt_shrinks_to_fit_a_small_context() -> None:
    import asyncio

    from restbench.agents.base import AgentTask
    from restbench.agents.llm import fitted_start
    from restbench.llm import ChatClient, ModelConfig
    from restbench.llm.fitting import estimate_tokens

    long = "Lists things. " + "Explained at length. " * 60
    openapi = {"info": {"title": "Big", "description": "Seeded: " + "alice, bob. " * 300}}
    tools = [{"type": "function", "function": {"name": f"tool_{i}", "description": long,
                                                "parameters": {"type": "object"}}}
             for i in range(10)]
    task = AgentTask("List my things.", (), "big", "http://x", openapi, 3, None)

    def start(context: int) -> tuple[Any, Any, list[str]]:
        client = ChatClient(ModelConfig("m", "m", "http://127.0.0.1:9/v1", max_tokens=100,
                                        context_tokens=context))
        return asyncio.run(fitted_start(client, task, tools))

    full = start(10**6)
    assert full[2] == [] and full[1] == tools
    without_long_tools = estimate_tokens(full[0], tools) // 2
    messages, offered, cuts = start(without_long_tools + 100)
    assert cuts == ["tool descriptions trimmed"]
    assert offered[0]["function"]["description"] == "Lists things."
    messages, offered, cuts = start(estimate_tokens(messages, offered) - 10 + 100)
    assert cuts == ["tool descriptions trimmed", "API description left out"]
    assert "alice" not in messages[0]["content"]


def test_a_rerun_after_editing_ones_agent_runs_its_cases_again(tmp_path: Path,
                                                               fake_env: None) -> None:
    """Before: a case's key covered the agent's name and arguments, not its code, so a rerun
    after an edit took the old code's results."""
    suite = {"name": "todo", "test_cases": [SUITE["test_cases"][0]]}
    path = tmp_path / "plugin.json"
    path.write_text(json.dumps(suite))
    agent = tmp_path / "restbench_edited_agent.py"

    def write_agent(answer: str) -> None:
        agent.write_text("from restbench.agents import AgentAnswer\n"
                         "class Agent:\n    name = 'edited'\n"
                         f"    def run(self, task):\n        return AgentAnswer({answer!r})\n")

    def evaluate() -> tuple[str, str]:
        done = restbench("agent-eval", "-t", path, "-r", tmp_path / "out", "-a",
                         "restbench_edited_agent:Agent", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        data = json.loads((tmp_path / "out" / "results.json").read_text())
        return data["results"][0]["details"]["response_actual"], done.stderr

    write_agent("first")
    assert evaluate()[0] == "first"
    answer, stderr = evaluate()
    assert answer == "first" and "1 finished cases taken from" in stderr
    write_agent("second")
    answer, stderr = evaluate()
    assert answer == "second" and "finished cases taken" not in stderr


def test_an_endpoint_without_token_counts_is_told_once_as_a_warning_line(
        tmp_path: Path, fake_env: None) -> None:
    """Before: a `WARNING restbench.llm.client:` log line, which a live progress bar drew over."""
    suite = {"name": "todo", "test_cases": [
        _case(name, PERFECT, PERFECT, [], [(LOGIN, ALICE), (LIST, {})]) for name in ("a", "b")]}
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite))
    with FakeLLMServer(lambda request: Reply(content='{"score": 1, "reason": "same"}',
                                             usage=(-3, 10))) as judge:
        config = tmp_path / "models.toml"
        config.write_text(f'[models.judge]\nbase_url = "{judge.base_url}"\nmodel = "j"\n')
        done = restbench("agent-eval", "-t", path, "-s", "todo", "-r", tmp_path / "out",
                         "-a", "golden", "--scoring", "llm-judge", "--judge-model", "judge",
                         "--llm-config", config, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    told = [line for line in done.stderr.splitlines() if "token usage" in line]
    assert told == [(f"warning: model 'judge' at {judge.base_url}: the endpoint reported no "
                     "valid token usage (prompt_tokens -3); its calls count as 0 tokens and $0")]


def test_header_arguments_and_refused_calls_are_scored_from_the_http_side(
        tmp_path: Path) -> None:
    """Before: header parameters were not recorded, so a deposit without its Idempotency-Key
    (refused, 400) matched the expected call, and so did any call the service refused."""
    deposit = {"name": "ledger_deposit",
               "args": {"id": "acc_003", "Idempotency-Key": "agent-deposit-1", "amount": 5000}}
    login = {"name": "ledger_login", "args": {"username": "alice", "password": "alice-pass-1"}}

    def case(name: str, intent: str, call: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "description": "d", "intent": intent, "expected_output": {
            "response": "", "keywords": [], "tool_calls": [login, call]}}

    into_bobs = {**deposit, "args": {**deposit["args"], "id": "acc_101"}}
    suite = {"name": "deposits", "service": "ledger", "test_cases": [
        case("without_the_header", "bare deposit", deposit),
        case("header_in_lower_case", "lower deposit", deposit),
        case("refused", "foreign deposit", into_bobs),
        case("refusal_expected", "foreign deposit", {**into_bobs, "status": 404})]}
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite))
    done = restbench("agent-eval", "-t", path, "-r", tmp_path / "out", "-a",
                     "tests.agents.plugin_agents:LedgerDepositAgent", "--scoring", "exact",
                     cwd=ROOT)
    assert done.returncode == 0, done.stderr
    results = {r["test_name"]: r for r in
               json.loads((tmp_path / "out" / "results.json").read_text())["results"]}
    bare = results["without_the_header"]
    assert bare["score"]["tool_call_score"] == 0.5
    [mismatch] = bare["details"]["tool_call_mismatches"]
    assert mismatch["type"] == "argument mismatch"
    assert mismatch["actual"] == {"name": "ledger_deposit",
                                  "args": {"id": "acc_003", "amount": 5000}, "status": 400}
    assert results["header_in_lower_case"]["score"]["tool_call_score"] == 1.0
    assert results["header_in_lower_case"]["details"]["actual_tool_calls"][1]["args"] == \
        deposit["args"]
    refused = results["refused"]
    assert refused["score"]["tool_call_score"] == 0.5
    assert [(m["type"], m["actual"]["status"]) for m in
            refused["details"]["tool_call_mismatches"]] == [("failed call", 404)]
    assert results["refusal_expected"]["score"]["tool_call_score"] == 1.0
