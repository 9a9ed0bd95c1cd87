"""Engine tests of dpdash.epsilon.public_info_views (the epsilon calculator's Public information tab) against
independent
computations: Lemma 5's ε* by brute force over every neighbour pair and output (numpy sums, scipy quadrature), Δ_z
of Example 3 as W∞ between the two binomial laws in exact rational arithmetic, Example 2's regression by solving the
Gaussian normal equations (numpy), Lemma 2's posterior bounds by Bayes' rule, Lemma 7's E Var(θ|T) from the Beta
posterior. Seed S1: Seeman, Slavković & Reimherr (2022).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate

from dpdash.accounting import public_info as pinfo
from dpdash.epsilon import public_info_views as piv


# --------------------------------------------------------------------------- oracles
def eps_star_brute(eps: float, N: int, kind: str) -> float:
    """max over counts x, x+1 in 0…N and outputs y of |log p_x(y) − log p_{x+1}(y)|, the release conditioned on
    the invariant (Lemma 5 of S1): discrete, p_x(y) ∝ e^{−ε|y−x|} on 0…N; continuous, the density on [0, N]."""
    eps = float(eps)
    if kind == "discrete":
        ys = np.arange(N + 1, dtype=float)
        best = 0.0
        for x in range(N):
            a = -eps * abs(ys - x)
            b = -eps * abs(ys - x - 1)
            a -= np.log(np.exp(a).sum())
            b -= np.log(np.exp(b).sum())
            best = max(best, float(np.abs(a - b).max()))
        return best

    def z(x):
        return integrate.quad(lambda y: math.exp(-eps * abs(y - x)), 0, N, points=[x])[0]
    # the density ratio e^{ε(|y−x−1| − |y−x|)}·Z(x+1)/Z(x) is largest in size at an end of [0, N]
    return max(eps + abs(math.log(z(x) / z(x + 1))) for x in range(N))


def winf_exact(n: int, z0: str, z1: str) -> int:
    """W∞ between 1 + Binom(n−1, z₁) and Binom(n−1, z₀), exactly: both quantile functions on every u-interval
    between the CDFs' breakpoints (Fractions, so no tail is lost to rounding)."""
    def cdf(p: Fraction, shift: int) -> dict[int, Fraction]:
        m = n - 1
        pm = [math.comb(m, i) * p ** i * (1 - p) ** (m - i) for i in range(m + 1)]
        out, acc = {}, Fraction(0)
        for k in range(-1, n + 1):
            i = k - shift
            if 0 <= i <= m:
                acc += pm[i]
            out[k] = acc
        return out
    f1, f0 = cdf(Fraction(z1), 1), cdf(Fraction(z0), 0)
    cuts = sorted({u for u in list(f1.values()) + list(f0.values()) if 0 < u <= 1})

    def q(f, u):
        return min(k for k, v in f.items() if v >= u)
    return max(abs(q(f1, u) - q(f0, u)) for u in cuts)


def posterior(p: float, eps: float) -> tuple[float, float]:
    """Lemma 2: the likelihood ratio lies in [e^{−ε}, e^{ε}], so Bayes' rule moves p to at most these."""
    lo = p * math.exp(-eps) / (1 - p + p * math.exp(-eps))
    hi = p * math.exp(eps) / (1 - p + p * math.exp(eps))
    return lo, hi


# --------------------------------------------------------------------------- 1. invariant
@pytest.mark.parametrize("eps, N, kind", [(0.1, 10, "discrete"), (0.1, 10, "continuous"), (1.0, 100, "discrete"),
                                          (2.5, 37, "continuous"), (0.03, 5, "discrete"), (7.0, 2, "continuous")])
def test_invariant_view_against_brute_force(eps, N, kind):
    v = piv.invariant_view(epsilon=eps, N=N, kind=kind)
    want = eps_star_brute(eps, N, kind)
    assert v.headline("Effective ε*").raw == pytest.approx(want, rel=1e-7)
    assert v.headline("Effective ε*").value == f"{want:.4f}"
    assert v.headline("ε* / ε").value == f"{want / eps:.3f}"
    assert eps - 1e-12 <= want <= 2 * eps
    # the CSV and the verdict carry the card's number
    assert v.tables["numbers"]["value"].tolist() == pytest.approx([want, want / eps], rel=1e-7)
    assert v.verdicts[0].tone == ("warning" if want / eps > 1 + piv.SAME else "good")
    # the verdict reads the cards' numbers at their precision (it said "ε* = 7.7 (1.1×)" beside 7.6931 and 1.099)
    assert f"ε* = {want:.4f} ({want / eps:.3f}×" in v.verdicts[0].text
    assert f"ε* = {want:.3f}" in v.figures["band_caption"]


def test_invariant_view_spec_values_and_tone():
    # spec P4 (values printed in the spec, computed by its authors): ε = 0.1, N = 10
    assert piv.invariant_view(epsilon=0.1, N=10, kind="discrete").headline("Effective ε*").value == "0.1738"
    assert piv.invariant_view(epsilon=0.1, N=10, kind="continuous").headline("Effective ε*").value == "0.1856"
    one = piv.invariant_view(epsilon=1.0, N=1, kind="discrete")   # N = 1: the invariant says nothing new
    assert one.headline("ε* / ε").value == "1.000" and one.verdicts[0].tone == "good"


# --------------------------------------------------------------------------- 2–3. correlated
@pytest.mark.parametrize("eps, n, z0, z1, prior", [(1.0, 50, "0.2", "0.4", 0.1), (0.5, 100, "0.9", "0.1", 0.3),
                                                   (2.0, 12, "0.35", "0.35", 0.5), (0.05, 7, "0", "1", 0.9),
                                                   (1.3, 200, "0.05", "0.15", 0.02)])
def test_correlated_view_against_exact_winf_and_bayes(eps, n, z0, z1, prior):
    v = piv.correlated_view(epsilon=eps, n=n, z0=float(z0), z1=float(z1), prior=prior)
    dz = winf_exact(n, z0, z1)
    assert v.headline("Sensitivity Δ_z").value == str(dz)
    assert v.headline("Effective ε = ε·Δ_z").raw == pytest.approx(eps * dz, rel=1e-12)
    assert v.headline("Effective ε = ε·Δ_z").value == f"{eps * dz:.4g}"
    assert v.headline("Laplace scale needed to keep ε").raw == pytest.approx(dz / eps, rel=1e-12)
    # the stake is the correlated ε·Δ_z (issue 36 item 5): a warning when Δ_z > 1, else by the tones table
    assert v.verdicts[0].tone == ("warning" if dz > 1 or eps * dz >= 10 else "neutral" if eps * dz > 1 else "good")
    if dz > 1:   # at the card's precision (it said "ε = 4.8" beside the card's 4.81)
        assert f"moves the count by up to {dz}, so" in v.verdicts[0].text
        assert v.verdicts[0].text.endswith(f"protects only like ε = {eps * dz:.4g}.")
    nums = dict(zip(v.tables["numbers"]["quantity"], v.tables["numbers"]["value"]))
    lo, hi = posterior(prior, eps)
    elo, ehi = posterior(prior, eps * dz)
    assert nums["posterior lower bound, nominal ε"] == pytest.approx(lo, rel=1e-9)
    assert nums["posterior upper bound, nominal ε"] == pytest.approx(hi, rel=1e-9)
    assert nums["posterior lower bound, effective ε"] == pytest.approx(elo, rel=1e-9, abs=1e-300)
    assert nums["posterior upper bound, effective ε"] == pytest.approx(ehi, rel=1e-9)
    assert f"[{elo:.4g}, {ehi:.4g}]" in v.figures["posterior_caption"]
    assert v.sections[0].lines == (v.figures["posterior_caption"],)   # the report says what the caption says


def test_correlated_view_spec_values_and_heatmap():
    # spec P1: Δ_z = 13 at (50, 0.2, 0.4) and 79 at (100, 0.9, 0.1)
    assert piv.correlated_view(epsilon=1, n=50, z0=0.2, z1=0.4, prior=0.1).headline("Sensitivity Δ_z").value == "13"
    v = piv.correlated_view(epsilon=1, n=100, z0=0.9, z1=0.1, prior=0.1)
    assert v.headline("Sensitivity Δ_z").value == "79"
    grid = v.figures["heatmap"]["table"]
    zs = piv.Z_GRID
    for i in (0, 3, 10):
        for j in (0, 6, 10):
            assert grid[i][j] == winf_exact(100, f"{zs[i]}", f"{zs[j]}")
    assert "with Δ_z = 79" in v.figures["heatmap_alt"]


# --------------------------------------------------------------------------- Example 2
@pytest.mark.parametrize("n, r, rho, sigma, tau, delta", [(10, 0.0, 0.3, 1.0, 1.0, 1.0), (25, 0.2, -0.4, 2.0, 0.5, 3.0),
                                                          (2, 0.9, 0.6, 0.7, 4.0, 0.1), (100, 0.0, 0.0, 1.0, 1.0, 1.0)])
def test_gaussian_view_against_the_normal_equations(n, r, rho, sigma, tau, delta):
    # Cov of (X̄; X₁, Z) for exchangeable Xᵢ (variance σ², correlation r) and Z (variance τ², Corr(Xᵢ, Z) = ρ)
    c_mean = sigma ** 2 * (1 + (n - 1) * r) / n
    s_ww = np.array([[sigma ** 2, rho * sigma * tau], [rho * sigma * tau, tau ** 2]])
    s_wm = np.array([c_mean, rho * sigma * tau])
    beta = np.linalg.solve(s_ww, s_wm)
    cond = c_mean - s_wm @ beta
    v = piv.gaussian_view(epsilon=0.7, n=n, r=r, rho=rho, sigma=sigma, tau=tau, sensitivity=delta)
    assert v.headline("β_v").raw == pytest.approx(beta[0], rel=1e-9, abs=1e-12)
    assert v.headline("β_z").raw == pytest.approx(beta[1], rel=1e-9, abs=1e-12)
    assert v.headline("Var(X̄ | X₁, Z)").raw == pytest.approx(cond, rel=1e-9, abs=1e-12)
    assert v.headline("Δ_z = Δ·β_v").raw == pytest.approx(delta * abs(beta[0]), rel=1e-9, abs=1e-12)
    assert v.headline("effective ε = ε·n·β_v").raw == pytest.approx(0.7 * n * beta[0], rel=1e-9, abs=1e-12)
    if r == rho == 0:
        assert v.headline("Δ_z = Δ·β_v").raw == pytest.approx(delta / n)     # plain DP


def test_gaussian_view_refuses_an_impossible_model():
    with pytest.raises(ValueError, match="no joint covariance"):
        piv.gaussian_view(epsilon=1, n=10, r=0.0, rho=0.4, sigma=1, tau=1, sensitivity=1)


# --------------------------------------------------------------------------- 4. ledger
def test_ledger_view_adds_up_only_under_one_label():
    v = piv.ledger_view([0.5, 0.7, 0.05], ["2020 totals", " 2020 totals", "2020 totals "])
    assert v.headline(piv.LEDGER_TOTAL).value == "ε = 1.25" and v.headline(piv.LEDGER_TOTAL).raw == 1.25
    assert "add up to ε = 1.25" in v.verdicts[0].text and v.figures["result"] == {"releases": 3, "total": 1.25}
    diff = piv.ledger_view([0.5, 0.7], ["2020 totals", "2021 totals"])
    assert not diff.headlines and diff.verdicts[0].tone == "warning"
    assert pinfo.COMPOSITION_MESSAGE in diff.verdicts[0].text and "“2021 totals”" in diff.verdicts[0].text
    bad = piv.ledger_view([0.5, None], ["a", "a"])
    assert bad.verdicts[0].tone == "warning" and "every ε must be a number > 0" in bad.verdicts[0].text
    empty = piv.ledger_view([], [])
    assert empty.verdicts[0].tone == "neutral" and empty.figures["result"] == {"releases": 0}


# --------------------------------------------------------------------------- 5. exponential mechanism
@pytest.mark.parametrize("eps, kappa", [(1.0, 2), (1.0, 1), (3.0, 1), (0.2, 2)])
def test_em_view_n1_and_large_n_against_closed_forms(eps, kappa):
    # n = 1: the mean moves across the whole range, the realised ε is ε/κ (spec P5); large n: the limit
    # ε/κ + log(2 − e^{−ε/κ}) of spec §2.4, written out
    one = piv.em_view(epsilon=eps, n=1, kappa=kappa)
    assert one.headlines[0].raw == pytest.approx(eps / kappa, rel=1e-6)
    assert one.headlines[0].value == f"{eps / kappa:.4f}"
    lim = eps / kappa + math.log(2 - math.exp(-eps / kappa))
    big = piv.em_view(epsilon=eps, n=1000, kappa=kappa)
    assert big.headline("Large-n limit ε/κ + log(2 − e^(−ε/κ))").raw == pytest.approx(lim, rel=1e-12)
    assert big.headlines[0].raw == pytest.approx(lim, rel=2e-2)
    # κ = 1 leaks beyond ε for large n (erratum E1), κ = 2 never does
    assert big.verdicts[0].tone == ("warning" if lim > eps * (1 + piv.SAME) else "good")
    assert (big.verdicts[0].tone == "warning") == (kappa == 1)
    assert f"{big.headlines[0].raw:.4f}" in big.verdicts[0].text
    assert big.figures["excess"] == f"{big.headlines[0].raw - eps:+.4f} vs nominal"


# --------------------------------------------------------------------------- 6. information loss
def test_info_loss_view_against_the_beta_posterior_and_erratum_e5():
    n, eps = 10, 1.0
    # θ ~ U(0, 1), T ~ Binom(n, θ): T is uniform on 0…n and θ | T ~ Beta(T + 1, n − T + 1)
    evar_t = sum((t + 1) * (n - t + 1) / ((n + 2) ** 2 * (n + 3)) for t in range(n + 1)) / (n + 1)
    l7 = pinfo.lemma7_toy(n, epsilon=eps, noise="dlap", post="clamp")
    sp = pinfo.sum_projection_toy(n, epsilon=eps)
    v = piv.info_loss_view(l7, sp, epsilon=eps, n=n, noise="dlap", post="clamp", theta0=0.5)
    nums = dict(zip(v.tables["numbers"]["quantity"], v.tables["numbers"]["value"]))
    assert nums["E Var(θ|T)"] == pytest.approx(evar_t, rel=1e-9)
    assert evar_t <= nums["E Var(θ|Y)"] <= 1 / 12     # the noisy count knows less than T, more than nothing
    # E5: clamping discrete-Laplace counts loses nothing, though Y* ≠ Y with positive probability
    assert nums["E Var(θ|Y*)"] == pytest.approx(nums["E Var(θ|Y)"], rel=1e-9) and nums["P(Y ≠ Y*)"] > 0
    assert v.verdicts[0].tone == "good" and "loses nothing" in v.verdicts[0].text
    rc = pinfo.lemma7_toy(n, epsilon=eps, noise="laplace", post="round_clamp")
    w = piv.info_loss_view(rc, sp, epsilon=eps, n=n, noise="laplace", post="round_clamp", theta0=0.3)
    assert rc.evar_ystar > rc.evar_y and w.verdicts[0].tone == "neutral" and "loses information" in w.verdicts[0].text
    assert f"{rc.evar_ystar:.6f}" in w.figures["caption"] and f"{rc.evar_ystar:.6f}" in w.verdicts[0].text
    th = w.figures["power"]["thetas"]
    assert len(th) == piv.POWER_POINTS and th[0] == 0.3 and th[-1] == 1.0


# --------------------------------------------------------------------------- the report
def test_tab_view_restates_the_section_cards():
    inv = piv.invariant_view(epsilon=0.5, N=20, kind="continuous")
    cor = piv.correlated_view(epsilon=0.5, n=80, z0=0.3, z1=0.6, prior=0.2)
    t = piv.tab_view(inv, cor, epsilon=0.5, N=20, kind="continuous", n=80, z0=0.3, z1=0.6)
    assert [h.value for h in t.headlines] == [inv.headline("Effective ε*").value,
                                              cor.headline("Sensitivity Δ_z").value,
                                              cor.headline("Effective ε = ε·Δ_z").value]
    assert t.verdicts == inv.verdicts + cor.verdicts
    assert dict(t.script) == {"epsilon": 0.5, "N": 20, "kind": "continuous", "n": 80, "z0": 0.3, "z1": 0.6}
    assert t.params["invariant"] == "0…20" and t.epsilon == 0.5
    assert piv.section_inputs(cor) == {"epsilon": 0.5, "n": 80, "z0": 0.3, "z1": 0.6, "prior": 0.2}
