"""Epsilon calculator, Tab 6: DP vs data splitting for k adaptive queries (view: ``dpdash.epsilon.views.widths_view``).

Widgets, layout and rendering only; the crossover, headline, verdict and report come from the one view.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpdash.epsilon import figures as ef
from dpdash.epsilon import views as evw
from dpdash.accounting import mechanisms as mech
from dpdash.epsilon import script as se
from ui.common import methodology
from ui.show import cards, figure, say_problem, verdict_box
from ui.views.eps_common import ended, CACHE, ENGINE_ERRORS, bind, exports, pick, report, script_of, show_table


@st.cache_data(**CACHE)
def cached_widths(n: int, beta: float, noise: str) -> pd.DataFrame:
    rows = [(m, k, w.tau, w.parameter, w.noise_std, w.capped) for m, k, w in mech.adaptive_width_grid(n, beta, noise)]
    return pd.DataFrame(rows, columns=["method", "k", "tau", "parameter", "noise_std", "capped"])


@st.cache_data(**CACHE)
def cached_crossover(n: int, beta: float, noise: str):
    """The crossover solved on the integers (a few exact widths beyond the grid: cached with it)."""
    from dpdash.epsilon import verdicts as ev

    return ev.solve_width_crossover(cached_widths(n, beta, noise), n=n, beta=beta, noise=noise)


@st.fragment
def tab_widths(outputs: bool = True) -> None:
    """Tab 6 (controls always; widths, figure and table only when ``outputs``)."""
    st.subheader("DP vs data splitting for k adaptive queries")
    top = st.container()
    with methodology():
        st.markdown("Splitting answers each query on a fresh chunk. DP answers every query on all the data, with "
                    "noise, and stays valid when queries depend on earlier answers (Ch. 3: Thms 3.2.2, 3.3.1 with the "
                    "App. A.2 constants, 3.4.1; §3.5). τ is the error that holds for all k answers at once with "
                    "probability 1 − β.")
    c1, c2, c3 = st.columns(3)
    n = c1.number_input("n (records)", min_value=100, max_value=10**7, value=6400, step=100, key="eps_w_n", **bind())
    beta = c2.number_input("β (failure probability)", min_value=1e-6, max_value=0.5, value=0.05, format="%.4g",
                           key="eps_w_beta", **bind())
    noise = pick("DP noise", evw.NOISE_WORDS, key="eps_w_noise", widget="radio", container=c3, horizontal=True)
    if not outputs:
        return
    try:
        widths = cached_widths(int(n), float(beta), noise)
    except ENGINE_ERRORS as e:
        say_problem(ended(e), "Change n or β.", container=c1)
        return
    view = evw.widths_view(widths, n=int(n), beta=float(beta), noise=noise,
                           crossover=cached_crossover(int(n), float(beta), noise))
    verdict_box(view.verdicts, top)
    cards(view.headlines, top)
    k0 = view.figures["annotate_k"]
    wfig = ef.make_width_figure(view.figures["widths"], annotate_k=k0, annotation=view.figures["annotation"])
    figure(wfig, key="eps_w_fig", filename="dp_vs_splitting.html",
           caption="Lower is better. × marks widths capped at 0.5 (no useful answer).",
           alt=f"Two line charts against the number of adaptive queries k (log scale) for n = {int(n):,}: left, "
               "the error τ that holds for all answers at once for each splitting and DP method (capped at "
               "0.5); right, the noise standard deviation each DP method uses."
               + (f" A dotted line marks k = {k0:,}: {view.figures['annotation']}." if k0 else ""))
    people = view.tables["widths"]
    show_table(people, {"error for all answers τ": "{:.4g}", "tuning parameter": "{:.4g}",
                        "noise standard deviation": "{:.4g}"})
    exports("eps_w", table=people, name="dp_vs_splitting")
    report(view, "eps_w_art", sources=["Thms 3.2.2, 3.3.1 (App. A.2 constants), 3.4.1; §3.5"],
           figures=[("Error for all answers against k", wfig)], script=script_of(se.widths_script, view))
