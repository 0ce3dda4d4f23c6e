"""How big a `restbench report` of a large run is and how fast it loads in headless Chromium.

Builds a synthetic result folder the size of a paper-scale run (every built-in service, both
wordings, 10 models x 3 repetitions of single-step: 8,100 tests, each executed on the original and,
when valid, on its requirement's mutants and the service's benign variants, with pytest output and
HTTP exchanges of realistic length), scores it with restbench's own scoring and writers, runs
`restbench report` on it and opens the page in /usr/bin/chromium. Prints the numbers.

    python benchmarks/report_load.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from restbench.benchmark import resolve_services
from restbench.engine.run import RunResult, ScoreRow
from restbench.execution import Outcome
from restbench.mutation import implementations_of
from restbench.reports import write_results
from restbench.scoring import TestRecord, aggregate, score
from restbench.store import ExecutionRow, GenerationRow, ResultStore
from restbench.store.sqlite import digest

MODELS = ["llama-3.1-8b", "llama-3.3-70b", "llama-4-scout", "gpt-oss-120b", "deepseek-v3.2",
          "kimi-k2-thinking", "gpt-5-nano", "gpt-5-mini", "mistral-medium", "claude-sonnet-4.5"]
REPETITIONS = 3
VARIANTS = ["precise", "vague"]
GENERATOR = "single-step"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def pytest_output(failed: bool, name: str, rng: random.Random) -> str:
    if not failed:
        return f".{' ' * 70}[100%]\n1 passed in 0.{rng.randrange(10, 99)}s\n"
    return ("F" + " " * 70 + "[100%]\n" + "=" * 30 + " FAILURES " + "=" * 30 + "\n"
            + f"_____ {name} _____\n\n    def {name}():\n"
            + "        response = requests.post(f'{BASE}/items', json=payload, headers=auth)\n"
            + f">       assert response.status_code == 201\nE       assert {rng.choice([200, 400, 404, 422, 500])} == 201\n"
            + "E        +  where ... = <Response>.status_code\n\n"
            + f"test_generated.py:{rng.randrange(5, 60)}: AssertionError\n"
            + f"FAILED test_generated.py::{name} - AssertionError\n1 failed in 0.{rng.randrange(10, 99)}s\n")


def exchanges(operations: list[str], rng: random.Random) -> list[dict[str, object]]:
    found = []
    for _ in range(rng.randrange(3, 9)):
        method, path = rng.choice(operations).split(" ", 1)
        found.append({"method": method, "url": path.replace("{", "").replace("}", ""),
                      "status": rng.choice([200, 201, 204, 400, 404, 422]),
                      "request_body": json.dumps({"title": f"item {rng.randrange(1000)}",
                                                  "description": "x" * rng.randrange(10, 120)}),
                      "response_body": json.dumps({"id": rng.randrange(10**6),
                                                   "title": "item", "owner_id": 1,
                                                   "description": "y" * rng.randrange(10, 200)})})
    return found


def build(folder: Path) -> None:
    rng = random.Random(7)
    services = resolve_services(None)
    store = ResultStore(folder / "results.sqlite3")
    config = {"services": [], "variants": VARIANTS, "models": MODELS,
              "generators": [{"name": GENERATOR, "args": {}}], "repetitions": REPETITIONS,
              "timeout_s": 30.0, "database": "sqlite"}
    run_id = store.start_run(config, "bench")
    store._db.execute("BEGIN")  # one transaction: this is a benchmark fixture, not a run
    records: dict[tuple[str, str, int, str], list[TestRecord]] = {}
    cost: dict[tuple[str, str, str], list[float]] = {}
    for service in services:
        impls = implementations_of(service)
        benign = [b.id for b in service.data.benign]
        for requirement in service.requirements:
            golden = service.golden_path(requirement).read_text(encoding="utf-8")
            mutants = [m.id for m in requirement.mutants]
            skill = {m: rng.random() for m in MODELS}
            for model in MODELS:
                for variant in VARIANTS:
                    for repetition in range(REPETITIONS):
                        code = f"# {model} {variant} {repetition}\n" + golden
                        usd = rng.uniform(0.0001, 0.01)
                        key = digest("generation", GENERATOR, {}, model, service.name,
                                     requirement.id, variant, repetition, "original")
                        row = GenerationRow(key, GENERATOR, {"name": GENERATOR, "args": {}},
                                            model, service.name, requirement.id, variant,
                                            repetition, "original", "ok", "", code, usd, 2500,
                                            700, rng.uniform(2, 20), {"calls": 1})
                        store.save_generation(row)
                        valid = rng.random() < 0.5 + skill[model] / 2
                        outcomes = {"original": Outcome.PASS if valid else Outcome.FAIL}
                        if valid:
                            for m in mutants:
                                outcomes[m] = Outcome.FAIL if rng.random() < skill[model] \
                                    else Outcome.PASS
                            for b in benign:
                                outcomes[b] = Outcome.PASS if rng.random() < 0.9 \
                                    else Outcome.FAIL
                        for impl_id, outcome in outcomes.items():
                            impl = impls[impl_id]
                            failed = outcome is not Outcome.PASS
                            store.save_execution(ExecutionRow(
                                digest("bench", row.code_sha, impl_id), row.code_sha,
                                service.name, impl_id, impl.fingerprint(), outcome.value,
                                "test_x: AssertionError: assert 404 == 201" if failed else "",
                                rng.uniform(0.1, 1.5), pytest_output(failed, "test_x", rng), [],
                                exchanges(requirement.operations, rng)))
                        records.setdefault((model, variant, repetition, service.name), []) \
                            .append(TestRecord(requirement.id, "original", True,
                                               outcomes["original"],
                                               {m: outcomes[m] for m in mutants
                                                if m in outcomes},
                                               {b: outcomes[b] for b in benign
                                                if b in outcomes}))
                        cost.setdefault((model, variant, service.name), []).append(usd)
    store._db.execute("COMMIT")
    store.finish_run(run_id)
    store.close()
    rows, per_requirement = [], []
    for model in MODELS:
        for variant in VARIANTS:
            for service in services:
                mutants_of = {r.id: [m.id for m in r.mutants] for r in service.requirements}
                scores = [score(records[(model, variant, rep, service.name)], mutants_of)
                          for rep in range(REPETITIONS)]
                for rep, one in enumerate(scores):
                    per_requirement += [{
                        "generator": GENERATOR, "model": model, "service": service.name,
                        "variant": variant, "repetition": rep, "requirement": r.requirement,
                        "mutants": r.mutants, "valid": r.valid, "killed": r.killed,
                        "killed_mutants": " ".join(r.killed_mutants), "mutated_killed": None}
                        for r in one.requirements]
                spent = cost[(model, variant, service.name)]
                rows.append(ScoreRow(GENERATOR, model, service.name, variant,
                                     len(mutants_of), aggregate(scores), sum(spent),
                                     2500 * len(spent), 700 * len(spent), 10.0 * len(spent), 0))
    write_results(RunResult(rows, per_requirement, folder / "results.sqlite3"), folder)


def measure(html: Path) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        timings: dict[str, float] = {}
        for attempt in range(3):
            context = browser.new_context(viewport={"width": 1400, "height": 1000},
                                          offline=True)
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
            started = time.perf_counter()
            page.goto(html.resolve().as_uri(), timeout=120_000)
            page.wait_for_selector("body[data-ready]", timeout=120_000)
            ready = time.perf_counter() - started
            navigation = page.evaluate(
                "() => { const n = performance.getEntriesByType('navigation')[0];"
                " const m = Object.fromEntries(performance.getEntriesByType('mark')"
                ".map(e => [e.name, e.startTime]));"
                " return {dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd, ...m}; }")
            print("  page marks (ms since navigation): " + ", ".join(
                f"{k} {v:.0f}" for k, v in navigation.items()), flush=True)
            started = time.perf_counter()
            page.click(".matrix-row a")
            page.wait_for_selector("#drilldown details.test", timeout=60_000)
            drill = time.perf_counter() - started
            if errors:
                raise SystemExit(f"page errors: {errors}")
            timings = {k: min(v, timings.get(k, v)) for k, v in {
                "ready_s": ready, "dom_content_loaded_s": navigation["dcl"] / 1000,
                "load_event_s": navigation["load"] / 1000, "drilldown_s": drill}.items()}
            print(f"attempt {attempt + 1}: ready {ready:.2f} s, drill-down {drill:.2f} s",
                  flush=True)
            context.close()
        browser.close()
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="build the results folder here and keep it")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="restbench-report-bench-") as scratch:
        root = options.keep or Path(scratch)
        results = root / "results"
        started = time.perf_counter()
        build(results)
        print(f"synthetic store: {time.perf_counter() - started:.1f} s, "
              f"{(results / 'results.sqlite3').stat().st_size / 1e6:.0f} MB", flush=True)
        html = root / "report.html"
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "restbench.cli", "report", str(results), "-o",
                        str(html)], check=True)
        print(f"restbench report: {time.perf_counter() - started:.1f} s, "
              f"{html.stat().st_size / 1e6:.1f} MB", flush=True)
        timings = measure(html)
        print("best of 3 in Chromium: " + ", ".join(f"{k} {v:.2f}" for k, v in timings.items()))


if __name__ == "__main__":
    main()
