"""Epsilon calculator: noise ↔ ε ↔ accuracy, composition, budgets, adaptive analysis, ε as risk, tests.

Thin page: widgets → cached engine calls (``dpdash.mechanisms``, ``accounting``, ``budget``, ``risk``,
``private_tests``, ``maxinfo``) → figures (``dpdash.epsilon_figures``). Source: Rogers 2017, *Leveraging
Privacy in Data Analysis* (seed 002_802572da4c9a19ad.txt); spec shared/specs/epsilon_calculator.md.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from dpdash import formatting as nf
from dpdash import accounting as acc
from dpdash import epsilon_figures as ef
from dpdash import epsilon_verdicts as ev
from dpdash import maxinfo as mi
from dpdash import mechanisms as mech
from dpdash import private_tests as pt
from dpdash import risk
from dpdash import script_epsilon as se
from ui import cluster, load_active_dataset, page_end, page_setup
from ui.charts import show_figure
from ui.common import CORES, methodology
from ui.dossier import Headline, PageSummary, artefacts
from ui.exports import download_csv
from ui import show
from ui.show import fmt
from ui.tabs import lazy_tabs
from ui.text import md_escape
from ui.widgets import delta_exponent, log_slider, seed_input
from ui import eps_codecs as ec
from ui.views.eps_common import (CACHE, ENGINE_ERRORS, MECH_FMT, QUERY_FMT, REPO_ROOT, SEED, SEED_PLAIN, bind,
                                 encode_table, exports, pick, reset_defaults, show_table, table_state)
from ui.views.eps_budget import tab_budget
from ui.views.eps_widths import tab_widths

page_setup("Epsilon calculator", icon=":material/calculate:")

TAB_NAMES = ["Noise & accuracy", "Composition", "Budget planner", "Adaptive analysis", "ε as risk",
             "DP vs data splitting", "Private tests", "Max-information & coherence", "Public information"]
NEIGH_FMT = {"replace": "Replace one record", "add_remove": "Add/remove one record"}
GAUSS_RULE_FMT = {"analytic": "Exact (analytic)", "classic": "Classic (ε < 1 only)", "zcdp": "zCDP (set ρ)"}
SEQ_FMT = {"constant": "the same for every request", "geometric": "shrinking geometrically",
           "uniform": "random between two values", "spikes": "constant with regular spikes", "pasted": "a list I paste"}
FILTER_FMT = {"basic": "basic", "advanced": "advanced", "zcdp": "zCDP"}
SHAPE_FMT = {"generic": "Any (ε, δ) mechanism", "gaussian": "Gaussian (μ = Δ/σ)", "laplace": "Laplace (μ = ε)"}
OBJECTIVE_FMT = {"equal_ratio": "the same multiple of each target", "weighted_mse": "least weighted squared error"}
FIX_FMT = {"privacy": "Privacy", "scale": "Noise scale", "accuracy": "Accuracy (±)"}
PLD_BUTTON_LIMIT = 1000

# Views built by other modules (issue 14 item 7, issue 15 items 5–6): drawn in the budget and risk tabs when present.
try:
    from ui.views.budget_compare import render_budget_comparison as BUDGET_COMPARE
except ImportError:
    BUDGET_COMPARE = None
try:
    from ui.views.epsilon_context import render_in_context as IN_CONTEXT, render_risk_inverse as RISK_INVERSE
except ImportError:
    IN_CONTEXT = RISK_INVERSE = None


def say_problem(container, err: Exception, hint: str = "", *, level: str = "error") -> None:
    show.say_problem(err, hint, container=container, level=level)


def take_away(key: str, *, question: str, params: dict, headlines: list[tuple[str, str]], verdicts: list,
              figures: list | None = None, sources: list[str] | None = None, epsilon: float | None = None,
              delta: float | None = None, seed: int | None = None, script: str | None = None) -> None:
    """The tab's report, settings and (where written) script: ``ui.dossier.artefacts`` (issue 15)."""
    artefacts(PageSummary(
        page="epsilon_calculator", title="Epsilon calculator", question=question,
        params={k: (v if isinstance(v, str) else fmt(v) if isinstance(v, float) else str(v)) for k, v in params.items()},
        headlines=[Headline(label, value) for label, value in headlines], verdicts=[v for v in verdicts if v],
        figures=figures or [], sources=[SEED_PLAIN, *(sources or [])], epsilon=epsilon,
        delta=delta if delta else None, seed=seed, script=script), key=key)


def verdict(slot, text: str, warning: str | None = None) -> list[str]:
    """The tab's answer in plain words, drawn into the slot reserved at its top (text escaped for Markdown);
    returns the sentences for the report."""
    with slot.container():
        st.success(md_escape(text, max_len=600))
        if warning:
            st.warning(md_escape(warning, max_len=600))
    return [text] + ([warning] if warning else [])


# =========================================================================== cached engine calls
@st.cache_data(**CACHE)
def cached_calibrate(mechanism, sensitivity, fix, epsilon, rho, scale, hw, delta, conf, rule):
    kw = dict(sensitivity=sensitivity, confidence=conf, gaussian_rule=rule)
    gaussian = mechanism in ("gaussian", "discrete_gaussian")
    if gaussian:
        kw["delta"] = delta
    if fix == "privacy":
        if gaussian and rule == "zcdp":
            kw["rho"] = rho
        else:
            kw["epsilon"] = epsilon
    elif fix == "scale":
        kw["scale"] = scale
    else:
        kw["half_width"] = hw
    return mech.calibrate(mechanism, **kw)


@st.cache_data(**CACHE)
def cached_halfwidth_curves(mechs: tuple, l1: float, l2: float, delta: float, conf: float, rule: str) -> pd.DataFrame:
    rows = []
    grid = np.geomspace(1e-3, 20, 36)
    for m in mechs:
        sens = l2 if "gaussian" in m else l1
        for e in grid:
            try:
                r = "analytic" if rule == "classic" and e >= 1 else rule
                c = mech.calibrate(m, sensitivity=sens, epsilon=float(e), confidence=conf, gaussian_rule=r,
                                   **({"delta": delta} if "gaussian" in m else {}))
                rows.append((m, float(e), c.half_width))
            except ValueError:
                continue
    return pd.DataFrame(rows, columns=["mechanism", "epsilon", "half_width"])


# No UI inside a cached function (issue 12): the long PLD runs with a progress bar use ``session_memo`` instead
@st.cache_data(**CACHE)
def cached_curve(mechs: tuple, delta: float, ks: tuple, rules: tuple, with_pld: bool) -> pd.DataFrame:
    rs = tuple(r for r in rules if r != "pld" or with_pld)
    return acc.composition_curve(list(mechs), delta=delta, ks=list(ks), rules=rs, pld_points=12)


@st.cache_data(**CACHE)
def cached_table(mechs: tuple, delta: float, rules: tuple) -> pd.DataFrame:
    return acc.composition_table(list(mechs), delta=delta, rules=rules)


@st.cache_data(**CACHE)
def cached_adaptive(seq: tuple, eg: float, dg: float, n: int):
    trace = acc.adaptive_trace(list(seq), epsilon_g=eg, delta_g=dg, n=n)
    halts = {r: acc.filter_trace(list(seq), epsilon_g=eg, delta_g=dg, rule=r) for r in ("basic", "advanced", "zcdp")}
    return trace, halts


@st.cache_data(**CACHE)
def cached_pld_profile(mechs: tuple) -> pd.DataFrame:
    return acc.pld_profile(list(mechs), np.geomspace(1e-10, 0.5, 40), resolution=1e-3)


POWER_TESTS = ("projected", "nonprojected", "classical_nonprivate")


@st.cache_data(**CACHE)
def cached_gof_cv(p0: tuple, n: float, rho: float, alpha: float):
    return pt.gof_critical_values(np.array(p0), n=n, rho=rho, alpha=alpha)


@st.cache_data(**CACHE)
def cached_naive_size(p0: tuple, rho: float, alpha: float):
    # split from the other curves so moving n (or the shift) does not recompute these weighted-χ² tails
    ns = np.geomspace(1e2, 1e7, 26)
    return ns, np.array([pt.naive_type_one_error(np.array(p0), n=float(x), rho=rho, alpha=alpha) for x in ns])


@st.cache_data(**CACHE)
def cached_power_n(p0: tuple, shift: tuple, rho: float, alpha: float):
    ns = np.geomspace(1e2, 1e7, 26)
    return ns, {t: np.array([pt.asymptotic_power(np.array(p0), np.array(shift), n=float(x), rho=rho, alpha=alpha, test=t)
                             for x in ns]) for t in POWER_TESTS}


@st.cache_data(**CACHE)
def cached_power_rho(p0: tuple, shift: tuple, n: float, alpha: float):
    rhos = np.geomspace(1e-5, 10, 26)
    return rhos, {t: np.array([pt.asymptotic_power(np.array(p0), np.array(shift), n=n, rho=float(r), alpha=alpha, test=t)
                               for r in rhos]) for t in POWER_TESTS}


def cached_gof_live(p0: tuple, shift: tuple, n: float, rho: float, alpha: float):
    cv = cached_gof_cv(p0, n, rho, alpha)
    ns, sizes = cached_naive_size(p0, rho, alpha)
    _, pw_n = cached_power_n(p0, shift, rho, alpha)
    rhos, pw_r = cached_power_rho(p0, shift, n, alpha)
    return cv, ns, sizes, pw_n, rhos, pw_r


@st.cache_data(**CACHE)
def cached_indep_cv(pi1: tuple, pi2: tuple, n: float, rho: float, alpha: float):
    return pt.indep_critical_values(np.array(pi1), np.array(pi2), n=n, rho=rho, alpha=alpha)


@st.cache_data(**CACHE)
def cached_indep_naive_size(pi1: tuple, pi2: tuple, rho: float, alpha: float):
    ns = np.geomspace(1e2, 1e7, 26)
    return ns, np.array([pt.naive_indep_type_one_error(np.array(pi1), np.array(pi2), n=float(x), rho=rho, alpha=alpha)
                         for x in ns])


@st.cache_data(**CACHE)
def cached_indep_demo(alt: tuple, n: int, noise: str, privacy: float, alpha: float, seed: int):
    """``ui.eps_codecs.indep_demo`` cached (one seeded noisy table, its projection and both decisions)."""
    return ec.indep_demo(np.array(alt), n=n, noise=noise, privacy=privacy, alpha=alpha, seed=seed)


def session_memo(name: str, key, compute, *, max_entries: int = 8):
    """``compute()`` once per ``key`` in this session, the result kept in session state (bounded, oldest first).

    For the two runs that show a progress bar (Tab 7 "Simulate", PLD of more than 1,000 mechanisms): a
    ``st.cache_data`` function must not drive a bar made outside it, or replaying the cache fails (issue 12),
    so these results live in session state and the bar is driven by a plain callback outside any cache.
    """
    store = st.session_state.setdefault(f"eps__memo_{name}", {})
    if key in store:
        return store[key]
    value = compute()
    while len(store) >= max_entries:
        store.pop(next(iter(store)))
    store[key] = value
    return value


def run_simulation(kind: str, null: tuple, alt: tuple, ns: tuple, privs: tuple, alpha: float, noise: str,
                   trials: int, seed: int, n_jobs: int, progress) -> pd.DataFrame:
    """Tab 7's Monte Carlo table, on this server's cores or the configured Dask cluster (``ui.cluster.run``);
    the same wherever it runs (one spawned seed per chunk)."""
    return cluster.run(pt.simulate_grid, kind, np.array(null), np.array(alt), ns=list(ns), privacy=list(privs),
                       alpha=alpha, noise=noise, trials=trials, m=59, rng=seed, n_jobs=n_jobs, progress=progress)


# =========================================================================== URL-encoded tables
# =========================================================================== header
st.title("Epsilon calculator")
st.markdown(
    "Turn the privacy parameters **ε** (epsilon), **δ** (delta) and **ρ** (rho) into things you can judge: how big "
    "the added noise is, how privacy loss adds up over many releases, how to split a budget so every statistic is "
    f"accurate enough, what ε means for one person, and what it costs in adaptive analysis and in tests. Source: {SEED}, "
    "plus the standard results named next to each number."
)
st.button("Reset to defaults", key="eps_reset", on_click=reset_defaults,
          help="Restore every control on this page to its default (and clear them from the link).")
# Only the open tab draws its numbers and charts; a closed tab draws its controls once they matter (ui/tabs.py).
# A link parameter with one of these prefixes belongs to that tab.
TAB_PREFIXES = [("eps_n1_", "eps_epsilon"), ("eps_comp_",), ("eps_b_", "eps_cmp_"), ("eps_a_",), ("eps_r_", "eps_inv_"),
                ("eps_w_",),
                ("eps_t_",), ("eps_m_",), ("pi_",)]
TABS = lazy_tabs(TAB_NAMES, key="eps_tab", link_keys=TAB_PREFIXES, state_key="eps__drawn_tabs")


# =========================================================================== Tab 1
@st.fragment
def tab_noise(outputs: bool = True) -> None:
    """Tab 1 (controls always; numbers and charts only when ``outputs``, i.e. the tab is open)."""
    st.subheader("Noise and accuracy: how far from the truth is a released number?")
    with methodology():
        st.markdown("Smaller ε: more noise, more privacy. The interval covers the added noise only, not sampling "
                    "error. Laplace: Thm 2.1.2; Gaussian: Thm 2.2.2 and the exact analytic calibration (Balle–Wang "
                    "2018); discrete mechanisms: Canonne–Kamath–Steinke 2020.")
    c1, c2 = st.columns(2)
    query = pick("Query", QUERY_FMT, key="eps_n1_query", container=c1)
    neighbour = pick("Neighbouring datasets differ by", NEIGH_FMT, key="eps_n1_neigh", widget="radio", container=c1)
    use_col = c1.checkbox("Use a column of the shared dataset for L, U and n", key="eps_n1_usecol", **bind())
    lower, upper, n = 0.0, 100.0, None
    if use_col:
        ds = load_active_dataset()
        num = [c for c in ds.frame.columns if pd.api.types.is_numeric_dtype(ds.frame[c]) and ds.frame[c].notna().any()]
        if not num:
            c1.info("The shared dataset has no numeric column; enter L and U instead.")
            use_col = False
        else:
            # the options follow the dataset, so a column of another dataset falls back to the first one
            col = c1.selectbox("Column", num, key="eps_n1_col", **bind())
            x = ds.frame[col].dropna()
            lower, upper, n = float(x.min()), float(x.max()), int(len(x))
            c1.caption(f"L = {lower:g}, U = {upper:g}, n = {n:,} (the column's range and non-missing records, "
                       "re-read whenever the dataset or the column changes; in a real release, choose public "
                       "bounds)")
    if not use_col:
        lower = c1.number_input("Lower clip L", min_value=-1e12, max_value=1e12, value=0.0, key="eps_n1_lower", **bind())
        upper = c1.number_input("Upper clip U", min_value=-1e12, max_value=1e12, value=100.0, key="eps_n1_upper",
                                **bind())
        n = c1.number_input("Records n (public)", min_value=1, max_value=10**9, value=1000, step=1, key="eps_n1_n",
                            **bind())
    try:
        sens = mech.query_sensitivity(query, lower=lower, upper=upper, n=n, neighbour=neighbour)
    except ENGINE_ERRORS as e:
        say_problem(st, e, "Change the query, the bounds or the neighbouring relation.", level="warning")
        return
    is_int = lambda x: abs(x - round(x)) < 1e-12  # noqa: E731
    mechs = tuple(m for m in mech.MECHANISMS if m == "laplace" or m == "gaussian"
                  or (m == "discrete_laplace" and is_int(sens.l1)) or (m == "discrete_gaussian" and is_int(sens.l2)))
    integer = len(mechs) == 4
    mechanism = pick("Mechanism", {m: MECH_FMT[m] for m in mechs}, key="eps_n1_mech", container=c2,
                     help=None if integer else "Discrete mechanisms need an integer sensitivity.")
    gauss = "gaussian" in mechanism
    rule = "analytic"
    if gauss:  # the rule means nothing for the Laplace kinds (pure ε): not drawn for them
        rule = pick("Gaussian calibration", GAUSS_RULE_FMT, key="eps_n1_rule", container=c2,
                    help="Exact: the smallest noise for (ε, δ) (Balle–Wang); classic: σ = Δ√(2ln(1.25/δ))/ε, "
                         "ε < 1 only; zCDP: set ρ = Δ²/(2σ²) (Thm 2.2.2), ε from Thm 2.2.4.")
    fix = pick("You set", FIX_FMT, key="eps_n1_fix", widget="radio", container=c2, horizontal=True,
               help="Exactly one of privacy, noise scale and half-width drives the other two; the other two "
                    "are computed and shown in the cards.")
    scale_in = hw_in = None
    if fix == "scale":
        scale_in = c2.number_input("Noise scale", min_value=1e-9, max_value=1e12, value=1.0, format="%.6g",
                                   key="eps_n1_scale", **bind())
    elif fix == "accuracy":
        hw_in = c2.number_input("Half-width ±", min_value=1e-9, max_value=1e12, value=3.0, format="%.6g",
                                key="eps_n1_hw", **bind())
    noise_outputs(dict(query=query, neighbour=neighbour, lower=lower, upper=upper, n=n, mechanism=mechanism,
                       rule=rule, fix=fix, scale=scale_in, half_width=hw_in), sens, mechs, outputs)


@st.fragment
def noise_outputs(inputs: dict, sens: mech.Sensitivity, mechs: tuple, outputs: bool = True) -> None:
    """Tab 1's privacy sliders and everything they drive, as a nested fragment.

    Moving ε, δ, ρ or the confidence reruns only this part (about 20 elements, not the whole tab's 45): each
    element the browser redraws costs about 2 ms on the reference machine (bench/bench_browser_latency.py), and
    these sliders are the ones a presenter moves. Streamlit reruns a fragment with the arguments of its last
    call, so the query and mechanism inputs above arrive unchanged. The verdict is drawn in this fragment's own
    block: a placeholder made by the outer fragment cannot be written from here (issue 22, the Tab 1 crash).
    """
    mechanism, rule, fix = inputs["mechanism"], inputs["rule"], inputs["fix"]
    gauss = "gaussian" in mechanism
    by_rho = gauss and rule == "zcdp"
    c = st.columns([3, 3, 2], gap="medium")  # each privacy slider has its exact-entry box beside it
    # Only the control that drives is drawn (issue 12): with Fix = scale or accuracy the privacy is computed,
    # and shown in the slider's place; ρ drives only the zCDP rule, and δ exists only for the Gaussian kinds.
    eps = rho = None
    if fix == "privacy" and not by_rho:
        eps = log_slider("ε (privacy loss)", key="eps_epsilon", value=1.0, container=c[0])
    elif fix == "privacy":
        rho = log_slider("ρ (zCDP)", key="eps_n1_rho", min_value=1e-6, max_value=10.0, value=0.1, container=c[0])
    computed_slot = c[0].empty() if fix != "privacy" else None
    # δ is drawn for every mechanism: the chart's Gaussian curves use it even when Laplace is chosen
    delta_all = delta_exponent(key="eps_n1_delta", container=c[1],
                               help="δ of the Gaussian mechanisms (the chart's Gaussian curves use it too)." + (
                                   "" if gauss else " Laplace noise is pure ε-DP: δ does not change its numbers."))
    delta = delta_all if gauss else 0.0
    conf = c[2].slider("Confidence (%)", min_value=50.0, max_value=99.99, value=95.0, step=0.01, key="eps_n1_conf", **bind())
    if not outputs:
        return
    answer = st.container()  # the verdict, above the cards: made inside this fragment, so its reruns may fill it
    sensitivity = sens.l2 if gauss else sens.l1
    try:
        cal = cached_calibrate(mechanism, sensitivity, fix, eps, rho, inputs["scale"], inputs["half_width"], delta,
                               conf / 100, rule)
    except ENGINE_ERRORS as e:
        say_problem(st, e, "Change the mechanism, rule or the fixed value.", level="warning")
        return
    if computed_slot is not None:
        what = "noise scale" if fix == "scale" else "half-width"
        priv = f"ρ = {fmt(cal.rho)}" if by_rho else f"ε = {fmt(cal.epsilon)}"
        computed_slot.markdown(f"**{priv}**  \ncomputed from the fixed {what}")
    m = st.columns(5)
    m[0].metric("Noise scale", fmt(cal.scale), help="b for Laplace, σ for Gaussian, t for discrete Laplace")
    m[1].metric("Noise std", fmt(cal.std))
    m[2].metric("± half-width", fmt(cal.half_width), help="in query units")
    # beyond 10⁴ (or ∞: a deterministic release) ε means no useful privacy; the calculator's range ends there
    m[3].metric("ε" + (f" (δ = {nf.power_of_ten(delta)})" if gauss else ""),
                fmt(cal.epsilon) if cal.epsilon <= mech.EPSILON_MAX else "more than 10,000")
    m[4].metric("ρ (zCDP)", fmt(cal.rho))
    text = ev.noise_verdict(mechanism=mechanism, query=inputs["query"], half_width=cal.half_width,
                            confidence=conf / 100, fix=fix, epsilon=cal.epsilon, delta=delta, rho=cal.rho,
                            scale=cal.scale, by_rho=by_rho)
    warn = ev.noise_guidance(query=inputs["query"], half_width=cal.half_width, lower=inputs["lower"],
                             upper=inputs["upper"], n=inputs["n"], epsilon=cal.epsilon)
    said = verdict(answer, text, warn)
    st.caption(f"Sensitivity (how much one person can change the answer): Δ₁ = {fmt(sens.l1)}, "
               f"Δ₂ = {fmt(sens.l2)}.")
    curves = cached_halfwidth_curves(tuple(mechs), sens.l1, sens.l2, delta_all, conf / 100, rule)
    f1 = ef.make_halfwidth_figure(curves, current_epsilon=cal.epsilon, current_half_width=cal.half_width,
                                  current_mechanism=mechanism, confidence=conf)
    f2 = ef.make_noise_figure(mechanism, scale=cal.scale, half_width=cal.half_width)
    # side by side: both visible at once for a presenter, and half the area to repaint per move (measured ~20 ms)
    g1, g2 = st.columns(2)
    with g1:
        show_figure(f1, key="eps_n1_fig_hw", filename="halfwidth_vs_epsilon.html",
                    caption="Each curve: the ± half-width each mechanism needs at that ε. Lower is more accurate.",
                    alt=f"Line chart, log scales: half-width at {conf:.4g}% confidence against ε from 0.001 to 20 for "
                        f"{', '.join(MECH_FMT[m] for m in mechs)}; every curve falls as ε grows. A diamond marks "
                        f"the current setting, ε = {fmt(cal.epsilon)}, ±{fmt(cal.half_width)}.")
    with g2:
        show_figure(f2, key="eps_n1_fig_noise", filename="noise_distribution.html",
                    caption=f"The noise distribution; {conf:.4g}% of draws fall in the shaded interval.",
                    alt=f"{MECH_FMT[mechanism]} noise distribution centred on 0 with scale {fmt(cal.scale)}; the "
                        f"shaded interval from −{fmt(cal.half_width)} to +{fmt(cal.half_width)} holds {conf:.4g}% "
                        "of the draws.")
    table = ef.calibration_table(cal)
    exports("eps_n1", table=table, name="noise_accuracy")
    # the report names the value the user set in the page's words, never the engine's argument name
    FIXED_WORDS = {"epsilon": "ε", "rho": "ρ (zCDP)", "scale": "noise scale", "half_width": "± half-width"}
    fixed = {"privacy": {"rho": rho} if by_rho else {"epsilon": eps}, "scale": {"scale": inputs["scale"]},
             "accuracy": {"half_width": inputs["half_width"]}}[fix]
    take_away("eps_n1_art", question="How far from the truth is a released number at this privacy level?",
              params={"query": QUERY_FMT[inputs["query"]], "neighbouring datasets": NEIGH_FMT[inputs["neighbour"]],
                      "lower bound L": inputs["lower"], "upper bound U": inputs["upper"], "records n": inputs["n"],
                      "mechanism": MECH_FMT[mechanism], "you set": FIX_FMT[fix],
                      **({"calibration": GAUSS_RULE_FMT[rule], "δ": nf.power_of_ten(delta)} if gauss else {}),
                      **{FIXED_WORDS[k]: fmt(v) for k, v in fixed.items()}, "confidence": f"{conf:.4g}%"},
              headlines=[("Noise scale", fmt(cal.scale)), ("± half-width", f"{fmt(cal.half_width)} at {conf:.4g}%"),
                         ("ε", fmt(cal.epsilon)), ("ρ (zCDP)", fmt(cal.rho))],
              verdicts=said, figures=[("Half-width against ε", f1), ("Noise distribution", f2)],
              sources=["Thm 2.1.2 (Laplace); Thm 2.2.2 (Gaussian, zCDP)", "Balle & Wang 2018 (analytic Gaussian)",
                       "Canonne, Kamath & Steinke 2020 (discrete mechanisms)"],
              epsilon=cal.epsilon if cal.epsilon <= mech.EPSILON_MAX else None, delta=delta,
              script=se.noise_script(repo_root=REPO_ROOT, mechanism=mechanism, sensitivity=sensitivity, fix=fix,
                                     delta=delta, confidence=conf / 100, gaussian_rule=rule, **fixed))


# =========================================================================== Tab 2
COMP_DEFAULT = pd.DataFrame({
    "kind": ["laplace", "gaussian"], "epsilon": [0.2, None], "delta": [0.0, 0.0], "multiplier": [None, 10.0],
    "sigma": [None, None], "scale": [None, None], "sensitivity": [1, 1], "rho": [None, None], "count": [30, 20]})


def comp_mechanisms() -> tuple[list[acc.Mechanism], str]:
    mode = st.session_state.get("eps_comp_mode", "one")
    if mode == "one":
        kind = st.session_state.get("eps_comp_kind", "laplace")
        kmax = int(st.session_state.get("eps_comp_kmax", 1000))
        if kind == "gaussian":
            return [acc.gaussian(float(st.session_state.get("eps_comp_mult", 10.0)), count=kmax)], mode
        return [acc.laplace(float(st.session_state.get("eps_comp_eps", 0.1)), count=kmax)], mode
    return ec.mechanisms_from_frame(st.session_state.get("eps_comp_rows_current", COMP_DEFAULT)), mode


def _composition_results(c2, ms, delta, ks, rules, trules, with_pld: bool, big_pld: bool):
    """Tab 2's curve and table (PLD of a long list behind its button, with a progress bar)."""
    with c2:
        if big_pld and with_pld:
            # the curve's 12 PLD points (resolution 1e-3) take about a seventh of the table's one at 1e-4
            bar = st.progress(0.0, text="Composing PLD…")
            curve, table = session_memo("pld", (tuple(ms), delta, ks, rules, trules), lambda: (
                acc.composition_curve(list(ms), delta=delta, ks=list(ks), rules=rules, pld_points=12,
                                      progress=lambda f: bar.progress(0.15 * f, text=f"PLD curve (12 values of k)… "
                                                                                    f"{0.15 * f:.0%}")),
                acc.composition_table(list(ms), delta=delta, rules=trules,
                                      progress=lambda f: bar.progress(0.15 + 0.85 * f, text=f"PLD table (resolution "
                                                                      f"1e-4)… {0.15 + 0.85 * f:.0%}"))))
            bar.empty()
        else:
            with st.spinner("Composing…"):
                curve = cached_curve(tuple(ms), delta, ks, rules, with_pld)
                table = cached_table(tuple(ms), delta, trules)
    return curve, table


@st.fragment
def tab_composition(outputs: bool = True) -> None:
    """Tab 2 (controls and the list editor always; curves and table only when ``outputs``)."""
    st.subheader("Composition: total privacy loss after many releases")
    slot = st.empty()
    with methodology():
        st.markdown("All curves are valid upper bounds. PLD is the tightest numerical bound. Optimal composition is "
                    "the best possible given only each mechanism's (ε, δ). Basic: Thm 2.1.4; advanced: Thm 2.1.5; "
                    "optimal: Kairouz–Oh–Viswanath 2015 / Murtagh–Vadhan 2016; zCDP: Thms 2.2.3–2.2.5; RDP: Mironov "
                    "2017; PLD: Google's dp-accounting. Each Gaussian-type mechanism is charged δ/(2K) of the target "
                    "δ under the (ε, δ) rules, K being their number.")
    c1, c2 = st.columns([2, 5])
    mode = pick("Mode", {"one": "One mechanism, repeated", "list": "A list"}, key="eps_comp_mode", widget="radio",
                container=c1, horizontal=True)
    if mode == "one":
        kind = pick("Mechanism", {"laplace": "Laplace", "gaussian": "Gaussian"}, key="eps_comp_kind", container=c1)
        if kind == "laplace":
            log_slider("ε per release", key="eps_comp_eps", value=0.1, container=c1)
        else:
            c1.number_input("Noise multiplier σ/Δ₂", min_value=0.05, max_value=1e4, value=10.0, key="eps_comp_mult",
                            **bind(), help="Noise standard deviation divided by the sensitivity: larger is more private.")
        c1.number_input("Number of releases k", min_value=1, max_value=10_000, value=1000, step=1,
                        key="eps_comp_kmax", **bind(), help="The chart runs from 1 to k; the table is at k.")
    else:
        base = table_state("eps_comp_rows", COMP_DEFAULT)
        edited = c2.data_editor(
            base, key="eps_comp_editor", num_rows="dynamic", width="stretch", placeholder="",  # blank, never "None"
            column_config={"kind": st.column_config.SelectboxColumn("mechanism", options=list(acc.KINDS), required=True,
                                                                    format_func=lambda k: ev.MECH_WORDS.get(k, k)),
                           "epsilon": st.column_config.NumberColumn("ε"), "delta": st.column_config.NumberColumn("δ"),
                           "multiplier": st.column_config.NumberColumn("σ/Δ (Gaussian)"),
                           "sigma": st.column_config.NumberColumn("σ (discrete Gaussian)"),
                           "scale": st.column_config.NumberColumn("scale (discrete Laplace)"),
                           "rho": st.column_config.NumberColumn("ρ (zCDP)"),
                           "count": st.column_config.NumberColumn("releases", min_value=1, step=1)})
        encode_table("eps_comp_rows", edited)
        st.session_state["eps_comp_rows_current"] = edited
    delta = delta_exponent(key="eps_comp_delta", container=c1)
    c1.markdown("Rules to compare")  # one column: the labels stay whole in the narrow control column
    rules = tuple(r for r in acc.ALL_RULES
                  if c1.checkbox(acc.RULE_LABELS[r], value=r != "advanced_drv", key=f"eps_comp_r_{r}", **bind()))
    log_axes = c1.checkbox("Log axes", value=True, key="eps_comp_log", **bind())
    if not outputs:
        return
    try:
        ms, _ = comp_mechanisms()
    except ValueError as e:
        c2.error(f"{e}. Each row needs the parameters of its mechanism: Laplace and pure ε-DP → ε; (ε, δ)-DP → ε "
                 "and δ; Gaussian → σ/Δ; discrete Laplace → scale and a whole-number sensitivity; discrete "
                 "Gaussian → σ and a whole-number sensitivity; zCDP → ρ.")
        return
    total = sum(m.count for m in ms)
    ks = tuple(acc.default_ks(total, 50).tolist())
    big_pld = "pld" in rules and total > PLD_BUTTON_LIMIT
    with_pld = "pld" in rules
    if big_pld:
        # the button approves PLD for this list and δ only; any change asks again (spec §6: behind a button)
        pld_key = (tuple(ms), delta)
        if c2.button("Compute PLD (more than 1,000 mechanisms)", key="eps_comp_pldbtn"):
            st.session_state["eps_comp_pld_ok"] = pld_key
        with_pld = st.session_state.get("eps_comp_pld_ok") == pld_key
        if not with_pld:
            c2.info("PLD for more than 1,000 mechanisms runs only when you press the button above.")
    trules = tuple(r for r in rules if r != "pld" or with_pld)
    try:
        curve, table = _composition_results(c2, ms, delta, ks, rules, trules, with_pld, big_pld)
    except ENGINE_ERRORS as e:
        say_problem(c2, e, "Change the list or δ.")
        return
    releases = ev.describe_releases([m.kind for m in ms], [m.count for m in ms],
                                    [m.epsilon if m.kind in ("laplace", "pure_dp") else None for m in ms],
                                    [m.noise_multiplier if m.kind == "gaussian" else None for m in ms])
    said = verdict(slot, ev.composition_verdict(table, releases=releases, delta=delta), ev.total_guidance(table))
    fig = ef.make_composition_figure(curve, log_axes=log_axes, delta=delta)
    best = ef.best_valid_envelope(curve)
    with c2:
        show_figure(fig, key="eps_comp_fig", filename="composition.html",
                    caption="Each line: total ε at δ after k releases under one rule. Grey band: the best valid bound.",
                    alt=f"Line chart{', log scales' if log_axes else ''}: total ε against the number of releases k "
                        f"from 1 to {total:,}, one line per rule ({', '.join(ef.RULE_PLAIN[r] for r in rules)}); "
                        + (f"the best valid bound reaches ε = {fmt(float(best['epsilon'].iloc[-1]))} at k = "
                           f"{int(best['k'].iloc[-1]):,}." if len(best) else "no rule is valid here."))
    people = ef.composition_table_for_people(table, k=total)
    valid = people["valid here"] == "yes"  # invalid rules are named below the table, with the reason
    show_table(people[valid].drop(columns=["valid here", "why not valid"]),
               {"total ε": "{:.4g}", "δ": ev.power_of_ten, "share of the basic sum": "{:.4g}"})
    if (~valid).any():
        st.caption("Not valid here: " + "; ".join(f"{r} ({md_escape(n, max_len=120)})" for r, n in
                                                  zip(people.loc[~valid, "rule"], people.loc[~valid, "why not valid"])))
    rows = [{k: v for k, v in m.__dict__.items() if v is not None} for m in ms]
    exports("eps_comp", table=people, name="composition")
    take_away("eps_comp_art", question="What is the total privacy loss after these releases?",
              params={"releases": releases, "δ": nf.power_of_ten(delta),
                      "rules": ", ".join(ef.RULE_PLAIN[r] for r in trules)},
              headlines=[(ef.RULE_PLAIN[r], fmt(e) if v else "not valid here")
                         for r, e, v in zip(table["rule"], table["epsilon"], table["valid"])],
              verdicts=said, figures=[("Total ε against the number of releases", fig)],
              sources=["Thms 2.1.4, 2.1.5, 2.2.3–2.2.5", "Kairouz, Oh & Viswanath 2015; Murtagh & Vadhan 2016",
                       "Mironov 2017 (Rényi DP)", "Google dp-accounting (PLD)"], delta=delta,
              script=se.composition_script(repo_root=REPO_ROOT, mechanisms=rows, delta=delta, rules=trules))


# =========================================================================== Tab 4
@st.fragment
def tab_adaptive(outputs: bool = True) -> None:
    """Tab 4 (controls always; trace, figure and table only when ``outputs``)."""
    st.subheader("Adaptive analysis: how many requests fit in a budget when they are not planned in advance?")
    slot = st.empty()
    with methodology():
        st.markdown("A filter decides before each request whether it may run. An odometer reports the loss so far "
                    "and pays a little for not knowing the plan. Basic: Thm 5.3.7; advanced filter: Thm 5.5.1 (eq. "
                    "5.12); odometers: Lemma 5.6.4, Thm 5.6.5, Thms 5.7.5–5.7.6. The orange dashed line is advanced "
                    "composition applied after the fact: not a valid bound (Thm 5.6.1).")
    c1, c2 = st.columns([2, 5])
    kind = pick("Privacy loss εᵢ of each request", SEQ_FMT, key="eps_a_seq", container=c1)
    if kind in ("constant", "spikes"):
        log_slider("εᵢ (each request)", key="eps_a_const", min_value=1e-6, max_value=10.0, value=0.01, container=c1)
    if kind == "geometric":
        log_slider("ε₁ (first request)", key="eps_a_g0", min_value=1e-6, max_value=10.0, value=0.1, container=c1)
        c1.number_input("each next request: ε times", min_value=0.5, max_value=1.0, value=0.99, format="%.4g",
                        key="eps_a_ratio", **bind())
    if kind == "uniform":
        log_slider("smallest εᵢ", key="eps_a_lo", min_value=1e-6, max_value=10.0, value=0.001, container=c1)
        log_slider("largest εᵢ", key="eps_a_hi", min_value=1e-6, max_value=10.0, value=0.02, container=c1)
        seed = seed_input(key="eps_a_seed", container=c1)
        c1.caption(f"Seed {seed}: the same seed reproduces the sequence.")
    if kind == "spikes":
        c1.number_input("every r-th request", min_value=2, max_value=10_000, value=50, step=1, key="eps_a_r", **bind())
        c1.number_input("is multiplied by s", min_value=1.0, max_value=1e4, value=10.0, key="eps_a_s", **bind())
    if kind == "pasted":
        c1.text_area("εᵢ list (comma or newline separated)", value="0.1, 0.1, 0.05, 0.2", key="eps_a_paste", **bind())
    else:
        c1.number_input("requests", min_value=1, max_value=100_000, value=2000, step=1, key="eps_a_count", **bind())
    eg = log_slider("ε_g (global budget)", key="eps_a_epsg", value=1.0, container=c1)
    dg = delta_exponent(key="eps_a_delta", container=c1, label="δ_g = 10^x (must be < 1/e), x =")
    n = c1.number_input("n (records; granularity 1/n²)", min_value=6, max_value=10**9, value=10_000, step=1,
                        key="eps_a_n", **bind())
    rule = pick("Filter named in the answer", FILTER_FMT, key="eps_a_rule", container=c1)
    if not outputs:
        return
    try:
        seq = ec.epsilon_sequence(kind, st.session_state)
    except ValueError as e:  # our own message about the pasted list
        c2.error(str(e))
        return
    try:
        trace, halts = cached_adaptive(tuple(seq), eg, dg, int(n))
    except ENGINE_ERRORS as e:
        say_problem(c2, e, "Change the sequence, ε_g, δ_g or n.")
        return
    fig = ef.make_adaptive_figure(trace, epsilon_g=eg, halts={r: h.halt_round for r, h in halts.items()})
    answered = {r: int(sum(halts[r].decisions)) for r in ("basic", "advanced", "zcdp")}
    said = verdict(slot, ev.adaptive_verdict(answered=answered, requests=len(seq), epsilon_g=eg, rule=rule))
    with c2:
        show_figure(fig, key="eps_a_fig", filename="adaptive.html",
                    caption="Running bound after each request. A filter stops at its vertical line; odometers keep "
                            "counting. The black line is the budget.",
                    alt=f"Line chart: privacy-loss bound against request number 1 to {len(seq):,}, one line per "
                        f"filter or odometer, with the budget ε_g = {fmt(eg)} as a horizontal line; the filters "
                        "stop at " + ", ".join(f"{r} request {h.halt_round}" if h.halt_round else f"{r} never"
                                              for r, h in halts.items()) + ".")
    final = trace.groupby("rule")["bound"].last()
    table = pd.DataFrame({
        "quantity": [f"requests allowed by the {FILTER_FMT[r]} filter" for r in ("basic", "advanced", "zcdp")] +
                    [acc.ADAPTIVE_LABELS[r] + " after all requests" for r in acc.ADAPTIVE_LABELS],
        "value": [float(sum(halts[r].decisions)) for r in ("basic", "advanced", "zcdp")] + [float(final[r]) for r in acc.ADAPTIVE_LABELS]})
    st.dataframe(table.style.format({"value": "{:.4g}"}), hide_index=True, width="stretch")
    exports("eps_a", table=table, name="adaptive")
    take_away("eps_a_art", question="How many unplanned requests fit in a privacy budget?",
              params={"requests": f"{len(seq):,} ({SEQ_FMT[kind]})", "budget ε_g": fmt(eg),
                      "δ_g": nf.power_of_ten(dg), "records n": f"{int(n):,}"},
              headlines=[(f"Requests answered by the {FILTER_FMT[r]} filter", f"{a:,} of {len(seq):,}")
                         for r, a in answered.items()],
              verdicts=said, figures=[("Privacy-loss bound as requests arrive", fig)],
              sources=["Thm 5.3.7, Thm 5.5.1 (eq. 5.12), Lemma 5.6.4, Thms 5.6.1, 5.6.5, 5.7.5–5.7.6"],
              epsilon=eg, delta=dg, seed=int(st.session_state.get("eps_a_seed", 0)) if kind == "uniform" else None,
              script=se.adaptive_script(repo_root=REPO_ROOT, kind=kind, epsilon_g=eg, delta_g=dg, n=int(n),
                                        values={k: v for k, v in st.session_state.items() if str(k).startswith("eps_a_")},
                                        epsilons=seq if kind == "pasted" else None))


# =========================================================================== Tab 5
@st.fragment
def tab_risk(outputs: bool = True) -> None:
    """Tab 5 (controls always; bounds and figures only when ``outputs``)."""
    st.subheader("ε as risk: what can an attacker learn about one person?")
    slot = st.empty()
    c1, c2 = st.columns([2, 5])
    eps = log_slider("ε", key="eps_r_eps", value=1.0, container=c1)
    has_delta = c1.checkbox("δ > 0", key="eps_r_hasdelta", **bind())
    delta = delta_exponent(key="eps_r_delta", container=c1) if has_delta else 0.0
    prior = c1.slider("Attacker's prior belief (%)", 1, 99, 10, key="eps_r_prior", **bind()) / 100
    shape = pick("Compare with the mechanism", SHAPE_FMT, key="eps_r_shape", widget="radio", container=c1)
    mu = c1.number_input("μ = Δ/σ", min_value=0.01, max_value=20.0, value=1.0, key="eps_r_mu", **bind(),
                         help="Sensitivity divided by the noise's standard deviation: smaller is more private."
                         ) if shape == "gaussian" else None
    use_pld = c1.checkbox("Add the Composition tab's list", key="eps_r_pld", **bind(),
                          help="Draw the trade-off curve of the whole list on the Composition tab (its PLD profile).")
    if not outputs:
        if RISK_INVERSE is not None:  # its controls keep their link values while the tab is closed
            RISK_INVERSE(key_prefix="eps_inv_")
        return
    b = risk.posterior_bound(prior, epsilon=eps)
    adv_now = risk.advantage_bound(epsilon=eps, delta=delta)
    said = verdict(slot, ev.risk_verdict(prior=prior, epsilon=eps, lower=b.lower, upper=b.upper, advantage=adv_now,
                                  delta=delta), ev.epsilon_guidance(eps))
    with c2:
        st.metric("Worst-case posterior belief", f"{b.lower:.1%} – {b.upper:.1%}", help="from the prior above")
        if has_delta:
            st.warning(f"With δ = {nf.power_of_ten(delta)} > 0 there is no uniform posterior bound: with probability "
                       "up to δ the release can reveal more. The range above holds outside that event.")
    table = ef.posterior_table_for_people(risk.posterior_table(epsilon=eps))
    st.dataframe(table.style.format("{:.2%}"), hide_index=True, width="stretch")
    fpr = np.linspace(0, 1, 401)
    any_label = (f"any mechanism with ε = {eps:.3g}" + (f", δ = {nf.power_of_ten(delta)}" if delta else ""))
    curves = {any_label: risk.tradeoff_fnr(fpr, epsilon=eps, delta=delta)}
    if shape == "gaussian":
        curves[f"Gaussian μ = {mu:.3g}"] = risk.tradeoff_gaussian(fpr, mu=mu)
    if shape == "laplace":
        curves[f"Laplace ε = {eps:.3g}"] = risk.tradeoff_laplace(fpr, epsilon=eps)
    if use_pld:
        try:
            ms, _ = comp_mechanisms()
            prof = cached_pld_profile(tuple(ms))
            if len(prof):
                curves = {"Composition tab (PLD profile)": risk.tradeoff_from_profile(
                    fpr, epsilons=prof["epsilon"].to_numpy(), deltas=prof["delta"].to_numpy()), **curves}
        except ENGINE_ERRORS as e:
            st.warning(f"The Composition tab's list cannot be used: {md_escape(e, max_len=400)}")
    trade_fig = ef.make_tradeoff_figure(fpr, curves)
    show_figure(trade_fig, key="eps_r_fig_trade", filename="tradeoff.html",
                caption="Any membership test's (false-positive, false-negative) pair must lie above the curve. "
                        "The dashed diagonal is guessing (Kairouz–Oh–Viswanath 2015; Dong–Roth–Su 2022).",
                alt=f"Trade-off chart: least false-negative rate against false-positive rate from 0 to 1 for "
                    f"{', '.join(curves)}; the shaded area below the first curve is impossible for any attack, and "
                    f"the dashed diagonal is guessing. At a 5% false-positive rate the false-negative rate is at "
                    f"least {float(risk.tradeoff_fnr(np.array([0.05]), epsilon=eps, delta=delta)[0]):.0%}.")
    eg = np.geomspace(1e-3, 20, 200)
    adv = {"any (ε, δ) mechanism": np.array([risk.advantage_bound(epsilon=float(e), delta=delta) for e in eg]),
           "Laplace": np.array([risk.laplace_advantage(epsilon=float(e)) for e in eg])}
    adv_fig = ef.make_advantage_figure(eg, adv, current=eps)
    show_figure(adv_fig, key="eps_r_fig_adv", filename="advantage.html",
                caption=f"Largest true-positive minus false-positive rate of any membership attack; at ε = "
                        f"{eps:.3g}: {adv_now:.3g}.",
                alt=f"Line chart: largest membership advantage against ε from 0.001 to 20 (log scale), for any "
                    f"mechanism and for Laplace; both rise from 0 towards 1. At ε = {eps:.3g} it is {adv_now:.3g}.")
    if RISK_INVERSE is not None:
        st.subheader("From risk to ε: the largest ε that keeps a risk below your target")
        RISK_INVERSE(key_prefix="eps_inv_")
    if IN_CONTEXT is not None:
        st.subheader(f"ε = {nf.given(eps)} among published deployments")
        IN_CONTEXT(eps, delta or None)
    exports("eps_r", table=table, name="risk")
    take_away("eps_r_art", question="What can an attacker learn about one person from this release?",
              params={"ε": fmt(eps), "δ": nf.power_of_ten(delta), "attacker's prior belief": f"{prior:.0%}"},
              headlines=[("Worst-case posterior belief", f"{b.lower:.1%} – {b.upper:.1%}"),
                         ("Largest membership advantage", f"{adv_now:.3g}")],
              verdicts=said, figures=[("Attack trade-off", trade_fig), ("Membership advantage against ε", adv_fig)],
              sources=["Def. 2.1.1 (posterior bound)", "Kairouz, Oh & Viswanath 2015; Dong, Roth & Su 2022"],
              epsilon=eps, delta=delta,
              script=se.risk_script(repo_root=REPO_ROOT, epsilon=eps, delta=delta, prior=prior))


# =========================================================================== Tab 7
def _preset_table3() -> None:
    st.session_state.update(eps_t_test="gof", eps_t_d=100, eps_t_p0mode="uniform", eps_t_priv="rho",
                            eps_t_rho=0.00125, eps_t_n=1000.0)


def _preset_power() -> None:
    st.session_state.update(eps_t_test="gof", eps_t_d=4, eps_t_p0mode="entered", eps_t_p0="0.5, 1/6, 1/6, 1/6",
                            eps_t_shift="0.01, -0.01/3, -0.01/3, -0.01/3", eps_t_priv="rho", eps_t_rho=0.00125)


def _preset_indep() -> None:
    # [T] §7.3.1: π⁽¹⁾ = (2/3, 1/3), π⁽²⁾ = (1/2, 1/2), alternative π⁽¹⁾π⁽²⁾ᵀ + 0.01·(1, −1)ᵀ(1, 0)
    st.session_state.update(eps_t_test="independence", eps_t_r=2, eps_t_c=2, eps_t_pi1="2/3, 1/3",
                            eps_t_pi2="1/2, 1/2", eps_t_ishift="", eps_t_priv="rho", eps_t_rho=0.00125)


def _resize_indep() -> None:
    """After r or c changes, marginals and shift of the wrong length become uniform / the default shift."""
    ss = st.session_state
    r, c = int(ss.get("eps_t_r", 2)), int(ss.get("eps_t_c", 2))
    if ec.count_items(ss.get("eps_t_pi1", "")) != r:
        ss["eps_t_pi1"] = ", ".join([f"1/{r}"] * r)
    if ec.count_items(ss.get("eps_t_pi2", "")) != c:
        ss["eps_t_pi2"] = ", ".join([f"1/{c}"] * c)
    if str(ss.get("eps_t_ishift", "")).strip() and ec.count_items(ss["eps_t_ishift"]) != r * c:
        ss["eps_t_ishift"] = ""


def _simulation_controls() -> tuple[str, int, int, int, bool]:
    """Tab 7's Monte Carlo controls: sweep, points per axis, trials, seed and the Simulate button."""
    st.markdown("**Simulation** (Monte Carlo, behind a button): empirical size (data drawn from the null) and power "
                "(from the null + Δ) on a grid of n, of the privacy parameter, or both.")
    s1, s2, s3, s4, s5 = st.columns(5)
    # fixed labels: a bound radio stores its label in the URL, so it must not depend on the privacy choice
    sweep = pick("Sweep", {"n": "n", "privacy": "privacy (ρ or ε)", "both": "n × privacy"}, key="eps_t_sweep",
                 widget="radio", container=s1)
    points = s2.slider("Points per axis", 2, 5, 3, key="eps_t_points", **bind(),
                       help="Log-spaced from a tenth to ten times the current value.")
    trials = s3.number_input("Trials", min_value=50, max_value=100_000, value=1000, step=50, key="eps_t_trials", **bind())
    seed = seed_input(key="eps_t_seed", container=s4)
    run = s5.button("Simulate", key="eps_t_sim", type="primary")
    with s5:
        cluster.show_where(CORES)
    return sweep, points, trials, seed, run


@st.fragment
def tab_tests(outputs: bool = True) -> None:
    """Tab 7 (all controls always, simulation ones included; tables, curves and runs only when ``outputs``)."""
    st.subheader("Private chi-square tests")
    slot = st.empty()
    with methodology():
        st.markdown("Adding noise to counts breaks the classical χ² test: it rejects true hypotheses far too often. "
                    "The private tests account for the noise (Ch. 6–7: AsymptGOF Thm 6.1.7, projected statistic Thm "
                    "7.2.6, Monte Carlo Alg. 8; independence: 2MLE Alg. 11, AsymptIndep Lemma 6.2.3 / Alg. 13, "
                    "projected GenChiTest Alg. 15).")
    b1, b2, b3 = st.columns(3)
    b1.button("Thesis Table 3 (d = 100)", key="eps_t_pre3", on_click=_preset_table3,
              help="d = 100 uniform categories, ρ = 0.00125, n = 1,000 (thesis Table 3).")
    b2.button("Thesis power setting (d = 4)", key="eps_t_prep", on_click=_preset_power)
    b3.button("Thesis independence (2 × 2)", key="eps_t_prei", on_click=_preset_indep)
    c1, c2 = st.columns([2, 5])
    test = pick("Test", {"gof": "Goodness of fit", "independence": "Independence (r × c)"}, key="eps_t_test",
                widget="radio", container=c1, horizontal=True)
    d, p0mode, p0_text, shift_text = 4, "uniform", "", ""
    r = c = 2
    if test == "gof":
        d = c1.slider("Categories d", 2, 200, 4, key="eps_t_d", **bind())
        p0mode = pick("Null hypothesis p⁰", {"uniform": "uniform", "entered": "typed below"}, key="eps_t_p0mode",
                      widget="radio", container=c1, horizontal=True)
        if p0mode == "entered":
            p0_text = c1.text_input("p⁰ (comma separated)", value="0.5, 1/6, 1/6, 1/6", key="eps_t_p0", **bind())
        shift_text = c1.text_input("Shift Δ (sums to 0; blank = 0.01·(1, −1/(d−1), …))", value="", key="eps_t_shift",
                                   **bind())
    else:
        rc = c1.columns(2)
        r = rc[0].slider("Rows r", 2, 6, 2, key="eps_t_r", on_change=_resize_indep, **bind())
        c = rc[1].slider("Columns c", 2, 6, 2, key="eps_t_c", on_change=_resize_indep, **bind())
        pi1_text = c1.text_input("Row marginals π⁽¹⁾", value="2/3, 1/3", key="eps_t_pi1", **bind())
        pi2_text = c1.text_input("Column marginals π⁽²⁾", value="1/2, 1/2", key="eps_t_pi2", **bind())
        shift_text = c1.text_input("Shift Δ from independence (r·c numbers row by row, sum 0; blank = 0.01 moved "
                                   "from cell (r, 1) to (1, 1))", value="", key="eps_t_ishift", **bind())
    n = log_slider("n (records)", key="eps_t_n", min_value=100.0, max_value=1e7, value=10_000.0, steps_per_decade=10, container=c1)
    priv = pick("Privacy", {"rho": "ρ (Gaussian noise)", "eps": "ε (Laplace noise, Lap(2/ε))"}, key="eps_t_priv",
                widget="radio", container=c1, horizontal=True)
    if priv == "rho":
        rho = log_slider("ρ", key="eps_t_rho", min_value=1e-6, max_value=10.0, value=0.00125, container=c1)
        c1.caption(f"≈ ε = {acc.zcdp_to_dp(rho, 1e-6):.4g} at δ = 10⁻⁶")
        eps = None
        rho_eff = rho
    else:
        eps = log_slider("ε", key="eps_t_eps", value=1.0, container=c1)
        rho = None
        rho_eff = pt.noise_rho("laplace", epsilon=eps)
    noise = "gaussian" if priv == "rho" else "laplace"
    privacy_words = f"ρ = {nf.number(rho, 3)}" if priv == "rho" else f"ε = {nf.number(eps, 3)}"
    alpha = c1.number_input("α (significance)", min_value=0.001, max_value=0.5, value=0.05, format="%.3g",
                            key="eps_t_alpha", **bind())
    if not outputs:
        _simulation_controls()
        return
    try:
        if test == "gof":
            p0 = np.full(d, 1 / d) if p0mode == "uniform" else ec.parse_vector(p0_text, d, "p⁰")
            shift = pt.default_gof_shift(d) if not shift_text.strip() else ec.parse_vector(shift_text, d, "shift Δ")
            cv, ns, sizes, pw_n, rhos, pw_r = cached_gof_live(tuple(p0), tuple(shift), float(n), float(rho_eff), float(alpha))
            null, alt = p0, p0 + shift
        else:
            pi1, pi2, null, alt = ec.indep_setting(r, c, pi1_text, pi2_text, shift_text)
            icv = cached_indep_cv(tuple(pi1), tuple(pi2), float(n), float(rho_eff), float(alpha))
            ins, isizes = cached_indep_naive_size(tuple(pi1), tuple(pi2), float(rho_eff), float(alpha))
    except ENGINE_ERRORS as e:  # typed vectors that do not fit d, r or c: the parsers quote the text (escaped here)
        say_problem(c1, e, level="warning")
        return
    with c2:
        if test == "gof":
            st.markdown("**Critical values** (reject when the statistic exceeds them)")
            cvt = pd.DataFrame({"test": ["classical χ²_{d−1} (invalid on noisy counts)", "AsymptGOF (weighted χ², Thm 6.1.7)",
                                         "projected 𝒬 (χ²_{d−1}, Thm 7.2.6)", "nonprojected Q (χ²_d, Thm 7.2.3)"],
                                "critical value": [cv.classical, cv.asympt_gof, cv.projected, cv.nonprojected]})
            st.dataframe(cvt.style.format({"critical value": "{:.4g}"}), hide_index=True, width="stretch")
            if priv == "eps":
                st.caption("With Laplace noise the projected test uses a Monte Carlo critical value (Alg. 16); the "
                           "values above use ρ = ε²/8 (equal variance) as a guide.")
            size_now = pt.naive_type_one_error(np.array(p0), n=float(n), rho=float(rho_eff), alpha=float(alpha))
            power_now = pt.asymptotic_power(np.array(p0), np.array(shift), n=float(n), rho=float(rho_eff),
                                            alpha=float(alpha), test="projected")
            said = verdict(slot, ev.private_tests_verdict(n=n, privacy=privacy_words, alpha=alpha, naive_size=size_now,
                                                   power=power_now))
            show_figure(ef.make_size_figure(ns, sizes, alpha=alpha), key="eps_t_fig_size", filename="naive_size.html",
                        caption="If this curve is above the dashed line, the classical test on noisy counts "
                                "rejects true hypotheses more often than the α you asked for.",
                        alt=f"Line chart: false-alarm rate of the classical χ² test on noisy counts against n from "
                            f"100 to 10 million (log scale), with α = {alpha:g} dashed; at n = {int(n):,} it is "
                            f"{size_now:.0%}.")
            show_figure(ef.make_power_figure(ns, {"projected": pw_n["projected"], "nonprojected": pw_n["nonprojected"],
                                                  "non-private": pw_n["classical_nonprivate"]}, xlabel="n", alpha=alpha),
                        key="eps_t_fig_pn", filename="power_vs_n.html", caption="Chance of detecting the shift Δ.",
                        alt="Line chart: power to detect the shift against n (log scale) for the projected, "
                            "non-projected and non-private tests; power grows with n, the non-private test first.")
            show_figure(ef.make_power_figure(rhos, {"projected": pw_r["projected"], "nonprojected": pw_r["nonprojected"],
                                                    "non-private": pw_r["classical_nonprivate"]}, xlabel="ρ", alpha=alpha),
                        key="eps_t_fig_pr", filename="power_vs_rho.html",
                        caption="More privacy (smaller ρ) costs power; the non-private line is the ceiling.",
                        alt=f"Line chart: power against ρ from 10⁻⁵ to 10 (log scale) at n = {int(n):,}; the private "
                            "tests' power rises with ρ towards the flat non-private line.")
            table = cvt
        else:
            df_ = (r - 1) * (c - 1)
            table = pd.DataFrame({"test": [f"classical χ²_{df_} (invalid on noisy counts)",
                                           "AsymptIndep (weighted χ², Lemma 6.2.3, at these marginals)",
                                           f"projected GenChiTest (χ²_{df_}, Alg. 15)"],
                                  "critical value": [icv.classical, icv.asympt_indep, icv.projected]})
            st.markdown(f"**{r} × {c} table**, null π⁽¹⁾π⁽²⁾ᵀ with π⁽¹⁾ = ({', '.join(f'{v:.3g}' for v in pi1)}), "
                        f"π⁽²⁾ = ({', '.join(f'{v:.3g}' for v in pi2)}). Critical values (reject above):")
            st.dataframe(table.style.format({"critical value": "{:.4g}"}), hide_index=True, width="stretch")
            st.caption("AsymptIndep first projects the noisy table onto {h ≥ 0, Σh = n} (2MLE, Alg. 11) and reads the "
                       "marginals off the projection; in a test its weights use those estimated marginals. No "
                       "conclusion (fail to reject) when a projected cell is < 5, or for the projected test when "
                       "any n·π̃ᵢπ̃ⱼ ≤ 5. With much noise (small nρ) AsymptIndep is conservative: it rejects true "
                       "hypotheses less often than α and so has less power, as the thesis reports (§6.3.2).")
            isize_now = pt.naive_indep_type_one_error(np.array(pi1), np.array(pi2), n=float(n), rho=float(rho_eff),
                                                      alpha=float(alpha))
            said = verdict(slot, ev.private_tests_verdict(n=n, privacy=privacy_words, alpha=alpha, naive_size=isize_now))
            show_figure(ef.make_size_figure(ins, isizes, alpha=alpha), key="eps_t_fig_isize",
                        filename="naive_independence_size.html",
                        caption="Pearson's independence test on noisy counts: its asymptotic false-alarm rate at "
                                "these marginals (Lemma 6.2.3 weights).",
                        alt=f"Line chart: false-alarm rate of Pearson's independence test on noisy counts against n "
                            f"(log scale), with α = {alpha:g} dashed; at n = {int(n):,} it is {isize_now:.0%}.")
            demo_seed = int(st.session_state.get("eps_t_seed", 0))
            with st.expander(f"One noisy table drawn from the alternative (seed {demo_seed}): 2MLE and the decisions"):
                tab_, proj_, res_ = cached_indep_demo(tuple(map(tuple, alt)), int(n), noise, float(
                    rho if priv == "rho" else eps), float(alpha), demo_seed)
                cols = [f"column {j + 1}" for j in range(c)]
                e1, e2 = st.columns(2)
                e1.markdown("Noisy counts h̃")
                e1.dataframe(pd.DataFrame(tab_, columns=cols).style.format("{:.1f}"), width="stretch")
                e2.markdown("2MLE projection (h ≥ 0, Σh = n)")
                e2.dataframe(pd.DataFrame(proj_, columns=cols).style.format("{:.1f}"), width="stretch")
                dec = pd.DataFrame({
                    "test": ["AsymptIndep (Alg. 13)", "projected GenChiTest (Alg. 15)"],
                    "statistic": [x.statistic for x in res_], "critical value": [x.critical_value for x in res_],
                    "decision": ["no conclusion" if x.statistic is None else ("reject" if x.reject else "do not reject")
                                 for x in res_]})
                st.dataframe(dec.style.format({"statistic": "{:.4g}", "critical value": "{:.4g}"}, na_rep="n/a"),
                             hide_index=True, width="stretch")
    sweep, points, trials, seed, run = _simulation_controls()
    privacy = rho if priv == "rho" else eps
    p_lo, p_hi = (1e-6, 10.0) if priv == "rho" else (1e-3, 20.0)
    ns_grid = ec.sweep_values(float(n), 100, 10**7, points, integer=True) if sweep != "privacy" else (int(n),)
    priv_grid = ec.sweep_values(float(privacy), p_lo, p_hi, points, integer=False) if sweep != "n" else (float(privacy),)
    null_t = tuple(map(tuple, null)) if test == "independence" else tuple(null)
    alt_t = tuple(map(tuple, alt)) if test == "independence" else tuple(alt)
    sim_key = (test, null_t, alt_t, ns_grid, priv_grid, float(alpha), noise, int(trials), int(seed))
    if run:
        st.session_state["eps_t_last_sim"] = sim_key
    if st.session_state.get("eps_t_last_sim") == sim_key:
        cells = len(ns_grid) * len(priv_grid) * 2
        # measured cost per trial and grid cell on the reference machine (GOF with m = 59; independence grows
        # with r·c); both cores only when the work outweighs starting the joblib workers (~1 s). The table is
        # the same for any number of workers.
        per_trial = 5e-5 if test == "gof" else 1.5e-3 * max(1.0, r * c / 4)
        n_jobs = CORES if int(trials) * cells * per_trial > 2.0 else 1
        with st.status("Running the simulation…", expanded=False) as status:
            bar = st.progress(0.0, text="Simulating…")
            try:
                res = session_memo("sim", sim_key, lambda: run_simulation(
                    test, null_t, alt_t, ns_grid, priv_grid, float(alpha), noise, int(trials), int(seed), n_jobs,
                    lambda f: bar.progress(min(1.0, f), text=f"Simulating… {f:.0%}")), max_entries=4)
            except ENGINE_ERRORS as e:
                status.update(label="Simulation not run", state="error")
                say_problem(st, e, "The data are drawn from the null and from the null + Δ: both need entries > 0.")
                return
            bar.empty()
            status.update(label="Simulation done", state="complete")
        pname = "rho" if noise == "gaussian" else "epsilon"
        axis = pname if sweep == "privacy" else "n"
        where = cluster.placement()
        ran_on = (f"the Dask cluster at {md_escape(where.address)}" if where.on_cluster else
                  f"{n_jobs} local worker process{'es' if n_jobs > 1 else ''}")
        st.caption(f"Seed {seed}; {int(trials)} trials per cell; m = 59 Monte Carlo draws (rank "
                   f"{pt.mc_rank(59, alpha) if 59 > 1 / alpha else 'n/a'}). Error bars are 1.96 standard errors. "
                   f"Run on {ran_on} (same numbers wherever it runs).")
        show_figure(ef.make_simulation_figure(res, axis=axis, series=pname if sweep == "both" else None, alpha=alpha),
                    key="eps_t_fig_sim", filename="private_tests_simulation.html",
                    caption="Left: size (should stay at or below the dashed α). Right: power against the shift Δ.",
                    alt=f"Two charts against {'n' if axis == 'n' else pname} (log scale), one line per test with "
                        f"error bars: left, the share of {int(trials)} simulated null datasets each test rejected "
                        f"(α = {alpha:g} dashed); right, the share of shifted datasets it rejected (power).")
        show = ef.simulation_table_for_people(res, privacy=pname)
        st.dataframe(show.style.format({"rejection rate": "{:.3f}", "standard error": "{:.3f}",
                                        ("ρ" if pname == "rho" else "ε"): "{:.4g}"}), hide_index=True, width="stretch")
        download_csv(show, filename="private_tests_simulation.csv", key="eps_t_sim_csv")
    params = dict(test=test, n=n, privacy=priv, rho=rho, epsilon=eps, alpha=alpha)
    if test == "gof":
        params.update(d=d, p0=list(map(float, p0)), shift=list(map(float, shift)))
    else:
        params.update(r=r, c=c, pi1=list(map(float, pi1)), pi2=list(map(float, pi2)),
                      alternative=[list(map(float, row)) for row in alt])
    exports("eps_t", table=table, name="private_tests")
    take_away("eps_t_art", question="Do χ² tests on noisy counts keep their error rate?",
              params={"test": {"gof": "Goodness of fit", "independence": f"Independence ({r} × {c})"}[test],
                      "records n": f"{int(n):,}", "privacy": privacy_words, "α": f"{alpha:g}"},
              headlines=[(str(t), fmt(v)) for t, v in zip(table["test"], table["critical value"])],
              verdicts=said, sources=["Thm 6.1.7, Lemma 6.2.3, Thms 7.2.3, 7.2.6; Algs 8, 11, 13, 15, 16"],
              seed=int(st.session_state.get("eps_t_seed", 0)),
              script=se.tests_script(repo_root=REPO_ROOT, test=test, n=float(n), rho=float(rho_eff), alpha=float(alpha),
                                     privacy_note="" if priv == "rho" else f"ρ = ε²/8 for Laplace noise Lap(2/ε), ε = {eps!r}",
                                     **({"p0": list(map(float, p0)), "shift": list(map(float, shift))} if test == "gof"
                                        else {"pi1": list(map(float, pi1)), "pi2": list(map(float, pi2))})))


# =========================================================================== Tab 8
def _target_gamma_input(alpha: float) -> float:
    return st.number_input("Target γ (inverse: largest ε)", min_value=1e-9, max_value=float(alpha), value=float(alpha) / 5,
                           format="%.3g", key="eps_m_gamma", **bind())


def _outcomes_input() -> float:
    return st.number_input("Description length: number of possible outcomes |Y|", min_value=2.0, value=float(2**20),
                           format="%.6g", key="eps_m_range", **bind())


def _coherence_eps_max(mi) -> float:
    """The coherence ε_max section (seed 000 §6.3): its controls and one cheap metric, drawn in every state."""
    st.markdown("#### Demographic coherence: largest ε certified")
    d1, d2, d3 = st.columns(3)
    cn = d1.number_input("n", min_value=2.0, value=27254.0, key="eps_m_cn", **bind())
    ca = d1.number_input("α (coherence)", min_value=0.01, max_value=2.0, value=1.0, key="eps_m_ca", **bind())
    cb = d2.number_input("β", min_value=1e-12, max_value=1.0, value=0.05, format="%.3g", key="eps_m_cb", **bind())
    cg = d2.number_input("groups |𝒞|", min_value=1, value=2, step=1, key="eps_m_cg", **bind())
    cgam = d3.number_input("size constraint γ", min_value=1.0, value=1521.0, key="eps_m_cgam", **bind())
    ck = pick("Privacy", {"pure": "pure ε-DP", "approx": "(ε, δ)-DP"}, key="eps_m_ck", widget="radio", container=d3,
              horizontal=True)
    try:
        em = mi.eps_max(cn, ca, cb, int(cg), cgam, kind=ck)
        st.metric("Largest ε certified", fmt(em) if math.isfinite(em) else "none",
                  help="“none”: no ε > 0 certifies this size constraint γ; raise γ or n.")
    except ENGINE_ERRORS as e:  # e.g. γ larger than n: inputs the user can change
        say_problem(st, e, level="warning")
        em = math.nan
    st.markdown("The full analysis is on the [Coherence explorer](coherence_explorer) page.")
    return em


@st.fragment
def tab_maxinfo(outputs: bool = True) -> None:
    """Tab 8 (controls always; bounds, corrections and the figure only when ``outputs``)."""
    st.subheader("Max-information: honest p-values after data-dependent choices")
    slot = st.empty()
    with methodology():
        st.markdown("If an analysis chooses which hypothesis to test by looking at the data, its p-values are too "
                    "optimistic. A DP (or short-description) selection step leaks little information, so a "
                    "corrected threshold γ < α keeps the error rate at α (Thms 1.4.4, 1.5.1, 1.5.2; Cor. 4.6.3; "
                    "Thm 4.6.4).")
    c1, c2 = st.columns([2, 5])
    alpha = c1.number_input("α", min_value=0.001, max_value=0.5, value=0.05, format="%.3g", key="eps_m_alpha", **bind())
    eps = log_slider("ε of the selection step", key="eps_m_eps", value=0.01, min_value=1e-4, max_value=5.0, container=c1)
    n = c1.number_input("n (records)", min_value=1, max_value=10**9, value=10_000, step=1, key="eps_m_n", **bind())
    optimise = c1.checkbox("Choose β for me", value=True, key="eps_m_opt", **bind(),
                           help="β is the small probability the bound may fail; by default the one giving the "
                                "largest threshold γ is used.")
    beta = None if optimise else c1.number_input("β", min_value=1e-12, max_value=0.5, value=0.01, format="%.3g",
                                                 key="eps_m_beta", **bind())
    if not outputs:
        with c2:
            _target_gamma_input(alpha)
            _outcomes_input()
        _coherence_eps_max(mi)
        return
    try:
        if optimise:
            corr = mi.pvalue_correction_pure_dp(alpha, epsilon=eps, n=n)
            gamma, beta_star, bits = corr.gamma, corr.beta_star, corr.m_bits
        else:
            bits = mi.maxinfo_pure_dp(epsilon=eps, n=n, beta=beta).product_bits
            gamma, beta_star = mi.pvalue_correction(alpha, beta=beta, m_bits=bits), beta
        bound = mi.maxinfo_pure_dp(epsilon=eps, n=n, beta=beta_star if beta_star else alpha / 2)
    except ENGINE_ERRORS as e:
        say_problem(c2, e, level="warning")
        return
    with c2:
        m = st.columns(2) + st.columns(2)  # two per row: the values stay whole at 1280 px
        m[0].metric("Max-information (general)", f"{fmt(bound.general_bits)} bits")
        m[1].metric("Max-information (product data)", f"{fmt(bound.product_bits)} bits")
        m[2].metric("Corrected threshold γ(α)", fmt(gamma))
        m[3].metric("β used", fmt(beta_star))
        said = verdict(slot, ev.maxinfo_verdict(alpha=alpha, gamma=gamma, epsilon=eps, n=n, bits=bits))
        st.warning("Thm 4.4.1: for approximate DP these bounds need product (i.i.d.) data, and the DP selection must "
                   "come first; Thm 4.2.1 is asymptotic and its constants are not usable for numbers.")
        t = np.geomspace(1e-3, 10, 300)
        g_mi = np.array([mi.pvalue_correction_mutual_info(alpha, t_bits=float(x)) for x in t])
        g_rz = np.array([mi.pvalue_correction_russo_zou(alpha, t_bits=float(x)) for x in t])
        diff = np.sign(g_mi - g_rz)
        idx = np.nonzero(np.diff(diff) != 0)[0]
        cross = float(t[idx[0]]) if len(idx) else None
        gfig = ef.make_gamma_figure(t, g_mi, g_rz, crossover=cross)
        show_figure(gfig, key="eps_m_fig", filename="gamma_vs_t.html",
                    caption="Two corrections for a selection that leaks t bits of mutual information: use the higher.",
                    alt="Line chart, log scales: the corrected threshold γ against the information leaked t from "
                        "0.001 to 10 bits, for the mutual-information bound (Cor. 4.6.3) and the Russo–Zou bound "
                        "(Thm 4.6.4); both fall as t grows"
                        + (f", and they cross at t ≈ {cross:.3g} bits." if cross else "."))
        gt = _target_gamma_input(alpha)
        try:
            st.info(f"Largest ε whose corrected threshold is ≥ {gt:.3g}: **{fmt(mi.max_epsilon_for_correction(alpha, gamma=gt, n=n))}**")
        except ENGINE_ERRORS as e:
            say_problem(st, e, level="warning")
        rs = _outcomes_input()
        st.caption(f"log₂(|Y|/β) = **{fmt(mi.maxinfo_description_length(rs, beta=0.05))} bits** at β = 0.05 (Thm 1.5.1).")
    _coherence_eps_max(mi)  # draws its own section
    exports("eps_m", table=pd.DataFrame({"information leaked t (bits)": t,
                                         "threshold γ, mutual-information bound (Cor. 4.6.3)": g_mi,
                                         "threshold γ, Russo–Zou bound (Thm 4.6.4)": g_rz}),
            name="maxinfo")
    take_away("eps_m_art", question="Which p-value threshold stays honest after a data-dependent choice?",
              params={"α": f"{alpha:g}", "ε of the selection step": fmt(eps), "records n": f"{int(n):,}"},
              headlines=[("Corrected threshold γ", fmt(gamma)), ("Max-information (product data)", f"{fmt(bits)} bits")],
              verdicts=said, figures=[("Corrected threshold against information leaked", gfig)],
              sources=["Thms 1.4.4, 1.5.1, 1.5.2, 4.4.1; Cor. 4.6.3; Thm 4.6.4"], epsilon=eps,
              script=se.maxinfo_script(repo_root=REPO_ROOT, alpha=float(alpha), epsilon=float(eps), n=float(n),
                                       beta=None if optimise else float(beta)))


# =========================================================================== layout
# Lazy tabs (ui/tabs.py): a closed tab draws only its controls, and only once it has been open or the link names
# one of them; the open tab draws everything.
TAB_BODIES = [tab_noise, tab_composition, tab_budget, tab_adaptive, tab_risk, tab_widths, tab_tests, tab_maxinfo]
for tab, body in zip(TABS, TAB_BODIES):
    if tab.drawn:
        with tab.container:
            body(tab.open)
if TABS[8].drawn:
    with TABS[8].container:
        st.subheader("Public information (ε-DP relative to Z)")
        from ui.views.public_information import render_public_information_tab  # imported when first drawn
        render_public_information_tab(TABS[8].open)

page_end()
