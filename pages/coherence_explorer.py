"""Coherence explorer: would a predictor trained on a release treat the people in it differently?

Seed: "Enforcing Demographic Coherence" (seeds/000_f379639b976c7ffb.txt); spec:
specs/coherence_explorer.md §7. Thin page: widgets → cached engine calls → pure figure functions.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from dpdash import coherence as co
from dpdash import coherence_figures as cf
from dpdash import coherence_inputs as ci
from dpdash import coherence_links as cl
from dpdash import coherence_tabs as ct
from dpdash import coherence_verdicts as cv
from dpdash import maxinfo as mi
from dpdash import script_coherence as sc_script
from dpdash.data import census_population
from ui import cluster, load_active_dataset, page_end, page_setup
from ui.charts import show_figure
from ui.common import CORES, methodology
from ui.dossier import Headline, PageSummary, artefacts
from ui.exports import download_csv, download_json
from ui.tabs import lazy_tabs
from ui.text import md_escape, md_quote
from ui.views.coherence_data import upload_source
from ui.widgets import choice, delta_exponent, log_slider, multi_choice, seed_input, token_for

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {"synthetic": "Synthetic population (generator)", "shared": "Shared dataset (sidebar picker)",
           "upload": "Upload a CSV"}


def _source_before_setup() -> str:
    """The data source this run will use, read before any widget (session value, else the link's token or label),
    so the sidebar offers the shared-dataset picker only when the page reads it (issue 14 item 6)."""
    held = st.session_state.get("coh_source")
    if held in SOURCES:
        return held
    raw = st.query_params.get("coh_source")
    return (token_for(str(raw), SOURCES) if raw is not None else None) or "synthetic"


page_setup("Coherence explorer", icon=":material/balance:", uses_dataset=_source_before_setup() == "shared")

# ------------------------------------------------------------------------------------------ constants
NIST_LENS = ("AGEP", "DENSITY", "INDP_CAT", "INDP", "SEX", "EDU", "HISP", "RAC1P")
NIST_COLUMNS = NIST_LENS + ("DREM",)
SYN_FEATURES = ("AGEP", "SEX", "RAC1P", "EDU", "HISP", "DENSITY")
#: Link values of the former ε select slider that mean "no noise" (now the exact-histogram toggle).
EXACT_LINK_VALUES = ("∞", "inf", "infinity")
GAMMA_MODES = {"members": "members", "percent": "% of n"}
OUTPUTS = {"hard": "hard (±1)", "soft": "soft (2·P − 1)"}
CURATORS = {"column": "the column (Thm 9)", "count": "only the count of ones (Thm 11)"}
BETA_OPTIONS = {"0.05": 0.05, "0.01": 0.01, "1e-3": 1e-3, "1e-6": 1e-6, "e^-30": math.exp(-30)}
RELEASES = {
    "clear": "In the clear (the released half itself)",
    "column_subset": "Column subset in the clear (released features only)",
    "dp_histogram": "ε-DP histogram → synthetic records (Laplace)",
    "gaussian_histogram": "(ε, δ)-DP histogram → synthetic records (Gaussian)",
    "subsample": "Random subsample in the clear",
}
LEARNERS = {
    "random_forest": "Random forest (as in the paper)",
    "decision_tree": "Decision tree",
    "nearest_neighbor": "1-nearest neighbour",
    "logistic": "Logistic regression",
}
EVERYONE = "Everyone"
SENSITIVE = "Has the sensitive attribute"
#: Group presets of census-like data: link token → (display label, conditions); the label names the group.
SYN_PRESETS = {
    "women": ("Women (SEX = 2)", (co.Condition("SEX", values=(2,)),)),
    "age65": ("Age 65+", (co.Condition("AGEP", low=65),)),
    "men18_24": ("Men 18–24", (co.Condition("SEX", values=(1,)), co.Condition("AGEP", low=18, high=25))),
    "black": ("Black (RAC1P = 2)", (co.Condition("RAC1P", values=(2,)),)),
    "hispanic": ("Hispanic (HISP ≥ 1)", (co.Condition("HISP", low=1),)),
}
#: The "Groups" control's options (link token → label); older links' display labels are read as these tokens.
GROUP_PRESETS = {"everyone": EVERYONE, "sensitive": SENSITIVE} | {t: lab for t, (lab, _) in SYN_PRESETS.items()}
DEFAULT_GROUPS = ["everyone", "sensitive"]
MAX_GROUPS = 20
#: Random splits of the Section 7 demonstration.
S7_REPS = 1000
#: Query parameter carrying the user-built groups (JSON), so a shared link restores them.
BUILT_PARAM = "coh_built"


# ------------------------------------------------------------------------------------------ cached engine calls
# Session scope: an upload's derived results must never be shared with another session.
@st.cache_data(max_entries=4, show_spinner=False)
def _population(n: int, seed: int) -> pd.DataFrame:
    return census_population(n, rng=seed)


@st.cache_data(max_entries=8, show_spinner=False, scope="session")
def _prepared(data_key: tuple, config: co.ExperimentConfig, _df: pd.DataFrame):
    try:
        return co.prepare(_df, config), None
    except ValueError as exc:
        return None, str(exc)


@st.cache_data(max_entries=8, show_spinner=False, scope="session")
def _preview(data_key: tuple, config: co.ExperimentConfig, _df: pd.DataFrame):
    prepared, err = _prepared(data_key, config, _df)
    if err:
        return None, err, 0.0
    others = _other_load()
    t0 = time.perf_counter()
    try:
        trial = co.run_trial(prepared, config, 0, keep_predictions=True)
    except ValueError as exc:  # e.g. a learner refusing the data: a message, not a traceback
        return None, str(exc), 0.0
    took = time.perf_counter() - t0
    # the time this run would take on an idle core: the share the server's other jobs left it is taken out, so an
    # estimate made later under another load is not counted twice (issue 25)
    return trial, None, took * min(1.0, CORES / (others + 1.0))


def _other_load() -> float:
    """Runnable jobs besides this page's own, from the 1-minute load average (0 where the system has none)."""
    try:
        return max(0.0, os.getloadavg()[0] - 1.0)
    except (AttributeError, OSError):
        return 0.0


def _estimate(runs: int, per_run_s: float, what: str) -> tuple[float, str]:
    """How long ``runs`` repetitions will take here now (engine cost model, calibrated by the last real run of
    the same settings when there is one), in words."""
    measured = st.session_state.get("_coh_rate", {}).get((data_key, preview_config))
    if measured:
        secs = measured * runs
        return secs, (f"Estimated time for {what}: {ci.time_words(secs)} on {_where_words()} (measured on the "
                      "last run of these settings).")
    est = ci.run_estimate(per_run_s=per_run_s, runs=runs, workers=_run_parallelism(), cores=CORES,
                          load=_other_load())
    if est.busy:
        how = (f"from the preview's time; the server is busy ({est.load:.0f} other jobs), so each core is "
               "shared and the run is slower than alone")
    else:
        how = "from the preview's time"
    return est.seconds, f"Estimated time for {what}: {ci.time_words(est.seconds)} on {_where_words()} ({how})."


def _remember_rate(res_elapsed: float, runs: int) -> None:
    """Keep the wall time per repetition of a finished run: the next estimate of these settings uses it."""
    rates = st.session_state.setdefault("_coh_rate", {})
    rates[(data_key, preview_config)] = res_elapsed / max(1, runs)
    while len(rates) > 8:
        rates.pop(next(iter(rates)))


def _session_cached(name: str, key: tuple, compute, max_entries: int = 8):
    """Bounded per-session LRU cache for runs that report progress.

    ``st.cache_data`` replays the Streamlit calls a cached function makes, and a progress bar created
    outside the function cannot be replayed on a cache hit; these results are kept in session state instead.
    """
    store = st.session_state.setdefault(f"_coh_cache_{name}", {})
    if key in store:
        store[key] = store.pop(key)  # most recently used last
        return store[key]
    value = compute()
    store[key] = value
    while len(store) > max_entries:
        store.pop(next(iter(store)))
    return value


def _experiment(data_key: tuple, config: co.ExperimentConfig, df: pd.DataFrame, progress=None):
    return _session_cached("experiment", (data_key, config),
                           lambda: cluster.run(co.run_experiment, df, config, n_jobs=CORES, progress=progress))


@st.cache_data(max_entries=8, show_spinner=False, scope="session")
def _floor(data_key: tuple, config: co.ExperimentConfig, _df: pd.DataFrame):
    return co.noise_floor(_df, config, reps=ct.FLOOR_REPS)


def _sweep(data_key: tuple, config: co.ExperimentConfig, df: pd.DataFrame, progress=None):
    return _session_cached("sweep", (data_key, config),
                           lambda: cluster.run(co.run_epsilon_sweep, df, config, ct.SWEEP_EPSILONS, n_jobs=CORES,
                                               progress=progress),
                           max_entries=4)


@st.cache_data(max_entries=8, show_spinner=False, scope="session")
def _single_column(data_key: tuple, bit_col: str, one_value: str, groups: tuple, seed: int, beta: float,
                   label: str, curator: str, _df: pd.DataFrame):
    return ct.section7_result(_df, label=label, column=bit_col, one_value=one_value, groups=groups, rng=seed,
                              beta=beta, curator=curator, reps=S7_REPS)


# ------------------------------------------------------------------------------------------ helpers
def _fmt_value(v) -> str:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def _condition_words(c: co.Condition) -> str:
    """A condition as a reader writes it: "SEX is 2", "AGEP is 1 or 3", "AGEP ≥ 65", "18 ≤ AGEP < 25"."""
    if c.values:
        return f"{c.column} is {' or '.join(_fmt_value(v) for v in c.values)}"
    if c.low is not None and c.high is not None:
        return f"{_fmt_value(c.low)} ≤ {c.column} < {_fmt_value(c.high)}"
    if c.low is not None:
        return f"{c.column} ≥ {_fmt_value(c.low)}"
    return f"{c.column} < {_fmt_value(c.high)}"


def _alpha_text(a: float) -> str:
    """Theorem 7's smallest certified α as shown, saying so where no α ≤ 2 is certified (NaN from the engine)."""
    return f"{a:.4g}" if math.isfinite(a) else "none: group too small for any α ≤ 2"


def _least_frequent(s: pd.Series) -> str:
    vc = s.dropna().map(_fmt_value).value_counts()
    return str(vc.index[-1])


def _cells(prepared: co.PreparedData | None) -> int | None:
    return co.dp_domain_size(prepared.binned_levels) if prepared is not None and prepared.binned_levels else None


def _default_features(df: pd.DataFrame, lens: list[str], bins: int) -> list[str]:
    """Lens order, skipping any feature that would push the cell count above 500,000 (spec §7.1)."""
    out, cells = [], 2
    for c in lens:
        s = df[c]
        k = s.nunique(dropna=True)
        if not pd.api.types.is_numeric_dtype(s) and k > co.MAX_LEVELS:
            continue
        lv = (k if k <= co.MAX_LEVELS else bins) + int(s.isna().any())
        if cells * lv <= 500_000:
            out.append(c)
            cells *= lv
    return out


def _apply_paper_preset() -> None:
    """Seed §5 settings: label DREM (1 = sensitive), the 8-feature lens, clear release, 50-tree forest."""
    st.session_state.update({
        "coh_label": "DREM", "coh_sensitive": "1", "coh_lens": list(NIST_LENS),
        "coh_groups": list(DEFAULT_GROUPS), "coh_release": "clear", "coh_learner": "random_forest",
        "coh_output": "hard", "coh_trees": 50, "coh_reps": 100, "coh_coarsen": False,
    })


def _sync_built_groups(custom: list[co.GroupSpec], columns) -> None:
    """Keep the user-built groups and the link's ``coh_built`` parameter in step (a link wins when it changes)."""
    raw = st.query_params.get(BUILT_PARAM)
    if raw is not None and raw != st.session_state.get("_coh_built_seen"):
        st.session_state["_coh_built_seen"] = raw
        parsed = cl.parse_built_groups(raw, columns=columns)
        custom[:] = parsed.groups
        if parsed.problem:
            st.warning(f"The link's built groups could not be read: {md_escape(parsed.problem, max_len=300)}. "
                       "Expected the list this page writes when you build a group; the link's other settings "
                       "are used.")
    elif raw is None and custom:  # a page switch drops the query string: put the groups back into the link
        _write_built_groups(custom)


def _write_built_groups(custom: list[co.GroupSpec]) -> None:
    if custom:
        payload = cl.groups_to_json(custom)
        st.query_params[BUILT_PARAM] = payload
        st.session_state["_coh_built_seen"] = payload
    else:
        st.query_params.pop(BUILT_PARAM, None)
        st.session_state.pop("_coh_built_seen", None)


def _verdict(text: str, *, bad: bool = False) -> None:
    """A tab's answer first, in plain words (the sentence comes from dpdash.coherence_verdicts; escaped, as it
    may carry user-named groups)."""
    if bad:
        st.warning(md_escape(text, max_len=800), icon=":material/report:")
    else:
        st.info(md_escape(text, max_len=800), icon=":material/task_alt:")


def _show(fig, *, key: str, filename: str, caption: str) -> None:
    """``show_figure`` with the figure's own alt text (what it shows, with its numbers; issue 14 item 9)."""
    show_figure(fig, key=key, filename=filename, caption=caption)


def _where_words() -> str:
    """Where a long run goes: this server's cores or the Dask cluster (issue 16), for help texts."""
    where = cluster.placement()
    if where.on_cluster:
        return f"the Dask cluster ({where.workers} workers, {where.threads} threads)"
    return f"this server's {CORES} cores"


def _run_parallelism() -> int:
    where = cluster.placement()
    return max(1, where.threads) if where.on_cluster else CORES


# ------------------------------------------------------------------------------------------ intro
st.title("Coherence explorer")
st.markdown(
    "If a release lets someone build a predictor that treats the people **in** it differently from similar "
    "people who are **not**, it has exposed them. This page runs that test, group by group, on the data and "
    "release you choose."
)
with methodology():
    st.markdown(
        "Split the data at random into two halves, release one half (in the clear, as a histogram with or "
        "without noise, or as a subsample), train a predictor on the release, and compare its predictions on the "
        "released half with those on the held-out half, group by group. The distance between the two is the "
        "Wasserstein-1 distance **W1**: 0 when both halves get the same mix of predictions, 2 when they get "
        "opposite ones; for yes/no predictions W1 is twice the difference in the share flagged (0.2 = 10 "
        "points). Accuracy plays no role: a harmful predictor need not be accurate. A split **fails** when a "
        "kept group (at least γ members) has W1 above the tolerance α. *(Enforcing Demographic Coherence, "
        "§3–§5, Def. 2–5.)*"
    )

# ------------------------------------------------------------------------------------------ 1. data
sb = st.sidebar
sb.header("Experiment")
source = choice(
    "Data", SOURCES, key="coh_source", widget="radio", container=sb,
    help="The synthetic population mimics the ACS columns the paper used; it is generated, not real people. "
         "The shared dataset is the one picked above, for every page.",
)
prev_source = st.session_state.get("_coh_prev_source")
st.session_state["_coh_prev_source"] = source
seed = seed_input(key="coh_seed", container=sb,
                  help="Seeds the population (synthetic data) and every split: same seed, same results.")
df: pd.DataFrame | None = None
if source == "synthetic":
    n_pop = sb.slider("Population size", 2_000, 100_000, 20_000, step=1_000, key="coh_n", bind="query-params")
    df = _population(int(n_pop), int(seed))
    data_key = ("census", int(n_pop), int(seed))
    data_title = f"Synthetic population: {n_pop:,} generated people (seed {seed})"
elif source == "shared":
    ds = load_active_dataset()
    df = ds.frame
    data_key = ("shared", ds.name)
    data_title = f"Shared dataset: {ds.title}"
else:
    kept = upload_source(prev_source=prev_source)
    if kept is None:
        st.info(
            "Upload a CSV with one row per person: a **label** column with 2–20 values (e.g. a yes/no attribute) "
            "and the columns a predictor may see. Missing values may be blank, `N` or `NA`. If the file has the "
            "NIST ACS excerpt columns (AGEP, DENSITY, INDP_CAT, INDP, SEX, EDU, HISP, RAC1P, DREM) a "
            "**Paper, Section 5** preset is offered."
        )
        st.stop()
    ds = kept[1]
    df = ds.frame
    data_key = ("upload", kept[0])
    data_title = f"Uploaded file: {len(df):,} rows, {df.shape[1]} columns"

# Data-dependent defaults (label, sensitive value, lens, groups, released features, …) are re-derived when the
# data source changes; on a session's first run a link's own valid choices stand (issue 12, state integrity).
source_id = ("census",) if source == "synthetic" else data_key
data_changed = st.session_state.get("_coh_source_id", source_id) != source_id
st.session_state["_coh_source_id"] = source_id
if data_changed:
    for k in ("coh_bit_col", "coh_view", "coh_b_col", "coh_b_vals", "coh_pending_conditions"):
        st.session_state.pop(k, None)

census_like = set(NIST_COLUMNS) <= set(df.columns)
if source == "upload" and census_like:
    sb.button("Paper, Section 5 preset", key="coh_paper_preset", on_click=_apply_paper_preset,
              help="Label DREM (1 = has the difficulty), the paper's 8-feature lens, clear release, 50-tree "
                   "forest, 100 repetitions.")

labels = ci.label_candidates(df)
if not labels:
    st.error("No column can serve as the label: expected a column with 2 to 20 distinct values "
             "(for example a yes/no attribute).")
    st.stop()
default_label = ci.default_label(df, suggested=None if source == "synthetic" else ds.schema.suggested_label)
# A column the file names as its label, or the link asks for, that cannot be one is refused out loud (issue 25).
asked_label = st.query_params.get("coh_label") if "coh_label" not in st.session_state else None
named = next((c for c in df.columns if str(c).strip().casefold() in ci.LABEL_NAMES), None)
for wanted in dict.fromkeys(c for c in (asked_label, named) if c in df.columns and c not in labels):
    st.warning(md_escape(ci.label_problem(df, wanted), max_len=400)
               + f" The label used instead is {md_quote(default_label)}.")
if data_changed or st.session_state.get("coh_label", default_label) not in labels:
    st.session_state["coh_label"] = default_label
label = sb.selectbox("Label (what a predictor tries to guess)", labels, index=labels.index(default_label),
                     key="coh_label", bind="query-params")
label_values = [_fmt_value(v) for v in sorted(df[label].dropna().unique().tolist(), key=str)]
default_sv = "1" if (label == "DREM" and "1" in label_values) else _least_frequent(df[label])
prev_label = st.session_state.get("_coh_prev_label")
label_changed = prev_label is not None and prev_label != label and not data_changed
st.session_state["_coh_prev_label"] = label
if data_changed or label_changed or st.session_state.get("coh_sensitive", default_sv) not in label_values:
    st.session_state["coh_sensitive"] = default_sv
sensitive = sb.selectbox("Sensitive value (coded −1)", label_values, index=label_values.index(default_sv),
                         key="coh_sensitive", bind="query-params",
                         help="The value a harmful predictor would single out; default: the least frequent.")
lens_options = [c for c in df.columns if c != label]
default_lens, left_out = ci.default_lens(df, label, preferred=NIST_LENS if census_like else ())
lens_note = None
if data_changed:
    st.session_state["coh_lens"] = default_lens
elif label in st.session_state.get("coh_lens", ()):
    # One column cannot play two roles: the new label leaves the lens, and the page says so.
    st.session_state["coh_lens"] = [c for c in st.session_state["coh_lens"] if c != label]
    lens_note = (f"{md_quote(label)} is now the label, so it was taken out of the lens: a column cannot be "
                 "both what the predictor guesses and what it sees.")
lens = sb.multiselect("Lens (features the predictor sees)", lens_options, default=default_lens, key="coh_lens",
                      bind="query-params", max_selections=30)
if left_out and any(c not in lens for c in left_out):
    sb.caption("Left out of the default lens: " + "; ".join(
        f"{md_escape(c, max_len=60)} ({why})" for c, why in left_out.items() if c not in lens)
        + ". None describes a person; add them above if you mean to.")

# Groups: presets + builder.
# Census-like data also offers the SYN presets; a link naming one the data lacks is named in the link notice.
group_options = {t: lab for t, lab in GROUP_PRESETS.items() if census_like or t not in SYN_PRESETS}
if data_changed:
    st.session_state["coh_groups"] = list(DEFAULT_GROUPS)
chosen = multi_choice("Groups", group_options, key="coh_groups", default=DEFAULT_GROUPS, container=sb,
                      help="Overall averages can hide harm to a small group.")
custom: list[co.GroupSpec] = st.session_state.setdefault("coh_custom_groups", [])
_sync_built_groups(custom, df.columns)
groups: list[co.GroupSpec] = []
for token in chosen:
    if token == "everyone":
        groups.append(co.GroupSpec(EVERYONE))
    elif token == "sensitive":
        groups.append(co.GroupSpec(f"{label} = {sensitive}", (co.Condition(label, values=(sensitive,)),)))
    elif token in SYN_PRESETS:
        groups.append(co.GroupSpec(*SYN_PRESETS[token]))
groups += [g for g in custom if all(c.column in df.columns for c in g.conditions)]
groups = groups[:MAX_GROUPS]

n_labelled = int(df[label].notna().sum())
gcol1, gcol2 = sb.columns([1, 1])
gamma_mode = choice("γ as", GAMMA_MODES, key="coh_gamma_mode", widget="radio", container=gcol1)
# γ ∈ [0, n] (spec §7.1): 100 members, or a tenth of a small dataset, whose every group 100 would exclude.
gamma_members_default = float(min(100, max(2, n_labelled // 10)))
gamma_max = float(n_labelled) if gamma_mode == "members" else 100.0
gamma_default = gamma_members_default if gamma_mode == "members" else \
    round(100.0 * gamma_members_default / n_labelled, 2)
prev_mode = st.session_state.get("_coh_prev_gamma_mode")
st.session_state["_coh_prev_gamma_mode"] = gamma_mode
if data_changed:
    st.session_state["coh_gamma"] = gamma_default
elif prev_mode is not None and prev_mode != gamma_mode and "coh_gamma" in st.session_state:
    # Same γ, new unit: a mode switch converts the value instead of reading 100 members as 100 % of n.
    g_old = float(st.session_state["coh_gamma"])
    st.session_state["coh_gamma"] = (round(100.0 * g_old / n_labelled, 2) if gamma_mode == "percent"
                                     else float(round(g_old / 100.0 * n_labelled)))
if st.session_state.get("coh_gamma", 0.0) > gamma_max:
    st.session_state["coh_gamma"] = gamma_max
gamma_in = gcol2.number_input("γ (smallest group size kept)", min_value=0.0, max_value=gamma_max,
                              value=min(gamma_default, gamma_max), step=1.0 if gamma_mode == "percent" else 10.0,
                              key="coh_gamma", bind="query-params",
                              help="Smaller groups are left out: with few members, random splitting alone "
                                   "creates large distances.")

# ------------------------------------------------------------------------------------------ 2. release, learner
sb.subheader("Release and learner")
release_choice = choice("Release", RELEASES, key="coh_release", widget="radio", container=sb)
# "Column subset" is the clear release restricted to the released features (engine: kind="clear").
release_kind = "clear" if release_choice == "column_subset" else release_choice
_old_eps = str(st.query_params.get("coh_eps", "")).strip().casefold()
if _old_eps in EXACT_LINK_VALUES and "coh_exact" not in st.session_state:
    # An older link's "ε = ∞" is the exact-histogram switch now (the ε control holds finite values only).
    st.session_state["coh_exact"] = True
    del st.query_params["coh_eps"]
hist_release = release_kind in co.HISTOGRAM_KINDS
exact = sb.toggle("No noise (exact histogram, not DP)", value=False, key="coh_exact", bind="query-params",
                  disabled=not hist_release,
                  help="Publishes the histogram without noise: shows what coarsening alone does. Not DP.")
exact = bool(exact) and hist_release
eps_value = log_slider("ε (privacy loss of the DP release)", key="coh_eps", min_value=0.01, max_value=10.0,
                       value=1.0, steps_per_decade=10, container=sb, disabled=not hist_release or exact,
                       help="Smaller ε, more noise in every histogram cell, more protection.")
epsilon = math.inf if exact else float(eps_value)
eps_label = "∞" if exact else f"{eps_value:g}"
delta = 1e-6
if release_kind == "gaussian_histogram":
    delta = delta_exponent(key="coh_delta_exp", value=-6, min_exp=-12, max_exp=-3, container=sb)
coarsen = sb.toggle("Coarsen the clear release (binned features)", value=False, key="coh_coarsen",
                    bind="query-params", disabled=release_choice not in ("clear", "subsample"))
coarsen = bool(coarsen) and release_choice in ("clear", "subsample")
needs_features = release_kind in co.HISTOGRAM_KINDS or coarsen or release_choice == "column_subset"
binned_release = release_kind in co.HISTOGRAM_KINDS or coarsen
bins = sb.slider("Bins for numeric features", 2, 20, 10, key="coh_bins", bind="query-params",
                 disabled=not binned_release, help="Used by the histogram releases and the coarsened clear release.")
feat_default = [c for c in SYN_FEATURES if c in lens] if census_like else _default_features(df, lens, bins)
if data_changed:
    st.session_state["coh_features"] = feat_default
features = sb.multiselect("Released features (⊆ lens)", lens, default=feat_default, key="coh_features",
                          bind="query-params", disabled=not needs_features,
                          help="Which lens columns the binned/DP release publishes.")
k_max = max(10, n_labelled // 2)
if data_changed:
    st.session_state["coh_k"] = min(500, k_max)
elif st.session_state.get("coh_k", 10) > k_max:  # e.g. a link's k larger than half these data
    st.session_state["coh_k"] = k_max
sub_k = sb.number_input("Subsample size k", 10, k_max, min(500, k_max), step=10, key="coh_k", bind="query-params",
                        disabled=release_kind != "subsample")
learner_kind = choice("Learner", LEARNERS, key="coh_learner", container=sb)
output = choice("Output", OUTPUTS, key="coh_output", widget="radio", container=sb, horizontal=True,
                help="Hard: the predicted class (±1). Soft: a graded score, 2 × (probability of the other value) − 1.")
with sb.expander("Advanced"):
    trees = st.slider("Trees (random forest)", 10, 200, 50, key="coh_trees", bind="query-params",
                      disabled=learner_kind != "random_forest")
reps = sb.slider("Repetitions R", 5, 100, 20, key="coh_reps", bind="query-params")
alpha = sb.slider("α (largest W1 tolerated)", 0.0, 2.0, 0.20, step=0.01, key="coh_alpha", bind="query-params")
beta_label = sb.select_slider("β (theory: allowed failure probability)", list(BETA_OPTIONS), value="0.05",
                              key="coh_beta", bind="query-params")
beta = BETA_OPTIONS[beta_label]

if lens_note:
    st.info(lens_note)
if not lens:
    st.warning("Choose at least one lens feature (the columns the predictor sees) in the sidebar.")
    st.stop()
if not groups:
    st.warning("Choose at least one group in the sidebar.")
    st.stop()
if needs_features and not features:
    st.warning("Choose at least one released feature (the lens columns this release publishes) in the sidebar.")
    st.stop()

release = co.ReleaseSpec(
    kind=release_kind, epsilon=epsilon, subsample_size=int(sub_k), binned=coarsen,
    features=tuple(features) if needs_features and features else None, bins=int(bins), delta=float(delta),
)
learner = co.LearnerSpec(kind=learner_kind, output=output, n_estimators=int(trees))
config = co.ExperimentConfig(label=label, sensitive_value=sensitive, lens=tuple(lens), groups=tuple(groups),
                             release=release, learner=learner, repetitions=int(reps), rng=int(seed))
preview_config = replace(config, repetitions=1)

prepared, err = _prepared(data_key, preview_config, df)
if err:
    st.warning(f"These settings cannot be run: {md_escape(err, max_len=300)}")
    st.stop()
n = prepared.n
gamma = float(gamma_in) if gamma_mode == "members" else float(gamma_in) / 100.0 * n
if gamma > n:
    st.warning(f"γ = {gamma:,.0f} is larger than the dataset (n = {n:,}): no group can be kept.")
coll_names = ct.collection(prepared.group_sizes, gamma)
in_coll = {nm: nm in coll_names for nm in prepared.group_sizes}
n_groups = max(1, len(coll_names))  # |𝒞*| for the theorems

# ------------------------------------------------------------------------------------------ data summary
# The data and group details fold away under a one-line summary, so the open tab's verdict is near the top.
n_kept = sum(in_coll.values())
with st.expander(f"Data and groups: {n:,} labelled rows, {n_kept} of {len(in_coll)} groups kept "
                 f"(at least γ = {gamma:,.0f} members)", icon=":material/groups:"):
    dropped_note = f" — {prepared.n_dropped:,} rows without a label were dropped." if prepared.n_dropped else ""
    st.caption(data_title + dropped_note)
    cells = _cells(prepared)
    if needs_features and cells:
        st.caption(f"Released features: {', '.join(md_escape(c, max_len=60) for c in prepared.features)} — "
                   f"{cells:,} histogram cells (with the label). "
                   "Bin edges and categories come from the whole dataset and are treated as public.")
    if release_kind == "dp_histogram" and math.isfinite(epsilon):
        st.info(
            f"ε-DP release (ε = {eps_label}): the released half is turned into a histogram over the released features "
            "and the label; Laplace noise of scale 2/ε is added to every cell, because replacing one record changes "
            "two counts; negative counts become 0; n/2 synthetic records are drawn from it. Bin edges and categories "
            "are treated as public. The release ignores record order, so Theorem 7 applies."
        )
    elif release_kind == "gaussian_histogram" and math.isfinite(epsilon):
        st.info(
            f"(ε, δ)-DP release (ε = {eps_label}, δ = {delta:.0e}): as the ε-DP histogram, with Gaussian noise "
            f"calibrated for L2 sensitivity √2 (σ = {co.gaussian_histogram_sigma(epsilon=epsilon, delta=delta):.3g}). "
            "Theorem 8 applies only when ε ≤ 0.5 and δ is small enough (see Theory)."
        )
    gt = pd.DataFrame({
        "group": list(prepared.group_sizes),
        "members": list(prepared.group_sizes.values()),
        "share": [s / n for s in prepared.group_sizes.values()],
        "kept (at least γ members)": ["yes" if in_coll[g] else "no: fewer than γ members"
                                 for g in prepared.group_sizes],
    })
    st.dataframe(gt.style.format({"share": "{:.1%}", "members": "{:,}"}).apply(
        lambda r: ["color: #999" if r["kept (at least γ members)"] != "yes" else "" for _ in r], axis=1),
        hide_index=True, width="stretch", key="coh_group_table")
    st.caption(f"n = {n:,} labelled rows; γ = {gamma:,.0f}: smaller groups are left out — with few members, random "
               "splitting alone creates large distances.")
if release_kind in co.HISTOGRAM_KINDS and not math.isfinite(epsilon):
    st.warning(
        "Exact histogram (no noise): the released half is turned into a histogram over the released features and "
        "the label **without noise**, and n/2 synthetic records are drawn from it. This is **not DP** and no "
        "theorem applies: it shows what coarsening alone does. Turn off \"No noise\" for a DP release."
    )
for note in cv.small_group_warnings(prepared.group_sizes, in_coll, alpha=alpha):
    st.warning(md_escape(note, max_len=500))
if (soft_note := cv.soft_output_note(learner_kind, output)) is not None:
    st.info(soft_note)

with st.expander("Build a group (conditions joined by AND)"):
    bc1, bc2 = st.columns(2)
    b_name = bc1.text_input("Group name", key="coh_b_name", max_chars=cl.MAX_TEXT)
    b_col = bc2.selectbox("Column", list(df.columns), key="coh_b_col")
    b_mode = st.radio("Condition", ["is one of", "in range [low, high)"], key="coh_b_mode", horizontal=True)
    cond = None
    if b_mode == "is one of":
        all_vals = {_fmt_value(v) for v in df[b_col].dropna().unique().tolist()}
        vals = sorted(all_vals, key=str)[:200]
        if (many := cv.builder_column_warning(b_col, len(all_vals), len(df))) is not None:
            st.warning(md_escape(many, max_len=400))
        b_vals = st.multiselect("Values", vals, key="coh_b_vals")
        if b_vals:
            cond = co.Condition(b_col, values=tuple(b_vals))
    else:
        rc1, rc2 = st.columns(2)
        lo = rc1.text_input("low (blank = no lower bound)", key="coh_b_low")
        hi = rc2.text_input("high (blank = no upper bound)", key="coh_b_high")
        cond, range_problem = cl.range_condition(b_col, lo, hi)
        if range_problem:
            st.warning(f"{range_problem[0].upper()}{range_problem[1:]}.")
    pending = st.session_state.setdefault("coh_pending_conditions", [])
    ac1, ac2, ac3 = st.columns(3)
    if ac1.button("AND another condition", key="coh_b_and", disabled=cond is None):
        pending.append(cond)
    if ac2.button("Add group", key="coh_b_add", disabled=cond is None and not pending):
        conds = tuple(pending + ([cond] if cond is not None else []))
        name = b_name.strip() or " & ".join(_condition_words(c) for c in conds)
        name = name if len(name) <= cl.MAX_TEXT else name[: cl.MAX_TEXT - 1] + "…"
        try:
            co.group_masks(df, [co.GroupSpec(name, conds)])
            if name in prepared.group_sizes or any(g.name == name for g in custom):
                st.error(f"A group named {md_quote(name)} already exists.")
            elif len(groups) >= MAX_GROUPS:
                st.error(f"At most {MAX_GROUPS} groups.")
            elif (link_problem := cl.parse_built_groups(
                    cl.groups_to_json(custom + [co.GroupSpec(name, conds)])).problem) is not None:
                # Only groups a shared link can carry are added (a link must restore them).
                st.warning(f"This group cannot be added: {md_escape(link_problem, max_len=300)}.")
            else:
                custom.append(co.GroupSpec(name, conds))
                pending.clear()
                _write_built_groups(custom)
                st.rerun()
        except ValueError as exc:
            st.error(md_escape(exc, max_len=300))
    if ac3.button("Clear built groups", key="coh_b_clear"):
        custom.clear()
        pending.clear()
        _write_built_groups(custom)
        st.rerun()
    if pending:
        st.caption("Pending conditions: " + "; ".join(md_escape(_condition_words(c), max_len=120) for c in pending))

# ------------------------------------------------------------------------------------------ tabs
# Bound to the URL (coh_tab) so a presenter's link opens the tab it was copied on; a switch reruns the page. Only
# the open tab computes and draws its results (ui/tabs.py); a closed tab that was open earlier, or whose controls
# the link names, draws its controls only, so the link keeps them.
TAB_LABELS = ["Single split (preview)", "Repeated runs", "W1 vs ε", "Theory", "Section 7: a provably safe release"]
TAB_KEYS = [{"coh_view", "coh_ecdf"}, set(), set(), {"coh_hyp_eps", "coh_table1"},
            {"coh_sec7", "coh_bit_col", "coh_s7_curator"}]
TAB_PREV, TAB_RUNS, TAB_SWEEP, TAB_THEORY, TAB_S7 = lazy_tabs(TAB_LABELS, key="coh_tab", link_keys=TAB_KEYS,
                                                              by_prefix=False, state_key="coh__drawn_tabs")
data_spec = ({"source": "synthetic", "n": int(n_pop), "seed": int(seed)} if source == "synthetic" else
             {"source": "shared", "name": ds.name} if source == "shared" else {"source": "upload"})
settings_words = {
    "Data": data_title, "Label (sensitive value)": f"{label} ({sensitive})", "Lens": ", ".join(lens),
    "Release": RELEASES[release_choice] + ("" if release_kind not in co.HISTOGRAM_KINDS else
                                           f" (ε = {eps_label}" + (f", δ = {delta:g})" if release_kind ==
                                                                    "gaussian_histogram" else ")")),
    "Learner": f"{LEARNERS[learner_kind]}, {OUTPUTS[output]} output", "α (largest W1 tolerated)": cv.alpha_text(alpha),
    "γ (smallest group kept)": f"{gamma:,.0f}", "Seed": str(seed),
}


def _artefacts(tab: str, *, question: str, headlines: list, verdicts: list[str], figures: list, script=None,
               eps: float | None = None, delta_: float | None = None) -> None:
    """Report, settings and "Copy as code" for the open tab (ui.dossier, issue 15)."""
    artefacts(PageSummary(
        page="coherence_explorer", title="Coherence explorer", question=question, params=dict(settings_words),
        headlines=[Headline(*h) for h in headlines], verdicts=verdicts, figures=figures,
        sources=["seeds/000_f379639b976c7ffb.txt (Enforcing Demographic Coherence): §4.2 Figure 1, Def. 3–5, "
                 "§5, Theorem 7 (Eq. 12, erratum E1), Theorems 9 and 11",
                 "specs/coherence_explorer.md §3.3 (failure-rate estimate, split-noise floor)"],
        epsilon=eps if eps is not None and math.isfinite(eps) else None, delta=delta_, seed=int(seed),
        script=script), key=f"coh_art_{tab}")


@st.fragment
def _prediction_view(trial, prepared, view_opts, smallest, draw: bool) -> None:
    """Plot 1 with its own controls: a change redraws only this part (no refit)."""
    vc1, vc2 = st.columns([2, 1])
    view = vc1.selectbox("Group to inspect", view_opts, index=view_opts.index(smallest) if smallest else 0,
                         key="coh_view", bind="query-params")
    ecdf = vc2.toggle("Distribution functions", value=False, key="coh_ecdf", bind="query-params",
                      help="Show the two halves' distribution functions instead: the shaded area between them is W1.")
    if not draw or trial is None:
        return
    mask = prepared.masks[view]
    pa = trial.predictions_a[mask[trial.idx_a]]
    pb = trial.predictions_b[mask[trial.idx_b]]
    fig1 = cf.make_predictions_figure(pa, pb, group=view, mode="ecdf" if ecdf else "sorted")
    _show(fig1, key="coh_fig_predictions", filename="coherence_predictions.html",
          caption="Each line is one half's predictions for this group, sorted. Lines on top of each other: the "
                  "predictor treats released and held-out members alike. A gap: it recognises who was in the "
                  "release (seed Figure 3).")


# --- preview
if TAB_PREV.drawn:
    with TAB_PREV.container:
        names = [g.name for g in groups]
        sizes = [prepared.group_sizes[nm] for nm in names]
        view_opts = [nm for nm in names if sizes[names.index(nm)] >= 2]
        smallest = min((nm for nm in view_opts if in_coll[nm]), key=lambda g: prepared.group_sizes[g],
                       default=view_opts[0] if view_opts else None)
        if not TAB_PREV.open:
            _prediction_view(None, prepared, view_opts, smallest, draw=False)
        else:
            trial, perr, preview_s = _preview(data_key, preview_config, df)
            if perr:
                st.warning(f"These settings cannot be run: {md_escape(perr, max_len=300)}")
            else:
                prev_text = cv.preview_verdict(names=names, sizes=sizes, w1=trial.w1,
                                               frac_negative=trial.frac_negative,
                                               in_collection=[in_coll[nm] for nm in names], alpha=alpha,
                                               output=output)
                _verdict(prev_text, bad=any(in_coll[nm] and trial.w1[j] > alpha for j, nm in enumerate(names)))
                st.caption(f"One random split: repetition 0 of a run with seed {seed}. W1 runs from 0 (both halves "
                           "get the same mix of predictions) to 2 (opposite ones).")
                _prediction_view(trial, prepared, view_opts, smallest, draw=True)
                fig2 = cf.make_group_w1_figure(names, sizes, trial.w1, [in_coll[nm] for nm in names], alpha=alpha)
                _show(fig2, key="coh_fig_groups", filename="coherence_w1_per_group.html",
                      caption="Bars above the α line mark groups this split would count as a failure. Overall "
                              "averages can hide harm to a small group.")
                st.caption(f"Preview computed in {preview_s:.2f} s (seed {seed}).")
                _artefacts("preview", question="Does a predictor trained on this release treat the released people "
                                               "differently from similar held-out people, on one random split?",
                           headlines=[(f"W1, {nm}", cv.w1_text(trial.w1[j]), f"{sizes[j]:,} members")
                                      for j, nm in enumerate(names)],
                           verdicts=[prev_text], figures=[(cf.alt_text(fig2), fig2)],
                           script=sc_script.runs_script(repo_root=str(ROOT), data=data_spec, config=preview_config,
                                                        alpha=alpha, gamma=gamma, repetitions=1),
                           eps=epsilon if release_kind in co.HISTOGRAM_KINDS else None,
                           delta_=delta if release_kind == "gaussian_histogram" else None)


# --- repeated runs
def _result_key():
    return (data_key, config)


if TAB_RUNS.open:
    with TAB_RUNS.container:
        stored = st.session_state.get("coh_result")
        verdict_slot = st.empty()  # the verdict, first, once a result is known
        st.markdown(
            f"Run the experiment **R = {reps}** times with fresh random splits (seed {seed}; repetition 0 is the "
            "preview). Each run's largest W1 over the kept groups is compared with α."
        )
        _, perr, preview_s = _preview(data_key, preview_config, df)
        est_s, est_words = _estimate(int(reps), preview_s, f"{reps} runs")
        if not perr:
            st.caption(est_words)
        confirm_needed = source == "upload" and not perr and est_s > 300
        ok_long = st.checkbox("Yes, run the long experiment", key="coh_confirm_long") if confirm_needed else True
        cluster.show_where(CORES)
        if st.button("Run experiment", key="coh_run", type="primary", disabled=bool(perr) or not ok_long):
            bar = st.progress(0.0, text="Running repetitions…")
            try:
                where = _where_words()
                t0 = time.perf_counter()
                res = _experiment(data_key, config, df, progress=lambda d, t: bar.progress(
                    d / t, text=ci.time_left_words(d, t, time.perf_counter() - t0)))
                _remember_rate(res.elapsed_s, res.w1.shape[0])
                bar.progress(1.0, text="Computing the split-noise floor…")
                floor = _floor(data_key, config, df)
                stored = (_result_key(), res, floor, where)
                st.session_state["coh_result"] = stored
                if release_choice == "clear" and not coarsen:
                    st.session_state["coh_clear_means"] = (data_key, label, {
                        nm: float(np.nanmean(res.w1[:, j])) for j, nm in enumerate(res.group_names)})
            except ValueError as exc:
                st.warning(f"The experiment could not run: {md_escape(exc, max_len=300)}")
            bar.empty()
        if stored is None:
            with verdict_slot:
                st.info("Press **Run experiment** to repeat the split R times and estimate how often the test fails.")
        else:
            key, res, floor, where = stored
            if key != _result_key():
                st.warning("Settings changed — press Run to update. The results below are for the previous "
                           "settings.")
            if not any(res.in_collection(gamma)):
                st.warning("No group of the stored result has γ or more members: lower γ.")
            else:
                try:
                    est = co.beta_hat(res, alpha, gamma)
                except ValueError as exc:
                    est = None
                    st.warning(md_escape(exc, max_len=300))
                runs_text = None
                if est is not None:
                    runs_text = cv.runs_verdict(res, alpha=alpha, gamma=gamma, estimate=est, floor=floor)
                    with verdict_slot.container():
                        _verdict(runs_text, bad=est.failures > 0)
                m1, m2, m3 = st.columns(3)
                if est is not None:
                    m1.metric("Runs failing at α", f"{est.failures}/{est.runs}",
                              help="Runs in which at least one kept group had W1 above α: the estimated failure "
                                   "rate β̂(α).")
                    m2.metric("95% interval", f"[{est.lower:.3f}, {est.upper:.3f}]",
                              help="Clopper–Pearson interval for the failure rate, from R runs.")
                m3.metric("Run time", f"{res.elapsed_s:.1f} s", help=f"Seed {res.config.rng}, on {where}")
                st.caption(f"{res.w1.shape[0]} repetitions, seed {res.config.rng}; run r uses its own random "
                           "stream (SeedSequence(seed).spawn(R)[r]), so any run can be reproduced alone.")
                with methodology():
                    st.markdown(
                        "**Reading the failure rate.** It describes one learner on one dataset, so it is a *lower "
                        "bound* on the worst case: a rate well above β shows the release is **not** (α, β)-coherence "
                        "enforcing; a rate of about 0 proves nothing; rates below about 1/R = "
                        f"{1 / res.w1.shape[0]:.2f} cannot be resolved. *Chance alone*: W1 of a predictor fitted on "
                        "everyone (so it cannot know the split), over 200 random splits."
                    )
                fig3 = cf.make_sorted_w1_figure(res, gamma=gamma, alpha=alpha, estimate=est)
                _show(fig3, key="coh_fig_sorted", filename="coherence_sorted_w1.html",
                      caption="Each line sorts one group's W1 over the runs (seed Figure 2). The share of runs whose "
                              "largest W1 lies above the α line is the failure rate.")
                fig4 = cf.make_failure_rate_figure(res, gamma=gamma, alpha=alpha, beta_theory=beta)
                _show(fig4, key="coh_fig_failure", filename="coherence_failure_rate.html",
                      caption="How often the test fails for each tolerance α; the band shows the statistical "
                              "uncertainty from using only R runs.")
                summ = co.summarize(res, gamma)
                g7 = None
                if res.config.release.kind == "dp_histogram" and math.isfinite(res.config.release.epsilon):
                    g7 = mi.gamma_pure(res.config.release.epsilon, res.n, max(alpha, 0.01), beta,
                                       max(1, sum(res.in_collection(gamma)))).gamma
                fig5 = cf.make_size_w1_figure(summ, gamma=gamma, gamma_theorem7=g7)
                _show(fig5, key="coh_fig_size", filename="coherence_size_vs_w1.html",
                      caption="Smaller groups have larger distances, partly from the split alone (chance) and "
                              "partly from the predictor singling them out.")
                people = cv.summary_for_people(summ, floor)
                # On screen the columns a reader needs, with short headers; the CSV keeps every column.
                num = st.column_config.NumberColumn
                st.dataframe(people, hide_index=True, width="stretch", key="coh_summary_table",
                             column_order=["group", "members", "mean W1 over runs", "largest W1",
                                           "share flagged, released half", "share flagged, held-out half",
                                           "W1 from chance alone (mean)"],
                             column_config={
                                 "members": num("members", format="localized"),
                                 "mean W1 over runs": num("mean W1", format="%.2f"),
                                 "largest W1": num("largest W1", format="%.2f"),
                                 "share flagged, released half": num("flagged, released", format="percent"),
                                 "share flagged, held-out half": num("flagged, held out", format="percent"),
                                 "W1 from chance alone (mean)": num("W1 by chance", format="%.2f")})
                e1, e2, e3 = st.columns(3)
                with e1:
                    download_csv(cv.runs_for_people(res.w1_table()), filename="coherence_w1_per_run.csv",
                                 key="coh_dl_w1")
                with e2:
                    download_csv(people, filename="coherence_summary.csv", key="coh_dl_summary",
                                 label="Download summary (CSV)")
                with e3:
                    download_json({"data": list(data_key), "config": asdict(res.config), "alpha": alpha,
                                   "gamma": gamma, "beta": beta, "n": res.n, "n_dropped": res.n_dropped},
                                  filename="coherence_parameters.json", key="coh_dl_params")
                # the script reads the page's current data: offered only while the result is for the same data
                script = sc_script.runs_script(repo_root=str(ROOT), data=data_spec, config=res.config,
                                               alpha=alpha, gamma=gamma) if key[0] == data_key else None
                headlines = [(f"Mean W1, {r['group']}", cv.w1_text(r["mean W1 over runs"]),
                              f"{r['members']:,} members, chance alone "
                              f"{cv.w1_text(r['W1 from chance alone (mean)'])}") for _, r in people.iterrows()]
                if est is not None:
                    headlines.insert(0, ("Runs failing at α", f"{est.failures}/{est.runs}",
                                         f"95% interval [{est.lower:.3f}, {est.upper:.3f}]"))
                _artefacts("runs", question="How often does a predictor trained on this release treat a group's "
                                            "released members differently from held-out ones, over R random splits?",
                           headlines=headlines, verdicts=[runs_text] if runs_text else [],
                           figures=[(cf.alt_text(fig3), fig3), (cf.alt_text(fig4), fig4)], script=script,
                           eps=res.config.release.epsilon if res.config.release.kind in co.HISTOGRAM_KINDS else None,
                           delta_=res.config.release.delta if res.config.release.kind == "gaussian_histogram"
                           else None)

# --- ε sweep
if TAB_SWEEP.open:
    with TAB_SWEEP.container:
        if release_kind not in co.HISTOGRAM_KINDS:
            st.info("This tab compares DP histogram releases at several ε. Choose an ε-DP or (ε, δ)-DP histogram "
                    "release in the sidebar to use it.")
        else:
            sweep_reps = min(int(reps), 10)
            verdict_slot = st.empty()
            noise = ("Laplace noise of scale 2/ε to every cell, because replacing one record changes two counts"
                     if release_kind == "dp_histogram" else
                     f"Gaussian noise (L2 sensitivity √2, δ = {delta:.0e}) to every cell")
            st.markdown(f"ε ∈ {{0.1, 0.3, 1, 3, 10, ∞}}, {sweep_reps} repetitions each, the same splits for every "
                        f"ε (seed {seed}). The DP release adds {noise}; negative counts become 0; n/2 synthetic "
                        "records are drawn. At ε = ∞ no noise is added: an exact histogram, not DP.")
            _, perr, preview_s = _preview(data_key, preview_config, df)
            if not perr:
                n_sweep = len(ct.SWEEP_EPSILONS) * sweep_reps
                st.caption(_estimate(n_sweep, preview_s, f"{n_sweep} runs ({len(ct.SWEEP_EPSILONS)} ε × "
                                                         f"{sweep_reps})")[1])
            cluster.show_where(CORES)
            if st.button("Run ε sweep", key="coh_sweep_run"):
                bar = st.progress(0.0, text="Sweeping ε…")
                scfg = replace(config, repetitions=sweep_reps)
                try:
                    t0 = time.perf_counter()
                    sw = _sweep(data_key, scfg, df, progress=lambda d, t: bar.progress(
                        d / t, text=ci.time_left_words(d, t, time.perf_counter() - t0)))
                    fl = _floor(data_key, scfg, df)
                    st.session_state["coh_sweep"] = ((data_key, scfg), sw, fl)
                except ValueError as exc:
                    st.warning(f"The ε sweep could not run: {md_escape(exc, max_len=300)}")
                bar.empty()
            stored = st.session_state.get("coh_sweep")
            if stored is None:
                with verdict_slot:
                    st.info("Press **Run ε sweep** to see how the distances shrink as noise grows.")
            else:
                (skey, sw, fl) = stored
                sweep_text = cv.sweep_verdict(sw, alpha=alpha, floor=fl)
                with verdict_slot.container():
                    _verdict(sweep_text)
                if skey != (data_key, replace(config, repetitions=sweep_reps)):
                    st.warning("Settings changed — press Run ε sweep to update.")
                cm = st.session_state.get("coh_clear_means")
                clear_means = cm[2] if cm and cm[0] == data_key and cm[1] == label else None
                fig6 = cf.make_sweep_figure(sw, clear_means=clear_means, floor=fl)
                _show(fig6, key="coh_fig_sweep", filename="coherence_w1_vs_epsilon.html",
                      caption="Moving left (smaller ε, more noise) the distances fall to the grey band — what "
                              "random splitting alone produces. At ∞ the release is an exact histogram: not DP.")
                download_csv(cv.sweep_for_people(co.sweep_for_export(sw)), filename="coherence_epsilon_sweep.csv",
                             key="coh_dl_sweep")
                script_reps = min(sc_script.SCRIPT_SWEEP_REPS, skey[1].repetitions)
                same_data = skey[0] == data_key  # the script reads the page's current data: only for the same data
                if same_data:
                    st.caption(f"The script below recomputes the first {script_reps} of the {skey[1].repetitions} "
                               "runs at each ε, to stay quick: its means are those of these runs, not of all of "
                               "them. Raise R in it to get the chart's means exactly.")
                _artefacts("sweep", question="How does the difference between released and held-out members shrink "
                                             "as the DP release adds more noise (smaller ε)?",
                           headlines=[(f"Mean W1 at ε = {'∞' if math.isinf(r.epsilon) else f'{r.epsilon:g}'}, "
                                       f"{r.group}", cv.w1_text(r.mean_w1)) for r in sw.itertuples()],
                           verdicts=[sweep_text], figures=[(cf.alt_text(fig6), fig6)],
                           script=sc_script.sweep_script(repo_root=str(ROOT), data=data_spec, config=skey[1],
                                                         epsilons=ct.SWEEP_EPSILONS, repetitions=script_reps)
                           if same_data else None,
                           delta_=skey[1].release.delta if skey[1].release.kind == "gaussian_histogram" else None)


# --- theory
@st.fragment
def _theory_panel(full: bool = True) -> None:
    """Theory panel (spec §7.4): analytic, redraws alone when its own controls move; ``full=False`` draws only
    its controls (the tab is closed but its controls are in the link)."""
    dp_release = release_kind in co.HISTOGRAM_KINDS and math.isfinite(epsilon)
    verdict_slot = st.empty()
    if dp_release and release_kind == "gaussian_histogram":
        eps_t = epsilon
        st.markdown(f"Using the release's ε = {eps_t:g}. This release is (ε, δ)-DP, not ε-DP: **Theorem 8** is "
                    "the one that can apply to it (see below); Theorem 7's γ is shown for comparison only, as if "
                    "the release were ε-DP.")
    elif dp_release:  # the release's ε replaces the hypothetical-ε control, which does not apply
        eps_t = epsilon
        st.markdown(f"Using the release's ε = {eps_t:g}.")
    else:
        st.markdown("This release is not DP; below: a hypothetical ε-DP release.")
        eps_t = log_slider("Hypothetical ε (theory)", key="coh_hyp_eps", min_value=1e-4, max_value=1.0,
                           value=0.01)
    show_table1 = st.toggle("Paper's Table 1 (n = 5·10⁶, β = e⁻³⁰, |𝒞| = 100, γ = 0.05n)", key="coh_table1",
                            bind="query-params")
    if not full:
        return
    # one engine result for the cards, the table, the verdict and the "Copy as code" script
    th = ct.theory_numbers(epsilon=eps_t, n=n, alpha=alpha, beta=beta, group_sizes=prepared.group_sizes, gamma=gamma)
    a_t, sc, meets, smallest_c = th.alpha, th.thm7, th.meets, th.smallest
    e_p, e_a = th.eps_pure, th.eps_approx
    if smallest_c is not None:
        m_s = prepared.group_sizes[smallest_c]
    theory_text = cv.theory_verdict(
        gamma_required=sc.gamma, n=n, epsilon=eps_t, meets=meets, kept=len(coll_names),
        dp_release=dp_release and release_kind == "dp_histogram", alpha=a_t,
        smallest=(smallest_c, prepared.group_sizes[smallest_c]) if smallest_c is not None else None,
        eps_for_smallest=e_p)
    with verdict_slot.container():
        _verdict(theory_text)
    with methodology():
        st.markdown(
            "**Theorem 7**: an ε-DP release that ignores record order keeps every group of ≥ γ members coherent "
            "within α, except with probability β. γ is sufficient, not necessary, and often vacuous at small n. "
            "**Theorem 8** does the same for (ε, δ)-DP with ε ≤ 0.5 and a tiny δ; **Theorem 9** for one yes/no "
            "column published in the clear (see the Section 7 tab)."
        )
    t1, t2, t3, t4 = st.columns(4)
    # rounded up, as in the verdict: a group needs at least this many members
    t1.metric("Theorem 7: γ required", f"{math.ceil(sc.gamma):,}",
              help=f"Members a group needs. Binding term: {mi.TERM_LABELS[sc.binding_term]}")
    t2.metric("Groups that meet it", f"{meets} of {len(coll_names)}")
    if math.isfinite(th.thm8_gamma):
        t3.metric("Theorem 8: γ for (ε, δ)-DP", f"{th.thm8_gamma:,.0f}",
                  help=f"Needs δ ≤ {mi.delta_max_approx(eps_t, n, beta, n_groups):.3g}")
    else:
        t3.metric("Theorem 8: γ for (ε, δ)-DP", "—", help="Theorem 8 needs ε ≤ 0.5.")
    t4.metric("Theorem 9: γ (one yes/no column)", f"{th.thm9_gamma:,.0f}")
    st.caption(f"ε = {eps_t:g}, n = {n:,}, kept groups |𝒞*| = {n_groups}, α = {a_t:.2f}, β = {beta:.3g}. "
               f"Theorem 7's γ is set by the term {mi.TERM_LABELS[sc.binding_term]}"
               + (" (the max-information part ζ dominates)." if sc.binding_term in (0, 2) else
                  " (it does not depend on ε: even ε → 0 needs this many members).")
               + (f" The theorems need α ≥ 0.01 here: at α = {cv.alpha_text(alpha)} they are shown at α = 0.01."
                  if alpha < 0.01 else ""))
    if sc.vacuous:
        st.warning(f"Vacuous: γ = {sc.gamma:,.0f} exceeds n = {n:,}; the theorem protects no group here. Lower ε "
                   "or raise α to get a guarantee.")
    if smallest_c is not None:
        dm = th.delta_for_approx
        st.markdown(
            f"Largest ε certified for the smallest kept group (**{md_escape(smallest_c)}**, {m_s:,} members) "
            f"at α = {a_t:.2f}: "
            + (f"pure ε ≤ **{e_p:.4g}** (Theorem 7)" if math.isfinite(e_p) else "no pure ε (infeasible)")
            + "; "
            + (f"approximate ε ≤ **{e_a:.4g}** with δ ≤ {dm:.3g} (Theorem 8)" if math.isfinite(e_a)
               else "no approximate ε (infeasible)")
            + ". Without order invariance, double ε in γ and halve δ (footnote 15)."
        )
        if release_kind == "gaussian_histogram" and math.isfinite(epsilon):
            if epsilon <= 0.5:
                dmx = mi.delta_max_approx(epsilon, n, beta, n_groups)
                st.caption(f"Theorem 8 needs δ ≤ {dmx:.3g}; this release uses δ = {delta:.0e}"
                           + (" — the theorem does not apply." if delta > dmx else "."))
            else:
                st.caption("Theorem 8 needs ε ≤ 0.5; it does not apply to this release.")
    am = pd.DataFrame({"group": list(th.kept), "members": list(th.sizes),
                       "smallest α certified (Thm 7)": [_alpha_text(a) for a in th.alpha_min]})
    st.dataframe(am, hide_index=True, width="stretch", key="coh_alpha_min_table")
    fig7 = cf.make_theory_figure(n=n, alpha=a_t, beta=beta, n_groups=n_groups, epsilon=eps_t,
                                 group_sizes={g: prepared.group_sizes[g] for g in coll_names})
    _show(fig7, key="coh_fig_theory", filename="coherence_theory.html",
          caption="A group is protected by the theorem at the ε where its horizontal line lies above the curve. "
                  "Above the black line (n) the guarantee is vacuous.")
    fig7b = cf.make_terms_figure(sc)
    _show(fig7b, key="coh_fig_terms", filename="coherence_gamma_terms.html",
          caption="γ is the largest of five terms (Theorem 3, Eq. 2); the highlighted one sets it.")
    if show_table1:
        N, B, G = 5e6, math.exp(-30), 100
        rows = []
        for a_, e_ in ((0.1, 0.003), (0.2, 0.01), (0.3, 0.02), (0.4, 0.025), (0.8, 0.056), (0.9, 0.065),
                       (1.3, 0.09), (1.4, 0.1)):
            rows.append({"α": a_, "ε printed in the paper": e_,
                         "γ required at that ε": mi.gamma_pure(e_, N, a_, B, G).gamma,
                         "γ target 0.05n": 0.05 * N,
                         "largest ε (Thm 7)": mi.eps_max(N, a_, B, G, 0.05 * N),
                         "largest ε (Thm 8)": mi.eps_max(N, a_, B, G, 0.05 * N, kind="approx")})
        t1 = pd.DataFrame(rows)
        st.dataframe(t1, hide_index=True, width="stretch", key="coh_table1_df")
        ok_rows = int((t1["γ required at that ε"] <= 0.05 * N).sum())
        st.caption(f"Only the printed ε are copied from the paper; everything else is computed here. {ok_rows} of "
                   f"{len(t1)} printed ε need at most 0.05n members, i.e. satisfy Theorem 7 (with the corrected "
                   "Eq. 12, erratum E1).")
    _artefacts("theory", question="Which groups does a theorem protect at this ε, and what ε would protect the "
                                  "smallest one?",
               headlines=[("Theorem 7: γ required", f"{sc.gamma:,.0f}", f"at ε = {eps_t:g}, α = {a_t:.2f}"),
                          ("Groups that meet it", f"{meets} of {len(coll_names)}")],
               verdicts=[theory_text], figures=[(cf.alt_text(fig7), fig7)],
               script=sc_script.theory_script(repo_root=str(ROOT), data=data_spec, config=preview_config,
                                              epsilon=eps_t, alpha=alpha, beta=beta, gamma=gamma),
               eps=eps_t if dp_release else None)  # a hypothetical ε is no privacy statement about this release


if TAB_THEORY.drawn:
    with TAB_THEORY.container:
        _theory_panel(TAB_THEORY.open)

# --- Section 7
if TAB_S7.drawn:
    with TAB_S7.container:
        s7_slot = st.empty()
        with methodology():
            st.markdown(
                "One yes/no column released in the clear is not DP, yet provably coherent: a predictor seeing only "
                "that column gives one score to 'yes' and one to 'no', and splitting puts nearly equal shares of "
                "each in both halves (Theorem 9). Publishing only the *count* of ones is also coherent, for any "
                "lens, but needs far larger groups (Theorem 11: γ = "
                f"{mi.gamma_count(n, max(alpha, 0.01), beta, n_groups):,.0f}, an asymptotic bound)."
            )
        show7 = st.toggle("Show the Section 7 demonstration (1,000 random splits)", key="coh_sec7",
                          bind="query-params")
        if not show7:
            with s7_slot:
                st.info("Turn on the demonstration below to see a release that is not DP yet provably keeps every "
                        "large enough group coherent.")
        else:
            binary_cols = [c for c in df.columns if df[c].nunique(dropna=True) == 2 and c != label]
            if not binary_cols:
                st.info("The data have no yes/no column besides the label.")
            elif not coll_names:
                st.info("No group has γ or more members; lower γ to see the demonstration.")
            else:
                sc1, sc2 = st.columns(2)
                bit_col = sc1.selectbox("Released yes/no column", binary_cols, key="coh_bit_col",
                                        bind="query-params")
                curator = choice("Curator publishes", CURATORS, key="coh_s7_curator", widget="radio",
                                 container=sc2, horizontal=True)
                res7 = None
                if TAB_S7.open:
                    vals = sorted({_fmt_value(v) for v in df[bit_col].dropna().unique()}, key=str)
                    s7_groups = tuple(g for g in groups if g.name in coll_names)
                    try:
                        res7 = _single_column(data_key, bit_col, vals[-1], s7_groups, int(seed), float(beta), label,
                                              curator, df)
                    except ValueError as exc:
                        st.warning(f"The demonstration could not run: {md_escape(exc, max_len=300)}")
                if res7 is not None:
                    s7_text = cv.section7_verdict(res7, column=bit_col, curator=curator)
                    with s7_slot.container():
                        _verdict(s7_text)
                    if curator == "count":
                        st.caption("The learner sees only how many ones the released half holds and swaps its two "
                                   "scores when that is more than half: the distances are the same as for the "
                                   "column, but Theorem 11's bound (for a predictor seeing every column) is far "
                                   "weaker, often above 2.")
                    fig8 = cf.make_single_column_figure(
                        res7, title=None if curator == "column" else
                        "Only the count of ones published: W1 over random splits (bar = Theorem 11 bound)")
                    _show(fig8, key="coh_fig_sec7", filename="coherence_section7.html",
                          caption="Boxes: W1 of the one-bit predictor over 1,000 splits; bars: the paper's bound, "
                                  "exceeded in at most a share β of splits.")
                    shares = ", ".join(f"{md_escape(nm)} {x:.3f}" for nm, x in
                                       zip(res7.group_names, res7.exceed_fraction))
                    st.caption(f"Theorem 9 at α = {max(alpha, 0.01):.2f}: γ = "
                               f"{mi.gamma_single_column(n, max(alpha, 0.01), beta, n_groups):,.0f} members. "
                               f"Share of splits above the bound: {shares} (seed {seed}).")
                    _artefacts("s7", question="Does publishing one yes/no column in the clear keep every group "
                                              "coherent?",
                               headlines=[(f"Largest W1, {nm}", cv.w1_text(np.nanmax(res7.w1[:, j])),
                                           f"bound {cv.w1_text(res7.bound[j])}")
                                          for j, nm in enumerate(res7.group_names)],
                               verdicts=[s7_text], figures=[(cf.alt_text(fig8), fig8)],
                               script=sc_script.section7_script(
                                   repo_root=str(ROOT), data=data_spec, label=label, column=bit_col,
                                   one_value=vals[-1], groups=s7_groups, seed=int(seed), beta=float(beta),
                                   curator=curator, reps=S7_REPS))

page_end()
