"""Small helpers of the `agent-eval` command that are not click plumbing."""

from __future__ import annotations

import asyncio

from rich.console import Console
from rich.table import Table

from restbench.agents.evaluate import list_tools
from restbench.agents.tools import tool_summary
from restbench.errors import RestbenchError


def split_args(values: tuple[str, ...]) -> dict[str, str]:
    args = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key:
            raise RestbenchError(f"--agent-arg {value!r}: expected KEY=VALUE")
        args[key] = rest
    return args


def print_tools(console: Console, service: str, database: str) -> None:
    """The tools of a service: names, operations and arguments (`?` marks optional ones)."""
    tools = asyncio.run(list_tools(service, database))
    table = Table(title=f"Tools of {service}", title_justify="left")
    for column in ("tool", "operation", "arguments"):
        table.add_column(column, overflow="fold")
    for tool in tools:
        summary = tool_summary(tool)
        table.add_row(summary["name"], summary["operation"], ", ".join(summary["arguments"]))
    console.print(table)
