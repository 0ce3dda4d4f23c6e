"""The harness-managed PostgreSQL server, a user's server given by URL, and `--db` errors.

Real processes throughout: initdb and postgres, the service launcher, HTTP over loopback.
(`restbench validate -s fullstack --db postgres` end to end is in
tests/services/test_validate_on_postgres.py.)
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psycopg
import pytest

from restbench.benchmark import resolve_services
from restbench.execution.limits import SERVER_FILE_SIZE_LIMIT_BYTES
from restbench.mutation import implementations_of
from restbench.serving import ServerPool
from restbench.serving.postgres import PostgresError, ThrowawayPostgres
from tests.cli_helpers import restbench, serve_until_its_child_is_killed
from tests.postgres_helpers import needs_postgres


def _postmaster_pid(socket_dir: Path) -> int:
    return int((socket_dir / "data" / "postmaster.pid").read_text().splitlines()[0])


def _gone(pid: int, folder: Path | None = None, within_s: float = 15.0) -> bool:
    """Whether process `pid` (and `folder`, if given) went away within `within_s`."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not (folder and folder.exists()) and not Path(f"/proc/{pid}").exists():
            return True
        time.sleep(0.05)
    return False


@needs_postgres
def test_a_table_stops_growing_at_the_file_size_limit_and_the_server_goes_on() -> None:
    """The server's data is in memory: a test storing ever more through a service must get an
    error, not fill the machine's memory. Before the limit, the table below took 290 MB."""
    rows = 3 * SERVER_FILE_SIZE_LIMIT_BYTES // 1000  # ~1 KB each
    server = ThrowawayPostgres()
    url = server.start()
    try:
        with psycopg.connect(url, autocommit=True) as connection:
            with pytest.raises(psycopg.Error, match="File too large"):
                connection.execute("CREATE TABLE big AS SELECT repeat(md5(i::text), 30) AS x "
                                   "FROM generate_series(1, %s) AS i", (rows,))
            connection.execute("CREATE TABLE small AS SELECT 1 AS x")
            assert connection.execute("SELECT count(*) FROM small").fetchone() == (1,)
    finally:
        server.stop()


@needs_postgres
def test_throwaway_server_runs_tuned_and_leaves_nothing() -> None:
    server = ThrowawayPostgres()
    url = server.start()
    try:
        assert server.socket_dir is not None
        socket_dir = server.socket_dir
        pid = _postmaster_pid(socket_dir)
        with psycopg.connect(url, autocommit=True) as connection:
            settings = {name: connection.execute(f"SHOW {name}").fetchone()[0]
                        for name in ("fsync", "synchronous_commit", "full_page_writes",
                                     "listen_addresses")}
        assert settings == {"fsync": "off", "synchronous_commit": "off",
                            "full_page_writes": "off", "listen_addresses": ""}
        # Password authentication on the socket too: the superuser without it is refused.
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(f"postgresql://postgres@/postgres?host={socket_dir}").close()
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(f"postgresql://postgres:guess@/postgres?host={socket_dir}").close()
    finally:
        server.stop()
    assert not socket_dir.exists()
    assert not Path(f"/proc/{pid}").exists()


@needs_postgres
def test_killed_harness_leaves_no_server_and_no_data(tmp_path: Path) -> None:
    script = ("import sys, time\n"
              "from restbench.serving.postgres import ThrowawayPostgres\n"
              "server = ThrowawayPostgres(); server.start()\n"
              "print(server.socket_dir, flush=True); time.sleep(120)\n")
    harness = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert harness.stdout is not None
        socket_dir = Path(harness.stdout.readline().strip())
        pid = _postmaster_pid(socket_dir)
        assert Path(f"/proc/{pid}").exists()
    finally:
        harness.send_signal(signal.SIGKILL)
        harness.wait()
    assert _gone(pid, socket_dir), f"postgres {pid} or {socket_dir} survived the harness"


@needs_postgres
def test_user_url_gets_one_database_per_server_and_nothing_left(tmp_path: Path) -> None:
    """The user's server is used as given: nothing is started, every database is dropped."""
    service = resolve_services(["fullstack"])[0]
    original = implementations_of(service)["original"]

    def restbench_databases(url: str) -> set[str]:
        with psycopg.connect(url.replace("+psycopg", ""), autocommit=True) as connection:
            rows = connection.execute("SELECT datname FROM pg_database "
                                      "WHERE datname LIKE 'restbench_%'").fetchall()
        return {row[0] for row in rows}

    async def scenario(url: str) -> tuple[set[str], set[str]]:
        async with ServerPool(tmp_path / "servers", url) as pool:
            first, second = await pool.start(original), await pool.start(original, replica=1)
            during = restbench_databases(url)
            async with httpx.AsyncClient(base_url=f"{first.base_url}/api/v1") as client:
                login = await client.post("/login/access-token", data={
                    "username": "alice@example.com", "password": "alicepass123"})
                headers = {"Authorization": f"Bearer {login.json()['access_token']}"}
                created = await client.post("/items/", json={"title": "On PostgreSQL"},
                                            headers=headers)
                assert created.status_code == 200, created.text
                listed = (await client.get("/items/", headers=headers)).json()
                assert listed["count"] == 4 and listed["data"][0]["title"] == "On PostgreSQL"
                assert listed["data"][0]["created_at"].endswith("Z")
                await first.reset()
                assert (await client.get("/items/", headers=headers)).json()["count"] == 3
            await pool.stop(second)
            after_stop = restbench_databases(url)
            assert pool._databases._throwaway is None  # type: ignore[attr-defined]
        return during, after_stop

    with ThrowawayPostgres() as users_server:
        url = users_server.url.replace("postgresql://", "postgresql+psycopg://")
        during, after_stop = asyncio.run(scenario(url))
        # One per server, and the service's warm-up database, the template of the servers' own
        assert len(during) == 3 and len([d for d in during if "_warm_up_" in d]) == 1
        assert len(after_stop) == 2 and after_stop < during
        assert restbench_databases(users_server.url) == set()


@needs_postgres
def test_a_server_started_while_the_pool_prepares_copies_the_seeded_database(
        tmp_path: Path) -> None:
    """A run fetches the OpenAPI document from a server of the original while the launcher
    still warms that service up. Before, that server's database was made empty (the warm-up's
    seeded one was not named yet), and the server seeded it itself."""
    original = implementations_of(resolve_services(["fullstack"])[0])["original"]
    templates: list[str | None] = []

    async def scenario() -> None:
        async with ServerPool(tmp_path / "servers", "postgres") as pool:
            create = pool._databases.create  # type: ignore[attr-defined]

            def spied(source: Path, name: str, template: str | None = None) -> str:
                templates.append(template)
                return create(source, name, template)

            pool._databases.create = spied  # type: ignore[attr-defined]
            preparing = pool.prepare([original.service])
            server = await pool.start(original)
            assert preparing.done() and preparing.result()
            async with httpx.AsyncClient(base_url=f"{server.base_url}/api/v1") as client:
                login = await client.post("/login/access-token", data={
                    "username": "alice@example.com", "password": "alicepass123"})
                assert login.status_code == 200, login.text

    asyncio.run(scenario())
    warm_up, first = templates
    assert warm_up is None and first is not None and "_warm_up_" in first


def test_postgres_for_a_sqlite_only_service_is_a_one_line_error() -> None:
    result = restbench("validate", "-s", "todo", "--db", "postgres", timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "requirements.yaml" in lines[0] and "'todo' runs on sqlite only" in lines[0]

    result = restbench("run", "-s", "todo", "--db", "mysql://localhost/x", timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        "error: --db 'mysql://localhost/x': expected sqlite, postgres or a postgresql:// URL"]


def test_an_unreachable_postgres_url_is_a_one_line_error() -> None:
    """Every server start meets the same error at once: the user sees it once, no traceback
    (each failed execution's was logged, 581 for fullstack), and nothing is left running."""
    url = "postgresql://nobody@127.0.0.1:1/x"  # port 1: refused at once, nothing to install
    for command in (["validate", "-s", "fullstack,conduit"], ["run", "-s", "fullstack", "-g",
                                                            "golden", "-V", "precise"]):
        result = restbench(*command, "--db", url, timeout=120)
        assert result.returncode == 2, result.stdout + result.stderr
        assert "Traceback" not in result.stderr and "never retrieved" not in result.stderr
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, result.stderr
        assert errors[0].startswith(f"error: --db: cannot connect to {url}: "), errors
        # told before anything starts: before, a progress bar at 0/582 came first
        assert result.stderr.splitlines() == errors, result.stderr


def test_a_missing_postgres_installation_is_a_one_line_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from restbench.serving import postgres

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(postgres, "DEBIAN_PROGRAM_DIRS", tmp_path)
    with pytest.raises(PostgresError) as raised:
        ThrowawayPostgres().start()
    message = str(raised.value)
    assert "\n" not in message and "initdb" in message and "--db postgresql://" in message


def test_missing_postgres_programs_are_told_before_anything_starts(tmp_path: Path) -> None:
    """Before: validate drew its progress bar first, and run left a results.sqlite3 behind
    that `report` then called an unfinished run."""
    empty = tmp_path / "no-programs"
    empty.mkdir()
    env = {**os.environ, "RESTBENCH_POSTGRES_BIN": str(empty)}
    expected = [(f"error: RESTBENCH_POSTGRES_BIN={empty}: no initdb, pg_ctl, postgres there "
                 "(it names the folder holding initdb, pg_ctl and postgres)")]
    for command in (["validate", "-s", "fullstack", "-R", "FS-01"],
                    ["run", "-s", "fullstack", "-R", "FS-01", "-g", "golden", "-o",
                     str(tmp_path / "out")],
                    ["serve", "fullstack", "--port", "0"]):
        result = subprocess.run([sys.executable, "-m", "restbench.cli", *command, "--db",
                                 "postgres"], capture_output=True, text=True, env=env,
                                timeout=120, check=False)
        assert result.returncode == 2, result.stdout + result.stderr
        assert result.stderr.splitlines() == expected, (command, result.stderr)
    assert not (tmp_path / "out").exists()


def _kill_supervisor(server: ThrowawayPostgres) -> None:
    supervisor = server._process
    assert supervisor is not None
    supervisor.send_signal(signal.SIGKILL)
    supervisor.wait()


def _age(folder: Path, seconds: float) -> None:
    """Makes `folder` look made `seconds` ago: the sweep spares younger ones (being made)."""
    then = time.time() - seconds
    os.utime(folder, (then, then))


@needs_postgres
def test_a_killed_supervisors_folder_goes_with_the_next_run_a_live_ones_stays(
        own_memory: Path) -> None:
    """SIGKILLed (as Ray ends an actor's children), the supervisor cannot remove its folder
    (46-120 MB in memory); the next run's sweep does, and never a live server's."""
    live, killed = ThrowawayPostgres(), ThrowawayPostgres()
    try:
        live.start()
        killed.start()
        assert live.socket_dir is not None and killed.socket_dir is not None
        live_folder, killed_folder = live.socket_dir, killed.socket_dir
        pid = _postmaster_pid(killed_folder)
        _kill_supervisor(killed)
        assert _gone(pid), f"postgres {pid} outlived its supervisor"
        assert killed_folder.is_dir()
        _age(killed_folder, 600)
        _age(live_folder, 600)

        result = restbench("validate", "-s", "todo", "-R", "TODO-01", timeout=300)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        assert not killed_folder.exists()
        assert live_folder.is_dir()
        with psycopg.connect(live.url, autocommit=True) as connection:
            assert connection.execute("SELECT 1").fetchone() == (1,)
    finally:
        killed.stop()
        live.stop()
    assert list(own_memory.iterdir()) == []


@needs_postgres
def test_serve_stops_with_one_line_when_its_postgres_server_dies(own_memory: Path) -> None:
    status, errors = serve_until_its_child_is_killed("fullstack", "--db", "postgres", "--port",
                                                     "0", marker=b"restbench.serving.postgres")
    assert status == 2
    assert errors == [("error: the throwaway PostgreSQL server stopped (its supervisor process "
                       "exited); serve stopped with it")]
