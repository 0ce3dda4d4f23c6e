"""A model run on a Ray cluster gives the local run's numbers: also when a node dies mid-run, and
when the run itself is killed and resumed; the store holds every key once.

Starts a scripted model endpoint (restbench's fake OpenAI-compatible server: for each prompt it
answers the golden test of the requirement the prompt states, in the wording's own way, after
`--delay` seconds) and a local Ray cluster of two nodes on this machine, then runs
`restbench run -s SERVICES -g single-step -m scripted`:

1. without Ray (the reference);
2. with `--ray`, the second node killed once a few executions are stored (a new one joins);
3. with `--ray`, the driver SIGKILLed once a few executions are stored, then the same command
   again (it resumes).

Prints each run's wall time, the scores side by side, the model calls the endpoint received and
the store's duplicate check, and exits 1 if any score or execution outcome differs.

    python benchmarks/ray_equivalence.py [-s todo,conduit] [--delay 0.2]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ray.cluster_utils import Cluster

from restbench.benchmark import Variant, resolve_services
from restbench.llm.fake import FakeLLMServer, Reply


def scripted(services: list[str], delay_s: float) -> Any:
    """Answers the golden test of the requirement whose wording is in the prompt; for the vague
    wording without its one-line checks of response bodies, so that the wordings score
    differently (as a weaker test would)."""
    known = []
    for service in resolve_services(services):
        for requirement in service.requirements:
            golden = service.golden_path(requirement).read_text(encoding="utf-8")
            for variant in (Variant.PRECISE, Variant.VAGUE):
                known.append((requirement.text(variant).strip(), variant, golden))
    known.sort(key=lambda item: -len(item[0]))  # the longest wording that matches wins

    def answer(request: dict[str, Any]) -> Reply:
        prompt = "\n".join(str(m.get("content", "")) for m in request["messages"])
        for text, variant, golden in known:
            if text in prompt:
                code = golden if variant is Variant.PRECISE else _without_body_checks(golden)
                return Reply(content=f"```python\n{code}```\n", delay_s=delay_s)
        return Reply(content="no requirement recognised", delay_s=delay_s)

    return answer


def _without_body_checks(code: str) -> str:
    kept = [line for line in code.splitlines()
            if not (line.strip().startswith("assert") and ".json()" in line
                    and line.count("(") == line.count(")") and line.count("[") == line.count("]")
                    and line.count("{") == line.count("}"))]
    return "\n".join(kept) + "\n"


def run(args: list[str], output: Path, env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "restbench.cli", "run", *args, "-o",
                           str(output)], capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"run failed ({done.returncode}): {done.stderr[-2000:]}")
    return time.perf_counter() - started, done.stderr


def start(args: list[str], output: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "restbench.cli", "run", *args, "-o",
                             str(output)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env=env)


def stored_executions(output: Path) -> int:
    try:
        with sqlite3.connect(f"file:{output / 'results.sqlite3'}?mode=ro", uri=True,
                             timeout=5) as db:
            return int(db.execute("SELECT count(*) FROM executions").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def wait_for(output: Path, count: int, process: subprocess.Popen[str]) -> None:
    while stored_executions(output) < count:
        if process.poll() is not None:
            raise SystemExit(f"the run ended early: {process.communicate()[1][-2000:]}")
        time.sleep(0.2)


def outcomes(output: Path) -> dict[str, str]:
    with sqlite3.connect(output / "results.sqlite3") as db:
        return dict(db.execute("SELECT key, outcome FROM executions"))


def duplicates(output: Path) -> tuple[int, int, int, int]:
    with sqlite3.connect(output / "results.sqlite3") as db:
        executions = db.execute("SELECT count(*), count(DISTINCT key) FROM executions").fetchone()
        generations = db.execute("SELECT count(*), count(DISTINCT key) FROM generations"
                                 ).fetchone()
    return (*executions, *generations)


def scores(output: Path) -> dict[tuple[str, str], tuple[float, float]]:
    rows = json.loads((output / "scores.json").read_text())["scores"]
    return {(row["service"], row["variant"]): (row["ms"], row["validity_rate"]) for row in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-s", "--services", default="todo,conduit")
    parser.add_argument("--delay", type=float, default=0.2, help="seconds per model answer")
    options = parser.parse_args()
    services = options.services.split(",")
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    failed = False
    with FakeLLMServer(scripted(services, options.delay)) as fake, \
            tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch, "models.toml")
        config.write_text(f'[defaults]\nbase_url = "{fake.base_url}"\napi_key_env = "SCRIPTED_KEY"'
                          "\nmax_concurrency = 4\ntimeout_s = 30\n")
        env = {**os.environ, "RESTBENCH_LLM_CONFIG": str(config), "SCRIPTED_KEY": "sk-scripted",
               "COLUMNS": "200"}
        matrix = ["-s", options.services, "-g", "single-step", "-m", "scripted"]
        local = Path(scratch, "local")
        wall, _ = run(matrix, local, env)
        calls = len(fake.requests)
        print(f"local run: {wall:.1f} s, {calls} model calls, {stored_executions(local)} "
              f"executions; load {os.getloadavg()[0]:.1f}")
        cluster = Cluster(initialize_head=True, connect=False,
                          head_node_args={"num_cpus": 1, "include_dashboard": False})
        second = cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        try:
            ray_args = [*matrix, "--ray", str(cluster.address)]
            lost = Path(scratch, "node-lost")
            started = time.perf_counter()
            process = start(ray_args, lost, env)
            wait_for(lost, 20, process)
            cluster.remove_node(second, allow_graceful=False)
            cluster.add_node(num_cpus=1)
            _, stderr = process.communicate()
            if process.returncode != 0:
                raise SystemExit(f"the run with a lost node failed: {stderr[-2000:]}")
            print(f"ray, second node killed after 20 executions: "
                  f"{time.perf_counter() - started:.1f} s, {len(fake.requests) - calls} model "
                  f"calls; notes: {[line for line in stderr.splitlines() if 'Ray node' in line]}")
            calls = len(fake.requests)
            resumed = Path(scratch, "resumed")
            process = start(ray_args, resumed, env)
            wait_for(resumed, 40, process)
            process.send_signal(signal.SIGKILL)
            process.communicate()
            kept = stored_executions(resumed)
            wall, _ = run(ray_args, resumed, env)
            print(f"ray, driver killed after {kept} executions, then resumed: {wall:.1f} s to "
                  f"finish, {len(fake.requests) - calls} model calls in both (the calls in "
                  "flight when it was killed, at most max_concurrency = 4, are asked again)")
        finally:
            cluster.shutdown()
        reference = scores(local)
        print(f"{'service':10} {'variant':8} {'local MS':>9} {'node lost':>10} {'resumed':>9}")
        for key, (ms, _) in sorted(reference.items()):
            row = [scores(folder).get(key, (float('nan'), 0))[0] for folder in (lost, resumed)]
            print(f"{key[0]:10} {key[1]:8} {ms:9.3f} {row[0]:10.3f} {row[1]:9.3f}")
        for folder in (lost, resumed):
            same = scores(folder) == reference and outcomes(folder) == outcomes(local)
            rows, keys, generations, generation_keys = duplicates(folder)
            print(f"{folder.name}: scores and outcomes equal the local run's: {same}; "
                  f"executions {rows} rows / {keys} keys, generations {generations} rows / "
                  f"{generation_keys} keys")
            failed |= not same or rows != keys or generations != generation_keys
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
