"""The packages whose public names load on first use (restbench.lazy_exports): importing one
loads none of its submodules, and each name is listed and found."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROBE = """
import importlib, json, sys
package = importlib.import_module(sys.argv[1])
listed = dir(package)
loaded_before = sorted(m for m in sys.modules if m.startswith(sys.argv[1] + "."))
found = {name: getattr(package, name) is not None for name in package.__all__}
print(json.dumps({"all": package.__all__, "listed": listed, "loaded": loaded_before,
                  "found": found}))
"""


@pytest.mark.parametrize(("package", "submodules"), [
    ("restbench.engine", ["restbench.engine.events", "restbench.engine.run",
                          "restbench.engine.run_plan", "restbench.engine.validate"]),
    ("restbench.llm", ["restbench.llm.client", "restbench.llm.extract"]),
    ("restbench.benchmark", ["restbench.benchmark.loader"]),
])
def test_names_are_listed_before_they_load(package: str, submodules: list[str]) -> None:
    ran = subprocess.run([sys.executable, "-c", PROBE, package], capture_output=True, text=True,
                         check=True, timeout=60)
    seen = json.loads(ran.stdout)
    assert seen["all"], "the package exports names"
    assert set(seen["all"]) <= set(seen["listed"]), "dir() lists them before any is used"
    assert "__getattr__" in seen["listed"]
    assert not set(submodules) & set(seen["loaded"]), "import and dir() load no submodule"
    assert all(seen["found"].values())
