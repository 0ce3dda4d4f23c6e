"""Sync endpoints and dependencies run on a service server's event loop thread (see
serving.inline_sync): as the thread pool ran them, but without the hand-offs."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import httpx

from restbench.benchmark import resolve_services
from restbench.mutation import implementations_of
from restbench.serving import ServerPool

MINI = Path(__file__).parents[1] / "fixtures" / "mini"
PROBE_ROUTES = '''

def add_probe_routes(app):
    import contextvars
    import threading
    import time

    from fastapi import Depends

    marked = contextvars.ContextVar("marked", default="unset")

    def mark_and_name_thread() -> str:
        marked.set("by the dependency")
        return threading.current_thread().name

    @app.get("/probe")
    def probe(dependency_thread: str = Depends(mark_and_name_thread)) -> dict[str, str]:
        return {"dependency": dependency_thread, "endpoint": threading.current_thread().name,
                "marked": marked.get()}

    @app.get("/slow/{number}")
    def slow(number: int) -> dict[str, int]:
        time.sleep(0.05)
        return {"number": number}
'''


def _probing_service(tmp_path: Path) -> Path:
    """The mini service with two more sync routes, added by its create_app."""
    root = tmp_path / "mini"
    shutil.copytree(MINI, root)
    main = root / "app" / "main.py"
    text = main.read_text(encoding="utf-8")
    text = text.replace("    return app\n", "    add_probe_routes(app)\n    return app\n", 1)
    main.write_text(text + PROBE_ROUTES, encoding="utf-8")
    return root


def test_sync_code_runs_on_the_loop_thread_with_its_own_context(tmp_path: Path) -> None:
    async def scenario() -> None:
        service = resolve_services([str(_probing_service(tmp_path))])[0]
        async with ServerPool(tmp_path / "servers") as pool:
            server = await pool.start(implementations_of(service)["original"])
            async with httpx.AsyncClient(base_url=server.base_url, trust_env=False) as client:
                probe = (await client.get("/probe")).json()
                # Concurrent requests to blocking sync endpoints: each still gets its answer.
                answers = await asyncio.gather(*(client.get(f"/slow/{n}") for n in range(4)))
            await pool.stop(server)
        assert probe == {"dependency": "MainThread", "endpoint": "MainThread",
                         "marked": "unset"}  # a dependency's context changes stay its own
        assert [answer.json() for answer in answers] == [{"number": n} for n in range(4)]

    asyncio.run(scenario())
