"""Leximax cohort picker: fair random selection of a cohort so that every group is served as well as possible.

Thin page: widgets → cached engine calls (engine/leximax.py) → figures (engine/leximax_figures.py).
Sources: Henzinger, Peale, Reingold, Shen, "Leximax Approximations and Representative Cohort Selection",
FORC 2022 (seed 003, second paper) and, for the quota tab, Flanigan et al., Nature 2021.
"""

from __future__ import annotations

import hashlib
import math
import time
from datetime import datetime, timezone
from fractions import Fraction

import numpy as np
import pandas as pd
import streamlit as st

from engine import leximax as lx
from engine import leximax_figures as lf
from ui import page_end, page_setup
from ui.charts import show_figure
from ui.exports import download_csv, download_json
from ui.tabs import lazy_tabs
from ui.text import md_escape, md_quote
from ui.upload import csv_uploader
from ui.widgets import seed_input

page_setup("Leximax cohort picker", icon=":material/groups:")

PAPER = "Henzinger, Peale, Reingold & Shen, *Leximax Approximations and Representative Cohort Selection* (FORC 2022)"
PRESETS = {"Four-region panel": 3, "Fair arbitration": 1, "Volunteer pool by membership": 40}
LIVE_NM = 5_000
LIVE_DRAWS_N = 2_000_000
MAX_VALUES_ROWS, MAX_VALUES_COLS = 5_000, 50
MAX_RESPONDENTS = 20_000
DRAW_CHOICES = [1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000]

st.title("Leximax cohort picker")
st.markdown(
    "Pick a cohort (committee, panel, study sample) from a pool so that **every group is served as well as "
    "possible: first the worst-off group, then the next worst-off, and so on** (*leximax*). The tool computes "
    "each candidate's chance of selection, draws cohorts of exactly *k* members with those chances, and shows "
    f"what a single draw really gives each group. Source: {PAPER}."
)


# ---------------------------------------------------------------------------------------------------------
# Cached engine calls
# ---------------------------------------------------------------------------------------------------------

@st.cache_data(max_entries=32, show_spinner=False)
def _solve_cached(V: np.ndarray, k: int, alpha: tuple | None, method: str) -> lx.LeximaxResult:
    return lx.leximax_marginals(V, k=k, alpha=None if alpha is None else list(alpha), method=method)


class SolveFailed(Exception):
    """An LP could not be solved; the tab shows a plain message instead of a traceback."""


def solve_cached(V: np.ndarray, k: int, alpha: tuple | None, method: str) -> lx.LeximaxResult:
    try:
        return _solve_cached(V, k, alpha, method)
    except RuntimeError as exc:
        raise SolveFailed(str(exc)) from None


@st.cache_data(max_entries=16, show_spinner=False)
def baselines_cached(V: np.ndarray, k: int):
    return lx.utilitarian_marginals(V, k=k), lx.maxmin_marginals(V, k=k)


@st.cache_data(max_entries=16, show_spinner=False)
def integer_cached(V: np.ndarray, k: int):
    return lx.integer_leximax_bruteforce(V, k=k)


@st.cache_data(max_entries=16, show_spinner=False)
def mc_cached(V: np.ndarray, x: np.ndarray, n_draws: int, seed: int, scheme: str, delta: float):
    return lx.monte_carlo(V, x, n_draws=n_draws, rng=seed, scheme=scheme, delta=delta)


@st.cache_data(max_entries=8, show_spinner=False)
def saturation_cached(V: np.ndarray, k: int):
    return lx.leximax_saturation(V, k=k)


@st.cache_data(max_entries=4, show_spinner=False)
def volunteer_cached():
    return lx.volunteer_pool(), lx.volunteer_quotas()


def random_values(n: int, m: int, grid: float, seed: int) -> np.ndarray:
    g = np.random.default_rng(seed)
    return np.round(g.random((n, m)) / grid) * grid


def upload_frame(label: str, *, key: str, max_rows: int, max_cols: int, help: str, min_rows: int = 2,
                 as_text: bool = False):
    """The product's one bounded reader (ui.upload → engine.data.read_uploaded_csv); None after a message."""
    ds = csv_uploader(label, key=key, max_rows=max_rows, max_cols=max_cols, min_rows=min_rows, help=help,
                      as_text=as_text)
    return None if ds is None else ds.frame


def show_problem(prefix: str, exc: object) -> None:
    """An engine or input error as a plain message; its text may quote uploaded or linked values: escaped."""
    st.error(f"{prefix} {md_escape(exc, max_len=600)}")


def _digest(obj) -> str:
    return hashlib.sha256(repr(obj).encode()).hexdigest()[:12]


def clamp_state(key: str, lo, hi) -> None:
    """Keep a control's value, clamped into its current range, when that range depends on the data.

    Written back on every run, not only when out of range: a slider whose bounds change is a new widget to
    Streamlit, which would otherwise fall back to its minimum while the page shows the old value (n 6 → 96 left
    the k slider at 5 but computed with k = 1).
    """
    v = st.session_state.get(key)
    if v is not None:
        st.session_state[key] = min(max(v, lo), hi)


# ---------------------------------------------------------------------------------------------------------
# Tab A: cohort (paper)
# ---------------------------------------------------------------------------------------------------------

def _set_preset_k():
    st.session_state["lx_k"] = PRESETS.get(st.session_state.get("lx_preset"), 3)


def pool_controls():
    """Pool source widgets → (Pool, description) or (None, None) after showing an error."""
    c1, c2 = st.columns([1, 2])
    source = c1.selectbox("Pool source", ["Preset", "Random", "Values CSV", "Attributes CSV"], key="lx_source",
                          bind="query-params", help="Where the candidates and their values for each group come "
                                                    "from.")
    with c2:
        if source == "Preset":
            name = st.selectbox("Preset", list(PRESETS), key="lx_preset", bind="query-params",
                                on_change=_set_preset_k)
            if name == "Fair arbitration":
                return lx.Pool(("A-favoured", "B-favoured"), ("Group A", "Group B"), np.eye(2)), \
                    "[b] §1.2: one cohort serves only group A, the other only group B."
            if name == "Four-region panel":
                return lx.Pool(tuple(f"c{i}" for i in range(1, 7)), ("G1", "G2", "G3", "G4"), lx.LX1_VALUES), \
                    "Six candidates, four regions (spec LX1)."
            pool, _q = volunteer_cached()
            feats = [c for c in pool.columns if c != "person_id"]
            groups = lx.groups_from_columns(pool, feats)
            return lx.pool_from_attributes(pool, groups, id_col="person_id"), \
                "Synthetic volunteer pool (500 people); one group per feature value; value 1 if a member."
        if source == "Random":
            r1, r2, r3, r4 = st.columns(4)
            n = r1.slider("Candidates n", 5, 1_000, 30, key="lx_n", bind="query-params")
            m = r2.slider("Groups m", 2, 20, 4, key="lx_m", bind="query-params")
            grid = r3.selectbox("Value grid", [0.1, 0.01], key="lx_grid", bind="query-params",
                                help="Values are rounded to this grid (coarser grids make ties).")
            ps = seed_input(key="lx_pool_seed", label="Pool seed", container=r4)
            return lx.Pool(tuple(f"c{i + 1}" for i in range(n)), tuple(f"G{j + 1}" for j in range(m)),
                           random_values(n, m, grid, ps)), f"Random values on a {grid} grid, seed {ps}."
        if source == "Values CSV":
            df = upload_frame("Values CSV (candidates × groups)", key="lx_values_csv", max_rows=MAX_VALUES_ROWS,
                              max_cols=MAX_VALUES_COLS + 1,
                              help="One row per candidate; an optional id column, then one numeric column per "
                                   "group with values in [0, 1]. At most 5,000 rows and 50 groups.")
            if df is None:
                st.info("Upload a CSV: an optional id column, then one numeric column per group (values 0–1).")
                return None, None
            text_cols = [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c])]
            opts = ["(none)"] + list(df.columns)
            idc = st.selectbox("Id column", opts, index=opts.index(text_cols[0]) if text_cols else 0,
                               key="lx_values_id", bind="query-params")
            rescale = st.checkbox("Rescale by the maximum", key="lx_rescale", bind="query-params")
            try:
                return lx.pool_from_values(df, id_col=None if idc == "(none)" else idc, rescale=rescale), \
                    "Uploaded values."
            except ValueError as exc:
                show_problem("This file cannot be used:", exc)
                return None, None
        df = upload_frame("Attributes CSV (candidates × categories)", key="lx_attr_csv", max_rows=MAX_RESPONDENTS,
                          max_cols=40, as_text=True, help="One row per candidate: an id column and categorical columns "
                                            "(e.g. gender, region). Groups are built from column values.")
        if df is None:
            st.info("Upload a CSV with an id column and categorical columns (e.g. gender, age band, region).")
            return None, None
        opts = ["(none)"] + list(df.columns)
        unique = [c for c in df.columns if not df[c].astype(str).str.strip().duplicated().any()]
        idc = st.selectbox("Id column", opts, index=opts.index(unique[0]) if unique else 0, key="lx_attr_id",
                           bind="query-params", help="One distinct value per candidate; “(none)” numbers them.")
        if idc != "(none)" and df[idc].astype(str).str.strip().duplicated().any():
            # one column cannot be both the id and a grouping category
            st.warning(f"The id column {md_quote(idc)} repeats values, so it cannot identify candidates. Choose a "
                       "column with one unique value per candidate as the id, or “(none)”; categories such as "
                       "this one are for building groups.")
            return None, None
        cat = [c for c in df.columns if c != idc]
        cols = st.multiselect("Build one group per value of", cat, default=cat[: min(3, len(cat))],
                              key="lx_group_cols", bind="query-params")
        inter = st.text_input("Extra intersection groups (optional)", key="lx_intersections", bind="query-params",
                              placeholder="gender=F & age=young; region=north & age=65+",
                              help="Groups that need all conditions; separate groups with ';'.")
        rule = st.selectbox("Value rule", ["membership", "share", "partial"], key="lx_rule", bind="query-params",
                            help="membership: 1 if the candidate is in the group. share: 1/target share, so "
                                 "leximax equalises representation ratios. partial: share of the group's "
                                 "conditions met.")
        try:
            groups = lx.groups_from_columns(df, cols) + lx.parse_intersections(inter)
            if not groups:
                st.warning("Choose at least one column to build groups from.")
                return None, None
            shares = None
            if rule == "share":
                base = lx.pool_from_attributes(df, groups, id_col=None if idc == "(none)" else idc)
                ed = st.data_editor(pd.DataFrame({"group": [g.name for g in groups],
                                                  "target share": np.round(base.values.mean(axis=0), 4)}),
                                    # keyed by the groups: edits of one group list never land on another's rows
                                    key="lx_shares_editor_" + _digest([g.name for g in groups]),
                                    disabled=["group"], hide_index=True)
                shares = ed["target share"].to_numpy(dtype=float)
            return lx.pool_from_attributes(df, groups, id_col=None if idc == "(none)" else idc, rule=rule,
                                           shares=shares), f"Uploaded attributes, rule '{rule}'."
        except ValueError as exc:
            show_problem("These groups cannot be built:", exc)
            return None, None


def cohort_tab():
    try:
        _cohort_tab()
    except SolveFailed as exc:
        st.error("The solver could not finish the leximax linear programs for these settings "
                 f"({md_escape(exc, max_len=300)}). Try the other solver, a different k, or a coarser value grid.")


def _cohort_tab():
    pool, desc = pool_controls()
    if pool is None:
        return
    V = pool.values
    n, m = V.shape
    st.caption(f"{desc} **{n} candidates × {m} groups.**")
    unserved = [g for g, col in zip(pool.group_names, V.T) if not col.any()]
    if unserved:
        st.info(f"{len(unserved)} group(s) have value 0 for every candidate, so no cohort can serve them: "
                + md_escape(", ".join(unserved[:10]), max_len=400) + ". Their expected utility is 0 whatever "
                "the choice; leximax then serves the other groups.")
    heavy = n * m > LIVE_NM
    c1, c2, c3, c4 = st.columns(4)
    if "lx_k" not in st.session_state:
        st.session_state["lx_k"] = min(PRESETS.get(st.session_state.get("lx_preset", "Four-region panel"), 5), n) \
            if st.session_state.get("lx_source", "Preset") == "Preset" else max(1, min(5, n))
    clamp_state("lx_k", 1, n)
    k = c1.slider("Cohort size k", 1, n, key="lx_k", bind="query-params",
                  on_change="ignore" if heavy else "rerun", help="Number of members to select.")
    mode = c2.radio("Mode", ["Exact", "ε-significant", "Custom α"], key="lx_mode", bind="query-params",
                    horizontal=True, help="Exact leximax, or allow a slack ε at every level so that tiny gains "
                                          "for a worse-off group do not block large gains for the next.")
    solver = c3.selectbox("Solver", ["linprog", "cvxpy"], key="lx_solver", bind="query-params",
                          help="Both use the open-source HiGHS solver: scipy linprog (fast, sparse) or cvxpy.")
    sampler = c4.selectbox("Sampler", ["dependent", "independent"], key="lx_sampler", bind="query-params",
                           help="dependent: exactly k members (Srinivasan's rounding). independent: each candidate "
                                "on its own coin, size k on average.")

    if heavy:
        st.info(f"Large pool ({n} × {m}): press **Solve** after changing k (other controls apply at once).")
        if st.button("Solve", key="lx_solve_btn", type="primary"):
            st.session_state["lx_solved_for"] = (hashlib.sha256(V.tobytes()).hexdigest(), k)
        if st.session_state.get("lx_solved_for") != (hashlib.sha256(V.tobytes()).hexdigest(), k):
            st.caption("Not solved yet for these settings.")
            return
    t0 = time.perf_counter()
    with st.spinner("Solving the leximax LPs…") if heavy else _null():
        exact = solve_cached(V, k, None, solver)
    ymax = float(exact.y.max()) if exact.y.max() > 0 else 1.0
    eps_max = max(0.001, round(0.5 * ymax, 3))
    if "lx_eps" not in st.session_state:
        st.session_state["lx_eps"] = min(0.05, eps_max)
    clamp_state("lx_eps", 0.0, eps_max)
    e1, e2, e3 = st.columns(3)
    eps = e1.slider("ε (slack per level)", 0.0, eps_max, step=eps_max / 100 if eps_max < 0.1
                    else 0.005, key="lx_eps", bind="query-params", format="%.4g",
                    help="Differences in a group's expected utility smaller than ε count as insignificant.")
    alpha_text = e2.text_input("Custom α (one slack per level, comma-separated)", key="lx_alpha",
                               bind="query-params", value=",".join(["0.05"] * m) if m <= 20 else "",
                               disabled=mode != "Custom α")
    delta_frac = e3.slider("δ for the tail bound (share of the smallest expected utility)", 0.01, 1.0, 0.1,
                           step=0.01, key="lx_delta", bind="query-params")
    approx = None
    if mode == "ε-significant":
        approx = solve_cached(V, k, (float(eps),) * m, solver)
    elif mode == "Custom α":
        try:
            approx = solve_cached(V, k, lx.parse_alpha(alpha_text, m=m), solver)
        except ValueError:
            st.warning(f"Custom α needs {m} non-negative numbers separated by commas (one per level); got "
                     f"{md_quote(alpha_text, max_len=80)}. Showing the exact solution.")
    res = approx if approx is not None else exact
    sig = approx if mode == "ε-significant" else solve_cached(V, k, (float(eps),) * m, solver)
    util_x, maxmin_x = baselines_cached(V, k)
    integer = integer_cached(V, k) if math.comb(n, k) <= 200_000 else None
    solve_s = time.perf_counter() - t0

    # cards
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Smallest expected utility", f"{res.y.min():.4g}")
    m2.metric("Verified (Algorithm 2)", "✓ verified" if res.verified else "✗ failed")
    m3.metric("Σx (expected size)", f"{res.x.sum():.6g}", help=f"must equal k = {k}")
    m4.metric("Solve time", f"{res.seconds:.2f} s", help=f"{res.lp_solves} LPs, {res.method}; page {solve_s:.2f} s")
    label = {"Exact": "leximax (exact)", "ε-significant": f"ε-significant (LP, cumulative slack), ε = {eps:g}",
             "Custom α": "custom slack α (LP, cumulative)"}[mode]
    y_min = float(res.y.min())
    if mode == "Exact":
        claim = (f"no other random selection of {k} members gives the worst-off group more in expectation, and "
                 "subject to that none does better for the second worst-off group, and so on")
    else:
        claim = ("at each level the guarantee may give up the allowed slack for a worse-off group when that buys "
                 "a larger gain for the next groups ([b] §3.2, Def 12; the LP uses a cumulative slack, erratum L5)")
    st.markdown(
        f"**What this means.** With these selection chances ({label}), the worst-off group can expect a utility of "
        f"**{y_min:.4g}**: {claim}. Utility of a group = sum of its values for the members ([b] §4.1, linear "
        "utility). Computed by the sequence of linear programs of [b] Algorithm 1, in the compact form of "
        "Ogryczak & Tamir (2003), and checked by the separation oracle of [b] Algorithm 2."
    )
    if integer is None:
        st.caption(f"Integer optimum skipped (NP-hard, [b] Lemma 20; C(n,k) = {math.comb(n, k):,} cohorts).")

    # F1, F2
    profiles = {"leximax (exact)": exact.y, f"ε-significant (ε={eps:g})": sig.y}
    if mode == "Custom α" and approx is not None:
        profiles["custom α"] = approx.y
    if integer is not None:
        profiles["integer optimum (best single cohort)"] = integer.utilities
    profiles["utilitarian (max total)"] = V.T @ util_x
    profiles["maxmin (LP₁ only)"] = V.T @ maxmin_x
    g1, g2 = st.columns(2)
    with g1:
        show_figure(lf.make_profile_figure(profiles), key="lx_fig_profiles", filename="leximax_profiles.html",
                    caption="Each line lists the groups' expected utilities from worst to best off. Leximax is "
                            "highest at the left end; the utilitarian choice maximises the total but can leave the "
                            "worst-off group lower; the best single cohort (integer) is a fixed choice, not a lottery.")
    with g2:
        show_figure(lf.make_group_bar_figure(pool.group_names, {label: res.y, "utilitarian": V.T @ util_x}),
                    key="lx_fig_groups", filename="leximax_groups.html",
                    caption="Expected utility of each group under the chosen selection chances.")
    g3, g4 = st.columns(2)
    with g3:
        show_figure(lf.make_marginals_figure(pool.ids, res.x, k), key="lx_fig_marginals",
                    filename="leximax_marginals.html",
                    caption=f"Chance of selection of each candidate; the chances add up to k = {k}.")
    with g4:
        show_figure(lf.make_gamma_figure(res.gammas, res.alpha), key="lx_fig_gamma", filename="leximax_gamma.html",
                    caption="γ*_l: how much the sum of the l smallest group utilities grows at level l.")
    gtab = pd.DataFrame({"level l": np.arange(1, m + 1), "γ*_l": res.gammas, "C_l (cumulative)": res.cumulative,
                         "slack α_l": res.alpha})
    st.dataframe(gtab, hide_index=True)
    marg = pd.DataFrame({"candidate": pool.ids, "probability": res.x})
    e1, e2, e3 = st.columns(3)
    with e1:
        download_csv(marg, filename="leximax_marginals.csv", key="lx_dl_marginals", label="Marginals (CSV)")
    with e2:
        download_csv(pd.DataFrame({"group": pool.group_names, "expected utility": res.y}),
                     filename="leximax_group_utilities.csv", key="lx_dl_groups", label="Group utilities (CSV)")
    with e3:
        download_csv(gtab, filename="leximax_levels.csv", key="lx_dl_levels", label="Levels γ* (CSV)")

    # Saturation cross-check
    if st.button("Cross-check (saturation)", key="lx_crosscheck",
                 help="Recompute the exact leximax utilities by an independent method (water-filling)."):
        sat = saturation_cached(V, k)
        diff = float(np.abs(sat - exact.y).max())
        (st.success if diff <= 1e-6 else st.error)(
            f"Saturation method: largest difference in a group's utility = {diff:.2e} "
            f"({'agrees' if diff <= 1e-6 else 'DISAGREES'} within 10⁻⁶).")

    # Simulation
    st.subheader("What a single draw gives each group")
    c1, c2 = st.columns([2, 1])
    n_draws = c1.select_slider("Number of simulated draws", DRAW_CHOICES, value=10_000, key="lx_draws",
                               bind="query-params")
    seed = seed_input(key="lx_seed", container=c2)
    delta = max(delta_frac * y_min, 1e-9)
    live = n_draws * n <= LIVE_DRAWS_N
    run_sim = live or st.button("Simulate", key="lx_simulate", type="primary")
    if not live and not run_sim:
        st.info(f"{n_draws:,} draws × {n} candidates is a large simulation: press **Simulate**.")
    if run_sim:
        with (st.status("Simulating draws…") if not live else _null()):
            mc = mc_cached(V, res.x, int(n_draws), int(seed), sampler, float(delta))
        worst = mc.utilities.min(axis=1)
        p_below = float((worst < y_min - 1e-12).mean())
        q05 = float(np.quantile(worst, 0.05))
        st.markdown(
            f"In expectation every group gets at least **{y_min:.4g}**. In **{100 * p_below:.1f}%** of draws the "
            f"worst-off group got less than that, and in 5% of draws it got less than **{q05:.4g}** "
            f"({sampler} sampling, {n_draws:,} draws, seed {seed}). [b] Lemma 15 bounds the chance that a group "
            f"falls more than δ = {delta:.3g} below its expectation by exp(−2δ²/n) = **{mc.hoeffding_paper:.3g}**; "
            f"the refined bound over the undecided candidates is at most **{mc.hoeffding_refined.max():.3g}**. "
            "For an arbitrary lottery over cohorts with the same expectations only a reverse-Markov bound is "
            "available (our reading of [b]'s '1/3', erratum L9)."
        )
        s1, s2 = st.columns([3, 2])
        with s1:
            show_figure(lf.make_realised_figure(mc.utilities, mc.expected, pool.group_names, delta=delta,
                                                hoeffding=mc.hoeffding_refined), key="lx_fig_realised",
                        filename="leximax_realised.html",
                        caption="For each group (worst-off first), the share of draws in which it got at most a "
                                "given utility. Dotted: its expected utility; dashed: expected − δ.")
        with s2:
            pmf = lx.poisson_binomial_pmf(res.x)
            ind = {int(s): float(p) for s, p in enumerate(pmf) if p > 1e-6}
            show_figure(lf.make_size_figure({"dependent (exactly k)": {k: 1.0}, "independent": ind}),
                        key="lx_fig_sizes", filename="leximax_sizes.html",
                        caption="Dependent rounding always gives k members; independent coins give k on average.")
        tail = pd.DataFrame({"group": pool.group_names, "expected y": mc.expected, "mean": mc.mean, "sd": mc.sd,
                             "5% quantile": mc.q05, "P(U < y − δ)": mc.empirical_tail,
                             "Hoeffding (paper)": mc.hoeffding_paper, "Hoeffding (refined)": mc.hoeffding_refined})
        st.dataframe(tail, hide_index=True)
        download_csv(tail, filename="leximax_simulation.csv", key="lx_dl_sim", label="Simulation summary (CSV)")

    # Draw a cohort (seeded, logged)
    st.subheader("Draw a cohort")
    log = st.session_state.setdefault("lx_draw_log", [])
    chances_id = hashlib.sha256(res.x.tobytes() + V.tobytes() + sampler.encode()).hexdigest()[:10]
    if st.button("Draw a cohort", key="lx_draw", type="primary"):
        draw_seed = int(seed) + len(log)
        members = (lx.dependent_round(res.x, rng=draw_seed) if sampler == "dependent"
                   else lx.sample_independent(res.x, n_draws=1, rng=draw_seed)[0])
        u = V.T @ members.astype(float)
        log.append({"time (UTC)": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S"), "seed": draw_seed,
                    "sampler": sampler, "k": k, "mode": label, "selection chances": chances_id,
                    "members": " ".join(np.asarray(pool.ids)[members]),
                    "size": int(members.sum()), **{f"u({g})": float(v) for g, v in zip(pool.group_names, u)}})
    if log:
        last = log[-1]
        if last.get("selection chances") == chances_id:
            st.success(f"Drawn with seed **{last['seed']}** at {last['time (UTC)']} UTC: "
                       f"{md_escape(last['members'], max_len=2_000)}")
        else:   # drawn under other settings: the log keeps it, the page does not present it as this cohort's
            st.caption("The last cohort was drawn with other settings (pool, k, mode or sampler); it is in the log.")
        st.dataframe(pd.DataFrame(log), hide_index=True)
        download_csv(pd.DataFrame(log), filename="leximax_draw_log.csv", key="lx_dl_log", label="Draw log (CSV)")
        st.caption("Each draw uses seed = page seed + number of earlier draws; re-running dependent_round with the "
                   "logged seed reproduces the cohort exactly.")
    download_json({"source": st.session_state.get("lx_source"), "preset": st.session_state.get("lx_preset"),
                   "n": n, "m": m, "k": k, "mode": mode, "epsilon": eps, "alpha": list(res.alpha), "solver": solver,
                   "sampler": sampler, "n_draws": n_draws, "seed": seed, "delta": delta,
                   "groups": list(pool.group_names)},
                  filename="leximax_parameters.json", key="lx_dl_params")


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


# ---------------------------------------------------------------------------------------------------------
# Tab B: finite-set explorer
# ---------------------------------------------------------------------------------------------------------

FS_PRESETS = {
    # [b] Example 5: U = [[0, 1], [0.01, 0.01]]
    "Example 5 (sensitivity)": ([["0", "1"], ["1/100", "1/100"]], None, 0.01),
    # [b] Example 8 at ε = 0.01: U = [[0, .5+6ε], [ε/2, .5+4ε], [ε, .5+2ε], [3ε/2, .5]]
    "Example 8 (no significant-tradeoff solution)": (
        [["0", "0.56"], ["0.005", "0.54"], ["0.01", "0.52"], ["0.015", "0.5"]], None, 0.01),
    # [b] Example 13 at ε = 0.01: u(S1) = (ε, 0.5), u(S2) = (0, 1)
    "Example 13 (significant recursive)": ([["0.01", "0.5"], ["0", "1"]], None, 0.01),
    # [b] Example 17 at ε = 0.01 (clean and noisy: S2's G1 value 0.1 + ε/100 → 0.1 − ε/100)
    "Example 17 (noise)": ([["0.1", "0.2"], ["0.1001", "0.8"], ["0.11", "0.2"]],
                           [["0.1", "0.2"], ["0.0999", "0.8"], ["0.11", "0.2"]], 0.01),
    "Five committees (LX6)": ([["0.30", "0.10", "0.08"], ["0.80", "0.90", "0.00"], ["0.04", "0.10", "0.08"],
                               ["0.30", "0.04", "0.50"], ["0.04", "0.70", "0.40"]], None, 0.05),
}


def _set_fs_eps():
    _u, noisy, eps = FS_PRESETS[st.session_state["lx_fs_preset"]]
    st.session_state["lx_fs_eps"] = eps
    st.session_state["lx_fs_noisy"] = noisy is not None


def _parse_matrix(df: pd.DataFrame, what: str):
    return lx.parse_utility_matrix(df.itertuples(index=False), what=what)


def finite_tab():
    st.markdown(
        "Compare the approximate notions of leximax from [b] §3 on a small list of candidate solutions (rows) "
        "and their utilities for each group (columns). Values can be decimals or fractions like 1/100; they are "
        "compared exactly."
    )
    c1, c2 = st.columns([2, 1])
    preset = c1.selectbox("Example", list(FS_PRESETS), index=4, key="lx_fs_preset", bind="query-params",
                          on_change=_set_fs_eps)
    if "lx_fs_eps" not in st.session_state:
        st.session_state["lx_fs_eps"] = FS_PRESETS[preset][2]
    eps = c2.slider("ε", 0.0, 0.5, step=0.005, key="lx_fs_eps", bind="query-params", format="%.3f")
    clean, noisy, _e = FS_PRESETS[preset]
    m = len(clean[0])
    ed = st.data_editor(pd.DataFrame(clean, columns=[f"G{j + 1}" for j in range(m)],
                                     index=[f"S{i + 1}" for i in range(len(clean))]),
                        key=f"lx_fs_U_{preset}", num_rows="dynamic")
    try:
        U = _parse_matrix(ed, "Utilities")
    except ValueError as exc:
        show_problem("", exc)
        return
    e = Fraction(str(eps))
    tab = lx.membership_table(U, epsilon=e)
    st.dataframe(tab, hide_index=True)
    download_csv(tab, filename="leximax_membership.csv", key="lx_dl_membership", label="Membership table (CSV)")
    chain = lx.recursive_chain(U, alpha=[e] * len(U[0]))
    st.markdown("**Chain with slack ε at every level** ([b] Def 12): " + " ⊇ ".join(
        "{" + ", ".join(f"S{s + 1}" for s in sorted(c)) + "}" for c in chain))
    sets = {"leximax": lx.leximax_set(U), "ε-recursive = ε-tradeoff": lx.recursive_set(U, epsilon=e),
            "ε-significant": lx.significant_set(U, epsilon=e)}
    show_figure(lf.make_finite_scatter(U, sets), key="lx_fig_finite", filename="leximax_finite.html",
                caption="Each dot is a solution; rings mark membership ([b] Figs. 2–5). Only the first two groups "
                        "are drawn.")
    st.markdown(
        "- **leximax**: best sorted profile (Defs 2–3). **element-wise**: every sorted entry within ε of leximax "
        "(Def 6). **ε-tradeoff**: anyone doing more than ε better for a group must do worse for a worse-off group "
        "(Def 7); equals **ε-recursive** (Thm 11). **(ε,ε)-significant tradeoff** may be empty (Ex 8). "
        "**ε-significant**: slack exactly ε at every level (Def 12) — never empty, may exclude the exact leximax.")
    st.markdown("**Noise (Lemmas 18–19).** Compare solutions computed on noisy utilities with the true ones.")
    if "lx_fs_noisy" not in st.session_state:    # default set once here, so the preset callback may change it
        st.session_state["lx_fs_noisy"] = noisy is not None
    use_noise = st.checkbox("Add a noisy version of the utilities", key="lx_fs_noisy",
                            bind="query-params")
    if use_noise:
        base = noisy if noisy is not None else [[str(v) for v in r] for r in ed.astype(str).values.tolist()]
        ed2 = st.data_editor(pd.DataFrame(base, columns=list(ed.columns)[: len(base[0])]),
                             key=f"lx_fs_N_{preset}", num_rows="fixed")
        try:
            N = _parse_matrix(ed2, "Noisy utilities")
            dmax = max((abs(a - b) for ra, rb in zip(U, N) for a, b in zip(ra, rb)), default=Fraction(0))
            dset = st.number_input("δ (noise bound; 0 = the largest difference between the matrices)", 0.0, 1.0,
                                   0.0, step=0.0001, format="%.4f", key="lx_fs_delta", bind="query-params")
            d = Fraction(str(dset)) if dset > 0 else dmax
            st.caption(f"δ = {float(d):.6g} (largest difference between the two matrices: {float(dmax):.6g}).")
            t19 = lx.lemma19_check(U, N, epsilon=e, delta=d)
            st.dataframe(t19, hide_index=True)
            st.caption("Corrected Lemma 19 (erratum L1): every ε-significant solution on the noisy utilities is "
                       "(ε−2δ, ε+2δ)-significant recursive on the true ones — the last column must be all ✓.")
            if e >= 2 * d:
                st.dataframe(lx.lemma18_check(U, N, epsilon=e, delta=d), hide_index=True)
                st.caption("Lemma 18: (ε−2δ, 2δ)-significant-tradeoff on noisy ⇒ ε-tradeoff on true.")
        except ValueError as exc:
            show_problem("", exc)
    download_json({"example": preset, "epsilon": eps, "U": [[str(v) for v in r] for r in U]},
                  filename="leximax_finite_parameters.json", key="lx_dl_fs_params")


# ---------------------------------------------------------------------------------------------------------
# Tab C: citizens' assembly (quotas)
# ---------------------------------------------------------------------------------------------------------

@st.cache_data(max_entries=8, show_spinner=False)
def check_cached(pool: pd.DataFrame, quotas: tuple, k: int):
    return lx.check_quotas(pool, list(quotas), k=k)


@st.cache_data(max_entries=8, show_spinner=False)
def leximin_cached(pool: pd.DataFrame, quotas: tuple, k: int, id_col: str, seed: int, time_limit: float):
    # No progress callback here: a cached function must not touch a UI element (Streamlit replays them).
    return lx.leximin_panels(pool, list(quotas), k=k, id_col=id_col, rng=seed, time_limit_s=time_limit)


@st.cache_resource(show_spinner=False)
def _leximin_store() -> dict:
    """Finished button-run lotteries shared by all sessions for the built-in pools (a plain dict: no UI)."""
    return {}


def remember_leximin(key: tuple, dist, *, shared: bool) -> None:
    """Keep a finished lottery: in this session, and for built-in pools also for other sessions (8 at most)."""
    stores = [st.session_state.setdefault("lx_q_results", {})] + ([_leximin_store()] if shared else [])
    for store in stores:
        store[key] = dist
        while len(store) > 8:              # oldest first: dicts keep insertion order
            store.pop(next(iter(store)))


def recall_leximin(key: tuple):
    return st.session_state.get("lx_q_results", {}).get(key) or _leximin_store().get(key)


@st.cache_data(max_entries=8, show_spinner=False)
def baseline_cached(pool: pd.DataFrame, quotas: tuple, k: int, seed: int):
    return lx.uniform_panel_baseline(pool, list(quotas), k=k, rng=seed)


Q_SOURCES = ["Tiny example", "Volunteer pool 500 / 6 features / panel 40", "Upload"]


def _set_q_k():
    st.session_state["lx_q_k"] = {Q_SOURCES[0]: 4, Q_SOURCES[1]: 40}.get(st.session_state["lx_q_source"], 10)


def quota_tab():
    st.markdown(
        "**Beyond the paper.** A citizens' assembly is drawn from volunteers so that the panel meets quotas "
        "(e.g. 20–22 women). Among all lotteries over quota-meeting panels, the *leximin* lottery makes "
        "**everyone's chance as equal as the quotas allow: the smallest chance is as large as possible, then the "
        "next smallest, and so on** (Flanigan et al., *Nature* 596, 2021, cited as [b] ref. 13). Unlike [b], this "
        "equalises individuals' chances under hard quotas. Solved with open-source HiGHS."
    )
    c1, c2, c3 = st.columns(3)
    src = c1.selectbox("Pool and quotas", Q_SOURCES, key="lx_q_source", bind="query-params", on_change=_set_q_k)
    if "lx_q_k" not in st.session_state:
        st.session_state["lx_q_k"] = {Q_SOURCES[0]: 4, Q_SOURCES[1]: 40}.get(src, 10)
    k = int(c2.number_input("Panel size k", 1, 1_000, step=1, key="lx_q_k", bind="query-params"))
    tlim = c3.slider("Time limit (s)", 10, 600, 120, step=10, key="lx_q_time", bind="query-params")
    id_col = "person_id"
    if src == Q_SOURCES[0]:
        pool, quotas = lx.tiny_pool(), lx.tiny_quotas()
    elif src == Q_SOURCES[1]:
        pool, quotas = volunteer_cached()
    else:
        u1, u2 = st.columns(2)
        with u1:
            pool = upload_frame("Respondents CSV", key="lx_q_pool_csv", max_rows=MAX_RESPONDENTS, max_cols=13,
                                as_text=True, help="One row per volunteer: an id column and categorical features (≤ 12).")
        with u2:
            qdf = upload_frame("Quotas CSV", key="lx_q_quota_csv", max_rows=500, max_cols=10, min_rows=1,
                               as_text=True, help="Columns feature,value,min,max (or category,feature,min,max).")
        if pool is None or qdf is None:
            st.info("Upload both files: respondents (id + categorical columns) and quotas (feature, value, min, max).")
            return
        cols = list(pool.columns)
        unique = [c for c in cols if not pool[c].astype(str).str.strip().duplicated().any()]
        # data-dependent default: the first column with one distinct value per person (re-derived per file)
        id_col = st.selectbox("Id column", cols, index=cols.index(unique[0]) if unique else 0, key="lx_q_id",
                              bind="query-params")
        try:
            quotas = lx.quotas_from_frame(qdf)
        except ValueError as exc:
            show_problem("The quotas file cannot be used:", exc)
            return
        clash = sorted({q.feature for q in quotas} & {id_col})
        if clash:
            st.warning(f"The id column {md_quote(id_col)} is also a quota feature. Choose as id a column with one "
                     "unique value per person (e.g. person_id), not a feature the quotas count.")
            return
        pool = pool.copy()
        for c in pool.columns:
            pool[c] = pool[c].astype(str).str.strip()
    if k > len(pool):
        st.warning(f"The panel size k = {k} is larger than the pool ({len(pool)} people): choose k ≤ {len(pool)}.")
        return
    qframe = pd.DataFrame([{"feature": q.feature, "value": q.value, "min": q.min, "max": q.max} for q in quotas])
    with st.expander("Quotas (editable)", expanded=src == Q_SOURCES[0]):
        # keyed by the quota table itself: edits made for one file never land on another file's rows
        qed = st.data_editor(qframe, key=f"lx_q_editor_{_digest(qframe.to_csv(index=False))}",
                             disabled=["feature", "value"], hide_index=True)
    try:
        quotas = lx.quotas_from_frame(qed)
        for w in lx.quota_case_warnings(pool, quotas):
            st.warning(md_escape(w, max_len=600))
        report = check_cached(pool, tuple(quotas), k)
    except ValueError as exc:
        show_problem("These quotas cannot be checked:", exc)
        return
    if not report.feasible:
        # a user-correctable state, not a failure: say so in plain words and show the smallest fix
        st.warning("**The quotas cannot all be met, so no panel of this size exists.** "
                   + " ".join(md_escape(p, max_len=400) for p in report.problems))
        sent = lx.relaxation_sentences(report)
        if sent:
            st.markdown(f"**Smallest change that makes them feasible** ({report.seats_changed} seat bound(s) "
                        "changed; other minimal changes may exist): "
                        + "; ".join(md_escape(t, max_len=400) for t in sent) + ".")
            st.dataframe(report.relaxation, hide_index=True)
            download_csv(report.relaxation, filename="quota_relaxation.csv", key="lx_dl_relax",
                         label="Relaxation (CSV)")
        return
    st.success(f"✓ The quotas can be met: panels of {k} out of {len(pool)} people exist.")
    auto = len(pool) <= 50
    seed = seed_input(key="lx_q_seed", label="Seed (initial panels, draws)")
    run_key = (hashlib.sha256(pd.util.hash_pandas_object(pool, index=False).values.tobytes()).hexdigest(),
               tuple(quotas), k, id_col, int(seed), float(tlim))
    if auto:
        try:
            dist = leximin_cached(pool, tuple(quotas), k, id_col, int(seed), float(tlim))
        except (ValueError, RuntimeError) as exc:
            show_problem("The leximin lottery could not be computed:", exc)
            return
    else:
        if st.button("Compute leximin", key="lx_q_run", type="primary") and recall_leximin(run_key) is None:
            # The solver runs outside any cached function; the progress bar is updated through a plain callback.
            with st.status("Computing the leximin lottery…", expanded=True) as status:
                bar = st.progress(0.0)

                def progress(frac, msg):
                    bar.progress(min(1.0, max(0.0, frac)), text=msg)

                try:
                    dist = lx.leximin_panels(pool, list(quotas), k=k, id_col=id_col, rng=int(seed),
                                             time_limit_s=float(tlim), progress=progress)
                except (ValueError, RuntimeError) as exc:
                    status.update(label="Failed", state="error")
                    show_problem("The leximin lottery could not be computed:", exc)
                    return
                status.update(label=f"Done in {dist.seconds:.1f} s", state="complete")
            remember_leximin(run_key, dist, shared=src != "Upload")
        dist = recall_leximin(run_key)
        if dist is None:
            st.info("Press **Compute leximin** (large pools take up to a minute; progress is shown).")
            return
    met = lx.selection_metrics(dist, k=k)
    a1, a2, a3, a4, a5 = st.columns(5)
    a1.metric("Smallest chance", f"{met.minimum:.4f}")
    a2.metric("Equal share k/n", f"{k / len(pool):.4f}")
    a3.metric("Largest chance", f"{met.maximum:.4f}")
    a4.metric("Gini", f"{met.gini:.4f}")
    a5.metric("Panels in lottery", f"{met.n_panels}")
    if not dist.complete:
        st.warning("Time limit reached: the lowest levels are exact, the rest is an upper estimate (partial result).")
    st.caption(f"Geometric mean {met.geometric_mean:.4f}; {100 * met.share_below_equal:.1f}% of people below k/n; "
               f"{met.n_zero} with zero chance; {len(dist.levels)} levels; {dist.lp_solves} LPs, {dist.ilp_solves} "
               f"ILPs, {dist.seconds:.1f} s; residual {dist.residual:.1e}; seed {int(seed)} (initial panels).")
    if dist.never_selectable:
        n0 = len(dist.never_selectable)
        st.warning(f"{n0} {'person' if n0 == 1 else 'people'} can never be selected under these quotas: "
                   + md_escape(", ".join(dist.never_selectable[:20]), max_len=2_000))
    feats = [q.feature for q in quotas]
    feats = list(dict.fromkeys(feats))
    colour = st.selectbox("Colour people by", feats, key="lx_q_colour", bind="query-params")
    show_figure(lf.make_panel_prob_figure(dist.probabilities, pool[colour].astype(str).to_numpy(), k=k,
                                          feature=colour), key="lx_fig_panel_probs", filename="leximin_people.html",
                caption="Everyone's chance is as equal as the quotas allow: the smallest chance is as large as "
                        "possible, then the next smallest, and so on. The dashed line is the equal chance k/n.")
    st.dataframe(dist.type_table, hide_index=True)
    base = baseline_cached(pool, tuple(quotas), k, int(seed))
    if base is None:
        st.info("Baseline unavailable: quota-feasible panels are too rare for rejection sampling "
                "(fewer than 1 in 10,000 random panels meet the quotas).")
    else:
        below = float((base < met.minimum - 1e-9).mean())
        st.markdown(f"**Baseline** (every quota-meeting panel equally likely, estimated by rejection sampling): "
                    f"smallest chance {base.min():.4f}; **{100 * below:.1f}%** of people have a lower chance than the "
                    "leximin minimum.")
    show_figure(lf.make_panel_compare_figure({"leximin": dist.probabilities, "uniform over feasible panels": base},
                                             k=k), key="lx_fig_panel_compare", filename="leximin_vs_baseline.html")
    probs = pd.DataFrame({"person": dist.person_ids, "probability": dist.probabilities})
    lottery = pd.DataFrame(dist.panels, columns=[" | ".join(map(str, r)) for r in
                                                 dist.type_table[feats].itertuples(index=False)])
    lottery.insert(0, "probability", dist.panel_probabilities)
    d1, d2, d3 = st.columns(3)
    with d1:
        download_csv(probs, filename="leximin_probabilities.csv", key="lx_dl_q_probs", label="Probabilities (CSV)")
    with d2:
        download_csv(dist.type_table, filename="leximin_types.csv", key="lx_dl_q_types", label="Types (CSV)")
    with d3:
        download_csv(lottery, filename="leximin_lottery.csv", key="lx_dl_q_lottery", label="Lottery (CSV)")
    qlog = st.session_state.setdefault("lx_q_log", [])
    lottery_id = hashlib.sha256(repr(run_key).encode()).hexdigest()[:10]
    if st.button("Draw a panel", key="lx_q_draw", type="primary"):
        ds = int(seed) + len(qlog)
        members = lx.draw_panel(dist, rng=ds)
        qlog.append({"time (UTC)": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S"), "seed": ds, "k": k,
                     "lottery": lottery_id, "members": " ".join(members)})
    if qlog and qlog[-1].get("lottery") != lottery_id:
        # a panel from another pool, quotas or k must not be checked against the current quotas
        st.caption("The last panel was drawn from another lottery (other pool, quotas, k or seed); it is in the "
                   "draw log below. Press **Draw a panel** to draw from this one.")
        download_csv(pd.DataFrame(qlog), filename="panel_draw_log.csv", key="lx_dl_q_log", label="Draw log (CSV)")
    elif qlog:
        last = qlog[-1]
        st.success(f"Panel drawn with seed **{last['seed']}** at {last['time (UTC)']} UTC.")
        qt = lx.panel_quota_table(pool, quotas, last["members"].split(), id_col=id_col)
        qt["met"] = qt["met"].map({True: "✓", False: "✗"})
        st.dataframe(qt, hide_index=True)
        st.dataframe(pool[pool[id_col].astype(str).isin(last["members"].split())], hide_index=True)
        download_csv(pd.DataFrame(qlog), filename="panel_draw_log.csv", key="lx_dl_q_log", label="Draw log (CSV)")
    download_json({"source": src, "k": k, "time_limit_s": tlim, "seed": seed,
                   "quotas": [q.__dict__ for q in quotas]}, filename="leximin_parameters.json", key="lx_dl_q_params")


with st.expander("Notes for researchers: how the paper is read here (errata)"):
    st.markdown(
        "- **L1** [b] Lemma 19 as printed (\"any ε-*tradeoff* solution … (ε−2d, ε+2d)\") fails even without noise "
        "(Five committees, S₁); the tool checks the corrected statement for ε-*significant recursive* solutions "
        "with 2δ.\n"
        "- **L2** the slack constraints of the approximate LP use ≥ (not >). **L3** Algorithm 1 indexes γ by the "
        "level l. **L4** Algorithm 2's empty \"if S ≠ k\" branch returns the violated constraint Σx = k.\n"
        "- **L5** the LP with slack ε is a *cumulative* surrogate of Def 10's per-level slack; it is labelled "
        "\"ε-significant (LP, cumulative slack)\", and the finite-set tab implements Defs 10/12 literally.\n"
        "- **L6** Thm 14 is tested for α ∈ [0, ε]^m. **L7** no ellipsoid method: the LPs use the compact form of "
        "Ogryczak & Tamir (2003); Algorithm 2 verifies every result (✓ verified).\n"
        "- **L8** the hardness factor in §1.2 reads (e−1)/e (Lemma 20). **L9** the \"1/3\" for arbitrary "
        "lotteries (§4.1) is shown as a reverse-Markov bound, our reading.\n"
        "- Integer leximax and even ε-approximate maxmin (ε < 0.5) are NP-hard ([b] Lemma 20): the best single "
        "cohort is found by brute force only when C(n, k) ≤ 200,000."
    )

TABS = ["Cohort (paper)", "Finite-set explorer", "Citizens' assembly (quotas)"]
# Only the open tab runs (ui/tabs.py; its work is skipped while hidden); each tab reruns alone as a fragment.
for tab, body in zip(lazy_tabs(TABS, key="lx_tab"), (cohort_tab, finite_tab, quota_tab)):
    if tab.drawn:
        with tab.container:
            st.fragment(body)()

page_end()
