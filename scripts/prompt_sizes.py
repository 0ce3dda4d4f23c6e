"""Prompt sizes of the single-step writer and the refine judge, per built-in service.

    python scripts/prompt_sizes.py [--before REF]

Serves each service's original, reads its OpenAPI document and builds, for every requirement
(precise wording), the writer's first prompt and the judge's prompt (with an empty draft),
then prints the mean and largest size per service in characters and estimated tokens
(restbench.llm.fitting.estimate_tokens: characters / 3 + 4 per message, on the high side).
With --before REF, the prompts of generators/prompts.py at that git commit are measured too,
so a change to the prompts can be compared on the same documents.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from restbench.benchmark import resolve_services
from restbench.benchmark.openapi_doc import fetch_openapi
from restbench.generators import prompts as current
from restbench.llm.fitting import estimate_tokens, operations_only
from restbench.mutation import implementations_of
from restbench.serving import ServerPool

ROOT = Path(__file__).resolve().parents[1]
BASE_URL = "http://localhost:8000"


def prompts_at(ref: str) -> types.ModuleType:
    source = f"{ref}:src/restbench/generators/prompts.py"
    text = subprocess.run(["git", "-C", str(ROOT), "show", source], capture_output=True,
                          text=True, check=True).stdout
    module = types.ModuleType(f"prompts_{ref}")
    exec(compile(text, f"prompts@{ref}", "exec"), module.__dict__)  # noqa: S102 - our own file
    return module


async def documents() -> dict[str, dict[str, Any]]:
    found = {}
    with tempfile.TemporaryDirectory(prefix="restbench-sizes-") as scratch:
        async with ServerPool(Path(scratch) / "servers") as pool:
            for service in resolve_services([]):
                server = await pool.start(implementations_of(service)["original"])
                found[service.name] = await fetch_openapi(server.base_url, service.name)
                await pool.stop(server)
    return found


def measure(label: str, build: Callable[[Any, Any], list[dict[str, Any]]],
            docs: dict[str, dict[str, Any]]) -> None:
    for service in resolve_services([]):
        sizes = [build(requirement, docs[service.name]) for requirement in service.requirements]
        chars = [sum(len(m["content"]) for m in messages) for messages in sizes]
        tokens = [estimate_tokens(messages) for messages in sizes]
        print(f"{label:<34} {service.name:<10} {len(sizes):>3}  chars mean "
              f"{statistics.mean(chars):>7.0f} max {max(chars):>6}  tokens mean "
              f"{statistics.mean(tokens):>6.0f} max {max(tokens):>6}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="git commit whose prompts.py to measure as well")
    args = parser.parse_args()
    docs = asyncio.run(documents())
    variants: list[tuple[str, types.ModuleType, bool]] = []
    if args.before:
        variants.append((f"before ({args.before})", prompts_at(args.before), False))
    variants += [("now, full document", current, False), ("now, openapi=operations", current, True)]
    for name, module, reduced in variants:
        def doc(requirement: Any, openapi: dict[str, Any], reduced: bool = reduced) -> Any:
            return operations_only(openapi, requirement.operations) if reduced else openapi

        measure(f"writer: {name}", lambda r, o, m=module, d=doc: m.writer_messages(
            r.precise, d(r, o), BASE_URL), docs)
        measure(f"judge:  {name}", lambda r, o, m=module, d=doc: m.judge_messages(
            r.precise, d(r, o), "", "", "(the test made no HTTP request)"), docs)


if __name__ == "__main__":
    main()
