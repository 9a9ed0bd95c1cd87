"""Views of the epsilon calculator's "Public information" tab: one pure function per section builds what it shows.

Each ``*_view`` takes the section's control values (and any engine result the page caches, such as the Δ_z grid)
and returns a frozen :class:`dpdash.common.view.TabView`: headline numbers already formatted, the verdict sentence with
its tone, the numbers table (shown and downloaded as CSV), the inputs, captions and alt texts of its figures, and
its parameters. :func:`tab_view` assembles the tab's report and "Copy as code" from the section views, so the report
restates the cards' own strings (issue 22).

References
----------
Seeman, Slavković & Reimherr (2022), *A Formal Privacy Framework for Partially Private Data* (seed S1,
``shared/seeds/001_cddb039cfb564267.txt``): Lemma 2 (posterior bounds), Lemma 4 (composition relative to the same
Z), Lemma 5 (invariants), Example 1 / Theorem 1 (truncated exponential mechanism; erratum E1: κ = 2), Example 2
(Gaussian public information; erratum E4: Δ_z = Δ·|β_v|), Example 3 (correlated public information), Lemma 7 and
Theorem 2 (information loss; erratum E5: clamping loses nothing). Spec ``shared/specs/partially_private.md``.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from dpdash.accounting import public_info as pinfo
from dpdash.common.formatting import given
from dpdash.epsilon.risk import posterior_bound
from dpdash.accounting import tones
from dpdash.common.view import Headline, ReportSection, Sentence, TabView, frozen_map, with_stakes

PAPER = "Seeman, Slavković & Reimherr (2022), *A Formal Privacy Framework for Partially Private Data*"
KIND_WORDS = {"discrete": "discrete Laplace", "continuous": "continuous Laplace"}
L7_NOISE_WORDS = {"dlap": "discrete Laplace", "laplace": "continuous Laplace"}
L7_POST_WORDS = {"clamp": "clamp to [0, n]", "round_clamp": "round, then clamp"}
KAPPA_WORDS = {2: "2 (safe)", 1: "1 (paper-literal)"}
#: The (z₀, z₁) grid of the Δ_z heat map (section 2)
Z_GRID = tuple(float(z) for z in np.round(np.linspace(0, 1, 11), 2))
#: θ values of the power curves (section 6): 25 from θ₀ to 1
POWER_POINTS = 25
#: Relative excess below which a realised or effective ε counts as the nominal one (display precision)
SAME = 5e-5


def _view(**kw) -> TabView:
    for k in ("tables", "figures", "params", "script"):
        if k in kw:
            kw[k] = frozen_map(kw[k])
    return TabView(**kw)


def _numbers(rows: Sequence[tuple[str, float]]) -> pd.DataFrame:
    """A section's numbers as the CSV carries them (full precision)."""
    return pd.DataFrame({"quantity": [q for q, _ in rows], "value": [float(v) for _, v in rows]})


# --------------------------------------------------------------------------- 1. invariant (Lemma 5)
def invariant_view(*, epsilon: float, N: int, kind: str) -> TabView:
    """Section 1: publishing "the count lies in 0…N" raises ε to ε* ∈ [ε, 2ε] (Lemma 5 of S1).

    Tone: a warning when ε* exceeds ε at the shown precision (the invariant weakens the promise), good otherwise.
    """
    eps = float(epsilon)
    eps_star = pinfo.eps_star_invariant(eps, N, kind=kind)
    ratio = eps_star / eps
    # the sentence reads the cards' own strings (a sentence rounded on its own said "ε* = 7.7 (1.1×)" beside
    # cards 7.6931 and 1.099, issue 22's class)
    n_txt = "∞" if math.isinf(N) else f"{int(N):,}"
    text = (f"Publishing that the count lies in 0…{n_txt} turns ε = {given(eps)} into an effective ε* = "
            f"{eps_star:.4f} ({ratio:.3f}× the nominal ε; never more than 2ε).")
    tone = "warning" if ratio > 1 + SAME else "good"
    return _view(
        headlines=(Headline("Effective ε*", f"{eps_star:.4f}", raw=eps_star),
                   Headline("ε* / ε", f"{ratio:.3f}", raw=ratio)),
        verdicts=with_stakes((Sentence(text, tone),), tones.epsilon_tone(eps_star, name="the effective ε*")),
        tables={"numbers": _numbers([("effective ε* (Lemma 5)", eps_star), ("ε*/ε", ratio)])},
        figures={"band": dict(epsilon=eps, eps_star=eps_star, kind=kind, N=N),
                 "band_caption": f"The bar is ε* = {eps_star:.3f}; the shaded band is [ε, 2ε] = [{eps:g}, "
                                 f"{2 * eps:g}].",
                 "band_alt": f"One horizontal bar at the effective ε* = {eps_star:.3g}, inside a shaded band from "
                             f"ε = {eps:g} to 2ε = {2 * eps:g}.",
                 "ratio": dict(N=N, current=eps),
                 "ratio_alt": f"Line chart: ε*/ε against ε from 0.01 to 20 (log scale) for discrete and continuous "
                              f"Laplace noise with the invariant 0…{N}; both stay between 1 and 2, a dashed line "
                              f"marks ε = {eps:g}.",
                 "inputs": {"epsilon": eps, "N": N, "kind": kind}},
        params={"nominal ε": f"{eps:g}", "invariant": f"0…{N}", "noise": KIND_WORDS.get(kind, kind)},
        epsilon=eps)


# --------------------------------------------------------------------------- 2–3. correlated Z, posterior
def correlated_view(*, epsilon: float, n: int, z0: float, z1: float, prior: float,
                    grid: np.ndarray | None = None) -> TabView:
    """Sections 2 and 3: correlated public information (Example 3 of S1) multiplies ε by Δ_z = W∞ between the two
    binomial laws; the adversary's posterior bounds at the nominal and the effective ε (Lemma 2).

    ``grid``: ``pinfo.delta_z_table(n, Z_GRID, Z_GRID)`` if the page has it cached (computed here otherwise).
    Tone: a warning when Δ_z > 1 (ε protects less than it says), good when the information adds nothing.
    """
    eps, n = float(epsilon), int(n)
    dz = pinfo.delta_z_binom(n, z0, z1)
    eff = pinfo.effective_epsilon_dpz(eps, sensitivity_dp=1, sensitivity_z=dz)
    scale = pinfo.required_scale_dpz(eps, sensitivity_z=dz)
    b_nom, b_eff = posterior_bound(prior, epsilon=eps), posterior_bound(prior, epsilon=eff)
    if dz > 1:   # at the card's precision (a sentence rounded on its own said ε = 4.8 beside 4.81)
        text = (f"With this correlated public information one person's secret moves the count by up to {dz}, so "
                f"ε = {given(eps)} protects only like ε = {eff:.4g}.")
    else:
        text = (f"This public information adds nothing: one person still moves the count by at most 1, so ε = "
                f"{given(eps)} keeps its meaning.")
    table = grid if grid is not None else pinfo.delta_z_table(n, Z_GRID, Z_GRID)
    post = (f"With prior {prior:.2f}, the release can move the adversary's belief to anywhere in "
            f"[{b_nom.lower:.4g}, {b_nom.upper:.4g}] at the nominal ε, but to [{b_eff.lower:.4g}, "
            f"{b_eff.upper:.4g}] once the correlated public information of section 2 is taken into account.")
    return _view(
        headlines=(Headline("Sensitivity Δ_z", f"{dz}", raw=float(dz),
                            note="Plain DP: 1 (one person changes the count by 1)."),
                   Headline("Effective ε = ε·Δ_z", f"{eff:.4g}", raw=eff),
                   Headline("Laplace scale needed to keep ε", f"{scale:.4g}", raw=scale,
                            note="Δ_z/ε instead of 1/ε (Corollary 1).")),
        # the guarantee is the correlated ε·Δ_z: a Δ_z of 2 is never good news, and its size sets the stake
        verdicts=with_stakes((Sentence(text, "warning" if dz > 1 else "good"),),
                             tones.epsilon_tone(eff, name="the effective ε")),
        tables={"numbers": _numbers([
            ("Δ_z (Example 3)", dz), ("effective ε (Example 3)", eff), ("Laplace scale to keep ε", scale),
            ("posterior lower bound, nominal ε", b_nom.lower), ("posterior upper bound, nominal ε", b_nom.upper),
            ("posterior lower bound, effective ε", b_eff.lower),
            ("posterior upper bound, effective ε", b_eff.upper)])},
        figures={"heatmap": dict(n=n, z_grid=Z_GRID, table=table, current=(z0, z1)),
                 "heatmap_alt": f"Heat map of the sensitivity Δ_z over z₀ and z₁ from 0 to 1 for n = {n}; the "
                                f"diagonal is 1 and the corners reach {n}; a marker shows the current (z₀, z₁) = "
                                f"({z0:g}, {z1:g}) with Δ_z = {dz}.",
                 "posterior": dict(prior=prior, bands={
                     f"nominal ε = {eps:g}": (b_nom.lower, b_nom.upper),
                     f"effective ε = {eff:.3g} (section 2)": (b_eff.lower, b_eff.upper)}),
                 "posterior_caption": post,
                 "posterior_alt": f"Two bands of posterior belief from the prior {prior:.2f}: nominal ε from "
                                  f"{b_nom.lower:.3g} to {b_nom.upper:.3g}; effective ε from {b_eff.lower:.3g} to "
                                  f"{b_eff.upper:.3g}.",
                 "inputs": {"epsilon": eps, "n": n, "z0": z0, "z1": z1, "prior": prior}},
        params={"nominal ε": f"{eps:g}", "people in the count n": str(n), "z₀": f"{z0:g}", "z₁": f"{z1:g}",
                "adversary's prior": f"{prior:.2f}"},
        sections=(ReportSection("What an adversary can learn (Lemma 2)", (post,)),),
        epsilon=eps)


def gaussian_view(*, epsilon: float, n: int, r: float, rho: float, sigma: float, tau: float,
                  sensitivity: float) -> TabView:
    """Example 2 of S1: exchangeable Gaussian values with a public Z; the mean is released. Δ_z = Δ·|β_v| (erratum
    E4 on L288) and the effective ε = ε·n·β_v. Raises ``ValueError`` when the correlations are not a valid model.
    """
    g = pinfo.gaussian_public_coefficients(int(n), r, rho, sigma=sigma, tau=tau)
    dzg = pinfo.delta_z_gauss(int(n), r, rho, sensitivity=sensitivity)
    eff = float(epsilon) * int(n) * g.beta_v
    return _view(
        headlines=(Headline("β_v", f"{g.beta_v:.5f}", raw=g.beta_v), Headline("β_z", f"{g.beta_z:.5f}", raw=g.beta_z),
                   Headline("Var(X̄ | X₁, Z)", f"{g.cond_var:.5f}", raw=g.cond_var),
                   Headline("Δ_z = Δ·β_v", f"{dzg:.5g}", raw=dzg),
                   Headline("effective ε = ε·n·β_v", f"{eff:.5g}", raw=eff)),
        epsilon=float(epsilon))


# --------------------------------------------------------------------------- 4. ledger (Lemma 4)
LEDGER_TOTAL = "Total budget relative to this public information"


def ledger_view(epsilons: Sequence[Any], labels: Sequence[Any]) -> TabView:
    """Section 4: budgets add up only relative to the same public information (Lemma 4 of S1).

    ``epsilons`` and ``labels`` are the ledger's rows (blank rows already dropped). The labels are typed text:
    quoted as they are; the page escapes them. ``figures["result"]`` is the JSON the page offers.
    """
    if len(epsilons) == 0:
        return _view(verdicts=(Sentence("Add at least one release to the ledger.", "neutral"),),
                     figures={"result": {"releases": 0}})
    names = [("" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)).strip() for v in labels]
    out: dict = {"releases": len(epsilons)}
    try:
        eps = [float(e) for e in epsilons]
        total = pinfo.compose_dpz(eps, same_z=len(set(names)) == 1)
    except (TypeError, ValueError) as exc:
        msg = str(exc)
        out["error"] = msg
        if msg == pinfo.COMPOSITION_MESSAGE:
            quoted = ", ".join(f"“{x[:60]}”" for x in sorted(set(names))[:10])
            text = f"No total: {msg}. The labels differ: {quoted}."
        else:
            text = f"No total: every ε must be a number > 0 ({msg[:200]})."
        return _view(verdicts=(Sentence(text, "warning"),), figures={"result": out})
    out["total"] = total
    return _view(headlines=(Headline(LEDGER_TOTAL, f"ε = {total:.4g}", raw=total),),
                 verdicts=(Sentence(f"The {len(eps)} releases, all relative to “{names[0][:60]}”, add up to "
                                    f"ε = {total:.4g}.", "neutral"),),
                 figures={"result": out})


# --------------------------------------------------------------------------- 5. exponential mechanism (Thm 1)
def em_view(*, epsilon: float, n: int, kappa: int) -> TabView:
    """Section 5: the realised ε of Theorem 1's truncated exponential mechanism on a mean of n records (Example 1).

    With κ = 1 (the paper's) the realised loss can exceed ε, up to ε + log 2; κ = 2 keeps it within ε (erratum E1).
    Tone: a warning when the realised ε exceeds the nominal ε at the shown precision.
    """
    eps = float(epsilon)
    real = pinfo.realized_epsilon_trunc_em(int(n), epsilon=eps, kappa=kappa)
    lim = pinfo.realized_epsilon_trunc_em_limit(eps, kappa=kappa)
    if real > eps * (1 + SAME):
        verdict = Sentence(f"With κ = {kappa} the mechanism leaks more than it promises: at n = {int(n):,} its "
                           f"realised ε is {real:.4f} against the nominal {eps:g} ({real / eps:.3f}×).", "warning")
    else:
        verdict = Sentence(f"With κ = {kappa} the mechanism keeps its promise: at n = {int(n):,} its realised ε is "
                           f"{real:.4f}, within the nominal {eps:g}.", "good")
    return _view(
        headlines=(Headline(f"Realised ε at n = {int(n)}", f"{real:.4f}", raw=real,
                            note=f"{real - eps:+.4f} vs nominal"),
                   Headline("Large-n limit ε/κ + log(2 − e^(−ε/κ))", f"{lim:.4f}", raw=lim)),
        verdicts=with_stakes((verdict,), tones.epsilon_tone(max(real, eps), name="the realised ε")),
        tables={"numbers": _numbers([(f"realised ε (κ = {kappa})", real), ("large-n limit", lim)])},
        figures={"audit": dict(n=int(n), current=eps), "excess": f"{real - eps:+.4f} vs nominal",
                 "alt": f"Line chart: realised ε of the truncated exponential mechanism against the nominal ε for "
                        f"n = {int(n)}, with κ = 1 and κ = 2, and the nominal ε dashed; at ε = {eps:g} and κ = "
                        f"{kappa} the realised ε is {real:.3g}.",
                 "inputs": {"epsilon": eps, "n": int(n), "kappa": kappa}},
        params={"nominal ε": f"{eps:g}", "records averaged n": f"{int(n):,}", "κ": KAPPA_WORDS.get(kappa, str(kappa))},
        epsilon=eps)


# --------------------------------------------------------------------------- 6. information loss (Lemma 7, Thm 2)
def info_loss_view(l7: pinfo.Lemma7Result, sp: pinfo.SumProjectionResult, *, epsilon: float, n: int, noise: str,
                   post: str, theta0: float) -> TabView:
    """Section 6: does enforcing the public constraints lose information? ``l7`` = ``pinfo.lemma7_toy(n, ...)``,
    ``sp`` = ``pinfo.sum_projection_toy(n, ...)``. Post-processing loses information when E Var(θ|Y*) exceeds
    E Var(θ|Y) (Lemma 7); clamping discrete-Laplace counts loses none (erratum E5 on Theorem 2).
    """
    lost = l7.evar_ystar - l7.evar_y
    how = L7_POST_WORDS.get(post, post)
    if lost > 1e-12 * max(1.0, l7.evar_y):
        verdict = Sentence(f"“{how.capitalize()}” loses information here: E Var(θ|Y*) = {l7.evar_ystar:.6f} "
                           f"against E Var(θ|Y) = {l7.evar_y:.6f} for the raw noisy count.", "neutral")
    else:
        verdict = Sentence(f"“{how.capitalize()}” loses nothing here: E Var(θ|Y*) = E Var(θ|Y) = "
                           f"{l7.evar_y:.6f}, although Y* differs from Y with probability {l7.p_differs:.3f}.",
                           "good")
    return _view(
        verdicts=(verdict,),
        tables={"numbers": _numbers([("E Var(θ|T)", l7.evar_t), ("E Var(θ|Y)", l7.evar_y),
                                     ("E Var(θ|Y*)", l7.evar_ystar), ("P(Y ≠ Y*)", l7.p_differs),
                                     ("sum toy E Var(θ|Y)", sp.evar_y), ("sum toy E Var(θ|Y*)", sp.evar_ystar)])},
        figures={"caption": f"Count toy (θ ~ uniform, T ~ Binomial(n, θ)): E Var(θ|Y) = {l7.evar_y:.6f}, "
                            f"E Var(θ|Y*) = {l7.evar_ystar:.6f} (P(Y ≠ Y*) = {l7.p_differs:.3f}). Sum toy (two "
                            f"cells with public total n, discrete Laplace): {sp.evar_y:.6f} vs {sp.evar_ystar:.6f}.",
                 "alt": f"Bars of the expected posterior variance of θ given the true count, the noisy release Y "
                        f"and the post-processed Y*, for the count toy (n = {int(n)}) and the sum toy; higher "
                        "means less information.",
                 "power": dict(n=int(n), epsilon=float(epsilon), theta0=float(theta0),
                               thetas=tuple(np.linspace(theta0, 1.0, POWER_POINTS))),
                 "power_alt": f"Line chart: power against the true θ from θ₀ = {theta0:g} to 1, for tests on Y and "
                              "on Y*; both rise from 5%.",
                 "inputs": {"epsilon": float(epsilon), "n": int(n), "noise": noise, "post": post,
                            "theta0": float(theta0)}},
        params={"trials n": f"{int(n):,}", "noise": L7_NOISE_WORDS.get(noise, noise), "post-processing": how,
                "θ₀": f"{theta0:g}"},
        epsilon=float(epsilon))


# --------------------------------------------------------------------------- the tab's report
def tab_view(invariant: TabView, correlated: TabView, *, epsilon: float, N: int, kind: str, n: int, z0: float,
             z1: float) -> TabView:
    """The tab's report, settings and "Copy as code": sections 1 and 2's own cards and verdicts, restated as shown."""
    heads = (Headline("Effective ε* with the invariant", invariant.headline("Effective ε*").value,
                      raw=invariant.headline("Effective ε*").raw),
             correlated.headline("Sensitivity Δ_z"),
             Headline("Effective ε with correlation", correlated.headline("Effective ε = ε·Δ_z").value,
                      raw=correlated.headline("Effective ε = ε·Δ_z").raw))
    return _view(
        headlines=heads, verdicts=invariant.verdicts + correlated.verdicts,
        question="What does ε mean when public information is released alongside?",
        params={"nominal ε": f"{float(epsilon):g}", "invariant": f"0…{N}", "noise": f"{kind} Laplace",
                "people in the count n": str(int(n)), "z₀": f"{z0:g}", "z₁": f"{z1:g}"},
        sections=correlated.sections,
        script={"epsilon": float(epsilon), "N": N, "kind": kind, "n": int(n), "z0": float(z0), "z1": float(z1)},
        epsilon=float(epsilon))


def section_inputs(view: TabView) -> Mapping[str, Any]:
    """A section's parameters as its JSON download carries them."""
    return dict(view.figures.get("inputs", {}))
