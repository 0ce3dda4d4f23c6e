"""The `llm-judge` response score: a judge model rates the answer against the reference answer."""

from __future__ import annotations

import json
from dataclasses import dataclass

from restbench.agents.scoring import clamp, parse_judge_score
from restbench.llm import ChatClient, LLMError

JUDGE_SYSTEM = (
    "You grade the answer of an assistant that used a REST API on a user's behalf. Compare the "
    "assistant's answer with the reference answer: does it state the same facts and the same "
    "outcome? Wording, order and extra politeness do not matter; missing, wrong or invented "
    "facts do. Reply with one JSON object and nothing else: "
    '{"score": <a number from 0 to 1>, "reason": "<one sentence>"}')


@dataclass(frozen=True)
class Judgement:
    score: float
    reason: str
    cost_usd: float
    input_tokens: int
    output_tokens: int


def judge_messages(intent: str, expected: str, actual: str) -> list[dict[str, str]]:
    user = (f"User request:\n{intent}\n\nReference answer:\n{expected}\n\n"
            f"Assistant's answer:\n{actual or '(no answer)'}")
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]


def _read(text: str) -> tuple[float | None, str]:
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        try:
            data = json.loads(text[start:end + 1])
            return clamp(float(data["score"])), str(data.get("reason", ""))
        except (ValueError, KeyError, TypeError):
            pass
    return parse_judge_score(text), text.strip()[:300]


async def judge(client: ChatClient, intent: str, expected: str, actual: str) -> Judgement:
    """Raises LLMError when the judge cannot be reached or gives no score."""
    result = await client.complete(judge_messages(intent, expected, actual), max_tokens=300)
    score, reason = _read(result.content)
    if score is None:
        raise LLMError(f"judge model '{client.config.name}' gave no score: "
                       f"{result.content.strip()[:120]!r}")
    return Judgement(score, reason, result.cost_usd, result.usage.input_tokens,
                     result.usage.output_tokens)
