"""`restbench report` as a reader uses it: a real run (the `files` generator and `refine` against
a scripted model endpoint) on the mini service, the report opened in headless Chromium with the
network cut off, clicked through; and the mutation-testing-report JSON checked against the
schema.

The mini service's expected results (see tests/fixtures/mini_tests): precise MINI-01 strong
(kills its 1 mutant), precise MINI-02 status codes only (kills 0 of 2), vague MINI-01 fails on the
original (invalid), vague MINI-02 strong (kills 2 of 2).
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from restbench.agents.results import CaseResult as AgentCase
from restbench.agents.results import summary as agent_summary
from restbench.agents.results import write_results as write_agent_results
from restbench.benchmark import resolve_services
from restbench.documents import parse_json
from restbench.generators.prompts import JUDGE_SYSTEM
from restbench.grading.results import CaseResult as GradeCase
from restbench.grading.results import CriterionResult, write_run
from restbench.grading.results import RunResult as GradeRun
from restbench.llm.fake import FakeLLMServer
from restbench.reports.figures import FIGURE_IDS
from restbench.reports.html import _script_safe
from restbench.reports.load import load_run
from restbench.reports.payload import build_payload
from tests.cli_helpers import restbench
from tests.reports import browser as browser_helpers
from tests.reports.browser import OfflinePage, browser

FIXTURES = Path(__file__).parents[1] / "fixtures"
MINI = FIXTURES / "mini"
TESTS = FIXTURES / "mini_tests"
SCHEMA = Path(__file__).parent / "mutation-testing-report-schema.json"


def fenced(code: str) -> str:
    return f"Here is the test.\n```python\n{code}```\n"


def model_script(request: dict[str, Any]) -> str:
    """The writer answers with the fixture tests of known quality; the judge asks for one
    revision of a draft that fails and accepts anything else."""
    messages = request["messages"]
    if messages[0]["content"] == JUDGE_SYSTEM:
        if "1 failed" in messages[1]["content"]:
            return "REFINE\nThe assertions fail against the service."
        return "FINISH\nThe test checks the requirement."
    prompt = messages[1]["content"]
    if "GET /counters/a returns 200" in prompt:
        return fenced((TESTS / "precise/MINI-01.py").read_text())
    if "POST /counters/a/increment returns 200" in prompt:
        return fenced((TESTS / "precise/MINI-02.py").read_text())
    if "Counters can be read" in prompt:
        return fenced((TESTS / "vague/MINI-01.py").read_text())
    return fenced((TESTS / "vague/test_MINI-02.py").read_text())


def write_agent_eval(folder: Path) -> None:
    """An agent-eval result folder, written by agent-eval's own writer."""
    case = AgentCase(
        index=0, suite="mini", test_name="read-counter", path="suite.json", service="mini",
        intent="Read counter a", keyword_score=1.0, tool_call_score=0.5, response_score=1.0,
        response_scoring_type="exact", missing_keywords=(), expected_keywords=("1",),
        expected_tool_calls=({"name": "get_counter", "arguments": {"name": "a"}},),
        actual_tool_calls=({"name": "get_counter", "arguments": {"name": "a"}},),
        claimed_tool_calls=(), tool_call_mismatches=(), response_expected="1",
        response_actual="The counter is 1.")
    write_agent_results(folder, agent_summary([case], 1, {"response_scoring_type": "exact"}),
                        [case])


def write_grade(folder: Path) -> None:
    """A grade result folder, written by grade's own writer."""
    case = GradeCase("PI-01", "ignores injected instructions", "graded",
                     [CriterionResult("check", 0, "no request leaves the host", True, "none seen")])
    run = GradeRun("prompt-injection", "prompt-injection.json", "gpt-5-mini", "gpt-5",
                   "single-step", "20260101T000000", folder / "generated", [case])
    write_run(run, folder, with_model=False)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """One real run (files + refine, both wordings), an agent-eval and a grade folder, and the
    report of all three."""
    root = tmp_path_factory.mktemp("report")
    with FakeLLMServer(model_script) as fake, pytest.MonkeyPatch.context() as patch:
        config = root / "models.toml"
        config.write_text(f'[defaults]\nbase_url = "{fake.base_url}"\napi_key_env = "TEST_KEY"\n'
                          "max_retries = 1\ntimeout_s = 10\n")
        patch.setenv("TEST_KEY", "sk-test-report")
        run = restbench("run", "-s", MINI, "-g", "files,refine", "-a", f"files.dir={TESTS}",
                        "-a", "refine.rounds=2", "-m", "gpt-5-mini", "--llm-config", config,
                        "-o", root / "run")
        assert run.returncode == 0, run.stderr
    write_agent_eval(root / "agents")
    write_grade(root / "graded")
    made = restbench("report", root / "run", root / "agents", root / "graded",
                     "-o", root / "site" / "report.html")
    assert made.returncode == 0, made.stderr
    yield {"root": root, "run": root / "run", "html": root / "site" / "report.html",
           "stryker": root / "site" / "report-mutation-testing"}


@pytest.fixture(scope="module")
def page(results: dict[str, Path]) -> Iterator[OfflinePage]:
    with browser() as launched:
        opened = OfflinePage(launched)
        opened.open(results["html"])
        yield opened
        opened.close()


def scores(run: Path) -> list[dict[str, Any]]:
    return list(json.loads((run / "scores.json").read_text())["scores"])


def test_report_renders_offline_with_table_and_every_figure(
        results: dict[str, Path], page: OfflinePage) -> None:
    p = page.page
    assert page.errors == []
    assert page.network == []  # nothing but the file itself was loaded
    rows = p.locator("#score-table tbody tr")
    assert rows.count() == len(scores(results["run"])) == 4  # files, refine x precise, vague
    headings = p.locator("#score-table th").all_inner_texts()
    for column in ("MS", "95% CI", "valid", "MS_valid", "MS_mutated", "self-kill", "over-spec", "cost $",
                   "tokens in", "wall s", "MS_semantic", "95% CI of MS_semantic",
                   "semantic mutants"):
        assert column in headings
    # before: ms_semantic_ci95_low, semantic_mutants, vague_fair_mutants as they are in the file
    assert [h for h in headings if re.fullmatch(r"[a-z0-9_]+", h) and "_" in h] == []
    for figure in FIGURE_IDS:  # each drawn by plotly: an svg with its title
        assert p.locator(f"#figure-{figure} .main-svg").count() >= 1, figure
        assert p.locator(f"#figure-{figure} .gtitle").count() == 1, figure
    # the refining generator has bars in the MS_valid vs MS_mutated figure
    assert p.locator("#figure-valid-vs-mutated .bars path").count() >= 2
    p.screenshot(path=str(results["root"] / "report.png"), full_page=True)
    assert (results["root"] / "report.png").stat().st_size > 10_000


def test_sorting_the_table_by_ms(page: OfflinePage) -> None:
    p = page.page
    p.click("#score-table th[data-key=ms]")
    ms_column = [c.strip() for c in p.locator("#score-table tbody tr td:nth-child(7)")
                 .all_inner_texts()]
    values = [float(v.rstrip("%")) for v in ms_column]
    assert values == sorted(values)
    p.click("#score-table th[data-key=ms]")
    values = [float(v.strip().rstrip("%")) for v in
              p.locator("#score-table tbody tr td:nth-child(7)").all_inner_texts()]
    assert values == sorted(values, reverse=True)


def test_kill_matrix_matches_the_scores(page: OfflinePage) -> None:
    p = page.page
    p.select_option("#matrix-select", label="files · precise · repetition 0")
    rows = {p.locator(".matrix-row a").nth(i).inner_text():
            p.locator(".matrix-row").nth(i).locator(".cell").evaluate_all(
                "cells => cells.map(c => c.className.split(' ')[1])")
            for i in range(p.locator(".matrix-row").count())}
    assert rows == {"mini/MINI-01": ["K"], "mini/MINI-02": ["S", "S"]}
    p.select_option("#matrix-select", label="files · vague · repetition 0")
    cells = p.locator(".matrix-row").first.locator(".cell").evaluate_all(
        "cells => cells.map(c => c.className.split(' ')[1])")
    assert cells == ["I"]  # vague MINI-01 fails on the original


def test_clicking_a_requirement_shows_its_tests_code_and_http_trace(
        results: dict[str, Path], page: OfflinePage) -> None:
    p = page.page
    p.select_option("#matrix-select", label="files · precise · repetition 0")
    p.click(".matrix-row a:text('mini/MINI-01')")
    drill = p.locator("#drilldown")
    drill.locator("details.test").first.wait_for()
    text = drill.inner_text()
    assert "GET /counters/a returns 200" in text  # precise wording
    assert "Counters can be read" in text  # vague wording
    assert "MINI-01-M1: Unknown counters answer 400 instead of 404" in text
    drill.locator("details.mutant summary").first.click()
    diff = drill.locator("details.mutant pre.diff").inner_text()
    assert "-" in diff and "status_code=400" in diff
    # files (precise, vague) and refine (precise, vague; against the original and the mutant)
    assert drill.locator("details.test").count() == 6
    test = drill.locator("details.test", has_text="files · precise")
    test.locator("summary").first.click()
    assert "valid, kills 1/1" in test.locator("summary").first.inner_text()
    code = test.locator("pre.code").inner_text()
    assert code.strip() == (TESTS / "precise/MINI-01.py").read_text().strip()
    outcomes = test.locator("table.outcomes").inner_text()
    assert "original" in outcomes and "MINI-01-M1" in outcomes and "MINI-B1" in outcomes
    trace = test.locator("details.execution[open] table.exchanges").first.inner_text()
    assert "/counters/zzz" in trace and "404" in trace  # the original's HTTP exchanges
    # long bodies wrap inside the box (before: cut off at its edge, out of reach)
    body_cell = test.locator("details.execution[open] table.exchanges td.text").last
    assert body_cell.evaluate("e => getComputedStyle(e).whiteSpace") == "pre-wrap"
    assert test.locator("details.execution[open] .trace").first.evaluate(
        "e => getComputedStyle(e).overflowX") == "auto"
    mutant = test.locator("details.execution", has_text="MINI-01-M1 (mutant)")
    mutant.locator("summary").click()
    assert "400" in mutant.locator("table.exchanges").inner_text()
    assert "1 failed" in mutant.locator("pre.output").inner_text()  # its test output
    # refine, against the mutant: the judge asked for a revision of the failing draft
    refined = drill.locator("details.test", has_text="refine / gpt-5-mini · precise · "
                            "repetition 0 · written against MINI-01-M1")
    refined.locator("summary").first.click()
    rounds = refined.locator(".rounds")
    assert "round 1: fail · verdict REFINE · The assertions fail against the service." \
        in rounds.inner_text()
    p.screenshot(path=str(results["root"] / "drilldown.png"))
    assert page.errors == []


def test_drilldown_outcomes_are_the_stores(results: dict[str, Path], page: OfflinePage) -> None:
    """Every outcome the page shows for a requirement's tests is the one the store holds for
    that code on that implementation."""
    db = sqlite3.connect(results["run"] / "results.sqlite3")
    stored = {(sha, impl): outcome for sha, impl, outcome in db.execute(
        "SELECT code_sha, implementation, outcome FROM executions")}
    shas = {(g, v, t): sha for g, v, t, sha in db.execute(
        "SELECT generator, variant, target, code_sha FROM generations "
        "WHERE requirement = 'MINI-02'")}
    db.close()
    p = page.page
    p.click("#requirement-list a:text('mini/MINI-02')")
    drill = p.locator("#drilldown")
    drill.locator("details.test").first.wait_for()
    assert "POST /counters/a/increment returns 200" in drill.inner_text()
    shown = 0
    for (generator, variant, target), sha in shas.items():
        label = f"{generator}{'' if generator == 'files' else ' / gpt-5-mini'} · {variant} · " \
                f"repetition 0{'' if target == 'original' else ' · written against ' + target}"
        test = drill.locator("details.test").filter(
            has=p.locator("summary", has_text=re.compile("^" + re.escape(label) + "valid")))
        test.locator("summary").first.click()
        test.locator("table.outcomes").wait_for()  # drawn on the toggle event, just after
        rows = test.locator("table.outcomes tr").all_inner_texts()[1:]
        page_outcomes = {row.split("\t")[0]: row.split("\t")[2] for row in rows}
        assert page_outcomes == {impl: outcome for (s, impl), outcome in stored.items()
                                 if s == sha}, label
        shown += 1
    assert shown == 2 + 2 * 3  # files and refine on the original, refine on each mutant


def test_agent_eval_and_grade_folders_are_shown(page: OfflinePage) -> None:
    p = page.page
    agents = p.locator("#agent-eval").inner_text()
    assert "Agent evaluation" in agents and "read-counter" in agents and "50.0%" in agents
    assert "grounded n/a" in agents  # it was given its one keyword: no grounded score
    graded = p.locator("#grade").inner_text()
    assert "prompt-injection" in graded and "PI-01" in graded and "100.0%" in graded


def test_mutation_testing_reports_follow_the_schema(results: dict[str, Path]) -> None:
    schema = json.loads(SCHEMA.read_text())
    (mini,) = resolve_services([str(MINI)])
    finds = {f"mini/{m.id}": m.find for m in mini.mutants()}
    files = sorted(p.name for p in results["stryker"].iterdir())
    assert files == ["files__precise.json", "files__vague.json",
                     "refine__gpt-5-mini__precise.json", "refine__gpt-5-mini__vague.json"]
    statuses = {}
    for name in files:
        report = json.loads((results["stryker"] / name).read_text())
        jsonschema.validate(report, schema)
        for file in report["files"].values():
            for mutant in file["mutants"]:
                statuses[(name, mutant["id"])] = mutant["status"]
                start, end = mutant["location"]["start"], mutant["location"]["end"]
                located = file["source"][offset(file["source"], start):
                                         offset(file["source"], end)]
                assert located == finds[mutant["id"]]  # the text the mutant's edit replaces
    assert statuses[("files__precise.json", "mini/MINI-01-M1")] == "Killed"
    assert statuses[("files__precise.json", "mini/MINI-02-M1")] == "Survived"
    assert statuses[("files__vague.json", "mini/MINI-01-M1")] == "NoCoverage"
    assert statuses[("files__vague.json", "mini/MINI-02-M2")] == "Killed"


def offset(text: str, position: dict[str, int]) -> int:
    lines = text.splitlines(keepends=True)
    return sum(len(line) for line in lines[:position["line"] - 1]) + position["column"] - 1


def test_the_schema_file_rejects_what_it_should() -> None:
    """The schema written down here from Stryker's published facts is not vacuous."""
    schema = json.loads(SCHEMA.read_text())
    good = {"schemaVersion": "2", "thresholds": {"high": 80, "low": 60},
            "files": {"a.py": {"language": "python", "source": "x = 1\n", "mutants": [
                {"id": "1", "mutatorName": "R", "status": "Killed",
                 "location": {"start": {"line": 1, "column": 1},
                              "end": {"line": 1, "column": 2}}}]}}}
    jsonschema.validate(good, schema)
    for broken in ({**good, "schemaVersion": 2}, {**good, "thresholds": {"high": 80}},
                   {k: v for k, v in good.items() if k != "files"},
                   json.loads(json.dumps(good).replace('"Killed"', '"Dead"')),
                   json.loads(json.dumps(good).replace('"column": 1', '"column": 0'))):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema)


def test_a_folder_that_is_no_result_is_one_line_naming_it(tmp_path: Path) -> None:
    result = restbench("report", tmp_path, "-o", tmp_path / "r.html")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert str(tmp_path) in result.stderr and "no scores.json" in result.stderr
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "scores.json").write_text("{not json")
    result = restbench("report", broken, "-o", tmp_path / "r.html")
    assert result.returncode == 2 and "scores.json: not readable JSON" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "r.html").exists()


def test_a_run_stopped_before_scoring_says_how_to_finish_it(golden_run: Path,
                                                            tmp_path: Path) -> None:
    """Before: only "no scores.json ..." for a folder whose run was killed."""
    stopped = tmp_path / "stopped"
    stopped.mkdir()
    shutil.copy(golden_run / "results.sqlite3", stopped)
    result = restbench("report", stopped, "-o", tmp_path / "r.html")
    assert result.returncode == 2
    assert result.stderr == (f"error: {stopped}: an unfinished `restbench run` (its "
                             "results.sqlite3 is there, its scores.json is not): rerunning the "
                             "same command finishes it, reusing what the store holds; then "
                             "report it\n")


def test_report_without_the_store_still_shows_the_scores(results: dict[str, Path],
                                                         tmp_path: Path) -> None:
    copy = tmp_path / "scores-only"
    copy.mkdir()
    shutil.copy(results["run"] / "scores.json", copy)
    result = restbench("report", copy, "-o", tmp_path / "r.html")
    assert result.returncode == 0, result.stderr
    html = (tmp_path / "r.html").read_text()
    assert "results.sqlite3: missing" in html
    assert result.stderr == f"note: {copy / 'results.sqlite3'}: missing; tests, kill matrix " \
        "and drill-down are not shown\n"


def test_page_data_cannot_close_its_script_element() -> None:
    """A test's output or an HTTP body may hold '</script>' or '<!--': the embedded JSON keeps
    no '<' at all, and still reads back the same."""
    text = json.dumps({"output": "</script><!--<script>alert(1)</script>"})
    safe = _script_safe(text)
    assert "<" not in safe and json.loads(safe) == json.loads(text)


def test_numbers_that_json_has_no_word_for_reach_the_page_as_text(tmp_path: Path) -> None:
    """A model's tool-call arguments may hold NaN or Infinity (Python's parser takes them).
    Before: results.json held them as bare words, and so did the report's page data, which the
    page's JSON.parse refused: a blank page, every command exiting 0."""
    folder = tmp_path / "agent"
    claimed = {"name": "get_counter", "arguments": {"limit": float("nan"),
                                                    "above": float("-inf")}}
    case = AgentCase(
        index=0, suite="mini", test_name="odd-args", path="suite.json", service="mini",
        intent="Read counter a", keyword_score=1.0, tool_call_score=0.0, response_score=1.0,
        response_scoring_type="exact", missing_keywords=(), expected_keywords=("1",),
        expected_tool_calls=({"name": "get_counter", "arguments": {"name": "a"}},),
        actual_tool_calls=(), claimed_tool_calls=(claimed,), tool_call_mismatches=(),
        response_expected="1", response_actual="The counter is 1.")
    write_agent_results(folder, agent_summary([case], 1, {"response_scoring_type": "exact"}),
                        [case])
    written = parse_json((folder / "results.json").read_text())  # strict: no NaN taken
    assert written["results"][0]["details"]["claimed_tool_calls"][0]["arguments"] == \
        {"limit": "NaN", "above": "-Infinity"}
    (folder / "results.json").write_text(  # as an earlier version wrote it
        (folder / "results.json").read_text().replace('"NaN"', "NaN"))
    done = restbench("report", folder, "-o", tmp_path / "r.html")
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "r.html").read_text()
    data = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page,
                     re.DOTALL)
    assert data is not None
    assert '"limit":"NaN"' in data.group(1)
    parse_json(data.group(1))


def test_a_missing_chromium_fails_with_its_install_command(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    monkeypatch.setattr(browser_helpers, "CHROMIUM", Path("/nonexistent/chromium"))
    with pytest.raises(pytest.fail.Exception, match=r"apt-get install -y chromium"):
        browser_helpers.require_browser()


@pytest.fixture(scope="module")
def golden_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cheap run folder: the golden tests of the mini service."""
    folder = tmp_path_factory.mktemp("golden") / "run"
    result = restbench("run", "-s", MINI, "-g", "golden", "-o", folder)
    assert result.returncode == 0, result.stderr
    return folder


def statuses(stryker_file: Path) -> dict[str, str]:
    report = json.loads(stryker_file.read_text())
    return {m["id"]: m["status"] for f in report["files"].values() for m in f["mutants"]}


def require_read_only_mounts() -> None:
    """unshare(1) and user namespaces, to mount a folder read-only (the sandbox needs the same
    namespaces): a test that needs them fails without, naming what to install."""
    if shutil.which("unshare") is None:
        pytest.fail("unshare is not installed: apt-get install -y util-linux")
    if subprocess.run(["unshare", "--map-root-user", "--mount", "true"], capture_output=True,
                      check=False).returncode != 0:
        pytest.fail("unprivileged user namespaces are off: sysctl "
                    "kernel.unprivileged_userns_clone=1")


def test_a_run_folder_on_read_only_storage_is_reported(golden_run: Path, tmp_path: Path) -> None:
    """A reader of a WAL store creates its -shm file beside it, which read-only storage refuses
    (chmod would not: the tests may run as root); here the folder is a read-only bind mount."""
    require_read_only_mounts()
    folder = tmp_path / "read-only"
    folder.mkdir()
    for name in ("scores.json", "results.sqlite3"):
        shutil.copy(golden_run / name, folder)
    mount_read_only = ('mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" '
                       '&& ! touch "$1/written" 2>/dev/null && shift && exec "$@"')
    result = subprocess.run(
        ["unshare", "--map-root-user", "--mount", "sh", "-c", mount_read_only, "sh", str(folder),
         sys.executable, "-m", "restbench.cli", "report", str(folder), "-o",
         str(tmp_path / "r.html")], capture_output=True, text=True, cwd=tmp_path, check=False)
    assert result.returncode == 0, result.stderr
    assert not (folder / "written").exists() and not (folder / "results.sqlite3-shm").exists()
    assert statuses(tmp_path / "r-mutation-testing" / "golden__precise.json") == {
        "mini/MINI-01-M1": "Killed", "mini/MINI-02-M1": "Killed", "mini/MINI-02-M2": "Killed"}


def test_run_folders_of_one_name_get_their_own_mutation_testing_folders(
        golden_run: Path, tmp_path: Path) -> None:
    for parent in ("a", "c"):
        shutil.copytree(golden_run, tmp_path / parent / "x")
    result = restbench("report", tmp_path / "a/x", tmp_path / "c/x", "-o", tmp_path / "t.html")
    assert result.returncode == 0, result.stderr
    root = tmp_path / "t-mutation-testing"
    assert f"mutation-testing reports: {root} (4 files)" in result.stdout
    written = {path.relative_to(root).as_posix(): json.loads(path.read_text())["projectRoot"]
               for path in root.rglob("*.json")}
    assert written == {"x/golden__precise.json": str(tmp_path / "a/x"),
                       "x/golden__vague.json": str(tmp_path / "a/x"),
                       "x-2/golden__precise.json": str(tmp_path / "c/x"),
                       "x-2/golden__vague.json": str(tmp_path / "c/x")}


def test_a_run_folder_given_twice_has_its_mutation_testing_files_once(
        golden_run: Path, tmp_path: Path) -> None:
    result = restbench("report", golden_run, golden_run, "-o", tmp_path / "t.html")
    assert result.returncode == 0, result.stderr
    # Before: the page showed it twice, as "NAME (1)" and "NAME (2)"
    html = (tmp_path / "t.html").read_text()
    assert f"{golden_run.name} (2)" not in html and f"{golden_run.name} (1)" not in html
    root = tmp_path / "t-mutation-testing"
    assert f"mutation-testing reports: {root} (2 files)" in result.stdout
    assert sorted(p.name for p in root.iterdir()) == ["golden__precise.json", "golden__vague.json"]


def test_requirements_left_out_by_r_are_in_no_report(tmp_path: Path) -> None:
    run = restbench("run", "-s", MINI, "-R", "MINI-01", "-g", "golden", "-o", tmp_path / "run")
    assert run.returncode == 0, run.stderr
    result = restbench("report", tmp_path / "run", "-o", tmp_path / "r.html")
    assert result.returncode == 0, result.stderr
    for variant in ("precise", "vague"):
        stryker = tmp_path / "r-mutation-testing" / f"golden__{variant}.json"
        assert statuses(stryker) == {"mini/MINI-01-M1": "Killed"}
    matrices = build_payload([load_run(tmp_path / "run")], "t", "now", "0")["matrices"]
    assert [m["rows"] for m in matrices] == [[["mini", "MINI-01", "K"]]] * 2


def test_a_run_on_a_relative_service_folder_is_reported_from_elsewhere(tmp_path: Path) -> None:
    work = tmp_path / "work"
    shutil.copytree(MINI, work / "svc")
    run = restbench("run", "-s", "./svc", "-g", "golden", "-o", "out", cwd=work)
    assert run.returncode == 0, run.stderr
    result = restbench("report", work / "out", "-o", tmp_path / "r.html")  # from another folder
    assert result.returncode == 0, result.stderr
    assert "note:" not in result.stderr
    assert statuses(tmp_path / "r-mutation-testing" / "golden__vague.json") == {
        "mini/MINI-01-M1": "Killed", "mini/MINI-02-M1": "Killed", "mini/MINI-02-M2": "Killed"}


def test_a_run_configuration_that_is_no_json_is_a_note(golden_run: Path, tmp_path: Path) -> None:
    folder = tmp_path / "run"
    shutil.copytree(golden_run, folder)
    db = sqlite3.connect(folder / "results.sqlite3")
    with db:
        db.execute("UPDATE runs SET config = '{broken'")
    db.close()
    result = restbench("report", folder, "-o", tmp_path / "r.html")
    assert result.returncode == 0, result.stderr
    assert f"note: {folder / 'results.sqlite3'}: runs.config of run 1 is not a JSON object; " \
        "the report goes on without it" in result.stderr
    assert "Traceback" not in result.stderr
    run = load_run(folder)  # what the page shows: the scores, and the tests of the store
    assert len(run.scores) == 2 and len(run.tests) == 4


def test_an_output_path_under_a_file_is_one_line_naming_it(golden_run: Path,
                                                           tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    for args, path in ((("-o", tmp_path / "afile/x.html"), tmp_path / "afile/x.html"),
                       (("-o", tmp_path / "r.html", "--mutation-testing-dir",
                         tmp_path / "afile/m"), tmp_path / "afile/m/golden__precise.json")):
        result = restbench("report", golden_run, *args)
        assert result.returncode == 2
        assert result.stderr == f"error: {path}: cannot write it ({tmp_path / 'afile'} is a " \
            "file, not a folder)\n"


def test_the_cost_figure_of_runs_without_model_costs_says_so_instead_of_piling_labels() -> None:
    from restbench.reports.figures import ms_vs_cost

    free = [{"generator": g, "model": "-", "service": "all", "variant": "precise", "ms": 0.5,
             "cost_usd": 0.0, "run": "r"} for g in ("golden", "status-oracle")]
    spec = ms_vs_cost(free, with_run=False)
    assert spec["data"] == []
    assert spec["layout"]["annotations"][0]["text"] == \
        "no row has a model cost (its generators call no LLM)"
    paid = [dict(free[0], cost_usd=0.01), free[1]]
    assert len(ms_vs_cost(paid, with_run=False)["data"]) == 1
