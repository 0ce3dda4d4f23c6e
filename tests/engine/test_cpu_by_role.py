"""benchmarks/cpu_by_role.py on a real run and a real validate: every role that ran shows, and
the roles add up to the command's CPU as `time` counts it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "cpu_by_role.py"


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True,
                          text=True, timeout=600, check=False)


def _figures(result: subprocess.CompletedProcess[str]) -> dict[str, tuple[int, float]]:
    """Each role's (processes, CPU s), once the roles are checked to add up to the total."""
    assert result.returncode == 0, result.stderr
    total = float(re.search(r"s wall, ([\d.]+) s CPU", result.stdout).group(1))
    rows = {match.group(1).strip(): (int(match.group(2)), float(match.group(3)))
            for match in re.finditer(r"^([^\d\n]+?)\s+(\d+)\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+[\d.]+%$",
                                     result.stdout, re.MULTILINE)}
    unattributed = float(re.search(r"^not attributed\s+(-?[\d.]+)", result.stdout,
                                   re.MULTILINE).group(1))
    assert abs(unattributed) <= 0.1 * total + 0.3, result.stdout
    return rows


def test_the_roles_of_a_run_add_up_to_its_cpu(mini_service: Path, tmp_path: Path) -> None:
    result = _run("--interval", "0.02", "--", "-s", mini_service, "-g", "golden,schemathesis",
                  "-o", tmp_path)
    assert result.stdout.startswith("restbench run -s "), result.stdout
    rows = _figures(result)
    for role in ("harness", "test processes", "test workers", "service servers (Python)",
                 "launcher", "Schemathesis draws"):
        assert rows[role][1] > 0, (role, result.stdout)
    assert rows["harness"][0] == rows["launcher"][0] == rows["Schemathesis draws"][0] == 1
    assert rows["test processes"][0] >= 1  # most end before a reading: counted by their worker
    assert (tmp_path / "scores.json").is_file()  # the run wrote where it was told


def test_the_roles_of_a_validate_add_up_to_its_cpu() -> None:
    # Three todo requirements, not the mini service: its five servers use ~0.05 s of CPU in all,
    # which the table (tenths of a second) may show as 0.0. validate takes no -o: the command
    # succeeding shows that none was added.
    result = _run("--interval", "0.02", "--command", "validate", "--", "-s", "todo", "-R",
                  "TODO-01,TODO-02,TODO-03")
    assert result.stdout.startswith("restbench validate -s "), result.stdout
    rows = _figures(result)
    for role in ("harness", "test processes", "test workers", "service servers (Python)",
                 "launcher"):
        assert rows[role][1] > 0, (role, result.stdout)
    assert "Schemathesis draws" not in rows  # validate runs golden tests only


def test_a_failed_run_gives_its_status_and_no_figures(tmp_path: Path) -> None:
    result = _run("--", "-s", tmp_path / "no-such-service")
    assert result.returncode == 2
    assert "unknown service" in result.stderr
    assert "failed with exit status 2 (its message is above): no figures" in result.stderr
    assert "role" not in result.stdout
