"""Issue 36 item 6: every ε, δ or ρ reported as a guarantee is rounded away from the safe side.

Losses (ε, δ, a ρ spent) must never be reported below their exact value; budgets (a ρ or ε one may spend, a
noise scale's privacy) never above. Each exact value is computed here with mpmath at 40 digits from the
paper's formula (Bun–Steinke 2016 Prop. 1.3 and Lemma 3.6; Canonne–Kamath–Steinke 2020 Cor. 13; Rogers 2017
Thms 2.1.4, 2.1.5), never from the engine. The product's value must also stay tight (within 1e-11 relative):
rounding outward may not turn into a loose bound.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from dpdash.accounting import budget as B
from dpdash.accounting import composition as A
from dpdash.accounting import conversions as C

mp = mpmath.mp
mp.dps = 40

TIGHT = mpmath.mpf("1e-11")

# 200 grid points: ρ over 10 decades, δ over 12
RHOS = [float(x) for x in np.geomspace(1e-6, 20.0, 20)]
DELTAS = [float(x) for x in np.geomspace(1e-14, 1e-1, 10)]
GRID = [(r, d) for r in RHOS for d in DELTAS]


def _bisect(f, lo, hi, steps=400):
    """Root of an increasing f on [lo, hi] (mpf), by bisection in the log of the argument (f(lo) < 0 < f(hi))."""
    a, b = mpmath.log(lo), mpmath.log(hi)
    for _ in range(steps):
        m = (a + b) / 2
        if f(mpmath.exp(m)) < 0:
            a = m
        else:
            b = m
    return mpmath.exp((a + b) / 2)


def exact_cks_epsilon(rho, delta):
    """min over α > 1 of αρ + ln(1 − 1/α) + (ln(1/δ) − ln α)/(α − 1) [CKS 2020 Cor. 13], in u = α − 1."""
    rho, big_l = mpmath.mpf(rho), -mpmath.log(mpmath.mpf(delta))

    def eps(u):
        a = 1 + u
        return a * rho + mpmath.log(1 - 1 / a) + (big_l - mpmath.log(a)) / u

    # dε/dα = ρ − (L − ln α)/(α − 1)², increasing through one sign change
    u = _bisect(lambda u: rho - (big_l - mpmath.log(1 + u)) / (u * u), mpmath.mpf("1e-30"),
                mpmath.sqrt(big_l / rho) + 1)
    return max(mpmath.mpf(0), eps(u))


def exact_standard(rho, delta):
    rho = mpmath.mpf(rho)
    return rho + 2 * mpmath.sqrt(rho * -mpmath.log(mpmath.mpf(delta)))


def exact_bun_steinke(rho, delta):
    rho = mpmath.mpf(rho)
    inner = max(mpmath.mpf(0), mpmath.log(mpmath.sqrt(mpmath.pi * rho) / mpmath.mpf(delta)))
    return rho + 2 * mpmath.sqrt(rho * inner)


def exact_cks_delta(rho, eps):
    """min over α > 1 of exp((α−1)(αρ − ε))/α·(1 − 1/α)^(α−1) [CKS 2020 Cor. 13], in log space."""
    rho, eps = mpmath.mpf(rho), mpmath.mpf(eps)

    def logd(u):
        a = 1 + u
        return u * (a * rho - eps) + u * mpmath.log(1 - 1 / a) - mpmath.log(a)

    # d/dα: (2α − 1)ρ − ε + ln(1 − 1/α), increasing
    u = _bisect(lambda u: (1 + 2 * u) * rho - eps + mpmath.log(u / (1 + u)), mpmath.mpf("1e-40"),
                mpmath.mpf(10) ** 12)
    return min(mpmath.mpf(1), mpmath.exp(min(0, logd(u))))


def _loss_ok(reported, exact):
    """A loss: reported ≥ exact, and tight."""
    rep = mpmath.mpf(reported)
    return rep >= exact and rep <= exact * (1 + TIGHT) + mpmath.mpf("1e-300")


@pytest.mark.parametrize("rho,delta", GRID)
def test_zcdp_to_dp_never_below_the_exact_bound(rho, delta):
    cks, std, bs = exact_cks_epsilon(rho, delta), exact_standard(rho, delta), exact_bun_steinke(rho, delta)
    for method, exact in (("cks", cks), ("standard", std), ("bun_steinke", bs), ("best", min(cks, std, bs))):
        got = C.zcdp_to_dp(rho, delta, method=method)
        assert _loss_ok(got, exact), (method, rho, delta, got, mpmath.nstr(exact, 25))


@pytest.mark.parametrize("rho,delta", GRID[::4])
def test_zcdp_to_dp_with_xi_never_below(rho, delta):
    xi = 0.1
    exact = xi + min(exact_cks_epsilon(rho, delta), exact_standard(rho, delta), exact_bun_steinke(rho, delta))
    assert _loss_ok(C.zcdp_to_dp(rho, delta, xi=xi), exact)


@pytest.mark.parametrize("rho", RHOS[::2])
@pytest.mark.parametrize("eps", [0.01, 0.3, 1.0, 4.0, 25.0])
def test_zcdp_delta_never_below_the_exact_bound(rho, eps):
    r, e = mpmath.mpf(rho), mpmath.mpf(eps)
    std = mpmath.mpf(1) if e <= r else mpmath.exp(-(e - r) ** 2 / (4 * r))
    bs = min(mpmath.mpf(1), mpmath.sqrt(mpmath.pi * r)) if e <= r else \
        min(mpmath.mpf(1), mpmath.sqrt(mpmath.pi * r) * mpmath.exp(-(e - r) ** 2 / (4 * r)))
    cks = exact_cks_delta(rho, eps)
    for method, exact in (("standard", std), ("bun_steinke", bs), ("cks", cks), ("best", min(std, bs, cks))):
        got = C.zcdp_delta(rho, eps, method=method)
        if exact < mpmath.mpf("1e-300"):
            assert got >= 0.0
            continue
        # δ is an exponential: the tightness allowed scales with |ln δ| (a margin on ln δ)
        rep = mpmath.mpf(got)
        assert rep >= exact, (method, rho, eps, got, mpmath.nstr(exact, 25))
        assert rep <= exact * (1 + TIGHT * (1 + abs(mpmath.log(exact)))), (method, rho, eps)


@pytest.mark.parametrize("eps", [0.05, 0.5, 1.0, 3.0, 10.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-6, 1e-3])
def test_rho_budget_for_epsilon_is_rounded_down(eps, delta):
    # the ρ a budget (ε, δ) allows: its exact conversion must not exceed ε
    for method, exact_of in (("best", lambda r: min(exact_cks_epsilon(r, delta), exact_standard(r, delta),
                                                     exact_bun_steinke(r, delta))),
                             ("standard", lambda r: exact_standard(r, delta))):
        rho = C.zcdp_rho_for_epsilon(eps, delta, method=method)
        exact = exact_of(rho)
        assert exact <= mpmath.mpf(eps), (method, eps, delta, rho, mpmath.nstr(exact, 25))
        assert exact >= mpmath.mpf(eps) * (1 - mpmath.mpf("1e-9"))


@pytest.mark.parametrize("x", [0.1, 0.3, 1 / 3, 0.7, 1.1, 2.9, 1e-5, 12345.678])
@pytest.mark.parametrize("y", [0.2, 1.0, 3.0, 7.0, 0.002, 1e4])
def test_rho_of_noise_up_and_noise_of_rho_up(x, y):
    # ρ = Δ²/(2σ²) is a loss: never below; σ = Δ/√(2ρ) is the noise of a budget: its exact ρ never above it
    exact = Fraction(y) ** 2 / (2 * Fraction(x) ** 2)
    got = C.gaussian_rho(x, sensitivity=y)
    assert Fraction(got) >= exact and got <= float(exact) * (1 + 1e-15)
    sigma = C.sigma_for_rho(x, sensitivity=y)
    assert Fraction(y) ** 2 / (2 * Fraction(sigma) ** 2) <= Fraction(x)
    assert sigma <= y / math.sqrt(2 * x) * (1 + 1e-15)
    # the pure ε a ρ share allows (a budget): ε² / 2 ≤ ρ exactly
    e = C.pure_epsilon_for_rho(x)
    assert Fraction(e) ** 2 <= 2 * Fraction(x) and e >= math.sqrt(2 * x) * (1 - 1e-15)
    assert Fraction(C.pure_to_zcdp(x)) >= Fraction(x) ** 2 / 2


@pytest.mark.parametrize("n", [3, 10, 1000])
@pytest.mark.parametrize("e0", [0.1, 0.3, 0.01 / 3])
def test_basic_and_advanced_compositions_never_below(n, e0):
    eps = [e0 * (1 + i / 7.0) for i in range(n)]
    exact_sum = sum(mpmath.mpf(e) for e in eps)
    assert mpmath.mpf(A.basic_composition(eps).epsilon) >= exact_sum
    assert _loss_ok(A.basic_composition(eps).epsilon, exact_sum)
    for delta in (1e-9, 1e-3):
        d = mpmath.mpf(delta)
        # [T] Thm 2.1.5: Σεᵢ tanh(εᵢ/2) + √(2Σεᵢ² ln(1/δ̂)), δ̂ = δ when every δᵢ = 0
        exact = sum(mpmath.mpf(e) * mpmath.tanh(mpmath.mpf(e) / 2) for e in eps) + \
            mpmath.sqrt(2 * sum(mpmath.mpf(e) ** 2 for e in eps) * -mpmath.log(d))
        assert _loss_ok(A.advanced_composition(eps, delta=delta).epsilon, exact)
        # the same with δᵢ > 0: δ̂ = 1 − (1 − δ)/Π(1 − δᵢ)
        di = [delta / (4 * n)] * n
        prod = mpmath.fprod(1 - mpmath.mpf(x) for x in di)
        dh = 1 - (1 - d) / prod
        exact = sum(mpmath.mpf(e) * mpmath.tanh(mpmath.mpf(e) / 2) for e in eps) + \
            mpmath.sqrt(2 * sum(mpmath.mpf(e) ** 2 for e in eps) * -mpmath.log(dh))
        assert _loss_ok(A.advanced_composition(eps, di, delta=delta).epsilon, exact)
        exact_basic_delta = sum(mpmath.mpf(x) for x in di)
        assert mpmath.mpf(A.basic_composition(eps, di).delta) >= exact_basic_delta


@pytest.mark.parametrize("k", [1, 7, 100, 5000])
@pytest.mark.parametrize("e0", [0.01, 0.1, 1.0 / 3])
@pytest.mark.parametrize("delta", [1e-10, 1e-5])
def test_homogeneous_rules_never_below(k, e0, delta):
    e, d = mpmath.mpf(e0), mpmath.mpf(delta)
    drv = e * mpmath.sqrt(2 * k * -mpmath.log(d)) + k * e * mpmath.expm1(e)     # DRV 2010
    assert _loss_ok(A.advanced_composition_drv(e0, k=k, delta=delta).epsilon, drv)
    base = k * e * mpmath.tanh(e / 2)                                            # KOV 2015 Thm 3.4
    b2 = base + e * mpmath.sqrt(2 * k * mpmath.log(mpmath.e + mpmath.sqrt(k * e * e) / d))
    b3 = base + e * mpmath.sqrt(2 * k * -mpmath.log(d))
    assert _loss_ok(A.kov_analytic_composition(e0, k=k, delta=delta).epsilon, min(k * e, b2, b3))


@pytest.mark.parametrize("sigma", [0.7, 3.0, 41.0])
@pytest.mark.parametrize("k", [1, 3, 250])
@pytest.mark.parametrize("delta", [1e-10, 1e-5])
def test_zcdp_rule_of_compose_never_below(sigma, k, delta):
    # k Gaussians with noise multiplier σ: ρ = k/(2σ²) ([T] Thm 2.2.2), then the best conversion
    rho = mpmath.mpf(k) / (2 * mpmath.mpf(sigma) ** 2)
    exact = min(exact_cks_epsilon(rho, delta), exact_standard(rho, delta), exact_bun_steinke(rho, delta))
    got = A.compose([A.gaussian(sigma, count=k)], delta=delta, rule="zcdp").epsilon
    assert mpmath.mpf(got) >= exact
    assert mpmath.mpf(got) <= exact * (1 + mpmath.mpf("1e-10"))


@pytest.mark.parametrize("sens", [0.002, 1.0, 7.0, 1e4])
@pytest.mark.parametrize("rule", ["basic", "zcdp"])
def test_planner_total_never_below(sens, rule):
    # three Laplace/Gaussian means of [0, sens·n] data: the plan's total against the exact sum / conversion of the
    # rows' own noise (Δ/b for Laplace, Δ²/(2σ²) for Gaussian), computed here
    stats = [B.StatisticSpec(name=f"s{i}", query="sum", mechanism=m, lower=0.0, upper=sens, target_half_width=t * sens)
             for i, (m, t) in enumerate((("laplace", 3.3), ("gaussian", 7.1), ("laplace", 11.7)))]
    plan = B.plan_accuracy_first(stats, rule=rule, delta=1e-6)
    assert plan.feasible
    rows = plan.allocations
    if rule == "basic":
        parts = []
        for s, row in zip(stats, rows):
            if s.mechanism == "laplace":
                parts.append(mpmath.mpf(sens) / mpmath.mpf(row.scale))
            else:
                parts.append(mpmath.mpf(row.epsilon))
        exact = sum(parts)
        assert mpmath.mpf(plan.epsilon) >= exact
        return
    rho = sum(mpmath.mpf(sens) ** 2 / (2 * mpmath.mpf(row.scale) ** 2) if s.mechanism == "gaussian"
              else (mpmath.mpf(sens) / mpmath.mpf(row.scale)) ** 2 / 2 for s, row in zip(stats, rows))
    exact = min(exact_cks_epsilon(rho, 1e-6), exact_standard(rho, 1e-6), exact_bun_steinke(rho, 1e-6))
    assert mpmath.mpf(plan.epsilon) >= exact
    assert mpmath.mpf(plan.rho) >= rho


def test_ledger_total_never_below_the_exact_sum():
    from dpdash.common import ledger

    eps = [0.1, 0.2, 0.3, 1 / 3, 0.7] * 7
    with ledger.recording() as led:
        for i, e in enumerate(eps):
            ledger.record(f"step {i}", epsilon=e, delta=e * 1e-7, rho=e * e / 2)
    tot = led.total()
    assert Fraction(tot.epsilon) >= sum(Fraction(e) for e in eps)
    assert Fraction(tot.delta) >= sum(Fraction(e * 1e-7) for e in eps)
    assert Fraction(tot.rho) >= sum(Fraction(e * e / 2) for e in eps)
    assert tot.epsilon <= math.fsum(eps) * (1 + 1e-15)
