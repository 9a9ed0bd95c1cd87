"""Sampling designer, Tab 3: sample sizes that depend on the data — rounding (§4, Theorem 6).

Controls and layout only; everything shown comes from :func:`dpdash.sampling.views.rounding_view`.
"""

from __future__ import annotations

import streamlit as st

from dpdash.sampling import figures as sf
from dpdash.sampling import views as vw
from dpdash.sampling import script as ss
from ui import show
from ui.common import methodology
from ui.text import md_escape
from ui.views import sampling_common as sc
from ui.widgets import log_slider

KEYS = {"sd_r", "sd_pair_n", "sd_saw_from", "sd_saw_len", "sd_delta_sizes"}


def paper_43_setting() -> None:
    st.session_state["sd_r"] = 0.1
    st.session_state["sd_pair_n"] = 14


@st.fragment
@sc.guarded
def tab_rounding(eps: float, n: int, target: float, outputs: bool = True) -> None:
    """Tab 3 (controls always; numbers and the sawtooth only when ``outputs``)."""
    st.subheader("Sample sizes that depend on the data: rounding (§4, Theorem 6)")
    slot = st.container()
    with methodology():
        st.markdown("Proportional sampling takes r·N records; r·N must be rounded. Deterministic rounding lets one "
                    "person change the sample size, and a released count then reveals it at the full ε (§4.1). "
                    "**Randomised rounding** (round up with probability equal to the fractional part) restores "
                    "amplification (Theorem 6), valid for populations of at least 1/r records.")
    c1, c2 = st.columns([1, 2])
    with c1:
        # the callback sets r and N before the widgets below are drawn, so no extra rerun is needed
        st.button("Paper §4.3 example", key="sd_paper43", on_click=paper_43_setting,
                  help="The paper's §4.3 example: N = 14, r = 1/10.")
        r = log_slider("Sampling rate r", key="sd_r", min_value=1e-3, max_value=0.5, value=0.05)
        pair_n = int(st.number_input("Population size N of the pair (N, N + 1)", min_value=1, max_value=10**9,
                                     value=14, step=1, key="sd_pair_n", bind="query-params",
                                     help="The paper's §4.3 example is N = 14 at r = 0.1."))
        saw_from = int(st.number_input("Sawtooth: first N (0 = ⌈1/r⌉)", min_value=0, max_value=10**9, value=0,
                                       step=1, key="sd_saw_from", bind="query-params"))
        saw_len = int(st.number_input("Sawtooth: number of pairs", min_value=10, max_value=2000, value=200, step=10,
                                      key="sd_saw_len", bind="query-params"))
        delta_text = st.text_input("Degradation calculator: change in each sample size Δ (comma-separated)",
                                   value="2, -3, 5", key="sd_delta_sizes", bind="query-params")
    if not outputs:
        return
    view = vw.rounding_view(epsilon=eps, n=n, target=target, rate=r, pair_n=pair_n, saw_from=saw_from,
                            saw_len=saw_len, delta_text=delta_text)
    with slot:
        show.verdict_box(view.verdicts)
    with c2:
        sc.errors(view)
        sc.groups(view)
        sc.calibration(view)
        deg = view.figures["degradation"]
        (st.markdown if deg.tone == "neutral" else st.warning)(md_escape(deg.text, max_len=600))
    spec, shown = view.figures["sawtooth"], []
    sc.chart(sf.make_sawtooth_figure(spec["table"], epsilon=spec["epsilon"], theorem6=spec["theorem6"],
                                     worst_channel=spec["worst_channel"]), spec,
             key="sd_fig_saw", filename="rounding_size_channel", shown=shown)
    sc.take_away(view, tab="rounding", shown=shown, script=ss.rounding_script(**view.script))
