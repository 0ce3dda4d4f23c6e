"""A fork server for the tests' `restbench` commands: `python -m tests.cli_forkserver SOCKET`.

The suite runs ~300 `restbench` commands, and each fresh interpreter spent 0.6-0.7 s of CPU
importing the harness's libraries (pydantic and the benchmark's models, httpx, rich, click, yaml)
before doing anything: a tenth of the suite's CPU. This process imports them once and forks one
child per command. The child is a process of its own with the test's arguments, environment,
working folder and stdin/stdout/stderr; it runs `restbench.cli` as `python -m restbench.cli`
would, imports the CLI's modules itself (they build their consoles from the environment when
imported) and ends through the interpreter's usual exit, so atexit handlers run and its exit
status is the command's.

Protocol, on a SOCK_STREAM Unix socket, one connection per command:

    client -> {"argv": [...], "cwd": DIR, "env": {...}} (one JSON line) + fds [stdin, stdout,
              stderr]
    server -> {"pid": P}                      once the child exists
    server -> {"returncode": N}               when it has ended (negative: killed by signal N)

A client that closes its connection before the second line gets its child killed.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import pkgutil
import random
import runpy
import selectors
import signal
import socket
import sys
import tempfile
import threading
from typing import Any

# Not preloaded: the CLI itself (its consoles read the environment when imported); the programs
# that run as processes of their own (the worker template, its warm-up); the services' apps (the
# launcher imports those); what needs an optional extra (Ray, the embeddings).
NOT_PRELOADED = ("restbench.cli", "restbench.cluster", "restbench.services.",
                 "restbench.agents.embeddings", "restbench.execution.worker",
                 "restbench.execution.schemathesis_warm_up", "restbench.execution.warm_up_stub")
THIRD_PARTY = ("plotly.graph_objects", "plotly.io")  # imported by `restbench report`


def preload() -> None:
    _import_package("restbench")
    for name in THIRD_PARTY:
        importlib.import_module(name)
    assert threading.active_count() == 1, "a preloaded module started a thread: cannot fork"
    gc.collect()
    gc.freeze()  # the children leave the preloaded objects' pages alone when they collect


def _import_package(name: str) -> None:
    """`name` and its modules, recursively, but NOT_PRELOADED (`pkgutil.walk_packages` would
    import every package it goes through, the command line's too)."""
    package = importlib.import_module(name)
    for module in pkgutil.iter_modules(package.__path__, f"{name}."):
        if module.name.startswith(NOT_PRELOADED):
            continue
        if module.ispkg:
            _import_package(module.name)
        else:
            importlib.import_module(module.name)


def _receive(connection: socket.socket) -> tuple[dict[str, Any], list[int]]:
    data = b""
    fds: list[int] = []
    while not data.endswith(b"\n"):
        chunk, received, _flags, _address = socket.recv_fds(connection, 1 << 20, 3)
        if not chunk:
            raise ConnectionError("the client left before its request")
        data += chunk
        fds += received
    return json.loads(data), fds


def _send(connection: socket.socket, message: dict[str, Any]) -> None:
    try:
        connection.sendall(json.dumps(message).encode() + b"\n")
    except OSError:
        pass  # the client left; its child is killed when its connection reads as closed


def serve(listener: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """Forks a child per request. Returns only in a child, with its request."""
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(sys.stdin, selectors.EVENT_READ, "parent")
    running: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, connection)
    while True:
        for key, _events in selector.select():
            if key.data == "parent":  # stdin closed: the test process has ended
                os._exit(0)
            elif key.data == "accept":
                connection, _ = listener.accept()
                try:
                    request, fds = _receive(connection)
                except (OSError, ValueError):
                    connection.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    listener.close()
                    connection.close()
                    for pidfd, (_pid, other) in running.items():
                        os.close(pidfd)
                        other.close()
                    return request, fds
                for fd in fds:
                    os.close(fd)
                pidfd = os.pidfd_open(pid)
                running[pidfd] = (pid, connection)
                selector.register(pidfd, selectors.EVENT_READ, "child")
                selector.register(connection, selectors.EVENT_READ, ("client", pidfd))
                _send(connection, {"pid": pid})
            elif key.data == "child":
                pidfd = key.fd
                pid, connection = running.pop(pidfd)
                selector.unregister(pidfd)
                with contextlib.suppress(KeyError):
                    selector.unregister(connection)
                os.close(pidfd)
                _, status = os.waitpid(pid, 0)
                _send(connection, {"returncode": os.waitstatus_to_exitcode(status)})
                connection.close()
            else:  # the client closed its end early (a time limit, an interrupted test)
                selector.unregister(key.fileobj)
                with contextlib.suppress(ProcessLookupError):
                    signal.pidfd_send_signal(key.data[1], signal.SIGKILL)


def become_the_command(request: dict[str, Any], fds: list[int]) -> None:
    """In the child: the process that `python -m restbench.cli ARGV` would have started."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # gettempdir() caches its answer: read TMPDIR again
    random.seed()  # each command its own random state, as a new interpreter has
    sys.path[0] = os.getcwd()  # `python -m` puts the current folder first
    sys.argv = ["restbench", *request["argv"]]


def main() -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sys.argv[1])
    listener.listen(64)
    preload()
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    request, fds = serve(listener)
    become_the_command(request, fds)
    runpy.run_module("restbench.cli", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
