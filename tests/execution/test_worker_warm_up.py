"""What the test worker leaves warm for the test processes it forks."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from restbench.execution import worker


def _unmapped() -> list[str]:
    """Loaded modules whose file `inspect` has not noted yet: a failure report in a test process
    resolves the real path of each (CPython keeps the map in `inspect._filesbymodname`)."""
    return [name for name, module in sys.modules.copy().items()
            if inspect.ismodule(module) and getattr(module, "__file__", None) is not None
            and inspect._filesbymodname.get(name) != module.__file__]


def test_every_module_loaded_before_the_forks_has_its_file_noted(tmp_path: Path,
                                                                  monkeypatch) -> None:
    (tmp_path / "loaded_after_the_warm_up.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        worker._map_module_files()  # as after the worker's first warm-up: its own file is known
        importlib.import_module("loaded_after_the_warm_up")
        assert "loaded_after_the_warm_up" in _unmapped()

        worker._map_module_files()

        assert _unmapped() == []
        assert inspect.getmodule(None, str(tmp_path / "loaded_after_the_warm_up.py")) \
            is sys.modules["loaded_after_the_warm_up"]
    finally:
        sys.modules.pop("loaded_after_the_warm_up", None)


class _CountingModules(dict):  # type: ignore[type-arg]
    """sys.modules as `inspect` sees it, counting the walks over every loaded module."""

    walks = 0

    def copy(self) -> dict:  # type: ignore[type-arg]
        type(self).walks += 1
        return dict(self)


class _SysWith:
    """`sys` with other modules."""

    def __init__(self, modules: dict) -> None:  # type: ignore[type-arg]
        self.modules = modules

    def __getattr__(self, name: str) -> object:
        return getattr(sys, name)


def test_a_test_module_noted_as_collected_is_found_without_a_walk(tmp_path: Path,
                                                                 monkeypatch) -> None:
    """What `TestModuleFiles` notes for a test module is what `inspect.getmodule`'s own walk
    notes; afterwards a failure report's lookup of that file walks no loaded module."""
    (tmp_path / "test_noted.py").write_text("def test_fails():\n    assert 1 == 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    file = str(tmp_path / "test_noted.py")
    try:
        module = importlib.import_module("test_noted")
        code = module.test_fails.__code__

        monkeypatch.setattr(inspect, "modulesbyfile", dict(inspect.modulesbyfile))
        monkeypatch.setattr(inspect, "_filesbymodname", dict(inspect._filesbymodname))
        assert inspect.getmodule(code, file) is module  # the walk
        walked = {k: v for k, v in inspect.modulesbyfile.items() if "test_noted" in k}, \
            inspect._filesbymodname["test_noted"]

        monkeypatch.setattr(inspect, "modulesbyfile", {})
        monkeypatch.setattr(inspect, "_filesbymodname", {})
        worker.map_module_file(module)
        noted = dict(inspect.modulesbyfile), inspect._filesbymodname["test_noted"]
        assert noted == walked

        counting = _CountingModules(sys.modules)
        monkeypatch.setattr(inspect, "sys", _SysWith(counting))
        assert inspect.getmodule(code, file) is module
        assert _CountingModules.walks == 0
        inspect.modulesbyfile.clear()
        inspect._filesbymodname.clear()
        assert inspect.getmodule(code, file) is module
        assert _CountingModules.walks == 1  # the counter counts: without the note, a walk
    finally:
        sys.modules.pop("test_noted", None)


def test_the_worker_notes_each_collected_test_module(tmp_path: Path) -> None:
    """The hook in a real pytest session: the collected module's file is in `inspect`'s map."""
    import pytest

    (tmp_path / "test_collected_here.py").write_text("def test_passes():\n    pass\n")
    try:
        code = pytest.main([str(tmp_path / "test_collected_here.py"), "-q", "-p", "no:cacheprovider",
                            "--rootdir", str(tmp_path)], plugins=[worker.TestModuleFiles()])
        assert code == 0
        assert inspect._filesbymodname.get("test_collected_here") == \
            str(tmp_path / "test_collected_here.py")
        assert inspect.modulesbyfile[inspect.getabsfile(sys.modules["test_collected_here"])] \
            == "test_collected_here"
    finally:
        sys.modules.pop("test_collected_here", None)


_WARM_UP_IN_A_FRESH_INTERPRETER = """
import abc, json, sys
import pytest
from restbench.execution import worker

tokens = []
run = pytest.main
pytest.main = lambda *args, **kwargs: (tokens.append(abc.get_cache_token()), run(*args, **kwargs))[1]
worker._warm_up(schemathesis=sys.argv[1] == "schemathesis")
tokens.append(abc.get_cache_token())
import httpx
facts = {"tokens": [str(token) for token in tokens],
         "cli_loaded_by_the_warm_up": sorted({"click", "rich"} & set(sys.modules))}
try:
    httpx.no_such_name
except AttributeError as exc:
    facts["unknown"] = str(exc)
from httpx import main
import httpx._main
facts["main"] = type(main).__name__
facts["same"] = main is httpx._main.main is httpx.main
print(json.dumps(facts))
"""


@pytest.mark.parametrize("kind", ["plain", "schemathesis"])
def test_the_warm_up_leaves_the_isinstance_caches_valid_and_httpx_without_its_cli(
        kind: str, tmp_path: Path) -> None:
    """No abstract base class is registered after pytest's warm-up run (that would empty the
    `isinstance` caches it filled, for every test process to refill), in either kind of worker:
    Schemathesis's warm-up registers some. httpx's command-line client (click, rich) is left
    out of the worker but still there for a test that uses it."""
    environment = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    answer = subprocess.run([sys.executable, "-c", _WARM_UP_IN_A_FRESH_INTERPRETER, kind],
                            cwd=tmp_path, env=environment, capture_output=True, text=True,
                            timeout=120, check=False)
    assert answer.returncode == 0, answer.stderr
    facts = json.loads(answer.stdout.splitlines()[-1])
    before_the_run, after_the_warm_up = facts["tokens"]
    assert before_the_run == after_the_warm_up
    assert facts["cli_loaded_by_the_warm_up"] == []
    assert facts["unknown"] == "module 'httpx' has no attribute 'no_such_name'"
    assert facts == {**facts, "main": "Command", "same": True}
