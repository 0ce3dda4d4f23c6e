"""The `restbench` command: a thin layer over the library."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from restbench.benchmark import Variant, resolve_services
from restbench.engine import (
    Advanced,
    Event,
    Notice,
    PhaseStarted,
    RunConfig,
    run_benchmark,
    validate_service,
)
from restbench.errors import RestbenchError
from restbench.generators import GeneratorSpec
from restbench.reports import score_table, validation_table, write_results

# Tables are wide; when output goes to a file or a pipe, do not squeeze them into 80 columns.
console = Console(width=None if Console().is_terminal else 200)
errors = Console(stderr=True)


def _fail(message: str, code: int = 2) -> None:
    errors.print(f"[red]error:[/] {message}", markup=True, highlight=False, soft_wrap=True)
    sys.exit(code)


@contextmanager
def _progress() -> Iterator[Callable[[Event], None]]:
    """A progress bar per phase (done/total, elapsed, ETA), fed by engine events."""
    bars = Progress(TextColumn("{task.description:<9}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                    console=errors, transient=False)
    tasks: dict[str, TaskID] = {}

    def handle(event: Event) -> None:
        if isinstance(event, PhaseStarted):
            if event.phase in tasks:
                bars.update(tasks[event.phase], total=event.total)
            else:
                tasks[event.phase] = bars.add_task(event.phase, total=event.total)
        elif isinstance(event, Advanced):
            bars.advance(tasks[event.phase])
        elif isinstance(event, Notice):
            bars.console.print(f"[yellow]note:[/] {event.message}", highlight=False)

    with bars:
        yield handle


def _split(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _generator_specs(names: list[str], args: tuple[str, ...]) -> list[GeneratorSpec]:
    per_generator: dict[str, dict[str, str]] = {name: {} for name in names}
    for arg in args:
        key, sep, value = arg.partition("=")
        if not sep:
            raise RestbenchError(f"--generator-arg {arg!r}: expected KEY=VALUE or GEN.KEY=VALUE")
        target, dot, key = key.rpartition(".") if "." in key else ("", "", key)
        chosen = [target] if dot else names
        for name in chosen:
            if name not in per_generator:
                raise RestbenchError(f"--generator-arg {arg!r}: no generator '{name}' chosen")
            per_generator[name][key] = value
    return [GeneratorSpec(name, per_generator[name]) for name in names]


def _run_async(coroutine: Any) -> Any:
    try:
        return asyncio.run(coroutine)
    except RestbenchError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        _fail("interrupted; everything finished so far is saved, rerun the same command "
              "to resume", code=130)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", is_flag=True, help="Log what the harness does.")
@click.version_option(package_name="restbench")
def main(verbose: bool) -> None:
    """restbench: do generated API tests enforce the requirement they were written for?"""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


@main.command("list")
def list_services() -> None:
    """Show the built-in services with their requirement and mutant counts."""
    try:
        services = resolve_services(None)
    except RestbenchError as exc:
        _fail(str(exc))
    table = Table(title="Built-in services", title_justify="left")
    for column in ("service", "title", "requirements", "mutants", "benign variants"):
        table.add_column(column, justify="right" if column not in ("service", "title") else "left")
    for service in services:
        table.add_row(service.name, service.data.title, str(len(service.requirements)),
                      str(len(service.mutants())), str(len(service.data.benign)))
    console.print(table)


service_option = click.option(
    "-s", "--service", "services", multiple=True,
    help="Built-in service name or path to a service folder; repeat or comma-separate. "
         "Default: every built-in service.")
workers_option = click.option("-j", "--workers", type=click.IntRange(min=1), default=None,
                              help="Executions in parallel. Default: the number of CPUs.")
timeout_option = click.option("--timeout", "timeout_s", type=click.FloatRange(min=1), default=30.0,
                              show_default=True, help="Time limit of one test execution (s).")


@main.command()
@service_option
@workers_option
@timeout_option
def validate(services: tuple[str, ...], workers: int | None, timeout_s: float) -> None:
    """Check that every golden test passes on the original and kills each of its mutants."""
    try:
        chosen = resolve_services(_split(services))
    except RestbenchError as exc:
        _fail(str(exc))
    all_ok = True
    for service in chosen:
        with _progress() as handle:
            report = _run_async(validate_service(service, workers=workers, timeout_s=timeout_s,
                                                 on_event=handle))
        console.print(validation_table(report))
        for problem in report.service_problems:
            errors.print(f"[red]problem:[/] {problem}", highlight=False)
        console.print(report.summary(), highlight=False)
        all_ok &= report.ok
    sys.exit(0 if all_ok else 1)


@main.command()
@service_option
@click.option("-V", "--variant", "variants", multiple=True,
              type=click.Choice([v.value for v in Variant]),
              help="Requirement wording; repeat for several. Default: both.")
@click.option("-g", "--generator", "generators", multiple=True,
              help="Generator name (entry point) or module:attribute; repeat or comma-separate. "
                   "Default: golden.")
@click.option("-a", "--generator-arg", "generator_args", multiple=True, metavar="[GEN.]KEY=VALUE",
              help="Argument passed to the generator's constructor, e.g. files.dir=./tests.")
@click.option("-m", "--models", multiple=True,
              help="Models for generators that use one; comma-separated.")
@click.option("-r", "--runs", "--repetitions", "repetitions", type=click.IntRange(min=1),
              default=1, show_default=True, help="Repetitions of every generation.")
@click.option("-o", "--output-dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("restbench-results"), show_default=True,
              help="Where the result store, scores.json and the CSV files go.")
@click.option("--fresh", is_flag=True,
              help="Generate again even what the result store already holds.")
@workers_option
@timeout_option
def run(services: tuple[str, ...], variants: tuple[str, ...], generators: tuple[str, ...],
        generator_args: tuple[str, ...], models: tuple[str, ...], repetitions: int,
        output_dir: Path, fresh: bool, workers: int | None, timeout_s: float) -> None:
    """Generate tests, execute them on the original and every mutant, print the scores."""
    try:
        names = _split(generators) or ["golden"]
        config = RunConfig(
            services=tuple(_split(services)),
            variants=tuple(Variant(v) for v in variants) or (Variant.PRECISE, Variant.VAGUE),
            generators=tuple(_generator_specs(names, generator_args)),
            models=tuple(_split(models)), repetitions=repetitions, output_dir=output_dir,
            workers=workers, timeout_s=timeout_s, fresh=fresh)
    except RestbenchError as exc:
        _fail(str(exc))
    with _progress() as handle:
        result = _run_async(run_benchmark(config, on_event=handle))
    files = write_results(result, output_dir)
    console.print(score_table(result))
    counts = result.counts
    console.print(f"{counts['generations']} generations made, {counts['generations_reused']} "
                  f"reused; {counts['executions']} executions made, "
                  f"{counts['executions_reused']} reused", highlight=False)
    console.print("results: " + ", ".join(str(path) for path in files.values()), highlight=False)


@main.command()
@click.argument("service")
@click.option("--mutant", default=None, help="Serve this mutant (or benign variant) instead.")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
def serve(service: str, mutant: str | None, host: str, port: int) -> None:
    """Start one implementation of SERVICE in the foreground (Ctrl-C stops it)."""
    from restbench.serving.foreground import serve_foreground

    try:
        serve_foreground(resolve_services([service])[0], mutant, host, port)
    except RestbenchError as exc:
        _fail(str(exc))


if __name__ == "__main__":
    main()
