"""Without the `ray` extra nothing changes: no Ray import, and --ray says what to install."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.cli_helpers import restbench

BLOCK_RAY = "import sys; sys.modules['ray'] = None; "  # `import ray` now fails as if absent


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)


def test_restbench_and_run_help_import_nothing_of_ray() -> None:
    done = _python(
        "import sys\n"
        "import restbench, restbench.cli, restbench.engine, restbench.cluster\n"
        "from restbench.cli import main\n"
        "try:\n"
        "    main(['run', '--help'])\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        "print('RAY MODULES', sorted(m for m in sys.modules if m == 'ray' or "
        "m.startswith('ray.')))\n")
    assert done.returncode == 0, done.stderr
    assert "--ray [ADDRESS]" in done.stdout
    assert "RAY MODULES []" in done.stdout


@pytest.mark.parametrize("command", [["validate", "-s", "todo", "--ray"],
                                     ["run", "-s", "todo", "-g", "golden", "-R", "TODO-01",
                                      "--ray", "10.0.0.1:6379"]])
def test_ray_without_the_extra_is_a_one_line_error_naming_the_install(
        command: list[str], tmp_path: object) -> None:
    done = _python(BLOCK_RAY + "from restbench.cli import main; "
                   f"main({command + ['-o', str(tmp_path)] if command[0] == 'run' else command})")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "pip install 'restbench[ray]'" in lines[0]
    assert "Traceback" not in done.stderr
    assert done.stdout == ""  # refused before anything started


def test_an_address_where_no_cluster_answers_is_a_one_line_error(tmp_path: object) -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        pytest.fail("needs the ray extra: pip install 'restbench[ray]'")
    done = _python("from restbench.cli import main; "
                   "main(['validate', '-s', 'todo', '-R', 'TODO-01', '--ray', '127.0.0.1:1'])")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "error: cannot connect to the Ray cluster at '127.0.0.1:1': connection refused" \
        in done.stderr.splitlines()
    assert "Traceback" not in done.stderr


def test_a_ray_client_address_is_refused_with_what_to_do_instead() -> None:
    done = _python("from restbench.cli import main; main(['validate', '-s', 'todo', '-R', "
                   "'TODO-01', '--ray', 'ray://head.example:10001'])")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    expected = ("error: --ray ray://head.example:10001: Ray Client (ray://) addresses are not "
                "supported; run restbench on a node of the cluster and give the cluster's "
                "address (HOST:6379) or auto")
    assert lines == [expected], done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize("address", ["", " "])
def test_an_empty_ray_address_is_a_one_line_error(command: str, address: str) -> None:
    """Before: Ray's `Invalid address format:`, with nothing after the colon (and, without the
    ray extra, the advice to install it)."""
    done = restbench(command, "-s", "todo", "-R", "TODO-01", "--ray", address, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip() == (f"error: --ray {address!r}: the address is empty; give the "
                                   "cluster's head as HOST:PORT, or --ray alone (or auto) for "
                                   "the cluster this machine belongs to")
    assert done.stdout == ""
