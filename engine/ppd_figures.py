"""Plotly figures for the partially-private-data views (pure functions, no streamlit; unit-testable).

Figures for the epsilon calculator's Tab 9 (public information) and for the stratified synthesis viewer's
"Partially private release" tab. Inputs are engine results (``engine.public_info``,
``engine.partial_release``); colours follow the product's palette (``engine.palette``).

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
import pandas as pd
import plotly.graph_objects as go

from engine import partial_release, public_info
from engine.palette import PALETTE

METHOD_COLORS = {"pp": PALETTE[0], "wem_naive": PALETTE[3], "wem_congenial": PALETTE[2], "wem_prior": PALETTE[1]}
TRUTH_COLOR = PALETTE[7]


def _layout(fig: go.Figure, title: str, **kw) -> go.Figure:
    legend = dict(orientation="h", yanchor="bottom", y=1.02, x=0)
    legend.update(kw.pop("legend", {}))
    fig.update_layout(title=title, legend=legend, **kw)
    return fig


# ------------------------------------------------------------------------------------------------ Tab 9
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
    _layout(fig, f"Effective ε* with the invariant 0 ≤ count ≤ {n_txt} ({kind} Laplace)",
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
    return _layout(fig, f"How much the invariant inflates ε (N = {n_txt})",
                   xaxis=dict(title="nominal ε", type="log"), yaxis=dict(title="ε* / ε", range=[0.95, 2.05]))


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
    return _layout(fig, f"Sensitivity Δ_z of the count with correlated public information (n = {n})",
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
    return _layout(fig, "What an adversary can believe after the release", showlegend=False,
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
    return _layout(fig, f"Exponential-mechanism audit (Example 1, n = {n})",
                   xaxis=dict(title="nominal ε", type="log"), yaxis=dict(title="realised ε", type="log"))


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
    return _layout(fig, "Expected posterior variance of θ (lower = more information)", showlegend=False,
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
    return _layout(fig, f"Power of one-sided tests of θ = {theta0:.2f} (n = {n}, ε = {epsilon:g})",
                   xaxis=dict(title="true θ"), yaxis=dict(title="power", range=[0, 1]))


# ------------------------------------------------------------------------------------------------ Tab B
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
    return _layout(fig, "Total ℓ₂ error of the release against ε", xaxis=dict(title="ε", type="log"),
                   yaxis=dict(title="total ℓ₂ loss (all counties, cases and deaths)", type="log"))


def make_relerr_figure(df: pd.DataFrame) -> go.Figure:
    """(ii) |relative error| of cases against county population, log–log (Fig. 5 analogue)."""
    fig = go.Figure()
    d0 = df[np.isfinite(df["rel_err_cases"])]
    for m in [x for x in partial_release.METHODS if x in set(d0["method"])]:
        d = d0[d0["method"] == m]
        y = np.maximum(d["rel_err_cases"].to_numpy(float), 1e-5)  # exact zeros shown at the floor
        fig.add_trace(go.Scatter(x=d["population"], y=y, mode="markers", name=_label(m),
                                 marker=dict(color=METHOD_COLORS[m], size=7, opacity=0.6),
                                 customdata=np.stack([d["county"], d["true_cases"], d["cases"]], axis=1),
                                 hovertemplate="%{customdata[0]}: true %{customdata[1]}, released "
                                               "%{customdata[2]}<br>|rel. error| %{y:.3g}<extra>"
                                               + _label(m) + "</extra>"))
    return _layout(fig, "Relative error of county case counts against population",
                   xaxis=dict(title="county population", type="log"),
                   yaxis=dict(title="|released − true| / true (floor 1e-5)", type="log"))


def make_series_figure(months: Sequence[str], truth: np.ndarray, series: Mapping[str, np.ndarray], *,
                       county: str) -> go.Figure:
    """(iii) One county's case series: truth against each method's release (Fig. 6 analogue)."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=list(months), y=truth, mode="lines+markers", name="truth",
                             line=dict(color=TRUTH_COLOR, width=4)))
    for m, y in series.items():
        fig.add_trace(go.Scatter(x=list(months), y=y, mode="lines+markers", name=_label(m),
                                 line=dict(color=METHOD_COLORS.get(m, PALETTE[4]), dash="dot")))
    return _layout(fig, f"Cases in the smallest county ({county}): truth vs releases",
                   xaxis=dict(title="month"), yaxis=dict(title="cases"))


def make_contraction_figure(cf: pd.DataFrame, counties: Sequence[str]) -> go.Figure:
    """(iv) PP contraction frequencies (three events) against ε for selected counties (Fig. 7 analogue)."""
    fig = go.Figure()
    events = (("case_zero", "cases → 0", "solid"), ("death_zero", "deaths → 0", "dash"),
              ("rate", "deaths = cases (survival rate → 0)", "dot"))
    for k, c in enumerate(counties):
        d = cf[cf["county"] == c].sort_values("epsilon")
        pop = int(d["population"].iloc[0]) if len(d) else 0
        for col, lab, dash in events:
            fig.add_trace(go.Scatter(x=d["epsilon"], y=d[col], mode="lines+markers",
                                     name=f"{c} (pop. {pop:,}): {lab}",
                                     line=dict(color=PALETTE[k % len(PALETTE)], dash=dash)))
    return _layout(fig, "How often post-processing pushes counts onto the boundary",
                   xaxis=dict(title="ε", type="log"), yaxis=dict(title="frequency", range=[0, 1]),
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
    return _layout(fig, "Prior strength α: too weak or too strong both hurt", xaxis=dict(title="α", type="log"),
                   yaxis=dict(title="mean total ℓ₂ loss"))


def make_alg1_figure(summaries: Mapping[str, partial_release.PosteriorSummary]) -> go.Figure:
    """Posterior mean ± sd of each cell probability for the exact posterior and the samplers."""
    fig = go.Figure()
    for k, (lab, s) in enumerate(summaries.items()):
        cells = [f"cell {i + 1}" for i in range(len(s.mean))]
        fig.add_trace(go.Bar(x=cells, y=s.mean, error_y=dict(type="data", array=s.sd), name=lab,
                             marker_color=(PALETTE[3] if "incorrect" in lab else PALETTE[k % len(PALETTE)])))
    return _layout(fig, "Posterior of the cell probabilities given noisy counts and the public total",
                   barmode="group", yaxis=dict(title="posterior mean ± sd", range=[0, 1]))
