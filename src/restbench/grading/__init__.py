"""Graded evaluation suites: datasets of cases, deterministic checks, an LLM judge, results."""

from restbench.grading.dataset import (
    Check,
    Dataset,
    DatasetError,
    TestCase,
    builtin_dataset_names,
    load_dataset,
    load_datasets,
    schema_text,
)
from restbench.grading.results import CaseResult, CriterionResult, RunResult, SummaryRow, summarize
from restbench.grading.runner import (
    DEFAULT_MODEL,
    GRADER_ENV,
    GradeConfig,
    GradeReport,
    grade,
    grader_model,
)
from restbench.grading.security import Finding, Kind, analyze

__all__ = ["DEFAULT_MODEL", "GRADER_ENV", "CaseResult", "Check", "CriterionResult", "Dataset",
           "DatasetError", "Finding", "GradeConfig", "GradeReport", "Kind", "RunResult",
           "SummaryRow", "TestCase", "analyze", "builtin_dataset_names", "grade", "grader_model",
           "load_dataset", "load_datasets", "schema_text", "summarize"]
