"""The launcher reaps every server it forked before it exits, also those stopped just before,
and the test workers' template reaps every worker: a process left to init takes its CPU time
out of the run's own (and out of `time restbench ...`, which the speed figures come from)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# Run in a process of its own that makes itself the subreaper of its descendants: a server or
# worker its parent did not reap comes to it, where it is seen, instead of going to init unseen.
SCRIPT = """
import asyncio, ctypes, os, sys, time
from pathlib import Path

assert ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
from restbench.benchmark import load_service
from restbench.execution import Executor
from restbench.mutation import implementations_of
from restbench.serving import ServerPool

service = load_service(Path(sys.argv[1]))
scratch = Path(sys.argv[2])


async def main():
    # The pool closes first, just after its last server was stopped without waiting.
    async with Executor(workers=2, timeout_s=30, scratch_root=scratch / "exec") as executor, \\
            ServerPool(scratch / "servers") as pool:
        for implementation in list(implementations_of(service).values())[:3]:
            server = await pool.start(implementation)
            result = await executor.execute("def test_ok():\\n    pass\\n", server.base_url)
            assert result.outcome.value == "pass", result.output
            await pool.stop(server)  # stopped without waiting


asyncio.run(main())
time.sleep(0.5)  # a server killed as the launcher ended has exited by now
left = []
for entry in os.listdir("/proc"):
    if entry.isdigit():
        try:
            fields = open(f"/proc/{entry}/stat").read().rpartition(")")[2].split()
            name = open(f"/proc/{entry}/comm").read().strip()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            left.append(f"{entry} {name} ({fields[0]})")
print("left:", ", ".join(left) or "none")
"""


def test_the_servers_and_test_workers_are_reaped_by_their_parents(mini_service: Path,
                                                                  tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(mini_service), str(tmp_path / "s")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "left: none"
