"""The budget question in one place (issue 14 item 7), for the epsilon calculator's budget planner.

"I publish k statistics from one data set with total ε (and δ): what accuracy per statistic?" One table, every
composition rule × noise mechanism, plus the other direction: the total ε of k releases of a given per-release ε.
What the panel shows (sentence, cards, table, chart inputs, alt text) is one engine view
(``dpdash.epsilon.views.budget_compare_view`` / ``budget_totals_view``); widgets, layout and rendering only.
"""

from __future__ import annotations

import streamlit as st

from dpdash.epsilon import budget_compare as bc
from dpdash.epsilon import views as evw
from dpdash.common.view import Sentence
from ui.common import methodology
from ui.exports import download_csv
from ui.show import cards, figure, table as results_table, verdict_box
from ui.text import md_escape
from ui.widgets import choice, delta_exponent, log_slider


@st.cache_data(show_spinner="Composing…", max_entries=64)
def _table(epsilon: float, delta: float, k: int, sensitivity: float, confidence: float, mechanisms: tuple[str, ...]):
    return bc.budget_table(epsilon=epsilon, delta=delta, k=k, sensitivity=sensitivity, confidence=confidence,
                           mechanisms=mechanisms)


@st.cache_data(show_spinner=False, max_entries=64)
def _totals(epsilon_each: float, k: int, delta: float):
    return bc.total_from_per_release(epsilon_each, k=k, delta=delta)


def _lead(sentences: tuple[Sentence, ...]) -> None:
    """The panel's answer as a bold line under the controls (it sits inside the planner tab, whose own verdict box
    leads the tab); notes and warnings in their boxes."""
    for s in sentences:
        if s.tone == "good":
            st.markdown(f"**{md_escape(s.text, max_len=500)}**")
        else:
            verdict_box((s,))


def render_budget_comparison(key_prefix: str = "eps_cmp_") -> None:
    """Total budget → per-statistic ε, noise and ± under every rule and mechanism; or per-release ε → total."""
    p = key_prefix
    direction = choice("I know", {"total": "the total budget for all statistics",
                                  "each": "the ε of each release"}, key=f"{p}direction", widget="radio",
                       horizontal=True)
    c1, c2 = st.columns(2)
    k = int(c1.number_input("Number of statistics (k)", min_value=1, max_value=bc.MAX_K, value=10, step=1,
                            key=f"{p}k", bind="query-params"))
    c3, c4 = st.columns(2)
    use_delta = c3.toggle("Allow a small δ", value=True, key=f"{p}use_delta", bind="query-params",
                          help="Gaussian noise and every rule except adding up need δ > 0.")
    delta = delta_exponent(key=f"{p}delta", value=-6, min_exp=-12, max_exp=-2, container=c3) if use_delta else 0.0
    if direction == "each":
        e0 = log_slider("ε of each release", key=f"{p}eps_each", min_value=1e-3, max_value=10.0, value=0.1,
                        container=c2)
        tv = evw.budget_totals_view(_totals(e0, k, delta))
        _lead(tv.verdicts)
        cards(tv.headlines)
        totals = tv.tables["totals"]
        results_table(totals, hide_index=True, width="stretch")
        download_csv(totals, filename=f"total_epsilon_k{k}.csv", key=f"{p}totals_csv")
        return
    eps = log_slider("Total ε for all statistics", key=f"{p}eps", min_value=1e-2, max_value=20.0, value=1.0,
                     container=c2)
    sens = float(c4.number_input("Sensitivity of each statistic (1 for a count)", min_value=1e-6, max_value=1e9,
                                 value=1.0, key=f"{p}sens", bind="query-params"))
    conf = float(c4.select_slider("Confidence of the ±", options=[0.8, 0.9, 0.95, 0.99, 0.999], value=0.95,
                                  key=f"{p}conf", format_func=lambda c: f"{100 * c:g}%", bind="query-params"))
    discrete = c4.toggle("Also whole-number (discrete) noise", value=False, key=f"{p}discrete",
                         bind="query-params", help="Discrete Laplace and Gaussian noise keep counts whole numbers; "
                         "computing them takes a moment more.")
    mechs, note = evw.comparison_mechanisms(discrete, sens)
    view = evw.budget_compare_view(_table(eps, delta, k, sens, conf, mechs), note=note)
    _lead(view.verdicts)
    cards(view.headlines)
    figure(bc.make_budget_figure(list(view.figures["rows"])), key=f"{p}fig", filename=f"budget_comparison_k{k}.html",
           alt=view.figures["alt"])
    people = view.tables["rows"]
    numbers = [c for c in people.columns if people[c].dtype.kind == "f"]
    results_table(people.style.format("{:.4g}", na_rep="—", subset=numbers), hide_index=True, width="stretch")
    download_csv(people, filename=f"budget_comparison_k{k}.csv", key=f"{p}csv")
    with methodology():
        st.markdown(
            "Each row finds the largest privacy per statistic whose composition over k statistics stays within the "
            "total budget, under that rule: Laplace by bisection on the per-statistic ε, Gaussian by Brent's "
            "method on the noise multiplier (whole-number noise: on its scale, starting from the continuous answer; "
            "by bisection under the privacy-loss distribution, whose ε is a staircase in the scale). "
            "Adding up and advanced composition are Rogers (2017) Thm 2.1.4 and "
            "2.1.5; optimal composition is Kairouz, Oh & Viswanath (2015); zero-concentrated DP is Bun & Steinke "
            "(2016); Rényi DP is Mironov (2017); the privacy-loss distribution is computed with Google's "
            "dp-accounting. For Gaussian noise, ε per statistic is one release's exact ε at its δ per statistic: "
            "δ/k under adding up, which needs no δ of its own, so the Gaussian statistics use all of δ; δ/(2k) under "
            "the other rules (the other half is their composition slack).")
