"""The LLM judge: strict parsing, retries on malformed answers, ungraded rather than guessed."""

from __future__ import annotations

import asyncio
import json

import pytest

from restbench.grading.judge import JUDGE_SYSTEM, MalformedAnswer, judge, parse_answer
from restbench.llm import ChatClient, ModelConfig
from restbench.llm.fake import FakeLLMServer, Reply


def answer(*entries: object) -> str:
    return json.dumps({"criteria": list(entries)})


def entry(index: object, met: object = True, reason: object = "because") -> dict[str, object]:
    return {"index": index, "met": met, "reason": reason}


def test_a_valid_answer_in_any_order_and_optionally_fenced() -> None:
    text = answer(entry(2, False, "no timeout"), entry(1, True, "uses BASE_URL"))
    verdicts = parse_answer(f"```json\n{text}\n```", 2)
    assert [(v.index, v.met, v.reason) for v in verdicts] == [
        (1, True, "uses BASE_URL"), (2, False, "no timeout")]


@pytest.mark.parametrize(("text", "problem"), [
    ("The test looks fine.", "not a JSON object"),
    ("Sure! " + answer(entry(1), entry(2)), "not a JSON object"),
    (json.dumps([entry(1), entry(2)]), 'exactly one key, "criteria"'),
    (json.dumps({"criteria": [entry(1), entry(2)], "score": 1}), 'exactly one key'),
    (json.dumps({"criteria": {"1": True}}), '"criteria" must be a list'),
    (answer(entry(1)), "no verdict for criterion 2"),
    (answer(), "no verdict for criteria 1, 2"),
    (answer(entry(1), entry(1), entry(2)), "criterion 1 is answered twice"),
    (answer(entry(1), entry(3)), "index must be a whole number from 1 to 2"),
    (answer(entry(1), entry("2")), "index must be a whole number"),
    (answer(entry(1), entry(True)), "index must be a whole number"),
    (answer(entry(1), entry(2, "yes")), "met must be true or false"),
    (answer(entry(1), entry(2, 1)), "met must be true or false"),
    (answer(entry(1), entry(2, True, "")), "reason must be a non-empty string"),
    (answer(entry(1), {"index": 2, "met": True}), 'exactly "index", "met" and "reason"'),
    (answer(entry(1), {**entry(2), "confidence": 0.9}), 'exactly "index", "met"'),
])
def test_malformed_answers(text: str, problem: str) -> None:
    with pytest.raises(MalformedAnswer) as caught:
        parse_answer(text, 2)
    assert problem in str(caught.value)


def _run(script: list[Reply | str], criteria: int = 2) -> tuple[object, list[dict[str, object]]]:
    with FakeLLMServer(script) as fake:
        config = ModelConfig("grader", "grader", fake.base_url, max_retries=0, retry_base_s=0.0)

        async def go() -> object:
            async with ChatClient(config) as client:
                return await judge(client, "Tags are listed.", "http://localhost:8000",
                                   "def test_x():\n    assert 1 == 2\n",
                                   [f"criterion {i}" for i in range(1, criteria + 1)])

        return asyncio.run(go()), fake.requests


def test_a_malformed_answer_is_retried_with_the_problem_shown() -> None:
    outcome, requests = _run(["looks good", answer(entry(1, reason="") , entry(2)),
                              Reply(answer(entry(1), entry(2, False)), usage=(10, 5))])
    assert outcome.graded and [v.met for v in outcome.verdicts] == [True, False]
    assert outcome.attempts == 3 and outcome.error is None
    assert outcome.input_tokens == 100 + 100 + 10 and outcome.output_tokens == 50 + 50 + 5
    assert requests[0]["messages"][0]["content"] == JUDGE_SYSTEM
    assert "1. criterion 1\n2. criterion 2" in requests[0]["messages"][1]["content"]
    retry = requests[1]["messages"]
    assert retry[2] == {"role": "assistant", "content": "looks good"}
    assert "not a JSON object" in retry[3]["content"]
    assert "reason must be a non-empty string" in requests[2]["messages"][-1]["content"]


def test_three_malformed_answers_leave_the_case_ungraded() -> None:
    outcome, requests = _run(["no", "still no", answer(entry(1))])
    assert not outcome.graded and outcome.verdicts is None
    assert outcome.attempts == 3 and len(requests) == 3
    assert outcome.error == ("malformed judge answer after 3 attempts: no verdict for "
                             "criterion 2")
    assert outcome.answers == ["no", "still no", answer(entry(1))]


def test_an_unreachable_grader_leaves_the_case_ungraded() -> None:
    outcome, _ = _run([Reply(status=401, content="bad key")])
    assert not outcome.graded
    assert outcome.error.startswith("grader call failed: model 'grader'")
    assert "HTTP 401" in outcome.error
