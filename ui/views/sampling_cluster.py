"""Sampling designer, Tab 4: cluster sampling — draw ℓ of k clusters (Theorems 7–9), optionally two-stage.

Controls and layout only; everything shown comes from :func:`dpdash.sampling.views.cluster_view`.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from dpdash.sampling import core as sp
from dpdash.sampling import figures as sf
from dpdash.sampling import views as vw
from dpdash.sampling import script as ss
from dpdash.sampling.frames import parse_numbers
from ui import show
from ui.text import md_escape
from ui.views import sampling_common as sc
from ui.views.sampling_simple import CLUSTER_STATE
from ui.widgets import choice, log_slider, seed_input

SIZE_SOURCES = {"equal": "equal sizes", "list": "list", "lognormal": "lognormal generator", "frame": "uploaded frame"}
MAX_CLUSTERS = 100_000
MAX_CLUSTER_SIZE = 10**9   # one cluster cannot exceed the largest population the page takes


@st.cache_data(max_entries=64, show_spinner=False)
def c_lognormal_sizes(k: int, median: float, sigma: float, seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    return tuple(int(v) for v in np.floor(rng.lognormal(math.log(max(median, 1e-9)), sigma, k) + 0.5))


# a view is frozen and read-only; it holds read-only mappings, which cache_data cannot pickle
@st.cache_resource(max_entries=64, show_spinner=False, scope="session")
def c_view(sizes: tuple, eps: float, ell: int, rw: float, target: float, words: str, share: float, e_t: float):
    return vw.cluster_view(epsilon=eps, target=target, sizes=sizes, n_drawn=ell, within_rate=rw, sizes_words=words,
                           ec_share=share, epsilon_test=e_t)


def _sizes(src: str, k: int | None, frame) -> tuple[tuple | None, int | None]:
    """The cluster sizes the chosen source gives (None with a message when it gives none)."""
    if src == "equal":
        c = int(st.number_input("Records per cluster c", min_value=1, max_value=MAX_CLUSTER_SIZE, value=20, step=1,
                                key="sd_c", bind="query-params"))
        return (c,) * k, k
    if src == "list":
        text = st.text_area("Cluster sizes (comma-separated; k is the number of entries)", value="3, 8, 15, 40",
                            key="sd_size_list", bind="query-params")
        try:
            vals = parse_numbers(text, integer=True, max_entries=MAX_CLUSTERS)
            if len(vals) < 2 or min(vals) < 0 or max(vals) > MAX_CLUSTER_SIZE:
                raise ValueError(f"need 2 to {MAX_CLUSTERS:,} sizes, each from 0 to {MAX_CLUSTER_SIZE:,}")
        except ValueError as exc:
            st.warning(f"Cluster sizes not understood ({md_escape(exc)}). Expected whole numbers separated by "
                       "commas, e.g. 3, 8, 15, 40.")
            return None, None
        st.caption(f"k = {len(vals):,} clusters (the number of entries).")
        return tuple(int(v) for v in vals), len(vals)
    if src == "lognormal":
        median = float(st.number_input("Median cluster size", min_value=1.0, max_value=1e5, value=20.0,
                                       key="sd_gen_median", bind="query-params"))
        sigma = float(st.slider("Spread σ (log scale)", min_value=0.0, max_value=3.0, value=0.5, step=0.05,
                                key="sd_gen_sigma", bind="query-params"))
        seed = seed_input(key="sd_gen_seed", value=0)
        st.caption(f"Sizes drawn with seed {seed}.")
        return c_lognormal_sizes(k, median, sigma, seed), k
    if frame is None or frame.cluster_sizes is None:
        st.info("Upload a frame with a cluster column (above the tabs) to use its cluster sizes.")
        return None, None
    sizes = tuple(int(v) for v in frame.cluster_sizes.to_numpy())
    st.caption(f"k = {len(sizes):,} clusters from the uploaded frame.")
    return sizes, len(sizes)


@st.fragment
@sc.guarded
def tab_cluster(eps: float, target: float, frame: sp.FrameSummary | None, outputs: bool = True) -> None:
    """Tab 4 (every control always, so the Simple tab can overlay the design and a link copied on another tab keeps
    them all; cards and charts only when ``outputs``)."""
    st.subheader("Cluster sampling: draw ℓ of k clusters, keep everyone in them (Theorems 7–9)")
    slot = st.container()
    c1, c2 = st.columns([1, 2])
    with c1:
        src = choice("Cluster sizes", SIZE_SOURCES, key="sd_size_src", widget="radio", horizontal=True)
        # k is a control only where the sizes do not fix it (a list or a frame has its own number of clusters)
        k = int(st.number_input("Number of clusters k", min_value=2, max_value=MAX_CLUSTERS, value=100, step=1,
                                key="sd_k", bind="query-params")) if src in ("equal", "lognormal") else None
        sizes, k = _sizes(src, k, frame)
        # drawn (greyed out) even without a usable design, so they keep their value and link
        ell = int(st.number_input("Clusters drawn ℓ", min_value=1, max_value=MAX_CLUSTERS - 1, value=10, step=1,
                                  key="sd_ell", bind="query-params", disabled=sizes is None))
        if sizes is not None and ell >= k:
            st.warning(f"ℓ must be below k = {k:,}; using ℓ = {k - 1:,}.")
            ell = k - 1
        rw = log_slider("Within-cluster rate r_w (1 = single stage)", key="sd_rw", min_value=1e-3,
                        max_value=1.0, value=1.0, disabled=sizes is None)
    # The Theorem 9 sliders are drawn whether the tab is open or not (and in the same place): drawn only while it
    # was open, they left the link and the session when another tab was opened (issue 25).
    top = c2.container()   # the cards and calibration, above the Theorem 9 explorer whose sliders they read
    with c2, st.expander("Theorem 9: a test that spots whether a cluster was drawn"):
        share = st.slider("ε_c as a share of ε (loss given the cluster is drawn)", min_value=0.0, max_value=1.0,
                          value=1.0, step=0.05, key="sd_ec_share", bind="query-params", disabled=sizes is None)
        e_t = st.slider("ε_T: how well a test tells 'drawn' from 'not drawn' (log likelihood ratio)",
                        min_value=0.0, max_value=20.0, value=2.0, step=0.1, key="sd_et", bind="query-params",
                        disabled=sizes is None)
        thm9 = st.container()
        st.caption("As ε_T grows the bound approaches ε_c: once drawn clusters can be recognised, the "
                   "secrecy of the sample is gone (§5.2).")
    if sizes is None:
        st.session_state.pop(CLUSTER_STATE, None)   # no design: no overlay on the Simple tab
        return
    st.session_state[CLUSTER_STATE] = (sizes, ell)
    if not outputs:
        return
    s = np.asarray(sizes, dtype=float)
    words = f"{sv_range(s)} ({SIZE_SOURCES[src]})"
    view = c_view(tuple(sizes), eps, ell, rw, target, words, share, e_t)
    with slot:
        show.verdict_box(view.verdicts)
    with thm9:
        show.cards([view.headlines[i] for i in view.figures["thm9"]])
    with top:
        sc.groups(view)
        sc.calibration(view)
    shown: list = []
    heat, bars = view.figures["heatmap"], view.figures["bars"]
    sc.chart(sf.make_cluster_heatmap(heat["table"], current_size=heat["current_size"],
                                     current_epsilon=heat["current_epsilon"]), heat,
             key="sd_fig_heat", filename="cluster_heatmap", shown=shown)
    sc.chart(sf.make_cluster_bars_figure(bars["table"], epsilon=bars["epsilon"], naive=bars["naive"]), bars,
             key="sd_fig_bars", filename="cluster_bounds", shown=shown)
    sc.take_away(view, tab="cluster", shown=shown, script=ss.cluster_script(**view.script))


def sv_range(s: np.ndarray) -> str:
    """"3 to 40" for the report's parameters."""
    return f"{vw.g4(s.min())} to {vw.g4(s.max())}"
