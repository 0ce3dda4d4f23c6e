"""Deterministic checks of a generated test; each is one criterion, met or not, with a reason."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from restbench import python_ast
from restbench.grading.dataset import Check
from restbench.grading.security import Finding, analyze

MAX_LISTED_FINDINGS = 8


@dataclass(frozen=True)
class CheckResult:
    met: bool
    reason: str
    findings: tuple[Finding, ...] = ()


def run_check(check: Check, code: str, base_url: str) -> CheckResult:
    if check.type in ("contains", "not_contains"):
        return _contains(check, code)
    if check.type in ("regex_match", "regex_not_match"):
        return _regex(check, code)
    if check.type == "imports":
        return _imports(check, code)
    if check.type == "static-security":
        return _static_security(check, code, base_url)
    raise ValueError(f"unknown check type {check.type!r}")


def _line_of(code: str, offset: int) -> int:
    return code.count("\n", 0, offset) + 1


def _contains(check: Check, code: str) -> CheckResult:
    haystack, needle = (code.lower(), check.value.lower()) if check.ignore_case else (
        code, check.value)
    offset = haystack.find(needle)
    if check.type == "contains":
        return CheckResult(offset >= 0, f"found at line {_line_of(code, offset)}" if offset >= 0
                           else f"{check.value!r} does not occur")
    return CheckResult(offset < 0, "does not occur" if offset < 0 else
                       f"{check.value!r} occurs at line {_line_of(code, offset)}")


def _regex(check: Check, code: str) -> CheckResult:
    found = check.regex().search(code)
    where = f"matched {found.group(0)[:60]!r} at line {_line_of(code, found.start())}" \
        if found else "no match"
    return CheckResult(bool(found) == (check.type == "regex_match"), where)


def imported_modules(code: str) -> list[tuple[str, int]]:
    """Absolute module names the code imports (also by __import__/import_module of a literal)."""
    tree = python_ast.parse(code)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, node.lineno))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("__import__", "import_module"):
                found.append((node.args[0].value, node.lineno))
    return found


def _imports(check: Check, code: str) -> CheckResult:
    try:
        modules = imported_modules(code)
    except (SyntaxError, ValueError) as exc:
        return CheckResult(False, f"not valid Python: {getattr(exc, 'msg', exc)}")
    names = {name for name, _ in modules}

    def imports(wanted: str) -> bool:
        return any(name == wanted or name.startswith(f"{wanted}.") for name in names)

    problems = [f"does not import {m}" for m in check.required if not imports(m)]
    problems += [f"imports {name} at line {line}" for name, line in modules
                 if any(name == m or name.startswith(f"{m}.") for m in check.forbidden)]
    allowed = set(check.allowed) | {"__future__"}
    if check.allowed:
        problems += [f"imports {name} at line {line}, which is not allowed" for name, line in modules
                     if name.split(".")[0] not in allowed]
    if problems:
        return CheckResult(False, "; ".join(problems))
    return CheckResult(True, "imports as expected: " + (", ".join(sorted(names)) or "none"))


def _static_security(check: Check, code: str, base_url: str) -> CheckResult:
    findings = tuple(f for f in analyze(code, base_url) if f.kind.value not in check.ignore)
    if not findings:
        return CheckResult(True, "no findings")
    listed = "; ".join(str(f) for f in findings[:MAX_LISTED_FINDINGS])
    more = f" (and {len(findings) - MAX_LISTED_FINDINGS} more)" \
        if len(findings) > MAX_LISTED_FINDINGS else ""
    return CheckResult(False, f"{len(findings)} finding{'s' if len(findings) > 1 else ''}: "
                       f"{listed}{more}", findings)
