"""Plotly figures for the leximax cohort picker (pure functions, no streamlit; unit-testable).

Each ``make_*_figure`` takes engine results and returns a ``go.Figure``. Large arrays are downsampled here.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from engine import figure_marks as fm
from engine.palette import PALETTE

DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")


def make_profile_figure(profiles: Mapping[str, Sequence[float]]) -> go.Figure:
    """F1: sorted group-utility profiles (worst-off group first) of several solutions, as step lines."""
    fig = go.Figure()
    for i, (name, prof) in enumerate(profiles.items()):
        p = np.sort(np.asarray(prof, dtype=float))
        fig.add_trace(go.Scatter(x=np.arange(1, p.size + 1), y=p, mode="lines+markers", name=name,
                                 line=dict(shape="hv", color=PALETTE[i % len(PALETTE)], dash=DASHES[i % 6])))
    fig.update_layout(title="Sorted expected utilities (worst-off group first)",
                      xaxis_title="rank of group (1 = worst off)", yaxis_title="expected utility",
                      legend=dict(orientation="h", y=-0.25))
    fig.update_xaxes(dtick=1)
    return fig


def make_group_bar_figure(group_names: Sequence[str], series: Mapping[str, Sequence[float]]) -> go.Figure:
    """F2: expected utility per group for each solution (grouped bars, input order of groups)."""
    fig = go.Figure()
    for i, (name, y) in enumerate(series.items()):
        fig.add_trace(go.Bar(x=list(group_names), y=np.asarray(y, dtype=float), name=name,
                             marker_color=PALETTE[i % len(PALETTE)]))
    fig.update_layout(title="Expected utility per group", barmode="group", yaxis_title="expected utility",
                      legend=dict(orientation="h", y=-0.3))
    return fig


def make_marginals_figure(ids: Sequence[str], x: Sequence[float], k: int, *, top: int = 200) -> go.Figure:
    """F3: selection probabilities sorted from largest, the top ``top`` candidates, with a Σ = k badge."""
    x = np.asarray(x, dtype=float)
    order = np.argsort(-x, kind="stable")[:top]
    fig = go.Figure(go.Bar(x=[str(ids[i]) for i in order], y=x[order], marker_color=PALETTE[0],
                           name="selection probability"))
    shown = f"top {len(order)} of {x.size}" if x.size > len(order) else f"all {x.size}"
    fig.update_layout(title=f"Selection probabilities ({shown} candidates)", yaxis_title="probability x_i",
                      xaxis_title="candidate", yaxis_range=[0, 1.05])
    fig.add_annotation(text=f"Σx = {x.sum():.6g} (k = {k})", xref="paper", yref="paper", x=0.99, y=0.98,
                       showarrow=False, bgcolor="#E8F4EA" if abs(x.sum() - k) < 1e-6 else "#FBE3E3",
                       bordercolor="#009E73", font=dict(size=16))
    return fig


def make_realised_figure(utilities: np.ndarray, expected: Sequence[float], group_names: Sequence[str], *,
                         delta: float, hoeffding: Sequence[float] | None = None, max_points: int = 400,
                         max_groups: int = 8) -> go.Figure:
    """F4: empirical CDF of each group's realised utility, with its expectation y_j and y_j − δ marked."""
    U = np.asarray(utilities, dtype=float)
    y = np.asarray(expected, dtype=float)
    fig = go.Figure()
    order = np.argsort(y, kind="stable")[:max_groups]          # the worst-off groups first
    for c, j in enumerate(order):
        v = np.sort(U[:, j])
        idx = np.unique(np.linspace(0, v.size - 1, min(max_points, v.size)).astype(int))
        col = PALETTE[c % len(PALETTE)]
        fig.add_trace(go.Scatter(x=v[idx], y=(idx + 1) / v.size, mode="lines", line=dict(shape="hv", color=col),
                                 name=str(group_names[j])))
        fm.vline(fig, x=float(y[j]), line=dict(color=col, width=1, dash="dot"))
        hb = "" if hoeffding is None else f" (Hoeffding ≤ {float(hoeffding[j]):.3g})"
        fm.vline(fig, x=float(y[j] - delta), line=dict(color=col, width=1, dash="dash"),
                      annotation_text=f"y−δ{hb}" if c == 0 else None, annotation_position="top left")
    fig.update_layout(title="Realised utility per group over the draws (ECDF; dotted = expected, dashed = "
                            "expected − δ)", xaxis_title="utility in a drawn cohort", yaxis_title="share of draws ≤ x",
                      legend=dict(orientation="h", y=-0.3))
    return fig


def make_size_figure(sizes: Mapping[str, Mapping[int, float]]) -> go.Figure:
    """Cohort-size distribution per sampling scheme (probabilities)."""
    fig = go.Figure()
    for i, (name, dist) in enumerate(sizes.items()):
        ks = sorted(dist)
        fig.add_trace(go.Bar(x=ks, y=[dist[s] for s in ks], name=name, marker_color=PALETTE[i % len(PALETTE)]))
    fig.update_layout(title="Cohort size", barmode="group", xaxis_title="number of members",
                      yaxis_title="probability", legend=dict(orientation="h", y=-0.3))
    return fig


def make_gamma_figure(gammas: Sequence[float], alpha: Sequence[float] | None = None) -> go.Figure:
    """γ*_l per level l of Algorithm 1 (the l-th increment of the sum of the l smallest utilities)."""
    g = np.asarray(gammas, dtype=float)
    fig = go.Figure(go.Bar(x=np.arange(1, g.size + 1), y=g, marker_color=PALETTE[0], name="γ*_l"))
    if alpha is not None and np.any(np.asarray(alpha) > 0):
        fig.add_trace(go.Bar(x=np.arange(1, g.size + 1), y=np.asarray(alpha, dtype=float), name="slack α_l",
                             marker_color=PALETTE[1]))
    fig.update_layout(title="γ* per level (Algorithm 1)", xaxis_title="level l", yaxis_title="γ*_l",
                      barmode="group")
    fig.update_xaxes(dtick=1)
    return fig


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
    fig.update_layout(title="Solutions in the plane of the first two groups", xaxis_title="u(S, G₁)",
                      yaxis_title="u(S, G₂)", legend=dict(orientation="h", y=-0.3))
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
        fig.add_trace(go.Scattergl(x=rank[m], y=p[order][m], mode="markers", name=f"{feature}={v}" if feature else
                                   str(v), marker=dict(size=6, color=PALETTE[i % len(PALETTE)])))
    fm.hline(fig, y=k / p.size, line=dict(dash="dash", color="#000000"),
                  annotation_text=f"equal chance k/n = {k / p.size:.3g}")
    fig.update_layout(title="Selection probability per person (sorted)", xaxis_title="person (sorted by chance)",
                      yaxis_title="probability of selection", legend=dict(orientation="h", y=-0.3))
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
        fm.hline(fig, y=k / n, line=dict(dash="dot", color="#000000"), annotation_text="k/n")
    fig.update_layout(title="Sorted selection probabilities: leximin vs baseline", xaxis_title="person (sorted)",
                      yaxis_title="probability of selection", legend=dict(orientation="h", y=-0.3))
    return fig
