"""`restbench run` end to end on the mini service: scores, files, store, resume."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from restbench.benchmark import Variant
from restbench.engine import RunConfig, RunResult, run_benchmark
from restbench.generators import GeneratorSpec
from restbench.reports.export import write_results
from restbench.reports.load import load_run
from restbench.reports.stryker import stryker_report
from tests.cli_helpers import killed_if_left, restbench, start_interruptible

FIXTURES = Path(__file__).parents[1] / "fixtures"
MINI = FIXTURES / "mini"
TESTS = FIXTURES / "mini_tests"


def scores_by_variant(output: Path) -> dict[str, dict[str, object]]:
    """Every number of scores.json but the generation wall time."""
    data = json.loads((output / "scores.json").read_text())
    return {row["variant"]: {k: v for k, v in row.items() if k != "generation_s"}
            for row in data["scores"]}


def test_files_generator_scores_tests_by_their_quality(tmp_path: Path) -> None:
    result = restbench("run", "-s", MINI, "-g", "files", "-a", f"dir={TESTS}", "-o", tmp_path)
    assert result.returncode == 0, result.stderr
    scores = scores_by_variant(tmp_path)
    # precise: MINI-01 strong (1/1), MINI-02 asserts status codes only (0/2) -> 1/3
    assert scores["precise"]["ms"] == pytest.approx(1 / 3, abs=1e-6)
    assert scores["precise"]["validity_rate"] == 1.0
    # vague: MINI-01 fails on the original (invalid, kills nothing), MINI-02 strong (2/2) -> 2/3
    assert scores["vague"]["ms"] == pytest.approx(2 / 3, abs=1e-6)
    assert scores["vague"]["validity_rate"] == 0.5
    # the status-only test passes on the benign variant, the strong vague MINI-02 too
    assert scores["precise"]["overspecification_rate"] == 0.0
    rows = (tmp_path / "requirements.csv").read_text().splitlines()
    assert rows[0].startswith("generator,model,service,variant,repetition,requirement")
    assert "files,-,mini,vague,0,MINI-01,1,False,0,,,0,0,,0,0," in rows
    assert "MS" in result.stdout and "33.3%" in result.stdout and "66.7%" in result.stdout


def test_files_takes_no_link_out_of_its_folder_and_says_why_a_file_is_not_taken(
        tmp_path: Path) -> None:
    """Before: a link to /etc/shadow was read and stored as the test's code (and from there
    went into reports); a binary file was a bare UnicodeDecodeError; TODO-01.js was "no test
    file" without saying which names are."""
    secret = tmp_path / "secret.txt"
    secret.write_text("root:$6$hash:20228:0:99999:7:::\n")
    folder = tmp_path / "tests"
    (folder / "precise").mkdir(parents=True)
    (folder / "vague").mkdir()
    (folder / "precise" / "MINI-01.py").symlink_to(secret)
    (folder / "precise" / "MINI-02.py").write_bytes(b"\xff\xfe binary")
    (folder / "vague" / "MINI-01.js").write_text("test('x', () => {})\n")
    shutil.copy(TESTS / "vague" / "test_MINI-02.py", folder / "vague" / "inside.py")
    (folder / "vague" / "MINI-02.py").symlink_to("inside.py")  # a link inside is fine
    out = tmp_path / "out"
    result = restbench("run", "-s", MINI, "-g", "files", "-a", f"dir={folder}", "-o", out)
    assert result.returncode == 1, result.stderr
    with sqlite3.connect(out / "results.sqlite3") as db:
        rows = {(variant, requirement): (status, error, code) for variant, requirement, status,
                error, code in db.execute("SELECT variant, requirement, status, error, code "
                                          "FROM generations")}
    assert all("hash" not in code for _, _, code in rows.values())
    linked = (f"UnreadableTestFile: {folder}/precise/MINI-01.py links to {secret}, outside "
              f"{folder}: not read")
    assert rows[("precise", "MINI-01")][:2] == ("error", linked)
    binary = (f"UnreadableTestFile: {folder}/precise/MINI-02.py: not UTF-8 text (byte 0xff at "
              "offset 0)")
    assert rows[("precise", "MINI-02")][:2] == ("error", binary)
    status, error, _ = rows[("vague", "MINI-01")]
    assert status == "error" and error.startswith(
        f"MissingTestFile: no test file for MINI-01 under {folder} (vague/MINI-01.js found: a "
        "test file is named MINI-01.py, test_MINI-01.py, ")
    assert rows[("vague", "MINI-02")][0] == "ok"
    assert "hash" not in result.stdout + result.stderr


def test_files_names_what_stands_where_a_test_file_was_looked_for(tmp_path: Path) -> None:
    """Before: a folder, a pipe and a dangling link were each "no test file for ..."; a file
    over the limit was read whole, then "TypeError: generate() returned a test of 3.0 MiB",
    naming no file."""
    folder = tmp_path / "tests"
    (folder / "precise" / "MINI-01.py").mkdir(parents=True)
    os.mkfifo(folder / "precise" / "MINI-02.py")
    (folder / "vague").mkdir()
    (folder / "vague" / "MINI-01.py").symlink_to(folder / "vague" / "gone.py")
    (folder / "vague" / "MINI-02.py").write_text("#" * (3 * 2**20))
    out = tmp_path / "out"
    result = restbench("run", "-s", MINI, "-g", "files", "-a", f"dir={folder}", "-o", out)
    assert result.returncode == 1, result.stderr
    with sqlite3.connect(out / "results.sqlite3") as db:
        errors = {(variant, requirement): error for variant, requirement, error in
                      db.execute("SELECT variant, requirement, error FROM generations")}
    found = "UnreadableTestFile: " + str(folder)
    assert errors == {
        ("precise", "MINI-01"): f"{found}/precise/MINI-01.py: a folder, not a file: not read",
        ("precise", "MINI-02"): f"{found}/precise/MINI-02.py: not a regular file (a pipe, "
                                "socket or device): not read",
        ("vague", "MINI-01"): f"{found}/vague/MINI-01.py: a link to {folder}/vague/gone.py, "
                              "which does not exist: not read",
        ("vague", "MINI-02"): f"{found}/vague/MINI-02.py: 3.0 MiB, over the 1 MiB a generated "
                              "test may have: not read"}


def test_semantic_and_vague_fair_scores_in_table_and_files(tmp_path: Path) -> None:
    # MINI-01-M1 is a status mutant without vague basis; MINI-02's two are semantic with one.
    result = restbench("run", "-s", MINI, "-g", "files", "-a", f"dir={TESTS}", "-o", tmp_path)
    assert result.returncode == 0, result.stderr
    scores = scores_by_variant(tmp_path)
    # precise: MINI-02's status-only test kills neither semantic mutant
    assert scores["precise"]["ms_semantic"] == 0.0
    assert scores["precise"]["semantic_mutants"] == 2
    assert scores["precise"]["ms_vague_fair"] is None  # the vague-fair score is vague-only
    # vague: MINI-02 kills both (2/2); MINI-01's status mutant is outside both subsets
    assert scores["vague"]["ms"] == pytest.approx(2 / 3, abs=1e-6)
    assert scores["vague"]["ms_semantic"] == 1.0
    assert scores["vague"]["ms_vague_fair"] == 1.0
    assert scores["vague"]["ms_vague_fair_ci95_low"] == 1.0
    assert scores["vague"]["vague_fair_mutants"] == 2
    header = (tmp_path / "scores.csv").read_text().splitlines()[0].split(",")
    assert {"ms_semantic", "ms_semantic_ci95_low", "ms_semantic_ci95_high", "ms_vague_fair",
            "ms_vague_fair_ci95_low", "ms_vague_fair_ci95_high"} <= set(header)
    rows = list(csv.DictReader((tmp_path / "requirements.csv").open()))
    by_key = {(r["variant"], r["requirement"]): r for r in rows}
    assert by_key[("precise", "MINI-02")]["ms_semantic"] == "0.0"
    assert by_key[("vague", "MINI-02")]["ms_vague_fair"] == "1.0"
    assert by_key[("vague", "MINI-01")]["vague_fair_mutants"] == "0"
    assert by_key[("vague", "MINI-01")]["ms_vague_fair"] == ""  # no such mutant: no score
    assert "MS_semantic" in result.stdout and "MS_vague-fair" in result.stdout


def test_golden_scores_full_marks_and_store_keeps_everything(tmp_path: Path) -> None:
    result = asyncio.run(run_benchmark(RunConfig(services=(str(MINI),), output_dir=tmp_path,
                                                 variants=(Variant.PRECISE,))))
    (row,) = result.rows
    assert (row.score.ms, row.score.validity_rate, row.score.killed) == (1.0, 1.0, 3)
    db = sqlite3.connect(tmp_path / "results.sqlite3")
    implementations = {r[0] for r in db.execute("SELECT implementation FROM executions")}
    assert implementations == {"original", "MINI-01-M1", "MINI-02-M1", "MINI-02-M2", "MINI-B1"}
    exchanges = json.loads(db.execute(
        "SELECT exchanges FROM executions WHERE implementation = 'MINI-02-M1'").fetchone()[0])
    assert exchanges[0]["method"] == "POST"
    assert exchanges[0]["url"] == "/counters/a/increment"
    assert exchanges[0]["status"] == 200 and '"value":3' in exchanges[0]["response_body"]
    spec, code = db.execute("SELECT generator_spec, code FROM generations").fetchone()
    assert json.loads(spec) == {"name": "golden", "args": {}}
    assert "def test_" in code


def test_rerun_reuses_finished_work(tmp_path: Path) -> None:
    config = RunConfig(services=(str(MINI),), output_dir=tmp_path, repetitions=2,
                       generators=(GeneratorSpec("files", {"dir": str(TESTS)}),))
    first = asyncio.run(run_benchmark(config))
    second = asyncio.run(run_benchmark(config))
    assert first.counts["executions"] > 0
    assert second.counts["executions"] == 0
    assert second.counts["executions_reused"] == first.counts["executions"]
    assert [r.score for r in first.rows] == [r.score for r in second.rows]


SLOW_TEST = """
import time
import requests

def test_slowly():
    time.sleep(0.7)
    assert requests.get("http://localhost:8000/counters/a", timeout=10).json() == {"value": 1}
"""


@pytest.fixture(scope="module")
def slow_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path]:
    """The arguments of a run whose tests each take 0.7 s, and its uninterrupted output."""
    folder = tmp_path_factory.mktemp("slow-run")
    tests = folder / "tests"
    tests.mkdir()
    for requirement in ("MINI-01", "MINI-02"):
        (tests / f"{requirement}.py").write_text(SLOW_TEST + f"# {requirement}\n")
    args = ["run", "-s", str(MINI), "-g", "files", "-a", f"dir={tests}", "-j", "1"]
    reference = restbench(*args, "-o", folder / "reference")
    assert reference.returncode == 0, reference.stderr
    return args, folder / "reference"


@pytest.mark.parametrize("stop_signal", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM])
def test_interrupted_run_resumes_with_the_same_numbers(
        tmp_path: Path, slow_run: tuple[list[str], Path], stop_signal: signal.Signals) -> None:
    args, reference = slow_run
    output = tmp_path / "interrupted"
    scratch = tmp_path / "scratch"  # the run's temporary folders
    scratch.mkdir()
    process = start_interruptible(*args, "-o", output,
                                  env={**os.environ, "TMPDIR": str(scratch)})
    store = output / "results.sqlite3"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait until some executions, not all, are stored
        try:
            done = sqlite3.connect(store).execute("SELECT count(*) FROM executions").fetchone()[0]
        except sqlite3.OperationalError:  # the store is not created yet
            done = 0
        if done >= 2:
            break
        time.sleep(0.1)
    process.send_signal(stop_signal)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode != 0
    if stop_signal != signal.SIGKILL:  # SIGTERM ends it as Ctrl-C does
        assert process.returncode == 130, stderr
        # the last line: before, stopping the progress bars drew them again below it
        assert stderr.strip().splitlines()[-1].startswith("error: interrupted"), stderr
        assert "rerun the same command to resume" in stderr
        assert "Traceback" not in stderr
        assert "Unknown child process" not in stderr  # asyncio's, when a kill reaped a worker
        assert list(scratch.iterdir()) == []
    partial = sqlite3.connect(store).execute("SELECT count(*) FROM executions").fetchone()[0]

    resumed = restbench(*args, "-o", output)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{partial} reused" in resumed.stdout
    assert scores_by_variant(output) == scores_by_variant(reference)


def test_sigterm_ends_a_model_run_whose_sigint_is_ignored(tmp_path: Path) -> None:
    """A shell's background job (`restbench run ... &` in a script, nohup) ignores SIGINT.
    Before: SIGTERM then hung a run with a model for ever in its cleanup, its servers and
    workers alive (6 of 6 tries)."""
    from restbench.llm.fake import FakeLLMServer, Reply

    answer = "```python\ndef test_nothing():\n    assert True\n```"
    with FakeLLMServer(lambda request: Reply(content=answer, delay_s=2)) as fake:
        models = tmp_path / "models.toml"
        models.write_text(f'[models.slow]\nbase_url = "{fake.base_url}"\napi_key_env = ""\n')
        scratch = tmp_path / "scratch"
        scratch.mkdir()
        ignoring_sigint = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                           "os.execv(sys.executable, [sys.executable, '-m', 'restbench.cli', "
                           "*sys.argv[1:]])")  # SIG_IGN outlives exec, as a shell's does
        process = subprocess.Popen(
            [sys.executable, "-c", ignoring_sigint, "run", "-s", str(MINI), "-g", "single-step",
             "-m", "slow", "-V", "precise", "--llm-config", str(models),
             "-o", str(tmp_path / "out")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "TMPDIR": str(scratch)})
        with killed_if_left(process):
            deadline = time.monotonic() + 60
            while not fake.requests:  # generating: its model calls are under way
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.05)
            time.sleep(2.2)  # the answers are in, their tests execute (it hung here 3 of 3 times)
            process.send_signal(signal.SIGTERM)
            _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1].startswith("error: interrupted"), stderr
    assert "Traceback" not in stderr and "was never awaited" not in stderr
    assert list(scratch.iterdir()) == []


def test_ray_nodes_get_no_model_keys_unless_a_generator_uses_a_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a run hands to Ray nodes for generating: the README promises the keys travel only
    for runs with a model."""
    from restbench.engine.run import _Runner

    monkeypatch.setenv("OPENAI_API_KEY", "sk-stays-here")
    monkeypatch.delenv("RESTBENCH_LLM_CONFIG", raising=False)
    baselines = _Runner(RunConfig(services=("todo",), output_dir=tmp_path / "a",
                                  generators=(GeneratorSpec("golden"),
                                              GeneratorSpec("status-oracle"))), print)
    assert baselines.model_environment().variables == {}
    with_model = _Runner(RunConfig(services=("todo",), output_dir=tmp_path / "b",
                                   generators=(GeneratorSpec("single-step"),),
                                   models=("gpt-5-mini",)), print)
    assert with_model.model_environment().variables["OPENAI_API_KEY"] == "sk-stays-here"


def _outcomes(store: Path) -> dict[str, tuple[str, str]]:
    with sqlite3.connect(store) as db:
        return {key: (outcome, reason) for key, outcome, reason in
                db.execute("SELECT key, outcome, reason FROM executions")}


def _with_and_without_inference(config: RunConfig, tmp_path: Path
                                ) -> tuple[RunResult, RunResult, dict[str, tuple[str, str]],
                                           dict[str, tuple[str, str]]]:
    """`config` run into tmp_path/inferred, then with `--execute-all` into tmp_path/all: both
    results, both stores' outcomes and reasons, after checking that the outcomes and scores
    are the same."""
    inferred = asyncio.run(run_benchmark(replace(config, output_dir=tmp_path / "inferred")))
    executed = asyncio.run(run_benchmark(replace(config, output_dir=tmp_path / "all",
                                                 infer_unreached=False)))
    left_out = _outcomes(tmp_path / "inferred" / "results.sqlite3")
    ran = _outcomes(tmp_path / "all" / "results.sqlite3")
    assert {key: o for key, (o, _) in left_out.items()} == {key: o for key, (o, _) in ran.items()}
    assert [row.score for row in inferred.rows] == [row.score for row in executed.rows]
    return inferred, executed, left_out, ran


def test_executions_left_out_as_never_reached_have_the_outcomes_running_them_gives(
        tmp_path: Path) -> None:
    """By default a test is not run on a mutant whose edited statements its run on the original
    never reached; `--execute-all` runs them, and every outcome is the same."""
    config = RunConfig(services=("todo",), output_dir=tmp_path / "inferred",
                       variants=(Variant.PRECISE,), requirements=("TODO-12", "TODO-14", "TODO-24"),
                       generators=(GeneratorSpec("status-oracle"), GeneratorSpec("golden")))
    inferred, executed, left_out, ran = _with_and_without_inference(config, tmp_path)
    assert left_out.keys() == ran.keys()
    not_run = [key for key, (_, reason) in left_out.items() if reason == "not run: never reached"]
    assert len(not_run) == inferred.counts["executions_inferred"] > 0
    assert executed.counts["executions_inferred"] == 0
    assert inferred.counts["executions"] + len(not_run) == executed.counts["executions"]
    # the mutation-testing report says why such a mutant survived
    write_results(inferred, tmp_path / "inferred")
    report = stryker_report(load_run(tmp_path / "inferred"), "status-oracle", "-", "precise")
    reasons = [m.get("statusReason") for f in report["files"].values() for m in f["mutants"]
               if m["status"] == "Survived"]
    assert "not run: never reached" in reasons
    # --execute-all on the first run's store runs just what that run left out
    completed = asyncio.run(run_benchmark(replace(config, infer_unreached=False)))
    assert completed.counts["executions"] == len(not_run)
    after = _outcomes(tmp_path / "inferred" / "results.sqlite3")
    assert {key: o for key, (o, _) in after.items()} == {key: o for key, (o, _) in ran.items()}
    assert not [key for key, (_, reason) in after.items() if reason == "not run: never reached"]


def test_on_the_node_js_ledger_executions_left_out_have_the_outcomes_running_them_gives(
        tmp_path: Path) -> None:
    """The same on the ledger, whose original's servers run with V8's coverage probe
    (serving.node_reach)."""
    config = RunConfig(services=("ledger",), output_dir=tmp_path / "inferred",
                       variants=(Variant.PRECISE,), requirements=("LED-02", "LED-12", "LED-17"),
                       generators=(GeneratorSpec("status-oracle"), GeneratorSpec("golden")))
    inferred, _, _, _ = _with_and_without_inference(config, tmp_path)
    assert inferred.counts["executions_inferred"] > 0


def test_a_status_oracle_pass_implied_by_the_schema_oracle_pass_is_the_outcome_running_it_gives(
        tmp_path: Path) -> None:
    """Where the schema-oracle test (the same calls, stricter checks) passed on a mutant, the
    status-oracle test is not run there and its pass is recorded; where it failed, the
    status-oracle test runs. `--execute-all` runs everything: every outcome is the same."""
    config = RunConfig(services=("todo",), variants=(Variant.PRECISE,),
                       requirements=("TODO-13", "TODO-14"),
                       generators=(GeneratorSpec("status-oracle"), GeneratorSpec("schema-oracle")))
    implied, executed, _, _ = _with_and_without_inference(config, tmp_path)
    assert executed.counts["executions_implied"] == 0

    with sqlite3.connect(tmp_path / "inferred" / "results.sqlite3") as db:
        rows = db.execute(
            "SELECT g.generator, g.requirement, e.implementation, e.outcome, e.reason "
            "FROM executions e JOIN (SELECT DISTINCT generator, requirement, code_sha "
            "FROM generations) g ON g.code_sha = e.code_sha "
            "WHERE e.implementation != 'original'").fetchall()
    # (a benign variant's executions: one per requirement)
    by = {(g, requirement, impl): (outcome, reason) for g, requirement, impl, outcome, reason in rows}
    implied_on = {(requirement, impl) for (g, requirement, impl), (_, reason) in by.items()
                  if reason == "not run: implied by a stronger test's pass"}
    assert len(implied_on) == implied.counts["executions_implied"] > 0
    # the schema-oracle test passed there: it ran, or (where the status-oracle test was the first
    # on its server of the original, which infers nothing) it never reached the edit
    assert all(by[("status-oracle", *at)][0] == "pass" and by[("schema-oracle", *at)] in
               (("pass", ""), ("pass", "not run: never reached")) for at in implied_on)
    # the schema-oracle test kills TODO-13-M* and TODO-14-M2: the status-oracle test ran there
    killed = {(requirement, impl) for (g, requirement, impl), (outcome, _) in by.items()
              if g == "schema-oracle" and outcome != "pass"}
    assert killed and all(by[("status-oracle", *at)][1] not in (
        "not run: implied by a stronger test's pass", "not run: never reached") for at in killed)
    # without the schema-oracle test in the run, the status-oracle test runs everywhere
    alone = asyncio.run(run_benchmark(replace(config, output_dir=tmp_path / "alone",
                                              generators=(GeneratorSpec("status-oracle"),))))
    assert alone.counts["executions_implied"] == 0


def test_the_library_call_and_write_results_make_a_folder_report_reads(tmp_path: Path) -> None:
    config = RunConfig(services=(str(MINI),), variants=("precise",),  # type: ignore[arg-type]
                       generators=(GeneratorSpec("golden"),), output_dir=tmp_path / "out")
    result = asyncio.run(run_benchmark(config))
    assert {(row.variant, row.score.ms) for row in result.rows} == {("precise", 1.0)}
    write_results(result, config.output_dir)
    report = restbench("report", config.output_dir, "-o", tmp_path / "report.html")
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "report.html").stat().st_size > 0


def test_the_run_records_a_service_folder_by_its_absolute_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """So that `report` finds the folder from any working folder; built-ins stay names."""
    shutil.copytree(MINI, tmp_path / "svc")
    (tmp_path / "todo").mkdir()  # no service: `todo/` still names the built-in
    monkeypatch.chdir(tmp_path)
    config = RunConfig(services=("./svc", "todo", "todo/", "svc/"))
    assert config.describe()["services"] == [str(tmp_path / "svc"), "todo", "todo",
                                             str(tmp_path / "svc")]


def test_a_deep_temporary_directory_still_holds_the_servers_sockets(tmp_path: Path) -> None:
    """Unix socket paths are limited to 107 bytes: a TMPDIR deep in a build tree failed every
    server start with `AF_UNIX path too long`."""
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    env = {**os.environ, "TMPDIR": str(deep)}
    done = subprocess.run([sys.executable, "-m", "restbench.cli", "validate", "-s", str(MINI),
                           "-R", "MINI-01"], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "all sound" in done.stdout


def test_a_resumed_run_still_leaves_out_what_the_tests_never_reached(tmp_path: Path) -> None:
    """What a test never reached on the original is kept with its execution there: a run that
    resumes after only those executions were made leaves out the same executions."""
    args = ("run", "-s", "todo", "-R", "TODO-01,TODO-02", "-V", "precise", "-g", "golden",
            "-o", tmp_path)
    first = restbench(*args)
    assert first.returncode == 0, first.stderr
    assert "1 not needed (the mutated code was never reached)" in first.stdout
    before = _outcomes(tmp_path / "results.sqlite3")
    with sqlite3.connect(tmp_path / "results.sqlite3") as store:  # as if stopped right there
        store.execute("DELETE FROM executions WHERE implementation != 'original'")
    resumed = restbench(*args)
    assert resumed.returncode == 0, resumed.stderr
    assert "11 executions made, 2 reused, 1 not needed" in resumed.stdout
    assert _outcomes(tmp_path / "results.sqlite3") == before
