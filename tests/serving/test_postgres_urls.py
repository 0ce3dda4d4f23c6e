"""`--db postgresql://...` URLs: malformed ones stopped at once, odd names passed through as
they are, passwords never shown or stored. Real `restbench` processes and PostgreSQL servers."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from psycopg import sql

from restbench.serving.memory_folders import ROOT_VARIABLE
from restbench.serving.postgres import ThrowawayPostgres
from tests.cli_helpers import restbench
from tests.memory_helpers import memory_folder
from tests.postgres_helpers import needs_postgres

MALFORMED = {
    "postgresql://u@h:notaport/d": "the port 'notaport' is not a number",
    "postgresql://u:p@[::1/db": "the host '[::1' has no closing ']'",
    "postgresql://u:p@h:70000/d": "the port 70000 is not from 1 to 65535",
}


@pytest.mark.parametrize("command", [
    ["validate", "-s", "fullstack", "-R", "FS-01"],
    ["serve", "fullstack", "--port", "0"],
    ["bench", "-s", "fullstack"],
    ["agent-eval", "-s", "fullstack"],
])
def test_a_malformed_url_is_one_line_before_anything_starts(command: list[str],
                                                            own_memory: Path) -> None:
    for url, problem in MALFORMED.items():
        result = restbench(*command, "--db", url, timeout=120)
        assert result.returncode == 2, result.stdout + result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: --db '"), result.stderr
        assert problem in lines[0] and ":p@" not in lines[0]
        assert list(own_memory.iterdir()) == []  # no pool was made


@pytest.fixture
def spaced_memory(monkeypatch: pytest.MonkeyPatch) -> Path:
    """A memory folder whose path holds a space; the PostgreSQL socket goes there."""
    folder = memory_folder("rbtest with space-")
    monkeypatch.setenv(ROOT_VARIABLE, str(folder))
    yield folder  # type: ignore[misc]
    shutil.rmtree(folder, ignore_errors=True)


@needs_postgres
def test_a_memory_folder_with_a_space_holds_the_throwaway_server(spaced_memory: Path) -> None:
    result = restbench("validate", "-s", "fullstack", "-R", "FS-01", "--db", "postgres",
                       timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "all sound" in result.stdout
    assert list(spaced_memory.iterdir()) == []


@needs_postgres
def test_a_percent_encoded_database_name_reaches_the_server_as_it_is(
        own_memory: Path) -> None:
    """The user's admin database is named with a space, a quote and a non-ASCII letter,
    percent-encoded in the URL as libpq wants."""
    odd = "odd db-ñ'x"
    with ThrowawayPostgres() as server:
        with psycopg.connect(server.url, autocommit=True) as admin:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(odd)))
        url = server.url.replace("@/postgres?", f"@/{quote(odd, safe='')}?")
        result = restbench("validate", "-s", "fullstack", "-R", "FS-01", "--db", url,
                           timeout=600)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        assert "all sound" in result.stdout


def _password_in_query(server: ThrowawayPostgres) -> tuple[str, str]:
    """The server's URL with its password moved from `user:PASSWORD@` to `?password=`."""
    password = server.url.split("@", 1)[0].rsplit(":", 1)[1]
    return server.url.replace(f":{password}@", "@") + f"&password={password}", password


@needs_postgres
def test_a_password_in_the_query_is_never_shown_or_stored(tmp_path: Path,
                                                           own_memory: Path) -> None:
    with ThrowawayPostgres() as server:
        url, password = _password_in_query(server)
        validated = restbench("validate", "-s", "fullstack", "-R", "FS-01", "--db", url,
                              timeout=600)
        assert validated.returncode == 0, validated.stdout[-2000:] + validated.stderr[-2000:]
        assert "password=***" in validated.stdout
        assert password not in validated.stdout + validated.stderr
        output = tmp_path / "out"
        ran = restbench("run", "-s", "fullstack", "-R", "FS-01", "-g", "golden", "-V",
                        "precise", "--db", url, "-o", output, timeout=600)
        assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
        assert password not in ran.stdout + ran.stderr
    with sqlite3.connect(output / "results.sqlite3") as store:
        stored = " ".join(str(row) for row in store.execute("SELECT * FROM runs"))
    assert "password=***" in stored and password not in stored


def test_a_password_in_the_query_is_masked_in_the_connect_error() -> None:
    url = "postgresql://nobody@127.0.0.1:1/x?password=secret"  # port 1: refused at once
    result = restbench("validate", "-s", "fullstack", "-R", "FS-01", "--db", url, timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "secret" not in result.stdout + result.stderr
    assert "error: --db: cannot connect to postgresql://nobody@127.0.0.1:1/x?password=***: " \
        in result.stderr
