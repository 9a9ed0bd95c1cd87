"""Edge branches and argument refusals of dpdash.accounting.mechanisms, checked against formulas written out here or
scipy.
"""

import math

import numpy as np
import pytest
from scipy import stats

from dpdash.accounting import mechanisms as M
from dpdash.common.validation import ValidationError


# --------------------------------------------------------------------------- refusals name the bad argument
@pytest.mark.parametrize("call, word", [
    (lambda: M.query_sensitivity("sum", neighbour="swap"), "neighbour"),
    (lambda: M.query_sensitivity("mean", lower=0, upper=1), "n"),
    (lambda: M.query_sensitivity("median", lower=0, upper=1), "query"),
    (lambda: M.discrete_noise_pmf("laplace", scale=1.0, values=[0]), "mechanism"),
    (lambda: M.half_width("cauchy", scale=1.0), "mechanism"),
    (lambda: M.scale_for_half_width("cauchy", half_width=1.0), "mechanism"),
    (lambda: M.noise_std("cauchy", scale=1.0), "mechanism"),
    (lambda: M.gaussian_sigma(0.5, 1e-5, rule="renyi"), "rule"),
    (lambda: M.calibrate("cauchy", sensitivity=1.0, epsilon=1.0), "mechanism"),
    (lambda: M.calibrate("gaussian", sensitivity=1.0, epsilon=1.0, delta=1e-5, gaussian_rule="rdp"),
     "gaussian_rule"),
    (lambda: M.calibrate("laplace", sensitivity=1.0, rho=0.5), "rho"),
    (lambda: M.calibrate("discrete_laplace", sensitivity=1.0, epsilon=1.0, delta=1e-6), "delta"),
    (lambda: M.adaptive_width("guess", n=100, k=2, beta=0.05), "method"),
    (lambda: M.adaptive_width("nonadaptive", n=100, k=2, beta=0.05, noise="cauchy"), "noise"),
])
def test_refusals_name_the_argument(call, word):
    with pytest.raises(ValueError) as err:
        call()
    assert word in str(err.value)


@pytest.mark.parametrize("n, k, name", [(0.5, 2, "n"), (100, 0.5, "k")])
def test_adaptive_width_refuses_counts_below_one(n, k, name):
    with pytest.raises(ValidationError, match=rf"^{name} must be a finite number ≥ 1"):
        M.adaptive_width("nonadaptive", n=n, k=k, beta=0.05)


# --------------------------------------------------------------------------- edge branches with values
@pytest.mark.parametrize("sigma", [1e16, 3e16, 1e20, 1e100])
def test_discrete_gaussian_half_width_at_huge_sigma(sigma):
    # far past the direct sum the discrete Gaussian is the normal to float precision: h = σ·Φ⁻¹(0.975)
    h = M.half_width("discrete_gaussian", scale=sigma)
    assert h == pytest.approx(sigma * stats.norm.ppf(0.975), rel=1e-12)
    assert h == math.floor(h)


def test_classic_rule_falls_back_to_exact_epsilon_above_one():
    sigma, delta = 0.5, 1e-5
    # the classic formula would give ε = √(2 ln(1.25/δ))/σ ≈ 9.7 ≥ 1, outside its proof
    assert math.sqrt(2 * math.log(1.25 / delta)) / sigma > 1
    c = M.calibrate("gaussian", sensitivity=1.0, scale=sigma, delta=delta, gaussian_rule="classic")
    eps = c.epsilon
    # Balle–Wang exact δ(ε) = Φ(1/2σ − εσ) − e^ε Φ(−1/2σ − εσ) must equal δ at the returned ε
    d = stats.norm.cdf(0.5 / sigma - eps * sigma) - math.exp(eps) * stats.norm.cdf(-0.5 / sigma - eps * sigma)
    assert d == pytest.approx(delta, rel=1e-6)
    # and it is not the classic value (which understates ε here: 9.69 against the exact ≈ 10.0)
    assert abs(eps - math.sqrt(2 * math.log(1.25 / delta)) / sigma) > 0.1


def test_min_crossing_clamps_to_the_interval_ends():
    dec, inc = (lambda x: 1.0 / x), (lambda x: x)  # cross at x = 1
    assert M._min_crossing(dec, inc, math.log(0.01), math.log(0.5)) == pytest.approx(0.5)  # still decreasing
    assert M._min_crossing(dec, inc, math.log(2.0), math.log(8.0)) == pytest.approx(2.0)  # already increasing
    assert M._min_crossing(dec, inc, math.log(0.1), math.log(10.0)) == pytest.approx(1.0, rel=1e-9)


def test_adaptive_width_grid_skips_splitting_beyond_n():
    n, beta = 10.6, 0.05  # k grid rounds up to 11 > n: splitting is undefined there
    rows = M.adaptive_width_grid(n, beta, "gaussian", points=3)
    ks = sorted({k for _, k, _ in rows})
    assert ks == sorted(set(np.round(np.geomspace(1, n, 3)).astype(int).tolist())) == [1, 3, 11]
    split_ks = {k for m, k, _ in rows if m.startswith("split")}
    assert split_ks == {1, 3}
    for m, k, w in rows:
        if m == "nonadaptive":  # Hoeffding + union bound written out
            assert w.tau == pytest.approx(min(0.5, math.sqrt(math.log(2 * k / beta) / (2 * n))), rel=1e-12)
        if m == "split_hoeffding":
            assert w.tau == pytest.approx(min(0.5, math.sqrt(math.log(2 * k / beta) / (2 * math.floor(n / k)))))


@pytest.mark.parametrize("mech", ["laplace", "gaussian", "discrete_laplace", "discrete_gaussian"])
def test_scale_for_half_width_names_the_bad_argument(mech):
    # issue 36 (mutation testing): the refusal names the argument the user gave, in plain words
    for bad in (0.0, -1.0):
        with pytest.raises(ValueError, match="half_width"):
            M.scale_for_half_width(mech, half_width=bad)
