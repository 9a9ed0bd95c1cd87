"""Epsilon calculator, Tab 4: adaptive analysis (view: ``dpdash.epsilon.views.adaptive_view``).

Widgets, layout and rendering only.
"""

from __future__ import annotations

import streamlit as st

from dpdash.accounting import composition as acc
from dpdash.epsilon import figures as ef
from dpdash.epsilon import views as evw
from dpdash.epsilon import script as se
from ui import eps_codecs as ec
from ui.show import table as results_table
from ui.common import methodology
from ui.show import cards, figure, say_problem, verdict_box
from ui.views.eps_common import ended, CACHE, ENGINE_ERRORS, bind, exports, pick, report, script_of
from ui.widgets import delta_exponent, log_slider, seed_input


@st.cache_data(**CACHE)
def cached_adaptive(seq: tuple, eg: float, dg: float, n: int):
    trace = acc.adaptive_trace(list(seq), epsilon_g=eg, delta_g=dg, n=n)
    halts = {r: acc.filter_trace(list(seq), epsilon_g=eg, delta_g=dg, rule=r) for r in ("basic", "advanced", "zcdp")}
    return trace, halts


@st.fragment
def tab_adaptive(outputs: bool = True) -> None:
    """Tab 4 (controls always; trace, figure and table only when ``outputs``)."""
    st.subheader("Adaptive analysis: how many requests fit in a budget when they are not planned in advance?")
    top = st.container()
    with methodology():
        st.markdown("A filter decides before each request whether it may run. An odometer reports the loss so far "
                    "and pays a little for not knowing the plan. Basic: Thm 5.3.7; advanced filter: Thm 5.5.1 (eq. "
                    "5.12); odometers: Lemma 5.6.4, Thm 5.6.5, Thms 5.7.5–5.7.6. The orange dashed line is advanced "
                    "composition applied after the fact: not a valid bound (Thm 5.6.1).")
    c1, c2 = st.columns([2, 5])
    kind = pick("Privacy loss εᵢ of each request", evw.SEQ_FMT, key="eps_a_seq", container=c1)
    if kind in ("constant", "spikes"):
        log_slider("εᵢ (each request)", key="eps_a_const", min_value=1e-6, max_value=10.0, value=0.01, container=c1)
    if kind == "geometric":
        log_slider("ε₁ (first request)", key="eps_a_g0", min_value=1e-6, max_value=10.0, value=0.1, container=c1)
        c1.number_input("each next request: ε times", min_value=0.5, max_value=1.0, value=0.99, format="%.4g",
                        key="eps_a_ratio", **bind())
    seed = None
    if kind == "uniform":
        log_slider("smallest εᵢ", key="eps_a_lo", min_value=1e-6, max_value=10.0, value=0.001, container=c1)
        log_slider("largest εᵢ", key="eps_a_hi", min_value=1e-6, max_value=10.0, value=0.02, container=c1)
        seed = seed_input(key="eps_a_seed", container=c1)
        c1.caption(f"Seed {seed}: the same seed reproduces the sequence.")
    if kind == "spikes":
        c1.number_input("every r-th request", min_value=2, max_value=10_000, value=50, step=1, key="eps_a_r", **bind())
        c1.number_input("is multiplied by s", min_value=1.0, max_value=1e4, value=10.0, key="eps_a_s", **bind())
    if kind == "pasted":
        c1.text_area("εᵢ list (comma or newline separated)", value="0.1, 0.1, 0.05, 0.2", key="eps_a_paste", **bind())
    else:
        c1.number_input("requests", min_value=1, max_value=100_000, value=2000, step=1, key="eps_a_count", **bind())
    eg = log_slider("ε_g (global budget)", key="eps_a_epsg", value=1.0, container=c1)
    dg = delta_exponent(key="eps_a_delta", container=c1, label="δ_g = 10^x (must be < 1/e), x =")
    n = c1.number_input("n (records; granularity 1/n²)", min_value=6, max_value=10**9, value=10_000, step=1,
                        key="eps_a_n", **bind())
    rule = pick("Filter named in the answer", evw.FILTER_FMT, key="eps_a_rule", container=c1)
    if not outputs:
        return
    try:
        seq = ec.epsilon_sequence(kind, st.session_state)
    except ValueError as e:  # our own message about the pasted list
        c2.error(str(e))
        return
    try:
        trace, halts = cached_adaptive(tuple(seq), eg, dg, int(n))
    except ENGINE_ERRORS as e:
        say_problem(ended(e), "Change the sequence, ε_g, δ_g or n.", container=c2)
        return
    view = evw.adaptive_view(trace, halts, epsilons=seq, kind=kind, epsilon_g=eg, delta_g=dg, n=int(n), rule=rule,
                             seed=seed, values={k: v for k, v in st.session_state.items()
                                                if str(k).startswith("eps_a_")}, labels=acc.ADAPTIVE_LABELS)
    verdict_box(view.verdicts, top)
    cards(view.headlines, top)
    fig = ef.make_adaptive_figure(trace, epsilon_g=eg, halts=dict(view.figures["halts"]))
    with c2:
        figure(fig, key="eps_a_fig", filename="adaptive.html", alt=view.figures["alt"],
               caption="Running bound after each request. A filter stops at its vertical line; odometers keep "
                       "counting. The black line is the budget.")
    table = view.tables["adaptive"]
    results_table(table.style.format({"value": "{:.4g}"}), hide_index=True, width="stretch")
    exports("eps_a", table=table, name="adaptive")
    report(view, "eps_a_art", figures=[("Privacy-loss bound as requests arrive", fig)],
           sources=["Thm 5.3.7, Thm 5.5.1 (eq. 5.12), Lemma 5.6.4, Thms 5.6.1, 5.6.5, 5.7.5–5.7.6"],
           script=script_of(se.adaptive_script, view))
