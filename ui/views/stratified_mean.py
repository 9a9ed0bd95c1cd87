"""The stratified viewer's "Mean estimation" view: its five tabs, each rendered from one engine view.

Every number, sentence and table comes from ``dpdash.stratify.views`` (issue 22); this module holds the cached runs,
the layout and the figure calls. Source: seed 004_c5ca305e20a1adba.txt, Eq. 2–4, Prop. 8, Theorem 10,
Definition 11.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from dpdash.stratify import script_opendp as sopendp
from dpdash.stratify import script as SC
from dpdash.stratify import core as S
from dpdash.stratify import figures as F
from dpdash.stratify import verdicts as V
from dpdash.stratify import views as SV
from dpdash.common.view import TabView
from ui.common import methodology
from ui.exports import download_csv, download_json
from ui.show import cards, table, verdict_box, where_the_data_lives
from ui.tabs import lazy_tabs
from ui.text import md_escape
from ui.views.stratified_common import (ALPHA_NOTE, COINPRESS_LABEL, CROSSOVER_CAPTION, PAPER, SMALL_ALPHA,
                                        c_analytic, c_group_moments, c_mean_experiment, c_mean_on_data,
                                        c_mean_on_summary,
                                        c_sizes_fig, c_ternary_fig, c_theorem10_fig, c_theorem10_mc, report, show)


@dataclass(frozen=True, eq=False)
class MeanResult:
    """The runs and closed forms of the mean view at one ε, computed once per input and shared read-only."""

    df: pd.DataFrame
    sizes: np.ndarray
    mu: np.ndarray
    sigma: np.ndarray
    status: tuple
    analytic: object
    group_fig: object
    clipped: tuple | None


@st.cache_resource(max_entries=24, show_spinner=False)
def c_mean_result(spec: tuple, epsilon: float, _inp: dict) -> MeanResult:
    """The mean view's runs for ``spec`` (every input that decides them) at ``epsilon``.

    Cached as a resource: an ε move back to a value seen before (the arrow keys go back and forth) redraws
    without recomputing the runs, the closed forms or the figure, and nothing is copied on the way out.
    """
    (_, eps_list, R_, gamma_, reps_, seed_, estimator_, min_frac_, small_, weights_, holdout_, eps_w_, clip_,
     _labels) = spec
    inp = _inp
    if inp["kind"] == "sim":
        sizes, mu, sigma = inp["sizes"], inp["mu"], inp["sigma"]
        df = c_mean_experiment(tuple(int(v) for v in sizes), tuple(mu), tuple(sigma), eps_list, R_, gamma_, reps_,
                               seed_, estimator_, min_frac_, small_, weights_, holdout_, eps_w_, clip_)
    elif inp["kind"] == "summary":
        # From a group summary (issue 24): same releases, same noise; no rows, so no group spreads (σ = 1 for the
        # closed-form curve, the standardised scale).
        df = c_mean_on_summary(inp["key"], inp["summary"], eps_list, R_, gamma_, reps_, seed_, min_frac_, small_,
                               clip_)
        sizes = np.asarray(inp["sizes"])
        truth = df[(df["rep"] == 0) & (df["level"] == "group")].drop_duplicates("group")["truth"].to_numpy(float)
        mu, sigma = np.nan_to_num(truth), np.ones(sizes.size)
    else:
        df = c_mean_on_data(inp["key"], inp["x"], inp["g"], inp["k"], eps_list, R_, gamma_, reps_, seed_,
                            estimator_, min_frac_, small_, clip_)
        sizes, mu, sigma = c_group_moments(inp["key"], inp["x"], inp["g"], inp["k"])
    nz = sizes > 0
    lay = S.strata_layout(sizes, min_frac=min_frac_, small_strata=small_)
    analytic = None
    if nz.sum() >= 1 and estimator_ == "laplace":
        analytic = c_analytic(tuple(int(v) for v in sizes[nz]), R_, gamma_, epsilon, tuple(mu[nz]), tuple(sigma[nz]),
                              clip_, min_frac_, small_)
    fig = F.make_group_error_figure(df, analytic.table if analytic is not None else None, epsilon=epsilon, R=R_,
                                    gamma=gamma_, mode=clip_, sigma=float(np.median(sigma[nz])), min_frac=min_frac_,
                                    n=int(sizes.sum()), seed=seed_, show_curve=estimator_ == "laplace")
    clipped = None
    if inp["kind"] == "data" and estimator_ == "laplace":
        C = np.atleast_1d(S.clip_halfwidth(lay.strata_sizes.astype(float), R=R_, gamma=gamma_, mode=clip_))
        clip_of_group = np.where(lay.stratum_of_group >= 0, C[np.maximum(lay.stratum_of_group, 0)], np.nan)
        clipped = V.clipped_share(inp["x"], inp["g"], clip_of_group)
    return MeanResult(df, sizes, mu, sigma, tuple(lay.status), analytic, fig, clipped)


def render_mean(slot, inp: dict, cfg) -> None:
    """The mean view below its controls; the verdict and the guidance go into ``slot`` (above the controls, made
    in the same fragment)."""
    eps = cfg.eps
    eps_list = tuple(sorted(set((eps,) + (S.PAPER_EPSILONS if cfg.paper_grid else ()))))
    inp_key = (("sim", tuple(int(v) for v in inp["sizes"]), tuple(inp["mu"]), tuple(inp["sigma"]))
               if inp["kind"] == "sim" else (inp["kind"], inp["key"]))
    spec = (inp_key, eps_list, cfg.R, cfg.gamma, cfg.reps, cfg.seed, cfg.estimator, cfg.min_frac, cfg.small,
            cfg.weights_mode, cfg.holdout, cfg.eps_w if cfg.weights_mode == "noisy" else None, cfg.clip_mode,
            tuple(map(str, inp["labels"])))
    try:
        res = c_mean_result(spec, eps, inp)
    except ValueError as exc:
        st.warning(f"These settings leave nothing to estimate: {md_escape(exc)}. Lower the minimum stratum "
                   "fraction or choose “Pool” for groups below the threshold.")
        return
    df, sizes, analytic, status = res.df, res.sizes, res.analytic, list(res.status)
    labels = inp["labels"]
    nz = sizes > 0
    ntot = int(sizes.sum())
    script = None
    if cfg.estimator == "laplace" and cfg.weights_mode == "exact" and inp["kind"] == "sim":
        script = dict(sizes=[int(v) for v in sizes], mu=[float(v) for v in res.mu],
                      sigma=[float(v) for v in res.sigma], epsilon=eps, R=cfg.R, gamma=cfg.gamma, reps=cfg.reps,
                      seed=cfg.seed, min_frac=cfg.min_frac, small_strata=cfg.small, mode=cfg.clip_mode,
                      labels=list(map(str, labels)), epsilons=eps_list)
    # the same release performed with OpenDP where the rows live (issue 24 item 3)
    opendp = SV.opendp_script_params(inp.get("opendp"), sizes=sizes, labels=list(map(str, labels)), epsilon=eps,
                                     R=cfg.R, gamma=cfg.gamma, mode=cfg.clip_mode, min_frac=cfg.min_frac,
                                     small_strata=cfg.small, estimator=cfg.estimator,
                                     weights_mode=cfg.weights_mode if inp["kind"] == "sim" else "exact")
    view = SV.mean_error_view(
        df, epsilon=eps, labels=list(map(str, labels)), status=status, sizes=sizes, reps=cfg.reps, seed=cfg.seed,
        clipped=res.clipped, raw=inp.get("raw"), script=script, opendp=opendp,
        params={"Data": cfg.data_name, "ε": f"{eps:g}", "Groups": f"{int(nz.sum())}", "Records": f"{ntot:,}",
                "Repetitions": f"{cfg.reps}", "Estimator": cfg.estimator.capitalize(), "Seed": f"{cfg.seed}"})
    # Verdict first (above the controls): from the same repetitions the charts and downloads show.
    verdict_box(view.verdicts, container=slot)
    st.caption(inp["note"])
    if inp.get("rows") is not None:
        _rows_left_out(inp["rows"])

    figures: list[tuple[str, object]] = []
    tabs = lazy_tabs(["Error per group", "Population", "Group sizes", "Error against ε", "Parity"],
                     key="sv_mean_tab")
    lead = view.verdicts[0].text
    with tabs[0].container:
        if tabs[0].open:
            comp = view.tables["comparison"]
            alt = (f"Log-log scatter of each group's error against its size at ε = {eps:g}, one dot per repetition: "
                   + lead)
            figures.append((alt, res.group_fig))
            show(res.group_fig, key="sv_fig_group_error", filename="group_error", alt=alt, table=comp,
                 caption=CROSSOVER_CAPTION + (" Dots: one repetition each; line: the expected error of a group of "
                                              "that size released on its own; dashes: the global release's bias "
                                              "for each group (it does not shrink as ε grows); crosses: crossover "
                                              "sizes." if analytic is not None else " Dots: one repetition each "
                                              "(the closed-form lines describe the Laplace estimator and are not "
                                              "drawn for Coinpress).") + f" Seed {cfg.seed}.")
            table(comp, hide_index=True, column_config={
                c: st.column_config.NumberColumn(format="%.4g") for c in comp.columns if c.startswith("mean")})
    with tabs[1].container:
        if tabs[1].open:
            _population_tab(df, analytic, inp, cfg, figures)
    with tabs[2].container:
        if tabs[2].open:
            _sizes_tab(inp, sizes, labels, status, cfg, figures)
    with tabs[3].container:
        if tabs[3].open:
            sweep = SV.sweep_view(df, paper_grid=cfg.paper_grid, seed=cfg.seed)
            if cfg.paper_grid:
                verdict_box(sweep.verdicts)
                fig = F.make_epsilon_sweep_figure(df)
                alt = ("Two log-log panels, population error and worst group's error against ε over the paper's "
                       "grid, one line per release: " + sweep.verdicts[0].text)
                figures.append((alt, fig))
                show(fig, key="sv_fig_sweep", filename="epsilon_sweep", alt=alt, table=sweep.tables["worst"],
                     caption="The global release's group error stays at its bias whatever ε; the per-group "
                             f"release's falls as ε grows. Seed {cfg.seed}.")
            else:
                st.info("Turn on **Paper grid** above to sweep ε over the paper's values (0.01 … 5).")
    with tabs[4].container:
        if tabs[4].open:
            par = SV.parity_view(df, epsilon=eps, group_mask=nz, normalized=cfg.parity_norm, reps=cfg.reps,
                                 seed=cfg.seed)
            verdict_box(par.verdicts)
            cards(par.headlines)
            with methodology():
                form = ("each divided by the true mean (normalised form)" if cfg.parity_norm
                        else "absolute form (no division)")
                st.markdown(f"Parity error (Definition 11) = ω·|population error| + Σ over groups of |group error| "
                            f"(ω = 1/k), {form}; averaged over {cfg.reps} repetitions. The paper calls it an "
                            "average but writes a sum; the sum is used.")

    # exactly the analysis shown: the data's value column, groups, centre and scale; only the controls that apply
    params = SV.mean_parameters(
        dict(epsilon=eps, epsilons=list(eps_list), alpha=cfg.alpha, k=cfg.k, n=cfg.n, reps=cfg.reps, seed=cfg.seed,
             min_frac=cfg.min_frac, small_strata=cfg.small, estimator=cfg.estimator, R=cfg.R, gamma=cfg.gamma,
             clip_mode=cfg.clip_mode, tau=cfg.tau, sigma_mode=cfg.sigma_mode, weights=cfg.weights_mode,
             holdout=cfg.holdout, epsilon_weights=cfg.eps_w, parity_normalized=cfg.parity_norm, paper=PAPER),
        source=cfg.source, data_name=cfg.data_name, data=inp.get("opendp") if inp["kind"] != "sim" else None)
    c1, c2 = st.columns(2)
    with c1:
        download_csv(df, filename="mean_runs.csv", key="sv_dl_runs", label="Download all repetitions (CSV)")
    with c2:
        download_json(params, filename="stratified_viewer_params.json", key="sv_dl_params_mean")
    recompute = view.script["recompute"]
    report(view, key="sv_art_mean", figures=figures, script=SC.mean_script(**recompute) if recompute else None)
    if view.script["opendp"]:
        where_the_data_lives(sopendp.stratified_means_script(**view.script["opendp"]), key="sv_mean",
                             filename="stratified_means_opendp.py")
    elif cfg.estimator != "laplace":
        st.caption("The OpenDP script (“Run it where the data lives”) performs the Laplace release; Coinpress is "
                   "ρ-zCDP and is not offered there.")


def _rows_left_out(rows: TabView) -> None:
    """Which rows of the table the view left out and why, from the same view as the count sentence above it
    (``dpdash.stratify.views.rows_used_view``, issue 31 item 2); nothing when every row is used."""
    gone = rows.headline("Rows left out")
    if not gone.raw:
        return
    with st.expander(f"Rows left out: {gone.value} of {rows.headline('Rows in the file').value}"):
        table(rows.tables["left_out"], hide_index=True)
        every = rows.tables["rows"]
        table(every.loc[~every["kept"], ["row", "reason"]], hide_index=True)
        st.caption("Row 1 is the file's first row after the header. Only the averaged column and the group columns "
                   "matter: blanks elsewhere leave no row out.")


def _population_tab(df, analytic, inp, cfg, figures) -> None:
    eps = cfg.eps
    extra = cfg.eps_w if cfg.weights_mode == "noisy" and inp["kind"] == "sim" else None
    pop: TabView = SV.population_view(df, epsilon=eps, reps=cfg.reps, seed=cfg.seed, analytic=analytic,
                                      estimator=cfg.estimator, extra_epsilon=extra)
    verdict_box(pop.verdicts)
    fig = F.make_population_error_figure(df, epsilon=eps, analytic=analytic)
    alt = (f"Box plots of the population mean's error over {cfg.reps} repetitions at ε = {eps:g}, one box per "
           f"release: {pop.verdicts[0].text}")
    figures.append((alt, fig))
    show(fig, key="sv_fig_pop", filename="population_error", alt=alt,
         caption="Box: the error of the population estimate over repetitions. Releasing each group adds "
                 "noise from every group, so the population estimate is a little worse; with large groups "
                 f"the extra cost is small compared with the sampling error. Seed {cfg.seed}.")
    cards(pop.headlines)
    if cfg.estimator == "coinpress":
        st.caption(f"Coinpress is {COINPRESS_LABEL}: ρ = ε²/2 = {pop.headlines[0].value.removeprefix('ρ = ')}, "
                   "schedule (ρ/4, 3ρ/4), β = 0.01. The closed-form error lines and ratio cards describe the "
                   "Laplace estimator, so they are not drawn here.")
    elif cfg.weights_mode != "exact" and inp["kind"] == "sim":
        st.caption("The closed-form lines and cards assume exact public weights; the boxes use the "
                   f"{ {'holdout': 'holdout-share', 'noisy': 'noisy'}.get(cfg.weights_mode, 'exact')} weights.")


def _sizes_tab(inp, sizes, labels, status, cfg, figures) -> None:
    """Group sizes, the Theorem 10 cards and figure, and the Dirichlet explainer."""
    alpha = cfg.alpha if inp["kind"] == "sim" and cfg.source == "Mixture" else None
    view = SV.sizes_view(sizes, list(map(str, labels)), status, alpha=alpha, min_frac=cfg.min_frac, seed=cfg.seed)
    verdict_box(view.verdicts)
    cards(view.headlines, columns=6)
    if view.headlines:
        with methodology():
            st.markdown(ALPHA_NOTE + " The share of the way to the best case is how far the expected Σ log(group "
                        "size) sits from the equal-sizes worst case towards the one-big-group best case (0% = "
                        "worst, 100% = best). " + SMALL_ALPHA)
    nz = sizes > 0
    fig = c_sizes_fig(tuple(int(v) for v in sizes), tuple(map(str, labels)), tuple(status))
    alt = (f"Bar chart of the {len(labels)} group sizes, largest first, on a log scale, from "
           f"{int(sizes.max()):,} down to {int(sizes[nz].min()):,} records.")
    figures.append((alt, fig))
    show(fig, key="sv_fig_sizes", filename="group_sizes", table=view.tables["sizes"], alt=alt,
         caption=f"Grey bars are dropped groups, orange bars are pooled together ({view.figures['threshold']}).")
    if view.headlines:
        f = view.figures
        mc = c_theorem10_mc(f["k"], f["n"], cfg.seed)
        fig = c_theorem10_fig(f["k"], f["n"], cfg.alpha, f["alpha_hat"], cfg.seed, f["realized"])
        show(fig, key="sv_fig_thm10", filename="theorem10", table=mc,
             alt=f"Line chart of the expected sum of log group sizes against the imbalance α for {f['k']} groups "
                 f"and {f['n']:,} records, between the equal-sizes worst case and the one-big-group best case.",
             caption="Why stratifying costs little (Theorem 10): the per-group release's error grows with Σ "
                     "log(group size). Unequal groups (small α) keep this sum well below the equal-size worst case. "
                     "For very small α the formula goes negative because it allows groups smaller than one record; "
                     "the dots use whole groups of at least one record.")
    with st.expander("What does α do? Twenty random splits into 3 groups"):
        show(c_ternary_fig(cfg.seed), key="sv_fig_ternary", filename="dirichlet_draws",
             alt="Ternary scatter of twenty random splits into three groups for α = 0.1, 1 and 10: small α puts "
                 "the points near the corners.",
             caption=SMALL_ALPHA + " Points near a corner mean one group has almost everybody.")
