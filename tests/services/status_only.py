"""Status-only twins of golden tests: the same calls, but only the status codes are checked.

Used to show that every requirement has a fault a test checking nothing but status codes misses
(a mutant that keeps every status code of the scenario and breaks a value, message or state).
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path


def _mentions_status(node: ast.AST) -> bool:
    return "status_code" in ast.unparse(node)


class _KeepStatusChecks(ast.NodeTransformer):
    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        test = node.test
        if not _mentions_status(test):
            return ast.Pass()
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            kept = [value for value in test.values if _mentions_status(value)]
            node.test = kept[0] if len(kept) == 1 else ast.BoolOp(ast.And(), kept)
        elif (isinstance(test, ast.Compare) and isinstance(test.left, ast.Tuple)
              and isinstance(test.comparators[0], ast.Tuple)):
            # `(r.status_code, r.json()) == (400, {...})` keeps `r.status_code == 400`
            node.test = ast.Compare(test.left.elts[0], test.ops, [test.comparators[0].elts[0]])
        node.msg = None
        return node


def status_only_twin(golden: str) -> str:
    """The golden test with every assert reduced to its status-code checks (asserts in helper
    functions included); everything else in the file, the calls above all, is unchanged."""
    tree = _KeepStatusChecks().visit(ast.parse(golden))
    return ast.unparse(ast.fix_missing_locations(tree))


def status_only_copy(service_dir: Path, target: Path) -> Path:
    """A copy of a service folder whose golden tests are their status-only twins."""
    shutil.copytree(service_dir, target, ignore=shutil.ignore_patterns("__pycache__"))
    for golden in (target / "golden").glob("test_*.py"):
        golden.write_text(status_only_twin(golden.read_text(encoding="utf-8")), encoding="utf-8")
    return target
