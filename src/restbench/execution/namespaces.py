"""Thin wrappers over the Linux calls the sandbox needs (Python 3.11 has no os.unshare, and no
fork into new namespaces).

`fork_into` must only be called in a single-threaded process (the worker starts no threads):
like fork, it copies only the calling thread.
"""

from __future__ import annotations

import ctypes
import errno as errno_module
import fcntl
import os
import platform
import signal
import socket
import struct
import threading

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
_CLONE3 = 435  # the same number on every architecture (Linux 5.3 and later)
# clone(2), where clone3 is missing: its number, and where child_tid goes among its arguments
# after flags, newsp and parent_tid (x86_64 puts it before tls, arm64 after).
_CLONE = {"x86_64": (56, 3), "aarch64": (220, 4)}
CLONE_CHILD_SETTID = 0x01000000

_libc = ctypes.CDLL(None, use_errno=True)
# Called with the GIL held: between PyOS_BeforeFork and PyOS_AfterFork_* no other Python thread
# may run, as in os.fork.
_libc_holding_gil = ctypes.PyDLL(None, use_errno=True)
_libc_holding_gil.syscall.restype = ctypes.c_long
_libc.pthread_self.restype = ctypes.c_void_p


class NamespaceError(OSError):
    """A namespace, mount or privilege call failed."""


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise NamespaceError(errno, f"{what}: {os.strerror(errno)}")


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


class _CloneArgs(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "flags", "pidfd", "child_tid", "parent_tid", "exit_signal", "stack", "stack_size", "tls")]


_thread_id_offset: int | None = None


def _find_thread_id_offset() -> int | None:
    """Where glibc keeps the calling thread's id in its thread descriptor (`pthread_self()`):
    the one 4-byte slot among its first 1 KiB (the descriptor is larger) that holds the thread's
    id both here and, after os.fork, in the child, whose id differs. None where no single slot
    does (another libc)."""
    me = _libc.pthread_self()
    mine = threading.get_native_id()
    candidates = [offset for offset in range(0, 1024, 4)
                  if ctypes.c_int.from_address(me + offset).value == mine]
    if not candidates:
        return None
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            child = threading.get_native_id()
            found = [o for o in candidates if ctypes.c_int.from_address(me + o).value == child]
            os.write(write_end, struct.pack("i", found[0] if len(found) == 1 else -1))
        finally:
            os._exit(0)
    os.close(write_end)
    answer = os.read(read_end, 4)
    os.close(read_end)
    os.waitpid(pid, 0)
    offset = struct.unpack("i", answer)[0] if len(answer) == 4 else -1
    return offset if offset >= 0 else None


def fork_into(flags: int) -> int:
    """os.fork, with the child in the new namespaces of `flags` (CLONE_NEW*): with CLONE_NEWPID
    it is the first process, pid 1, of its pid namespace. Like os.fork, it runs Python's fork
    hooks around the call, and glibc's cached thread id is set in the child as fork sets it
    (glibc finds a thread by that id when another thread signals it). Returns the child's pid,
    0 in the child."""
    global _thread_id_offset
    if _thread_id_offset is None:
        _thread_id_offset = _find_thread_id_offset() or 0
    args = _CloneArgs(flags=flags, exit_signal=signal.SIGCHLD)  # a child like fork's
    if _thread_id_offset:
        args.flags |= CLONE_CHILD_SETTID
        args.child_tid = _libc.pthread_self() + _thread_id_offset
    python = ctypes.pythonapi
    python.PyOS_BeforeFork()
    pid = _libc_holding_gil.syscall(ctypes.c_long(_CLONE3), ctypes.byref(args),
                                    ctypes.c_size_t(ctypes.sizeof(args)))
    if pid < 0 and ctypes.get_errno() == errno_module.ENOSYS:
        pid = _legacy_clone(args)
    if pid == 0:
        python.PyOS_AfterFork_Child()
        return 0
    error = ctypes.get_errno()
    python.PyOS_AfterFork_Parent()
    if pid < 0:
        raise NamespaceError(error, f"clone: {os.strerror(error)}")
    return int(pid)


def _legacy_clone(args: _CloneArgs) -> int:
    """clone(2) with the same flags, for kernels before 5.3 (or a seccomp profile that refuses
    clone3): -1 with errno ENOSYS on architectures not listed in `_CLONE`."""
    number, child_tid_at = _CLONE.get(platform.machine(), (0, 0))
    if not number:
        ctypes.set_errno(errno_module.ENOSYS)
        return -1
    arguments = [ctypes.c_ulong(args.flags | args.exit_signal), ctypes.c_ulong(0),
                 ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)]
    arguments[child_tid_at] = ctypes.c_ulong(args.child_tid)
    return int(_libc_holding_gil.syscall(ctypes.c_long(number), *arguments))
