"""Shared fixtures: running built-in services over real HTTP, and the mini test service."""

from __future__ import annotations

import asyncio
import shutil
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from restbench.benchmark import resolve_services
from restbench.mutation import implementations_of
from restbench.serving import RunningServer, ServerPool
from restbench.serving.memory_folders import ROOT_VARIABLE
from tests.memory_helpers import memory_folder
from tests.postgres_helpers import require_postgres

FIXTURES = Path(__file__).parent / "fixtures"

# A shell starts a background job (`cmd &`) with SIGINT ignored, and every child inherits that:
# the tests that stop a run with Ctrl-C would see it shrug the signal off and finish.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files with long tests (marked slow, or ray's cluster) first: scripts/test runs two
    test processes that each take one file at a time, so the long files start at once and the
    short ones fill the end, instead of a long file starting last (scripts/test turns off
    pytest-xdist's own reordering, which puts the files with the most tests first)."""
    long_files = {item.path for item in items
                  if item.get_closest_marker("slow") or item.get_closest_marker("ray")}
    items.sort(key=lambda item: item.path not in long_files)


@pytest.fixture(scope="session", autouse=True)
def suite_memory() -> Iterator[Path]:
    """The memory folders of everything a test process of the suite starts, in one folder of its
    own: what is left there at the end, a test leaked (a pool it never closed, say). A leak can
    go unseen (a later pool sweeps unheld folders over two minutes old), never the reverse.
    Tests that need a folder to themselves take `own_memory`."""
    folder = memory_folder("rbtest-suite-")
    with pytest.MonkeyPatch.context() as env:
        env.setenv(ROOT_VARIABLE, str(folder))
        yield folder
    left = sorted(path.name for path in folder.iterdir())
    shutil.rmtree(folder, ignore_errors=True)
    assert not left, f"the suite's tests left these folders in memory: {', '.join(left)}"


class BackgroundService:
    """One original implementation served from a private event loop, usable from sync tests."""

    def __init__(self, service: str, workdir: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.pool = ServerPool(workdir)
        implementation = implementations_of(resolve_services([service])[0])["original"]
        self.server: RunningServer = self._call(self.pool.start(implementation))

    def _call(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=60)

    def reset(self) -> str:
        self._call(self.server.reset())
        return self.server.base_url

    def close(self) -> None:
        self._call(self.pool.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@pytest.fixture(scope="session")
def background_services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    started: dict[str, BackgroundService] = {}
    root = tmp_path_factory.mktemp("services")

    def get(name: str) -> BackgroundService:
        if name not in started:
            started[name] = BackgroundService(name, root / name)
        return started[name]

    yield {"get": get}
    for service in started.values():
        service.close()


@pytest.fixture
def todo_url(background_services: dict[str, Any]) -> str:
    return str(background_services["get"]("todo").reset())


@pytest.fixture
def conduit_url(background_services: dict[str, Any]) -> str:
    return str(background_services["get"]("conduit").reset())


@pytest.fixture
def fullstack_url(background_services: dict[str, Any]) -> str:
    return str(background_services["get"]("fullstack").reset())


@pytest.fixture
def mini_service(tmp_path: Path) -> Path:
    """A private copy of the mini service folder that a test may edit."""
    destination = tmp_path / "mini"
    shutil.copytree(FIXTURES / "mini", destination,
                    ignore=shutil.ignore_patterns("__pycache__"))
    return destination


@pytest.fixture
def own_memory(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh folder in the machine's tmpfs, set as this test's $RESTBENCH_MEMORY_DIR (for the
    restbench processes the test starts, and for the pools it makes in its own process)."""
    folder = memory_folder("rbtest-memory-")
    monkeypatch.setenv(ROOT_VARIABLE, str(folder))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def postgres_programs() -> None:
    """For tests marked needs_postgres (tests/postgres_helpers.py)."""
    require_postgres()
