"""Sampling designer, Tab 2: a random sample size, independent of the data (Theorem 3).

Controls and layout only; everything shown comes from :func:`dpdash.sampling.views.random_view`.
"""

from __future__ import annotations

import streamlit as st

from dpdash.sampling import core as sp
from dpdash.sampling import census as cs
from dpdash.sampling import figures as sf
from dpdash.sampling import views as vw
from dpdash.sampling import script as ss
from ui import show
from ui.common import methodology
from ui.views import sampling_common as sc
from ui.widgets import choice, log_slider

FAMILIES = {"gaussian": "Gaussian (discretised)", "point": "point mass", "uniform": "uniform",
            "mixture": "mixture with a tiny chance of taking everyone"}
BASES = {k: v for k, v in FAMILIES.items() if k != "mixture"}
KEYS = {"sd_family", "sd_base", "sd_mean", "sd_sigma", "sd_low", "sd_high", "sd_p_full"}
DENSE_N = sp.MAX_RANDOM_SIZE_N   # the dense laws (and the script built on them) stop here
MAX_N = cs.MAX_N   # census sizes (issue 23 item 4); was the dense laws' 10⁶


def figure2_setting() -> None:
    st.session_state["sd_eps"] = 0.01
    st.session_state["sd_n"] = "10000"  # a typed box (ui.widgets.typed_number): its value is text
    st.session_state["sd_family"] = "gaussian"
    st.session_state["sd_mean"] = 5000.0
    st.session_state["sd_sigma"] = 100.0


@st.fragment
@sc.guarded
def tab_random(eps: float, n: int, target: float, outputs: bool = True) -> None:
    """Tab 2 (controls always; numbers and plots only when ``outputs``)."""
    st.subheader("Random sample size, independent of the data (Theorem 3)")
    slot = st.container()
    with methodology():
        st.markdown("The sample size m is drawn from a distribution t, then m records are drawn without "
                    "replacement. What matters is the mean of t *weighted* towards large sizes, E_t̃[m] with "
                    "t̃(m) ∝ e^(εm)·t(m): at large ε, or with a tiny chance of sampling everyone, this weighted "
                    "mean sits near the whole population and the gain is gone (§3).")
    too_big = n > MAX_N
    if too_big:
        st.warning(f"Random sample sizes are computed for populations up to {MAX_N:,} (n = {n:,}). "
                   "Lower the population size to see this tab's numbers.")
    c1, c2 = st.columns([1, 2])
    with c1:
        if st.button("Figure 2 setting", key="sd_fig2", on_click=figure2_setting,
                     help="The paper's Figure 2: n = 10,000, ε = 0.01, mean n/2, σ = 100."):
            st.rerun()
        family = choice("Size distribution", FAMILIES, key="sd_family")
        base = choice("Mixture: base distribution", BASES, key="sd_base", disabled=family != "mixture")
        # the law actually used: the family, or the mixture's base; controls it does not read are disabled
        shape = base if family == "mixture" else family
        mean = float(st.number_input("Mean (or point) sample size", min_value=0.0, max_value=float(MAX_N),
                                     value=5000.0, step=1.0, key="sd_mean", bind="query-params",
                                     disabled=shape == "uniform"))
        sd = float(st.number_input("Standard deviation σ", min_value=0.0, max_value=MAX_N / 2, value=100.0, step=1.0,
                                   key="sd_sigma", bind="query-params", disabled=shape != "gaussian"))
        low = int(st.number_input("Uniform: smallest size", min_value=0, max_value=MAX_N, value=4000, step=1,
                                  key="sd_low", bind="query-params", disabled=shape != "uniform"))
        high = int(st.number_input("Uniform: largest size", min_value=0, max_value=MAX_N, value=6000, step=1,
                                   key="sd_high", bind="query-params", disabled=shape != "uniform"))
        p_full = log_slider("Mixture: chance of sampling everyone", key="sd_p_full", min_value=1e-30,
                            max_value=0.1, value=1e-10, steps_per_decade=2, disabled=family != "mixture")
        mean, low, high, notes = vw.random_design(n=n, family=family, base=base, mean=mean, low=low, high=high)
        show.verdict_box(notes)
    if not outputs or too_big:
        return
    view = vw.random_view(epsilon=eps, n=n, target=target, family=family, base=base, mean=mean, sd=sd, low=low,
                          high=high, p_full=p_full)
    with slot:
        show.verdict_box(view.verdicts)
    with c2:
        sc.groups(view)
        sc.calibration(view)
    shown: list = []
    sig, pmf = view.figures["sigma"], view.figures["pmf"]
    sc.chart(sf.make_sigma_figure(sig["table"], epsilon=sig["epsilon"], current_sd=sig["current_sd"]), sig,
             key="sd_fig_sigma", filename="random_size_bounds_vs_sigma", shown=shown)
    sc.chart(sf.make_pmf_figure(pmf["table"], tilted_mean=pmf["tilted_mean"]), pmf, key="sd_fig_pmf",
             filename="random_size_pmf", shown=shown)
    # the "Copy as code" script recomputes with the dense laws (n ≤ 10⁶); above, no script rather than one that fails
    sc.take_away(view, tab="random", shown=shown,
                 script=ss.random_size_script(**view.script) if n <= DENSE_N else None)
