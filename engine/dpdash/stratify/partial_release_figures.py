"""Plotly figures for the stratified synthesis viewer's "Partially private release" tab (pure functions).

Inputs are :mod:`dpdash.stratify.partial_release` results; colours follow the product's palette
(``dpdash.common.palette``).

References
----------
S1 = ``shared/seeds/001_cddb039cfb564267.txt`` (Seeman, Slavković & Reimherr 2022); spec
``shared/specs/partially_private.md`` §5–§6. The paper's Figs. 3–7 survive only as captions; these are
analogues computed by this product.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpdash.stratify import partial_release
from dpdash.common.formatting import finite_range, log_axis
from dpdash.common.palette import PALETTE
from dpdash.common.figure_marks import apply_layout

METHOD_COLORS = {"pp": PALETTE[0], "wem_naive": PALETTE[3], "wem_congenial": PALETTE[2], "wem_prior": PALETTE[1]}
TRUTH_COLOR = PALETTE[7]


def _label(m: str) -> str:
    return partial_release.METHOD_LABELS.get(m, m)


def make_loss_vs_epsilon_figure(df: pd.DataFrame) -> go.Figure:
    """(i) Total ℓ₂ loss against ε per method: draws as points, the mean as a line (Fig. 4 analogue)."""
    draws = df.drop_duplicates(["rep", "epsilon", "method", "alpha"])
    fig = go.Figure()
    for m in [x for x in partial_release.METHODS if x in set(draws["method"])]:
        d = draws[draws["method"] == m]
        mean = d.groupby("epsilon")["total_l2"].mean()
        col = METHOD_COLORS[m]
        fig.add_trace(go.Scatter(x=d["epsilon"], y=d["total_l2"], mode="markers", marker=dict(color=col, size=7,
                                 opacity=0.5), name=_label(m) + " (draws)", showlegend=False,
                                 hovertemplate="ε = %{x:g}<br>loss %{y:.1f}<extra>" + _label(m) + "</extra>"))
        fig.add_trace(go.Scatter(x=mean.index, y=mean.values, mode="lines+markers", line_color=col, name=_label(m)))
    return apply_layout(fig, "Total error of the release against ε",
                        xaxis=log_axis(*finite_range(draws["epsilon"]), title="ε"),
                        yaxis=log_axis(*finite_range(draws["total_l2"]),
                                       title="total error (ℓ₂ over all counties, cases and deaths)"))


def make_relerr_figure(df: pd.DataFrame) -> go.Figure:
    """(ii) |relative error| of cases against county population, log–log (Fig. 5 analogue)."""
    fig = go.Figure()
    d0 = df[np.isfinite(df["rel_err_cases"])]
    floor = 1e-5
    for m in [x for x in partial_release.METHODS if x in set(d0["method"])]:
        d = d0[d0["method"] == m]
        y = np.maximum(d["rel_err_cases"].to_numpy(float), floor)  # exact zeros shown at the floor
        fig.add_trace(go.Scatter(x=d["population"], y=y, mode="markers", name=_label(m),
                                 marker=dict(color=METHOD_COLORS[m], size=7, opacity=0.6),
                                 customdata=np.stack([d["county"], d["true_cases"], d["cases"]], axis=1),
                                 hovertemplate="%{customdata[0]}: true %{customdata[1]}, released "
                                               "%{customdata[2]}<br>|rel. error| %{y:.3g}<extra>"
                                               + _label(m) + "</extra>"))
    ys = np.maximum(d0["rel_err_cases"].to_numpy(float), floor)
    return apply_layout(fig, "Relative error of county case counts against population",
                        xaxis=log_axis(*finite_range(d0["population"]), title="county population"),
                        yaxis=log_axis(*finite_range(ys),
                                       title="relative error of the released cases (exact: 0.00001)"))


def make_series_figure(months: Sequence[str], truth: np.ndarray, series: Mapping[str, np.ndarray], *,
                       county: str) -> go.Figure:
    """(iii) One county's case series: truth against each method's release (Fig. 6 analogue)."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=list(months), y=truth, mode="lines+markers", name="truth",
                             line=dict(color=TRUTH_COLOR, width=4)))
    for m, y in series.items():
        fig.add_trace(go.Scatter(x=list(months), y=y, mode="lines+markers", name=_label(m),
                                 line=dict(color=METHOD_COLORS.get(m, PALETTE[4]), dash="dot")))
    return apply_layout(fig, f"Cases in the smallest county ({county}): truth vs releases",
                   xaxis=dict(title="month"), yaxis=dict(title="cases"))


def make_contraction_figure(cf: pd.DataFrame, counties: Sequence[str]) -> go.Figure:
    """(iv) PP contraction frequencies (three events) against ε for selected counties (Fig. 7 analogue)."""
    fig = go.Figure()
    events = (("case_zero", "cases → 0", "solid"), ("death_zero", "deaths → 0", "dash"),
              ("rate", "deaths = cases (survival rate → 0)", "dot"))
    # One colour per legend entry (county × event; the palette's first six), the dash telling the event.
    for k, c in enumerate(counties):
        d = cf[cf["county"] == c].sort_values("epsilon")
        pop = int(d["population"].iloc[0]) if len(d) else 0
        for j, (col, lab, dash) in enumerate(events):
            fig.add_trace(go.Scatter(x=d["epsilon"], y=d[col], mode="lines+markers",
                                     name=f"{c} (pop. {pop:,}): {lab}",
                                     line=dict(color=PALETTE[(3 * k + j) % 6], dash=dash)))
    return apply_layout(fig, "How often post-processing pushes counts onto the boundary",
                   xaxis=log_axis(*finite_range(cf["epsilon"]), title="ε"),
                   yaxis=dict(title="share of draws", range=[0, 1]),
                   legend=dict(orientation="h", yanchor="top", y=-0.22, x=0), height=560)


def make_alpha_sweep_figure(df: pd.DataFrame) -> go.Figure:
    """(v) Total loss against α for WEM-prior, WEM-naive and WEM-congenial as horizontal lines."""
    draws = df.drop_duplicates(["rep", "epsilon", "method", "alpha"])
    fig = go.Figure()
    prior = draws[draws["method"] == "wem_prior"]
    if len(prior):
        mean = prior.groupby("alpha")["total_l2"].mean()
        fig.add_trace(go.Scatter(x=prior["alpha"], y=prior["total_l2"], mode="markers", showlegend=False,
                                 marker=dict(color=METHOD_COLORS["wem_prior"], opacity=0.5)))
        fig.add_trace(go.Scatter(x=mean.index, y=mean.values, mode="lines+markers", name=_label("wem_prior"),
                                 line_color=METHOD_COLORS["wem_prior"]))
    for m in ("wem_naive", "wem_congenial"):
        d = draws[draws["method"] == m]
        if len(d):
            fig.add_hline(y=float(d["total_l2"].mean()), line_color=METHOD_COLORS[m], line_dash="dash",
                          annotation_text=_label(m), annotation_position="top left")
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=_label(m),
                                     line=dict(color=METHOD_COLORS[m], dash="dash")))
    return apply_layout(fig, "Prior strength α: too weak or too strong both hurt",
                        xaxis=log_axis(*finite_range(prior["alpha"]) if len(prior) else (1e-3, 10.0), title="α"),
                        yaxis=dict(title="mean total error (ℓ₂)"))


def make_alg1_figure(summaries: Mapping[str, partial_release.PosteriorSummary]) -> go.Figure:
    """Posterior mean ± sd of each cell probability for the exact posterior and the samplers."""
    fig = go.Figure()
    for k, (lab, s) in enumerate(summaries.items()):
        cells = [f"cell {i + 1}" for i in range(len(s.mean))]
        fig.add_trace(go.Bar(x=cells, y=s.mean, error_y=dict(type="data", array=s.sd), name=lab,
                             marker_color=(PALETTE[3] if "incorrect" in lab else PALETTE[k % len(PALETTE)])))
    return apply_layout(fig, "Posterior of the cell probabilities given noisy counts and the public total",
                   barmode="group", yaxis=dict(title="posterior mean ± sd", range=[0, 1]))
