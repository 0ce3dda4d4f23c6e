"""Status-only twins of golden tests: the same calls, but only the status codes are checked.

Used to show that every requirement has a fault a test checking nothing but status codes misses
(a mutant that keeps every status code of the scenario and breaks a value, message or state).
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

from restbench.benchmark.models import Mutant, MutantKind, Service
from restbench.engine.validate import open_validation_backend
from restbench.execution import ExecutionResult, Outcome
from restbench.mutation.apply import ORIGINAL
from tests.validate_helpers import run_golden_tests


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


async def survivors(service: Service) -> tuple[dict[str, ExecutionResult], dict[str, str]]:
    """Each requirement's golden test run on the original, and a mutant it passes on (by
    requirement; none where it killed them all). Only as many mutants are run as it takes to
    find one: first the one most likely to survive (an edit the test never reached on the
    original, else the first semantic mutant), then the rest of those whose first was killed."""
    async with open_validation_backend(services=[service]) as backend:
        on_originals = await run_golden_tests(backend, service,
                                              [(r.id, ORIGINAL) for r in service.requirements])
        originals = {label: result for (label, _), result in on_originals.items()}
        first = {r.id: _likeliest_survivor(r.mutants, originals[r.id].unreached)
                 for r in service.requirements if originals[r.id].outcome is Outcome.PASS}
        on_first = await run_golden_tests(backend, service, list(first.items()))
        found = {label: mutant for (label, mutant), result in on_first.items()
                 if result.outcome is Outcome.PASS}
        rest = [(r.id, m.id) for r in service.requirements if r.id in first and r.id not in found
                for m in r.mutants if m.id != first[r.id]]
        for (label, mutant), result in (await run_golden_tests(backend, service, rest)).items():
            if result.outcome is Outcome.PASS:
                found.setdefault(label, mutant)
    return originals, found


def _likeliest_survivor(mutants: list[Mutant], unreached: tuple[str, ...]) -> str:
    for mutant in mutants:
        if mutant.id in unreached:
            return mutant.id
    return next((m.id for m in mutants if m.kind is MutantKind.SEMANTIC), mutants[0].id)
