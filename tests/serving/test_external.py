"""External services (a service.toml instead of an app package): the Node.js notes fixture
built, started, reset, recorded and scored through the real harness and the real CLI."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from restbench.benchmark import load_service
from restbench.cache_folder import CACHE_ENV
from restbench.errors import DataError, MutationError, ServiceStartError
from restbench.execution import Executor, Outcome
from restbench.mutation import check_edits, implementations_of
from restbench.serving import ServerPool
from tests.cli_helpers import restbench

NOTES = Path(__file__).parents[1] / "fixtures" / "notes"


@pytest.fixture(autouse=True)
def _node_installed() -> None:
    if shutil.which("node") is None:
        pytest.fail("Node.js is missing: apt-get install nodejs")


@pytest.fixture
def notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private copy of the notes service and a private build cache."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    destination = tmp_path / "notes"
    shutil.copytree(NOTES, destination)
    yield destination


def _manifest_error(folder: Path, old: str, new: str) -> str:
    manifest = folder / "service.toml"
    text = manifest.read_text()
    assert old in text
    manifest.write_text(text.replace(old, new))
    with pytest.raises(DataError) as caught:
        load_service(folder)
    message = str(caught.value)
    assert "\n" not in message and str(manifest) in message
    return message


def test_a_bad_manifest_is_one_line_naming_the_table_and_the_problem(notes: Path) -> None:
    assert "[start.ready]" in _manifest_error(notes, 'ready = "GET /health"', 'ready = "/health"')
    assert "{prot}" in _manifest_error(notes, 'PORT = "{port}"', 'PORT = "{prot}"')
    shutil.copy(NOTES / "service.toml", notes / "service.toml")
    # Before: every instance but one failed with "address already in use", or, alone, with
    # "it listens on port 8765, not on ..." after the start's time limit.
    assert "[start]: neither 'command' nor 'env' has {port}" in _manifest_error(
        notes, 'PORT = "{port}"', 'PORT = "8765"')
    shutil.copy(NOTES / "service.toml", notes / "service.toml")
    assert "[reset]" in _manifest_error(notes, 'request = "POST /__reset"',
                                        'request = "POST /__reset"\ncommand = ["true"]')
    shutil.copy(NOTES / "service.toml", notes / "service.toml")
    message = _manifest_error(notes, 'tree = "server"', 'tree = "srv"')
    assert "[source.tree]" in message and "srv" in message
    shutil.copy(NOTES / "service.toml", notes / "service.toml")
    assert "[build.colour]: unknown key" in _manifest_error(notes, "timeout_s = 60",
                                                             "timeout_s = 60\ncolour = 1")
    shutil.copy(NOTES / "service.toml", notes / "service.toml")
    # Before: "20" was taken as 20, and inf as a start that may take for ever
    assert "[start.timeout_s]: Input should be a valid number" in _manifest_error(
        notes, "timeout_s = 20", 'timeout_s = "20"')
    shutil.copy(NOTES / "service.toml", notes / "service.toml")
    assert "[start.timeout_s]: Input should be a finite number" in _manifest_error(
        notes, "timeout_s = 20", "timeout_s = inf")
    shutil.copy(NOTES / "service.toml", notes / "service.toml")
    assert "[reset.request]: 'POST /__reset/{port}': no placeholders here" in _manifest_error(
        notes, 'request = "POST /__reset"', 'request = "POST /__reset/{port}"')
    shutil.copy(NOTES / "service.toml", notes / "service.toml")
    # Before: list took it; validate and run found it only once they had started a server
    (notes / "openapi.json").write_text("{not json")
    with pytest.raises(DataError, match=r"openapi.json: not a readable JSON OpenAPI document: "
                                        r"line 1, column 2: not valid JSON"):
        load_service(notes)


def test_a_diff_mutant_that_no_longer_applies_names_the_hunk(notes: Path) -> None:
    source = notes / "server" / "src" / "notes.js"
    source.write_text(source.read_text().replace("title, body };", "title, body: body };"))
    with pytest.raises(MutationError) as caught:
        check_edits(load_service(notes))
    assert "NOTE-01-M2" in str(caught.value) and "hunk 1" in str(caught.value)


def test_validate_and_run_score_the_external_service(notes: Path, tmp_path: Path) -> None:
    validated = restbench("validate", "-s", notes)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "3 requirements, 5 mutants, 1 benign variant: all sound" in validated.stdout
    assert "on its own storage)" in validated.stdout  # it keeps its state itself, not in SQLite
    listed = restbench("list", "-s", notes)
    assert "Notes (external, Node.js)" in listed.stdout
    ran = restbench("run", "-s", notes, "-g", "golden,status-oracle", "-o", tmp_path / "out")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    scores = json.loads((tmp_path / "out" / "scores.json").read_text())
    by_generator = {(row["generator"], row["variant"]): row for row in scores["scores"]}
    assert by_generator[("golden", "precise")]["killed_mean"] == 5
    assert by_generator[("status-oracle", "precise")]["validity_rate"] == 1.0
    assert by_generator[("status-oracle", "precise")]["killed_mean"] < 5


def _add_mutant(folder: Path, requirement: str, mutant: str) -> None:
    data = folder / "requirements.yaml"
    text = data.read_text()
    anchor = f"    golden: golden/test_{requirement}.py\n    mutants:\n"
    assert anchor in text
    data.write_text(text.replace(anchor, anchor + mutant))


def test_mutants_that_do_not_build_or_start_are_reported_like_start_failures(
        notes: Path) -> None:
    _add_mutant(notes, "NOTE-03", """\
      - id: NOTE-03-M8
        kind: blunt
        vague_basis: true
        description: A syntax error
        file: server/src/notes.js
        find: "  remove(id) {"
        replace: "  remove(id) {{"
      - id: NOTE-03-M9
        kind: blunt
        vague_basis: true
        description: Crashes when it starts
        file: server/src/main.js
        find: "const notes = new Notes();"
        replace: "const notes = new Notes(); notes.missing.call();"
""")
    validated = restbench("validate", "-s", notes, "-R", "NOTE-03")
    assert validated.returncode != 0
    output = " ".join((validated.stdout + validated.stderr).split())
    assert "NOTE-03-M8 did not build: node build.js exited with 1: SyntaxError" in output
    assert f"at {notes}/server/src/notes.js:" in output and "log:" in output
    assert "NOTE-03-M9 did not start: node dist/main.js exited with 1: TypeError: Cannot read " \
        f"properties of undefined (reading 'call') at {notes}/server/dist/main.js:" in output
    assert "(with the edit of mutant NOTE-03-M9 applied)" in output
    assert "mutants killed" in output  # the others ran as usual
    # the table's row says which (before: "did not start" for both)
    row = next(line for line in validated.stdout.splitlines() if "NOTE-03" in line)
    assert "NOTE-03-M8 did not build" in row, validated.stdout


def test_the_reset_route_is_the_harness_s_and_exchanges_are_recorded(
        notes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asyncio.run(_reset_route_and_exchanges(notes, tmp_path, monkeypatch))


async def _reset_route_and_exchanges(notes: Path, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-for-the-test")
    service = load_service(notes)
    test = """
import os, requests
BASE = os.environ["BASE_URL"]

def test_cannot_reset():
    assert requests.post(BASE + "/notes", json={"title": "mine"}).status_code == 201
    assert requests.post(BASE + "/__reset").status_code == 404
    assert len(requests.get(BASE + "/notes").json()) == 3
"""
    async with ServerPool(tmp_path / "servers") as pool, \
            Executor(1, 30.0, tmp_path / "exec") as executor:
        server = await pool.start(implementations_of(service)["original"])
        environment = Path(f"/proc/{server.pid}/environ").read_bytes().split(b"\0")
        names = {entry.split(b"=", 1)[0].decode() for entry in environment if entry}
        assert "OPENAI_API_KEY" not in names and {"PORT", "DATA_DIR"} <= names
        for _ in range(2):  # the second run finds the service back in its seed state
            await server.reset()
            result = await executor.execute(test, server, name="reset")
            assert result.outcome is Outcome.PASS, result.output
            exchanges = await server.exchanges()
            assert [(e["method"], e["url"], e["status"]) for e in exchanges] == [
                ("POST", "/notes", 201), ("POST", "/__reset", 404), ("GET", "/notes", 200)]
        assert len(server.reset_s) == 2 and all(s < 5 for s in server.reset_s)


def test_a_build_is_made_once_and_taken_from_the_cache_after(notes: Path,
                                                               tmp_path: Path) -> None:
    asyncio.run(_built_once(notes, tmp_path))


async def _built_once(notes: Path, tmp_path: Path) -> None:
    service = load_service(notes)
    stamps = []
    for attempt in range(2):
        async with ServerPool(tmp_path / f"servers-{attempt}") as pool:
            server = await pool.start(implementations_of(service)["NOTE-01-M1"])
            stamps.append((server.tree / "dist" / "build.json").read_text())
            assert "200, notes.create" in (server.tree / "dist" / "main.js").read_text()
    assert stamps[0] == stamps[1]
    builds = tmp_path / "cache" / "builds" / "notes"
    assert len(list(builds.glob("*.log"))) == 1


def test_an_instance_that_never_gets_ready_is_a_start_error(notes: Path,
                                                             tmp_path: Path) -> None:
    asyncio.run(_never_ready(notes, tmp_path))


async def _never_ready(notes: Path, tmp_path: Path) -> None:
    manifest = notes / "service.toml"
    manifest.write_text(manifest.read_text().replace('ready = "GET /health"',
                                                     'ready = "GET /nowhere"')
                        .replace("timeout_s = 20", "timeout_s = 1"))
    service = load_service(notes)
    async with ServerPool(tmp_path / "servers") as pool:
        with pytest.raises(ServiceStartError, match="GET /nowhere did not answer 200 within 1 s"):
            await pool.start(implementations_of(service)["original"])


def test_a_reset_route_that_fails_is_quoted_with_its_answer_and_the_log(notes: Path,
                                                                       tmp_path: Path) -> None:
    """Before: only "answered 500": why was in the service's log, which it did not quote."""
    main = notes / "server" / "src" / "main.js"
    main.write_text(main.read_text().replace(
        "    notes.reset();\n    return send(response, 200, { status: \"reset\" });",
        "    console.error('reset broke: seed file missing');\n"
        "    return send(response, 500, { detail: 'seed missing' });"))
    service = load_service(notes)

    async def start_and_reset() -> None:
        async with ServerPool(tmp_path / "servers") as pool:
            server = await pool.start(implementations_of(service)["original"])
            await server.reset()

    with pytest.raises(ServiceStartError) as raised:
        asyncio.run(start_and_reset())
    message = str(raised.value)
    assert "reset POST /__reset ([reset] request of service.toml) answered 500: " in message
    assert "seed missing" in message and "reset broke: seed file missing" in message, message


def test_an_instance_listening_on_a_port_of_its_own_is_told_so(notes: Path,
                                                                tmp_path: Path) -> None:
    """Before: only "no answer", and the user was left to find out why."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        own_port = probe.getsockname()[1]
    manifest = notes / "service.toml"
    # told its port (a manifest that never says {port} does not load), and listening elsewhere
    manifest.write_text(manifest.read_text()
                        .replace('PORT = "{port}"', f'PORT = "{own_port}", GIVEN = "{{port}}"')
                        .replace("timeout_s = 20", "timeout_s = 2"))
    service = load_service(notes)

    async def start() -> None:
        async with ServerPool(tmp_path / "servers") as pool:
            await pool.start(implementations_of(service)["original"])

    with pytest.raises(ServiceStartError) as raised:
        asyncio.run(start())
    assert re.search(rf"GET /health did not answer 200 within 2 s \(no answer: it listens on "
                     rf"port {own_port}, not on \d+, the port restbench gave it as \{{port\}} in "
                     r"the \[start\] command or env; ", str(raised.value)), str(raised.value)


GROWING_SERVER = """\
import os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.answer(200, b"ok")

    def do_POST(self):
        if self.path != "/grow":
            return self.answer(200, b"reset")
        try:
            with open(os.path.join(os.environ["DATA_DIR"], "big"), "wb") as file:
                for _ in range(136):
                    file.write(bytes(1024 * 1024))
        except OSError as exc:
            return self.answer(500, str(exc).encode())
        self.answer(200, b"written")

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

HTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
"""


def test_a_file_an_external_instance_writes_stops_at_the_servers_limit(
        notes: Path, tmp_path: Path) -> None:
    """Before: an external service's files were not bounded, so a test could make it fill the
    machine's memory (its data in a tmpfs). Now a write past 128 MiB fails, in any language,
    and the instance goes on."""
    (notes / "server" / "grow.py").write_text(GROWING_SERVER)
    manifest = notes / "service.toml"
    manifest.write_text(manifest.read_text().replace('command = ["node", "dist/main.js"]',
                                                     f'command = ["{sys.executable}", "grow.py"]'))
    service = load_service(notes)

    async def grow() -> tuple[int, str, int]:
        async with ServerPool(tmp_path / "servers") as pool:
            server = await pool.start(implementations_of(service)["original"])
            async with httpx.AsyncClient(base_url=server.base_url, trust_env=False) as client:
                grown = await client.post("/grow", timeout=60)
                alive = await client.get("/health")
            return grown.status_code, grown.text, alive.status_code

    status, text, alive = asyncio.run(grow())
    assert (status, alive) == (500, 200), text
    assert "File too large" in text


def test_a_reset_command_gets_the_placeholders_and_is_measured(notes: Path,
                                                                tmp_path: Path) -> None:
    manifest = notes / "service.toml"
    manifest.write_text(manifest.read_text().replace(
        'request = "POST /__reset"',
        'command = ["node", "-e", "fetch(\'http://127.0.0.1:{port}/__reset\', {{method: '
        '\'POST\'}}).then((r) => process.exit(r.ok ? 0 : 3))"]'))  # braces doubled
    asyncio.run(_reset_by_command(notes, tmp_path))


async def _reset_by_command(notes: Path, tmp_path: Path) -> None:
    import httpx

    service = load_service(notes)
    async with ServerPool(tmp_path / "servers") as pool:
        server = await pool.start(implementations_of(service)["original"])
        async with httpx.AsyncClient(base_url=server.base_url) as client:
            assert (await client.post("/notes", json={"title": "x"})).status_code == 201
            # without a reset request, the proxy hides nothing: the route is the service's own
            assert (await client.get("/notes")).json()[-1]["title"] == "x"
            await server.reset()
            assert [note["id"] for note in (await client.get("/notes")).json()] == [1, 2]
        assert len(server.reset_s) == 1  # measured
        exchanges = await server.exchanges()  # the reset forgot the ones before it
        assert [(e["method"], e["url"], e["status"]) for e in exchanges] == [
            ("GET", "/notes", 200)]


def test_serve_stops_with_one_line_when_the_service_process_dies(notes: Path) -> None:
    """Before: serve went on, its proxy answering 502 to every request."""
    from tests.cli_helpers import serve_until_its_child_is_killed

    status, errors = serve_until_its_child_is_killed(notes, "--port", "0", marker=b"node")
    assert status == 2
    assert len(errors) == 1 and errors[0].startswith(
        "error: notes original exited (status -9) while served; its log ends: "), errors


def test_serve_shows_what_an_external_service_writes_as_it_comes(notes: Path) -> None:
    """Before: its output went to a log in serve's scratch folder, unseen (a built-in service's
    uvicorn log is shown)."""
    import signal
    import urllib.request

    from tests.cli_helpers import start_interruptible

    main = notes / "server" / "src" / "main.js"
    main.write_text(main.read_text().replace(
        "const server = http.createServer((request, response) => {",
        "console.log('notes: starting');\n"
        "const server = http.createServer((request, response) => {\n"
        "  console.error(`notes saw ${request.method} ${request.url}`);"))
    serve = start_interruptible("serve", notes, "--port", "0")
    try:
        assert serve.stdout is not None and serve.stderr is not None
        announced = serve.stdout.readline()
        address = announced.split(" at ")[1].split()[0]
        assert (urllib.request.urlopen(f"{address}/notes/1", timeout=10).status == 200)
        seen = []
        while "notes saw GET /notes/1\n" not in seen:
            seen.append(serve.stderr.readline())
            assert seen[-1], seen  # serve's stderr ended without it
        assert "notes: starting\n" in seen
    finally:
        serve.send_signal(signal.SIGINT)  # Ctrl-C: serve cleans up after itself
        try:
            serve.wait(timeout=30)
        finally:
            serve.kill()
            serve.wait()


def test_serve_of_an_external_service_stops_when_its_throwaway_database_server_exits() -> None:
    """The watch serve keeps: the pool's database server exiting ends it, as for the built-in
    services (the notes fixture keeps its own storage, so the pool is a stand-in here)."""
    import time
    from types import SimpleNamespace

    from restbench.serving.databases import DatabaseError
    from restbench.serving.foreground import _until_either_exits

    class DatabaseThatExits:
        def wait_for_database_server_exit(self) -> bool:
            time.sleep(0.2)
            return True

    async def scenario() -> None:
        process = await asyncio.create_subprocess_exec("sleep", "60")
        server = SimpleNamespace(process=process, log_file=Path("/dev/null"))
        try:
            with pytest.raises(DatabaseError, match="the throwaway PostgreSQL server stopped"):
                await _until_either_exits(server, DatabaseThatExits())  # type: ignore[arg-type]
        finally:
            process.kill()
            await process.wait()

    asyncio.run(scenario())


def test_an_original_that_never_gets_ready_is_not_followed_by_its_mutants(notes: Path) -> None:
    """Before: each mutant and benign variant was started too, and waited its whole start
    limit for a ready route that never answers 200 (100 s for a small service)."""
    from tests.validate_helpers import validate_counting_starts

    manifest = notes / "service.toml"
    manifest.write_text(manifest.read_text().replace('ready = "GET /health"',
                                                     'ready = "GET /nope"')
                        .replace("timeout_s = 20", "timeout_s = 2"))
    report, starts = validate_counting_starts(load_service(notes))
    assert starts == 1  # the original's
    assert len(report.problems) == 1 and report.problems[0].startswith(
        "notes original did not start: GET /nope did not answer 200 within 2 s (last answered "
        "404; the [start] ready route of service.toml)")
    assert report.executions == 0


def test_a_failing_reset_command_quotes_its_error_once_named(notes: Path) -> None:
    """Before: "notes original: notes original: reset command exited with 1: Node.js v20...",
    the name twice and Node's version line instead of its error."""
    from restbench.engine.validate import validate_service

    manifest = notes / "service.toml"
    manifest.write_text(manifest.read_text().replace('request = "POST /__reset"',
                                                     'command = ["node", "reset.js"]'))
    report = asyncio.run(validate_service(load_service(notes), workers=1))
    assert len(report.problems) == 1, report.problems
    assert report.problems[0].startswith(
        "notes original: reset command ([reset] command of service.toml) exited with 1: "
        "Error: Cannot find module"), report.problems


def test_validate_hints_at_a_reset_route_that_does_not_reset(notes: Path) -> None:
    """Before: NOTE-02's golden test failed after NOTE-01's on the same server, with nothing
    to say that the reset was to blame."""
    from restbench.engine.validate import validate_service

    manifest = notes / "service.toml"
    manifest.write_text(manifest.read_text().replace('request = "POST /__reset"',
                                                     'request = "GET /health"'))
    report = asyncio.run(validate_service(load_service(notes), workers=1))
    assert report.problems and all(
        "alone on a new server it passed: if it always does, the tests run before it on the "
        "same server left state that notes's reset ([reset] of service.toml) does not undo" in p
        for p in report.problems), report.problems
