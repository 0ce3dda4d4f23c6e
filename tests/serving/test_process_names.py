"""Each of the harness's processes shows its role in `ps` (its /proc comm), not `python3`."""

from __future__ import annotations

import asyncio
from pathlib import Path

from restbench import process_names
from restbench.benchmark import load_service
from restbench.execution import Executor, Outcome
from restbench.mutation import implementations_of
from restbench.serving import ServerPool

OWN_NAME_TEST = (
    "from pathlib import Path\n"
    "def test_name():\n"
    f"    assert Path('/proc/self/comm').read_text().strip() == {process_names.TEST!r}\n"
)


def _comm(pid: int) -> str:
    return Path(f"/proc/{pid}/comm").read_text().strip()


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _children_names(pid: int) -> set[str]:
    names = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if _parent(int(entry.name)) == pid:
                    names.add(_comm(int(entry.name)))
            except (OSError, ValueError, IndexError):
                continue  # exited meanwhile
    return names


def test_launcher_server_worker_and_test_process_are_named(tmp_path: Path) -> None:
    service = load_service(Path(__file__).parents[1] / "fixtures" / "mini")
    seen: dict[str, object] = {}

    async def main() -> None:
        async with ServerPool(tmp_path / "servers") as pool, \
                Executor(workers=1, timeout_s=10, scratch_root=tmp_path / "exec") as executor:
            server = await pool.start(implementations_of(service)["original"])
            seen["server"] = _comm(server.pid)
            seen["launcher"] = _comm(_parent(server.pid))
            await server.reset()
            seen["result"] = await executor.execute(OWN_NAME_TEST, server.base_url)
            seen["children"] = _children_names(_parent(_parent(server.pid)))
            seen["workers"] = _children_names(executor._templates[False].process.pid)

    asyncio.run(main())
    assert seen["server"] == process_names.SERVER
    assert seen["launcher"] == process_names.LAUNCHER
    assert process_names.WORKER_TEMPLATE in seen["children"]
    assert seen["workers"] == {process_names.WORKER}
    result = seen["result"]
    assert result.outcome is Outcome.PASS, result.output  # type: ignore[attr-defined]
