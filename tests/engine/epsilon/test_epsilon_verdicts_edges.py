"""dpdash.epsilon.verdicts, edge-case sentences: a fixed noise scale, lists of several release kinds, a tightest
rule no better than the basic sum, infeasible and reserved budget plans, targets that are missed, a single adaptive
filter or a tie, δ > 0 in the risk tab, a private test without power. The numbers each sentence must carry are
computed here from the closed forms (Laplace b = Δ/ε and half-width b·ln(1/β), sums of ε), not by the module."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dpdash.accounting import composition as acc
from dpdash.accounting import budget as bud
from dpdash.epsilon import verdicts as ev
from dpdash.common import formatting as nf
from dpdash.accounting import mechanisms as mech
from dpdash.epsilon import risk

LN20 = math.log(20)  # ln(1/β) with β = 0.05: two-sided 95% Laplace interval is ±b·ln 20


def test_noise_verdict_fixed_scale_names_the_scale_the_epsilon_and_the_interval():
    # a sum with Δ = 2 and Laplace scale b = 4: ε = Δ/b = 0.5 and ± = b·ln 20 = 12.0
    cal = mech.calibrate("laplace", sensitivity=2.0, scale=4.0, confidence=0.95)
    assert cal.epsilon == pytest.approx(2.0 / 4.0) and cal.half_width == pytest.approx(4.0 * LN20)
    text = ev.noise_verdict(mechanism="laplace", query="sum", half_width=cal.half_width, confidence=0.95,
                            fix="scale", epsilon=cal.epsilon, scale=4.0)
    assert text == ("Laplace noise of scale 4 gives ε = 0.5 and keeps a sum within ±11.98 of its true value 95% "
                    "of the time.")
    assert f"±{4.0 * LN20:.4g} " in text  # 11.98, as the card
    # without a scale the sentence falls back to the "With ε …" form (nothing invented)
    fallback = ev.noise_verdict(mechanism="laplace", query="sum", half_width=cal.half_width, confidence=0.95,
                                fix="scale", epsilon=cal.epsilon)
    assert fallback.startswith("With ε = 0.5, Laplace noise keeps a sum within ±11.98 ")


def test_describe_releases_for_a_list_counts_releases_and_distinct_kinds():
    counts = [30, 20, 5]
    text = ev.describe_releases(["laplace", "gaussian", "laplace"], counts, [0.1, None, 0.2], [None, 1.5, None])
    assert text == f"{sum(counts):,} releases of 2 kinds"  # 55 releases, kinds {laplace, gaussian}
    same = ev.describe_releases(["gaussian", "gaussian"], [600, 600], [None, None], [2.0, 3.0])
    assert same == "1,200 releases of 1 kind"  # one distinct kind: singular
    one = ev.describe_releases(["gaussian"], [1], [None], [2.0])
    assert one == "1 Gaussian release (noise multiplier σ/Δ = 2)"


def test_composition_verdict_calls_a_gain_under_half_a_percent_the_same_as_the_basic_sum():
    basic = 10 * 0.1  # 10 releases of ε = 0.1: the basic sum is 1.0
    within = basic * (1 - 0.004)  # 0.4% tighter: below the 0.5% threshold
    table = pd.DataFrame({"rule": ["basic", "kov_optimal"], "epsilon": [basic, within], "valid": [True, True]})
    text = ev.composition_verdict(table, releases="10 Laplace releases (ε = 0.1 each)", delta=1e-6)
    assert text == (f"Composing 10 Laplace releases (ε = 0.1 each) costs ε = {within:.4g} at δ = 10⁻⁶ under optimal "
                    f"composition, within 0.5% of the basic sum ({basic:.4g}).")
    # just past the threshold the saving is named
    beyond = pd.DataFrame({"rule": ["basic", "kov_optimal"], "epsilon": [basic, 0.99 * basic], "valid": [True, True]})
    assert ev.composition_verdict(beyond, releases="x", delta=1e-6).endswith(
        f", {0.01 * basic:.4g} less than the basic sum (1).")


def test_composition_verdict_from_the_engine_for_a_single_release_names_no_false_saving():
    # one Laplace release of ε = 0.1: every rule's total is ε itself, so no rule can beat the basic sum by 0.5%
    table = acc.composition_table([acc.laplace(0.1)], delta=1e-6, rules=("basic", "kov_optimal"))
    text = ev.composition_verdict(table, releases="1 Laplace release", delta=1e-6)
    assert "ε = 0.1 at δ = 10⁻⁶" in text
    assert "less than the basic sum" not in text


def test_budget_verdict_infeasible_plan_returns_the_planner_message_with_the_held_cost():
    # a held count at ±10 (95%) needs ε = ln 20 / 10 = 0.2996 by itself, more than a budget of 0.1
    held = bud.StatisticSpec("held", "count", 10.0, hold_half_width=10.0)
    free = bud.StatisticSpec("free", "count", 10.0)
    plan = bud.plan_budget_first([held, free], epsilon=0.1, rule="basic")
    assert not plan.feasible
    text = ev.budget_verdict(plan)
    assert text == plan.message
    assert f"need ε = {LN20 / 10:.3f}, more than the 0.100 left" in text  # ln 20 / 10 = 0.2996 → 0.300


def test_budget_verdict_accuracy_first_with_a_reserve_asks_for_total_over_one_minus_r():
    specs = [bud.StatisticSpec("a", "count", 50.0), bud.StatisticSpec("b", "count", 25.0)]
    plan = bud.plan_accuracy_first(specs, rule="basic", reserve_fraction=0.2)
    total = LN20 / 50 + LN20 / 25  # Laplace ε = Δ·ln 20 / target per count, summed: 0.1797
    budget = total / (1 - 0.2)  # 0.2247
    text = ev.budget_verdict(plan)
    # issue 22/25: the table's precision, the reserve's size, and no δ for a pure ε plan
    assert text == (f"Meeting all 2 accuracy targets costs ε = {total:.4g} in total (the basic sum, pure ε-DP). "
                    f"With the 20% reserve the budget to ask for is ε = {budget:.4g}.")
    assert f"{budget:.4g}" == "0.2247"


def test_budget_verdict_budget_first_names_the_statistic_furthest_from_its_target():
    # a count held at its target ±50 costs ε = ln 20 / 50 = 0.0599 of ε_B = 0.07; the other count gets the
    # remaining 0.0101, so its ± is ln 20 / 0.0101 = 297 against a target of ±100: 3.0× its target
    specs = [bud.StatisticSpec("a", "count", 50.0, hold_half_width=50.0), bud.StatisticSpec("b", "count", 100.0)]
    plan = bud.plan_budget_first(specs, epsilon=0.07, rule="basic")
    hw_b = LN20 / (0.07 - LN20 / 50)
    text = ev.budget_verdict(plan)
    assert text == (f"A total budget of ε = 0.07 (the basic sum, pure ε-DP) gives a ±50, b ±{hw_b:.4g}. "
                    f"The furthest from its target is b: {hw_b / 100:.4g}× its target ±.")
    assert f"{hw_b / 100:.4g}" == "2.97"  # 2.9700 (ln 20 / 0.0101 / 100): trailing zeros dropped, as in the table


def test_budget_verdict_budget_first_lists_only_four_statistics():
    specs = [bud.StatisticSpec(f"q{i}", "count", 1000.0) for i in range(6)]
    plan = bud.plan_budget_first(specs, epsilon=3.0, rule="basic")
    hw = LN20 / 0.5  # ε = 3/6 = 0.5 each: ± = ln 20 / 0.5 = 6.0, far inside ±1,000
    text = ev.budget_verdict(plan)
    # issue 25: "… ." read as a double stop; the rest are counted instead
    assert ", ".join(f"q{i} ±{hw:.4g}" for i in range(4)) + " and 2 more (all in the table)." in text
    assert "q4" not in text and "…" not in text
    assert text.endswith("Every statistic meets its target.")


def test_adaptive_verdict_with_one_filter_says_nothing_about_others():
    seq = [0.01] * 100
    n = int(sum(acc.filter_trace(seq, epsilon_g=1.0, delta_g=1e-6, rule="basic").decisions))
    assert n == 100  # Σε = 100 × 0.01 = 1 = ε_g: every request fits
    text = ev.adaptive_verdict(answered={"basic": n}, requests=100, epsilon_g=1.0, rule="basic")
    assert text == "With a total budget ε_g = 1, the basic filter answers 100 of 100 requests (all of them)."


def test_adaptive_verdict_names_no_winner_on_a_tie_or_when_the_chosen_filter_is_best():
    seq = [0.01] * 50  # Σε = 0.5 ≤ 1: even the basic filter answers every request, so all three tie
    answered = {r: int(sum(acc.filter_trace(seq, epsilon_g=1.0, delta_g=1e-6, rule=r).decisions))
                for r in ("basic", "advanced", "zcdp")}
    assert answered == {"basic": 50, "advanced": 50, "zcdp": 50}
    text = ev.adaptive_verdict(answered=answered, requests=50, epsilon_g=1.0, rule="zcdp")
    assert text == ("With a total budget ε_g = 1, the zCDP filter answers 50 of 50 requests (all of them). "
                    "Other filters: basic 50, advanced 50.")
    best = ev.adaptive_verdict(answered={"basic": 100, "zcdp": 1500}, requests=2000, epsilon_g=1.0, rule="zcdp")
    assert best.endswith("Other filters: basic 100.") and "answers the most" not in best


def test_risk_verdict_with_delta_adds_the_exception_probability():
    eps, delta, prior = math.log(3), 1e-5, 0.1
    b = risk.posterior_bound(prior, epsilon=eps)
    adv = risk.advantage_bound(epsilon=eps, delta=delta)
    text = ev.risk_verdict(prior=prior, epsilon=eps, lower=b.lower, upper=b.upper, advantage=adv, delta=delta)
    # Bayes with likelihood ratio 3: 0.1·3/(0.1·3 + 0.9) = 0.25 and 0.1/3/(0.1/3 + 0.9) = 1/28 = 0.0357
    assert "at most 25% sure, and at least 3.6%" in text
    adv_ref = (math.exp(eps) - 1 + 2 * delta) / (math.exp(eps) + 1)  # (e^ε − 1 + 2δ)/(e^ε + 1) = 0.500005
    assert f"by more than {nf.number(100 * adv_ref)} percentage points" in text
    assert text.endswith(" With δ = 10⁻⁵ these hold except with probability up to δ.")


def test_private_tests_verdict_without_power_stops_after_the_size():
    t = ev.private_tests_verdict(n=2500.0, privacy="ε = 0.5", alpha=0.01, naive_size=0.0734)
    assert t == ("At n = 2,500 and ε = 0.5, the classical χ² test on noisy counts raises false alarms 7.3% of the "
                 "time instead of 1%; the private tests keep 1%.")
