"""Tests for engine.private_tests: spec §8–9 (weighted χ² tails, closed forms, MC vs asymptotics)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from engine import private_tests as P


# --------------------------------------------------------------------------- worked examples (spec §9)
def test_worked_examples():
    assert P.mc_rank(99, 0.05) == 95
    assert P.weighted_chisq_sf(9.0, [1] * 5) == pytest.approx(0.1090642, rel=1e-6)
    assert sorted(P.gof_null_weights([0.5, 0.5], n=1000, rho=0.01)) == pytest.approx([0.2, 1.2], rel=1e-12)


# --------------------------------------------------------------------------- weighted χ² (spec §8.8)
@pytest.mark.parametrize("w,df", [(2.0, 3), (0.5, 10), (1.0, 1)])
def test_equal_weights_give_chi2(w, df):
    for x in (0.3, 2.0, 9.0, 30.0):
        assert P.weighted_chisq_sf(x, [w] * df) == pytest.approx(stats.chi2.sf(x / w, df), abs=1e-8)


@pytest.mark.parametrize("w", [[2, 2, 1, 1], [3.0, 0.5, 0.5, 0.5, 0.5], [1.2] * 6 + [0.2]])
@pytest.mark.parametrize("x", [0.5, 3.0, 8.0, 20.0])
def test_convolution_agrees_with_imhof(w, x):
    assert P.weighted_chisq_sf(x, w, method="convolution") == pytest.approx(P.weighted_chisq_sf(x, w, method="imhof"), abs=1e-7)


@pytest.mark.parametrize("w", [[3, 2, 2, 1, 0.5], [5, 1, 0.3, 0.2]])
def test_imhof_agrees_with_monte_carlo(w):
    rng = np.random.default_rng(11)
    draws = rng.chisquare(1, (200_000, len(w))) @ np.asarray(w, float)  # independent of the engine's MC
    for x in (1.0, 6.0, 15.0):
        assert P.weighted_chisq_sf(x, w) == pytest.approx(np.mean(draws > x), abs=0.005)
        assert P.weighted_chisq_sf(x, w, method="mc", rng=np.random.default_rng(3)) == pytest.approx(np.mean(draws > x), abs=0.005)


def test_quantile_inverts_sf():
    w = [1.4, 1.4, 1.4, 0.4]
    q = P.weighted_chisq_quantile(w, alpha=0.05)
    assert P.weighted_chisq_sf(q, w) == pytest.approx(0.05, abs=1e-6)


# --------------------------------------------------------------------------- closed forms (spec §8.9)
def _mats(p, n, rho):
    d = p.size
    sig = np.diag(p) - np.outer(p, p) + np.eye(d) / (n * rho)
    pi = np.eye(d) - np.ones((d, d)) / d
    return np.linalg.inv(sig), pi


@pytest.mark.parametrize("p0", [[0.25] * 4, [0.5, 1 / 6, 1 / 6, 1 / 6], [0.1, 0.2, 0.3, 0.15, 0.25]])
@pytest.mark.parametrize("rho", [0.00125, 0.1, 5.0])
def test_statistics_equal_matrix_forms(p0, rho):
    p = np.asarray(p0)
    n = 2000
    rng = np.random.default_rng(5)
    z = rng.normal(0, 1 / math.sqrt(rho), p.size)
    h = rng.multinomial(n, p) + z
    minv, pi = _mats(p, n, rho)
    v = (h - n * p) / math.sqrt(n)
    q = float(v @ minv @ v)
    qq = float(v @ pi @ minv @ pi @ v)
    assert P.nonprojected_statistic(h, p, n=n, rho=rho) == pytest.approx(q, rel=1e-10)
    assert P.projected_statistic(h, p, n=n, rho=rho) == pytest.approx(qq, rel=1e-10, abs=1e-9)
    diff = P.nonprojected_statistic(h, p, n=n, rho=rho) - P.projected_statistic(h, p, n=n, rho=rho)
    assert diff == pytest.approx(rho / p.size * z.sum() ** 2, rel=1e-8, abs=1e-9)


def test_uniform_null_weights():
    d, n, rho = 6, 500, 0.02
    w = P.gof_null_weights(np.full(d, 1 / d), n=n, rho=rho)
    assert sorted(w) == pytest.approx(sorted([1 + d / (n * rho)] * (d - 1) + [d / (n * rho)]), rel=1e-10)


def test_indep_weights_reduce_to_chi2_without_noise():
    w = P.indep_null_weights([0.3, 0.7], [0.2, 0.5, 0.3], n=10**9, rho=10.0)
    big = w[w > 1e-3]
    assert big == pytest.approx(np.ones(2), abs=1e-6)  # (r−1)(c−1) = 2 unit weights


# --------------------------------------------------------------------------- tests: size and power
def test_critical_values_and_naive_size():
    p = np.full(100, 0.01)
    cv = P.gof_critical_values(p, n=1000, rho=0.00125)
    assert cv.classical == pytest.approx(stats.chi2.isf(0.05, 99))
    assert cv.projected == pytest.approx(stats.chi2.isf(0.05, 99))
    assert cv.nonprojected == pytest.approx(stats.chi2.isf(0.05, 100))
    assert cv.asympt_gof > cv.classical
    # the classical test on noisy counts almost always rejects a true null at this privacy level
    assert P.naive_type_one_error(p, n=1000, rho=0.00125) > 0.99
    # ... and is nearly valid when the noise is negligible
    assert P.naive_type_one_error(p, n=10**7, rho=10.0) == pytest.approx(0.05, abs=0.005)


def test_mc_critical_value_vs_asymptotic():
    # Alg. 8's rank statistic estimates the same quantile as the AsymptGOF null: compare on many null draws
    p = np.array([0.5, 1 / 6, 1 / 6, 1 / 6])
    n, rho = 5000, 0.01
    rng = np.random.default_rng(2)
    h = rng.multinomial(n, p, size=20_000) + rng.normal(0, 1 / math.sqrt(rho), (20_000, 4))
    t = P.naive_statistic(h, p, n=n)
    m = 20_000 - 1
    mc_q = np.sort(t)[P.mc_rank(m, 0.05) - 1]
    asym_q = P.weighted_chisq_quantile(P.gof_null_weights(p, n=n, rho=rho), alpha=0.05)
    assert mc_q == pytest.approx(asym_q, rel=0.03)
    proj = P.projected_statistic(h, p, n=n, rho=rho)
    assert np.quantile(proj, 0.95) == pytest.approx(stats.chi2.isf(0.05, 3), rel=0.03)


def test_simulated_size_and_power():
    p0 = np.array([0.5, 1 / 6, 1 / 6, 1 / 6])
    calls = []
    res = P.simulate_gof(p0, p0, n=1000, alpha=0.05, noise="gaussian", rho=0.00125, trials=1000, m=59,
                         rng=np.random.default_rng(0), progress=calls.append)
    assert res.rates["classical_noisy"] > 0.5          # invalid: far above α
    for t in ("asympt_gof", "projected", "mc_gof"):
        assert abs(res.rates[t] - 0.05) < 4 * math.sqrt(0.05 * 0.95 / 1000) + 0.01
    assert len(calls) >= 50 and calls[-1] == 1.0
    p1 = p0 + 0.05 * np.array([1, -1 / 3, -1 / 3, -1 / 3])
    pw = P.simulate_gof(p0, p1, n=20000, alpha=0.05, noise="laplace", epsilon=0.5, trials=300, m=59,
                        rng=np.random.default_rng(1), tests=("projected", "mc_gof"))
    assert pw.rates["projected"] > 0.5


def test_asymptotic_power_properties():
    p0 = np.array([0.25] * 4)
    dl = 0.01 * np.array([1, -1, -1, 1])
    a = [P.asymptotic_power(p0, dl, n=n, rho=0.00125, test="projected") for n in (1e3, 1e4, 1e5)]
    assert a[0] < a[1] < a[2]
    assert P.asymptotic_power(p0, dl, n=1e5, rho=0.00125, test="projected") >= \
        P.asymptotic_power(p0, dl, n=1e5, rho=0.00125, test="nonprojected") - 1e-12
    assert P.asymptotic_power(p0, dl, n=1e5, rho=0.00125, test="classical_nonprivate") >= \
        P.asymptotic_power(p0, dl, n=1e5, rho=0.00125, test="projected") - 1e-12
    # non-private power equals the ncχ² formula computed independently
    nu = 1e5 * np.sum(dl**2 / p0)
    assert P.asymptotic_power(p0, dl, n=1e5, rho=1, test="classical_nonprivate") == pytest.approx(
        stats.ncx2.sf(stats.chi2.isf(0.05, 3), 3, nu))


def test_independence_statistic_and_simulation():
    rng = np.random.default_rng(4)
    tp = np.outer([2 / 3, 1 / 3], [0.5, 0.5])
    h = rng.multinomial(5000, tp.ravel()).reshape(2, 2) + rng.normal(0, 10, (2, 2))
    s = P.projected_independence_statistic(h, n=5000, rho=0.01)
    assert s is not None and s >= 0
    assert P.projected_independence_statistic(np.array([[1.0, 2.0], [3.0, 1.0]]), n=7, rho=1.0) is None
    res = P.simulate_independence(tp, n=5000, alpha=0.05, noise="gaussian", rho=0.01, trials=120,
                                  tests=("projected",), rng=np.random.default_rng(0))
    assert res.rates["projected"] < 0.15


@pytest.mark.parametrize("call,match", [
    (lambda: P.gof_null_weights([0.5, 0.6], n=10, rho=1), "sum to 1"),
    (lambda: P.gof_null_weights([1.0], n=10, rho=1), "d ≥ 2"),
    (lambda: P.gof_null_weights([0.0, 1.0], n=10, rho=1), "> 0"),
    (lambda: P.asymptotic_power([0.5, 0.5], [0.1, 0.1], n=10, rho=1), "sum to 0"),
    (lambda: P.mc_rank(10, 0.05), "1/alpha"),
    (lambda: P.simulate_gof([0.5, 0.5], [0.5, 0.5], n=10, alpha=0.05, noise="gaussian", rho=1, trials=10**6,
                            rng=np.random.default_rng(0)), "trials"),
    (lambda: P.simulate_gof([0.5, 0.5], [0.5, 0.5], n=10, alpha=0.05, noise="gaussian", rho=1, epsilon=1,
                            rng=np.random.default_rng(0)), "exactly one"),
])
def test_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@settings(max_examples=20)
@given(x1=st.floats(0.1, 40), x2=st.floats(0.1, 40),
       w=st.lists(st.floats(0.05, 5), min_size=1, max_size=6))
def test_sf_monotone(x1, x2, w):
    lo, hi = sorted((x1, x2))
    assert P.weighted_chisq_sf(hi, w) <= P.weighted_chisq_sf(lo, w) + 1e-7
