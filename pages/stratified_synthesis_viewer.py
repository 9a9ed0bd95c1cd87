"""Stratified synthesis viewer: one DP release per group (full ε each) against one global release.

Thin page: widgets → cached engine calls (``dpdash.stratify``, ``dpdash.synth``) → figures
(``dpdash.stratify_figures``). Source: seed 004_c5ca305e20a1adba.txt (Rosenblatt, Stoyanovich & Musco,
arXiv 2312.11712); spec shared/specs/stratified_synthesis_viewer.md. The "Partially private release" mode is
rendered by ``ui.views.partially_private``.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from dpdash import accounting
from dpdash import stratify as S
from dpdash import stratify_figures as F
from dpdash import stratify_synth_sweep as SW
from dpdash import script_stratified as SC
from dpdash import stratify_verdicts as V
from dpdash import stratify_views as SV
from dpdash import synth as Y
from dpdash.data import (DATASETS, MISSING_LEVEL, DataValidationError, discrete_table_from_csv, drop_missing, load_adult,
                         load_adult_numeric)
from ui import active_dataset, cluster, load_active_dataset, page_end, page_setup
from ui import dossier
from ui.charts import show_figure
from ui.common import CORES, methodology
from ui.tabs import lazy_tabs
from ui.exports import csv_bytes, download_csv, download_json
from ui.links import accept_plain_number
from ui.show import verdict_box
from ui.text import md_escape
from ui.upload import csv_uploader
from ui.widgets import choice, log_slider, seed_input

page_setup("Stratified synthesis viewer", icon=":material/stacked_bar_chart:")

PAPER = "Rosenblatt, Stoyanovich & Musco (2023), seed 004"
MODE_OPTIONS = {"mean": "Mean estimation", "synthetic": "Synthetic data", "partial": "Partially private release"}
SOURCE_OPTIONS = {"mixture": "Mixture", "acs": "ACS preset", "categorical": "Categorical", "adult": "Adult",
                  "shared": "Shared dataset", "upload": "Upload"}
#: Sources that are a table the user picks columns of.
TABLE_SOURCES = ("Shared dataset", "Upload")
SOURCE_HELP = ("Mixture: simulated Gaussian groups with Dirichlet(α) sizes. ACS preset: the paper's Table 3 group "
               "sizes (values simulated). Categorical: a simulated categorical table. Adult: the UCI Adult census "
               "extract (real data), groups sex × race. Shared dataset: the dataset picked in the sidebar for every page "
               "(e.g. the ACS 2012 sample). Upload: your own CSV.")
EPS_MIN, EPS_MAX = 0.01, 10.0
ALPHA_GRID = (0.05, 0.1, 0.13, 0.2, 0.3, 0.5, 0.7, 1.0, 2.0, 3.0, 5.0, 10.0)
N_GRID = (500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 200_000)


def _thousands(v: int) -> str:
    return f"{v:,}"


SYNTH_OPTIONS = {"independent": "Independent", "full_histogram": "Full histogram", "mwem": "MWEM",
                 "mst": "MST (Run)", "aim": "AIM (Run)"}
UPLOAD_MAX_BYTES = 10_000_000
METHODS_TEXT = {"naive": "Naive", "stratified": "Stratified", "split": "Split budget", "coinpress": "Coinpress",
                "strat_coinpress": "StratCoinpress"}

PUBLIC_SIZES = ("**Assumption:** the number of records n and every group's size are public (as in the paper, "
                "which takes group sizes from census tables). Only the values inside the groups are protected.")
CROSSOVER_CAPTION = ("Each group's estimate uses the full ε; groups smaller than their crossover size are better "
                     "served by the pooled estimate.")
SMALL_ALPHA = "Small α ⇒ one or two dominant groups; α = 1 spreads sizes uniformly; large α ⇒ near-equal groups."
ALPHA_NOTE = ("The paper reports α ≈ 0.13 from an unspecified Monte Carlo fit; the maximum-likelihood value for "
              "these proportions is shown.")
COINPRESS_LABEL = "ρ-zCDP, not pure ε-DP"
ADULT_ATTRIBUTION = ("UCI Adult: Becker, B. & Kohavi, R. (1996), *Adult*, UCI Machine Learning Repository, "
                     "doi:10.24432/C5XW20, licensed CC BY 4.0.")


def fmt(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    v = float(v)
    if math.isnan(v):
        return "—"
    if not math.isfinite(v):
        return "∞" if v > 0 else "−∞"
    return f"{v:.4g}"


def num_label(v) -> str:
    return f"{v:g}"


def show(fig, *, key: str, filename: str, alt: str, caption: str | None = None, table=None) -> None:
    """Chart (with ``alt`` text for screen readers) + plain-language reading + exports (``ui.charts.show_figure``:
    HTML, PNG, SVG, built only on click) + the chart's table as CSV. ``table`` is a frame or a function returning
    one; a function runs only when the CSV is downloaded.
    """
    show_figure(fig, key=key, filename=filename, caption=caption, alt=alt)
    if callable(table):
        st.download_button("Download table (CSV)", data=lambda: csv_bytes(table()), file_name=f"{filename}.csv",
                           mime="text/csv", key=f"{key}_csv", on_click="ignore")
    elif table is not None:
        download_csv(table, filename=f"{filename}.csv", key=f"{key}_csv")


REPO_ROOT = str(Path(__file__).resolve().parents[1])
SOURCES_TEXT = ["Rosenblatt, Stoyanovich & Musco, A Simple and Practical Method for Reducing the Disparate Impact "
                "of Differential Privacy (arXiv 2312.11712), seed 004_c5ca305e20a1adba.txt: Eq. 2–4, Prop. 8–9, "
                "Thm. 10, Def. 11, Def. 13.",
                "Errata applied: E1 symmetric clipping [−C, C]; E2 log(m/γ); E6 recombined noise keeps 1/n; "
                "E7 parity error is a sum with ω = 1/k; E11 α̂ computed, not the paper's 0.13.",
                "Spec: shared/specs/stratified_synthesis_viewer.md."]


def _artefacts(*, question: str, params: dict, headlines: list[tuple[str, str, str]], verdicts: list[str],
               figures: list, key: str, epsilon: float | None = None, delta: float | None = None,
               seed: int | None = None, script: str | None = None, sources: list[str] | None = None) -> None:
    """The view's report, settings and "Copy as code" (``ui.dossier.artefacts``)."""
    dossier.artefacts(dossier.PageSummary(
        page="stratified_synthesis_viewer", title="Stratified synthesis viewer", question=question,
        params=params, headlines=[dossier.Headline(*h) for h in headlines], verdicts=list(verdicts),
        figures=list(figures), sources=sources or SOURCES_TEXT, epsilon=epsilon, delta=delta, seed=seed,
        script=script), key=key)


# ----------------------------------------------------------------------------------------------------------
# Cached engine calls (the engine never imports streamlit)
# ----------------------------------------------------------------------------------------------------------

@st.cache_data(max_entries=4, show_spinner=False)
def c_adult():
    return load_adult()


@st.cache_data(max_entries=2, show_spinner=False)
def c_adult_numeric() -> pd.DataFrame:
    return load_adult_numeric()


@st.cache_data(max_entries=32, show_spinner=False)
def c_mixture_sizes(k: int, alpha: float, n: int, seed: int) -> np.ndarray:
    return S.proportions_to_sizes(S.draw_group_proportions(k, alpha, rng=np.random.default_rng([seed, 0])), n)


@st.cache_data(max_entries=8, show_spinner=False)
def c_categorical(n: int, k: int, alpha: float, seed: int):
    return Y.make_categorical_population(n, k, alpha, rng=np.random.default_rng([seed, 2]))


@st.cache_data(max_entries=32, show_spinner=False)
def c_mean_experiment(sizes: tuple, mu: tuple, sigma: tuple, epsilons: tuple, R: float, gamma: float, reps: int,
                      seed: int, estimator: str, min_frac: float, small: str, weights_mode: str, holdout: float,
                      eps_w: float | None, mode: str) -> pd.DataFrame:
    methods = ("naive", "stratified") if estimator == "coinpress" else ("naive", "stratified", "split")
    return S.run_mean_experiment(sizes=np.array(sizes), mu=np.array(mu), sigma=np.array(sigma), epsilons=epsilons,
                                 R=R, gamma=gamma, reps=reps, rng=np.random.default_rng([seed, 3]),
                                 estimator=estimator, methods=methods, min_frac=min_frac, small_strata=small,
                                 weights_mode=weights_mode, holdout_frac=holdout, epsilon_weights=eps_w, mode=mode)


@st.cache_data(max_entries=32, show_spinner=False)
def c_mean_on_data(data_key: str, _x: np.ndarray, _g: np.ndarray, k: int, epsilons: tuple, R: float, gamma: float,
                   reps: int, seed: int, estimator: str, min_frac: float, small: str, mode: str) -> pd.DataFrame:
    methods = ("naive", "stratified") if estimator == "coinpress" else ("naive", "stratified", "split")
    return S.run_mean_experiment_on_data(_x, _g, epsilons=epsilons, R=R, gamma=gamma, reps=reps,
                                         rng=np.random.default_rng([seed, 3]), estimator=estimator, methods=methods,
                                         min_frac=min_frac, small_strata=small, mode=mode, k=k)


@st.cache_data(max_entries=16, show_spinner=False)
def c_group_moments(data_key: str, _x: np.ndarray, _g: np.ndarray, k: int):
    return S.group_moments(_x, _g, k, var_floor=1e-6)


@st.cache_data(max_entries=64, show_spinner=False)
def c_analytic(sizes: tuple, R: float, gamma: float, eps: float, mu: tuple, sigma: tuple, mode: str,
               min_frac: float, small: str):
    return S.analytic_mean_errors(np.array(sizes), R=R, gamma=gamma, epsilon=eps, mu=np.array(mu),
                                  sigma=np.array(sigma), mode=mode, min_frac=min_frac, small_strata=small)


@st.cache_data(max_entries=32, show_spinner=False)
def c_theorem10_mc(k: int, n: int, seed: int) -> pd.DataFrame:
    alphas = [0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 5.0, 10.0]
    vals = [S.integer_logsum_mc(k, a, n, draws=500, rng=np.random.default_rng([seed, 4, i]))
            for i, a in enumerate(alphas)]
    return pd.DataFrame({"alpha": alphas, "mean": vals})


# Figures that do not depend on ε are built once per input and shared read-only (st.plotly_chart and the HTML
# export only read them): an ε move then re-sends them without rebuilding.
@st.cache_resource(max_entries=32, show_spinner=False)
def c_sizes_fig(sizes: tuple, labels: tuple, status: tuple):
    return F.make_group_sizes_figure(np.array(sizes), list(labels), list(status))


@st.cache_resource(max_entries=32, show_spinner=False)
def c_theorem10_fig(k: int, n: int, alpha: float, alpha_hat: float, seed: int, realized: float):
    return F.make_theorem10_figure(k, n, alpha, alpha_hat, mc=c_theorem10_mc(k, n, seed), realized=realized)


@st.cache_resource(max_entries=8, show_spinner=False)
def c_ternary_fig(seed: int):
    return F.make_dirichlet_ternary_figure(c_ternary(seed))


def _summary_table(df: pd.DataFrame, labels) -> pd.DataFrame:
    summ = S.summarize_mean_experiment(df)
    summ["group_label"] = [("population" if gi < 0 else labels[gi]) for gi in summ["group"]]
    return summ


@st.cache_data(max_entries=8, show_spinner=False)
def c_ternary(seed: int) -> dict:
    r = np.random.default_rng([seed, 5])
    return {a: r.dirichlet(np.full(3, a), size=20) for a in (0.1, 1.0, 10.0)}


@st.cache_data(max_entries=32, show_spinner=False)
def c_synth_run(table_key: str, _table, synth: str, eps: float, variant: str, seed: int, min_frac: float,
                small: str, classifier: str) -> Y.SynthRun:
    train, test = Y.train_test_split_table(_table, rng=seed)
    return Y.fit_and_evaluate(train, test, domain=_table.domain, synthesizer=synth, epsilon=eps, variant=variant,
                              group_cols=list(_table.group_cols), label_col=_table.label_col, rng=seed,
                              min_frac=min_frac, small_strata=small, classifier=classifier,
                              real_baseline=c_real_baseline(table_key, _table, seed, classifier))


@st.cache_data(max_entries=16, show_spinner=False)
def c_real_baseline(table_key: str, _table, seed: int, classifier: str = "logreg") -> float | None:
    if _table.label_col is None:
        return None
    train, test = Y.train_test_split_table(_table, rng=seed)
    feats = [c for c in _table.domain if c != _table.label_col]
    return Y.downstream_accuracy(train, test, feature_cols=feats, label_col=_table.label_col, domain=_table.domain,
                                 rng=seed, classifier=classifier)


@st.cache_data(max_entries=8, show_spinner=False, scope="session")
def c_upload_table(digest: str, _frame: pd.DataFrame, groups: tuple, label: str | None):
    try:
        t = discrete_table_from_csv(_frame, group_cols=groups, label_col=label)
    except (DataValidationError, ValueError) as exc:
        return None, str(exc)
    n_strata = t.df.groupby(list(groups)).ngroups
    if n_strata > 100:
        return None, f"the group columns define {n_strata} strata; at most 100 are allowed. Pick coarser groups."
    return t, None


# ----------------------------------------------------------------------------------------------------------
# Header and controls
# ----------------------------------------------------------------------------------------------------------

st.title("Stratified synthesis viewer")
st.markdown(
    "A differentially private (DP) statistic can be released once for everybody, or **once per group** and then "
    "combined. Because the groups do not overlap, each group can use the **full** privacy budget ε and the whole "
    "release still costs only ε (parallel composition). This page shows when that helps: group errors drop a lot, "
    "the population estimate pays a little, and very small groups can lose. Source: "
    f"{PAPER}, *Stratified Private Mean Estimation* and *Stratified Data Synthesis*."
)
st.info(PUBLIC_SIZES)

mode = MODE_OPTIONS[choice("View", MODE_OPTIONS, key="sv_mode", widget="radio", horizontal=True)]
PP_VIEW = mode == "Partially private release"

with st.sidebar:
    st.header("Stratification")
    # The partially private view has its own data, ε and seed: the settings of the other two views stay drawn
    # (so their values and link survive a visit) but greyed out in a closed box, since none of them applies.
    side = st.expander("Settings of the other two views (not used here)") if PP_VIEW else st.container()
    with side:
        source = SOURCE_OPTIONS[choice("Data source", SOURCE_OPTIONS, key="sv_source", help=SOURCE_HELP,
                                       disabled=PP_VIEW)]
        acs_level = "sex_race"
        if source == "ACS preset":
            acs_level = choice("ACS groups", {"sex_race": "Sex × race", "race": "Race"}, key="sv_acs_level",
                               widget="radio", horizontal=True, disabled=PP_VIEW)
        seed = seed_input(key="sv_seed", disabled=PP_VIEW)
        synth = choice("Synthesizer", SYNTH_OPTIONS, key="sv_synth", disabled=mode != "Synthetic data",
                       help="Synthetic-data view only. Independent, Full histogram and MWEM redraw live; MST and "
                       "AIM (the paper's synthesizers) run on a button.")
synth_label = SYNTH_OPTIONS[synth]


SIM_SOURCES = ("Mixture", "ACS preset")
MEAN_KEYS = ("sv_eps", "sv_alpha", "sv_k", "sv_n", "sv_reps", "sv_min_frac", "sv_small", "sv_paper_grid",
             "sv_estimator", "sv_R", "sv_gamma", "sv_clip", "sv_tau", "sv_sigma_mode", "sv_weights", "sv_holdout",
             "sv_eps_w", "sv_parity_norm")


def unused(key: str, *, estimator: str = "laplace", weights: str = "exact") -> bool:
    """True when control ``key`` has no effect in the current view and data source (it is then disabled).

    Mean view: k and α shape only the simulated Dirichlet sizes (Mixture, Categorical), n only the simulated
    sources; τ, σ_i and the weights only simulated mixtures; γ and the clipping width only the Laplace
    estimator. Synthetic view: ε, the minimum stratum fraction and the paper grid; k, α, n for the simulated
    categorical table. Partially private view: none (it has its own controls).
    """
    if PP_VIEW:
        return True
    if mode == "Synthetic data":
        if key in ("sv_eps", "sv_min_frac", "sv_paper_grid"):
            return False
        return not (key in ("sv_alpha", "sv_k", "sv_n") and source == "Categorical")
    if key in ("sv_alpha", "sv_k"):
        return source not in ("Mixture", "Categorical")
    if key == "sv_n":
        return source not in ("Mixture", "ACS preset", "Categorical")
    if key in ("sv_tau", "sv_sigma_mode", "sv_weights"):
        return source not in SIM_SOURCES
    if key == "sv_holdout":
        return source not in SIM_SOURCES or weights != "holdout"
    if key == "sv_eps_w":
        return source not in SIM_SOURCES or weights != "noisy"
    if key in ("sv_gamma", "sv_clip"):
        return estimator != "laplace"
    return False


def draw_controls(*, main: bool) -> None:
    """The stratification and mean-estimation controls, as module globals (keys ``sv_*``, bound to the URL).

    Drawn in the main area inside the mean-mode fragment (so moving one reruns only that view) and in the
    sidebar in the other views. A keyed widget's identity ignores its container, so the value and the link
    survive a change of view; every control is drawn in every view, or Streamlit would drop its state and its
    query parameter. A control that the current view and data source do not use is drawn disabled
    (:func:`unused`), so it cannot suggest an effect it does not have.
    """
    global eps, paper_grid, alpha, k, n, reps, min_frac, small, estimator, R, gamma, clip_mode, tau, sigma_mode
    global weights_mode, holdout, eps_w, parity_norm
    cols = st.columns(4) if main else [st.container()] * 4
    eps = log_slider("Privacy budget ε", key="sv_eps", min_value=EPS_MIN, max_value=EPS_MAX, value=1.0,
                     steps_per_decade=10, container=cols[0], disabled=unused("sv_eps"),
                     help="Smaller ε = stronger privacy = more noise.")
    alpha = float(cols[1].select_slider("Dirichlet α (group-size imbalance)", options=ALPHA_GRID, value=0.3,
                                        key="sv_alpha", format_func=num_label, bind="query-params", help=SMALL_ALPHA,
                                        disabled=unused("sv_alpha")))
    k = int(cols[2].slider("Number of groups k", 2, 50, 9, key="sv_k", bind="query-params",
                           disabled=unused("sv_k")))
    accept_plain_number("sv_n", N_GRID, _thousands)
    n = int(cols[3].select_slider("Records n", options=N_GRID, value=10_000, key="sv_n",
                                  format_func=_thousands, bind="query-params", disabled=unused("sv_n")))
    cols = st.columns(4) if main else cols
    reps = int(cols[0].slider("Repetitions", 1, 200, 30, key="sv_reps", bind="query-params",
                              disabled=unused("sv_reps"),
                              help="How many times the noise (and the simulated data) are redrawn."))
    min_frac = float(cols[1].slider("Minimum stratum fraction", 0.0, 0.05, 0.001, step=0.0005, format="%.4f",
                                    key="sv_min_frac", bind="query-params", disabled=unused("sv_min_frac"),
                                    help="Groups with at most this share of the records are pooled or dropped."))
    small = choice("Groups below the threshold", {"pool": "Pool", "drop": "Drop"}, key="sv_small", widget="radio",
                   horizontal=True, container=cols[2], disabled=unused("sv_small"),
                   help="Pool: estimate them together once (mean estimation default). "
                   "Drop: release nothing for them (the paper's synthesis code).")
    paper_grid = cols[3].toggle("Paper's ε grid", key="sv_paper_grid", bind="query-params",
                                help="Also run the paper's ε values (0.01 … 5) for the “Error against ε” tab and "
                                "the synthetic-data sweep.",
                                disabled=unused("sv_paper_grid"))
    if reps > 50 and not unused("sv_reps"):
        st.warning("More than 50 repetitions can make the page slow to redraw.")
    with st.expander("Mean estimation options"):
        cols = st.columns(3) if main else [st.container()] * 3
        estimator = choice("Estimator", {"laplace": "Laplace", "coinpress": "Coinpress"}, key="sv_estimator",
                           widget="radio", horizontal=True, container=cols[0], disabled=unused("sv_estimator"))
        R = float(cols[0].number_input("Public bound R on |group means|", 0.1, 100.0, 3.0, step=0.5, key="sv_R",
                                       bind="query-params", disabled=unused("sv_R")))
        gamma = float(cols[0].select_slider("Failure probability γ", options=(0.001, 0.01, 0.05, 0.1, 0.2),
                                            value=0.05, key="sv_gamma", format_func=num_label, bind="query-params",
                                            disabled=unused("sv_gamma", estimator=estimator),
                                            help="Laplace estimator only (Coinpress uses β = 0.01)."))
        clip_mode = choice("Clipping width", {"paper": "As in the paper", "rigorous": "Rigorous"}, key="sv_clip",
                           widget="radio", horizontal=True, container=cols[1],
                           disabled=unused("sv_clip", estimator=estimator),
                           help="Laplace estimator only. As in the paper: R + √log(m/γ); rigorous: "
                           "R + √(2 log(2m/γ)).")
        tau = float(cols[1].select_slider("Spread of group means τ", options=(0.0, 0.25, 0.5, 1.0, 2.0), value=1.0,
                                          key="sv_tau", format_func=num_label, bind="query-params",
                                          disabled=unused("sv_tau"), help="Simulated sources only."))
        sigma_mode = choice("Spread within each group", {"equal": "Equal", "uniform": "Random"},
                            key="sv_sigma_mode", widget="radio", horizontal=True, container=cols[1],
                            disabled=unused("sv_sigma_mode"),
                            help="Simulated sources only. Equal: σ_i = 1; random: σ_i ~ U(0.1, 2) (paper App. B).")
        weights_mode = choice("Group weights", {"exact": "Exact", "holdout": "From a public share",
                                                "noisy": "Noisy"}, key="sv_weights", widget="radio",
                              horizontal=True, container=cols[2], disabled=unused("sv_weights"),
                              help="Simulated sources only. Exact: public sizes; from a public share: from a "
                              "public share of rows (removed from the private data); noisy: counts + Laplace "
                              "noise at an extra ε.")
        weights_label = weights_mode
        holdout = float(cols[2].slider("Holdout share", 0.1, 0.9, 0.5, step=0.1, key="sv_holdout",
                                       bind="query-params", disabled=unused("sv_holdout", weights=weights_label)))
        eps_w = log_slider("Extra ε for the noisy group sizes", key="sv_eps_w", min_value=0.01, max_value=5.0,
                           value=0.1, steps_per_decade=10, container=cols[2],
                           disabled=unused("sv_eps_w", weights=weights_label))
        parity_norm = cols[0].toggle("Normalised parity error (divide by true means)", key="sv_parity_norm",
                                     bind="query-params", disabled=unused("sv_parity_norm"))
    if any(unused(key, estimator=estimator, weights=weights_label) for key in MEAN_KEYS):
        st.caption("Greyed-out controls do not apply to this view or data source.")


if mode != "Mean estimation":
    with side:
        draw_controls(main=False)

# ----------------------------------------------------------------------------------------------------------
# Upload (validated in memory, never written to disk)
# ----------------------------------------------------------------------------------------------------------

upload_table = None
upload_frame = None
upload_digest = ""
upload_schema_groups: tuple = ()
if source == "Shared dataset" and active_dataset() == "adult":
    source = "Adult"  # the shared picker's Adult is the curated Adult extract of this page (spec §6 item 4)


def _column_choices(frame: pd.DataFrame, digest: str, preferred: tuple) -> None:
    """Group columns and label for a table (an upload or a shared dataset): defaults from its columns."""
    global upload_table
    cols = list(frame.columns)
    if st.session_state.get("_sv_up_digest") not in (None, digest):
        # A different table: the column choices made for the previous one are re-derived from this one's
        # columns (categorical group columns, defaults for value, label, centre and scale).
        for key in ("sv_up_groups", "sv_up_value", "sv_up_label", "sv_up_center", "sv_up_scale"):
            st.session_state.pop(key, None)
    st.session_state["_sv_up_digest"] = digest
    groups = st.multiselect("Group columns (1–2)", cols, default=SV.suggest_group_columns(frame, preferred=preferred),
                            max_selections=2, key="sv_up_groups", bind="query-params",
                            help="Categorical columns make good groups. A numeric column with more than 50 values "
                                 "is cut into 5 equal-width bins in every view.")
    binary = [c for c in cols if frame[c].dropna().nunique() == 2]
    label = st.selectbox("Binary label (optional)", ["(none)"] + binary, key="sv_up_label", bind="query-params")
    if not groups:
        st.warning("Pick at least one group column: the strata are the combinations of its values.")
        return
    upload_table, err = c_upload_table(digest, frame, tuple(groups), None if label == "(none)" else label)
    if err:
        st.error(f"This file cannot be used: {md_escape(err, max_len=400)}")
    else:
        st.caption(md_escape(upload_table.source, max_len=400))


if source in TABLE_SOURCES:
    with st.container(border=True):
        if source == "Shared dataset":
            ds = load_active_dataset()
            st.markdown(f"**Shared dataset: {md_escape(ds.title)}** ({len(ds.frame):,} rows; chosen in the sidebar "
                        f"for every page). {md_escape(ds.source)}")
            upload_frame, upload_digest = ds.frame, f"shared-{ds.name}"
            upload_schema_groups = tuple(ds.schema.suggested_groups or ())
        else:
            st.markdown("**Your CSV** (≤ 10 MB, ≤ 200,000 rows, ≤ 30 columns).")
            # The product's one bounded reader (dpdash.data.read_uploaded_csv) through its widget, which shows
            # what is wrong with a bad file (escaped) and any reading notes.
            dataset = csv_uploader("Upload a CSV", key="sv_upload", max_bytes=UPLOAD_MAX_BYTES, max_rows=200_000,
                                   max_cols=30)
            if dataset is not None:
                upload_digest = hashlib.sha256(st.session_state["sv_upload"].getvalue()).hexdigest()
                upload_frame = dataset.frame
            elif st.session_state.get("sv_upload") is None:
                st.info("Upload a CSV to use your own data; until then the other views show the default data.")
        st.caption("Columns with ≤ 50 distinct values are categories; other numeric columns are cut into 5 "
                   "equal-width bins, in every view — bin edges computed from the data are not protected. A row is "
                   "left out only when it misses a value the view needs (the averaged column or a group column; in "
                   "synthetic data a group or the label), and the page says how many.")
        if upload_frame is not None:
            _column_choices(upload_frame, upload_digest, upload_schema_groups)


# ----------------------------------------------------------------------------------------------------------
# Mean estimation
# ----------------------------------------------------------------------------------------------------------

def mean_inputs():
    """Sizes, labels and either simulation parameters (μ, σ) or fixed data (x, groups) for the chosen source."""
    rng = np.random.default_rng([seed, 1])
    if source in ("Mixture", "ACS preset"):
        if source == "Mixture":
            sizes = c_mixture_sizes(k, alpha, n, seed)
            labels = [f"G{i + 1}" for i in range(k)]
            note = f"Simulated: k = {k} groups, sizes from Dirichlet(α = {alpha:g}), n = {n:,}, seed {seed}."
        else:
            pre = S.preset_sizes(acs_level)
            sizes = S.proportions_to_sizes(pre.to_numpy(float), n)
            labels = list(pre.index)
            note = (f"Group sizes from the paper's Table 3 ({len(labels)} groups), scaled to n = {n:,}; values "
                    f"simulated (seed {seed}). The k and α sliders do not apply.")
        kk = len(sizes)
        mu = rng.normal(0.0, tau, kk) if tau > 0 else np.zeros(kk)
        sigma = np.ones(kk) if sigma_mode == "equal" else rng.uniform(0.1, 2.0, kk)
        return dict(kind="sim", sizes=np.asarray(sizes), labels=labels, mu=mu, sigma=sigma, note=note)
    if source == "Adult" or (source in TABLE_SOURCES and upload_table is None) or source == "Categorical":
        if source == "Categorical":
            t = c_categorical(n, k, alpha, seed)
            x = t.df["y"].to_numpy(float)
            g = t.df["group"].to_numpy()
            labels = [f"G{i + 1}" for i in range(k)]
            note = (f"Simulated categorical table (n = {n:,}, k = {k}, α = {alpha:g}, seed {seed}): the estimated "
                    "mean is the share of y = 1 in each group.")
            key = f"cat-{n}-{k}-{alpha}-{seed}"
        else:
            a = c_adult_numeric()
            col = choice("Adult column", {"age": "Age", "hours_per_week": "Hours worked per week",
                                          "education_num": "Years of education"}, key="sv_adult_col")
            x = a[f"{col}_std"].to_numpy(float)
            sex = pd.Categorical(a["sex"])
            race = pd.Categorical(a["race"])
            g = sex.codes.astype(int) * len(race.categories) + race.codes.astype(int)
            labels = [f"{s} × {r}" for s in sex.categories for r in race.categories]
            note = (f"UCI Adult, {len(x):,} people, groups sex × race; {col} standardised with public design "
                    "constants (not learned from the data). The data are the population: repetitions redraw only "
                    "the noise. " + ADULT_ATTRIBUTION)
            key = f"adult-{col}"
            if source in TABLE_SOURCES:
                note = "No usable table yet, so Adult is shown. " + note
        return dict(kind="data", x=x, g=g, labels=labels, note=note, key=key, k=len(labels))
    # Upload with a table: a numeric column plus a public centre and scale. Only rows that miss the averaged
    # column or a group column are left out (issue 26 item 4), and the note says how many.
    groups = list(upload_table.group_cols)
    num_cols = SV.numeric_columns(upload_frame)
    if not num_cols:
        st.warning("Mean estimation needs a numeric column; this file has none. Upload a file with one, or use "
                   "the Synthetic data view.")
        st.stop()
    default = SV.suggest_value_column(upload_frame, exclude=groups) or num_cols[0]
    col = st.selectbox("Numeric column", num_cols, index=num_cols.index(default), key="sv_up_value",
                       bind="query-params")
    c1, c2 = st.columns(2)
    center = c1.number_input("Public centre (not computed from the data)", value=0.0, key="sv_up_center", bind="query-params")
    scale = c2.number_input("Public scale", value=1.0, min_value=1e-9, key="sv_up_scale", bind="query-params")
    frame, kept_note = drop_missing(upload_frame, [col] + groups)
    # The strata by the uploads' one rule (a numeric column with more than 50 values is cut into 5 bins), as in
    # the synthetic-data view (issue 25).
    g_codes, g_labels = SV.group_codes(frame, groups)
    with np.errstate(over="ignore", invalid="ignore"):
        x = (frame[col].to_numpy(float) - center) / scale
    if not np.all(np.isfinite(x)):
        st.warning("With this public centre and scale the standardised values leave the range of floating-point "
                   "numbers. Choose a centre near the column's typical values and a scale near its spread.")
        st.stop()
    what = "Your upload" if source == "Upload" else f"Shared dataset {upload_digest.removeprefix('shared-')}"
    return dict(kind="data", x=x, g=g_codes, labels=g_labels, raw=frame[col].to_numpy(float),
                note=f"{what}: {len(x):,} rows, {len(g_labels)} groups. {kept_note}",
                key=f"up-{upload_digest}-{col}-{center}-{scale}-{groups}", k=len(g_labels))


def weights_label_text() -> str:
    return {"holdout": "holdout-share", "noisy": "noisy"}.get(weights_mode, "exact")


def _pop_errors(df: pd.DataFrame, epsilon: float) -> dict[str, float]:
    """Mean |error| of the population estimate per method at ``epsilon`` (the numbers of the population box)."""
    d = df[(df["level"] == "population") & np.isclose(df["epsilon"], epsilon)]
    return d.groupby("method")["abs_err"].mean().to_dict()


@dataclass(frozen=True, eq=False)
class MeanResult:
    """Everything the mean view shows at one ε, computed once per input and shared read-only (the verdict, the
    table, the chart and the downloads read the same numbers)."""

    df: pd.DataFrame
    sizes: np.ndarray
    mu: np.ndarray
    sigma: np.ndarray
    status: tuple
    comp: pd.DataFrame
    pop_global: float
    pop_stratified: float
    verdict: tuple
    analytic: object
    group_fig: object
    clipped: tuple | None


@st.cache_resource(max_entries=24, show_spinner=False)
def c_mean_result(spec: tuple, epsilon: float, _inp: dict) -> MeanResult:
    """The mean view's result for ``spec`` (every input that decides it) at ``epsilon``.

    Cached as a resource: an ε move back to a value seen before (the arrow keys go back and forth) redraws
    without recomputing the runs, the closed forms or the figure, and nothing is copied on the way out.
    """
    (_, eps_list, R_, gamma_, reps_, seed_, estimator_, min_frac_, small_, weights_, holdout_, eps_w_, clip_,
     labels) = spec
    inp = _inp
    if inp["kind"] == "sim":
        sizes, mu, sigma = inp["sizes"], inp["mu"], inp["sigma"]
        df = c_mean_experiment(tuple(int(v) for v in sizes), tuple(mu), tuple(sigma), eps_list, R_, gamma_, reps_,
                               seed_, estimator_, min_frac_, small_, weights_, holdout_, eps_w_, clip_)
    else:
        df = c_mean_on_data(inp["key"], inp["x"], inp["g"], inp["k"], eps_list, R_, gamma_, reps_, seed_,
                            estimator_, min_frac_, small_, clip_)
        sizes, mu, sigma = c_group_moments(inp["key"], inp["x"], inp["g"], inp["k"])
    nz = sizes > 0
    lay = S.strata_layout(sizes, min_frac=min_frac_, small_strata=small_)
    status = tuple(lay.status)
    comp = V.group_error_comparison(df, epsilon=epsilon, labels=list(labels), status=status)
    pops = _pop_errors(df, epsilon)
    glob = pops.get("naive", pops.get("coinpress", float("nan")))
    strat = pops.get("stratified", pops.get("strat_coinpress", float("nan")))
    verdict = V.mean_verdict_sentences(comp, epsilon=epsilon, pop_global=glob, pop_stratified=strat, reps=reps_)
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
    return MeanResult(df, sizes, mu, sigma, status, comp, glob, strat, tuple(verdict), analytic, fig, clipped)


def render_mean(slot) -> None:
    """The mean view below its controls; the verdict and the guidance go into ``slot`` (above the controls)."""
    inp = mean_inputs()
    eps_list = tuple(sorted(set((eps,) + (S.PAPER_EPSILONS if paper_grid else ()))))
    inp_key = (("sim", tuple(int(v) for v in inp["sizes"]), tuple(inp["mu"]), tuple(inp["sigma"]))
               if inp["kind"] == "sim" else ("data", inp["key"]))
    spec = (inp_key, eps_list, R, gamma, reps, seed, estimator, min_frac, small, weights_mode, holdout,
            eps_w if weights_mode == "noisy" else None, clip_mode, tuple(map(str, inp["labels"])))
    try:
        res = c_mean_result(spec, eps, inp)
    except ValueError as exc:
        st.warning(f"These settings leave nothing to estimate: {md_escape(exc)}. Lower the minimum stratum "
                   "fraction or choose “Pool” for groups below the threshold.")
        return
    df, sizes, mu, sigma, comp, analytic = res.df, res.sizes, res.mu, res.sigma, res.comp, res.analytic
    glob, strat, status = res.pop_global, res.pop_stratified, list(res.status)
    verdict = [v.text for v in res.verdict]
    labels = inp["labels"]
    nz = sizes > 0
    ntot = int(sizes.sum())

    # Verdict first (above the controls): from the same repetitions the charts and downloads show.
    verdict_box(res.verdict, container=slot)
    guidance = [V.many_groups_guidance(int(nz.sum()), ntot), V.pooled_guidance(labels, sizes, status)]
    if res.clipped is not None:
        raw = inp.get("raw")
        guidance.append(V.clipping_guidance(
            *res.clipped, upload=raw is not None, low=None if raw is None else float(np.min(raw)),
            high=None if raw is None else float(np.max(raw)), median=None if raw is None else float(np.median(raw))))
    for g in guidance:
        if g:
            slot.warning(md_escape(g, max_len=1000), icon=":material/lightbulb:")
    st.caption(inp["note"])

    figures: list[tuple[str, object]] = []
    tabs = lazy_tabs(["Error per group", "Population", "Group sizes", "Error against ε", "Parity"],
                     key="sv_mean_tab")

    # 1. Per-group error (the headline chart: open by default).
    with tabs[0].container:
        if tabs[0].open:
            fig = res.group_fig
            alt = (f"Log-log scatter of each group's error against its size at ε = {eps:g}, one dot per repetition: "
                   + " ".join(verdict[:1]))
            figures.append((alt, fig))
            show(fig, key="sv_fig_group_error", filename="group_error", alt=alt, table=comp,
                 caption=CROSSOVER_CAPTION + (" Dots: one repetition each; line: the expected error of a group of "
                                              "that size released on its own; dashes: the global release's bias "
                                              "for each group (it does not shrink as ε grows); crosses: crossover "
                                              "sizes." if analytic is not None else " Dots: one repetition each "
                                              "(the closed-form lines describe the Laplace estimator and are not "
                                              "drawn for Coinpress).") + f" Seed {seed}.")
            st.dataframe(comp, hide_index=True, column_config={
                c: st.column_config.NumberColumn(format="%.4g") for c in comp.columns if c.startswith("mean")})

    # 2. Population error.
    with tabs[1].container:
        if tabs[1].open:
            st.markdown(md_escape(verdict[1]))
            fig = F.make_population_error_figure(df, epsilon=eps, analytic=analytic)
            alt = (f"Box plots of the population mean's error over {reps} repetitions at ε = {eps:g}, one box per "
                   f"release: {verdict[1]}")
            figures.append((alt, fig))
            show(fig, key="sv_fig_pop", filename="population_error", alt=alt,
                 caption="Box: the error of the population estimate over repetitions. Releasing each group adds "
                         "noise from every group, so the population estimate is a little worse; with large groups "
                         f"the extra cost is small compared with the sampling error. Seed {seed}.")
            c = st.columns(4)
            if analytic is not None:
                c[0].metric("Typical noise, per group ÷ one global release",
                            fmt(analytic.pop_strat_rmse / analytic.pop_naive_rmse),
                            help="Ratio of the root-mean-square privacy noise of the population mean (closed form, "
                                 "over the strata released; a pooled stratum counts once).")
            if estimator == "coinpress":
                rho = accounting.pure_to_zcdp(eps)
                c[2].metric("Budget (each method)", f"ρ = {fmt(rho)}", help=COINPRESS_LABEL)
                c[3].metric("As (ε, δ = 10⁻⁶)-DP", fmt(accounting.zcdp_to_dp(rho, 1e-6, method="standard")))
                st.caption(f"Coinpress is {COINPRESS_LABEL}: ρ = ε²/2 = {fmt(rho)}, schedule (ρ/4, 3ρ/4), "
                           "β = 0.01. The closed-form error lines and ratio cards describe the Laplace estimator, "
                           "so they are not drawn here.")
            else:
                extra = f" + ε_w = {eps_w:g}" if weights_mode == "noisy" and inp["kind"] == "sim" else ""
                c[2].metric("Budget, per group", f"ε = {eps:g}{extra}",
                            help="Each group gets the full ε; disjoint groups compose in parallel.")
                c[3].metric("Budget, split", f"ε/2 + ε/2 = {eps:g}{extra}")
                if weights_mode != "exact" and inp["kind"] == "sim":
                    st.caption("The closed-form lines and cards assume exact public weights; the boxes use the "
                               f"{weights_label_text()} weights.")

    # 3. Group sizes and Theorem 10.
    with tabs[2].container:
        if tabs[2].open:
            _sizes_tab(inp, sizes, labels, status, nz, ntot, figures)

    # 4. ε sweep.
    with tabs[3].container:
        if tabs[3].open:
            if paper_grid:
                fig = F.make_epsilon_sweep_figure(df)
                alt = ("Two log-log panels, population error and worst group's error against ε over the paper's "
                       "grid, one line per release.")
                figures.append((alt, fig))
                show(fig, key="sv_fig_sweep", filename="epsilon_sweep", alt=alt,
                     caption="The global release's group error stays at its bias whatever ε; the per-group "
                             f"release's falls as ε grows. Seed {seed}.")
            else:
                st.info("Turn on **Paper grid** above to sweep ε over the paper's values (0.01 … 5).")

    # 5. Parity.
    with tabs[4].container:
        if tabs[4].open:
            phi = S.mean_parity_by_method(df, epsilon=eps, group_mask=nz, normalized=parity_norm)
            verdict_box([V.parity_verdict(phi, epsilon=eps, normalized=parity_norm, reps=reps)])
            cols = st.columns(len(phi))
            for c, (m, v) in zip(cols, phi.items()):
                c.metric(f"Parity error, {METHODS_TEXT.get(m, m)}", V.number(v), help=f"Full value: {v!r}")
            with methodology():
                st.markdown(f"Parity error (Definition 11) = ω·|population error| + Σ over groups of |group error| "
                            f"(ω = 1/k), {'each divided by the true mean (normalised form)' if parity_norm else 'absolute form (no division)'}"
                            f"; averaged over {reps} repetitions. The paper calls it an average but writes a sum; "
                            "the sum is used.")

    params = dict(mode="mean", source=source, epsilon=eps, epsilons=list(eps_list), alpha=alpha, k=k, n=n, reps=reps,
                  seed=seed, min_frac=min_frac, small_strata=small, estimator=estimator, R=R, gamma=gamma,
                  clip_mode=clip_mode, tau=tau, sigma_mode=sigma_mode, weights=weights_mode, holdout=holdout,
                  epsilon_weights=eps_w, parity_normalized=parity_norm, paper=PAPER)
    c1, c2 = st.columns(2)
    with c1:
        download_csv(df, filename="mean_runs.csv", key="sv_dl_runs", label="Download all repetitions (CSV)")
    with c2:
        download_json(params, filename="stratified_viewer_params.json", key="sv_dl_params_mean")
    script = None
    if estimator == "laplace" and weights_mode == "exact" and inp["kind"] == "sim":
        script = SC.mean_script(sizes=[int(v) for v in sizes], mu=[float(v) for v in mu],
                                sigma=[float(v) for v in sigma], epsilon=eps, R=R, gamma=gamma, reps=reps, seed=seed,
                                min_frac=min_frac, small_strata=small, mode=clip_mode, labels=list(map(str, labels)),
                                repo_root=REPO_ROOT, epsilons=eps_list)
    _artefacts(question="Does releasing each group's mean on its own (full ε each) make the group means more "
                        "accurate than one global release, and what does the population mean pay?",
               params={"Data": source, "ε": f"{eps:g}", "Groups": f"{int(nz.sum())}", "Records": f"{ntot:,}",
                       "Repetitions": f"{reps}", "Estimator": estimator.capitalize(), "Seed": f"{seed}"},
               headlines=[("Groups helped", f"{int((comp.iloc[:, 4] < comp.iloc[:, 3]).sum())} of "
                                            f"{int((comp.iloc[:, 3].notna() & comp.iloc[:, 4].notna()).sum())}", ""),
                          ("Population error, one global release", fmt(glob), f"mean over {reps} repetitions"),
                          ("Population error, per group", fmt(strat), f"mean over {reps} repetitions")],
               verdicts=verdict, figures=figures, epsilon=eps, seed=seed, script=script, key="sv_art_mean")


def _sizes_tab(inp, sizes, labels, status, nz, ntot, figures) -> None:
    """Group sizes, the Theorem 10 cards and figure, and the Dirichlet explainer."""
    shares = sizes[nz] / ntot
    alpha_hat = S.fit_symmetric_dirichlet_alpha(shares) if nz.sum() >= 2 else float("nan")
    kk = int(nz.sum())
    if kk >= 2 and ntot > kk:
        b = S.logsum_bounds(kk, ntot)
        a_used = alpha if inp["kind"] == "sim" and source == "Mixture" else alpha_hat
        E = S.theorem10_expectation(kk, a_used, ntot) if math.isfinite(a_used) else float("nan")
        gap = S.gap_share(kk, a_used, ntot) if math.isfinite(a_used) else float("nan")
        st.markdown(md_escape(V.sizes_verdict(k=kk, n=ntot, gap=gap, alpha_hat=alpha_hat)))
        vals = [("Fitted imbalance α̂", alpha_hat), ("Σ log(group size), these sizes", S.realized_logsum(sizes[nz])),
                ("Expected Σ log (Theorem 10)", E), ("Worst case (equal sizes)", b.worst),
                ("Best case (one big group)", b.best), ("Share of the way to the best case", gap)]
        cards = st.columns(len(vals))
        for c, (lab, v) in zip(cards, vals):
            # Equal group sizes have no finite MLE (spec §2.7: α̂ = ∞); say why instead of printing ∞.
            shown = "unbounded (equal sizes)" if lab.startswith("Fitted") and v == math.inf else fmt(v)
            c.metric(lab, shown, help=f"Full value: {v!r}")
        with methodology():
            st.markdown(ALPHA_NOTE + " The share of the way to the best case is how far the expected Σ log(group "
                        "size) sits from the equal-sizes worst case towards the one-big-group best case (0 = worst, "
                        "1 = best). " + SMALL_ALPHA)
    fig = c_sizes_fig(tuple(int(v) for v in sizes), tuple(map(str, labels)), tuple(status))
    size_table = pd.DataFrame({"group": labels, "records": sizes, "status": status})
    alt = (f"Bar chart of the {len(labels)} group sizes, largest first, on a log scale, from "
           f"{int(sizes.max()):,} down to {int(sizes[nz].min()):,} records.")
    figures.append((alt, fig))
    show(fig, key="sv_fig_sizes", filename="group_sizes", table=size_table, alt=alt,
         caption=f"Grey bars are dropped groups, orange bars are pooled together (threshold "
                 f"{min_frac:g}·n = {min_frac * ntot:,.0f} records).")
    if kk >= 2 and ntot > kk:
        mc = c_theorem10_mc(kk, ntot, seed)
        fig = c_theorem10_fig(kk, ntot, alpha, alpha_hat, seed, S.realized_logsum(sizes[nz]))
        show(fig, key="sv_fig_thm10", filename="theorem10", table=mc,
             alt=f"Line chart of the expected sum of log group sizes against the imbalance α for {kk} groups and "
                 f"{ntot:,} records, between the equal-sizes worst case and the one-big-group best case.",
             caption="Why stratifying costs little (Theorem 10): the per-group release's error grows with Σ "
                     "log(group size). Unequal groups (small α) keep this sum well below the equal-size worst case. "
                     "For very small α the formula goes negative because it allows groups smaller than one record; "
                     "the dots use whole groups of at least one record.")
    with st.expander("What does α do? Twenty random splits into 3 groups"):
        show(c_ternary_fig(seed), key="sv_fig_ternary", filename="dirichlet_draws",
             alt="Ternary scatter of twenty random splits into three groups for α = 0.1, 1 and 10: small α puts "
                 "the points near the corners.",
             caption=SMALL_ALPHA + " Points near a corner mean one group has almost everybody.")


# ----------------------------------------------------------------------------------------------------------
# Synthetic data
# ----------------------------------------------------------------------------------------------------------

def synth_table():
    if source == "Categorical":
        return f"cat-{n}-{k}-{alpha}-{seed}", c_categorical(n, k, alpha, seed), \
            f"Simulated categorical table (n = {n:,}, k = {k}, α = {alpha:g}, seed {seed}); not real people."
    if source in TABLE_SOURCES and upload_table is not None:
        return f"up-{upload_digest}-{upload_table.group_cols}-{upload_table.label_col}", upload_table, \
            f"{table_name('up-' + upload_digest)} (seeded 70/30 train/test split)."
    note = "UCI Adult, 7 columns (sex, race, age, education, marital status, hours, income); strata sex × race."
    if source in ("Mixture", "ACS preset"):
        note = "Synthetic data needs a table: the simulated mixture has none, so UCI Adult is used. " + note
    elif source in TABLE_SOURCES:
        note = "No usable table yet, so UCI Adult is used. " + note
    return "adult", c_adult(), note + " " + ADULT_ATTRIBUTION


def table_name(table_key: str) -> str:
    """The data a synthetic table was made from, in words (its provenance; never the sidebar's unused source)."""
    if table_key == "adult":
        return "UCI Adult (Becker & Kohavi 1996, doi:10.24432/C5XW20), 7 columns, train split"
    if table_key.startswith("cat-"):
        return f"Simulated categorical table (n = {n:,}, k = {k}, α = {alpha:g}, seed {seed})"
    if table_key.startswith("up-shared-"):
        name = table_key.removeprefix("up-shared-").split("-")[0]
        return f"Shared dataset: {DATASETS.get(name, name)}"
    up = st.session_state.get("sv_upload")
    return f"Your upload {Path(getattr(up, 'name', None) or 'your_data.csv').name}"


def privacy_line(run: Y.SynthRun, n_strata: int, small_s: str) -> None:
    if synth in ("mst", "aim"):
        st.markdown(f"**Privacy:** (ε = {eps:g}, δ = 1e-9)-DP; the paper reports ε only.")
    else:
        st.markdown(f"**Privacy:** Pure ε-DP with ε = {eps:g}.")
    small_text = ("small groups are modelled together as one pooled group" if small_s == "pool"
                  else "groups dropped as too small are not synthesized")
    st.caption(f"One model per group: each of the {n_strata} models receives the full ε; the total is still ε "
               f"because the groups do not overlap (parallel composition); {small_text}.")


def run_pair(table_key, table, eps_value, small_s, clf):
    """Vanilla and stratified runs for the current settings (live for built-ins, on a button for MST/AIM)."""
    store = st.session_state.setdefault("_sv_runs", {})
    key = (table_key, synth, eps_value, seed, min_frac, small_s, clf)
    if synth in ("mst", "aim"):
        if key in store:
            return store[key]
        st.info(f"{synth_label.split(' ')[0]} takes tens of seconds (the first run compiles code); press Run.")
        cluster.show_where(CORES)
        if not st.button(f"Run {synth_label.split(' ')[0]}", key="sv_run_mbi", type="primary"):
            return None
        name = synth_label.split(' ')[0]
        with st.status(f"Running {name}: vanilla and stratified…", expanded=True) as status:
            bar = st.progress(0.0, text="Starting")
            train, test = Y.train_test_split_table(table, rng=seed)
            base = c_real_baseline(table_key, table, seed, clf)

            def prog(f, msg):
                bar.progress(min(f, 1.0), text=msg[:120])
            try:
                out = cluster.run(Y.fit_and_evaluate_variants,
                    train, test, domain=table.domain, synthesizer=synth, epsilon=eps_value,
                    variants=("vanilla", "stratified"), group_cols=list(table.group_cols), label_col=table.label_col,
                    rng=seed, min_frac=min_frac, small_strata=small_s, real_baseline=base, classifier=clf,
                    progress=prog, n_jobs=CORES)
            except Y.SynthesizerUnavailable as exc:
                status.update(label="Unavailable", state="error")
                st.error(md_escape(exc, max_len=400))
                return None
            except ValueError as exc:
                status.update(label="Could not run", state="error")
                st.error(md_escape(exc, max_len=400))
                return None
            status.update(label="Done", state="complete", expanded=False)
        if len(store) >= 8:
            store.pop(next(iter(store)))
        store[key] = out
        return out
    try:
        with st.spinner("Fitting the synthesizers…"):
            return {v: c_synth_run(table_key, table, synth, eps_value, v, seed, min_frac, small_s, clf)
                    for v in ("vanilla", "stratified")}
    except ValueError as exc:
        st.warning(f"{synth_label} cannot run with these settings: {md_escape(exc, max_len=400)}. If every group is below the minimum "
                 "stratum fraction, lower it; if the table is too large for this synthesizer, pick another one.")
        return None


def render_synth() -> None:
    slot = st.container()  # the verdict, above this view's controls
    table_key, table, note = synth_table()
    st.caption(note)
    small_s = choice("Small groups in synthesis", {"drop": "Drop", "pool": "Pool"}, key="sv_syn_small",
                     widget="radio", horizontal=True,
                     help="Drop: as the paper's code (groups under 0.1% of the records); pool: one model for all "
                     "small groups together.")
    st.markdown("**One model**: the synthesizer learns one model of the whole table at ε. **One model per group**: "
                "it learns one model for each group, each at the same ε, and mixes their samples by the public group "
                "sizes. Both are trained on the training split; the classifier is tested on real held-out rows.")
    clf = choice("Classifier for the accuracy measures", {"logreg": "Logistic regression",
                                                           "forest": "Random forest"}, key="sv_classifier",
                 widget="radio", horizontal=True,
                 help="Trained on the synthetic data, tested on real held-out rows. The random forest "
                 "(100 trees) takes tens of seconds on Adult.")
    runs = run_pair(table_key, table, eps, small_s, clf)
    synth_figs: list = []
    verdict: list[str] = []
    if runs:
        van, stra = runs["vanilla"], runs["stratified"]
        strata = stra.strata
        # Models fitted: one per kept stratum, plus one for the pooled small strata (if any).
        n_strata = int(strata["kept"].sum()) + int(strata["pooled"].any()) if strata is not None else 0
        mv, ms = van.metrics, stra.metrics
        gtab = mv.workload_per_group[["group", "size", "error", "fallback"]].merge(
            ms.workload_per_group[["group", "error", "fallback"]], on="group", suffixes=("_vanilla", "_stratified"))
        gtab["parity_vanilla"] = gtab["group"].map(mv.parity.per_group)
        gtab["parity_stratified"] = gtab["group"].map(ms.parity.per_group)
        gtab["group"] = [_decode_group(gg, table) for gg in gtab["group"]]
        short_name = synth_label.split(" (")[0]
        sentences = V.synth_verdict_sentences(gtab, epsilon=eps, synthesizer=short_name,
                                              accuracy_vanilla=mv.accuracy, accuracy_stratified=ms.accuracy,
                                              majority=mv.majority_baseline)
        verdict = [v.text for v in sentences]
        verdict_box(sentences, container=slot)
        privacy_line(stra, n_strata, small_s)
        summary = pd.DataFrame([
            ("Workload error (2-way tables)", mv.workload_global, ms.workload_global, "lower"),
            ("Parity error (Definition 11)", mv.parity.total, ms.parity.total, "lower"),
            ("Largest relative error of a group's column mean", mv.parity.max_disparity, ms.parity.max_disparity,
             "lower"),
            ("Classifier accuracy on real test rows", mv.accuracy, ms.accuracy, "higher"),
            ("Positive-prediction rate, lowest group ÷ highest", mv.dpr, ms.dpr, "closer to 1"),
            ("Missed positives (false-negative rate), highest group − lowest", mv.fnr_difference,
             ms.fnr_difference, "lower"),
        ], columns=["measure", "one model", "one model per group", "better when"])
        # Shown as text so an undefined value reads "—" (the CSV keeps the numbers, empty where undefined).
        st.dataframe(summary.assign(**{c: summary[c].map(fmt) for c in ("one model", "one model per group")}),
                     hide_index=True)
        c = st.columns(3)
        c[0].metric("Accuracy of always guessing the commonest label", fmt(mv.majority_baseline))
        c[1].metric("Accuracy when trained on real data", fmt(mv.real_baseline))
        c[2].metric("Models fitted per group", f"{n_strata}", help="Each receives the full ε (parallel composition).")
        download_csv(summary, filename="synth_metrics.csv", key="sv_dl_synth_metrics", label="Download metrics (CSV)")
        with methodology():
            st.markdown("Workload error: average L1 distance between real and synthetic 2-way tables (0 = "
                        "identical). Parity error: Definition 11 on column means, ω = 1/k, summed over groups. "
                        "Positive-prediction ratio (demographic parity): lowest over highest positive-prediction "
                        "rate across groups (0: the classifier never predicts the positive class for at least one "
                        "group; “—” when it never predicts it for any group). Missed positives: largest minus "
                        "smallest false-negative rate across groups.")
        wv = mv.workload_per_group.assign(group=lambda d: [_decode_group(g, table) for g in d["group"]])
        ws = ms.workload_per_group.assign(group=lambda d: [_decode_group(g, table) for g in d["group"]])
        fig = F.make_synth_group_error_figure(wv, ws,
                                              title=f"Workload error per group, {short_name}, ε = {eps:g}")
        labels = table.labels
        people = gtab.rename(columns={
            "size": "records", "error_vanilla": "workload error, one model",
            "error_stratified": "workload error, one model per group",
            "fallback_vanilla": "missing from the one-model sample", "fallback_stratified":
            "missing from the per-group sample", "parity_vanilla": "parity term, one model",
            "parity_stratified": "parity term, one model per group"})
        alt = f"Grouped bars of each group's workload error, one model against one model per group: {verdict[0]}"
        synth_figs = [(alt, fig)]
        show(fig, key="sv_fig_synth_groups", filename="synth_group_error", table=people, alt=alt,
             caption="Lower is better. A model per group gives each group its own model at the full ε: it helps "
                     "groups that a single model neglects, and hurts groups too small for their own noisy model "
                     f"(the same crossover as in mean estimation). Seed {seed}.")
        pv = mv.parity.per_cell.rename(index=lambda gg: _decode_group(gg, table))
        ps = ms.parity.per_cell.rename(index=lambda gg: _decode_group(gg, table))
        hm = F.make_parity_heatmap(pv, ps)
        alt = ("Two heat maps, one model and one model per group: rows are groups, columns are table columns, "
               "colour is how far the synthetic group's column mean is from the real one.")
        synth_figs.append((alt, hm))
        show(hm, key="sv_fig_parity", filename="parity_heatmap", alt=alt,
             caption="Each cell: how far the synthetic group's column mean is from the real one, relative to it. "
                     f"Seed {seed}.")
        missing = sorted(set(mv.parity.fallback_groups) | set(ms.parity.fallback_groups), key=str)
        if missing:
            st.caption("Groups missing from a synthetic table were compared with the whole synthetic table: "
                       f"{', '.join(md_escape(_decode_group(g, table)) for g in missing)}.")
        if strata is not None:
            st.markdown("**Groups and their models**")
            stab = strata.copy()
            for gc in table.group_cols:
                stab[gc] = [labels.get(gc, ())[v] if gc in labels and v < len(labels[gc]) else v for v in stab[gc]]
            stab = stab.rename(columns={"size": "records", "kept": "own model", "pooled": "in the pooled model",
                                        "weight": "share of the synthetic sample"})
            st.dataframe(stab, hide_index=True)
            download_csv(stab, filename="strata.csv", key="sv_dl_strata", label="Download the groups table (CSV)")
        # Synthetic sample download (decoded labels). A plain CSV that reads back with any CSV reader (and into
        # this page's upload); how it was made goes in a JSON sidecar, not in comment lines.
        which = choice("Synthetic sample to download", {"stratified": "One model per group", "vanilla": "One model"},
                       key="sv_dl_which", widget="radio", horizontal=True)
        run = runs[which]
        stem = f"synthetic_{synth}_{which}_eps{eps:g}_seed{seed}"
        d1, d2 = st.columns(2)
        d1.download_button("Download synthetic data (CSV)", data=partial(_synth_csv, run.synthetic, table.labels),
                           file_name=f"{stem}.csv", mime="text/csv", key="sv_dl_synth", on_click="ignore")
        with d2:
            download_json(dict(file=f"{stem}.csv", synthesizer=synth, variant=which, epsilon=eps, delta=run.delta,
                               seed=seed, source=table_name(table_key), rows=int(len(run.synthetic)), paper=PAPER),
                          filename=f"{stem}.json", key="sv_dl_synth_meta",
                          label="Download how it was made (JSON)")
    # Paper grid sweep (behind a button).
    if paper_grid:
        st.subheader("Quality against ε (paper grid)")
        skey = ("sweep", table_key, synth, seed, min_frac, small_s, clf)
        store = st.session_state.setdefault("_sv_runs", {})
        if skey not in store:
            if synth in ("mst", "aim"):
                st.caption("A sweep of MST/AIM over six ε values takes several minutes.")
            cluster.show_where(CORES)
            if st.button("Run ε sweep", key="sv_run_sweep"):
                with st.status("Running the ε sweep…", expanded=True) as status:
                    bar = st.progress(0.0)

                    def prog(f: float, msg: str) -> None:
                        bar.progress(min(f, 1.0), text=msg[:120])
                    try:
                        # Same seeds whatever runs the fits (local cores or a Dask cluster): same numbers.
                        store[skey] = cluster.run(SW.synth_epsilon_sweep, table, synthesizer=synth, rng=seed,
                                                  min_frac=min_frac, small_strata=small_s, classifier=clf,
                                                  n_jobs=CORES, progress=prog)
                    except (ValueError, Y.SynthesizerUnavailable) as exc:
                        status.update(label="Could not run", state="error")
                        st.error(md_escape(exc, max_len=400))
                        return
                    status.update(label="Done", state="complete", expanded=False)
        if skey in store:
            long = store[skey]
            fig = F.make_synth_sweep_figure(long)
            alt = ("Three panels against ε on the paper's grid: workload error, parity error and classifier "
                   "accuracy, one line for one model and one for one model per group.")
            synth_figs.append((alt, fig))
            show(fig, key="sv_fig_synth_sweep", filename="synth_sweep", table=long, alt=alt,
                 caption=f"One model vs one model per group at each ε of the paper's grid (one run per point, "
                         f"seed {seed}).")
    params = dict(mode="synthesis", source=table_name(table_key), table=table_key, synthesizer=synth, epsilon=eps,
                  delta=1e-9 if synth in ("mst", "aim") else 0.0, seed=seed, min_frac=min_frac, small_strata=small_s,
                  classifier=clf,
                  group_cols=list(table.group_cols), label=table.label_col, paper=PAPER)
    download_json(params, filename="stratified_viewer_params.json", key="sv_dl_params_synth")
    if runs:
        mv, ms = runs["vanilla"].metrics, runs["stratified"].metrics
        _artefacts(question="Does fitting one synthesizer per group (full ε each) give each group a more faithful "
                            "synthetic table than one model of the whole table?",
                   params={"Data": table_name(table_key), "Synthesizer": synth_label, "ε": f"{eps:g}",
                           "δ": "10⁻⁹" if synth in ("mst", "aim") else "0", "Small groups": small_s,
                           "Classifier": clf, "Seed": f"{seed}"},
                   headlines=[("Workload error, one model", fmt(mv.workload_global), ""),
                              ("Workload error, one model per group", fmt(ms.workload_global), ""),
                              ("Accuracy, one model", fmt(mv.accuracy), "real held-out rows"),
                              ("Accuracy, one model per group", fmt(ms.accuracy), "real held-out rows")],
                   verdicts=verdict, figures=synth_figs, epsilon=eps,
                   delta=1e-9 if synth in ("mst", "aim") else None, seed=seed, key="sv_art_synth",
                   script=_synth_script(table_key, table, small_s, clf))


def _synth_script(table_key: str, table, small_s: str, clf: str) -> str:
    """The synthetic-data view's "Copy as code" for the table, synthesizer and settings the view just ran."""
    if table_key == "adult":
        data = dict(source="adult")
    elif table_key.startswith("cat-"):
        data = dict(source="categorical", n=n, k=k, alpha=alpha)
    else:
        up = st.session_state.get("sv_upload")
        name = Path(getattr(up, "name", None) or "your_data.csv").name
        if table_key.startswith("up-shared-"):
            name = table_key.removeprefix("up-shared-").split("-")[0] + ".csv"
        data = dict(source="upload", csv_path=name,
                    group_cols=list(table.group_cols), label_col=table.label_col)
    return SC.synth_script(**data, synthesizer=synth, synthesizer_label=synth_label.split(" (")[0], epsilon=eps,
                           seed=seed, min_frac=min_frac, small_strata=small_s, classifier=clf, repo_root=REPO_ROOT)


def _decode_group(label: str, table) -> str:
    parts = str(label).split(" × ")
    out = []
    for gc, p in zip(table.group_cols, parts):
        labs = table.labels.get(gc)
        try:
            out.append(str(labs[int(p)]) if labs is not None else p)
        except (ValueError, IndexError):
            out.append(p)
    return " × ".join(out)


def _synth_csv(df: pd.DataFrame, labels) -> bytes:
    # "No value" is a level while synthesizing; in the file it is an empty cell again, as in the upload.
    out = Y.decode_table(df, labels)
    return csv_bytes(out.mask(out.eq(MISSING_LEVEL)))


# ----------------------------------------------------------------------------------------------------------
# Dispatch
# ----------------------------------------------------------------------------------------------------------

@st.fragment
def mean_view() -> None:
    """Mean mode as one fragment: its controls and every figure that depends on them redraw together,
    without rerunning the header, the sidebar or the upload block."""
    slot = st.container()
    with st.container(border=True):
        draw_controls(main=True)
    render_mean(slot)


if mode == "Mean estimation":
    mean_view()
elif mode == "Synthetic data":
    render_synth()
else:
    from ui.views.partially_private import render_partially_private_release  # imported when first shown
    render_partially_private_release()

st.divider()
st.caption(f"Source: {PAPER}, arXiv 2312.11712. {ADULT_ATTRIBUTION} Every random result is reproducible from the "
           "seed in the sidebar.")

page_end()
