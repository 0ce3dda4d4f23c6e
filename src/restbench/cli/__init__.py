"""The `restbench` command: a thin layer over the library, one module per group of commands."""

from restbench.cli import (  # noqa: F401 - they register commands
    benchmark,
    evaluation,
    reporting,
    tools,
)
from restbench.cli.common import main

__all__ = ["main"]
