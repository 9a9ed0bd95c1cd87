"""Streamlit panels for partially private data (ε-DP relative to public information Z).

Two self-contained panels, each one ``@st.fragment``:

- :func:`render_public_information_tab` — Tab 9 of the epsilon calculator (keys ``pi_*``);
- :func:`render_partially_private_release` — third tab of the stratified synthesis viewer (keys ``pp_*``).

Computation lives in ``engine.ppd`` and figures in ``engine.ppd_figures``; this module only wires widgets to
cached engine calls. Source: Seeman, Slavković & Reimherr, *A Formal Privacy Framework for Partially
Private Data* (``shared/seeds/001_cddb039cfb564267.txt``); spec ``shared/specs/partially_private.md``.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import streamlit as st

from engine import ppd
from engine import ppd_figures as figs
from engine.risk import posterior_bound
from ui.charts import show_figure
from ui.common import CORES
from ui.exports import download_csv, download_json
from ui.text import md_escape
from ui.upload import uploaded_bytes
from ui.widgets import log_grid, log_slider, seed_input

PAPER = "Seeman, Slavković & Reimherr (2022), *A Formal Privacy Framework for Partially Private Data*"

MODEL_CAVEAT = (
    "**Caveats.** An ε-DP guarantee *relative to Z* depends on the assumed model of how the public "
    "information relates to the data (the paper's 𝔻_DPz, §3, L246 and L290): change the model and the numbers "
    "change. Public information can only weaken what ε means. The authors still recommend plain DP where "
    "possible, and releasing the unprocessed noisy results alongside any constrained version (L89, L524, L526)."
)


# =====================================================================================================
# Tab A: public information (epsilon calculator, Tab 9)
# =====================================================================================================
@st.cache_data(max_entries=64, show_spinner=False)
def _delta_z_grid(n: int) -> np.ndarray:
    z = np.round(np.linspace(0, 1, 11), 2)
    return ppd.delta_z_table(n, z, z)


@st.cache_data(max_entries=64, show_spinner=False)
def _ratio_fig(N: float, epsilon: float):
    return figs.make_invariant_ratio_figure(N, current=epsilon)


@st.cache_data(max_entries=64, show_spinner=False)
def _em_fig(n: int, epsilon: float):
    return figs.make_em_audit_figure(n, current=epsilon)


@st.cache_data(max_entries=64, show_spinner=False)
def _lemma7(n: int, epsilon: float, noise: str, post: str):
    return ppd.lemma7_toy(n, epsilon=epsilon, noise=noise, post=post), ppd.sum_projection_toy(n, epsilon=epsilon)


@st.cache_data(max_entries=64, show_spinner=False)
def _power_fig(n: int, epsilon: float, theta0: float):
    thetas = np.linspace(theta0, 1.0, 25)
    return figs.make_power_figure(n, epsilon=epsilon, theta0=theta0, thetas=thetas)


N_GRID = sorted({int(round(v)) for v in np.geomspace(1, 1000, 61)})

LEDGER_DEFAULT = pd.DataFrame({
    "release": ["Monthly county counts", "Quarterly age table"],
    "epsilon": [0.5, 0.7],
    "public information": ["2020 state totals", "2020 state totals"],
})


def _ledger_section() -> dict:
    st.subheader("4. Budget ledger (Lemma 4)")
    st.markdown("Budgets add up **only for releases made relative to the same public information**. List the "
                "releases and the public information each one assumed; the total appears when the labels match.")
    edited = st.data_editor(LEDGER_DEFAULT, key="pi_ledger", num_rows="dynamic", width="stretch",
                            column_config={"epsilon": st.column_config.NumberColumn("ε", min_value=0.0,
                                                                                    format="%.3f")})
    rows = edited.dropna(how="all")
    out: dict = {"releases": int(len(rows))}
    if len(rows) == 0:
        st.info("Add at least one release to the ledger.")
        return out
    labels = rows["public information"].fillna("").astype(str).str.strip()
    try:
        eps = [float(e) for e in rows["epsilon"]]
        total = ppd.compose_dpz(eps, same_z=labels.nunique() == 1)
    except ValueError as exc:
        msg = str(exc)
        if msg == ppd.COMPOSITION_MESSAGE:
            # the labels are typed cells (or a link's): quoted escaped, never as Markdown (issue 17)
            st.warning(f"No total: {msg}. The labels differ: {', '.join('“' + md_escape(x, max_len=60) + '”' for x in sorted(set(labels))[:10])}.")
        else:
            st.warning(f"No total: every ε must be a number > 0 ({md_escape(msg, max_len=200)}).")
        out["error"] = msg
        return out
    st.metric("Total budget relative to this public information", f"ε = {total:.4g}")
    out["total"] = total
    return out


def _section_downloads(name: str, params: dict, numbers: list[dict]) -> None:
    """Per-section exports: the section's numbers (CSV) and its parameters (JSON)."""
    d1, d2 = st.columns(2)
    with d1:
        download_csv(pd.DataFrame(numbers), filename=f"public_information_{name}.csv", key=f"pi_dl_{name}_csv",
                     label="Download these numbers (CSV)")
    with d2:
        download_json(params, filename=f"public_information_{name}.json", key=f"pi_dl_{name}_json")


# Each section is a nested fragment: moving one of its controls redraws that section only; moving the shared
# ε slider reruns the whole tab (the outer fragment), never the host page's other tabs.
@st.fragment
def _pi_invariant(eps: float, outputs: bool = True) -> None:
    st.subheader("1. Publishing an invariant (Lemma 5)")
    c1, c2 = st.columns(2)
    N = c1.select_slider("Invariant: the count is known to lie in 0…N, N =", options=N_GRID, value=100,
                         key="pi_N", bind="query-params")
    kind = c2.radio("Noise", ["discrete", "continuous"], key="pi_kind", bind="query-params", horizontal=True,
                    format_func={"discrete": "discrete Laplace", "continuous": "continuous Laplace"}.__getitem__)
    if not outputs:
        return
    eps_star = ppd.eps_star_invariant(eps, N, kind=kind)
    m1, m2 = st.columns(2)
    m1.metric("Effective ε*", f"{eps_star:.4f}")
    m2.metric("ε* / ε", f"{eps_star / eps:.3f}")
    st.markdown("Publishing an invariant can raise the effective budget, but never beyond 2ε. The worst case "
                "is a count at the edge of the known range.")
    show_figure(figs.make_invariant_band_figure(eps, eps_star, kind=kind, N=N), key="pi_fig_band",
                filename="invariant_band.html",
                caption=f"The bar is ε* = {eps_star:.3f}; the shaded band is [ε, 2ε] = [{eps:g}, {2 * eps:g}].")
    show_figure(_ratio_fig(N, eps), key="pi_fig_ratio", filename="invariant_inflation.html",
                caption="Inflation ε*/ε for both noise kinds at this N. It is largest at moderate ε and "
                        "vanishes for N = 1.")
    _section_downloads("invariant", {"epsilon": eps, "N": N, "kind": kind},
                       [{"quantity": "effective ε* (Lemma 5)", "value": eps_star},
                        {"quantity": "ε*/ε", "value": eps_star / eps}])


def _gaussian_expander(eps: float) -> None:
    with st.expander("Gaussian version (Example 2)"):
        st.markdown("Exchangeable values with variance σ² and correlation r; a public Z with variance τ² and "
                    "correlation ρ with each value. The mean is released.")
        g1, g2, g3 = st.columns(3)
        gn = g1.number_input("n", 2, 10_000, 10, key="pi_g_n", bind="query-params")
        gr = g2.number_input("r = Corr(Xᵢ, Xⱼ)", -1.0, 1.0, 0.0, step=0.05, key="pi_g_r", bind="query-params")
        grho = g3.number_input("ρ = Corr(Xᵢ, Z)", -0.99, 0.99, 0.3, step=0.05, key="pi_g_rho",
                               bind="query-params")
        g4, g5, g6 = st.columns(3)
        gs = g4.number_input("σ", 0.01, 100.0, 1.0, key="pi_g_sigma", bind="query-params")
        gt = g5.number_input("τ", 0.01, 100.0, 1.0, key="pi_g_tau", bind="query-params")
        gd = g6.number_input("Δ (range of one value)", 0.01, 1000.0, 1.0, key="pi_g_delta", bind="query-params")
        try:
            g = ppd.gaussian_public_coefficients(int(gn), gr, grho, sigma=gs, tau=gt)
            dzg = ppd.delta_z_gauss(int(gn), gr, grho, sensitivity=gd)
        except ValueError as exc:
            st.error(f"These values are not a valid model: {exc}")
            return
        k1, k2, k3, k4, k5 = st.columns(5)
        k1.metric("β_v", f"{g.beta_v:.5f}")
        k2.metric("β_z", f"{g.beta_z:.5f}")
        k3.metric("Var(X̄ | X₁, Z)", f"{g.cond_var:.5f}")
        k4.metric("Δ_z = Δ·β_v", f"{dzg:.5g}")
        k5.metric("effective ε = ε·n·β_v", f"{eps * int(gn) * g.beta_v:.5g}")
        st.caption("Z is the same for both secrets of a pair, so its term cancels and Δ_z = Δ·|β_v| "
                   "(spec erratum E4 on L288). Under plain DP (r = ρ = 0), Δ_z = Δ/n.")


def _prior_input() -> float:
    return st.slider("Adversary's prior belief in the secret", 0.01, 0.99, 0.1, step=0.01, key="pi_p0",
                     bind="query-params")


@st.fragment
def _pi_correlated(eps: float, outputs: bool = True) -> None:
    st.subheader("2. Correlated public information (Example 3)")
    st.markdown("A count of n people is released. The public information says how the others' records depend "
                "on the target's secret: if the target's bit is 1, each other bit is 1 with probability z₁; if "
                "it is 0, with probability z₀. Equal values mean no dependence.")
    c1, c2, c3 = st.columns(3)
    n = c1.slider("n (people in the count)", 2, 500, 50, key="pi_n", bind="query-params")
    z0 = c2.slider("z₀", 0.0, 1.0, 0.2, step=0.05, key="pi_z0", bind="query-params")
    z1 = c3.slider("z₁", 0.0, 1.0, 0.4, step=0.05, key="pi_z1", bind="query-params")
    if not outputs:
        _gaussian_expander(eps)
        _prior_input()
        return
    dz = ppd.delta_z_binom(n, z0, z1)
    eff = ppd.effective_epsilon_dpz(eps, sensitivity_dp=1, sensitivity_z=dz)
    scale = ppd.required_scale_dpz(eps, sensitivity_z=dz)
    m1, m2, m3 = st.columns(3)
    m1.metric("Sensitivity Δ_z", f"{dz}", help="Plain DP: 1 (one person changes the count by 1).")
    m2.metric("Effective ε = ε·Δ_z", f"{eff:.4g}")
    m3.metric("Laplace scale needed to keep ε", f"{scale:.4g}", help="Δ_z/ε instead of 1/ε (Corollary 1).")
    show_figure(figs.make_delta_z_heatmap(n, np.round(np.linspace(0, 1, 11), 2), _delta_z_grid(n),
                                          current=(z0, z1)),
                key="pi_fig_heat", filename="delta_z_heatmap.html",
                caption="Δ_z over all (z₀, z₁) at this n. The diagonal (no dependence) stays at 1; strong "
                        "dependence makes one person's secret move the whole count.")
    _gaussian_expander(eps)

    # Section 3 depends on this section's effective ε, so it lives in the same fragment.
    st.subheader("3. What an adversary can learn (Lemma 2)")
    p0 = _prior_input()
    b_nom = posterior_bound(p0, epsilon=eps)
    b_eff = posterior_bound(p0, epsilon=eff)
    bands = {f"nominal ε = {eps:g}": (b_nom.lower, b_nom.upper),
             f"effective ε = {eff:.3g} (section 2)": (b_eff.lower, b_eff.upper)}
    show_figure(figs.make_posterior_band_figure(p0, bands), key="pi_fig_post", filename="posterior_bands.html",
                caption=(f"With prior {p0:.2f}, the release can move the adversary's belief to anywhere in "
                         f"[{b_nom.lower:.4g}, {b_nom.upper:.4g}] at the nominal ε, but to "
                         f"[{b_eff.lower:.4g}, {b_eff.upper:.4g}] once the correlated public information of "
                         "section 2 is taken into account."))
    _section_downloads("correlated", {"epsilon": eps, "n": n, "z0": z0, "z1": z1, "prior": p0}, [
        {"quantity": "Δ_z (Example 3)", "value": dz}, {"quantity": "effective ε (Example 3)", "value": eff},
        {"quantity": "Laplace scale to keep ε", "value": scale},
        {"quantity": "posterior lower bound, nominal ε", "value": b_nom.lower},
        {"quantity": "posterior upper bound, nominal ε", "value": b_nom.upper},
        {"quantity": "posterior lower bound, effective ε", "value": b_eff.lower},
        {"quantity": "posterior upper bound, effective ε", "value": b_eff.upper}])


@st.fragment
def _pi_ledger() -> None:
    out = _ledger_section()
    download_json(out, filename="public_information_ledger.json", key="pi_dl_ledger_json",
                  label="Download the ledger result (JSON)")


@st.fragment
def _pi_em(eps: float, outputs: bool = True) -> None:
    st.subheader("5. Exponential-mechanism audit (Theorem 1, Example 1)")
    c1, c2 = st.columns(2)
    en = c1.slider("n (records averaged)", 1, 1000, 20, key="pi_em_n", bind="query-params")
    kappa = c2.radio("κ", [2, 1], key="pi_kappa", bind="query-params", horizontal=True,
                     format_func={2: "2 (safe)", 1: "1 (paper-literal)"}.__getitem__)
    if not outputs:
        return
    real = ppd.realized_epsilon_trunc_em(en, epsilon=eps, kappa=kappa)
    lim = ppd.realized_epsilon_trunc_em_limit(eps, kappa=kappa)
    m1, m2 = st.columns(2)
    m1.metric(f"Realised ε at n = {en}", f"{real:.4f}", delta=f"{real - eps:+.4f} vs nominal",
              delta_color="inverse")
    m2.metric("Large-n limit ε/κ + log(2 − e^(−ε/κ))", f"{lim:.4f}")
    st.markdown(
        "Theorem 1's mechanism restricts the output to values consistent with the public information. Its "
        "proof drops the normalising constant, which changes with the data when the output range is bounded. "
        "With the paper's κ = 1 the realised loss can exceed ε (up to ε + log 2); κ = 2 (the usual exponential-"
        "mechanism factor) keeps it within ε. Erratum E1."
    )
    show_figure(_em_fig(en, eps), key="pi_fig_em", filename="em_audit.html",
                caption="Above the dashed line the mechanism leaks more than its nominal ε.")
    _section_downloads("em_audit", {"epsilon": eps, "n": en, "kappa": kappa},
                       [{"quantity": f"realised ε (κ = {kappa})", "value": real},
                        {"quantity": "large-n limit", "value": lim}])


def _theta0_input() -> float:
    return st.slider("θ₀ (null hypothesis)", 0.05, 0.9, 0.5, step=0.05, key="pi_theta0", bind="query-params")


@st.fragment
def _pi_info_loss(eps: float, outputs: bool = True) -> None:
    with st.expander("Does enforcing public constraints lose information? (Lemma 7, Theorem 2)"):
        c1, c2, c3 = st.columns(3)
        ln = c1.slider("n (trials)", 2, 50, 10, key="pi_l7_n", bind="query-params")
        noise = c2.radio("Noise", ["dlap", "laplace"], key="pi_l7_noise", bind="query-params",
                         format_func={"dlap": "discrete Laplace", "laplace": "continuous Laplace"}.__getitem__)
        post = c3.radio("Post-processing", ["clamp", "round_clamp"], key="pi_l7_post", bind="query-params",
                        format_func={"clamp": "clamp to [0, n]", "round_clamp": "round ∘ clamp"}.__getitem__)
        if not outputs:
            _theta0_input()
            return
        l7, sp = _lemma7(ln, eps, noise, post)
        show_figure(figs.make_info_loss_figure(l7, sp), key="pi_fig_l7", filename="information_loss.html",
                    caption=(f"Count toy (θ ~ uniform, T ~ Binomial(n, θ)): E Var(θ|Y) = {l7.evar_y:.6f}, "
                             f"E Var(θ|Y*) = {l7.evar_ystar:.6f} (P(Y ≠ Y*) = {l7.p_differs:.3f}). Sum toy "
                             f"(two cells with public total n, discrete Laplace): {sp.evar_y:.6f} vs "
                             f"{sp.evar_ystar:.6f}."))
        st.markdown("Clamping discrete-Laplace counts loses nothing; rounding or mixing coordinates does. "
                    "(Theorem 2's claim of a strict loss whenever Y ≠ Y* is false for clamping; erratum E5.)")
        theta0 = _theta0_input()
        show_figure(_power_fig(ln, eps, theta0), key="pi_fig_power", filename="power.html",
                    caption="Power of level-5% tests of θ = θ₀ against larger θ, on the continuous-Laplace "
                            "release Y and on its rounded, clamped version Y*.")
        _section_downloads("information_loss",
                           {"epsilon": eps, "n": ln, "noise": noise, "post": post, "theta0": theta0},
                           [{"quantity": "E Var(θ|T)", "value": l7.evar_t},
                            {"quantity": "E Var(θ|Y)", "value": l7.evar_y},
                            {"quantity": "E Var(θ|Y*)", "value": l7.evar_ystar},
                            {"quantity": "P(Y ≠ Y*)", "value": l7.p_differs},
                            {"quantity": "sum toy E Var(θ|Y)", "value": sp.evar_y},
                            {"quantity": "sum toy E Var(θ|Y*)", "value": sp.evar_ystar}])


@st.fragment
def render_public_information_tab(outputs: bool = True) -> None:
    """Tab 9 "Public information (ε-DP relative to Z)" of the epsilon calculator (spec §5).

    ``outputs=False`` (the tab is closed) draws every control, so their values and URL parameters survive, but
    none of the numbers and figures: hidden charts slow every redraw of the open tab in the browser.
    """
    st.markdown(
        "Official statistics are often published next to **public information**: totals that are fixed "
        "(invariants), earlier releases, or known correlations. This tab shows how such information changes "
        f"what ε means. Source: {PAPER} (S1), Lemmas 2–5, Examples 1–3, Lemma 7 and Theorem 2."
    )
    st.caption(MODEL_CAVEAT)
    eps = log_slider("Nominal ε (privacy budget of the mechanism)", key="pi_epsilon", min_value=0.01,
                     max_value=20.0, value=1.0, help="The ε the mechanism was calibrated for, ignoring public "
                     "information. Used by every section below.")
    _pi_invariant(eps, outputs)
    _pi_correlated(eps, outputs)
    _pi_ledger()
    _pi_em(eps, outputs)
    _pi_info_loss(eps, outputs)


# =====================================================================================================
# Tab B: partially private release (stratified synthesis viewer, third tab)
# =====================================================================================================
EPS_OPTIONS = [0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0]
ALPHA_OPTIONS = log_grid(1e-4, 100.0, 4)
SWEEP_EPS = (0.5, 1.0, 2.0, 5.0)
SWEEP_ALPHA = (1e-3, 1e-2, 0.1, 1.0, 10.0)
CONTRACTION_EPS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0)
WEM_METHODS = ("wem_naive", "wem_congenial", "wem_prior")


@st.cache_data(max_entries=4, show_spinner=False)
def _synthetic_panel() -> ppd.CountyPanel:
    return ppd.synth_pa_like()


@st.cache_data(max_entries=8, show_spinner=False, scope="session")
def _parse_upload(digest: str, _data: bytes):
    try:
        return ppd.read_county_csv(_data), None
    except ValueError as exc:
        return None, str(exc)


def _export(frame: pd.DataFrame) -> pd.DataFrame:
    """A release table for download without its entirely empty columns (α when no WEM-prior draw is in it),
    so the CSV reads back with any reader, this product's included (an all-missing column is refused)."""
    return frame.dropna(axis=1, how="all")


def _public_tuple(public: ppd.PublicInfo) -> tuple:
    return (public.state_total, public.cases_ge_deaths, public.nonnegative, public.previous_month_prior,
            public.exact_share)


@st.cache_data(max_entries=2000, show_spinner=False, scope="session")
def _run_unit(panel_key: str, _panel: ppd.CountyPanel, t: int, epsilon: float, method: str, alpha: float,
              sensitivity: float, kappa: float, reps: int, public: tuple, sweeps: int,
              pp_sensitivity: float | None, seed: int, _computed: pd.DataFrame | None = None) -> pd.DataFrame:
    """One (month, ε, method, α) cell with all replicate draws; chains keep their own seeds.

    ``_computed`` (not part of the cache key) stores a frame that :func:`_run_units` computed in parallel;
    it equals what the call below returns, because every chain is seeded from (seed, t, rep, ε, method, α).
    """
    if _computed is not None:
        return _computed
    return ppd.run_partially_private_release(
        _panel, t, epsilons=[epsilon], methods=[method], alphas=[alpha], sensitivity=sensitivity, kappa=kappa,
        reps=reps, public=ppd.PublicInfo(*public), sweeps=sweeps, pp_sensitivity=pp_sensitivity, rng=seed)


@st.cache_data(max_entries=64, show_spinner=False, scope="session")
def _contraction(panel_key: str, _panel: ppd.CountyPanel, sensitivity: float, seed: int) -> pd.DataFrame:
    return ppd.contraction_frequencies(_panel, epsilons=CONTRACTION_EPS, sensitivity=sensitivity, reps=20,
                                       rng=seed)


def _series(panel_key, panel, method, cfg) -> np.ndarray:
    """Smallest county's released cases over months ≥ 1 (draw 0), one cached unit per month."""
    out = []
    for t in range(1, panel.T):
        df = _run_unit(panel_key, panel, t, cfg["epsilon"], method, cfg["alpha"], cfg["sensitivity"],
                       cfg["kappa"], 1, cfg["public"], cfg["sweeps"], cfg["pp_sensitivity"], cfg["seed"])
        out.append(int(df["cases"].iloc[0]))
    return np.array(out)


def _unit_key(panel_key, unit, cfg) -> tuple:
    t, e, m, a, reps = unit
    # NaN (α of a non-prior method) never equals itself, and since Python 3.10 each NaN object hashes by
    # identity: key it as None so a unit computed once is found again.
    a = None if a != a else a
    return (panel_key, t, e, m, a, reps, cfg["sensitivity"], cfg["kappa"], cfg["public"], cfg["sweeps"],
            cfg["pp_sensitivity"], cfg["seed"])


def _run_units(units: list[tuple], panel_key, panel, cfg, label: str) -> None:
    """Run (t, ε, method, α, reps) units behind a progress bar, all chains over both cores; each unit is cached.

    Units already computed in this session are skipped; the rest go to ``ppd.run_release_units`` in one joblib
    pool (results identical to one-by-one runs) and are stored in :func:`_run_unit`'s cache.
    """
    done = st.session_state.setdefault("_pp_units_done", set())
    if len(done) > 4000:  # bounded like the cache it mirrors (max_entries=2000 per call signature)
        done.clear()
    todo = [u for u in units if _unit_key(panel_key, u, cfg) not in done]
    if not todo:
        return
    bar = st.progress(0.0, text=f"{label}: starting {CORES} worker processes")

    def progress(frac: float, msg: str) -> None:
        bar.progress(frac, text=f"{label}: {msg}")

    frames = ppd.run_release_units(panel, todo, sensitivity=cfg["sensitivity"], kappa=cfg["kappa"],
                                   public=ppd.PublicInfo(*cfg["public"]), sweeps=cfg["sweeps"],
                                   pp_sensitivity=cfg["pp_sensitivity"], rng=cfg["seed"], n_jobs=CORES,
                                   progress=progress)
    for (t, e, m, a, reps), frame in zip(todo, frames):
        _run_unit(panel_key, panel, t, e, m, a, cfg["sensitivity"], cfg["kappa"], reps, cfg["public"], cfg["sweeps"],
                  cfg["pp_sensitivity"], cfg["seed"], _computed=frame)
        done.add(_unit_key(panel_key, (t, e, m, a, reps), cfg))
    bar.empty()


def _parse_vector(text: str, name: str, *, integer: bool) -> np.ndarray:
    try:
        vals = [float(v) for v in text.replace(";", ",").split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"{name}: write numbers separated by commas, e.g. 6, 1, 4") from None
    if len(vals) != 3:
        raise ValueError(f"{name}: the toy has exactly 3 cells, got {len(vals)} values")
    if integer and any(v != round(v) for v in vals):
        raise ValueError(f"{name}: counts must be whole numbers")
    return np.array(vals)


@st.cache_data(max_entries=32, show_spinner=False)
def _alg1(y: tuple, s: int, a0: tuple, epsilon: float, sensitivity: float, seed: int):
    ex = ppd.posterior_exact_counts(y, s, a0, epsilon=epsilon, sensitivity=sensitivity)
    rj = ppd.posterior_rejection_counts(y, s, a0, epsilon=epsilon, sensitivity=sensitivity, n_proposals=200_000,
                                        rng=seed)
    lit = ppd.posterior_rejection_counts(y, s, a0, epsilon=epsilon, sensitivity=sensitivity, n_proposals=200_000,
                                         rng=seed, rule="paper_literal")
    return ex, rj, lit


def _alg1_section(seed: int) -> None:
    with st.expander("Posterior with public information (Algorithm 1)"):
        st.markdown(
            "A 3-cell toy: cell probabilities p ~ Dirichlet(α₀), counts X ~ Multinomial(s, p) with the total s "
            "public, and noisy counts y = X + discrete Laplace noise. What can an analyst infer about p? The "
            "exact answer enumerates every table with total s; Algorithm 1 gets it by rejection sampling "
            "(accept a simulated table X* with probability r^‖y − X*‖₁). The paper prints the acceptance test "
            "the wrong way round (erratum E2); its result is shown for comparison and is **incorrect**."
        )
        c1, c2, c3, c4, c5 = st.columns(5)
        y_txt = c1.text_input("noisy counts y", "6, 1, 4", key="pp_alg_y", bind="query-params")
        s = c2.number_input("public total s", 0, 300, 10, key="pp_alg_s", bind="query-params")
        a_txt = c3.text_input("prior α₀", "3, 3, 2", key="pp_alg_alpha", bind="query-params")
        e = c4.select_slider("ε", EPS_OPTIONS, 1.0, key="pp_alg_eps", bind="query-params")
        d = c5.number_input("Δ", 0.5, 8.0, 2.0, step=0.5, key="pp_alg_delta", bind="query-params")
        try:
            y = _parse_vector(y_txt, "noisy counts y", integer=False)
            a0 = _parse_vector(a_txt, "prior α₀", integer=False)
            ex, rj, lit = _alg1(tuple(y), int(s), tuple(a0), float(e), float(d), seed)
        except ValueError as exc:
            st.warning(f"Cannot compute the posterior: {md_escape(exc, max_len=400)}")
            return
        table = pd.DataFrame({
            "method": ["exact (enumeration)", "Algorithm 1, corrected", "Algorithm 1 as printed: incorrect "
                                                                        "(reversed test)"],
            **{f"mean p{i + 1}": [x.mean[i] for x in (ex, rj, lit)] for i in range(3)},
            **{f"sd p{i + 1}": [x.sd[i] for x in (ex, rj, lit)] for i in range(3)},
            "acceptance rate": [ex.acceptance, rj.acceptance, lit.acceptance],
        })
        st.dataframe(table, hide_index=True, width="stretch")
        st.caption(f"{ex.n_compositions:,} tables enumerated; samplers use 200,000 proposals, seed {seed}. The "
                   "exact acceptance rate is Σ_x DM(x)·r^‖y−x‖₁.")
        show_figure(figs.make_alg1_figure({"exact": ex, "Algorithm 1 (corrected)": rj,
                                           "as printed: incorrect (reversed test)": lit}),
                    key="pp_fig_alg1", filename="algorithm1_posterior.html")
        download_csv(table, filename="algorithm1_posterior.csv", key="pp_dl_alg1")


@st.fragment
def render_partially_private_release() -> None:
    """Third tab of the stratified synthesis viewer: "Partially private release" (spec §6)."""
    st.markdown(
        "County × month case and death counts, with the counties acting as strata. The **state total** of "
        "cases each month is public, counts satisfy cases ≥ deaths ≥ 0, and last month's counts are public. "
        "Two ways to release: **PP** adds discrete Laplace noise and then post-processes the counts to respect "
        "the public information; **WEM** samples counts directly from a Wasserstein exponential mechanism whose "
        "base measure is naive (any integers), congenial (only tables that respect the public constraints) or "
        f"prior-congenial (also weighted by last month). Source: {PAPER}, §5 (L432–518)."
    )
    st.caption("The paper prints no case-study numbers; every number here is computed by this product. WEM "
               "draws come from a Gibbs sampler (MCMC), which is approximate. Guarantees assume the stated "
               "neighbour (one person's record changes county and/or death status, state total fixed). "
               + MODEL_CAVEAT)

    # ------------------------------------------------------------ data
    source = st.radio("Data", ["synthetic", "upload"], key="pp_data", bind="query-params", horizontal=True,
                      format_func=lambda k: "Synthetic county data (PA-like, not real)" if k == "synthetic"
                      else "Upload a county CSV")
    panel = _synthetic_panel()
    if source == "upload":
        data = uploaded_bytes("County × month CSV (columns county, month, cases, deaths, population)",
                              key="pp_upload", max_bytes=ppd.MAX_COUNTY_CSV_BYTES,
                              help="One row per county and month; integer counts, deaths ≤ cases, population "
                                   "constant per county; 3–500 counties, 2–240 months; at most 10 MB.")
        if data is not None:
            parsed, err = _parse_upload(hashlib.sha256(data).hexdigest(), data)
            if err:
                st.error(f"This file cannot be used: {md_escape(err.rstrip('.'), max_len=400)}. Expected columns "
                         "county, month, cases, deaths, population with one row per county × month.")
            else:
                panel = parsed
    if panel.synthetic:
        st.info(f"Using **synthetic county data (PA-like, not real)**: {panel.J} counties × {panel.T} months "
                "(spec §7 recipe, seed 2022).")
    else:
        st.success(f"Using **your uploaded data**: {panel.J} counties × {panel.T} months.")
    panel_key = panel.fingerprint()

    # ------------------------------------------------------------ controls
    c1, c2, c3, c4 = st.columns(4)
    eps = c1.select_slider("ε", EPS_OPTIONS, 1.0, key="pp_epsilon", bind="query-params")
    sens = c2.slider("Δ (sensitivity scale shared by PP and WEM)", 0.5, 8.0, 2.0, step=0.5, key="pp_sensitivity",
                     bind="query-params")
    kappa = c3.radio("κ", [2, 1], key="pp_kappa", bind="query-params", horizontal=True,
                     format_func=lambda k: "2 (safe)" if k == 2 else "1 (paper-literal)")
    alpha = c4.select_slider("α (prior strength, WEM-prior)", ALPHA_OPTIONS, 1.0, key="pp_alpha",
                             bind="query-params", format_func=lambda v: f"{v:g}")
    c1, c2, c3, c4 = st.columns(4)
    month_opts = list(range(1, panel.T))
    t = c1.selectbox("Month", month_opts, index=len(month_opts) - 1, key="pp_month", bind="query-params",
                     format_func=lambda i: panel.months[i])
    reps = c2.slider("Replicate draws", 1, 10, 3, key="pp_reps", bind="query-params")
    sweeps = c3.slider("Gibbs sweeps (WEM)", 10, 100, 30, key="pp_sweeps", bind="query-params")
    with c4:
        seed = seed_input(key="pp_seed", value=0)
    methods = st.multiselect("Methods", list(ppd.METHODS), default=list(ppd.METHODS), key="pp_methods",
                             bind="query-params", format_func=lambda m: ppd.METHOD_LABELS[m])
    st.markdown("**Public information**")
    c1, c2, c3, c4 = st.columns(4)
    st_on = c1.checkbox("State total", True, key="pp_state_total", bind="query-params")
    order = c2.checkbox("Cases ≥ deaths", True, key="pp_order", bind="query-params")
    nonneg = c3.checkbox("Non-negative counts", True, key="pp_nonneg", bind="query-params")
    prior_on = c4.checkbox("Previous month as prior", True, key="pp_prior", bind="query-params",
                           disabled=not st_on, help="The prior-congenial base measure needs the state total.")
    prior_on = prior_on and st_on
    c1, c2 = st.columns(2)
    share = c1.slider("Share of counties published exactly (extension)", 0.0, 0.9, 0.0, step=0.05,
                      key="pp_exact_share", bind="query-params",
                      help="The most populous counties are published without noise; the rest are released "
                           "privately with the remaining total.")
    calibrate = c2.checkbox("Calibrate PP to the WEM guarantee", False, key="pp_calibrate", bind="query-params",
                            help="Use Δ_PP = κΔ so PP carries the same guarantee as the constrained WEMs.")
    public = ppd.PublicInfo(state_total=st_on, cases_ge_deaths=order, nonnegative=nonneg,
                            previous_month_prior=prior_on, exact_share=share)
    pp_sens = kappa * sens if calibrate else None
    if "wem_prior" in methods and not prior_on:
        st.info("WEM-prior is skipped: it needs the state total and the previous month as public information.")
    active = [m for m in methods if m != "wem_prior" or prior_on]
    cfg = dict(epsilon=float(eps), alpha=float(alpha), sensitivity=float(sens), kappa=float(kappa),
               public=_public_tuple(public), sweeps=int(sweeps), pp_sensitivity=pp_sens, seed=int(seed))
    params = dict(cfg, month=panel.months[t], reps=reps, methods=active, data=panel.source, seed=seed)

    # ------------------------------------------------------------ guarantees
    st.subheader("Guarantees")
    gt = ppd.guarantee_table(epsilon=eps, sensitivity=sens, kappa=kappa, pp_sensitivity=pp_sens)
    gt = gt[gt["method"].isin([ppd.METHOD_LABELS[m] for m in ppd.METHODS if m in active])]
    st.dataframe(gt, hide_index=True, width="stretch")
    st.caption("Privacy loss for one person's record changing county and/or death status with the state total "
               "fixed. At the defaults (Δ = κ = 2) PP carries 2ε while the constrained WEMs carry ε; tick "
               "\"Calibrate PP\" to equalise. Temporal dependence through public previous-month counts can enlarge "
               "the sensitivity further (Example 3).")
    download_csv(gt, filename="ppd_guarantees.csv", key="pp_dl_guarantees")

    # ------------------------------------------------------------ live PP
    frames = []
    if "pp" in active:
        try:
            frames.append(_run_unit(panel_key, panel, t, float(eps), "pp", float("nan"), float(sens), float(kappa),
                                    int(reps), cfg["public"], int(sweeps), pp_sens, int(seed)))
        except ValueError as exc:
            st.error(f"PP cannot run with these settings: {md_escape(exc, max_len=400)}")

    # ------------------------------------------------------------ WEM buttons
    wem = [m for m in active if m != "pp"]
    run_key = (panel_key, t, cfg["epsilon"], cfg["alpha"], cfg["sensitivity"], cfg["kappa"], reps, cfg["public"],
               cfg["sweeps"], cfg["seed"], tuple(wem))
    st.subheader("Wasserstein exponential mechanisms")
    st.markdown("WEM draws need a Gibbs sampler (MCMC, approximate), so they run on request: **Run at this ε** "
                "draws every selected WEM at this month plus one draw per month for the time series (about "
                "10–30 s); the sweeps take up to a minute. Results are cached.")
    b1, b2, b3 = st.columns(3)
    run_now = b1.button("Run at this ε", key="pp_run", disabled=not wem)
    run_eps = b2.button("Run ε sweep", key="pp_run_eps", disabled=not active)
    run_alpha = b3.button("Run α sweep", key="pp_run_alpha", disabled=not prior_on)
    done = st.session_state.setdefault("_pp_done", {})
    try:
        if run_now:
            units = [(t, float(eps), m, float(alpha) if m == "wem_prior" else float("nan"), int(reps)) for m in wem]
            units += [(tt, float(eps), m, float(alpha) if m == "wem_prior" else float("nan"), 1)
                      for m in wem for tt in range(1, panel.T)]
            _run_units(units, panel_key, panel, cfg, "WEM draws")
            done["now"] = run_key
        if run_eps:
            units = [(t, e, m, float(alpha) if m == "wem_prior" else float("nan"), int(reps))
                     for e in SWEEP_EPS for m in active]
            _run_units(units, panel_key, panel, cfg, "ε sweep")
            done["eps"] = run_key + (tuple(active),)
        if run_alpha:
            units = [(t, float(eps), "wem_prior", a, int(reps)) for a in SWEEP_ALPHA]
            units += [(t, float(eps), m, float("nan"), int(reps)) for m in ("wem_naive", "wem_congenial")]
            _run_units(units, panel_key, panel, cfg, "α sweep")
            done["alpha"] = run_key
    except ValueError as exc:
        st.error(f"The WEM run failed: {md_escape(exc, max_len=400)}")
    wem_ready = done.get("now") == run_key and bool(wem)
    if wem_ready:
        for m in wem:
            frames.append(_run_unit(panel_key, panel, t, float(eps), m,
                                    float(alpha) if m == "wem_prior" else float("nan"), float(sens), float(kappa),
                                    int(reps), cfg["public"], int(sweeps), pp_sens, int(seed)))
    elif wem:
        st.caption("Press **Run at this ε** to add the WEM series to the plots below (results are cached).")

    # ------------------------------------------------------------ plots (ii)–(iv)
    if frames:
        res = pd.concat(frames, ignore_index=True)
        st.subheader(f"Errors at ε = {eps:g}, {md_escape(panel.months[t])}")
        loss = (res.drop_duplicates(["rep", "method"]).groupby("method")["total_l2"].agg(["mean", "std", "count"])
                .reset_index())
        loss["method"] = loss["method"].map(ppd.METHOD_LABELS)
        st.dataframe(loss.rename(columns={"mean": "mean total ℓ₂ loss", "std": "sd", "count": "draws"}),
                     hide_index=True)
        show_figure(figs.make_relerr_figure(res), key="pp_fig_relerr", filename="ppd_relative_error.html",
                    caption=f"Each dot is a county in one of {reps} draws (seed {seed}). Small counties get large "
                            "relative errors. Exact matches (zero error, including counties published exactly) "
                            "are drawn at the floor 1e-5.")
        download_csv(_export(res), filename="ppd_release.csv", key="pp_dl_release")
        series = {}
        if "pp" in active:
            series["pp"] = _series(panel_key, panel, "pp", {**cfg, "alpha": float("nan")})
        if wem_ready:
            for m in wem:
                series[m] = _series(panel_key, panel, m, {**cfg, "alpha": cfg["alpha"] if m == "wem_prior"
                                                          else float("nan")})
        show_figure(figs.make_series_figure(panel.months[1:], panel.cases[0, 1:], series, county=panel.counties[0]),
                    key="pp_fig_series", filename="ppd_smallest_county.html",
                    caption=f"First draw of each method, seed {seed}. WEM series appear after Run.")
    cf = _contraction(panel_key, panel, float(sens), int(seed))
    pick = [panel.counties[0], panel.counties[-1]]
    show_figure(figs.make_contraction_figure(cf, pick), key="pp_fig_contraction",
                filename="ppd_contraction.html",
                caption=f"PP only, paper's public set (state total, cases ≥ deaths ≥ 0), all months ≥ 1 × 20 draws, "
                        f"seed {seed}. Noise pushes small counties onto the boundary: zero cases, zero deaths, or "
                        "deaths equal to cases.")
    download_csv(cf, filename="ppd_contraction.csv", key="pp_dl_contraction")

    # ------------------------------------------------------------ sweeps (i), (v)
    if done.get("eps") == run_key + (tuple(active),):
        sweep = pd.concat([_run_unit(panel_key, panel, t, e, m, float(alpha) if m == "wem_prior" else float("nan"),
                                     float(sens), float(kappa), int(reps), cfg["public"], int(sweeps), pp_sens,
                                     int(seed)) for e in SWEEP_EPS for m in active], ignore_index=True)
        show_figure(figs.make_loss_vs_epsilon_figure(sweep), key="pp_fig_eps", filename="ppd_loss_vs_epsilon.html",
                    caption=f"Total ℓ₂ loss over all counties at {md_escape(panel.months[t])}; dots are draws "
                            f"(seed {seed}).")
        download_csv(_export(sweep), filename="ppd_epsilon_sweep.csv", key="pp_dl_eps")
    if done.get("alpha") == run_key and prior_on:
        sweep = pd.concat([_run_unit(panel_key, panel, t, float(eps), "wem_prior", a, float(sens), float(kappa),
                                     int(reps), cfg["public"], int(sweeps), pp_sens, int(seed)) for a in SWEEP_ALPHA]
                          + [_run_unit(panel_key, panel, t, float(eps), m, float("nan"), float(sens), float(kappa),
                                       int(reps), cfg["public"], int(sweeps), pp_sens, int(seed))
                             for m in ("wem_naive", "wem_congenial")], ignore_index=True)
        show_figure(figs.make_alpha_sweep_figure(sweep), key="pp_fig_alpha", filename="ppd_alpha_sweep.html",
                    caption="A prior that is too weak adds little; one that is too strong drags the release "
                            "towards last month (the U-shape of L499).")
        download_csv(_export(sweep), filename="ppd_alpha_sweep.csv", key="pp_dl_alpha")

    _alg1_section(int(seed))
    download_json(params, filename="ppd_parameters.json", key="pp_dl_json")
