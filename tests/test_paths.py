"""Why restbench may not write a file, in the words a user needs."""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from pathlib import Path

import pytest

from restbench.paths import not_writable


def _asked_as_nobody(path: Path) -> str:
    """not_writable(path) in a child whose effective user is nobody."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.seteuid(pwd.getpwnam("nobody").pw_uid)
            os.write(write_end, str(not_writable(path)).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as answer:
        said = answer.read()
    os.waitpid(pid, 0)
    return said


def test_another_users_file_is_named_as_theirs_not_as_read_only() -> None:
    """Before: a user running into a root-owned scores.json was told the file is read-only."""
    if os.geteuid() != 0:
        pytest.fail("needs root, to ask as another user (nobody) about root's file")
    folder = Path(tempfile.mkdtemp(prefix="rb-paths-"))
    try:
        folder.chmod(0o755)
        scores = folder / "scores.json"
        scores.write_text("{}")
        scores.chmod(0o644)
        owner = pwd.getpwuid(0).pw_name
        assert _asked_as_nobody(scores) == \
            f"the file belongs to {owner}, and this user may not write it"
        assert not_writable(scores) is None  # its owner may
        assert not_writable(folder / "missing.json") is None
        scores.chmod(0o444)
        os.chown(scores, pwd.getpwnam("nobody").pw_uid, -1)
        assert _asked_as_nobody(scores) == "the file is read-only"  # nobody's own
    finally:
        shutil.rmtree(folder)
