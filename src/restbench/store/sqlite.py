"""A SQLite file of generations and executions.

Each row is written in its own transaction as soon as it exists, so a run killed at any point
keeps everything finished before, and a rerun finds it by key instead of redoing it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from restbench.errors import RestbenchError
from restbench.paths import file_in_the_way, not_writable

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at REAL NOT NULL,
    finished_at REAL,
    config TEXT NOT NULL,
    restbench_version TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS generations (
    key TEXT PRIMARY KEY,
    generator TEXT NOT NULL,
    generator_spec TEXT NOT NULL,
    model TEXT NOT NULL,
    service TEXT NOT NULL,
    requirement TEXT NOT NULL,
    variant TEXT NOT NULL,
    repetition INTEGER NOT NULL,
    target TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT NOT NULL,
    code TEXT NOT NULL,
    code_sha TEXT NOT NULL,
    cost_usd REAL NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    wall_s REAL NOT NULL,
    details TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS executions (
    key TEXT PRIMARY KEY,
    code_sha TEXT NOT NULL,
    service TEXT NOT NULL,
    implementation TEXT NOT NULL,
    implementation_fingerprint TEXT NOT NULL,
    outcome TEXT NOT NULL,
    reason TEXT NOT NULL,
    duration_s REAL NOT NULL,
    output TEXT NOT NULL,
    tests TEXT NOT NULL,
    exchanges TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS reach (
    key TEXT PRIMARY KEY,  -- an execution's key: a test on an original
    unreached TEXT NOT NULL  -- the mutants and benign variants whose edit it never ran
);
CREATE TABLE IF NOT EXISTS llm_calls (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created_at REAL NOT NULL
);
"""


def digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


@dataclass(frozen=True)
class GenerationRow:
    key: str
    generator: str
    generator_spec: dict[str, Any]
    model: str
    service: str
    requirement: str
    variant: str
    repetition: int
    target: str
    status: str  # ok | error
    error: str
    code: str
    cost_usd: float
    input_tokens: int
    output_tokens: int
    wall_s: float
    details: dict[str, Any]

    @property
    def code_sha(self) -> str:
        return hashlib.sha256(self.code.encode()).hexdigest()


@dataclass(frozen=True)
class ExecutionRow:
    key: str
    code_sha: str
    service: str
    implementation: str
    implementation_fingerprint: str
    outcome: str
    reason: str
    duration_s: float
    output: str
    tests: list[dict[str, Any]]
    exchanges: list[dict[str, Any]]


def _unmakeable(path: Path, exc: OSError) -> str:
    blocker = file_in_the_way(path)
    if blocker is not None:
        return f"{path}: cannot make its folder: {blocker} is a file, not a folder"
    return f"{path}: cannot make its folder {path.parent}: {exc.strerror}"


def _unwritable(path: Path) -> str | None:
    """Why the store at `path` could be read but not written (SQLite would open a read-only
    file and fail only at the first result saved)."""
    if path.is_dir():
        return f"{path}: is a folder, not a result store"
    if not os.access(path.parent, os.W_OK | os.X_OK):  # WAL keeps two files beside the store
        return f"{path}: cannot write the result store: {path.parent} is not writable"
    if (why := not_writable(path)) is not None:
        return f"{path}: cannot write the result store: {why}"
    return None


@cache
def _store_columns() -> dict[str, list[str]]:
    """Table -> its columns, in a store made by this version."""
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        db.executescript(SCHEMA)
        return _tables(db)


def _tables(db: sqlite3.Connection) -> dict[str, list[str]]:
    names = [name for (name,) in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    return {name: [column[1] for column in db.execute(
                "PRAGMA table_info('{}')".format(name.replace("'", "''")))]
            for name in names}


def _foreign_tables(db: sqlite3.Connection) -> str | None:
    """What tells an existing database from a result store, before anything changes in it (a
    table of another shape failed at the first result saved; another program's database got
    the store's tables added)."""
    ours = _store_columns()
    for name, columns in _tables(db).items():
        if name not in ours:
            return f"it holds a table {name!r} that a result store has not"
        if columns != ours[name]:
            return f"its table {name!r} has the columns {', '.join(columns)}"
    return None


class ResultStore:
    def __init__(self, path: Path) -> None:
        """Opens (or makes) the store; a path that cannot hold one is a RestbenchError naming
        it and why, raised before anything is stored."""
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RestbenchError(_unmakeable(path, exc)) from None
        problem = _unwritable(path)
        if problem is not None:
            raise RestbenchError(problem)
        db = None
        try:
            db = sqlite3.connect(path, isolation_level=None)
            # SQLite reads the file's header here: a file that is not a database, or a
            # truncated one, fails now rather than at the first result saved.
            if (foreign := _foreign_tables(db)) is not None:
                db.close()
                raise RestbenchError(f"{path}: not a restbench result store ({foreign}); move "
                                     "it away, or choose another output folder")
            db.execute("PRAGMA journal_mode=WAL")
            # One commit per execution: with WAL, NORMAL syncs at checkpoints, not at each
            # commit (0.04 vs 0.18 ms an insert here; a laptop's disk can take milliseconds per
            # sync). A crash of restbench loses nothing; a power cut can lose the last results,
            # which a resumed run then executes again.
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(SCHEMA)
        except sqlite3.Error as exc:
            if db is not None:
                db.close()
            raise RestbenchError(f"{path}: not a usable result store ({exc}); move it away, "
                                 "or choose another output folder") from None
        self._db = db

    def close(self) -> None:
        self._db.close()

    def start_run(self, config: dict[str, Any], version: str) -> int:
        cursor = self._db.execute(
            "INSERT INTO runs (started_at, config, restbench_version) VALUES (?, ?, ?)",
            (time.time(), json.dumps(config, sort_keys=True), version))
        return int(cursor.lastrowid or 0)

    def finish_run(self, run_id: int) -> None:
        self._db.execute("UPDATE runs SET finished_at = ? WHERE id = ?", (time.time(), run_id))

    def generation(self, key: str) -> GenerationRow | None:
        row = self._db.execute(
            "SELECT key, generator, generator_spec, model, service, requirement, variant, "
            "repetition, target, status, error, code, cost_usd, input_tokens, output_tokens, "
            "wall_s, details FROM generations WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        values = list(row)
        values[2] = json.loads(values[2])
        values[16] = json.loads(values[16])
        return GenerationRow(*values)

    def save_generation(self, row: GenerationRow) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO generations VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row.key, row.generator, json.dumps(row.generator_spec, sort_keys=True), row.model,
             row.service, row.requirement, row.variant, row.repetition, row.target, row.status,
             row.error, row.code, row.code_sha, row.cost_usd, row.input_tokens,
             row.output_tokens, row.wall_s, json.dumps(row.details, default=str), time.time()))

    def outcome(self, key: str) -> str | None:
        """Only the stored execution's outcome (scoring needs no output or exchanges)."""
        row = self._db.execute("SELECT outcome FROM executions WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def execution(self, key: str) -> ExecutionRow | None:
        row = self._db.execute(
            "SELECT key, code_sha, service, implementation, implementation_fingerprint, "
            "outcome, reason, duration_s, output, tests, exchanges FROM executions "
            "WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        values = list(row)
        values[9] = json.loads(values[9])
        values[10] = json.loads(values[10])
        return ExecutionRow(*values)

    def save_execution(self, row: ExecutionRow) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO executions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row.key, row.code_sha, row.service, row.implementation,
             row.implementation_fingerprint, row.outcome, row.reason, row.duration_s,
             row.output, json.dumps(row.tests), json.dumps(row.exchanges), time.time()))

    def unreached(self, key: str) -> tuple[str, ...]:
        """The edits the execution `key` (a test on an original) never reached; () if unknown."""
        row = self._db.execute("SELECT unreached FROM reach WHERE key = ?", (key,)).fetchone()
        return () if row is None else tuple(json.loads(row[0]))

    def save_unreached(self, key: str, implementations: tuple[str, ...]) -> None:
        self._db.execute("INSERT OR REPLACE INTO reach VALUES (?, ?)",
                         (key, json.dumps(list(implementations))))

    def llm_call(self, key: str) -> dict[str, Any] | None:
        """A model's stored answer to an identical earlier request (the request holds no key)."""
        row = self._db.execute("SELECT response FROM llm_calls WHERE key = ?", (key,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def llm_calls(self) -> dict[str, dict[str, Any]]:
        """Every stored answer by key (for Ray nodes, which cannot read this file)."""
        return {key: dict(json.loads(response))
                for key, response in self._db.execute("SELECT key, response FROM llm_calls")}

    def save_llm_call(self, key: str, model: str, response: dict[str, Any]) -> None:
        self._db.execute("INSERT OR REPLACE INTO llm_calls VALUES (?, ?, ?, ?)",
                         (key, model, json.dumps(response), time.time()))
