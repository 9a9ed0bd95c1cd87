"""Issue 34 item 3: under the basic rule the budget planner's Gaussian statistics spend all of δ.

Basic composition adds the εᵢ and the δᵢ (Rogers 2017 Thm 2.1.4) and needs no δ of its own, so K Gaussian
statistics each get δ/K (they got δ/(2K), the share ``composition.compose`` charges under the advanced rules, whose
other half is those rules' slack, and half of δ went unspent). Expected values are the analytic Gaussian of Balle &
Wang 2018, solved here with scipy.
"""

from __future__ import annotations

import math

import pytest
from scipy import optimize, stats

from dpdash.accounting import budget as B

Z95 = stats.norm.ppf(0.975)


def _bw_delta(eps: float, sigma: float) -> float:
    """Balle–Wang exact δ(ε) of the Gaussian mechanism with Δ = 1."""
    a, b = 1 / (2 * sigma), eps * sigma
    return stats.norm.cdf(a - b) - math.exp(eps) * stats.norm.cdf(-a - b)


def _bw_sigma(eps: float, delta: float) -> float:
    return math.exp(optimize.brentq(lambda ls: _bw_delta(eps, math.exp(ls)) - delta, -10.0, 20.0, xtol=1e-14))


def _bw_epsilon(delta: float, sigma: float) -> float:
    return optimize.brentq(lambda e: _bw_delta(e, sigma) - delta, 0.0, 60.0, xtol=1e-15)


def _counts(k: int, mech: str = "gaussian", target: float = 500.0):
    return [B.StatisticSpec(f"c{i}", "count", target, mechanism=mech) for i in range(k)]


def test_budget_first_25_gaussian_counts_spend_all_of_delta():
    # ε = 1 over 25 counts: each (0.04, 4·10⁻⁸)-DP, ± = z·σ_BW(0.04, 4·10⁻⁸) ≈ 202.2 (δ/(2k) gave ≈ 209.2)
    plan = B.plan_budget_first(_counts(25), epsilon=1.0, delta=1e-6, rule="basic")
    want = Z95 * _bw_sigma(0.04, 4e-8)
    assert round(want, 1) == 202.2 and round(Z95 * _bw_sigma(0.04, 2e-8), 1) == 209.2
    assert plan.feasible and plan.epsilon <= 1.0
    spent = math.fsum(a.delta for a in plan.allocations)
    assert spent <= 1e-6 and spent == pytest.approx(1e-6, rel=1e-12)
    for a in plan.allocations:
        assert a.half_width == pytest.approx(want, rel=1e-5)   # the allocation is rounded down to 6 figures
        assert _bw_delta(a.epsilon, a.scale) <= a.delta * (1 + 1e-9)


def test_accuracy_first_gaussian_epsilon_is_taken_at_delta_over_k():
    # each count at ±500 (95%): σ = 500/z, and its ε is Balle–Wang's at δ/K, K = 4 Gaussian rows (not δ/(2K))
    plan = B.plan_accuracy_first(_counts(4), rule="basic", delta=1e-6)
    e = _bw_epsilon(1e-6 / 4, 500.0 / Z95)
    for a in plan.allocations:
        assert a.delta == pytest.approx(2.5e-7, rel=1e-12)
        assert a.epsilon == pytest.approx(e, rel=1e-5) and a.epsilon >= e * (1 - 1e-12)  # rounded up
    assert plan.epsilon == pytest.approx(4 * e, rel=1e-5)


def test_laplace_rows_take_no_delta_so_the_gaussian_ones_share_it():
    specs = _counts(2) + _counts(3, "laplace")
    specs = [B.StatisticSpec(f"s{i}", s.query, s.target_half_width, mechanism=s.mechanism)
             for i, s in enumerate(specs)]
    plan = B.plan_budget_first(specs, epsilon=1.0, delta=1e-6, rule="basic")
    ds = [a.delta for a in plan.allocations]
    assert ds[2:] == [0.0, 0.0, 0.0] and ds[0] == ds[1] == pytest.approx(5e-7, rel=1e-12)
    assert math.fsum(ds) <= 1e-6


@pytest.mark.parametrize("rule", ["advanced", "kov_optimal"])
def test_composition_rules_keep_half_of_delta_for_their_slack(rule):
    # compose charges each Gaussian δ/(2K) and keeps δ/2 for δ′ (the advanced bound's ln(1/δ̂)): unchanged
    plan = B.plan_budget_first(_counts(4), epsilon=1.0, delta=1e-6, rule=rule)
    assert all(a.delta == pytest.approx(1.25e-7, rel=1e-12) for a in plan.allocations)


@pytest.mark.parametrize("total,k", [(1e-6, 25), (1.0, 3), (0.1, 7), (1e-300, 2), (0.3, 10_000), (2.0, 49)])
def test_basic_share_is_the_largest_float_within_the_total(total, k):
    from fractions import Fraction
    x = B.basic_share(total, k)
    assert Fraction(x) * k <= Fraction(total)              # exactly within the total
    up = math.nextafter(x, math.inf)
    assert Fraction(up) * k > Fraction(total) or math.fsum([up] * k) > total   # one float more would not be
    assert x == pytest.approx(total / k, rel=1e-15)
