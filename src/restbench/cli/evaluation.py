"""Commands that evaluate agents and graded suites: agent-eval and grade."""

from __future__ import annotations

from pathlib import Path

import click

from restbench.cli.common import (
    FiniteFloat,
    console,
    database_option,
    fail,
    llm_config_option,
    main,
    not_empty,
    progress,
    run_stoppable,
    split,
    user_errors,
)
from restbench.errors import RestbenchError
from restbench.execution.limits import LONGEST_TIMEOUT_S, MOST_WORKERS


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
@click.option("-j", "--workers", type=click.IntRange(min=1, max=MOST_WORKERS), default=1,
              show_default=True,
              help="Cases in parallel, each on its own copy of the service.")
@database_option
@click.option("--case-timeout", "case_timeout_s",
              type=FiniteFloat(min=1, max=LONGEST_TIMEOUT_S), default=300.0,
              show_default=True, help="Seconds an agent may take for one case before it fails.")
@click.option("--fresh", is_flag=True,
              help="Run every case, also those that results.json in --results-dir holds "
                   "finished with the same settings, and ask the models again, also what "
                   "model-calls.sqlite3 there holds.")
@click.option("--schema", is_flag=True, help="Print the test file's JSON Schema and exit.")
@click.option("--list-tools", is_flag=True, help="Print the tools of --service and exit.")
def agent_eval(test_file: Path | None, service: str | None, results_dir: Path, agent: str,
               agent_args: tuple[str, ...], model: str | None, judge_model: str | None,
               llm_config: Path | None, scoring: str, match_args: str, max_steps: int,
               workers: int, database: str, case_timeout_s: float, fresh: bool, schema: bool,
               list_tools: bool) -> None:
    """Score an API-calling agent: intents in, tool calls and answers out, on the live service."""
    from restbench.agents import EvalConfig, evaluate_agent, schema_text
    from restbench.agents.cli_support import print_tools, split_args
    from restbench.agents.results import results_table
    from restbench.agents.scoring import ArgsMatch, ResponseScoring

    if schema:
        click.echo(schema_text())
        return
    with user_errors(f"interrupted; the finished cases are in {results_dir}"):
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
                            case_timeout_s=case_timeout_s, fresh=fresh)
        with progress() as handle:
            report = run_stoppable(evaluate_agent(config, on_event=handle))
    console.print(results_table(report.summary, report.results))
    console.print("results: " + ", ".join(str(path) for path in report.files.values()),
                  highlight=False)
    # As `run` does for failed generations: a case that failed for an error (not one that
    # merely scored low) makes the command fail, once every result is written.
    if report.summary["errors"]:
        fail(f"{report.summary['errors']} of {report.summary['total_tests']} cases ended in an "
             f"error (reasons above, and in the error column of {report.files['csv']})", code=1)


@main.command("grade")
@click.option("-d", "--dataset", "datasets", multiple=True,
              help="Dataset folder (holding <folder>.json), its JSON file, or a shipped dataset "
                   "(prompt-injection, conventions); repeat for several.")
@click.option("-m", "--models", multiple=True,
              callback=not_empty("-m/--models", "model", "for the default, gpt-5-mini"),
              help="Models under test; comma-separate or repeat. Default: gpt-5-mini.")
@click.option("--grader", default=None,
              help="Model that judges the criteria. Default: $RESTBENCH_GRADER_MODEL, else "
                   "gpt-5-mini.")
@click.option("--test-ids", multiple=True, callback=not_empty("--test-ids", "case"),
              help="Only these cases; comma-separate or repeat.")
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
    with user_errors("interrupted; the result files keep every case graded so far"):
        if not datasets:
            raise RestbenchError("missing option -d/--dataset (a folder, or: prompt-injection, "
                                 "conventions)")
        if grader is not None and not grader.strip():
            raise RestbenchError(f"--grader {grader!r}: names no model (it is empty); leave "
                                 "--grader out for $RESTBENCH_GRADER_MODEL, else gpt-5-mini")
        config = GradeConfig(datasets=tuple(datasets), models=tuple(split(models)),
                             grader=grader, test_ids=tuple(split(test_ids)),
                             output_dir=output_dir, generator=generator, llm_config=llm_config,
                             fresh=fresh)
        with progress() as handle:
            report = run_stoppable(grade(config, on_event=handle))
    console.print(summary_table([run.summary() for run in report.runs]))
    for run in report.runs:
        console.print(f"results: {run.results_file}", highlight=False, soft_wrap=True)
        console.print(f"generated files: {run.generated_dir}", highlight=False, soft_wrap=True)
    # As `run` does for failed generations: a case that could not be graded (a model not
    # reached, a judge without a usable answer) makes the command fail, once everything is
    # written; a low score does not.
    cases = [case for run in report.runs for case in run.cases]
    incomplete = [case for case in cases if case.status != "graded"]
    if incomplete:
        partly = sum(case.partly_graded for case in incomplete)
        fail(f"{len(incomplete)} of {len(cases)} cases could not be graded in full "
             f"({len(incomplete) - partly} ungraded, {partly} partly graded; reasons above, and "
             "in the result files)", code=1)


