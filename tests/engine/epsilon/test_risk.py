"""Tests for dpdash.epsilon.risk: spec §9 worked examples, closed-form identities and properties."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpdash.epsilon import risk as R

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


# --------------------------------------------------------------------------- risk → ε (issue 15 item 6)
def test_one_epsilon_cap():
    from dpdash.common import validation
    assert R.EPSILON_MAX is validation.EPSILON_MAX
    with pytest.raises(ValueError, match=r"^epsilon must be a finite number in \[0, 1e4\]; got 20000$"):
        R.advantage_bound(epsilon=2e4)


def test_inverse_worked_examples():
    # hand-computed: prior 5% → posterior 20% is ln((0.2/0.8)/(0.05/0.95)) = ln 4.75
    assert R.epsilon_for_posterior(0.05, posterior=0.2).epsilon == pytest.approx(math.log(4.75), rel=1e-12)
    # advantage 1/2 under pure ε is tanh(ε/2) = 1/2 → ε = ln 3
    assert R.epsilon_for_advantage(0.5).epsilon == pytest.approx(math.log(3), rel=1e-12)
    # TPR 10% at FPR 1%, δ = 0: the e^ε α branch gives ln 10, the other ln(0.99/0.9)
    assert R.epsilon_for_power(0.1, fpr=0.01).epsilon == pytest.approx(math.log(10), rel=1e-12)
    # Gaussian μ for advantage 2Φ(μ/2) − 1 = 0.3829249 is μ = 1 (scipy)
    assert R.mu_for_advantage(2 * stats.norm.cdf(0.5) - 1) == pytest.approx(1.0, rel=1e-10)
    # δ = 0 with an accusation rate below 1/(1 + e^ε): the posterior equals the pure bound
    q = R.posterior_after_accusation(0.1, fpr=1e-3, epsilon=1.0)
    assert q == pytest.approx(1 / (1 + 9 * math.exp(-1)), rel=1e-12)


def test_inverse_unreachable_and_unbounded():
    r = R.epsilon_for_advantage(1e-7, delta=1e-6)
    assert math.isnan(r.epsilon) and not r.reachable and "δ" in r.reason
    assert R.epsilon_for_advantage(1.0).epsilon == math.inf
    assert math.isnan(R.epsilon_for_power(0.01, fpr=0.05).epsilon)  # TPR ≥ FPR even at ε = 0
    assert R.epsilon_for_power(1.0, fpr=0.05).epsilon == math.inf
    assert math.isnan(R.epsilon_for_posterior(0.3, posterior=0.2).epsilon)
    # δ = 0.1 alone lets an attacker accusing 0.1% of outsiders be more than 50% sure of a 5% prior
    assert math.isnan(R.epsilon_for_posterior(0.05, posterior=0.5, delta=0.1, fpr=1e-3).epsilon)
    with pytest.raises(ValueError, match="false-positive rate"):
        R.epsilon_for_posterior(0.05, posterior=0.2, delta=1e-6)
    with pytest.raises(ValueError, match="measure"):
        R.epsilon_for_risk("reidentification", target=0.1)
    # the verdicts say so in words
    assert R.risk_inverse_verdict(r).startswith("No ε can promise")
    assert R.risk_inverse_verdict(R.epsilon_for_advantage(1.0)).startswith("Any ε")
    assert "ε ≤ 1.098" in R.risk_inverse_verdict(R.epsilon_for_advantage(0.5))  # ln 3 = 1.0986, cut


@settings(max_examples=80, deadline=None)
@given(e=st.floats(0.0, 12.0), d=st.sampled_from([0.0, 1e-9, 1e-5, 1e-3, 0.05]), a=st.floats(1e-4, 0.5),
       p=st.floats(0.01, 0.9))
def test_inverses_round_trip_through_the_forward_functions(e, d, a, p):
    # forward at a random point, then back: the inverse returns the same ε wherever the risk still grows with ε
    adv = R.advantage_bound(epsilon=e, delta=d)
    if adv < 1 - 1e-9:
        assert R.epsilon_for_advantage(adv, delta=d).epsilon == pytest.approx(e, rel=1e-7, abs=1e-7)
    tpr = R.risk_at_epsilon("power", epsilon=e, delta=d, fpr=a)
    if tpr < 1 - 1e-9:
        assert R.epsilon_for_power(tpr, fpr=a, delta=d).epsilon == pytest.approx(e, rel=1e-7, abs=1e-7)
    if d > 0:
        q = R.posterior_after_accusation(p, fpr=a, epsilon=e, delta=d)
        if q < 1 - 1e-9 and tpr < 1 - 1e-9:
            got = R.epsilon_for_posterior(p, posterior=q, delta=d, fpr=a).epsilon
            assert got == pytest.approx(e, rel=1e-6, abs=1e-6)
    else:
        q = R.posterior_bound(p, epsilon=e).upper
        if p + 1e-9 < q < 1 - 1e-9:
            assert R.epsilon_for_posterior(p, posterior=q).epsilon == pytest.approx(e, rel=1e-7, abs=1e-7)


@settings(max_examples=60, deadline=None)
@given(t=st.floats(0.02, 0.98), d=st.sampled_from([0.0, 1e-6, 1e-3]), a=st.floats(1e-3, 0.3),
       p=st.floats(0.01, 0.5), measure=st.sampled_from(["posterior", "advantage", "power"]))
def test_inverse_is_the_largest_epsilon(t, d, a, p, measure):
    # risk(ε*) ≤ target and risk(ε* + a little) > target: ε* is the largest ε that keeps the promise
    kw = dict(delta=d, prior=p, fpr=a if (measure == "power" or d > 0) else None)
    res = R.epsilon_for_risk(measure, target=t, **kw)
    if not res.reachable:
        assert R.risk_at_epsilon(measure, epsilon=0.0, **kw) > t
        return
    if math.isinf(res.epsilon):
        assert R.risk_at_epsilon(measure, epsilon=R.EPSILON_MAX, **kw) <= t
        return
    assert R.risk_at_epsilon(measure, epsilon=res.epsilon, **kw) <= t + 1e-9
    assert R.risk_at_epsilon(measure, epsilon=res.epsilon * (1 + 1e-6) + 1e-9, **kw) > t


# riskcal (Kulynych et al., PyPI 1.5.1) is an independent implementation of the same f-DP measures
@settings(max_examples=60, deadline=None)
@given(t=st.floats(0.02, 0.98), d=st.sampled_from([0.0, 1e-8, 1e-5, 1e-3]), a=st.floats(1e-4, 0.3))
def test_inverses_against_riskcal(t, d, a):
    from riskcal import analysis as rc
    adv = R.epsilon_for_advantage(t, delta=d)
    if adv.reachable and math.isfinite(adv.epsilon):
        assert float(rc.get_advantage_from_adp(adv.epsilon, d)) == pytest.approx(t, rel=1e-9)
    pw = R.epsilon_for_power(t, fpr=a, delta=d)
    if pw.reachable and math.isfinite(pw.epsilon):
        # riskcal: the smallest ε at which (α, β = 1 − TPR) is achievable, which is our largest safe ε
        assert float(rc.get_epsilon_from_err_rates(d, a, 1 - t)) == pytest.approx(pw.epsilon, rel=1e-9, abs=1e-12)
        assert 1 - float(rc.get_beta_from_adp(pw.epsilon, d, a)) == pytest.approx(t, rel=1e-9)
    mu = R.mu_for_advantage(t)
    assert float(rc.get_advantage_from_gdp(mu)) == pytest.approx(t, rel=1e-9)
    mu = R.mu_for_power(t, fpr=a)
    if math.isfinite(mu):
        assert 1 - float(rc.get_beta_from_gdp(mu, a)) == pytest.approx(t, rel=1e-9)


def test_posterior_with_delta_against_riskcal_tradeoff():
    from riskcal import analysis as rc
    for p, a, e, d in [(0.05, 0.01, 1.0, 1e-5), (0.2, 0.001, 0.5, 1e-3), (0.5, 0.1, 3.0, 0.01)]:
        tpr = 1 - float(rc.get_beta_from_adp(e, d, a))
        ref = p * tpr / (p * tpr + (1 - p) * a)  # Bayes' rule with riskcal's best test
        assert R.posterior_after_accusation(p, fpr=a, epsilon=e, delta=d) == pytest.approx(ref, rel=1e-12)
        assert R.epsilon_for_posterior(p, posterior=ref, delta=d, fpr=a).epsilon == pytest.approx(e, rel=1e-8)


def test_risk_inverse_figure_draws_the_forward_curve_and_the_answer():
    from dpdash.epsilon import risk_figures as F
    res = R.epsilon_for_risk("power", target=0.2, fpr=0.05, delta=1e-6)
    fig = F.make_risk_inverse_figure(res, fpr=0.05)
    curve, target, mark = fig.data
    # the curve is 1 − β(α) of the (ε, δ) region at each ε, written out here
    for e, y in zip(curve.x[::20], curve.y[::20]):
        beta = max(0.0, 1 - 1e-6 - math.exp(e) * 0.05, math.exp(-e) * (1 - 1e-6 - 0.05))
        assert y == pytest.approx(1 - beta, abs=1e-12)
    assert list(target.y) == [0.2, 0.2]
    assert mark.x[0] == pytest.approx(math.log((0.2 - 1e-6) / 0.05), rel=1e-12)  # the e^ε α + δ branch
    assert curve.x[-1] >= 3 * res.epsilon and fig.layout.xaxis.type == "log"
    assert "crosses it at ε = 1.386" in F.risk_inverse_alt(res)  # ln(3.99998) = 1.38629, cut
    # unreachable target: no answer marker, alt text without a crossing
    bad = R.epsilon_for_advantage(1e-9, delta=1e-6)
    fig = F.make_risk_inverse_figure(bad)
    assert len(fig.data) == 2 and "crosses" not in F.risk_inverse_alt(bad)


def test_inverse_edges_and_argument_checks():
    # an attacker accusing half the outsiders can never pass 2/3 from a 50% prior (TPR ≤ 1): any ε keeps 90%
    r = R.epsilon_for_posterior(0.5, posterior=0.9, delta=1e-6, fpr=0.5)
    assert r.epsilon == math.inf and r.reachable
    assert R.risk_at_epsilon("posterior", epsilon=50.0, delta=1e-6, prior=0.5, fpr=0.5) == pytest.approx(2 / 3)
    assert R.epsilon_for_posterior(0.2, posterior=0.2).epsilon == 0.0
    with pytest.raises(ValueError, match="must be > 0"):
        R.posterior_after_accusation(0.1, fpr=0.0, epsilon=1.0)
    for f in (lambda: R.epsilon_for_power(0.5, fpr=0.0), lambda: R.mu_for_power(0.5, fpr=1.0)):
        with pytest.raises(ValueError, match=r"false-positive rate must be a number in \(0, 1\)"):
            f()
    assert R.mu_for_power(1.0, fpr=0.1) == math.inf and math.isnan(R.mu_for_power(0.05, fpr=0.1))
    assert R.mu_for_advantage(1.0) == math.inf
    assert R.mu_for_power(0.5, fpr=0.5) == 0.0
    with pytest.raises(ValueError, match="measure must be one of"):
        R.risk_at_epsilon("linkage", epsilon=1.0)
    # the largest ε is never beyond the float range of e^ε even at the extremes of the inputs
    assert R.epsilon_for_advantage(1 - 2**-53).epsilon < 40
    assert R.epsilon_for_power(0.99, fpr=5e-324).epsilon < 750


def test_inverse_verdicts_name_the_numbers():
    v = R.risk_inverse_verdict(R.epsilon_for_posterior(0.05, posterior=0.2))
    assert v == "To promise that an attacker who starts 5.0% sure a person is in the data ends at most 20% sure, " \
                "use ε ≤ 1.558."  # logit 0.2 − logit 0.05 = 1.5581, cut to 4 figures
    v = R.risk_inverse_verdict(R.epsilon_for_posterior(0.05, posterior=0.2, delta=1e-5, fpr=0.01))
    assert "when accusing 1.0% of outsiders" in v and v.endswith("and δ = 10⁻⁵.")
    v = R.risk_inverse_verdict(R.epsilon_for_power(0.2, fpr=0.001))
    assert v == "To promise that a test that wrongly accuses 0.10% of outsiders finds at most 20% of members, " \
                "use ε ≤ 5.298."  # ln(0.2/0.001) = 5.2983: cut, since "5.30" would break the promise
