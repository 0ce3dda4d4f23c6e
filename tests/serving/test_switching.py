"""Mutant switching: a server made from the launcher's imported original behaves exactly as one
that imported the edited source afresh, whichever way the edit was applied."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from restbench.benchmark import resolve_services
from restbench.execution import Executor
from restbench.mutation import implementations_of
from restbench.serving import RunningServer, ServerPool
from restbench.serving.databases import SqliteDatabases
from restbench.serving.memory_folders import ROOT_VARIABLE, memory_root, passed_on
from tests.memory_helpers import is_held
from tests.postgres_helpers import needs_postgres, require_postgres
from tests.process_helpers import live_children

LAYERED = Path(__file__).parents[1] / "fixtures" / "layered"


async def _probe(server: RunningServer) -> list[object]:
    """Three increments of counter a, a read of it, one increment of a new counter b."""
    await server.reset()
    async with httpx.AsyncClient(base_url=server.base_url, trust_env=False) as client:
        seen: list[object] = [(await client.post("/counters/a/increment")).json()["value"]
                              for _ in range(3)]
        seen.append((await client.get("/counters/a")).json()["value"])
        seen.append((await client.post("/counters/b/increment")).json()["value"])
    return seen


async def _probe_all(pool: ServerPool, ids: list[str]) -> dict[str, tuple[str, list[object]]]:
    implementations = implementations_of(resolve_services([str(LAYERED)])[0])
    found = {}
    for implementation_id in ids:
        server = await pool.start(implementations[implementation_id])
        try:
            found[implementation_id] = (server.switch, await _probe(server))
        finally:
            await pool.stop(server)
    return found


def test_each_way_of_switching_gives_the_edited_behaviour(tmp_path: Path) -> None:
    ids = ["original", "LAYER-01-M1", "LAYER-01-M2", "LAYER-01-M3", "LAYER-01-M4",
           "LAYER-01-M5", "original"]

    async def both() -> tuple[dict[str, tuple[str, list[object]]], ...]:
        async with ServerPool(tmp_path / "switched") as switched, \
                ServerPool(tmp_path / "fresh", switch_mutants=False) as fresh:
            return await _probe_all(switched, ids), await _probe_all(fresh, ids)

    switched, fresh = asyncio.run(both())
    assert {i: behaviour for i, (_, behaviour) in switched.items()} == \
        {i: behaviour for i, (_, behaviour) in fresh.items()}
    assert {i: how for i, (how, _) in switched.items()} == {
        "original": "warm app",     # nothing to change: the warm-up's app, on its own database
        "LAYER-01-M1": "warm app",  # a function body that never ran in the launcher
        "LAYER-01-M2": "reimport",  # a module-level constant: logic and its importers again
        "LAYER-01-M3": "reimport",  # the seed ran in the warm-up: its cached effects are stale
        "LAYER-01-M4": "full",     # a mapped class cannot be defined twice on one base
        "LAYER-01-M5": "warm app",
    }
    # Each edit shows, and the original is untouched after its mutants were served.
    assert switched["original"][1] == [2, 3, 4, 4, 1]
    assert switched["LAYER-01-M1"][1] == [3, 5, 5, 5, 2]
    assert switched["LAYER-01-M2"][1] == [2, 3, 3, 3, 1]
    assert switched["LAYER-01-M3"][1] == [3, 4, 5, 5, 1]
    assert switched["LAYER-01-M4"][1] == [2, 3, 4, 4, 5]
    assert switched["LAYER-01-M5"][1] == [2, 3, 4, 5, 1]


def test_the_launcher_finishes_the_originals_orm_set_up_before_any_server(tmp_path: Path) -> None:
    """conduit's warm-up makes no ORM query (its seed inserts with SQLAlchemy Core), so without
    this every server would configure the mappers on its first request."""
    from restbench.serving import originals

    original = originals.load(resolve_services(["conduit"])[0].root, tmp_path)
    mapped = {value.__mapper__ for module in original.modules.values()
              for value in vars(module).values()
              if isinstance(value, type) and hasattr(value, "__mapper__")}
    assert len(mapped) >= 5
    assert all(mapper.configured for mapper in mapped)


def test_a_prepared_pool_imports_the_original_before_its_first_server(tmp_path: Path) -> None:
    layered = resolve_services([str(LAYERED)])[0]
    ledger = resolve_services(["ledger"])[0]  # runs outside the launcher: nothing to prepare

    async def run() -> tuple[bool, bool, dict[str, tuple[str, list[object]]]]:
        async with ServerPool(tmp_path / "outside") as pool:
            outside = await pool.prepare([ledger])
        async with ServerPool(tmp_path / "prepared") as pool:
            ready = await pool.prepare([ledger, layered])
            return outside, ready, await _probe_all(pool, ["original", "LAYER-01-M1",
                                                           "LAYER-01-M2"])

    outside, ready, found = asyncio.run(run())
    assert (outside, ready) == (False, True)
    assert found == {"original": ("warm app", [2, 3, 4, 4, 1]),
                     "LAYER-01-M1": ("warm app", [3, 5, 5, 5, 2]),
                     "LAYER-01-M2": ("reimport", [2, 3, 3, 3, 1])}

@pytest.mark.parametrize("service_name, mutant_ids, database", [
    ("todo", ["TODO-01-M1", "TODO-14-M2", "TODO-23-M1"], "sqlite"),
    ("conduit", ["CONDUIT-01-M1", "CONDUIT-03-M1"], "sqlite"),
    ("fullstack", ["FS-01-M1", "FS-05-M1", "FS-02-M3"], "postgres"),
])
def test_builtin_mutants_answer_their_golden_test_as_a_fresh_import(
        tmp_path: Path, service_name: str, mutant_ids: list[str], database: str) -> None:
    if database == "postgres":
        require_postgres()
    service = resolve_services([service_name])[0]
    implementations = implementations_of(service)

    async def run(pool: ServerPool, executor: Executor) -> dict[str, object]:
        seen: dict[str, object] = {}
        for mutant_id in mutant_ids:
            implementation = implementations[mutant_id]
            requirement = service.requirement(mutant_id.rsplit("-", 1)[0])
            code = service.golden_path(requirement).read_text(encoding="utf-8")
            server = await pool.start(implementation)
            try:
                await server.reset()
                result = await executor.execute(code, server.base_url)
                exchanges = await server.exchanges()
            finally:
                await pool.stop(server)
            seen[mutant_id] = (server.switch, result.outcome,
                               [(e["method"], e["url"], e["status"]) for e in exchanges])
        return seen

    async def both() -> tuple[dict[str, object], dict[str, object]]:
        async with ServerPool(tmp_path / "switched", database) as switched, \
                ServerPool(tmp_path / "fresh", database, switch_mutants=False) as fresh, \
                Executor(1, 30, tmp_path / "exec", isolated=False) as executor:
            return await run(switched, executor), await run(fresh, executor)

    switched, fresh = asyncio.run(both())
    for mutant_id in mutant_ids:
        how, outcome, exchanges = switched[mutant_id]  # type: ignore[misc]
        _, fresh_outcome, fresh_exchanges = fresh[mutant_id]  # type: ignore[misc]
        assert (outcome, exchanges) == (fresh_outcome, fresh_exchanges), mutant_id
        assert outcome.value == "fail", f"{mutant_id} ({how}) not killed by its golden test"
    if service_name == "todo":
        assert {switched[m][0] for m in mutant_ids} == {"warm app", "reimport", "full"}  # type: ignore[index]


def test_servers_on_the_warm_app_each_have_their_own_database(tmp_path: Path) -> None:
    implementations = implementations_of(resolve_services([str(LAYERED)])[0])

    async def run() -> tuple[list[object], list[object], list[str]]:
        async with ServerPool(tmp_path / "pool") as pool:
            first = await pool.start(implementations["original"])
            second = await pool.start(implementations["LAYER-01-M1"])
            async with httpx.AsyncClient(trust_env=False) as client:
                for _ in range(4):
                    await client.post(f"{first.base_url}/counters/a/increment")
            # The second server's counter is untouched by the first's requests, and the
            # first's state survives the second's reset.
            seen_second = await _probe(second)
            async with httpx.AsyncClient(trust_env=False) as client:
                seen_first = [(await client.get(f"{first.base_url}/counters/a")).json()["value"]]
            return seen_first, seen_second, [first.switch, second.switch, first.database_url,
                                             second.database_url]

    seen_first, seen_second, (how_first, how_second, url_first, url_second) = asyncio.run(run())
    assert (how_first, how_second) == ("warm app", "warm app")
    assert seen_second == [3, 5, 5, 5, 2]  # LAYER-01-M1's behaviour from the seed
    assert seen_first == [5]                # the seed's 1, then four increments
    assert Path(url_first).parent != Path(url_second).parent


@needs_postgres
def test_servers_on_the_warm_app_on_postgres_each_have_their_own_database(tmp_path: Path) -> None:
    import psycopg
    from sqlalchemy.engine import make_url

    implementations = implementations_of(resolve_services(["fullstack"])[0])
    signup = {"email": "newbie@example.com", "password": "newbiepass1", "full_name": "N"}

    def users_in(url: str) -> int:
        parsed = make_url(url).set(drivername="postgresql")
        with psycopg.connect(parsed.render_as_string(hide_password=False)) as connection:
            return int(connection.execute('SELECT count(*) FROM "user"').fetchone()[0])

    async def run() -> tuple[list[str], list[int], list[int]]:
        async with ServerPool(tmp_path / "pool", "postgres") as pool:
            # The first server of a service warms its app up, once, also when two start at the
            # same time (their databases are still made empty); the next ones reuse it.
            servers = list(await asyncio.gather(pool.start(implementations["original"]),
                                                pool.start(implementations["original"], 1)))
            servers += [await pool.start(implementations["original"], 2),
                        await pool.start(implementations["FS-08-M1"])]
            for server in servers:
                await server.reset()
            before = [users_in(server.database_url) for server in servers]
            async with httpx.AsyncClient(trust_env=False) as client:
                answer = await client.post(f"{servers[2].base_url}/api/v1/users/signup",
                                           json=signup)
                assert answer.status_code == 200, answer.text
            after = [users_in(server.database_url) for server in servers]
            return [server.switch for server in servers], before, after

    ways, before, after = asyncio.run(run())
    assert ways == ["patch", "patch", "warm app", "warm app"]
    assert len(set(before)) == 1  # each database starts as the seed
    assert after == [before[0], before[0], before[0] + 1, before[0]]  # the sign-up reached one



@needs_postgres
def test_a_prepared_pool_on_postgres_copies_the_seeded_warm_up_from_the_first_server(
        tmp_path: Path) -> None:
    implementations = implementations_of(resolve_services(["fullstack"])[0])

    async def run() -> tuple[bool, list[str]]:
        async with ServerPool(tmp_path / "pool", "postgres") as pool:
            ready = await pool.prepare([implementations["original"].service])
            servers = [await pool.start(implementations["original"]),
                       await pool.start(implementations["FS-08-M1"])]
            return ready, [server.switch for server in servers]

    # Unprepared, the first server seeds its own database ("patch"; see the test above).
    assert asyncio.run(run()) == (True, ["warm app", "warm app"])

def test_an_app_that_keeps_its_database_open_is_not_reused(tmp_path: Path) -> None:
    """A connection kept outside SQLAlchemy's pool would be shared by every forked server."""
    from restbench.serving import originals

    template = tmp_path / originals.SQLITE_FILE
    with contextlib.closing(sqlite3.connect(template)) as making:
        making.execute("CREATE TABLE t (x)")
        making.commit()
    original = originals.Original(tmp_path, {}, app=object(), template=template)
    kept = sqlite3.connect(template)
    kept.execute("SELECT * FROM t").fetchall()
    try:
        assert originals.still_connected(original)
    finally:
        kept.close()
    assert not originals.still_connected(original)


def test_memory_folders_go_to_dev_shm_unless_the_user_names_a_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ROOT_VARIABLE)
    assert memory_root() == "/dev/shm" and passed_on() == {}
    monkeypatch.chdir(tmp_path.parent)
    monkeypatch.setenv(ROOT_VARIABLE, tmp_path.name)  # relative: the helpers start elsewhere
    assert memory_root() == str(tmp_path)
    assert passed_on() == {ROOT_VARIABLE: str(tmp_path)}


def test_sqlite_databases_live_in_memory_and_go_with_their_server(tmp_path: Path) -> None:
    databases = SqliteDatabases()
    try:
        url = databases.create(tmp_path, "todo-original-0")
        path = Path(url.removeprefix("sqlite:///"))
        assert path.parent.parent.parent == Path(str(memory_root()))
        sqlite3.connect(path).execute("CREATE TABLE t (x)").connection.commit()
        databases.drop(url)
        assert not path.parent.exists()
    finally:
        databases.close()
    assert not path.parent.parent.exists()


HOLDER = """
import asyncio, sys, time
from pathlib import Path
from restbench.benchmark import resolve_services
from restbench.mutation import implementations_of
from restbench.serving import ServerPool

async def main():
    pool = ServerPool(Path(sys.argv[2]))
    await pool.start(implementations_of(resolve_services([sys.argv[1]])[0])["MINI-02-M1"])
    print(*pool._memory_folders(), flush=True)
    time.sleep(600)

asyncio.run(main())
"""


def test_in_memory_folders_go_when_the_harness_is_killed(tmp_path: Path) -> None:
    mini = Path(__file__).parents[1] / "fixtures" / "mini"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(mini), str(tmp_path)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        folders = [Path(f) for f in holder.stdout.readline().split()]
        assert len(folders) == 2 and all(f.parent == Path(str(memory_root())) for f in folders)
        assert any(any(f.rglob("main.py")) for f in folders)  # the mutant's copy
    finally:
        holder.kill()
        holder.wait()
    deadline = time.monotonic() + 20
    while any(f.exists() for f in folders) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(f.exists() for f in folders), _who_holds(folders)


def _who_holds(folders: list[Path]) -> str:
    """For a failure (seen once, at load ~4.5): what is left in the folders, and every process
    that names one in its command line or has a file open in one, with its state."""
    lines = [f"left: {sorted(str(p) for f in folders for p in f.rglob('*'))}"]
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            opened = [os.readlink(fd) for fd in (proc / "fd").iterdir()]
        except OSError:
            opened = []
        named = _read(proc / "cmdline").replace(b"\0", b" ").decode(errors="replace")
        if any(str(f) in named or any(o.startswith(str(f)) for o in opened) for f in folders):
            state = next((line for line in _read(proc / "status").decode().splitlines()
                          if line.startswith("State:")), "State: ?")
            lines.append(f"{proc.name} {state} wchan={_read(proc / 'wchan').decode()} "
                         f"{named[:200]}")
    return "\n".join(lines)


def test_what_a_killed_harness_and_launcher_left_in_memory_goes_with_the_next_pool(
        tmp_path: Path, own_memory: Path) -> None:
    """SIGKILL for both (as Ray does to a lost node's worker and its children): nothing of them
    can clean up, so the next pool removes the folders nobody holds any more."""
    mini = Path(__file__).parents[1] / "fixtures" / "mini"
    live = ServerPool(tmp_path / "live")  # a run still going: its folders must stay
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(mini), str(tmp_path / "dead")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        folders = [Path(f) for f in holder.stdout.readline().split()]
        assert len(folders) == 2 and all(f.parent == own_memory for f in folders)
        launchers = [int(p.parent.name) for p in Path("/proc").glob("[0-9]*/cmdline")
                     if b"restbench.serving.launcher" in _read(p)
                     and f"{folders[0]}".encode() in _read(p)]
        assert launchers  # the launcher and its server (a fork of it)
        for pid in launchers:
            os.kill(pid, signal.SIGKILL)
    finally:
        holder.kill()
        holder.wait()
    time.sleep(1.0)  # the servers die with their launcher; the kernel drops their locks
    ours = {Path(f) for f in live._memory_folders()}
    orphans = set(own_memory.iterdir()) - ours
    assert ours and all(is_held(folder) for folder in ours)
    assert set(folders) <= orphans and not any(is_held(folder) for folder in orphans)
    for folder in orphans:  # as old as a forgotten folder is
        os.utime(folder, (time.time() - 3600, time.time() - 3600))
    asyncio.run(ServerPool(tmp_path / "next").close())
    assert set(own_memory.iterdir()) == ours
    asyncio.run(live.close())
    assert list(own_memory.iterdir()) == []


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def test_starts_asked_at_once_get_their_own_answers_and_a_given_up_one_is_stopped(
        tmp_path: Path) -> None:
    """The launcher forks the next server while one still starts (answers carry the request's
    id): servers asked for together come up, each the implementation asked for, and a start
    whose caller gave up is stopped, not left running."""
    implementations = implementations_of(resolve_services([str(LAYERED)])[0])
    ids = ["LAYER-01-M4", "LAYER-01-M2", "LAYER-01-M1", "LAYER-01-M3", "LAYER-01-M5"]

    async def scenario() -> tuple[dict[str, list[object]], set[int], set[int]]:
        async with ServerPool(tmp_path / "servers") as pool:
            servers = await asyncio.gather(*(pool.start(implementations[i]) for i in ids))
            seen = {server.implementation.id: await _probe(server) for server in servers}
            for server in servers:
                await pool.stop(server)
            launcher = pool._launcher
            assert launcher is not None
            # Killed, they may still be exiting: the launcher does not wait for that.
            stopped = {server.pid for server in servers}

            def others() -> set[int]:
                return live_children(launcher.pid) - stopped

            given_up = asyncio.ensure_future(pool.start(implementations["LAYER-01-M1"]))
            deadline = time.monotonic() + 30
            while not others() and time.monotonic() < deadline:
                await asyncio.sleep(0.001)  # until the launcher has forked its server
            before = others()
            given_up.cancel()  # the server takes milliseconds more to report that it serves
            with contextlib.suppress(asyncio.CancelledError):
                await given_up
            assert given_up.cancelled()
            deadline = time.monotonic() + 10
            while live_children(launcher.pid) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            return seen, before, live_children(launcher.pid)

    seen, before, after = asyncio.run(scenario())
    assert seen == {"LAYER-01-M4": [2, 3, 4, 4, 5], "LAYER-01-M2": [2, 3, 3, 3, 1],
                    "LAYER-01-M1": [3, 5, 5, 5, 2], "LAYER-01-M3": [3, 4, 5, 5, 1],
                    "LAYER-01-M5": [2, 3, 4, 5, 1]}
    assert before  # the given-up start was under way
    assert not after  # and its server was stopped once it had started


def test_endpoint_contexts_filled_in_the_launcher_are_those_a_server_would_find(
        tmp_path: Path) -> None:
    """FastAPI caches each endpoint's file and line on its first request; the launcher fills
    that cache once. A server that patched an endpoint must find the edited file's, as a fresh
    lookup does, and every other endpoint the launcher's."""
    import json

    from fastapi import routing

    from restbench.mutation.apply import edited_text, materialize
    from restbench.serving import originals

    service = resolve_services(["todo"])[0]
    original = originals.load(service.root, tmp_path)
    mutant = implementations_of(service)["TODO-01-M1"]  # an endpoint's return, edited
    source = materialize(mutant, tmp_path / "copy")
    endpoints = {f"{e.__module__}.{e.__qualname__}": e for e in originals._endpoints(original.app)}
    assert len(endpoints) > 10
    assert all(id(e) in routing._endpoint_context_cache for e in endpoints.values())
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the server's child
        try:
            switch = originals.activate(original, source, [edited_text(mutant)[0].as_posix()])
            cached = {name: dict(routing._extract_endpoint_context(e))
                      for name, e in endpoints.items()}
            routing._endpoint_context_cache.clear()
            fresh = {name: dict(routing._extract_endpoint_context(e))
                     for name, e in endpoints.items()}
            os.write(write, json.dumps([switch, cached, fresh]).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        switch, cached, fresh = json.loads(answer.read())
    os.waitpid(pid, 0)
    assert switch == "patch"
    assert cached == fresh
    assert fresh["app.routes.users.register"]["file"] == str(source / "app/routes/users.py")


def test_a_server_stopping_while_another_of_the_same_replica_starts_keeps_its_database(
        tmp_path: Path) -> None:
    """refine's live servers all start as replica 1000: one evicted (stopping) while a new one
    of the same implementation started shared its database folder's name, and the stop deleted
    the new server's database (FileNotFoundError for service.sqlite3 in a refine run)."""
    original = implementations_of(resolve_services([str(LAYERED)])[0])["original"]

    async def scenario() -> tuple[list[object], list[object]]:
        async with ServerPool(tmp_path / "servers") as pool:
            first = await pool.start(original, replica=1000)
            expected = await _probe(first)
            second, _ = await asyncio.gather(pool.start(original, replica=1000),
                                             pool.stop(first))
            assert first.database_url != second.database_url
            return expected, await _probe(second)

    expected, seen = asyncio.run(scenario())
    assert seen == expected
