"""Coherence explorer, "W1 vs ε" tab: the DP histogram release at several ε, behind a button.

Controls and layout only; the verdict, chart, table and report come from :func:`dpdash.coherence.views.sweep_view`.
"""

from __future__ import annotations

import time
from dataclasses import replace

import streamlit as st

from dpdash.coherence import core as co
from dpdash.coherence import figures as cf
from dpdash.coherence import tabs as ct
from dpdash.coherence import views as vw
from dpdash.coherence import script as sc_script
from ui import cluster, show
from ui.common import CORES
from ui.exports import download_csv
from ui.views import coherence_common as cc


def _eps_list() -> str:
    return ", ".join("∞" if e == float("inf") else f"{e:g}" for e in ct.SWEEP_EPSILONS)


def render(ctx: cc.Ctx) -> None:
    if stopped := cc.stopped_note("sweep"):
        st.info(stopped)
    if ctx.release_kind not in co.HISTOGRAM_KINDS:
        st.info("This tab compares DP histogram releases at several ε. Choose an ε-DP or (ε, δ)-DP histogram "
                "release in the sidebar to use it.")
        return
    sweep_reps = min(int(ctx.reps), 10)
    top = st.container()
    noise = ("Laplace noise of scale 2/ε to every cell, because replacing one record changes two counts"
             if ctx.release_kind == "dp_histogram" else
             f"Gaussian noise (L2 sensitivity √2, δ = {ctx.delta:.0e}) to every cell")
    st.markdown(f"ε ∈ {{{_eps_list()}}}, {sweep_reps} repetitions each, the same splits for every ε (seed "
                f"{ctx.seed}). The DP release adds {noise}; negative counts become 0; n/2 synthetic records are "
                "drawn. At ε = ∞ no noise is added: an exact histogram, not DP.")
    _, perr, _, per_run = cc.preview(ctx.data_key, ctx.preview_config, ctx.df)
    n_sweep = len(ct.SWEEP_EPSILONS) * sweep_reps
    if perr:  # the reason the Run button is off, in the open (issue 31)
        show.say_problem(f"These settings cannot be run: {perr}", level="warning")
    else:
        st.caption(cc.estimate(ctx, n_sweep, per_run,
                               f"{n_sweep} runs ({len(ct.SWEEP_EPSILONS)} ε × {sweep_reps})")[1])
    too_big = cc.run_problem(ctx, n_sweep)
    if too_big:
        show.say_problem(too_big, level="warning")
    cluster.show_where(CORES)
    scfg = replace(ctx.config, repetitions=sweep_reps)
    if st.button("Run ε sweep", key="coh_sweep_run", disabled=bool(too_big or perr)):
        bar, progress = cc.progress_bar("Sweeping ε…", kind="sweep", total=n_sweep)
        try:
            cached = (ctx.data_key, scfg) in st.session_state.get("_memo_coh_sweep", {})
            predicted, t0 = cc.model_seconds(n_sweep, per_run), time.perf_counter()
            sw = cc.sweep(ctx, scfg, progress=progress)
            if not cached:  # a run replayed from this session's memory says nothing about the server
                cc.learn(predicted, time.perf_counter() - t0)
            fl = cc.floor(ctx.data_key, scfg, ctx.df)
            st.session_state["coh_sweep"] = ((ctx.data_key, scfg), sw, fl)
        except ValueError as exc:
            show.say_problem(f"The ε sweep could not run: {exc}", level="warning")
        except Exception:
            cc.run_ended()  # a crash is not a Stop: no "Stopped" note, and no rerun that would hide the error
            raise
        bar.empty()
        cc.run_ended()
    stored = st.session_state.get("coh_sweep")
    if stored is None:
        top.info("Press **Run ε sweep** to see how the distances shrink as noise grows.")
        return
    skey, sw, fl = stored
    cm = st.session_state.get("coh_clear_means")
    same_data = skey[0] == ctx.data_key  # the script reads the page's current data: only for the same data
    script_reps = min(sc_script.SCRIPT_SWEEP_REPS, skey[1].repetitions)
    view = vw.sweep_view(sweep=sw, floor=fl, alpha=ctx.alpha,
                         clear_means=cm[2] if cm and cm[0] == ctx.data_key and cm[1] == ctx.label else None,
                         release=skey[1].release, stale=skey != (ctx.data_key, scfg), seed=ctx.seed,
                         params=ctx.params,
                         script=dict(data=ctx.data_spec, config=skey[1], epsilons=ct.SWEEP_EPSILONS,
                                     repetitions=script_reps) if same_data else None)
    show.verdict_box(view.verdicts, container=top)
    fig = cc.figure(view, "sweep", cf.make_sweep_figure, key="coh_fig_sweep", filename="coherence_w1_vs_epsilon.html",
                    caption="Moving left (smaller ε, more noise) the distances fall to the grey band — what random "
                            "splitting alone produces. At ∞ the release is an exact histogram: not DP.")
    download_csv(view.tables["sweep"], filename="coherence_epsilon_sweep.csv", key="coh_dl_sweep")
    if same_data:
        st.caption(f"The script below recomputes the first {script_reps} of the {skey[1].repetitions} runs at each "
                   "ε, to stay quick: its means are those of these runs, not of all of them. Raise R in it to get "
                   "the chart's means exactly.")
    cc.take_away(view, "sweep", figures=[fig])
