"""dpdash.epsilon.verdicts: each tab's verdict names the right numbers. The engine computes the result as the page
does; the numbers the sentence must contain are computed here independently (scipy, dp-accounting, closed forms)
and rounded as a reader would."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from dpdash.common import formatting as nf
from dpdash.accounting import composition as acc
from dpdash.accounting import budget as bud
from dpdash.epsilon import verdicts as ev
from dpdash.accounting import mechanisms as mech
from dpdash.epsilon import risk


@pytest.mark.parametrize("x, text", [(2.995732, "3.0"), (9.96, "10"), (0.0599, "0.060"), (123456, "120,000"),
                                     (1.5e-5, "1.5e-5"), (0.0, "0"), (math.inf, "∞"), (math.nan, "n/a")])
def test_number_rounds_to_two_significant_figures(x, text):
    assert nf.number(x) == text


def test_noise_verdict_laplace_count_is_the_ln20_interval():
    cal = mech.calibrate("laplace", sensitivity=1.0, epsilon=1.0, confidence=0.95)
    text = ev.noise_verdict(mechanism="laplace", query="count", half_width=cal.half_width, confidence=0.95,
                            fix="privacy", epsilon=cal.epsilon)
    hw = stats.laplace.isf(0.025)  # P(|Y| > t) = 0.05 for Laplace(1): t = ln 20 = 2.996
    # 4 significant figures, as the card beside it reads (issue 22: a sentence never coarser than its card)
    assert f"±{hw:.4g}" == "±2.996"
    assert text == "With ε = 1, Laplace noise keeps a count within ±2.996 of its true value 95% of the time."


def test_noise_verdict_gaussian_names_delta_and_the_balle_wang_interval():
    delta = 1e-6
    cal = mech.calibrate("gaussian", sensitivity=1.0, epsilon=1.0, delta=delta, confidence=0.95)

    def bw(sigma):  # Balle & Wang (2018) Thm 8, ε = 1, Δ = 1
        return stats.norm.cdf(0.5 / sigma - sigma) - math.e * stats.norm.cdf(-0.5 / sigma - sigma) - delta
    sigma = optimize.brentq(bw, 0.5, 20)
    hw = stats.norm.isf(0.025) * sigma
    text = ev.noise_verdict(mechanism="gaussian", query="histogram", half_width=cal.half_width, confidence=0.95,
                            fix="privacy", epsilon=cal.epsilon, delta=delta)
    assert f"within ±{hw:.4g} " in text and "δ = 10⁻⁶" in text and "each count of a histogram" in text


def test_noise_verdict_fixed_accuracy_asks_for_the_epsilon():
    cal = mech.calibrate("laplace", sensitivity=1.0, half_width=10.0, confidence=0.95)
    text = ev.noise_verdict(mechanism="laplace", query="count", half_width=cal.half_width, confidence=0.95,
                            fix="accuracy", epsilon=cal.epsilon)
    assert text.startswith("To keep a count within ±10 ")
    assert f"needs ε = {math.log(20) / 10:.4g}." in text  # b = 10/ln 20, ε = 1/b = 0.2996


def test_noise_guidance_warns_when_the_noise_swamps_a_mean_and_when_epsilon_is_extreme():
    sens = mech.query_sensitivity("mean", lower=0.0, upper=100.0, n=10)
    cal = mech.calibrate("laplace", sensitivity=sens.l1, epsilon=0.01)
    assert cal.half_width == pytest.approx(10 / 0.01 * math.log(20))  # ≈ 2,996, far beyond the range 0–100
    warn = ev.noise_guidance(query="mean", half_width=cal.half_width, lower=0.0, upper=100.0, n=10, epsilon=0.01)
    assert warn and "wider than the whole range of the mean" in warn and "raise ε or n" in warn
    assert ev.noise_guidance(query="count", half_width=3.0, lower=0, upper=1, n=1000, epsilon=1.0) is None
    extreme = ev.noise_guidance(query="count", half_width=0.01, lower=0, upper=1, n=1000, epsilon=20.0)
    assert extreme and "extreme" in extreme and "4.9·10⁸" in extreme  # e^20 ≈ 4.9 × 10^8


def test_composition_verdict_names_pld_and_the_saving_against_the_basic_sum():
    from dp_accounting import LaplaceDpEvent
    from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
    ms = [acc.laplace(0.1, count=1000)]
    table = acc.composition_table(ms, delta=1e-6, rules=("basic", "pld"))
    ind = PLDAccountant(value_discretization_interval=1e-4)
    ind.compose(LaplaceDpEvent(10.0), 1000)
    pld = ind.get_epsilon(1e-6)
    releases = ev.describe_releases(["laplace"], [1000], [0.1], [None])
    text = ev.composition_verdict(table, releases=releases, delta=1e-6)
    assert text == (f"Composing 1,000 Laplace releases (ε = 0.1 each) costs ε = {pld:.4g} at δ = 10⁻⁶ under "
                    f"privacy loss distributions (PLD), {100 - pld:.4g} less than the basic sum (100).")


def test_composition_verdict_when_the_basic_sum_is_tightest_or_nothing_is_valid():
    table = acc.composition_table([acc.laplace(0.1)], delta=1e-6, rules=("basic", "advanced"))
    text = ev.composition_verdict(table, releases="1 Laplace release", delta=1e-6)
    assert "ε = 0.1 " in text and "the basic sum is already the tightest" in text
    bad = pd.DataFrame({"rule": ["kov_analytic"], "epsilon": [math.nan], "valid": [False]})
    assert "No rule you selected" in ev.composition_verdict(bad, releases="x", delta=1e-6)


def test_budget_verdict_accuracy_first_costs_the_sum_of_ln20_over_targets():
    stats_ = [bud.StatisticSpec("a", "count", 50.0), bud.StatisticSpec("b", "count", 25.0)]
    plan = bud.plan_accuracy_first(stats_, rule="basic")
    expected = math.log(20) / 50 + math.log(20) / 25  # Laplace: ε = Δ·ln(1/β)/target per count, summed
    assert plan.epsilon == pytest.approx(expected, rel=1e-3)
    text = ev.budget_verdict(plan)
    # 4 significant figures, as the plan's table (issue 22); Laplace rows under the basic sum are pure ε-DP
    assert text == f"Meeting all 2 accuracy targets costs ε = {expected:.4g} in total (the basic sum, pure ε-DP)."


def test_budget_verdict_budget_first_names_each_accuracy():
    stats_ = [bud.StatisticSpec("a", "count", 50.0), bud.StatisticSpec("b", "count", 50.0)]
    plan = bud.plan_budget_first(stats_, epsilon=1.0, rule="basic")
    text = ev.budget_verdict(plan)
    hw = math.log(20) / 0.5  # ε = 0.5 each: Laplace b = 2, ± = 2·ln 20 = 6.0
    assert f"a ±{hw:.4g}, b ±{hw:.4g}" in text and "Every statistic meets its target" in text


def test_adaptive_verdict_basic_filter_answers_budget_over_epsilon():
    seq = [0.01] * 2000
    answered = {r: int(sum(acc.filter_trace(seq, epsilon_g=1.0, delta_g=1e-6, rule=r).decisions))
                for r in ("basic", "advanced", "zcdp")}
    assert answered["basic"] == 100  # 1 / 0.01
    text = ev.adaptive_verdict(answered=answered, requests=2000, epsilon_g=1.0, rule="basic")
    assert text.startswith("With a total budget ε_g = 1, the basic filter answers 100 of 2,000 requests.")
    assert f"advanced {answered['advanced']:,}" in text


def test_risk_verdict_is_bayes_with_the_e_to_the_epsilon_ratio():
    b = risk.posterior_bound(0.1, epsilon=1.0)
    adv = risk.advantage_bound(epsilon=1.0)
    text = ev.risk_verdict(prior=0.1, epsilon=1.0, lower=b.lower, upper=b.upper, advantage=adv)
    up = 0.1 * math.e / (0.1 * math.e + 0.9)  # 0.232
    lo = 0.1 / math.e / (0.1 / math.e + 0.9)  # 0.0393
    assert f"at most {100 * up:.0f}% sure" in text and f"at least {100 * lo:.1f}%" in text
    assert f"more than {100 * math.tanh(0.5):.0f} percentage points" in text  # tanh(1/2) = 0.462


def test_widths_verdict_finds_the_first_k_where_dp_wins():
    ks = [1, 10, 100, 1000]
    rows = [("split_binomial", k, 0.01 * k ** 0.5) for k in ks] + [("rz_monitor", k, 0.05 + 0.001 * k ** 0.25)
                                                                  for k in ks]
    widths = pd.DataFrame(rows, columns=["method", "k", "tau"])
    # split: 0.01, 0.032, 0.1, 0.32; DP: 0.051, 0.052, 0.053, 0.056 → DP is better from k = 100
    text = ev.widths_verdict(widths, n=6400)
    # the example quotes the threshold's own k (issue 34): 0.05 + 0.001·100^¼ = 0.05316, 0.01·√100 = 0.1
    assert "from k = 100 on" in text and "at k = 100: ±0.05316 with DP against ±0.1 by splitting" in text
    never = pd.DataFrame([("split_binomial", 10, 0.1), ("dfhprr", 10, 0.5)], columns=["method", "k", "tau"])
    assert "splitting the data is at least as accurate" in ev.widths_verdict(never, n=100)


def test_private_tests_and_maxinfo_verdicts_name_their_numbers():
    t = ev.private_tests_verdict(n=10_000, privacy="ρ = 0.00125", alpha=0.05, naive_size=0.3123, power=0.8)
    assert "false alarms 31% of the time instead of 5%" in t and "probability 80%" in t
    m = ev.maxinfo_verdict(alpha=0.05, gamma=0.0123, epsilon=0.01, n=10_000, bits=1.234)
    assert "p ≤ 0.0123, not p ≤ 0.05" in m and "1.234 bits" in m  # as the cards read them


def test_power_of_ten_and_epsilon_guidance():
    assert nf.power_of_ten(1e-6) == "10⁻⁶" and nf.power_of_ten(5e-7) == "5·10⁻⁷"
    assert ev.epsilon_guidance(2.0) is None
    g = ev.epsilon_guidance(12.0)
    assert g and f"{nf.number(np.exp(12.0))}" in g  # e^12 ≈ 160,000


def test_total_guidance_only_when_the_tightest_total_is_extreme():
    big = acc.composition_table([acc.laplace(0.5, count=1000)], delta=1e-6, rules=("basic", "advanced"))
    # advanced composition of 1,000 × 0.5: Σε·tanh(ε/2) + √(2·Σε²·ln(1/δ)) ≈ 122 + 83 — still far above 10
    adv = 1000 * 0.5 * math.tanh(0.25) + math.sqrt(2 * 1000 * 0.25 * math.log(1e6))
    g = ev.total_guidance(big)
    assert g and f"A total ε of {adv:.4g}" in g and "publish fewer releases" in g
    small = acc.composition_table([acc.laplace(0.1, count=10)], delta=1e-6, rules=("basic",))
    assert ev.total_guidance(small) is None
