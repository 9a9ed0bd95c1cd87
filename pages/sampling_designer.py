"""Sampling designer: what guarantee does the population get when a DP statistic is computed on a sample?

Thin page: the global strip, the frame upload and the tabs. Each tab's controls and layout live in
``ui/views/sampling_<tab>.py``; everything a tab shows is one view built by ``dpdash.sampling.views`` (issue 22).
Source: 003_4b386133f61617e9.txt, paper 1 (Bun, Drechsler, Gaboardi, McMillan, Sarathy, FORC 2022);
spec shared/specs/sampling_designer.md.
"""

from __future__ import annotations

import streamlit as st

from dpdash.sampling import core as sp
from ui import page_end, page_setup
from ui.common import methodology
from ui.text import md_escape, md_quote
from ui.tabs import lazy_tabs
from ui.upload import csv_uploader
from ui.views import sampling_common as sc
from ui.views import sampling_random, sampling_rounding, sampling_simple, sampling_strata
from ui.views.sampling_cluster import MAX_CLUSTERS, tab_cluster
from ui.widgets import log_slider, typed_number

page_setup("Sampling designer", icon=":material/filter_alt:", uses_dataset=False)

SEED = "003_4b386133f61617e9.txt, paper 1"
MAX_FRAME_ROWS = 2_000_000
MAX_STRATA = sampling_strata.MAX_STRATA
H_EQUALS_P = ("Design values computed from this file make the design data-dependent (the paper assumes H = P): "
              "see the sensitivity panel.")


@st.cache_data(max_entries=16, show_spinner=False, scope="session")
def c_summary(digest: str, _df, stratum: str | None, cluster: str | None, value: str | None, ddof: int):
    try:
        return sp.summarize_frame(_df, stratum_col=stratum, cluster_col=cluster, value_col=value, ddof=ddof), None
    except ValueError as exc:
        return None, str(exc)


st.title("Sampling designer")
st.markdown(
    "Your differentially private statistic is computed on a **sample** of the population. What guarantee ε′ "
    "does the **population** get, and what ε may you spend on the sample? Each tab answers for one sampling "
    "design: a small random sample strengthens the guarantee; large clusters, and sample sizes that depend on "
    "the data, give no gain or make it worse.")


def page_method() -> None:
    """The page's method note, drawn below the tabs so each tab's answer comes first on screen."""
    with methodology("Where these numbers come from"):
        st.markdown(
            "Numbers follow Bun, Drechsler, Gaboardi, McMillan & Sarathy, *Controlling Privacy Loss in Sampling "
            f"Schemes* (FORC 2022; seed file {SEED}). ε is what your mechanism spends per record on the sample; ε′ "
            "is the guarantee for a person in the population once the sample is drawn secretly at random. Badges "
            "say where each number comes from: " + " ".join(sc.BADGE.values()) + ". " + sc.BADGE_WORDS)


# The strip is drawn after the tabs (into this placeholder, above them) so that it knows which tab is open and
# can disable the controls that tab does not use.
STRIP = st.container()


# Frame upload, above the tabs: the Cluster and Stratified tabs both use it, and an uploader inside a tab that
# is not drawn would drop its file
def frame_upload() -> tuple[sp.FrameSummary | None, str | None]:
    with st.expander("Upload a sampling frame (CSV, one row per population unit)", expanded=False):
        st.markdown("Columns: a **stratum** column and/or a **cluster** column, and optionally a numeric **value** "
                    "column (used for Neyman's S_h). The strata fill the Stratified tab, the cluster sizes the "
                    "Cluster tab. The file stays in memory and is never written to disk.")
        # one column is enough (a cluster id); codes stay text (stratum "01" is not the number 1), and the value
        # column is converted and checked by summarize_frame
        # "N" and "NA" are real stratum codes here (North, North America): only an empty cell is missing.
        # Frames are long and narrow (a code, maybe a value): room for the spec's 2M rows of two columns.
        ds = csv_uploader("Sampling frame CSV", key="sd_frame", max_bytes=50_000_000, max_rows=MAX_FRAME_ROWS,
                          min_rows=1, min_cols=1, as_text=True, missing_codes=("",), max_cells=2 * MAX_FRAME_ROWS)
        if ds is None:
            return None, None
        df = ds.frame
        up = st.session_state.get("sd_frame")
        digest = f"{getattr(up, 'file_id', '')}-{getattr(up, 'size', '')}-{df.shape}"
        cols = ["(none)"] + list(df.columns)
        c1, c2, c3, c4 = st.columns(4)
        s_col = c1.selectbox("Stratum column", cols, key="sd_col_stratum", bind="query-params")
        k_col = c2.selectbox("Cluster column", cols, key="sd_col_cluster", bind="query-params")
        v_col = c3.selectbox("Value column (numeric)", cols, key="sd_col_value", bind="query-params")
        ddof1 = c4.toggle("S_h with n − 1 (ddof 1)", value=False, key="sd_ddof1", bind="query-params",
                          help="The paper does not say which variance it uses (Erratum E10); default ddof 0.")
        pick = [None if c == "(none)" else c for c in (s_col, k_col, v_col)]
        if pick[0] is None and pick[1] is None:
            st.info("Choose a stratum column and/or a cluster column to use this file.")
            return None, None
        chosen = [(role, c) for role, c in zip(("stratum", "cluster", "value"), pick) if c is not None]
        for c in {c for _, c in chosen}:
            roles = [role for role, x in chosen if x == c]
            if len(roles) > 1:
                st.warning(f"The same column {md_quote(c)} is chosen as the {' and the '.join(roles)} column. "
                           "Each role needs its own column: choose another one, or (none).")
                return None, None
        summ, err = c_summary(digest, df, pick[0], pick[1], pick[2], 1 if ddof1 else 0)
        # the file was read; what follows depends on the column choice, so it is a warning, not an error
        if err:
            st.warning(f"These columns cannot be used: {md_escape(err, max_len=400)}")
            return None, None
        if summ.strata is not None and len(summ.strata) > MAX_STRATA:
            st.warning(f"This file has {len(summ.strata):,} strata; the designer handles at most {MAX_STRATA}. "
                     "Choose a coarser stratum column.")
            return None, None
        if summ.cluster_sizes is not None and len(summ.cluster_sizes) > MAX_CLUSTERS:
            st.warning(f"This file has {len(summ.cluster_sizes):,} clusters; the designer handles at most "
                     f"{MAX_CLUSTERS:,}. Choose a coarser cluster column.")
            return None, None
        if summ.cluster_sizes is not None and len(summ.cluster_sizes) < 2:
            st.warning("The cluster column has fewer than 2 distinct clusters; cluster sampling needs at least 2.")
            return None, None
        for note in summ.notes:
            st.info(md_escape(note, max_len=400))
        st.warning(H_EQUALS_P)
        st.success(f"Frame read: {summ.n:,} units"
                   + (f", {len(summ.strata)} strata" if summ.strata is not None and pick[0] else "")
                   + (f", {len(summ.cluster_sizes):,} clusters" if summ.cluster_sizes is not None else "") + ".")
        return summ, f"{digest}-{pick}-{int(ddof1)}"


FRAME, FRAME_ID = frame_upload()

TAB_LABELS = ["Simple random samples", "Random sample size", "Rounding & data-dependent size", "Cluster sampling",
              "Stratified sampling & allocation"]
# Bound tabs track which one is open (a switch reruns the page), so only the open tab computes and draws its
# numbers and charts: a global slider then redraws one tab, not five. Every tab still draws its heading and all
# its controls, laid out as when open, so the URL keeps the design and the Simple tab can overlay the Cluster
# tab's design. (Drawing a control at another place when its tab opens left the URL stale after the next move in
# 1–3 of 10 tab switches, Streamlit 1.67; so a control shown among a tab's outputs — the Stratified tab's toggles
# and seed, the Cluster tab's Theorem 9 sliders — is drawn in the same place in both states, with the outputs in
# containers made before it. Drawn only while their tab was open, they left the link: issue 25.)
# Tabs never opened in this session and not named in the link draw nothing (ui/tabs.py): their controls are at
# their defaults, so the link loses nothing. The Cluster tab always runs: the Simple tab overlays its design.
# A link parameter with one of these keys belongs to that tab.
TAB_KEYS = [sampling_simple.KEYS, sampling_random.KEYS, sampling_rounding.KEYS, set(), sampling_strata.KEYS]
TABS = lazy_tabs(TAB_LABELS, key="sd_tab", link_keys=TAB_KEYS, by_prefix=False, always={3},
                 state_key="sd__drawn_tabs")
OPEN = [t.open for t in TABS]
# Which global controls each tab uses: the others are disabled while it is open (they keep their value and link).
USES_DELTA = OPEN[0]
USES_N = OPEN[0] or OPEN[1] or OPEN[2]

with STRIP:
    g1, g2, g3, g4 = st.columns([3, 2, 2, 3])
    with g1:
        EPS = log_slider("ε on the sample", key="sd_eps", min_value=1e-3, max_value=10.0, value=1.0,
                         help="The privacy budget your mechanism spends on the sample (per person in the sample).")
    with g2:
        delta_on = st.toggle("δ > 0", value=False, key="sd_delta_on", bind="query-params",
                             disabled=not USES_DELTA,
                             help="Approximate DP (ε, δ). Only the simple random sampling results carry a δ "
                                  "(Simple tab); the others are pure ε.")
        DELTA = log_slider("δ on the sample", key="sd_delta", min_value=1e-12, max_value=1e-3, value=1e-6,
                               steps_per_decade=4, disabled=not USES_DELTA) if delta_on else 0.0
    with g3:
        N_POP = int(typed_number("Population size n", key="sd_n", value=10_000, min_value=2, max_value=10**9,
                                 integer=True, name="the population size n", disabled=not USES_N,
                                 help="Used by the Simple, Random size and Rounding tabs; the Cluster and "
                                      "Stratified tabs take the population from their cluster or stratum sizes."))
    with g4:
        TARGET = log_slider("Target ε′", key="sd_target", min_value=1e-3, max_value=5.0,
                            value=1.0, help="Used by the calibration boxes: what ε may I spend on the sample?")


# The Cluster tab is filled before the first tab so the rate plot can overlay the current cluster design.
with TABS[3].container:
    tab_cluster(EPS, TARGET, FRAME, OPEN[3])
if TABS[0].drawn:
    with TABS[0].container:
        sampling_simple.tab_simple(EPS, DELTA, N_POP, TARGET, OPEN[0])
if TABS[1].drawn:
    with TABS[1].container:
        sampling_random.tab_random(EPS, N_POP, TARGET, OPEN[1])
if TABS[2].drawn:
    with TABS[2].container:
        sampling_rounding.tab_rounding(EPS, N_POP, TARGET, OPEN[2])
if TABS[4].drawn:
    with TABS[4].container:
        sampling_strata.tab_strata(EPS, TARGET, FRAME, FRAME_ID, OPEN[4])

page_method()
page_end()
