"""Executions per second on a Ray cluster of one node and of two nodes, next to a local run.

Starts a local Ray cluster (its head node, then a second node joined to it, both on this
machine, each with `--slots` CPUs), and runs the executions of `restbench validate -s SERVICE`
(every golden test on the original, its mutants and the benign variants) through:

- local: `LocalBackend` in this process with `--slots` workers, and with twice as many;
- ray, 1 node: `RayBackend` on the head node alone;
- ray, 2 nodes: `RayBackend` on both nodes.

Each configuration runs `--rounds` times, interleaved so that all share the machine's load; the
time counted is `backend.execute` only (nodes are started and their workers warm before). Prints
the median executions per second of each and the load average. Both "nodes" share this machine's
CPUs: on one machine a second node adds slots, not cores.

    python benchmarks/ray_scaling.py [-s todo] [--slots 1] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from ray.cluster_utils import Cluster

from restbench.benchmark import resolve_services
from restbench.cluster import open_ray_backend
from restbench.engine.backend import LocalBackend
from restbench.engine.jobs import Job, open_executor
from restbench.execution import ExecutionResult, Outcome
from restbench.mutation import implementations_of
from restbench.mutation.apply import ORIGINAL
from restbench.serving import ServerPool


def validate_jobs(service_name: str) -> list[Job]:
    service = resolve_services([service_name])[0]
    implementations = implementations_of(service)
    jobs = []
    for requirement in service.requirements:
        code = service.golden_path(requirement).read_text(encoding="utf-8")
        targets = [ORIGINAL, *(m.id for m in requirement.mutants),
                   *(b.id for b in service.data.benign)]
        jobs += [Job(code, implementations[t], requirement.id) for t in targets]
    return jobs


async def timed(execute: Callable[..., Awaitable[dict[str, object]]], jobs: list[Job]) -> float:
    outcomes: list[ExecutionResult] = []
    started = time.perf_counter()
    failures = await execute(jobs, lambda job, result: outcomes.append(result))
    elapsed = time.perf_counter() - started
    assert not failures, failures
    errors = sum(r.outcome is Outcome.ERROR for r in outcomes)
    assert len(outcomes) == len(jobs) and errors == 0, f"{errors} errors"
    return len(jobs) / elapsed


async def local(jobs: list[Job], workers: int) -> float:
    with tempfile.TemporaryDirectory(prefix="restbench-bench-") as scratch:
        async with ServerPool(Path(scratch) / "servers") as pool, \
                open_executor(workers, 30.0, Path(scratch) / "exec", sandbox=True,
                              trusted_only=False, on_event=lambda event: None) as executor:
            return await timed(LocalBackend(pool, executor).execute, jobs)


async def on_ray(jobs: list[Job], address: str) -> float:
    async with open_ray_backend(address, database="sqlite", workers=None, timeout_s=30.0,
                                sandbox=True, trusted_only=False,
                                on_event=lambda event: None) as backend:
        return await timed(backend.execute, jobs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-s", "--service", default="todo")
    parser.add_argument("--slots", type=int, default=1, help="CPUs (slots) of each node")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    jobs = validate_jobs(args.service)
    cluster = Cluster(initialize_head=True, connect=False,
                      head_node_args={"num_cpus": args.slots, "include_dashboard": False})
    rates: dict[str, list[float]] = {}
    second = None
    try:
        for number in range(args.rounds):
            if second is not None:  # back to one node
                cluster.remove_node(second)
                cluster.wait_for_nodes()
            runs: list[tuple[str, Awaitable[float]]] = [
                (f"local, {args.slots} worker(s)", local(jobs, args.slots)),
                (f"local, {2 * args.slots} worker(s)", local(jobs, 2 * args.slots)),
                (f"ray, 1 node x {args.slots} slot(s)", on_ray(jobs, cluster.address))]
            for name, run in runs:
                rates.setdefault(name, []).append(asyncio.run(run))
            second = cluster.add_node(num_cpus=args.slots)
            cluster.wait_for_nodes()
            name = f"ray, 2 nodes x {args.slots} slot(s)"
            rates.setdefault(name, []).append(asyncio.run(on_ray(jobs, cluster.address)))
            print(f"round {number + 1}: " + ", ".join(f"{n}: {r[-1]:.2f}/s"
                                                      for n, r in rates.items()), flush=True)
    finally:
        cluster.shutdown()
    print(f"{len(jobs)} executions of validate -s {args.service}, median of {args.rounds} "
          f"round(s); load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on "
          f"{os.cpu_count()} CPUs")
    for name, values in rates.items():
        print(f"  {name:<28} {statistics.median(values):6.2f} executions/s")


if __name__ == "__main__":
    main()
