"""Mapping a start failure in the harness's copy back to the user's service files."""

from __future__ import annotations

from pathlib import Path

from restbench.benchmark import load_service
from restbench.mutation import implementations_of
from restbench.mutation.start_errors import start_failure

MINI = Path(__file__).parents[1] / "fixtures" / "mini"


def test_the_innermost_frame_in_the_copy_is_named_as_the_users_file(tmp_path: Path) -> None:
    mutant = implementations_of(load_service(MINI))["MINI-01-M1"]
    copy = tmp_path / "servers" / "mini" / "MINI-01-M1"
    log = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.11/site-packages/restbench/serving/launcher.py", line 70, in x\n'
        f'  File "{copy}/app/main.py", line 12, in create_app\n'
        '  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads\n'
        "ValueError: boom\n")
    message = start_failure("mini MINI-01-M1", "ValueError: boom", log, copy, mutant)
    assert message == (f"mini MINI-01-M1 did not start: ValueError: boom at {MINI}/app/main.py:12"
                       " (with the edit of mutant MINI-01-M1 applied)")


def test_a_syntax_error_names_the_users_file_in_its_text_too(tmp_path: Path) -> None:
    original = implementations_of(load_service(MINI))["original"]
    copy = tmp_path / "copy"
    error = f"SyntaxError: invalid syntax ({copy}/app/main.py, line 3)"
    message = start_failure("mini original", error, f'  File "{copy}/app/main.py", line 3\n',
                            copy, original)
    assert message == (f"mini original did not start: SyntaxError: invalid syntax "
                       f"({MINI}/app/main.py, line 3) at {MINI}/app/main.py:3")
