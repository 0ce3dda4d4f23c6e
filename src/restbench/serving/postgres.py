"""A throwaway PostgreSQL server for one harness run.

`ThrowawayPostgres.start()` starts a supervisor process (`python -m restbench.serving.postgres`)
that runs initdb into a fresh temporary folder, starts `postgres` listening only on a Unix socket
in that folder, answers one JSON line and then waits for its standard input to close. Whatever
closes it (an orderly stop, an exception, Ctrl-C, a SIGKILL of the harness), the supervisor then
stops the server (`pg_ctl stop -m immediate`, then a kill) and deletes the folder. Should the
supervisor itself be killed, the server gets SIGQUIT (PR_SET_PDEATHSIG) and shuts down at once,
and the folder, which the supervisor's lock held (see `memory_folders`), goes with the next
pool's sweep.

PostgreSQL refuses to run as root; as root the server runs as the `postgres` system user.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import secrets
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self
from urllib.parse import quote

from restbench.errors import RestbenchError
from restbench.execution.limits import SERVER_FILE_SIZE_LIMIT_BYTES, limit_file_size
from restbench.execution.namespaces import die_with_parent
from restbench.serving.memory_folders import (
    NO_SPACE_TEXT,
    folder_full,
    is_no_space,
    make_held,
    memory_root,
    passed_on,
    release,
    sweep_orphans,
)

PROGRAMS = ("initdb", "pg_ctl", "postgres")
FOLDER_PREFIX = "restbench-pg-"
DEBIAN_PROGRAM_DIRS = Path("/usr/lib/postgresql")
PROGRAMS_VARIABLE = "RESTBENCH_POSTGRES_BIN"  # the programs' folder, when not the one found
SERVER_ACCOUNT = "postgres"
SUPERUSER = "postgres"
START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 15.0
# A Unix socket's path must fit in 108 bytes; the socket file is <folder>/.s.PGSQL.5432.
SOCKET_FOLDER_MAX = 90
# Durability is worth nothing for data deleted after the run; no TCP listener at all.
SETTINGS = {
    "listen_addresses": "",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "400",
    "shared_buffers": "64MB",
    "max_wal_size": "1GB",
    "checkpoint_timeout": "1h",
    "log_min_messages": "warning",
}


class PostgresError(RestbenchError):
    """A throwaway PostgreSQL server cannot be found, started or reached."""


def find_programs() -> Path:
    """The folder holding initdb, pg_ctl and postgres: $RESTBENCH_POSTGRES_BIN when set (and
    only there), else from PATH, else Debian's newest."""
    chosen = os.environ.get(PROGRAMS_VARIABLE)
    if chosen:
        missing = [p for p in PROGRAMS if not os.access(Path(chosen) / p, os.X_OK)]
        if missing:
            raise PostgresError(f"{PROGRAMS_VARIABLE}={chosen}: no {', '.join(missing)} there "
                                "(it names the folder holding initdb, pg_ctl and postgres)")
        return Path(chosen)
    candidates = []
    on_path = shutil.which("initdb")
    if on_path:
        candidates += [Path(on_path).parent, Path(on_path).resolve().parent]
    versions = sorted(DEBIAN_PROGRAM_DIRS.glob("*/bin"), reverse=True,
                      key=lambda folder: (folder.parent.name.isdigit(),
                                          int(folder.parent.name)
                                          if folder.parent.name.isdigit() else 0))
    candidates += versions
    for folder in candidates:
        if all(os.access(folder / program, os.X_OK) for program in PROGRAMS):
            return folder
    raise PostgresError("PostgreSQL server programs (initdb, pg_ctl, postgres) not found on PATH "
                        f"or in {DEBIAN_PROGRAM_DIRS}/*/bin; install PostgreSQL (Debian: apt-get "
                        "install postgresql) or pass --db postgresql://USER@HOST/DB")


def server_account() -> tuple[int, int] | None:
    """The (uid, gid) the server must run as, or None to run it as ourselves."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(SERVER_ACCOUNT)
    except KeyError:
        entry = None
    if entry is None or entry.pw_uid == 0:
        raise PostgresError(f"PostgreSQL refuses to run as root and there is no non-root "
                            f"'{SERVER_ACCOUNT}' system user to run it as; create one (useradd "
                            "--system postgres) or run restbench as a normal user")
    return entry.pw_uid, entry.pw_gid


# ----- the supervisor process -----


def _child_setup(account: tuple[int, int] | None, parent: int, die_signal: int | None = None,
                 file_size_limit: int | None = None) -> Callable[[], None]:
    def setup() -> None:
        if file_size_limit is not None:
            limit_file_size(file_size_limit)
        if account is not None:
            os.setgroups([])
            os.setgid(account[1])
            os.setuid(account[0])
        if die_signal is not None:
            # After setuid: a change of credentials clears the parent-death signal.
            die_with_parent(die_signal)
            if os.getppid() != parent:
                os._exit(1)
    return setup


def _run_as(account: tuple[int, int] | None, command: list[str], cwd: Path,
            timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, env=_server_env(), capture_output=True, text=True,
                          timeout=timeout, preexec_fn=_child_setup(account, os.getpid()),
                          check=False)


def _server_env() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "LANG": "C"}


def _tail(text: str, limit: int = 400) -> str:
    return " | ".join(text.strip()[-limit:].splitlines()[-4:])


def _reachable(folder: Path, account: tuple[int, int] | None) -> bool:
    """Whether the server account may pass through `folder` and each folder above it."""
    if account is None:
        return True
    for part in (folder, *folder.parents):
        info = part.stat()
        bit = stat.S_IXUSR if info.st_uid == account[0] else \
            stat.S_IXGRP if info.st_gid == account[1] else stat.S_IXOTH
        if not info.st_mode & bit:
            return False
    return True


def _data_parent(account: tuple[int, int] | None) -> str:
    """Where the server's folder goes: in memory where the machine has a tmpfs (with the data
    files on disk, CREATE DATABASE, a checkpoint and a copy of the template, took ~0.7 s on a
    busy machine), else TMPDIR, else /tmp; one the server's account can reach, with room for
    the socket's name."""
    in_memory = memory_root()
    parent = in_memory if in_memory is not None \
        and _reachable(Path(in_memory), account) else tempfile.gettempdir()
    if len(parent) + 20 > SOCKET_FOLDER_MAX or not _reachable(Path(parent), account):
        parent = "/tmp"
    return parent


def sweep_left_servers() -> list[Path]:
    """Removes the folders that killed supervisors left on disk (TMPDIR, /tmp) and that no live
    one holds; those in memory go with the sweep of the memory folder."""
    removed = []
    for parent in dict.fromkeys((tempfile.gettempdir(), "/tmp")):
        removed += sweep_orphans(parent, prefixes=(FOLDER_PREFIX,))
    return removed


def _ready(data: Path) -> bool:
    """postmaster.pid's status line says `ready` once connections are accepted."""
    try:
        lines = (data / "postmaster.pid").read_text().splitlines()
    except OSError:
        return False
    return len(lines) >= 8 and lines[7].strip() == "ready"


class _Supervised:
    """The server the supervisor runs: its folder, its process, how to stop it."""

    def __init__(self) -> None:
        self.programs = find_programs()
        self.account = server_account()
        # Held while the supervisor lives, as the harness's other scratch folders are: should the
        # supervisor be killed, the next pool's sweep removes it (see memory_folders).
        self.folder, self._held = make_held(FOLDER_PREFIX, _data_parent(self.account))
        self.data = self.folder / "data"
        self.log = self.folder / "server.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.password = secrets.token_urlsafe(24)

    def start(self) -> None:
        if self.account is not None:
            os.chown(self.folder, *self.account)
        # Password authentication, also on the socket: only the harness and the servers it
        # starts know the password (tests never see this folder; the password is defence in
        # depth, and keeps other local users out).
        password_file = self.folder / "password"
        password_file.write_text(self.password + "\n")
        if self.account is not None:
            os.chown(password_file, *self.account)
        password_file.chmod(0o600)
        initdb = _run_as(self.account, [str(self.programs / "initdb"), "-D", str(self.data),
                                        "-U", SUPERUSER, "--auth=scram-sha-256",
                                        f"--pwfile={password_file}", "--encoding=UTF8",
                                        "--no-locale", "--no-sync"],
                         self.folder, START_TIMEOUT_S)
        password_file.unlink()
        if initdb.returncode != 0:
            raise PostgresError(f"initdb failed: {_tail(initdb.stderr or initdb.stdout)}")
        options = [part for key, value in SETTINGS.items() for part in ("-c", f"{key}={value}")]
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [str(self.programs / "postgres"), "-D", str(self.data), "-k", str(self.folder),
                 *options],
                cwd=self.folder, env=_server_env(), stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT,  # the supervisor has one thread: preexec_fn is safe
                # A test that stores ever more through a service gets its error once a table's
                # file reaches the limit, instead of filling the machine's memory.
                preexec_fn=_child_setup(self.account, os.getpid(), signal.SIGQUIT,  # noqa: PLW1509
                                        SERVER_FILE_SIZE_LIMIT_BYTES))
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _ready(self.data):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise PostgresError(f"postgres did not start: "
                                    f"{_tail(self.log.read_text(errors='replace'))}")
            time.sleep(0.02)

    def stop(self) -> None:
        process = self.process
        if process is not None and process.poll() is None:
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                _run_as(self.account, [str(self.programs / "pg_ctl"), "stop", "-D",
                                       str(self.data), "-m", "immediate", "-w", "-t",
                                       str(int(STOP_TIMEOUT_S))], self.folder, STOP_TIMEOUT_S + 5)
            try:
                process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)
        release(self._held)


def _wait_for_eof_or_exit(process: subprocess.Popen[bytes] | None) -> None:
    while True:
        ready, _, _ = select.select([sys.stdin.fileno()], [], [], 1.0)
        if ready and not os.read(sys.stdin.fileno(), 4096):
            return
        if process is not None and process.poll() is not None:
            return


def _raise_exit(signum: int, _frame: Any) -> None:
    raise SystemExit(128 + signum)


def main() -> None:
    # Ctrl-C reaches the harness, which then closes our stdin; a plain kill still cleans up.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _raise_exit)
    signal.signal(signal.SIGHUP, _raise_exit)
    supervised: _Supervised | None = None
    try:
        try:
            supervised = _Supervised()
            supervised.start()
        except BaseException as exc:  # noqa: BLE001 - every failure must reach the harness
            message = str(exc) if isinstance(exc, PostgresError) else f"{type(exc).__name__}: {exc}"
            if is_no_space(exc) or NO_SPACE_TEXT in message:  # ours, initdb's or the server's
                message = str(folder_full(supervised.folder.parent if supervised is not None
                                          else _data_parent(server_account())))
            print(json.dumps({"error": message}), flush=True)
            return
        print(json.dumps({"socket_dir": str(supervised.folder), "user": SUPERUSER,
                          "password": supervised.password,
                          "pid": supervised.process.pid if supervised.process else None}),
              flush=True)
        _wait_for_eof_or_exit(supervised.process)
    finally:
        if supervised is not None:
            supervised.stop()


# ----- the harness side -----


class ThrowawayPostgres:
    """A PostgreSQL server that lives as long as this object is started (or its process)."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None
        self.socket_dir: Path | None = None
        self._password = ""

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """A libpq URL for the superuser's `postgres` database, over the Unix socket."""
        if self.socket_dir is None:
            raise PostgresError("the throwaway PostgreSQL server is not running")
        # Encoded: the memory folder's path may hold a space (libpq decodes %20, keeps a `+`).
        password, socket_dir = quote(self._password, safe=""), quote(str(self.socket_dir))
        return f"postgresql://{SUPERUSER}:{password}@/postgres?host={socket_dir}"

    def start(self) -> str:
        from restbench.execution.environment import clean_environment

        find_programs()  # fail here, with the one-line error, before any process starts
        self._process = subprocess.Popen(
            [sys.executable, "-m", "restbench.serving.postgres"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            env=clean_environment(TMPDIR=tempfile.gettempdir(), **passed_on(),
                                  **{name: value for name in (PROGRAMS_VARIABLE,)
                                     if (value := os.environ.get(name))}),
            start_new_session=True)
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        try:
            answer = json.loads(line) if line else {"error": "the supervisor exited"}
        except json.JSONDecodeError:
            answer = {"error": f"unreadable answer {line[:200]!r}"}
        if "socket_dir" not in answer:
            self.stop()
            raise PostgresError(f"throwaway PostgreSQL server: {answer.get('error')}")
        self.socket_dir = Path(answer["socket_dir"])
        self._password = str(answer.get("password", ""))
        return self.url

    def wait_for_exit(self) -> None:
        """Blocks until the supervisor exits: stopped, killed, or its server died."""
        process = self._process
        if process is not None:
            process.wait()

    def stop(self) -> None:
        """Stops the server and deletes its folder; waits until both are done."""
        process, self._process = self._process, None
        self.socket_dir = None
        if process is None:
            return
        with contextlib.suppress(OSError):
            if process.stdin is not None:
                process.stdin.close()
        try:
            process.wait(timeout=STOP_TIMEOUT_S * 3)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


if __name__ == "__main__":
    main()
