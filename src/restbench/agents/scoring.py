"""The per-case scores, each in [0, 1]: keywords, tool calls and the response. Pure functions.

- keyword score: share of the expected keywords found in the answer, ignoring case and
  punctuation, as substrings; 1.0 when none are expected (CUGA's definition).
- grounded keyword score: the same share, but a keyword counts only when the agent's own tool
  results (the response bodies of the calls it made) contain it and the intent and system prompt
  do not: a keyword the agent was given, or guessed, earns nothing; 1.0 when none are expected.
- tool-call score: expected calls matched one-to-one to the calls the service saw (same tool,
  equal arguments, and answered with the expected status, or with a success below 400 when the
  case names none; in any order), as matched / (expected + unexpected extra calls). Calls left
  over on both sides are paired into typed mismatches first: same tool and arguments but
  another answer = failed call, same tool = argument mismatch, same arguments = name mismatch;
  what stays unpaired is missing or unexpected.
- response score: `exact` (1.0 when equal after case and whitespace folding), `fuzzy`
  (rapidfuzz token-set ratio / 100), `semantic` (embedding cosine) or `llm-judge`.
"""

from __future__ import annotations

import enum
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz
from rapidfuzz import utils as fuzz_utils


class ResponseScoring(enum.StrEnum):
    EXACT = "exact"
    FUZZY = "fuzzy"
    SEMANTIC = "semantic"
    LLM_JUDGE = "llm-judge"


class ArgsMatch(enum.StrEnum):
    EXACT = "exact"  # the same arguments, no more, no less
    SUBSET = "subset"  # every expected argument is there with its value; extra ones are fine


def _plain(text: str) -> str:
    """Case- and punctuation-insensitive form: letters and digits kept, runs of spaces folded."""
    kept = "".join(ch if ch.isalnum() or ch.isspace() else ""
                   for ch in unicodedata.normalize("NFKC", text).casefold())
    return " ".join(kept.split())


@dataclass(frozen=True)
class KeywordScore:
    score: float
    missing: tuple[str, ...]


@dataclass(frozen=True)
class GroundedScore:
    score: float | None  # None: every keyword was given, or there are none
    missing: tuple[str, ...]  # the keywords not given that earned nothing


def keyword_score(keywords: Sequence[str], answer: str) -> KeywordScore:
    if not keywords:
        return KeywordScore(1.0, ())
    plain = _plain(answer)
    missing = tuple(k for k in keywords if _plain(k) not in plain)
    return KeywordScore((len(keywords) - len(missing)) / len(keywords), missing)


def grounded_keyword_score(keywords: Sequence[str], answer: str, given: str,
                           tool_results: str) -> GroundedScore:
    """The share of the keywords the agent was not given (in `given`: the intent and the
    system prompt) that its answer holds and its own tool results gave it. A keyword it was
    given says nothing about whether it looked anything up, so it is left out: a case whose
    keywords were all given has no score here (todo's API description lists every seeded fact)."""
    plain_given = _plain(given)
    to_find = [k for k in keywords if _plain(k) not in plain_given]
    if not to_find:
        return GroundedScore(None, ())
    plain_answer = _plain(answer)
    not_found = set(missing_from_results(to_find, tool_results))
    missing = tuple(k for k in to_find if _plain(k) not in plain_answer or k in not_found)
    return GroundedScore((len(to_find) - len(missing)) / len(to_find), missing)


def missing_from_results(keywords: Sequence[str], tool_results: str) -> tuple[str, ...]:
    """The keywords that tool results (JSON bodies) do not hold, compared as the keyword score
    does; punctuation in the JSON also counts as a space, so {"id":4,"title":...} holds "id 4"."""
    forms = (_plain(tool_results),
             _plain("".join(ch if ch.isalnum() else " " for ch in tool_results)))
    return tuple(k for k in keywords if not any(_plain(k) in form for form in forms))


# --- tool calls ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """An expected call (`status`: the answer it must get, None for any success) or a call
    the service saw (`status`: its answer, None when it gave none)."""

    name: str
    args: dict[str, Any]
    status: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "args": self.args,
                **({"status": self.status} if self.status is not None else {})}


def answered_as_expected(expected: Call, actual: Call) -> bool:
    if expected.status is None:
        return actual.status is not None and actual.status < 400
    return actual.status == expected.status


class MismatchType(enum.StrEnum):
    MISSING = "missing"
    UNEXPECTED = "unexpected"
    NAME = "name mismatch"
    ARGUMENTS = "argument mismatch"
    FAILED = "failed call"  # the right call, answered otherwise (a 4xx where a success was due)


@dataclass(frozen=True)
class Mismatch:
    type: MismatchType
    expected: Call | None
    actual: Call | None

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.type.value,
                "expected": self.expected.as_dict() if self.expected else None,
                "actual": self.actual.as_dict() if self.actual else None}


@dataclass(frozen=True)
class ToolCallScore:
    score: float
    matched: int
    expected: int
    unexpected: int
    mismatches: tuple[Mismatch, ...]


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return float(expected) == float(actual)
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(_same(v, actual[k])
                                                        for k, v in expected.items())
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(map(_same, expected, actual))
    return bool(expected == actual)


def _contained(expected: Any, actual: Any) -> bool:
    """Subset matching: objects may carry extra members, at any depth; anything else is equal."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        return all(k in actual and _contained(v, actual[k]) for k, v in expected.items())
    return _same(expected, actual)


def args_match(expected: dict[str, Any], actual: dict[str, Any], mode: ArgsMatch) -> bool:
    return _contained(expected, actual) if mode is ArgsMatch.SUBSET else _same(expected, actual)


def _max_matching(pairs: list[list[int]], right: int) -> dict[int, int]:
    """Maximum bipartite matching (augmenting paths): left index -> right index."""
    owner: dict[int, int] = {}

    def augment(left: int, seen: set[int]) -> bool:
        for candidate in pairs[left]:
            if candidate in seen:
                continue
            seen.add(candidate)
            if candidate not in owner or augment(owner[candidate], seen):
                owner[candidate] = left
                return True
        return False

    for left in range(len(pairs)):
        augment(left, set())
    return {left: r for r, left in owner.items()}


def _pair(expected: list[Call], actual: list[Call], fits: Callable[[Call, Call], bool]
          ) -> list[tuple[Call, Call]]:
    matching = _max_matching([[j for j, a in enumerate(actual) if fits(e, a)] for e in expected],
                             len(actual))
    return [(expected[i], actual[j]) for i, j in sorted(matching.items())]


def _without(calls: list[Call], used: list[Call]) -> list[Call]:
    left = list(calls)
    for call in used:
        left.remove(call)
    return left


def tool_call_score(expected: Sequence[Call], actual: Sequence[Call],
                    mode: ArgsMatch = ArgsMatch.EXACT) -> ToolCallScore:
    expected, actual = list(expected), list(actual)

    def same_call(e: Call, a: Call) -> bool:
        return e.name == a.name and args_match(e.args, a.args, mode)

    matched = _pair(expected, actual, lambda e, a: same_call(e, a) and answered_as_expected(e, a))
    rest_expected = _without(expected, [e for e, _ in matched])
    rest_actual = _without(actual, [a for _, a in matched])
    mismatches: list[Mismatch] = []
    for kind, fits in ((MismatchType.FAILED, same_call),
                       (MismatchType.ARGUMENTS, lambda e, a: e.name == a.name),
                       (MismatchType.NAME, lambda e, a: args_match(e.args, a.args, mode))):
        paired = _pair(rest_expected, rest_actual, fits)
        mismatches += [Mismatch(kind, e, a) for e, a in paired]
        rest_expected = _without(rest_expected, [e for e, _ in paired])
        rest_actual = _without(rest_actual, [a for _, a in paired])
    mismatches += [Mismatch(MismatchType.MISSING, e, None) for e in rest_expected]
    mismatches += [Mismatch(MismatchType.UNEXPECTED, None, a) for a in rest_actual]
    denominator = len(expected) + len(rest_actual)
    score = 1.0 if denominator == 0 else len(matched) / denominator
    return ToolCallScore(score, len(matched), len(expected), len(rest_actual), tuple(mismatches))


# --- responses -------------------------------------------------------------------------------


def exact_score(expected: str, actual: str) -> float:
    return float(" ".join(expected.casefold().split()) == " ".join(actual.casefold().split()))


def fuzzy_score(expected: str, actual: str) -> float:
    """rapidfuzz's token-set ratio after its default processing (lower case, no punctuation)."""
    return float(fuzz.token_set_ratio(expected, actual, processor=fuzz_utils.default_process)) / 100


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = (sum(x * x for x in a) ** 0.5) * (sum(y * y for y in b) ** 0.5)
    return 0.0 if norm == 0 else dot / norm
