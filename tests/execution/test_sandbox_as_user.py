"""The sandbox when restbench runs as an ordinary user (the rest of the suite runs as whoever
runs it, in CI root): the same isolation, with the user's own id mapped into the sandbox."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parents[1] / "fixtures"
CONFINED = '''import os


def test_alone_and_limited():
    assert os.listdir("/proc").count("1") == 1
    assert [p for p in os.listdir("/proc") if p.isdigit()] == ["1"]
    assert not os.path.exists(os.path.expanduser("~/.ssh"))
    children = 0
    try:
        for _ in range(300):
            pid = os.fork()
            if pid == 0:
                import time
                time.sleep(20)
                os._exit(0)
            children += 1
    except OSError:
        pass
    assert children < 100
'''


@pytest.fixture
def folder() -> Iterator[Path]:
    """A folder an unprivileged user may write (pytest's tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="restbench-as-user-"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _python_view() -> str:
    """Shell lines that make this Python installation reachable for `nobody` where it lies in a
    folder only root may enter (pyenv under /root): in a private mount namespace, that folder is
    replaced by a view holding just the installation."""
    base = Path(os.path.realpath(sys.base_prefix))
    blocked = [folder for folder in reversed(base.parents) if not folder.stat().st_mode & 0o001]
    if not blocked:
        return ""
    top = blocked[0]
    first = base.relative_to(top).parts[0]
    return (f'view=$(mktemp -d) && chmod 755 "$view" && mkdir "$view/{first}" && '
            f'mount --bind "{top}/{first}" "$view/{first}" && mount --rbind "$view" "{top}" && ')


def _as_user(command: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "HOME": str(home), "TMPDIR": str(home), "COLUMNS": "200"}
    if os.geteuid() == 0:
        for tool in ("setpriv", "unshare"):
            if shutil.which(tool) is None:
                pytest.fail(f"util-linux's {tool} is missing: apt-get install util-linux")
        script = _python_view() + 'exec setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"'
        command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
                   *command]
    return subprocess.run(command, capture_output=True, text=True, env=environment,
                          timeout=300, check=False, cwd=home)


def test_an_ordinary_user_gets_the_same_sandbox(folder: Path) -> None:
    tests = folder / "tests"
    tests.mkdir()
    shutil.copy(FIXTURES / "mini_tests" / "precise" / "MINI-01.py", tests / "MINI-01.py")
    (tests / "MINI-02.py").write_text(CONFINED)
    for path in (tests, *tests.iterdir()):
        path.chmod(0o777 if path.is_dir() else 0o644)
    output = folder / "out"
    result = _as_user([sys.executable, "-m", "restbench.cli", "run", "-s", str(FIXTURES / "mini"),
                       "-V", "precise", "-g", "files", "-a", f"dir={tests}", "-o", str(output)],
                      folder)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    with open(output / "requirements.csv", newline="") as handle:
        rows = {row["requirement"]: row for row in csv.DictReader(handle)}
    assert rows["MINI-01"]["killed"] in ("1", "1.0") and rows["MINI-01"]["valid"] in ("True", "1")
    assert rows["MINI-02"]["valid"] in ("True", "1"), result.stdout[-2000:]
