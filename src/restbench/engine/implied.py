"""Executions another test's pass makes unnecessary.

Some tests send exactly the requests another test sends and check less of the answers: the
`status-oracle` baseline makes the calls the `schema-oracle` baseline makes for the same
requirement and asserts only that no answer is a 5xx, while schema-oracle asserts that every
status is one the document declares (and every body conforms). Where no call declares a 5xx,
every set of answers schema-oracle accepts is one status-oracle accepts; the implementation is
reset before each execution, so both tests get the same answers, and where the schema-oracle
test passed, the status-oracle test passes too. `run` records that pass instead of executing
it (`--execute-all` executes it anyway).

A generator names the generators whose tests may imply its own (`implied_by`); each such test's
details name its requests (`plan`: a digest of the calls and the code that sends them) and what
it checks (`checks`). A test implies another's pass when both name the same requests and its
checks include all of the other's and more (a strict order: no two tests wait on each other).
"""

from __future__ import annotations

from restbench.store import GenerationRow

IMPLIED_REASON = "not run: implied by a stronger test's pass"
IMPLIED_OUTPUT = ("Not run: the {stronger} test sends exactly this test's requests and checks "
                  "everything this one checks, and it passed on this implementation, so this one "
                  "passes here too (restbench run --execute-all runs it anyway).")


def implies(stronger: GenerationRow, weaker: GenerationRow) -> bool:
    """Whether a pass of `stronger`'s test on an implementation means `weaker`'s passes there."""
    if stronger.status != "ok" or weaker.status != "ok" or stronger.key == weaker.key:
        return False
    plan, checks = weaker.details.get("plan"), _checks(weaker)
    stronger_checks = _checks(stronger)
    return isinstance(plan, str) and stronger.details.get("plan") == plan \
        and checks is not None and stronger_checks is not None and checks < stronger_checks


def _checks(test: GenerationRow) -> frozenset[str] | None:
    """A test's `checks` detail as a set; None unless it is a list of names (a plugin's
    details are whatever it wrote)."""
    checks = test.details.get("checks")
    if not isinstance(checks, list) or not all(isinstance(c, str) for c in checks):
        return None
    return frozenset(checks)
