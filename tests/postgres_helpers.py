"""PostgreSQL's server programs for the tests that run on it: missing, such a test fails and
says how to install them (scripts/test installs them where it may)."""

from __future__ import annotations

import pytest

from restbench.serving.postgres import PostgresError, find_programs


def require_postgres() -> None:
    try:
        find_programs()
        return
    except PostgresError as missing:
        message = str(missing)
    pytest.fail(f"{message} (scripts/test installs it when it may: root or sudo)", pytrace=False)


# A test marked so fails first thing when the programs are missing (the fixture is in conftest).
needs_postgres = pytest.mark.usefixtures("postgres_programs")
