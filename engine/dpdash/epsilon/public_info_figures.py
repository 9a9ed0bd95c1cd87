"""Plotly figures for the epsilon calculator's Tab 9, public information (pure functions, no streamlit).

Inputs are :mod:`dpdash.accounting.public_info` results; colours follow the product's palette
(``dpdash.common.palette``).
:func:`~dpdash.common.figure_marks.apply_layout` is the title/legend layout shared with
:mod:`dpdash.stratify.partial_release_figures`.

References
----------
S1 = ``shared/seeds/001_cddb039cfb564267.txt`` (Seeman, Slavković & Reimherr 2022); spec
``shared/specs/partially_private.md`` §5–§6. The paper's Figs. 3–7 survive only as captions; these are
analogues computed by this product.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from dpdash.accounting import public_info
from dpdash.common.figure_marks import apply_layout
from dpdash.common.formatting import finite_range, log_axis
from dpdash.common.palette import PALETTE


def make_invariant_band_figure(epsilon: float, eps_star: float, *, kind: str, N: float) -> go.Figure:
    """ε* shown inside the Lemma 5 band [ε, 2ε] (one horizontal bar)."""
    fig = go.Figure()
    fig.add_shape(type="rect", x0=epsilon, x1=2 * epsilon, y0=-0.4, y1=0.4, fillcolor=PALETTE[5],
                  opacity=0.25, line_width=0)
    fig.add_trace(go.Bar(x=[eps_star], y=["ε*"], orientation="h", marker_color=PALETTE[0], name="effective ε*",
                         hovertemplate="ε* = %{x:.4f}<extra></extra>", width=0.5))
    fig.add_vline(x=epsilon, line_dash="dash", line_color=PALETTE[7], annotation_text=f"ε = {epsilon:g}",
                  annotation_position="top")
    fig.add_vline(x=2 * epsilon, line_dash="dot", line_color=PALETTE[3], annotation_text=f"2ε = {2 * epsilon:g}",
                  annotation_position="top")
    n_txt = "∞" if math.isinf(N) else f"{int(N)}"
    apply_layout(fig, f"Effective ε* with the invariant 0 ≤ count ≤ {n_txt} ({kind} Laplace)",
            xaxis=dict(title="privacy loss", range=[0, 2.15 * epsilon]), height=230, showlegend=False)
    return fig


def make_invariant_ratio_figure(N: float, *, epsilons: Sequence[float] | None = None,
                                current: float | None = None) -> go.Figure:
    """ε*/ε against ε for the discrete and continuous Laplace at invariant size N (Lemma 5)."""
    eps = np.geomspace(0.01, 20, 120) if epsilons is None else np.asarray(epsilons, float)
    fig = go.Figure()
    for kind, col in (("discrete", PALETTE[0]), ("continuous", PALETTE[1])):
        ratio = [public_info.eps_star_invariant(e, N, kind=kind) / e for e in eps]
        fig.add_trace(go.Scatter(x=eps, y=ratio, mode="lines", name=f"{kind} Laplace", line_color=col,
                                 hovertemplate="ε = %{x:.3g}<br>ε*/ε = %{y:.3f}<extra>" + kind + "</extra>"))
    if current is not None:
        fig.add_vline(x=current, line_dash="dash", line_color=PALETTE[7])
    fig.add_hline(y=2, line_dash="dot", line_color=PALETTE[3], annotation_text="ceiling 2ε")
    fig.add_hline(y=1, line_dash="dot", line_color=PALETTE[7], annotation_text="no inflation")
    n_txt = "∞" if math.isinf(N) else f"{int(N)}"
    return apply_layout(fig, f"How much the invariant inflates ε (N = {n_txt})",
                   xaxis=log_axis(*finite_range(eps), title="nominal ε"),
                   yaxis=dict(title="ε* / ε", range=[0.95, 2.05]))


def make_delta_z_heatmap(n: int, z_grid: Sequence[float], table: np.ndarray, *,
                         current: tuple[float, float] | None = None) -> go.Figure:
    """Heatmap of Δ_z (Example 3) over z₀ (rows) × z₁ (columns), with explanatory hover text."""
    z = np.asarray(z_grid, float)
    hover = [[(f"z₀ = {a:.2f}, z₁ = {b:.2f}<br>Δ_z = {table[i, j]} (iid: 1)<br>"
               "z₀, z₁: how strongly the public information ties other<br>records to the target's secret "
               "(0/1 = tie-breaking extremes)") for j, b in enumerate(z)] for i, a in enumerate(z)]
    fig = go.Figure(go.Heatmap(z=table, x=z, y=z, colorscale="Viridis", text=table, texttemplate="%{text}",
                               hovertext=hover, hoverinfo="text", colorbar=dict(title="Δ_z")))
    if current is not None:
        fig.add_trace(go.Scatter(x=[current[1]], y=[current[0]], mode="markers", name="current (z₀, z₁)",
                                 marker=dict(symbol="circle-open", size=22, color="white", line_width=3),
                                 hoverinfo="skip"))
    return apply_layout(fig, f"Sensitivity Δ_z of the count with correlated public information (n = {n})",
                   xaxis=dict(title="z₁ (target's secret = 1)"), yaxis=dict(title="z₀ (target's secret = 0)"),
                   showlegend=False)


def make_posterior_band_figure(prior: float, bands: Mapping[str, tuple[float, float]]) -> go.Figure:
    """Posterior belief intervals (Lemma 2) as horizontal intervals, one per labelled ε."""
    fig = go.Figure()
    labels = list(bands)
    for k, (lab, (lo, hi)) in enumerate(bands.items()):
        col = PALETTE[k % len(PALETTE)]
        fig.add_trace(go.Scatter(x=[lo, hi], y=[lab, lab], mode="lines+markers", line=dict(color=col, width=10),
                                 marker=dict(size=14), name=lab,
                                 hovertemplate=f"{lab}<br>posterior between {lo:.3f} and {hi:.3f}<extra></extra>"))
    fig.add_vline(x=prior, line_dash="dash", line_color=PALETTE[7], annotation_text=f"prior {prior:.2f}",
                  annotation_position="bottom right")
    return apply_layout(fig, "What an adversary can believe after the release", showlegend=False,
                   xaxis=dict(title="posterior probability of the secret", range=[0, 1]),
                   yaxis=dict(categoryorder="array", categoryarray=labels[::-1]), height=300)


def make_em_audit_figure(n: int, *, sensitivity: float = 1.0, epsilons: Sequence[float] | None = None,
                         current: float | None = None) -> go.Figure:
    """Realised ε of the truncated-Laplace exponential mechanism against nominal ε, κ = 1 and κ = 2."""
    eps = np.geomspace(0.05, 20, 60) if epsilons is None else np.asarray(epsilons, float)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=eps, y=eps, mode="lines", name="nominal ε (target)",
                             line=dict(color=PALETTE[7], dash="dash")))
    for kappa, col, lab in ((1.0, PALETTE[3], "κ = 1 (paper-literal)"), (2.0, PALETTE[2], "κ = 2 (safe)")):
        real = [public_info.realized_epsilon_trunc_em(n, epsilon=e, sensitivity=sensitivity, kappa=kappa, grid=2001)
                for e in eps]
        fig.add_trace(go.Scatter(x=eps, y=real, mode="lines", name=lab, line_color=col,
                                 hovertemplate="ε = %{x:.3g}<br>realised %{y:.3f}<extra>" + lab + "</extra>"))
    if current is not None:
        fig.add_vline(x=current, line_dash="dot", line_color=PALETTE[7])
    return apply_layout(fig, f"Exponential-mechanism audit (Example 1, n = {n})",
                   xaxis=log_axis(*finite_range(eps), title="nominal ε"),
                   yaxis=log_axis(*finite_range(eps, [t.y for t in fig.data]), title="realised ε"))


def make_info_loss_figure(lemma7: public_info.Lemma7Result, sumproj: public_info.SumProjectionResult | None = None
                          ) -> go.Figure:
    """Expected posterior variances of θ: given T (truth), Y (noisy) and Y* (constraints enforced)."""
    fig = go.Figure()
    cats = ["truth T", "noisy Y", "post-processed Y*"]
    fig.add_trace(go.Bar(x=cats, y=[lemma7.evar_t, lemma7.evar_y, lemma7.evar_ystar], name="count toy",
                         marker_color=[PALETTE[7], PALETTE[0], PALETTE[1]],
                         hovertemplate="%{x}: %{y:.6f}<extra>count toy</extra>"))
    if sumproj is not None:
        fig.add_trace(go.Bar(x=["sum toy: noisy Y", "sum toy: projected Y*"],
                             y=[sumproj.evar_y, sumproj.evar_ystar], name="sum-projection toy",
                             marker_color=[PALETTE[5], PALETTE[3]],
                             hovertemplate="%{x}: %{y:.6f}<extra>sum toy</extra>"))
    return apply_layout(fig, "Expected posterior variance of θ (lower = more information)", showlegend=False,
                   yaxis=dict(title="E Var(θ | data)"))


def make_power_figure(n: int, *, epsilon: float, theta0: float, thetas: Sequence[float],
                      alpha: float = 0.05) -> go.Figure:
    """Thm. 2 power curves: UMP test on Y against the randomised UMP test on Y* = round(clamp(Y))."""
    th = np.asarray(thetas, float)
    res = [public_info.thm2_power(n, epsilon=epsilon, theta0=theta0, theta=t, alpha=alpha) for t in th]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=th, y=[r.power_y for r in res], mode="lines", name="test on noisy Y",
                             line_color=PALETTE[0]))
    fig.add_trace(go.Scatter(x=th, y=[r.power_ystar for r in res], mode="lines", name="test on rounded Y*",
                             line=dict(color=PALETTE[1], dash="dash")))
    fig.add_hline(y=alpha, line_dash="dot", line_color=PALETTE[7], annotation_text=f"level α = {alpha:g}")
    return apply_layout(fig, f"Power of one-sided tests of θ = {theta0:.2f} (n = {n}, ε = {epsilon:g})",
                   xaxis=dict(title="true θ"), yaxis=dict(title="power", range=[0, 1]))
