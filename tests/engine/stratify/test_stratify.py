"""Tests for dpdash/stratify/core.py: numbers from the spec's worked examples (§9), scipy, and Monte Carlo."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from dpdash.stratify import core as S

P1_SIZES = [5000, 3000, 1500, 400, 100]
P1_MU = [0.5, -0.5, 1.5, -1.0, 2.0]
P2_SIZES = [6000, 2500, 1000, 400, 80, 15, 5]
P2_MU = [0.2, -0.4, 0.9, -1.1, 0.6, 1.4, -0.3]


# --- X1 clip half-widths -----------------------------------------------------------------------------------

@pytest.mark.parametrize("m,paper,rig", [
    (100, 4.628261, 5.898949), (400, 4.879939, 6.239622), (1500, 5.100936, 6.540694),
    (3000, 5.210756, 6.690863), (5000, 5.289343, 6.798526), (10000, 5.393070, 6.940865),
])
def test_x1_clip_halfwidth(m, paper, rig):
    assert S.clip_halfwidth(m, R=2, gamma=0.1) == pytest.approx(paper, rel=1e-6)
    assert S.clip_halfwidth(m, R=2, gamma=0.1, mode="rigorous") == pytest.approx(rig, rel=1e-6)


def test_x1_laplace_scale():
    assert S.laplace_scale(100, R=2, gamma=0.1, epsilon=0.5) == pytest.approx(0.18513, rel=1e-4)


def test_laplace_mean_noise_matches_scipy_laplace():
    # Without clipping effects, p̂ − mean(x) is Lap(b): compare with scipy's Laplace by KS.
    x = np.linspace(-1, 1, 200)
    b = S.laplace_scale(200, R=1, gamma=0.1, epsilon=1.0)
    r = np.random.default_rng(3)
    err = np.array([S.laplace_mean(x, R=1, gamma=0.1, epsilon=1.0, rng=r) for _ in range(3000)]) - x.mean()
    assert stats.kstest(err, stats.laplace(scale=b).cdf).pvalue > 0.001


# --- X2 analytic errors -------------------------------------------------------------------------------------

def test_x2_analytic_population_terms():
    a = S.analytic_mean_errors(P1_SIZES, R=2, gamma=0.1, epsilon=0.5, mu=P1_MU)
    assert a.pop_naive_mean_abs == pytest.approx(0.0021572, rel=1e-4)
    assert a.pop_naive_rmse == pytest.approx(0.0030508, rel=1e-4)
    assert a.pop_strat_rmse == pytest.approx(0.0063595, rel=1e-4)
    assert a.variance_ratio == pytest.approx(4.3452771, rel=1e-6)
    assert a.pop_statistical_sd == pytest.approx(0.01, rel=1e-9)
    np.testing.assert_allclose(a.table["bias"], [0.195, 0.805, 1.195, 1.305, 1.695], rtol=1e-9)
    np.testing.assert_allclose(a.table["strat_priv_mean_abs"], [0.004232, 0.006948, 0.013603, 0.048799, 0.18513],
                               rtol=2e-4)
    np.testing.assert_allclose(a.table["strat_total_mean_abs"], [0.01222, 0.01645, 0.02535, 0.0651, 0.20598],
                               atol=1e-4)
    assert a.table["stratified_better"].all()
    a2 = S.analytic_mean_errors(P1_SIZES, R=2, gamma=0.1, epsilon=2, mu=P1_MU)
    assert a2.pop_strat_rmse == pytest.approx(0.0015899, rel=1e-4)
    assert a2.variance_ratio == pytest.approx(4.3452771, rel=1e-6)
    np.testing.assert_allclose(a2.table["strat_total_mean_abs"], [0.01135, 0.0147, 0.02095, 0.04215, 0.09446],
                               atol=1e-4)


def test_expected_abs_error_against_monte_carlo_and_closed_forms():
    r = np.random.default_rng(0)
    z = 0.3 + r.normal(0, 0.2, 400_000) + r.laplace(0, 0.15, 400_000)
    assert S.expected_abs_error(0.3, 0.2, 0.15) == pytest.approx(np.abs(z).mean(), rel=5e-3)
    for d, s_, b in [(0.3, 0.2, 0.15), (0.0, 0.1, 0.185), (1.2, 0.01, 2.0), (0.0, 3.0, 0.01), (5.0, 0.5, 0.5)]:
        assert S.expected_abs_error(d, s_, b) == pytest.approx(S.expected_abs_error_quad(d, s_, b), rel=1e-7)
    # Pure Laplace: E|d + Lap(b)| = d + b e^{-d/b}; pure normal: folded normal mean.
    assert S.expected_abs_error(0.0, 0.0, 0.7) == pytest.approx(0.7)
    assert S.expected_abs_error(0.0, 1.0, 0.0) == pytest.approx(math.sqrt(2 / math.pi))


# --- X3 Monte Carlo ---------------------------------------------------------------------------------------

def test_x3_monte_carlo_p1():
    df = S.run_mean_experiment(sizes=P1_SIZES, mu=P1_MU, sigma=1.0, epsilons=[0.5], R=2, gamma=0.1, reps=5000,
                               rng=11)
    m = df.groupby(["method", "group"])["abs_err"].mean().unstack()
    expect = {
        "naive": [0.00835, 0.1953, 0.8047, 1.1953, 1.3047, 1.6953],
        "stratified": [0.00948, 0.0122, 0.0162, 0.0254, 0.0645, 0.2042],
        "split": [0.00922, 0.0145, 0.0211, 0.0357, 0.1058, 0.3912],
    }
    for method, vals in expect.items():
        np.testing.assert_allclose(m.loc[method, [-1, 0, 1, 2, 3, 4]].to_numpy(), vals, rtol=0.10)


def test_run_mean_experiment_columns_and_truths():
    df = S.run_mean_experiment(sizes=[50, 30], mu=[1.0, -1.0], sigma=1.0, epsilons=[0.5, 1.0], R=2, gamma=0.1,
                               reps=3, rng=0)
    assert list(df.columns) == ["rep", "epsilon", "method", "level", "group", "n_i", "estimate", "truth",
                                "empirical", "abs_err", "priv_err"]
    assert len(df) == 3 * 2 * 3 * 3
    pop = df[df.level == "population"]
    assert np.allclose(pop["truth"], (50 * 1 - 30) / 80)
    assert (pop["n_i"] == 80).all()
    np.testing.assert_allclose(df["abs_err"], (df["estimate"] - df["truth"]).abs())


# --- X4 crossover -----------------------------------------------------------------------------------------

def test_x4_crossover_p2():
    a = S.analytic_mean_errors(P2_SIZES, R=2.5, gamma=0.1, epsilon=1.0, mu=P2_MU)
    assert S.clip_halfwidth(sum(P2_SIZES), R=2.5, gamma=0.1) == pytest.approx(5.893070, rel=1e-6)
    assert np.sum(np.array(P2_SIZES) * P2_MU) / sum(P2_SIZES) == pytest.approx(0.07275)
    np.testing.assert_allclose(a.table["crossover_privacy"], [79.93, 20.33, 11.30, 7.82, 18.13, 6.87, 26.07],
                               rtol=0.01)
    np.testing.assert_allclose(a.table["crossover_total"], [107.0, 22.35, 11.98, 8.17, 19.76, 7.13, 29.29],
                               rtol=0.01)
    assert a.pop_strat_rmse / a.pop_naive_rmse == pytest.approx(2.3639, rel=1e-3)
    assert a.table["stratified_better"].tolist() == [True] * 6 + [False]
    low = S.analytic_mean_errors(P2_SIZES, R=2.5, gamma=0.1, epsilon=0.2, mu=P2_MU)
    assert low.table["stratified_better"].tolist() == [True] * 4 + [False] * 3
    high = S.analytic_mean_errors(P2_SIZES, R=2.5, gamma=0.1, epsilon=5.0, mu=P2_MU)
    assert high.table["stratified_better"].tolist() == [True] * 6 + [False]


def test_x4_min_frac_marks_small_groups():
    x = np.zeros(sum(P2_SIZES))
    g = np.repeat(np.arange(7), P2_SIZES)
    r1 = S.stratified_mean_release(x, g, R=2.5, gamma=0.1, epsilon=1, rng=0, min_frac=0.001)
    assert r1.pooled.tolist() == [False] * 6 + [True]
    r2 = S.stratified_mean_release(x, g, R=2.5, gamma=0.1, epsilon=1, rng=0, min_frac=0.005)
    assert r2.pooled.tolist() == [False] * 5 + [True, True]
    assert r2.groups[5] == r2.groups[6]  # the pooled stratum is estimated once
    r3 = S.stratified_mean_release(x, g, R=2.5, gamma=0.1, epsilon=1, rng=0, min_frac=0.005, small_strata="drop")
    assert np.isnan(r3.groups[5:]).all() and r3.weights[5:].sum() == 0
    assert r3.weights.sum() == pytest.approx(1.0)


def test_crossover_edge_cases():
    assert S.crossover_size(0.0, R=2, gamma=0.1, epsilon=1) == math.inf
    assert S.crossover_size(1e6, R=2, gamma=0.1, epsilon=1) == 1.0
    m = S.crossover_size(0.05, R=2, gamma=0.1, epsilon=1)
    assert S.laplace_scale(m, R=2, gamma=0.1, epsilon=1) == pytest.approx(0.05, rel=1e-8)


def test_tiny_groups_lose_in_simulation():
    # A 5-record group with a small bias is better served by the naive estimate (crossover appears).
    sizes, mu = [3000, 2000, 5], [0.5, -0.5, 0.3]
    cross = S.analytic_mean_errors(sizes, R=2, gamma=0.1, epsilon=1.0, mu=mu).table["crossover_total"]
    assert cross[2] > 5 and cross[0] < 3000
    df = S.run_mean_experiment(sizes=sizes, mu=mu, sigma=1.0, epsilons=[1.0], R=2, gamma=0.1, reps=400, rng=2)
    m = df[df.level == "group"].groupby(["method", "group"])["abs_err"].mean()
    assert m[("stratified", 2)] > m[("naive", 2)]
    assert m[("stratified", 0)] < m[("naive", 0)]


# --- X5 Theorem 10 ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("k,alpha,n,E,worst,best,gap", [
    (5, 0.5, 1000, 21.205443, 26.491587, 10.902743, 0.339098),
    (4, 2, 5000, 27.697344, 28.523595, 11.516393, 0.048582),
    (6, 0.25, 20000, 33.837264, 48.670368, 14.903188, 0.439276),
    (2, 1, 100, 7.210340, 7.824046, 5.584967, 0.274088),
])
def test_x5_theorem10(k, alpha, n, E, worst, best, gap):
    assert S.theorem10_expectation(k, alpha, n) == pytest.approx(E, rel=1e-6)
    b = S.logsum_bounds(k, n)
    assert b.worst == pytest.approx(worst, rel=1e-6)
    assert b.best == pytest.approx(best, rel=1e-6)
    assert b.integer_floor == pytest.approx(math.log(n - k + 1))
    assert S.gap_share(k, alpha, n) == pytest.approx(gap, rel=1e-5)


def test_x5_by_alpha():
    vals = [S.theorem10_expectation(6, a, 5000) for a in [0.05, 0.1, 0.2, 0.5, 1, 2, 10]]
    np.testing.assert_allclose(vals, [-50.8688, -2.1957, 21.1032, 33.7854, 37.4032, 38.9839, 40.0977], atol=1e-4)


def test_theorem10_by_monte_carlo_continuous_sizes():
    r = np.random.default_rng(5)
    g = r.dirichlet(np.full(5, 0.7), size=200_000)
    mc = np.log(1000 * g).sum(axis=1)
    assert S.theorem10_expectation(5, 0.7, 1000) == pytest.approx(mc.mean(), abs=4 * mc.std() / math.sqrt(mc.size))


def test_integer_logsum_mc_between_floor_and_worst():
    v = S.integer_logsum_mc(6, 0.05, 5000, draws=500, rng=0)
    b = S.logsum_bounds(6, 5000)
    assert b.integer_floor <= v <= b.worst
    assert S.theorem10_expectation(6, 0.05, 5000) < 0 < v


# --- X6 α MLE -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("v,alpha", [([0.6, 0.25, 0.1, 0.05], 1.073104), ([0.9, 0.05, 0.03, 0.02], 0.415610),
                                     ([0.4, 0.35, 0.25], 17.896526)])
def test_x6_alpha_mle(v, alpha):
    a = S.fit_symmetric_dirichlet_alpha(v)
    assert a == pytest.approx(alpha, abs=1e-6)  # the spec prints 6 decimals
    assert special.digamma(a) - special.digamma(len(v) * a) == pytest.approx(np.mean(np.log(v)), abs=1e-9)


def test_x6_alpha_equal_and_errors():
    assert S.fit_symmetric_dirichlet_alpha([5, 5, 5]) == math.inf
    with pytest.raises(ValueError):
        S.fit_symmetric_dirichlet_alpha([0.5, 0.5, 0.0])
    with pytest.raises(ValueError):
        S.fit_symmetric_dirichlet_alpha([1.0])


def test_x6_alpha_adult():
    from dpdash.common.data import load_adult

    df = load_adult().df
    race = df.groupby("race").size().to_numpy()
    sexrace = df.groupby(["sex", "race"]).size().to_numpy()
    sex = df.groupby("sex").size().to_numpy()
    assert S.fit_symmetric_dirichlet_alpha(race) == pytest.approx(0.370766, rel=1e-5)
    assert S.fit_symmetric_dirichlet_alpha(sexrace) == pytest.approx(0.393186, rel=1e-5)
    assert S.fit_symmetric_dirichlet_alpha(sex) == pytest.approx(4.0578, rel=1e-4)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.01, 1.0), min_size=2, max_size=8))
def test_alpha_mle_solves_moment_equation(v):
    v = np.array(v)
    a = S.fit_symmetric_dirichlet_alpha(v)
    if math.isfinite(a) and 1e-7 < a < 1e7:
        w = v / v.sum()
        assert special.digamma(a) - special.digamma(len(v) * a) == pytest.approx(np.mean(np.log(w)), abs=1e-8)


# --- X7 sizes and Dirichlet -------------------------------------------------------------------------------

def test_x7_proportions_to_sizes():
    assert S.proportions_to_sizes([0.5, 0.3, 0.2], 7).tolist() == [3, 2, 2]
    assert S.proportions_to_sizes([0.97, 0.02, 0.01], 100).tolist() == [95, 3, 2]
    assert S.proportions_to_sizes([0.97, 0.02, 0.01], 100, min_size=0).tolist() == [97, 2, 1]
    assert S.proportions_to_sizes([1 / 3] * 3, 10).tolist() == [4, 3, 3]
    with pytest.raises(ValueError):
        S.proportions_to_sizes([0.5, 0.5], 1)
    with pytest.raises(ValueError):
        S.proportions_to_sizes([0.0, 0.0], 10)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 10.0), min_size=2, max_size=12).filter(lambda w: sum(w) > 0),
       st.integers(12, 10_000), st.integers(0, 1))
def test_sizes_sum_and_minimum(w, n, min_size):
    s = S.proportions_to_sizes(w, n, min_size=min_size)
    assert s.sum() == n and (s >= min_size).all()
    # Largest remainder is within one unit of the exact proportional share of the remainder.
    w = np.array(w) / np.sum(w)
    assert np.all(np.abs(s - min_size - w * (n - len(w) * min_size)) < 1 + 1e-9)


def test_x7_realized_logsum():
    assert S.realized_logsum([600, 300, 80, 20]) == pytest.approx(19.478471, rel=1e-6)
    assert S.realized_logsum([600, 300, 80, 20]) <= S.logsum_bounds(4, 1000).worst
    assert S.logsum_bounds(4, 1000).worst == pytest.approx(22.085844, rel=1e-6)


def test_x7_dirichlet_shape():
    s1 = S.dirichlet_shape_mc(2, 1.0, draws=100_000, rng=0)
    assert s1.mean_max == pytest.approx(0.75, abs=0.003)
    s2 = S.dirichlet_shape_mc(2, 0.5, draws=100_000, rng=1)
    assert s2.mean_max == pytest.approx(0.5 + 1 / math.pi, abs=0.003)
    assert S.dirichlet_share_variance(4, 0.5) == pytest.approx(0.0625)
    s3 = S.dirichlet_shape_mc(4, 0.5, draws=100_000, rng=2)
    assert s3.var_first == pytest.approx(0.0625, rel=0.03)


def test_table3_preset():
    t = S.table3_preset()
    assert len(t) == 18 and t["count"].sum() == 196967
    assert len(S.preset_sizes("race")) == 9 and S.preset_sizes("race").sum() == 196967
    assert S.preset_sizes("sex").to_dict() == {"Female": 101805, "Male": 95162}


def test_gaussian_mixture_draw_order():
    a = S.make_gaussian_mixture([3, 2], rng=7, sigma_mode="uniform")
    r = np.random.default_rng(7)
    mu = r.normal(0, 1, 2)
    sig = r.uniform(0.1, 2.0, 2)
    x0 = r.normal(mu[0], sig[0], 3)
    np.testing.assert_allclose(a.mu, mu)
    np.testing.assert_allclose(a.sigma, sig)
    np.testing.assert_allclose(a.x[:3], x0)


# --- X8 Coinpress -----------------------------------------------------------------------------------------

def test_x8_uvm_constants():
    c = S.uvm_constants(2000, low=-4, high=4, sigma=1, rho=0.1, beta=0.01)
    assert c.projection_high == pytest.approx(9.079216, rel=1e-6)
    assert c.projection_low == pytest.approx(-9.079216, rel=1e-6)
    assert c.delta == pytest.approx(0.0090792, rel=1e-4)
    assert c.noise_sd == pytest.approx(0.0203017, rel=1e-5)
    assert c.half_width == pytest.approx(0.0983150, rel=1e-5)
    iv = S.coinpress_uvm(np.zeros(2000), low=-4, high=4, sigma=1, rho=0.1, beta=0.01, rng=0)
    assert iv.high - iv.low == pytest.approx(2 * 0.0983150, rel=1e-5)


def test_x8_coinpress_monte_carlo():
    df = S.run_mean_experiment(sizes=P1_SIZES, mu=P1_MU, sigma=1.0, epsilons=[1.0], R=3, gamma=0.1, reps=3000,
                               rng=4, estimator="coinpress", beta=0.01)
    assert set(df.method) == {"coinpress", "strat_coinpress"}
    m = df.groupby(["method", "group"])["abs_err"].mean().unstack()
    np.testing.assert_allclose(m.loc["coinpress", [-1, 0, 1, 2, 3, 4]],
                               [0.00822, 0.1951, 0.8049, 1.1951, 1.3049, 1.6951], rtol=0.2)
    np.testing.assert_allclose(m.loc["strat_coinpress", [-1, 0, 1, 2, 3, 4]],
                               [0.00840, 0.0114, 0.0152, 0.0219, 0.0464, 0.134], rtol=0.2)


def test_coinpress_release_budget_and_unit():
    r = S.make_gaussian_mixture(P1_SIZES, mu=P1_MU, rng=0)
    c = S.coinpress_release(r.x, r.groups, low=-3, high=3, sigma=1.5, rhos=(0.125, 0.375), beta=0.01, rng=0)
    s = S.strat_coinpress(r.x, r.groups, low=-3, high=3, sigmas=1.0, rhos=(0.125, 0.375), beta=0.01, rng=0)
    assert c.budget == s.budget == pytest.approx(0.5)
    assert c.privacy_unit == s.privacy_unit == "rho-zCDP"
    assert s.population == pytest.approx(np.sum(np.array(P1_SIZES) / 10000 * s.groups))
    with pytest.raises(ValueError):
        S.coinpress_uvmrec(r.x, low=-3, high=3, sigma=1, rhos=[], beta=0.01, rng=0)


# --- X11 budgets -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("k", [2, 5, 18, 50])
def test_x11_budget_equals_epsilon_whatever_k(k):
    sizes = S.proportions_to_sizes(S.draw_group_proportions(k, 0.5, rng=k), 5000)
    d = S.make_gaussian_mixture(sizes, rng=0)
    for eps in (0.1, 1.0, 3.0):
        assert S.stratified_mean_release(d.x, d.groups, R=3, gamma=0.05, epsilon=eps, rng=0).budget == eps
        assert S.split_budget_release(d.x, d.groups, R=3, gamma=0.05, epsilon=eps, rng=0).budget == eps
        assert S.naive_mean_release(d.x, d.groups, R=3, gamma=0.05, epsilon=eps, rng=0).budget == eps


def test_stratified_population_is_weighted_group_mean():
    d = S.make_gaussian_mixture(P1_SIZES, mu=P1_MU, rng=1)
    r = S.stratified_mean_release(d.x, d.groups, R=2, gamma=0.1, epsilon=1, rng=1)
    assert r.population == pytest.approx(np.sum(np.array(P1_SIZES) / 10000 * r.groups))
    assert r.kept.all() and not r.pooled.any()


# --- X13 monotonicity -------------------------------------------------------------------------------------

def test_x13_naive_does_not_shrink_stratified_does():
    df = S.run_mean_experiment(sizes=P1_SIZES, mu=P1_MU, sigma=1.0, epsilons=[0.1, 1.0, 10.0], R=2, gamma=0.1,
                               reps=2000, rng=8, methods=("naive", "stratified"))
    g = df[df.level == "group"].groupby(["method", "group", "epsilon"])["abs_err"]
    mean, se = g.mean(), g.std() / np.sqrt(g.count())
    d = np.abs(np.sum(np.array(P1_SIZES) * P1_MU) / 10000 - np.array(P1_MU))
    for i in range(5):
        for e in (0.1, 1.0, 10.0):
            assert abs(mean[("naive", i, e)] - d[i]) < 0.01
        m = [mean[("stratified", i, e)] for e in (0.1, 1.0, 10.0)]
        s = [se[("stratified", i, e)] for e in (0.1, 1.0, 10.0)]
        assert m[1] <= m[0] + 3 * math.hypot(s[0], s[1])
        assert m[2] <= m[1] + 3 * math.hypot(s[1], s[2])
    # At ε = 0.1 the smallest group's stratified error is clearly above its ε = 10 error.
    assert mean[("stratified", 4, 0.1)] > 2 * mean[("stratified", 4, 10.0)]


# --- Parity (X9, Def. 11) -------------------------------------------------------------------------------

def test_x9_mean_parity_by_method():
    # X9's groups and population in repetition 0, an exact release in repetition 1: φ averages to X9 / 2
    rows = []
    for rep, est_g, est_p in ((0, [2.2, 3, 5.5], 3.4), (1, [2, 4, 5], 3.5)):
        rows += [dict(epsilon=1.0, method="stratified", level="group", rep=rep, truth=t, estimate=e)
                 for t, e in zip([2, 4, 5], est_g)]
        rows.append(dict(epsilon=1.0, method="stratified", level="population", rep=rep, truth=3.5, estimate=est_p))
    # another ε and a method with no population row must not leak in
    rows.append(dict(epsilon=0.5, method="stratified", level="group", rep=0, truth=2, estimate=99.0))
    rows.append(dict(epsilon=1.0, method="naive", level="group", rep=0, truth=2, estimate=2.0))
    df = pd.DataFrame(rows)
    phi = S.mean_parity_by_method(df, epsilon=1.0)
    assert phi["stratified"] == pytest.approx(0.4595238 / 2, rel=1e-6)
    assert math.isnan(phi["naive"])
    assert S.mean_parity_by_method(df, epsilon=1.0, normalized=False)["stratified"] == pytest.approx(1.7333333 / 2,
                                                                                                      rel=1e-6)
    # masking out the first group: φ = ω|0.1/3.5| + |1/4| + |0.5/5| with ω = 1/2, halved over the repetitions
    masked = S.mean_parity_by_method(df, epsilon=1.0, group_mask=[False, True, True])["stratified"]
    assert masked == pytest.approx((0.5 * 0.1 / 3.5 + 0.25 + 0.1) / 2, rel=1e-9)


def test_x9_parity_error():
    assert S.parity_error([2, 4, 5], [2.2, 3, 5.5], 3.5, 3.4, omega=1 / 3) == pytest.approx(0.4595238, rel=1e-6)
    assert S.parity_error([2, 4, 5], [2.2, 3, 5.5], 3.5, 3.4, omega=1 / 3, normalized=False) == pytest.approx(
        1.7333333, rel=1e-6)
    # Default ω = 1/k.
    assert S.parity_error([2, 4, 5], [2.2, 3, 5.5], 3.5, 3.4) == pytest.approx(0.4595238, rel=1e-6)


# --- Weights modes ---------------------------------------------------------------------------------------

def test_holdout_and_noisy_weights_run():
    h = S.run_mean_experiment(sizes=P1_SIZES, mu=P1_MU, sigma=1, epsilons=[1.0], R=2, gamma=0.1, reps=3, rng=0,
                              weights_mode="holdout", holdout_frac=0.5)
    assert (h[h.level == "population"]["n_i"] < 10000).all()
    nz = S.run_mean_experiment(sizes=P1_SIZES, mu=P1_MU, sigma=1, epsilons=[1.0], R=2, gamma=0.1, reps=3, rng=0,
                               weights_mode="noisy", epsilon_weights=0.5)
    assert np.isfinite(nz["estimate"]).all()


# --- Validation ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    dict(epsilon=0), dict(epsilon=float("nan")), dict(gamma=1.0), dict(gamma=0.0), dict(R=-1.0),
])
def test_release_validation(kwargs):
    base = dict(R=2.0, gamma=0.1, epsilon=1.0, rng=0)
    base.update(kwargs)
    with pytest.raises(ValueError):
        S.stratified_mean_release([0.0, 1.0], [0, 1], **base)


def test_more_validation():
    with pytest.raises(ValueError):
        S.laplace_mean([], R=1, gamma=0.1, epsilon=1, rng=0)
    with pytest.raises(ValueError):
        S.naive_mean_release([0.0, 1.0], [0], R=1, gamma=0.1, epsilon=1, rng=0)
    with pytest.raises(ValueError):
        S.stratified_mean_release([0.0, 1.0], [0, 1], R=1, gamma=0.1, epsilon=1, rng=0, min_frac=1.0)
    with pytest.raises(ValueError):
        S.stratified_mean_release([0.0, 1.0], [0, 1], R=1, gamma=0.1, epsilon=1, rng=0, min_frac=0.6,
                                  small_strata="drop")
    with pytest.raises(ValueError):
        S.draw_group_proportions(1, 1.0, rng=0)
    with pytest.raises(ValueError):
        S.draw_group_proportions(3, 0.0, rng=0)
    with pytest.raises(ValueError):
        S.clip_halfwidth(0.5, R=1, gamma=0.1)
    with pytest.raises(ValueError):
        S.clip_halfwidth(10, R=1, gamma=0.1, mode="exact")
    with pytest.raises(ValueError):
        S.run_mean_experiment(sizes=[5, 5], mu=[0, 0], sigma=1, epsilons=[1], R=1, gamma=0.1, reps=1, rng=0,
                              estimator="gauss")
    with pytest.raises(ValueError):
        S.parity_error([1, 2], [1, 2], 1, 1, omega=-1)
    with pytest.raises(ValueError):
        S.crossover_size(-1, R=1, gamma=0.1, epsilon=1)


# --- Fast path and figures -------------------------------------------------------------------------------

def test_sorted_fast_path_equals_general_clipping():
    d = S.make_gaussian_mixture([300, 5, 0, 80], mu=[3.0, -4.0, 0.0, 9.0], rng=3)
    lay = S._layout(np.bincount(d.groups, minlength=4), 0.02, "pool")
    fast = S._laplace_precompute(d.x, d.groups, lay, 1.0, 0.1, "paper", ("stratified",))
    perm = np.random.default_rng(0).permutation(d.x.size)
    slow = S._laplace_precompute(d.x[perm], d.groups[perm], lay, 1.0, 0.1, "paper", ("stratified",))
    np.testing.assert_allclose(fast["means"], slow["means"], rtol=1e-12)
    # Independent check of one stratum: the kept group 0 clipped at C(300).
    c0 = S.clip_halfwidth(300, R=1.0, gamma=0.1)
    assert fast["means"][0] == pytest.approx(np.clip(d.x[d.groups == 0], -c0, c0).mean())


def test_figures_build():
    from dpdash.stratify import figures as F

    sizes = np.array([5000, 300, 4])
    fig = F.make_group_sizes_figure(sizes, ["a", "b", "c"], ["kept", "kept", "pooled"])
    assert {t.name for t in fig.data} == {"Kept", "Pooled"}
    df = S.run_mean_experiment(sizes=sizes, mu=[0.0, 1.0, -1.0], sigma=1, epsilons=[1.0, 0.1], R=2, gamma=0.1,
                               reps=3, rng=0)
    a = S.analytic_mean_errors(sizes, R=2, gamma=0.1, epsilon=1.0, mu=[0.0, 1.0, -1.0])
    g = F.make_group_error_figure(df, a.table, epsilon=1.0, R=2, gamma=0.1, min_frac=0.001, n=5304)
    names = [t.name for t in g.data]
    assert any("Crossover" in n for n in names) and any("bias" in n for n in names)
    assert len(F.make_epsilon_sweep_figure(df).data) == 6
    t = F.make_theorem10_figure(6, 5000, 0.3, 0.5, mc=pd.DataFrame({"alpha": [0.1, 1], "mean": [10.0, 30.0]}))
    curve = t.data[0]
    assert curve.y[0] == pytest.approx(S.theorem10_expectation(6, curve.x[0], 5000))
    tern = F.make_dirichlet_ternary_figure({0.1: np.full((2, 3), 1 / 3)})
    assert tern.data[0].type == "scatterternary"


def test_group_moments_match_pandas_groupby():
    import pandas as pd

    rng = np.random.default_rng(5)
    g = rng.integers(0, 4, 500)
    x = rng.normal(g, 1 + g)
    sizes, means, sds = S.group_moments(x, g, 5)
    ref = pd.DataFrame({"x": x, "g": g}).groupby("g")["x"].agg(["size", "mean", lambda v: v.std(ddof=0)])
    assert sizes[:4].tolist() == ref["size"].tolist() and sizes[4] == 0
    assert np.allclose(means[:4], ref["mean"]) and np.allclose(sds[:4], ref.iloc[:, 2])
    assert means[4] == 0.0


# ---------------------------------------------------------------------------------------------------------
# The kept / pooled / dropped rule (spec §2.3), one definition that the page calls (issue 13)
# ---------------------------------------------------------------------------------------------------------
P2_SIZES = [6000, 2500, 1000, 400, 80, 15, 5]


@pytest.mark.parametrize("min_frac,small,expected", [
    (0.001, "pool", ["kept"] * 6 + ["pooled"]),                      # spec X4: only the size-5 group is small
    (0.005, "pool", ["kept"] * 5 + ["pooled", "pooled"]),            # spec X4: sizes 15 and 5
    (0.005, "drop", ["kept"] * 5 + ["dropped", "dropped"]),
    (0.0, "drop", ["kept"] * 7),
])
def test_strata_layout_rule_spec_x4(min_frac, small, expected):
    lay = S.strata_layout(np.array(P2_SIZES), min_frac=min_frac, small_strata=small)
    assert list(lay.status) == expected
    # |G_i| ≤ min_frac·n is small (written out here from spec §2.3, n = 10,000)
    n = sum(P2_SIZES)
    assert [("kept" if s > min_frac * n else ("pooled" if small == "pool" else "dropped")) for s in P2_SIZES] \
        == expected
    pooled_total = sum(s for s, st in zip(P2_SIZES, expected) if st == "pooled")
    kept_sizes = [s for s, st in zip(P2_SIZES, expected) if st == "kept"]
    assert list(lay.strata_sizes) == kept_sizes + ([pooled_total] if pooled_total else [])


def test_strata_layout_boundary_is_small():
    # |G_i| = min_frac·n exactly counts as small (spec §2.3: "|G_i| ≤ min_frac·n").
    lay = S.strata_layout(np.array([900, 100]), min_frac=0.1, small_strata="drop")
    assert list(lay.status) == ["kept", "dropped"]


def test_strata_layout_empty_groups_and_all_dropped():
    lay = S.strata_layout(np.array([0, 50, 50]), min_frac=0.0, small_strata="pool")
    assert list(lay.status) == ["dropped", "kept", "kept"]
    one = S.strata_layout(np.array([1, 1, 1]), min_frac=0.5, small_strata="pool")
    assert list(one.status) == ["pooled"] * 3 and list(one.strata_sizes) == [3]  # a single pooled stratum
    with pytest.raises(ValueError, match="every stratum is dropped"):
        S.strata_layout(np.array([1, 1, 1]), min_frac=0.5, small_strata="drop")


@pytest.mark.parametrize("min_frac,small", [(0.05, "pool"), (0.05, "drop"), (0.0, "pool")])
def test_analytic_population_uses_the_released_strata(min_frac, small):
    # Spec X2 sizes; with min_frac 0.05 the size-400 and size-100 groups (≤ 500) are small. The population card
    # must describe the estimator that runs: pooled groups share one stratum of 500 rows; dropped groups leave
    # the recombination (weights renormalised over 9,500 rows). C(m) = R + √log(m/γ) written out (spec §2.2).
    sizes, R, gamma, eps = [5000, 3000, 1500, 400, 100], 2.0, 0.1, 0.5
    C = lambda m: R + math.sqrt(math.log(m / gamma))  # noqa: E731
    n = sum(sizes)
    if min_frac == 0.0:
        strata, n_rel = sizes, n
    elif small == "pool":
        strata, n_rel = [5000, 3000, 1500, 500], n
    else:
        strata, n_rel = [5000, 3000, 1500], 9500
    strat = math.sqrt(8 * sum(C(m) ** 2 for m in strata)) / (n_rel * eps)
    naive = math.sqrt(8) * C(n) / (n * eps)
    a = S.analytic_mean_errors(np.array(sizes), R=R, gamma=gamma, epsilon=eps, min_frac=min_frac, small_strata=small)
    assert a.pop_strat_rmse == pytest.approx(strat, rel=1e-12)
    assert a.pop_naive_rmse == pytest.approx(naive, rel=1e-12)
    assert a.variance_ratio == pytest.approx((strat / naive) ** 2, rel=1e-12)
    if min_frac == 0.0:
        assert a.pop_strat_rmse == pytest.approx(0.0063595, rel=1e-4)  # spec X2


@pytest.mark.parametrize("d,s,b", [(0.0, 1e6, 1e-3), (0.0, 3e4, 1.0), (2.0, 50.0, 0.01), (1e3, 40.0, 0.02),
                                   (0.5, 1.0, 0.3)])
def test_expected_abs_error_when_normal_part_dwarfs_laplace(d, s, b):
    """Issue 12/17: an uploaded column scaled by a tiny public scale gives σ/b ≫ 1, where e^{s²/2b²}·Φ(·)
    overflowed (OverflowError, page crash). Checked against the same law at 60 digits with mpmath."""
    import mpmath as mp
    mp.mp.dps = 60
    D, Sd, B = mp.mpf(d), mp.mpf(s), mp.mpf(b)
    mean_abs_normal = Sd * mp.sqrt(2 / mp.pi) * mp.e ** (-D**2 / (2 * Sd**2)) + D * (1 - 2 * mp.ncdf(-D / Sd))
    lap = mp.e ** (Sd**2 / (2 * B**2)) * (mp.e ** (-D / B) * mp.ncdf(D / Sd - Sd / B)
                                          + mp.e ** (D / B) * mp.ncdf(-D / Sd - Sd / B))
    want = float(mean_abs_normal + B * lap)
    assert S.expected_abs_error(d, s, b) == pytest.approx(want, rel=1e-12)


@settings(max_examples=80, deadline=None)
@given(log_d=st.floats(-6, 3), log_s=st.floats(-6, 6), log_b=st.floats(-6, 6))
def test_expected_abs_error_property_against_mpmath(log_d, log_s, log_b):
    """E|d + N(0, s²) + Lap(b)| over twelve decades of s and b (issue 12: full range), against mpmath."""
    import mpmath as mp
    mp.mp.dps = 80
    d, s, b = 10.0**log_d, 10.0**log_s, 10.0**log_b
    D, Sd, B = mp.mpf(d), mp.mpf(s), mp.mpf(b)
    normal = Sd * mp.sqrt(2 / mp.pi) * mp.e ** (-D**2 / (2 * Sd**2)) + D * (1 - 2 * mp.ncdf(-D / Sd))
    lap = mp.e ** (Sd**2 / (2 * B**2)) * (mp.e ** (-D / B) * mp.ncdf(D / Sd - Sd / B)
                                          + mp.e ** (D / B) * mp.ncdf(-D / Sd - Sd / B))
    want = float(normal + B * lap)
    got = S.expected_abs_error(d, s, b)
    assert math.isfinite(got) and got == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("k, alpha, n", [(2, 0.3, 100), (6, 1.0, 5000), (12, 4.0, 2000), (3, 0.5, 10)])
def test_theorem10_against_mpmath_quadrature(k, alpha, n):
    # each share g_i ~ Beta(α, (k − 1)α); E Σ log(n·g_i) = k·(E log g_1 + log n), E log g_1 by quadrature
    import mpmath as mp
    mp.mp.dps = 30
    a, b = mp.mpf(alpha), mp.mpf((k - 1) * alpha)
    e_log = mp.quad(lambda g: mp.log(g) * g ** (a - 1) * (1 - g) ** (b - 1) / mp.beta(a, b), [0, mp.mpf(1) / 2, 1])
    want = k * (e_log + mp.log(n))
    assert S.theorem10_expectation(k, alpha, n) == pytest.approx(float(want), rel=1e-8)


# --------------------------------------------------------------------------- argument checks, one per domain rule
_X = np.array([0.1, 0.2, 0.3, 0.4])
_G = np.array([0, 0, 1, 1])


@pytest.mark.parametrize("call,match", [
    (lambda: S.naive_mean_release([], [], R=1, gamma=1, epsilon=1, rng=0), "x is empty"),
    (lambda: S.naive_mean_release([0.1, np.nan], [0, 1], R=1, gamma=1, epsilon=1, rng=0), "NaN or infinite"),
    (lambda: S.naive_mean_release(_X, [0, 1], R=1, gamma=1, epsilon=1, rng=0), "same length"),
    (lambda: S.naive_mean_release(_X, [0, 0.5, 1, 1], R=1, gamma=1, epsilon=1, rng=0), "integer codes"),
    (lambda: S.naive_mean_release(_X, [0, -1, 1, 1], R=1, gamma=1, epsilon=1, rng=0), "non-negative integer"),
    (lambda: S.naive_mean_release(_X, [0, 0, 1, 2], R=1, gamma=1, epsilon=1, rng=0, k=2), r"must lie in \[0, 2\)"),
    (lambda: S.proportions_to_sizes([], 10), "weights is empty"),
    (lambda: S.proportions_to_sizes([1, -1], 10), "non-negative and not all zero"),
    (lambda: S.proportions_to_sizes([1, 1], 10, min_size=-1), "min_size must be ≥ 0"),
    (lambda: S.fit_symmetric_dirichlet_alpha([1.0]), "at least 2 group shares"),
    (lambda: S.fit_symmetric_dirichlet_alpha([0.5, np.inf]), "finite and non-negative"),
    (lambda: S.fit_symmetric_dirichlet_alpha([0.5, 0.5, 0.0]), "share is zero"),
    (lambda: S.theorem10_expectation(1, 1.0, 100), "k must be at least 2"),
    (lambda: S.logsum_bounds(1, 100), "k must be at least 2"),
    (lambda: S.logsum_bounds(5, 5), "n must exceed k"),
    (lambda: S.realized_logsum([3, 0]), "all > 0"),
    (lambda: S.integer_logsum_mc(1, 1.0, 10, rng=0), "k must be at least 2"),
    (lambda: S.integer_logsum_mc(3, 1.0, 10, draws=0, rng=0), "draws must be ≥ 1"),
    (lambda: S.integer_logsum_mc(3, 1.0, 10, min_size=0, rng=0), "min_size must be ≥ 1"),
    (lambda: S.integer_logsum_mc(3, 1.0, 5, min_size=2, rng=0), "smaller than k·min_size"),
    (lambda: S.preset_sizes("age"), "level must be"),
    (lambda: S.make_gaussian_mixture([2, -1], rng=0), "non-negative integers"),
    (lambda: S.make_gaussian_mixture([0, 0], rng=0), "sum to zero"),
    (lambda: S.make_gaussian_mixture([2, 2], sigma_mode="wide", rng=0), "sigma_mode"),
    (lambda: S.make_gaussian_mixture([2, 2], mu=[0.0], rng=0), "mu has 1 entries for 2 groups"),
    (lambda: S.make_gaussian_mixture([2, 2], sigma=[1.0, 0.0], rng=0), "sigma must be > 0"),
    (lambda: S.laplace_mean([], R=1, gamma=1, epsilon=1, rng=0), "x is empty"),
    (lambda: S.laplace_mean([np.inf], R=1, gamma=1, epsilon=1, rng=0), "NaN or infinite"),
])
def test_argument_errors_say_what_is_expected(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_preset_levels_add_up_to_table3():
    # S4 Table 3: the coarser levels are sums of the sex × race counts (k = 18 → 9 → 2), same total
    t = S.table3_preset()
    total = int(t["count"].sum())
    assert [len(S.preset_sizes(lv)) for lv in ("sex_race", "race", "sex")] == [18, 9, 2]
    assert all(int(S.preset_sizes(lv).sum()) == total for lv in ("sex_race", "race", "sex"))
    by_race = t.groupby("race")["count"].sum()
    assert S.preset_sizes("race").sort_index().tolist() == by_race.sort_index().tolist()


def test_naive_group_error_is_the_quadrature_of_bias_normal_and_laplace():
    # E|d + N(0, s²) + Lap(b)| by quadrature, using E|c + Lap(b)| = |c| + b·e^{−|c|/b}; the global release's
    # Laplace scale is 2C(n)/(nε) (S4 L111–125) and its statistical sd √(Σ nᵢσᵢ²)/n
    from scipy import integrate
    sizes, mu, sigma, eps, R, gamma = [40, 160, 800], [0.0, 0.5, -1.0], [1.0, 0.5, 2.0], 0.5, 3.0, 0.1
    res = S.analytic_mean_errors(sizes, R=R, gamma=gamma, epsilon=eps, mu=mu, sigma=sigma)
    n = sum(sizes)
    b = 2 * S.clip_halfwidth(n, R=R, gamma=gamma) / (n * eps)
    sd = math.sqrt(sum(s_ * g * g for s_, g in zip(sizes, sigma))) / n
    mu_pop = sum(s_ * m for s_, m in zip(sizes, mu)) / n
    assert res.pop_naive_mean_abs == pytest.approx(b, rel=1e-12)
    for i in range(3):
        d = abs(mu_pop - mu[i])
        val = integrate.quad(lambda z: (abs(d + z) + b * math.exp(-abs(d + z) / b)) * stats.norm.pdf(z, 0, sd),
                             -12 * sd, 12 * sd, points=[-d], limit=200)[0]
        assert res.table["naive_total_mean_abs"][i] == pytest.approx(val, rel=1e-6)
