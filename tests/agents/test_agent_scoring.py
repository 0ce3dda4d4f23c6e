"""The per-case scores on hand-computed examples."""

from __future__ import annotations

import pytest

from restbench.agents.embeddings import similarity
from restbench.agents.judge import _read
from restbench.agents.scoring import (
    ArgsMatch,
    Call,
    MismatchType,
    exact_score,
    fuzzy_score,
    keyword_score,
    tool_call_score,
)

LOGIN = Call("todo_login", {"email": "alice@example.com", "password": "Alice123!"})
LIST = Call("todo_list", {})
GET_2 = Call("todo_get", {"id": 2})


def seen(*calls: Call, status: int | None = 200) -> list[Call]:
    """The calls as the service saw them: answered with `status`."""
    return [Call(call.name, call.args, status) for call in calls]


def test_keywords_ignore_case_and_punctuation_and_match_substrings() -> None:
    answer = "**Top account:** Andromeda Inc — revenue $9.700.000 (acc_49)."
    result = keyword_score(["andromeda inc.", "9,700,000", "ACC-49", "Orion"], answer)
    assert result.score == 0.75 and result.missing == ("Orion",)
    assert keyword_score([], "anything").score == 1.0
    assert keyword_score(["milk"], "").score == 0.0


def test_a_perfect_set_of_calls_in_another_order() -> None:
    result = tool_call_score([LOGIN, GET_2], seen(GET_2, LOGIN))
    assert (result.score, result.matched, result.mismatches) == (1.0, 2, ())
    assert tool_call_score([], []).score == 1.0


def test_missing_and_unexpected_calls() -> None:
    # expected login + get(2); the agent logged in and listed instead: 1 / (2 + 1)
    result = tool_call_score([LOGIN, GET_2], seen(LOGIN, LIST))
    assert result.score == pytest.approx(1 / 3)
    assert [(m.type, m.expected, m.actual) for m in result.mismatches] == [
        (MismatchType.MISSING, GET_2, None), (MismatchType.UNEXPECTED, None, *seen(LIST))]


def test_argument_and_name_mismatches_are_paired_not_counted_as_extra() -> None:
    # get(3) is get(2) with other arguments; delete(2) is get(2) under another name
    result = tool_call_score([LOGIN, GET_2, Call("todo_list", {})],
                             seen(LOGIN, Call("todo_get", {"id": 3}), Call("todo_delete", {})))
    assert result.score == pytest.approx(1 / 3)  # 1 matched / (3 expected + 0 extra)
    assert [m.type for m in result.mismatches] == [MismatchType.ARGUMENTS, MismatchType.NAME]
    assert result.unexpected == 0
    # a repeated call is an extra one: 2 matched / (2 expected + 1 extra)
    assert tool_call_score([LOGIN, LIST], seen(LOGIN, LIST, LIST)).score == pytest.approx(2 / 3)
    # nothing expected, one call made: 0 / (0 + 1)
    assert tool_call_score([], seen(LIST)).score == 0.0


def test_subset_matching_of_arguments() -> None:
    expected = [Call("create", {"article": {"title": "T"}, "n": 1})]
    actual = seen(Call("create", {"article": {"title": "T", "body": "B"}, "n": 1.0, "x": True}))
    assert tool_call_score(expected, actual, ArgsMatch.EXACT).score == 0.0
    assert tool_call_score(expected, actual, ArgsMatch.SUBSET).score == 1.0
    # values must still be equal, booleans are not numbers, lists are compared whole
    assert tool_call_score([Call("c", {"x": 1})], seen(Call("c", {"x": True})),
                           ArgsMatch.SUBSET).score == 0.0
    assert tool_call_score([Call("c", {"tags": ["a"]})], seen(Call("c", {"tags": ["a", "b"]})),
                           ArgsMatch.SUBSET).score == 0.0


def test_a_call_matches_only_with_the_answer_it_should_get() -> None:
    # the right transfer, refused (400): a failed call, neither matched nor extra: 1 / (2 + 0)
    transfer = Call("ledger_create_transfer", {"Idempotency-Key": "k1", "amount": 5})
    result = tool_call_score([LOGIN, transfer], [*seen(LOGIN), *seen(transfer, status=400)])
    assert (result.score, result.matched, result.unexpected) == (0.5, 1, 0)
    assert [(m.type, m.actual) for m in result.mismatches] == [
        (MismatchType.FAILED, Call(transfer.name, transfer.args, 400))]
    assert result.mismatches[0].as_dict()["actual"]["status"] == 400
    # a retry that succeeded matches; the refused first try is an extra call: 2 / (2 + 1)
    retried = tool_call_score([LOGIN, transfer],
                              [*seen(LOGIN), *seen(transfer, status=400), *seen(transfer)])
    assert retried.score == pytest.approx(2 / 3)
    assert [m.type for m in retried.mismatches] == [MismatchType.UNEXPECTED]
    # redirects are successes; a call the service never answered is not
    assert tool_call_score([LIST], seen(LIST, status=303)).score == 1.0
    assert tool_call_score([LIST], seen(LIST, status=None)).score == 0.0
    # a case that expects a refusal names its status: then only that answer matches
    overdraw = Call("ledger_create_transfer", {"amount": 10**9}, 422)
    assert tool_call_score([overdraw], seen(overdraw, status=422)).score == 1.0
    assert tool_call_score([overdraw], seen(overdraw, status=201)).score == 0.0
    assert overdraw.as_dict()["status"] == 422 and "status" not in LIST.as_dict()


def test_exact_and_fuzzy_response_scores() -> None:
    assert exact_score("Buy milk.", "  buy   MILK. ") == 1.0
    assert exact_score("Buy milk.", "Buy milk") == 0.0
    # token sets: a subset of the other's tokens scores 100 whatever the order and punctuation
    assert fuzzy_score("Buy milk", "Sure! You still have to: MILK, buy.") == 1.0
    # shared "owns todos" (10 chars) against "owns todos alice two" (20): 2*10/30
    assert fuzzy_score("alice owns two todos", "bob owns three todos") == pytest.approx(2 / 3,
                                                                                        abs=1e-4)
    assert fuzzy_score("abc", "") == 0.0


def test_semantic_scores_with_the_packaged_model() -> None:
    same = similarity("Alice has two todos.", "Alice has two todos.")
    close = similarity("Alice has two todos: Buy milk and Pay the electricity bill.",
                       "Alice owns 2 todos, buy milk and pay the electricity bill")
    far = similarity("Alice has two todos: Buy milk and Pay the electricity bill.",
                     "The weather in Paris is sunny today.")
    assert same == pytest.approx(1.0, abs=1e-3)
    assert 0.85 < close < 1.0 and far < 0.2
    assert similarity("Alice has two todos.", "") == 0.0


def test_judge_answers_are_read_as_a_score() -> None:
    assert _read('Sure. {"score": 0.8, "reason": "one fact missing"}') == (0.8,
                                                                          "one fact missing")
    assert _read('```json\n{"score": 1, "reason": "same"}\n```') == (1.0, "same")
    assert _read("no idea")[0] is None


@pytest.mark.parametrize("answer", [
    # Before: the first number in the text, rescaled: "8000" of the port read as 80 -> 1.0.
    '```python\nBASE_URL = "http://localhost:8000"\n```',
    "Score: 7/10",
    # Before: clamped to 1.0 (while "8" in plain text was read as 0.8).
    '{"score": 8, "reason": "good"}',
    '{"score": -0.5}', '{"score": "0.8"}', '{"score": true}', '{"reason": "no score"}',
])
def test_a_judge_answer_without_a_score_from_0_to_1_is_no_score(answer: str) -> None:
    assert _read(answer)[0] is None


def test_costs_in_the_results_keep_what_a_cheap_model_costs() -> None:
    """Before: agent-eval's JSON rounded costs to 6 decimals, so $0.00000012 was written as 0,
    where run's and grade's files keep 10."""
    from restbench.agents.results import CaseResult, summary
    result = CaseResult(index=0, suite="s", test_name="t", path="p", service="todo", intent="i",
                        keyword_score=1.0, tool_call_score=1.0, response_score=1.0,
                        response_scoring_type="fuzzy", missing_keywords=(),
                        expected_keywords=(), expected_tool_calls=(), actual_tool_calls=(),
                        claimed_tool_calls=(), tool_call_mismatches=(), response_expected="",
                        response_actual="", cost_usd=1.23456789e-7, judge_cost_usd=2.5e-8)
    written = result.as_json()
    assert (written["agent"]["cost_usd"], written["judge"]["cost_usd"]) == (1.235e-7, 2.5e-8)
    totals = summary([result, result], 2, {})
    assert (totals["cost_usd"], totals["judge_cost_usd"]) == (2.469e-7, 5e-8)


def test_averages_over_no_finished_case_are_none_not_zero() -> None:
    """An agent-eval interrupted before its first case ended wrote averages of 0.0."""
    from rich.console import Console

    from restbench.agents.results import results_table, summary
    totals = summary([], 3, {"response_scoring_type": "fuzzy"})
    assert [totals[key] for key in ("avg_keyword_score", "avg_grounded_keyword_score",
                                    "avg_tool_call_score", "avg_response_score")] == [None] * 4
    console = Console(width=200, record=True)
    console.print(results_table(totals, []))
    assert "average of 0" in console.export_text()
