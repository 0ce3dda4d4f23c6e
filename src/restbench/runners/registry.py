"""Finding runners: the `restbench.runners` entry-point group, or `module:attribute`."""

from __future__ import annotations

import contextlib
import inspect
from functools import cache

from restbench.errors import RestbenchError
from restbench.plugins import available_plugins, resolve_plugin
from restbench.runners.base import PYTEST, Runner

GROUP = "restbench.runners"


class RunnerError(RestbenchError):
    """A runner cannot be found, or its tool is not installed."""


def available_runners() -> dict[str, str]:
    return available_plugins(GROUP)


@cache
def load_runner(name: str = PYTEST) -> Runner:
    target = resolve_plugin(name, GROUP, "runner", RunnerError)
    runner = target() if inspect.isclass(target) else target
    if not isinstance(runner, Runner):
        raise RunnerError(f"runner '{name}' does not fit the interface (name, suffixes, "
                          "address_space_bytes, host_paths, check, command, read_report)")
    return runner


_checked: set[str] = set()


def ready_runner(name: str) -> Runner:
    """The runner, its tool checked once per process (a missing tool raises, naming the
    command that installs it)."""
    runner = load_runner(name)
    if name not in _checked:
        runner.check()
        _checked.add(name)
    return runner


def runner_for_file(file_name: str) -> str:
    """The runner of a test file, by its name's ending (the longest that matches)."""
    matches = []
    for name in available_runners():
        with contextlib.suppress(RestbenchError):
            runner = load_runner(name)
            matches += [(len(suffix), name) for suffix in runner.suffixes
                        if file_name.endswith(suffix)]
    if not matches:
        raise RunnerError(f"{file_name}: no runner for this kind of file (test files end in "
                          + ", ".join(_known_suffixes()) + ")")
    return max(matches)[1]


def _known_suffixes() -> list[str]:
    suffixes = []
    for name in available_runners():
        with contextlib.suppress(RestbenchError):
            suffixes += load_runner(name).suffixes
    return suffixes


def sandbox_paths() -> list[str]:
    """Every installed runner's tool folders, for the sandbox's read-only view."""
    paths: list[str] = []
    for name in available_runners():
        with contextlib.suppress(Exception):
            paths += load_runner(name).host_paths()
    return paths
