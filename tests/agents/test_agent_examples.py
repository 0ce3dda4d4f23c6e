"""The shipped example suites are true on the seed state of each built-in service."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

import pytest

from restbench.agents import EvalConfig, ResponseScoring, evaluate_agent
from restbench.agents.evaluate import service_tools
from restbench.agents.scoring import missing_from_results
from restbench.agents.session import LiveSession
from restbench.agents.suite import builtin_suite, load_suites
from restbench.mutation import implementations_of
from restbench.serving import ServerPool

SERVICES = ("todo", "conduit", "fullstack", "ledger")


@pytest.mark.parametrize("service", SERVICES)
def test_the_golden_agent_scores_every_example_perfectly(service: str, tmp_path: Path) -> None:
    """Replaying the expected calls reproduces them from the HTTP side, each answers 2xx or the
    status its case expects (a refusal the intent asks about)."""
    scoring = ResponseScoring.SEMANTIC if service == "todo" else ResponseScoring.FUZZY
    report = asyncio.run(evaluate_agent(EvalConfig(builtin_suite(service), tmp_path,
                                                   agent="golden", scoring=scoring)))
    assert report.summary["total_tests"] >= 10
    for result in report.results:
        assert (result.keyword_score, result.tool_call_score, result.response_score) == \
            (1.0, 1.0, 1.0), result.test_name
        # every keyword it was not given, its calls' answers gave it
        assert result.grounded_keyword_score in (None, 1.0), result.test_name
        wanted = [call.get("status") for call in result.expected_tool_calls]
        assert all(call["status"] == status if status else 200 <= call["status"] < 300
                   for call, status in zip(result.actual_tool_calls, wanted, strict=True)), \
            result.test_name
    assert report.summary["perfect_tests"] == report.summary["total_tests"]
    # some keywords of every service's examples are facts only the service gives (for todo,
    # whose API description lists every seeded fact, the ids of new todos)
    assert report.summary["grounded_scored_tests"] >= 2
    assert report.summary["avg_grounded_keyword_score"] == 1.0


def test_example_keywords_are_facts_the_service_gives() -> None:
    """Every keyword occurs in what the expected calls sent or got back on the seed state."""

    async def check() -> list[str]:
        wrong = []
        with tempfile.TemporaryDirectory() as scratch:
            async with ServerPool(Path(scratch)) as pool:
                for name in SERVICES:
                    service, openapi, tools = await service_tools(name, pool)
                    server = await pool.start(implementations_of(service)["original"])
                    for case in load_suites(builtin_suite(name))[0].cases:
                        await server.reset()
                        seen = []
                        async with LiveSession(server.base_url, tools, openapi) as session:
                            for call in case.expected.tool_calls:
                                result = await session.call(call.name, call.args)
                                seen += [json.dumps(call.args), result.as_text(limit=10**6)]
                        missing = missing_from_results(case.expected.keywords, " ".join(seen))
                        wrong += [f"{name} {case.name}: {k}" for k in missing]
        return wrong

    assert asyncio.run(check()) == []
