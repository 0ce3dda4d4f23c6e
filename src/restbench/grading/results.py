"""What grading produces: per-case results, one JSON file per dataset x model, summary rows."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from restbench.documents import standard_json
from restbench.llm.prices import rounded_usd
from restbench.paths import write_whole


@dataclass(frozen=True)
class CriterionResult:
    """One criterion of a case: judged (`source` "judge") or a deterministic check ("check").
    `met` is None when the judge could not grade it."""

    source: str
    index: int
    criterion: str
    met: bool | None
    reason: str
    check_type: str | None = None
    findings: tuple[dict[str, Any], ...] = ()


@dataclass
class Spend:
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def __add__(self, other: Spend) -> Spend:
        return Spend(self.input_tokens + other.input_tokens,
                     self.output_tokens + other.output_tokens,
                     rounded_usd(self.cost_usd + other.cost_usd))


PARTLY_GRADED = "partly graded"


@dataclass
class CaseResult:
    """status: "graded"; "partly graded" (the judge gave no usable answer, but the checks that
    need no model ran: scored over those, left out of the average); "ungraded" (no test to
    check, or nothing could be graded): no score, left out of the average."""

    test_id: str
    name: str
    status: str
    criteria: list[CriterionResult]
    generation: Spend = field(default_factory=Spend)
    judge: Spend = field(default_factory=Spend)
    judge_attempts: int = 0
    judge_answers: list[str] = field(default_factory=list)
    error: str | None = None
    artifact: str | None = None
    answer_file: str | None = None

    @property
    def graded(self) -> bool:
        return self.status == "graded"

    @property
    def met(self) -> int:
        return sum(1 for c in self.criteria if c.met)

    @property
    def total(self) -> int:
        return len(self.criteria)

    @property
    def partly_graded(self) -> bool:
        return self.status == PARTLY_GRADED

    @property
    def score(self) -> float | None:
        """met / criteria; for a partly graded case over the criteria that have a verdict."""
        if self.partly_graded:
            decided = [c for c in self.criteria if c.met is not None]
            return sum(1 for c in decided if c.met) / len(decided) if decided else None
        if not self.graded:
            return None
        return self.met / self.total if self.total else 0.0

    @property
    def spend(self) -> Spend:
        return self.generation + self.judge

    def to_json(self) -> dict[str, Any]:
        return {
            "test_id": self.test_id, "name": self.name, "status": self.status,
            "score": self.score,
            "criteria_met": self.met if self.graded or self.partly_graded else None,
            "criteria_total": self.total,
            "criteria": [asdict(c) | {"findings": list(c.findings)} for c in self.criteria],
            "generation": asdict(self.generation), "judge": asdict(self.judge)
            | {"attempts": self.judge_attempts, "answers": self.judge_answers},
            "input_tokens": self.spend.input_tokens, "output_tokens": self.spend.output_tokens,
            "cost_usd": self.spend.cost_usd, "error": self.error,
            "artifact": self.artifact, "answer_file": self.answer_file,
        }


@dataclass(frozen=True)
class SummaryRow:
    dataset: str
    model: str
    cases: int
    graded: int
    output_tokens: int
    cost_usd: float
    average_score: float | None  # over graded cases; None when none is graded
    partly_graded: int = 0  # cases whose checks ran but whose judge gave no usable answer

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class RunResult:
    """One dataset with one model under test."""

    dataset: str
    dataset_file: str
    model: str
    grader: str
    generator: str
    timestamp: str
    generated_dir: Path
    cases: list[CaseResult] = field(default_factory=list)
    results_file: Path | None = None
    planned: int | None = None  # the cases chosen; None: those in `cases`

    @property
    def complete(self) -> bool:
        return self.planned is None or len(self.cases) == self.planned

    def summary(self) -> SummaryRow:
        return summarize(self.dataset, self.model, self.cases)

    def to_json(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "dataset_file": self.dataset_file, "model": self.model,
                "grader": self.grader, "generator": self.generator, "timestamp": self.timestamp,
                "generated_files": str(self.generated_dir),
                "complete": self.complete,
                "planned_cases": len(self.cases) if self.planned is None else self.planned,
                "summary": self.summary().to_json(),
                "cases": [case.to_json() for case in self.cases]}


def summarize(dataset: str, model: str, cases: list[CaseResult]) -> SummaryRow:
    """Tokens and cost count the model under test and the grader; the average is over graded
    cases only."""
    graded = [c.score for c in cases if c.graded and c.score is not None]
    return SummaryRow(
        dataset=dataset, model=model, cases=len(cases), graded=len(graded),
        output_tokens=sum(c.spend.output_tokens for c in cases),
        cost_usd=rounded_usd(sum(c.spend.cost_usd for c in cases)),
        average_score=sum(graded) / len(graded) if graded else None,
        partly_graded=sum(1 for c in cases if c.partly_graded))


def safe_name(text: str) -> str:
    """A model or dataset name made fit for a file name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "unnamed"


def write_run(run: RunResult, output_dir: Path, with_model: bool) -> Path:
    middle = f"{safe_name(run.dataset)}_{safe_name(run.model)}" if with_model \
        else safe_name(run.dataset)
    path = output_dir / f"evaluation_results_{middle}_{run.timestamp}.json"
    output_dir.mkdir(parents=True, exist_ok=True)
    write_whole(path, standard_json(run.to_json(), indent=2) + "\n")  # rewritten as cases end
    run.results_file = path
    return path
