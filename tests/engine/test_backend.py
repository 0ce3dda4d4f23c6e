"""LocalBackend on real servers and real sandboxed pytest runs: warm servers across batches,
bounded by the warm limit, reentrant calls, implementations that cannot start."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any

from restbench.benchmark import load_service
from restbench.engine.backend import LocalBackend
from restbench.engine.jobs import Job
from restbench.execution import ExecutionResult, Executor, Outcome
from restbench.mutation import implementations_of
from restbench.serving import ServerPool

MINI = Path(__file__).parents[1] / "fixtures" / "mini"
BREAKS_START = """
      - id: MINI-01-M9
        kind: status
        vague_basis: false
        description: The app cannot be created
        file: app/main.py
        find: 'app = FastAPI(title="Mini counter")'
        replace: 'raise RuntimeError("no app today")'
"""


def _jobs(service_dir: Path, *targets: str) -> list[Job]:
    service = load_service(service_dir)
    implementations = implementations_of(service)
    code = (service_dir / "golden" / "test_MINI-02.py").read_text()
    return [Job(code, implementations[t], f"MINI-02 #{n}") for n, t in enumerate(targets)]


async def _execute(backend: LocalBackend, jobs: list[Job]
                   ) -> tuple[dict[str, str], dict[str, str]]:
    outcomes: dict[str, str] = {}

    def done(job: Job, result: ExecutionResult) -> None:
        outcomes[job.label] = f"{job.implementation.id}={result.outcome.value}"

    failures = await backend.execute(jobs, done)
    return outcomes, {k: str(v) for k, v in failures.items()}


def test_servers_stay_warm_across_batches_and_stay_bounded(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with ServerPool(tmp_path / "servers") as pool, \
                Executor(1, 30, tmp_path / "exec") as executor, \
                LocalBackend(pool, executor, warm=2) as backend:
            outcomes, failures = await _execute(backend, _jobs(MINI, "original"))
            assert (outcomes, failures) == ({"MINI-02 #0": "original=pass"}, {})
            await _execute(backend, _jobs(MINI, "original", "original"))
            assert backend.starts == 1  # the second batch found the original's server warm
            for target in ("MINI-02-M1", "MINI-02-M2", "MINI-B1", "MINI-01-M1"):
                outcomes, _ = await _execute(backend, _jobs(MINI, target))
                expected = "pass" if target == "MINI-B1" else "fail"
                if target != "MINI-01-M1":  # MINI-02's golden test cannot see that mutant
                    assert outcomes == {"MINI-02 #0": f"{target}={expected}"}
                assert len(pool._servers) <= 2 + 1  # warm ones and the lane's: no growth
            assert backend.starts == 5
            # The original was the least recently used: it was stopped, so it starts again;
            # the two most recent ones are still warm.
            await _execute(backend, _jobs(MINI, "MINI-01-M1", "MINI-B1", "original"))
            assert backend.starts == 6
        assert pool._servers == []

    asyncio.run(scenario())


def test_concurrent_batches_share_servers_and_a_start_failure_stays_in_its_batch(
        mini_service: Path, tmp_path: Path) -> None:
    data = mini_service / "requirements.yaml"
    text = data.read_text()
    anchor = "  - id: MINI-02\n"
    data.write_text(text.replace(anchor, BREAKS_START.lstrip("\n") + anchor, 1))

    async def scenario() -> None:
        async with ServerPool(tmp_path / "servers") as pool, \
                Executor(2, 30, tmp_path / "exec") as executor, \
                LocalBackend(pool, executor) as backend:
            first, second = await asyncio.gather(
                _execute(backend, _jobs(mini_service, "original", "MINI-02-M1", "original")),
                _execute(backend, _jobs(mini_service, "MINI-01-M9", "original", "MINI-02-M1")))
            assert first == ({"MINI-02 #0": "original=pass", "MINI-02 #1": "MINI-02-M1=fail",
                              "MINI-02 #2": "original=pass"}, {})
            outcomes, failures = second
            assert outcomes == {"MINI-02 #1": "original=pass", "MINI-02 #2": "MINI-02-M1=fail"}
            assert list(failures) == ["MINI-01-M9"]
            assert "no app today" in failures["MINI-01-M9"]
            # one server per implementation for both batches (two lanes may each start the
            # original), and the broken one tried once
            assert backend.starts <= 4
            again, _ = await _execute(backend, _jobs(mini_service, "MINI-02-M1"))
            assert again == {"MINI-02 #0": "MINI-02-M1=fail"}
            assert backend.starts <= 4

    asyncio.run(scenario())


def test_a_warm_server_that_died_is_replaced(tmp_path: Path) -> None:
    test = ("import requests\n\ndef test_read():\n"
            "    assert requests.get('http://localhost:8000/counters/a', timeout=5).json()"
            " == {'value': 1}\n")
    service = load_service(MINI)
    original = implementations_of(service)["original"]

    async def scenario() -> None:
        async with ServerPool(tmp_path / "servers") as pool, \
                Executor(1, 30, tmp_path / "exec") as executor, \
                LocalBackend(pool, executor) as backend:
            results: list[Outcome] = []
            await backend.execute([Job(test, original, "k")],
                                  lambda job, result: results.append(result.outcome))
            (server,) = pool._servers
            os.kill(server.pid, signal.SIGKILL)  # as if a test had brought it down
            await backend.execute([Job(test, original, "k")],
                                  lambda job, result: results.append(result.outcome))
            assert results == [Outcome.PASS, Outcome.PASS]
            assert backend.starts == 2

    asyncio.run(scenario())


class _TimedPool(ServerPool):
    """A pool that notes when each server start begins."""

    started: dict[str, float]

    async def start(self, implementation: Any, replica: int = 0) -> Any:
        self.started = getattr(self, "started", {})
        self.started.setdefault(implementation.id, time.monotonic())
        return await super().start(implementation, replica)


class _CountingPool(ServerPool):
    """A pool whose servers count the resets the harness asks of them."""

    resets = 0

    async def start(self, implementation: Any, replica: int = 0) -> Any:
        server = await super().start(implementation, replica)
        reset = server.reset

        async def counted() -> None:
            self.resets += 1
            await reset()

        server.reset = counted  # type: ignore[method-assign]
        return server


def test_a_fresh_server_takes_its_first_job_without_a_reset(tmp_path: Path) -> None:
    """`create_app` leaves the seed state, the state a reset gives (the service contract): a
    server's first job runs without a reset, every later one after a reset. MINI-02's test
    counts up from the seed value, so each run passes only on the seed state. So does a server
    of the original that marks reach (nothing is inferred from its first job, serving.reach)."""
    jobs = _jobs(MINI, "original", "original", "original")

    async def scenario(mark_reach: bool) -> tuple[dict[str, str], int, int]:
        async with _CountingPool(tmp_path / f"servers-{mark_reach}",
                                 mark_reach=mark_reach) as pool, \
                Executor(1, 30, tmp_path / f"exec-{mark_reach}") as executor, \
                LocalBackend(pool, executor) as backend:
            outcomes, failures = await _execute(backend, jobs)
            assert failures == {}
            return outcomes, backend.starts, pool.resets

    passed = {f"MINI-02 #{n}": "original=pass" for n in range(3)}
    assert asyncio.run(scenario(False)) == (passed, 1, 2)
    assert asyncio.run(scenario(True)) == (passed, 1, 2)


SLOW = "import time\n\ndef test_slowly():\n    time.sleep(1.5)\n"


def test_the_next_server_starts_while_the_last_job_of_its_lane_runs(tmp_path: Path) -> None:
    """One lane: the mutant's server starts during the original's (slow) execution, not after
    it; the mutant's job still runs on a server reset just before, and is scored as ever."""
    original, mutant = _jobs(MINI, "original", "MINI-02-M1")
    finished: dict[str, float] = {}
    outcomes: dict[str, str] = {}

    def done(job: Job, result: ExecutionResult) -> None:
        finished[job.implementation.id] = time.monotonic()
        outcomes[job.implementation.id] = result.outcome.value

    async def scenario() -> None:
        async with _TimedPool(tmp_path / "servers") as pool, \
                Executor(1, 30, tmp_path / "exec") as executor, \
                LocalBackend(pool, executor) as backend:
            slow = Job(SLOW, original.implementation, "slow")
            assert await backend.execute([slow, mutant], done) == {}
            assert pool.started["MINI-02-M1"] < finished["original"]
            assert outcomes == {"original": "pass", "MINI-02-M1": "fail"}

    asyncio.run(scenario())


def test_a_free_lane_takes_over_what_a_busy_lane_chose_ahead(tmp_path: Path) -> None:
    """Two lanes, three implementations: the lane on the slow original chose the last one ahead;
    the other lane, done with its own, takes it over instead of ending."""
    original, first, last = _jobs(MINI, "original", "MINI-02-M1", "MINI-02-M2")
    finished: dict[str, float] = {}

    def done(job: Job, result: ExecutionResult) -> None:
        finished[job.implementation.id] = time.monotonic()

    async def scenario() -> None:
        async with ServerPool(tmp_path / "servers") as pool, \
                Executor(2, 30, tmp_path / "exec") as executor, \
                LocalBackend(pool, executor) as backend:
            slow = Job(SLOW, original.implementation, "slow")
            assert await backend.execute([slow, first, last], done) == {}
            assert finished["MINI-02-M2"] < finished["original"]
            assert backend.starts == 3

    asyncio.run(scenario())



def test_the_default_is_one_more_lane_than_cpus(tmp_path: Path) -> None:
    """A lane also waits (resets, relays, the harness): by default the executor, and so the
    backend, runs one execution more at a time than the machine has CPUs."""
    lanes = (os.cpu_count() or 1) + 1
    assert Executor().size == lanes
    pool = ServerPool(tmp_path / "srv")
    try:
        assert LocalBackend(pool, Executor()).size == lanes
    finally:
        asyncio.run(pool.close())  # its folders in memory
    assert Executor(workers=1).size == 1
