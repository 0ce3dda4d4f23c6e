"""Thin wrappers over the Linux calls the sandbox needs (Python 3.11 has no os.unshare).

Everything here is called in a freshly forked, single-threaded child: unshare(CLONE_NEWUSER) fails
in a process with more than one thread.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import platform
import socket
import struct

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
SANDBOX_NAMESPACES = (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
                      | CLONE_NEWPID)

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MNT_DETACH = 0x2

PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
LAST_CAPABILITY = 63
_LINUX_CAPABILITY_VERSION_3 = 0x20080522

SIOCSIFFLAGS = 0x8914
IFF_UP, IFF_LOOPBACK, IFF_RUNNING = 0x1, 0x8, 0x40

_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}

_libc = ctypes.CDLL(None, use_errno=True)


class NamespaceError(OSError):
    """A namespace, mount or privilege call failed."""


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise NamespaceError(errno, f"{what}: {os.strerror(errno)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def map_user(inside_id: int, outside_uid: int, outside_gid: int) -> None:
    """Maps one id in the new user namespace to the caller's own uid and gid outside."""
    for path, text in (("/proc/self/setgroups", "deny"),
                       ("/proc/self/uid_map", f"{inside_id} {outside_uid} 1"),
                       ("/proc/self/gid_map", f"{inside_id} {outside_gid} 1")):
        with open(path, "w") as file:
            file.write(text)


def forbid_more_namespaces() -> None:
    """Inside the sandbox's user namespace: no process may create namespaces of its own (a
    nested user namespace would hand the test capabilities again, if only over itself)."""
    for kind in ("user", "mnt", "net", "pid", "ipc", "uts", "cgroup", "time"):
        try:
            with open(f"/proc/sys/user/max_{kind}_namespaces", "w") as file:
                file.write("0")
        except OSError:
            pass  # an older kernel without that kind of namespace


def loopback_up() -> None:
    """Brings up `lo` in a new network namespace (it starts down)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", IFF_UP | IFF_LOOPBACK | IFF_RUNNING)
        fcntl.ioctl(sock, SIOCSIFFLAGS, request)


def mount(source: str | None, target: str, fstype: str | None, flags: int,
          options: str | None = None) -> None:
    _check(_libc.mount(source.encode() if source else None, target.encode(),
                       fstype.encode() if fstype else None, ctypes.c_ulong(flags),
                       options.encode() if options else None), f"mount {target}")


def umount(target: str, flags: int = 0) -> None:
    _check(_libc.umount2(target.encode(), ctypes.c_int(flags)), f"umount {target}")


def pivot_root(new_root: str, put_old: str) -> None:
    number = _PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise NamespaceError(0, f"pivot_root: unknown system call number on {platform.machine()}")
    _check(_libc.syscall(ctypes.c_long(number), new_root.encode(), put_old.encode()),
           "pivot_root")


def prctl(option: int, argument: int) -> int:
    return int(_libc.prctl(ctypes.c_int(option), ctypes.c_ulong(argument), ctypes.c_ulong(0),
                           ctypes.c_ulong(0), ctypes.c_ulong(0)))


def die_with_parent(signal_number: int) -> None:
    prctl(PR_SET_PDEATHSIG, signal_number)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def drop_all_privileges() -> None:
    """No capabilities left in any set, none to gain back through execve (setuid files,
    file capabilities): what remains is an ordinary process of an unprivileged user."""
    _check(prctl(PR_SET_NO_NEW_PRIVS, 1), "prctl(NO_NEW_PRIVS)")
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    for capability in range(LAST_CAPABILITY + 1):
        prctl(PR_CAPBSET_DROP, capability)  # fails (EINVAL) past the kernel's last one
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")
