"""Coherence explorer, "Theory" tab (spec §7.4): analytic, redraws alone when its own controls move.

Controls and layout only; the verdict, cards, tables, charts and report come from
:func:`dpdash.coherence.views.theory_view`.
"""

from __future__ import annotations

import math

import streamlit as st

from dpdash.coherence import core as co
from dpdash.coherence import figures as cf
from dpdash.coherence import views as vw
from ui import show
from ui.show import table as results_table
from ui.common import methodology
from ui.text import md_escape
from ui.views import coherence_common as cc
from ui.widgets import log_slider

KEYS = {"coh_hyp_eps", "coh_table1"}


@st.fragment
def render(ctx: cc.Ctx, full: bool = True) -> None:
    """The theory panel; ``full=False`` draws only its controls (the tab is closed but its controls are in the
    link)."""
    dp_release = ctx.release_kind in co.HISTOGRAM_KINDS and math.isfinite(ctx.epsilon)
    top = st.container()  # made inside this fragment: the verdict is drawn straight into it on fragment reruns
    if dp_release and ctx.release_kind == "gaussian_histogram":
        eps_t = ctx.epsilon
        st.markdown(f"Using the release's ε = {eps_t:g}. This release is (ε, δ)-DP, not ε-DP: **Theorem 8** is "
                    "the one that can apply to it (see below); Theorem 7's γ is shown for comparison only, as if "
                    "the release were ε-DP.")
    elif dp_release:  # the release's ε replaces the hypothetical-ε control, which does not apply
        eps_t = ctx.epsilon
        st.markdown(f"Using the release's ε = {eps_t:g}.")
    else:
        st.markdown("This release is not DP; below: a hypothetical ε-DP release.")
        eps_t = log_slider("Hypothetical ε (theory)", key="coh_hyp_eps", min_value=1e-4, max_value=1.0, value=0.01)
    show_table1 = st.toggle("Paper's Table 1 (n = 5·10⁶, β = e⁻³⁰, |𝒞| = 100, γ = 0.05n)", key="coh_table1",
                            bind="query-params")
    if not full:
        return
    view = vw.theory_view(epsilon=eps_t, release_kind=ctx.release_kind, release_epsilon=ctx.epsilon,
                          delta=ctx.delta, n=ctx.n, alpha=ctx.alpha, beta=ctx.beta,
                          group_sizes=ctx.prepared.group_sizes, gamma=ctx.gamma, show_table1=bool(show_table1),
                          params=ctx.params, script=dict(data=ctx.data_spec, config=ctx.preview_config))
    show.verdict_box(view.verdicts, container=top)
    with methodology():
        st.markdown(
            "**Theorem 7**: an ε-DP release that ignores record order keeps every group of ≥ γ members coherent "
            "within α, except with probability β. γ is sufficient, not necessary, and often vacuous at small n. "
            "**Theorem 8** does the same for (ε, δ)-DP with ε ≤ 0.5 and a tiny δ; **Theorem 9** for one yes/no "
            "column published in the clear (see the Section 7 tab).")
    show.cards(view.headlines)
    reading = view.sections[0].lines  # may name user-built groups: escaped
    st.caption(md_escape(reading[0], max_len=600))
    for line in reading[1:]:
        st.markdown(md_escape(line, max_len=600))
    results_table(view.tables["alpha_min"], hide_index=True, width="stretch", key="coh_alpha_min_table")
    fig = cc.figure(view, "theory", cf.make_theory_figure, key="coh_fig_theory", filename="coherence_theory.html",
                    caption="A group is protected by the theorem at the ε where its horizontal line lies above the "
                            "curve. Above the black line (n) the guarantee is vacuous.")
    cc.figure(view, "terms", cf.make_terms_figure, key="coh_fig_terms", filename="coherence_gamma_terms.html",
              caption="γ is the largest of five terms (Theorem 3, Eq. 2); the highlighted one sets it.")
    if "table1" in view.tables:
        results_table(view.tables["table1"], hide_index=True, width="stretch", key="coh_table1_df")
        st.caption(view.sections[-1].lines[0])
    cc.take_away(view, "theory", figures=[fig])
