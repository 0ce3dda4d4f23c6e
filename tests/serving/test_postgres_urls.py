"""`--db postgresql://...` URLs: malformed ones stopped at once, odd names passed through as
they are, passwords never shown or stored. Real `restbench` processes and PostgreSQL servers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import restbench

MALFORMED = {
    "postgresql://u@h:notaport/d": "the port 'notaport' is not a number",
    "postgresql://u:p@[::1/db": "the host '[::1' has no closing ']'",
    "postgresql://u:p@h:70000/d": "the port 70000 is not from 1 to 65535",
}


@pytest.mark.parametrize("command", [
    ["validate", "-s", "fullstack", "-R", "FS-01"],
    ["serve", "fullstack", "--port", "0"],
    ["bench", "-s", "fullstack"],
    ["agent-eval", "-s", "fullstack"],
])
def test_a_malformed_url_is_one_line_before_anything_starts(command: list[str],
                                                            own_memory: Path) -> None:
    for url, problem in MALFORMED.items():
        result = restbench(*command, "--db", url, timeout=120)
        assert result.returncode == 2, result.stdout + result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: --db '"), result.stderr
        assert problem in lines[0] and ":p@" not in lines[0]
        assert list(own_memory.iterdir()) == []  # no pool was made
