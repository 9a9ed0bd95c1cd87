"""Tab 9 of the epsilon calculator: "Public information (ε-DP relative to Z)" (keys ``pi_*``).

One ``@st.fragment`` (:func:`render_public_information_tab`) whose sections are nested fragments. Computation lives
in ``dpdash.public_info`` and figures in ``dpdash.public_info_figures``; this module only wires widgets to cached
engine calls.
Source: Seeman, Slavković & Reimherr, *A Formal Privacy Framework for Partially Private Data*
(``shared/seeds/001_cddb039cfb564267.txt``); spec ``shared/specs/partially_private.md``.
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import streamlit as st

from dpdash import epsilon_verdicts as ev
from dpdash import public_info as pinfo
from dpdash import public_info_figures as figs
from dpdash import script_epsilon as se
from dpdash.risk import posterior_bound
from ui.charts import show_figure
from ui.dossier import Headline, PageSummary, artefacts
from ui.exports import download_csv, download_json
from ui.text import md_escape
from ui.widgets import choice, log_slider

_TAKES_ALT = "alt" in inspect.signature(show_figure).parameters


def _alt(text: str) -> dict:
    """``alt=`` for ``show_figure`` once the shared helper takes it (issue 14 item 9)."""
    return {"alt": text} if _TAKES_ALT else {}


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
    return pinfo.delta_z_table(n, z, z)


@st.cache_data(max_entries=64, show_spinner=False)
def _ratio_fig(N: float, epsilon: float):
    return figs.make_invariant_ratio_figure(N, current=epsilon)


@st.cache_data(max_entries=64, show_spinner=False)
def _em_fig(n: int, epsilon: float):
    return figs.make_em_audit_figure(n, current=epsilon)


@st.cache_data(max_entries=64, show_spinner=False)
def _lemma7(n: int, epsilon: float, noise: str, post: str):
    return pinfo.lemma7_toy(n, epsilon=epsilon, noise=noise, post=post), pinfo.sum_projection_toy(n, epsilon=epsilon)


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
    edited = st.data_editor(LEDGER_DEFAULT, key="pi_ledger", num_rows="dynamic", width="stretch", placeholder="",
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
        total = pinfo.compose_dpz(eps, same_z=labels.nunique() == 1)
    except ValueError as exc:
        msg = str(exc)
        if msg == pinfo.COMPOSITION_MESSAGE:
            # the labels are typed cells (or a link's): quoted escaped, never as Markdown (issue 17)
            quoted = ", ".join("“" + md_escape(x, max_len=60) + "”" for x in sorted(set(labels))[:10])
            st.warning(f"No total: {msg}. The labels differ: {quoted}.")
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
def _verdict(slot, text: str) -> None:
    """A section's answer in plain words, in the container the section made under its title.

    The container is made inside the section's own fragment: a placeholder made by the outer fragment cannot be
    drawn into on the section's fragment reruns (StreamlitInvalidLayoutContextError, found by the random walk).
    """
    slot.success(md_escape(text, max_len=600))


@st.fragment
def _pi_invariant(eps: float, outputs: bool = True) -> None:
    st.subheader("1. Publishing an invariant (Lemma 5)")
    slot = st.container()
    c1, c2 = st.columns(2)
    N = c1.select_slider("Invariant: the count is known to lie in 0…N, N =", options=N_GRID, value=100,
                         key="pi_N", bind="query-params")
    kind = choice("Noise", {"discrete": "discrete Laplace", "continuous": "continuous Laplace"}, key="pi_kind",
                  widget="radio", container=c2, horizontal=True)
    if not outputs:
        return
    eps_star = pinfo.eps_star_invariant(eps, N, kind=kind)
    _verdict(slot, ev.invariant_verdict(epsilon=eps, eps_star=eps_star, N=N))
    m1, m2 = st.columns(2)
    m1.metric("Effective ε*", f"{eps_star:.4f}")
    m2.metric("ε* / ε", f"{eps_star / eps:.3f}")
    st.markdown("Publishing an invariant can raise the effective budget, but never beyond 2ε. The worst case "
                "is a count at the edge of the known range.")
    show_figure(figs.make_invariant_band_figure(eps, eps_star, kind=kind, N=N), key="pi_fig_band",
                filename="invariant_band.html",
                caption=f"The bar is ε* = {eps_star:.3f}; the shaded band is [ε, 2ε] = [{eps:g}, {2 * eps:g}].",
                **_alt(f"One horizontal bar at the effective ε* = {eps_star:.3g}, inside a shaded band from ε = "
                       f"{eps:g} to 2ε = {2 * eps:g}."))
    show_figure(_ratio_fig(N, eps), key="pi_fig_ratio", filename="invariant_inflation.html",
                caption="Inflation ε*/ε for both noise kinds at this N. It is largest at moderate ε and "
                        "vanishes for N = 1.",
                **_alt(f"Line chart: ε*/ε against ε from 0.01 to 20 (log scale) for discrete and continuous "
                       f"Laplace noise with the invariant 0…{N}; both stay between 1 and 2, a dashed line marks "
                       f"ε = {eps:g}."))
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
            g = pinfo.gaussian_public_coefficients(int(gn), gr, grho, sigma=gs, tau=gt)
            dzg = pinfo.delta_z_gauss(int(gn), gr, grho, sensitivity=gd)
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
    slot = st.container()
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
    dz = pinfo.delta_z_binom(n, z0, z1)
    eff = pinfo.effective_epsilon_dpz(eps, sensitivity_dp=1, sensitivity_z=dz)
    scale = pinfo.required_scale_dpz(eps, sensitivity_z=dz)
    _verdict(slot, ev.correlated_verdict(epsilon=eps, effective=eff, delta_z=dz))
    m1, m2, m3 = st.columns(3)
    m1.metric("Sensitivity Δ_z", f"{dz}", help="Plain DP: 1 (one person changes the count by 1).")
    m2.metric("Effective ε = ε·Δ_z", f"{eff:.4g}")
    m3.metric("Laplace scale needed to keep ε", f"{scale:.4g}", help="Δ_z/ε instead of 1/ε (Corollary 1).")
    show_figure(figs.make_delta_z_heatmap(n, np.round(np.linspace(0, 1, 11), 2), _delta_z_grid(n),
                                          current=(z0, z1)),
                key="pi_fig_heat", filename="delta_z_heatmap.html",
                caption="Δ_z over all (z₀, z₁) at this n. The diagonal (no dependence) stays at 1; strong "
                        "dependence makes one person's secret move the whole count.",
                **_alt(f"Heat map of the sensitivity Δ_z over z₀ and z₁ from 0 to 1 for n = {n}; the diagonal is "
                       f"1 and the corners reach {n}; a marker shows the current (z₀, z₁) = ({z0:g}, {z1:g}) with "
                       f"Δ_z = {dz}."))
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
                         "section 2 is taken into account."),
                **_alt(f"Two bands of posterior belief from the prior {p0:.2f}: nominal ε from {b_nom.lower:.3g} to "
                       f"{b_nom.upper:.3g}; effective ε from {b_eff.lower:.3g} to {b_eff.upper:.3g}."))
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
    real = pinfo.realized_epsilon_trunc_em(en, epsilon=eps, kappa=kappa)
    lim = pinfo.realized_epsilon_trunc_em_limit(eps, kappa=kappa)
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
                caption="Above the dashed line the mechanism leaks more than its nominal ε.",
                **_alt(f"Line chart: realised ε of the truncated exponential mechanism against the nominal ε for "
                       f"n = {en}, with κ = 1 and κ = 2, and the nominal ε dashed; at ε = {eps:g} and κ = {kappa} "
                       f"the realised ε is {real:.3g}."))
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
        noise = choice("Noise", {"dlap": "discrete Laplace", "laplace": "continuous Laplace"}, key="pi_l7_noise",
                       widget="radio", container=c2)
        post = choice("Post-processing", {"clamp": "clamp to [0, n]", "round_clamp": "round, then clamp"},
                      key="pi_l7_post", widget="radio", container=c3)
        if not outputs:
            _theta0_input()
            return
        l7, sp = _lemma7(ln, eps, noise, post)
        show_figure(figs.make_info_loss_figure(l7, sp), key="pi_fig_l7", filename="information_loss.html",
                    caption=(f"Count toy (θ ~ uniform, T ~ Binomial(n, θ)): E Var(θ|Y) = {l7.evar_y:.6f}, "
                             f"E Var(θ|Y*) = {l7.evar_ystar:.6f} (P(Y ≠ Y*) = {l7.p_differs:.3f}). Sum toy "
                             f"(two cells with public total n, discrete Laplace): {sp.evar_y:.6f} vs "
                             f"{sp.evar_ystar:.6f}."),
                    **_alt(f"Bars of the expected posterior variance of θ given the true count, the noisy release Y "
                           f"and the post-processed Y*, for the count toy (n = {ln}) and the sum toy; higher means "
                           "less information."))
        st.markdown("Clamping discrete-Laplace counts loses nothing; rounding or mixing coordinates does. "
                    "(Theorem 2's claim of a strict loss whenever Y ≠ Y* is false for clamping; erratum E5.)")
        theta0 = _theta0_input()
        show_figure(_power_fig(ln, eps, theta0), key="pi_fig_power", filename="power.html",
                    caption="Power of level-5% tests of θ = θ₀ against larger θ, on the continuous-Laplace "
                            "release Y and on its rounded, clamped version Y*.",
                    **_alt(f"Line chart: power against the true θ from θ₀ = {theta0:g} to 1, for tests on Y and on "
                           "Y*; both rise from 5%."))
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
    if outputs:
        _take_away(eps)


def _take_away(eps: float) -> None:
    """The tab's report and settings (issue 15): sections 1 and 2 recomputed from their controls' values."""
    ss = st.session_state
    N, kind = ss.get("pi_N", 100), ss.get("pi_kind", "discrete")
    n, z0, z1 = int(ss.get("pi_n", 50)), float(ss.get("pi_z0", 0.2)), float(ss.get("pi_z1", 0.4))
    eps_star = pinfo.eps_star_invariant(eps, N, kind=kind)
    dz = pinfo.delta_z_binom(n, z0, z1)
    eff = pinfo.effective_epsilon_dpz(eps, sensitivity_dp=1, sensitivity_z=dz)
    artefacts(PageSummary(
        page="epsilon_calculator", title="Epsilon calculator",
        question="What does ε mean when public information is released alongside?",
        params={"nominal ε": f"{eps:g}", "invariant": f"0…{N}", "noise": f"{kind} Laplace",
                "people in the count n": str(n), "z₀": f"{z0:g}", "z₁": f"{z1:g}"},
        headlines=[Headline("Effective ε* with the invariant", f"{eps_star:.4g}"),
                   Headline("Sensitivity Δ_z", f"{dz}"), Headline("Effective ε with correlation", f"{eff:.4g}")],
        verdicts=[ev.invariant_verdict(epsilon=eps, eps_star=eps_star, N=N),
                  ev.correlated_verdict(epsilon=eps, effective=eff, delta_z=dz)],
        sources=[f"{PAPER.replace('*', '')}: Lemmas 2–5, Examples 1–3, Lemma 7, Theorem 2",
                 "Errata E1 (κ = 2), E4 (Δ_z on L288), E5 (Theorem 2 and clamping)"],
        epsilon=eps,
        script=se.public_info_script(epsilon=eps, N=N, kind=kind, n=n, z0=z0, z1=z1)),
        key="pi_art")
