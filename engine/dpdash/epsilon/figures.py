"""Plotly figures for the Epsilon calculator page (pure functions, no streamlit; unit-testable).

Each ``make_*_figure`` takes engine results and returns a ``go.Figure``. Hover shows 4 significant figures.
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from scipy import stats

from dpdash.accounting import composition as acc
from dpdash.accounting import mechanisms as mech
from dpdash.common.formatting import finite_range, log_axis, tick_text
from dpdash.common.palette import PALETTE, palette_color

MECH_LABELS = {"laplace": "Laplace", "gaussian": "Gaussian", "discrete_laplace": "Discrete Laplace",
               "discrete_gaussian": "Discrete Gaussian"}
H4 = "%{y:.4g}"


_colour = palette_color


def make_halfwidth_figure(curves: pd.DataFrame, *, current_epsilon: float, current_half_width: float,
                          current_mechanism: str, confidence: float, unit: str = "") -> go.Figure:
    """Half-width vs ε (log x) for each mechanism; ``curves`` has columns mechanism, epsilon, half_width."""
    fig = go.Figure()
    for i, (m, g) in enumerate(curves.groupby("mechanism", sort=False)):
        fig.add_trace(go.Scatter(x=g["epsilon"], y=g["half_width"], mode="lines", name=MECH_LABELS.get(m, m),
                                 line=dict(color=_colour(i), shape="hv" if m.startswith("discrete") else "linear"),
                                 hovertemplate="ε=%{x:.4g}<br>±" + H4 + "<extra>" + MECH_LABELS.get(m, m) + "</extra>"))
    if math.isfinite(current_epsilon) and current_epsilon > 0:
        fig.add_trace(go.Scatter(x=[current_epsilon], y=[current_half_width], mode="markers", name="current",
                                 marker=dict(size=14, color="black", symbol="diamond"),
                                 hovertemplate="current: ε=%{x:.4g}, ±%{y:.4g}<extra></extra>"))
    ys = curves["half_width"].to_numpy(float) if len(curves) else np.array([current_half_width])
    fig.update_layout(title=f"Half-width at {confidence:.4g}% confidence vs ε",
                      xaxis=log_axis(*finite_range(curves["epsilon"] if len(curves) else [1e-3, 20]),
                                     title="ε (privacy loss)"),
                      yaxis=log_axis(*finite_range(ys, [current_half_width]),
                                     title=f"± half-width{(' (' + unit + ')') if unit else ''}"),
                      legend=dict(orientation="h", y=-0.25))
    return fig


def make_noise_figure(mechanism: str, *, scale: float, half_width: float) -> go.Figure:
    """Noise density (continuous) or pmf (discrete) with the ±half-width interval shaded."""
    fig = go.Figure()
    span = max(half_width * 1.6, 4 * mech.noise_std(mechanism, scale=scale))
    if mechanism in ("laplace", "gaussian"):
        x = np.linspace(-span, span, 801)
        y = stats.laplace.pdf(x, scale=scale) if mechanism == "laplace" else stats.norm.pdf(x, scale=scale)
        inside = np.abs(x) <= half_width
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name="density", line=dict(color=PALETTE[0]),
                                 hovertemplate="noise %{x:.4g}<br>density %{y:.4g}<extra></extra>"))
        fig.add_trace(go.Scatter(x=x[inside], y=y[inside], fill="tozeroy", mode="none", name="interval",
                                 fillcolor="rgba(0,114,178,0.25)", hoverinfo="skip"))
    else:
        m = int(min(math.ceil(span), 2000))
        ys = np.arange(-m, m + 1)
        pmf = mech.discrete_noise_pmf(mechanism, scale=scale, values=ys)
        if mechanism == "discrete_gaussian":
            pmf = pmf / pmf.sum()  # the window shown (±4σ at least) renormalised, as the caption's bars sum to 1
        colours = np.where(np.abs(ys) <= half_width, PALETTE[0], "#BBBBBB")
        fig.add_trace(go.Bar(x=ys, y=pmf, marker_color=colours, name="pmf",
                             hovertemplate="noise %{x}<br>probability %{y:.4g}<extra></extra>"))
    fig.add_vline(x=half_width, line=dict(dash="dash", color="grey"))
    fig.add_vline(x=-half_width, line=dict(dash="dash", color="grey"))
    fig.update_layout(title=f"{MECH_LABELS.get(mechanism, mechanism)} noise: shaded = within ±{half_width:.4g}",
                      xaxis_title="added noise", yaxis_title="density" if mechanism in ("laplace", "gaussian")
                      else "probability", showlegend=False)
    return fig


def best_valid_envelope(curve: pd.DataFrame) -> pd.DataFrame:
    """Pointwise minimum over valid rules at each k (k, epsilon)."""
    eps = pd.to_numeric(curve["epsilon"], errors="coerce").astype(float)  # an empty curve (no rule ticked) is object
    v = curve.assign(epsilon=eps)[curve["valid"].astype(bool) & np.isfinite(eps)]
    return v.groupby("k", as_index=False)["epsilon"].min()


def make_composition_figure(curve: pd.DataFrame, *, log_axes: bool = True, delta: float = 1e-6) -> go.Figure:
    """ε vs k, one curve per rule, plus the dotted "best valid" envelope; invalid points omitted."""
    fig = go.Figure()
    for i, rule in enumerate(acc.ALL_RULES):
        g = curve[(curve["rule"] == rule) & curve["valid"]]
        if g.empty:
            continue
        fig.add_trace(go.Scatter(x=g["k"], y=g["epsilon"], mode="lines+markers" if rule == "pld" else "lines",
                                 name=acc.RULE_LABELS[rule], line=dict(color=_colour(i)),
                                 hovertemplate="k=%{x}<br>ε=" + H4 + "<extra>" + acc.RULE_LABELS[rule] + "</extra>"))
    env = best_valid_envelope(curve)
    if not env.empty:
        # a wide translucent band behind the rules: no rule's colour is reused for it
        fig.add_trace(go.Scatter(x=env["k"], y=env["epsilon"], mode="lines", name="best valid bound",
                                 line=dict(color="rgba(0,0,0,0.18)", width=10),
                                 hovertemplate="k=%{x}<br>best ε=" + H4 + "<extra></extra>"))
    fig.update_layout(title=f"Total ε after k releases (δ = {tick_text(delta)})", xaxis_title="k (number of releases)",
                      yaxis_title="total ε", legend=dict(orientation="h", y=-0.25))
    if log_axes:
        ok = curve[curve["valid"]]
        fig.update_xaxes(**log_axis(*finite_range(ok["k"] if len(ok) else [1, 10])))
        fig.update_yaxes(**log_axis(*finite_range(ok["epsilon"] if len(ok) else [1, 10])))
    return fig


def plain_label(text: object, max_len: int = 60) -> str:
    """User text as a Plotly label: Plotly reads a subset of HTML (<a href>, <b>, …) in names and hover text,
    so angle brackets and ampersands become entities and the text is cut to ``max_len`` characters."""
    s = str(text)
    if len(s) > max_len:
        s = s[: max_len - 1] + "…"
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def make_budget_figure(shares) -> go.Figure:
    """Stacked horizontal bar of an ``dpdash.accounting.budget.BudgetShares``: statistics, unused (white) and reserve (grey).

    The bars sum to the budget in the unit on the axis (ε, or ρ under zCDP).
    """
    fig = go.Figure()
    unit = shares.unit
    for i, (nm, s) in enumerate(zip(shares.names, shares.values)):
        label = plain_label(nm)
        fig.add_trace(go.Bar(y=["budget"], x=[s], name=label, orientation="h", marker_color=_colour(i),
                             hovertemplate=f"{label}: {unit} = " + "%{x:.4g}<extra></extra>"))
    if shares.unused > 0:
        fig.add_trace(go.Bar(y=["budget"], x=[shares.unused], name="not spent", orientation="h",
                             marker=dict(color="white", line=dict(color="#888888", width=1)),
                             hovertemplate=f"not spent: {unit} = " + "%{x:.4g}<extra></extra>"))
    if shares.reserve > 0:
        fig.add_trace(go.Bar(y=["budget"], x=[shares.reserve], name="reserve", orientation="h", marker_color="#BBBBBB",
                             hovertemplate=f"reserve: {unit} = " + "%{x:.4g}<extra></extra>"))
    how = " (composed, split by own ε)" if shares.proportional else ""
    fig.update_layout(barmode="stack", title=f"Budget {unit} = {shares.budget:.4g}{how}",
                      xaxis_title=f"{unit} ({'zCDP' if unit == 'ρ' else 'privacy loss'})",
                      height=260, legend=dict(orientation="h", y=-0.6, traceorder="normal"))
    return fig


def make_adaptive_figure(trace: pd.DataFrame, *, epsilon_g: float, halts: Mapping[str, int | None]) -> go.Figure:
    """Running bound vs round per rule, the stop line at ε_g and a vertical line at each HALT."""
    fig = go.Figure()
    for i, (rule, label) in enumerate(acc.ADAPTIVE_LABELS.items()):
        g = trace[trace["rule"] == rule]
        if g.empty:
            continue
        y = g["bound"].replace([np.inf], np.nan)
        heur = rule == "heuristic"
        fig.add_trace(go.Scatter(
            x=g["round"], y=y, mode="lines", name=label,
            line=dict(color="#D55E00" if heur else _colour(i if i < 3 else i + 1), dash="dash" if heur else "solid"),
            hovertemplate=("round %{x}<br>" + H4 + "<extra>not a valid bound (Thm 5.6.1)</extra>") if heur
            else ("round %{x}<br>bound " + H4 + "<extra>" + label + "</extra>")))
    top = 3.0 * epsilon_g  # the interesting region is around the budget; basic Σεᵢ may run far above it
    fig.add_hline(y=epsilon_g, line=dict(color="black", width=2), annotation_text=f"stop line ε_g = {epsilon_g:.4g}")
    for i, (name, r) in enumerate(halts.items()):
        if r is not None:
            # the same colour as that rule's line above (zCDP: the zCDP odometer's)
            col = _colour({"basic": 0, "advanced": 1, "zcdp": 5}.get(name, i))
            fig.add_vline(x=r, line=dict(dash="dot", color=col))
            fig.add_annotation(x=r, y=top * (0.95 - 0.09 * i), text=f"{name} filter stops at request {r}",
                               showarrow=False, xanchor="left", font=dict(size=12, color=col))
    fig.update_layout(title="Privacy loss bound as requests arrive", xaxis_title="round (request number)",
                      yaxis=dict(title="ε bound", range=[0, top]), legend=dict(orientation="h", y=-0.25))
    return fig


def make_tradeoff_figure(fpr: np.ndarray, curves: Mapping[str, np.ndarray]) -> go.Figure:
    """Attack trade-off: least FNR at each FPR; the infeasible area below the first curve is shaded."""
    fig = go.Figure()
    first = True
    for i, (name, y) in enumerate(curves.items()):
        fig.add_trace(go.Scatter(x=fpr, y=y, mode="lines", name=name, line=dict(color=_colour(i)),
                                 fill="tozeroy" if first else None, fillcolor="rgba(213,94,0,0.15)" if first else None,
                                 hovertemplate="FPR %{x:.4g}<br>least FNR %{y:.4g}<extra>" + name + "</extra>"))
        first = False
    fig.add_trace(go.Scatter(x=[0, 1], y=[1, 0], mode="lines", name="no information (y = 1 − x)",
                             line=dict(color="grey", dash="dash"), hoverinfo="skip"))
    fig.update_layout(title="What an attacker can achieve: shaded = impossible under this guarantee",
                      xaxis=dict(title="false-positive rate (α)", range=[0, 1]),
                      yaxis=dict(title="false-negative rate", range=[0, 1]), legend=dict(orientation="h", y=-0.25))
    return fig


def make_advantage_figure(eps: np.ndarray, curves: Mapping[str, np.ndarray], *, current: float | None = None) -> go.Figure:
    """Membership advantage (max TPR − FPR) vs ε."""
    fig = go.Figure()
    for i, (name, y) in enumerate(curves.items()):
        fig.add_trace(go.Scatter(x=eps, y=y, mode="lines", name=name, line=dict(color=_colour(i)),
                                 hovertemplate="ε %{x:.4g}<br>advantage %{y:.4g}<extra>" + name + "</extra>"))
    if current is not None:
        fig.add_vline(x=current, line=dict(dash="dot", color="black"))
    fig.update_layout(title="Membership advantage bound vs ε", xaxis=log_axis(*finite_range(eps), title="ε"),
                      yaxis=dict(title="largest true-positive minus false-positive rate", range=[0, 1]),
                      legend=dict(orientation="h", y=-0.25))
    return fig


WIDTH_LABELS = {"nonadaptive": "Non-adaptive (Hoeffding)", "split_binomial": "Split (binomial)",
                "split_hoeffding": "Split (Hoeffding)", "dfhprr": "DP: DFHPRR (Thm 3.2.2)",
                "bnsssu": "DP: BNSSSU (Thm 3.3.1)", "rz_monitor": "DP: RZ + monitor (Thm 3.4.1)"}


def make_width_figure(widths: pd.DataFrame, *, annotate_k: int | None = None,
                      annotation: str | None = None) -> go.Figure:
    """τ vs k (capped at ½, capped points marked ×) and the noise std at each optimum; a dotted line at
    ``annotate_k`` labelled ``annotation`` (the tab view's crossover, the same k its headline and verdict name)."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("simultaneous width τ", "noise std at the optimum"))
    for i, (m, g) in enumerate(widths.groupby("method", sort=False)):
        col = _colour(i)
        lab = WIDTH_LABELS.get(m, m)
        fig.add_trace(go.Scatter(x=g["k"], y=g["tau"], mode="lines+markers", name=lab, line=dict(color=col),
                                 marker=dict(symbol=np.where(g["capped"], "x", "circle"), size=np.where(g["capped"], 10, 5)),
                                 hovertemplate="k=%{x}<br>τ=" + H4 + "<extra>" + lab + "</extra>"), row=1, col=1)
        if g["noise_std"].notna().any():
            fig.add_trace(go.Scatter(x=g["k"], y=g["noise_std"], mode="lines", name=lab, line=dict(color=col),
                                     showlegend=False, hovertemplate="k=%{x}<br>std=" + H4 + "<extra>" + lab + "</extra>"),
                          row=1, col=2)
    if annotate_k is not None:
        fig.add_vline(x=annotate_k, line=dict(dash="dot", color="black"), row=1, col=1,
                      annotation_text=annotation or f"DP beats splitting from k = {annotate_k:,}")
    fig.update_xaxes(**log_axis(*finite_range(widths["k"]), title="k (adaptive queries)"))
    fig.update_yaxes(**log_axis(*finite_range(widths["noise_std"])), row=1, col=2)
    fig.update_yaxes(title="τ (capped at 0.5)", range=[0, 0.52], row=1, col=1)
    fig.update_layout(legend=dict(orientation="h", y=-0.3), title="DP vs data splitting")
    return fig


def make_size_figure(ns: np.ndarray, sizes: np.ndarray, *, alpha: float) -> go.Figure:
    """Asymptotic Type I error of the classical test on noisy counts vs n, with a line at α."""
    fig = go.Figure(go.Scatter(x=ns, y=sizes, mode="lines", name="classical test on noisy counts",
                               line=dict(color=PALETTE[3]), hovertemplate="n=%{x:.4g}<br>size %{y:.4g}<extra></extra>"))
    fig.add_hline(y=alpha, line=dict(color="black", dash="dash"), annotation_text=f"α = {alpha:g}")
    fig.update_layout(title="Why the classical test fails on noisy counts: its false-alarm rate",
                      xaxis=log_axis(*finite_range(ns), title="n (records)"),
                      yaxis=dict(title="false-alarm rate (Type I error)", range=[0, 1.02]))
    return fig


def make_power_figure(x: np.ndarray, powers: Mapping[str, np.ndarray], *, xlabel: str, alpha: float,
                      log_x: bool = True) -> go.Figure:
    """Asymptotic power curves."""
    fig = go.Figure()
    for i, (name, y) in enumerate(powers.items()):
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=name, line=dict(color=_colour(i)),
                                 hovertemplate="%{x:.4g}<br>power %{y:.4g}<extra>" + name + "</extra>"))
    fig.add_hline(y=alpha, line=dict(color="grey", dash="dot"))
    fig.update_layout(title=f"Asymptotic power vs {xlabel}", xaxis=log_axis(*finite_range(x), title=xlabel) if log_x else dict(title=xlabel),
                      yaxis=dict(title="power", range=[0, 1.02]), legend=dict(orientation="h", y=-0.25))
    return fig


def make_gamma_figure(t: np.ndarray, gamma_mi: np.ndarray, gamma_rz: np.ndarray, *, crossover: float | None) -> go.Figure:
    """Corrected significance level γ vs mutual information t (bits): [T] Cor. 4.6.3 vs Thm 4.6.4."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=t, y=gamma_mi, mode="lines", name="mutual-information bound (Cor. 4.6.3)", line=dict(color=PALETTE[0]),
                             hovertemplate="t=%{x:.4g} bits<br>γ=%{y:.4g}<extra></extra>"))
    fig.add_trace(go.Scatter(x=t, y=gamma_rz, mode="lines", name="Russo–Zou bound (Thm 4.6.4)", line=dict(color=PALETTE[1]),
                             hovertemplate="t=%{x:.4g} bits<br>γ=%{y:.4g}<extra></extra>"))
    if crossover is not None:
        fig.add_vline(x=crossover, line=dict(dash="dot", color="black"), annotation_text=f"crossover t = {crossover:.4g}",
                      annotation_position="top left")
    # below 10⁻¹² a threshold means "never reject": the axis stops there rather than at the last float
    lo, hi = finite_range(np.maximum(gamma_mi, 1e-12), np.maximum(gamma_rz, 1e-12))
    fig.update_layout(title="Corrected p-value threshold vs information leaked",
                      xaxis=log_axis(*finite_range(t), title="information leaked t (bits)"),
                      yaxis=log_axis(lo, hi, title="threshold γ (reject when p ≤ γ)"),
                      legend=dict(orientation="h", y=-0.25))
    return fig


SIM_TEST_LABELS = {"classical_noisy": "classical on noisy counts", "asympt_gof": "AsymptGOF", "mc_gof": "MC GOF",
                   "projected": "projected", "asympt_indep": "AsymptIndep (2MLE)"}
AXIS_LABELS = {"n": "n (records)", "rho": "ρ", "epsilon": "ε"}


def make_simulation_figure(sim: pd.DataFrame, *, axis: str, alpha: float, series: str | None = None) -> go.Figure:
    """Empirical size (left) and power (right) vs the swept axis, one line per test, error bars 1.96·SE.

    ``sim`` is ``dpdash.epsilon.private_tests.simulate_grid`` output; ``axis`` is "n", "rho" or "epsilon"; ``series``
    (for an n × privacy grid) names the other axis, drawn as dash styles.
    """
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Size (data from the null)", "Power (data from null + Δ)"),
                        shared_yaxes=True)
    dashes = ("solid", "dash", "dot", "dashdot", "longdash")
    tests = list(dict.fromkeys(sim["test"]))
    levels = list(dict.fromkeys(sim[series])) if series else [None]
    for col, quantity in enumerate(("size", "power"), start=1):
        part = sim[sim["quantity"] == quantity]
        for i, t in enumerate(tests):
            for j, lev in enumerate(levels):
                g = part[part["test"] == t] if lev is None else part[(part["test"] == t) & (part[series] == lev)]
                g = g.sort_values(axis)
                label = SIM_TEST_LABELS.get(t, t) + ("" if lev is None else f", {AXIS_LABELS.get(series, series)} = {lev:.3g}")
                fig.add_trace(go.Scatter(
                    x=g[axis], y=g["rate"], mode="lines+markers", name=label, legendgroup=label, showlegend=col == 1,
                    line=dict(color=_colour(i), dash=dashes[j % len(dashes)]),
                    error_y=dict(type="data", array=1.96 * g["std_error"], visible=True),
                    hovertemplate=f"{AXIS_LABELS.get(axis, axis)}=%{{x:.4g}}<br>{quantity} %{{y:.4g}}<extra>{label}</extra>"),
                    row=1, col=col)
        fig.add_hline(y=alpha, line=dict(color="black", dash="dash"), row=1, col=col)
        fig.update_xaxes(**log_axis(*finite_range(sim[axis]), title=AXIS_LABELS.get(axis, axis)), row=1, col=col)
    fig.update_yaxes(title_text="rejection rate", range=[0, 1.02], row=1, col=1)
    fig.update_layout(title="Monte Carlo size and power", legend=dict(orientation="h", y=-0.3))
    return fig


# --------------------------------------------------------------------------- tables for people (screen and CSV)
RULE_PLAIN = {"basic": "Basic sum (Thm 2.1.4)", "advanced": "Advanced (Thm 2.1.5)", "advanced_drv": "Advanced, DRV form",
              "kov_analytic": "Kairouz–Oh–Viswanath formula (Thm 3.4)", "kov_optimal": "Optimal (KOV / MV)",
              "zcdp": "zCDP", "rdp": "Rényi DP", "pld": "Privacy loss distributions (PLD)"}
CAL_RULE_PLAIN = {"pure": "pure ε (Laplace)", "analytic": "exact (analytic)", "classic": "classic (ε < 1)",
                  "zcdp": "zCDP", "exact": "exact (discrete)"}


def calibration_table(cal) -> pd.DataFrame:
    """One ``dpdash.accounting.mechanisms.NoiseCalibration`` as a one-row table with plain column names."""
    return pd.DataFrame([{
        "mechanism": MECH_LABELS.get(cal.mechanism, cal.mechanism), "noise scale": cal.scale,
        "sensitivity": cal.sensitivity, "ε": cal.epsilon, "δ": cal.delta, "ρ (zCDP)": cal.rho,
        "noise standard deviation": cal.std, "± half-width": cal.half_width, "confidence": cal.confidence,
        "calibration": CAL_RULE_PLAIN.get(cal.rule, cal.rule), "source": cal.source}])


def composition_table_for_people(table: pd.DataFrame, *, k: int) -> pd.DataFrame:
    """``dpdash.accounting.composition.composition_table`` with rules named and columns in plain words; says which k."""
    return pd.DataFrame({
        "rule": [RULE_PLAIN.get(r, r) for r in table["rule"]], "releases k": k,
        "total ε": table["epsilon"], "δ": table["delta"], "valid here": table["valid"].map({True: "yes", False: "no"}),
        "share of the basic sum": table["ratio_to_basic"],
        "why not valid": table["note"].replace("", "—")})


def widths_table_for_people(widths: pd.DataFrame) -> pd.DataFrame:
    """Tab 6's widths with methods named and columns in plain words."""
    return pd.DataFrame({
        "method": [WIDTH_LABELS.get(m, m) for m in widths["method"]], "queries k": widths["k"],
        "error for all answers τ": widths["tau"], "tuning parameter": widths["parameter"],
        "noise standard deviation": widths["noise_std"], "capped at 0.5": widths["capped"].map({True: "yes",
                                                                                               False: "no"})})


def simulation_table_for_people(sim: pd.DataFrame, *, privacy: str) -> pd.DataFrame:
    """Tab 7's Monte Carlo table (``private_tests.simulate_grid``) with plain column names; ``privacy`` is
    "rho" or "epsilon", the column kept."""
    return pd.DataFrame({
        "n": sim["n"], ("ρ" if privacy == "rho" else "ε"): sim[privacy],
        "quantity": sim["quantity"].map({"size": "size (false alarms)", "power": "power"}),
        "test": [SIM_TEST_LABELS.get(t, t) for t in sim["test"]], "rejection rate": sim["rate"],
        "standard error": sim["std_error"], "trials": sim["trials"]})


def posterior_table_for_people(table: pd.DataFrame) -> pd.DataFrame:
    """``dpdash.epsilon.risk.posterior_table`` with plain column names (all four are probabilities)."""
    return table.rename(columns={"prior": "belief before", "lower": "lowest belief after",
                                 "upper": "highest belief after", "increase": "largest increase"})
