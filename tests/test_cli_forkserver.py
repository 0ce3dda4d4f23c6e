"""The tests' fork server (tests/cli_forkserver.py) runs a command as a fresh interpreter would."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from tests.cli_helpers import FORKSERVER_VARIABLE, restbench
from tests.process_helpers import processes_mentioning


@pytest.mark.parametrize("args", [("--version",), ("nonsense",), ("validate", "-s", "nope"),
                                  ("list",)])
def test_a_forked_command_answers_as_a_fresh_interpreter(
        args: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    forked = restbench(*args)
    monkeypatch.setenv(FORKSERVER_VARIABLE, "0")
    fresh = restbench(*args)
    assert (forked.returncode, forked.stdout, forked.stderr) == \
        (fresh.returncode, fresh.stdout, fresh.stderr)


def test_a_forked_command_has_the_tests_folder_and_environment(tmp_path: Path) -> None:
    """A relative RESTBENCH_LLM_CONFIG is read from the command's folder: the environment and
    the folder are the test's, not the server's."""
    (tmp_path / "models.toml").write_text("nonsense = [\n")
    result = restbench("prices", cwd=tmp_path, env={"RESTBENCH_LLM_CONFIG": "models.toml"})
    assert result.returncode == 2
    assert result.stderr.startswith("error: models.toml: not valid TOML"), result.stderr


def test_a_command_past_its_time_limit_is_killed_with_what_it_started(own_memory: Path) -> None:
    """`serve` runs until stopped; past the time limit the command is killed, and its
    launcher (whose command line names the test's memory folder) ends with it."""
    with pytest.raises(subprocess.TimeoutExpired) as expired:
        restbench("serve", "todo", "--port", "0", timeout=5)
    assert " at http://127.0.0.1:" in str(expired.value.stdout)  # it served
    deadline = time.monotonic() + 10
    while processes_mentioning(str(own_memory)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_mentioning(str(own_memory)) == []
