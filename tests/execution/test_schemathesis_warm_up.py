"""The worker's Schemathesis warm-up: it leaves caches behind, never drawn values. A Schemathesis
test sends the same requests from a warmed sandbox as from a fresh `python -m pytest`, and no
module the worker loaded lends Hypothesis its constants."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx

from restbench.benchmark import Variant, resolve_services
from restbench.execution import Executor
from restbench.execution.environment import clean_environment
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
