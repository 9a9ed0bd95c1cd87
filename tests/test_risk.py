"""Tests for engine.risk: spec §9 worked examples, closed-form identities and properties."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from engine import risk as R

REL = 1e-6


def test_worked_examples():
    b = R.posterior_bound(0.1, epsilon=math.log(3))
    assert (b.lower, b.upper) == pytest.approx((1 / 28, 0.25), rel=REL)
    assert R.advantage_bound(epsilon=math.log(3)) == pytest.approx(0.5, rel=REL)
    assert R.tradeoff_fnr(0.1, epsilon=1) == pytest.approx(0.7281718, rel=REL)
    assert R.tradeoff_gaussian(0.05, mu=1) == pytest.approx(0.7404890, rel=REL)
    assert R.laplace_advantage(epsilon=2) == pytest.approx(0.6321206, rel=REL)
    assert R.advantage_bound(epsilon=2) == pytest.approx(0.7615942, rel=REL)
    assert R.max_epsilon_for_posterior(0.05, posterior=0.2) == pytest.approx(1.558145, rel=REL)


def test_advantage_identity_and_gaussian():
    for e, d in [(0.1, 0.0), (1.0, 1e-3), (5.0, 0.2)]:
        assert R.advantage_bound(epsilon=e, delta=d) == pytest.approx((math.exp(e) - 1 + 2 * d) / (math.exp(e) + 1), rel=1e-12)
    for mu in (0.1, 1.0, 3.0):
        assert R.gaussian_advantage(mu=mu) == pytest.approx(2 * stats.norm.cdf(mu / 2) - 1, rel=1e-12)
        # advantage = max over α of 1 − α − FNR(α) on the trade-off curve
        a = np.linspace(0, 1, 200001)
        assert R.gaussian_advantage(mu=mu) == pytest.approx(np.max(1 - a - R.tradeoff_gaussian(a, mu=mu)), abs=1e-6)


def test_laplace_tradeoff_is_neyman_pearson():
    # Brute force: Neyman–Pearson tests of Lap(0,1) vs Lap(ε,1) thresholding x; FNR at each FPR
    e = 1.3
    t = np.linspace(-10, 10, 20001)
    fpr = stats.laplace.sf(t)
    fnr = stats.laplace.cdf(t, loc=e)
    ours = R.tradeoff_laplace(fpr, epsilon=e)
    assert np.max(np.abs(ours - fnr)) < 1e-9
    a = np.linspace(0, 1, 100001)
    assert R.laplace_advantage(epsilon=e) == pytest.approx(np.max(1 - a - R.tradeoff_laplace(a, epsilon=e)), abs=1e-6)


@settings(max_examples=40)
@given(p=st.floats(0.001, 0.999), e=st.floats(0, 20))
def test_posterior_bounds_bracket_prior(p, e):
    b = R.posterior_bound(p, epsilon=e)
    assert b.lower <= p <= b.upper
    if b.upper > p + 1e-9:
        assert R.max_epsilon_for_posterior(p, posterior=b.upper) == pytest.approx(e, rel=1e-6, abs=1e-9)


@settings(max_examples=40)
@given(e1=st.floats(0, 10), e2=st.floats(0, 10), d=st.floats(0, 0.5))
def test_tradeoff_and_advantage_monotone(e1, e2, d):
    lo, hi = sorted((e1, e2))
    a = np.linspace(0, 1, 101)
    assert np.all(R.tradeoff_fnr(a, epsilon=hi, delta=d) <= R.tradeoff_fnr(a, epsilon=lo, delta=d) + 1e-12)
    assert R.advantage_bound(epsilon=hi, delta=d) >= R.advantage_bound(epsilon=lo, delta=d) - 1e-12
    # the Laplace curve lies above the generic (ε, 0) region boundary: it is one ε-DP mechanism
    assert np.all(R.tradeoff_laplace(a, epsilon=lo) >= R.tradeoff_fnr(a, epsilon=lo) - 1e-12)


def test_profile_is_pointwise_max():
    a = np.linspace(0, 1, 51)
    prof = R.tradeoff_from_profile(a, epsilons=[0.5, 1.0, 2.0], deltas=[0.1, 0.01, 1e-4])
    ref = np.max([R.tradeoff_fnr(a, epsilon=e, delta=d) for e, d in [(0.5, 0.1), (1.0, 0.01), (2.0, 1e-4)]], axis=0)
    assert np.allclose(prof, ref)


def test_extremes_and_errors():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert R.posterior_bound(0.5, epsilon=1e4).upper == pytest.approx(1.0)
        assert np.all(R.tradeoff_fnr(np.linspace(0, 1, 11), epsilon=1e4) >= 0)
        assert R.tradeoff_laplace(np.array([0.0, 1e-300, 0.3]), epsilon=800).shape == (3,)
    with pytest.raises(ValueError, match=r"^prior must be a number in \(0, 1\); got 1$"):
        R.posterior_bound(1.0, epsilon=1)
    with pytest.raises(ValueError, match="greater than the prior"):
        R.max_epsilon_for_posterior(0.3, posterior=0.2)
    with pytest.raises(ValueError, match="false-positive"):
        R.tradeoff_fnr(1.5, epsilon=1)
    t = R.posterior_table(epsilon=1.0)
    assert list(t.columns) == ["prior", "lower", "upper", "increase"] and len(t) == 7


def _kov_extremal(e, d):
    """The (ε, δ) mechanism of Kairouz–Oh–Viswanath 2015 (four outcomes): every (ε, δ)-DP test is dominated by it."""
    a, b = (1 - d) * math.exp(e) / (1 + math.exp(e)), (1 - d) / (1 + math.exp(e))
    return np.array([d, a, b, 0.0]), np.array([0.0, b, a, d])


def _np_tradeoff(P, Q, fpr):
    """Neyman–Pearson trade-off of H0: P vs H1: Q by brute force: reject outcomes in decreasing Q/P, randomising."""
    ratio = np.where(P > 0, Q / np.where(P > 0, P, 1.0), np.inf)
    order = np.argsort(-ratio, kind="stable")
    x = np.concatenate([[0.0], np.cumsum(P[order])])
    y = 1.0 - np.concatenate([[0.0], np.cumsum(Q[order])])
    # at equal x (P-mass 0 outcomes) keep the smallest FNR
    keep = np.r_[np.diff(x) > 0, True]
    return np.interp(fpr, x[keep], y[keep])


@settings(max_examples=60)
@given(e=st.floats(0, 8), d=st.floats(0, 0.9))
def test_tradeoff_with_delta_against_the_extremal_mechanism(e, d):
    # δ > 0 changes both branches: 1 − δ − e^ε α and e^{−ε}(1 − δ − α); brute force on the KOV mechanism
    P, Q = _kov_extremal(e, d)
    a = np.concatenate([np.linspace(0, 1, 401), [1e-9, (1 - d) / (1 + math.exp(e))]])
    ref = _np_tradeoff(P, Q, a)
    assert np.allclose(R.tradeoff_fnr(a, epsilon=e, delta=d), ref, atol=1e-12, rtol=0)
    # the largest advantage TPR − FPR is the total-variation distance of the two output laws
    assert R.advantage_bound(epsilon=e, delta=d) == pytest.approx(0.5 * np.abs(P - Q).sum(), rel=1e-12, abs=1e-15)


def test_tradeoff_with_delta_printed_points():
    # hand-computed: ε = ln 2, δ = 0.1 → f(α) = max(0, 0.9 − 2α, (0.9 − α)/2)
    a = np.array([0.0, 0.1, 0.3, 0.45, 0.9, 1.0])
    assert R.tradeoff_fnr(a, epsilon=math.log(2), delta=0.1) == pytest.approx([0.9, 0.7, 0.3, 0.225, 0.0, 0.0],
                                                                               abs=1e-12)
