"""Tab 9 of the epsilon calculator: "Public information (ε-DP relative to Z)" (keys ``pi_*``).

One ``@st.fragment`` (:func:`render_public_information_tab`) whose sections are nested fragments. What each section
shows (cards, verdict and its tone, numbers, captions, alt texts, report, script) is one engine view
(``dpdash.epsilon.public_info_views``); figures come from ``dpdash.epsilon.public_info_figures``. Widgets, layout and
rendering only.
Source: Seeman, Slavković & Reimherr, *A Formal Privacy Framework for Partially Private Data*
(``shared/seeds/001_cddb039cfb564267.txt``); spec ``shared/specs/partially_private.md``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dpdash.accounting import public_info as pinfo
from dpdash.epsilon import public_info_figures as figs
from dpdash.epsilon import public_info_views as piv
from dpdash.epsilon import script as se
from dpdash.common.view import TabView
from ui.exports import download_csv, download_json
from ui.show import cards, figure, say_problem, take_away, verdict_box
from ui.widgets import choice, log_slider

PAPER = piv.PAPER

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
    return pinfo.delta_z_table(n, piv.Z_GRID, piv.Z_GRID)


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
def _power_fig(n: int, epsilon: float, theta0: float, thetas: tuple[float, ...]):
    return figs.make_power_figure(n, epsilon=epsilon, theta0=theta0, thetas=np.asarray(thetas))


N_GRID = sorted({int(round(v)) for v in np.geomspace(1, 1000, 61)})

LEDGER_DEFAULT = pd.DataFrame({
    "release": ["Monthly county counts", "Quarterly age table"],
    "epsilon": [0.5, 0.7],
    "public information": ["2020 state totals", "2020 state totals"],
})


def _section_downloads(name: str, view: TabView) -> None:
    """Per-section exports: the section's numbers (CSV) and its parameters (JSON), both from its view."""
    d1, d2 = st.columns(2)
    with d1:
        download_csv(view.tables["numbers"], filename=f"public_information_{name}.csv", key=f"pi_dl_{name}_csv",
                     label="Download these numbers (CSV)")
    with d2:
        download_json(piv.section_inputs(view), filename=f"public_information_{name}.json",
                      key=f"pi_dl_{name}_json")


# Each section is a nested fragment: moving one of its controls redraws that section only; moving the shared
# ε slider reruns the whole tab (the outer fragment), never the host page's other tabs. A section's verdict is drawn
# in a container the section makes inside its own fragment: a placeholder made by the outer fragment cannot be drawn
# into on the section's fragment reruns (StreamlitInvalidLayoutContextError, found by the random walk).
@st.fragment
def _pi_invariant(eps: float, outputs: bool = True) -> None:
    st.subheader("1. Publishing an invariant (Lemma 5)")
    slot = st.container()
    c1, c2 = st.columns(2)
    N = c1.select_slider("Invariant: the count is known to lie in 0…N, N =", options=N_GRID, value=100,
                         key="pi_N", bind="query-params")
    kind = choice("Noise", piv.KIND_WORDS, key="pi_kind", widget="radio", container=c2, horizontal=True)
    if not outputs:
        return
    view = piv.invariant_view(epsilon=eps, N=N, kind=kind)
    verdict_box(view.verdicts, slot)
    cards(view.headlines)
    st.markdown("Publishing an invariant can raise the effective budget, but never beyond 2ε. The worst case "
                "is a count at the edge of the known range.")
    f = view.figures
    figure(figs.make_invariant_band_figure(**f["band"]), key="pi_fig_band", filename="invariant_band.html",
           caption=f["band_caption"], alt=f["band_alt"])
    figure(_ratio_fig(f["ratio"]["N"], f["ratio"]["current"]), key="pi_fig_ratio", filename="invariant_inflation.html",
           caption="Inflation ε*/ε for both noise kinds at this N. It is largest at moderate ε and vanishes for "
                   "N = 1.", alt=f["ratio_alt"])
    _section_downloads("invariant", view)


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
            view = piv.gaussian_view(epsilon=eps, n=int(gn), r=gr, rho=grho, sigma=gs, tau=gt, sensitivity=gd)
        except ValueError as exc:
            say_problem(f"These values are not a valid model: {exc}")
            return
        cards(view.headlines, columns=5)
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
    cards_box = st.container()
    _gaussian_expander(eps)
    # Section 3 depends on this section's effective ε, so it lives in the same fragment.
    st.subheader("3. What an adversary can learn (Lemma 2)")
    p0 = _prior_input()
    view = piv.correlated_view(epsilon=eps, n=n, z0=z0, z1=z1, prior=p0, grid=_delta_z_grid(n))
    verdict_box(view.verdicts, slot)
    f = view.figures
    with cards_box:
        cards(view.headlines)
        figure(figs.make_delta_z_heatmap(**f["heatmap"]), key="pi_fig_heat", filename="delta_z_heatmap.html",
               caption="Δ_z over all (z₀, z₁) at this n. The diagonal (no dependence) stays at 1; strong "
                       "dependence makes one person's secret move the whole count.", alt=f["heatmap_alt"])
    figure(figs.make_posterior_band_figure(**f["posterior"]), key="pi_fig_post", filename="posterior_bands.html",
           caption=f["posterior_caption"], alt=f["posterior_alt"])
    _section_downloads("correlated", view)


@st.fragment
def _pi_ledger() -> None:
    st.subheader("4. Budget ledger (Lemma 4)")
    st.markdown("Budgets add up **only for releases made relative to the same public information**. List the "
                "releases and the public information each one assumed; the total appears when the labels match.")
    edited = st.data_editor(LEDGER_DEFAULT, key="pi_ledger", num_rows="dynamic", width="stretch", placeholder="",
                            column_config={"epsilon": st.column_config.NumberColumn("ε", min_value=0.0,
                                                                                    format="%.3f")})
    rows = edited.dropna(how="all")
    view = piv.ledger_view(list(rows["epsilon"]), list(rows["public information"]))
    verdict_box(view.verdicts)   # escapes the typed labels it quotes (issue 17)
    cards(view.headlines)
    download_json(view.figures["result"], filename="public_information_ledger.json", key="pi_dl_ledger_json",
                  label="Download the ledger result (JSON)")


@st.fragment
def _pi_em(eps: float, outputs: bool = True) -> None:
    st.subheader("5. Exponential-mechanism audit (Theorem 1, Example 1)")
    slot = st.container()
    c1, c2 = st.columns(2)
    en = c1.slider("n (records averaged)", 1, 1000, 20, key="pi_em_n", bind="query-params")
    kappa = c2.radio("κ", [2, 1], key="pi_kappa", bind="query-params", horizontal=True,
                     format_func=piv.KAPPA_WORDS.__getitem__)
    if not outputs:
        return
    view = piv.em_view(epsilon=eps, n=en, kappa=kappa)
    verdict_box(view.verdicts, slot)
    real, lim = view.headlines
    m1, m2 = st.columns(2)
    m1.metric(real.label, real.value, delta=view.figures["excess"], delta_color="inverse")
    m2.metric(lim.label, lim.value)
    st.markdown(
        "Theorem 1's mechanism restricts the output to values consistent with the public information. Its "
        "proof drops the normalising constant, which changes with the data when the output range is bounded. "
        "With the paper's κ = 1 the realised loss can exceed ε (up to ε + log 2); κ = 2 (the usual exponential-"
        "mechanism factor) keeps it within ε. Erratum E1."
    )
    a = view.figures["audit"]
    figure(_em_fig(a["n"], a["current"]), key="pi_fig_em", filename="em_audit.html",
           caption="Above the dashed line the mechanism leaks more than its nominal ε.", alt=view.figures["alt"])
    _section_downloads("em_audit", view)


def _theta0_input() -> float:
    return st.slider("θ₀ (null hypothesis)", 0.05, 0.9, 0.5, step=0.05, key="pi_theta0", bind="query-params")


@st.fragment
def _pi_info_loss(eps: float, outputs: bool = True) -> None:
    with st.expander("Does enforcing public constraints lose information? (Lemma 7, Theorem 2)"):
        slot = st.container()
        c1, c2, c3 = st.columns(3)
        ln = c1.slider("n (trials)", 2, 50, 10, key="pi_l7_n", bind="query-params")
        noise = choice("Noise", piv.L7_NOISE_WORDS, key="pi_l7_noise", widget="radio", container=c2)
        post = choice("Post-processing", piv.L7_POST_WORDS, key="pi_l7_post", widget="radio", container=c3)
        if not outputs:
            _theta0_input()
            return
        l7, sp = _lemma7(ln, eps, noise, post)
        fig_box = st.container()
        st.markdown("Clamping discrete-Laplace counts loses nothing; rounding or mixing coordinates does. "
                    "(Theorem 2's claim of a strict loss whenever Y ≠ Y* is false for clamping; erratum E5.)")
        theta0 = _theta0_input()
        view = piv.info_loss_view(l7, sp, epsilon=eps, n=ln, noise=noise, post=post, theta0=theta0)
        verdict_box(view.verdicts, slot)
        f = view.figures
        with fig_box:
            figure(figs.make_info_loss_figure(l7, sp), key="pi_fig_l7", filename="information_loss.html",
                   caption=f["caption"], alt=f["alt"])
        pw = f["power"]
        figure(_power_fig(pw["n"], pw["epsilon"], pw["theta0"], pw["thetas"]), key="pi_fig_power",
               filename="power.html",
               caption="Power of level-5% tests of θ = θ₀ against larger θ, on the continuous-Laplace release Y and "
                       "on its rounded, clamped version Y*.", alt=f["power_alt"])
        _section_downloads("information_loss", view)


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
    """The tab's report and settings (issue 15), from the views of sections 1 and 2 at their controls' values."""
    ss = st.session_state
    N, kind = ss.get("pi_N", 100), ss.get("pi_kind", "discrete")
    n, z0, z1 = int(ss.get("pi_n", 50)), float(ss.get("pi_z0", 0.2)), float(ss.get("pi_z1", 0.4))
    inv = piv.invariant_view(epsilon=eps, N=N, kind=kind)
    cor = piv.correlated_view(epsilon=eps, n=n, z0=z0, z1=z1, prior=float(ss.get("pi_p0", 0.1)),
                              grid=_delta_z_grid(n))
    view = piv.tab_view(inv, cor, epsilon=eps, N=N, kind=kind, n=n, z0=z0, z1=z1)
    take_away(view, key="pi_art", page="epsilon_calculator", title="Epsilon calculator",
              sources=[f"{PAPER.replace('*', '')}: Lemmas 2–5, Examples 1–3, Lemma 7, Theorem 2",
                       "Errata E1 (κ = 2), E4 (Δ_z on L288), E5 (Theorem 2 and clamping)"],
              script=se.public_info_script(**view.script))
