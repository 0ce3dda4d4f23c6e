"""Prompts that fit a small context, against a fake server that refuses what does not fit."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from typing import Any

import pytest

from restbench.generators import GenerationFailure, GeneratorSpec
from restbench.generators.llm import write_test
from restbench.generators.prompts import format_trace, judge_messages, writer_messages
from restbench.generators.shrink import OPERATIONS_CUT, fit, plans
from restbench.llm import ChatClient, ModelConfig
from restbench.llm.fake import FakeLLMServer, Quirks
from restbench.llm.fitting import estimate_tokens, operations_only, trimmed

ANSWER = "```python\nimport requests\n\ndef test_a():\n    assert requests\n```"
LONG = "This operation does many things. " + "It is described at great length. " * 40


def document(paths: int = 30) -> dict[str, Any]:
    """An API with many operations, long descriptions and examples, like the real services."""
    schema = {"type": "object", "properties": {"name": {"type": "string", "example": "x" * 50},
                                               "description": {"type": "string"}}}
    return {
        "openapi": "3.1.0", "info": {"title": "Big", "version": "1", "description": LONG},
        "paths": {f"/things{i}/{{thing_id}}": {"get": {
            "description": LONG, "parameters": [{"name": "thing_id", "in": "path"}],
            "responses": {"200": {"content": {"application/json": {"schema": {
                "$ref": f"#/components/schemas/Thing{i}"}}}}}}} for i in range(paths)},
        "components": {"schemas": {
            **{f"Thing{i}": {"allOf": [{"$ref": "#/components/schemas/Base"}], **schema}
               for i in range(paths)},
            "Base": {"type": "object", "description": LONG}, "Unused": schema}},
    }


def test_the_document_is_reduced_to_the_operations_and_their_schemas() -> None:
    reduced = operations_only(document(), ["GET /things3/{id}"])
    assert list(reduced["paths"]) == ["/things3/{thing_id}"]  # matched by template
    assert sorted(reduced["components"]["schemas"]) == ["Base", "Thing3"]  # $refs followed
    small = trimmed(reduced)
    assert small["paths"]["/things3/{thing_id}"]["get"]["description"] == \
        "This operation does many things."
    # a property called description is kept; examples go
    assert "description" in small["components"]["schemas"]["Thing3"]["properties"]
    assert "example" not in json.dumps(small)


def test_the_trace_is_cut_to_its_last_exchanges() -> None:
    exchanges = [{"method": "GET", "url": f"/x/{i}", "status": 200} for i in range(12)]
    text = format_trace(exchanges, last=3)
    assert text.startswith("... 9 earlier exchanges left out") and "GET /x/11" in text
    assert "GET /x/8 " not in text


def write(fake: FakeLLMServer, context: int | None, mode: str = "full") -> Any:
    config = ModelConfig("tiny", "tiny", fake.base_url, max_retries=0, max_tokens=512,
                         context_tokens=context)

    async def go() -> Any:
        async with ChatClient(config) as client:
            return await write_test(client, "Read thing 3.", document(), "http://localhost:8000",
                                    operations=["GET /things3/{thing_id}"], openapi_mode=mode)
    return asyncio.run(go())


def full_prompt_tokens() -> int:
    return estimate_tokens(writer_messages("Read thing 3.", document(), "http://localhost:8000"))


def test_a_prompt_too_long_for_the_context_shrinks_and_says_what_was_cut() -> None:
    context = full_prompt_tokens() // 2 + 512
    with FakeLLMServer([ANSWER] * 2, Quirks(context_tokens=context)) as fake:
        test = write(fake, context)
        sent = fake.requests[0]["messages"][1]["content"]
    assert test.details["prompt"]["cuts"] == [OPERATIONS_CUT]
    assert test.details["prompt"]["estimated_tokens"] <= context - 512
    assert "/things3/" in sent and "/things4/" not in sent
    # the finding: the full prompt is what the server refused
    with FakeLLMServer([ANSWER], Quirks(context_tokens=context)) as fake, \
            pytest.raises(GenerationFailure, match="HTTP 400: Requested tokens"):
        write(fake, None)  # context unknown: nothing is cut


def test_a_prompt_that_cannot_fit_fails_before_any_call() -> None:
    with FakeLLMServer([ANSWER]) as fake:
        with pytest.raises(GenerationFailure, match=r"does not fit model 'tiny'.*after every cut"
                                                    r".*long descriptions and examples trimmed"):
            write(fake, 600)
        assert fake.requests == []


def test_a_long_test_output_is_cut_last_so_that_a_judge_prompt_fits() -> None:
    """Before: the output (up to 4000 characters) was never cut, so on a small context every
    judge prompt about a failing draft failed, and with it refine's mutant targets."""
    output = "E   assert 404 == 200\n" * 400 + "FAILED test_a.py::test_a - the last line"

    def build(plan: Any) -> list[dict[str, Any]]:
        return judge_messages("Read thing 1.", plan.openapi, "def test_a(): ...",
                              plan.output(output), format_trace([], plan.trace_last))

    candidates = plans(document(2), ["GET /things1/{thing_id}"], with_trace=True)
    smallest = estimate_tokens(build(candidates[-1]))
    assert smallest < estimate_tokens(build(candidates[-3])) - 1000  # the 4000 characters went
    config = ModelConfig("tiny", "tiny", "http://127.0.0.1:9/v1", max_tokens=100,
                         context_tokens=smallest + 100)

    async def fitted() -> Any:
        async with ChatClient(config) as client:
            return await fit(client, build, candidates, "judge prompt")

    chosen = asyncio.run(fitted())
    assert chosen.plan.cuts[-2:] == ("trace cut to the last 1 exchanges",
                                     "test output cut to its last 300 characters")
    assert "the last line" in chosen.messages[1]["content"]  # the end, where pytest says why


def test_operations_mode_always_sends_the_reduced_document() -> None:
    with FakeLLMServer([ANSWER]) as fake:
        test = write(fake, None, mode="operations")
        sent = fake.requests[0]["messages"][1]["content"]
    assert (test.details["prompt"]["openapi"], test.details["prompt"]["cuts"]) == (
        "operations", [])
    assert "/things3/" in sent and "/things4/" not in sent
    assert GeneratorSpec("single-step", {"openapi": "operations"}).label() == \
        "single-step[openapi=operations]"
    assert GeneratorSpec("single-step").label() == "single-step"


def test_the_stable_part_comes_first_in_compact_json() -> None:
    messages = writer_messages("Read thing 3.", document(2), "http://localhost:8000")
    user = messages[1]["content"]
    assert user.index("OpenAPI document") < user.index("Read thing 3.")
    assert '"paths":{' in user  # no indentation or spaces


def test_a_huge_answer_is_kept_whole_only_in_the_call_cache(tmp_path: Any) -> None:
    from restbench.generators.llm import ANSWER_KEPT_CHARS
    from restbench.store import ResultStore

    huge = ANSWER + "\n" + "x" * 200_000
    store = ResultStore(tmp_path / "store.sqlite3")
    with FakeLLMServer([huge]) as fake:
        async def go() -> Any:
            config = ModelConfig("tiny", "tiny", fake.base_url, max_retries=0)
            async with ChatClient(config, cache=store) as client:
                return await write_test(client, "Read thing 3.", document(2), "http://x",
                                        answer_chars=ANSWER_KEPT_CHARS)
        test = asyncio.run(go())
    assert len(test.details["answer"]) == ANSWER_KEPT_CHARS
    store.close()
    with sqlite3.connect(tmp_path / "store.sqlite3") as db:
        (stored,) = db.execute("SELECT response FROM llm_calls").fetchall()
    assert len(stored[0]) > 200_000
