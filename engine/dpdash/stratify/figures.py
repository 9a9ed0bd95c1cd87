"""Plotly figures of the stratified synthesis viewer (pure functions; never imports streamlit).

Every ``make_*_figure`` takes plain arrays/frames from ``dpdash.stratify.core`` / ``dpdash.stratify.synth`` and
returns a
``plotly.graph_objects.Figure``. Source: seed ``004_c5ca305e20a1adba.txt`` (Figure 1 replica; Defs. 11, 14).
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpdash.common import figure_marks as fm
from dpdash.stratify import core as S
from dpdash.common.formatting import finite_range, log_axis
from dpdash.common.palette import PALETTE as COLORS

METHOD_COLORS = {"naive": COLORS[3], "stratified": COLORS[0], "split": COLORS[1], "coinpress": COLORS[3],
                 "strat_coinpress": COLORS[0], "vanilla": COLORS[3]}
METHOD_LABELS = {"naive": "One global release", "stratified": "Per group (full ε each)",
                 "split": "Split budget (ε/2 + ε/2)", "coinpress": "Coinpress, one global release",
                 "strat_coinpress": "Coinpress per group", "vanilla": "One model", }
#: The two synthesis variants in plain words.
SYNTH_WORDS = {"vanilla": "One model", "stratified": "One model per group"}
#: Reference marks of the per-group error chart, each in a colour no data series uses.
CURVE_COLOR, BIAS_COLOR, CROSS_COLOR = COLORS[5], COLORS[2], COLORS[7]
STATUS_COLORS = {"kept": COLORS[0], "pooled": COLORS[1], "dropped": "#999999"}


def _add_hlines(fig: go.Figure, lines: Sequence[dict]) -> None:
    """Horizontal reference lines with labels, as ``fig.add_hline`` draws them, added in one layout update.

    ``figure_marks.hline_spec`` per line, without ``add_hline``'s per-call bookkeeping (about 9 ms each, the
    largest share of a mean-mode redraw). Each dict: y, text, and optional dash, color, width, position.
    """
    shapes, notes = list(fig.layout.shapes or ()), list(fig.layout.annotations or ())
    for ln in lines:
        shape, note = fm.hline_spec(ln["y"], line=dict(dash=ln.get("dash", "solid"), color=ln.get("color", "#444444"),
                                                       width=ln.get("width", 2)),
                                    annotation_text=ln.get("text") or None, annotation_position=ln.get("position"))
        shapes.append(shape)
        if note is not None:
            notes.append(note)
    fig.update_layout(shapes=shapes, annotations=notes)


def make_group_sizes_figure(sizes, labels: Sequence[str], status: Sequence[str], *, title: str = "Group sizes"
                            ) -> go.Figure:
    """Bar chart of the sorted group sizes on a log axis, coloured kept / pooled / dropped."""
    s = np.asarray(sizes, dtype=float)
    order = np.argsort(-s, kind="stable")
    fig = go.Figure()
    for st_name, col in STATUS_COLORS.items():
        idx = [i for i in order if status[i] == st_name]
        if not idx:
            continue
        fig.add_bar(x=[str(labels[i]) for i in idx], y=s[idx], name=st_name.capitalize(), marker_color=col,
                    hovertemplate="%{x}: %{y:,} records<extra>" + st_name + "</extra>")
    pos = s[s > 0]
    fig.update_layout(title=title, barmode="overlay", xaxis=dict(categoryorder="array",
                      categoryarray=[str(labels[i]) for i in order], title="Group (largest first)",
                      showticklabels=len(s) <= 30, tickangle=-30),
                      yaxis=log_axis(max(pos.min() / 2, 0.5) if pos.size else 1,
                                              pos.max() if pos.size else 10, title="Records (log scale)"),
                      legend_title_text="Group is")
    return fig


#: Methods drawn on the per-group chart: the two releases the verdict compares (the split budget's group
#: estimates are the per-group release at ε/2; it is shown on the population and ε-sweep charts).
GROUP_CHART_METHODS = ("naive", "stratified", "coinpress", "strat_coinpress")


def make_group_error_figure(df: pd.DataFrame, analytic: pd.DataFrame | None, *, epsilon: float, R: float,
                            gamma: float, mode: str = "paper", sigma: float = 1.0, min_frac: float = 0.0,
                            n: int | None = None, max_points: int = 4000, seed: int = 0,
                            show_curve: bool = True, methods: Sequence[str] = GROUP_CHART_METHODS) -> go.Figure:
    """|error| against group size (log–log) per method, with the analytic stratified curve, the naive bias d_i
    and crossover markers; sizes below min_frac·n are shaded. ``show_curve=False`` leaves out the clipped-
    Laplace curve (for estimators it does not describe, e.g. Coinpress).

    The figure is built in one constructor call from plain dicts without plotly's per-property validation
    (``_validate=False``): it is the chart an ε move redraws, and validation was most of its build time
    (~40 of ~50 ms). The dicts use only properties checked by the tests and by a validated build in them.
    """
    lvl, eps_col = df["level"].to_numpy(), df["epsilon"].to_numpy(float)
    meth, est = df["method"].to_numpy(), df["estimate"].to_numpy(float)
    keep = (lvl == "group") & np.isclose(eps_col, epsilon) & np.isfinite(est)
    n_i, err = df["n_i"].to_numpy(float)[keep], df["abs_err"].to_numpy(float)[keep]
    meth = meth[keep]
    rng = np.random.default_rng(seed)
    floor = 1e-5
    order = [m for m in pd.unique(meth) if m in methods]
    # SVG up to ~1,000 points (cheaper to repaint, no WebGL context per chart), WebGL beyond (style guide).
    shown = sum(min(int(np.sum(meth == m)), max_points) for m in order)
    kind = "scattergl" if shown > 1000 else "scatter"
    traces: list[dict] = []
    for method in order:
        idx = np.flatnonzero(meth == method)
        if idx.size > max_points:
            idx = idx[rng.choice(idx.size, max_points, replace=False)]
        jitter = np.exp(rng.normal(0, 0.04, idx.size))
        label = METHOD_LABELS.get(method, method)
        traces.append(dict(type=kind, x=n_i[idx] * jitter, y=np.maximum(err[idx], floor), mode="markers", name=label,
                           marker=dict(color=METHOD_COLORS.get(method), size=5, opacity=0.45),
                           hovertemplate="group size %{x:.0f}<br>error %{y:.3g}<extra>" + label + "</extra>"))
    if n_i.size and show_curve:
        grid = np.logspace(0, math.log10(max(n_i.max() * 2, 10)), 80)
        curve = S.stratified_error_curve(grid, R=R, gamma=gamma, epsilon=epsilon, sigma=sigma, mode=mode)
        traces.append(dict(type="scatter", x=grid, y=curve, mode="lines", name="Per group, expected error",
                           line=dict(color=CURVE_COLOR, width=3)))
    if analytic is not None and "bias" in analytic:
        bias = analytic["bias"].to_numpy(float)
        traces.append(dict(type="scatter", x=analytic["size"].to_numpy(), y=np.maximum(bias, floor), mode="markers",
                           name="Global release's bias for the group (does not shrink with ε)",
                           marker=dict(symbol="line-ew-open", size=22, color=BIAS_COLOR, line=dict(width=3))))
        cross = analytic["crossover_total"].to_numpy(float)
        ok = np.isfinite(cross) & (bias > 0)
        traces.append(dict(type="scatter", x=cross[ok], y=bias[ok], mode="markers",
                           name="Crossover size (below it, the global release wins)",
                           marker=dict(symbol="x", size=11, color=CROSS_COLOR)))
    ys = [np.maximum(err, floor)]
    if analytic is not None and "bias" in analytic:
        ys.append(analytic["bias"].to_numpy(float))
    ylo, yhi = finite_range(*ys)
    xlo, xhi = finite_range(n_i, [max(min_frac * n, 1.0)] if n else [])
    layout = dict(title=dict(text=f"Error of each group's mean at ε = {epsilon:g}"),
                  xaxis=log_axis(max(xlo / 1.5, 1.0), xhi * 1.5,
                                          title=dict(text="Group size (records)")),
                  yaxis=log_axis(ylo, yhi, title=dict(text="Distance from the true group mean")),
                  legend=dict(orientation="h", y=-0.25))
    if n and min_frac > 0:
        # A plain layout shape, not add_vrect (its axis-spanning bookkeeping costs ~15 ms per redraw). On a
        # log axis, shape x-coordinates are given in data units.
        x1 = max(min_frac * n, 1.0001)
        layout["shapes"] = [dict(type="rect", xref="x", x0=1, x1=x1, yref="y domain", y0=0, y1=1,
                                 fillcolor="#999999", opacity=0.2, line=dict(width=0))]
        layout["annotations"] = [dict(xref="paper", x=0, xanchor="left", yref="y domain", y=1, yanchor="top",
                                      text="below the minimum group share", showarrow=False)]
    return go.Figure(data=traces, layout=layout, _validate=False)


def make_population_error_figure(df: pd.DataFrame, *, epsilon: float, analytic: S.AnalyticMeanErrors | None = None
                                 ) -> go.Figure:
    """Box plot of |p̂ − μ_pop| per method with the analytic privacy RMSE lines and the statistical sd."""
    d = df[(df["level"] == "population") & np.isclose(df["epsilon"], epsilon)]
    fig = go.Figure()
    for method, sub in d.groupby("method", sort=False):
        fig.add_box(y=sub["abs_err"], name=METHOD_LABELS.get(method, method),
                    marker_color=METHOD_COLORS.get(method), boxmean=True)
    if analytic is not None:
        _add_hlines(fig, [dict(y=val, text=text, dash=dash)
                          for val, text, dash in ((analytic.pop_naive_rmse, "typical noise, one global release",
                                                   "dash"),
                                                  (analytic.pop_strat_rmse, "typical noise, per group", "dot"),
                                                  (analytic.pop_statistical_sd, "sampling error", "dashdot"))])
    fig.update_layout(title=f"Error of the population mean at ε = {epsilon:g}",
                      yaxis=dict(title="Distance from the population mean", rangemode="tozero"),
                      showlegend=False)
    return fig


def make_epsilon_sweep_figure(df: pd.DataFrame) -> go.Figure:
    """Population error and worst-group error (mean over reps) against ε, per method (log–log)."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Population", "Worst group"), horizontal_spacing=0.12)
    pop = df[df["level"] == "population"].groupby(["method", "epsilon"], sort=False)["abs_err"].mean().reset_index()
    grp = (df[df["level"] == "group"].groupby(["method", "epsilon", "group"], sort=False)["abs_err"].mean()
           .groupby(["method", "epsilon"]).max().reset_index())
    for col, data in ((1, pop), (2, grp)):
        for method, sub in data.groupby("method", sort=False):
            fig.add_trace(go.Scatter(x=sub["epsilon"], y=sub["abs_err"], mode="lines+markers",
                                     name=METHOD_LABELS.get(method, method), legendgroup=method, showlegend=col == 1,
                                     line=dict(color=METHOD_COLORS.get(method))), row=1, col=col)
    fig.update_xaxes(**log_axis(*finite_range(df["epsilon"]), title="ε"))
    fig.update_yaxes(**log_axis(*finite_range(pop["abs_err"]), title="mean error"), col=1)
    fig.update_yaxes(**log_axis(*finite_range(grp["abs_err"])), col=2)
    fig.update_layout(title="Error against the privacy budget")
    return fig


def make_theorem10_figure(k: int, n: int, alpha: float, alpha_hat: float | None, *,
                          mc: pd.DataFrame | None = None, realized: float | None = None) -> go.Figure:
    """S4 Figure 1 replica: E Σ log|G_i| against α (Theorem 10) with the worst/best bounds, markers at the
    current α and the fitted α̂, and integer-size Monte Carlo means as dots."""
    grid = np.logspace(math.log10(0.05), 1, 80)
    E = [S.theorem10_expectation(k, a, n) for a in grid]
    b = S.logsum_bounds(k, n)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=grid, y=E, mode="lines", name="Theorem 10: E Σ log|G_i| (continuous sizes)",
                             line=dict(color=COLORS[0])))
    lines = [dict(y=b.worst, dash="dash", color=COLORS[3], text="worst: equal sizes k log(n/k)"),
             dict(y=b.best, dash="dot", color=COLORS[2], text="best: one majority group (k−1)+log(n−k)",
                  position="bottom right")]
    if mc is not None and len(mc):
        fig.add_trace(go.Scatter(x=mc["alpha"], y=mc["mean"], mode="markers", name="Monte Carlo, integer sizes ≥ 1",
                                 marker=dict(color=COLORS[1], size=8)))
    fig.add_trace(go.Scatter(x=[alpha], y=[S.theorem10_expectation(k, alpha, n)], mode="markers",
                             name=f"current α = {alpha:g}", marker=dict(symbol="diamond", size=14, color="#000000")))
    if alpha_hat is not None and math.isfinite(alpha_hat) and 1e-6 < alpha_hat < 1e6:
        fig.add_trace(go.Scatter(x=[alpha_hat], y=[S.theorem10_expectation(k, alpha_hat, n)], mode="markers",
                                 name=f"fitted α̂ = {alpha_hat:.3g}", marker=dict(symbol="star", size=16,
                                                                                  color=COLORS[4])))
    if realized is not None:
        lines.append(dict(y=realized, color=COLORS[4], width=1, text="these sizes", position="top left"))
    _add_hlines(fig, lines)
    fig.update_layout(title=f"Theorem 10 at k = {k}, n = {n:,}", xaxis=dict(type="log", title="Dirichlet α"),
                      yaxis=dict(title="Σ log(group size)"), legend=dict(orientation="h", y=-0.3))
    return fig


def make_dirichlet_ternary_figure(draws: Mapping[float, np.ndarray]) -> go.Figure:
    """Ternary scatter of Dir(α·1_3) draws, one colour per α (small α ⇒ points near the corners)."""
    fig = go.Figure()
    for (a, W), col in zip(draws.items(), COLORS):
        fig.add_trace(go.Scatterternary(a=W[:, 0], b=W[:, 1], c=W[:, 2], mode="markers", name=f"α = {a:g}",
                                        marker=dict(size=9, color=col)))
    fig.update_layout(title="Twenty draws of 3 group shares", ternary=dict(sum=1, aaxis_title="group 1",
                      baxis_title="group 2", caxis_title="group 3"))
    return fig


def make_synth_group_error_figure(vanilla: pd.DataFrame, stratified: pd.DataFrame, *, title: str) -> go.Figure:
    """Per-group workload error bars, vanilla vs stratified (frames from ``group_workload_errors``)."""
    fig = go.Figure()
    for name, d in (("vanilla", vanilla), ("stratified", stratified)):
        if d is None or not len(d):
            continue
        fig.add_bar(x=d["group"], y=d["error"], name=SYNTH_WORDS[name],
                    marker_color=METHOD_COLORS[name], customdata=d["size"],
                    hovertemplate="%{x}<br>workload error %{y:.3f}<br>real size %{customdata:,}<extra></extra>")
    fig.update_layout(title=title, barmode="group", xaxis=dict(title="Group", tickangle=-30),
                      yaxis_title="Workload error (0 = identical tables)")
    return fig


def make_parity_heatmap(vanilla: pd.DataFrame, stratified: pd.DataFrame) -> go.Figure:
    """Group × column |relative mean error| heatmaps (Def. 11 terms) for vanilla and stratified."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=(SYNTH_WORDS["vanilla"], SYNTH_WORDS["stratified"]),
                        shared_yaxes=True)
    zmax = float(np.nanmax([np.nanmax(vanilla.to_numpy(float)), np.nanmax(stratified.to_numpy(float)), 1e-9]))
    for col, d in ((1, vanilla), (2, stratified)):
        fig.add_trace(go.Heatmap(z=d.to_numpy(float), x=[str(c).replace("_", " ") for c in d.columns],
                                 y=list(d.index), zmin=0, zmax=zmax,
                                 colorscale="Cividis", showscale=col == 2,
                                 hovertemplate="%{y}, %{x}: %{z:.3f}<extra></extra>"), row=1, col=col)
    fig.update_layout(title="How far each synthetic group's column mean is from the real one (relative)")
    return fig


SWEEP_METRIC_WORDS = {"workload_global": "Workload error (lower is better)",
                      "parity_total": "Parity error (lower is better)", "accuracy": "Classifier accuracy"}


def make_synth_sweep_figure(long: pd.DataFrame, metrics: Sequence[str] = ("workload_global", "parity_total",
                                                                         "accuracy")) -> go.Figure:
    """Metric against ε, vanilla vs stratified (long frame from ``run_synth_experiment``)."""
    fig = make_subplots(rows=1, cols=len(metrics), subplot_titles=[SWEEP_METRIC_WORDS.get(m, m) for m in metrics])
    for j, m in enumerate(metrics, start=1):
        d = long[(long["metric"] == m) & (long["group"] == "all")].groupby(["variant", "epsilon"])["value"].mean()
        for variant in ("vanilla", "stratified"):
            if variant not in d.index.get_level_values(0):
                continue
            s = d.loc[variant]
            fig.add_trace(go.Scatter(x=s.index, y=s.values, mode="lines+markers", name=SYNTH_WORDS[variant],
                                     legendgroup=variant, showlegend=j == 1,
                                     line=dict(color=METHOD_COLORS[variant])), row=1, col=j)
    fig.update_xaxes(**log_axis(*finite_range(long["epsilon"]), title="ε"))
    fig.update_layout(title="Synthetic data quality against ε")
    return fig
