"""Coherence explorer, "Section 7: a provably safe release" tab (behind a toggle; not computed when hidden).

Controls and layout only; the verdict, chart and report come from :func:`dpdash.coherence.views.section7_view`.
"""

from __future__ import annotations

import streamlit as st

from dpdash.coherence import figures as cf
from dpdash.coherence import views as vw
from ui import show
from ui.common import methodology
from ui.text import md_escape
from ui.views import coherence_common as cc
from ui.widgets import choice

KEYS = {"coh_sec7", "coh_bit_col", "coh_s7_curator"}
CURATORS = {"column": "the column (Thm 9)", "count": "only the count of ones (Thm 11)"}
#: Random splits of the Section 7 demonstration.
S7_REPS = 1000


def _value_text(v) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def render(ctx: cc.Ctx, *, open_: bool) -> None:
    top = st.container()
    with methodology():
        st.markdown(vw.section7_intro(n=ctx.n, alpha=ctx.alpha, beta=ctx.beta, n_groups=ctx.n_groups))
    show7 = st.toggle("Show the Section 7 demonstration (1,000 random splits)", key="coh_sec7", bind="query-params")
    if not show7:
        top.info("Turn on the demonstration below to see a release that is not DP yet provably keeps every large "
                 "enough group coherent.")
        return
    df = ctx.df
    binary_cols = [c for c in df.columns if df[c].nunique(dropna=True) == 2 and c != ctx.label]
    if not binary_cols:
        st.info("The data have no yes/no column besides the label.")
        return
    if not ctx.coll_names:
        st.info("No group has γ or more members; lower γ to see the demonstration.")
        return
    sc1, sc2 = st.columns(2)
    bit_col = sc1.selectbox("Released yes/no column", binary_cols, key="coh_bit_col", bind="query-params")
    curator = choice("Curator publishes", CURATORS, key="coh_s7_curator", widget="radio", container=sc2,
                     horizontal=True)
    if not open_:
        return
    vals = sorted({_value_text(v) for v in df[bit_col].dropna().unique()}, key=str)
    s7_groups = tuple(g for g in ctx.groups if g.name in ctx.coll_names)
    try:
        res = cc.single_column(ctx.data_key, bit_col, vals[-1], s7_groups, int(ctx.seed), float(ctx.beta),
                               ctx.label, curator, S7_REPS, df)
    except ValueError as exc:
        show.say_problem(f"The demonstration could not run: {exc}", level="warning")
        return
    view = vw.section7_view(res=res, column=bit_col, curator=curator, alpha=ctx.alpha, beta=ctx.beta, n=ctx.n,
                            n_groups=ctx.n_groups, seed=ctx.seed, params=ctx.params,
                            script=dict(data=ctx.data_spec, label=ctx.label, column=bit_col, one_value=vals[-1],
                                        groups=s7_groups, seed=int(ctx.seed), beta=float(ctx.beta),
                                        curator=curator, reps=S7_REPS))
    show.verdict_box(view.verdicts, container=top)
    notes = view.sections[0].lines
    for line in notes[:-1]:
        st.caption(md_escape(line, max_len=600))
    fig = cc.figure(view, "s7", cf.make_single_column_figure, key="coh_fig_sec7", filename="coherence_section7.html",
                    caption="Boxes: W1 of the one-bit predictor over 1,000 splits; bars: the paper's bound, exceeded "
                            "in at most a share β of splits.")
    st.caption(md_escape(notes[-1], max_len=1200))
    cc.take_away(view, "s7", figures=[fig])
