"""Coherence explorer, "Single split (preview)" tab: repetition 0 of the run, drawn live.

Controls and layout only; the verdict, cards, bar chart and report come from
:func:`dpdash.coherence.views.preview_view`.
"""

from __future__ import annotations

import streamlit as st

from dpdash.coherence import figures as cf
from dpdash.coherence import views as vw
from ui import show
from ui.views import coherence_common as cc

KEYS = {"coh_view", "coh_ecdf"}


@st.fragment
def _prediction_view(trial, prepared, view_opts, smallest, alpha: float, draw: bool) -> None:
    """Plot 1 with its own controls: a change redraws only this part (no refit)."""
    vc1, vc2 = st.columns([2, 1])
    group = vc1.selectbox("Group to inspect", view_opts, index=view_opts.index(smallest) if smallest else 0,
                          key="coh_view", bind="query-params")
    ecdf = vc2.toggle("Distribution functions", value=False, key="coh_ecdf", bind="query-params",
                      help="Show the two halves' distribution functions instead: the shaded area between them is W1.")
    if not draw or trial is None or group is None:
        return
    mask = prepared.masks[group]
    pa = trial.predictions_a[mask[trial.idx_a]]
    pb = trial.predictions_b[mask[trial.idx_b]]
    fig = cf.make_predictions_figure(pa, pb, group=group, mode="ecdf" if ecdf else "sorted", alpha=alpha)
    show.figure(fig, key="coh_fig_predictions", filename="coherence_predictions.html", alt=cf.alt_text(fig),
                caption="Each line is one half's predictions for this group, sorted. Lines on top of each other: the "
                        "predictor treats released and held-out members alike. A gap: it recognises who was in the "
                        "release (seed Figure 3).")


def render(ctx: cc.Ctx, *, open_: bool) -> None:
    names = [g.name for g in ctx.groups]
    sizes = [ctx.prepared.group_sizes[nm] for nm in names]
    view_opts = [nm for nm, s in zip(names, sizes) if s >= 2]
    smallest = min((nm for nm in view_opts if ctx.in_coll[nm]), key=lambda g: ctx.prepared.group_sizes[g],
                   default=view_opts[0] if view_opts else None)
    if not open_:
        _prediction_view(None, ctx.prepared, view_opts, smallest, ctx.alpha, draw=False)
        return
    trial, perr, preview_s, _ = cc.preview(ctx.data_key, ctx.preview_config, ctx.df)
    if perr:
        show.say_problem(f"These settings cannot be run: {perr}", level="warning")
        return
    view = vw.preview_view(
        trial=trial, names=names, sizes=sizes, in_collection=[ctx.in_coll[nm] for nm in names], alpha=ctx.alpha,
        output=ctx.output, release=ctx.config.release, seed=ctx.seed, elapsed_s=preview_s, params=ctx.params,
        script=dict(data=ctx.data_spec, config=ctx.preview_config, alpha=ctx.alpha, gamma=ctx.gamma))
    show.verdict_box(view.verdicts)
    show.cards(view.headlines)
    st.caption(f"One random split: repetition 0 of a run with seed {ctx.seed}. W1 runs from 0 (both halves get the "
               "same mix of predictions) to 2 (opposite ones).")
    _prediction_view(trial, ctx.prepared, view_opts, smallest, ctx.alpha, draw=True)
    fig = cc.figure(view, "groups", cf.make_group_w1_figure, key="coh_fig_groups",
                    filename="coherence_w1_per_group.html",
                    caption="Bars above the α line mark groups this split would count as a failure. Overall "
                            "averages can hide harm to a small group.")
    st.caption(view.sections[-1].lines[0])
    cc.take_away(view, "preview", figures=[fig])
