"""`restbench grade` end to end against scripted models on the fake endpoint."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from restbench.errors import GeneratorError
from restbench.generators import Cost, GeneratedTest
from restbench.grading import (
    DEFAULT_MODEL,
    GRADER_ENV,
    CaseResult,
    CriterionResult,
    DatasetError,
    GradeConfig,
    grade,
    grader_model,
    summarize,
)
from restbench.grading.results import Spend
from restbench.grading.table import summary_table
from restbench.llm.fake import FakeLLMServer, Reply
from tests.cli_helpers import restbench
from tests.grading.answers import (
    EXPECTED_KINDS,
    PAYLOADS,
    ScriptedModels,
    all_met,
    read_results,
)

SECRET = "sk-grading-test-must-not-leak"
# gpt-5-mini prices: every writer call (1000 in, 200 out), every judge call (2000 in, 100 out)
WRITER_USD = 1000 * 0.25e-6 + 200 * 2.00e-6
JUDGE_USD = 2000 * 0.25e-6 + 100 * 2.00e-6


@pytest.fixture
def endpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Any], Path]]:
    """Starts a fake endpoint; returns a config file naming `obeying`, `ignoring` and `judge`."""
    servers: list[FakeLLMServer] = []

    def start(script: Any) -> Path:
        fake = FakeLLMServer(script).__enter__()
        servers.append(fake)
        config = tmp_path / "models.toml"
        config.write_text(
            f'[defaults]\nbase_url = "{fake.base_url}"\napi_key_env = "GRADE_TEST_KEY"\n'
            'max_retries = 0\nretry_base_s = 0.0\nprice = "gpt-5-mini"\n')
        monkeypatch.setenv("GRADE_TEST_KEY", SECRET)
        monkeypatch.delenv(GRADER_ENV, raising=False)
        return config

    yield start
    for fake in servers:
        fake.__exit__()


def test_shipped_suites_flag_an_obeying_model_and_pass_an_ignoring_one(
        tmp_path: Path, endpoint: Callable[[Any], Path]) -> None:
    models = ScriptedModels()
    config = endpoint(models)
    output = tmp_path / "out"
    result = restbench("grade", "-d", "prompt-injection", "-d", "conventions",
                       "-m", "obeying,ignoring", "--grader", "judge", "--llm-config", config,
                       "-o", output)
    assert result.returncode == 0, result.stderr
    runs = read_results(output)
    assert set(runs) == {(d, m) for d in ("prompt-injection", "conventions")
                         for m in ("obeying", "ignoring")}

    for case in runs["prompt-injection", "obeying"]["cases"]:
        static = next(c for c in case["criteria"] if c["check_type"] == "static-security")
        kinds = {finding["kind"] for finding in static["findings"]}
        assert not static["met"] and EXPECTED_KINDS[case["test_id"]] <= kinds, case["test_id"]
        assert case["status"] == "graded" and case["score"] < 1
    assert [c["test_id"] for c in runs["prompt-injection", "obeying"]["cases"]] == list(PAYLOADS)
    for key in (("prompt-injection", "ignoring"), ("conventions", "ignoring"),
                ("conventions", "obeying")):
        failed = {c["test_id"]: [x for x in c["criteria"] if not x["met"]]
                  for c in runs[key]["cases"] if c["score"] != 1.0}
        assert failed == {}, key

    run = runs["prompt-injection", "obeying"]
    first = run["cases"][0]
    assert first["criteria"][0]["source"] == "judge" and first["criteria"][0]["index"] == 1
    assert first["criteria_total"] == len(first["criteria"]) == 5 + 2
    assert first["score"] == pytest.approx(first["criteria_met"] / first["criteria_total"])
    assert first["output_tokens"] == 300 and first["judge"]["attempts"] == 1
    assert first["cost_usd"] == pytest.approx(WRITER_USD + JUDGE_USD)
    summary = run["summary"]
    assert summary["cases"] == summary["graded"] == 10
    assert summary["output_tokens"] == 3000
    assert summary["cost_usd"] == pytest.approx(10 * (WRITER_USD + JUDGE_USD))
    assert summary["average_score"] == pytest.approx(
        sum(c["score"] for c in run["cases"]) / 10)

    # the artifacts: the test file and the raw answer, under generated-files/<dataset>_...
    folder = Path(run["generated_files"])
    assert folder.parent == output / "generated-files"
    assert folder.name == f"prompt-injection_obeying_{run['timestamp']}"
    answer = (folder / "PI-04" / "answer.md").read_text()
    assert answer.startswith("Here is the test.") and "conduit-tools" in answer
    assert "sp.check_call" in (folder / "PI-04" / "test_PI-04.py").read_text()
    # the summary table and the paths are printed; the key is nowhere
    assert "prompt-injection │ obeying  │    10 │     10 │             0 │          3000" in \
        result.stdout
    assert f"results: {output / 'evaluation_results_prompt-injection_obeying_'}" in result.stdout
    assert f"generated files: {folder}" in result.stdout
    for path in output.rglob("*"):
        assert path.is_dir() or SECRET.encode() not in path.read_bytes(), path
    assert len(models.answered) == 34


def _config(tmp_path: Path, config: Path, **changes: Any) -> GradeConfig:
    values: dict[str, Any] = {"datasets": ("prompt-injection",), "models": ("ignoring",),
                              "grader": "judge", "output_dir": tmp_path / "out",
                              "llm_config": config}
    values.update(changes)
    return GradeConfig(**values)


def test_test_ids_choose_the_cases_and_one_model_keeps_the_plain_names(
        tmp_path: Path, endpoint: Callable[[Any], Path]) -> None:
    models = ScriptedModels()
    report = asyncio.run(grade(_config(tmp_path, endpoint(models),
                                       test_ids=("PI-02", "PI-07"))))
    (run,) = report.runs
    assert [case.test_id for case in run.cases] == ["PI-02", "PI-07"]
    assert sorted(test_id for _, test_id in models.answered) == ["PI-02", "PI-07"]
    assert run.results_file == tmp_path / "out" / (
        f"evaluation_results_prompt-injection_{run.timestamp}.json")
    assert run.generated_dir.name == f"prompt-injection_{run.timestamp}"
    assert sorted(p.name for p in run.generated_dir.iterdir()) == ["PI-02", "PI-07"]
    with pytest.raises(DatasetError, match="--test-ids: no test case 'PI-99' in prompt-injection"):
        asyncio.run(grade(_config(tmp_path, endpoint(models), test_ids=("PI-01", "PI-99"))))


@pytest.mark.parametrize("empty", [",", " "])
def test_empty_test_ids_are_an_error_not_every_case(tmp_path: Path, empty: str) -> None:
    """Before: `--test-ids ,` selected nothing, which meant every case (as `run -R ,` does
    not)."""
    result = restbench("grade", "-d", "conventions", "--test-ids", empty, "-o", tmp_path / "out")
    assert result.returncode == 2
    assert result.stderr == (f"error: --test-ids {empty!r}: names no case (it is empty); leave "
                             "--test-ids out to choose every case\n")
    assert not (tmp_path / "out").exists()


def test_an_interrupted_grade_keeps_its_finished_cases_and_no_empty_folders(
        tmp_path: Path, endpoint: Callable[[Any], Path]) -> None:
    """Before: every case's folder was made before its model answered, so a grade stopped
    (Ctrl-C cancels the run's tasks) left empty folders under generated-files/; and the result
    file was written only when every case of the dataset had ended."""
    models = ScriptedModels()
    late = PAYLOADS["PI-02"][0]

    def script(request: dict[str, Any]) -> Reply:
        reply = models(request)
        prompt = json.dumps(request["messages"])
        return replace(reply, delay_s=30) if late in prompt else reply

    models_file = endpoint(script)
    # a local endpoint takes one call at a time by default: PI-02's would hold up PI-03's
    models_file.write_text(models_file.read_text() + "max_concurrency = 4\n")
    config = _config(tmp_path, models_file, test_ids=("PI-01", "PI-02", "PI-03"))

    async def stopped() -> None:
        task = asyncio.create_task(grade(config))
        for _ in range(200):  # until PI-01 and PI-03 are graded; PI-02 waits for its model
            await asyncio.sleep(0.1)
            files = list((tmp_path / "out").glob("evaluation_results_*.json"))
            if files and len(json.loads(files[0].read_text())["cases"]) == 2:
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(stopped())
    generated = tmp_path / "out" / "generated-files"
    folders = [p for p in generated.rglob("*") if p.is_dir()]
    assert all(any(folder.iterdir()) for folder in folders)
    assert sorted(f.name for f in folders if f.name.startswith("PI-")) == ["PI-01", "PI-03"]
    (results,) = (tmp_path / "out").glob("evaluation_results_*.json")
    data = json.loads(results.read_text())
    assert (data["complete"], data["planned_cases"]) == (False, 3)
    assert [case["test_id"] for case in data["cases"]] == ["PI-01", "PI-03"]
    assert all(case["status"] == "graded" for case in data["cases"])


def test_a_rerun_pays_for_no_call_twice_unless_fresh(
        tmp_path: Path, endpoint: Callable[[Any], Path]) -> None:
    models = ScriptedModels()
    config = _config(tmp_path, endpoint(models), test_ids=("PI-03",))
    first = asyncio.run(grade(config))
    calls = len(models.answered)
    assert calls > 0
    again = asyncio.run(grade(config))
    assert len(models.answered) == calls  # every answer came from the output folder's store
    assert again.runs[0].cases[0].score == first.runs[0].cases[0].score
    assert again.runs[0].results_file != first.runs[0].results_file  # a new result file
    asyncio.run(grade(replace(config, fresh=True)))
    assert len(models.answered) == 2 * calls


def test_a_malformed_judge_is_retried_then_the_case_is_partly_graded(
        tmp_path: Path, endpoint: Callable[[Any], Path]) -> None:
    calls = {"PI-08": 0, "PI-09": 0}

    def judge(request: dict[str, Any]) -> Reply:
        case = "PI-09" if "Alice Martin" in request["messages"][1]["content"] else "PI-08"
        calls[case] += 1
        if case == "PI-09" or calls[case] == 1:  # PI-09 never gets a usable answer
            return Reply("All criteria are met.")
        return all_met(request)

    report = asyncio.run(grade(_config(tmp_path, endpoint(ScriptedModels(judge=judge)),
                                       test_ids=("PI-08", "PI-09"))))
    by_id = {case.test_id: case for case in report.runs[0].cases}
    ungraded, graded = by_id["PI-09"], by_id["PI-08"]
    # the checks that need no model keep their results (before: the whole case was ungraded)
    assert ungraded.status == "partly graded" and ungraded.score == 1.0
    assert ungraded.judge_attempts == 3 and calls["PI-09"] == 3
    assert ungraded.error.startswith("malformed judge answer after 3 attempts: not a JSON object")
    assert all(c.met is None for c in ungraded.criteria if c.source == "judge")
    assert all(c.met is True for c in ungraded.criteria if c.source == "check")
    assert graded.status == "graded" and graded.judge_attempts == 2 and graded.score == 1.0
    summary = report.runs[0].summary()
    assert (summary.cases, summary.graded, summary.partly_graded, summary.average_score) == (
        2, 1, 1, 1.0)
    saved = json.loads(report.runs[0].results_file.read_text())
    assert saved["cases"][1]["status"] == "partly graded" and saved["cases"][1]["score"] == 1.0
    assert saved["cases"][1]["criteria_met"] == sum(
        1 for c in ungraded.criteria if c.source == "check")
    assert saved["cases"][1]["judge"]["answers"] == ["All criteria are met."] * 3
    # Malformed answers are not kept (before: a rerun replayed them, partly graded for good).
    # PI-08's first attempt is asked again and now answers well; its good answer was kept.
    again = asyncio.run(grade(_config(tmp_path, endpoint(ScriptedModels(judge=judge)),
                                      test_ids=("PI-08", "PI-09"))))
    assert calls == {"PI-08": 3, "PI-09": 6}
    by_id = {case.test_id: case for case in again.runs[0].cases}
    assert by_id["PI-08"].judge_attempts == 1 and by_id["PI-08"].status == "graded"


def test_an_answer_without_code_scores_zero_and_an_unreachable_model_is_ungraded(
        tmp_path: Path, endpoint: Callable[[Any], Path]) -> None:
    def script(request: dict[str, Any]) -> Reply | str:
        if request["model"] == "judge":
            return all_met(request)
        if "todo-sync" in request["messages"][1]["content"]:
            return "I will not write tests for this API."
        return Reply(status=503, content="overloaded")

    report = asyncio.run(grade(_config(tmp_path, endpoint(script),
                                       test_ids=("PI-01", "PI-02"))))
    by_id = {case.test_id: case for case in report.runs[0].cases}
    refused, unreachable = by_id["PI-02"], by_id["PI-01"]
    assert refused.status == "graded" and refused.score == 0.0
    assert all(c.met is False and c.reason.startswith("no test was produced")
               for c in refused.criteria)
    assert Path(refused.answer_file).read_text() == "I will not write tests for this API."
    assert unreachable.status == "ungraded" and "HTTP 503" in unreachable.error
    assert report.runs[0].summary().average_score == 0.0


def test_an_answer_cut_off_at_the_token_limit_is_ungraded_not_scored(
        tmp_path: Path, endpoint: Callable[[Any], Path]) -> None:
    """Before: graded, every criterion unmet (a score of 0, exit 0), where `run` and agent-eval
    count such an answer as an error: the limit is the endpoint's setting, not the model's
    answer. What it wrote is kept."""
    def script(request: dict[str, Any]) -> Reply | str:
        if request["model"] == "judge":
            return all_met(request)
        return Reply(content="```python\ndef test_todos():\n    assert", finish_reason="length")

    report = asyncio.run(grade(_config(tmp_path, endpoint(script), test_ids=("PI-01",))))
    (cut,) = report.runs[0].cases
    assert cut.status == "ungraded" and "finish_reason length" in cut.error, cut.error
    assert all(c.met is None for c in cut.criteria)
    assert Path(cut.answer_file).read_text().endswith("    assert")


def test_cases_that_could_not_be_graded_fail_the_command_and_low_scores_do_not(
        tmp_path: Path, endpoint: Callable[[Any], Path]) -> None:
    """Before: grade exited 0 even when no model could be reached for any case."""
    def script(request: dict[str, Any]) -> Reply | str:
        if request["model"] == "judge":
            return all_met(request)
        if "todo-sync" in request["messages"][1]["content"]:  # PI-02: no test, a score of 0
            return "I will not write tests for this API."
        return Reply(status=503, content="overloaded")  # PI-01: the model is down

    config = endpoint(script)
    result = restbench("grade", "-d", "prompt-injection", "-m", "ignoring", "--grader", "judge",
                       "--llm-config", config, "--test-ids", "PI-01,PI-02", "-o", tmp_path)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "error: 1 of 2 cases could not be graded in full (1 ungraded, 0 partly graded; reasons "
        "above, and in the result files)")
    assert "PI-01: ungraded: generation failed:" in result.stderr
    (run,) = read_results(tmp_path).values()  # written before the command failed
    assert [c["status"] for c in run["cases"]] == ["ungraded", "graded"]
    result = restbench("grade", "-d", "prompt-injection", "-m", "ignoring", "--grader", "judge",
                       "--llm-config", config, "--test-ids", "PI-02", "-o", tmp_path / "low")
    assert result.returncode == 0, result.stderr  # scored 0, but graded


def test_the_summary_arithmetic() -> None:
    def case(test_id: str, met: list[bool | None], status: str = "graded",
             output: int = 0, usd: float = 0.0) -> CaseResult:
        return CaseResult(test_id, test_id, status,
                          [CriterionResult("judge", i, "c", m, "r") for i, m in enumerate(met)],
                          generation=Spend(10, output, usd), judge=Spend(5, 7, usd / 2))

    cases = [case("a", [True, False]), case("b", [True, True, False], output=100, usd=0.002),
             case("c", [None, True], status="ungraded", output=50, usd=0.01),
             case("d", [False])]
    assert [c.score for c in cases] == [0.5, pytest.approx(2 / 3), None, 0.0]
    row = summarize("suite", "m", cases)
    assert (row.cases, row.graded) == (4, 3)
    assert row.output_tokens == 4 * 7 + 100 + 50
    assert row.cost_usd == pytest.approx(1.5 * 0.002 + 1.5 * 0.01)
    assert row.average_score == pytest.approx((0.5 + 2 / 3 + 0.0) / 3)
    assert summarize("suite", "m", [cases[2]]).average_score is None
    console = Console(width=200, record=True)
    console.print(summary_table([row, summarize("other", "m", [cases[2]])]))
    text = console.export_text()
    # one format for every cost (it was 0.0180 here and 0.007500 below 0.01)
    assert "│ suite   │ m     │     4 │      3 │             0 │           178 │   0.018000 │" \
           "         0.389 │" in text
    assert "│ other   │ m     │     1 │      0 │             0 │            57 │   0.015000 │" \
           "             - │" in text
    cheap = summarize("cheap", "m", [case("e", [True], usd=0.005)])
    console = Console(width=200, record=True)
    console.print(summary_table([cheap]))
    assert "│   0.007500 │" in console.export_text()
    # what is written to JSON carries no float noise from summing (0.024999999999999998)
    noisy = summarize("noisy", "m", [case("f", [True], usd=0.01), case("g", [True], usd=0.005)])
    assert noisy.cost_usd == 0.0225 and (Spend(0, 0, 0.015) + Spend(0, 0, 0.0075)
                                         + Spend(0, 0, 0.0025)).cost_usd == 0.025


def test_the_grader_model_comes_from_the_option_then_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(GRADER_ENV, raising=False)
    assert grader_model(None) == DEFAULT_MODEL == "gpt-5-mini"
    monkeypatch.setenv(GRADER_ENV, "from-env")
    assert grader_model(None) == "from-env"
    assert grader_model("from-option") == "from-option"


async def flaky_writer(client: Any, requirement: str, openapi: Any, base_url: str,
                       seed_test: str | None = None) -> GeneratedTest:
    """A generator given as module:attribute: writes a fixed test, or fails on one requirement."""
    if "oat milk" in requirement:
        raise ValueError("this generator has a bug")
    return GeneratedTest("import requests\n\ndef test_x():\n    assert requests.get("
                         f"'{base_url}/todos', timeout=5).status_code == 401\n",
                         Cost(0.5, 10, 20))


async def garbage_writer(client: Any, requirement: str, openapi: Any, base_url: str,
                         seed_test: str | None = None) -> Any:
    """A generator that returns something else than a GeneratedTest."""
    return 42


def test_a_generator_that_returns_no_generated_test_fails_its_case(
        tmp_path: Path, endpoint: Callable[[Any], Path]) -> None:
    """Before: a traceback (AttributeError: 'int' object has no attribute 'code')."""
    result = restbench("grade", "-d", "conventions", "--test-ids", "CONV-02,CONV-05",
                       "-m", "ignoring", "--grader", "judge", "--llm-config", endpoint(all_met),
                       "-g", "tests.grading.test_grade:garbage_writer", "-o", tmp_path,
                       cwd=Path(__file__).parents[2])
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    (run,) = read_results(tmp_path).values()
    errors = {case["test_id"]: case["error"] for case in run["cases"]}
    expected = "generation failed: the generator returned int 42, not a GeneratedTest"
    assert errors == {"CONV-02": expected, "CONV-05": expected}  # each case, and the run went on
    assert f"CONV-05: ungraded: {expected}" in result.stderr


def test_a_custom_generator_and_a_failing_case_do_not_stop_the_run(
        tmp_path: Path, endpoint: Callable[[Any], Path]) -> None:
    report = asyncio.run(grade(_config(
        tmp_path, endpoint(all_met), datasets=("conventions",), test_ids=("CONV-02", "CONV-05"),
        generator="tests.grading.test_grade:flaky_writer")))
    by_id = {case.test_id: case for case in report.runs[0].cases}
    assert by_id["CONV-02"].status == "ungraded"  # TODO-19: "Buy oat milk"
    assert by_id["CONV-02"].error == "generation failed: ValueError: this generator has a bug"
    written = by_id["CONV-05"]
    assert written.status == "graded" and written.generation == Spend(10, 20, 0.5)
    assert Path(written.artifact).read_text().startswith("import requests")
    assert written.answer_file is None
    with pytest.raises(GeneratorError, match="unknown generator 'refine' for grading"):
        asyncio.run(grade(_config(tmp_path, endpoint(all_met), generator="refine")))


def test_a_dataset_without_criteria_needs_no_grader_model(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the grader (default gpt-5-mini) was looked up for every grade, so a config file
    whose [models] table did not list it stopped a dataset that only has assertion checks."""
    monkeypatch.delenv(GRADER_ENV, raising=False)
    folder = tmp_path / "checks-only"
    folder.mkdir()
    (folder / "api.json").write_text(json.dumps({"openapi": "3.1.0", "paths": {}}))
    (folder / "req.txt").write_text("GET /health answers 200.\n")
    (folder / "checks-only.json").write_text(json.dumps({
        "dataset_name": "checks-only", "test_cases": [{
            "test_id": "C-1", "name": "uses requests", "evaluation_criteria": [],
            "inputs": {"openapi": "api.json", "requirement": "req.txt"},
            "checks": [{"type": "contains", "value": "import requests"}]}]}))
    code = "```python\nimport requests\n\ndef test_health():\n    assert True\n```"
    with FakeLLMServer([Reply(content=code, usage=(100, 20))]) as fake:
        config = tmp_path / "models.toml"
        config.write_text(f'[defaults]\nbase_url = "{fake.base_url}"\napi_key_env = ""\n'
                          '[models.writer]\nmodel = "writer"\n')
        report = asyncio.run(grade(GradeConfig(datasets=(str(folder),), models=("writer",),
                                               output_dir=tmp_path / "out",
                                               llm_config=config)))
    (run,) = report.runs
    assert [case.status for case in run.cases] == ["graded"], run.cases
