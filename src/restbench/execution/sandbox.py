"""The isolated world one execution runs in, built inside its own Linux namespaces.

`SandboxView` is computed once per worker: which host folders the test may read (the system's
/usr, the Python installation and its packages) and which it must not (restbench's benchmark data,
masked even though the package itself is importable). `build_root` runs in the execution's
child, in fresh user, mount, pid, network, IPC and UTS namespaces: a new root on tmpfs holding
read-only bind mounts of the view, a synthetic /etc, a minimal /dev, its own /proc, and a private
writable /tmp (the working and home folder), all of which vanish with the namespaces when the
execution ends.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import os
import pwd
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from restbench.execution import namespaces as ns
from restbench.execution.limits import SCRATCH_SIZE
from restbench.execution.outcome import TestReport

MESSAGE_LIMIT = 500
REPORT_LIMIT = 200

# The working folder: a path that exists outside too, so that pytest can be configured in the
# worker for the test processes (see execution.preconfigured).
SCRATCH = "/tmp"
SANDBOX_UID = 1000
SANDBOX_USER = "sandbox"
NOBODY = "nobody"
NOBODY_ID = 65534
CANONICAL_PORT = 8000
ROOT_SIZE = "16m"
COPY_LIMIT_BYTES = 1024**2  # copies of host files in the root's tmpfs (see SandboxView.copies)
SHM_SIZE = "64m"

# Benchmark data inside the restbench package: the answer key (services: requirements, mutants,
# golden tests, sources) and the reference suites. Masked with an empty read-only tmpfs.
MASKED_PACKAGE_DIRS = ("services", "agents/examples", "grading/datasets")
TOP_LEVEL = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
DEVICES = ("null", "zero", "full", "random", "urandom")
# Host files under /etc that programs read and that say nothing about the user.
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "alternatives",
             "mime.types", "protocols", "services", "ssl", "gai.conf", "host.conf")
SYNTHETIC_ETC = {
    "passwd": f"root:x:0:0:root:{SCRATCH}:/bin/sh\n"
              f"{SANDBOX_USER}:x:{SANDBOX_UID}:{SANDBOX_UID}::{SCRATCH}:/bin/sh\n"
              "nobody:x:65534:65534::/nonexistent:/usr/sbin/nologin\n",
    "group": f"root:x:0:\n{SANDBOX_USER}:x:{SANDBOX_UID}:\nnogroup:x:65534:\n",
    "hosts": "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n",
    "nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
    "hostname": "sandbox\n",
    "resolv.conf": "",
}


@dataclass(frozen=True)
class SandboxView:
    """What of the host the sandbox shows, read-only, at the same paths."""

    binds: tuple[str, ...]
    symlinks: dict[str, str] = field(default_factory=dict)
    masked: tuple[str, ...] = ()
    # Small host files shown by a copy of their bytes (taken once per worker) in the root's
    # tmpfs, read-only with it: two mount calls fewer each than a bind (~65 us of CPU).
    copies: dict[str, bytes] = field(default_factory=dict)

    @classmethod
    def for_this_interpreter(cls) -> SandboxView:
        wanted = ["/usr"]
        symlinks = {}
        for name in TOP_LEVEL:
            path = f"/{name}"
            if os.path.islink(path):
                symlinks[path] = os.readlink(path)
            elif os.path.isdir(path):
                wanted.append(path)
        prefixes = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
        wanted += prefixes
        for entry in sys.path:
            if entry and os.path.isdir(entry):
                wanted += _shown_of_path_entry(entry, prefixes)
        package = Path(__file__).resolve().parents[1]
        wanted.append(str(package))
        from restbench.runners import sandbox_paths

        wanted += sandbox_paths()  # Node.js and newman where they are not under /usr
        wanted += [f"/etc/{name}" for name in ETC_FILES if os.path.exists(f"/etc/{name}")]
        binds: list[str] = []
        for path in sorted({os.path.realpath(p) for p in wanted}, key=len):
            if not any(path == b or path.startswith(b.rstrip("/") + "/") for b in binds):
                binds.append(path)
        masked = tuple(str(package / d) for d in MASKED_PACKAGE_DIRS if (package / d).is_dir())
        copies = {path: data for path in binds if (data := _small_etc_file(path)) is not None}
        return cls(tuple(path for path in binds if path not in copies), symlinks, masked, copies)


def _shown_of_path_entry(entry: str, prefixes: list[str]) -> list[str]:
    """What of a `sys.path` entry the sandbox shows. A folder of the Python installation or one
    that pip installed into (it holds a `.dist-info`) is shown whole. Any other folder (one that
    PYTHONPATH or an editable install's .pth names, often a project's own folder, next to result
    stores and service folders with their golden tests) shows only what an import can load from
    it: its modules and its packages (folders with an `__init__.py`)."""
    real = os.path.realpath(entry)
    if any(real == p or real.startswith(p.rstrip("/") + "/")
           for p in map(os.path.realpath, prefixes)):
        return [entry]
    try:
        items = list(os.scandir(entry))
    except OSError:
        return []
    if any(item.name.endswith(".dist-info") and item.is_dir() for item in items):
        return [entry]
    suffixes = tuple(importlib.machinery.all_suffixes())
    return [item.path for item in items
            if not item.name.startswith(".")
            and ((item.is_file() and item.name.endswith(suffixes))
                 or (item.is_dir() and os.path.isfile(os.path.join(item.path, "__init__.py"))))]


def _small_etc_file(path: str) -> bytes | None:
    """The bytes of `path` when it is a regular file directly in /etc of at most
    COPY_LIMIT_BYTES (a larger one stays a bind, never a cut copy)."""
    if os.path.dirname(path) != "/etc" or not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as file:
            data = file.read(COPY_LIMIT_BYTES + 1)
    except OSError:
        return None
    return data if len(data) <= COPY_LIMIT_BYTES else None


def _inside(root: str, path: str) -> str:
    return root + path


def _make_mount_point(target: str, like: str) -> None:
    if os.path.isdir(like):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            with open(target, "w"):
                pass


def _bind_read_only(source: str, target: str) -> None:
    _make_mount_point(target, source)
    ns.mount(source, target, None, ns.MS_BIND | ns.MS_REC)
    # In a user namespace a remount must keep the flags the host mount locked (atime, noexec).
    kept = os.statvfs(target).f_flag & (ns.MS_NOEXEC | 0x400 | 0x800 | 0x1000)
    ns.mount(None, target, None,
             ns.MS_REMOUNT | ns.MS_BIND | ns.MS_RDONLY | ns.MS_NOSUID | ns.MS_NODEV | kept)


def _tmpfs(target: str, options: str, flags: int = ns.MS_NOSUID | ns.MS_NODEV) -> None:
    os.makedirs(target, exist_ok=True)
    ns.mount("tmpfs", target, "tmpfs", flags, options)


def build_root(view: SandboxView, root: str) -> None:
    """Builds the sandbox's file system at `root` and makes it `/`. Must run as the first
    process of the new pid namespace (for /proc) while it still holds its capabilities."""
    ns.mount(None, "/", None, ns.MS_REC | ns.MS_PRIVATE)
    _tmpfs(root, f"size={ROOT_SIZE},mode=0755")
    # The private /tmp first: the Python installation may itself live under /tmp (a virtual
    # environment in a clone there), and its bind mount must land on top of it, not under it.
    _tmpfs(_inside(root, SCRATCH), f"size={SCRATCH_SIZE},mode=1777")
    os.chown(_inside(root, SCRATCH), SANDBOX_UID, SANDBOX_UID)
    for path in view.binds:
        _bind_read_only(path, _inside(root, path))
    for path in view.masked:
        _tmpfs(_inside(root, path), "size=4k,mode=0555",
               ns.MS_NOSUID | ns.MS_NODEV | ns.MS_RDONLY)
    for path, target in view.symlinks.items():
        os.symlink(target, _inside(root, path))
    os.makedirs(_inside(root, "/etc"), exist_ok=True)
    for name, text in SYNTHETIC_ETC.items():
        with open(_inside(root, f"/etc/{name}"), "w") as file:
            file.write(text)
    for path, data in view.copies.items():
        with open(_inside(root, path), "wb") as file:
            file.write(data)
    _build_dev(root)
    try:
        os.makedirs(_inside(root, "/proc"), exist_ok=True)
        ns.mount("proc", _inside(root, "/proc"), "proc",
                 ns.MS_NOSUID | ns.MS_NODEV | ns.MS_NOEXEC)
    except ns.NamespaceError:
        pass  # a host that hides parts of its /proc refuses a new one: the test gets none
    for path in ("/run", "/home", "/var/tmp"):
        os.makedirs(_inside(root, path), exist_ok=True)
    os.chdir(root)
    ns.pivot_root(".", ".")
    ns.umount(".", ns.MNT_DETACH)  # the host's tree, stacked under the new root by pivot_root
    os.chdir("/")
    ns.mount(None, "/", None, ns.MS_REMOUNT | ns.MS_BIND | ns.MS_RDONLY | ns.MS_NOSUID
             | ns.MS_NODEV)
    os.chdir(SCRATCH)


def _build_dev(root: str) -> None:
    dev = _inside(root, "/dev")
    _tmpfs(dev, "size=64k,mode=0755", ns.MS_NOSUID | ns.MS_NOEXEC)
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}"):
            target = f"{dev}/{name}"
            with open(target, "w"):
                pass
            ns.mount(f"/dev/{name}", target, None, ns.MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{dev}/{name}")
    _tmpfs(f"{dev}/shm", f"size={SHM_SIZE},mode=1777")


def settle_namespaces(outside_uid: int, outside_gid: int,
                      ask_parent_to_map: Callable[[], None]) -> None:
    """In a process just forked into new namespaces of every kind that matters
    (`namespaces.fork_into`): the sandbox user mapped, loopback up, and no further namespaces
    allowed below. `outside_uid` and `outside_gid` are the forking process's.

    Run by an ordinary user, the sandbox user is that user (the only id it may map). Run by root,
    it must not be root: the kernel exempts root from the process limit, and root owns the
    host's files. The parent, which still holds CAP_SETUID outside, maps the sandbox user to
    `nobody` (and root to root), and the test process switches to it for good once its file
    system is built."""
    if outside_uid == 0:
        ask_parent_to_map()
    else:
        ns.map_user(SANDBOX_UID, outside_uid, outside_gid)
    ns.forbid_more_namespaces()
    ns.loopback_up()


def map_to_nobody(pid: int) -> None:
    """Run by the privileged parent: the sandbox user of `pid`'s new user namespace is the host's
    `nobody`, an account that owns nothing."""
    try:
        outside = pwd.getpwnam(NOBODY)
        uid, gid = outside.pw_uid, outside.pw_gid
    except KeyError:
        uid = gid = NOBODY_ID
    # Root stays root inside while it builds the sandbox (a tmpfs refuses to create files for
    # an id it cannot map), then the test process gives it up for good.
    for name, outside_id in (("uid_map", uid), ("gid_map", gid)):
        with open(f"/proc/{pid}/{name}", "w") as file:
            file.write(f"0 0 1\n{SANDBOX_UID} {outside_id} 1\n")


def become_sandbox_user() -> None:
    """After the file system is built: the sandbox user, no supplementary groups, no
    capabilities, nothing to gain back."""
    with contextlib.suppress(PermissionError):  # denied where the caller mapped itself
        os.setgroups([])
    os.setresgid(SANDBOX_UID, SANDBOX_UID, SANDBOX_UID)
    os.setresuid(SANDBOX_UID, SANDBOX_UID, SANDBOX_UID)
    # A change of credentials clears the parent-death signal: set again, or a test process
    # whose worker died (the harness interrupted) would run on, reparented to init, until its
    # CPU limit, or for ever if it sleeps. Had the worker died in between, the test process
    # meets the closed channel as it waits for its execution, and ends.
    ns.die_with_parent(signal.SIGKILL)
    ns.drop_all_privileges()


class ReportCollector:
    """A pytest plugin object that keeps every report in a JSON-friendly form."""

    def __init__(self) -> None:
        self.tests: list[TestReport] = []
        self.collect_errors: list[str] = []

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        outcome = yield
        report = outcome.get_result()
        if len(self.tests) >= REPORT_LIMIT:
            return
        assertion = False
        message = ""
        if report.failed and call.excinfo is not None:
            assertion = call.excinfo.errisinstance((AssertionError, pytest.fail.Exception))
            message = f"{call.excinfo.typename}: {call.excinfo.value}"[:MESSAGE_LIMIT]
        elif report.skipped:
            message = str(report.longrepr)[:MESSAGE_LIMIT]
        self.tests.append(TestReport(report.nodeid, report.when, report.outcome, assertion,
                                     message))

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collect_errors.append(str(report.longrepr)[-2000:])
