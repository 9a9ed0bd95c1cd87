"""Sampling designer, Tab 1: simple random samples (SRS without replacement, Poisson, with replacement).

Controls and layout only; everything shown comes from :func:`dpdash.sampling.views.simple_view`.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from dpdash.sampling import core as sp
from dpdash.sampling import figures as sf
from dpdash.sampling import views as vw
from dpdash.sampling import script as ss
from ui import show
from ui.text import md_escape
from ui.views import sampling_common as sc
from ui.widgets import choice, log_slider, multi_choice

SIZE_MODES = {"m": "sample size m", "rate": "sampling rate q"}
#: The Simple tab's schemes: link token → label; older links' "SRSWOR", "Poisson", "SRSWR" are these tokens.
SCHEMES = {"srswor": "without replacement", "poisson": "Poisson", "srswr": "with replacement"}
CLUSTER_STATE = "sd__cluster_design"   # not a widget key: (sizes, ℓ) of the Cluster tab, for this tab's overlay
KEYS = {"sd_size_mode", "sd_m", "sd_rate", "sd_schemes", "sd_show_rounding", "sd_show_cluster"}


def current_cluster_band(eps: float):
    """The Cluster tab's design (stored by its controls, which run first) as (ℓ/k, Thm 7 lower, Thm 8 upper)."""
    design = st.session_state.get(CLUSTER_STATE)
    if design is None:
        return None
    sizes, ell = design
    b = sp.cluster_bounds(np.asarray(sizes, dtype=float), epsilon=eps, n_drawn=ell)
    return (b.rate_clusters, b.worst_lower, b.worst_upper)


@st.fragment
@sc.guarded
def tab_simple(eps: float, delta: float, n: int, target: float, outputs: bool = True) -> None:
    """Tab 1 (controls always; numbers and the rate plot only when ``outputs``, i.e. the tab is open)."""
    st.subheader("Simple random samples: without replacement, Poisson, with replacement")
    slot = st.container()
    # the full width, so all three scheme chips fit (in the narrow column the third was cut at 1280 px)
    schemes = multi_choice("Schemes", SCHEMES, key="sd_schemes", default=["srswor", "poisson"],
                           help="Simple random sampling without replacement (m of n), Poisson sampling (each "
                                "record independently at rate q), or with replacement (m draws; external "
                                "and incomplete: δ′ is not computed).")
    c1, c2 = st.columns([2, 3])
    with c1:
        mode = choice("Set the sample by", SIZE_MODES, key="sd_size_mode", widget="radio", horizontal=True)
        m_in, rate_in = 100, 0.01
        if mode == "m":
            m_in = int(st.number_input("Sample size m", min_value=1, max_value=10**9, value=100, step=1, key="sd_m",
                                       bind="query-params"))
        else:
            rate_in = log_slider("Sampling rate q", key="sd_rate", min_value=1e-5, max_value=1.0, value=0.01)
        m, q, notes = vw.simple_design(n=n, mode=mode, m=m_in, rate=rate_in)
        show.verdict_box(notes)
        show_rounding = st.toggle("Overlay Theorem 6 rounding", value=True, key="sd_show_rounding",
                                  bind="query-params", help="Proportional sampling with randomised rounding "
                                                            "(Theorem 6) as an orange curve.")
        has_cluster = st.session_state.get(CLUSTER_STATE) is not None
        show_cluster = st.toggle("Overlay the Cluster tab's design", value=True, key="sd_show_cluster",
                                 bind="query-params", disabled=not has_cluster,
                                 help=None if has_cluster else "The Cluster tab has no valid design to overlay.")
    if not outputs:
        return
    band = current_cluster_band(eps) if show_cluster else None
    view = vw.simple_view(epsilon=eps, delta=delta, n=n, m=m, rate=q, schemes=schemes, target=target,
                          show_rounding=show_rounding, cluster_band=band)
    with slot:
        show.verdict_box(view.verdicts)
    with c2:
        sc.groups(view)
        sc.calibration(view)
    lemma = next(s for s in view.sections if s.title.startswith("Why the sample size"))
    with st.expander(lemma.title, icon=":material/menu_book:"):
        st.markdown(md_escape(lemma.lines[0], max_len=800))
    spec, shown = view.figures["rate"], []
    fig = sf.make_rate_figure(spec["table"], epsilon=spec["epsilon"], schemes=spec["schemes"],
                              current_rate=spec["current_rate"], show_rounding=spec["show_rounding"],
                              cluster_band=spec["cluster_band"])
    sc.chart(fig, spec, key="sd_fig_rate", filename="sampling_rate_curve", shown=shown)
    if schemes:
        sc.take_away(view, tab="simple", shown=shown,
                     script=ss.simple_script(**view.script))
