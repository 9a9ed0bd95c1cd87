"""Shared parts of the stratified synthesis viewer's views: texts, cached engine calls, the figure wrapper, the report.

Widgets and rendering only; every number and sentence comes from ``dpdash.stratify.views`` and the engine modules it
calls. Source: seed 004_c5ca305e20a1adba.txt (Rosenblatt, Stoyanovich & Musco, arXiv 2312.11712); spec
shared/specs/stratified_synthesis_viewer.md.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dpdash.stratify import core as S
from dpdash.stratify import figures as F
from dpdash.stratify import synth as Y
from dpdash.common.data import DataValidationError, discrete_table_from_csv, load_adult, load_adult_numeric
from dpdash.common.view import TabView
from ui.charts import show_figure
from ui.exports import csv_bytes, download_csv
from ui.show import take_away

PAPER = "Rosenblatt, Stoyanovich & Musco (2023), seed 004"
MODE_OPTIONS = {"mean": "Mean estimation", "synthetic": "Synthetic data", "partial": "Partially private release"}
SOURCE_OPTIONS = {"mixture": "Mixture", "acs": "ACS preset", "categorical": "Categorical", "adult": "Adult",
                  "shared": "Shared dataset", "upload": "Upload"}
#: Sources that are a table the user picks columns of.
TABLE_SOURCES = ("Shared dataset", "Upload")
SOURCE_HELP = ("Mixture: simulated Gaussian groups with Dirichlet(α) sizes. ACS preset: the paper's Table 3 group "
               "sizes (values simulated). Categorical: a simulated categorical table. Adult: the UCI Adult census "
               "extract (real data), groups sex × race. Shared dataset: the dataset picked in the sidebar for "
               "every page (e.g. the ACS 2012 sample). Upload: your own CSV.")
EPS_MIN, EPS_MAX = 0.01, 10.0
ALPHA_GRID = (0.05, 0.1, 0.13, 0.2, 0.3, 0.5, 0.7, 1.0, 2.0, 3.0, 5.0, 10.0)
N_GRID = (500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 200_000)


def _thousands(v: int) -> str:
    return f"{v:,}"


SYNTH_OPTIONS = {"independent": "Independent", "full_histogram": "Full histogram", "mwem": "MWEM",
                 "mst": "MST (Run)", "aim": "AIM (Run)"}
UPLOAD_MAX_BYTES = 10_000_000

PUBLIC_SIZES = ("**Assumption:** the number of records n and every group's size are public (as in the paper, "
                "which takes group sizes from census tables). Only the values inside the groups are protected: the "
                "mean estimates are private between data sets that differ in one person's value, every size "
                "unchanged.")
CROSSOVER_CAPTION = ("Each group's estimate uses the full ε; groups smaller than their crossover size are better "
                     "served by the pooled estimate.")
SMALL_ALPHA = "Small α ⇒ one or two dominant groups; α = 1 spreads sizes uniformly; large α ⇒ near-equal groups."
ALPHA_NOTE = ("The paper reports α ≈ 0.13 from an unspecified Monte Carlo fit; the maximum-likelihood value for "
              "these proportions is shown.")
COINPRESS_LABEL = "ρ-zCDP, not pure ε-DP"
ADULT_ATTRIBUTION = ("UCI Adult: Becker, B. & Kohavi, R. (1996), *Adult*, UCI Machine Learning Repository, "
                     "doi:10.24432/C5XW20, licensed CC BY 4.0.")


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


SOURCES_TEXT = ["Rosenblatt, Stoyanovich & Musco, A Simple and Practical Method for Reducing the Disparate Impact "
                "of Differential Privacy (arXiv 2312.11712), seed 004_c5ca305e20a1adba.txt: Eq. 2–4, Prop. 8–9, "
                "Thm. 10, Def. 11, Def. 13.",
                "Errata applied: E1 symmetric clipping [−C, C]; E2 log(m/γ); E6 recombined noise keeps 1/n; "
                "E7 parity error is a sum with ω = 1/k; E11 α̂ computed, not the paper's 0.13.",
                "Spec: shared/specs/stratified_synthesis_viewer.md."]


PAGE_ID = "stratified_synthesis_viewer"
TITLE = "Stratified synthesis viewer"


def report(view: TabView, *, key: str, figures=(), script: str | None = None) -> None:
    """The view's report, settings and "Copy as code", all read from ``view`` (``ui.show.take_away``)."""
    take_away(view, key=key, page=PAGE_ID, title=TITLE, sources=SOURCES_TEXT, figures=figures, script=script)


def num_label(v) -> str:
    return f"{v:g}"


# Cached engine calls (the engine never imports streamlit)

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
def c_mean_on_summary(data_key: str, _summary: pd.DataFrame, epsilons: tuple, R: float, gamma: float, reps: int,
                      seed: int, min_frac: float, small: str, mode: str) -> pd.DataFrame:
    return S.run_mean_experiment_on_summary(_summary, epsilons=epsilons, R=R, gamma=gamma, reps=reps,
                                            rng=np.random.default_rng([seed, 3]), min_frac=min_frac,
                                            small_strata=small, mode=mode)


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

