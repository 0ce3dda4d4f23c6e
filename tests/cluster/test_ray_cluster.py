"""`--ray` on a real local Ray cluster of two nodes on this machine: a head and a second node
joined to it, each with its own CPU resources. The scores must equal a local run's, also when the
second node dies mid-run, and a killed run must resume without doing anything twice."""

from __future__ import annotations

import asyncio
import fnmatch
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from restbench.benchmark import resolve_services
from restbench.engine.jobs import Job
from restbench.execution import ExecutionResult
from restbench.llm.fake import FakeLLMServer, Reply
from restbench.mutation import implementations_of
from restbench.serving.memory_folders import ROOT_VARIABLE
from tests.cli_helpers import restbench
from tests.memory_helpers import memory_folder

pytestmark = pytest.mark.ray

CANARY = "RESTBENCH_TEST_CANARY_SECRET"
FIXTURES = Path(__file__).parents[1] / "fixtures"
# A small matrix: golden and a baseline on three requirements of todo (~35 executions).
MATRIX = ("-s", "todo", "-R", "TODO-1[0-2]", "-g", "golden,status-oracle", "-V", "precise")


class TwoNodes:
    def __init__(self) -> None:
        try:
            from ray.cluster_utils import Cluster
        except ImportError:
            pytest.fail("Ray is not installed: pip install 'restbench[ray]'")
        self.cluster = Cluster(initialize_head=True, connect=False,
                               head_node_args={"num_cpus": 1, "include_dashboard": False})
        self.second = self.cluster.add_node(num_cpus=1)
        self.cluster.wait_for_nodes()

    @property
    def address(self) -> str:
        return str(self.cluster.address)

    def kill_second(self) -> None:
        self.cluster.remove_node(self.second, allow_graceful=False)

    def replace_second(self) -> None:
        self.second = self.cluster.add_node(num_cpus=1)
        self.cluster.wait_for_nodes()


@pytest.fixture(scope="module")
def nodes() -> Iterator[TwoNodes]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RAY_USAGE_STATS_ENABLED", "0")
        env.setenv(CANARY, "sk-must-not-reach-tests")  # every Ray process of the cluster has it
        # A lost node is noticed within seconds, not the default ~30 s.
        env.setenv("RAY_health_check_period_ms", "1000")
        env.setenv("RAY_health_check_failure_threshold", "3")
        # The nodes' scratch folders in one of their own: a lost node's worker and launcher are
        # SIGKILLed and leave theirs, which would otherwise wait in /dev/shm for the next pool.
        memory = memory_folder("rbtest-ray-memory-")
        env.setenv(ROOT_VARIABLE, str(memory))
        cluster = TwoNodes()
        try:
            yield cluster
        finally:
            cluster.cluster.shutdown()
            shutil.rmtree(memory, ignore_errors=True)


def _run(output: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    done = restbench("run", *MATRIX, "-o", output, *extra)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _outcomes(output: Path) -> dict[str, str]:
    with sqlite3.connect(output / "results.sqlite3") as db:
        return dict(db.execute("SELECT key, outcome FROM executions"))


def _scores(output: Path) -> list[dict[str, Any]]:
    rows = json.loads((output / "scores.json").read_text())["scores"]
    return [{k: v for k, v in row.items() if k != "generation_s"} for row in rows]


def _executions(output: Path) -> int:
    try:
        with sqlite3.connect(f"file:{output / 'results.sqlite3'}?mode=ro", uri=True,
                             timeout=5) as db:
            return int(db.execute("SELECT count(*) FROM executions").fetchone()[0])
    except sqlite3.OperationalError:  # not created yet
        return 0


def _start_run(output: Path, address: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "restbench.cli", "run", *MATRIX, "-o",
                             str(output), "--ray", address], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ,
                                                                    "COLUMNS": "200"})


def _wait_for_executions(output: Path, count: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 300
    while _executions(output) < count:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the run stored no executions"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("local")
    (output / "stdout.txt").write_text(_run(output).stdout)
    return output


def _counts(stdout: str) -> tuple[int, int, int]:
    """Executions made, reused, and not needed (serving.reach) as the run's summary says."""
    found = re.search(r"(\d+) executions made, (\d+) reused(?:, (\d+) not needed)?", stdout)
    assert found is not None, stdout
    return int(found[1]), int(found[2]), int(found[3] or 0)


def test_validate_todo_on_two_nodes(nodes: TwoNodes) -> None:
    """Ten of todo's requirements (the whole service is validated locally by
    tests/services/test_validate_builtin.py; here the same jobs go through Ray)."""
    done = restbench("validate", "-s", "todo", "-R", "TODO-1*", "--ray", nodes.address)
    assert done.returncode == 0, done.stdout + done.stderr
    todo = resolve_services(["todo"])[0]
    chosen = [r for r in todo.requirements if fnmatch.fnmatch(r.id, "TODO-1*")]
    mutants = sum(len(r.mutants) for r in chosen)
    assert len(chosen) == 10
    assert (f"todo: 10 requirements, {mutants} mutants, "
            f"{len(todo.data.benign)} benign variants: all sound") in done.stdout
    assert "note:" not in done.stderr  # e.g. no node fell back to running without the sandbox


def test_executions_go_to_both_nodes_sandboxed_and_without_secrets(nodes: TwoNodes) -> None:
    from restbench.cluster import open_ray_backend

    host, port = nodes.address.rsplit(":", 1)
    code = (
        "import os, socket\n"
        "def test_environment_and_network():\n"
        f"    assert {CANARY!r} not in os.environ\n"
        "    assert not [k for k in os.environ if k.startswith('RAY_')], sorted(os.environ)\n"
        "    try:\n"
        f"        socket.create_connection(({host!r}, {port}), timeout=2).close()\n"
        "    except OSError:\n"
        "        return\n"
        "    raise AssertionError('the test reached the Ray cluster')\n")
    implementations = implementations_of(resolve_services(["todo"])[0])
    jobs = [Job(code, implementation, "canary") for implementation in
            list(implementations.values())[:6] for _ in range(3)]
    results: list[ExecutionResult] = []

    async def run() -> list[int]:
        async with open_ray_backend(nodes.address, database="sqlite", workers=None,
                                    timeout_s=30, sandbox=True, trusted_only=False,
                                    on_event=lambda event: None) as backend:
            assert backend.size == 2
            failures = await backend.execute(jobs, lambda job, result: results.append(result))
            assert failures == {}
            return [node.executed for node in backend.nodes]  # type: ignore[attr-defined]

    per_node = asyncio.run(run())
    assert [r.outcome.value for r in results] == ["pass"] * len(jobs), \
        [r.output for r in results if r.outcome.value != "pass"][:1]
    assert sum(per_node) == len(jobs)
    assert all(count > 0 for count in per_node), per_node


def test_a_service_that_cannot_start_on_a_node_is_a_start_failure(
        nodes: TwoNodes, mini_service: Path) -> None:
    """Its servers hold more than the memory limit the driver sets: the nodes' servers get the
    driver's limit (before, the nodes used their own environment's)."""
    main = mini_service / "app" / "main.py"
    main.write_text("MODEL = bytearray(300 * 1024**2)\n" + main.read_text())
    done = restbench("validate", "-s", mini_service, "--ray", nodes.address,
                     env={"RESTBENCH_SERVER_MEMORY_MB": "200"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"mini original did not start: the app holds 3\d\d MiB of memory once "
                     r"imported, over the 200 MiB a server may hold", done.stderr), done.stderr
    assert "(on Ray node " in done.stderr


def test_a_mutant_whose_edit_does_not_apply_is_reported_as_locally(
        nodes: TwoNodes, mini_service: Path) -> None:
    """Before: a node planned the reach marks from every edit, this one too, and the run ended
    with Ray's remote traceback of the MutationError."""
    requirements = mini_service / "requirements.yaml"
    text = requirements.read_text()
    assert text.count('find: "status_code=404"') == 1
    requirements.write_text(text.replace('find: "status_code=404"', 'find: "status_code=499"'))
    done = restbench("validate", "-s", mini_service, "--ray", nodes.address)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "ray::" not in done.stderr
    assert "mutant MINI-01-M1: find text does not occur" in done.stdout + done.stderr


def test_run_scores_equal_the_local_run(nodes: TwoNodes, local_run: Path,
                                        tmp_path: Path) -> None:
    done = _run(tmp_path, "--ray", nodes.address)
    assert _outcomes(tmp_path) == _outcomes(local_run)
    assert _scores(tmp_path) == _scores(local_run)
    # The nodes' servers of the original say what each test never reached, as a local one
    # does; nothing is inferred from a server's first test (serving.reach), and the nodes start
    # more servers of the original than one machine, so fewer executions may be left out.
    made, reused, not_needed = _counts(done.stdout)
    local = _counts((local_run / "stdout.txt").read_text())
    assert (made + not_needed, reused) == (local[0] + local[2], local[1])
    assert not_needed > 0 and local[2] > 0


def test_a_node_lost_mid_run_changes_nothing(nodes: TwoNodes, local_run: Path,
                                             tmp_path: Path) -> None:
    process = _start_run(tmp_path, nodes.address)
    try:
        _wait_for_executions(tmp_path, 8, process)
        nodes.kill_second()
        stdout, stderr = process.communicate(timeout=600)
    finally:
        if process.poll() is None:
            process.kill()
        nodes.replace_second()
    assert process.returncode == 0, stdout + stderr
    assert "was lost" in stderr and "run on the other nodes" in stderr, stderr
    assert _outcomes(tmp_path) == _outcomes(local_run)
    assert _scores(tmp_path) == _scores(local_run)


def test_a_killed_run_resumes_without_doing_anything_twice(nodes: TwoNodes, local_run: Path,
                                                           tmp_path: Path) -> None:
    process = _start_run(tmp_path, nodes.address)
    try:
        _wait_for_executions(tmp_path, 8, process)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    kept = _executions(tmp_path)
    total = len(_outcomes(local_run))
    assert 8 <= kept < total
    done = _run(tmp_path, "--ray", nodes.address)
    made, reused, not_needed = _counts(done.stdout)
    assert (made + not_needed, reused) == (total - kept, kept)
    with sqlite3.connect(tmp_path / "results.sqlite3") as db:
        rows = db.execute("SELECT count(*), count(DISTINCT key) FROM executions").fetchone()
        generations = db.execute("SELECT count(*) FROM generations").fetchone()[0]
    assert rows == (total, total)
    assert generations == 6  # 3 requirements x 2 generators, each stored once
    assert _outcomes(tmp_path) == _outcomes(local_run)
    assert _scores(tmp_path) == _scores(local_run)


def _scripted(request: dict[str, Any]) -> Reply:
    """Known tests for the mini service (as in tests/generators), each answer a little late."""
    prompt = request["messages"][1]["content"]
    name = ("precise/MINI-01.py" if "GET /counters/a returns 200" in prompt
            else "precise/MINI-02.py" if "POST /counters/a/increment returns 200" in prompt
            else "vague/MINI-01.py" if "Counters can be read" in prompt
            else "vague/test_MINI-02.py")
    code = (FIXTURES / "mini_tests" / name).read_text()
    return Reply(content=f"```python\n{code}```\n", delay_s=0.5)


def test_model_calls_keep_the_endpoint_limit_and_are_paid_once(
        nodes: TwoNodes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Generations run on the nodes; the endpoint's limit holds across them, and the answers
    are stored by the driver, so that a second run pays for nothing."""
    with FakeLLMServer(_scripted) as fake:
        config = tmp_path / "models.toml"
        config.write_text(f'[defaults]\nbase_url = "{fake.base_url}"\napi_key_env = "TEST_KEY"\n'
                          "max_concurrency = 2\ntimeout_s = 10\n")
        monkeypatch.setenv("RESTBENCH_LLM_CONFIG", str(config))
        monkeypatch.setenv("TEST_KEY", "sk-test-ray-4242")
        output = tmp_path / "out"
        args = ("run", "-s", FIXTURES / "mini", "-g", "single-step", "-m", "gpt-5-mini",
                "-o", output, "--ray", nodes.address)
        done = restbench(*args)
        assert done.returncode == 0, done.stdout + done.stderr
        assert len(fake.requests) == 4  # 2 requirements x 2 wordings
        assert fake.most_in_flight == 2
        again = restbench(*args)
        assert again.returncode == 0, again.stdout + again.stderr
        assert len(fake.requests) == 4  # everything came from the store
    scores = json.loads((output / "scores.json").read_text())["scores"]
    rows = {row["variant"]: row for row in scores}
    assert rows["precise"]["ms"] == pytest.approx(1 / 3)  # as the local run's test knows them
    assert rows["vague"]["ms"] == pytest.approx(2 / 3)
    assert b"sk-test-ray-4242" not in (output / "results.sqlite3").read_bytes()


def _mini_requests(count: int) -> list[Any]:
    from restbench.benchmark import Variant
    from restbench.engine.generation import GenerationRequest
    from restbench.generators import GeneratorSpec

    mini = resolve_services([str(FIXTURES / "mini")])[0]
    return [GenerationRequest(GeneratorSpec("single-step"), "gpt-5-mini", mini, requirement.id,
                              variant, repetition, "original")
            for repetition in range(count // 4) for requirement in mini.requirements
            for variant in (Variant.PRECISE, Variant.VAGUE)]


async def _mini_openapi() -> dict[str, Any]:
    import tempfile

    from restbench.benchmark.openapi_doc import service_openapi
    from restbench.mutation.apply import ORIGINAL
    from restbench.serving import ServerPool

    mini = resolve_services([str(FIXTURES / "mini")])[0]
    with tempfile.TemporaryDirectory() as scratch:
        async with ServerPool(Path(scratch)) as pool:
            server = await pool.start(implementations_of(mini)[ORIGINAL], replica=0)
            return await service_openapi(mini, server.base_url)


def _model_config(tmp_path: Path, base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "models.toml"
    config.write_text(f'[defaults]\nbase_url = "{base_url}"\napi_key_env = "TEST_KEY"\n'
                      "max_concurrency = 2\ntimeout_s = 20\n")
    monkeypatch.setenv("RESTBENCH_LLM_CONFIG", str(config))
    monkeypatch.setenv("TEST_KEY", "sk-test-ray-4242")


def test_generations_are_spread_over_the_nodes_within_the_endpoint_limit(
        nodes: TwoNodes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from restbench.cluster import open_ray_backend
    from restbench.llm.config import model_environment
    from restbench.store import ResultStore

    requests = _mini_requests(12)
    with FakeLLMServer(_scripted) as fake:
        _model_config(tmp_path, fake.base_url, monkeypatch)
        store = ResultStore(tmp_path / "results.sqlite3")

        async def run() -> tuple[list[Any], list[int], dict[str, int]]:
            openapi = await _mini_openapi()
            async with open_ray_backend(nodes.address, database="sqlite", workers=None,
                                        timeout_s=30, sandbox=True, trusted_only=False,
                                        on_event=lambda event: None) as backend:
                await backend.prepare_generation(model_environment(), store)  # type: ignore[attr-defined]
                rows = await asyncio.gather(*(backend.generate(r, openapi)  # type: ignore[attr-defined]
                                              for r in requests))
                peak = await backend._generation[2].peak.remote()  # type: ignore[attr-defined]
                return rows, [n.generated for n in backend.nodes], peak  # type: ignore[attr-defined]

        rows, per_node, peak = asyncio.run(run())
        assert [row.status for row in rows] == ["ok"] * len(requests), rows[0].error
        assert [row.key for row in rows] == [r.key for r in requests]
        assert all("def test" in row.code for row in rows)
        assert all(count > 0 for count in per_node) and sum(per_node) == len(requests), per_node
        assert len(fake.requests) == len(requests)
        assert fake.most_in_flight == 2  # the limit of 2, held across both nodes
        assert peak == {fake.base_url: 2}
        assert len(store.llm_calls()) == len(requests)  # every answer is in the driver's store
        store.close()


def test_a_node_lost_while_generating_gives_its_slots_back(
        nodes: TwoNodes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second node dies holding model calls: its generations are made on the head, whose
    calls are not starved by the slots the dead node held."""
    from restbench.cluster import open_ray_backend
    from restbench.llm.config import model_environment
    from restbench.store import ResultStore

    def slow(request: dict[str, Any]) -> Reply:
        return replace(_scripted(request), delay_s=2.0)

    requests = _mini_requests(8)
    with FakeLLMServer(slow) as fake:
        _model_config(tmp_path, fake.base_url, monkeypatch)
        store = ResultStore(tmp_path / "results.sqlite3")
        notices: list[str] = []

        async def run() -> list[Any]:
            openapi = await _mini_openapi()
            async with open_ray_backend(nodes.address, database="sqlite", workers=None,
                                        timeout_s=30, sandbox=True, trusted_only=False,
                                        on_event=lambda e: notices.append(str(e))) as backend:
                await backend.prepare_generation(model_environment(), store)  # type: ignore[attr-defined]
                pending = asyncio.gather(*(backend.generate(r, openapi)  # type: ignore[attr-defined]
                                           for r in requests))
                while not fake.requests:
                    await asyncio.sleep(0.1)
                nodes.kill_second()
                return await asyncio.wait_for(pending, 240)

        try:
            rows = asyncio.run(run())
        finally:
            nodes.replace_second()
        store.close()
    assert [row.status for row in rows] == ["ok"] * len(requests), [row.error for row in rows]
    assert any("was lost" in notice for notice in notices), notices


def test_a_node_that_joins_during_a_run_gets_work(nodes: TwoNodes) -> None:
    from restbench.cluster import open_ray_backend

    implementations = list(implementations_of(resolve_services(["todo"])[0]).values())
    code = "def test_nothing():\n    assert True\n"
    jobs = [Job(code, implementation, "join") for implementation in implementations[:8]
            for _ in range(4)]
    notices: list[str] = []

    async def run() -> list[int]:
        async with open_ray_backend(nodes.address, database="sqlite", workers=None,
                                    timeout_s=30, sandbox=True, trusted_only=False,
                                    on_event=lambda e: notices.append(str(e))) as backend:
            assert backend.size == 2
            third = nodes.cluster.add_node(num_cpus=1)  # blocks the loop a moment
            try:
                deadline = time.monotonic() + 180
                while backend.size < 3:
                    assert time.monotonic() < deadline, notices
                    await asyncio.sleep(0.5)
                results: list[ExecutionResult] = []
                assert await backend.execute(jobs, lambda job, r: results.append(r)) == {}
                assert [r.outcome.value for r in results] == ["pass"] * len(jobs)
                return [node.executed for node in backend.nodes]  # type: ignore[attr-defined]
            finally:
                nodes.cluster.remove_node(third)

    per_node = asyncio.run(run())
    assert len(per_node) == 3 and all(count > 0 for count in per_node), per_node
    assert any("joined" in notice for notice in notices), notices
