"""`restbench report`: one self-contained HTML file that opens from disk with no network.

plotly's JS, the page's own script and style and the data are all inside the file; the data is
embedded once, as JSON, and the page builds its tables and drill-down from it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from plotly.offline import get_plotlyjs

from restbench import __version__
from restbench.documents import standard_json
from restbench.reports.load import Results, RunResults, load_results
from restbench.reports.output import write_output
from restbench.reports.payload import build_payload
from restbench.reports.stryker import write_stryker_reports


def _asset(name: str) -> str:
    return (resources.files("restbench.reports") / "assets" / name).read_text(encoding="utf-8")


def _script_safe(text: str) -> str:
    """JSON inside <script>: with no '<' at all, no '</script' or '<!--' in a test's output
    can end the element or change how the HTML parser reads it ('<' only occurs in strings)."""
    return text.replace("<", "\\u003c")


def render_html(results: Sequence[Results], title: str = "restbench report") -> str:
    generated = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    payload = build_payload(results, title, generated, __version__)
    data = _script_safe(standard_json(payload, separators=(",", ":"), default=str))
    page = _asset("report.html")
    # plain replacement, not str.format: the style and script are full of braces
    return (page.replace("%%TITLE%%", title)
            .replace("%%STYLE%%", _asset("report.css"))
            .replace("%%PLOTLY%%", get_plotlyjs())
            .replace("%%DATA%%", data)
            .replace("%%SCRIPT%%", _asset("report.js")))


@dataclass(frozen=True)
class ReportFiles:
    html: Path
    stryker_root: Path
    stryker: list[Path]  # the mutation-testing-report files, in stryker_root or its subfolders
    problems: list[str]  # what the report could not show of the run folders, and why


def _stryker_folders(runs: Sequence[RunResults], root: Path) -> list[tuple[RunResults, Path]]:
    """Where each run folder's mutation-testing reports go: all of `root` for one run, else a
    subfolder named after the run folder, with -2, -3, ... added where two have one name. A
    folder given twice is one run folder."""
    distinct: dict[Path, RunResults] = {}
    for run in runs:
        distinct.setdefault(run.path.resolve(), run)
    if len(distinct) == 1:
        return [(run, root) for run in distinct.values()]
    found: list[tuple[RunResults, Path]] = []
    names: set[str] = set()
    for folder, run in distinct.items():
        name = candidate = folder.name or "run"
        number = 1
        while candidate in names:
            number += 1
            candidate = f"{name}-{number}"
        names.add(candidate)
        found.append((run, root / candidate))
    return found


def _distinct(folders: Sequence[Path]) -> list[Path]:
    """A folder given twice (or by two paths) is reported once."""
    found: dict[Path, Path] = {}
    for folder in folders:
        found.setdefault(folder.resolve(), folder)
    return list(found.values())


def write_report(folders: Sequence[Path], output: Path,
                 stryker_dir: Path | None = None) -> ReportFiles:
    """Writes the HTML report and, for every run folder, its mutation-testing-report JSON files
    (in `stryker_dir`, by default a folder beside the HTML named after it)."""
    results = [load_results(folder) for folder in _distinct(folders)]
    write_output(output, render_html(results))
    stryker_root = stryker_dir or output.with_name(f"{output.stem}-mutation-testing")
    runs = [r for r in results if isinstance(r, RunResults)]
    written: list[Path] = []
    for run, target in _stryker_folders(runs, stryker_root):
        written += write_stryker_reports(run, target)
    return ReportFiles(output, stryker_root, written, [p for run in runs for p in run.problems])
