"""`restbench bench`: the harness's cost per execution against a naive harness's."""

from __future__ import annotations

import sys

import click

from restbench.cli.common import (
    console,
    database_option,
    main,
    requirement_option,
    run_async,
    sandbox_option,
    split,
)


@main.command()
@click.option("-s", "--service", default="todo", show_default=True,
              help="Built-in service whose validate executions are measured.")
@click.option("-n", "--count", type=click.IntRange(min=1), default=60, show_default=True,
              help="Executions per mode: the first N of `restbench validate -s SERVICE`.")
@requirement_option
@database_option
@sandbox_option
def bench(service: str, count: int, requirements: tuple[str, ...], database: str,
          no_sandbox: bool) -> None:
    """Time the same executions in a naive mode (a fresh server and a fresh pytest process each)
    and in restbench's own, interleaved; print medians, p95, the ratio, a breakdown and the
    peak memory of the process tree."""
    from restbench.engine.bench import BenchConfig, format_result, run_bench

    result = run_async(run_bench(BenchConfig(service, count, tuple(split(requirements)), database,
                                         not no_sandbox)),
                       "interrupted; bench prints its figures only at the end")
    console.print(format_result(result), highlight=False, markup=False)
    sys.exit(1 if result.wrong else 0)
