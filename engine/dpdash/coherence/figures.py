"""Plotly figures of the coherence explorer (pure functions: no streamlit, unit-testable).

Plots follow ``specs/coherence_explorer.md`` §7.3; the seed's Figures 2 and 3
(``seeds/000_f379639b976c7ffb.txt`` §5) are plots 3 and 1.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpdash.coherence import core as co
from dpdash.coherence.verdicts import alpha_text, interval_text, members_text, w1_text
from dpdash.common import figure_marks as fm
from dpdash.accounting import maxinfo as mi
from dpdash.common.formatting import log_axis, percent
from dpdash.common.palette import PALETTE, palette_color

GREY = "#B0B0B0"
#: Reference lines (α, γ, the current ε) in near-black, so no group or curve colour is reused for them.
REF = "#333333"
MAX_POINTS = 600  # per trace; quantile-downsampled beyond (a sorted sample is its quantile function)


def _plain(text: object) -> str:
    """A user's group name as Plotly shows it: Plotly reads ``<a href>``, ``<br>`` and entities in titles,
    labels and legends, so ``&``, ``<`` and ``>`` become entities and show as typed (issue 17, inert text)."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_color = palette_color


def _downsample_sorted(x: np.ndarray, k: int = MAX_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """Sorted values against rank fraction (i − 0.5)/m, reduced to ≤ k points (quantiles)."""
    s = np.sort(np.asarray(x, dtype=float))
    m = s.size
    ranks = (np.arange(1, m + 1) - 0.5) / m
    if m <= k:
        return ranks, s
    idx = np.unique(np.round(np.linspace(0, m - 1, k)).astype(int))
    return ranks[idx], s[idx]


def _ecdf_on(grid: np.ndarray, x: np.ndarray) -> np.ndarray:
    s = np.sort(x)
    return np.searchsorted(s, grid, side="right") / s.size


def _alt(fig: go.Figure, text: str) -> go.Figure:
    fig.layout.meta = {"alt": text}
    return fig


def alt_text(fig: go.Figure) -> str:
    """The sentence a screen reader says for a figure built here (what it shows, with its numbers)."""
    meta = fig.layout.meta
    return str(meta.get("alt", "")) if isinstance(meta, dict) else ""


def _line_style(j: int, skip: int = 0) -> dict:
    """Colour j of the palette (after ``skip`` colours kept for other traces, black excluded); past the palette,
    dashes tell the lines apart, so no two lines look the same."""
    cols = PALETTE[skip:-1]
    dash = ("solid", "dash", "dot", "dashdot")[(j // len(cols)) % 4]
    return dict(color=cols[j % len(cols)], dash=dash)


# ----------------------------------------------------------------------------- 1. predictions
def make_predictions_figure(
    pred_a: np.ndarray, pred_b: np.ndarray, *, group: str, mode: str = "sorted", alpha: float | None = None
) -> go.Figure:
    """Plot 1: predictions on ``X_a ∩ C`` (released) and ``X_b ∩ C`` (held out) for one group.

    ``mode="sorted"``: sorted predictions against rank fraction (seed Figure 3);
    ``mode="ecdf"``: the two ECDFs with the area between them shaded (that area is W1).
    """
    a = np.asarray(pred_a, dtype=float)
    b = np.asarray(pred_b, dtype=float)
    fig = go.Figure()
    if a.size == 0 or b.size == 0:
        fig.update_layout(title=f"{_plain(group)}: a half has no members")
        return _alt(fig, f"No chart: one half has no members of {group}.")
    d = co.w1(a, b)
    d_text = w1_text(d, alpha)  # as the verdict and the bar chart read it
    title = f"{_plain(group)}: W1 = {d_text}  (released {a.size:,}, held out {b.size:,})"
    if mode == "ecdf":
        grid = np.unique(np.concatenate([[-1.0], a, b, [1.0]]))
        if grid.size > 4 * MAX_POINTS:
            grid = np.unique(np.concatenate([[-1.0], np.quantile(np.concatenate([a, b]),
                                                                  np.linspace(0, 1, 4 * MAX_POINTS)), [1.0]]))
        fa, fb = _ecdf_on(grid, a), _ecdf_on(grid, b)
        fig.add_trace(go.Scatter(x=grid, y=fa, mode="lines", line_shape="hv", name="released half",
                                 line=dict(color=_color(0))))
        fig.add_trace(go.Scatter(x=grid, y=fb, mode="lines", line_shape="hv", name="held-out half",
                                 line=dict(color=_color(1)), fill="tonexty",
                                 fillcolor="rgba(213,94,0,0.25)"))
        fig.update_layout(title=title, xaxis_title="prediction h(x)", yaxis_title="share of members ≤ x")
        fig.update_xaxes(range=[-1.05, 1.05])
        fig.update_yaxes(range=[0, 1.02])
        return _alt(fig, f"Distribution functions of the predictions for {group} on the released half "
                         f"({a.size:,} members) and the held-out half ({b.size:,}); the shaded area between them is "
                         f"W1 = {d_text}.")
    ra, sa = _downsample_sorted(a)
    rb, sb = _downsample_sorted(b)
    fig.add_trace(go.Scatter(x=ra, y=sa, mode="lines", name="released half", line=dict(color=_color(0))))
    fig.add_trace(go.Scatter(x=rb, y=sb, mode="lines", name="held-out half",
                             line=dict(color=_color(1), dash="dash")))
    fig.update_layout(title=title, xaxis_title="share of the group's members (sorted by prediction)",
                      yaxis_title="prediction h(x)")
    fig.update_yaxes(range=[-1.05, 1.05])
    return _alt(fig, f"Sorted predictions for {group}: {np.mean(a < 0):.0%} of the {a.size:,} released members and "
                     f"{np.mean(b < 0):.0%} of the {b.size:,} held-out members get a negative prediction; "
                     f"W1 = {d_text}.")


# ----------------------------------------------------------------------------- 2. W1 per group
def make_group_w1_figure(
    names: Sequence[str], sizes: Sequence[int], w1: np.ndarray, in_collection: Sequence[bool], *, alpha: float
) -> go.Figure:
    """Plot 2: W1 of each group on one split; groups outside 𝒞* in grey; α as a line."""
    w = np.asarray(w1, dtype=float)
    colors = [(_color(0) if inc else GREY) for inc in in_collection]
    labels = [f"{_plain(nm)} ({s:,})" for nm, s in zip(names, sizes)]
    # the verdict's reading of each W1 (more decimals where two would put a value above α on the line)
    text = ["undefined" if np.isnan(v) else w1_text(v, alpha) for v in w]
    fig = go.Figure(go.Bar(x=labels, y=np.nan_to_num(w), marker_color=colors, text=text, textposition="outside",
                           hovertemplate="%{x}<br>W1 = %{text}<extra></extra>", name="W1"))
    fm.hline(fig, y=alpha, line=dict(color=REF, dash="dash"), annotation_text=f"α = {alpha_text(alpha)}")
    fig.update_layout(title="W1 per group (one split); grey = left out (fewer than γ members)",
                      yaxis_title="W1 (0 = same, 2 = opposite)", showlegend=False)
    fig.update_xaxes(tickangle=0 if len(labels) <= 6 else -30, automargin=True)
    fig.update_yaxes(range=[0, max(2.1, float(np.nanmax(w, initial=0)) * 1.1)])
    parts = [f"{nm} {t}" for nm, t in zip(names, text)]
    above = sum(1 for v, inc in zip(w, in_collection) if inc and np.isfinite(v) and v > alpha)
    return _alt(fig, f"Bar chart of W1 per group on one split ({'; '.join(parts)}); {above} kept group"
                     f"{'s are' if above != 1 else ' is'} above the α = {alpha_text(alpha)} line.")


# ----------------------------------------------------------------------------- 3. sorted W1 over runs
def make_sorted_w1_figure(result: co.ExperimentResult, *, gamma: float, alpha: float,
                          estimate: co.BetaEstimate | None) -> go.Figure:
    """Plot 3 (seed Figure 2): sorted W1 over runs, one line per group in 𝒞*, with α and β̂(α)."""
    inc = result.in_collection(gamma)
    fig = go.Figure()
    R = result.w1.shape[0]
    for j, (nm, ok) in enumerate(zip(result.group_names, inc)):
        if not ok:
            continue
        col = np.sort(result.w1[:, j][~np.isnan(result.w1[:, j])])
        if col.size == 0:
            continue
        x = (np.arange(1, col.size + 1) - 0.5) / col.size
        fig.add_trace(go.Scatter(x=x, y=col, mode="lines+markers" if col.size <= 30 else "lines", name=_plain(nm),
                                 line=_line_style(j), marker=dict(color=_line_style(j)["color"])))
    fm.hline(fig, y=alpha, line=dict(color=REF, dash="dash"), annotation_text=f"α = {alpha_text(alpha)}")
    if estimate is not None:
        title = (f"Sorted W1 over {R} runs — {estimate.failures}/{estimate.runs} runs fail "
                 f"(95%: {interval_text(estimate.lower, estimate.upper)})")
    else:
        title = f"Sorted W1 over {R} runs"
    fig.update_layout(title=title, xaxis_title="share of runs (sorted by W1)", yaxis_title="W1")
    fig.update_yaxes(range=[0, 2.05])
    meds = [f"{nm} median {np.nanmedian(result.w1[:, j]):.2f}" for j, (nm, ok) in
            enumerate(zip(result.group_names, inc)) if ok and np.any(~np.isnan(result.w1[:, j]))]
    return _alt(fig, f"W1 of each kept group over {R} runs, sorted ({'; '.join(meds)}), with the α = {alpha:.2f} "
                     "line.")


# ----------------------------------------------------------------------------- 4. failure rate vs α
def make_failure_rate_figure(result: co.ExperimentResult, *, gamma: float, alpha: float,
                             beta_theory: float | None = None, confidence: float = 0.95) -> go.Figure:
    """Plot 4: β̂(α) as a step curve on [0, 2] with its Clopper–Pearson band."""
    m = result.max_w1(gamma)
    d = np.sort(m[~np.isnan(m)])
    fig = go.Figure()
    if d.size == 0:
        fig.update_layout(title="No run had members of a kept group in both halves")
        return _alt(fig, "No chart: no run had members of a kept group in both halves.")
    # β̂ only changes at the observed maxima: evaluate just after each jump point.
    alphas = np.unique(np.clip(np.concatenate([[0.0, 2.0], d, np.minimum(d + 1e-9, 2.0)]), 0, 2))
    bh = co.beta_curve(result, alphas, gamma)
    R = d.size
    k = np.rint(bh * R).astype(int)
    lo = np.array([co.clopper_pearson(int(ki), R, confidence)[0] for ki in k])
    hi = np.array([co.clopper_pearson(int(ki), R, confidence)[1] for ki in k])
    fig.add_trace(go.Scatter(x=alphas, y=hi, mode="lines", line=dict(width=0, shape="hv"), showlegend=False,
                             hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=alphas, y=lo, mode="lines", line=dict(width=0, shape="hv"), fill="tonexty",
                             fillcolor="rgba(0,114,178,0.2)", name=f"{confidence:.0%} uncertainty band"))
    fig.add_trace(go.Scatter(x=alphas, y=bh, mode="lines", line=dict(color=_color(0), shape="hv"),
                             name="share of runs failing"))
    fm.vline(fig, x=alpha, line=dict(color=REF, dash="dash"), annotation_text=f"α = {alpha_text(alpha)}")
    if beta_theory is not None:
        fm.hline(fig, y=beta_theory, line=dict(color=_color(2), dash="dot"), annotation_text=f"β = {beta_theory:.3g}",
                      annotation_position="top left")
    fig.update_layout(title=f"Failure rate vs α ({R} runs)", xaxis_title="α (largest W1 tolerated)",
                      yaxis_title="share of runs failing")
    fig.update_xaxes(range=[0, 2])
    fig.update_yaxes(range=[-0.02, 1.02])
    at = float(np.mean(d > alpha))
    return _alt(fig, f"Step curve of the share of {R} runs failing against α, falling from {bh[0]:.0%} at α = 0 "
                     f"to 0% at α = {w1_text(d.max())}; at α = {alpha_text(alpha)} it is {percent(at)}.")


# ----------------------------------------------------------------------------- 5. size vs mean W1
def make_size_w1_figure(summary: pd.DataFrame, *, gamma: float, gamma_theorem7: float | None = None) -> go.Figure:
    """Plot 5: group size (log x) against mean W1 over runs, with γ (and Theorem 7's γ for DP)."""
    fig = go.Figure()
    s = summary.dropna(subset=["mean_w1"])
    colors = [(_color(0) if inc else GREY) for inc in s["in_collection"]]
    fig.add_trace(go.Scatter(x=s["size"], y=s["mean_w1"], mode="markers+text", text=[_plain(g) for g in s["group"]],
                             textposition="top center", marker=dict(color=colors, size=12), name="groups",
                             error_y=dict(type="data", array=np.nan_to_num(s["sd_w1"].to_numpy()), visible=True)))
    # On a log axis, annotations take log10 coordinates: place them explicitly.
    if gamma > 0:
        fm.vline(fig, x=gamma, line=dict(color=REF, dash="dash"))
        fig.add_annotation(x=math.log10(gamma), y=1.04, yref="paper", text=f"γ = {members_text(gamma)}",
                           showarrow=False)
    if gamma_theorem7 is not None and math.isfinite(gamma_theorem7) and gamma_theorem7 > 0:
        fm.vline(fig, x=gamma_theorem7, line=dict(color=_color(2), dash="dot"))
        fig.add_annotation(x=math.log10(gamma_theorem7), y=-0.02, yref="paper", yanchor="top",
                           text=f"Theorem 7: γ = {members_text(gamma_theorem7)}", showarrow=False)
    xs = [float(v) for v in s["size"]] + [g for g in (gamma, gamma_theorem7) if g and math.isfinite(g) and g > 0]
    lo, hi = (min(xs), max(xs)) if xs else (1.0, 10.0)
    fig.update_xaxes(**log_axis(max(lo, 1.0) / 2, max(hi, 2.0) * 2, title="group size (members, log scale)"))
    fig.update_layout(title="Smaller groups show larger distances", yaxis_title="mean W1 (± s.d.)", showlegend=False)
    pts = "; ".join(f"{g} ({int(m):,} members) {v:.2f}" for g, m, v in zip(s["group"], s["size"], s["mean_w1"]))
    return _alt(fig, f"Group size against mean W1 over the runs: {pts}.")


# ----------------------------------------------------------------------------- 6. W1 vs ε
def make_sweep_figure(sweep: pd.DataFrame, *, clear_means: Mapping[str, float] | None = None,
                      floor: Mapping[str, np.ndarray] | None = None) -> go.Figure:
    """Plot 6: mean W1 (q05–q95 bars) per group against ε; ∞ (no noise) at the right."""
    fig = go.Figure()
    finite = sorted({e for e in sweep["epsilon"] if math.isfinite(e)})
    inf_x = (max(finite) * 10) if finite else 1.0
    groups = list(dict.fromkeys(sweep["group"]))
    for j, g in enumerate(groups):
        d = sweep[sweep["group"] == g].sort_values("epsilon")
        x = np.where(np.isfinite(d["epsilon"]), d["epsilon"], inf_x)
        fig.add_trace(go.Scatter(
            x=x, y=d["mean_w1"], mode="lines+markers", name=_plain(g), line=_line_style(j),
            error_y=dict(type="data", symmetric=False, array=(d["q95_w1"] - d["mean_w1"]).to_numpy(),
                         arrayminus=(d["mean_w1"] - d["q05_w1"]).to_numpy()),
        ))
        if floor is not None and g in floor:
            f = np.asarray(floor[g], dtype=float)
            f = f[~np.isnan(f)]
            if f.size:
                fm.hrect(fig, y0=float(np.quantile(f, 0.05)), y1=float(np.quantile(f, 0.95)), fillcolor=GREY,
                              opacity=0.25, line_width=0)
        if clear_means and g in clear_means and np.isfinite(clear_means[g]):
            fm.hline(fig, y=clear_means[g], line=dict(color=_line_style(j)["color"], dash="longdash", width=1),
                          annotation_text=f"clear release: {_plain(g)}", annotation_position="top left")
    ticks = finite + [inf_x]
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[f"{e:g}" for e in finite] + ["∞ (exact, not DP)"],
                     title="ε of the DP histogram release")
    fig.update_layout(title="W1 vs ε (grey band: what random splitting alone gives)",
                      yaxis_title="mean W1 (bars: 5th–95th percentile)")
    ends = []
    for g in groups:
        d = sweep[sweep["group"] == g].sort_values("epsilon")
        last = float(d["epsilon"].iloc[-1])
        ends.append(f"{g} from {d['mean_w1'].iloc[0]:.2f} at ε = {d['epsilon'].iloc[0]:g} to "
                    f"{d['mean_w1'].iloc[-1]:.2f} at ε = {'∞' if math.isinf(last) else f'{last:g}'}")
    return _alt(fig, f"Mean W1 per group against ε: {'; '.join(ends)}. A grey band marks chance level.")


# ----------------------------------------------------------------------------- 7. theory
def make_theory_figure(*, n: float, alpha: float, beta: float, n_groups: int, epsilon: float,
                       group_sizes: Mapping[str, int]) -> go.Figure:
    """Plot 7: γ required against ε (log–log): Theorem 7 solid, Theorem 8 dashed (ε ≤ 0.5)."""
    eps = np.logspace(-5, 1, 200)
    g7 = mi.gamma_curve(eps, n, alpha, beta, n_groups, kind="pure")
    g8 = mi.gamma_curve(eps, n, alpha, beta, n_groups, kind="approx")
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=eps, y=g7, mode="lines", name="Theorem 7 (ε-DP)", line=dict(color=_color(0))))
    fig.add_trace(go.Scatter(x=eps, y=g8, mode="lines", name="Theorem 8 ((ε, δ)-DP)",
                             line=dict(color=_color(1), dash="dash")))
    x_ends = [float(eps[0]), float(eps[-1])]
    fig.add_trace(go.Scatter(x=x_ends, y=[n, n], mode="lines", line=dict(color="black", width=2),
                             name=f"n = {n:,.0f} (above: vacuous)"))
    for j, (nm, size) in enumerate(group_sizes.items()):
        style = _line_style(j, skip=2)
        fig.add_trace(go.Scatter(x=x_ends, y=[max(size, 1)] * 2, mode="lines",
                                 line=dict(color=style["color"], dash="dot" if style["dash"] == "solid" else
                                           style["dash"], width=2), name=f"{_plain(nm)} ({size:,})"))
    fm.vline(fig, x=epsilon, line=dict(color=REF, dash="dash", width=1))
    fig.add_annotation(x=math.log10(epsilon), y=1.02, yref="paper", text=f"ε = {epsilon:g}", showarrow=False)
    fig.update_xaxes(**log_axis(float(eps[0]), float(eps[-1]), title="ε"))
    # Above 100·n every guarantee is vacuous: the axis stops there instead of running on to 10¹⁵.
    sizes = [max(v, 1) for v in group_sizes.values()]
    fig.update_yaxes(**log_axis(min([40.0] + sizes), 100.0 * n, title="γ required (members)"))
    fig.update_layout(title=f"Size constraint γ vs ε (α = {alpha_text(alpha)}, β = {beta:.3g}, {n_groups} kept "
                            "groups)")
    g_now = mi.gamma_pure(epsilon, n, alpha, beta, n_groups).gamma
    return _alt(fig, f"Required group size against ε (log–log) for Theorems 7 and 8, with the group sizes and n = "
                     f"{n:,.0f} as horizontal lines; at ε = {epsilon:g} Theorem 7 needs {members_text(g_now)} members.")


def make_terms_figure(sc: mi.SizeConstraint) -> go.Figure:
    """Plot 7b: the five terms T1..T5 of Eq. (2) at the current ε; the binding one highlighted."""
    colors = [(_color(3) if i == sc.binding_term else _color(0)) for i in range(5)]
    fig = go.Figure(go.Bar(x=list(mi.TERM_LABELS), y=list(sc.terms), marker_color=colors,
                           text=[members_text(t) for t in sc.terms], textposition="outside"))
    fig.update_yaxes(**log_axis(min(sc.terms) / 1.5, max(sc.terms) * 3, title="members"))
    fig.update_layout(title=f"{sc.theorem}: γ = {members_text(sc.gamma)} (binding: {mi.TERM_LABELS[sc.binding_term]})",
                      showlegend=False)
    terms = "; ".join(f"{lab} = {members_text(t)}" for lab, t in zip(mi.TERM_LABELS, sc.terms))
    return _alt(fig, f"Bars of the five terms of {sc.theorem}'s size constraint ({terms}); the largest, "
                     f"{mi.TERM_LABELS[sc.binding_term]}, sets γ = {members_text(sc.gamma)}.")


# ----------------------------------------------------------------------------- 8. Section 7
def make_single_column_figure(res: co.SingleColumnResult, *, title: str | None = None) -> go.Figure:
    """Plot 8: per-group W1 over random splits for the one-bit predictor, with Theorem 9's bound."""
    fig = go.Figure()
    for j, nm in enumerate(res.group_names):
        w = res.w1[:, j]
        w = w[~np.isnan(w)]
        fig.add_trace(go.Box(y=w, name=f"{_plain(nm)} ({res.group_sizes[j]:,})", marker_color=_line_style(j)["color"],
                             boxpoints=False))
        b = res.bound[j]
        if np.isfinite(b):
            fig.add_trace(go.Scatter(x=[f"{_plain(nm)} ({res.group_sizes[j]:,})"], y=[min(b, 2.0)], mode="markers",
                                     marker=dict(symbol="line-ew-open", size=40, color="black"),
                                     name="paper's bound" if j == 0 else None, showlegend=j == 0))
    fig.update_layout(title=title or "One yes/no column in the clear: W1 over random splits (bar = Theorem 9 bound)",
                      yaxis_title="W1 (bars above 2 are drawn at 2)", showlegend=False)
    bounds = [w1_text(b) if np.isfinite(b) else "none" for b in res.bound]
    parts = "; ".join(f"{nm} largest {w1_text(np.nanmax(res.w1[:, j]))}, bound {bounds[j]}"
                      for j, nm in enumerate(res.group_names))
    return _alt(fig, f"Box plots of W1 per group over {res.w1.shape[0]:,} random splits with the paper's bound "
                     f"({parts}).")
