"""What the test worker leaves warm for the test processes it forks."""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

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
