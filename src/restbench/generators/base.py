"""The generator interface.

A generator is any object with a `name`, a `refines` flag and a `generate(task)` method (sync or
async) that returns a `GeneratedTest`. Generators that talk to the service while they work
(`refines = True`) get `task.live` and are also asked for one test per mutant (`task.target`).
restbench's own generators whose tests it writes itself (golden, the baselines) say
`trusted = True`: where the machine cannot sandbox, their tests may still run.

A task carries what a test writer may know and nothing else: the requirement's id, the one
wording asked for, its operations, the OpenAPI document, the base URL and the service's login and
seed facts. No other wording, no mutant and no golden test is reachable from it: the harness keeps
the benchmark data to itself (see `restbench.generators.tasks`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from restbench.benchmark.models import Login, Seed, Variant
from restbench.errors import GeneratorError

if TYPE_CHECKING:
    from restbench.execution.outcome import ExecutionResult
    from restbench.llm.client import CallCache

# The most a generated test may hold: the store keeps every test whole, and the largest the
# built-in generators write are ~66 KB (Schemathesis cases).
CODE_LIMIT_BYTES = 2**20


def oversized(code: str) -> str:
    """'50.0 MiB, over the 1 MiB a generated test may have' for code over the limit, else ""."""
    return oversized_file(len(code.encode("utf-8", "replace")))


def oversized_file(size: int) -> str:
    """`oversized`, for a test of `size` bytes."""
    if size <= CODE_LIMIT_BYTES:
        return ""
    return f"{size / 2**20:.1f} MiB, over the {CODE_LIMIT_BYTES // 2**20} MiB a generated test " \
        "may have"


@dataclass(frozen=True)
class Cost:
    usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.usd + other.usd, self.input_tokens + other.input_tokens,
                    self.output_tokens + other.output_tokens)


@dataclass(frozen=True)
class GeneratedTest:
    """A test and what it cost to make; `details` is kept in the store as JSON. `runner` names
    what runs it (`restbench.runners`: pytest, node, newman)."""

    code: str
    cost: Cost = Cost()
    details: dict[str, Any] = field(default_factory=dict)
    runner: str = "pytest"


class LiveService(Protocol):
    """A handle on the implementation a refining generator works against."""

    async def execute(self, code: str, runner: str = "pytest") -> ExecutionResult:
        """Resets the service, runs `code` against it, returns the result with the HTTP trace."""
        ...


@dataclass(frozen=True, slots=True)
class GenerationTask:
    """One test to write. Built by the harness (`restbench.generators.tasks.make_task`)."""

    service_name: str
    requirement_id: str
    variant: Variant
    requirement_text: str  # the wording asked for, and only that one
    operations: tuple[str, ...]  # "METHOD /path" of the OpenAPI document
    openapi: dict[str, Any]
    base_url: str
    auth: Login | None = None  # how to log in as a seeded user (for generators that read no prose)
    seed: Seed = field(default_factory=Seed)  # seed facts a client cannot guess from schemas
    model: str | None = None
    repetition: int = 0
    target: str = "original"  # the implementation the generator may talk to
    live: LiveService | None = None
    call_cache: CallCache | None = None  # where model answers are kept, so none is paid twice
    fresh_calls: bool = False  # ask the model again even when the cache has the answer


class GenerationFailure(GeneratorError):
    """A generation that failed after spending something: the run records the cost with it."""

    def __init__(self, message: str, cost: Cost = Cost(),
                 details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.cost = cost
        self.details = details or {}


@runtime_checkable
class Generator(Protocol):
    name: str
    refines: bool

    def generate(self, task: GenerationTask) -> Any:
        """Returns a GeneratedTest, or an awaitable of one."""
        ...


@dataclass(frozen=True)
class GeneratorSpec:
    """How a generator was chosen: enough to build it again and to store with every result."""

    name: str
    args: dict[str, str] = field(default_factory=dict)

    def label(self) -> str:
        """The name in tables; a reduced OpenAPI document is named, as it changes what is
        measured (runs with different prompts must not share a row)."""
        marks = [f"{key}={self.args[key]}" for key, default in
                 (("openapi", "full"), ("language", "python"))
                 if self.args.get(key, default) != default]
        return f"{self.name}[{','.join(marks)}]" if marks else self.name
