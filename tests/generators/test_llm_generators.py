"""`single-step` and `refine` end to end on the mini service, against a scripted fake endpoint.

The fake answers with test files of known quality, so the scores they must get are known:
precise MINI-01 strong (kills 1/1), precise MINI-02 asserts status codes only (0/2), vague MINI-01
fails on the original (invalid), vague MINI-02 strong (2/2).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from restbench.benchmark import Variant
from restbench.engine import RunConfig, run_benchmark
from restbench.generators import GeneratorSpec
from restbench.generators.llm import parse_verdict
from restbench.generators.prompts import JUDGE_SYSTEM, WRITER_SYSTEM
from restbench.llm.fake import FakeLLMServer, Quirks, Reply
from tests.cli_helpers import restbench

FIXTURES = Path(__file__).parents[1] / "fixtures"
MINI = FIXTURES / "mini"
TESTS = FIXTURES / "mini_tests"
SECRET = "sk-test-must-not-leak-4242"
PRICE_IN, PRICE_OUT = 0.25e-6, 2.00e-6  # gpt-5-mini, per token

WEAK_READ = "import requests\n\ndef test_read():\n" \
            "    assert requests.get('http://localhost:8000/counters/a').status_code == 200\n"


def fenced(code: str) -> str:
    return f"Here is the test.\n```python\n{code}```\n"


def scripted_test(request: dict[str, Any]) -> str:
    """The writer's first answer, chosen by the requirement in the prompt."""
    prompt = request["messages"][1]["content"]
    if "GET /counters/a returns 200" in prompt:
        return fenced((TESTS / "precise/MINI-01.py").read_text())
    if "POST /counters/a/increment returns 200" in prompt:
        return fenced((TESTS / "precise/MINI-02.py").read_text())
    if "Counters can be read" in prompt:
        return fenced((TESTS / "vague/MINI-01.py").read_text())
    return fenced((TESTS / "vague/test_MINI-02.py").read_text())


@pytest.fixture
def endpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
             ) -> Iterator[Callable[[Any], FakeLLMServer]]:
    """Starts a fake endpoint for a script and points restbench's model config at it."""
    servers: list[FakeLLMServer] = []

    def start(script: Any) -> FakeLLMServer:
        fake = FakeLLMServer(script).__enter__()
        servers.append(fake)
        config = tmp_path / "models.toml"
        config.write_text(f'[defaults]\nbase_url = "{fake.base_url}"\napi_key_env = "TEST_KEY"\n'
                          "max_retries = 2\nretry_base_s = 0.01\ntimeout_s = 10\n")
        monkeypatch.setenv("RESTBENCH_LLM_CONFIG", str(config))
        monkeypatch.setenv("TEST_KEY", SECRET)
        return fake

    yield start
    for fake in servers:
        fake.__exit__()


def scores(output: Path) -> dict[str, dict[str, Any]]:
    return {row["variant"]: row for row in json.loads((output / "scores.json").read_text())["scores"]}


def test_single_step_scores_tests_by_quality_and_never_pays_twice(
        tmp_path: Path, endpoint: Callable[[Any], FakeLLMServer]) -> None:
    fake = endpoint(scripted_test)
    output = tmp_path / "out"
    result = restbench("run", "-s", MINI, "-g", "single-step", "-m", "gpt-5-mini", "-o", output)
    assert result.returncode == 0, result.stderr
    by_variant = scores(output)
    assert by_variant["precise"]["ms"] == pytest.approx(1 / 3)
    assert by_variant["vague"]["ms"] == pytest.approx(2 / 3)
    assert by_variant["vague"]["validity_rate"] == 0.5
    # every call: 100 input and 50 output tokens (the fake's usage); two calls per variant
    assert by_variant["precise"]["input_tokens"] == 200
    assert by_variant["precise"]["cost_usd"] == pytest.approx(2 * (100 * PRICE_IN + 50 * PRICE_OUT))
    total = json.loads((output / "scores.json").read_text())["total_cost"]
    assert total["usd"] == pytest.approx(4 * (100 * PRICE_IN + 50 * PRICE_OUT))
    assert "model calls cost $0.000500" in result.stdout
    # the prompt: requirement, base URL and the complete OpenAPI document
    prompt = fake.requests[0]["messages"][1]["content"]
    assert "Base URL: http://localhost:8000" in prompt and '"/counters/{name}"' in prompt
    assert fake.requests[0]["messages"][0]["content"] == WRITER_SYSTEM
    assert {h["authorization"] for h in fake.headers} == {f"Bearer {SECRET}"}
    # the key is nowhere in what restbench wrote or printed
    for path in output.iterdir():
        assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in result.stdout + result.stderr

    again = restbench("run", "-s", MINI, "-g", "single-step", "-m", "gpt-5-mini", "-o", output)
    assert again.returncode == 0, again.stderr
    assert len(fake.requests) == 4  # all four answers came from the store
    assert scores(output)["precise"]["ms"] == pytest.approx(1 / 3)


def test_failures_are_recorded_and_a_rerun_asks_only_for_what_failed(
        tmp_path: Path, endpoint: Callable[[Any], FakeLLMServer]) -> None:
    overloaded = [True]

    def flaky(request: dict[str, Any]) -> Reply | str:
        prompt = request["messages"][1]["content"]
        if "POST /counters/a/increment" in prompt and overloaded[0]:
            return Reply(status=500, content="overloaded")
        if "Counters can be read" in prompt:
            return "Sorry, I cannot write that test."
        return scripted_test(request)

    output = tmp_path / "out"
    fake = endpoint(flaky)
    result = restbench("run", "-s", MINI, "-g", "single-step", "-m", "gpt-5-mini", "-o", output)
    assert result.returncode == 1, result.stderr  # finished, but not everything was generated
    assert "2 of 4 generations made in this run failed" in result.stderr
    assert "HTTP 500: overloaded" in result.stderr and "no pytest test function" in result.stderr
    db = sqlite3.connect(output / "results.sqlite3")
    failed = dict(db.execute("SELECT requirement || '/' || variant, error FROM generations "
                             "WHERE status = 'error'").fetchall())
    assert set(failed) == {"MINI-02/precise", "MINI-01/vague"}
    # the same internal error twice: not asked a third time
    assert "gave up after 2 attempts" in failed["MINI-02/precise"]
    # the answer without code was paid for, and its cost is kept with the failure
    assert db.execute("SELECT cost_usd FROM generations WHERE requirement = 'MINI-01' AND "
                      "variant = 'vague'").fetchone()[0] > 0
    assert scores(output)["precise"]["failed_generations"] == 1
    db.close()
    assert len(fake.requests) == 2 + 3  # two attempts for the 500s, one call for each other

    overloaded[0] = False
    result = restbench("run", "-s", MINI, "-g", "single-step", "-m", "gpt-5-mini", "-o", output)
    assert result.returncode == 1, result.stderr  # the answer without code fails again
    # only the failed cells were generated again, and both were asked again: an answer without
    # code is not kept, so it is retried like a failed call
    retried = fake.requests[5:]
    assert len(retried) == 2
    assert {"POST /counters/a/increment" in r["messages"][1]["content"] for r in retried} == {
        True, False}
    assert scores(output)["precise"]["ms"] == pytest.approx(1 / 3)
    assert scores(output)["precise"]["failed_generations"] == 0


def test_an_answer_with_code_over_the_size_limit_is_paid_for_and_not_kept(
        tmp_path: Path, endpoint: Callable[[Any], FakeLLMServer]) -> None:
    """Before: a TypeError worded for third-party generators, cost 0 although the call was
    paid, and the answer kept in the call cache, so a rerun reused it instead of asking again."""
    huge = fenced("def test_huge():\n    assert True\n" + "# padding\n" * 120_000)

    def script(request: dict[str, Any]) -> str:
        return huge if "GET /counters/a returns 200" in request["messages"][1]["content"] \
            else scripted_test(request)

    fake = endpoint(script)
    config = RunConfig(services=(str(MINI),), variants=(Variant.PRECISE,),
                       generators=(GeneratorSpec("single-step"),), models=("gpt-5-mini",),
                       output_dir=tmp_path / "out")
    for _ in range(2):
        asyncio.run(run_benchmark(config))
    db = sqlite3.connect(tmp_path / "out" / "results.sqlite3")
    (row,) = db.execute("SELECT status, error, cost_usd, input_tokens, output_tokens "
                        "FROM generations WHERE requirement = 'MINI-01'").fetchall()
    db.close()
    too_big = "the model's code is 1.1 MiB, over the 1 MiB a generated test may have"
    assert row == ("error", too_big, pytest.approx(100 * PRICE_IN + 50 * PRICE_OUT), 100, 50)
    assert len(fake.requests) == 3  # the rerun asked again for the huge answer only


def is_judge(request: dict[str, Any]) -> bool:
    return request["messages"][0]["content"] == JUDGE_SYSTEM


def refine_run(tmp_path: Path, rounds: int = 3) -> Any:
    config = RunConfig(services=(str(MINI),), variants=(Variant.PRECISE,),
                       generators=(GeneratorSpec("refine", {"rounds": str(rounds)}),),
                       models=("gpt-5-mini",), output_dir=tmp_path / "out")
    return asyncio.run(run_benchmark(config))


def refine_details(tmp_path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    db = sqlite3.connect(tmp_path / "out" / "results.sqlite3")
    rows = db.execute("SELECT requirement, target, details FROM generations").fetchall()
    return {(r, t): json.loads(d) for r, t, d in rows}


def test_refine_adapting_to_mutants_lowers_ms_mutated(
        tmp_path: Path, endpoint: Callable[[Any], FakeLLMServer]) -> None:
    """A judge that asks for revision whenever the draft fails, and a writer that then weakens
    its assertions: the model adapts to the faulty service, as the benchmark is meant to show.

    Hand computation (precise wording, strong first drafts for both requirements):
    - t_r on the original pass at once (FINISH): MS_valid = (1 + 2) / 3 = 100%.
    - MINI-01-M1 and MINI-02-M1: the draft fails, REFINE, the revision asserts status codes only,
      kills nothing. MINI-02-M2: the judge accepts the failing draft (the trace shows the value
      stuck at 2), so t_{MINI-02,M2} is the strong test: valid, kills both mutants of MINI-02.
    - MS_mutated = (1/1 * 0 + 1/2 * (0 + 2)) / 3 = 1/3; self-kill = 1 of 3 targets.
    """
    def script(request: dict[str, Any]) -> str:
        if is_judge(request):
            prompt = request["messages"][1]["content"]
            if "1 failed" not in prompt or prompt.count('{"value":2}') >= 2:
                return "FINISH\nThe test checks the requirement."
            return "REFINE\nThe assertions fail against the service."
        if len(request["messages"]) > 2:  # a revision
            first = request["messages"][1]["content"]
            return fenced(WEAK_READ if "GET /counters/a" in first
                          else (TESTS / "precise/MINI-02.py").read_text())
        return fenced((TESTS / "vague/test_MINI-02.py").read_text()) \
            if "POST /counters/a/increment" in request["messages"][1]["content"] \
            else scripted_test(request)

    endpoint(script)
    (row,) = refine_run(tmp_path).rows
    assert row.score.ms == pytest.approx(1.0)
    assert row.score.ms_mutated == pytest.approx(1 / 3)
    assert row.score.self_kill_rate == pytest.approx(1 / 3)
    details = refine_details(tmp_path)
    assert details[("MINI-01", "original")]["stopped"] == "finished"
    assert [r["verdict"] for r in details[("MINI-01", "MINI-01-M1")]["rounds"]] == \
        ["REFINE", "FINISH"]
    assert details[("MINI-01", "MINI-01-M1")]["rounds"][0]["outcome"] == "fail"
    assert "GET /counters/zzz -> 400" in details[("MINI-01", "MINI-01-M1")]["rounds"][0]["trace"]


def test_refine_stops_on_finish_or_after_n_rounds(
        tmp_path: Path, endpoint: Callable[[Any], FakeLLMServer]) -> None:
    def never_satisfied(request: dict[str, Any]) -> str:
        return "REFINE\nNot yet." if is_judge(request) else scripted_test(request)

    fake = endpoint(never_satisfied)
    config = RunConfig(services=(str(MINI),), variants=(Variant.PRECISE,),
                       generators=(GeneratorSpec("refine", {"rounds": "2"}),),
                       models=("gpt-5-mini",), output_dir=tmp_path / "out")
    result = asyncio.run(run_benchmark(config))
    details = refine_details(tmp_path)
    assert len(details) == 5  # per requirement the original and each mutant: 2 + 3 targets
    for record in details.values():
        assert record["stopped"] == "round limit"
        assert [r["verdict"] for r in record["rounds"]] == ["REFINE", "REFINE"]
    # per target: write, judge, revise, judge; first drafts are one identical (cached) request
    judge_calls = sum(is_judge(r) for r in fake.requests)
    assert judge_calls == 5 * 2
    # a row's cost covers every test behind it, the mutant targets' too, and counts what each
    # call cost even when its answer came from the store (the same request made for another target)
    (row,) = result.rows
    assert row.cost_usd == pytest.approx(5 * 4 * (100 * PRICE_IN + 50 * PRICE_OUT))
    assert (row.input_tokens, row.output_tokens) == (5 * 4 * 100, 5 * 4 * 50)
    # identical first drafts (one per requirement, five targets) were asked once each
    assert len(fake.requests) == 5 * 4 - 3


@pytest.mark.parametrize(("answer", "verdict"), [
    ("FINISH\nGood.", ("FINISH", "Good.")),
    ("REFINE: the ids are wrong", ("REFINE", "the ids are wrong")),
    ("Verdict: REFINEMENT\nmissing check", ("REFINE", "missing check")),
    ("I think this is fine. FINISH", ("FINISH", "")),
    ("looks fine to me", (None, "")),
    ("**Finish**\nAll checked.", ("FINISH", "All checked.")),
    # before: the first line was read in upper case, so "finish" and "FINISH" here won
    ("Before I finish, REFINE: check the body", ("REFINE", "check the body")),
    ("Do not FINISH yet; REFINE", (None, "")),
    ("Some thoughts.\nREFINE or FINISH? Hard to say.", (None, "")),
])
def test_judge_verdicts_are_parsed(answer: str, verdict: tuple[str | None, str]) -> None:
    assert parse_verdict(answer) == verdict


def test_prompts_cut_to_fit_are_told_once_per_generator_and_model(
        tmp_path: Path, endpoint: Callable[[Any], FakeLLMServer],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: what was cut was only in the store, and a reader of the table could not know."""
    fake = endpoint(scripted_test)

    def run(output: str, context: int | None = None) -> tuple[list[str], list[dict[str, Any]]]:
        if context is not None:
            config = tmp_path / "small.toml"
            config.write_text(f'[models.gpt-5-mini]\nbase_url = "{fake.base_url}"\n'
                              f'api_key_env = ""\nmax_tokens = 500\ncontext_tokens = {context}\n')
            monkeypatch.setenv("RESTBENCH_LLM_CONFIG", str(config))
        events: list[Any] = []
        asyncio.run(run_benchmark(RunConfig(
            services=(str(MINI),), variants=(Variant.PRECISE,),
            generators=(GeneratorSpec("single-step"),), models=("gpt-5-mini",),
            output_dir=tmp_path / output), on_event=events.append))
        db = sqlite3.connect(tmp_path / output / "results.sqlite3")
        prompts = [json.loads(d)["prompt"] for (d,) in db.execute("SELECT details FROM generations")]
        return [getattr(e, "message", "") for e in events], prompts

    notes, prompts = run("whole")
    assert not any("prompts cut" in note for note in notes)
    largest = max(prompt["estimated_tokens"] for prompt in prompts)
    notes, prompts = run("cut", context=largest - 1 + 500)  # the largest whole prompt is 1 over
    told = [note for note in notes if "prompts cut" in note]
    assert len(told) == 1 and told[0].startswith(
        "single-step with model gpt-5-mini: prompts cut to fit its context, first on MINI-0")
    assert "openapi reduced to the requirement's operations" in told[0]
    assert any(prompt["cuts"] for prompt in prompts)


def test_a_revision_without_code_keeps_the_last_draft_as_the_test(
        tmp_path: Path, endpoint: Callable[[Any], FakeLLMServer]) -> None:
    """Before: the generation failed, throwing away a draft that ran; the README says the last
    draft is the test, as at the round limit."""
    def script(request: dict[str, Any]) -> str:
        if is_judge(request):
            return "REFINE\nCheck more."
        if len(request["messages"]) > 2:  # the revision asked for
            return "I think the test is fine as it is."
        return scripted_test(request)

    endpoint(script)
    result = refine_run(tmp_path, rounds=3)
    assert result.counts["generation_failures"] == 0
    (row,) = result.rows
    assert row.score.ms == pytest.approx(1 / 3)  # the first drafts are the tests, as single-step's
    record = refine_details(tmp_path)[("MINI-01", "original")]
    assert record["stopped"] == "revision without a test"
    assert record["revision_error"].startswith("round 2: ")
    assert [r["verdict"] for r in record["rounds"]] == ["REFINE"]


def test_a_cut_off_verdict_is_paid_once_and_no_verdict_fails_the_generation(
        tmp_path: Path, endpoint: Callable[[Any], FakeLLMServer]) -> None:
    """Before: a judge answer cut off at the token limit was counted twice, and a judge that
    never gave a verdict let the unreviewed draft through as the test (status ok), its answers
    kept so that a rerun could not ask again."""
    def cut_off(request: dict[str, Any]) -> Reply | str:
        if is_judge(request):
            return Reply(content="FINISH\nfine", finish_reason="length", usage=(700, 11))
        return scripted_test(request)

    endpoint(cut_off)
    (row,) = refine_run(tmp_path, rounds=1).rows
    # five targets, each one writer answer (100 in, 50 out; identical first drafts cost each
    # target what the call cost) and one judge answer
    assert (row.input_tokens, row.output_tokens) == (5 * (100 + 700), 5 * (50 + 11))
    assert {d["stopped"] for d in refine_details(tmp_path).values()} == {"finished"}

    def mute(request: dict[str, Any]) -> str:
        return "I have looked at it." if is_judge(request) else scripted_test(request)

    fake = endpoint(mute)
    again = tmp_path / "again"
    for run in (1, 2):  # the second in the same folder: every judge call is made again
        result = refine_run(again, rounds=1)
        assert result.counts["generation_failures"] == 5
        assert sum(is_judge(r) for r in fake.requests) == run * 5 * 2
    details = refine_details(again)
    assert {d["stopped"] for d in details.values()} == {"judge failed"}
    reason = details[("MINI-01", "original")]["rounds"][0]["reason"]
    assert reason == ("the judge answered neither FINISH nor REFINE, twice (last answer: "
                      "'I have looked at it.')")


def test_refine_records_a_judge_that_cannot_answer_as_a_failure(
        tmp_path: Path, endpoint: Callable[[Any], FakeLLMServer],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A judge whose context is too small answers 400: before, 'judge unreachable', status ok."""
    writer = endpoint(scripted_test)
    with FakeLLMServer(["FINISH\nfine"], Quirks(context_tokens=200)) as judge:
        config = tmp_path / "two.toml"
        config.write_text(f'[models.gpt-5-mini]\nbase_url = "{writer.base_url}"\n'
                          f'api_key_env = ""\n[models.small-judge]\nbase_url = "{judge.base_url}"\n'
                          'api_key_env = ""\nmax_retries = 0\n')
        monkeypatch.setenv("RESTBENCH_LLM_CONFIG", str(config))
        events: list[Any] = []
        run = RunConfig(services=(str(MINI),), variants=(Variant.PRECISE,),
                        generators=(GeneratorSpec("refine", {"judge": "small-judge"}),),
                        models=("gpt-5-mini",), output_dir=tmp_path / "out")
        result = asyncio.run(run_benchmark(run, on_event=events.append))
    assert result.counts["generation_failures"] == 5
    db = sqlite3.connect(tmp_path / "out" / "results.sqlite3")
    rows = db.execute("SELECT status, error, details FROM generations").fetchall()
    assert {status for status, _, _ in rows} == {"error"}
    error, details = rows[0][1], json.loads(rows[0][2])
    assert "round 1: judge call failed" in error and "HTTP 400: Requested tokens" in error
    assert details["stopped"] == "judge failed" and details["rounds"][0]["verdict"] == "failed"
    notes = [e.message for e in events if "judge call failed" in getattr(e, "message", "")]
    # which of a requirement's five targets failed (before: five identical notes), and the
    # model (before: not named, so with several models the note did not say which)
    assert sorted(note.split(": round 1")[0] for note in notes) == [
        f"refine (gpt-5-mini) failed on {target})" for target in (
            "MINI-01 (precise", "MINI-01 (precise, against MINI-01-M1",
            "MINI-02 (precise", "MINI-02 (precise, against MINI-02-M1",
            "MINI-02 (precise, against MINI-02-M2")]


def test_a_base_url_without_v1_fails_every_generation_with_a_hint_and_exit_1(
        tmp_path: Path, endpoint: Callable[[Any], FakeLLMServer],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: exit 0 and a bare 'HTTP 404' per generation."""
    fake = endpoint(scripted_test)
    config = tmp_path / "nov1.toml"
    config.write_text(f'[models.local]\nbase_url = "{fake.base_url.removesuffix("/v1")}"\n'
                      'api_key_env = ""\n')
    result = restbench("run", "-s", MINI, "-V", "precise", "-g", "single-step", "-m", "local",
                       "--llm-config", config, "-o", tmp_path / "out")
    assert result.returncode == 1, result.stderr
    assert "HTTP 404" in result.stderr and f"try base_url {fake.base_url}" in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "error: 2 of 2 generations made in this run failed (reasons above, and in the error "
        "column of the generations table in results.sqlite3); a rerun tries them again")


def test_a_model_config_given_to_the_generator_is_the_one_checked_and_used(
        tmp_path: Path, endpoint: Callable[[Any], FakeLLMServer],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`-a single-step.config=PATH`: the run's credential check resolves the model through that
    file too (it used to look only at the default config and refuse the run)."""
    fake = endpoint(scripted_test)
    own = tmp_path / "generator-models.toml"
    own.write_text(f'[models.mine]\nbase_url = "{fake.base_url}"\napi_key_env = "TEST_KEY"\n')
    monkeypatch.delenv("RESTBENCH_LLM_CONFIG")  # the default config knows no such model
    args = ("run", "-s", MINI, "-g", "single-step", "-m", "mine", "-V", "precise")
    done = restbench(*args, "-a", f"single-step.config={own}", "-o", tmp_path / "out")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(fake.requests) == 2
    missing = restbench(*args, "-a", f"single-step.config={tmp_path / 'nope.toml'}",
                        "-o", tmp_path / "out2")
    assert missing.returncode == 2
    assert f"error: {tmp_path / 'nope.toml'}: cannot read (No such file or directory)" \
        in missing.stderr.splitlines()
    assert len(fake.requests) == 2
