"""One-line summaries printed after a command, for what must not scroll by unnoticed."""

from __future__ import annotations

from collections.abc import Mapping


def generation_failure_summary(counts: Mapping[str, int]) -> str:
    """Why `restbench run` exits non-zero although it finished: some generations failed."""
    failed = counts.get("generation_failures", 0)
    made = counts.get("generations", 0)
    return (f"{failed} of {made} generations made in this run failed (reasons above, and in the "
            "error column of the generations table in results.sqlite3); a rerun tries them again")
