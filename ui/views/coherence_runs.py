"""Coherence explorer, "Repeated runs" tab: R repetitions behind a button, the failure rate and the per-group summary.

Controls and layout only; the verdict, cards, charts, tables and report come from
:func:`dpdash.coherence.views.runs_view`.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import streamlit as st

from dpdash.coherence import figures as cf
from dpdash.coherence import views as vw
from ui import cluster, show
from ui.show import table as results_table
from ui.common import CORES, methodology
from ui.exports import download_csv, download_json
from ui.views import coherence_common as cc

_NUM = st.column_config.NumberColumn
#: On screen the columns a reader needs, with short headers; the CSV keeps every column.
SUMMARY_COLUMNS = dict(
    column_order=["group", "members", "mean W1 over runs", "largest W1", "share flagged, released half",
                  "share flagged, held-out half", "W1 from chance alone (mean)"],
    column_config={"members": _NUM("members", format="localized"),
                   "mean W1 over runs": _NUM("mean W1", format="%.2f"),
                   "largest W1": _NUM("largest W1", format="%.2f"),
                   "share flagged, released half": _NUM("flagged, released", format="percent"),
                   "share flagged, held-out half": _NUM("flagged, held out", format="percent"),
                   "W1 from chance alone (mean)": _NUM("W1 by chance", format="%.2f")})


def _run(ctx: cc.Ctx, per_run_s: float) -> None:
    bar, progress = cc.progress_bar("Running repetitions…", kind="experiment")
    try:
        where = cc.where_words()
        cached = (ctx.data_key, ctx.config) in st.session_state.get("_memo_coh_experiment", {})
        predicted = cc.model_seconds(ctx.reps, per_run_s)
        res = cc.experiment(ctx, progress=progress)
        cc.remember_rate(ctx, res.elapsed_s, res.w1.shape[0])
        if not cached:  # a run replayed from this session's memory says nothing about the server
            cc.learn(predicted, res.elapsed_s)
        bar.progress(1.0, text="Computing the split-noise floor…")
        fl = cc.floor(ctx.data_key, ctx.config, ctx.df)
        st.session_state["coh_result"] = ((ctx.data_key, ctx.config), res, fl, where)
        if ctx.release_choice == "clear" and not ctx.coarsen:
            st.session_state["coh_clear_means"] = (ctx.data_key, ctx.label, {
                nm: float(np.nanmean(res.w1[:, j])) for j, nm in enumerate(res.group_names)})
    except ValueError as exc:
        show.say_problem(f"The experiment could not run: {exc}", level="warning")
    bar.empty()
    cc.run_ended()


def render(ctx: cc.Ctx) -> None:
    top = st.container()  # the verdict, first, once a result is known (drawn straight into it, no slot)
    if stopped := cc.stopped_note("experiment"):
        st.info(stopped)
    st.markdown(f"Run the experiment **R = {ctx.reps}** times with fresh random splits (seed {ctx.seed}; repetition 0 "
                "is the preview). Each run's largest W1 over the kept groups is compared with α.")
    _, perr, _, per_run = cc.preview(ctx.data_key, ctx.preview_config, ctx.df)
    est_s, est_words = cc.estimate(ctx, ctx.reps, per_run, f"{ctx.reps} runs")
    if perr:  # the reason the Run button is off, in the open (issue 31: only the preview tab said it)
        show.say_problem(f"These settings cannot be run: {perr}", level="warning")
    else:
        st.caption(est_words)
    too_big = cc.run_problem(ctx, ctx.reps)
    if too_big:
        show.say_problem(too_big, level="warning")
    confirm = ctx.source == "upload" and not perr and est_s > 300 and not too_big
    ok_long = st.checkbox("Yes, run the long experiment", key="coh_confirm_long") if confirm else True
    cluster.show_where(CORES)
    if st.button("Run experiment", key="coh_run", type="primary", disabled=bool(perr or too_big) or not ok_long):
        _run(ctx, per_run)
    stored = st.session_state.get("coh_result")
    if stored is None or stored[0] != (ctx.data_key, ctx.config):
        res = cc.finished_elsewhere(ctx)  # the same run, already computed by another session on this server
        if res is not None:
            st.session_state["coh_result"] = stored = ((ctx.data_key, ctx.config), res,
                                                       cc.floor(ctx.data_key, ctx.config, ctx.df), cc.where_words())
            st.caption("This experiment already ran on this server with these settings; its result is shown "
                       "(same seed, same numbers).")
    if stored is None:
        top.info("Press **Run experiment** to repeat the split R times and estimate how often the test fails.")
        return
    key, res, fl, where = stored
    same_data = key[0] == ctx.data_key  # the script reads the page's current data: only for the same data
    view = vw.runs_view(result=res, floor=fl, alpha=ctx.alpha, gamma=ctx.gamma, beta=ctx.beta, where=where,
                        stale=key != (ctx.data_key, ctx.config), params=ctx.params,
                        script=dict(data=ctx.data_spec, config=res.config, alpha=ctx.alpha, gamma=ctx.gamma)
                        if same_data else None)
    show.verdict_box(view.verdicts, container=top)
    if "summary" not in view.tables:
        return
    show.cards(view.headlines)
    st.caption(view.sections[-1].lines[0])
    with methodology():
        st.markdown(
            "**Reading the failure rate.** It describes one learner on one dataset, so it is a *lower bound* on the "
            "worst case: a rate well above β shows the release is **not** (α, β)-coherence enforcing; a rate of "
            "about 0 proves nothing. *Chance alone*: W1 of a predictor fitted on everyone (so it cannot know the "
            "split), over 200 random splits.")
    figs = [cc.figure(view, "sorted", cf.make_sorted_w1_figure, key="coh_fig_sorted",
                      filename="coherence_sorted_w1.html",
                      caption="Each line sorts one group's W1 over the runs (seed Figure 2). The share of runs whose "
                              "largest W1 lies above the α line is the failure rate."),
            cc.figure(view, "failure", cf.make_failure_rate_figure, key="coh_fig_failure",
                      filename="coherence_failure_rate.html",
                      caption="How often the test fails for each tolerance α; the band shows the statistical "
                              "uncertainty from using only R runs.")]
    cc.figure(view, "size", cf.make_size_w1_figure, key="coh_fig_size", filename="coherence_size_vs_w1.html",
              caption="Smaller groups have larger distances, partly from the split alone (chance) and partly from "
                      "the predictor singling them out.")
    people = view.tables["summary"]
    results_table(people, hide_index=True, width="stretch", key="coh_summary_table", **SUMMARY_COLUMNS)
    e1, e2, e3 = st.columns(3)
    with e1:
        download_csv(view.tables["runs"], filename="coherence_w1_per_run.csv", key="coh_dl_w1")
    with e2:
        download_csv(people, filename="coherence_summary.csv", key="coh_dl_summary", label="Download summary (CSV)")
    with e3:
        download_json({"data": list(ctx.data_key), "config": asdict(res.config), "alpha": ctx.alpha,
                       "gamma": ctx.gamma, "beta": ctx.beta, "n": res.n, "n_dropped": res.n_dropped},
                      filename="coherence_parameters.json", key="coh_dl_params")
    cc.take_away(view, "runs", figures=figs)
