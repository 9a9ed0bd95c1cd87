"""Leximax cohort picker: fair random selection of a cohort so that every group is served as well as possible.

Thin page: widgets → cached engine calls (dpdash/leximax.py) → verdicts (dpdash/leximax_verdicts.py) → figures
(dpdash/leximax_figures.py) → artefacts (ui.dossier, dpdash/script_leximax.py).
Sources: Henzinger, Peale, Reingold, Shen, "Leximax Approximations and Representative Cohort Selection",
FORC 2022 (seed 003, second paper) and, for the quota tab, Flanigan et al., Nature 2021.
"""

from __future__ import annotations

import hashlib
import inspect
import math
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from dpdash import leximax as lx
from dpdash import leximax_figures as lf
from dpdash import leximax_verdicts as lv
from dpdash import leximax_views as lxv
from dpdash import script_leximax as sl
from dpdash.formatting import number, percent
from ui import common as uc
from ui import page_end, page_setup
from ui.charts import show_figure
from ui.exports import download_csv, download_json
from ui.show import verdict_box
from ui.tabs import lazy_tabs
from ui.text import md_escape, md_quote
from ui.upload import csv_uploader
from ui.widgets import choice, log_slider, seed_input

page_setup("Leximax cohort picker", icon=":material/groups:", uses_dataset=False)

REPO_ROOT = str(Path(__file__).resolve().parents[1])
PAGE = "leximax_cohort_picker"
TITLE = "Leximax cohort picker"
PAPER = "Henzinger, Peale, Reingold & Shen, *Leximax Approximations and Representative Cohort Selection* (FORC 2022)"
SOURCES = ["Henzinger, Peale, Reingold, Shen, Leximax Approximations and Representative Cohort Selection, FORC 2022 "
           "(seed 003_4b386133f61617e9.txt, second paper): §4 Algorithm 1 and 2, Lemma 15, App. C; errata L1–L9 of "
           "the product spec", "Ogryczak & Tamir (2003), sum of the l smallest as a linear program",
           "Flanigan, Gölz, Gupta, Hennig, Procaccia, Fair algorithms for selecting citizens' assemblies, Nature 596 "
           "(2021)"]
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
_ALT = "alt" in inspect.signature(show_figure).parameters

st.title(TITLE)
st.markdown(
    "Pick a cohort (committee, panel, study sample) from a pool so that **every group is served as well as "
    "possible: first the worst-off group, then the next worst-off, and so on** (*leximax*). The tool computes "
    "each candidate's chance of selection, compares what each group gets with picking uniformly at random, "
    "simulates what a single draw gives each group and draws cohorts of exactly *k*. "
    f"Source: {PAPER}. This page works on its own pools, not on the shared dataset."
)


# ---------------------------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------------------------

def figure(fig, *, key: str, filename: str, caption: str | None = None, alt: str | None = None) -> None:
    """``show_figure`` with alt text where the shared helper takes it (issue 14 item 9)."""
    if _ALT:
        show_figure(fig, key=key, filename=filename, caption=caption, alt=alt)
    else:
        show_figure(fig, key=key, filename=filename, caption=caption)


def verdict(sentences, warnings=()) -> None:
    """The tab's answer in plain words first; sentences come from dpdash/leximax_verdicts.py (escaped here)."""
    st.success(" ".join(md_escape(s, max_len=800) for s in sentences))
    for w in warnings:
        if w:
            st.warning(md_escape(w, max_len=900))


def artefacts(*, key: str, question: str, params: dict, headlines: list[tuple[str, str, str]], verdicts: list[str],
              figures: list, script: str, seed: int | None = None) -> None:
    """Report, settings and "Copy as code" for the open tab (ui.dossier; until it exists, the script alone)."""
    try:
        from ui.dossier import Headline, PageSummary
        from ui.dossier import artefacts as draw_artefacts
    except ImportError:
        with st.expander("Copy as code: recompute these numbers in Python", icon=":material/code:"):
            st.code(script, language="python")
            st.download_button("Script (.py)", script, file_name=f"{key}.py", mime="text/x-python",
                               key=f"{key}_script_py", on_click="ignore")
        return
    draw_artefacts(PageSummary(page=PAGE, title=TITLE, question=question, params=params,
                               headlines=[Headline(a, b, c) for a, b, c in headlines], verdicts=list(verdicts),
                               figures=figures, sources=SOURCES, seed=seed, script=script), key=key)


def changed(key: str) -> bool:
    """Whether the control ``key`` holds a different value than on this tab's previous run (first run: no)."""
    cur, prev_key = st.session_state.get(key), f"_lx_prev_{key}"
    prev = st.session_state.get(prev_key, cur)
    st.session_state[prev_key] = cur
    return prev != cur


# ---------------------------------------------------------------------------------------------------------
# Cached engine calls
# ---------------------------------------------------------------------------------------------------------

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


@st.cache_resource(max_entries=96, show_spinner=False, scope="session")
def _figure_store(kind: str, digest: str, _build):
    return _build()


def cached_figure(kind: str, build, *inputs):
    """A figure built once per inputs in this session (no copy: figures are only read after building).

    Moving k back and forth revisits the same inputs; building a Plotly figure (its validation) was most of the
    script's time per move. ``inputs`` are everything the figure depends on (arrays hashed by their bytes).
    """
    h = hashlib.sha256()
    for part in inputs:
        h.update(np.ascontiguousarray(part).tobytes() if isinstance(part, np.ndarray) else repr(part).encode())
        h.update(b"|")
    return _figure_store(kind, h.hexdigest(), build)


@st.cache_data(max_entries=4, show_spinner=False)
def volunteer_cached():
    return lx.volunteer_pool(), lx.volunteer_quotas()


@st.cache_data(max_entries=16, show_spinner=False)
def random_cached(n: int, m: int, grid: float, seed: int) -> np.ndarray:
    return lx.random_values(n, m, grid=grid, rng=seed)


def upload_frame(label: str, *, key: str, max_rows: int, max_cols: int, help: str, min_rows: int = 2,
                 as_text: bool = False):
    """The product's one bounded reader (ui.upload → dpdash.data.read_uploaded_csv); None after a message."""
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


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


# ---------------------------------------------------------------------------------------------------------
# Tab A: cohort (paper)
# ---------------------------------------------------------------------------------------------------------

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
                                    key="lx_shares_editor_" + _digest([g.name for g in groups]),
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
    return sl.cohort_script(repo_root=REPO_ROOT, k=k, values_code=code, values=V if code is None else None,
                            alpha=None if alpha is None else list(alpha))


def _cohort_tab():
    pool, desc, attrs, code = pool_controls()
    if pool is None:
        return
    V = pool.values
    n, m = V.shape
    st.caption(f"{md_escape(desc, max_len=300)} **{n:,} candidates × {m} groups.**")
    unserved = [g for g, col in zip(pool.group_names, V.T) if not col.any()]
    if unserved:
        st.info(f"{len(unserved)} group(s) have value 0 for every candidate, so no cohort can serve them: "
                + md_escape(", ".join(unserved[:10]), max_len=400) + ". Their expected utility is 0 whatever "
                "the choice; leximax then serves the other groups.")
    heavy = n * m > LIVE_NM
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

    if heavy:
        st.info(f"Large pool ({n:,} × {m}): press **Solve** after changing k (other controls apply at once).")
        if st.button("Solve", key="lx_solve_btn", type="primary"):
            st.session_state["lx_solved_for"] = (hashlib.sha256(V.tobytes()).hexdigest(), k)
        if st.session_state.get("lx_solved_for") != (hashlib.sha256(V.tobytes()).hexdigest(), k):
            st.caption("Not solved yet for these settings.")
            return
    verdict_slot = st.empty()       # the verdict goes first, above the cards, once the numbers are known
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
    res = approx if approx is not None else exact
    what = "leximax" if approx is None else {"slack": f"slack-ε (ε = {eps:g})", "custom": "custom-slack"}[mode]
    facts = lv.cohort_facts(V, res.x, k=k, group_names=pool.group_names)
    sentences = lv.cohort_verdicts(facts, what=what)
    warns = [lv.zero_chance_warning(pool.ids, res.x),
             lv.over_represented_warning(lv.over_represented(V, res.x, k=k, group_names=pool.group_names))]
    if approx is not None and float(np.max(res.alpha[:-1], initial=0.0)) >= exact.y.min() > 0:
        warns.append(f"The slack ({number(float(np.max(res.alpha[:-1])))}) is at least the worst-off group's exact "
                     f"leximax utility ({number(float(exact.y.min()))}), so the guarantee for the worst-off group "
                     "is empty. Choose a smaller slack.")
    with verdict_slot.container():
        verdict(sentences, warns)

    # cards
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Worst-off group can expect", lv.utility_text(res.y.min()))
    m2.metric("Smallest chance", percent(facts.min_chance))
    m3.metric("Largest chance", percent(facts.max_chance))
    m4.metric("Check (paper's Algorithm 2)", "✓ verified" if res.verified else "✗ failed",
              help="Recomputes every level's guarantee from the chances; the paper's separation oracle.")
    st.caption(f"The chances add up to {res.x.sum():.6g} (k = {k}); {res.lp_solves} linear programs solved in "
               f"{res.seconds:.2f} s with {SOLVERS[solver]}.")

    util_y = V.T @ utilitarian_cached(V, k)
    uniform_y = V.T @ np.full(n, k / n)
    view = choice("Compare", VIEWS, key="lx_view", widget="segmented")
    g1, g2 = st.columns(2)
    with g1:
        if view == "groups":
            series = {f"{what} chances": res.y, "uniform (k/n each)": uniform_y, "largest total": util_y}
            fig_groups = cached_figure("groups", lambda: lf.make_group_bar_figure(pool.group_names, series),
                                       pool.group_names, *series.keys(), *series.values())
            alt_groups = (f"Bar chart of each of the {m} groups' expected utility under {what} chances, uniform "
                          f"selection and the largest-total choice; the worst-off group gets "
                          f"{number(facts.worst_utility)} ({what}) and {number(facts.uniform_worst_utility)} "
                          "(uniform).")
            cap = ("Expected utility of each group: with these chances, with every candidate at the same chance "
                   "k/n, and with the choice that maximises the total (which can leave a group with little).")
        else:
            profiles = {"leximax": exact.y}
            if approx is not None:
                profiles[f"{what}"] = approx.y
            integer = integer_cached(V, k) if math.comb(n, k) <= 200_000 else None
            if integer is not None:
                profiles["best single cohort (no lottery)"] = integer.utilities
            profiles["largest total"] = util_y
            profiles["first level only (maximin)"] = V.T @ maxmin_cached(V, k)
            profiles["uniform (k/n each)"] = uniform_y
            fig_groups = cached_figure("profiles", lambda: lf.make_profile_figure(profiles), *profiles.keys(),
                                       *profiles.values())
            alt_groups = (f"Line chart of the groups' expected utilities sorted from worst off, for {len(profiles)} "
                          f"ways of choosing; leximax starts highest at {number(float(exact.y.min()))}.")
            cap = ("Each line lists the groups' expected utilities from worst to best off. Leximax is highest at "
                   "the left end; the largest-total choice can leave the worst-off group lower; the best single "
                   "cohort is one fixed choice, not a lottery."
                   + ("" if integer is not None else f" Best single cohort skipped: finding it is NP-hard ([b] "
                      f"Lemma 20) and there are {math.comb(n, k):,} cohorts."))
        figure(fig_groups, key="lx_fig_groups", filename="leximax_groups.html", caption=cap, alt=alt_groups)
    with g2:
        fig_marg = cached_figure("chances", lambda: lf.make_marginals_figure(pool.ids, res.x, k), pool.ids, res.x, k)
        alt_marg = (f"Bar chart of each candidate's chance of selection, largest first: from "
                    f"{percent(facts.max_chance)} down to {percent(facts.min_chance)}; {facts.n_zero} of {n} at "
                    f"zero; the chances add up to k = {k}.")
        figure(fig_marg, key="lx_fig_marginals", filename="leximax_chances.html", alt=alt_marg,
               caption=f"Chance of selection of each candidate; the chances add up to k = {k}.")
    chances = pd.DataFrame({"candidate": pool.ids, "chance of selection": res.x})
    groups = pd.DataFrame({"group": pool.group_names, "expected utility": res.y,
                           "uniform selection": uniform_y, "largest total": util_y})
    d1, d2 = st.columns(2)
    with d1:
        download_csv(chances, filename="leximax_chances.csv", key="lx_dl_marginals", label="Chances (CSV)")
    with d2:
        download_csv(groups, filename="leximax_group_utilities.csv", key="lx_dl_groups",
                     label="Group utilities (CSV)")

    levels = pd.DataFrame({"level": np.arange(1, m + 1), "gain at this level": res.gammas,
                           "guaranteed total of the worst-off groups": res.cumulative, "slack": res.alpha})
    with uc.methodology():
        label = {"exact": "exact leximax", "slack": f"slack ε = {eps:g} at every level (cumulative, erratum L5)",
                 "custom": "custom slack per level (cumulative)"}[mode if approx is not None else "exact"]
        st.markdown(
            f"**Rule: {label}.** A group's *utility* is the sum of its values over the cohort's members (with "
            "0/1 membership values: its number of members, [b] §4.1). The chances come from the sequence of "
            "linear programs of [b] Algorithm 1, in the compact form of Ogryczak & Tamir (2003): level l makes the "
            "total of the l worst-off groups as large as possible without lowering the levels before it (minus "
            "the slack). The paper's Algorithm 2 then checks the result (✓ verified). With exact leximax, no other "
            f"random selection of {k} members gives the worst-off group more in expectation and, subject to that, "
            "none does better for the second worst-off group, and so on; with a slack, each level may give up the "
            "slack for a worse-off group when that buys a larger gain for the next ([b] §3.2, Def 12). The group "
            "utilities are unique; the chances need not be (other chances may give the same group utilities)."
        )
        st.dataframe(levels, hide_index=True)
        download_csv(levels, filename="leximax_levels.csv", key="lx_dl_levels", label="Levels (CSV)")
        if st.button("Cross-check by another method (saturation)", key="lx_crosscheck",
                     help="Recompute the exact leximax utilities by an independent method (water-filling)."):
            sat = saturation_cached(V, k)
            diff = float(np.abs(sat - exact.y).max())
            (st.success if diff <= 1e-6 else st.error)(
                f"Saturation method: largest difference in a group's utility = {diff:.2e} "
                f"({'agrees' if diff <= 1e-6 else 'DISAGREES'} within 10⁻⁶).")

    simulation_section(pool, V, res, k, n, sampler)
    draw_section(pool, V, res, k, sampler, what, attrs)
    params = {"pool": desc, "candidates": f"{n:,}", "groups": str(m), "cohort size k": str(k),
              "fairness rule": MODES[mode], "slack ε": f"{eps:g}" if mode == "slack" else "not used",
              "how a cohort is drawn": SAMPLERS[sampler], "solver": SOLVERS[solver]}
    artefacts(key="lx_art_cohort", question="Which chances of selection serve every group as well as possible, "
                                             "worst-off first, and what does that give each group?",
              params=params,
              headlines=[("Worst-off group can expect", f"{res.y.min():.4g}", "expected utility"),
                         ("Smallest chance", percent(facts.min_chance), ""),
                         ("Largest chance", percent(facts.max_chance), ""),
                         ("Uniform selection, worst-off group", f"{facts.uniform_worst_utility:.4g}", "")],
              verdicts=sentences, figures=[(alt_groups, fig_groups), (alt_marg, fig_marg)],
              script=cohort_script_cached(V, k, code, None if approx is None else tuple(map(float, res.alpha))),
              seed=int(st.session_state.get("lx_seed", 0)))


def simulation_section(pool, V, res, k, n, sampler):
    """Simulated single draws: how far below its expectation each group falls. Returns the summary or None."""
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
        st.dataframe(sv.tables["simulation"], hide_index=True)
        download_csv(sv.tables["simulation"], filename="leximax_simulation.csv", key="lx_dl_sim",
                     label="Simulation summary (CSV)")
    return mc


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
        st.dataframe(members, hide_index=True)
        download_csv(members, filename="leximax_drawn_cohort.csv", key="lx_dl_cohort",
                     label="Drawn cohort, one row per member (CSV)")
    else:   # drawn under other settings: the log keeps it, the page does not present it as this cohort's
        st.caption("The last cohort was drawn with other settings (pool, k, rule or drawing); it is in the log.")
    with st.expander(f"Draw log ({len(log)} draws)"):
        st.dataframe(pd.DataFrame(log), hide_index=True)
        download_csv(pd.DataFrame(log), filename="leximax_draw_log.csv", key="lx_dl_log", label="Draw log (CSV)")
        st.caption("Each draw uses seed = page seed + number of earlier draws; re-running dependent rounding with "
                   "the logged seed reproduces the cohort exactly.")


# ---------------------------------------------------------------------------------------------------------
# Tab B: finite-set explorer
# ---------------------------------------------------------------------------------------------------------

#: token → (label, clean utilities, noisy utilities or None, ε of the paper's example)
FS_PRESETS = {
    # [b] Example 5: U = [[0, 1], [0.01, 0.01]]
    "ex5": ("Example 5 (sensitivity)", [["0", "1"], ["1/100", "1/100"]], None, 0.01),
    # [b] Example 8 at ε = 0.01: U = [[0, .5+6ε], [ε/2, .5+4ε], [ε, .5+2ε], [3ε/2, .5]]
    "ex8": ("Example 8 (no significant-tradeoff solution)",
            [["0", "0.56"], ["0.005", "0.54"], ["0.01", "0.52"], ["0.015", "0.5"]], None, 0.01),
    # [b] Example 13 at ε = 0.01: u(S1) = (ε, 0.5), u(S2) = (0, 1)
    "ex13": ("Example 13 (significant recursive)", [["0.01", "0.5"], ["0", "1"]], None, 0.01),
    # [b] Example 17 at ε = 0.01 (clean and noisy: S2's G1 value 0.1 + ε/100 → 0.1 − ε/100)
    "ex17": ("Example 17 (noise)", [["0.1", "0.2"], ["0.1001", "0.8"], ["0.11", "0.2"]],
             [["0.1", "0.2"], ["0.0999", "0.8"], ["0.11", "0.2"]], 0.01),
    "lx6": ("Five committees (LX6)", [["0.30", "0.10", "0.08"], ["0.80", "0.90", "0.00"], ["0.04", "0.10", "0.08"],
                                      ["0.30", "0.04", "0.50"], ["0.04", "0.70", "0.40"]], None, 0.05),
}


def _parse_matrix(df: pd.DataFrame, what: str):
    return lx.parse_utility_matrix(df.itertuples(index=False), what=what)


def finite_tab():
    c1, c2 = st.columns([2, 1])
    preset = choice("Example", {t: v[0] for t, v in FS_PRESETS.items()}, key="lx_fs_preset", default="lx6",
                    container=c1)
    _label, clean, noisy, eps0 = FS_PRESETS[preset]
    if changed("lx_fs_preset"):                         # a new example brings its own ε and noise
        st.session_state["lx_fs_eps"] = eps0
        st.session_state["lx_fs_noisy"] = noisy is not None
    elif "lx_fs_eps" not in st.session_state and "lx_fs_eps" not in st.query_params:
        st.session_state["lx_fs_eps"] = eps0            # a link naming an example without an ε
    eps = log_slider("Slack ε", key="lx_fs_eps", min_value=0.001, max_value=0.5, value=0.05, container=c2,
                     help="Differences in a group's utility up to ε count as insignificant.")
    verdict_slot = st.empty()
    m = len(clean[0])
    ed = st.data_editor(pd.DataFrame(clean, columns=[f"G{j + 1}" for j in range(m)],
                                     index=[f"S{i + 1}" for i in range(len(clean))]),
                        key=f"lx_fs_U_{preset}", num_rows="dynamic", placeholder="")  # a new row is blank
    st.caption("Rows are candidate solutions S1, S2, …; columns are groups; each cell is the solution's utility "
               "for that group. Decimals or fractions like 1/100, compared exactly.")
    try:
        U = _parse_matrix(ed, "Utilities")
    except ValueError as exc:
        show_problem("", exc)
        return
    e = Fraction(str(eps))
    tab = lx.membership_table(U, epsilon=e)
    sets = {"leximax": lx.leximax_set(U), "tradeoff": lx.recursive_set(U, epsilon=e),
            "significant": lx.significant_set(U, epsilon=e)}
    text = lv.finite_verdict(sets, epsilon=float(eps))
    with verdict_slot.container():
        verdict([text])
    st.dataframe(tab, hide_index=True)
    download_csv(tab, filename="leximax_membership.csv", key="lx_dl_membership", label="Membership table (CSV)")
    chain = lx.recursive_chain(U, alpha=[e] * len(U[0]))
    st.markdown("**Chain with slack ε at every level** ([b] Def 12): " + " ⊇ ".join(
        "{" + ", ".join(f"S{s + 1}" for s in sorted(c)) + "}" for c in chain))
    named = {"leximax": sets["leximax"], "ε-tradeoff = ε-recursive": sets["tradeoff"],
             "ε-significant": sets["significant"]}
    fig = lf.make_finite_scatter(U, named)
    figure(fig, key="lx_fig_finite", filename="leximax_finite.html",
           alt=f"Scatter of the {len(U)} solutions by their utility for the first two groups; rings mark the "
               "leximax, ε-tradeoff and ε-significant solutions. " + text,
           caption="Each dot is a solution; rings mark membership ([b] Figs. 2–5). Only the first two groups "
                   "are drawn.")
    with uc.methodology("What the notions mean"):
        st.markdown(
            "- **leximax**: best sorted profile (Defs 2–3). **element-wise**: every sorted entry within ε of leximax "
            "(Def 6). **ε-tradeoff**: anyone doing more than ε better for a group must do worse for a worse-off "
            "group (Def 7); equals **ε-recursive** (Thm 11). **(ε,ε)-significant tradeoff** may be empty (Ex 8). "
            "**ε-significant**: slack exactly ε at every level (Def 12) — never empty, may exclude the exact "
            "leximax.")
    st.markdown("**Noise (Lemmas 18–19).** Compare solutions computed on noisy utilities with the true ones.")
    if "lx_fs_noisy" not in st.session_state:    # default set once here, so a new example may change it
        st.session_state["lx_fs_noisy"] = noisy is not None
    use_noise = st.checkbox("Add a noisy version of the utilities", key="lx_fs_noisy", bind="query-params")
    if use_noise:
        base = noisy if noisy is not None else [[str(v) for v in r] for r in ed.astype(str).values.tolist()]
        ed2 = st.data_editor(pd.DataFrame(base, columns=list(ed.columns)[: len(base[0])]),
                             key=f"lx_fs_N_{preset}", num_rows="fixed", placeholder="")
        try:
            N = _parse_matrix(ed2, "Noisy utilities")
            dmax = max((abs(a - b) for ra, rb in zip(U, N) for a, b in zip(ra, rb)), default=Fraction(0))
            n1, n2 = st.columns([1, 2])
            auto = n1.checkbox("δ = the largest difference between the matrices", value=True,
                               key="lx_fs_delta_auto", bind="query-params")
            dset = log_slider("Noise bound δ", key="lx_fs_delta", min_value=0.0001, max_value=0.5, value=0.001,
                              container=n2, disabled=auto,
                              help="Used when the box on the left is cleared: the noise bound the lemmas assume.")
            d = dmax if auto else Fraction(str(dset))
            st.caption(f"δ = {float(d):.6g} (largest difference between the two matrices: {float(dmax):.6g}).")
            if d < dmax:        # a choice the user can correct: say so and offer the fix, no error
                st.warning(f"The noisy utilities differ from the true ones by up to {float(dmax):.6g}, more than "
                           f"δ = {float(d):.6g}: Lemmas 18–19 assume noise within δ. Raise δ to at least "
                           f"{float(dmax):.6g} or tick “δ = the largest difference between the matrices”.")
            else:
                t19 = lx.lemma19_check(U, N, epsilon=e, delta=d)
                st.dataframe(t19, hide_index=True)
                st.caption("Corrected Lemma 19 (erratum L1): every ε-significant solution on the noisy utilities is "
                           "(ε−2δ, ε+2δ)-significant recursive on the true ones — the last column must be all ✓.")
                if e >= 2 * d:
                    st.dataframe(lx.lemma18_check(U, N, epsilon=e, delta=d), hide_index=True)
                    st.caption("Lemma 18: (ε−2δ, 2δ)-significant-tradeoff on noisy ⇒ ε-tradeoff on true.")
                else:
                    st.caption(f"Lemma 18 needs ε ≥ 2δ (here ε = {eps:g}, 2δ = {2 * float(d):.6g}): not shown.")
        except ValueError as exc:
            show_problem("", exc)
    download_json({"example": preset, "epsilon": eps, "U": [[str(v) for v in r] for r in U]},
                  filename="leximax_finite_parameters.json", key="lx_dl_fs_params")
    words = {k: " ".join(f"S{s + 1}" for s in sorted(v)) or "none" for k, v in sets.items()}
    artefacts(key="lx_art_finite", question="Which solutions are leximax, and which are good enough up to a slack "
                                            "ε ([b] §3)?",
              params={"example": FS_PRESETS[preset][0], "slack ε": f"{eps:g}", "solutions": str(len(U)),
                      "groups": str(len(U[0]))},
              headlines=[("Leximax", words["leximax"], "Defs 2–3"), ("ε-tradeoff", words["tradeoff"], "Def 7"),
                         ("ε-significant", words["significant"], "Def 12")],
              verdicts=[text], figures=[(f"Solutions and notions, ε = {eps:g}", fig)],
              script=sl.finite_script(repo_root=REPO_ROOT, rows=[[str(v) for v in r] for r in U],
                                      epsilon=str(Fraction(str(eps)))))


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


#: token → (label, default panel size)
Q_SOURCES = {"tiny": ("Tiny example (12 people, panel of 4)", 4),
             "volunteers": ("Volunteer pool (500 people, 6 features, panel of 40)", 40),
             "upload": ("Upload respondents and quotas", 10)}
#: Pools up to this size are solved at once; larger ones on a button press, under the time limit.
AUTO_POOL = 50


def quota_tab():
    c1, c2 = st.columns([2, 1])
    src = choice("Pool and quotas", {t: v[0] for t, v in Q_SOURCES.items()}, key="lx_q_source", container=c1)
    if changed("lx_q_source") or "lx_q_k" not in st.session_state:
        st.session_state["lx_q_k"] = Q_SOURCES[src][1]
    k = int(c2.number_input("Panel size k", 1, 1_000, step=1, key="lx_q_k", bind="query-params"))
    verdict_slot = st.empty()
    id_col = "person_id"
    pool_code = None
    if src == "tiny":
        pool, quotas = lx.tiny_pool(), lx.tiny_quotas()
        pool_code = "lx.tiny_pool()"
    elif src == "volunteers":
        pool, quotas = volunteer_cached()
        pool_code = "lx.volunteer_pool()"
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
    with st.expander("Quotas (editable)", expanded=src == "tiny"):
        # keyed by the quota table itself: edits made for one file never land on another file's rows
        qed = st.data_editor(qframe, key=f"lx_q_editor_{_digest(qframe.to_csv(index=False))}",
                             disabled=["feature", "value"], hide_index=True, placeholder="")
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
        with verdict_slot.container():
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
    auto = len(pool) <= AUTO_POOL
    s1, s2 = st.columns(2)
    seed = seed_input(key="lx_q_seed", label="Seed (initial panels, draws)", container=s1)
    tlim = s2.slider("Time limit (s)", 10, 600, 120, step=10, key="lx_q_time", bind="query-params", disabled=auto,
                     help=(f"Pools of up to {AUTO_POOL} people are solved at once without a limit; this applies to "
                           "larger pools.") if auto else "The lowest chances found by then are exact; the rest is "
                                                          "reported as a partial result.")
    if auto:
        tlim = 120          # a small pool finishes in well under a second: the limit is not what the user set
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
            remember_leximin(run_key, dist, shared=src != "upload")
        dist = recall_leximin(run_key)
        if dist is None:
            with verdict_slot.container():
                st.success(f"✓ The quotas can be met: panels of {k} out of {len(pool):,} people exist.")
            st.info("Press **Compute leximin** (large pools take up to a minute; progress is shown).")
            return
    met = lx.selection_metrics(dist, k=k)
    base = baseline_cached(pool, tuple(quotas), k, int(seed))
    sentences = [f"The quotas can be met: panels of {k} out of {len(pool):,} people exist."] + lv.panel_verdicts(
        dist.probabilities, k=k, baseline=base, never=dist.never_selectable)
    warns = []
    if dist.never_selectable:
        n0 = len(dist.never_selectable)
        warns.append(f"{n0} {'person' if n0 == 1 else 'people'} can never be selected under these quotas: "
                     + ", ".join(dist.never_selectable[:20]) + (" …" if n0 > 20 else "")
                     + ". Loosen the quotas of the categories they belong to if everyone must have a chance.")
    if not dist.complete:
        warns.append("Time limit reached: the lowest chances are exact, the rest is an upper estimate (partial "
                     "result). Raise the time limit for the full lottery.")
    with verdict_slot.container():
        verdict(sentences, warns)
    a1, a2, a3, a4, a5 = st.columns(5)
    a1.metric("Smallest chance", f"{met.minimum:.4f}")
    a2.metric("Equal share k/n", f"{k / len(pool):.4f}")
    a3.metric("Largest chance", f"{met.maximum:.4f}")
    a4.metric("Inequality (Gini)", f"{met.gini:.4f}", help="0 when everyone has the same chance.")
    a5.metric("Panels in lottery", f"{met.n_panels}")
    st.caption(f"Geometric mean {met.geometric_mean:.4f}; {100 * met.share_below_equal:.1f}% of people below k/n; "
               f"{met.n_zero} with zero chance; {len(dist.levels)} levels; {dist.lp_solves} linear and "
               f"{dist.ilp_solves} integer programs, {dist.seconds:.1f} s; residual {dist.residual:.1e}; seed "
               f"{int(seed)} (initial panels).")
    feats = list(dict.fromkeys(q.feature for q in quotas))
    colour = st.selectbox("Colour people by", feats, key="lx_q_colour", bind="query-params")
    fig_p = lf.make_panel_prob_figure(dist.probabilities, pool[colour].astype(str).to_numpy(), k=k, feature=colour)
    alt_p = (f"Dots for the {len(pool):,} volunteers' chances of a seat sorted from smallest, coloured by {colour}; "
             f"smallest {percent(met.minimum)}, largest {percent(met.maximum)}, dashed line at the equal chance "
             f"{percent(k / len(pool))}.")
    figure(fig_p, key="lx_fig_panel_probs", filename="leximin_people.html", alt=alt_p,
           caption="Everyone's chance is as equal as the quotas allow: the smallest chance is as large as "
                   "possible, then the next smallest, and so on. The dashed line is the equal chance k/n.")
    figs = [(alt_p, fig_p)]
    if base is None:
        st.info("Comparison unavailable: quota-meeting panels are too rare for rejection sampling "
                "(fewer than 1 in 10,000 random panels meet the quotas).")
    else:
        fig_c = lf.make_panel_compare_figure({"leximin": dist.probabilities, "uniform over quota-meeting panels":
                                              base}, k=k)
        alt_c = (f"Two step lines of everyone's chance sorted from smallest: leximin starts at "
                 f"{percent(met.minimum)}, uniform over quota-meeting panels at {percent(float(base.min()))}.")
        figure(fig_c, key="lx_fig_panel_compare", filename="leximin_vs_uniform.html", alt=alt_c,
               caption="Uniform over quota-meeting panels (estimated by rejection sampling) leaves more people "
                       "below the leximin minimum.")
        figs.append((alt_c, fig_c))
    with uc.methodology():
        st.markdown(
            "**Beyond the paper.** A citizens' assembly is drawn from volunteers so that the panel meets quotas "
            "(e.g. 20–22 women). Among all lotteries over quota-meeting panels, the *leximin* lottery makes "
            "**everyone's chance as equal as the quotas allow: the smallest chance is as large as possible, then "
            "the next smallest, and so on** (Flanigan et al., *Nature* 596, 2021, cited as [b] ref. 13). Unlike "
            "the cohort tab, this equalises individuals' chances under hard quotas. People with the same "
            "features share one chance (a *type*); column generation with open-source HiGHS finds the lottery.")
        st.dataframe(dist.type_table, hide_index=True)
    probs = pd.DataFrame({"person": dist.person_ids, "chance of a seat": dist.probabilities})
    lottery = pd.DataFrame(dist.panels, columns=[" | ".join(map(str, r)) for r in
                                                 dist.type_table[feats].itertuples(index=False)])
    lottery.insert(0, "probability of this panel", dist.panel_probabilities)
    d1, d2, d3 = st.columns(3)
    with d1:
        download_csv(probs, filename="leximin_chances.csv", key="lx_dl_q_probs", label="Chances (CSV)")
    with d2:
        download_csv(dist.type_table, filename="leximin_types.csv", key="lx_dl_q_types", label="Types (CSV)")
    with d3:
        download_csv(lottery, filename="leximin_lottery.csv", key="lx_dl_q_lottery", label="Lottery (CSV)")
    panel_draw_section(pool, quotas, dist, k, id_col, int(seed), run_key)
    download_json({"source": src, "k": k, "time_limit_s": tlim, "seed": seed,
                   "quotas": [q.__dict__ for q in quotas]}, filename="leximin_parameters.json", key="lx_dl_q_params")
    qt = [(q.feature, q.value, q.min, q.max) for q in quotas]
    script = sl.panel_script(repo_root=REPO_ROOT, k=k, quotas=qt, seed=int(seed), pool_code=pool_code,
                             pool_records=None if pool_code else pool.to_dict("records"), id_col=id_col,
                             n_people=len(pool))
    artefacts(key="lx_art_quota", question="Which lottery over quota-meeting panels gives every volunteer a chance "
                                           "as equal as the quotas allow?",
              params={"pool and quotas": Q_SOURCES[src][0], "people": f"{len(pool):,}", "panel size k": str(k),
                      "quotas": str(len(quotas)), "seed": str(int(seed))},
              headlines=[("Smallest chance", percent(met.minimum), ""),
                         ("Equal share k/n", percent(k / len(pool)), ""),
                         ("Largest chance", percent(met.maximum), "")],
              verdicts=sentences, figures=figs, script=script, seed=int(seed))


def panel_draw_section(pool, quotas, dist, k, id_col, seed, run_key) -> None:
    """Draw one panel from the lottery (seeded, logged); its members with their features, one row per member."""
    qlog = st.session_state.setdefault("lx_q_log", [])
    lottery_id = hashlib.sha256(repr(run_key).encode()).hexdigest()[:10]
    if st.button("Draw a panel", key="lx_q_draw", type="primary"):
        ds = seed + len(qlog)
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
        members = pool[pool[id_col].astype(str).isin(last["members"].split())].copy()
        chance = dict(zip(dist.person_ids, dist.probabilities))
        members.insert(1, "chance of a seat", [chance.get(str(i), np.nan) for i in members[id_col].astype(str)])
        st.dataframe(members, hide_index=True)
        m1, m2 = st.columns(2)
        with m1:
            download_csv(members, filename="leximin_drawn_panel.csv", key="lx_dl_q_panel",
                         label="Drawn panel, one row per member (CSV)")
        with m2:
            download_csv(pd.DataFrame(qlog), filename="panel_draw_log.csv", key="lx_dl_q_log",
                         label="Draw log (CSV)")


TABS = ["Cohort (paper)", "Finite-set explorer", "Citizens' assembly (quotas)"]
# Only the open tab runs (ui/tabs.py; its work is skipped while hidden); each tab reruns alone as a fragment.
for tab, body in zip(lazy_tabs(TABS, key="lx_tab"), (cohort_tab, finite_tab, quota_tab)):
    if tab.drawn:
        with tab.container:
            st.fragment(body)()

with st.expander("Notes for researchers: how the paper is read here (errata)"):
    st.markdown(
        "- **L1** [b] Lemma 19 as printed (\"any ε-*tradeoff* solution … (ε−2d, ε+2d)\") fails even without noise "
        "(Five committees, S₁); the tool checks the corrected statement for ε-*significant recursive* solutions "
        "with 2δ.\n"
        "- **L2** the slack constraints of the approximate LP use ≥ (not >). **L3** Algorithm 1 indexes γ by the "
        "level l. **L4** Algorithm 2's empty \"if S ≠ k\" branch returns the violated constraint Σx = k.\n"
        "- **L5** the LP with slack ε is a *cumulative* surrogate of Def 10's per-level slack; it is labelled "
        "\"slack ε (cumulative)\", and the finite-set tab implements Defs 10/12 literally.\n"
        "- **L6** Thm 14 is tested for α ∈ [0, ε]^m. **L7** no ellipsoid method: the LPs use the compact form of "
        "Ogryczak & Tamir (2003); Algorithm 2 verifies every result (✓ verified).\n"
        "- **L8** the hardness factor in §1.2 reads (e−1)/e (Lemma 20). **L9** the \"1/3\" for arbitrary "
        "lotteries (§4.1) is shown as a reverse-Markov bound, our reading.\n"
        "- Integer leximax and even ε-approximate maxmin (ε < 0.5) are NP-hard ([b] Lemma 20): the best single "
        "cohort is found by brute force only when C(n, k) ≤ 200,000."
    )

page_end()
