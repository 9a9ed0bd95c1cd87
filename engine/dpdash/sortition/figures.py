"""Plotly figures for the leximax cohort picker (pure functions, no streamlit; unit-testable).

Each ``make_*_figure`` takes engine results and returns a ``go.Figure``. Large arrays are downsampled here.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from dpdash.common import figure_marks as fm
from dpdash.common.palette import PALETTE

DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")


#: Margins (px) that already hold what Plotly's automargin needs for these charts in the app's theme (measured in
#: the browser: left 70–83 for tick labels and the axis title, bottom 67 for the x-axis title, 111–126 with the legend
#: below). Smaller margins made every chart draw twice on each k move (draw, grow the margins, redraw: about a
#: fifth of the page's browser time); automargin stays on, so longer labels or presenter mode still fit.
MARGIN = dict(t=60, b=72, l=86, r=20)
MARGIN_LEGEND = dict(MARGIN, b=130)


def _layout(**kw) -> dict:
    """Shared layout: horizontal legend below the plot, margins that fit (one layout, set once per figure)."""
    legend = kw.get("showlegend", True) is not False
    base = dict(legend=dict(orientation="h", y=-0.25), margin=dict(MARGIN_LEGEND if legend else MARGIN))
    base.update(kw)
    return base


def make_profile_figure(profiles: Mapping[str, Sequence[float]]) -> go.Figure:
    """F1: sorted group-utility profiles (worst-off group first) of several solutions, as step lines."""
    traces = []
    for i, (name, prof) in enumerate(profiles.items()):
        p = np.sort(np.asarray(prof, dtype=float))
        traces.append(go.Scatter(x=np.arange(1, p.size + 1), y=p, mode="lines+markers", name=name,
                                 line=dict(shape="hv", color=PALETTE[i % len(PALETTE)], dash=DASHES[i % 6])))
    return go.Figure(traces, _layout(title="What each group gets, worst-off group first",
                                     xaxis=dict(title="group, from worst off (1) to best off", dtick=1),
                                     yaxis=dict(title="expected utility", rangemode="tozero")))


def make_group_bar_figure(group_names: Sequence[str], series: Mapping[str, Sequence[float]], *,
                          max_groups: int = 40) -> go.Figure:
    """F2: expected utility per group for each solution (grouped bars, input order; at most ``max_groups``)."""
    names = [str(g) for g in group_names][:max_groups]
    traces = [go.Bar(x=names, y=np.asarray(y, dtype=float)[:max_groups], name=name,
                     marker_color=PALETTE[i % len(PALETTE)]) for i, (name, y) in enumerate(series.items())]
    shown = "" if len(group_names) <= max_groups else f" (first {max_groups} of {len(group_names)} groups)"
    return go.Figure(traces, _layout(title="What each group can expect" + shown, barmode="group",
                                     yaxis=dict(title="expected utility"),
                                     xaxis=dict(tickangle=0 if len(names) <= 8 else -45, automargin=True)))


def make_marginals_figure(ids: Sequence[str], x: Sequence[float], k: int, *, top: int = 200,
                          max_labels: int = 30) -> go.Figure:
    """F3: selection chances sorted from largest, the top ``top`` candidates; names only when ≤ ``max_labels``."""
    x = np.asarray(x, dtype=float)
    order = np.argsort(-x, kind="stable")[:top]
    shown = f"the {len(order)} most likely of {x.size}" if x.size > len(order) else f"all {x.size}"
    named = len(order) <= max_labels
    fig = go.Figure(go.Bar(x=[str(ids[i]) for i in order] if named else np.arange(1, len(order) + 1),
                           y=x[order], marker_color=PALETTE[0], name="chance of selection",
                           hovertext=[str(ids[i]) for i in order], hoverinfo="text+y"),
                    _layout(title=f"Chance of selection, {shown} candidates", showlegend=False,
                            yaxis=dict(title="chance of selection", range=[0, 1.05], tickformat=".0%"),
                            xaxis=dict(title="candidate" if named else "candidates, most likely first",
                                       tickangle=0 if len(order) <= 10 else -45)))
    fig.add_annotation(text=f"chances add up to k = {k}", xref="paper", yref="paper", x=0.99, y=0.98,
                       showarrow=False, bgcolor="#FFFFFF", bordercolor="#555555")
    return fig


def _ecdf_points(values: np.ndarray, max_points: int) -> tuple[np.ndarray, np.ndarray]:
    """Corners of the empirical CDF drawn as a step line: (value, share of draws at or below it), from share 0.

    Few distinct values (0/1 memberships give whole numbers): one point per distinct value, the exact step
    function with a handful of points instead of hundreds. Many: ``max_points`` evenly spaced order statistics.
    The first point (smallest value, 0) draws the first rise from zero and keeps the share axis starting at 0.
    """
    v = np.sort(np.asarray(values, dtype=float))
    last = np.flatnonzero(np.r_[v[1:] != v[:-1], True])       # last index of each distinct value
    idx = last if last.size <= max_points else \
        np.unique(np.linspace(0, v.size - 1, min(max_points, v.size)).astype(int))
    return np.r_[v[0], v[idx]], np.r_[0.0, (idx + 1) / v.size]


def make_realised_figure(utilities: np.ndarray, expected: Sequence[float], group_names: Sequence[str], *,
                         delta: float, hoeffding: Sequence[float] | None = None, max_points: int = 200,
                         max_groups: int = 6) -> go.Figure:
    """F4: empirical CDF of each group's realised utility, with its expectation y_j marked (worst-off groups).

    Built in one layout update (shapes and labels as dicts): adding lines one by one copied the layout each
    time and was most of this page's redraw time.
    """
    U = np.asarray(utilities, dtype=float)
    y = np.asarray(expected, dtype=float)
    order = np.argsort(y, kind="stable")[:max_groups]          # the worst-off groups first
    traces, shapes, notes = [], [], []
    for c, j in enumerate(order):
        x, share = _ecdf_points(U[:, j], max_points)
        col = PALETTE[c % len(PALETTE)]
        traces.append(go.Scatter(x=x, y=share, mode="lines", line=dict(shape="hv", color=col),
                                 name=str(group_names[j])))
        shape, _ = fm.vline_spec(float(y[j]), line=dict(color=col, width=1, dash="dot"))
        shapes.append(shape)
        if c == 0:
            shape, note = fm.vline_spec(float(y[j] - delta), line=dict(color=col, width=1, dash="dash"),
                                        annotation_text="expected − δ", annotation_position="top left")
            shapes.append(shape)
            notes.append(note)
    more = "" if len(y) <= max_groups else f" ({max_groups} worst-off of {len(y)} groups)"
    return go.Figure(traces, _layout(title="What a single draw gives each group" + more, shapes=shapes,
                                     annotations=notes, xaxis=dict(title="utility in a drawn cohort"),
                                     yaxis=dict(title="share of draws at or below", tickformat=".0%")))


def make_finite_scatter(U: Sequence[Sequence[float]], sets: Mapping[str, frozenset], *,
                        labels: Sequence[str] | None = None) -> go.Figure:
    """2-group scatter of the solutions (as [b] Figs. 2–5) with each notion's members marked by a ring."""
    P = np.array([[float(v) for v in r[:2]] for r in U])
    s = P.shape[0]
    labels = list(labels) if labels is not None else [f"S{i + 1}" for i in range(s)]
    fig = go.Figure(go.Scatter(x=P[:, 0], y=P[:, 1] if P.shape[1] > 1 else np.zeros(s), mode="markers+text",
                               text=labels, textposition="top right", marker=dict(size=10, color="#000000"),
                               name="solutions"))
    for i, (name, members) in enumerate(sets.items()):
        idx = sorted(members)
        fig.add_trace(go.Scatter(x=P[idx, 0], y=P[idx, 1] if P.shape[1] > 1 else np.zeros(len(idx)),
                                 mode="markers", name=name,
                                 marker=dict(size=18 + 7 * i, color="rgba(0,0,0,0)",
                                             line=dict(width=3, color=PALETTE[i % len(PALETTE)]))))
    fig.update_layout(title="Solutions in the plane of the first two groups", xaxis_title="utility of group 1",
                      yaxis_title="utility of group 2", legend=dict(orientation="h", y=-0.3))
    return fig


def make_panel_prob_figure(probabilities: Sequence[float], colour: Sequence[str], *, k: int,
                           feature: str = "") -> go.Figure:
    """F6: each person's selection probability, sorted ascending, coloured by a feature; line at k/n."""
    p = np.asarray(probabilities, dtype=float)
    order = np.argsort(p, kind="stable")
    col = np.asarray(colour, dtype=object)[order]
    fig = go.Figure()
    rank = np.arange(1, p.size + 1)
    fig.add_trace(go.Scatter(x=rank, y=p[order], mode="lines", line=dict(shape="hv", color="#BBBBBB", width=2),
                             name="sorted chances", hoverinfo="skip"))
    for i, v in enumerate(sorted(set(col.tolist()), key=str)):
        m = col == v
        fig.add_trace(go.Scattergl(x=rank[m], y=p[order][m], mode="markers", name=f"{feature}: {v}" if feature else
                                   str(v), marker=dict(size=6, color=PALETTE[i % len(PALETTE)])))
    fm.hline(fig, y=k / p.size, line=dict(dash="dash", color="#000000"),
                  annotation_text=f"equal chance k/n = {k / p.size:.1%}")
    fig.update_layout(title="Chance of a seat per person, smallest first", xaxis_title="person (sorted by chance)",
                      yaxis_title="chance of a seat", legend=dict(orientation="h", y=-0.3))
    fig.update_yaxes(rangemode="tozero")
    return fig


def make_panel_compare_figure(series: Mapping[str, Sequence[float] | None], *, k: int) -> go.Figure:
    """F8: sorted selection probabilities of leximin vs a baseline (uniform over feasible panels)."""
    fig = go.Figure()
    n = None
    for i, (name, p) in enumerate(series.items()):
        if p is None:
            continue
        v = np.sort(np.asarray(p, dtype=float))
        n = v.size
        fig.add_trace(go.Scatter(x=np.arange(1, v.size + 1), y=v, mode="lines", name=name,
                                 line=dict(shape="hv", color=PALETTE[i % len(PALETTE)], dash=DASHES[i % 6])))
    if n:
        fm.hline(fig, y=k / n, line=dict(dash="dot", color="#000000"), annotation_text="equal chance k/n")
    fig.update_layout(title="Chances sorted from smallest: leximin vs uniform", xaxis_title="person (sorted)",
                      yaxis_title="chance of a seat", legend=dict(orientation="h", y=-0.3))
    return fig
