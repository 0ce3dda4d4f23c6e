"""`restbench setup`: installing the tools of test runners that are not Python packages."""

from __future__ import annotations

import click

from restbench.cli.common import console, fail, main
from restbench.errors import RestbenchError
from restbench.runners.setup import TOOLS, install


@main.command()
@click.argument("tool", type=click.Choice(sorted(TOOLS)), metavar="TOOL")
def setup(tool: str) -> None:
    """Install TOOL (pinned, from its package registry) where restbench's runners find it."""
    try:
        prefix = install(tool)
    except RestbenchError as exc:
        fail(str(exc))
    console.print(f"{tool} {TOOLS[tool].version} installed in {prefix}")
