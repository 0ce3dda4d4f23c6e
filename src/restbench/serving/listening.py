"""Which TCP ports the processes of a session listen on, read from Linux's /proc: for telling a
user whose service never answered that it listens elsewhere (a port of its own, not the one
restbench gave it)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

LISTEN = "0A"  # the TCP state in /proc/net/tcp


def _listening_sockets(proc: Path) -> dict[str, int]:
    """Socket inode -> port, for every listening TCP socket of this network namespace."""
    sockets = {}
    for table in ("tcp", "tcp6"):
        with contextlib.suppress(OSError):
            for line in (proc / "net" / table).read_text().splitlines()[1:]:
                fields = line.split()
                if len(fields) > 9 and fields[3] == LISTEN:
                    sockets[fields[9]] = int(fields[1].rsplit(":", 1)[1], 16)
    return sockets


def _session_of(stat: str) -> int | None:
    """The session id in a /proc/PID/stat line (the name, in parentheses, may hold spaces)."""
    fields = stat[stat.rfind(")") + 2:].split()
    return int(fields[3]) if len(fields) > 3 else None


def listening_ports(session: int, proc: Path = Path("/proc")) -> set[int]:
    """The ports that processes of `session` (a process started with start_new_session: its own
    pid) listen on; empty where /proc cannot tell."""
    sockets = _listening_sockets(proc)
    ports: set[int] = set()
    if not sockets:
        return ports
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError):
            if _session_of((entry / "stat").read_text()) != session:
                continue
            for fd in (entry / "fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    port = sockets.get(target[len("socket:["):-1])
                    if port is not None:
                        ports.add(port)
    return ports
