"""Epsilon calculator, Tab 5: ε as risk (view: ``dpdash.epsilon.views.risk_view``), with the risk-to-ε inverse and
ε among published deployments (``ui.views.epsilon_context``).

Widgets, layout and rendering only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dpdash.accounting import composition as acc
from dpdash.epsilon import figures as ef
from dpdash.epsilon import views as evw
from dpdash.epsilon import script as se
from dpdash.common.formatting import given
from ui.show import table as results_table
from ui.show import cards, figure, verdict_box
from ui.views.eps_common import CACHE, ENGINE_ERRORS, bind, exports, pick, report, script_of
from ui.views.eps_composition import comp_mechanisms
from ui.views.epsilon_context import render_in_context, render_risk_inverse
from ui.widgets import delta_exponent, log_slider

SHAPE_FMT = {"generic": "Any (ε, δ) mechanism", "gaussian": "Gaussian (μ = Δ/σ)", "laplace": "Laplace (μ = ε)"}


@st.cache_data(**CACHE)
def cached_pld_profile(mechs: tuple) -> pd.DataFrame:
    return acc.pld_profile(list(mechs), np.geomspace(1e-10, 0.5, 40), resolution=1e-3)


@st.fragment
def tab_risk(outputs: bool = True) -> None:
    """Tab 5 (controls always; bounds and figures only when ``outputs``)."""
    st.subheader("ε as risk: what can an attacker learn about one person?")
    top = st.container()
    c1, c2 = st.columns([2, 5])
    eps = log_slider("ε", key="eps_r_eps", value=1.0, container=c1)
    has_delta = c1.checkbox("δ > 0", key="eps_r_hasdelta", **bind())
    delta = delta_exponent(key="eps_r_delta", container=c1) if has_delta else 0.0
    prior = c1.slider("Attacker's prior belief (%)", 1, 99, 10, key="eps_r_prior", **bind()) / 100
    shape = pick("Compare with the mechanism", SHAPE_FMT, key="eps_r_shape", widget="radio", container=c1)
    mu = c1.number_input("μ = Δ/σ", min_value=0.01, max_value=20.0, value=1.0, key="eps_r_mu", **bind(),
                         help="Sensitivity divided by the noise's standard deviation: smaller is more private."
                         ) if shape == "gaussian" else None
    use_pld = c1.checkbox("Add the Composition tab's list", key="eps_r_pld", **bind(),
                          help="Draw the trade-off curve of the whole list on the Composition tab (its PLD profile).")
    if not outputs:
        render_risk_inverse(key_prefix="eps_inv_")  # its controls keep their link values while the tab is closed
        return
    profile = problem = None
    if use_pld:
        try:
            ms, _ = comp_mechanisms()
            profile = cached_pld_profile(tuple(ms))
        except ENGINE_ERRORS as e:
            problem = str(e)
    view = evw.risk_view(epsilon=eps, delta=delta, prior=prior, shape=shape, mu=mu, profile=profile,
                         profile_problem=problem)
    verdict_box(view.verdicts, top)
    with c2:
        cards(view.headlines, columns=2)
        table = view.tables["posterior"]
        results_table(table.style.format("{:.2%}"), hide_index=True, width="stretch")
        exports("eps_r", table=table, name="risk", what="posterior table")  # right under its table (issue 25)
    trade_fig = ef.make_tradeoff_figure(view.figures["fpr"], dict(view.figures["curves"]))
    figure(trade_fig, key="eps_r_fig_trade", filename="tradeoff.html", alt=view.figures["alt_tradeoff"],
           caption="Any membership test's (false-positive, false-negative) pair must lie above the curve. "
                   "The dashed diagonal is guessing (Kairouz–Oh–Viswanath 2015; Dong–Roth–Su 2022).")
    adv_fig = ef.make_advantage_figure(view.figures["eps_grid"], dict(view.figures["advantage"]), current=eps)
    figure(adv_fig, key="eps_r_fig_adv", filename="advantage.html", alt=view.figures["alt_advantage"],
           caption=view.figures["caption_advantage"])
    st.subheader("From risk to ε: the largest ε that keeps a risk below your target")
    render_risk_inverse(key_prefix="eps_inv_")
    st.subheader(f"ε = {given(eps)} among published deployments")
    render_in_context(eps, delta or None)
    report(view, "eps_r_art", figures=[("Attack trade-off", trade_fig), ("Membership advantage against ε", adv_fig)],
           sources=["Def. 2.1.1 (posterior bound)", "Kairouz, Oh & Viswanath 2015; Dong, Roth & Su 2022"],
           script=script_of(se.risk_script, view))
