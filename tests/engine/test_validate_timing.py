"""benchmarks/validate_timing.py on real validate runs: each install's runs, its summary, and a
failed run's exit status."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "validate_timing.py"


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True,
                          text=True, timeout=600, check=False)


def test_two_installs_are_timed_in_turn_and_summed_up(mini_service: Path) -> None:
    result = _run("--rounds", "2", "-s", mini_service, "--python", f"first={sys.executable}",
                  "--python", f"second={sys.executable}", "--target-s", "600",
                  "--calibration-loops", "1000", "--calibration-imports", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    runs = re.findall(r"^round (\d)/2  (first|second)\s+([\d.]+) s wall\s+([\d.]+) s CPU "
                      r"\(\s*[\d.]+ system\)  loop ([\d.]+) s  imports ([\d.]+) s CPU  "
                      r"faults ([\d.]+) us  load [\d.]+  all sound$",
                      result.stdout, re.MULTILINE)
    assert [(r[0], r[1]) for r in runs] == [("1", "first"), ("1", "second"), ("2", "first"),
                                            ("2", "second")], result.stdout
    assert all(float(wall) > 0 and float(cpu) > 0 and float(loop) > 0 and float(imports) > 0.05
               and float(faults) > 0.01 for _, _, wall, cpu, loop, imports, faults in runs)
    for label in ("first", "second"):
        assert re.search(rf"^{label}\s+wall median [\d.]+ s \([\d.]+-[\d.]+\), CPU median "
                         r"[\d.]+ s \([\d.]+-[\d.]+\); 2 of 2 runs within 600 s$", result.stdout,
                         re.MULTILINE), result.stdout


def test_a_failed_validate_fails_the_benchmark() -> None:
    result = _run("--rounds", "1", "-s", "no-such-service", "--calibration-loops", "1000",
                  "--calibration-imports", "1")
    assert result.returncode == 1, result.stdout + result.stderr
    assert re.search(r"^round 1/1  this install .* exit status 2: .*no-such-service",
                     result.stdout, re.MULTILINE), result.stdout


def test_a_missing_python_is_refused_before_any_run(tmp_path: Path) -> None:
    result = _run("--python", tmp_path / "nothing" / "python")
    assert result.returncode == 2
    assert "no such file" in result.stderr and "round" not in result.stdout


def test_an_install_that_cannot_import_the_servers_libraries_is_named(tmp_path: Path) -> None:
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    result = _run("--python", f"broken={broken}", "--calibration-loops", "1000")
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{broken} -c 'import fastapi, sqlalchemy.orm, uvicorn' failed" in result.stderr
    assert "Traceback" not in result.stderr and "round 1" not in result.stdout
