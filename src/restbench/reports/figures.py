"""The report's figures as plotly figure specifications (data and layout, JSON-ready).

Each figure is built from the score rows (one per run x generator x model x service x variant)
and the per-requirement rows of scores.json; the page draws them with plotly's bundled JS.
A figure with nothing to show says so inside itself instead of disappearing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

VARIANT_COLOURS = {"precise": "#1f77b4", "vague": "#ff7f0e"}
SPREAD_ALL_POINTS = 1500
FIGURE_IDS = ("ms-by-model", "valid-vs-mutated", "ms-vs-cost", "validity", "spread")


def model_label(row: dict[str, Any], with_run: bool) -> str:
    name = row["generator"] if row["model"] == "-" else f"{row['generator']} / {row['model']}"
    return f"{row['run']}: {name}" if with_run else name


def headline_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per run x generator x model x variant: the `all` row when several services ran."""
    with_all = {(r["run"], r["generator"], r["model"], r["variant"])
                for r in rows if r["service"] == "all"}
    return [r for r in rows if r["service"] == "all"
            or (r["run"], r["generator"], r["model"], r["variant"]) not in with_all]


def _spec(figure: go.Figure) -> dict[str, Any]:
    """Plain JSON (plotly's encoder turns its own types into lists and numbers)."""
    return dict(json.loads(figure.to_json()))


def _layout(title: str, **extra: Any) -> dict[str, Any]:
    return {"title": {"text": title}, "margin": {"l": 60, "r": 20, "t": 50, "b": 110},
            "height": 420, "legend": {"orientation": "h", "y": 1.08}, **extra}


def _empty(title: str, message: str) -> dict[str, Any]:
    layout = _layout(title, xaxis={"visible": False}, yaxis={"visible": False},
                     annotations=[{"text": message, "showarrow": False, "xref": "paper",
                                   "yref": "paper", "x": 0.5, "y": 0.5}])
    return _spec(go.Figure(layout=layout))


def _pct_axis(title: str) -> dict[str, Any]:
    return {"title": {"text": title}, "tickformat": ".0%", "rangemode": "tozero"}


def ms_by_model(rows: Sequence[dict[str, Any]], with_run: bool) -> dict[str, Any]:
    title = "Mutation score per model and wording (95% interval)"
    rows = headline_rows(rows)
    if not rows:
        return _empty(title, "no scores")
    figure = go.Figure()
    for variant in sorted({r["variant"] for r in rows}):
        chosen = [r for r in rows if r["variant"] == variant]
        figure.add_bar(
            name=variant, x=[model_label(r, with_run) for r in chosen],
            y=[r["ms"] for r in chosen], marker_color=VARIANT_COLOURS.get(variant),
            error_y={"type": "data", "symmetric": False,
                     "array": [r.get("ms_ci95_high", r["ms"]) - r["ms"] for r in chosen],
                     "arrayminus": [r["ms"] - r.get("ms_ci95_low", r["ms"]) for r in chosen]})
    figure.update_layout(_layout(title, barmode="group", yaxis=_pct_axis("MS")))
    return _spec(figure)


def valid_vs_mutated(rows: Sequence[dict[str, Any]], with_run: bool) -> dict[str, Any]:
    title = "MS_valid vs MS_mutated (refining generators)"
    rows = [r for r in headline_rows(rows) if r.get("ms_mutated") is not None]
    if not rows:
        return _empty(title, "no refining generator in these results")
    labels = [f"{model_label(r, with_run)} ({r['variant']})" for r in rows]
    figure = go.Figure()
    figure.add_bar(name="MS_valid", x=labels, y=[r["ms"] for r in rows])
    figure.add_bar(name="MS_mutated", x=labels, y=[r["ms_mutated"] for r in rows])
    figure.add_bar(name="self-kill", x=labels, y=[r.get("self_kill_rate") for r in rows])
    figure.update_layout(_layout(title, barmode="group", yaxis=_pct_axis("score")))
    return _spec(figure)


def ms_vs_cost(rows: Sequence[dict[str, Any]], with_run: bool) -> dict[str, Any]:
    title = "Mutation score against cost"
    rows = headline_rows(rows)
    if not rows:
        return _empty(title, "no scores")
    if not any(r.get("cost_usd") for r in rows):  # every label would sit on one point
        return _empty(title, "no row has a model cost (its generators call no LLM)")
    figure = go.Figure()
    for variant in sorted({r["variant"] for r in rows}):
        chosen = [r for r in rows if r["variant"] == variant]
        figure.add_scatter(
            name=variant, mode="markers+text", x=[r.get("cost_usd", 0.0) for r in chosen],
            y=[r["ms"] for r in chosen], text=[model_label(r, with_run) for r in chosen],
            textposition="top center", marker={"size": 10,
                                               "color": VARIANT_COLOURS.get(variant)})
    most = max((r.get("cost_usd") or 0.0 for r in rows), default=0.0) or 1.0
    figure.update_traces(cliponaxis=False)
    figure.update_layout(_layout(title, xaxis={"title": {"text": "cost (USD)"},
                                               "range": [-0.08 * most, 1.25 * most]},
                                 yaxis=_pct_axis("MS") | {"range": [-0.05, 1.1]}))
    return _spec(figure)


def validity(rows: Sequence[dict[str, Any]], with_run: bool) -> dict[str, Any]:
    title = "Share of valid tests per model (pass on the original)"
    rows = headline_rows(rows)
    if not rows:
        return _empty(title, "no scores")
    figure = go.Figure()
    for variant in sorted({r["variant"] for r in rows}):
        chosen = [r for r in rows if r["variant"] == variant]
        figure.add_bar(name=variant, x=[model_label(r, with_run) for r in chosen],
                       y=[r.get("validity_rate") for r in chosen],
                       marker_color=VARIANT_COLOURS.get(variant))
    figure.update_layout(_layout(title, barmode="group",
                                 yaxis=_pct_axis("valid") | {"range": [0, 1.05]}))
    return _spec(figure)


def spread(requirements: Sequence[dict[str, Any]], with_run: bool) -> dict[str, Any]:
    """Per-requirement MS (killed / mutants, one point per requirement and repetition)."""
    title = "Per-requirement mutation score"
    if not requirements:
        return _empty(title, "no per-requirement rows")
    figure = go.Figure()
    # every point while they are few enough to see; past that, plotly draws thousands of
    # markers slowly and they hide each other anyway
    points = "all" if len(requirements) <= SPREAD_ALL_POINTS else "outliers"
    for variant in sorted({r["variant"] for r in requirements}):
        chosen = [r for r in requirements if r["variant"] == variant and r.get("mutants")]
        figure.add_box(
            name=variant, x=[model_label(r, with_run) for r in chosen],
            y=[r["killed"] / r["mutants"] for r in chosen], boxpoints=points, jitter=0.4,
            pointpos=0, marker={"size": 4, "color": VARIANT_COLOURS.get(variant)},
            text=[f"{r['service']}/{r['requirement']} rep {r.get('repetition', 0)}"
                  for r in chosen] if points == "all" else None,
            hoverinfo="text+y" if points == "all" else "y")
    figure.update_layout(_layout(title, boxmode="group", yaxis=_pct_axis("MS of requirement")))
    return _spec(figure)


def figures(rows: Sequence[dict[str, Any]], requirements: Sequence[dict[str, Any]],
            with_run: bool) -> dict[str, dict[str, Any]]:
    """Every figure of the report by id; rows and requirements carry a `run` field."""
    built = {
        "ms-by-model": ms_by_model(rows, with_run),
        "valid-vs-mutated": valid_vs_mutated(rows, with_run),
        "ms-vs-cost": ms_vs_cost(rows, with_run),
        "validity": validity(rows, with_run),
        "spread": spread(requirements, with_run),
    }
    assert tuple(built) == FIGURE_IDS
    return built
