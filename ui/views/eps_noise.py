"""Epsilon calculator, Tab 1: noise and accuracy (view: ``dpdash.epsilon.views.noise_view``).

Widgets, layout and rendering only. The privacy sliders and everything they drive are a nested fragment; its
verdict is drawn in its own block, never through a placeholder of the outer fragment (issue 22, the Tab 1 crash).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dpdash.accounting.conversions import conversion_note
from dpdash.epsilon import figures as ef
from dpdash.epsilon import views as evw
from dpdash.accounting import mechanisms as mech
from dpdash.epsilon import script as se
from ui import load_active_dataset
from ui.common import methodology
from ui.show import cards, figure, say_problem, verdict_box
from ui.views.eps_common import ended, CACHE, DEFAULTS, ENGINE_ERRORS, bind, exports, pick, report, script_of
from ui.widgets import delta_exponent, log_slider

#: δ of the chart's Gaussian curves while a Laplace kind is chosen (its δ control is then not drawn: issue 25).
CHART_DELTA = 10.0 ** DEFAULTS["eps_n1_delta"]


@st.cache_data(**CACHE)
def cached_calibrate(mechanism, sensitivity, fix, epsilon, rho, scale, hw, delta, conf, rule):
    kw = dict(sensitivity=sensitivity, confidence=conf, gaussian_rule=rule)
    gaussian = mechanism in ("gaussian", "discrete_gaussian")
    if gaussian:
        kw["delta"] = delta
    if fix == "privacy":
        if gaussian and rule == "zcdp":
            kw["rho"] = rho
        else:
            kw["epsilon"] = epsilon
    elif fix == "scale":
        kw["scale"] = scale
    else:
        kw["half_width"] = hw
    return mech.calibrate(mechanism, **kw)


@st.cache_data(**CACHE)
def cached_halfwidth_curves(mechs: tuple, l1: float, l2: float, delta: float, conf: float, rule: str) -> pd.DataFrame:
    rows = []
    for m in mechs:
        sens = l2 if "gaussian" in m else l1
        for e in np.geomspace(1e-3, 20, 36):
            try:
                r = "analytic" if rule == "classic" and e >= 1 else rule
                c = mech.calibrate(m, sensitivity=sens, epsilon=float(e), confidence=conf, gaussian_rule=r,
                                   **({"delta": delta} if "gaussian" in m else {}))
                rows.append((m, float(e), c.half_width))
            except ValueError:
                continue
    return pd.DataFrame(rows, columns=["mechanism", "epsilon", "half_width"])


def _bounds(c1, query: str) -> tuple[float | None, float | None, int | None]:
    """L, U and n: from a column of the shared dataset or typed; none for a count or histogram, whose sensitivity
    they do not change (issue 25: they stayed live and changed nothing)."""
    if query in evw.COUNT_LIKE:
        c1.caption("One record changes a count by at most 1 (a histogram: one or two cells by 1), so clipping "
                   "bounds and n play no part here.")
        return None, None, None
    if c1.checkbox("Use a column of the shared dataset for L, U and n", key="eps_n1_usecol", **bind()):
        ds = load_active_dataset()
        num = [c for c in ds.frame.columns if pd.api.types.is_numeric_dtype(ds.frame[c]) and ds.frame[c].notna().any()]
        if num:
            # the options follow the dataset, so a column of another dataset falls back to the first one
            col = c1.selectbox("Column", num, key="eps_n1_col", **bind())
            x = ds.frame[col].dropna()
            lower, upper, n = float(x.min()), float(x.max()), int(len(x))
            c1.caption(f"L = {evw.exact(lower)}, U = {evw.exact(upper)}, n = {n:,} (the column's range and "
                       "non-missing records, re-read whenever the dataset or the column changes; in a real release, "
                       "choose public bounds)")
            return lower, upper, n
        c1.info("The shared dataset has no numeric column; enter L and U instead.")
    lower = c1.number_input("Lower clip L", min_value=-1e12, max_value=1e12, value=0.0, key="eps_n1_lower", **bind())
    upper = c1.number_input("Upper clip U", min_value=-1e12, max_value=1e12, value=100.0, key="eps_n1_upper", **bind())
    n = c1.number_input("Records n (public)", min_value=1, max_value=10**9, value=1000, step=1, key="eps_n1_n",
                        **bind())
    return lower, upper, int(n)


@st.fragment
def tab_noise(outputs: bool = True) -> None:
    """Tab 1 (controls always; numbers and charts only when ``outputs``, i.e. the tab is open)."""
    st.subheader("Noise and accuracy: how far from the truth is a released number?")
    with methodology():
        st.markdown("Smaller ε: more noise, more privacy. The interval covers the added noise only, not sampling "
                    "error. Laplace: Thm 2.1.2; Gaussian: Thm 2.2.2 and the exact analytic calibration (Balle–Wang "
                    "2018); discrete mechanisms: Canonne–Kamath–Steinke 2020.")
    c1, c2 = st.columns(2)
    query = pick("Query", evw.QUERY_FMT, key="eps_n1_query", container=c1)
    neighbour = pick("Neighbouring datasets differ by", evw.NEIGH_FMT, key="eps_n1_neigh", widget="radio",
                     container=c1)
    lower, upper, n = _bounds(c1, query)
    try:
        sens = mech.query_sensitivity(query, lower=lower if lower is not None else 0.0,
                                      upper=upper if upper is not None else 1.0, n=n, neighbour=neighbour)
    except ENGINE_ERRORS as e:
        say_problem(ended(e), "Change the query, the bounds or the neighbouring relation.", level="warning")
        return
    is_int = lambda x: abs(x - round(x)) < 1e-12  # noqa: E731
    mechs = tuple(m for m in mech.MECHANISMS if m == "laplace" or m == "gaussian"
                  or (m == "discrete_laplace" and is_int(sens.l1)) or (m == "discrete_gaussian" and is_int(sens.l2)))
    mechanism = pick("Mechanism", {m: evw.MECH_FMT[m] for m in mechs}, key="eps_n1_mech", container=c2,
                     help=None if len(mechs) == 4 else "Discrete mechanisms need an integer sensitivity.")
    rule = "analytic"
    if "gaussian" in mechanism:  # the rule means nothing for the Laplace kinds (pure ε): not drawn for them
        rule = pick("Gaussian calibration", evw.GAUSS_RULE_FMT, key="eps_n1_rule", container=c2,
                    help="Exact: the smallest noise for (ε, δ) (Balle–Wang); classic: σ = Δ√(2ln(1.25/δ))/ε, "
                         "ε < 1 only; zCDP: set ρ = Δ²/(2σ²) (Thm 2.2.2), ε from Thm 2.2.4.")
    fix = pick("You set", evw.FIX_FMT, key="eps_n1_fix", widget="radio", container=c2, horizontal=True,
               help="Exactly one of privacy, noise scale and half-width drives the other two; the other two "
                    "are computed and shown in the cards.")
    scale_in = hw_in = None
    if fix == "scale":
        scale_in = c2.number_input("Noise scale", min_value=1e-9, max_value=1e12, value=1.0, format="%.6g",
                                   key="eps_n1_scale", **bind())
    elif fix == "accuracy":
        hw_in = c2.number_input("Half-width ±", min_value=1e-9, max_value=1e12, value=3.0, format="%.6g",
                                key="eps_n1_hw", **bind())
    noise_outputs(dict(query=query, neighbour=neighbour, lower=lower, upper=upper, n=n, mechanism=mechanism,
                       rule=rule, fix=fix, scale=scale_in, half_width=hw_in), sens, mechs, outputs)


@st.fragment
def noise_outputs(inputs: dict, sens: mech.Sensitivity, mechs: tuple, outputs: bool = True) -> None:
    """Tab 1's privacy sliders and everything they drive, as a nested fragment.

    Moving ε, δ, ρ or the confidence reruns only this part (about 20 elements, not the whole tab's 45): each
    element the browser redraws costs about 2 ms on the reference machine (bench/bench_browser_latency.py), and
    these sliders are the ones a presenter moves. Streamlit reruns a fragment with the arguments of its last
    call, so the query and mechanism inputs above arrive unchanged. Everything is drawn in this fragment's own
    blocks: a placeholder made by the outer fragment cannot be written from here (issue 22, the Tab 1 crash).
    """
    mechanism, rule, fix = inputs["mechanism"], inputs["rule"], inputs["fix"]
    gauss = "gaussian" in mechanism
    by_rho = gauss and rule == "zcdp"
    c = st.columns([3, 3, 2], gap="medium")  # each privacy slider has its exact-entry box beside it
    # Only the control that drives is drawn (issue 12): with Fix = scale or accuracy the privacy is computed,
    # and shown in the slider's place; ρ drives only the zCDP rule, and δ only the Gaussian kinds (issue 25).
    eps = rho = None
    if fix == "privacy" and not by_rho:
        eps = log_slider("ε (privacy loss)", key="eps_epsilon", value=1.0, container=c[0])
    elif fix == "privacy":
        rho = log_slider("ρ (zCDP)", key="eps_n1_rho", min_value=1e-6, max_value=10.0, value=0.1, container=c[0])
    if gauss and rule == "zcdp":
        c[0].caption(conversion_note())  # which zCDP → (ε, δ) conversion the shown ε used (issue 23)
    computed_slot = c[0].empty() if fix != "privacy" else None
    if gauss:
        delta = delta_exponent(key="eps_n1_delta", container=c[1],
                               help="δ of the Gaussian mechanism (the chart's Gaussian curves use it too).")
    else:
        delta = 0.0
        c[1].caption("Laplace noise is pure ε-DP: no δ. The chart's Gaussian curves use δ = 10⁻⁶.")
    conf = c[2].slider("Confidence (%)", min_value=50.0, max_value=99.99, value=95.0, step=0.01, key="eps_n1_conf",
                       **bind())
    if not outputs:
        return
    answer = st.container()  # the verdict, above the cards: made inside this fragment, so its reruns may fill it
    sensitivity = sens.l2 if gauss else sens.l1
    try:
        cal = cached_calibrate(mechanism, sensitivity, fix, eps, rho, inputs["scale"], inputs["half_width"], delta,
                               conf / 100, rule)
    except ENGINE_ERRORS as e:
        say_problem(ended(e), "Change the mechanism, rule or the fixed value.", level="warning")
        return
    fixed = {"privacy": {"rho": rho} if by_rho else {"epsilon": eps}, "scale": {"scale": inputs["scale"]},
             "accuracy": {"half_width": inputs["half_width"]}}[fix]
    view = evw.noise_view(cal, query=inputs["query"], neighbour=inputs["neighbour"], lower=inputs["lower"],
                          upper=inputs["upper"], n=inputs["n"], mechanism=mechanism, rule=rule, fix=fix, fixed=fixed,
                          confidence_pct=conf, delta=delta, l1=sens.l1, l2=sens.l2, mechanisms=mechs, by_rho=by_rho)
    if computed_slot is not None:
        computed_slot.markdown(f"**{view.figures['computed']}**")
    verdict_box(view.verdicts, answer)
    cards(view.headlines, columns=5)
    st.caption(view.figures["sensitivity"])
    curves = cached_halfwidth_curves(tuple(mechs), sens.l1, sens.l2, delta if gauss else CHART_DELTA, conf / 100,
                                     rule)
    f1 = ef.make_halfwidth_figure(curves, current_epsilon=cal.epsilon, current_half_width=cal.half_width,
                                  current_mechanism=mechanism, confidence=conf)
    f2 = ef.make_noise_figure(mechanism, scale=cal.scale, half_width=cal.half_width)
    # side by side: both visible at once for a presenter, and half the area to repaint per move (measured ~20 ms)
    g1, g2 = st.columns(2)
    with g1:
        figure(f1, key="eps_n1_fig_hw", filename="halfwidth_vs_epsilon.html", alt=view.figures["alt_halfwidth"],
               caption="Each curve: the ± half-width each mechanism needs at that ε. Lower is more accurate.")
    with g2:
        figure(f2, key="eps_n1_fig_noise", filename="noise_distribution.html", alt=view.figures["alt_noise"],
               caption=f"The noise distribution; {conf:.4g}% of draws fall in the shaded interval.")
    exports("eps_n1", table=view.tables["calibration"], name="noise_accuracy")
    report(view, "eps_n1_art", figures=[("Half-width against ε", f1), ("Noise distribution", f2)],
           sources=["Thm 2.1.2 (Laplace); Thm 2.2.2 (Gaussian, zCDP)", "Balle & Wang 2018 (analytic Gaussian)",
                    "Canonne, Kamath & Steinke 2020 (discrete mechanisms)"],
           script=script_of(se.noise_script, view))
