"""The worker's Schemathesis warm-up: it leaves caches behind, never drawn values. A Schemathesis
test sends the same requests from a warmed sandbox as from a fresh `python -m pytest`, and no
module the worker loaded lends Hypothesis its constants."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx

from restbench.benchmark import Variant, resolve_services
from restbench.execution import Executor
from restbench.execution.environment import clean_environment
from restbench.execution.executor import imports_schemathesis
from restbench.generators.baselines.schemathesis_checks import SchemathesisGenerator
from restbench.generators.tasks import make_task
from restbench.mutation import implementations_of
from restbench.serving import RunningServer, ServerPool
from tests.generators.test_schemathesis_cases import drawing_version


async def _schemathesis_test(base_url: str, document: dict[str, Any]) -> str:
    """A test that draws its requests with Schemathesis in the test process (the baseline's
    tests draw theirs when written; a model's test may well draw in the sandbox)."""
    todo = resolve_services(["todo"])[0]
    with make_task(todo, todo.requirement("TODO-05"), Variant.PRECISE, document,
                   base_url) as task:
        return drawing_version((await SchemathesisGenerator(examples="5").generate(task)).code,
                               dict(task.seed.path))


def _requests(exchanges: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(e["method"], e["url"], e["request_body"]) for e in exchanges]


def test_a_schemathesis_test_sends_the_same_requests_warmed_and_fresh(tmp_path: Path) -> None:
    async def scenario() -> tuple[list[Any], list[Any], str]:
        original = implementations_of(resolve_services(["todo"])[0])["original"]
        async with ServerPool(tmp_path / "servers") as pool, \
                Executor(1, 60, tmp_path / "scratch") as executor:
            server: RunningServer = await pool.start(original)
            async with httpx.AsyncClient() as client:
                document = (await client.get(f"{server.base_url}/openapi.json")).json()

            await server.reset()
            result = await executor.execute(
                await _schemathesis_test("http://localhost:8000", document), server,
                name="warmed")
            warmed = await server.exchanges()

            fresh_folder = tmp_path / "fresh"
            fresh_folder.mkdir()
            (fresh_folder / "test_fresh.py").write_text(
                await _schemathesis_test(server.base_url, document))
            (fresh_folder / "pytest.ini").write_text("[pytest]\n")
            await server.reset()
            process = await asyncio.to_thread(
                subprocess.run, [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                 "test_fresh.py"],
                cwd=fresh_folder, env=clean_environment(HOME=str(fresh_folder)),
                capture_output=True, text=True, timeout=300)
            fresh = await server.exchanges()
            assert process.returncode == 0, process.stdout[-2000:]
            return warmed, fresh, result.outcome.value

    warmed, fresh, outcome = asyncio.run(scenario())
    assert outcome == "pass"
    assert len(fresh) > 10  # a log-in, then Schemathesis's requests and its probes
    assert _requests(warmed) == _requests(fresh)


def test_the_worker_modules_lend_hypothesis_no_constants(tmp_path: Path) -> None:
    """A local (not installed) module loaded before the warm-up is not scanned; one loaded
    after it is, as in a test process (restbench's own modules are local in an editable
    install)."""
    (tmp_path / "loaded_before.py").write_text("MARKER = 918273645\n")
    (tmp_path / "loaded_after.py").write_text("MARKER = 546372819\n")
    script = textwrap.dedent("""
        import sys, threading
        import loaded_before
        from restbench.execution import schemathesis_warm_up
        schemathesis_warm_up.warm_up()
        from hypothesis.internal.conjecture import providers
        before = 918273645 in providers._get_local_constants().integers
        import loaded_after
        after = 546372819 in providers._get_local_constants().integers
        print(before, after, threading.active_count())
    """)
    process = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                             text=True, timeout=300, check=False,
                             env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert process.returncode == 0, process.stderr[-2000:]
    assert "warm-up incomplete" not in process.stderr
    assert process.stdout.split() == ["False", "True", "1"]


def test_tests_that_import_schemathesis_are_told_apart() -> None:
    for code in ("import schemathesis\n", "from schemathesis.checks import not_a_server_error\n",
                 "import requests, schemathesis\n", "def test_x():\n    import schemathesis\n",
                 "import os\nfrom schemathesis import openapi\n"):
        assert imports_schemathesis(code), code
    for code in ("import requests\n", "# import schemathesis\n", "import schemathesis_extra\n",
                 "NOTE = 'import schemathesis'\n"):
        assert not imports_schemathesis(code), code


# What the test process found loaded before the test's own imports: the kind of its worker.
_PLAIN_PROBE = """import sys
LOADED = [name for name in ("schemathesis", "hypothesis") if name in sys.modules]


def test_x():
    assert LOADED == []
"""
_SCHEMATHESIS_PROBE = """import sys
LOADED = "schemathesis" in sys.modules
from schemathesis import openapi  # noqa: E402


def test_x():
    assert LOADED and openapi
"""
_SCHEMATHESIS_SLEEPER = "import time\nimport schemathesis\n\ndef test_x():\n    time.sleep(20)\n"


def test_schemathesis_tests_run_in_workers_of_their_own_kind(tmp_path: Path) -> None:
    """Plain workers never load Schemathesis (their forks stay small); tests that import it go
    to up to `workers` others that warmed it up, started when the first such test comes. A dead
    one is replaced by one of its kind."""
    async def scenario() -> None:
        async with Executor(2, 30, tmp_path / "scratch") as executor:
            assert [w.schemathesis for w in executor._all] == [False, False]
            results = await asyncio.gather(*(
                executor.execute(_SCHEMATHESIS_PROBE if n % 2 else _PLAIN_PROBE,
                                 "http://127.0.0.1:9", name=f"probe{n}") for n in range(8)))
            assert [r.outcome.value for r in results] == ["pass"] * 8, \
                [r.output[-600:] for r in results if r.outcome.value != "pass"]
            assert sorted(w.schemathesis for w in executor._all) == [False, False, True, True]

            sleeping = asyncio.ensure_future(executor.execute(_SCHEMATHESIS_SLEEPER,
                                                              "http://127.0.0.1:9"))
            await asyncio.sleep(1.5)
            idle = [w for w in executor._all if w.schemathesis and w in
                    executor._idle[True]._queue]  # type: ignore[attr-defined]
            busy = next(w for w in executor._all if w.schemathesis and w not in idle)
            os.kill(busy.pid, signal.SIGKILL)
            assert (await sleeping).reason.startswith("worker failed")
            after = await asyncio.gather(*(executor.execute(_SCHEMATHESIS_PROBE,
                                                            "http://127.0.0.1:9")
                                           for _ in range(3)))
            assert [r.outcome.value for r in after] == ["pass"] * 3
            assert sorted(w.schemathesis for w in executor._all) == [False, False, True, True]

    asyncio.run(scenario())
