"""The static-security grader: what a generated test does that it must not, read from its AST."""

from restbench.grading.security.analyzer import DEFAULT_BASE_URL, analyze
from restbench.grading.security.findings import Finding, Kind

__all__ = ["DEFAULT_BASE_URL", "Finding", "Kind", "analyze"]
