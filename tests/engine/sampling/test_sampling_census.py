"""dpdash.sampling.census: Theorem 3 for census-size populations (n up to 10⁹) at a cost independent of n.

Checked against the full (dense, n + 1 log-probabilities) computation of dpdash.sampling.core where both fit, against
the spec's worked examples SP7, and at n = 10⁹ against closed forms written out here (the tilted discrete Gaussian
far from 0 and n has mean μ + εσ² to e^{−2π²σ²}; the tilted uniform is a truncated geometric law).
Issue 23 item 4.
"""

from __future__ import annotations

import math
import time

import mpmath as mp
import numpy as np
import pytest

from dpdash.sampling import core as sp
from dpdash.sampling import census as cs
from dpdash.sampling import figures as sf

mp.mp.dps = 40

LAWS = [("gaussian", dict(mean=1000.0, sd=20.0)), ("gaussian", dict(mean=1000.0, sd=100.0)),
        ("gaussian", dict(mean=1990.0, sd=300.0)), ("gaussian", dict(mean=3.0, sd=0.4)),
        ("point", dict(mean=500.0, sd=0.0)), ("gaussian", dict(mean=700.0, sd=0.0)),
        ("uniform", dict(mean=0.0, sd=0.0, low=400, high=600)), ("uniform", dict(mean=0.0, sd=0.0, low=0, high=2000)),
        ("mixture", dict(mean=500.0, sd=0.0, base="point", p_full=1e-30)),
        ("mixture", dict(mean=500.0, sd=0.0, base="point", p_full=1e-6)),
        ("mixture", dict(mean=900.0, sd=50.0, base="gaussian", p_full=1e-12)),
        ("mixture", dict(mean=0.0, sd=0.0, base="uniform", low=10, high=30, p_full=0.01))]


@pytest.mark.parametrize("family, kw", LAWS)
@pytest.mark.parametrize("eps", [0.0, 1e-3, 0.05, 1.0, 30.0])
def test_census_law_equals_the_dense_computation(family, kw, eps):
    kw = {"low": 0, "high": 0, **kw}
    dense = sp.amplify_random_size(sp.size_law_from_controls(2000, family=family, **kw), epsilon=eps)
    got = cs.amplify(cs.census_size_law(2000, family=family, **kw), epsilon=eps)
    assert got.epsilon_lower == pytest.approx(dense.epsilon_lower, rel=1e-11, abs=1e-15)
    assert got.epsilon_upper == pytest.approx(dense.epsilon_upper, rel=1e-11, abs=1e-15)
    assert got.tilted_mean == pytest.approx(dense.tilted_mean, rel=1e-11, abs=1e-12)
    assert got.mean_size == pytest.approx(dense.mean_size, rel=1e-11, abs=1e-12)


def test_sp7_worked_examples():
    b = cs.amplify(cs.census_size_law(2000, family="gaussian", mean=1000, sd=20, low=0, high=0), epsilon=0.05)
    assert (b.epsilon_lower, b.epsilon_upper) == (pytest.approx(0.0251875534, abs=1e-8),
                                                  pytest.approx(0.0258122384, abs=1e-8))
    b = cs.amplify(cs.census_size_law(2000, family="uniform", mean=0, sd=0, low=400, high=600), epsilon=0.05)
    assert b.tilted_mean == pytest.approx(580.5045142, abs=1e-6)                       # SP7d
    b = cs.amplify(cs.census_size_law(2000, family="mixture", base="point", mean=500, sd=0, low=0, high=0,
                                      p_full=1e-30), epsilon=0.05)
    assert b.epsilon_upper == pytest.approx(0.0499022780, abs=1e-8)                    # SP7e


@pytest.mark.parametrize("eps", [1e-6, 1e-4, 1e-3, 0.01])
def test_euler_maclaurin_equals_the_term_by_term_sum_where_both_fit(eps):
    """σ = 3·10⁵ at n = 10⁹: a window of 5.7·10⁶ sizes, summed both ways."""
    for mean in (4e8, 1e9 - 2e6, 1e6):
        law = cs.census_size_law(10**9, family="gaussian", mean=mean, sd=3e5, low=0, high=0)
        full = cs._law_sums(law, eps, max_points=10**7)
        em = cs._law_sums(law, eps, max_points=1000)
        for i in (1, 2):   # E_t̃[m] and E_t̃[n − m], as logs
            assert em[i] - em[0] == pytest.approx(full[i] - full[0], abs=1e-12)


def test_census_gaussian_far_from_the_ends_has_the_closed_form_tilted_mean():
    """Σ m e^{−(m−μ)²/2σ² + εm} / Σ e^{…} = μ + εσ² for a discrete Gaussian far from 0 and n (Poisson summation)."""
    n = 10**9
    for mean, sd, eps in ((5000.0, 100.0, 1.0), (5e8, 1e6, 1e-7), (2e8, 3e4, 1e-5)):
        b = cs.amplify(cs.census_size_law(n, family="gaussian", mean=mean, sd=sd, low=0, high=0), epsilon=eps)
        v = mp.mpf(mean) + mp.mpf(eps) * mp.mpf(sd) ** 2
        assert b.tilted_mean == pytest.approx(float(v), rel=1e-12)
        assert b.mean_size == pytest.approx(mean, rel=1e-12)
        f = v / n
        assert b.epsilon_upper == pytest.approx(float(mp.log1p(f * mp.expm1(eps))), rel=1e-9)
        assert b.epsilon_lower == pytest.approx(float(-mp.log1p(f * mp.expm1(-eps))), rel=1e-9)


def test_census_uniform_is_the_truncated_geometric_mean():
    n = 10**9
    for lo, hi, eps in ((0, n, 1e-3), (10**8, 9 * 10**8, 1e-9), (5, 10**9 - 5, 0.0)):
        b = cs.amplify(cs.census_size_law(n, family="uniform", mean=0, sd=0, low=lo, high=hi), epsilon=eps)
        e = mp.mpf(eps)
        if eps == 0:
            want = mp.mpf(lo + hi) / 2
        else:   # d/dε log Σ_{m=lo}^{hi} e^{εm}, Σ = (e^{ε(hi+1)} − e^{ε·lo})/(e^ε − 1)
            want = mp.diff(lambda x: mp.log((mp.exp(x * (hi + 1)) - mp.exp(x * lo)) / mp.expm1(x)), e)
        assert b.tilted_mean == pytest.approx(float(want), rel=1e-10)


def test_census_tails_do_not_underflow():
    n = 10**9
    # a tiny chance of everyone: at ε = 1 the tilt e^{n} puts all the weight on n (no amplification)
    b = cs.amplify(cs.census_size_law(n, family="mixture", base="gaussian", mean=5000, sd=100, low=0, high=0,
                                      p_full=1e-30), epsilon=1.0)
    assert b.epsilon_upper == pytest.approx(1.0, abs=1e-12) and b.tilted_mean == pytest.approx(n, rel=1e-12)
    # at ε = 10⁻⁶ the same mass is worth e^{1000}·10⁻³⁰ ≫ the sample: still at n
    b = cs.amplify(cs.census_size_law(n, family="mixture", base="point", mean=5000, sd=0, low=0, high=0,
                                      p_full=1e-30), epsilon=1e-6)
    want = mp.log1p(mp.expm1(mp.mpf(1e-6)))   # f = 1 to 1e-300
    assert b.epsilon_upper == pytest.approx(float(want), rel=1e-9)
    # a Gaussian whose tilt sits far beyond n: all weight within a few sizes of n; 1 − f keeps its digits
    law = cs.census_size_law(n, family="gaussian", mean=5e8, sd=1e7, low=0, high=0)
    b = cs.amplify(law, epsilon=5.0)
    g = (5e8 + 5.0 * 1e14 - n) / 1e14   # slope of the log-weight at n: E[n − m] = 1/(e^g − 1) (+ O(1/σ²))
    z, _, s2 = cs._law_sums(law, 5.0)
    assert math.exp(s2 - z) == pytest.approx(1 / math.expm1(g), rel=1e-12)
    assert 0 < b.epsilon_lower <= b.epsilon_upper <= 5.0


def test_census_calibration_round_trips():
    for fam, kw in (("gaussian", dict(mean=5e8, sd=2e4)), ("uniform", dict(low=10**6, high=10**7)),
                    ("gaussian", dict(mean=5000.0, sd=100.0))):
        kw = {"mean": 0.0, "sd": 0.0, "low": 0, "high": 0, **kw}
        law = cs.census_size_law(10**9, family=fam, **kw)
        for t in (1e-3, 0.3):
            cal = cs.calibrate(law, epsilon_target=t)
            assert cs.amplify(law, epsilon=cal.epsilon_sample).epsilon_upper == pytest.approx(t, rel=1e-9)


def test_sigma_curve_at_census_size_matches_its_cards():
    n = 10**9
    law = cs.census_size_law(n, family="gaussian", mean=5e8, sd=2e4, low=0, high=0)
    b = cs.amplify(law, epsilon=1e-4)
    sig = sf.sigma_curve_table(n=n, mean=5e8, epsilon=1e-4, current_sd=2e4, current=b)
    assert len(sig) == 41 and np.all(np.isfinite(sig[["lower", "upper"]].to_numpy()))
    assert np.all(np.diff(sig["upper"].to_numpy()) >= -1e-15)   # wider spread, weaker guarantee
    # each row is the census law at that σ
    row = sig.iloc[20]
    one = cs.amplify(cs.census_size_law(n, family="gaussian", mean=5e8, sd=row["sd"], low=0, high=0), epsilon=1e-4)
    assert row["upper"] == pytest.approx(one.epsilon_upper, rel=1e-12)


def test_pmf_table_covers_both_laws():
    law = cs.census_size_law(10**9, family="gaussian", mean=5000, sd=100, low=0, high=0)
    t = cs.pmf_table(law, epsilon=1.0)
    assert len(t) <= 2000 and t["t"].sum() == pytest.approx(1.0) and t["t_tilted"].sum() == pytest.approx(1.0)
    centre = (t["size_from"] + t["size_to"]) / 2
    assert float((centre * t["t_tilted"]).sum()) == pytest.approx(15000, rel=1e-3)


@pytest.mark.slow
def test_census_size_cost_does_not_grow_with_n():
    """Issue 23 item 4: Theorem 3 bounds and the calibration at n = 10⁹ well under 300 ms of engine time."""
    for kw in (dict(mean=5000.0, sd=100.0), dict(mean=5e8, sd=1e7), dict(mean=5e8, sd=2e4)):
        law = cs.census_size_law(10**9, family="gaussian", low=0, high=0, **kw)
        cs.amplify(law, epsilon=0.5)   # warm
        t = time.perf_counter()
        cs.amplify(law, epsilon=1.0)
        cs.calibrate(law, epsilon_target=1.0)
        assert time.perf_counter() - t < 0.3


def test_refusals():
    with pytest.raises(ValueError, match="at most 1,000,000,000"):
        cs.census_size_law(10**9 + 1, family="point", mean=1, sd=0, low=0, high=0)
    with pytest.raises(ValueError, match="family"):
        cs.census_size_law(10, family="x", mean=1, sd=0, low=0, high=0)
    with pytest.raises(ValueError, match="low must not exceed high"):
        cs.census_size_law(10, family="uniform", mean=1, sd=0, low=5, high=2)
