"""namespaces.fork_into: a fork straight into new namespaces, with clone3 or, where the kernel
has none, clone."""

from __future__ import annotations

import os
import platform

import pytest

from restbench.execution import namespaces


@pytest.mark.parametrize("call", ["clone3", "clone"])
def test_fork_into_makes_the_child_pid_1_of_a_new_pid_namespace(
        call: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if call == "clone":
        if platform.machine() not in namespaces._CLONE:
            pytest.fail(f"no clone(2) fallback for {platform.machine()}")
        monkeypatch.setattr(namespaces, "_CLONE3", 1 << 20)  # no such call: ENOSYS, as on 5.2
    read_end, write_end = os.pipe()
    pid = namespaces.fork_into(namespaces.CLONE_NEWUSER | namespaces.CLONE_NEWPID)
    if pid == 0:
        try:
            os.write(write_end, f"{os.getpid()} {os.getppid()}".encode())
        finally:
            os._exit(7)
    os.close(write_end)
    try:
        answer = os.read(read_end, 100).decode()
    finally:
        os.close(read_end)
    _, status = os.waitpid(pid, 0)
    assert answer == "1 0"  # its parent lies outside its pid namespace
    assert os.waitstatus_to_exitcode(status) == 7
    assert pid != os.getpid()
