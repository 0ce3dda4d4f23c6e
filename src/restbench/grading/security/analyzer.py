"""The static-security grader: parses a generated test and reports what it must not do.

Only the `ast` of the code is read; nothing is imported or run. See `rules.py` for the names that
are dangerous by themselves, `values.py` for how URLs and paths are followed, `integrity.py` for
tests that cannot fail.
"""

from __future__ import annotations

import ast

from restbench import python_ast
from restbench.grading.security import rules
from restbench.grading.security.calls_check import CallChecks
from restbench.grading.security.findings import Finding, Kind
from restbench.grading.security.index import ModuleIndex, build_index
from restbench.grading.security.integrity import integrity_findings
from restbench.grading.security.names_check import NameChecks
from restbench.grading.security.paths import PathJudge
from restbench.grading.security.urls import Origin, UrlJudge
from restbench.grading.security.values import Resolver, TooComplex

DEFAULT_BASE_URL = "http://localhost:8000"
MAX_NESTING = 3  # code handed to exec/eval as a literal is analysed too, this deep

def analyze(code: str, base_url: str = DEFAULT_BASE_URL) -> list[Finding]:
    """Every finding in `code`, in line order; an empty list means nothing was flagged."""
    return _analyze(code, base_url, depth=0)


def _analyze(code: str, base_url: str, depth: int) -> list[Finding]:
    try:
        tree = python_ast.parse(code)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None) or 1
        reason = getattr(exc, "msg", None) or str(exc)
        return [Finding(line, Kind.UNPARSEABLE, f"not valid Python: {reason}")]
    except (RecursionError, MemoryError):
        return [Finding(1, Kind.UNPARSEABLE, "too deeply nested to parse")]
    try:
        index = build_index(tree)
        checker = _Checker(index, Resolver(index), Origin.parse(base_url), base_url, depth)
        checker.run()
        findings = checker.findings + integrity_findings(index, checker.resolver)
    except (TooComplex, RecursionError):
        return [Finding(1, Kind.UNPARSEABLE, "too complex or too deeply nested to analyse")]
    unique: dict[tuple[int, Kind], Finding] = {}
    for finding in sorted(findings):  # one per line and kind: the most specific message
        kept = unique.get((finding.line, finding.kind))
        if kept is None or len(finding.message) > len(kept.message):
            unique[(finding.line, finding.kind)] = finding
    return sorted(unique.values())


class _Checker(NameChecks, CallChecks):
    """Walks the tree once; the checks themselves are in names_check.py and calls_check.py."""

    def __init__(self, index: ModuleIndex, resolver: Resolver, origin: Origin, base_url: str,
                 depth: int) -> None:
        self.index = index
        self.resolver = resolver
        self.urls = UrlJudge(resolver, origin)
        self.paths = PathJudge(resolver)
        self.base_url = base_url
        self.depth = depth
        self.findings: list[Finding] = []

    def flag(self, node: ast.AST, kind: Kind, message: str) -> None:
        self.findings.append(Finding(getattr(node, "lineno", 1), kind, message))

    def run(self) -> None:
        for node in ast.walk(self.index.tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                self.imports(node)
            elif isinstance(node, ast.Name | ast.Attribute | ast.Subscript):
                self.reference(node)
            if isinstance(node, ast.Call):
                self.call(node)
                self.reference(node)

    # --- code given to exec/eval as a (decoded) literal -------------------------------------

    def nested_code(self, node: ast.Call, funcs: set[str]) -> None:
        if not funcs & {"builtins.exec", "builtins.eval", "builtins.compile"} or not node.args:
            return
        source = self.resolver.const(node.args[0])
        if isinstance(source, bytes | bytearray):
            source = bytes(source).decode("utf-8", "replace")
        if not isinstance(source, str) or self.depth >= MAX_NESTING:
            return
        for inner in _analyze(source, self.base_url, self.depth + 1):
            if inner.kind is not Kind.SKIP:
                self.flag(node, inner.kind, f"in code run by {rules.display(min(funcs))}: "
                          f"{inner.message}")

    @staticmethod
    def _arg(node: ast.Call, position: int, keyword: str) -> ast.expr | None:
        for item in node.keywords:
            if item.arg == keyword:
                return item.value
        if 0 <= position < len(node.args) and not any(
                isinstance(a, ast.Starred) for a in node.args[: position + 1]):
            return node.args[position]
        return None
