"""What a test can make a built-in service's server store is bounded: its files (the database in
memory, the log) stop at the server's file size limit, so a test that posts ever larger bodies
gets the service's 500 instead of filling the machine's memory."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from restbench.benchmark import resolve_services
from restbench.execution.limits import SERVER_FILE_SIZE_LIMIT_BYTES
from restbench.mutation import implementations_of
from restbench.serving import ServerPool

TITLE = "x" * (4 * 1024**2)


def test_a_database_stops_growing_at_the_limit_and_a_reset_makes_it_usable_again(
        tmp_path: Path) -> None:
    """Before: no limit; 40 posts of 5 MB put 200 MB into /dev/shm in a few seconds."""

    async def scenario() -> tuple[list[int], int, int]:
        (todo,) = resolve_services(["todo"])
        async with ServerPool(tmp_path / "servers") as pool:
            server = await pool.start(implementations_of(todo)["original"])
            await server.reset()
            async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
                login = await client.post("/users/login", json={
                    "email": "alice@example.com", "password": "Alice123!"})
                headers = {"Authorization": f"Bearer {login.json()['accessToken']}"}
                statuses = []
                while len(statuses) < 2 * SERVER_FILE_SIZE_LIMIT_BYTES // len(TITLE):
                    posted = await client.post("/todos", json={"title": TITLE}, headers=headers)
                    statuses.append(posted.status_code)
                    if posted.status_code != 201:
                        break
                await server.reset()
                login = await client.post("/users/login", json={
                    "email": "alice@example.com", "password": "Alice123!"})
                headers = {"Authorization": f"Bearer {login.json()['accessToken']}"}
                after = await client.post("/todos", json={"title": "Water the plants"},
                                          headers=headers)
                listed = await client.get("/todos", headers=headers)
            return statuses, after.status_code, len(listed.json())

    statuses, after, listed = asyncio.run(scenario())
    assert statuses[-1] == 500, statuses
    stored = (len(statuses) - 1) * len(TITLE)
    assert stored <= SERVER_FILE_SIZE_LIMIT_BYTES, statuses
    assert (after, listed) == (201, 3)  # alice's two seeded todos and the new one
