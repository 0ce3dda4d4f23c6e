"""pytest reports -> pass / fail / error."""

from restbench.execution import Outcome, TestReport, classify


def report(outcome: str, when: str = "call", assertion: bool = False) -> TestReport:
    return TestReport("t.py::test", when, outcome, assertion, "boom")


def test_all_passed_is_pass() -> None:
    assert classify([report("passed")], [], 0, False)[0] is Outcome.PASS


def test_assertion_failure_is_fail() -> None:
    assert classify([report("passed"), report("failed", assertion=True)], [], 1,
                    False)[0] is Outcome.FAIL


def test_other_exception_is_error_even_next_to_an_assertion_failure() -> None:
    reports = [report("failed", assertion=True), report("failed", assertion=False)]
    assert classify(reports, [], 1, False)[0] is Outcome.ERROR


def test_failure_in_setup_is_error() -> None:
    assert classify([report("failed", when="setup", assertion=True)], [], 1,
                    False)[0] is Outcome.ERROR


def test_collection_error_timeout_no_tests_and_all_skipped_are_errors() -> None:
    assert classify([], ["SyntaxError"], 2, False) == (Outcome.ERROR,
                                                       "collection error: SyntaxError")
    assert classify([report("passed")], [], None, True) == (Outcome.ERROR, "timed out")
    assert classify([], [], 5, False) == (Outcome.ERROR, "no test ran")
    assert classify([report("skipped")], [], 0, False)[0] is Outcome.ERROR


def test_a_bad_exit_after_passing_tests_names_the_runner_that_exited() -> None:
    """Before: a Node.js test process that exited with 7 was "pytest exited with code 7"."""
    assert classify([report("passed")], [], 7, False) == (Outcome.ERROR,
                                                           "pytest exited with code 7")
    assert classify([report("passed")], [], 7, False, "node") == (Outcome.ERROR,
                                                                   "node exited with code 7")
