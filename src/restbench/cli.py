"""The `restbench` command: a thin layer over the library."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
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

from restbench.benchmark import Service, Variant, resolve_services
from restbench.benchmark.selection import select_requirements
from restbench.engine import (
    Advanced,
    Event,
    Notice,
    PhaseStarted,
    RunConfig,
    run_benchmark,
    validate_service,
)
from restbench.engine.flaky import flaky_outcomes
from restbench.errors import RestbenchError
from restbench.generators import GeneratorSpec
from restbench.llm.config import CONFIG_ENV
from restbench.reports import score_table, validation_table, write_results
from restbench.reports.export import total_cost
from restbench.reports.summary import generation_failure_summary
from restbench.reports.table import services_table, usd

# Tables are wide; when output goes to a file or a pipe, do not squeeze them into 80 columns.
console = Console(width=None if Console().is_terminal else 200)
errors = Console(stderr=True)


def _fail(message: str, code: int = 2) -> None:
    errors.print(f"[red]error:[/] {escape(message)}", markup=True, highlight=False, soft_wrap=True)
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
            bars.console.print(f"[yellow]note:[/] {escape(event.message)}", highlight=False)

    with bars:
        yield handle


# What `restbench run` scores when no generator is named: the reference and the no-LLM baselines.
DEFAULT_GENERATORS = ("golden", "status-oracle", "schema-oracle", "schemathesis")


@contextmanager
def _user_errors(interrupted: str) -> Iterator[None]:
    """Every problem of a bad input on its own line, exit 2; Ctrl-C says what was kept, exit 130."""
    try:
        yield
    except RestbenchError as exc:
        for line in str(exc).splitlines():
            errors.print(f"[red]error:[/] {escape(line)}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        _fail(interrupted, code=130)


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
    for chatty in ("httpcore", "hpack", "asyncio", "urllib3"):  # connection-level noise
        logging.getLogger(chatty).setLevel(logging.WARNING)


@main.command("list")
def list_services() -> None:
    """Show the built-in services with their requirement and mutant counts, by mutant kind."""
    try:
        services = resolve_services(None)
    except RestbenchError as exc:
        _fail(str(exc))
    console.print(services_table(services))


service_option = click.option(
    "-s", "--service", "services", multiple=True,
    help="Built-in service name or path to a service folder; repeat or comma-separate. "
         "Default: every built-in service.")
workers_option = click.option("-j", "--workers", type=click.IntRange(min=1), default=None,
                              help="Executions in parallel. Default: the number of CPUs.")
llm_config_option = click.option(
    "--llm-config", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
    help="TOML file naming model endpoints and prices (default: $RESTBENCH_LLM_CONFIG, else "
         "./restbench-models.toml, else OPENAI_BASE_URL/OPENAI_API_KEY).")
timeout_option = click.option("--timeout", "timeout_s", type=click.FloatRange(min=1), default=30.0,
                              show_default=True, help="Time limit of one test execution (s).")


requirement_option = click.option(
    "-R", "--requirement", "requirements", multiple=True, metavar="ID[,ID...]",
    help="Only these requirements: ids or globs such as 'FS-1*'; repeat or comma-separate.")


def _check_database(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    from restbench.serving.databases import DatabaseChoice

    try:
        DatabaseChoice.parse(value)
    except RestbenchError as exc:
        _fail(str(exc))
    return value


sandbox_option = click.option(
    "--no-sandbox", "no_sandbox", is_flag=True,
    help="Run generated tests without the sandbox (no namespaces): only for machines that "
         "cannot sandbox and tests you trust; a test can then read your files and API keys.")
database_option = click.option(
    "--db", "database", default="sqlite", show_default=True, metavar="sqlite|postgres|URL",
    callback=_check_database,
    help="Database of the services: sqlite; postgres (a throwaway PostgreSQL server the harness "
         "starts and removes); or postgresql://USER@HOST/DB, your server (a database per "
         "service server is created there and dropped).")


@main.command()
@service_option
@requirement_option
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True,
              help="Run everything this many times and list every outcome that changes.")
@workers_option
@timeout_option
@database_option
@sandbox_option
def validate(services: tuple[str, ...], requirements: tuple[str, ...], repeat: int,
             workers: int | None, timeout_s: float, database: str, no_sandbox: bool) -> None:
    """Check that every golden test passes on the original and kills each of its mutants."""
    try:
        chosen = select_requirements(resolve_services(_split(services)),
                                     _split(requirements))
    except RestbenchError as exc:
        _fail(str(exc))
    if repeat > 1:
        sys.exit(_validate_repeatedly(chosen, repeat, workers, timeout_s, database,
                                      not no_sandbox))
    all_ok = True
    for service in chosen:
        with _progress() as handle:
            report = _run_async(validate_service(service, workers=workers, timeout_s=timeout_s,
                                                 database=database, sandbox=not no_sandbox,
                                                 on_event=handle))
        console.print(validation_table(report))
        for problem in report.service_problems:
            errors.print(f"[red]problem:[/] {escape(problem)}", highlight=False)
        console.print(report.summary(), highlight=False)
        all_ok &= report.ok
    sys.exit(0 if all_ok else 1)


def _validate_repeatedly(services: list[Service], repeat: int, workers: int | None,
                         timeout_s: float, database: str, sandbox: bool) -> int:
    """`validate --repeat N`: every outcome that differs between repetitions is flaky."""
    bad = False
    for service in services:
        reports = []
        for number in range(1, repeat + 1):
            with _progress() as handle:
                reports.append(_run_async(validate_service(
                    service, workers=workers, timeout_s=timeout_s, database=database,
                    sandbox=sandbox, on_event=handle)))
            console.print(f"repetition {number}/{repeat}: {reports[-1].summary()}; "
                          f"flaky so far: {len(flaky_outcomes(reports))}", highlight=False)
            for problem in reports[-1].problems:  # at once: a long run may be stopped early
                console.print(f"[red]problem in repetition {number}:[/] {escape(problem)}",
                              highlight=False)
        flaky = flaky_outcomes(reports)
        for item in flaky:
            console.print(f"[yellow]flaky:[/] {escape(item.describe())}", highlight=False)
        unsound = sum(not report.ok for report in reports)
        console.print(f"{service.name}: {len(flaky)} flaky outcome(s) over {repeat} "
                      f"repetitions; {unsound} repetition(s) with problems", highlight=False)
        bad |= bool(flaky) or bool(unsound)
    return 1 if bad else 0


@main.command()
@service_option
@requirement_option
@click.option("-V", "--variant", "variants", multiple=True,
              type=click.Choice([v.value for v in Variant]),
              help="Requirement wording; repeat for several. Default: both.")
@click.option("-g", "--generator", "generators", multiple=True,
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
def run(services: tuple[str, ...], requirements: tuple[str, ...], variants: tuple[str, ...],
        generators: tuple[str, ...],
        generator_args: tuple[str, ...], models: tuple[str, ...], repetitions: int,
        output_dir: Path, fresh: bool, llm_config: Path | None, workers: int | None,
        timeout_s: float, database: str, no_sandbox: bool) -> None:
    """Generate tests, execute them on the original and every mutant, print the scores."""
    if llm_config is not None:
        os.environ[CONFIG_ENV] = str(llm_config.resolve())
    try:
        names = _split(generators) or list(DEFAULT_GENERATORS)
        config = RunConfig(
            services=tuple(_split(services)),
            variants=tuple(Variant(v) for v in variants) or (Variant.PRECISE, Variant.VAGUE),
            generators=tuple(_generator_specs(names, generator_args)),
            models=tuple(_split(models)), repetitions=repetitions, output_dir=output_dir,
            workers=workers, timeout_s=timeout_s, fresh=fresh, database=database,
            requirements=tuple(_split(requirements)), sandbox=not no_sandbox)
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
    cost = total_cost(result)
    if cost["usd"] or cost["input_tokens"]:
        console.print(f"model calls cost ${usd(cost['usd'])} for {cost['input_tokens']} input and "
                      f"{cost['output_tokens']} output tokens", highlight=False)
    console.print("results: " + ", ".join(str(path) for path in files.values()), highlight=False)
    if counts["generation_failures"]:
        _fail(generation_failure_summary(counts), code=1)


@main.command()
@llm_config_option
def prices(llm_config: Path | None) -> None:
    """Show the price table used for cost (USD per million tokens)."""
    from restbench.llm import ModelSettings

    try:
        table = ModelSettings.load(llm_config).prices
    except RestbenchError as exc:
        _fail(str(exc))
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
@click.option("--port", default=8000, show_default=True, type=int)
@database_option
def serve(service: str, mutant: str | None, host: str, port: int, database: str) -> None:
    """Start one implementation of SERVICE in the foreground (Ctrl-C stops it)."""
    from restbench.serving.foreground import serve_foreground

    try:
        serve_foreground(resolve_services([service])[0], mutant, host, port, database)
    except RestbenchError as exc:
        _fail(str(exc))


@main.command("agent-eval")
@click.option("-t", "--test-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="JSON test file: a suite, or a list of suites (see --schema).")
@click.option("-s", "--service", default=None,
              help="Built-in service name or service folder. Default: the suite's \"service\", "
                   "its name, or the prefix its tool names share.")
@click.option("-r", "--results-dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("agent-results"), show_default=True,
              help="Where results.json and results.csv go.")
@click.option("-a", "--agent", default="llm", show_default=True,
              help="Agent: entry-point name (llm, golden) or module:attribute.")
@click.option("--agent-arg", "agent_args", multiple=True, metavar="KEY=VALUE",
              help="Argument passed to the agent's constructor; repeat for several.")
@click.option("-m", "--model", envvar="RESTBENCH_AGENT_MODEL", default=None,
              help="Model of the llm agent (default: $RESTBENCH_AGENT_MODEL).")
@click.option("--judge-model", default=None, help="Model that grades answers for llm-judge.")
@llm_config_option
@click.option("--scoring", type=click.Choice(["exact", "fuzzy", "semantic", "llm-judge"]),
              default="fuzzy", show_default=True, help="How the answer is compared with the "
              "expected response.")
@click.option("--match-args", type=click.Choice(["exact", "subset"]), default="exact",
              show_default=True, help="subset: expected arguments must be present with their "
              "values; extra arguments are fine.")
@click.option("--max-steps", type=click.IntRange(min=1), default=10, show_default=True,
              help="Model calls the llm agent may make per case.")
@click.option("-j", "--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Cases in parallel, each on its own copy of the service.")
@database_option
@click.option("--case-timeout", "case_timeout_s", type=click.FloatRange(min=1), default=300.0,
              show_default=True, help="Seconds an agent may take for one case before it fails.")
@click.option("--schema", is_flag=True, help="Print the test file's JSON Schema and exit.")
@click.option("--list-tools", is_flag=True, help="Print the tools of --service and exit.")
def agent_eval(test_file: Path | None, service: str | None, results_dir: Path, agent: str,
               agent_args: tuple[str, ...], model: str | None, judge_model: str | None,
               llm_config: Path | None, scoring: str, match_args: str, max_steps: int,
               workers: int, database: str, case_timeout_s: float, schema: bool,
               list_tools: bool) -> None:
    """Score an API-calling agent: intents in, tool calls and answers out, on the live service."""
    from restbench.agents import EvalConfig, evaluate_agent, schema_text
    from restbench.agents.cli_support import print_tools, split_args
    from restbench.agents.results import results_table
    from restbench.agents.scoring import ArgsMatch, ResponseScoring

    if schema:
        click.echo(schema_text())
        return
    with _user_errors(f"interrupted; the finished cases are in {results_dir}"):
        if list_tools:
            if not service:
                raise RestbenchError("--list-tools needs --service")
            print_tools(console, service, database)
            return
        if test_file is None:
            raise RestbenchError("missing option -t/--test-file")
        config = EvalConfig(test_file=test_file, results_dir=results_dir, service=service,
                            agent=agent, agent_args=split_args(agent_args), model=model,
                            judge_model=judge_model, llm_config=llm_config,
                            scoring=ResponseScoring(scoring), match_args=ArgsMatch(match_args),
                            max_steps=max_steps, workers=workers, database=database,
                            case_timeout_s=case_timeout_s)
        with _progress() as handle:
            report = asyncio.run(evaluate_agent(config, on_event=handle))
    console.print(results_table(report.summary, report.results))
    console.print("results: " + ", ".join(str(path) for path in report.files.values()),
                  highlight=False)


@main.command("grade")
@click.option("-d", "--dataset", "datasets", multiple=True,
              help="Dataset folder (holding <folder>.json), its JSON file, or a shipped dataset "
                   "(prompt-injection, conventions); repeat for several.")
@click.option("-m", "--models", multiple=True,
              help="Models under test; comma-separate or repeat. Default: gpt-5-mini.")
@click.option("--grader", default=None,
              help="Model that judges the criteria. Default: $RESTBENCH_GRADER_MODEL, else "
                   "gpt-5-mini.")
@click.option("--test-ids", multiple=True, help="Only these cases; comma-separate or repeat.")
@click.option("-o", "--output-dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("grading-results"), show_default=True,
              help="Where the result files and generated-files/ go.")
@click.option("-g", "--generator", default="single-step", show_default=True,
              help="single-step, or module:attribute naming an async function with the "
                   "signature of restbench.generators.llm.write_test.")
@llm_config_option
@click.option("--fresh", is_flag=True,
              help="Ask the models again even for calls answered in an earlier run.")
@click.option("--schema", is_flag=True, help="Print the dataset JSON Schema and exit.")
def grade_command(datasets: tuple[str, ...], models: tuple[str, ...], grader: str | None,
                  test_ids: tuple[str, ...], output_dir: Path, generator: str,
                  llm_config: Path | None, fresh: bool, schema: bool) -> None:
    """Generate a test for every case of graded datasets and grade it: checks and an LLM judge."""
    from restbench.grading import GradeConfig, grade, schema_text
    from restbench.grading.table import summary_table

    if schema:
        click.echo(schema_text())
        return
    with _user_errors("interrupted; the result files of finished datasets are kept"):
        if not datasets:
            raise RestbenchError("missing option -d/--dataset (a folder, or: prompt-injection, "
                                 "conventions)")
        config = GradeConfig(datasets=tuple(datasets), models=tuple(_split(models)),
                             grader=grader, test_ids=tuple(_split(test_ids)),
                             output_dir=output_dir, generator=generator, llm_config=llm_config,
                             fresh=fresh)
        with _progress() as handle:
            report = asyncio.run(grade(config, on_event=handle))
    console.print(summary_table([run.summary() for run in report.runs]))
    for run in report.runs:
        console.print(f"results: {run.results_file}", highlight=False, soft_wrap=True)
        console.print(f"generated files: {run.generated_dir}", highlight=False, soft_wrap=True)


@main.command()
@click.argument("folders", nargs=-1, required=True,
                type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("report.html"), show_default=True, help="The HTML file to write.")
@click.option("--mutation-testing-dir", "stryker_dir", default=None,
              type=click.Path(file_okay=False, path_type=Path),
              help="Where the mutation-testing-report JSON files go [default: beside the HTML, "
                   "in OUTPUT-STEM-mutation-testing/].")
def report(folders: tuple[Path, ...], output: Path, stryker_dir: Path | None) -> None:
    """A static HTML report of run, agent-eval and grade result folders."""
    from restbench.reports.html import write_report  # plotly loads only for a report

    with _user_errors("interrupted; no report written"):
        written = write_report(list(folders), output, stryker_dir)
    console.print(f"report: {output} ({output.stat().st_size / 1e6:.1f} MB)", highlight=False,
                  soft_wrap=True)
    if written["stryker"]:
        console.print(f"mutation-testing reports: {written['stryker'][0].parent} "
                      f"({len(written['stryker'])} files)", highlight=False, soft_wrap=True)


@main.command()
@click.argument("base", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("new", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--markdown", "markdown_file", default=None,
              type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
              help="Also write the comparison as Markdown (for a pull-request comment); "
                   "'-' prints it.")
@click.option("--fail-below", type=click.FloatRange(min=0), default=None, metavar="DELTA",
              help="Exit 1 when NEW's MS is below BASE's by more than DELTA percentage points "
                   "in any row.")
def compare(base: Path, new: Path, markdown_file: Path | None, fail_below: float | None) -> None:
    """The MS change from run BASE to run NEW, with a paired bootstrap interval."""
    from restbench.reports.compare import (
        changed_lines,
        compare_runs,
        comparison_table,
        markdown,
    )

    with _user_errors("interrupted"):
        comparison = compare_runs(base, new)
    console.print(comparison_table(comparison))
    for line in changed_lines(comparison) or ["no mutant changed its fate"]:
        console.print(line, highlight=False, soft_wrap=True)
    if markdown_file is not None:
        text = markdown(comparison, fail_below)
        if str(markdown_file) == "-":
            click.echo(text, nl=False)
        else:
            markdown_file.write_text(text, encoding="utf-8")
    if fail_below is not None:
        failed = comparison.regressions(fail_below)
        for row in failed:
            errors.print(f"[red]regression:[/] {escape(row.label)}: MS "
                         f"{row.delta * 100:+.1f}pp (allowed: -{fail_below:g}pp)",
                         highlight=False)
        if failed:
            sys.exit(1)


if __name__ == "__main__":
    main()
