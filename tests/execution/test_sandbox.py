"""The executor over a real server: isolation, time limit, redirection, outcomes."""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from restbench import process_names
from restbench.benchmark import load_service
from restbench.engine.process_table import process_table
from restbench.errors import RestbenchError
from restbench.execution import ExecutionResult, Executor, Outcome
from restbench.mutation import implementations_of
from restbench.serving import ServerPool
from tests.process_helpers import live_children, processes_mentioning

Run = Callable[[str], ExecutionResult]


@pytest.fixture(scope="module")
def run_code(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Runs test code against the original mini service, reset before each execution."""
    service = load_service(Path(__file__).parents[1] / "fixtures" / "mini")
    results: dict[str, ExecutionResult] = {}

    async def run_all(codes: dict[str, str]) -> None:
        workdir = tmp_path_factory.mktemp("sandbox")
        async with ServerPool(workdir / "servers") as pool, \
                Executor(workers=2, timeout_s=3, scratch_root=workdir / "exec") as executor:
            server = await pool.start(implementations_of(service)["original"])
            for name, code in codes.items():
                await server.reset()
                results[name] = await executor.execute(code, server.base_url)

    def run(codes: dict[str, str]) -> dict[str, ExecutionResult]:
        asyncio.run(run_all(codes))
        return results

    return run


CASES = {
    "canonical_url": "import requests\n"
                     "def test_x():\n"
                     "    r = requests.get('http://localhost:8000/counters/a', timeout=5)\n"
                     "    assert r.json() == {'value': 1}\n",
    "base_url_env": "import os, requests\n"
                    "def test_x():\n"
                    "    r = requests.get(os.environ['BASE_URL'] + '/counters/a', timeout=5)\n"
                    "    assert r.status_code == 200\n",
    "secrets": "import os\n"
               "def test_x():\n"
               "    assert 'RESTBENCH_TEST_SECRET' not in os.environ\n"
               "    assert not any('KEY' in k or 'TOKEN' in k for k in os.environ)\n",
    "scratch_dir": "import os, pathlib\n"
                   "def test_x():\n"
                   "    assert pathlib.Path.cwd() == pathlib.Path(os.environ['HOME'])\n",
    "outside_network": "import socket\n"
                       "def test_x():\n"
                       "    socket.create_connection(('192.0.2.1', 80), timeout=1)\n",
    "timeout": "import time\ndef test_x():\n    time.sleep(30)\n",
    "assertion": "def test_x():\n    assert 1 == 2\n",
    "exception": "def test_x():\n    raise KeyError('id')\n",
    "syntax": "def test_x(:\n",
    "cut_off": "import requests\n\ndef test_x():\n    r = requests.get('http://localhost:8000/c",
    "missing_module": "import requests\nimport some_module_nobody_has\n\n"
                      "def test_x():\n    assert 1\n",
    "no_tests": "x = 1\n",
    # Copied into the sandbox's /etc (SandboxView.copies), not bound: the same bytes, read-only.
    "etc_copies": "import mimetypes, pathlib, socket\n"
                  "def test_x():\n"
                  "    assert socket.getservbyname('http', 'tcp') == 80\n"
                  "    assert mimetypes.guess_type('a.json')[0] == 'application/json'\n"
                  "    for name, digest in ETC_DIGESTS.items():\n"
                  "        data = pathlib.Path('/etc', name).read_bytes()\n"
                  "        assert __import__('hashlib').sha256(data).hexdigest() == digest\n"
                  "    try:\n"
                  "        pathlib.Path('/etc/services').write_text('planted')\n"
                  "    except OSError:\n"
                  "        return\n"
                  "    raise AssertionError('overwrote /etc/services')\n",
    "own_process": "import os, signal, threading, time\n"
                   "def test_x():\n"
                   "    got = []\n"
                   "    signal.signal(signal.SIGUSR1, lambda *_: got.append('raised'))\n"
                   "    signal.signal(signal.SIGUSR2, lambda *_: got.append('sent'))\n"
                   "    signal.raise_signal(signal.SIGUSR1)\n"
                   "    main = threading.main_thread().ident\n"
                   "    thread = threading.Thread(\n"
                   "        target=lambda: signal.pthread_kill(main, signal.SIGUSR2))\n"
                   "    thread.start()\n"
                   "    thread.join()\n"
                   "    time.sleep(0.05)\n"
                   "    assert (os.getpid(), got) == (1, ['raised', 'sent'])\n",
}


def _etc_digests() -> dict[str, str]:
    """The host's small /etc files that the sandbox shows as copies, by their SHA-256."""
    from restbench.execution.sandbox import SandboxView

    return {Path(path).name: hashlib.sha256(data).hexdigest()
            for path, data in SandboxView.for_this_interpreter().copies.items()}


@pytest.fixture(scope="module")
def results(run_code: Any) -> dict[str, ExecutionResult]:
    import os

    digests = _etc_digests()
    assert {"services", "mime.types"} <= digests.keys()
    cases = {**CASES, "etc_copies": f"ETC_DIGESTS = {digests!r}\n" + CASES["etc_copies"]}
    os.environ["RESTBENCH_TEST_SECRET"] = "s3cr3t"
    os.environ["OPENAI_API_KEY"] = "sk-test"
    try:
        return dict(run_code(cases))
    finally:
        del os.environ["RESTBENCH_TEST_SECRET"], os.environ["OPENAI_API_KEY"]


def test_canonical_base_url_reaches_the_implementation(results: dict[str, Any]) -> None:
    assert results["canonical_url"].outcome is Outcome.PASS, results["canonical_url"].reason
    assert results["base_url_env"].outcome is Outcome.PASS


def test_no_secrets_in_the_test_environment(results: dict[str, Any]) -> None:
    assert results["secrets"].outcome is Outcome.PASS, results["secrets"].output


def test_small_etc_files_are_the_hosts_bytes_and_read_only(results: dict[str, Any]) -> None:
    assert results["etc_copies"].outcome is Outcome.PASS, results["etc_copies"].output


def test_runs_in_its_scratch_folder(results: dict[str, Any]) -> None:
    assert results["scratch_dir"].outcome is Outcome.PASS, results["scratch_dir"].output


def test_connections_off_the_machine_are_refused(results: dict[str, Any]) -> None:
    result = results["outside_network"]
    assert result.outcome is Outcome.ERROR
    assert "Network is unreachable" in result.reason


def test_the_test_process_is_the_first_of_its_own_pid_namespace(results: dict[str, Any]) -> None:
    """It is forked straight into its namespaces (namespaces.fork_into), not through glibc's
    fork: glibc's cached id of its main thread must still be right, or a signal another thread
    sends to the main thread goes nowhere."""
    assert results["own_process"].outcome is Outcome.PASS, results["own_process"].output


def test_time_limit(results: dict[str, Any]) -> None:
    result = results["timeout"]
    assert result.outcome is Outcome.ERROR
    assert result.reason.endswith(" s, --timeout) reached: timed out")
    assert result.duration_s < 10


def test_outcomes(results: dict[str, Any]) -> None:
    assert results["assertion"].outcome is Outcome.FAIL
    assert "assert 1 == 2" in results["assertion"].output
    assert results["exception"].outcome is Outcome.ERROR
    assert results["syntax"].outcome is Outcome.ERROR
    assert results["no_tests"].outcome is Outcome.ERROR


def test_failure_reasons_name_the_real_error(results: dict[str, Any]) -> None:
    """Before: the first 300 characters of pytest's traceback, without the error itself."""
    assert results["cut_off"].reason.startswith("collection error: SyntaxError: unterminated "
                                                "string literal"), results["cut_off"].reason
    assert results["missing_module"].reason == ("collection error: ModuleNotFoundError: No module "
                                                "named 'some_module_nobody_has'")
    assert results["assertion"].reason.endswith("AssertionError: assert 1 == 2")


def test_a_worker_that_dies_is_replaced_and_its_test_processes_die_with_it(
        tmp_path: Path) -> None:
    """Its test processes too: before, becoming the sandbox user (a change of credentials)
    cleared the running one's parent-death signal, so after Ctrl-C a test ran on under init
    until its CPU limit, or for ever if it slept."""
    service = load_service(Path(__file__).parents[1] / "fixtures" / "mini")
    sleeper = "import time\ndef test_x():\n    time.sleep(20)\n"

    async def scenario() -> tuple[ExecutionResult, ExecutionResult, list[int]]:
        async with ServerPool(tmp_path / "servers") as pool, \
                Executor(workers=1, timeout_s=10, scratch_root=tmp_path / "exec") as executor:
            server = await pool.start(implementations_of(service)["original"])
            pending = asyncio.ensure_future(executor.execute(sleeper, server.base_url))
            await asyncio.sleep(1.0)
            worker = executor._all[0].pid
            tests = [pid for pid in live_children(worker)
                     if Path(f"/proc/{pid}/comm").read_text().strip() == process_names.TEST]
            os.kill(worker, signal.SIGKILL)
            killed = await pending
            await asyncio.sleep(1.0)
            table = process_table()
            alive = [pid for pid in tests if pid in table and table[pid][0] != "Z"]
            await server.reset()
            after = await executor.execute(CASES["canonical_url"], server.base_url)
            return killed, after, alive

    killed, after, alive = asyncio.run(scenario())
    assert killed.outcome is Outcome.ERROR
    assert killed.reason.startswith("worker failed")
    assert alive == [], "test processes outlived their worker"
    assert after.outcome is Outcome.PASS, after.reason


def test_a_cancelled_execution_frees_its_worker_slot(tmp_path: Path) -> None:
    """A cancelled execution (its generation out of time) kills its worker. Before, the slot
    stayed taken: with one worker, the next execution waited for an idle one forever."""
    service = load_service(Path(__file__).parents[1] / "fixtures" / "mini")
    sleeper = "import time\ndef test_x():\n    time.sleep(20)\n"

    async def scenario() -> tuple[bool, ExecutionResult]:
        async with ServerPool(tmp_path / "servers") as pool, \
                Executor(workers=1, timeout_s=10, scratch_root=tmp_path / "exec") as executor:
            server = await pool.start(implementations_of(service)["original"])
            pending = asyncio.ensure_future(executor.execute(sleeper, server.base_url))
            await asyncio.sleep(1.0)
            cancelled = executor._all[0]
            pending.cancel()
            with pytest.raises(asyncio.CancelledError):
                await pending
            await server.reset()
            after = await asyncio.wait_for(
                executor.execute(CASES["canonical_url"], server.base_url), 30)
            # its test sleeps 20 s with a 10 s limit: only the kill ends it this soon
            return await cancelled.wait(1), after

    killed, after = asyncio.run(scenario())
    assert killed
    assert after.outcome is Outcome.PASS, after.reason


def test_a_worker_template_that_dies_is_started_again(tmp_path: Path) -> None:
    """The workers' template (worker.py) forks each new worker; if it died, the next worker
    comes from a new one, and the run goes on."""
    service = load_service(Path(__file__).parents[1] / "fixtures" / "mini")
    sleeper = "import time\ndef test_x():\n    time.sleep(20)\n"

    async def scenario() -> tuple[ExecutionResult, ExecutionResult, bool]:
        async with ServerPool(tmp_path / "servers") as pool, \
                Executor(workers=1, timeout_s=10, scratch_root=tmp_path / "exec") as executor:
            server = await pool.start(implementations_of(service)["original"])
            first = executor._templates[False].process
            os.kill(first.pid, signal.SIGKILL)
            await first.wait()
            pending = asyncio.ensure_future(executor.execute(sleeper, server.base_url))
            await asyncio.sleep(1.0)
            os.kill(executor._all[0].pid, signal.SIGKILL)  # the worker forked before
            killed = await pending
            await server.reset()
            after = await executor.execute(CASES["canonical_url"], server.base_url)
            return killed, after, executor._templates[False].process is not first

    killed, after, new_template = asyncio.run(scenario())
    assert killed.reason.startswith("worker failed")
    assert after.outcome is Outcome.PASS, after.reason
    assert new_template


def test_a_worker_template_that_cannot_start_is_one_error_with_its_reason(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The template's own words (its log's last lines) are in the error, and nothing is left
    running."""
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\necho 'cannot import pytest: broken install' >&2\n"
                      "sleep 0.5\nexit 3\n")
    broken.chmod(0o755)
    monkeypatch.setattr("sys.executable", str(broken))
    executor = Executor(workers=2, timeout_s=10, scratch_root=tmp_path / "exec")

    async def scenario() -> None:
        async with executor:
            pass

    with pytest.raises(RestbenchError, match=r"a test worker failed to start: closed; "
                                             r"log: cannot import pytest: broken install"):
        asyncio.run(scenario())
    assert executor._templates == {} and executor._all == []
    assert processes_mentioning(str(broken)) == []


def test_an_executor_interrupted_while_its_workers_start_stops_them(tmp_path: Path) -> None:
    """Ctrl-C during start-up: __aexit__ never runs, so __aenter__ itself must stop the
    workers' template it started (before: workers outlived the event loop, which warned about
    their pids)."""
    executor = Executor(workers=2, timeout_s=10, scratch_root=tmp_path / "exec")

    async def scenario() -> int | None:
        starting = asyncio.ensure_future(executor.__aenter__())
        while False not in executor._templates:  # the workers' template, warming up
            await asyncio.sleep(0.005)
        template = executor._templates[False].process
        assert not starting.done()
        starting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await starting
        return template.returncode

    assert asyncio.run(scenario()) is not None  # it exited and was waited for


def _run_on_mini(code: str, folder: Path) -> ExecutionResult:
    """`code` run once on the mini service's original by a new executor, whose workers see the
    environment as it is now (PYTHONPATH)."""
    service = load_service(Path(__file__).parents[1] / "fixtures" / "mini")

    async def scenario() -> ExecutionResult:
        async with ServerPool(folder / "servers") as pool, \
                Executor(workers=1, timeout_s=10, scratch_root=folder / "exec") as executor:
            server = await pool.start(implementations_of(service)["original"])
            return await executor.execute(code, server)

    return asyncio.run(scenario())


def test_packages_installed_under_tmp_stay_importable(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A virtual environment in a clone under /tmp: the sandbox's private /tmp must not hide
    it (a module imported only by the test is looked up there at run time)."""
    assert str(tmp_path).startswith("/tmp/")
    packages = tmp_path / "site"
    packages.mkdir()
    (packages / "restbench_tmp_probe.py").write_text("ANSWER = 42\n")
    monkeypatch.setenv("PYTHONPATH", str(packages))
    code = "import restbench_tmp_probe\ndef test_x():\n    assert restbench_tmp_probe.ANSWER == 42\n"
    result = _run_on_mini(code, tmp_path)
    assert result.outcome is Outcome.PASS, result.reason + result.output


def test_a_project_folder_on_pythonpath_shows_only_what_imports_load(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PYTHONPATH naming a project's folder (to reach a generator module) must not show the
    result stores and service folders beside it: they hold the golden tests."""
    project, installed = tmp_path / "project", tmp_path / "target"
    for folder in (project / "probe_pkg", project / "restbench-results", project / "shelf" / "golden",
                   installed / "probe_dist-1.0.dist-info"):
        folder.mkdir(parents=True)
    (project / "probe_module.py").write_text("ANSWER = 1\n")
    (project / "probe_pkg" / "__init__.py").write_text("ANSWER = 2\n")
    (project / "restbench-results" / "results.sqlite3").write_text("golden tests\n")
    (project / "shelf" / "golden" / "test_SHELF-01.py").write_text("def test_x(): pass\n")
    (project / "notes.txt").write_text("secret\n")
    (installed / "probe_dist.py").write_text("ANSWER = 3\n")
    (installed / "README.txt").write_text("shown\n")
    monkeypatch.setenv("PYTHONPATH", f"{project}:{installed}")
    code = ("import os, probe_module, probe_pkg, probe_dist\n"
            "def test_x():\n"
            "    assert (probe_module.ANSWER, probe_pkg.ANSWER, probe_dist.ANSWER) == (1, 2, 3)\n"
            f"    assert os.path.isfile({str(installed / 'README.txt')!r})\n"
            f"    hidden = [name for name in ('restbench-results', 'shelf', 'notes.txt')\n"
            f"              if os.path.exists(os.path.join({str(project)!r}, name))]\n"
            "    assert hidden == []\n")
    result = _run_on_mini(code, tmp_path)
    assert result.outcome is Outcome.PASS, result.reason + result.output
