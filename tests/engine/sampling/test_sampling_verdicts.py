"""dpdash.sampling.verdicts: each sentence names the right numbers and the right conclusion.

The numbers fed in and the numbers expected in the text are computed here from the closed forms of paper 1 of
003_4b386133f61617e9.txt (Theorems 2, 3, 6, 7–8, 11) in mpmath, or taken from the paper's text and the spec's worked
examples (shared/specs/sampling_designer.md §9) — never from dpdash.sampling.core.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
from scipy.special import logsumexp

from dpdash.sampling import verdicts as sv

mp.mp.dps = 40


def g2(x) -> str:
    """Two significant figures as the sentences print them (independent of dpdash.epsilon.verdicts.number)."""
    x = float(x)
    s = f"{x:.2g}"
    if "e" in s or "." in s or len(s.lstrip("-")) >= 2:
        return s if "e" not in s else f"{x:.1e}".replace("e-0", "e-")
    return s + ".0"   # one digit: 1 → "1.0"


def srs(eps, q):
    return mp.log1p(q * mp.expm1(eps))


def test_brief_example_ten_percent_sample_turns_one_into_0_16():
    ep = srs(1, mp.mpf("0.1"))   # 0.15857…
    s = sv.simple_verdict(epsilon=1.0, epsilon_population=float(ep), rate=0.1, scheme="srswor", m=1000, n=10_000)
    assert s.startswith("A 10% simple random sample (1,000 of 10,000) turns ε = 1 into ε′ = 0.16 for the population")
    assert "(6.3 times smaller)" in s   # 1 / 0.15857 = 6.306


def test_default_one_percent_names_delta_and_the_shortcut_error():
    ep = srs(1, mp.mpf("0.01"))   # 0.017037
    s = sv.simple_verdict(epsilon=1.0, epsilon_population=float(ep), rate=0.01, scheme="srswor", m=100, n=10_000,
                          delta=1e-6, delta_population=1e-8, shortcut=0.01)
    assert f"ε′ = {g2(ep)}" in s and g2(ep) == "0.017"
    assert f"({round(float(1 / ep))} times smaller)" in s   # 59
    assert "δ = 10⁻⁶ into δ′ = 10⁻⁸" in s
    off = 1 - 0.01 / ep    # 41%: q·ε understates the true ε′
    assert f"is {round(float(100 * off))}% too optimistic" in s


def test_sampling_everyone_is_no_amplification():
    s = sv.simple_verdict(epsilon=2.0, epsilon_population=2.0, rate=1.0, scheme="poisson")
    assert "gives no amplification" in s and "ε = 2 on the sample is ε′ = 2.0" in s


def test_with_replacement_says_delta_is_not_computed():
    s = sv.simple_verdict(epsilon=1.0, epsilon_population=0.1, rate=0.05, scheme="srswr", m=500, n=10_000)
    assert s.startswith("Drawing 500 times with replacement from 10,000") and "not for release decisions" in s


def _theorem3(n, mu, sd, eps):
    """Theorem 3 with t ∝ exp(−(m−μ)²/2σ²) on {0,…,n}: tilted mean in log space (numpy), bounds in mpmath."""
    m = np.arange(n + 1, dtype=float)
    logw = -((m - mu) ** 2) / (2 * sd**2) + eps * m
    tm = float(np.exp(logsumexp(logw, b=m) - logsumexp(logw)))
    frac = mp.mpf(tm) / n
    upper = mp.log1p(frac * mp.expm1(eps))
    lower = -mp.log1p(-frac * (-mp.expm1(-eps)))
    mean = float(np.exp(logsumexp(-((m - mu) ** 2) / (2 * sd**2), b=m) - logsumexp(-((m - mu) ** 2) / (2 * sd**2))))
    return mean, tm, float(lower), float(upper)


def test_figure2_wide_spread_is_close_to_epsilon_as_the_paper_says():
    # paper 1 §3: "when n = 10,000 and σ ≈ 800, the privacy guarantee … is already close to ε = 0.01"
    mean, tm, lo, up = _theorem3(10_000, 5_000, 800, 0.01)
    s = sv.random_size_verdict(epsilon=0.01, n=10_000, mean_size=mean, tilted_mean=tm, lower=lo, upper=up)
    assert "gives almost no amplification" in s and f"weighted mean size {tm:,.0f}" in s
    assert f"{g2(lo)}" in s and f"{g2(up)}" in s


def test_figure2_narrow_spread_halves_epsilon():
    # paper 1 §3: "if t is highly concentrated then we expect the privacy guarantee … to be ≈ ε/2"
    mean, tm, lo, up = _theorem3(10_000, 5_000, 10, 0.01)
    s = sv.random_size_verdict(epsilon=0.01, n=10_000, mean_size=mean, tilted_mean=tm, lower=lo, upper=up)
    assert s.startswith("A random sample size averaging 5,000 of 10,000 turns ε = 0.01 into ε′ = 0.0050")
    assert "(2 times smaller)" in s   # 0.01 / 0.005025 = 1.99


def _thm6(eps, r):
    z = mp.expm1(2 * eps)
    return mp.log1p(2 * r * z) + mp.log1p(r * z)


def _rstar(eps):
    e = mp.mpf(eps)
    return 2 * mp.expm1(e) / (mp.expm1(2 * e) * (mp.sqrt(1 + 8 * mp.e**e) + 3))


def test_rounding_below_the_crossover_sp9():
    ep, rs = _thm6(mp.mpf("0.3"), mp.mpf("0.02")), _rstar(0.3)    # spec SP9: 0.0486642815, r* 0.1322644588
    assert float(ep) == pytest.approx(0.0486642815, abs=1e-9) and float(rs) == pytest.approx(0.1322644588, abs=1e-9)
    s = sv.rounding_verdict(epsilon=0.3, rate=0.02, epsilon_population=float(ep), crossover=float(rs))
    assert s.startswith("Proportional sampling at r = 2% with randomised rounding turns ε = 0.3 into at most "
                        f"ε′ = {g2(ep)} (Theorem 6)")


def test_rounding_above_the_crossover_says_no_gain_and_the_fix():
    ep, rs = _thm6(mp.mpf("0.3"), mp.mpf("0.2")), _rstar(0.3)
    assert ep > 0.3
    s = sv.rounding_verdict(epsilon=0.3, rate=0.2, epsilon_population=float(ep), crossover=float(rs))
    assert "no guaranteed amplification" in s and f"up to {g2(ep)}" in s and "below r* = 13%" in s


def _cluster_B(eps, q, N):
    eps, q = mp.mpf(eps), mp.mpf(q)
    return mp.log1p(q / (q + (1 - q) * mp.e ** (-N * eps)) * mp.expm1(eps))


def test_brief_example_large_clusters_give_no_amplification():
    # 10 of 100 clusters of 20 records, ε = 1: Theorems 7 and 8 with N = 40 (equal sizes)
    b = _cluster_B(1, mp.mpf("0.1"), 40)
    s = sv.cluster_verdict(epsilon=1.0, n_drawn=10, n_clusters=100, worst_lower=float(b), worst_upper=float(b),
                           naive_srs=float(srs(1, mp.mpf("0.1"))), equal_size=20)
    assert s.startswith("Cluster sampling of 10 of 100 clusters (20 records each) gives no amplification: "
                        "ε′ = 1.0 for ε = 1.")
    assert "10% simple random sample would wrongly claim ε′ = 0.16" in s


def test_small_clusters_keep_the_gain_sp14():
    b = _cluster_B("0.2", mp.mpf("0.1"), 6)    # spec SP14: 0.0579530708; naive 0.0218987385
    assert float(b) == pytest.approx(0.0579530708, abs=1e-9)
    naive = srs(mp.mpf("0.2"), mp.mpf("0.1"))
    s = sv.cluster_verdict(epsilon=0.2, n_drawn=5, n_clusters=50, worst_lower=float(b), worst_upper=float(b),
                           naive_srs=float(naive), equal_size=3)
    assert f"turns ε = 0.2 into ε′ = {g2(b)}" in s and "(3.5 times smaller)" in s   # 0.2 / 0.05795
    assert f"would wrongly claim ε′ = {g2(naive)}" in s


def test_unequal_clusters_give_an_interval_sp15():
    # spec SP15: sizes 3, 8, 15, 40, ε = 0.05, one drawn: worst lower 0.0372900, worst upper 0.0421208
    s = sv.cluster_verdict(epsilon=0.05, n_drawn=1, n_clusters=4, worst_lower=0.0372900, worst_upper=0.0421208,
                           naive_srs=0.0127363)
    assert "ε′ between 0.037 and 0.042" in s


def test_stratified_sp18_names_theorem11_and_the_neyman_shift():
    N = 4250
    ep = _thm6(1, mp.mpf(120) / N)
    # spec SP18: the worst addition moves the rounded Neyman sizes by ‖Δ‖₁ = 10, read at ε·10 = 10
    s = sv.stratified_verdict(epsilon=1.0, m=120, population=N, epsilon_population=float(ep), covered=True,
                              shift_total=10, shift_loss=10.0)
    assert s.startswith(f"Proportional allocation of 120 of 4,250 (2.8%) with randomised rounding turns ε = 1 into "
                        f"ε′ = {g2(ep)} (Theorem 11).")
    assert "move the sample sizes by 10 in total, which released counts reveal at ε′ = 10" in s


def test_stratified_not_covered_and_no_shift():
    s = sv.stratified_verdict(epsilon=1.0, m=10, population=4250, epsilon_population=0.1, covered=False,
                              shift_total=0, shift_loss=0.0)
    assert "has no guarantee here" in s and "cannot change the Neyman sample sizes" in s


def test_allocation_verdict_sp19():
    # spec SP19 totals: privacy-aware 3.5097822035, Neyman 5.1341619627, proportional 4.4500832275
    s = sv.allocation_verdict({"neyman": 5.1341619627, "proportional": 4.4500832275, "privacy_aware": 3.5097822035})
    assert s == ("The privacy-aware allocation gives the smallest error of the private mean (variance 3.5; "
                 "Neyman 5.1, proportional 4.5).")
    assert sv.allocation_verdict({}) is None


def test_guidance_sample_too_large_and_little_gain():
    assert "Lower m or raise n" in sv.sample_exceeds_population(m=20_000, n=10_000)
    assert sv.sample_exceeds_population(m=100, n=10_000) is None
    w = sv.little_gain_guidance(epsilon=1.0, epsilon_population=0.95, fix="Lower the rate.")
    assert w.startswith("Almost no amplification: the population gets ε′ = 0.95") and w.endswith("Lower the rate.")
    assert sv.little_gain_guidance(epsilon=1.0, epsilon_population=0.5, fix="x") is None


def test_formatting_helpers():
    assert [sv.pct(x) for x in (0.1, 0.0283, 1e-4, 1.0)] == ["10%", "2.8%", "0.01%", "100%"]
    assert [sv.eps_text(x) for x in (1.0, 0.05, 0.3, 10.0)] == ["1", "0.05", "0.3", "10"]


def test_two_stage_cluster_verdict_states_the_two_stage_bound():
    """Issue 22: c = 30, k = 40, ℓ = 4, ε = 0.5, r_w = 0.05 — the verdict leads with the design's bound (SP17)."""
    eps, q = mp.mpf("0.5"), mp.mpf(4) / 40
    eps_w = mp.log1p(mp.mpf("0.05") * mp.expm1(eps))
    two = mp.log1p(q / (q + (1 - q) * mp.exp(-60 * eps_w)) * mp.expm1(eps_w))
    single = mp.log1p(q / (q + (1 - q) * mp.exp(-60 * eps)) * mp.expm1(eps))
    s = sv.cluster_verdict(epsilon=0.5, n_drawn=4, n_clusters=40, worst_lower=float(single),
                           worst_upper=float(single), naive_srs=float(srs(eps, q)), equal_size=30, within_rate=0.05,
                           two_stage=float(two))
    first, rest = s.split(". ", 1)
    assert "keeping 5% of each drawn cluster" in first and f"at most ε′ = {g2(two)}" in first, s
    assert "no amplification" not in first
    assert f"no amplification: ε′ = {g2(single)}" in rest   # what r_w = 1 would give, named as such


def test_census_stratified_verdict_is_epsilon_itself():
    s = sv.stratified_verdict(epsilon=1.0, m=4250, population=4250, epsilon_population=1.0, covered=True,
                              shift_total=0, shift_loss=0.0)
    assert s.startswith("Sampling all 4,250 units is a census") and "ε′ = ε = 1 (no amplification)" in s, s
