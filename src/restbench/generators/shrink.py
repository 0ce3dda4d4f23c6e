"""Choosing the largest prompt that fits the model's context (order: restbench.llm.fitting)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from restbench.errors import GeneratorError
from restbench.generators.base import GenerationFailure
from restbench.llm import ChatClient
from restbench.llm.fitting import estimate_tokens, operations_only, trimmed

Message = dict[str, Any]
OPENAPI_MODES = ("full", "operations")
TRACE_STEPS = (10, 3, 1)  # exchanges kept when a refine prompt must shrink further
OUTPUT_STEPS = (1000, 300)  # then the characters kept of the test's output (its end)
OPERATIONS_CUT = "openapi reduced to the requirement's operations"
TRIM_CUT = "long descriptions and examples trimmed"


def check_mode(mode: str, generator: str) -> str:
    if mode not in OPENAPI_MODES:
        raise GeneratorError(f"{generator}: openapi must be one of {', '.join(OPENAPI_MODES)}, "
                             f"not {mode!r}")
    return mode


@dataclass(frozen=True)
class PromptPlan:
    """One candidate: the document to send, how much trace to keep, what was cut for it."""

    openapi: dict[str, Any]
    trace_last: int | None = None
    cuts: tuple[str, ...] = ()
    output_chars: int | None = None

    def output(self, text: str) -> str:
        """A test's output as this plan sends it: its end, where pytest puts what failed."""
        text = text.strip()
        if self.output_chars is None or len(text) <= self.output_chars:
            return text
        return "… " + text[-self.output_chars:]


def plans(openapi: dict[str, Any], operations: Sequence[str], mode: str = "full",
          with_trace: bool = False) -> list[PromptPlan]:
    """Candidates, largest first. Mode "operations" starts at the reduced document."""
    steps: list[PromptPlan] = []
    if mode == "full":
        steps.append(PromptPlan(openapi))
    if operations:
        reduced = operations_only(openapi, operations)
        steps.append(PromptPlan(reduced, cuts=(OPERATIONS_CUT,) if mode == "full" else ()))
        base_cuts = steps[-1].cuts
    else:
        reduced, base_cuts = openapi, ()
    smallest = PromptPlan(trimmed(reduced), cuts=(*base_cuts, TRIM_CUT))
    steps.append(smallest)
    if with_trace:
        steps += [PromptPlan(smallest.openapi, last,
                             (*smallest.cuts, f"trace cut to the last {last} exchanges"))
                  for last in TRACE_STEPS]
        shortest = steps[-1]
        steps += [PromptPlan(shortest.openapi, shortest.trace_last,
                             (*shortest.cuts, f"test output cut to its last {chars} characters"),
                             chars) for chars in OUTPUT_STEPS]
    return steps


@dataclass(frozen=True)
class Fitted:
    messages: list[Message]
    plan: PromptPlan
    estimated_tokens: int

    def record(self, mode: str) -> dict[str, Any]:
        return {"openapi": mode, "cuts": list(self.plan.cuts),
                "estimated_tokens": self.estimated_tokens}


async def fit(client: ChatClient, build: Callable[[PromptPlan], list[Message]],
              candidates: list[PromptPlan], what: str = "prompt") -> Fitted:
    """The first candidate whose prompt fits; GenerationFailure (nothing paid) when none does."""
    budget = await client.prompt_budget()
    estimate = 0
    for plan in candidates:
        messages = build(plan)
        estimate = estimate_tokens(messages)
        if budget is None or estimate <= budget:
            return Fitted(messages, plan, estimate)
    cuts = "; ".join(candidates[-1].cuts) or "nothing left to cut"
    raise GenerationFailure(
        f"the {what} does not fit model '{client.config.name}': about {estimate} tokens "
        f"(estimated) after every cut ({cuts}), {budget} available",
        details={"prompt": {"cuts": list(candidates[-1].cuts), "estimated_tokens": estimate,
                            "budget": budget}})
