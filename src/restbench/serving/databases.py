"""Which database the service servers use, and one fresh database per running server.

`--db sqlite` (the default) gives every server its own SQLite file in the pool's scratch folder.
`--db postgres` starts a throwaway PostgreSQL server on first use (see `serving.postgres`);
`--db postgresql://USER@HOST/DB` uses that server and starts nothing. On PostgreSQL every server
gets its own database, created when the server starts and dropped when it stops.
"""

from __future__ import annotations

import itertools
import os
import re
import secrets
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

from restbench.benchmark.models import Database, Service
from restbench.errors import RestbenchError
from restbench.serving.memory_folders import (
    NO_SPACE_TEXT,
    folder_full,
    full_is_one_line,
    make_held,
    memory_root,
    release,
)
from restbench.serving.originals import SQLITE_FILE
from restbench.serving.postgres import (
    PostgresError,
    ThrowawayPostgres,
    find_programs,
    server_account,
)

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

_URL = re.compile(r"^postgres(ql)?(\+\w+)?://", re.IGNORECASE)
_SERVICE_DRIVER = "postgresql+psycopg"


class DatabaseError(RestbenchError):
    """The chosen database cannot be used: not supported by a service, or not reachable."""


@dataclass(frozen=True)
class DatabaseChoice:
    """What `--db` asked for: SQLite, or PostgreSQL (a user's server at `url`, or a throwaway)."""

    kind: Database = Database.SQLITE
    url: str | None = None

    @classmethod
    def parse(cls, value: str | DatabaseChoice) -> DatabaseChoice:
        if isinstance(value, DatabaseChoice):
            return value
        text = value.strip()
        if text.lower() == "sqlite":
            return cls()
        if text.lower() in ("postgres", "postgresql"):
            return cls(Database.POSTGRESQL)
        if _URL.match(text):
            _check_url(text)
            return cls(Database.POSTGRESQL, text)
        raise DatabaseError(f"--db {value!r}: expected sqlite, postgres or a postgresql:// URL")

    def describe(self) -> str:
        if self.url is None:
            return self.kind.value if self.kind is Database.SQLITE \
                else "postgresql (a throwaway server)"
        return f"postgresql at {_without_password(self.url)}"


def require_support(service: Service, database: DatabaseChoice) -> None:
    if database.kind not in service.data.databases:
        supported = ", ".join(d.value for d in service.data.databases)
        raise DatabaseError(f"{service.data_file}: service '{service.name}' runs on {supported} "
                            f"only, not {database.kind.value} (its 'databases' list)")


class ServerDatabases(Protocol):
    """Hands out one database per server; thread-safe, blocking calls."""

    def create(self, folder: Path, label: str, template: str | None = None) -> str:
        """A fresh, empty database (or, on PostgreSQL, a copy of the database `template`);
        returns the URL the service's `create_app` gets."""
        ...

    def drop(self, url: str) -> None: ...

    def wait_for_server_exit(self) -> bool:
        """Blocks while a database server this started runs; True once it is gone, False at
        once when this started none."""
        ...

    def close(self) -> None:
        """Drops what is left and stops what was started."""
        ...


class SqliteDatabases:
    """One SQLite file per server. Where the machine has a tmpfs (/dev/shm) the files live there:
    they are scratch that nobody reads afterwards, and in memory a commit costs no fsync (on a
    busy disk, creating the schema took ~100-250 ms and every reset tens of ms)."""

    def __init__(self, in_memory: str | None = None) -> None:
        self._memory: Path | None = None
        self._held: int | None = None
        in_memory = in_memory or memory_root()
        if in_memory is not None and os.access(in_memory, os.W_OK):
            self._memory, self._held = make_held("restbench-db-", in_memory)

    @property
    def memory_folder(self) -> Path | None:
        return self._memory

    def create(self, folder: Path, label: str, template: str | None = None) -> str:
        """A folder of its own holding SQLITE_FILE (`template` is PostgreSQL's only): a server
        that reuses its service's warm app (see `serving.originals`) finds its database as that
        name in its working folder."""
        server_folder = (self._memory or folder) / label
        shutil.rmtree(server_folder, ignore_errors=True)
        with full_is_one_line(self._memory.parent if self._memory else folder):
            server_folder.mkdir(parents=True)
        return f"sqlite:///{server_folder / SQLITE_FILE}"

    def drop(self, url: str) -> None:
        """Deletes a server's folder in memory; one in the pool's scratch folder goes with that
        folder."""
        if self._memory is None:
            return
        server_folder = Path(url.removeprefix("sqlite:///")).parent
        if server_folder.parent == self._memory:
            shutil.rmtree(server_folder, ignore_errors=True)

    def wait_for_server_exit(self) -> bool:
        return False

    def close(self) -> None:
        if self._memory is not None:
            shutil.rmtree(self._memory, ignore_errors=True)
        release(self._held)
        self._held = None


class PostgresDatabases:
    """Databases on a user's PostgreSQL server, or on a throwaway one started on first use."""

    def __init__(self, url: str | None = None) -> None:
        self._user_url = url
        self._throwaway: ThrowawayPostgres | None = None
        self._admin: Any = None  # psycopg.Connection, autocommit, to the server's admin database
        self._server_url = ""
        self._force = ""
        self._strategy = ""
        self._lock = threading.Lock()
        self._names = itertools.count()
        self._created: set[str] = set()

    def _connect(self) -> Any:
        if self._admin is not None:
            return self._admin
        import psycopg

        if self._user_url is None:
            self._throwaway = ThrowawayPostgres()
            self._server_url = self._throwaway.start()
        else:
            self._server_url = self._user_url
        admin_url = _with(self._server_url, drivername="postgresql")
        try:
            self._admin = psycopg.connect(admin_url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            where = _without_password(self._user_url) if self._user_url else "the throwaway server"
            raise DatabaseError(f"--db: cannot connect to {where}: {_first_line(exc)}") from None
        # DROP ... WITH (FORCE) (PostgreSQL 13+) ends the connections a killed server left.
        if self._admin.info.server_version >= 130000:
            self._force = " WITH (FORCE)"
        # On PostgreSQL 15+ the default copy writes the whole template (~8 MB) to the WAL; as
        # fast here, FILE_COPY writes half as much. Only on our own server: its checkpoints
        # would cost a user's server more.
        if self._throwaway is not None and self._admin.info.server_version >= 150000:
            self._strategy = " STRATEGY FILE_COPY"
        return self._admin

    def connect(self) -> None:
        with self._lock:
            self._connect()

    def create(self, folder: Path, label: str, template: str | None = None) -> str:
        import psycopg
        from psycopg import sql

        with self._lock:
            admin = self._connect()
            slug = re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")[:32]
            name = f"restbench_{slug}_{next(self._names)}_{secrets.token_hex(3)}"
            statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
            if template is not None:
                statement += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
            try:
                admin.execute(statement + sql.SQL(self._strategy))
            except psycopg.Error as exc:
                self._raise_if_full(exc)
                raise DatabaseError(f"--db: cannot create database {name}: "
                                    f"{_first_line(exc)}") from None
            self._created.add(name)
        return _with(self._server_url, drivername=_SERVICE_DRIVER, database=name)

    def _raise_if_full(self, exc: Exception) -> None:
        """The throwaway server's data is in our scratch folder: a full one is the user's to
        fix, as for SQLite."""
        folder = self._throwaway.socket_dir if self._throwaway is not None else None
        if folder is not None and NO_SPACE_TEXT in str(exc):
            raise folder_full(folder.parent) from None

    def drop(self, url: str) -> None:
        from sqlalchemy.engine import make_url

        name = make_url(url).database or ""
        with self._lock:
            if name not in self._created or self._admin is None:
                return
            self._created.discard(name)
            self._drop(name)

    def _drop(self, name: str) -> None:
        import psycopg
        from psycopg import sql

        try:
            self._admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}" + self._force)
                                .format(sql.Identifier(name)))
        except psycopg.Error:
            pass  # a database left behind on a user's server is named restbench_*

    def wait_for_server_exit(self) -> bool:
        throwaway = self._throwaway
        if throwaway is None:
            return False
        throwaway.wait_for_exit()
        return True

    def close(self) -> None:
        with self._lock:
            if self._admin is not None:
                if self._throwaway is None:  # the throwaway server goes away whole
                    for name in sorted(self._created):
                        self._drop(name)
                self._created.clear()
                self._admin.close()
                self._admin = None
            if self._throwaway is not None:
                self._throwaway.stop()
                self._throwaway = None


def check_database_tools(database: DatabaseChoice) -> None:
    """What a throwaway PostgreSQL server needs (its programs, an account to run them as),
    looked for now: missing, it is one line before anything starts (progress bars, a run's
    store), not at the first server's start."""
    if database.kind is Database.POSTGRESQL and database.url is None:
        find_programs()
        server_account()


def open_databases(database: DatabaseChoice) -> ServerDatabases:
    if database.kind is Database.SQLITE:
        return SqliteDatabases()
    check_database_tools(database)
    databases = PostgresDatabases(database.url)
    if database.url is not None:
        # A user's server: an unreachable host or a wrong password is told now, before the
        # launcher, the workers and the progress bars start (the throwaway server stays lazy).
        databases.connect()
    return databases


def _check_url(text: str) -> None:
    """SQLAlchemy reads a URL's port only when the first server starts, and then a port that is
    not a number is a ValueError with a traceback; here it is the user's one-line error."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        port = make_url(text).port
    except ArgumentError as exc:
        raise DatabaseError(f"--db {_without_password(text)!r}: {exc}") from None
    except ValueError:
        raise DatabaseError(f"--db {_without_password(text)!r}: "
                            f"{_address_problem(text)}") from None
    if port is not None and not 0 < port < 65536:
        raise DatabaseError(f"--db {_without_password(text)!r}: the port {port} is not "
                            "from 1 to 65535")


def _address_problem(text: str) -> str:
    """What is wrong with the host and port of a URL that SQLAlchemy cannot read."""
    after_scheme = text.split("://", 1)[1].split("?", 1)[0]
    address = after_scheme.rpartition("@")[2].split("/", 1)[0]
    if address.startswith("[") and "]" not in address:
        return f"the host {address!r} has no closing ']' (an IPv6 address goes in [...])"
    if "," in address:
        return (f"{address!r}: one host:port only (for several, pass them as "
                "?host=H1:PORT1&host=H2:PORT2)")
    port = address.rpartition("]")[2] if address.startswith("[") else address
    return f"the port {port.partition(':')[2]!r} is not a number"


def _with(url: str, **parts: str) -> str:
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return _render(make_url(url).set(**parts))
    except (ArgumentError, ValueError) as exc:
        raise DatabaseError(f"--db {_without_password(url)!r}: {exc}") from None


def _render(url: URL) -> str:
    """`url` with every part percent-encoded, as both libpq and SQLAlchemy decode it.
    SQLAlchemy's own rendering leaves the database name as it is (libpq then refuses a space,
    and decodes a `%` in it) and writes a space in the query as `+`, which libpq keeps."""
    userinfo = ""
    if url.username is not None:
        password = f":{_encoded(url.password)}" if url.password is not None else ""
        userinfo = f"{_encoded(url.username)}{password}@"
    host = f"[{url.host}]" if url.host and ":" in url.host else url.host or ""
    port = f":{url.port}" if url.port is not None else ""
    database = f"/{_encoded(url.database)}" if url.database is not None else ""
    query = "&".join(f"{_encoded(key)}={_encoded(value)}"
                     for key, values in url.query.items()
                     for value in ((values,) if isinstance(values, str) else values))
    return f"{url.drivername}://{userinfo}{host}{port}{database}" + (f"?{query}" if query else "")


def _encoded(text: str) -> str:
    return quote(text, safe="")


def _without_password(url: str) -> str:
    """The URL as shown and stored: a password, as `user:PASSWORD@` or `?password=`, masked."""
    url = re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)
    return re.sub(r"([?&]password=)[^&#]*", r"\1***", url)


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


__all__ = ["DatabaseChoice", "DatabaseError", "PostgresError", "ServerDatabases",
           "check_database_tools", "open_databases",
           "require_support"]
