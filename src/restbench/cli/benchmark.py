"""Commands over the benchmark: list, validate, run, serve and prices."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.markup import escape
from rich.table import Table

from restbench.benchmark.variant import Variant
from restbench.cli.common import (
    DEFAULT_GENERATORS,
    FiniteFloat,
    console,
    database_option,
    errors,
    fail,
    generator_specs,
    llm_config_option,
    main,
    not_empty,
    print_notice,
    progress,
    requirement_option,
    run_async,
    sandbox_option,
    service_option,
    split,
    timeout_option,
    workers_option,
)
from restbench.engine.events import Advanced, Event, EventHandler, PhaseStarted
from restbench.errors import RestbenchError
from restbench.execution.limits import LONGEST_TIMEOUT_S
from restbench.wording import counted

# The harness is imported by the command that needs it, not here: `restbench --help` and a
# usage error need none of it (~0.5 s of imports).
if TYPE_CHECKING:
    from restbench.benchmark import Service
    from restbench.engine.backend import ExecutionBackend

# validate keeps nothing between runs: what it finished is what it printed.
NOT_STORED = "interrupted; validate stores nothing, the reports above are all it finished"


@main.command("list")
@service_option
def list_services(services: tuple[str, ...]) -> None:
    """Show the services (built-in, or those given with -s) with their requirement and mutant
    counts, by mutant kind."""
    from restbench.benchmark import resolve_services
    from restbench.mutation import edit_problems
    from restbench.reports.table import services_table

    try:
        services = resolve_services(split(services) or None)  # type: ignore[assignment]
    except RestbenchError as exc:
        fail(str(exc))
    console.print(services_table(services))
    # The edits that do not apply, as validate would find them (without starting anything).
    problems = [problem for service in services for problem in edit_problems(service)]
    for problem in problems:
        errors.print(f"[red]problem:[/] {escape(problem)}", highlight=False, soft_wrap=True)
    if problems:
        which = counted(len(problems), "mutant or benign variant", "mutants or benign variants")
        fail(f"{which} whose edit does not apply (above)", code=1)


ray_option = click.option(
    "--ray", "ray", is_flag=False, flag_value="auto", default=None, metavar="[ADDRESS]",
    help="Execute on a Ray cluster: the address of its head (HOST:PORT), or nothing or 'auto' "
         "for the one this machine belongs to. Needs pip install 'restbench[ray]'.")


def _check_ray(ray: str | None) -> None:
    if ray is None:
        return
    if not ray.strip():  # Ray's own message for it ends at "Invalid address format:"
        raise RestbenchError(f"--ray {ray!r}: the address is empty; give the cluster's head as "
                             "HOST:PORT, or --ray alone (or auto) for the cluster this machine "
                             "belongs to")
    from restbench.cluster import require_ray

    require_ray()


@main.command()
@service_option
@requirement_option
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True,
              help="Run everything this many times and list every outcome that changes "
                   "(every execution is made: --execute-all).")
@workers_option
@timeout_option
@database_option
@sandbox_option
@ray_option
@click.option("--execute-all", is_flag=True,
              help="Run each golden test on every benign variant, also where its run on the "
                   "original never reached the code the variant changes (by default such a run "
                   "is not made: the test passes there as on the original).")
def validate(services: tuple[str, ...], requirements: tuple[str, ...], repeat: int,
             workers: int | None, timeout_s: float, database: str, no_sandbox: bool,
             ray: str | None, execute_all: bool) -> None:
    """Check that every golden test passes on the original and kills each of its mutants."""
    from restbench.benchmark import resolve_services
    from restbench.benchmark.selection import select_requirements

    try:
        chosen = select_requirements(resolve_services(split(services)),
                                     split(requirements))
        _check_ray(ray)
    except RestbenchError as exc:
        fail(str(exc))
    if repeat > 1:
        sys.exit(run_async(_validate_repeatedly(chosen, repeat, workers, timeout_s, database,
                                                not no_sandbox, ray), NOT_STORED))
    sys.exit(run_async(_validate_each(chosen, workers, timeout_s, database, not no_sandbox,
                                      ray, execute_all), NOT_STORED))


async def _validate_each(services: list[Service], workers: int | None, timeout_s: float,
                         database: str, sandbox: bool, ray: str | None, execute_all: bool) -> int:
    """The services one after the other, on one set of servers and test workers (the next
    one's executions start as the last ones of the one before run: see validate_in_turn)."""
    from restbench.engine import validate_in_turn
    from restbench.engine.validate import open_validation_backend
    from restbench.reports import validation_table

    all_ok = True
    async with open_validation_backend(workers=workers, timeout_s=timeout_s, database=database,
                                       sandbox=sandbox, ray=ray, on_event=print_notice,
                                       services=services, mark_reach=not execute_all) as backend:
        with progress() as handle:
            def events_of(service: Service) -> EventHandler:
                return lambda event: handle(_named_after(service, event))

            async for report in validate_in_turn(services, backend, database=database,
                                                 on_event=events_of, execute_all=execute_all):
                console.print(validation_table(report))
                for problem in report.problems:  # in full: the table gives their first lines
                    errors.print(f"[red]problem:[/] {escape(_without_blank_lines(problem))}",
                                 highlight=False)
                for note in report.notes:
                    errors.print(f"[yellow]note:[/] {escape(note)}", highlight=False)
                console.print(report.summary(), highlight=False)
                all_ok &= report.ok
    return 0 if all_ok else 1


def _without_blank_lines(problem: str) -> str:
    """A problem as one block: a test's reason keeps its lines (an assertion's diff), not
    pytest's blank ones between them."""
    return "\n".join(line for line in problem.splitlines() if line.strip())


def _named_after(service: Service, event: Event) -> Event:
    """A service's execute phase as a progress bar of its own, named after the service."""
    if isinstance(event, PhaseStarted | Advanced) and event.phase == "execute":
        return dataclasses.replace(event, phase=service.name)
    return event


async def _validate_repeatedly(services: list[Service], repeat: int, workers: int | None,
                               timeout_s: float, database: str, sandbox: bool,
                               ray: str | None = None) -> int:
    """`validate --repeat N`: every outcome that differs between repetitions is flaky."""
    from restbench.engine.validate import open_validation_backend

    bad = False
    async with open_validation_backend(workers=workers, timeout_s=timeout_s, database=database,
                                       sandbox=sandbox, ray=ray, on_event=print_notice,
                                       services=services, mark_reach=False) as backend:
        for service in services:
            bad |= await _repeat_one(service, repeat, database, backend)
    return 1 if bad else 0


async def _repeat_one(service: Service, repeat: int, database: str,
                      backend: ExecutionBackend) -> bool:
    """Whether any outcome of `service` changed, or any repetition found a problem."""
    from restbench.engine import validate_service
    from restbench.engine.flaky import flaky_outcomes

    reports = []
    for number in range(1, repeat + 1):
        with progress() as handle:
            reports.append(await validate_service(service, database=database, on_event=handle,
                                                  backend=backend, execute_all=True))
        console.print(f"repetition {number}/{repeat}: {reports[-1].summary()}; "
                      f"flaky so far: {len(flaky_outcomes(reports))}", highlight=False)
        for problem in reports[-1].problems:  # at once: a long run may be stopped early
            console.print(f"[red]problem in repetition {number}:[/] "
                          f"{escape(_without_blank_lines(problem))}", highlight=False)
    flaky = flaky_outcomes(reports)
    for item in flaky:
        console.print(f"[yellow]flaky:[/] {escape(item.describe())}", highlight=False)
    unsound = sum(not report.ok for report in reports)
    console.print(f"{service.name}: {counted(len(flaky), 'flaky outcome')} over {repeat} "
                  f"repetitions; {counted(unsound, 'repetition')} with problems",
                  highlight=False)
    return bool(flaky) or bool(unsound)


@main.command()
@service_option
@requirement_option
@click.option("-V", "--variant", "variants", multiple=True,
              type=click.Choice([v.value for v in Variant]),
              help="Requirement wording; repeat for several. Default: both.")
@click.option("-g", "--generator", "generators", multiple=True,
              callback=not_empty("-g/--generator", "generator",
                                 "for the default generators"),
              help="Generator name (entry point) or module:attribute; repeat or comma-separate. "
                   "Default: golden and the baselines " + ", ".join(DEFAULT_GENERATORS[1:]) + ".")
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
              help="Generate again, and ask models again, even what the result store holds.")
@llm_config_option
@workers_option
@timeout_option
@database_option
@sandbox_option
@ray_option
@click.option("--execute-all", is_flag=True,
              help="Run every test on every mutant, also where its run on the original never "
                   "reached the code the mutant changes (by default such a run is not made: "
                   "the test passes there as on the original).")
@click.option("--generation-timeout", "generation_timeout_s",
              type=FiniteFloat(min=1, max=LONGEST_TIMEOUT_S),
              default=None, metavar="SECONDS",
              help="Time limit of one generation, not counting its waits for a free model "
                   "slot; one out of time is a failed generation, tried again by a rerun. "
                   "Default: none.")
def run(services: tuple[str, ...], requirements: tuple[str, ...], variants: tuple[str, ...],
        generators: tuple[str, ...],
        generator_args: tuple[str, ...], models: tuple[str, ...], repetitions: int,
        output_dir: Path, fresh: bool, llm_config: Path | None, workers: int | None,
        timeout_s: float, database: str, no_sandbox: bool, ray: str | None,
        execute_all: bool, generation_timeout_s: float | None) -> None:
    """Generate tests, execute them on the original and every mutant, print the scores."""
    from restbench.engine.run_plan import RunConfig, plan_run
    from restbench.llm.config import CONFIG_ENV

    if llm_config is not None:
        os.environ[CONFIG_ENV] = str(llm_config.resolve())
    try:
        names = split(generators) or list(DEFAULT_GENERATORS)
        config = RunConfig(
            services=tuple(split(services)),
            variants=tuple(Variant(v) for v in variants) or (Variant.PRECISE, Variant.VAGUE),
            generators=tuple(generator_specs(names, generator_args)),
            models=tuple(split(models)), repetitions=repetitions, output_dir=output_dir,
            workers=workers, timeout_s=timeout_s, fresh=fresh, database=database,
            requirements=tuple(split(requirements)), sandbox=not no_sandbox, ray=ray,
            infer_unreached=not execute_all, generation_timeout_s=generation_timeout_s)
        _check_ray(ray)
        _check_score_files(output_dir)
        plan = plan_run(config, on_event=print_notice)  # a bad input, before the engine's imports
    except RestbenchError as exc:
        fail(str(exc))
    from restbench.engine.run import run_benchmark
    from restbench.llm.prices import usd
    from restbench.reports import score_table, write_results
    from restbench.reports.export import total_cost
    from restbench.reports.summary import generation_failure_summary

    with progress() as handle:
        result = run_async(run_benchmark(config, on_event=handle, plan=plan))
    console.print(score_table(result))
    counts = result.counts
    console.print(f"{counts['generations']} generations made, {counts['generations_reused']} "
                  f"reused; {counts['executions']} executions made, "
                  f"{counts['executions_reused']} reused"
                  + (f", {counts['executions_inferred']} not needed (the mutated code was never "
                     "reached)" if counts["executions_inferred"] else "")
                  + (f", {counts['executions_implied']} implied by a stronger test's pass"
                     if counts["executions_implied"] else ""), highlight=False)
    cost = total_cost(result)
    if cost["usd"] or cost["input_tokens"]:
        console.print(f"model calls cost ${usd(cost['usd'])} for {cost['input_tokens']} input and "
                      f"{cost['output_tokens']} output tokens", highlight=False)
    try:
        files = write_results(result, output_dir)
    except OSError as exc:  # changed during the run: the checks before it found nothing
        fail(f"{exc.filename or output_dir}: cannot write the scores: {exc.strerror or exc}; "
             f"every result is kept in {result.store_path}, which a rerun of the same command "
             "reuses")
    console.print("results: " + ", ".join(str(path) for path in files.values()), highlight=False)
    if counts["generation_failures"]:
        fail(generation_failure_summary(counts), code=1)


def _check_score_files(output_dir: Path) -> None:
    """A folder or a read-only file where the scores go is found before the run, not after."""
    from restbench.paths import check_files_writable
    from restbench.reports.export import SCORE_FILES

    check_files_writable((output_dir / name for name in SCORE_FILES.values()),
                         "the run's scores", "--output-dir")


@main.command()
@llm_config_option
def prices(llm_config: Path | None) -> None:
    """Show the price table used for cost (USD per million tokens)."""
    from restbench.llm import ModelSettings

    try:
        table = ModelSettings.load(llm_config).prices
    except RestbenchError as exc:
        fail(str(exc))
    view = Table(title="Prices, USD per million tokens", title_justify="left")
    for column in ("model", "input", "output", "also matches"):
        view.add_column(column, justify="right" if column in ("input", "output") else "left")
    for name, aliases, price in table.entries():
        view.add_row(name, f"{price.input_per_million:.2f}", f"{price.output_per_million:.2f}",
                     ", ".join(aliases))
    console.print(view)
    console.print("Dated snapshots match by prefix (gpt-5-mini-2025-08-07 is gpt-5-mini); add "
                  "or override entries with \\[prices.NAME] in the model config file.",
                  highlight=False)


@main.command()
@click.argument("service")
@click.option("--mutant", default=None, help="Serve this mutant (or benign variant) instead.")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on (0: any free port).")
@database_option
def serve(service: str, mutant: str | None, host: str, port: int, database: str) -> None:
    """Start one implementation of SERVICE in the foreground (Ctrl-C stops it)."""
    from restbench.benchmark import resolve_services
    from restbench.serving.foreground import serve_foreground

    try:
        serve_foreground(resolve_services([service])[0], mutant, host, port, database)
    except RestbenchError as exc:
        fail(str(exc))


