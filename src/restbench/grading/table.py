"""The summary table printed at the end of `restbench grade`."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from restbench.grading.results import SummaryRow
from restbench.llm.prices import usd

COLUMNS = ("dataset", "model", "cases", "graded", "partly graded", "output tokens", "cost (USD)",
           "average score")


def summary_table(rows: list[SummaryRow]) -> Table:
    table = Table(title="Graded evaluation", title_justify="left")
    for column in COLUMNS:
        table.add_column(column, justify="left" if column in ("dataset", "model") else "right")
    for row in rows:
        average = f"{row.average_score:.3f}" if row.average_score is not None else "-"
        table.add_row(escape(row.dataset), escape(row.model), str(row.cases), str(row.graded),
                      str(row.partly_graded), str(row.output_tokens), usd(row.cost_usd), average)
    return table
