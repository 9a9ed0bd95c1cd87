"""Edge branches and argument refusals of dpdash.epsilon.private_tests, checked against scipy.stats or formulas
written here.

Monte Carlo runs are tiny (a handful of trials, fixed seeds); where a rate is asserted it is forced by the setup.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpdash.epsilon import private_tests as P

P0 = [0.25, 0.25, 0.25, 0.25]
TABLE = [[0.25, 0.25], [0.25, 0.25]]


# --------------------------------------------------------------------------- refusals name the bad argument
@pytest.mark.parametrize("call, word", [
    (lambda: P.weighted_chisq_sf(1.0, [1.0, -1.0]), "weights"),
    (lambda: P.weighted_chisq_sf(1.0, [0.0, 0.0]), "weight"),
    (lambda: P.weighted_chisq_sf(1.0, [1.0, 2.0, 3.0], method="convolution"), "convolution"),
    (lambda: P.weighted_chisq_sf(1.0, [1.0], method="saddlepoint"), "method"),
    (lambda: P.classical_statistic([1, 2, 3], P0), "p0"),
    (lambda: P.projected_independence_statistic([1.0, 2.0, 3.0, 4.0], n=10, rho=1.0), "noisy_table"),
    (lambda: P.projected_independence_statistic([[1.0, np.nan], [3.0, 4.0]], n=10, rho=1.0), "noisy_table"),
    (lambda: P.default_gof_shift(1), "d"),
    (lambda: P.asymptotic_power(P0, [0.01, -0.01], n=100, rho=1.0), "shift"),
    (lambda: P.asymptotic_power(P0, P.default_gof_shift(4), n=100, rho=1.0, test="wald"), "test"),
    (lambda: P.noise_rho("gaussian", epsilon=1.0), "rho"),
    (lambda: P.noise_rho("laplace", rho=1.0), "epsilon"),
    (lambda: P.noise_rho("cauchy", rho=1.0), "noise"),
    (lambda: P.noisy_table([0.5, 0.5], n=10, noise="gaussian", rho=1.0, rng=0), "table_probs"),
    (lambda: P.simulate_gof(P0, [0.5, 0.5], n=100, alpha=0.05, noise="gaussian", rho=1.0, trials=1, rng=0), "p1"),
    (lambda: P.simulate_gof(P0, P0, n=100, alpha=0.05, noise="gaussian", rho=1.0, tests=("bogus",), trials=1,
                            rng=0), "bogus"),
    (lambda: P.simulate_independence([0.5, 0.5], n=100, alpha=0.05, noise="gaussian", rho=1.0, trials=1, rng=0),
     "table_probs"),
    (lambda: P.simulate_grid("anova", P0, P0, ns=[100], privacy=[1.0], alpha=0.05, noise="gaussian"), "kind"),
    (lambda: P.simulate_grid("gof", P0, P0, ns=[], privacy=[1.0], alpha=0.05, noise="gaussian"), "one n"),
])
def test_refusals_name_the_argument(call, word):
    with pytest.raises(ValueError) as err:
        call()
    assert word in str(err.value)


# --------------------------------------------------------------------------- weighted chi-square edges
@pytest.mark.parametrize("method", ["convolution", "imhof"])
def test_tail_at_or_below_zero_is_one(method):
    # Σλⱼχ²₁ > 0 almost surely, and scipy agrees for a plain χ²
    assert stats.chi2.sf(0.0, 3) == 1.0
    assert P.weighted_chisq_sf(0.0, [1.0, 2.0, 3.0] if method == "imhof" else [1.0, 2.0], method=method) == 1.0
    assert P.weighted_chisq_sf(-2.0, [1.0, 2.0, 3.0] if method == "imhof" else [1.0, 2.0], method=method) == 1.0


def test_quantile_with_equal_weights_is_scaled_chi2():
    # 2·χ²₂: the 95% quantile is 2·χ²₂,0.95 (the bracket collapses to one point)
    q = P.weighted_chisq_quantile([2.0, 2.0], alpha=0.05)
    assert q == pytest.approx(2.0 * stats.chi2.isf(0.05, 2), rel=1e-12)


def test_quantile_by_monte_carlo_matches_chi2():
    # 2e5 draws of χ²₃ (fixed seed): the empirical 95% quantile is within 1% of scipy's
    q = P.weighted_chisq_quantile([1.0, 1.0, 1.0], alpha=0.05, method="mc", rng=np.random.default_rng(3))
    assert q == pytest.approx(stats.chi2.isf(0.05, 3), rel=0.01)


def test_sf_below_with_two_weight_values_uses_the_exact_tail():
    # weights (1, 1): χ²₂, whose tail is e^{−x/2}; at x = 4 it is e^{−2} ≈ 0.135
    tail = math.exp(-2.0)
    assert P._sf_below(4.0, np.array([1.0, 1.0]), tail + 0.01) is True
    assert P._sf_below(4.0, np.array([1.0, 1.0]), tail - 0.01) is False


# --------------------------------------------------------------------------- statistics edges
def test_classical_statistic_is_pearson():
    h = np.array([30.0, 20.0, 25.0, 25.0])
    n = h.sum()
    expected = sum((x - n * 0.25) ** 2 / (n * 0.25) for x in h)  # (25+25+0+0)/25 = 2
    assert P.classical_statistic(h, P0) == pytest.approx(expected, rel=1e-12) == pytest.approx(2.0)
    assert P.classical_statistic(h, P0) == pytest.approx(stats.chisquare(h).statistic, rel=1e-12)


def test_projected_independence_needs_a_positive_total():
    assert P.projected_independence_statistic([[-1.0, -2.0], [-3.0, 0.5]], n=100, rho=1.0) is None


def test_projected_independence_test_with_no_conclusion():
    # n = 10: n·π̃ᵢπ̃ⱼ sums to 10 over 4 cells, so some cell is ≤ 5 and the rule of thumb gives no conclusion
    res = P.independence_test([[3.0, 2.0], [2.0, 3.0]], n=10, rho=1.0, test="projected")
    assert (res.statistic, res.critical_value, res.reject) == (None, None, False)


# --------------------------------------------------------------------------- simulations (tiny)
def test_small_n_independence_simulation_never_concludes():
    # n = 10 on a 2 × 2 table: the expected counts n·π̃ᵢπ̃ⱼ add up to 10, so not all exceed 5 (classical test
    # skipped), the 2MLE table has a cell < 5 (NULL); and ρ = 1e-4 (noise sd 100) makes some noisy totals ≤ 0.
    seen = []
    res = P.simulate_independence(TABLE, n=10, alpha=0.05, noise="gaussian", rho=1e-4,
                                  tests=("classical_noisy", "asympt_indep"), trials=12,
                                  rng=np.random.default_rng(7), progress=seen.append)
    assert res.rates == {"classical_noisy": 0.0, "asympt_indep": 0.0}
    assert res.std_errors == {"classical_noisy": 0.0, "asympt_indep": 0.0}
    assert seen == pytest.approx([(i + 1) / 12 for i in range(12)])  # chunks of max(1, 12 // 50) = 1 trial


def test_grid_in_parallel_matches_serial():
    kw = dict(ns=[50], privacy=[1.0], alpha=0.2, noise="gaussian", trials=4, m=9, rng=11, chunk=2,
              tests=("classical_noisy",))
    seen = []
    par = P.simulate_grid("gof", P0, [0.4, 0.2, 0.2, 0.2], n_jobs=2, progress=seen.append, **kw)
    ser = P.simulate_grid("gof", P0, [0.4, 0.2, 0.2, 0.2], n_jobs=1, **kw)
    # one spawned seed per chunk: the table does not depend on n_jobs
    pd.testing.assert_frame_equal(par, ser)
    assert seen[-1] == 1.0 and seen == sorted(seen)
    for row in par.to_dict("records"):
        r = row["rate"]
        assert r * 4 == round(r * 4)
        assert row["std_error"] == pytest.approx(math.sqrt(r * (1 - r) / 4))
