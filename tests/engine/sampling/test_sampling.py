"""Engine tests for ``dpdash/sampling/core.py``.

Expected numbers come from the spec's public worked examples (shared/specs/sampling_designer.md §9), the
paper (003_4b386133f61617e9.txt, paper 1), brute force, scipy, or dp-accounting — never from the code under test.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpdash.sampling import core as sp

# ------------------------------------------------------------------------------------------------------
# §9 worked examples
# ------------------------------------------------------------------------------------------------------


def test_sp1_srswor():
    a = sp.amplify_srswor(epsilon=0.5, m=500, n=20000, delta=1e-6)
    assert a.epsilon_population == pytest.approx(0.0160879243, abs=1e-9)
    assert a.delta_population == pytest.approx(2.5e-8, abs=1e-15)
    assert a.epsilon_paper_approx == pytest.approx(0.0125, abs=1e-12)
    assert a.neighbour == "bounded" and a.status == "paper" and "Theorem 2" in a.source


def test_sp2_srswor():
    a = sp.amplify_srswor(epsilon=2, m=2000, n=10000, delta=1e-5)
    assert a.epsilon_population == pytest.approx(0.8232149906, abs=1e-9)
    assert a.delta_population == pytest.approx(2e-6, abs=1e-15)
    assert a.epsilon_paper_approx == pytest.approx(0.4, abs=1e-12)


def test_sp3_calibrate_srswor():
    c = sp.calibrate_srswor(epsilon_target=0.5, rate=0.05)
    assert c.epsilon_sample == pytest.approx(2.6372289029, abs=1e-9)
    assert c.epsilon_sample_paper_approx == pytest.approx(10.0, abs=1e-12)
    assert c.noise_scale_per_sensitivity == pytest.approx(1 / 2.6372289029, rel=1e-9)


def test_sp4_large_epsilon_shortcut_wrong():
    a = sp.amplify_srswor(epsilon=50, m=2, n=100)
    assert a.epsilon_population == pytest.approx(46.0879769946, abs=1e-8)
    assert a.epsilon_paper_approx == pytest.approx(1.0, abs=1e-12)


def test_sp5_poisson():
    a = sp.amplify_poisson(epsilon=2, rate=0.04, delta=1e-6)
    assert a.epsilon_population == pytest.approx(0.2275834754, abs=1e-9)
    assert a.delta_population == pytest.approx(4e-8, abs=1e-15)
    assert a.status == "external" and a.neighbour == "unbounded"


def test_sp6_lemma16():
    assert sp.lemma16_bound(epsilon=0.4, m=12, m_prime=15, n=149) == pytest.approx(1.2935297542, abs=1e-9)
    assert sp.lemma16_bound(epsilon=0.4, m=12, m_prime=12, n=149) == pytest.approx(0.0935297542, abs=1e-9)


@pytest.mark.parametrize("sd, tm, lower, upper", [
    (20, 1020.000, 0.0251875534, 0.0258122384),
    (100, 1499.99986, 0.0372636746, 0.0377324125),
])
def test_sp7ab_truncnorm(sd, tm, lower, upper):
    b = sp.amplify_random_size(sp.size_pmf_truncnorm(2000, mean=1000, sd=sd), epsilon=0.05)
    assert b.tilted_mean == pytest.approx(tm, abs=1e-3)
    assert b.epsilon_lower == pytest.approx(lower, abs=1e-8)
    assert b.epsilon_upper == pytest.approx(upper, abs=1e-8)
    assert b.n == 2000 and "Theorem 3" in b.source


def test_sp7c_point():
    b = sp.amplify_random_size(sp.size_pmf_point(2000, m=500), epsilon=0.05)
    assert b.epsilon_lower == pytest.approx(0.0122675839, abs=1e-9)
    assert b.epsilon_upper == pytest.approx(0.0127363217, abs=1e-9)
    # a point mass is Theorem 2 at q = m/n
    assert b.epsilon_upper == pytest.approx(math.log1p(0.25 * math.expm1(0.05)), abs=1e-15)


def test_sp7d_uniform():
    b = sp.amplify_random_size(sp.size_pmf_uniform(2000, low=400, high=600), epsilon=0.05)
    assert b.tilted_mean == pytest.approx(580.5045142, abs=1e-6)
    assert b.epsilon_lower == pytest.approx(0.0142569182, abs=1e-8)
    assert b.epsilon_upper == pytest.approx(0.0147719076, abs=1e-8)


def test_sp7e_mixture_destroys_amplification():
    base = sp.size_pmf_point(2000, m=500)
    b = sp.amplify_random_size(sp.size_pmf_mixture(base, p_full=1e-6), epsilon=0.05)
    assert b.epsilon_upper == pytest.approx(0.05, abs=1e-8)
    b = sp.amplify_random_size(sp.size_pmf_mixture(base, p_full=1e-30), epsilon=0.05)
    assert b.epsilon_upper == pytest.approx(0.0499022780, abs=1e-8)
    assert b.epsilon_lower == pytest.approx(0.0498972780, abs=1e-8)


def test_sp8_direct_lower_bound():
    t = np.arange(13) + 1.0
    t /= t.sum()
    direct = sp.random_size_lower_bound_direct(t, epsilon=0.7)
    closed = sp.amplify_random_size(t, epsilon=0.7).epsilon_lower
    assert direct == pytest.approx(0.6327470734, abs=1e-9)
    assert abs(direct - closed) <= 1e-12


def test_sp9_theorem6_and_crossover():
    a = sp.amplify_randomized_rounding(epsilon=0.3, rate=0.02)
    assert a.epsilon_population == pytest.approx(0.0486642815, abs=1e-9)
    assert a.epsilon_paper_approx == pytest.approx(0.036, abs=1e-12)
    assert sp.randomized_rounding_crossover(epsilon=0.3) == pytest.approx(0.1322644588, abs=1e-9)
    assert any("1/r" in w for w in a.warnings)


def test_sp10_calibrate_rounding():
    c = sp.calibrate_randomized_rounding(epsilon_target=0.5, rate=0.02)
    assert c.epsilon_sample == pytest.approx(1.1797963752, abs=1e-9)
    assert c.epsilon_sample_paper_approx == pytest.approx(4.1667, abs=1e-4)
    assert sp.calibrate_srswor(epsilon_target=0.5, rate=0.02).epsilon_sample == pytest.approx(3.5096350640, abs=1e-9)
    back = sp.amplify_randomized_rounding(epsilon=c.epsilon_sample, rate=0.02).epsilon_population
    assert back == pytest.approx(0.5, rel=1e-12)


def test_sp11_rounding_pmfs_and_size_channel():
    d24 = sp.rounding_size_pmf(24, rate=0.1, method="deterministic")
    d25 = sp.rounding_size_pmf(25, rate=0.1, method="deterministic")
    assert d24 == {2: 1.0} and d25 == {3: 1.0}
    assert sp.size_channel_loss(d24, d25, epsilon=0.5) == pytest.approx(0.5, abs=1e-9)
    r24 = sp.rounding_size_pmf(24, rate=0.1, method="randomized")
    r25 = sp.rounding_size_pmf(25, rate=0.1, method="randomized")
    assert r24.keys() == {2, 3} and r24[2] == pytest.approx(0.6) and r24[3] == pytest.approx(0.4)
    assert r25[2] == pytest.approx(0.5) and r25[3] == pytest.approx(0.5)
    assert sp.size_channel_loss(r24, r25, epsilon=0.5) == pytest.approx(0.0502241109, abs=1e-9)


def test_paper_example_14_15_deterministic():
    # [a] §4.3: |P| = 14, |P'| = 15, r = 1/10: one case vs two cases
    assert sp.rounding_size_pmf(14, rate=0.1, method="deterministic") == {1: 1.0}
    assert sp.rounding_size_pmf(15, rate=0.1, method="deterministic") == {2: 1.0}


def test_half_rounds_up_not_to_even():
    # floor(x + 0.5): 2.5 → 3 (Python's round would give 2)
    assert sp.rounding_size_pmf(5, rate=0.5, method="deterministic") == {3: 1.0}


def test_sp12_worst_size_channel():
    w = sp.worst_size_channel_loss(epsilon=0.5, rate=0.02, method="randomized", n_min=50, n_max=1999)
    assert w.loss == pytest.approx(0.0128909786, abs=1e-10)
    assert w.loss == pytest.approx(math.log1p(0.02 * math.expm1(0.5)), abs=1e-12)
    assert w.population_size % 50 == 0


def test_sp13_size_channel_shift():
    assert sp.size_channel_loss({40: 1}, {47: 1}, epsilon=0.25) == pytest.approx(1.75, abs=1e-12)


def test_size_channel_against_dense_grid():
    # independent check of the "support points and ±∞" argument: dense grid of y with scipy's Laplace pdf
    p, pp, eps = {3: 0.3, 5: 0.7}, {4: 0.6, 6: 0.4}, 0.8
    y = np.linspace(-40, 50, 200001)
    f = sum(w * stats.laplace.pdf(y, loc=a, scale=1 / eps) for a, w in p.items())
    g = sum(w * stats.laplace.pdf(y, loc=a, scale=1 / eps) for a, w in pp.items())
    grid = np.max(np.abs(np.log(f) - np.log(g)))
    assert sp.size_channel_loss(p, pp, epsilon=eps) == pytest.approx(grid, abs=1e-6)


def test_sp14_cluster_bound():
    assert sp.cluster_bound(epsilon=0.2, n_clusters=50, n_drawn=5, n_pair=6) == pytest.approx(0.0579530708, abs=1e-9)
    assert math.log1p(0.1 * math.expm1(0.2)) == pytest.approx(0.0218987385, abs=1e-9)


def test_sp15_cluster_bounds():
    b = sp.cluster_bounds([3, 8, 15, 40], epsilon=0.05, n_drawn=1)
    np.testing.assert_allclose(b.lower, [0.0186007, 0.0186007, 0.0228354, 0.0372900], atol=1e-7)
    np.testing.assert_allclose(b.upper, [0.0372900, 0.0395116, 0.0421208, 0.0421208], atol=1e-7)
    assert b.worst_upper == pytest.approx(0.0421208, abs=1e-7)
    assert b.worst_lower == pytest.approx(0.0372900, abs=1e-7)
    assert b.naive_srs == pytest.approx(0.0127363, abs=1e-7)
    assert b.rate_clusters == 0.25


@pytest.mark.parametrize("t, expected", [(0, 0.1219912833), (1.5, 0.2947432902), (5, 0.4896199253)])
def test_sp16_theorem9(t, expected):
    v = sp.cluster_test_bound(epsilon_conditional=0.5, epsilon_test=t, n_clusters=100, n_drawn=20)
    assert v == pytest.approx(expected, abs=1e-9)


def test_theorem9_reduces_to_theorems_7_8():
    # ε_T = N·ε and ε_c = ε give B(ε, q, N)
    v = sp.cluster_test_bound(epsilon_conditional=0.2, epsilon_test=6 * 0.2, n_clusters=50, n_drawn=5)
    assert v == pytest.approx(0.0579530708, abs=1e-9)


def test_theorem9_warns_when_conditional_exceeds_epsilon():
    with pytest.warns(UserWarning):
        sp.cluster_test_bound(epsilon_conditional=0.9, epsilon_test=1, n_clusters=10, n_drawn=2, epsilon=0.5)


def test_sp17_two_stage():
    v = sp.two_stage_cluster_upper([30] * 40, epsilon=0.5, n_drawn=4, within_rate=0.05)
    assert v == pytest.approx(0.0138503030, abs=1e-9)
    assert math.log1p(0.05 * math.expm1(0.5)) == pytest.approx(0.0319211200, abs=1e-9)
    one = sp.two_stage_cluster_upper([30] * 40, epsilon=0.5, n_drawn=4, within_rate=1)
    assert one == pytest.approx(0.5, abs=1e-12)


def test_sp18_neyman_worst_shift():
    s = sp.neyman_worst_shift([3000, 1000, 250], [4, 25, 400], [2, 12, 150], m=120,
                              bounds=[(0, 10), (10, 100), (100, 2000)])
    np.testing.assert_allclose(s.before, [12.972973, 25.945946, 81.081081], atol=1e-5)
    np.testing.assert_array_equal(s.before_rounded, [13, 26, 81])
    assert s.stratum == 2 and s.value == pytest.approx(2000)
    assert s.sd_after == pytest.approx(180.468633, abs=1e-5)
    np.testing.assert_allclose(s.after, [11.374834, 22.749668, 85.875498], atol=1e-5)
    np.testing.assert_allclose(s.delta, [-1.598139, -3.196278, 4.794417], atol=1e-5)
    assert s.l1 == pytest.approx(9.588834, abs=1e-5)
    np.testing.assert_array_equal(s.after_rounded, [11, 23, 86])
    np.testing.assert_array_equal(s.delta_rounded, [-2, -3, 5])
    assert s.l1_rounded == 10 and s.linf_rounded == 5


def test_sp18_outside_bounds_is_at_least_as_large():
    args = ([3000, 1000, 250], [4, 25, 400], [2, 12, 150])
    kw = dict(m=120, bounds=[(0, 10), (10, 100), (100, 2000)])
    inside = sp.neyman_worst_shift(*args, **kw)
    outside = sp.neyman_worst_shift(*args, **kw, within_bounds=False)
    assert outside.l1 >= inside.l1 - 1e-12


def test_sp19_privacy_aware():
    alloc, v = sp.privacy_aware_allocation([40, 25, 15], [2, 6, 15], m=24, value_max=30, epsilon=1.0)
    np.testing.assert_array_equal(alloc, [9, 7, 8])
    assert v.total == pytest.approx(3.5097822035, abs=1e-8)
    assert v.sampling.sum() == pytest.approx(0.9091440352, abs=1e-8)
    assert v.noise.sum() == pytest.approx(2.6006381683, abs=1e-8)
    np.testing.assert_allclose(v.epsilon_sample, [2.1560331, 1.9652534, 1.4402565], atol=1e-7)
    df = sp.compare_allocations([40, 25, 15], [2, 6, 15], m=24, value_max=30, epsilon=1.0)
    assert df.loc["neyman", "allocation"] == [4, 8, 12]
    assert df.loc["neyman", "total"] == pytest.approx(5.1341619627, abs=1e-8)
    assert df.loc["proportional", "allocation"] == [12, 8, 4]
    assert df.loc["proportional", "total"] == pytest.approx(4.4500832275, abs=1e-8)
    assert df.loc["privacy_aware", "allocation"] == [9, 7, 8]


@pytest.mark.parametrize("e, totals, pa", [
    (0.5, (737.3532, 358.8908, 240.6699), [153, 85, 40, 22]),
    (2.0, (287.4824, 133.5323, 75.0199), [153, 83, 39, 25]),
])
def test_sp20_compare(e, totals, pa):
    N, S = [4000, 1500, 400, 100], [8, 30, 150, 800]
    ney = sp.neyman_allocation(N, S, m=300)
    np.testing.assert_allclose(ney.continuous, [46.715328, 65.693431, 87.591241, 100], atol=1e-5)
    np.testing.assert_array_equal(ney.rounded, [47, 66, 87, 100])
    np.testing.assert_array_equal(ney.take_all, [False, False, False, True])
    df = sp.compare_allocations(N, S, m=300, value_max=5000, epsilon=e)
    assert df.loc["proportional", "allocation"] == [200, 75, 20, 5]
    assert df.loc["privacy_aware", "allocation"] == pa
    np.testing.assert_allclose(df.loc[["neyman", "proportional", "privacy_aware"], "total"], totals, atol=1e-3)


def test_cbp_printed_vectors_not_renormalised():
    c = sp.cbp_example()
    assert c.m == 10_000
    assert int(c.allocation_p.sum()) == 10004 and int(c.allocation_p_prime.sum()) == 10005
    assert int(np.abs(c.allocation_p_prime - c.allocation_p).max()) == 19


# ------------------------------------------------------------------------------------------------------
# Independent cross-checks (dp-accounting, scipy brute force)
# ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("eps, q", [(2.0, 0.04), (0.5, 0.3), (1.0, 0.01)])
def test_poisson_matches_dp_accounting_pld(eps, q):
    import dp_accounting
    from dp_accounting.pld import PLDAccountant

    acc = PLDAccountant()   # add/remove relation
    acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.LaplaceDpEvent(noise_multiplier=1 / eps)))
    assert sp.amplify_poisson(epsilon=eps, rate=q).epsilon_population == pytest.approx(
        acc.get_epsilon(1e-12), abs=2e-3)


def test_srswor_pld_support_documented():
    # dp-accounting 0.6's PLD accountant does not support sampling without replacement (replace-one);
    # if a later pin adds it, this test fails and the cross-check below should be switched to it.
    import dp_accounting
    from dp_accounting.pld import PLDAccountant

    acc = PLDAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    ev = dp_accounting.SampledWithoutReplacementDpEvent(1000, 40, dp_accounting.LaplaceDpEvent(noise_multiplier=0.5))
    with pytest.raises(dp_accounting.UnsupportedEventError):
        acc.compose(ev)


def _gaussian_delta(eps: float, sigma: float) -> float:
    """δ(ε) of the Gaussian mechanism, sensitivity 1, noise σ: Balle & Wang 2018 (ICML), Theorem 8 (exact)."""
    return stats.norm.cdf(0.5 / sigma - eps * sigma) - math.exp(eps) * stats.norm.cdf(-0.5 / sigma - eps * sigma)


@pytest.mark.parametrize("sigma, m, eps0", [(1.0, 1000, 4.0), (1.0, 5000, 6.0), (2.0, 2000, 2.0), (2.0, 5000, 3.0),
                                            (4.0, 1000, 1.0)])
def test_srswor_within_dp_accounting_rdp_bound(sigma, m, eps0):
    """Theorem 2 on a Gaussian base, sandwiched by dp-accounting's RDP bound for the same sampled event.

    dp-accounting's RdpAccountant supports SampledWithoutReplacementDpEvent (replace-one, q = m/n; Wang, Balle &
    Kasiviswanathan 2019, Thm 27), for Gaussian subevents only. The Gaussian with noise σ is (ε0, δ0)-DP with δ0
    exact (Balle & Wang 2018); Theorem 2 turns that into (ε′, q·δ0) for the sampled mechanism. The RDP route gives
    a second valid ε at the same δ′. Both are upper bounds, so this is not an exactness test (the exact one is the
    scipy brute force below), but Theorem 2 is the tightest bound that holds for every (ε0, δ0)-DP mechanism while
    the RDP → (ε, δ) conversion loses a log(1/δ)/(α − 1) term, so in this regime (q = 0.1–0.5, δ′ = 1e-11–1e-4)
    ours lies between RDP/1.5 and RDP (observed ratios 1.08–1.49). An engine that overclaimed with the q·ε
    shortcut (RDP ≥ 1.7 × it here) or slipped to 2ε as in Lemma 16 (above RDP) would fall outside; δ′ = q·δ0 is
    asserted directly. At small q a single-release RDP bound is many times looser, so it is not compared there.
    """
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    n = 10_000
    delta0 = _gaussian_delta(eps0, sigma)
    ours = sp.amplify_srswor(epsilon=eps0, m=m, n=n, delta=delta0)
    assert ours.delta_population == pytest.approx(m / n * delta0, rel=1e-12)
    acc = RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    acc.compose(dp_accounting.SampledWithoutReplacementDpEvent(n, m, dp_accounting.GaussianDpEvent(sigma)))
    rdp_eps = acc.get_epsilon(ours.delta_population)
    assert ours.epsilon_population <= rdp_eps
    assert rdp_eps <= 1.5 * ours.epsilon_population


def test_srswor_rdp_support_documented():
    # Why the RDP cross-check above uses a Gaussian base: dp-accounting 0.6's RdpAccountant accepts sampling
    # without replacement only under replace-one and only over Gaussian subevents (no Laplace).
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    replace_one = RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    with pytest.raises(dp_accounting.UnsupportedEventError):
        replace_one.compose(dp_accounting.SampledWithoutReplacementDpEvent(
            1000, 40, dp_accounting.LaplaceDpEvent(noise_multiplier=0.5)))
    with pytest.raises(dp_accounting.UnsupportedEventError):
        RdpAccountant().compose(dp_accounting.SampledWithoutReplacementDpEvent(
            1000, 40, dp_accounting.GaussianDpEvent(1.0)))   # add/remove relation


@pytest.mark.parametrize("eps, m, n", [(2.0, 40, 1000), (0.5, 30, 60), (1.0, 7, 20)])
def test_srswor_matches_brute_force_hypergeometric(eps, m, n):
    # Counting query + Lap(1/ε) on an SRSWOR sample; P has no 1s, P' has one 0 replaced by 1.
    # The count under P' is hypergeometric (scipy); the worst log density ratio is Theorem 2's tight value.
    y = np.linspace(-30, 31, 120001)
    k = np.arange(0, 2)
    w = stats.hypergeom(n, 1, m).pmf(k)
    f_p = stats.laplace.pdf(y, loc=0, scale=1 / eps)
    f_pp = sum(wk * stats.laplace.pdf(y, loc=kk, scale=1 / eps) for kk, wk in zip(k, w))
    brute = np.max(np.abs(np.log(f_pp) - np.log(f_p)))
    assert sp.amplify_srswor(epsilon=eps, m=m, n=n).epsilon_population == pytest.approx(brute, abs=1e-9)


def test_theorem6_above_worst_size_channel():
    for eps in (0.1, 0.5, 2.0):
        for r in (0.01, 0.05, 0.2):
            w = sp.worst_size_channel_loss(epsilon=eps, rate=r, method="randomized", n_max=int(math.ceil(1 / r)) + 300)
            assert w.loss <= sp.amplify_randomized_rounding(epsilon=eps, rate=r).epsilon_population


def test_deterministic_rounding_loses_full_epsilon():
    w = sp.worst_size_channel_loss(epsilon=0.7, rate=0.1, method="deterministic", n_max=200)
    assert w.loss == pytest.approx(0.7, abs=1e-12)


def test_truncnorm_curve_matches_full_pmf():
    sds = [1.0, 7.5, 80.0, 400.0, 2000.0, 9000.0]
    out = sp.truncnorm_tilted_means(5000, mean=2500, sds=sds, epsilon=0.01)
    for i, s in enumerate(sds):
        pmf = sp.size_pmf_truncnorm(5000, mean=2500, sd=s)
        # direct Python-float sum over the whole support, no windowing
        m = np.arange(5001)
        assert out[i, 0] == pytest.approx(float((pmf * m).sum()), rel=1e-12)
        lw = np.log(np.where(pmf > 0, pmf, 1e-300)) + 0.01 * m
        w = np.exp(lw - lw.max())
        assert out[i, 1] == pytest.approx(float((w * m).sum() / w.sum()), rel=1e-12)


def test_random_size_tilted_mean_brute_force():
    # exact rational arithmetic-free check: direct sum with e^{εm} for a small support
    pmf = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
    eps = 0.4
    w = pmf * np.exp(eps * np.arange(5))
    assert sp.tilted_mean(pmf, epsilon=eps) == pytest.approx(float((w * np.arange(5)).sum() / w.sum()), rel=1e-14)


def test_proportional_allocation_theorem11():
    pa = sp.proportional_allocation([1000, 400, 30], rate=0.02, epsilon=0.3, rng=0)
    assert not pa.theorem11_applies     # 0.02·30 = 0.6 < 1
    assert any("stratum 2" in w for w in pa.amplification.warnings)
    assert pa.amplification.epsilon_population == pytest.approx(0.0486642815, abs=1e-9)
    assert pa.amplification.neighbour == "stratified-unbounded"
    ok = sp.proportional_allocation([1000, 400, 60], rate=0.02, epsilon=0.3, rng=1)
    assert ok.theorem11_applies
    np.testing.assert_allclose(ok.expected, [20, 8, 1.2])
    assert ok.support[2] == pytest.approx({1: 0.8, 2: 0.2})
    assert ok.draw[0] == 20 and ok.draw[1] == 8 and ok.draw[2] in (1, 2)


def test_proportional_draw_frequencies():
    g = np.random.default_rng(5)
    draws = np.array([sp.proportional_allocation([75], rate=0.1, epsilon=1, rng=g).draw[0] for _ in range(4000)])
    # 7.5 → 8 with probability 0.5 (binomial test, independent of the engine)
    assert stats.binomtest(int((draws == 8).sum()), 4000, 0.5).pvalue > 1e-4
    assert set(np.unique(draws)) <= {7, 8}


def test_proportional_deterministic_degrades():
    pa = sp.proportional_allocation([24, 50], rate=0.1, epsilon=0.5, method="deterministic")
    assert pa.draw is None and not pa.theorem11_applies
    assert pa.amplification.epsilon_population > 0.5
    assert pa.support[0] == {2: 1.0}


def test_degradation():
    d = sp.degradation_loss([-2, -3, 5], epsilon=0.1)
    assert d.l1 == 10 and d.linf == 5 and d.linf_index == 2
    assert d.loss_all_counts == pytest.approx(1.0) and d.loss_one_count == pytest.approx(0.5)


def test_add_record_matches_numpy():
    rng = np.random.default_rng(3)
    x = rng.normal(size=37)
    before = sp.add_record([37, 5], [x.mean(), 0.0], [x.std(), 1.0], stratum=0, value=4.2)
    y = np.append(x, 4.2)
    assert before.N_h[0] == 38 and before.mean_h[0] == pytest.approx(y.mean(), rel=1e-13)
    assert before.sd_h[0] == pytest.approx(y.std(ddof=0), rel=1e-12)
    assert before.sd_h[1] == 1.0


def test_summarize_frame():
    df = pd.DataFrame({"s": ["a", "a", "b", "b", "b", None], "c": [1, 1, 2, 3, 3, 3],
                       "v": [1.0, 3.0, 2.0, 4.0, 6.0, 1.0]})
    fs = sp.summarize_frame(df, stratum_col="s", cluster_col="c", value_col="v")
    assert fs.n == 5 and fs.dropped == 1
    st_ = fs.strata.set_index("stratum")
    assert st_.loc["a", "N_h"] == 2 and st_.loc["b", "mean_h"] == pytest.approx(4.0)
    assert st_.loc["b", "sd_h"] == pytest.approx(np.std([2, 4, 6]))
    assert st_.loc["b", "min_h"] == 2 and st_.loc["b", "max_h"] == 6
    assert fs.cluster_sizes.to_dict() == {1: 2, 2: 1, 3: 2}
    fs1 = sp.summarize_frame(df, stratum_col="s", value_col="v", ddof=1)
    assert fs1.strata.set_index("stratum").loc["b", "sd_h"] == pytest.approx(np.std([2, 4, 6], ddof=1))


@pytest.mark.parametrize("kwargs, match", [
    (dict(stratum_col="zzz"), "not in the file"),
    (dict(value_col="t"), "numeric"),
])
def test_summarize_frame_errors(kwargs, match):
    df = pd.DataFrame({"s": ["a", "b"], "t": ["x", "y"]})
    with pytest.raises(ValueError, match=match):
        sp.summarize_frame(df, **kwargs)


def test_summarize_frame_no_rows_left():
    with pytest.raises(ValueError, match="no rows"):
        sp.summarize_frame(pd.DataFrame({"s": [None, None]}), stratum_col="s")


# ------------------------------------------------------------------------------------------------------
# Validation
# ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, match", [
    (lambda: sp.amplify_srswor(epsilon=-1, m=1, n=2), "epsilon"),
    (lambda: sp.amplify_srswor(epsilon=float("nan"), m=1, n=2), "epsilon"),
    (lambda: sp.amplify_srswor(epsilon=1, m=3, n=2), "m must"),
    (lambda: sp.amplify_srswor(epsilon=1, m=1, n=0), "n must"),
    (lambda: sp.amplify_srswor(epsilon=1, m=1, n=2, delta=2), "delta"),
    (lambda: sp.calibrate_srswor(epsilon_target=0, rate=0.1), "epsilon_target"),
    (lambda: sp.amplify_poisson(epsilon=1, rate=0), "rate"),
    (lambda: sp.amplify_poisson(epsilon=1, rate=1.5), "rate"),
    (lambda: sp.lemma16_bound(epsilon=1, m=1, m_prime=5, n=3), "m_prime"),
    (lambda: sp.tilted_mean(np.array([0.5, 0.6]), epsilon=1), "sum to 1"),
    (lambda: sp.tilted_mean(np.array([[0.5, 0.5]]), epsilon=1), "1-D"),
    (lambda: sp.tilted_mean(np.array([-0.5, 1.5]), epsilon=1), "non-negative"),
    (lambda: sp.size_pmf_truncnorm(10, mean=5, sd=-1), "sd"),
    (lambda: sp.size_pmf_mixture(np.array([0.5, 0.5]), p_full=2), "p_full"),
    (lambda: sp.size_pmf_uniform(10, low=6, high=4), "low"),
    (lambda: sp.size_pmf_point(2_000_000, m=1), "at most"),
    (lambda: sp.rounding_size_pmf(-1, rate=0.1, method="randomized"), "population_size"),
    (lambda: sp.rounding_size_pmf(10, rate=0.1, method="bankers"), "method"),
    (lambda: sp.cluster_bound(epsilon=1, n_clusters=1, n_drawn=1, n_pair=1), "n_clusters"),
    (lambda: sp.cluster_bound(epsilon=1, n_clusters=5, n_drawn=5, n_pair=1), "n_drawn"),
    (lambda: sp.cluster_bound(epsilon=1, n_clusters=5, n_drawn=2, n_pair=-1), "n_pair"),
    (lambda: sp.cluster_bounds([3], epsilon=1, n_drawn=1), "at least 2"),
    (lambda: sp.cluster_bounds([3, -1], epsilon=1, n_drawn=1), "sizes"),
    (lambda: sp.cluster_test_bound(epsilon_conditional=-1, epsilon_test=1, n_clusters=5, n_drawn=2), "conditional"),
    (lambda: sp.neyman_allocation([10, 10], [1], m=3), "equal length"),
    (lambda: sp.neyman_allocation([0, 10], [1, 1], m=3), "N_h"),
    (lambda: sp.neyman_allocation([10, 10], [-1, 1], m=3), "S_h"),
    (lambda: sp.neyman_allocation([10, 10], [1, 1], m=30), "m must"),
    (lambda: sp.privacy_aware_allocation([10, 10], [1, 1], m=3, value_max=1, epsilon=1, m_min=2), "m_min"),
    (lambda: sp.privacy_aware_allocation([10, 10], [1, 1], m=3, value_max=0, epsilon=1), "value_max"),
    (lambda: sp.neyman_worst_shift([10], [0], [1], m=3, bounds=[(5, 1)]), "exceeds"),
    (lambda: sp.add_record([10], [0], [1], stratum=3, value=1), "stratum"),
    (lambda: sp.proportional_allocation([10], rate=0.1, epsilon=1, method="x"), "method"),
])
def test_validation_messages(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------------------------------------------------------
# Properties (hypothesis)
# ------------------------------------------------------------------------------------------------------

eps_st = st.floats(1e-4, 20, allow_nan=False)
target_st = st.floats(1e-4, 5, allow_nan=False)
rate_st = st.floats(1e-5, 1.0, allow_nan=False)


@given(eps=eps_st, n=st.integers(1, 10**9), frac=st.floats(0, 1))
def test_srswor_never_above_epsilon(eps, n, frac):
    m = int(frac * n)
    a = sp.amplify_srswor(epsilon=eps, m=m, n=n)
    assert 0 <= a.epsilon_population <= eps * (1 + 1e-15)


@given(eps=eps_st, q=rate_st)
def test_poisson_never_above_epsilon(eps, q):
    assert sp.amplify_poisson(epsilon=eps, rate=q).epsilon_population <= eps * (1 + 1e-15)


@given(t=target_st, q=rate_st)
def test_calibrate_srswor_roundtrip(t, q):
    lam = sp.calibrate_srswor(epsilon_target=t, rate=q).epsilon_sample
    assert sp.amplify_poisson(epsilon=lam, rate=q).epsilon_population == pytest.approx(t, rel=1e-12)


@given(t=target_st, r=st.floats(1e-4, 0.5))
def test_calibrate_rounding_roundtrip(t, r):
    lam = sp.calibrate_randomized_rounding(epsilon_target=t, rate=r).epsilon_sample
    assert sp.amplify_randomized_rounding(epsilon=lam, rate=r).epsilon_population == pytest.approx(t, rel=1e-12)


@given(t=st.floats(1e-3, 3), mean=st.integers(1, 300), sd=st.floats(0, 60))
@settings(max_examples=30)
def test_calibrate_random_size_roundtrip(t, mean, sd):
    pmf = sp.size_pmf_truncnorm(400, mean=mean, sd=sd)
    lam = sp.calibrate_random_size(pmf, epsilon_target=t).epsilon_sample
    assert sp.amplify_random_size(pmf, epsilon=lam).epsilon_upper == pytest.approx(t, rel=1e-12)


@given(t=st.floats(1e-3, 3), sizes=st.lists(st.integers(0, 50), min_size=2, max_size=12),
       rw=st.floats(0.01, 1.0), data=st.data())
@settings(max_examples=40)
def test_calibrate_cluster_roundtrip(t, sizes, rw, data):
    ell = data.draw(st.integers(1, len(sizes) - 1))
    lam = sp.calibrate_cluster(sizes, epsilon_target=t, n_drawn=ell, within_rate=rw).epsilon_sample
    back = sp.two_stage_cluster_upper(sizes, epsilon=lam, n_drawn=ell, within_rate=rw)
    assert back == pytest.approx(t, rel=1e-12)


@given(eps=st.floats(1e-3, 10), sizes=st.lists(st.integers(0, 2000), min_size=2, max_size=30), data=st.data())
def test_cluster_lower_le_upper_le_eps(eps, sizes, data):
    ell = data.draw(st.integers(1, len(sizes) - 1))
    b = sp.cluster_bounds(sizes, epsilon=eps, n_drawn=ell)
    assert np.all(b.lower <= b.upper + 1e-15)
    assert np.all(b.upper <= eps * (1 + 1e-15))
    assert b.worst_lower <= b.worst_upper + 1e-15
    # brute-force per-cluster min/max over the other clusters
    s = np.array(sizes, dtype=float)
    for i in range(len(s)):
        others = np.delete(s, i)
        assert b.upper[i] == pytest.approx(sp.cluster_bound(epsilon=eps, n_clusters=len(s), n_drawn=ell,
                                                            n_pair=s[i] + others.max()), rel=1e-14)
        assert b.lower[i] == pytest.approx(sp.cluster_bound(epsilon=eps, n_clusters=len(s), n_drawn=ell,
                                                            n_pair=s[i] + others.min()), rel=1e-14)


@given(eps=st.floats(1e-3, 10), k=st.integers(2, 1000), data=st.data())
def test_cluster_bound_limits(eps, k, data):
    ell = data.draw(st.integers(1, k - 1))
    q = ell / k
    at0 = sp.cluster_bound(epsilon=eps, n_clusters=k, n_drawn=ell, n_pair=0)
    assert at0 == pytest.approx(math.log1p(q * math.expm1(eps)), rel=1e-13)
    big = sp.cluster_bound(epsilon=eps, n_clusters=k, n_drawn=ell, n_pair=800 / eps)
    assert big == pytest.approx(eps, rel=1e-9)
    # monotone in N
    vals = [sp.cluster_bound(epsilon=eps, n_clusters=k, n_drawn=ell, n_pair=nn) for nn in (0, 1, 5, 50)]
    assert all(a <= b + 1e-15 for a, b in zip(vals, vals[1:]))


@given(eps=st.floats(1e-3, 5), r=st.floats(0.002, 0.5))
@settings(max_examples=25)
def test_worst_randomized_channel_below_theorem6(eps, r):
    n0 = math.ceil(1 / r)
    w = sp.worst_size_channel_loss(epsilon=eps, rate=r, method="randomized", n_min=n0, n_max=n0 + 150)
    assert w.loss <= sp.amplify_randomized_rounding(epsilon=eps, rate=r).epsilon_population * (1 + 1e-12)
    assert w.loss <= math.log1p(r * math.expm1(eps)) * (1 + 1e-9)


@given(eps=st.floats(1e-3, 10))
def test_crossover_is_where_theorem6_equals_epsilon(eps):
    r = sp.randomized_rounding_crossover(epsilon=eps)
    assert 0 < r < 1 / 6
    v = sp.amplify_randomized_rounding(epsilon=eps, rate=r).epsilon_population
    assert v == pytest.approx(eps, rel=1e-10)


@given(eps=st.floats(1e-3, 5), n=st.integers(2, 300), data=st.data())
def test_random_size_lower_le_upper(eps, n, data):
    w = np.array(data.draw(st.lists(st.floats(0, 1), min_size=n + 1, max_size=n + 1)))
    if w.sum() <= 0:
        w[0] = 1.0
    pmf = w / w.sum()
    pmf /= pmf.sum()
    b = sp.amplify_random_size(pmf, epsilon=eps)
    assert b.epsilon_lower <= b.epsilon_upper + 1e-15
    assert b.epsilon_upper <= eps * (1 + 1e-12)
    assert b.tilted_mean >= b.mean_size - 1e-9 * n
    assert sp.random_size_lower_bound_direct(pmf, epsilon=eps) == pytest.approx(b.epsilon_lower, rel=1e-9, abs=1e-13)


@given(x=st.lists(st.floats(0, 1000), min_size=1, max_size=40), data=st.data())
def test_round_largest_remainder_properties(x, data):
    caps = [int(math.ceil(v)) + data.draw(st.integers(0, 3)) for v in x]
    out = sp.round_largest_remainder(x, caps=caps)
    target = math.floor(sum(x) + 0.5)
    # the total is kept whenever the caps leave room for it
    assert out.sum() == min(target, sum(caps))
    assert np.all(out <= np.array(caps)) and np.all(out >= np.floor(np.array(x) - 1e-6))
    assert np.all(np.abs(out - np.array(x)) < 1 + 1e-6)


def _brute_force(N, S, m, U, eps, m_min):
    best, best_v = None, math.inf
    for a in itertools.product(*[range(m_min, n + 1) for n in N]):
        if sum(a) != m:
            continue
        v = sp.allocation_variance(np.array(a), N, S, value_max=U, epsilon=eps).total
        if v < best_v - 1e-12:
            best, best_v = a, v
    return np.array(best), best_v


@given(N=st.lists(st.integers(1, 15), min_size=3, max_size=3), S=st.lists(st.floats(0, 20), min_size=3, max_size=3),
       U=st.floats(1, 100), eps=st.floats(0.05, 5), m_min=st.integers(1, 2), data=st.data())
@settings(max_examples=40)
def test_greedy_equals_brute_force(N, S, U, eps, m_min, data):
    if sum(N) < 3 * m_min or min(N) < m_min:
        return
    m = data.draw(st.integers(3 * m_min, min(30, sum(N))))
    alloc, v = sp.privacy_aware_allocation(N, S, m=m, value_max=U, epsilon=eps, m_min=m_min)
    _, best_v = _brute_force(N, S, m, U, eps, m_min)
    assert alloc.sum() == m
    assert v.total == pytest.approx(best_v, rel=1e-12)


@given(N=st.lists(st.integers(5, 5000), min_size=2, max_size=30), data=st.data())
@settings(max_examples=30)
def test_threshold_equals_greedy(N, data):
    H = len(N)
    S = data.draw(st.lists(st.floats(0.1, 500), min_size=H, max_size=H))
    m = data.draw(st.integers(H, min(sum(N), 3000)))
    eps = data.draw(st.floats(0.05, 5))
    g, _ = sp.privacy_aware_allocation(N, S, m=m, value_max=1000, epsilon=eps, method="greedy")
    t, _ = sp.privacy_aware_allocation(N, S, m=m, value_max=1000, epsilon=eps, method="threshold")
    np.testing.assert_array_equal(g, t)


@given(N=st.lists(st.integers(1, 5000), min_size=1, max_size=40), data=st.data())
def test_allocations_sum_to_m(N, data):
    H = len(N)
    S = data.draw(st.lists(st.floats(0, 500), min_size=H, max_size=H))
    m = data.draw(st.integers(H, sum(N))) if sum(N) >= H else sum(N)
    ney = sp.neyman_allocation(N, S, m=m)
    assert ney.rounded.sum() == m and np.all(ney.rounded <= np.array(N))
    assert ney.continuous.sum() == pytest.approx(m, rel=1e-9, abs=1e-9)
    assert np.all(ney.continuous <= np.array(N) * (1 + 1e-9))
    prop = sp.proportional_rounded(N, m=m)
    assert prop.sum() == m and np.all(prop <= np.array(N))
    pa, _ = sp.privacy_aware_allocation(N, S, m=m, value_max=100, epsilon=1.0)
    assert pa.sum() == m and np.all(pa <= np.array(N)) and np.all(pa >= 1)


# ------------------------------------------------------------------------------------------------------
# Figures and their tables (dpdash/sampling/figures.py)
# ------------------------------------------------------------------------------------------------------

from dpdash.sampling import figures as sf  # noqa: E402


def test_crossover_limit_at_zero():
    assert sp.randomized_rounding_crossover(epsilon=0.0) == pytest.approx(1 / 6)
    assert sp.randomized_rounding_crossover(epsilon=1e-6) == pytest.approx(1 / 6, rel=1e-5)


def test_rate_table_and_figure():
    df = sf.rate_curve_table(epsilon=2.0, n=1000)
    q = df["rate"].to_numpy()
    assert q.min() == pytest.approx(1e-4) and q.max() == pytest.approx(1.0)
    np.testing.assert_allclose(df["srswor"], np.log(1 + q * (math.e ** 2 - 1)), rtol=1e-12)
    np.testing.assert_allclose(df["srswr_external"], np.log(1 + (1 - (1 - 1 / 1000) ** (q * 1000)) * (math.e ** 2 - 1)),
                               rtol=1e-9)
    np.testing.assert_allclose(df["randomized_rounding_thm6"],
                               np.log(1 + 2 * q * (math.e ** 4 - 1)) + np.log(1 + q * (math.e ** 4 - 1)), rtol=1e-12)
    fig = sf.make_rate_figure(df, epsilon=2.0, schemes=["SRSWOR", "SRSWR"], current_rate=0.01,
                              cluster_band=(0.1, 0.5, 1.0))
    names = [t.name for t in fig.data]
    assert any("SRS without" in n for n in names) and any("with replacement" in n for n in names)
    assert not any(n.startswith("Poisson") for n in names)
    assert any("cluster design" in n for n in names) and any("shortcut" in n for n in names)
    assert fig.layout.xaxis.type == "log"


def test_sigma_table_against_full_pmf():
    df = sf.sigma_curve_table(n=3000, mean=1500, epsilon=0.02, points=6)
    for s, lower, upper in zip(df["sd"], df["lower"], df["upper"]):
        b = sp.amplify_random_size(sp.size_pmf_truncnorm(3000, mean=1500, sd=s), epsilon=0.02)
        assert lower == pytest.approx(b.epsilon_lower, rel=1e-10)
        assert upper == pytest.approx(b.epsilon_upper, rel=1e-10)
    fig = sf.make_sigma_figure(df, epsilon=0.02, current_sd=30)
    assert len(fig.data) == 4


def test_pmf_table_bins_preserve_mass():
    pmf = sp.size_pmf_uniform(100_000, low=0, high=100_000)
    df = sf.size_pmf_table(pmf, epsilon=0.0001)
    assert len(df) <= 2000
    assert df["t"].sum() == pytest.approx(1.0) and df["t_tilted"].sum() == pytest.approx(1.0)
    small = sf.size_pmf_table(sp.size_pmf_point(50, m=7), epsilon=1.0)
    assert (small["size_from"] == small["size_to"]).all()
    assert small.loc[small["size_from"] == 7, "t"].item() == 1.0


def test_sawtooth_table():
    df = sf.sawtooth_table(epsilon=0.5, rate=0.1, n_min=10, n_max=40)
    assert len(df) == 31
    # deterministic rounding: loss is ε exactly when floor(0.1N + 0.5) changes between N and N + 1
    N = df["population_size"].to_numpy()
    changes = np.floor(0.1 * N + 0.5 + 1e-12) != np.floor(0.1 * (N + 1) + 0.5 + 1e-12)
    np.testing.assert_allclose(df["deterministic"], np.where(changes, 0.5, 0.0), atol=1e-12)
    assert (df["randomized"] <= math.log1p(0.1 * math.expm1(0.5)) + 1e-12).all()


def test_cluster_heatmap_table_limits():
    df = sf.cluster_heatmap_table(n_clusters=20, n_drawn=2)
    assert len(df) == 3600
    at0 = df[df["cluster_size"] == 0]
    np.testing.assert_allclose(at0["ratio"], np.log1p(0.1 * np.expm1(at0["epsilon"])) / at0["epsilon"], rtol=1e-12)
    big = df[(df["cluster_size"] == df["cluster_size"].max()) & (df["epsilon"] >= 1)]
    np.testing.assert_allclose(big["ratio"], 1.0, rtol=1e-9)
    fig = sf.make_cluster_heatmap(df, current_size=20, current_epsilon=1.0)
    assert fig.data[0].type == "heatmap"


def test_cluster_bars_switch_to_histogram():
    sizes = np.arange(1, 301, dtype=float)
    b = sp.cluster_bounds(sizes, epsilon=0.1, n_drawn=3)
    df = sf.cluster_bars_table(sizes, b)
    assert sf.make_cluster_bars_figure(df, epsilon=0.1, naive=b.naive_srs).data[0].type == "histogram"
    few = sf.cluster_bars_table(sizes[:5], sp.cluster_bounds(sizes[:5], epsilon=0.1, n_drawn=1))
    fig = sf.make_cluster_bars_figure(few, epsilon=0.1, naive=0.01)
    assert [t.type for t in fig.data] == ["bar", "bar"]


def test_allocation_tables_and_figures():
    df = sf.allocation_table([40, 25, 15], [2, 6, 15], m=24, value_max=30, epsilon=1.0, names=["a", "b", "c"])
    assert set(df["method"]) == {"neyman", "proportional", "privacy_aware"}
    assert df.groupby("method")["m_h"].sum().eq(24).all()
    pa = df[df["method"] == "privacy_aware"]
    assert pa["m_h"].tolist() == [9, 7, 8]   # SP19
    assert pa["sampling_variance"].sum() + pa["noise_variance"].sum() == pytest.approx(3.5097822035, abs=1e-8)
    assert len(sf.make_allocation_figure(df).data) == 3
    fig = sf.make_variance_figure(df, log_y=True)
    assert fig.layout.yaxis.type == "log" and fig.layout.barmode == "stack"


def test_shift_and_cbp_tables():
    s = sp.neyman_worst_shift([3000, 1000, 250], [4, 25, 400], [2, 12, 150], m=120,
                              bounds=[(0, 10), (10, 100), (100, 2000)])
    df = sf.shift_table(s, ["s", "m", "l"])
    assert df["delta_rounded"].tolist() == [-2, -3, 5]
    assert len(sf.make_shift_figure(df).data) == 2
    c = sf.cbp_table(sp.cbp_example())
    assert c["delta"].tolist()[-1] == 19 and c["allocation_P"].sum() == 10004


def test_large_epsilon_stays_finite():
    # 1 + q(e^ε − 1) = e^ε(q + (1 − q)e^{−ε}): for huge ε the result is ε + log q (no overflow to ∞)
    assert sp.amplify_poisson(epsilon=1e4, rate=0.5).epsilon_population == pytest.approx(1e4 + math.log(0.5))
    lam = sp.calibrate_srswor(epsilon_target=800, rate=0.01).epsilon_sample
    assert lam == pytest.approx(800 - math.log(0.01))
    assert sp.amplify_randomized_rounding(epsilon=400, rate=0.01).epsilon_population == pytest.approx(
        800 + math.log(0.02) + 800 + math.log(0.01))
    assert sp.cluster_bound(epsilon=1000, n_clusters=10, n_drawn=1, n_pair=5) == pytest.approx(1000.0)
    assert sp.randomized_rounding_crossover(epsilon=800) == 0.0


def _table(**over):
    base = {"stratum": ["a", "a", None], "N_h": [10, 20, 30], "S_h": [1.0, 2.0, 3.0], "mean_h": [0.0, 1.0, 2.0],
            "lo_h": [0.0, 0.0, 0.0], "hi_h": [5.0, 5.0, 5.0], "eps_h": [None, 0.3, None]}
    base.update(over)
    return pd.DataFrame(base)


def test_strata_from_table():
    out = sp.strata_from_table(_table(), epsilon=1.0)
    np.testing.assert_array_equal(out["N_h"], [10, 20, 30])
    np.testing.assert_array_equal(out["eps_h"], [1.0, 0.3, 1.0])
    assert out["names"] == ("a", "a (2)", "stratum 3")


# the messages name the columns by the editor's headers (the page shows "size N_h", not N_h) and the row
@pytest.mark.parametrize("over, match", [
    (dict(N_h=[10, 0, 30]), r"“size N_h” must be a whole number ≥ 1 in every row \(row 2\)"),
    (dict(N_h=[1.5, 20, 30]), r"“size N_h” .* \(row 1\)"),
    (dict(S_h=[1.0, 2.0, -3.0]), r"“spread S_h” must be ≥ 0 in every row \(row 3\)"),
    (dict(lo_h=[6.0, 0.0, 0.0]), r"“smallest value” must not exceed “largest value” \(row 1\)"),
    (dict(mean_h=[1.0, None, "x"]), r"column “mean” has an empty or non-numeric cell \(row 2\)"),
    (dict(hi_h=[5.0, 5.0, "x"]), r"column “largest value” has an empty or non-numeric cell \(row 3\)"),
    (dict(eps_h=[-1.0, None, None]), "“ε in stratum” must be blank"),
    (dict(eps_h=["abc", None, None]), "“ε in stratum” must be blank"),
])
def test_strata_from_table_errors(over, match):
    with pytest.raises(ValueError, match=match) as err:
        sp.strata_from_table(_table(**over), epsilon=1.0)
    assert not any(code in str(err.value) for code in ("N_h ", "S_h ", "lo_h", "hi_h", "ε_h", "mean_h"))


def test_strata_from_table_missing_column_named_as_on_screen():
    with pytest.raises(ValueError, match="lacks the column.*“spread S_h”"):
        sp.strata_from_table(_table().drop(columns="S_h"), epsilon=1.0)


def test_strata_from_table_row_limits():
    with pytest.raises(ValueError, match="1 to 2 strata"):
        sp.strata_from_table(_table(), epsilon=1.0, max_strata=2)
    empty = _table(N_h=[None] * 3, S_h=[None] * 3, mean_h=[None] * 3, lo_h=[None] * 3, hi_h=[None] * 3,
                   eps_h=[None] * 3)
    with pytest.raises(ValueError, match="1 to 200"):
        sp.strata_from_table(empty, epsilon=1.0)


# ----------------------------------------------------------------------------------------------------------
# Issue 12: random sample sizes over the controls' whole range, against mpmath at high precision
# ----------------------------------------------------------------------------------------------------------

import mpmath as mpm  # noqa: E402


def _mp_theorem3(log_t, n: int, eps: float, sizes=None, dps: int = 60):
    """Theorem 3 from an unnormalised log size law ``log_t(m)`` (mpmath; None = t(m) = 0), summed literally.

    Returns (E_t[m], E_t̃[m], lower, upper) as mpf. [a] §3, Theorem 3: t̃(m) ∝ e^{εm}t(m).
    """
    with mpm.workdps(dps):
        sizes = range(n + 1) if sizes is None else sizes
        lt = [(m, log_t(m)) for m in sizes]
        lt = [(m, v) for m, v in lt if v is not None]
        e = mpm.mpf(eps)
        top0 = max(v for _, v in lt)
        lt = [(m, v - top0) for m, v in lt]      # before the tilt, so e·m is not lost next to a huge log t
        top0 = 0
        top1 = max(v + e * m for m, v in lt)
        w0 = [(m, mpm.exp(v - top0)) for m, v in lt]
        w1 = [(m, mpm.exp(v + e * m - top1)) for m, v in lt]
        mean = mpm.fsum(w * m for m, w in w0) / mpm.fsum(w for _, w in w0)
        tm = mpm.fsum(w * m for m, w in w1) / mpm.fsum(w for _, w in w1)
        frac = tm / n
        upper = mpm.log(1 + frac * (mpm.exp(e) - 1))
        lower = -mpm.log(1 - frac * (1 - mpm.exp(-e)))
        return mean, tm, lower, upper


def _mp_gauss(mu: float, sd: float):
    mu, sd = mpm.mpf(mu), mpm.mpf(sd)
    return lambda m: -((m - mu) ** 2) / (2 * sd * sd)


def _assert_close(b, ref, *, rel=1e-9):
    mean, tm, lower, upper = (float(x) for x in ref)
    n = b.n
    assert b.mean_size == pytest.approx(mean, rel=rel, abs=1e-9 * n)
    assert b.tilted_mean == pytest.approx(tm, rel=rel, abs=1e-9 * n)
    assert b.epsilon_upper == pytest.approx(upper, rel=rel, abs=1e-300)
    assert b.epsilon_lower == pytest.approx(lower, rel=rel, abs=1e-300)


def test_random_size_defaults_do_not_underflow():
    # issue 12 example 1: n = 10,000, ε = 1, mean 5,000, σ = 100; the page said 0.9242 / 0.819 / 8,845
    b = sp.amplify_random_size(sp.size_law_truncnorm(10_000, mean=5000, sd=100), epsilon=1.0)
    assert b.tilted_mean == pytest.approx(9998.4599068787, abs=1e-6)          # mpmath, 40 digits
    assert b.epsilon_upper == pytest.approx(0.99990264280850, rel=1e-11)
    assert b.epsilon_lower == pytest.approx(0.99973540360627, rel=1e-11)
    _assert_close(b, _mp_theorem3(_mp_gauss(5000, 100), 10_000, 1.0, dps=30))


def _law_and_oracle(family, n, mean, sd, low, high, p_full, base):
    """The engine's size law and an independent mpmath log t(m) for the same controls."""
    def one(fam):
        if fam == "point":
            c = min(max(math.floor(mean + 0.5), 0), n)
            return sp.size_law_point(n, m=c), (lambda m: mpm.mpf(0) if m == c else None)
        if fam == "uniform":
            return (sp.size_law_uniform(n, low=low, high=high),
                    lambda m: -mpm.log(high - low + 1) if low <= m <= high else None)
        if sd == 0:
            return one("point")
        g = _mp_gauss(mean, sd)
        # normalised: the mixture needs the base's true probabilities
        with mpm.workdps(60):
            logz = mpm.log(mpm.fsum(mpm.exp(g(m)) for m in range(n + 1))) if n <= 3000 else None
        return sp.size_law_truncnorm(n, mean=mean, sd=sd), (lambda m: g(m) - (logz or 0))
    if family != "mixture":
        return one(family)
    law, lt = one(base)
    p = mpm.mpf(p_full)

    def mix(m):
        v = lt(m)
        a = (1 - p) * mpm.exp(v) if v is not None else mpm.mpf(0)
        if m == n:
            a += p
        return mpm.log(a) if a > 0 else None
    return sp.size_law_mixture(law, p_full=p_full), mix


@settings(max_examples=60, deadline=None)
@given(family=st.sampled_from(["gaussian", "point", "uniform", "mixture"]),
       base=st.sampled_from(["gaussian", "point", "uniform"]),
       n=st.one_of(st.integers(1, 3000), st.sampled_from([1, 2, 3000])),
       u_mean=st.floats(0, 1), sd=st.one_of(st.just(0.0), st.floats(1e-300, 1e-3), st.floats(1e-3, 5e5)),
       u_lo=st.floats(0, 1), u_hi=st.floats(0, 1),
       p_full=st.one_of(st.floats(1e-30, 0.1), st.sampled_from([1e-30, 0.1])),
       eps=st.one_of(st.floats(1e-9, 1e-3), st.floats(1e-3, 10), st.sampled_from([1e-3, 10.0, 50.0])))
def test_random_size_matches_mpmath_over_the_controls(family, base, n, u_mean, sd, u_lo, u_hi, p_full, eps):
    if family == "mixture" and base == "gaussian" and sd > 0 and n > 3000:
        return
    mean = u_mean * n
    low, high = sorted((int(u_lo * n), int(u_hi * n)))
    law, lt = _law_and_oracle(family, n, mean, sd, low, high, p_full, base)
    b = sp.amplify_random_size(law, epsilon=eps)
    _assert_close(b, _mp_theorem3(lt, n, eps), rel=1e-8)
    assert b.epsilon_lower <= b.epsilon_upper * (1 + 1e-12) <= eps * (1 + 1e-9)
    # the literal witness ratio is a difference of two logs: exact to ~1e-15 absolute, not relative
    assert sp.random_size_lower_bound_direct(law, epsilon=eps) == pytest.approx(b.epsilon_lower, rel=1e-8,
                                                                                abs=1e-14)


@pytest.mark.parametrize("n, mean, sd, eps", [
    (1_000_000, 500_000, 1000.0, 1.0),       # slider max n: the tilt pushes the mass to n
    (1_000_000, 500_000, 50.0, 10.0),
    (1_000_000, 999_999.5, 1e-300, 1.0),     # σ → 0 between two sizes
    (1_000_000, 10.0, 3.0, 1e-3),
])
def test_random_size_large_n_against_mpmath(n, mean, sd, eps):
    b = sp.amplify_random_size(sp.size_law_truncnorm(n, mean=mean, sd=sd), epsilon=eps)
    m = np.arange(n + 1, dtype=float)
    with np.errstate(over="ignore"):
        # float64 only picks the sizes worth summing (within 300 nats of either peak); mpmath does the sums
        z = (m - mean) / sd
        lw0 = -0.5 * z * z
        lw1 = lw0 + eps * m
    keep = (lw0 > np.max(lw0) - 300) | (lw1 > np.max(lw1) - 300)
    if not np.isfinite(np.max(lw0)):
        keep = np.abs(m - mean) <= 0.5 + 1e-9
    ref = _mp_theorem3(_mp_gauss(mean, sd), n, eps, sizes=[int(x) for x in np.flatnonzero(keep)], dps=40)
    _assert_close(b, ref, rel=1e-8)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 2000), u_mean=st.floats(0, 1), sd=st.floats(1e-3, 1e4), t=st.floats(1e-3, 5))
def test_calibrate_random_size_law_roundtrip(n, u_mean, sd, t):
    law = sp.size_law_truncnorm(n, mean=u_mean * n, sd=sd)
    cal = sp.calibrate_random_size(law, epsilon_target=t)
    if math.isinf(cal.epsilon_sample):
        return
    got = sp.amplify_random_size(law, epsilon=cal.epsilon_sample).epsilon_upper
    assert got == pytest.approx(t, rel=1e-9)
    ref = _mp_theorem3(_mp_gauss(u_mean * n, sd), n, cal.epsilon_sample, dps=30)[3]
    assert float(ref) == pytest.approx(t, rel=1e-8)


def test_sigma_curve_row_is_the_card():
    # one computation per view: the σ-chart's row at the current σ is the card's result, and the grid matches mpmath
    law = sp.size_law_truncnorm(10_000, mean=5000, sd=100)
    b = sp.amplify_random_size(law, epsilon=1.0)
    df = sf.sigma_curve_table(n=10_000, mean=5000, epsilon=1.0, points=4, current_sd=100.0, current=b)
    row = df[df["current"]].iloc[0]
    assert (row["sd"], row["upper"], row["lower"], row["tilted_mean"]) == (100.0, b.epsilon_upper,
                                                                          b.epsilon_lower, b.tilted_mean)
    for s, lo, up in zip(df["sd"], df["lower"], df["upper"]):
        ref = _mp_theorem3(_mp_gauss(5000, s), 10_000, 1.0, dps=25)
        assert up == pytest.approx(float(ref[3]), rel=1e-9)
        assert lo == pytest.approx(float(ref[2]), rel=1e-9)


def test_size_pmf_table_tilt_from_log_law():
    # the tilted curve P3 must put its mass near n at the defaults (it sat at ~8,845 from an underflowed pmf)
    law = sp.size_law_truncnorm(10_000, mean=5000, sd=100)
    df = sf.size_pmf_table(law, epsilon=1.0)
    mid = (df["size_from"] + df["size_to"]) / 2
    assert float((df["t_tilted"] * mid).sum()) == pytest.approx(9998.46, abs=2.0)
    assert df["t_tilted"].sum() == pytest.approx(1.0, abs=1e-9)


def test_rounding_law_exact_at_large_populations():
    # r·N = 50,000,000.05: the old relative snap (1e-9·|x| = 0.05) made this a fixed size of 50,000,000
    p = sp.rounding_size_pmf(1_000_000_001, rate=0.05, method="randomized")
    assert sorted(p) == [50_000_000, 50_000_001]
    assert p[50_000_001] == pytest.approx(0.05, rel=1e-9)
    # and the intended integers still are integers (binary 0.02·150 = 2.9999999999999996)
    assert sp.rounding_size_pmf(150, rate=0.02, method="randomized") == {3: 1.0}
    assert sp.rounding_size_pmf(3, rate=1 / 3, method="randomized") == {1: 1.0}
    N, loss = sp.size_channel_curve(epsilon=1.0, rate=0.05, method="randomized", n_min=1_000_000_000,
                                    n_max=1_000_000_002)
    direct = [sp.size_channel_loss(sp.rounding_size_pmf(int(n), rate=0.05, method="randomized"),
                                   sp.rounding_size_pmf(int(n) + 1, rate=0.05, method="randomized"), epsilon=1.0)
              for n in N]
    assert loss == pytest.approx(direct, rel=1e-12)
    # pair (10⁹ + 1, 10⁹ + 2): sizes {5e7: .95, 5e7+1: .05} vs {5e7: .9, 5e7+1: .1}: mpmath, 30 digits
    import mpmath as m_
    with m_.workdps(30):
        e = m_.e
        vals = [abs(m_.log((m_.mpf("0.95") * a + m_.mpf("0.05") * b) / (m_.mpf("0.9") * a + m_.mpf("0.1") * b)))
                for a, b in ((1, 1 / e), (1 / e, 1), (1, e), (1, 1 / e))]
    assert loss[1] == pytest.approx(float(max(vals)), rel=1e-9)


@pytest.mark.parametrize("call", [
    lambda: sp.privacy_aware_allocation([3, 4, 5], [1, 2, 3], m=6, value_max=1e308, epsilon=1.0),
    lambda: sp.compare_allocations([3, 4, 5], [1, 2, 1e200], m=6, value_max=10, epsilon=1.0),
    lambda: sp.allocation_variance([2, 2, 2], [3, 4, 5], [1, 2, 3], value_max=1e300, epsilon=1.0),
    lambda: sp.neyman_worst_shift([3, 4], [0, 1e300], [1, 1], m=4, bounds=[(0, 1), (0, 1e300)]),
])
def test_huge_values_are_a_domain_error_not_an_overflow(call):
    # a frame with values near 1e308 reached U² and (x − μ)² and raised OverflowError (a traceback on the page)
    with pytest.raises(ValueError, match="1e\\+?100"):
        call()


def test_stratum_names_are_plain_text_in_figures():
    # Plotly renders <a href>, <b>, <span> in labels: a stratum name from a file must show as typed, not as a link
    names = ['<a href="http://evil.example/p">x</a>', "b", "c"]
    alloc = sf.allocation_table(np.array([40, 25, 15]), np.array([2.0, 6.0, 15.0]), m=24, value_max=30,
                                epsilon=np.array([1.0] * 3), names=names, methods=("neyman",), m_min=1)
    assert alloc["stratum"].iloc[0] == names[0]                       # the table keeps the name
    spec = sf.make_allocation_figure(alloc).to_plotly_json()
    xs = [x for tr in spec["data"] for x in tr["x"]]
    assert not any("<a " in str(x) for x in xs) and any("&lt;a href" in str(x) for x in xs)
    shift = sp.neyman_worst_shift([40, 25, 15], [1, 2, 3], [2, 6, 15], m=24, bounds=[(0, 5), (0, 9), (0, 30)])
    fig = sf.make_shift_figure(sf.shift_table(shift, names)).to_plotly_json()
    assert not any("<a " in str(x) for tr in fig["data"] for x in tr["x"])


def test_allocation_totals_are_the_spec_totals():
    # SP20 at ε = 0.5: totals 737.3532 (Neyman) / 358.8908 (proportional) / 240.6699 (privacy-aware); the page's
    # table, its CSV and P8 take these from allocation_totals
    alloc = sf.allocation_table(np.array([4000, 1500, 400, 100]), np.array([8.0, 30.0, 150.0, 800.0]), m=300,
                                value_max=5000, epsilon=np.array([0.5] * 4), names=list("ABCD"),
                                methods=("neyman", "proportional", "privacy_aware"), m_min=1)
    tot = sf.allocation_totals(alloc)
    assert tot["total"].to_numpy() == pytest.approx([737.3532, 358.8908, 240.6699], abs=1e-3)
    fig = sf.make_variance_figure(alloc)
    stacked = np.add(fig.data[0].y, fig.data[1].y)
    assert stacked == pytest.approx(tot["total"].to_numpy(), rel=1e-12)


# ----------------------------------------------------------------------------------------------------------
# Oracles written from the paper's statements in mpmath (issue 13 deliver 4): inputs vary what the formula
# depends on (unequal cluster sizes, the within-cluster rate, ε, the population size of SRSWR).
# ----------------------------------------------------------------------------------------------------------
def _mp_B(eps, q, n_pair):
    """Theorems 7/8 of [a]: B(ε, q, N) = log(1 + q/(q + (1 − q)e^{−Nε})·(e^ε − 1)), at 50 digits."""
    import mpmath as mp
    mp.mp.dps = 50
    eps, q = mp.mpf(eps), mp.mpf(q)
    frac = q / (q + (1 - q) * mp.exp(-n_pair * eps))
    return mp.log(1 + frac * mp.expm1(eps))


@pytest.mark.parametrize("sizes, ell, eps, rw", [
    ([5, 40, 12, 33, 7], 2, 0.3, 0.05),
    ([5, 40, 12, 33, 7], 1, 2.0, 0.5),
    ([100, 3, 3, 3, 60, 1], 3, 0.8, 1.0),
    ([1, 2], 1, 0.05, 0.2),
])
def test_two_stage_cluster_upper_unequal_sizes_against_mpmath(sizes, ell, eps, rw):
    import mpmath as mp
    mp.mp.dps = 50
    # M∘Poisson(r_w) is ε_w-DP with ε_w = log(1 + r_w(e^ε − 1)) [BBG18]; Theorem 8 at the two largest sizes
    eps_w = mp.log(1 + mp.mpf(rw) * mp.expm1(eps))
    top_two = sum(sorted(sizes)[-2:])
    want = _mp_B(eps_w, mp.mpf(ell) / len(sizes), top_two)
    got = sp.two_stage_cluster_upper(sizes, epsilon=eps, n_drawn=ell, within_rate=rw)
    assert got == pytest.approx(float(want), rel=1e-12, abs=1e-15)


def test_cluster_bounds_per_cluster_against_mpmath_brute_force():
    sizes, ell, eps = [3, 8, 15, 40, 9], 2, 0.4
    b = sp.cluster_bounds(sizes, epsilon=eps, n_drawn=ell)
    q = ell / len(sizes)
    for i, n_i in enumerate(sizes):
        others = sizes[:i] + sizes[i + 1:]
        assert b.lower[i] == pytest.approx(float(_mp_B(eps, q, n_i + min(others))), rel=1e-12)   # Theorem 7
        assert b.upper[i] == pytest.approx(float(_mp_B(eps, q, n_i + max(others))), rel=1e-12)   # Theorem 8


@pytest.mark.parametrize("eps, n", [(0.1, 50), (1.0, 1000), (3.0, 7)])
def test_rate_curve_table_against_mpmath(eps, n):
    import mpmath as mp
    from dpdash.sampling import figures as sf
    mp.mp.dps = 50
    df = sf.rate_curve_table(epsilon=eps, n=n, points=9, rate_min=1e-3)
    for row in df.itertuples():
        q = mp.mpf(row.rate)
        e = mp.mpf(eps)
        srs = mp.log(1 + q * mp.expm1(e))                                     # Theorem 2
        eta = 1 - (1 - mp.mpf(1) / n) ** (q * n)                              # chance of being drawn, q·n draws
        z = mp.expm1(2 * e)
        thm6 = mp.log(1 + 2 * q * z) + mp.log(1 + q * z)                      # Theorem 6
        assert row.srswor == pytest.approx(float(srs), rel=1e-12)
        assert row.srswr_external == pytest.approx(float(mp.log(1 + eta * mp.expm1(e))), rel=1e-10)
        assert row.randomized_rounding_thm6 == pytest.approx(float(thm6), rel=1e-12)


def test_amplify_srswr_against_exact_inclusion_probability():
    # η by brute force: 1 − P(record never drawn in m draws from n) counted over all n^m draw sequences
    n, m, eps = 5, 3, 1.3
    never = sum(1 for seq in itertools.product(range(n), repeat=m) if 0 not in seq)
    eta = 1 - never / n ** m
    got = sp.amplify_srswr(epsilon=eps, m=m, n=n).epsilon_population
    assert got == pytest.approx(math.log1p(eta * math.expm1(eps)), rel=1e-12)


# ------------------------------------------------------------------------------------------------------
# Issue 14 item 8: the random-size sums in one exponential pass keep their digits where ε·m is huge
# ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("t", [0.5, 1.0, 10.0])
def test_calibrate_random_size_point_mass_at_largest_n(t):
    # a point mass at m: Theorem 3's upper bound is Theorem 2 at q = m/n, so λ = log(1 + expm1(t)/q) (mpmath);
    # at n = 10⁶, m = n/2 the bracket's end was lost to rounding and the search raised for t ≥ 1
    mpm.mp.dps = 40
    law = sp.size_law_point(1_000_000, m=500_000)
    ref = mpm.log(1 + mpm.expm1(mpm.mpf(t)) * 2)
    assert sp.calibrate_random_size(law, epsilon_target=t).epsilon_sample == pytest.approx(float(ref), rel=1e-13)


def test_random_size_huge_tilt_stays_in_the_support():
    # uniform on {200,000 … 700,000}, ε = 50: ε·m ≈ 3.5·10⁷, whose rounding put E_t̃[m] at 700,000.0019 — above
    # the largest size. mpmath over the top 2,000 sizes (the rest weigh below e^{−10⁵} of the top)
    n, eps = 1_000_000, 50.0
    b = sp.amplify_random_size(sp.size_law_uniform(n, low=200_000, high=700_000), epsilon=eps)
    _, tm, lower, upper = _mp_theorem3(lambda m: mpm.mpf(0), n, eps, sizes=range(698_001, 700_001), dps=40)
    assert b.tilted_mean <= 700_000 * (1 + 1e-15)
    assert b.tilted_mean == pytest.approx(float(tm), rel=1e-14)
    assert (b.epsilon_lower, b.epsilon_upper) == pytest.approx((float(lower), float(upper)), rel=1e-13)
    assert b.mean_size == pytest.approx(450_000, rel=1e-14)


def test_calibrate_random_size_mean_below_the_double_range():
    # σ = 0.026 around 0 with n = 2: t(1) ≈ e^{−742.6}, so E_t[m]/n underflows to 0; the bracket is taken in log
    # space and the calibrated ε reproduces the target in mpmath (it raised an overflow before)
    sd = 0.025948247336250237
    law = sp.size_law_truncnorm(2, mean=0.0, sd=sd)
    cal = sp.calibrate_random_size(law, epsilon_target=1.0)
    assert math.isfinite(cal.epsilon_sample)
    assert float(_mp_theorem3(_mp_gauss(0.0, sd), 2, cal.epsilon_sample, dps=60)[3]) == pytest.approx(1.0, rel=1e-12)


def test_census_is_the_unsampled_mechanism():
    """Issue 22: r = 1 (m = N) samples everyone, so "sample, then run M" is M itself: ε′ = ε exactly.

    Theorem 6's bound at r = 1 (log1p(2z) + log1p(z), z = e^{2ε} − 1; 4.62 at ε = 1) is valid but not the
    guarantee; the randomised rounding of N_h at r = 1 is N_h with probability 1.
    """
    thm6 = math.log1p(2 * math.expm1(2.0)) + math.log1p(math.expm1(2.0))
    assert thm6 == pytest.approx(4.62, abs=0.01)
    pa = sp.proportional_allocation([3000, 1000, 250], rate=1.0, epsilon=1.0)
    assert pa.amplification.epsilon_population == 1.0
    assert pa.theorem11_applies
    for eps in (0.01, 1.0, 7.5):
        assert sp.amplify_randomized_rounding(epsilon=eps, rate=1.0).epsilon_population == eps
        assert sp.calibrate_randomized_rounding(epsilon_target=eps, rate=1.0).epsilon_sample == eps
