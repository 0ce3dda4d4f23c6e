"""Commands that read finished results: report and compare."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.markup import escape

from restbench.cli.common import (
    FiniteFloat,
    console,
    errors,
    main,
    user_errors,
)


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

    with user_errors("interrupted; no report written"):
        written = write_report(list(folders), output, stryker_dir)
    console.print(f"report: {output} ({output.stat().st_size / 1e6:.1f} MB)", highlight=False,
                  soft_wrap=True)
    if written.stryker:
        console.print(f"mutation-testing reports: {written.stryker_root} "
                      f"({len(written.stryker)} files)", highlight=False, soft_wrap=True)
    for problem in written.problems:
        errors.print(f"[yellow]note:[/] {escape(problem)}", highlight=False, soft_wrap=True)


@main.command()
@click.argument("base", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("new", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--markdown", "markdown_file", default=None,
              type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
              help="Also write the comparison as Markdown (for a pull-request comment); "
                   "'-' prints it.")
@click.option("--fail-below", type=FiniteFloat(min=0), default=None, metavar="DELTA",
              help="Exit 1 when NEW's MS is below BASE's by more than DELTA percentage points "
                   "in any row, when NEW lacks a row of BASE, or when no row matches.")
def compare(base: Path, new: Path, markdown_file: Path | None, fail_below: float | None) -> None:
    """The MS change from run BASE to run NEW, with a paired bootstrap interval."""
    from restbench.reports.compare import (
        NO_ROW_IN_COMMON,
        changed_lines,
        compare_runs,
        comparison_table,
        markdown,
        one_sided_lines,
    )
    from restbench.reports.output import write_output

    with user_errors("interrupted"):
        comparison = compare_runs(base, new)
    console.print(comparison_table(comparison))
    unchanged = "no mutant changed its fate" if comparison.rows else \
        f"nothing compared: {NO_ROW_IN_COMMON}"
    for line in [*(changed_lines(comparison) or [unchanged]), *one_sided_lines(comparison)]:
        console.print(line, highlight=False, soft_wrap=True)
    if markdown_file is not None:
        text = markdown(comparison, fail_below)
        if str(markdown_file) == "-":
            click.echo(text, nl=False)
        else:
            with user_errors("interrupted"):
                write_output(markdown_file, text)
    if fail_below is not None:
        failed = comparison.gate_failures(fail_below)
        for failure in failed:
            errors.print(f"[red]{escape(failure.kind)}:[/] {escape(failure.reason)}",
                         highlight=False, soft_wrap=True)
        if failed:
            sys.exit(1)


