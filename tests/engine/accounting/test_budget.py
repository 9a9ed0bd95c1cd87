"""Tests for dpdash.accounting.budget: spec §9 budget-planner examples, cvxpy cross-checks, properties."""

import math
from dataclasses import replace

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from tests import opendp_oracle as oracle
from dpdash.accounting import composition as A
from dpdash.accounting import budget as B
from tests.budget_workloads import stats25

# Allocations are rounded to 6 significant figures (spec §4.4), so worked values agree to ~1e-5.
REL = 1e-5


def rows(mech="laplace"):
    return [B.StatisticSpec("count", "count", 50, mechanism=mech),
            B.StatisticSpec("mean", "mean", 500, lower=0, upper=200_000, n=10_000, mechanism=mech),
            B.StatisticSpec("hist", "histogram", 100, cells=10, mechanism=mech)]


def eps(plan):
    return [a.epsilon for a in plan.allocations]


# --------------------------------------------------------------------------- worked examples (spec §9)
def test_accuracy_first_examples():
    p = B.plan_accuracy_first(rows(), rule="basic", delta=1e-6)
    assert eps(p) == pytest.approx([0.05991465, 0.1198293, 0.05991465], rel=REL)
    assert p.epsilon == pytest.approx(0.2396586, rel=REL)
    assert B.plan_accuracy_first(rows(), reserve_fraction=0.2).budget == pytest.approx(0.2995732, rel=REL)
    assert B.plan_accuracy_first(rows(), rule="kov_optimal").epsilon == pytest.approx(0.2396515, rel=REL)
    assert B.plan_accuracy_first(rows(), rule="advanced").epsilon == pytest.approx(0.7822084, rel=REL)


def test_joint_confidence_example():
    p = B.plan_accuracy_first(rows(), rule="basic", joint_confidence=0.95)
    assert eps(p) == pytest.approx([0.08764053, 0.1475552, 0.1336922], rel=REL)
    assert p.epsilon == pytest.approx(0.3688879, rel=REL)
    # the equal split of β (independent computation) is worse
    equal = sum(d * math.log(c / (0.05 / 3)) / w for d, c, w in [(1, 1, 50), (20, 1, 500), (2, 10, 100)])
    assert equal == pytest.approx(0.3735993, rel=1e-6)
    assert p.epsilon < equal


def test_budget_first_examples():
    p = B.plan_budget_first(rows(), epsilon=0.5)
    assert [a.half_width for a in p.allocations] == pytest.approx([23.96586, 239.6586, 47.93172], rel=REL)
    held = [B.hold_at_half_width(rows()[0], 29.95732)] + rows()[1:]
    p = B.plan_budget_first(held, epsilon=0.5, reserve_fraction=0.2)
    assert [a.half_width for a in p.allocations] == pytest.approx([29.95732, 299.5732, 59.91465], rel=REL)
    assert p.allocations[0].held and not p.allocations[1].held
    p = B.plan_budget_first(rows(), epsilon=0.5, objective="weighted_mse")
    assert eps(p) == pytest.approx([0.1393767, 0.2212467, 0.1393767], rel=REL)


def test_gaussian_zcdp_examples():
    p = B.plan_accuracy_first(rows("gaussian"), rule="zcdp")
    assert [a.rho for a in p.allocations] == pytest.approx([7.682918e-4, 3.073167e-3, 3.841459e-4], rel=REL)
    assert p.rho == pytest.approx(4.225605e-3, rel=REL)
    # spec §9 amended (tight CKS conversion): 0.3931611, OpenDP's cdp_epsilon of the same total ρ
    assert p.epsilon == pytest.approx(0.3931611, rel=REL)
    assert p.epsilon == pytest.approx(oracle.cdp_epsilon(p.rho, 1e-6), rel=1e-9)
    p = B.plan_budget_first(rows("gaussian"), rule="zcdp", epsilon=0.5)
    assert p.budget == pytest.approx(6.641524e-3, rel=1e-6)
    assert oracle.cdp_epsilon(p.budget, 1e-6) == pytest.approx(0.5, rel=1e-9)
    assert [a.half_width for a in p.allocations] == pytest.approx([39.88233, 398.8233, 79.76466], rel=REL)


# --------------------------------------------------------------------------- cvxpy cross-checks (spec §8.7)
def test_joint_split_matches_cvxpy():
    c = np.array([1 / 50, 20 / 500, 2 / 100])
    d = np.array([1, 1, 10])
    b = cp.Variable(3, pos=True)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(c, np.log(d) - cp.log(b)))), [cp.sum(b) == 0.05])
    prob.solve(solver="CLARABEL")
    p = B.plan_accuracy_first(rows(), rule="basic", joint_confidence=0.95)
    assert p.epsilon == pytest.approx(prob.value, rel=1e-5)


TIGHT = dict(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)


def test_weighted_mse_matches_cvxpy():
    # variables normalised to sum 1 so the conic solver is well scaled
    u = np.array([1.0, 3.0, 0.5])
    stats_ = [replace(s, weight=w) for s, w in zip(rows(), u)]
    a = np.array([0.05991465, 0.1198293, 0.05991465])  # minimal ε (worked example)
    coef = u * a**2 / np.max(u * a**2)
    x = cp.Variable(3, pos=True)
    cp.Problem(cp.Minimize(cp.sum(cp.multiply(coef, cp.power(x, -2)))), [cp.sum(x) == 1]).solve(**TIGHT)
    p = B.plan_budget_first(stats_, epsilon=0.5, objective="weighted_mse")
    assert eps(p) == pytest.approx(0.5 * x.value, rel=1e-5)
    # zCDP: Σ uᵢ ρᵢmin/ρᵢ with inv_pos
    rmin = np.array([a.rho for a in B.plan_accuracy_first(rows("gaussian"), rule="zcdp").allocations])
    g = [replace(s, weight=w) for s, w in zip(rows("gaussian"), u)]
    rb = A.zcdp_rho_for_epsilon(0.5, 1e-6)
    coef = u * rmin / np.max(u * rmin)
    y = cp.Variable(3, pos=True)
    cp.Problem(cp.Minimize(cp.sum(cp.multiply(coef, cp.inv_pos(y)))), [cp.sum(y) == 1]).solve(**TIGHT)
    p = B.plan_budget_first(g, epsilon=0.5, rule="zcdp", objective="weighted_mse")
    assert [al.rho for al in p.allocations] == pytest.approx(rb * y.value, rel=1e-5)


def test_joint_gaussian_zcdp_split_is_optimal():
    from scipy import optimize
    g = rows("gaussian")
    p = B.plan_accuracy_first(g, rule="zcdp", joint_confidence=0.95)
    c = np.array([1 / (2 * 50**2), 400 / (2 * 500**2), 2 / (2 * 100**2)])
    d = np.array([1, 1, 10])

    def total(lb):
        bb = np.exp(lb)
        bb = bb / bb.sum() * 0.05
        return float(np.sum(c * special.ndtri(1 - bb / (2 * d)) ** 2))

    res = optimize.minimize(total, np.log(np.full(3, 0.05 / 3)), method="Nelder-Mead",
                            options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 5000})
    assert p.rho == pytest.approx(res.fun, rel=1e-5)
    assert all(a.half_width <= a.target_half_width * (1 + 1e-9) for a in p.allocations)


# --------------------------------------------------------------------------- properties
stat_strategy = st.builds(
    lambda q, w, mech, conf: B.StatisticSpec(f"s{q}{w}", q, w, confidence=conf, mechanism=mech,
                                             lower=0, upper=100, n=1000 if q == "mean" else None,
                                             cells=5 if q == "histogram" else 1),
    st.sampled_from(["count", "sum", "mean", "histogram"]), st.floats(0.5, 500),
    st.sampled_from(["laplace", "gaussian"]), st.sampled_from([0.9, 0.95, 0.99]))


@settings(max_examples=25)
@given(stats_=st.lists(stat_strategy, min_size=1, max_size=5, unique_by=lambda s: s.name),
       rule=st.sampled_from(["basic", "advanced", "kov_optimal", "zcdp"]))
def test_accuracy_first_meets_targets(stats_, rule):
    p = B.plan_accuracy_first(stats_, rule=rule, delta=1e-6)
    for a in p.allocations:
        assert a.half_width <= a.target_half_width * (1 + 1e-9)


@settings(max_examples=25)
@given(stats_=st.lists(stat_strategy, min_size=1, max_size=5, unique_by=lambda s: s.name),
       rule=st.sampled_from(["basic", "advanced", "kov_optimal", "zcdp"]),
       budget=st.floats(0.05, 5), reserve=st.floats(0, 0.5))
def test_budget_first_within_budget(stats_, rule, budget, reserve):
    p = B.plan_budget_first(stats_, epsilon=budget, rule=rule, reserve_fraction=reserve)
    assert p.feasible
    # recompute the total independently from the allocations under the rule
    if rule == "basic":
        assert math.fsum(eps(p)) <= (1 - reserve) * budget * (1 + 1e-12)
    elif rule == "zcdp":
        assert math.fsum(a.rho for a in p.allocations) <= (1 - reserve) * p.budget * (1 + 1e-12)
    else:
        assert p.epsilon <= (1 - reserve) * budget * (1 + 1e-9)


def test_hold_infeasible_message():
    held = [B.hold_at_half_width(rows()[0], 1.0)] + rows()[1:]
    p = B.plan_budget_first(held, epsilon=0.5, reserve_fraction=0.2)
    assert not p.feasible
    assert "held at a fixed accuracy need" in p.message and "left after the reserve" in p.message


def test_hold_share_and_pld():
    s = rows()
    s[1] = replace(s[1], hold_share=0.5)
    p = B.plan_budget_first(s, epsilon=1.0)
    assert p.allocations[1].epsilon == pytest.approx(0.5, rel=1e-5)
    with pytest.raises(ValueError, match="additive"):
        B.plan_budget_first(s, epsilon=1.0, rule="advanced")
    p = B.plan_budget_first(rows(), epsilon=1.0, rule="pld")
    assert p.feasible and p.epsilon <= 1.0


@pytest.mark.parametrize("call,match", [
    (lambda: B.plan_accuracy_first(rows(), reserve_fraction=0.99), "reserve"),
    (lambda: B.plan_accuracy_first(rows()[:1] * 2), "share the name"),
    (lambda: B.plan_accuracy_first([replace(rows()[0], hold_half_width=3, hold_share=0.1)]), "not both"),
    (lambda: B.plan_budget_first(rows(), epsilon=1, rule="kov_optimal", objective="weighted_mse"), "additive"),
    (lambda: B.plan_accuracy_first([replace(rows()[0], target_half_width=0)]), "> 0"),
    (lambda: B.plan_accuracy_first([B.StatisticSpec(f"s{i}", "count", 10) for i in range(51)]), "at most 50"),
    (lambda: B.plan_accuracy_first([B.StatisticSpec("m", "mean", 10, upper=5)]), "needs n"),
])
def test_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_minimal_privacy_and_half_width_inverse():
    s = rows()[1]
    e = B.minimal_privacy(s, rule="basic")
    assert B.half_width_at(s, e, rule="basic") == pytest.approx(500, rel=1e-12)
    g = replace(s, mechanism="gaussian")
    e = B.minimal_privacy(g, rule="advanced", delta_i=1e-7)
    assert B.half_width_at(g, e, rule="advanced", delta_i=1e-7) == pytest.approx(500, rel=1e-8)


# --------------------------------------------------------------------------- issue 12: numbers mean their labels
def counts(k, mech):
    return [B.StatisticSpec(f"c{i}", "count", 50, mechanism=mech) for i in range(k)]


def test_zcdp_allocation_epsilon_is_the_noise_actually_used():
    # Laplace rows under zCDP: the ε column is the pure ε of the Laplace noise (Δ₁/b), δ = 0 (issue 12 ex. 2)
    p = B.plan_budget_first(counts(20, "laplace"), epsilon=1.0, delta=1e-6, rule="zcdp")
    for a in p.allocations:
        assert a.epsilon == pytest.approx(1.0 / a.scale, rel=1e-12)
        assert a.delta == 0.0 and a.rho == pytest.approx(a.epsilon**2 / 2, rel=1e-12)
    # Gaussian rows under zCDP: ε is the exact analytic ε of σ at the plan's δ (scipy root of Balle–Wang δ(ε))
    from scipy import optimize, stats
    p = B.plan_budget_first(counts(5, "gaussian"), epsilon=1.0, delta=1e-6, rule="zcdp")
    for a in p.allocations:
        s = a.scale
        dlt = lambda e: stats.norm.cdf(1 / (2 * s) - e * s) - math.exp(e) * stats.norm.cdf(-1 / (2 * s) - e * s)  # noqa: E731
        assert a.epsilon == pytest.approx(optimize.brentq(lambda e: dlt(e) - 1e-6, 0, 50, xtol=1e-14), rel=1e-7)
        assert a.delta == 1e-6


@pytest.mark.parametrize("rule", B.PLAN_RULES)
@pytest.mark.parametrize("mode", ["accuracy_first", "budget_first"])
@pytest.mark.parametrize("mech", ["laplace", "gaussian"])
def test_budget_shares_sum_to_the_budget_in_its_unit(rule, mode, mech):
    ss = counts(6, mech)
    if mode == "accuracy_first":
        p = B.plan_accuracy_first(ss, rule=rule, delta=1e-6, reserve_fraction=0.25)
    else:
        p = B.plan_budget_first(ss, epsilon=2.0, delta=1e-6, rule=rule, reserve_fraction=0.25)
    sh = B.budget_shares(p)
    assert sh.unit == ("ρ" if rule == "zcdp" else "ε")
    assert math.fsum(sh.values) + sh.unused + sh.reserve == pytest.approx(p.budget, rel=1e-9)
    assert sh.reserve == pytest.approx(0.25 * p.budget, rel=1e-12)
    assert math.fsum(sh.values) == pytest.approx(p.rho if rule == "zcdp" else p.epsilon, rel=1e-9)
    if mode == "budget_first":
        assert p.budget == pytest.approx(2.0 if rule != "zcdp" else A.zcdp_rho_for_epsilon(2.0, 1e-6), rel=1e-12)
    assert min(sh.values) > 0 and sh.unused >= 0


def test_gaussian_rows_at_delta_1e_300():
    # δᵢ = δ/(2K) (advanced) or δ/K (basic) falls below the 1e-300 input floor: the plan must still be computed
    # (issue 17)
    ss = counts(2, "gaussian")
    for rule, share in (("basic", 5e-301), ("advanced", 2.5e-301)):
        p = B.plan_accuracy_first(ss, rule=rule, delta=1e-300)
        for a in p.allocations:
            assert a.delta == pytest.approx(share) and math.isfinite(a.epsilon) and a.epsilon > 0
    q = B.plan_budget_first(ss, epsilon=50.0, rule="basic", delta=1e-300)
    assert q.feasible and q.epsilon <= 50.0


def test_huge_sensitivity_is_a_value_error_not_an_overflow():
    s = B.StatisticSpec("s", "sum", 1e-3, lower=0, upper=1e200, mechanism="gaussian")
    for rule in ("zcdp", "basic"):
        with pytest.raises(ValueError):
            B.plan_accuracy_first([s], rule=rule)


def test_pld_below_its_delta_range_is_a_clear_message():
    ss = counts(3, "laplace")
    for plan in (lambda: B.plan_accuracy_first(ss, rule="pld", delta=1e-284),
                 lambda: B.plan_budget_first(ss, epsilon=0.5, rule="pld", delta=1e-284)):
        with pytest.raises(ValueError, match="1e-12"):
            plan()


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 4.0])
def test_gaussian_histogram_noise_is_the_analytic_sigma_at_sensitivity_root2(epsilon):
    # one Gaussian histogram under replace-one neighbours has L2 sensitivity √2 (one count −1, another +1):
    # its σ must give exactly ε_alloc at δᵢ = δ (the basic rule's whole δ: it is the only Gaussian statistic; issue
    # 34) by dp-accounting's own Gaussian accountant (Δ = 1, σ/√2)
    from dp_accounting import gaussian_mechanism as dpa_gauss
    delta = 1e-6
    plan = B.plan_budget_first([B.StatisticSpec("h", "histogram", 5.0, cells=8, mechanism="gaussian")],
                               epsilon=epsilon, delta=delta, rule="basic")
    a = plan.allocations[0]
    assert dpa_gauss.get_epsilon_gaussian(a.scale / math.sqrt(2), delta) == pytest.approx(a.epsilon, rel=1e-6)
    assert a.epsilon <= epsilon * (1 + 1e-12)
    # and a count (Δ₂ = 1) at the same ε gets σ smaller by exactly √2
    plan1 = B.plan_budget_first([B.StatisticSpec("c", "count", 5.0, mechanism="gaussian")],
                                epsilon=epsilon, delta=delta, rule="basic")
    assert a.scale / plan1.allocations[0].scale == pytest.approx(math.sqrt(2), rel=1e-5)


# --------------------------------------------------------------------------- argument checks and discrete kinds
@pytest.mark.parametrize("call,match", [
    (lambda: B.plan_accuracy_first([]), "statistics list is empty"),
    (lambda: B.plan_accuracy_first([replace(rows()[0], hold_half_width=-1)]), "hold ±"),
    (lambda: B.plan_accuracy_first([replace(rows()[0], hold_share=1.5)]), "hold share"),
    (lambda: B.plan_accuracy_first([replace(rows()[0], cells=0)]), "cells"),
    (lambda: B.plan_accuracy_first([replace(rows()[0], confidence=1.0)]), "confidence"),
    (lambda: B.plan_accuracy_first([replace(rows()[0], weight=0)]), "weight"),
    (lambda: B.plan_accuracy_first([replace(rows()[0], mechanism="cauchy")]), "mechanism must be one of"),
    (lambda: B.plan_accuracy_first(rows(), rule="renyi"), "rule must be one of"),
    (lambda: B.plan_accuracy_first([B.StatisticSpec("m", "mean", 1, upper=0.5, n=3, mechanism="discrete_laplace")]),
     "integer sensitivity"),
    (lambda: B.minimal_privacy(replace(rows("gaussian")[0]), rule="advanced", delta_i=0.0), "needs delta_i > 0"),
    (lambda: B.half_width_at(rows()[0], 0.0, rule="basic"), "privacy"),
    (lambda: B.hold_at_half_width(rows()[0], 0), "hold half-width"),
])
def test_argument_errors_name_the_statistic_and_the_domain(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def _dlap_coverage(t: float, h: int) -> float:
    """P(|Y| ≤ h) for the discrete Laplace law P(k) ∝ e^{−|k|/t}, by direct summation (independent of the engine)."""
    k = np.arange(-4000, 4001)
    w = np.exp(-np.abs(k) / t)
    return float(w[np.abs(k) <= h].sum() / w.sum())


@pytest.mark.parametrize("h,conf", [(5, 0.95), (20, 0.9), (50, 0.99)])
def test_discrete_laplace_count_is_the_tightest_scale_by_brute_force(h, conf):
    plan = B.plan_accuracy_first([B.StatisticSpec("c", "count", h, confidence=conf, mechanism="discrete_laplace")])
    a = plan.allocations[0]
    assert a.epsilon == pytest.approx(1.0 / a.scale, rel=REL)           # count: Δ₁ = 1, ε = Δ/t
    assert _dlap_coverage(a.scale, h) >= conf - 1e-6                     # the target is met ...
    assert _dlap_coverage(a.scale * 1.01, h) < conf                       # ... and a 1% wider scale misses it


@pytest.mark.parametrize("rule", ["basic", "advanced", "zcdp", "pld"])
def test_discrete_gaussian_rows_compose_under_every_rule(rule):
    stats_ = [B.StatisticSpec("c", "count", 10, mechanism="discrete_gaussian"),
              B.StatisticSpec("h", "histogram", 20, cells=5, mechanism="discrete_gaussian")]
    plan = B.plan_accuracy_first(stats_, rule=rule, delta=1e-6)
    assert plan.feasible
    for a, s in zip(plan.allocations, stats_):
        # a discrete Gaussian with σ is Δ₂²/(2σ²)-zCDP (Canonne–Kamath–Steinke 2020, Thm 4); Δ₂ = 1 and √2
        rho_expected = (1.0 if s.query == "count" else 2.0) / (2 * a.scale**2)
        if rule == "zcdp":
            assert a.rho == pytest.approx(rho_expected, rel=1e-4)
        else:
            # the (ε, δᵢ) it is given is no looser than what its zCDP guarantee alone would give
            assert a.epsilon <= A.zcdp_to_dp(rho_expected, a.delta) * (1 + 1e-6)


@pytest.mark.parametrize("neighbour,cells_changed", [("replace", 2), ("add_remove", 1)])
def test_discrete_gaussian_histogram_under_pld_matches_dp_accounting(neighbour, cells_changed):
    from dp_accounting.pld import privacy_loss_distribution as pld
    s = B.StatisticSpec("h", "histogram", 20, cells=5, mechanism="discrete_gaussian", neighbour=neighbour)
    plan = B.plan_accuracy_first([s], rule="pld", delta=1e-6)
    sigma = plan.allocations[0].scale
    one = pld.from_discrete_gaussian_mechanism(sigma, sensitivity=1, value_discretization_interval=1e-4)
    ref = one.self_compose(cells_changed).get_epsilon_for_delta(1e-6)
    assert plan.feasible and plan.epsilon == pytest.approx(ref, rel=2e-3)


# --------------------------------------------------------------------------- live plans (issue 23 item 3)
@pytest.mark.slow
@pytest.mark.parametrize("rule", B.PLAN_RULES)
def test_every_rule_replans_25_statistics_live(rule):
    # spec §7 / issue 23: ≤ 300 ms of engine time per re-plan; the test allows 3× that for a loaded test machine
    # (bench/bench_targets.py reports the measured value against 300 ms)
    import time
    from dpdash.accounting import composition as acc
    acc.PLD_CACHE.clear()
    acc.compose([acc.laplace(1.0)], delta=1e-6, rule="pld")          # imports, not planning
    ss = stats25()
    t0 = time.process_time()
    p = B.plan_accuracy_first(ss, rule=rule)
    q = B.plan_budget_first(ss, rule=rule, epsilon=5.0)
    spent = time.process_time() - t0
    assert spent < 2 * 0.9
    if rule == "kov_optimal":      # 25 distinct ε's: more than 10⁶ subset classes; the plan says so, at once
        assert not p.feasible and "10⁶" in p.message or "1e6" in p.message
    else:
        assert p.feasible and q.feasible and q.epsilon <= 5.0 * (1 + 1e-9)
