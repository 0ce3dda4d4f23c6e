"""Agent-evaluation results: one record per case, `results.json` and `results.csv`, the table.

Both files are rewritten (atomically) after every case, so a run that is stopped keeps every case
it finished.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from restbench.documents import DocumentError, parse_json, standard_json
from restbench.errors import RestbenchError
from restbench.llm.prices import rounded_usd, usd
from restbench.paths import check_files_writable, file_in_the_way, write_whole

# How a case's error starts when only its judge failed: the agent's part stands, and a rerun
# asks the judge alone again (restbench.agents.evaluate).
JUDGE_ERROR = "judge: "
RESULT_FILES = {"json": "results.json", "csv": "results.csv"}
# In a case's details: how many of its model answers (agent and judge) came from the folder's
# store, paid in an earlier attempt of the case.
REUSED = "reused_model_calls"

CSV_FIELDS = ("index", "suite", "test_name", "service", "keyword_score",
              "grounded_keyword_score", "tool_call_score",
              "response_score", "response_scoring_type", "missing_keywords",
              "tool_call_mismatches", "steps", "cost_usd", "input_tokens", "output_tokens",
              "error")


@dataclass(frozen=True)
class CaseResult:
    index: int
    suite: str
    test_name: str
    path: str
    service: str
    intent: str
    keyword_score: float
    tool_call_score: float
    response_score: float | None  # None: the judge failed; left out of the average
    response_scoring_type: str
    missing_keywords: tuple[str, ...]
    expected_keywords: tuple[str, ...]
    expected_tool_calls: tuple[dict[str, Any], ...]
    actual_tool_calls: tuple[dict[str, Any], ...]  # what the service saw, as tool calls
    claimed_tool_calls: tuple[dict[str, Any], ...]  # what the agent said it called
    tool_call_mismatches: tuple[dict[str, Any], ...]
    response_expected: str
    response_actual: str
    steps: int = 0
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    duration_s: float = 0.0
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # judge's reason, agent's details
    # Of the keywords the agent was not given, the share its own tool results gave it; None
    # when it was given every keyword (restbench.agents.scoring.grounded_keyword_score).
    grounded_keyword_score: float | None = None
    judge_cost_usd: float = 0.0
    judge_input_tokens: int = 0
    judge_output_tokens: int = 0
    # What the case's result depends on (the case, the service, the settings): a rerun reuses
    # a finished case with the same key (restbench.agents.evaluate).
    key: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "test_name": self.test_name,
            "suite": self.suite,
            "path": self.path,
            "service": self.service,
            "score": {"keyword_score": round(self.keyword_score, 4),
                      "grounded_keyword_score": _rounded(self.grounded_keyword_score),
                      "tool_call_score": round(self.tool_call_score, 4),
                      "response_score": _rounded(self.response_score),
                      "response_scoring_type": self.response_scoring_type},
            "details": {"intent": self.intent,
                        "missing_keywords": list(self.missing_keywords),
                        "expected_keywords": list(self.expected_keywords),
                        "expected_tool_calls": list(self.expected_tool_calls),
                        "actual_tool_calls": list(self.actual_tool_calls),
                        "claimed_tool_calls": list(self.claimed_tool_calls),
                        "tool_call_mismatches": list(self.tool_call_mismatches),
                        "response_expected": self.response_expected,
                        "response_actual": self.response_actual,
                        "response_scoring_type": self.response_scoring_type,
                        **self.extra},
            "agent": {"steps": self.steps, "cost_usd": rounded_usd(self.cost_usd),
                      "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                      "duration_s": round(self.duration_s, 3), "error": self.error},
            "judge": {"cost_usd": rounded_usd(self.judge_cost_usd),
                      "input_tokens": self.judge_input_tokens,
                      "output_tokens": self.judge_output_tokens},
            "key": self.key,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CaseResult:
        """The result `as_json` wrote (a KeyError or TypeError if `data` is not one)."""
        score, details, agent, judge = data["score"], data["details"], data["agent"], data["judge"]
        own = {"intent", "missing_keywords", "expected_keywords", "expected_tool_calls",
               "actual_tool_calls", "claimed_tool_calls", "tool_call_mismatches",
               "response_expected", "response_actual", "response_scoring_type"}
        return cls(
            index=data["index"], suite=data["suite"], test_name=data["test_name"],
            path=data["path"], service=data["service"], intent=details["intent"],
            keyword_score=score["keyword_score"], tool_call_score=score["tool_call_score"],
            response_score=score["response_score"],
            response_scoring_type=score["response_scoring_type"],
            missing_keywords=tuple(details["missing_keywords"]),
            expected_keywords=tuple(details["expected_keywords"]),
            expected_tool_calls=tuple(details["expected_tool_calls"]),
            actual_tool_calls=tuple(details["actual_tool_calls"]),
            claimed_tool_calls=tuple(details["claimed_tool_calls"]),
            tool_call_mismatches=tuple(details["tool_call_mismatches"]),
            response_expected=details["response_expected"],
            response_actual=details["response_actual"], steps=agent["steps"],
            cost_usd=agent["cost_usd"], input_tokens=agent["input_tokens"],
            output_tokens=agent["output_tokens"], duration_s=agent["duration_s"],
            error=agent["error"], extra={k: v for k, v in details.items() if k not in own},
            grounded_keyword_score=score["grounded_keyword_score"],
            judge_cost_usd=judge["cost_usd"], judge_input_tokens=judge["input_tokens"],
            judge_output_tokens=judge["output_tokens"], key=data["key"])

    def csv_row(self) -> dict[str, Any]:
        mismatches = "; ".join(
            f"{m['type']}: {(m['expected'] or m['actual'])['name']}"
            for m in self.tool_call_mismatches)
        return {"index": self.index, "suite": self.suite, "test_name": self.test_name,
                "service": self.service, "keyword_score": round(self.keyword_score, 4),
                "grounded_keyword_score": _rounded(self.grounded_keyword_score),
                "tool_call_score": round(self.tool_call_score, 4),
                "response_score": _rounded(self.response_score),
                "response_scoring_type": self.response_scoring_type,
                "missing_keywords": "; ".join(self.missing_keywords),
                "tool_call_mismatches": mismatches, "steps": self.steps,
                "cost_usd": rounded_usd(self.cost_usd), "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "error": self.error or ""}


def _rounded(score: float | None) -> float | None:
    return None if score is None else round(score, 4)


def _mean(values: list[float]) -> float | None:
    """None over no case (an agent-eval interrupted before its first): not a score of 0."""
    return round(sum(values) / len(values), 4) if values else None


def _scored(results: list[CaseResult]) -> list[float]:
    """The response scores there are: a case whose judge failed has none."""
    return [r.response_score for r in results if r.response_score is not None]


def _grounded(results: list[CaseResult]) -> list[float]:
    """The grounded keyword scores there are: a case given all its keywords has none."""
    return [r.grounded_keyword_score for r in results if r.grounded_keyword_score is not None]


def summary(results: list[CaseResult], planned: int, settings: dict[str, Any],
            extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "total_tests": len(results),
        "planned_tests": planned,
        "complete": len(results) == planned,
        "avg_keyword_score": _mean([r.keyword_score for r in results]),
        # over the cases with a keyword the agent was not given; null when none has one
        "avg_grounded_keyword_score": _mean(_grounded(results)),
        "grounded_scored_tests": len(_grounded(results)),
        "avg_tool_call_score": _mean([r.tool_call_score for r in results]),
        # as grade's average: over the cases that have a score; null when none has
        "avg_response_score": _mean(_scored(results)),
        "response_scored_tests": len(_scored(results)),
        "response_scoring_type": settings.get("response_scoring_type"),
        "perfect_tests": sum(1 for r in results if r.response_score is not None and min(
            r.keyword_score, r.tool_call_score, r.response_score) == 1.0),
        "errors": sum(1 for r in results if r.error),
        "cost_usd": rounded_usd(sum(r.cost_usd for r in results)),
        "input_tokens": sum(r.input_tokens for r in results),
        "output_tokens": sum(r.output_tokens for r in results),
        "judge_cost_usd": rounded_usd(sum(r.judge_cost_usd for r in results)),
        "judge_input_tokens": sum(r.judge_input_tokens for r in results),
        "judge_output_tokens": sum(r.judge_output_tokens for r in results),
        "reused_model_calls": sum(int(r.extra.get(REUSED, 0)) for r in results),
        **(extra or {}),
        **{k: v for k, v in settings.items() if k != "response_scoring_type"},
    }


@dataclass
class Unrecorded:
    """What case attempts cost whose results are not in the results folder: cases interrupted,
    and earlier results run again (failed ones, or ones whose settings changed), less what of
    it the cases shown reused (their costs count every answer, reused or not)."""

    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, usd: float, input_tokens: int, output_tokens: int) -> None:
        self.cost_usd += usd
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens

    def take_back(self, usd: float, input_tokens: int, output_tokens: int) -> None:
        """Answers a shown case reused: paid in an attempt counted here, so not twice. (An
        attempt killed before it was counted leaves less here than it paid.)"""
        self.cost_usd = max(0.0, self.cost_usd - usd)
        self.input_tokens = max(0, self.input_tokens - input_tokens)
        self.output_tokens = max(0, self.output_tokens - output_tokens)

    def as_summary(self) -> dict[str, Any]:
        return {"unrecorded_cost_usd": rounded_usd(self.cost_usd),
                "unrecorded_input_tokens": self.input_tokens,
                "unrecorded_output_tokens": self.output_tokens}


@dataclass
class EarlierRun:
    """What a run into the same results folder left: its cases, and its unrecorded cost."""

    results: list[CaseResult] = field(default_factory=list)
    unrecorded: Unrecorded = field(default_factory=Unrecorded)
    unreadable: str | None = None  # why the results.json there could not be read

    def finished(self) -> dict[str, CaseResult]:
        """The cases it finished without an error, by key (older versions' have no keys)."""
        return {result.key: result for result in self.results if result.key and not result.error}

    def unjudged(self) -> dict[str, CaseResult]:
        """The cases whose agent finished but whose judge failed, by key."""
        return {result.key: result for result in self.results
                if result.key and result.error and result.error.startswith(JUDGE_ERROR)}


def earlier_run(directory: Path) -> EarlierRun:
    """A missing results.json left nothing; an unreadable one nothing but the reason."""
    path = directory / RESULT_FILES["json"]
    if not path.exists():
        return EarlierRun()
    try:
        data = parse_json(path.read_text(encoding="utf-8"), non_finite=True)
        results = [CaseResult.from_json(case) for case in data["results"]]
        totals = data.get("summary") or {}
        unrecorded = Unrecorded(float(totals.get("unrecorded_cost_usd", 0.0)),
                                int(totals.get("unrecorded_input_tokens", 0)),
                                int(totals.get("unrecorded_output_tokens", 0)))
    except OSError as exc:
        return EarlierRun(unreadable=exc.strerror or str(exc))
    except DocumentError as exc:
        return EarlierRun(unreadable=str(exc)[:200])
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return EarlierRun(unreadable=f"not an agent-eval results file: {type(exc).__name__}: "
                                     f"{exc}"[:200])
    return EarlierRun(results, unrecorded)


def check_writable(directory: Path) -> None:
    """A folder, or a file this user may not write, where the results go is found before any
    case runs, not after."""
    if (blocking := file_in_the_way(directory / RESULT_FILES["json"])) is not None:
        raise RestbenchError(f"{blocking}: is a file, where the results folder {directory} "
                             "should be")
    check_files_writable((directory / name for name in RESULT_FILES.values()),
                         "agent-eval's results", "--results-dir")


def write_results(directory: Path, summary_data: dict[str, Any],
                  results: list[CaseResult]) -> dict[str, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    ordered = sorted(results, key=lambda r: r.index)
    files = {key: directory / name for key, name in RESULT_FILES.items()}
    document = {"summary": summary_data, "results": [r.as_json() for r in ordered]}
    write_whole(files["json"], standard_json(document, indent=2, ensure_ascii=False) + "\n")
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(r.csv_row() for r in ordered)
    write_whole(files["csv"], buffer.getvalue())
    return files


def _cell(score: float | None) -> str:
    if score is None:
        return "[dim]-[/]"
    colour = "green" if score >= 0.999 else "yellow" if score >= 0.5 else "red"
    return f"[{colour}]{score:.2f}[/]"


def _two(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _average(summary_data: dict[str, Any], average_key: str, count_key: str) -> str:
    """An average that some cases may have no score for, with how many cases it is over when
    not all."""
    average = summary_data.get(average_key)
    if average is None:
        return "-"
    scored = summary_data.get(count_key, summary_data["total_tests"])
    return f"{average:.2f}" if scored == summary_data["total_tests"] else \
        f"{average:.2f} (of {scored})"


def _cost(summary_data: dict[str, Any]) -> str:
    agent, judge = summary_data["cost_usd"], summary_data.get("judge_cost_usd", 0.0)
    more = summary_data.get("unrecorded_cost_usd", 0.0)
    also = f"; ${usd(more)} more in attempts not in these results" if more else ""
    reused = summary_data.get("reused_model_calls", 0)
    if reused:
        also += f"; {reused} model answers reused from earlier attempts"
    if summary_data.get("response_scoring_type") != "llm-judge":
        return f"cost ${usd(agent)}{also}"
    return f"cost ${usd(agent + judge)} (agent ${usd(agent)}, judge ${usd(judge)}){also}"


def results_table(summary_data: dict[str, Any], results: list[CaseResult]) -> Table:
    scoring = summary_data.get("response_scoring_type", "")
    table = Table(title=f"Agent evaluation: {summary_data.get('agent', '')}"
                        + (f" ({summary_data['model']})" if summary_data.get("model") else ""),
                  title_justify="left")
    for column in ("#", "test", "keywords", "grounded", "tool calls", f"response ({scoring})",
                   "steps", "notes"):
        justify = "left" if column in ("test", "notes") else "right"
        table.add_column(column, justify=justify, overflow="fold")
    for r in sorted(results, key=lambda r: r.index):
        notes = []
        if r.missing_keywords:
            notes.append(escape("missing: " + ", ".join(r.missing_keywords)))
        kinds: dict[str, int] = {}
        for mismatch in r.tool_call_mismatches:
            kinds[mismatch["type"]] = kinds.get(mismatch["type"], 0) + 1
        notes += [f"{count} {kind}" for kind, count in kinds.items()]
        if r.error:
            notes.append(f"[red]error:[/] {escape(r.error[:120])}")
        table.add_row(str(r.index), escape(r.test_name), _cell(r.keyword_score),
                      _cell(r.grounded_keyword_score), _cell(r.tool_call_score), _cell(r.response_score), str(r.steps),
                      "; ".join(notes))
    table.add_section()
    table.add_row("", f"average of {summary_data['total_tests']}",
                  _two(summary_data['avg_keyword_score']),
                  _average(summary_data, "avg_grounded_keyword_score", "grounded_scored_tests"),
                  _two(summary_data['avg_tool_call_score']),
                  _average(summary_data, "avg_response_score", "response_scored_tests"), "",
                  _cost(summary_data))
    return table
