"""Reach for a Node.js service (serving.node_reach): the lines each edit changes, what V8's
coverage says a request ran, and that a ledger test passes on the mutants it never reached as it
does on the original."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest

from restbench.benchmark import load_service, resolve_services
from restbench.engine.jobs import Job, execute_on
from restbench.execution import Executor, Outcome
from restbench.mutation import implementations_of
from restbench.serving import ServerPool
from restbench.serving.node_reach import NodeEdit, NodePlan, NodeReachProbe, changed_lines, plan

SERVER = """\
'use strict';
const http = require('node:http');
const LIMIT = 3;

function classify(n) {
  if (n > LIMIT) {
    return 'big';
  } else {
    return 'small';
  }
}

function never() {
  process.title;
  return 'never';
}

async function later(n) {
  await new Promise((resolve) => setImmediate(resolve));
  return String(n * 2);
}

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://localhost');
  const n = Number(url.searchParams.get('n'));
  if (url.pathname === '/health') {
    res.end('ok');
    return;
  }
  res.end(url.pathname === '/later' ? await later(n) : classify(n));
});
server.listen(Number(process.env.PORT), '127.0.0.1');
"""

EDITS = {
    "then-branch": ("return 'big';", "return 'huge';"),
    "else-branch": ("return 'small';", "return 'tiny';"),
    # declares a name: counts as reached whenever classify runs, whichever branch
    "else-declares": ("    return 'small';", "    let tiny = 'small';\n    return tiny;"),
    "constant": ("const LIMIT = 3;", "const LIMIT = 4;"),  # module level: runs at start
    "never-body": ("return 'never';", "return 'nah';"),
    "inserted": ("  process.title;\n", "  process.title;\n  process.exit(1);\n"),
    "broken": ("return 'never';", "return 'never' +;"),  # does not compile: never left out
    "after-await": ("return String(n * 2);", "return String(n * 3);"),
}


@pytest.fixture(autouse=True)
def _node_installed() -> None:
    if shutil.which("node") is None:
        pytest.fail("Node.js is missing: apt-get install nodejs")


def test_an_edit_needs_the_lines_it_changes_and_insertions_their_neighbours() -> None:
    original = "a();\nb();\nc();\n"
    assert changed_lines(original, "a();\nB();\nc();\n") == (((5, 10),), False)
    assert changed_lines(original, "a();\nb();\nx();\nc();\n") == (((5, 15),), False)
    assert changed_lines(original, "a();\nc();\n") == (((5, 10),), False)
    assert changed_lines(original, "a();\nlet b = 1;\nc();\n") == (((5, 10),), True)
    # offsets count UTF-16 code units, as V8's do: the emoji is two
    assert changed_lines("s('\U0001F600');\nb();\n", "s('\U0001F600');\nB();\n") \
        == (((9, 14),), False)  # 8 code points, 9 UTF-16 units


def test_only_common_js_files_of_node_services_without_a_build_are_planned(
        tmp_path: Path) -> None:
    ledger = resolve_services(["ledger"])[0]
    planned = plan(ledger)
    assert planned is not None and len(planned.edits) == len(implementations_of(ledger)) - 1
    notes = load_service(Path(__file__).parents[1] / "fixtures" / "notes")
    assert plan(notes) is None  # it has a build step: the edited files are not what runs
    module = tmp_path / "module"
    shutil.copytree(ledger.root, module)
    (module / "server" / "package.json").write_text('{"type": "module"}')
    assert plan(load_service(module)) == NodePlan(())  # ES modules are not planned


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def _probed_server(folder: Path) -> AsyncIterator[tuple[NodeReachProbe, str]]:
    (folder / "server.js").write_text(SERVER)
    edits = []
    for name, (find, replace) in EDITS.items():
        assert SERVER.count(find) == 1
        edited = SERVER.replace(find, replace)
        ranges, scope = changed_lines(SERVER, edited)
        edits.append(NodeEdit(name, "server.js", ranges, scope, edited))
    probe = NodeReachProbe(NodePlan(tuple(edits)), folder)
    port = _free_port()
    process = await asyncio.create_subprocess_exec(
        *probe.command(["node", "server.js"]), cwd=folder,
        env={"PATH": os.environ["PATH"], "PORT": str(port), **probe.environment})
    base_url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=base_url) as client:
            for _ in range(500):
                try:
                    await client.get("/health")
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.01)
        await probe.started("fixture")
        yield probe, base_url
    finally:
        process.kill()
        await process.wait()
        await probe.close()


def test_the_probe_names_the_edits_each_request_never_ran(tmp_path: Path) -> None:
    async def scenario() -> list[list[str]]:
        answers = []
        async with _probed_server(tmp_path) as (probe, base_url), \
                httpx.AsyncClient(base_url=base_url) as client:
            answers.append(await probe.unreached("fixture"))  # nothing since the start
            for path, n in (("/", 5), ("/", 1), ("/later", 2), ("/", 5)):
                assert (await client.get(path, params={"n": n})).status_code == 200
                answers.append(await probe.unreached("fixture"))
        return answers

    nothing, big, small, later, big_again = asyncio.run(scenario())
    # module-level lines ran at the start, and a file that does not compile cannot start:
    # "constant" and "broken" count for every request
    assert nothing == ["after-await", "else-branch", "else-declares", "inserted", "never-body",
                       "then-branch"]
    # a declaration counts as reached whenever the function around it runs, whichever branch
    assert big == ["after-await", "else-branch", "inserted", "never-body"]
    assert small == ["after-await", "inserted", "never-body", "then-branch"]
    # the line after the await runs in a later turn of the event loop: still this request's
    assert later == ["else-branch", "else-declares", "inserted", "never-body", "then-branch"]
    assert big_again == big  # each question forgets what earlier requests ran


WRONG_PASSWORD = '''
import requests


def test_a_wrong_password_is_refused():
    answer = requests.post("http://localhost:8000/v1/login",
                           json={"username": "alice", "password": "wrong-pass"}, timeout=10)
    assert answer.status_code == 401
'''
SAMPLE = ["LED-01-M2", "LED-12-M1", "LED-20-M1", "LED-25-M1"]


def test_a_ledger_test_passes_on_what_it_never_reached_as_on_the_original(
        tmp_path: Path) -> None:
    """A server of the ledger's original names the mutants a refused login never reached: not
    those of the password check (LED-02), but the successful login's token type (LED-01-M2)
    and the other operations' edits. The test passes on a sample of them as on the original."""
    implementations = implementations_of(resolve_services(["ledger"])[0])

    async def scenario() -> tuple[list[str], dict[str, Outcome]]:
        async with ServerPool(tmp_path / "servers", mark_reach=True) as pool, \
                Executor(1, 30, tmp_path / "exec") as executor:
            outcomes = {}
            server = await pool.start(implementations["original"])
            await server.reset()
            result = await execute_on(executor, server, Job(
                WRONG_PASSWORD, implementations["original"], "t"))
            outcomes["original"] = result.outcome
            for mutant_id in SAMPLE:
                if mutant_id in result.unreached:
                    mutant = await pool.start(implementations[mutant_id])
                    await mutant.reset()
                    outcomes[mutant_id] = (await execute_on(
                        executor, mutant, Job(WRONG_PASSWORD, implementations[mutant_id],
                                              "t"))).outcome
            return list(result.unreached), outcomes

    unreached, outcomes = asyncio.run(scenario())
    assert outcomes.pop("original") is Outcome.PASS
    assert not [m for m in unreached if m.startswith("LED-02-")]
    assert set(SAMPLE) <= set(unreached)
    assert outcomes == {m: Outcome.PASS for m in SAMPLE}
