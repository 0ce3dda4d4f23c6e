"""What a server forked from the launcher imports, the launcher has imported already: an import
in every server costs each one its CPU and its copy-on-write faults. (Left unchecked, a lazy
package __init__ once had every server import the executor's side: ~25% more CPU in
`restbench validate`.)"""

from __future__ import annotations

import ast
import json
import subprocess
import sys

from restbench.serving import launcher

CHECK = """
import json, sys
from restbench.serving import launcher
launcher._preload(False)
before = set(sys.modules)
for statement in json.loads(sys.argv[1]):
    exec(statement, {})
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def _imports_inside_functions(path: str) -> list[str]:
    with open(path, encoding="utf-8") as source:
        tree = ast.parse(source.read())
    statements = []
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            statements += [ast.unparse(node) for node in ast.walk(function)
                           if isinstance(node, ast.Import | ast.ImportFrom)]
    return statements


def test_a_server_child_imports_nothing_the_launcher_lacks() -> None:
    statements = _imports_inside_functions(launcher.__file__)
    assert any("channel" in statement for statement in statements)  # the check sees them
    process = subprocess.run([sys.executable, "-c", CHECK, json.dumps(statements)],
                             capture_output=True, text=True, timeout=120, check=False)
    assert process.returncode == 0, process.stderr[-2000:]
    assert json.loads(process.stdout) == []


def test_the_launcher_leaves_out_the_harness_side() -> None:
    harness_side = ("restbench.serving.pool", "restbench.execution.executor",
                    "restbench.benchmark")
    script = ("import sys\nfrom restbench.serving import launcher\nlauncher._preload(False)\n"
              f"print(sorted(m for m in sys.modules if m.startswith({harness_side!r})))")
    process = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             timeout=120, check=False)
    assert process.returncode == 0, process.stderr[-2000:]
    assert process.stdout.strip() == "[]"
