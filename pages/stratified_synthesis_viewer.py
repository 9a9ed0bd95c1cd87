"""Stratified synthesis viewer: one DP release per group (full ε each) against one global release.

Thin page: controls and data inputs here; each view renders one engine view (``dpdash.stratify.views``) in
``ui.views.stratified_mean`` and ``ui.views.stratified_synth``; the "Partially private release" mode is
``ui.views.partially_private``. Source: seed 004_c5ca305e20a1adba.txt (Rosenblatt, Stoyanovich & Musco,
arXiv 2312.11712); spec shared/specs/stratified_synthesis_viewer.md.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import streamlit as st

from dpdash.stratify import core as S
from dpdash.stratify import views as SV
from dpdash.common.data import ADULT_NUMERIC_DESIGN, SHARED_DESIGN_SOURCES, SHARED_NUMERIC_DESIGN
from ui import active_dataset, load_active_dataset, page_end, page_setup
from ui.show import table as results_table
from ui.links import accept_plain_number
from ui.text import md_escape
from ui.upload import csv_uploader
from ui.views.stratified_common import (ADULT_ATTRIBUTION, ALPHA_GRID, EPS_MAX, EPS_MIN, MODE_OPTIONS, N_GRID,
                                        PAPER, PUBLIC_SIZES, SMALL_ALPHA, SOURCE_HELP, SOURCE_OPTIONS, SYNTH_OPTIONS,
                                        TABLE_SOURCES, UPLOAD_MAX_BYTES, _thousands, c_adult_numeric, c_categorical,
                                        c_mixture_sizes, c_upload_table, num_label)
from ui.views.stratified_mean import render_mean
from ui.views.stratified_synth import render_synth
from ui.widgets import choice, log_slider, seed_input

page_setup("Stratified synthesis viewer", icon=":material/stacked_bar_chart:")

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
is_summary = False
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
    elif mode == "Synthetic data":
        # the synthetic view's rows; the mean view states its own count (the averaged column may miss more rows)
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
            # The product's one bounded reader (dpdash.common.data.read_uploaded_csv) through its widget, which shows
            # what is wrong with a bad file (escaped) and any reading notes.
            dataset = csv_uploader("Upload a CSV", key="sv_upload", max_bytes=UPLOAD_MAX_BYTES, max_rows=200_000,
                                   max_cols=30, missing_key="sv_na_missing")
            if dataset is not None:
                upload_digest = hashlib.sha256(st.session_state["sv_upload"].getvalue()).hexdigest()
                # the reading (missing-value codes) is part of the table's identity: a new reading re-derives
                upload_digest += "-na" if st.session_state.get("sv_na_missing") else ""
                upload_frame = dataset.frame
        st.caption("Columns with ≤ 50 distinct values are categories; other numeric columns are cut into 5 "
                   "equal-width bins, in every view — bin edges computed from the data are not protected. A row is "
                   "left out only when it misses a value the view needs (the averaged column or a group column; in "
                   "synthetic data a group or the label), and the page says how many.")
        is_summary = upload_frame is not None and set(S.SUMMARY_COLUMNS) <= set(upload_frame.columns)
        if is_summary:
            # A group summary (issue 24): sizes and clipped sums computed where the data live; the mean view
            # releases from them exactly as from the rows.
            st.caption("This file is a **group summary** (group, size, clipped sum, bounds): the mean view "
                       "releases from it exactly as from the rows it summarises. Synthetic data needs the rows.")
        elif upload_frame is not None:
            _column_choices(upload_frame, upload_digest, upload_schema_groups)


def upload_missing() -> str | None:
    """What the Upload source still lacks before any result can be shown, or None when the upload is usable.

    Issue 31: results are never shown for data the user did not give; until the file is usable the view shows
    only this (UCI Adult's results used to appear under the Upload heading).
    """
    if source != "Upload" or upload_table is not None or is_summary:
        return None
    if st.session_state.get("sv_upload") is None:
        return "No file yet: upload a CSV (a header row, one row per person) to see results for your data."
    if upload_frame is None:
        return "No results: the file above cannot be used (the message says why). Upload a corrected file."
    return "No results yet: pick at least one group column above for this file."


# ----------------------------------------------------------------------------------------------------------
# Mean estimation
# ----------------------------------------------------------------------------------------------------------

def summary_inputs() -> dict:
    """A group summary's sizes and sums, checked against the bounds the chosen R, γ and clipping need."""
    try:
        num, sizes = S.check_summary(upload_frame)
        need = S.summary_bounds(sizes, R=R, gamma=gamma, mode=clip_mode, min_frac=min_frac, small_strata=small)
    except ValueError as exc:
        st.error(f"This group summary cannot be used: {md_escape(exc, max_len=400)}")
        st.stop()
    have = {(int(gr), round(float(u), 9)) for gr, u in num[["group", "upper"]].itertuples(index=False)}
    lacking = need[[(int(gr), round(float(b), 9)) not in have for gr, b in need.itertuples(index=False)]]
    if estimator != "laplace" or len(lacking):
        why = ("Coinpress projects every row, so it needs the rows; choose the Laplace estimator."
               if estimator != "laplace" else
               f"{len(lacking)} of the clipped sums this release needs are missing: at R = {R:g}, γ = {gamma:g} "
               f"({clip_mode} clipping) each group's values are clipped at the bounds in the table below. "
               "Recompute the summary with them (dpdash.stratify.core.summarise_groups does it where the data live).")
        st.warning(why)
        if len(lacking):
            results_table(need.assign(lower=-need["bound"]).rename(columns={"bound": "upper"}), hide_index=True)
        st.stop()
    k_s = sizes.size
    raw = "sum" in num.columns
    # The OpenDP script runs on the rows the summary came from: their group column holds the codes 0..k-1.
    where = dict(data="your_data.csv", groups=["group"], value="value",
                 group_keys={"group": {"kind": "levels", "values": list(range(k_s)),
                                       "labels": [f"group {i}" for i in range(k_s)]}},
                 note="Point DATA at the rows your group summary came from: a 'group' column of the codes 0, 1, … "
                      "and a 'value' column, standardised as for the summary.")
    return dict(kind="summary", summary=num, sizes=sizes, labels=[f"group {i}" for i in range(k_s)], k=k_s,
                key=f"sum-{upload_digest}", name="Your group summary", opendp=where,
                note=f"Your group summary: {int(sizes.sum()):,} records in {int((sizes > 0).sum())} groups. Errors are "
                     + ("measured against the true means (its sum column)." if raw else
                        "measured against the means clipped at C(n): the summary has no unclipped sums."))


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
        # Simulated values: the OpenDP script is for the user's own rows with these groups (a "group" column
        # holding the names shown here, a "value" column).
        where = dict(data="your_data.csv", groups=["group"], value="value", group_keys={"group": {"kind": "text"}},
                     note="The page's values were simulated. Point DATA at your rows: a 'group' column holding the "
                          "group names below and a 'value' column, on the scale R was chosen for.")
        return dict(kind="sim", sizes=np.asarray(sizes), labels=labels, mu=mu, sigma=sigma, note=note, name=source,
                    opendp=where)
    if source == "Adult" or (source in TABLE_SOURCES and upload_table is None and not is_summary) \
            or source == "Categorical":
        if source == "Categorical":
            t = c_categorical(n, k, alpha, seed)
            x = t.df["y"].to_numpy(float)
            g = t.df["group"].to_numpy()
            labels = [f"G{i + 1}" for i in range(k)]
            note = (f"Simulated categorical table (n = {n:,}, k = {k}, α = {alpha:g}, seed {seed}): the estimated "
                    "mean is the share of y = 1 in each group.")
            key = f"cat-{n}-{k}-{alpha}-{seed}"
            where = dict(data="your_data.csv", groups=["group"], value="y",
                         group_keys={"group": {"kind": "levels", "values": list(range(k)), "labels": labels}},
                         note="The page's table was simulated. Point DATA at your rows: a 'group' column of codes "
                              "0, 1, … (shown as G1, G2, …) and a 0/1 column 'y'.")
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
            center, scale = ADULT_NUMERIC_DESIGN[col]
            where = dict(data="adult.csv", groups=["sex", "race"], value=col, center=center, scale=scale,
                         group_keys={"sex": {"kind": "text"}, "race": {"kind": "text"}},
                         note="UCI Adult (train and test files together, complete rows, values trimmed) as a CSV "
                              "with a header row.")
            if source in TABLE_SOURCES:
                note = "No usable table yet, so Adult is shown. " + note
        name = "Simulated categorical table" if source == "Categorical" else "UCI Adult"
        return dict(kind="data", x=x, g=g, labels=labels, note=note, key=key, k=len(labels), name=name,
                    opendp=where)
    if is_summary:
        return summary_inputs()
    # Upload with a table: a numeric column plus a public centre and scale. Only rows that miss the averaged
    # column or a group column are left out (issue 26 item 4), and the note says how many.
    groups = list(upload_table.group_cols)
    num_cols = SV.numeric_columns(upload_frame)
    if not num_cols:
        st.warning("Mean estimation needs a numeric column; this file has none. Upload a file with one, or use "
                   "the Synthetic data view.")
        st.stop()
    # A shared dataset's columns come with public design constants (engine.data.SHARED_NUMERIC_DESIGN); an
    # upload's centre and scale are the user's to give, since computing them from the rows would leak.
    shared = upload_digest.removeprefix("shared-") if source == "Shared dataset" else ""
    design = SHARED_NUMERIC_DESIGN.get(shared, {})
    default = SV.suggest_value_column(upload_frame, exclude=groups, prefer=tuple(design)) or num_cols[0]
    col = st.selectbox("Numeric column", num_cols, index=num_cols.index(default), key="sv_up_value",
                       bind="query-params", on_change=_public_design, args=(design,))
    c1, c2 = st.columns(2)
    centre0, scale0 = design.get(col, (0.0, 1.0))
    center = c1.number_input("Public centre (not computed from the data)", value=centre0, key="sv_up_center",
                             bind="query-params")
    scale = c2.number_input("Public scale", value=scale0, min_value=1e-9, key="sv_up_scale", bind="query-params")
    if col in design:
        st.caption(f"Public design constants for {col}: centre {design[col][0]:,g}, scale {design[col][1]:,g}, "
                   f"from {SHARED_DESIGN_SOURCES[shared]}, not computed from these rows.")
    what = "Your upload" if source == "Upload" else f"Shared dataset {upload_digest.removeprefix('shared-')}"
    # The rows used, the reason for every row left out and the one count sentence, computed once by the engine
    # view (issue 31 item 2); the strata by the uploads' one rule (a numeric column with more than 50 values is
    # cut into 5 bins), as in the synthetic-data view (issue 25).
    rows = SV.rows_used_view(upload_frame, value=col, groups=groups, what=what)
    frame, g_codes, g_labels = rows.tables["kept"], rows.figures["codes"], rows.figures["labels"]
    with np.errstate(over="ignore", invalid="ignore"):
        x = (frame[col].to_numpy(float) - center) / scale
    if not np.all(np.isfinite(x)):
        st.warning("With this public centre and scale the standardised values leave the range of floating-point "
                   "numbers. Choose a centre near the column's typical values and a scale near its spread.")
        st.stop()
    file = (f"{upload_digest.removeprefix('shared-')}.csv" if source == "Shared dataset" else
            Path(getattr(st.session_state.get("sv_upload"), "name", None) or "your_data.csv").name)
    where = dict(data=file, groups=groups, value=col, center=float(center), scale=float(scale),
                 group_keys=SV.opendp_group_keys(frame, groups))
    return dict(kind="data", x=x, g=g_codes, labels=g_labels, raw=frame[col].to_numpy(float), opendp=where,
                note=" ".join(rows.verdict_text), rows=rows, name=what,
                key=f"up-{upload_digest}-{col}-{center}-{scale}-{groups}", k=len(g_labels))



def _public_design(design: dict) -> None:
    """A newly chosen column of a shared dataset starts at its public centre and scale (an upload's keep theirs)."""
    col = st.session_state.get("sv_up_value")
    if col in design:
        st.session_state["sv_up_center"], st.session_state["sv_up_scale"] = design[col]


def settings(data_name: str) -> SimpleNamespace:
    """The control values every view reads (one object instead of module globals)."""
    return SimpleNamespace(
        eps=eps, paper_grid=paper_grid, alpha=alpha, k=k, n=n, reps=reps, min_frac=min_frac, small=small,
        estimator=estimator, R=R, gamma=gamma, clip_mode=clip_mode, tau=tau, sigma_mode=sigma_mode,
        weights_mode=weights_mode, holdout=holdout, eps_w=eps_w, parity_norm=parity_norm, seed=seed, source=source,
        synth=synth, data_name=data_name)


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
    if (missing := upload_missing()) is not None:
        slot.info(missing)
        return
    inp = mean_inputs()
    render_mean(slot, inp, settings(inp["name"]))


if mode == "Mean estimation":
    mean_view()
elif mode == "Synthetic data":
    if (missing := upload_missing()) is not None:
        st.info(missing)
    else:
        render_synth(settings(""), upload_table, upload_digest)
else:
    from ui.views.partially_private import render_partially_private_release  # imported when first shown
    render_partially_private_release()

st.divider()
st.caption(f"Source: {PAPER}, arXiv 2312.11712. {ADULT_ATTRIBUTION} Every random result is reproducible from the "
           "seed in the sidebar.")

page_end()
