"""dpdash.accounting.composition without the page tests: the adaptive-analysis trace, the odometers and the argument
refusals.

Expected numbers are the [T] formulas (seed 002, Rogers 2017) written out here with ``math`` in plain loops,
hand-derived values, or brute force; never a call back into the function under test.
"""

import math

import numpy as np
import pytest

from dpdash.accounting import composition as A
from dpdash.common.validation import ValidationError

C = 28.04  # the printed constant of [T] eq. 5.12


# --------------------------------------------------------------------------- [T] formulas, written out
def k_eq_5_12(eps, x, delta_g):
    """K = Σεᵢ(e^{εᵢ}−1)/2 + √(2(S+x)(1+½ln(S/x+1))ln(2/δ_g)), S = Σεᵢ² ([T] eq. 5.12)."""
    tail = sum(e * (math.exp(e) - 1.0) / 2.0 for e in eps)
    s = sum(e * e for e in eps)
    return tail + math.sqrt(2.0 * (s + x) * (1.0 + 0.5 * math.log(s / x + 1.0)) * math.log(2.0 / delta_g))


def odometer_5_17_5_18(eps, delta_g, gran, ln_n, log2_n):
    """[T] Thm 5.6.5: eq. 5.17 when S ∈ [γ, 1], else eq. 5.18 (γ = 1/n²)."""
    tail = sum(e * (math.exp(e) - 1.0) / 2.0 for e in eps)
    s = sum(e * e for e in eps)
    if gran <= s <= 1.0:
        big_l = math.log(48.0 * math.e) + 2.0 * math.log(ln_n / delta_g)
        return tail + math.sqrt(2.0 * s * big_l)
    return tail + math.sqrt(2.0 * (gran + s) * (1.0 + 0.5 * math.log(1.0 + s / gran))
                            * math.log(4.0 * log2_n / delta_g))


# --------------------------------------------------------------------------- adaptive_trace
EPS = [1e-4, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8]
EG, DG, N = 1.5, 1e-6, 1000


@pytest.fixture(scope="module")
def trace():
    return A.adaptive_trace(EPS, epsilon_g=EG, delta_g=DG, n=N)


def _col(trace, rule):
    t = trace[trace["rule"] == rule].sort_values("round")
    assert t["round"].tolist() == list(range(1, len(EPS) + 1))
    return t["bound"].to_numpy(), t["halted"].tolist()


def test_trace_shape(trace):
    assert list(trace.columns) == ["round", "rule", "bound", "halted"]
    assert sorted(set(trace["rule"])) == sorted(A.ADAPTIVE_LABELS)
    assert len(trace) == 6 * len(EPS)


def test_trace_basic_is_cumulative_sum_and_halts_past_budget(trace):
    bound, halted = _col(trace, "basic")
    cum = [sum(EPS[: i + 1]) for i in range(len(EPS))]
    assert bound == pytest.approx(cum, rel=1e-12)
    # Σεᵢ: 1e-4, .1001, .3001, .6001, 1.0001, 1.5001 > 1.5 → halted from round 6 on
    assert halted == [False] * 5 + [True] * 3


def test_trace_filter_k_matches_eq_5_12(trace):
    bound, halted = _col(trace, "filter_advanced")
    x = EG**2 / (C * math.log(1.0 / DG))
    want = [k_eq_5_12(EPS[: i + 1], x, DG) for i in range(len(EPS))]
    assert bound == pytest.approx(want, rel=1e-12)
    first = next(i for i, v in enumerate(want) if v > EG)
    assert first == 2  # by hand: K(2 rounds) ≈ 0.83, K(3 rounds) ≈ 1.86 > 1.5
    assert halted == [i >= first for i in range(len(EPS))]


def test_trace_fixed_x_odometer_uses_first_epsilon_squared(trace):
    bound, halted = _col(trace, "odometer_fixed_x")
    want = [k_eq_5_12(EPS[: i + 1], EPS[0] ** 2, DG) for i in range(len(EPS))]
    assert bound == pytest.approx(want, rel=1e-12)
    assert not any(halted)


def test_trace_odometer_advanced_both_branches(trace):
    bound, _ = _col(trace, "odometer_advanced")
    want = [odometer_5_17_5_18(EPS[: i + 1], DG, 1.0 / N**2, math.log(N), math.log2(N)) for i in range(len(EPS))]
    assert bound == pytest.approx(want, rel=1e-12)
    # round 1 (S = 1e-8 < 1/n²) and round 8 (S = 1.55 > 1) use eq. 5.18; the others eq. 5.17
    s = np.cumsum(np.square(EPS))
    assert s[0] < 1e-6 and s[-1] > 1 and all(1e-6 <= v <= 1 for v in s[1:-1])


def test_trace_zcdp_odometer_and_heuristic(trace):
    zc, _ = _col(trace, "odometer_zcdp")
    heur, _ = _col(trace, "heuristic")
    big_l = math.log(48.0 * math.e) + 2.0 * math.log(math.log(N) / DG)
    for i in range(len(EPS)):
        r = sum(e * e / 2.0 for e in EPS[: i + 1])
        if 1.0 / N**2 <= 2 * r <= 1.0:
            assert zc[i] == pytest.approx(r + 2.0 * math.sqrt(r * big_l), rel=1e-12)
        else:  # outside [1/n², 1] Thm 5.7.6 says nothing
            assert math.isnan(zc[i])
        pre = EPS[: i + 1]
        adv = sum(e * (math.exp(e) - 1) / (math.exp(e) + 1) for e in pre) + math.sqrt(
            2.0 * sum(e * e for e in pre) * math.log(1.0 / DG))
        assert heur[i] == pytest.approx(adv, rel=1e-12)
    assert math.isnan(zc[0]) and math.isnan(zc[-1]) and not math.isnan(zc[3])


def test_trace_given_rhos():
    rhos = [0.01, 0.02, 0.03]
    t = A.adaptive_trace([0.1, 0.2, 0.3], epsilon_g=1.0, delta_g=1e-5, n=100, rhos=rhos)
    zc = t[t["rule"] == "odometer_zcdp"].sort_values("round")["bound"].to_numpy()
    big_l = math.log(48.0 * math.e) + 2.0 * math.log(math.log(100) / 1e-5)
    want = [r + 2.0 * math.sqrt(r * big_l) for r in (0.01, 0.03, 0.06)]
    assert zc == pytest.approx(want, rel=1e-12)


def test_trace_refusals():
    with pytest.raises(ValueError, match="rhos"):
        A.adaptive_trace([0.1, 0.2], epsilon_g=1.0, delta_g=1e-5, n=100, rhos=[0.1])
    with pytest.raises(ValidationError, match="epsilon_g"):
        A.adaptive_trace([0.1], epsilon_g=-1.0, delta_g=1e-5, n=100)
    with pytest.raises(ValidationError, match="delta_g"):
        A.adaptive_trace([0.1], epsilon_g=1.0, delta_g=0.5, n=100)
    with pytest.raises(ValidationError, match="n must be"):
        A.adaptive_trace([0.1], epsilon_g=1.0, delta_g=1e-5, n=5)


# --------------------------------------------------------------------------- odometers
def test_odometer_fixed_x():
    eps = [0.1, 0.3, 0.2]
    assert A.odometer_fixed_x(eps, delta_g=1e-6, x=0.01) == pytest.approx(k_eq_5_12(eps, 0.01, 1e-6), rel=1e-12)
    # Σδᵢ = 6e-7 > δ_g/2 = 5e-7: no bound
    assert A.odometer_fixed_x(eps, [2e-7] * 3, delta_g=1e-6, x=0.01) == math.inf
    assert A.odometer_fixed_x(eps, [1e-7] * 3, delta_g=1e-6, x=0.01) == pytest.approx(
        k_eq_5_12(eps, 0.01, 1e-6), rel=1e-12)
    # e^800 overflows a float: the bound is ∞, not an error
    assert A.odometer_fixed_x([800.0], delta_g=1e-6, x=0.01) == math.inf
    with pytest.raises(ValidationError, match="^x must be"):
        A.odometer_fixed_x(eps, delta_g=1e-6, x=0)


def test_odometer_basic_and_advanced_delta_overrun():
    assert A.odometer_basic([0.5, 0.25], [1e-6, 1e-6], delta_prime=2e-6) == 0.75
    assert A.odometer_basic([0.5, 0.25], [1e-6, 2e-6], delta_prime=2e-6) == math.inf
    assert A.odometer_advanced([0.5, 0.25], [3e-7, 3e-7], delta_g=1e-6, n=100) == math.inf


def test_odometer_advanced_with_granularity_gamma():
    gamma = 1e-4  # ln n → ½ln(1/γ), log₂ n → ½log₂(1/γ)
    half_ln, half_log2 = 0.5 * math.log(1e4), 0.5 * math.log2(1e4)
    inside = [0.1, 0.2]  # S = 0.05 ∈ [γ, 1]: eq. 5.17
    outside = [0.005]  # S = 2.5e-5 < γ: eq. 5.18
    for eps in (inside, outside):
        assert A.odometer_advanced(eps, delta_g=1e-6, gamma=gamma) == pytest.approx(
            odometer_5_17_5_18(eps, 1e-6, gamma, half_ln, half_log2), rel=1e-12)
    with pytest.raises(ValidationError, match="gamma"):
        A.odometer_advanced(inside, delta_g=1e-6, gamma=0)
    with pytest.raises(ValueError, match="exactly one of n and gamma"):
        A.odometer_advanced(inside, delta_g=1e-6, n=100, gamma=gamma)


def test_filter_zcdp_epsilon_standard_conversion():
    # ρ + 2√(ρ ln(1/δ)) [X-BS Prop. 1.3]; spec §9: 2.245966 at ρ = 0.1, δ = 1e-5
    assert A.filter_zcdp_epsilon(0.1, delta=1e-5) == pytest.approx(0.1 + 2 * math.sqrt(0.1 * math.log(1e5)), rel=1e-12)
    assert A.filter_zcdp_epsilon(0.1, delta=1e-5) == pytest.approx(2.245966, abs=1e-6)


# --------------------------------------------------------------------------- filters
def test_privacy_filter_zcdp_with_rho_requests():
    f = A.PrivacyFilter(epsilon_g=2.0, delta_g=1e-5, rule="zcdp")
    assert f.request(rho=0.01) and f.request(rho=0.02)
    assert f.history == pytest.approx([r + 2 * math.sqrt(r * math.log(1e5)) for r in (0.01, 0.03)], rel=1e-12)
    with pytest.raises(ValidationError, match="^rho must be"):
        f.request(rho=-0.01)
    with pytest.raises(ValueError, match="epsilon.*rho"):
        f.request()


def test_privacy_filter_zcdp_underflowing_rho():
    # ½(1e-200)² = 5e-401 underflows in doubles: the request is answered, and the loss is rounded up to the
    # smallest positive float (issue 36 item 6: never below the exact value), so the bound is tiny but not 0
    f = A.PrivacyFilter(epsilon_g=1.0, delta_g=1e-5, rule="zcdp")
    assert f.request(epsilon=1e-200)
    assert f.sum_rho == 5e-324
    assert 0.0 < f.history[0] <= 2 * math.sqrt(5e-324 * math.log(1e5)) * 1.001 + 5e-324


def test_filter_rule_refusals():
    with pytest.raises(ValueError, match="rule"):
        A.PrivacyFilter(epsilon_g=1.0, delta_g=1e-5, rule="renyi")
    with pytest.raises(ValueError, match="rule"):
        A.filter_rounds(0.1, epsilon_g=1.0, delta_g=1e-5, rule="renyi")
    with pytest.raises(ValidationError, match="delta_g"):
        A.PrivacyFilter(epsilon_g=1.0, delta_g=0.4, rule="basic")


# --------------------------------------------------------------------------- list and argument refusals
def test_epsilon_and_delta_list_refusals():
    with pytest.raises(ValidationError, match="^epsilons is empty"):
        A.basic_composition([])
    with pytest.raises(ValidationError, match="in epsilons"):
        A.basic_composition([0.5, -0.1])
    with pytest.raises(ValidationError, match="in epsilons"):
        A.basic_composition([0.5, math.nan])
    with pytest.raises(ValidationError, match="^rhos is empty"):
        A.odometer_zcdp([], delta_g=1e-5, n=100)
    with pytest.raises(ValidationError, match="^deltas has 1 entries, epsilons has 2"):
        A.basic_composition([0.5, 0.5], [0.1])
    with pytest.raises(ValidationError, match="in deltas"):
        A.basic_composition([0.5], [1.0])


def test_mechanism_and_list_refusals():
    with pytest.raises(ValueError, match="^kind must be one of"):
        A.Mechanism("poisson", epsilon=1.0)
    with pytest.raises(ValueError, match="Mechanism rows"):
        A.compose([0.5], delta=1e-5, rule="basic")
    with pytest.raises(ValueError, match="^rule must be one of"):
        A.compose([A.laplace(0.5)], delta=1e-5, rule="moments")
    with pytest.raises(ValueError, match="approx_dp"):
        A.rdp_curve(A.approx_dp(1.0, 1e-6))
    with pytest.raises(ValueError, match="zCDP"):
        A._pld_for(A.zcdp(0.1), 0.0, 1e-3)
    with pytest.raises(ValueError, match="zCDP"):
        A.pld_profile([A.laplace(1.0), A.zcdp(0.1)], [1e-5])
    assert A.mechanism_rho(A.approx_dp(1.0, 1e-6)) is None


def test_single_mechanism_accepted_and_progress_for_closed_form_rule():
    seen = []
    r = A.compose(A.laplace(0.5, count=3), delta=1e-5, rule="basic", progress=seen.append)
    assert r.valid and r.epsilon == pytest.approx(1.5, rel=1e-15) and r.k == 3
    assert seen == [1.0]


def test_used_up_delta_is_invalid_not_an_error():
    drv = A.advanced_composition_drv(0.1, k=10, delta=1e-5, delta_each=2e-6)  # kδ₀ = 2e-5 > δ
    assert not drv.valid and math.isnan(drv.epsilon) and "δ" in drv.note
    # Π(1−δᵢ) = 0.25 < 1 − δ = 0.9: nothing left for the ε part
    kov = A.kov_optimal_composition([0.1, 0.1], [0.5, 0.5], delta=0.1)
    assert not kov.valid and math.isnan(kov.epsilon) and kov.rule == "kov_optimal"


# --------------------------------------------------------------------------- PLD edges
def test_pld_infinite_epsilon_below_the_point_mass():
    # an (ε, 0.1)-DP row: below δ = 0.1 no finite ε holds
    r = A.pld_epsilon([A.approx_dp(1.0, 0.1)], delta=0.01)
    assert not r.valid and "∞" in r.note


def test_pld_profile_skips_out_of_range_and_infinite():
    p = A.pld_profile([A.approx_dp(1.0, 0.1)], [1e-13, 0.01, 0.5, 1.0], resolution=1e-3)
    assert p["delta"].tolist() == [0.5]
    # hockey stick of the two-point loss ±1 with point mass 0.1 at ∞:
    # δ(ε′) = 0.1 + 0.9·(e − e^{ε′})/(1 + e)  →  ε′ = ln(e − (0.4/0.9)(1 + e)) at δ = 0.5
    want = math.log(math.e - (0.4 / 0.9) * (1 + math.e))
    assert p["epsilon"].iloc[0] == pytest.approx(want, abs=2e-3)
    assert p["epsilon"].iloc[0] >= want - 1e-9  # pessimistic estimate


def test_tree_compose_pairs_neighbours_without_tick():
    class P:
        def __init__(self, s):
            self.s = s

        def compose(self, other):
            return P(f"({self.s}{other.s})")

    # five leaves: (ab)(cd)e → ((ab)(cd))e → (((ab)(cd))e)
    assert A._tree_compose([P(c) for c in "abcde"]).s == "(((ab)(cd))e)"


def test_curve_default_ks_for_a_list():
    # prefixes of [0.1, 0.1, 0.1, 0.2, 0.2]: k = 1..5 (default ks up to the total count 5)
    c = A.composition_curve([A.laplace(0.1, count=3), A.laplace(0.2, count=2)], delta=1e-5, rules=("basic",))
    assert c["k"].tolist() == [1, 2, 3, 4, 5]
    assert c["epsilon"].to_numpy() == pytest.approx([0.1, 0.2, 0.3, 0.5, 0.7], rel=1e-12)


def test_kov_optimal_delta_refuses_too_many_subset_classes():
    # 20 distinct εᵢ: 2²⁰ = 1 048 576 subset classes > 1e6
    with pytest.raises(ValueError, match="subset classes"):
        A.kov_optimal_delta([0.01 * (i + 1) for i in range(20)], epsilon_g=1.0)


def test_discrete_laplace_rho_and_pld_with_sensitivity_two():
    t, sens, delta = 2.0, 2, 0.1
    assert A.mechanism_rho(A.discrete_laplace(t, sensitivity=sens)) == pytest.approx(0.5 * (sens / t) ** 2, rel=1e-15)
    # brute force: P(x) ∝ e^{−|x|/t} on the integers, Q = P shifted by Δ; δ(ε′) = Σ max(0, P − e^{ε′}Q)
    x = np.arange(-400, 401)
    p = np.exp(-np.abs(x) / t)
    p /= p.sum()
    q = np.exp(-np.abs(x - sens) / t)
    q /= q.sum()

    def brute_delta(e):
        return float(np.maximum(0.0, p - math.exp(e) * q).sum())

    lo, hi = 0.0, sens / t  # δ(Δ/t) = 0: pure Δ/t-DP
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if brute_delta(mid) <= delta else (mid, hi)
    r = A.pld_epsilon([A.discrete_laplace(t, sensitivity=sens)], delta=delta)
    assert r.valid and r.epsilon == pytest.approx(hi, abs=1e-3)
    assert r.epsilon >= hi - 1e-9  # pessimistic estimate
