"""Coherence explorer: would a predictor trained on a release treat the people in it differently?

Seed: "Enforcing Demographic Coherence" (seeds/000_f379639b976c7ffb.txt); spec:
specs/coherence_explorer.md §7. Thin page: widgets and layout; each results tab renders one engine view
(dpdash.coherence.views) from ui/views/coherence_<tab>.py.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from dpdash.coherence import core as co
from dpdash.coherence import inputs as ci
from dpdash.coherence import links as cl
from dpdash.coherence import tabs as ct
from dpdash.coherence import verdicts as cv
from dpdash.coherence import views as vw
from ui import load_active_dataset, page_end, page_setup
from ui.show import table as results_table
from ui.common import methodology
from ui.tabs import lazy_tabs
from ui.text import md_escape, md_quote
from ui.upload import missing_codes
from ui.views import coherence_common as cc
from ui.views import coherence_preview as tab_preview
from ui.views import coherence_runs as tab_runs
from ui.views import coherence_section7 as tab_s7
from ui.views import coherence_sweep as tab_sweep
from ui.views import coherence_theory as tab_theory
from ui.views.coherence_data import upload_source
from ui.widgets import choice, delta_exponent, log_slider, multi_choice, seed_input, token_for

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
#: Query parameter carrying the user-built groups (JSON), so a shared link restores them.
BUILT_PARAM = "coh_built"


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


def _least_frequent(s: pd.Series) -> str:
    vc = s.dropna().map(_fmt_value).value_counts()
    return str(vc.index[-1])


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
    df = cc.population(int(n_pop), int(seed))
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
            "and the columns a predictor may see. A blank cell is a missing value; `NA`, `N` and `None` are "
            "values (North, Namibia, no) unless **Read NA, N and None as missing** is ticked. If the file has the "
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
# The label, sensitive value, lens and groups chosen for each data source, so a detour (Data → Upload with no file →
# Synthetic, or to another source and back) restores them (issue 31; they were reset, and the groups emptied,
# because a control not drawn in a run loses its state).
_memory = st.session_state.setdefault("_coh_memory", {})
recall = dict(_memory.get(source_id, {}))


def _recalled(key: str, allowed) -> object | None:
    """The remembered choice for ``key`` on this data, if it is still allowed, when the control needs a value
    (new data, or its state lost while it was not drawn)."""
    if key not in recall or not (data_changed or key not in st.session_state):
        return None
    value = recall[key]
    if isinstance(value, list):
        value = [v for v in value if v in allowed]
        return value or None
    return value if value in allowed else None

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
if (back := _recalled("coh_label", labels)) is not None:
    st.session_state["coh_label"] = back
elif data_changed or st.session_state.get("coh_label", default_label) not in labels:
    st.session_state["coh_label"] = default_label
label = sb.selectbox("Label (what a predictor tries to guess)", labels, index=labels.index(default_label),
                     key="coh_label", bind="query-params")
label_values = [_fmt_value(v) for v in sorted(df[label].dropna().unique().tolist(), key=str)]
default_sv = "1" if (label == "DREM" and "1" in label_values) else _least_frequent(df[label])
prev_label = st.session_state.get("_coh_prev_label")
label_changed = prev_label is not None and prev_label != label and not data_changed
st.session_state["_coh_prev_label"] = label
if (back := _recalled("coh_sensitive", label_values)) is not None and recall.get("coh_label") == label:
    st.session_state["coh_sensitive"] = back
elif data_changed or label_changed or st.session_state.get("coh_sensitive", default_sv) not in label_values:
    st.session_state["coh_sensitive"] = default_sv
sensitive = sb.selectbox("Sensitive value (coded −1)", label_values, index=label_values.index(default_sv),
                         key="coh_sensitive", bind="query-params",
                         help="The value a harmful predictor would single out; default: the least frequent.")
lens_options = [c for c in df.columns if c != label]
default_lens, left_out = ci.default_lens(df, label, preferred=NIST_LENS if census_like else ())
lens_note = None
if (back := _recalled("coh_lens", [c for c in lens_options])) is not None:
    st.session_state["coh_lens"] = back
elif data_changed:
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
if (back := _recalled("coh_groups", group_options)) is not None:
    st.session_state["coh_groups"] = back
elif data_changed:
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
_memory[source_id] = {"coh_label": label, "coh_sensitive": sensitive, "coh_lens": list(lens),
                      "coh_groups": list(chosen)}
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

prepared, err = cc.prepared(data_key, preview_config, df)
if err:
    st.warning(f"These settings cannot be run: {md_escape(err, max_len=300)}")
    st.stop()
n = prepared.n
# The learner's trees are measured on one probe tree before any model of a preview or a run is built (issue 26).
fp = cc.footprint(data_key, preview_config, prepared)
many_levels = {c: k for c, k in ci.level_counts(df, lens).items() if k > co.MAX_LEVELS}
if (too_big := ci.footprint_problem(fp, many_levels=many_levels, rows=n)) is not None:
    st.warning(md_escape(too_big, max_len=1200))
    st.stop()
gamma = float(gamma_in) if gamma_mode == "members" else float(gamma_in) / 100.0 * n
if gamma > n:
    st.warning(f"γ = {cv.members_text(gamma)} is larger than the dataset (n = {n:,}): no group can be kept.")
coll_names = ct.collection(prepared.group_sizes, gamma)
in_coll = {nm: nm in coll_names for nm in prepared.group_sizes}
n_groups = max(1, len(coll_names))  # |𝒞*| for the theorems

# ------------------------------------------------------------------------------------------ data summary
# The data and group details fold away under a one-line summary, so the open tab's verdict is near the top.
n_kept = sum(in_coll.values())
with st.expander(f"Data and groups: {n:,} labelled rows, {n_kept} of {len(in_coll)} groups kept "
                 f"(at least γ = {cv.members_text(gamma)} members)", icon=":material/groups:"):
    dropped_note = f" — {prepared.n_dropped:,} rows without a label were dropped." if prepared.n_dropped else ""
    st.caption(data_title + dropped_note)
    cells = co.dp_domain_size(prepared.binned_levels) if prepared.binned_levels else None
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
    results_table(gt.style.format({"share": "{:.1%}", "members": "{:,}"}).apply(
        lambda r: ["color: #999" if r["kept (at least γ members)"] != "yes" else "" for _ in r], axis=1),
        hide_index=True, width="stretch", key="coh_group_table")
    st.caption(f"n = {n:,} labelled rows; γ = {cv.members_text(gamma)}: smaller groups are left out — with few "
               "members, random splitting alone creates large distances.")
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
# the link names, draws its controls only, so the link keeps them. Each tab renders one engine view
# (dpdash.coherence.views) from ui/views/coherence_<tab>.py.
TAB_LABELS = ["Single split (preview)", "Repeated runs", "W1 vs ε", "Theory", "Section 7: a provably safe release"]
TAB_KEYS = [tab_preview.KEYS, set(), set(), tab_theory.KEYS, tab_s7.KEYS]
TAB_PREV, TAB_RUNS, TAB_SWEEP, TAB_THEORY, TAB_S7 = lazy_tabs(TAB_LABELS, key="coh_tab", link_keys=TAB_KEYS,
                                                              by_prefix=False, state_key="coh__drawn_tabs")
ctx = cc.Ctx(
    df=df, data_key=data_key, source=source, seed=int(seed), label=label, config=config,
    data_spec=({"source": "synthetic", "n": int(n_pop), "seed": int(seed)} if source == "synthetic" else
               {"source": "shared", "name": ds.name} if source == "shared" else
               {"source": "upload", "missing_codes": missing_codes(st.session_state.get("coh_na_missing"))}),
    preview_config=preview_config, prepared=prepared, groups=groups, in_coll=in_coll, coll_names=coll_names, n=n,
    n_groups=n_groups, alpha=alpha, beta=beta, gamma=gamma, reps=int(reps), release_kind=release_kind,
    release_choice=release_choice, coarsen=coarsen, epsilon=epsilon, delta=delta, output=output, footprint=fp,
    many_levels=many_levels, params=vw.settings_words(
        data=data_title, label=label, sensitive=sensitive, lens=lens, seed=int(seed), alpha=alpha, gamma=gamma,
        release=RELEASES[release_choice] + ("" if release_kind not in co.HISTOGRAM_KINDS else f" (ε = {eps_label}"
                                           + (f", δ = {delta:g})" if release_kind == "gaussian_histogram" else ")")),
        learner=f"{LEARNERS[learner_kind]}, {OUTPUTS[output]} output"))
if TAB_PREV.drawn:
    with TAB_PREV.container:
        tab_preview.render(ctx, open_=TAB_PREV.open)
if TAB_RUNS.open:
    with TAB_RUNS.container:
        tab_runs.render(ctx)
if TAB_SWEEP.open:
    with TAB_SWEEP.container:
        tab_sweep.render(ctx)
if TAB_THEORY.drawn:
    with TAB_THEORY.container:
        tab_theory.render(ctx, TAB_THEORY.open)
if TAB_S7.drawn:
    with TAB_S7.container:
        tab_s7.render(ctx, open_=TAB_S7.open)

page_end()
