"""Turning mutants and benign variants into runnable copies of a service's source."""

from restbench.mutation.apply import (
    Implementation,
    apply_edit,
    check_edits,
    edit_problems,
    implementations_of,
    materialize,
)

__all__ = ["Implementation", "apply_edit", "check_edits", "edit_problems", "implementations_of",
           "materialize"]
