"""A full memory folder ($RESTBENCH_MEMORY_DIR on a small tmpfs): one line naming it and what
to do, exit 2, wherever it filled up (the copies of a service, a server's SQLite database).
Real tmpfs mounts; mounting needs root, and without it these tests fail, saying so."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from restbench.benchmark import resolve_services
from restbench.errors import RestbenchError
from restbench.mutation import implementations_of
from restbench.serving import ServerPool
from restbench.serving.memory_folders import ROOT_VARIABLE
from tests.cli_helpers import restbench

EXPECTED = ("error: {folder}: full (ENOSPC, no space left on device) while restbench wrote its "
            "scratch files there; set RESTBENCH_MEMORY_DIR to a folder with more room "
            "(README: Databases)")


@contextlib.contextmanager
def _small_tmpfs(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A 1 MB tmpfs mounted on `folder`, as the memory folder."""
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=1777", "tmpfs",
                              str(folder)], capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        pytest.fail(f"cannot mount a small tmpfs (root needed): {mounted.stderr.strip()}",
                    pytrace=False)
    monkeypatch.setenv(ROOT_VARIABLE, str(folder))
    try:
        yield folder
    finally:
        subprocess.run(["umount", "--lazy", str(folder)], check=False)


@pytest.fixture
def small_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "small"
    folder.mkdir()
    with _small_tmpfs(folder, monkeypatch):
        yield folder


@pytest.fixture
def small_short_memory(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """On a short path: PostgreSQL's socket name must fit in it (else its server goes to /tmp)."""
    folder = Path(tempfile.mkdtemp(prefix="rb-", dir="/tmp"))
    try:
        with _small_tmpfs(folder, monkeypatch):
            yield folder
    finally:
        folder.rmdir()


def _fill_all_but(folder: Path, spare: int) -> None:
    """Writes a file until the device is full, then frees `spare` bytes of it."""
    spare_file = folder / "spare"
    spare_file.write_bytes(b"\0" * spare)
    descriptor = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    with contextlib.suppress(OSError):
        while True:
            os.write(descriptor, b"\0" * 65536)
    os.close(descriptor)
    spare_file.unlink()


def test_a_full_memory_folder_is_one_line(small_memory: Path) -> None:
    result = restbench("validate", "-s", "todo", timeout=600)
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [EXPECTED.format(folder=small_memory)]
    assert result.stderr.strip().splitlines()[-1] == errors[0]  # after the progress bar


def test_a_full_memory_folder_met_by_a_servers_sqlite_copy_is_one_line(
        small_memory: Path, tmp_path: Path) -> None:
    """The service's copy is made and its first server started; then the folder fills, and the
    next server's SQLite database, a copy of the warmed-up one made in the launcher's child,
    does not fit."""
    original = implementations_of(resolve_services(["todo"])[0])["original"]

    async def scenario() -> str:
        async with ServerPool(tmp_path / "servers") as pool:
            await pool.start(original)
            _fill_all_but(small_memory, 16384)  # room for the server's folder, not its data
            with pytest.raises(RestbenchError) as raised:
                await pool.start(original, replica=1)
        return str(raised.value)

    assert f"error: {asyncio.run(scenario())}" == EXPECTED.format(folder=small_memory)


def test_a_memory_folder_too_small_for_the_throwaway_postgres_server_is_one_line(
        small_short_memory: Path) -> None:
    """Before: `initdb failed: ... No space left on device`, without the folder or the hint."""
    from restbench.serving.postgres import PostgresError, ThrowawayPostgres

    with pytest.raises(PostgresError) as raised:
        ThrowawayPostgres().start()
    assert f"error: {raised.value}" == \
        "error: throwaway PostgreSQL server: " + EXPECTED.format(folder=small_short_memory)[7:]
    assert [p.name for p in small_short_memory.iterdir()] == []  # its folder went with it
