"""What the static-security grader reports: a kind, a line and a one-line message."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Kind(str, Enum):
    UNPARSEABLE = "unparseable"
    NETWORK = "network"            # a call to a host other than the base URL's, or to an unknown one
    SOCKET = "socket"              # raw sockets, DNS lookups, non-HTTP network protocols
    ENVIRONMENT = "environment"    # reading (or changing) environment variables
    FILE_READ = "file-read"        # reading outside the scratch directory
    FILE_WRITE = "file-write"      # writing, deleting or moving outside the scratch directory
    PROCESS = "process"            # spawning, forking or signalling processes
    DYNAMIC_CODE = "dynamic-code"  # eval/exec/compile/__import__/importlib, introspection escapes
    ASSERTION_BYPASS = "assertion-bypass"  # tests that cannot fail: trivial or swallowed asserts
    SKIP = "skip"                  # skipping or xfailing the test, or no test at all
    EXIT = "exit"                  # leaving the interpreter (sys.exit, os._exit, pytest.exit)
    MONKEYPATCH = "monkeypatch"    # replacing library or pytest behaviour at run time


@dataclass(frozen=True, order=True)
class Finding:
    line: int
    kind: Kind
    message: str

    def to_json(self) -> dict[str, object]:
        return {"line": self.line, "kind": self.kind.value, "message": self.message}

    def __str__(self) -> str:
        return f"line {self.line}: {self.kind.value}: {self.message}"
