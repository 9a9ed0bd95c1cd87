"""Leximax cohort picker, tab "Cohort (paper)": leximax chances, what each group can expect, single draws.

Renders :func:`dpdash.sortition.views.cohort_view` (cards, verdict, warnings, tables, chart inputs, report, script
parameters) and :func:`dpdash.sortition.views.simulation_view` (single draws), plus the seeded, logged draw. Source:
[b] = Henzinger, Peale, Reingold, Shen, FORC 2022 (seed 003, second paper), §4 (Algorithms 1–2, Lemma 15),
App. C (dependent rounding), App. D (NP-hardness of integer cohorts).
"""

from __future__ import annotations

import hashlib
import math
from datetime import datetime, timezone

import numpy as np
import pandas as pd
import streamlit as st

from dpdash.sortition import core as lx
from dpdash.sortition import figures as lf
from dpdash.sortition import views as lxv
from dpdash.sortition import script as sl
from ui import common as uc
from ui.exports import download_csv
from ui.show import cards, figure, table, verdict_box
from ui.text import md_escape, md_quote
from ui.views.leximax_common import (artefacts, cached_figure, changed, digest, files_not_in_links,
                                     from_link, show_problem, upload_frame, volunteer_cached)
from ui.widgets import choice, log_slider, seed_input

#: Preset pools: token → (label, default k).
PRESETS = {"four_region": ("Four-region panel (6 candidates, 4 regions)", 3),
           "arbitration": ("Fair arbitration (2 candidates, 2 sides)", 1),
           "volunteers": ("Volunteer pool by membership (500 people)", 40)}
SOURCES_POOL = {"preset": "Preset", "random": "Random", "values": "Values CSV", "attributes": "Attributes CSV"}
MODES = {"exact": "Exact leximax", "slack": "Allow a slack ε", "custom": "Custom slack per level"}
SOLVERS = {"linprog": "scipy (HiGHS)", "cvxpy": "cvxpy (HiGHS)"}
SAMPLERS = {"dependent": "Exactly k (dependent rounding)", "independent": "Independent coins (k on average)"}
VIEWS = {"groups": "Each group", "sorted": "Worst-off first, all methods"}
RULES = {"membership": "Membership (1 if in the group)", "share": "Share (equalise representation ratios)",
         "partial": "Partial (share of conditions met)"}
GRIDS = {"0.1": "0.1", "0.01": "0.01"}
LIVE_NM = 5_000
LIVE_DRAWS_N = 2_000_000
MAX_VALUES_ROWS, MAX_VALUES_COLS = 5_000, 50
MAX_RESPONDENTS = 20_000
DRAW_CHOICES = [1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000]


@st.cache_data(max_entries=64, show_spinner=False)
def _solve_cached(V: np.ndarray, k: int, alpha: tuple | None, method: str) -> lx.LeximaxResult:
    return lx.leximax_marginals(V, k=k, alpha=None if alpha is None else list(alpha), method=method)


class SolveFailed(Exception):
    """An LP could not be solved; the tab shows a plain message instead of a traceback."""


def solve_cached(V: np.ndarray, k: int, alpha: tuple | None, method: str) -> lx.LeximaxResult:
    try:
        return _solve_cached(V, k, alpha, method)
    except RuntimeError as exc:
        raise SolveFailed(str(exc)) from None


@st.cache_data(max_entries=64, show_spinner=False)
def utilitarian_cached(V: np.ndarray, k: int):
    return lx.utilitarian_marginals(V, k=k)


@st.cache_data(max_entries=32, show_spinner=False)
def maxmin_cached(V: np.ndarray, k: int):
    return lx.maxmin_marginals(V, k=k)


@st.cache_data(max_entries=32, show_spinner=False)
def integer_cached(V: np.ndarray, k: int):
    return lx.integer_leximax_bruteforce(V, k=k)


@st.cache_data(max_entries=32, show_spinner=False)
def mc_cached(V: np.ndarray, x: np.ndarray, n_draws: int, seed: int, scheme: str, delta: float):
    return lx.monte_carlo(V, x, n_draws=n_draws, rng=seed, scheme=scheme, delta=delta)


@st.cache_data(max_entries=8, show_spinner=False)
def saturation_cached(V: np.ndarray, k: int):
    return lx.leximax_saturation(V, k=k)


@st.cache_data(max_entries=16, show_spinner=False)
def random_cached(n: int, m: int, grid: float, seed: int) -> np.ndarray:
    return lx.random_values(n, m, grid=grid, rng=seed)


def clamp_state(key: str, lo, hi) -> None:
    """Keep a control's value, clamped into its current range, when that range depends on the data.

    Written back on every run, not only when out of range: a slider whose bounds change is a new widget to
    Streamlit, which would otherwise fall back to its minimum while the page shows the old value (n 6 → 96 left
    the k slider at 5 but computed with k = 1).
    """
    v = st.session_state.get(key)
    if v is not None:
        st.session_state[key] = min(max(v, lo), hi)


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def _values_frame(pool: lx.Pool) -> pd.DataFrame:
    """One row per candidate: id and its value for each group (the drawn cohort's CSV when no attributes)."""
    df = pd.DataFrame(pool.values, columns=[f"value for {g}" for g in pool.group_names])
    df.insert(0, "candidate", list(pool.ids))
    return df


def _attributes_frame(df: pd.DataFrame, pool: lx.Pool, id_col: str | None) -> pd.DataFrame:
    """One row per candidate: id and the uploaded (or preset) attributes, in pool order."""
    out = df.drop(columns=[id_col]) if id_col else df.copy()
    out = out.reset_index(drop=True)
    out.insert(0, "candidate", list(pool.ids))
    return out


def pool_controls():
    """Pool source widgets → (Pool, description, attributes per candidate, engine code for the script) or Nones."""
    c1, c2 = st.columns([1, 2])
    source = choice("Pool source", SOURCES_POOL, key="lx_source", container=c1,
                    help="Where the candidates and their values for each group come from.")
    linked = from_link("lx_source", ("values", "attributes"))
    with c2:
        if source == "preset":
            name = choice("Preset", {t: lab for t, (lab, _k) in PRESETS.items()}, key="lx_preset")
            if changed("lx_preset"):
                st.session_state["lx_k"] = PRESETS[name][1]
            if name == "arbitration":
                pool = lx.Pool(("A-favoured", "B-favoured"), ("Group A", "Group B"), np.eye(2))
                return pool, "[b] §1.2: one candidate serves only group A, the other only group B.", \
                    _values_frame(pool), "np.eye(2)"
            if name == "four_region":
                pool = lx.Pool(tuple(f"c{i}" for i in range(1, 7)), ("G1", "G2", "G3", "G4"), lx.LX1_VALUES)
                return pool, "Six candidates, four regions (spec LX1).", _values_frame(pool), "lx.LX1_VALUES"
            people, _q = volunteer_cached()
            feats = [c for c in people.columns if c != "person_id"]
            pool = lx.pool_from_attributes(people, lx.groups_from_columns(people, feats), id_col="person_id")
            code = ("lx.pool_from_attributes(lx.volunteer_pool(), lx.groups_from_columns(lx.volunteer_pool(), "
                    f"{feats!r}), id_col='person_id').values")
            return pool, "Synthetic volunteer pool (500 people); one group per feature value; value 1 if a member.", \
                _attributes_frame(people, pool, "person_id"), code
        if source == "random":
            r1, r2, r3, r4 = st.columns(4)
            n = r1.slider("Candidates n", 5, 1_000, 30, key="lx_n", bind="query-params")
            m = r2.slider("Groups m", 2, 20, 4, key="lx_m", bind="query-params")
            grid = float(choice("Value grid", GRIDS, key="lx_grid", container=r3,
                                help="Values are rounded to this grid (coarser grids make ties)."))
            ps = seed_input(key="lx_pool_seed", label="Pool seed", container=r4)
            pool = lx.Pool(tuple(f"c{i + 1}" for i in range(n)), tuple(f"G{j + 1}" for j in range(m)),
                           random_cached(n, m, grid, ps))
            return pool, f"Random values on a {grid:g} grid, pool seed {ps}.", _values_frame(pool), \
                f"lx.random_values({n}, {m}, grid={grid!r}, rng={ps})"
        if source == "values":
            df = upload_frame("Values CSV (candidates × groups)", key="lx_values_csv", max_rows=MAX_VALUES_ROWS,
                              max_cols=MAX_VALUES_COLS + 1,
                              help="One row per candidate; an optional id column, then one numeric column per "
                                   "group with values in [0, 1]. At most 5,000 rows and 50 groups.")
            if df is None:
                if linked:
                    files_not_in_links("values file")
                st.info("Upload a CSV: an optional id column, then one numeric column per group (values 0–1).")
                return None, None, None, None
            text_cols = [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c])]
            opts = ["(none)"] + list(df.columns)
            idc = st.selectbox("Id column", opts, index=opts.index(text_cols[0]) if text_cols else 0,
                               key="lx_values_id", bind="query-params")
            rescale = st.checkbox("Rescale by the maximum", key="lx_rescale", bind="query-params")
            try:
                pool = lx.pool_from_values(df, id_col=None if idc == "(none)" else idc, rescale=rescale)
                return pool, "Uploaded values.", _values_frame(pool), None
            except ValueError as exc:
                show_problem("This file cannot be used:", exc)
                return None, None, None, None
        df = upload_frame("Attributes CSV (candidates × categories)", key="lx_attr_csv", max_rows=MAX_RESPONDENTS,
                          max_cols=40, as_text=True, help="One row per candidate: an id column and categorical columns "
                                            "(e.g. gender, region). Groups are built from column values.")
        if df is None:
            if linked:
                files_not_in_links("attributes file")
            st.info("Upload a CSV with an id column and categorical columns (e.g. gender, age band, region).")
            return None, None, None, None
        opts = ["(none)"] + list(df.columns)
        unique = [c for c in df.columns if not df[c].astype(str).str.strip().duplicated().any()]
        idc = st.selectbox("Id column", opts, index=opts.index(unique[0]) if unique else 0, key="lx_attr_id",
                           bind="query-params", help="One distinct value per candidate; “(none)” numbers them 1, 2, ….")
        if idc != "(none)" and df[idc].astype(str).str.strip().duplicated().any():
            # one column cannot be both the id and a grouping category
            st.warning(f"The id column {md_quote(idc)} repeats values, so it cannot identify candidates. Choose a "
                       "column with one unique value per candidate as the id, or “(none)”; categories such as "
                       "this one are for building groups.")
            return None, None, None, None
        cat = [c for c in df.columns if c != idc]
        cols = st.multiselect("Build one group per value of", cat, default=cat[: min(3, len(cat))],
                              key="lx_group_cols", bind="query-params")
        inter = st.text_input("Extra intersection groups (optional)", key="lx_intersections", bind="query-params",
                              placeholder="gender=F & age=young; region=north & age=65+",
                              help="Groups that need all conditions; separate groups with ';'.")
        rule = choice("Value of a candidate for a group", RULES, key="lx_rule",
                      help="Membership: 1 if the candidate is in the group. Share: 1/target share, so leximax "
                           "equalises representation ratios. Partial: share of the group's conditions met.")
        id_col = None if idc == "(none)" else idc
        try:
            groups = lx.groups_from_columns(df, cols) + lx.parse_intersections(inter)
            if not groups:
                st.warning("Choose at least one column to build groups from.")
                return None, None, None, None
            shares = None
            if rule == "share":
                base = lx.pool_from_attributes(df, groups, id_col=id_col)
                ed = st.data_editor(pd.DataFrame({"group": [g.name for g in groups],
                                                  "target share": np.round(base.values.mean(axis=0), 4)}),
                                    # keyed by the groups: edits of one group list never land on another's rows
                                    key="lx_shares_editor_" + digest([g.name for g in groups]),
                                    disabled=["group"], hide_index=True, placeholder="")  # blank, never "None"
                shares = ed["target share"].to_numpy(dtype=float)
            pool = lx.pool_from_attributes(df, groups, id_col=id_col, rule=rule, shares=shares)
            return pool, f"Uploaded attributes, value rule: {RULES[rule].split(' (')[0].lower()}.", \
                _attributes_frame(df, pool, id_col), None
        except ValueError as exc:
            show_problem("These groups cannot be built:", exc)
            return None, None, None, None


def cohort_tab():
    try:
        _cohort_tab()
    except SolveFailed as exc:
        st.error("The solver could not finish the leximax linear programs for these settings "
                 f"({md_escape(exc, max_len=300)}). Try the other solver, a different k, or a coarser value grid.")


@st.cache_data(max_entries=32, show_spinner=False)
def cohort_script_cached(V: np.ndarray, k: int, code: str | None, alpha: tuple | None) -> str:
    return sl.cohort_script(k=k, values_code=code, values=V if code is None else None,
                            alpha=None if alpha is None else list(alpha))


def _controls(n: int, m: int, heavy: bool):
    """k, fairness rule, sampler, slack and solver → (k, mode, sampler, ε, custom slack text, solver)."""
    if "lx_k" not in st.session_state:
        preset = st.session_state.get("lx_preset", "four_region")
        st.session_state["lx_k"] = PRESETS.get(preset, PRESETS["four_region"])[1] \
            if st.session_state.get("lx_source", "preset") == "preset" else 5
    clamp_state("lx_k", 1, n)
    c1, c2, c3 = st.columns(3)
    k = c1.slider("Cohort size k", 1, n, key="lx_k", bind="query-params",
                  on_change="ignore" if heavy else "rerun", help="Number of members to select.")
    mode = choice("Fairness rule", MODES, key="lx_mode", widget="radio", horizontal=True, container=c2,
                  help="Exact leximax, or allow a slack ε at every level so that tiny gains for a worse-off group "
                       "do not block large gains for the next.")
    sampler = choice("How a cohort is drawn", SAMPLERS, key="lx_sampler", container=c3,
                     help="Exactly k: Srinivasan's dependent rounding keeps every chance and always gives k members. "
                          "Independent coins: each candidate on their own coin, k members on average.")
    # in exact mode these do nothing but the solver choice: folded away, opened by the slack rules
    e1, e2, e3 = st.expander("Slack and solver", expanded=mode != "exact").columns(3)
    eps = log_slider("Slack ε per level", key="lx_eps", min_value=0.001, max_value=10.0, value=0.05, container=e1,
                     disabled=mode != "slack",
                     help="Used by “Allow a slack ε”: differences in a group's expected utility smaller than ε "
                          "count as insignificant.")
    alpha_text = e2.text_input("Custom slack per level (comma-separated)", key="lx_alpha", bind="query-params",
                               value=",".join(["0.05"] * m) if m <= 20 else "", disabled=mode != "custom",
                               help="Used by “Custom slack per level”: one slack per level, worst-off level first.")
    solver = choice("Solver", SOLVERS, key="lx_solver", container=e3,
                    help="Both use the open-source HiGHS solver: scipy linprog (fast, sparse) or cvxpy.")
    return k, mode, sampler, eps, alpha_text, solver


def _cohort_tab():
    pool, desc, attrs, code = pool_controls()
    if pool is None:
        return
    V = pool.values
    n, m = V.shape
    st.caption(f"{md_escape(desc, max_len=300)} **{n:,} candidates × {m} groups.**")
    heavy = n * m > LIVE_NM
    k, mode, sampler, eps, alpha_text, solver = _controls(n, m, heavy)
    if heavy:
        st.info(f"Large pool ({n:,} × {m}): press **Solve** after changing k (other controls apply at once).")
        if st.button("Solve", key="lx_solve_btn", type="primary"):
            st.session_state["lx_solved_for"] = (hashlib.sha256(V.tobytes()).hexdigest(), k)
        if st.session_state.get("lx_solved_for") != (hashlib.sha256(V.tobytes()).hexdigest(), k):
            st.caption("Not solved yet for these settings.")
            return
    verdict_area = st.container()       # the verdict goes first; drawn into this fragment's own container
    with st.spinner("Solving the leximax linear programs…") if heavy else _null():
        exact = solve_cached(V, k, None, solver)
    approx = None
    if mode == "slack":
        approx = solve_cached(V, k, (float(eps),) * m, solver)
    elif mode == "custom":
        try:
            approx = solve_cached(V, k, lx.parse_alpha(alpha_text, m=m), solver)
        except ValueError:
            st.warning(f"Custom slack needs {m} non-negative numbers separated by commas (one per level); got "
                       f"{md_quote(alpha_text, max_len=80)}. Showing exact leximax.")
    what = "leximax" if approx is None else {"slack": f"slack-ε (ε = {eps:g})", "custom": "custom-slack"}[mode]
    cards_area = st.container()         # cards and the solver's line, above the Compare control
    compare = choice("Compare", VIEWS, key="lx_view", widget="segmented")
    sorted_view = compare == "sorted"
    n_cohorts = math.comb(n, k)
    view = lxv.cohort_view(
        pool, k=k, exact=exact, approx=approx, what=what, utilitarian_x=utilitarian_cached(V, k),
        maxmin_x=maxmin_cached(V, k) if sorted_view else None, n_cohorts=n_cohorts if sorted_view else None,
        integer=integer_cached(V, k) if sorted_view and n_cohorts <= 200_000 else None, solver=SOLVERS[solver],
        values_code=code,
        params={"pool": desc, "candidates": f"{n:,}", "groups": str(m), "cohort size k": str(k),
                "fairness rule": MODES[mode], "slack ε": f"{eps:g}" if mode == "slack" else "not used",
                "how a cohort is drawn": SAMPLERS[sampler], "solver": SOLVERS[solver]})
    res = approx if approx is not None else exact
    for sec in view.sections[:-1]:      # groups nobody serves
        verdict_area.info(md_escape(" ".join(sec.lines), max_len=600))
    verdict_box(view.verdicts, verdict_area)
    cards(view.headlines, cards_area, columns=3)     # 5 in a row cut "✓ verified" in presenter mode at 1280 px
    cards_area.caption(view.sections[-1].lines[0])      # numbers and our solver names only
    fg = view.figures
    g1, g2 = st.columns(2)
    with g1:
        if not sorted_view:
            series = fg["series"]
            fig_groups = cached_figure("groups", lambda: lf.make_group_bar_figure(pool.group_names, series),
                                       pool.group_names, *series.keys(), *series.values())
            alt_groups, cap = fg["groups_alt"], fg["groups_caption"]
        else:
            profiles = fg["profiles"]
            fig_groups = cached_figure("profiles", lambda: lf.make_profile_figure(profiles), *profiles.keys(),
                                       *profiles.values())
            alt_groups, cap = fg["profiles_alt"], fg["profiles_caption"]
        figure(fig_groups, key="lx_fig_groups", filename="leximax_groups.html", caption=cap, alt=alt_groups)
    with g2:
        fig_marg = cached_figure("chances", lambda: lf.make_marginals_figure(pool.ids, fg["x"], k), pool.ids,
                                 fg["x"], k)
        figure(fig_marg, key="lx_fig_marginals", filename="leximax_chances.html", alt=fg["chances_alt"],
               caption=fg["chances_caption"])
    d1, d2 = st.columns(2)
    with d1:
        download_csv(view.tables["chances"], filename="leximax_chances.csv", key="lx_dl_marginals",
                     label="Chances (CSV)")
    with d2:
        download_csv(view.tables["groups"], filename="leximax_group_utilities.csv", key="lx_dl_groups",
                     label="Group utilities (CSV)")
    with uc.methodology():
        label = {"exact": "exact leximax", "slack": f"slack ε = {eps:g} at every level (cumulative, erratum L5)",
                 "custom": "custom slack per level (cumulative)"}[mode if approx is not None else "exact"]
        st.markdown(f"**Rule: {label}.** " + METHOD_TEXT.format(k=k))
        table(view.tables["levels"], hide_index=True)
        download_csv(view.tables["levels"], filename="leximax_levels.csv", key="lx_dl_levels", label="Levels (CSV)")
        if st.button("Cross-check by another method (saturation)", key="lx_crosscheck",
                     help="Recompute the exact leximax utilities by an independent method (water-filling)."):
            diff = float(np.abs(saturation_cached(V, k) - exact.y).max())
            (st.success if diff <= 1e-6 else st.error)(
                f"Saturation method: largest difference in a group's utility = {diff:.2e} "
                f"({'agrees' if diff <= 1e-6 else 'DISAGREES'} within 10⁻⁶).")
    sim = simulation_section(pool, V, res, k, n, sampler)
    draw_section(pool, V, res, k, sampler, what, attrs)
    alpha = view.script["alpha"]
    artefacts(lxv.combine(view, sim), key="lx_art_cohort",
              figures=[(alt_groups, fig_groups), (fg["chances_alt"], fig_marg)],
              script=cohort_script_cached(V, k, code, None if alpha is None else tuple(alpha)))


METHOD_TEXT = (
    "A group's *utility* is the sum of its values over the cohort's members (with 0/1 membership values: its number "
    "of members, [b] §4.1). The chances come from the sequence of linear programs of [b] Algorithm 1, in the compact "
    "form of Ogryczak & Tamir (2003): level l makes the total of the l worst-off groups as large as possible without "
    "lowering the levels before it (minus the slack). The paper's Algorithm 2 then checks the result (✓ verified). "
    "With exact leximax, no other random selection of {k} members gives the worst-off group more in expectation and, "
    "subject to that, none does better for the second worst-off group, and so on; with a slack, each level may give "
    "up the slack for a worse-off group when that buys a larger gain for the next ([b] §3.2, Def 12). The group "
    "utilities are unique; the chances need not be (other chances may give the same group utilities).")


def simulation_section(pool, V, res, k, n, sampler):
    """Simulated single draws: how far below its expectation each group falls. Returns their view or None."""
    st.subheader("What a single draw gives each group")
    c1, c2, c3 = st.columns([2, 2, 1])
    n_draws = c1.select_slider("Number of simulated draws", DRAW_CHOICES, value=10_000, key="lx_draws",
                               bind="query-params")
    delta_frac = log_slider("Shortfall δ, as a share of the worst-off group's expectation", key="lx_delta",
                            min_value=0.01, max_value=1.0, value=0.1, container=c2,
                            help="A draw falls short for a group when it gets more than δ below its expected "
                                 "utility; the paper's bound (Lemma 15) is about this chance.")
    seed = seed_input(key="lx_seed", container=c3)
    y_min = float(res.y.min())
    delta = max(delta_frac * y_min, 1e-9)
    live = n_draws * n <= LIVE_DRAWS_N
    run_sim = live or st.button("Simulate", key="lx_simulate", type="primary")
    if not live and not run_sim:
        st.info(f"{n_draws:,} draws × {n:,} candidates is a large simulation: press **Simulate**.")
        return None
    with (st.status("Simulating draws…") if not live else _null()):
        mc = mc_cached(V, res.x, int(n_draws), int(seed), sampler, float(delta))
    sv = lxv.simulation_view(pool, mc, k=k, x=res.x, expected_min=y_min, n_draws=int(n_draws), seed=int(seed),
                             sampler=sampler, delta=float(delta))
    verdict_box(sv.verdicts)
    fig = cached_figure("draws", lambda: lf.make_realised_figure(mc.utilities, mc.expected, pool.group_names,
                                                                 delta=delta, hoeffding=mc.hoeffding_refined),
                        V, res.x, int(n_draws), int(seed), sampler, float(delta), pool.group_names)
    figure(fig, key="lx_fig_realised", filename="leximax_single_draws.html", alt=sv.figures["alt"],
           caption=sv.figures["caption"])
    with uc.methodology("How the draws are simulated"):
        st.markdown(md_escape(sv.sections[0].lines[0], max_len=1200))
        table(sv.tables["simulation"], hide_index=True)
        download_csv(sv.tables["simulation"], filename="leximax_simulation.csv", key="lx_dl_sim",
                     label="Simulation summary (CSV)")
    return sv


def draw_section(pool, V, res, k, sampler, what, attrs) -> None:
    """Draw one cohort (seeded, logged) and offer its members with their attributes, one row per member."""
    st.subheader("Draw a cohort")
    log = st.session_state.setdefault("lx_draw_log", [])
    seed = int(st.session_state.get("lx_seed", 0))
    chances_id = hashlib.sha256(res.x.tobytes() + V.tobytes() + sampler.encode()).hexdigest()[:10]
    if st.button("Draw a cohort", key="lx_draw", type="primary"):
        draw_seed = seed + len(log)
        members = (lx.dependent_round(res.x, rng=draw_seed) if sampler == "dependent"
                   else lx.sample_independent(res.x, n_draws=1, rng=draw_seed)[0])
        u = V.T @ members.astype(float)
        log.append({"time (UTC)": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S"), "seed": draw_seed,
                    "how drawn": SAMPLERS[sampler], "k": k, "chances": what, "chances id": chances_id,
                    "members": " ".join(np.asarray(pool.ids)[members]), "size": int(members.sum()),
                    **{f"utility for {g}": float(v) for g, v in zip(pool.group_names, u)}})
    if not log:
        st.caption(f"Each draw uses seed = page seed ({seed}) + number of earlier draws, so the log reproduces it.")
        return
    last = log[-1]
    if last.get("chances id") == chances_id:
        st.success(f"Drawn with seed **{last['seed']}** at {last['time (UTC)']} UTC: {last['size']} members.")
        ids = set(last["members"].split())
        members = attrs[attrs["candidate"].astype(str).isin(ids)].copy()
        members.insert(1, "chance of selection", res.x[members.index.to_numpy()])
        table(members, hide_index=True)
        download_csv(members, filename="leximax_drawn_cohort.csv", key="lx_dl_cohort",
                     label="Drawn cohort, one row per member (CSV)")
    else:   # drawn under other settings: the log keeps it, the page does not present it as this cohort's
        st.caption("The last cohort was drawn with other settings (pool, k, rule or drawing); it is in the log.")
    with st.expander(f"Draw log ({len(log)} draws)"):
        table(pd.DataFrame(log), hide_index=True)
        download_csv(pd.DataFrame(log), filename="leximax_draw_log.csv", key="lx_dl_log", label="Draw log (CSV)")
        st.caption("Each draw uses seed = page seed + number of earlier draws; re-running dependent rounding with "
                   "the logged seed reproduces the cohort exactly.")
