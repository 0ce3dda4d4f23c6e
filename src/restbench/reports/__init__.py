"""Presenting results: the terminal table and the JSON/CSV files."""

from restbench.reports.export import write_results
from restbench.reports.table import score_table, validation_table

__all__ = ["score_table", "validation_table", "write_results"]
