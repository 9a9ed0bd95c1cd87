"""Epsilon calculator, Tab 8: max-information and the coherence ε_max (view: ``dpdash.epsilon.views.maxinfo_view``).

Widgets, layout and rendering only.
"""

from __future__ import annotations

import math

import streamlit as st

from dpdash.epsilon import figures as ef
from dpdash.epsilon import views as evw
from dpdash.accounting import maxinfo as mi
from dpdash.epsilon import script as se
from ui.common import methodology
from ui.show import cards, figure, say_problem, verdict_box
from ui.text import md_escape
from ui.views.eps_common import ENGINE_ERRORS, bind, exports, pick, report, script_of
from ui.widgets import log_slider


def _target_gamma_input(alpha: float) -> float:
    return st.number_input("Target γ (inverse: largest ε)", min_value=1e-9, max_value=float(alpha),
                           value=float(alpha) / 5, format="%.3g", key="eps_m_gamma", **bind())


def _outcomes_input() -> int:
    # a whole number typed and shown in full: "%.6g" showed 1048580 for 2²⁰ = 1048576 (issue 25)
    return int(st.number_input("Description length: number of possible outcomes |Y|", min_value=2, value=2**20,
                               step=1, key="eps_m_range", **bind()))


def _coherence_eps_max() -> float:
    """The coherence ε_max section (seed 000 §6.3): its controls and one cheap metric, drawn in every state."""
    st.markdown("#### Demographic coherence: largest ε certified")
    d1, d2, d3 = st.columns(3)
    # n, |𝒞| and γ are counts: whole numbers, shown without decimals ("n 27254.00": issue 25)
    cn = d1.number_input("n", min_value=2, value=27254, step=1, key="eps_m_cn", **bind())
    ca = d1.number_input("α (coherence)", min_value=0.01, max_value=2.0, value=1.0, key="eps_m_ca", **bind())
    cb = d2.number_input("β", min_value=1e-12, max_value=1.0, value=0.05, format="%.3g", key="eps_m_cb", **bind())
    cg = d2.number_input("groups |𝒞|", min_value=1, value=2, step=1, key="eps_m_cg", **bind())
    cgam = d3.number_input("size constraint γ", min_value=1, value=1521, step=1, key="eps_m_cgam", **bind())
    ck = pick("Privacy", {"pure": "pure ε-DP", "approx": "(ε, δ)-DP"}, key="eps_m_ck", widget="radio", container=d3,
              horizontal=True)
    try:
        em = mi.eps_max(float(cn), ca, cb, int(cg), float(cgam), kind=ck)
        st.metric("Largest ε certified", evw.num(em) if math.isfinite(em) else "none",
                  help="“none”: no ε > 0 certifies this size constraint γ; raise γ or n.")
    except ENGINE_ERRORS as e:  # e.g. γ larger than n: inputs the user can change
        say_problem(e, level="warning")
        em = math.nan
    st.markdown("The full analysis is on the [Coherence explorer](coherence_explorer) page.")
    return em


@st.fragment
def tab_maxinfo(outputs: bool = True) -> None:
    """Tab 8 (controls always; bounds, corrections and the figure only when ``outputs``)."""
    st.subheader("Max-information: honest p-values after data-dependent choices")
    top = st.container()
    with methodology():
        st.markdown("If an analysis chooses which hypothesis to test by looking at the data, its p-values are too "
                    "optimistic. A DP (or short-description) selection step leaks little information, so a "
                    "corrected threshold γ < α keeps the error rate at α (Thms 1.4.4, 1.5.1, 1.5.2; Cor. 4.6.3; "
                    "Thm 4.6.4).")
    c1, c2 = st.columns([2, 5])
    alpha = c1.number_input("α", min_value=0.001, max_value=0.5, value=0.05, format="%.3g", key="eps_m_alpha", **bind())
    eps = log_slider("ε of the selection step", key="eps_m_eps", value=0.01, min_value=1e-4, max_value=5.0,
                     container=c1)
    n = c1.number_input("n (records)", min_value=1, max_value=10**9, value=10_000, step=1, key="eps_m_n", **bind())
    optimise = c1.checkbox("Choose β for me", value=True, key="eps_m_opt", **bind(),
                           help="β is the small probability the bound may fail; by default the one giving the "
                                "largest threshold γ is used.")
    beta = None if optimise else c1.number_input("β", min_value=1e-12, max_value=0.5, value=0.01, format="%.3g",
                                                 key="eps_m_beta", **bind())
    with c2:
        cards_box = st.container()
        gt = _target_gamma_input(alpha)
        outcomes = _outcomes_input()
    if not outputs:
        _coherence_eps_max()
        return
    try:
        view = evw.maxinfo_view(alpha=alpha, epsilon=eps, n=int(n), beta=beta, target_gamma=gt, outcomes=outcomes)
    except ENGINE_ERRORS as e:
        say_problem(e, level="warning", container=c2)
        _coherence_eps_max()
        return
    verdict_box(view.verdicts, top)
    with cards_box:
        cards(view.headlines, columns=2)  # two per row: the values stay whole at 1280 px
        st.warning("Thm 4.4.1: for approximate DP these bounds need product (i.i.d.) data, and the DP selection must "
                   "come first; Thm 4.2.1 is asymptotic and its constants are not usable for numbers.")
        f = view.figures
        gfig = ef.make_gamma_figure(f["t"], f["g_mi"], f["g_rz"], crossover=f["crossover"])
        figure(gfig, key="eps_m_fig", filename="gamma_vs_t.html", alt=f["alt"],
               caption="Two corrections for a selection that leaks t bits of mutual information: use the higher.")
        exports("eps_m", table=view.tables["gamma"], name="maxinfo")
    with c2:
        {"neutral": st.info, "warning": st.warning}[f["inverse_tone"]](md_escape(f["inverse"], max_len=400))
        st.caption(f["description"])
    _coherence_eps_max()  # draws its own section
    report(view, "eps_m_art", figures=[("Corrected threshold against information leaked", gfig)],
           sources=["Thms 1.4.4, 1.5.1, 1.5.2, 4.4.1; Cor. 4.6.3; Thm 4.6.4"],
           script=script_of(se.maxinfo_script, view))
