"""Epsilon calculator, Tab 7: private χ² tests (view: ``dpdash.epsilon.views.tests_view``), with the Monte Carlo
simulation behind its button.

Widgets, layout and rendering only. The simulation never runs in the server process that draws every session's
pages (issue 35 item 2): a small grid in a worker process of its own (:func:`dpdash.common.parallel.run_in_worker`,
progress relayed to the bar), a large one in chunks on both cores' worker processes (or the Dask cluster when one
is connected). It may use :data:`SIM_CPU_SECONDS` seconds of computation (the workers' CPU time, never wall time;
:func:`dpdash.common.parallel.cpu_budget`), and Streamlit's Stop (or a changed setting) ends the workers at once
and is said on the next run. The table is the same wherever it runs (one
spawned seed per chunk of trials).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dpdash.accounting import composition as acc
from dpdash.epsilon import figures as ef
from dpdash.epsilon import views as evw
from dpdash.common import formatting as nf
from dpdash.epsilon import private_tests as pt
from dpdash.epsilon import script as se
from dpdash.common.parallel import cpu_budget, run_in_worker
from dpdash.common.search import Deadline, SearchLimitError
from ui import cluster
from ui import eps_codecs as ec
from ui.show import table as results_table
from ui.common import CORES, methodology
from ui.show import figure, say_problem, session_memo, verdict_box
from ui.text import md_escape
from ui.views.eps_common import ended, CACHE, ENGINE_ERRORS, bind, exports, pick, report, script_of
from ui.widgets import log_slider, seed_input


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
    return ns, {t: np.array([pt.asymptotic_power(np.array(p0), np.array(shift), n=float(x), rho=rho, alpha=alpha,
                                                 test=t)
                             for x in ns]) for t in POWER_TESTS}


@st.cache_data(**CACHE)
def cached_power_rho(p0: tuple, shift: tuple, n: float, alpha: float):
    rhos = np.geomspace(1e-5, 10, 26)
    return rhos, {t: np.array([pt.asymptotic_power(np.array(p0), np.array(shift), n=n, rho=float(r), alpha=alpha,
                                                   test=t)
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


#: Seconds of computation (CPU time of the simulation's worker) a simulation may use; past it the worker is ended.
SIM_CPU_SECONDS = 300.0
#: Session key of a simulation under way (left behind when it is stopped or interrupted).
RUNNING = "_eps_t_sim_running"


def run_simulation(kind: str, null: tuple, alt: tuple, ns: tuple, privs: tuple, alpha: float, noise: str,
                   trials: int, seed: int, n_jobs: int, progress, budget: Deadline | None = None) -> pd.DataFrame:
    """Tab 7's Monte Carlo table, never in the server process: with ``n_jobs`` = 1 in a worker process of its own
    (:func:`dpdash.common.parallel.run_in_worker`), else its chunks on ``n_jobs`` worker processes or the configured
    Dask cluster (``ui.cluster.run``). ``budget`` is charged with the workers' CPU seconds and raises
    ``SearchLimitError`` once spent. The same table wherever it runs (one spawned seed per chunk)."""
    args = (pt.simulate_grid, kind, np.array(null), np.array(alt))
    kw = dict(ns=list(ns), privacy=list(privs), alpha=alpha, noise=noise, trials=trials, m=59, rng=seed,
              progress=progress)
    if int(n_jobs) == 1 and not cluster.placement().on_cluster:
        return run_in_worker(*args, n_jobs=1, budget=budget, **kw)
    with cpu_budget(budget):
        return cluster.run(*args, n_jobs=max(2, int(n_jobs)), **kw)


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


def _resize_gof() -> None:
    """After d changes (by hand or after a preset), a typed p⁰ or shift of the wrong length is rebuilt for the new d
    (uniform p⁰, the default shift) and the page says so (issue 34 item 4: every result disappeared behind
    "expected 5 numbers, got 4")."""
    ss = st.session_state
    d = int(ss.get("eps_t_d", 4))
    rebuilt = []
    if ss.get("eps_t_p0mode") == "entered" and ec.count_items(ss.get("eps_t_p0", "")) != d:
        ss["eps_t_p0"] = ", ".join([f"1/{d}"] * d)
        rebuilt.append("p⁰ is now uniform")
    if str(ss.get("eps_t_shift", "")).strip() and ec.count_items(ss["eps_t_shift"]) != d:
        ss["eps_t_shift"] = ""
        rebuilt.append("the shift Δ is the default 0.01·(1, −1/(d−1), …)")
    if rebuilt:
        ss["eps_t_rebuilt"] = f"d changed to {d}: " + " and ".join(rebuilt) + f" ({d} entries each)."


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
    trials = s3.number_input("Trials", min_value=50, max_value=100_000, value=1000, step=50, key="eps_t_trials",
                             **bind())
    seed = seed_input(key="eps_t_seed", container=s4)
    run = s5.button("Simulate", key="eps_t_sim", type="primary")
    with s5:
        cluster.show_where(CORES)
    return sweep, points, trials, seed, run


@st.fragment
def tab_tests(outputs: bool = True) -> None:
    """Tab 7 (all controls always, simulation ones included; tables, curves and runs only when ``outputs``)."""
    st.subheader("Private chi-square tests")
    top = st.container()
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
        d = c1.slider("Categories d", 2, 200, 4, key="eps_t_d", on_change=_resize_gof, **bind())
        if st.session_state.get("eps_t_rebuilt"):
            c1.info(st.session_state.pop("eps_t_rebuilt"))
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
    n = log_slider("n (records)", key="eps_t_n", min_value=100.0, max_value=1e7, value=10_000.0, steps_per_decade=10,
                   container=c1)
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
            cv, ns, sizes, pw_n, rhos, pw_r = cached_gof_live(tuple(p0), tuple(shift), float(n), float(rho_eff),
                                                              float(alpha))
            null, alt = p0, p0 + shift
        else:
            pi1, pi2, null, alt = ec.indep_setting(r, c, pi1_text, pi2_text, shift_text)
            icv = cached_indep_cv(tuple(pi1), tuple(pi2), float(n), float(rho_eff), float(alpha))
            ins, isizes = cached_indep_naive_size(tuple(pi1), tuple(pi2), float(rho_eff), float(alpha))
    except ENGINE_ERRORS as e:  # typed vectors that do not fit d, r or c: the parsers quote the text (escaped here)
        say_problem(e, level="warning", container=c1)
        return
    figs: list = []  # what the tab draws, for its report too (issue 34 item 5: the report had no figure)
    with c2:
        if test == "gof":
            st.markdown("**Critical values** (reject when the statistic exceeds them)")
            cvt = pd.DataFrame({"test": ["classical χ²_{d−1} (invalid on noisy counts)",
                                         "AsymptGOF (weighted χ², Thm 6.1.7)",
                                         "projected 𝒬 (χ²_{d−1}, Thm 7.2.6)", "nonprojected Q (χ²_d, Thm 7.2.3)"],
                                "critical value": [cv.classical, cv.asympt_gof, cv.projected, cv.nonprojected]})
            results_table(cvt.style.format({"critical value": "{:.4g}"}), hide_index=True, width="stretch")
            exports("eps_t", table=cvt, name="private_tests", what="critical values")  # under its table (issue 25)
            if priv == "eps":
                st.caption("With Laplace noise the projected test uses a Monte Carlo critical value (Alg. 16); the "
                           "values above use ρ = ε²/8 (equal variance) as a guide.")
            size_now = pt.naive_type_one_error(np.array(p0), n=float(n), rho=float(rho_eff), alpha=float(alpha))
            power_now = pt.asymptotic_power(np.array(p0), np.array(shift), n=float(n), rho=float(rho_eff),
                                            alpha=float(alpha), test="projected")
            naive, power = size_now, power_now
            figs.append(("False-alarm rate of the classical test against n",
                         ef.make_size_figure(ns, sizes, alpha=alpha)))
            figure(figs[-1][1], key="eps_t_fig_size", filename="naive_size.html",
                   caption="If this curve is above the dashed line, the classical test on noisy counts "
                           "rejects true hypotheses more often than the α you asked for.",
                   alt=f"Line chart: false-alarm rate of the classical χ² test on noisy counts against n from "
                       f"100 to 10 million (log scale), with α = {alpha:g} dashed; at n = {int(n):,} it is "
                       f"{nf.percent(size_now)}.")
            figs.append(("Power against n", ef.make_power_figure(
                ns, {"projected": pw_n["projected"], "nonprojected": pw_n["nonprojected"],
                     "non-private": pw_n["classical_nonprivate"]}, xlabel="n", alpha=alpha)))
            figure(figs[-1][1], key="eps_t_fig_pn", filename="power_vs_n.html",
                   caption="Chance of detecting the shift Δ.",
                   alt="Line chart: power to detect the shift against n (log scale) for the projected, "
                       "non-projected and non-private tests; power grows with n, the non-private test first.")
            figs.append(("Power against ρ", ef.make_power_figure(
                rhos, {"projected": pw_r["projected"], "nonprojected": pw_r["nonprojected"],
                       "non-private": pw_r["classical_nonprivate"]}, xlabel="ρ", alpha=alpha)))
            figure(figs[-1][1], key="eps_t_fig_pr", filename="power_vs_rho.html",
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
            results_table(table.style.format({"critical value": "{:.4g}"}), hide_index=True, width="stretch")
            exports("eps_t", table=table, name="private_tests", what="critical values")  # under its table (issue 25)
            st.caption("AsymptIndep first projects the noisy table onto {h ≥ 0, Σh = n} (2MLE, Alg. 11) and reads the "
                       "marginals off the projection; in a test its weights use those estimated marginals. No "
                       "conclusion (fail to reject) when a projected cell is < 5, or for the projected test when "
                       "any n·π̃ᵢπ̃ⱼ ≤ 5. With much noise (small nρ) AsymptIndep is conservative: it rejects true "
                       "hypotheses less often than α and so has less power, as the thesis reports (§6.3.2).")
            isize_now = pt.naive_indep_type_one_error(np.array(pi1), np.array(pi2), n=float(n), rho=float(rho_eff),
                                                      alpha=float(alpha))
            naive, power = isize_now, None
            figs.append(("False-alarm rate of Pearson's independence test against n",
                         ef.make_size_figure(ins, isizes, alpha=alpha)))
            figure(figs[-1][1], key="eps_t_fig_isize",
                   filename="naive_independence_size.html",
                   caption="Pearson's independence test on noisy counts: its asymptotic false-alarm rate at "
                           "these marginals (Lemma 6.2.3 weights).",
                   alt=f"Line chart: false-alarm rate of Pearson's independence test on noisy counts against n "
                       f"(log scale), with α = {alpha:g} dashed; at n = {int(n):,} it is {nf.percent(isize_now)}.")
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
                results_table(dec.style.format({"statistic": "{:.4g}", "critical value": "{:.4g}"}, na_rep="n/a"),
                             hide_index=True, width="stretch")
    vectors = ({"p0": list(map(float, p0)), "shift": list(map(float, shift))} if test == "gof"
               else {"pi1": list(map(float, pi1)), "pi2": list(map(float, pi2))})
    view = evw.tests_view(
        test=test, n=n, privacy_words=privacy_words, alpha=alpha, table=table, naive_size=naive, power=power,
        params={"test": {"gof": "Goodness of fit", "independence": f"Independence ({r} × {c})"}[test],
                "records n": f"{int(n):,}", "privacy": privacy_words, "α": f"{alpha:g}"},
        script={"test": test, "n": float(n), "rho": float(rho_eff), "alpha": float(alpha), **vectors,
                "privacy_note": "" if priv == "rho" else f"ρ = ε²/8 for Laplace noise Lap(2/ε), ε = {eps!r}"},
        seed=int(st.session_state.get("eps_t_seed", 0)))
    verdict_box(view.verdicts, top)
    sweep, points, trials, seed, run = _simulation_controls()
    privacy = rho if priv == "rho" else eps
    p_lo, p_hi = (1e-6, 10.0) if priv == "rho" else (1e-3, 20.0)
    ns_grid = ec.sweep_values(float(n), 100, 10**7, points, integer=True) if sweep != "privacy" else (int(n),)
    priv_grid = (ec.sweep_values(float(privacy), p_lo, p_hi, points, integer=False) if sweep != "n"
                 else (float(privacy),))
    null_t = tuple(map(tuple, null)) if test == "independence" else tuple(null)
    alt_t = tuple(map(tuple, alt)) if test == "independence" else tuple(alt)
    sim_key = (test, null_t, alt_t, ns_grid, priv_grid, float(alpha), noise, int(trials), int(seed))
    if (under_way := st.session_state.get(RUNNING)) is not None and under_way["key"] != sim_key:
        st.session_state.pop(RUNNING, None)  # interrupted by a change of settings: that table is not wanted now
    if run:
        st.session_state["eps_t_last_sim"] = sim_key
    if st.session_state.get("eps_t_last_sim") == sim_key:
        cells = len(ns_grid) * len(priv_grid) * 2
        stopped = st.session_state.pop(RUNNING, None)
        if stopped is not None and stopped["key"] == sim_key and not run:
            # the run began but never ended: Streamlit's Stop, or a setting changed mid-run (its worker was ended)
            st.info(f"Stopped: the last simulation was stopped after {stopped['done']:.0%} of its trials, so it "
                    "has no table; its worker process was ended. Press **Simulate** to run it again.")
            return
        # measured cost per trial and grid cell on the reference machine (GOF with m = 59; independence grows
        # with r·c): both cores only when the work outweighs starting a second worker; one worker process otherwise.
        # The table is the same for any number of workers.
        per_trial = 5e-5 if test == "gof" else 1.5e-3 * max(1.0, r * c / 4)
        n_jobs = CORES if int(trials) * cells * per_trial > 2.0 else 1
        note = st.session_state[RUNNING] = {"key": sim_key, "done": 0.0}
        budget = Deadline(SIM_CPU_SECONDS, what="the simulation")

        def moved(f: float) -> None:
            note["done"] = min(1.0, float(f))
            bar.progress(min(1.0, f), text=f"Simulating… {f:.0%}")

        with st.status("Running the simulation…", expanded=False) as status:
            bar = st.progress(0.0, text="Starting a worker process…")
            try:
                res = session_memo("sim", sim_key, lambda: run_simulation(
                    test, null_t, alt_t, ns_grid, priv_grid, float(alpha), noise, int(trials), int(seed), n_jobs,
                    moved, budget), max_entries=4)
            except SearchLimitError:
                st.session_state.pop(RUNNING, None)
                status.update(label="Simulation stopped at its computation limit", state="error")
                say_problem(f"The simulation stopped at its limit of {SIM_CPU_SECONDS:g} s of computation (CPU "
                            f"time) after {note['done']:.0%} of its {int(trials):,} trials in each of {cells} grid "
                            "cells, so it has no table. Lower the trials or the points per axis.")
                return
            except ENGINE_ERRORS as e:
                st.session_state.pop(RUNNING, None)
                status.update(label="Simulation not run", state="error")
                say_problem(ended(e), "The data are drawn from the null and from the null + Δ: both need entries > 0.")
                return
            st.session_state.pop(RUNNING, None)
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
        figs.append(("Simulated size and power", ef.make_simulation_figure(
            res, axis=axis, series=pname if sweep == "both" else None, alpha=alpha)))
        figure(figs[-1][1], key="eps_t_fig_sim", filename="private_tests_simulation.html",
               caption="Left: size (should stay at or below the dashed α). Right: power against the shift Δ.",
               alt=f"Two charts against {'n' if axis == 'n' else pname} (log scale), one line per test with "
                   f"error bars: left, the share of {int(trials)} simulated null datasets each test rejected "
                   f"(α = {alpha:g} dashed); right, the share of shifted datasets it rejected (power).")
        show = ef.simulation_table_for_people(res, privacy=pname)
        results_table(show.style.format({"rejection rate": "{:.3f}", "standard error": "{:.3f}",
                                        ("ρ" if pname == "rho" else "ε"): "{:.4g}"}), hide_index=True, width="stretch")
        exports("eps_t_sim", table=show, name="private_tests_simulation", what="simulation")
    report(view, "eps_t_art", sources=["Thm 6.1.7, Lemma 6.2.3, Thms 7.2.3, 7.2.6; Algs 8, 11, 13, 15, 16"],
           figures=figs,  # issue 34 item 5: the report had no figure
           script=script_of(se.tests_script, view))
