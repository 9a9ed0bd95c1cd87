"""Leximax cohort picker: fair random selection of a cohort so that every group is served as well as possible.

Thin page: three tabs, each one ``@st.fragment`` in ``ui/views/leximax_*.py`` that renders a view built by
``dpdash/sortition/views.py`` (cards, verdicts, tables, chart inputs, report, script parameters) from the engine
(``dpdash/sortition/core.py``). Sources: Henzinger, Peale, Reingold, Shen, "Leximax Approximations and Representative
Cohort Selection", FORC 2022 (seed 003, second paper) and, for the quota tab, Flanigan et al., Nature 2021.
"""

from __future__ import annotations

import streamlit as st

from ui import page_end, page_setup
from ui.tabs import lazy_tabs
from ui.views.leximax_cohort import cohort_tab
from ui.views.leximax_common import PAPER, TITLE
from ui.views.leximax_finite import finite_tab
from ui.views.leximax_quota import quota_tab

page_setup("Leximax cohort picker", icon=":material/groups:", uses_dataset=False)

st.title(TITLE)
st.markdown(
    "Pick a cohort (committee, panel, study sample) from a pool so that **every group is served as well as "
    "possible: first the worst-off group, then the next worst-off, and so on** (*leximax*). The tool computes "
    "each candidate's chance of selection, compares what each group gets with picking uniformly at random, "
    "simulates what a single draw gives each group and draws cohorts of exactly *k*. "
    f"Source: {PAPER}. This page works on its own pools, not on the shared dataset."
)

TABS = ["Cohort (paper)", "Finite-set explorer", "Citizens' assembly (quotas)"]
# Only the open tab runs (ui/tabs.py; its work is skipped while hidden); each tab reruns alone as a fragment.
for tab, body in zip(lazy_tabs(TABS, key="lx_tab"), (cohort_tab, finite_tab, quota_tab)):
    if tab.drawn:
        with tab.container:
            st.fragment(body)()

with st.expander("Notes for researchers: how the paper is read here (errata)"):
    st.markdown(
        "- **L1** [b] Lemma 19 as printed (\"any ε-*tradeoff* solution … (ε−2d, ε+2d)\") fails even without noise "
        "(Five committees, S₁); the tool checks the corrected statement for ε-*significant recursive* solutions "
        "with 2δ.\n"
        "- **L2** the slack constraints of the approximate LP use ≥ (not >). **L3** Algorithm 1 indexes γ by the "
        "level l. **L4** Algorithm 2's empty \"if S ≠ k\" branch returns the violated constraint Σx = k.\n"
        "- **L5** the LP with slack ε is a *cumulative* surrogate of Def 10's per-level slack; it is labelled "
        "\"slack ε (cumulative)\", and the finite-set tab implements Defs 10/12 literally.\n"
        "- **L6** Thm 14 is tested for α ∈ [0, ε]^m. **L7** no ellipsoid method: the LPs use the compact form of "
        "Ogryczak & Tamir (2003); Algorithm 2 verifies every result (✓ verified).\n"
        "- **L8** the hardness factor in §1.2 reads (e−1)/e (Lemma 20). **L9** the \"1/3\" for arbitrary "
        "lotteries (§4.1) is shown as a reverse-Markov bound, our reading.\n"
        "- Integer leximax and even ε-approximate maxmin (ε < 0.5) are NP-hard ([b] Lemma 20): the best single "
        "cohort is found by brute force only when C(n, k) ≤ 200,000."
    )

page_end()
