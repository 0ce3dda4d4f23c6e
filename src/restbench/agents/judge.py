"""The `llm-judge` response score: a judge model rates the answer against the reference answer."""

from __future__ import annotations

import json
from dataclasses import dataclass

from restbench.llm import ChatClient

JUDGE_SYSTEM = (
    "You grade the answer of an assistant that used a REST API on a user's behalf. Compare the "
    "assistant's answer with the reference answer: does it state the same facts and the same "
    "outcome? Wording, order and extra politeness do not matter; missing, wrong or invented "
    "facts do. Reply with one JSON object and nothing else: "
    '{"score": <a number from 0 to 1>, "reason": "<one sentence>"}')


@dataclass(frozen=True)
class Judgement:
    score: float | None  # None: the judge answered without a readable score (see `reason`)
    reason: str
    cost_usd: float
    input_tokens: int
    output_tokens: int


def judge_messages(intent: str, expected: str, actual: str) -> list[dict[str, str]]:
    user = (f"User request:\n{intent}\n\nReference answer:\n{expected}\n\n"
            f"Assistant's answer:\n{actual or '(no answer)'}")
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]


def _read(text: str) -> tuple[float | None, str]:
    """The score and reason of the JSON object JUDGE_SYSTEM asks for (text around it, such as a
    code fence, is skipped). No such object, or a score that is not a number from 0 to 1, is no
    score: guessing one from other numbers in the text (a port, a line number) or rescaling an
    out-of-range one would make one up."""
    start = text.find("{")
    if start < 0:
        return None, ""
    try:
        data, _ = json.JSONDecoder().raw_decode(text, start)
    except ValueError:
        return None, ""
    score = data.get("score") if isinstance(data, dict) else None
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
        return None, ""
    return float(score), str(data.get("reason", ""))


async def judge(client: ChatClient, intent: str, expected: str, actual: str) -> Judgement:
    """Raises LLMError when the judge cannot be reached. An answer without a readable score is
    a Judgement without one (its cost still counts), whose reason says what came back."""
    # An answer without a score is not kept: asking again (a rerun) gets a new one.
    result = await client.complete(judge_messages(intent, expected, actual), max_tokens=300,
                                   usable=lambda answer: _read(answer.content)[0] is not None)
    score, reason = _read(result.content)
    if score is None:
        reason = (f"judge model '{client.config.name}' gave no score (a JSON object with a "
                  f"\"score\" from 0 to 1): {result.content.strip()[:120]!r}")
    return Judgement(score, reason, result.cost_usd, result.usage.input_tokens,
                     result.usage.output_tokens)
