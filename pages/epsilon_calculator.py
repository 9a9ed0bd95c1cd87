"""Epsilon calculator: noise ↔ ε ↔ accuracy, composition, budgets, adaptive analysis, ε as risk, tests.

Thin page: the header and the tabs. Each tab is a module of ``ui/views/eps_*.py`` (widgets, layout, rendering)
that draws one engine view of ``dpdash.epsilon.views`` (numbers, sentences, tables, figure inputs, report and
script). Source: Rogers 2017, *Leveraging Privacy in Data Analysis* (seed 002_802572da4c9a19ad.txt); spec
shared/specs/epsilon_calculator.md.
"""

from __future__ import annotations

import streamlit as st

from ui import page_end, page_setup
from ui.tabs import lazy_tabs
from ui.views.eps_adaptive import tab_adaptive
from ui.views.eps_budget import tab_budget
from ui.views.eps_common import SEED, reset_defaults
from ui.views.eps_composition import tab_composition
from ui.views.eps_maxinfo import tab_maxinfo
from ui.views.eps_noise import tab_noise
from ui.views.eps_risk import tab_risk
from ui.views.eps_tests import tab_tests
from ui.views.eps_widths import tab_widths

page_setup("Epsilon calculator", icon=":material/calculate:")

TAB_NAMES = ["Noise & accuracy", "Composition", "Budget planner", "Adaptive analysis", "ε as risk",
             "DP vs data splitting", "Private tests", "Max-information & coherence", "Public information"]

st.title("Epsilon calculator")
st.markdown(
    "Turn the privacy parameters **ε** (epsilon), **δ** (delta) and **ρ** (rho) into things you can judge: how big "
    "the added noise is, how privacy loss adds up over many releases, how to split a budget so every statistic is "
    f"accurate enough, what ε means for one person, and what it costs in adaptive analysis and in tests. Source: "
    f"{SEED}, plus the standard results named next to each number."
)
st.button("Reset to defaults", key="eps_reset", on_click=reset_defaults,
          help="Restore every control on this page to its default (and clear them from the link).")
# Only the open tab draws its numbers and charts; a closed tab draws its controls once they matter (ui/tabs.py).
# A link parameter with one of these prefixes belongs to that tab.
TAB_PREFIXES = [("eps_n1_", "eps_epsilon"), ("eps_comp_",), ("eps_b_", "eps_cmp_"), ("eps_a_",), ("eps_r_", "eps_inv_"),
                ("eps_w_",), ("eps_t_",), ("eps_m_",), ("pi_",)]
TABS = lazy_tabs(TAB_NAMES, key="eps_tab", link_keys=TAB_PREFIXES, state_key="eps__drawn_tabs")

# Lazy tabs (ui/tabs.py): a closed tab draws only its controls, and only once it has been open or the link names
# one of them; the open tab draws everything.
TAB_BODIES = [tab_noise, tab_composition, tab_budget, tab_adaptive, tab_risk, tab_widths, tab_tests, tab_maxinfo]
for tab, body in zip(TABS, TAB_BODIES):
    if tab.drawn:
        with tab.container:
            body(tab.open)
if TABS[8].drawn:
    with TABS[8].container:
        st.subheader("Public information (ε-DP relative to Z)")
        from ui.views.public_information import render_public_information_tab  # imported when first drawn
        render_public_information_tab(TABS[8].open)

page_end()
