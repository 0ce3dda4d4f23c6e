"""The `schemathesis` baseline draws its requests when it writes the test. Its tests must send
exactly the requests, and end with exactly the outcomes, of the test that drew them in the
sandbox (the baseline's test before), on the original and on mutants where a check fails."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from restbench.benchmark import Variant, resolve_services
from restbench.engine import RunConfig, run_benchmark
from restbench.errors import GeneratorError
from restbench.execution import Executor
from restbench.generators import GeneratorSpec
from restbench.generators.baselines.schemathesis_cases import CaseDrawer, draw_cases, draw_key
from restbench.generators.baselines.schemathesis_checks import (
    CASE_DRAWER,
    SchemathesisGenerator,
    checked_literal,
    trimmed_document,
)
from restbench.generators.tasks import make_task
from restbench.mutation import implementations_of
from restbench.serving import ServerPool

# The baseline's test function as it was when every test process drew its own requests.
DRAWING_TEST = '''
EXAMPLES = 10
PATH_PARAMETERS = {path_parameters!r}


def test_drawing():
    from hypothesis import HealthCheck, Phase, given, settings

    headers = _auth_headers()
    session = requests.Session()
    schema = schemathesis.openapi.from_dict(DOCUMENT)
    failures = []
    for method, path, needs_auth in OPERATIONS:
        known = {{k: v for k, v in PATH_PARAMETERS.items() if "{{" + k + "}}" in path}}
        strategy = schema[path][method].as_strategy(path_parameters=known or None)

        @settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
                  phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck),
                  print_blob=False)
        @given(case=strategy)
        def check(case):
            case.call_and_validate(base_url=BASE_URL, session=session, checks=CHECKS,
                                   headers=headers if needs_auth else None, timeout=TIMEOUT_S)

        try:
            check()
        except (AssertionError, BaseExceptionGroup) as failure:  # a FailureGroup is the latter
            failures.append(f"{{method}} {{path}}: {{str(failure).strip()[:1500]}}")
    assert not failures, "Schemathesis found failures"
'''

# (requirement, implementations): the original, mutants whose answers fail one check (the
# failing request is sent a second time) and several checks at once (a FailureGroup: once).
CASES = (("TODO-13", ("original", "TODO-13-M1")), ("TODO-06", ("original", "TODO-06-M1")))


def _requests(exchanges: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(e["method"], e["url"], e["request_body"]) for e in exchanges]


def test_drawn_tests_send_the_requests_and_end_as_tests_that_draw_in_the_sandbox(
        tmp_path: Path) -> None:
    todo = resolve_services(["todo"])[0]
    implementations = implementations_of(todo)

    async def scenario() -> list[tuple[str, str, Any, Any]]:
        seen = []
        async with ServerPool(tmp_path / "servers") as pool, \
                Executor(2, 60, tmp_path / "scratch") as executor:
            server = await pool.start(implementations["original"])
            async with httpx.AsyncClient() as client:
                document = (await client.get(f"{server.base_url}/openapi.json")).json()
            await pool.stop(server)
            for requirement, targets in CASES:
                with make_task(todo, todo.requirement(requirement), Variant.PRECISE, document,
                               "http://localhost:8000") as task:
                    drawn = (await SchemathesisGenerator().generate(task)).code
                    drawing = drawing_version(drawn, dict(task.seed.path))
                for target in targets:
                    server = await pool.start(implementations[target])
                    runs = []
                    for code in (drawn, drawing):
                        await server.reset()
                        result = await executor.execute(code, server, name="schemathesis")
                        runs.append((result.outcome.value, _requests(await server.exchanges())))
                    await pool.stop(server)
                    seen.append((requirement, target, *runs))
        return seen

    seen = asyncio.run(scenario())
    outcomes = {(requirement, target): drawn[0] for requirement, target, drawn, _ in seen}
    assert outcomes == {("TODO-13", "original"): "pass", ("TODO-13", "TODO-13-M1"): "fail",
                        ("TODO-06", "original"): "pass", ("TODO-06", "TODO-06-M1"): "fail"}
    for requirement, target, drawn, drawing in seen:
        assert drawn == drawing, (requirement, target)
    assert len(seen[0][2][1]) > 10  # a log-in, Schemathesis's requests and its probes


def drawing_version(code: str, path_parameters: dict[str, Any]) -> str:
    """The same file with the test that draws in the sandbox in place of the drawn cases."""
    head = code[:code.index("# The requests Schemathesis drew")]
    helpers = code[code.index("def _auth_headers"):code.index("def _failure")]
    return head + helpers + DRAWING_TEST.format(path_parameters=path_parameters)


def test_draws_do_not_depend_on_the_process_or_on_what_it_drew_before() -> None:
    document = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {"/items": {
        "post": {"requestBody": {"required": True, "content": {"application/json": {"schema": {
            "type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"}, "count": {"type": "integer"}}}}}},
                 "responses": {"201": {"description": "made"}}}}}}
    first = draw_cases(document, [("POST", "/items")], {}, 10)
    again = draw_cases(document, [("POST", "/items")], {}, 10)
    assert first == again
    assert 1 < len(first[0]) <= 10
    assert all(case["media_type"] == "application/json" and "name" in case["body"]
               for case in first[0])


def test_a_drawn_value_python_cannot_write_back_is_refused() -> None:
    assert ast.literal_eval(checked_literal("CASES", [[{"body": "\ud800x"}]])
                            .partition(" = ")[2]) == [[{"body": "\ud800x"}]]
    with pytest.raises(GeneratorError, match="cannot be written as a Python literal"):
        checked_literal("CASES", [[{"body": float("inf")}]])


def test_a_draw_after_the_helper_died_runs_in_a_new_helper() -> None:
    document = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {"/ping": {
        "get": {"parameters": [{"name": "n", "in": "query", "schema": {"type": "integer"}}],
                "responses": {"200": {"description": "ok"}}}}}}
    drawer = CaseDrawer()
    try:
        first = drawer.draw(document, [("GET", "/ping")], {}, 5).result(timeout=120)
        helper = drawer._helper
        assert helper is not None
        os.kill(helper.pid, signal.SIGKILL)
        helper.wait(timeout=60)
        assert drawer.draw(document, [("GET", "/ping")], {}, 5).result(timeout=1) == first
        again = drawer.draw(document, [("GET", "/ping")], {}, 3).result(timeout=120)
        assert drawer._helper is not helper
        assert 1 <= len(again[0]) <= 3
    finally:
        drawer.close()


ENDLESS = 100_000_000  # examples: a draw that would take days


def _ping_document() -> dict[str, Any]:
    return {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {"/ping": {
        "get": {"parameters": [{"name": "n", "in": "query", "schema": {"type": "integer"}}],
                "responses": {"200": {"description": "ok"}}}}}}


def test_a_draw_whose_generation_gives_up_is_stopped_and_close_does_not_wait() -> None:
    """Before: the draw went on in the helper after its generation ran out of time (or Ctrl-C),
    and close() queued behind it: the run hung until killed, ignoring SIGINT and SIGTERM."""
    drawer = CaseDrawer()

    async def give_up() -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(drawer.draw_async(_ping_document(), [("GET", "/ping")], {},
                                                     ENDLESS), 3)

    try:
        asyncio.run(give_up())
        helper = drawer._helper
        assert helper is not None
        assert helper.wait(timeout=10) is not None  # killed, not drawing on
        # the drawer goes on: the next draw runs in a new helper
        assert drawer.draw(_ping_document(), [("GET", "/ping")], {}, 3).result(timeout=120)
        endless = drawer.draw(_ping_document(), [("GET", "/ping")], {}, ENDLESS)
        while not endless.running():
            time.sleep(0.05)
    finally:
        started = time.monotonic()
        drawer.close()
        assert time.monotonic() - started < 10
    with pytest.raises(RuntimeError, match="the draw was stopped"):
        endless.result(timeout=10)


def test_a_draw_two_generations_wait_on_goes_on_until_both_give_up() -> None:
    """Before: when one wording's generation ran out of time, the draw it shared with the other
    wording's was stopped, and the other failed with "the draw was stopped"."""
    drawer = CaseDrawer()
    document, ping = _ping_document(), [("GET", "/ping")]

    async def one_gives_up_then_the_other() -> None:
        running = asyncio.ensure_future(drawer.draw_async(document, ping, {}, ENDLESS))
        queued = asyncio.ensure_future(drawer.draw_async(document, ping, {}, ENDLESS + 1))
        for draw in (running, queued):  # the other wording asks for the same draw
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(drawer.draw_async(document, ping, {},
                                                         ENDLESS + (draw is queued)), 1)
        helper = drawer._helper
        assert helper is not None and helper.poll() is None
        assert not running.done() and not queued.done()
        queued.cancel()
        await asyncio.sleep(0.2)
        assert drawer._draws[draw_key(document, ping, {}, ENDLESS + 1)].cancelled()
        assert helper.poll() is None  # the draw under way goes on
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
        assert await asyncio.to_thread(helper.wait, 10) is not None

    try:
        asyncio.run(one_gives_up_then_the_other())
        # a draw whose waiters all gave up is drawn again when asked for again
        assert drawer.draw(document, ping, {}, 3).result(timeout=120)
    finally:
        drawer.close()


def test_a_helper_whose_harness_was_killed_stops_drawing(tmp_path: Path) -> None:
    """Before: it drew on (at 95% of a core) under init until its draw ended, days later."""
    script = tmp_path / "harness.py"
    script.write_text(
        "import sys, time\n"
        "from restbench.generators.baselines.schemathesis_cases import CaseDrawer\n"
        f"document = {_ping_document()!r}\n"
        "drawer = CaseDrawer()\n"
        f"draw = drawer.draw(document, [('GET', '/ping')], {{}}, {ENDLESS})\n"
        "while not draw.running() or drawer._helper is None:\n"
        "    time.sleep(0.05)\n"
        "print(drawer._helper.pid, flush=True)\n"
        "time.sleep(600)\n")
    harness = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert harness.stdout is not None
        helper = int(harness.stdout.readline())
    finally:
        harness.kill()
        harness.wait()
    deadline = time.monotonic() + 15
    while Path(f"/proc/{helper}").exists() and \
            Path(f"/proc/{helper}/stat").read_text().rpartition(")")[2].split()[0] != "Z":
        assert time.monotonic() < deadline, "the helper draws on"
        time.sleep(0.1)


def test_a_draw_that_fails_says_why_and_the_helper_goes_on() -> None:
    document = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {"/x": {
        "get": {"parameters": [{"name": "n", "in": "query", "required": True,
                                "schema": {"type": "integer", "minimum": 5, "maximum": 1}}],
                "responses": {"200": {"description": "ok"}}}}}}
    drawer = CaseDrawer()
    try:
        with pytest.raises(RuntimeError) as failure:
            drawer.draw(document, [("GET", "/x")], {}, 5).result(timeout=120)
        assert "exited" not in str(failure.value) and str(failure.value)
        document["paths"]["/x"]["get"]["parameters"][0]["schema"]["maximum"] = 9
        assert drawer.draw(document, [("GET", "/x")], {}, 5).result(timeout=120)[0]
    finally:
        drawer.close()


def test_precise_and_vague_give_one_file_whose_literals_are_written_once(
        todo_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from restbench.generators.baselines import schemathesis_checks

    checked: list[str] = []
    real = schemathesis_checks.checked_literal
    monkeypatch.setattr(schemathesis_checks, "checked_literal",
                        lambda name, value: checked.append(name) or real(name, value))
    todo = resolve_services(["todo"])[0]
    document = httpx.get(f"{todo_url}/openapi.json").json()
    generator = SchemathesisGenerator(examples="3")

    async def both() -> list[str]:
        with contextlib.ExitStack() as stack:
            tasks = [stack.enter_context(make_task(todo, todo.requirement("TODO-05"), variant,
                                                   document, "http://localhost:8000"))
                     for variant in (Variant.PRECISE, Variant.VAGUE)]
            return [g.code for g in await asyncio.gather(*(generator.generate(task)
                                                           for task in tasks))]

    precise, vague = asyncio.run(both())
    assert precise == vague
    assert checked == ["CASES"]
    other = SchemathesisGenerator(examples="3")  # a fresh generator writes the same file
    with make_task(todo, todo.requirement("TODO-05"), Variant.VAGUE, document,
                   "http://localhost:8000") as task:
        assert asyncio.run(other.generate(task)).code == precise


def test_each_operation_is_drawn_once_and_as_in_a_draw_of_the_whole_file(
        todo_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """TODO-01 and TODO-05 share POST /users/login and GET /users/manage/info: those are drawn
    once for both files, each on the document trimmed to it, and every operation's requests are
    the ones a single draw of TODO-01's whole trimmed document gives."""
    drawer = CaseDrawer()
    monkeypatch.setattr("restbench.generators.baselines.schemathesis_checks.CASE_DRAWER",
                        drawer)
    asked: list[list[tuple[str, str]]] = []
    real_ask = CaseDrawer._ask
    monkeypatch.setattr(CaseDrawer, "_ask",
                        lambda self, request: asked.append(request[1]) or real_ask(self, request))
    todo = resolve_services(["todo"])[0]
    document = httpx.get(f"{todo_url}/openapi.json").json()
    generator = SchemathesisGenerator(examples="3")

    def cases_of(requirement: str) -> list[list[dict[str, Any]]]:
        with make_task(todo, todo.requirement(requirement), Variant.PRECISE, document,
                       "http://localhost:8000") as task:
            code = asyncio.run(generator.generate(task)).code
        tree = ast.parse(code)
        return next(ast.literal_eval(node.value) for node in tree.body
                    if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") ==
                    "CASES")

    try:
        first, second = cases_of("TODO-01"), cases_of("TODO-05")
    finally:
        drawer.close()
    operations = [tuple(todo.requirement("TODO-01").operations[i].split(" ")) for i in range(4)]
    assert sorted(map(tuple, asked)) == sorted((operation,) for operation in operations)
    assert second == [first[1], first[3]]  # login, then the account info, as TODO-05 lists them
    whole = draw_cases(trimmed_document(document, todo.requirement("TODO-01").operations),
                       operations, dict(todo.data.seed.path), 3)
    assert first == whole


def test_the_drawing_helper_is_stopped_and_reaped_once_a_run_has_its_tests(
        mini_service: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It held ~90 MB through the executions, and nobody reaped it (`time` missed its CPU)."""
    helpers = []
    start = CaseDrawer._running_helper

    def recorded(drawer: CaseDrawer) -> Any:
        helper = start(drawer)
        helpers.append(helper)
        return helper

    monkeypatch.setattr(CaseDrawer, "_running_helper", recorded)
    config = RunConfig(services=(str(mini_service),), output_dir=tmp_path,
                       generators=(GeneratorSpec("schemathesis"),))
    result = asyncio.run(run_benchmark(config))
    assert result.rows and all(row.score.validity_rate == 1.0 for row in result.rows)
    assert helpers and CASE_DRAWER._helper is None
    assert all(helper.returncode is not None for helper in helpers)  # waited for
