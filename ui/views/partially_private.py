"""Third mode of the stratified synthesis viewer: "Partially private release" (keys ``pp_*``).

One ``@st.fragment`` (:func:`render_partially_private_release`). Computation lives in
``dpdash.stratify.partial_release``,
figures in ``dpdash.stratify.partial_release_figures``, and the plain logic of this view (the WEM job units and their
cache
keys, the loss table, the toy's parser) in ``ui.views.ppd_jobs``; this module wires widgets to cached calls. Source:
Seeman, Slavković & Reimherr, *A Formal Privacy Framework for Partially Private Data*
(``shared/seeds/001_cddb039cfb564267.txt``), §5; spec ``shared/specs/partially_private.md``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from dpdash.stratify import script_opendp as sopendp
from dpdash.stratify import partial_release as release
from dpdash.stratify import partial_release_figures as figs
from dpdash.stratify import script as SC
from dpdash.stratify import views as SV
from ui import cluster
from ui.show import table as results_table
from ui.show import take_away, verdict_box, where_the_data_lives
from ui.charts import show_figure
from ui.common import CORES, methodology
from ui.exports import download_csv, download_json
from ui.text import md_escape
from ui.upload import uploaded_bytes
from ui.views import ppd_jobs as jobs
from ui.views.public_information import MODEL_CAVEAT, PAPER
from ui.widgets import choice, log_grid, log_slider, multi_choice, seed_input

EPS_MIN, EPS_MAX = 0.1, 10.0
ALPHA_OPTIONS = log_grid(1e-4, 100.0, 4)
CONTRACTION_EPS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0)


@st.cache_data(max_entries=4, show_spinner=False)
def _synthetic_panel() -> release.CountyPanel:
    return release.synth_pa_like()


@st.cache_data(max_entries=8, show_spinner=False, scope="session")
def _parse_upload(digest: str, _data: bytes):
    try:
        return release.read_county_csv(_data), None
    except ValueError as exc:
        return None, str(exc)


@st.cache_data(max_entries=2000, show_spinner=False, scope="session")
def _run_unit(panel_key: str, _panel: release.CountyPanel, t: int, epsilon: float, method: str, alpha: float,
              sensitivity: float, kappa: float, reps: int, public: tuple, sweeps: int,
              pp_sensitivity: float | None, seed: int, _computed: pd.DataFrame | None = None) -> pd.DataFrame:
    """One (month, ε, method, α) cell with all replicate draws; chains keep their own seeds.

    ``_computed`` (not part of the cache key) stores a frame that :func:`_run_units` computed in parallel;
    it equals what the call below returns, because every chain is seeded from (seed, t, rep, ε, method, α).
    """
    if _computed is not None:
        return _computed
    return release.run_partially_private_release(
        _panel, t, epsilons=[epsilon], methods=[method], alphas=[alpha], sensitivity=sensitivity, kappa=kappa,
        reps=reps, public=release.PublicInfo(*public), sweeps=sweeps, pp_sensitivity=pp_sensitivity, rng=seed)


@st.cache_data(max_entries=64, show_spinner=False, scope="session")
def _contraction(panel_key: str, _panel: release.CountyPanel, sensitivity: float, seed: int) -> pd.DataFrame:
    return release.contraction_frequencies(_panel, epsilons=CONTRACTION_EPS, sensitivity=sensitivity, reps=20,
                                       rng=seed)


def _unit_frame(panel_key: str, panel: release.CountyPanel, unit: jobs.Unit, cfg: dict) -> pd.DataFrame:
    """The cached release frame of one unit ``(t, ε, method, α, reps)`` under the settings ``cfg``."""
    t, e, m, a, reps = unit
    return _run_unit(panel_key, panel, t, e, m, a, cfg["sensitivity"], cfg["kappa"], reps, cfg["public"],
                     cfg["sweeps"], cfg["pp_sensitivity"], cfg["seed"])


def _series(panel_key, panel, method, cfg) -> np.ndarray:
    """Smallest county's released cases over months ≥ 1 (draw 0), one cached unit per month."""
    out = []
    for t in range(1, panel.T):
        df = _run_unit(panel_key, panel, t, cfg["epsilon"], method, cfg["alpha"], cfg["sensitivity"],
                       cfg["kappa"], 1, cfg["public"], cfg["sweeps"], cfg["pp_sensitivity"], cfg["seed"])
        out.append(int(df["cases"].iloc[0]))
    return np.array(out)


def _run_units(units: list[tuple], panel_key, panel, cfg, label: str) -> None:
    """Run (t, ε, method, α, reps) units behind a progress bar, all chains over both cores; each unit is cached.

    Units already computed in this session are skipped; the rest go to ``release.run_release_units`` in one joblib
    pool (results identical to one-by-one runs) and are stored in :func:`_run_unit`'s cache.
    """
    done = st.session_state.setdefault("_pp_units_done", set())
    if len(done) > 4000:  # bounded like the cache it mirrors (max_entries=2000 per call signature)
        done.clear()
    todo = [u for u in units if jobs.unit_key(panel_key, u, cfg) not in done]
    if not todo:
        return
    bar = st.progress(0.0, text=f"{label}: starting {CORES} worker processes")

    def progress(frac: float, msg: str) -> None:
        bar.progress(frac, text=f"{label}: {msg}")

    # On the Dask cluster when one is configured, else on the local cores: every chain has its own seed, so the
    # frames are the same either way.
    frames = cluster.run(release.run_release_units, panel, todo, sensitivity=cfg["sensitivity"],
                         kappa=cfg["kappa"], public=release.PublicInfo(*cfg["public"]), sweeps=cfg["sweeps"],
                         pp_sensitivity=cfg["pp_sensitivity"], rng=cfg["seed"], n_jobs=CORES, progress=progress)
    for (t, e, m, a, reps), frame in zip(todo, frames):
        _run_unit(panel_key, panel, t, e, m, a, cfg["sensitivity"], cfg["kappa"], reps, cfg["public"], cfg["sweeps"],
                  cfg["pp_sensitivity"], cfg["seed"], _computed=frame)
        done.add(jobs.unit_key(panel_key, (t, e, m, a, reps), cfg))
    bar.empty()


@st.cache_data(max_entries=32, show_spinner=False)
def _alg1(y: tuple, s: int, a0: tuple, epsilon: float, sensitivity: float, seed: int):
    ex = release.posterior_exact_counts(y, s, a0, epsilon=epsilon, sensitivity=sensitivity)
    rj = release.posterior_rejection_counts(y, s, a0, epsilon=epsilon, sensitivity=sensitivity, n_proposals=200_000,
                                        rng=seed)
    lit = release.posterior_rejection_counts(y, s, a0, epsilon=epsilon, sensitivity=sensitivity, n_proposals=200_000,
                                         rng=seed, rule="paper_literal")
    return ex, rj, lit


def _alg1_section(seed: int) -> None:
    with st.expander("Posterior with public information (Algorithm 1)"):
        st.markdown(
            "A 3-cell toy: cell probabilities p ~ Dirichlet(α₀), counts X ~ Multinomial(s, p) with the total s "
            "public, and noisy counts y = X + discrete Laplace noise. What can an analyst infer about p? The "
            "exact answer enumerates every table with total s; Algorithm 1 gets it by rejection sampling "
            "(accept a simulated table X* with probability r^‖y − X*‖₁). The paper prints the acceptance test "
            "the wrong way round (erratum E2); its result is shown for comparison and is **incorrect**."
        )
        c1, c2, c3, c4, c5 = st.columns(5)
        y_txt = c1.text_input("noisy counts y", "6, 1, 4", key="pp_alg_y", bind="query-params")
        s = c2.number_input("public total s", 0, 300, 10, key="pp_alg_s", bind="query-params")
        a_txt = c3.text_input("prior α₀", "3, 3, 2", key="pp_alg_alpha", bind="query-params")
        e = log_slider("ε", key="pp_alg_eps", min_value=EPS_MIN, max_value=EPS_MAX, value=1.0, steps_per_decade=10,
                       container=c4)
        d = c5.number_input("Δ", 0.5, 8.0, 2.0, step=0.5, key="pp_alg_delta", bind="query-params")
        try:
            y = jobs.parse_vector(y_txt, "noisy counts y", integer=False)
            a0 = jobs.parse_vector(a_txt, "prior α₀", integer=False)
            ex, rj, lit = _alg1(tuple(y), int(s), tuple(a0), float(e), float(d), seed)
        except ValueError as exc:
            st.warning(f"Cannot compute the posterior: {md_escape(exc, max_len=400)}")
            return
        table = pd.DataFrame({
            "method": ["exact (enumeration)", "Algorithm 1, corrected", "Algorithm 1 as printed: incorrect "
                                                                        "(reversed test)"],
            **{f"mean p{i + 1}": [x.mean[i] for x in (ex, rj, lit)] for i in range(3)},
            **{f"sd p{i + 1}": [x.sd[i] for x in (ex, rj, lit)] for i in range(3)},
            "acceptance rate": [ex.acceptance, rj.acceptance, lit.acceptance],
        })
        results_table(table, hide_index=True, width="stretch")
        st.caption(f"{ex.n_compositions:,} tables enumerated; samplers use 200,000 proposals, seed {seed}. The "
                   "exact acceptance rate is Σ_x DM(x)·r^‖y−x‖₁.")
        show_figure(figs.make_alg1_figure({"exact": ex, "Algorithm 1 (corrected)": rj,
                                           "as printed: incorrect (reversed test)": lit}),
                    key="pp_fig_alg1", filename="algorithm1_posterior.html",
                    alt="Bars of the posterior mean ± sd of the three cell probabilities: exact, Algorithm 1 "
                        "corrected, and Algorithm 1 as printed.")
        download_csv(table, filename="algorithm1_posterior.csv", key="pp_dl_alg1")


@st.fragment
def render_partially_private_release() -> None:
    """Third tab of the stratified synthesis viewer: "Partially private release" (spec §6)."""
    verdict_slot = st.container()  # the verdict, first: filled once the results are known (same fragment)
    st.markdown(
        "County × month case and death counts, with the counties acting as strata. The **state total** of "
        "cases each month is public, counts satisfy cases ≥ deaths ≥ 0, and last month's counts are public. "
        "Two ways to release: **PP** adds discrete Laplace noise and then post-processes the counts to respect "
        "the public information; **WEM** samples counts directly from a Wasserstein exponential mechanism whose "
        "base measure is naive (any integers), congenial (only tables that respect the public constraints) or "
        f"prior-congenial (also weighted by last month). Source: {PAPER}, §5 (L432–518)."
    )
    with methodology():
        st.markdown("The paper prints no case-study numbers; every number here is computed by this product. WEM "
                    "draws come from a Gibbs sampler (MCMC), which is approximate. Guarantees assume the stated "
                    "neighbour (one person's record changes county and/or death status, state total fixed). "
                    + MODEL_CAVEAT)

    # ------------------------------------------------------------ data
    source = choice("Data", {"synthetic": "Synthetic county data (PA-like, not real)",
                             "upload": "Upload a county CSV"}, key="pp_data", widget="radio", horizontal=True)
    panel = _synthetic_panel()
    if source == "upload":
        data = uploaded_bytes("County × month CSV (columns county, month, cases, deaths, population)",
                              key="pp_upload", max_bytes=release.MAX_COUNTY_CSV_BYTES,
                              help="One row per county and month; integer counts, deaths ≤ cases, population "
                                   "constant per county; 3–500 counties, 2–240 months; at most 10 MB.")
        if data is not None:
            parsed, err = _parse_upload(hashlib.sha256(data).hexdigest(), data)
            if err:
                st.error(f"This file cannot be used: {md_escape(err.rstrip('.'), max_len=400)}. Expected columns "
                         "county, month, cases, deaths, population with one row per county × month.")
            else:
                panel = parsed
    if panel.synthetic:
        st.info(f"Using **synthetic county data (PA-like, not real)**: {panel.J} counties × {panel.T} months "
                "(spec §7 recipe, seed 2022).")
    else:
        st.success(f"Using **your uploaded data**: {panel.J} counties × {panel.T} months.")
    panel_key = panel.fingerprint()

    # ------------------------------------------------------------ controls
    c1, c2, c3, c4 = st.columns(4)
    eps = log_slider("ε", key="pp_epsilon", min_value=EPS_MIN, max_value=EPS_MAX, value=1.0, steps_per_decade=10,
                     container=c1)
    sens = c2.slider("Δ (sensitivity scale shared by PP and WEM)", 0.5, 8.0, 2.0, step=0.5, key="pp_sensitivity",
                     bind="query-params")
    kappa = int(choice("κ (WEM normaliser factor)", {"2": "2 (safe)", "1": "1 (as printed in the paper)"},
                       key="pp_kappa", widget="radio", horizontal=True, container=c3))
    # Controls that do nothing in the current choice of methods are greyed out (their values and links are kept).
    chosen = st.session_state.get("pp_methods", list(release.METHODS))
    prior_possible = st.session_state.get("pp_state_total", True) and st.session_state.get("pp_prior", True)
    alpha = c4.select_slider("α (prior strength, WEM-prior)", ALPHA_OPTIONS, 1.0, key="pp_alpha",
                             bind="query-params", format_func=lambda v: f"{v:g}",
                             disabled=not ("wem_prior" in chosen and prior_possible),
                             help="Used only by WEM-prior (needs the state total and the previous month as prior).")
    c1, c2, c3, c4 = st.columns(4)
    month_opts = list(range(1, panel.T))
    t = c1.selectbox("Month", month_opts, index=len(month_opts) - 1, key="pp_month", bind="query-params",
                     format_func=lambda i: panel.months[i])
    reps = c2.slider("Replicate draws", 1, 10, 3, key="pp_reps", bind="query-params")
    sweeps = c3.slider("Gibbs sweeps (WEM)", 10, 100, 30, key="pp_sweeps", bind="query-params",
                       disabled=not any(m != "pp" for m in chosen), help="Used only by the WEM methods.")
    with c4:
        seed = seed_input(key="pp_seed", value=0)
    methods = multi_choice("Methods", {m: release.METHOD_LABELS[m] for m in release.METHODS}, key="pp_methods",
                           default=list(release.METHODS))
    st.markdown("**Public information**")
    c1, c2, c3, c4 = st.columns(4)
    st_on = c1.checkbox("State total", True, key="pp_state_total", bind="query-params")
    order = c2.checkbox("Cases ≥ deaths", True, key="pp_order", bind="query-params")
    nonneg = c3.checkbox("Non-negative counts", True, key="pp_nonneg", bind="query-params")
    prior_on = c4.checkbox("Previous month as prior", True, key="pp_prior", bind="query-params",
                           disabled=not st_on, help="The prior-congenial base measure needs the state total.")
    prior_on = prior_on and st_on
    c1, c2 = st.columns(2)
    share = c1.slider("Share of counties published exactly (extension)", 0.0, 0.9, 0.0, step=0.05,
                      key="pp_exact_share", bind="query-params",
                      help="The most populous counties are published without noise; the rest are released "
                           "privately with the remaining total.")
    calibrate = c2.checkbox("Calibrate PP to the WEM guarantee", False, key="pp_calibrate", bind="query-params",
                            help="Use Δ_PP = κΔ so PP carries the same guarantee as the constrained WEMs.")
    public = release.PublicInfo(state_total=st_on, cases_ge_deaths=order, nonnegative=nonneg,
                            previous_month_prior=prior_on, exact_share=share)
    pp_sens = kappa * sens if calibrate else None
    if "wem_prior" in methods and not prior_on:
        st.info("WEM-prior is skipped: it needs the state total and the previous month as public information.")
    active = [m for m in methods if m != "wem_prior" or prior_on]
    cfg = dict(epsilon=float(eps), alpha=float(alpha), sensitivity=float(sens), kappa=float(kappa),
               public=jobs.public_tuple(public), sweeps=int(sweeps), pp_sensitivity=pp_sens, seed=int(seed))
    params = dict(cfg, month=panel.months[t], reps=reps, methods=active, data=panel.source, seed=seed)

    # ------------------------------------------------------------ guarantees
    st.subheader("Guarantees")
    gt = release.guarantee_table(epsilon=eps, sensitivity=sens, kappa=kappa, pp_sensitivity=pp_sens)
    gt = gt[gt["method"].isin([release.METHOD_LABELS[m] for m in release.METHODS if m in active])]
    gt = gt.reset_index(drop=True)
    # The neighbour is the same for every method: said once in the caption below, not repeated per row.
    results_table(gt.drop(columns=["neighbour"], errors="ignore").rename(
        columns={"guaranteed epsilon": "guaranteed ε"}), hide_index=True, width="stretch")
    st.caption("Privacy loss for one person's record changing county and/or death status with the state total "
               "fixed. At the defaults (Δ = κ = 2) PP carries 2ε while the constrained WEMs carry ε; tick "
               "\"Calibrate PP\" to equalise. Temporal dependence through public previous-month counts can enlarge "
               "the sensitivity further (Example 3).")
    download_csv(gt, filename="ppd_guarantees.csv", key="pp_dl_guarantees")

    # ------------------------------------------------------------ live PP
    frames = []
    if "pp" in active:
        try:
            frames.append(_run_unit(panel_key, panel, t, float(eps), "pp", float("nan"), float(sens), float(kappa),
                                    int(reps), cfg["public"], int(sweeps), pp_sens, int(seed)))
        except ValueError as exc:
            st.error(f"PP cannot run with these settings: {md_escape(exc, max_len=400)}")

    # ------------------------------------------------------------ WEM buttons
    wem = [m for m in active if m != "pp"]
    run_key = (panel_key, t, cfg["epsilon"], cfg["alpha"], cfg["sensitivity"], cfg["kappa"], reps, cfg["public"],
               cfg["sweeps"], cfg["seed"], tuple(wem))
    st.subheader("Wasserstein exponential mechanisms")
    st.markdown("WEM draws need a Gibbs sampler (MCMC, approximate), so they run on request: **Run at this ε** "
                "draws every selected WEM at this month plus one draw per month for the time series (about "
                "10–30 s); the sweeps take up to a minute. Results are cached.")
    b1, b2, b3 = st.columns(3)
    run_now = b1.button("Run at this ε", key="pp_run", disabled=not wem)
    run_eps = b2.button("Run ε sweep", key="pp_run_eps", disabled=not active)
    run_alpha = b3.button("Run α sweep", key="pp_run_alpha", disabled=not prior_on)
    cluster.show_where(CORES)
    done = st.session_state.setdefault("_pp_done", {})
    try:
        if run_now:
            units = jobs.units_at_epsilon(wem, t=t, epsilon=eps, alpha=alpha, reps=reps, months=panel.T)
            _run_units(units, panel_key, panel, cfg, "WEM draws")
            done["now"] = run_key
        if run_eps:
            units = jobs.units_epsilon_sweep(active, t=t, alpha=alpha, reps=reps)
            _run_units(units, panel_key, panel, cfg, "ε sweep")
            done["eps"] = run_key + (tuple(active),)
        if run_alpha:
            units = jobs.units_alpha_sweep(t=t, epsilon=eps, reps=reps)
            _run_units(units, panel_key, panel, cfg, "α sweep")
            done["alpha"] = run_key
    except ValueError as exc:
        st.error(f"The WEM run failed: {md_escape(exc, max_len=400)}")
    wem_ready = done.get("now") == run_key and bool(wem)
    if wem_ready:
        frames += [_unit_frame(panel_key, panel, u, cfg)
                   for u in jobs.units_at_epsilon(wem, t=t, epsilon=eps, alpha=alpha, reps=reps)]
    elif wem:
        st.caption("Press **Run at this ε** to add the WEM series to the plots below (results are cached).")

    # ------------------------------------------------------------ plots (ii)–(iv)
    figures: list = []
    loss = None
    if frames:
        res = pd.concat(frames, ignore_index=True)
        loss = jobs.loss_summary(res)
    view = SV.partial_release_view(
        loss, gt, epsilon=float(eps), month=str(panel.months[t]), seed=int(seed),
        params={"Data": panel.source, "ε": f"{eps:g}", "Δ": f"{sens:g}", "κ": f"{kappa}",
                "Month": str(panel.months[t]), "Draws": f"{reps}", "Seed": f"{seed}"})
    verdict_box(view.verdicts, container=verdict_slot)
    if frames:
        st.subheader(f"Errors at ε = {eps:g}, {md_escape(panel.months[t])}")
        results_table(loss, hide_index=True)
        fig = figs.make_relerr_figure(res)
        alt = (f"Scatter of each county's relative error against its population at ε = {eps:g}, one colour per "
               "method, log scales.")
        figures.append((alt, fig))
        show_figure(fig, key="pp_fig_relerr", filename="ppd_relative_error.html", alt=alt,
                    caption=f"Each dot is a county in one of {reps} draws (seed {seed}). Small counties get large "
                            "relative errors. Exact matches (zero error, including counties published exactly) "
                            "are drawn at the floor 0.00001.")
        download_csv(jobs.export_frame(res), filename="ppd_release.csv", key="pp_dl_release")
        series = {}
        if "pp" in active:
            series["pp"] = _series(panel_key, panel, "pp", {**cfg, "alpha": float("nan")})
        if wem_ready:
            for m in wem:
                series[m] = _series(panel_key, panel, m, {**cfg, "alpha": cfg["alpha"] if m == "wem_prior"
                                                          else float("nan")})
        fig = figs.make_series_figure(panel.months[1:], panel.cases[0, 1:], series, county=panel.counties[0])
        alt = (f"Line chart of the smallest county's monthly cases ({md_escape(panel.counties[0])}): the true "
               "counts and each method's released counts.")
        figures.append((alt, fig))
        show_figure(fig, key="pp_fig_series", filename="ppd_smallest_county.html", alt=alt,
                    caption=f"First draw of each method, seed {seed}. WEM series appear after Run.")
    cf = _contraction(panel_key, panel, float(sens), int(seed))
    pick = [panel.counties[0], panel.counties[-1]]
    fig = figs.make_contraction_figure(cf, pick)
    alt = ("Bars of how often post-processing pushes the smallest and the largest county onto a boundary (zero "
           "cases, zero deaths, deaths equal to cases) at each ε.")
    figures.append((alt, fig))
    show_figure(fig, key="pp_fig_contraction", filename="ppd_contraction.html", alt=alt,
                caption=f"PP only, paper's public set (state total, cases ≥ deaths ≥ 0), all months ≥ 1 × 20 draws, "
                        f"seed {seed}. Noise pushes small counties onto the boundary: zero cases, zero deaths, or "
                        "deaths equal to cases.")
    download_csv(cf, filename="ppd_contraction.csv", key="pp_dl_contraction")

    # ------------------------------------------------------------ sweeps (i), (v)
    if done.get("eps") == run_key + (tuple(active),):
        sweep = pd.concat([_unit_frame(panel_key, panel, u, cfg)
                           for u in jobs.units_epsilon_sweep(active, t=t, alpha=alpha, reps=reps)], ignore_index=True)
        show_figure(figs.make_loss_vs_epsilon_figure(sweep), key="pp_fig_eps", filename="ppd_loss_vs_epsilon.html",
                    alt="Total error over all counties against ε, one line per method, dots for single draws.",
                    caption=f"Total ℓ₂ loss over all counties at {md_escape(panel.months[t])}; dots are draws "
                            f"(seed {seed}).")
        download_csv(jobs.export_frame(sweep), filename="ppd_epsilon_sweep.csv", key="pp_dl_eps")
    if done.get("alpha") == run_key and prior_on:
        sweep = pd.concat([_unit_frame(panel_key, panel, u, cfg)
                           for u in jobs.units_alpha_sweep(t=t, epsilon=eps, reps=reps)], ignore_index=True)
        show_figure(figs.make_alpha_sweep_figure(sweep), key="pp_fig_alpha", filename="ppd_alpha_sweep.html",
                    alt="Total error of WEM-prior against the prior strength α, with the two prior-free WEMs as "
                        "dashed reference lines.",
                    caption="A prior that is too weak adds little; one that is too strong drags the release "
                            "towards last month (the U-shape of L499).")
        download_csv(jobs.export_frame(sweep), filename="ppd_alpha_sweep.csv", key="pp_dl_alpha")

    _alg1_section(int(seed))
    download_json(params, filename="ppd_parameters.json", key="pp_dl_json")
    # "Copy as code" for exactly what this view computed: the methods whose losses are shown, the guarantee rows.
    upload = None if panel.synthetic else getattr(st.session_state.get("pp_upload"), "name", None)
    script = SC.partial_release_script(
        t=int(t), month=str(panel.months[t]), epsilon=float(eps), sensitivity=float(sens), kappa=float(kappa),
        alpha=float(alpha), reps=int(reps), sweeps=int(sweeps), seed=int(seed), public=cfg["public"],
        pp_sensitivity=pp_sens, methods=[] if loss is None else list(pd.unique(res["method"])),
        guarantee_methods=[m for m in release.METHODS if m in active],
        csv_path=None if panel.synthetic else Path(upload or "your_county_data.csv").name)
    take_away(
        view, key="pp_art", page="stratified_synthesis_viewer",
        title="Stratified synthesis viewer: partially private release", figures=figures, script=script,
        sources=["Seeman, Slavković & Reimherr, A Formal Privacy Framework for Partially Private Data (2022), "
                 "seed 001_cddb039cfb564267.txt, §5 (L432–518), Cor. 1, Thm. 1.",
                 "Errata applied: E1 κ = 2 by default (Thm. 1 proof drops the normaliser); E3 standard "
                 "Dirichlet-multinomial; E8–E9 stage 2 and notation as in the spec.",
                 "Spec: shared/specs/partially_private.md."])
    # the PP release performed with OpenDP's noise where the county file lives (issue 24 item 3)
    where_the_data_lives(sopendp.partial_release_script(
        data=Path(upload or "your_county_data.csv").name, month=str(panel.months[t]), epsilon=float(eps),
        pp_sensitivity=float(pp_sens if pp_sens is not None else sens), exact_share=float(cfg["public"][4])),
        key="pp", filename="ppd_opendp.py")
