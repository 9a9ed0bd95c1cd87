"""Tests for dpdash.epsilon.private_tests: spec §8–9 (weighted χ² tails, closed forms, MC vs asymptotics)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpdash.epsilon import private_tests as P


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
    assert P.weighted_chisq_sf(x, w, method="convolution") == pytest.approx(P.weighted_chisq_sf(x, w, method="imhof"),
                                                                            abs=1e-7)


@pytest.mark.parametrize("w", [[3, 2, 2, 1, 0.5], [5, 1, 0.3, 0.2]])
def test_imhof_agrees_with_monte_carlo(w):
    rng = np.random.default_rng(11)
    draws = rng.chisquare(1, (200_000, len(w))) @ np.asarray(w, float)  # independent of the engine's MC
    for x in (1.0, 6.0, 15.0):
        assert P.weighted_chisq_sf(x, w) == pytest.approx(np.mean(draws > x), abs=0.005)
        mc = P.weighted_chisq_sf(x, w, method="mc", rng=np.random.default_rng(3))
        assert mc == pytest.approx(np.mean(draws > x), abs=0.005)


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


# --------------------------------------------------------------------------- r × c independence: 2MLE (Alg. 11)
def _cvxpy_projection(x, n, gamma):
    import cvxpy as cp
    h = cp.Variable(x.size)
    obj = gamma * cp.sum_squares(x - h) + (1 - gamma) * cp.norm1(x - h)
    cp.Problem(cp.Minimize(obj), [cp.sum(h) == n, h >= 0]).solve(solver=cp.CLARABEL)
    return h.value


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("gamma", [1.0, 0.3])
def test_projection_equals_cvxpy(seed, gamma):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(4, 13))
    n = float(rng.integers(50, 500))
    # noise large next to the counts, so that some cells are clipped at 0
    x = rng.multinomial(int(n), np.full(d, 1 / d)) + rng.normal(0, 40, d)
    h = P.project_counts(x, n=n, gamma=gamma)
    assert np.all(h >= 0) and h.sum() == pytest.approx(n, rel=1e-12)
    ref = _cvxpy_projection(x, n, gamma)
    assert h == pytest.approx(ref, abs=1e-5 * n)


def test_projection_equals_slsqp_on_a_clipped_table():
    # an independent solver with a different method: scipy SLSQP on the same program (6.17), γ = 1
    from scipy import optimize
    x = np.array([[120.0, -30.0, 15.0], [60.0, 3.0, -8.0]])
    n = 150.0
    res = optimize.minimize(lambda h: np.sum((x.ravel() - h) ** 2), np.full(6, n / 6), method="SLSQP",
                            bounds=[(0, None)] * 6, constraints=[{"type": "eq", "fun": lambda h: h.sum() - n}],
                            options={"ftol": 1e-14, "maxiter": 500})
    h = P.project_counts(x, n=n)
    assert h.shape == (2, 3)
    assert h.ravel() == pytest.approx(res.x, abs=1e-5)
    assert h[0, 1] == 0.0 and h[1, 2] == 0.0  # negative noisy cells are clipped


@settings(max_examples=40, deadline=None)
@given(x=st.lists(st.floats(-500, 500), min_size=2, max_size=30), n=st.floats(1, 1e4),
       gamma=st.sampled_from([1.0, 0.5, 0.01]), seed=st.integers(0, 2**16))
def test_projection_feasible_and_optimal(x, n, gamma, seed):
    x = np.asarray(x)
    h = P.project_counts(x, n=n, gamma=gamma)
    assert np.all(h >= 0)
    assert h.sum() == pytest.approx(n, rel=1e-9, abs=1e-9)

    def obj(v):
        return (1 - gamma) * np.abs(x - v).sum() + gamma * ((x - v) ** 2).sum()

    # no feasible point (random points of the scaled simplex) does better
    rng = np.random.default_rng(seed)
    others = rng.dirichlet(np.ones(x.size), 50) * n
    assert obj(h) <= min(obj(o) for o in others) + 1e-7 * max(1.0, obj(h))


def test_two_step_mle_closed_form_without_clipping():
    # no clipping: h = h̃ − (ñ − n)/(rc), so the MLE marginals (6.15) are (H̃ᵢ. − (ñ − n)/r)/n and (H̃.ⱼ − (ñ − n)/c)/n
    t = np.array([[410.0, 190.0, 105.0], [260.0, 140.0, 95.5]])
    n = 1180
    nt = t.sum()
    mle = P.two_step_mle(t, n=n)
    assert mle is not None
    assert mle.table.sum() == pytest.approx(n)
    assert mle.pi1 == pytest.approx((t.sum(axis=1) - (nt - n) / 2) / n, rel=1e-12)
    assert mle.pi2 == pytest.approx((t.sum(axis=0) - (nt - n) / 3) / n, rel=1e-12)
    # Alg. 11's rule of thumb: a projected cell below 5 gives NULL
    assert P.two_step_mle(np.array([[500.0, 3.0], [300.0, 200.0]]), n=1003) is None


# --------------------------------------------------------------------------- r × c independence: null weights
def _kron_sigma(a, b):
    # the standardised Pearson residuals of an independence table have covariance (I − √a√aᵀ) ⊗ (I − √b√bᵀ)
    sa, sb = np.sqrt(a), np.sqrt(b)
    return np.kron(np.eye(a.size) - np.outer(sa, sa), np.eye(b.size) - np.outer(sb, sb))


@pytest.mark.parametrize("a,b", [([2 / 3, 1 / 3], [0.5, 0.5]), ([0.3, 0.7], [0.2, 0.5, 0.3]),
                                 ([0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.5]), ([0.2, 0.3, 0.5], [0.3, 0.3, 0.4])])
@pytest.mark.parametrize("n,rho", [(1000, 0.01), (50_000, 0.00125)])
def test_indep_weights_equal_kronecker_form(a, b, n, rho):
    a, b = np.asarray(a), np.asarray(b)
    p = np.outer(a, b).ravel()
    ref = np.linalg.eigvalsh(_kron_sigma(a, b) + np.diag(1 / (n * rho * p)))
    w = P.indep_null_weights(a, b, n=n, rho=rho)
    assert np.sort(w) == pytest.approx(np.sort(ref), rel=1e-9)
    assert w.size == a.size * b.size  # with noise every weight is positive


def test_indep_weights_2x2_rank_one_form():
    # 2 × 2: Σ_ind = vvᵀ with v = (√(a′b′), −√(a′b), −√(ab′), √(ab)), a′ = 1 − a (the previous 2 × 2 setting)
    a, b, n, rho = 2 / 3, 0.5, 5000, 0.01
    v = np.array([math.sqrt((1 - a) * (1 - b)), -math.sqrt((1 - a) * b), -math.sqrt(a * (1 - b)), math.sqrt(a * b)])
    p = np.outer([a, 1 - a], [b, 1 - b]).ravel()
    ref = np.linalg.eigvalsh(np.outer(v, v) + np.diag(1 / (n * rho * p)))
    assert np.sort(P.indep_null_weights([a, 1 - a], [b, 1 - b], n=n, rho=rho)) == pytest.approx(np.sort(ref), rel=1e-10)


@settings(max_examples=25, deadline=None)
@given(r=st.integers(2, 5), c=st.integers(2, 5), seed=st.integers(0, 2**16))
def test_indep_weights_without_noise_are_chi2(r, c, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.dirichlet(np.full(r, 3.0)), rng.dirichlet(np.full(c, 3.0))
    w = P.indep_null_weights(a, b, n=1e12, rho=1e3)
    # (r−1)(c−1) unit weights (Thm 6.2.2), the rest vanish with the noise
    assert np.sum(w > 0.5) == (r - 1) * (c - 1)
    assert w[w > 0.5] == pytest.approx(np.ones((r - 1) * (c - 1)), abs=1e-6)


def test_indep_critical_values_and_naive_size():
    a, b = np.array([0.2, 0.3, 0.5]), np.array([0.3, 0.3, 0.4])
    cv = P.indep_critical_values(a, b, n=5000, rho=0.01)
    assert cv.classical == pytest.approx(stats.chi2.isf(0.05, 4)) and cv.projected == cv.classical
    # the AsymptIndep quantile against 4e5 independent draws of Σλχ²₁ with the Kronecker-form weights
    p = np.outer(a, b).ravel()
    lam = np.linalg.eigvalsh(_kron_sigma(a, b) + np.diag(1 / (5000 * 0.01 * p)))
    draws = np.random.default_rng(8).chisquare(1, (400_000, lam.size)) @ lam
    assert cv.asympt_indep == pytest.approx(np.quantile(draws, 0.95), rel=0.01)
    assert P.naive_indep_type_one_error(a, b, n=1000, rho=0.00125) > 0.9
    assert P.naive_indep_type_one_error(a, b, n=10**7, rho=10.0) == pytest.approx(0.05, abs=0.002)


# --------------------------------------------------------------------------- r × c independence: statistics
def test_projected_independence_statistic_bruteforce_2x3():
    from scipy import optimize
    rng = np.random.default_rng(21)
    n, rho = 4000, 0.01
    tp = np.outer([0.4, 0.6], [0.2, 0.3, 0.5])
    t = (rng.multinomial(n, tp.ravel()) + rng.normal(0, 1 / math.sqrt(rho), 6)).reshape(2, 3)
    s = P.projected_independence_statistic(t, n=n, rho=rho)
    # the quadratic form of Alg. 15 built here from (7.23), minimised by Nelder–Mead over θ = (π⁽¹⁾₁, π⁽²⁾₁, π⁽²⁾₂)
    nt = t.sum()
    ph = np.outer(t.sum(1) / nt, t.sum(0) / nt).ravel()
    M = np.linalg.inv(np.diag(ph) - np.outer(ph, ph) + np.eye(6) / (n * rho))
    Pi = np.eye(6) - np.ones((6, 6)) / 6

    def q(th):
        pv = np.outer([th[0], 1 - th[0]], [th[1], th[2], 1 - th[1] - th[2]]).ravel()
        v = t.ravel() - n * pv
        return v @ Pi @ M @ Pi @ v / n

    x0 = [t.sum(1)[0] / nt, t.sum(0)[0] / nt, t.sum(0)[1] / nt]
    ref = optimize.minimize(q, x0, method="Nelder-Mead", options={"xatol": 1e-12, "fatol": 1e-12, "maxiter": 20_000})
    assert s == pytest.approx(ref.fun, rel=1e-6, abs=1e-8)


def test_independence_test_decisions():
    n, rho = 10_000, 0.01
    dep = np.array([[3000.0, 2000.0], [2000.0, 3000.0]])  # strongly dependent
    for test in ("asympt_indep", "projected"):
        res = P.independence_test(dep, n=n, rho=rho, test=test)
        assert res.reject and res.statistic > res.critical_value
    ind = np.outer([0.6, 0.4], [0.5, 0.5]) * n + np.array([[3.0, -3.0], [-2.0, 2.0]])
    res = P.independence_test(ind, n=n, rho=rho)
    assert not res.reject and res.pi1 == pytest.approx([0.6, 0.4], abs=1e-3)
    # the statistic is Pearson's (6.18) against the 2MLE marginals
    e = n * np.outer(res.pi1, res.pi2)
    assert res.statistic == pytest.approx(np.sum((ind - e) ** 2 / e), rel=1e-12)
    tiny = P.independence_test(np.array([[2.0, 1.0], [1.0, 6.0]]), n=10, rho=rho)
    assert tiny.statistic is None and not tiny.reject


def _pearson_noisy_rate(tp, n, rho, trials, seed):
    """Pearson's independence test on noisy counts with noisy-marginal estimates, written here from scratch."""
    rng = np.random.default_rng(seed)
    crit = stats.chi2.isf(0.05, (tp.shape[0] - 1) * (tp.shape[1] - 1))
    h = rng.multinomial(n, tp.ravel(), size=trials).reshape(trials, *tp.shape) + rng.normal(0, 1 / math.sqrt(rho),
                                                                                          (trials, *tp.shape))
    nt = h.sum(axis=(1, 2))
    e = n * (h.sum(axis=2) / nt[:, None])[:, :, None] * (h.sum(axis=1) / nt[:, None])[:, None, :]
    ok = (e > 5).all(axis=(1, 2))
    return float(np.mean(ok & (((h - e) ** 2 / np.where(ok[:, None, None], e, 1)).sum(axis=(1, 2)) > crit)))


def test_2x2_thesis_setting_size_and_power():
    # [T] §6.3.2 setting: π⁽¹⁾ = (2/3, 1/3), π⁽²⁾ = (1/2, 1/2), ρ = 0.00125, alternative + 0.01·(1, −1)ᵀ(1, 0)
    tp = np.outer([2 / 3, 1 / 3], [0.5, 0.5])
    n, rho, trials = 5000, 0.00125, 1000
    size = P.simulate_independence(tp, n=n, alpha=0.05, noise="gaussian", rho=rho, trials=trials,
                                   rng=np.random.default_rng(7)).rates
    se = math.sqrt(0.05 * 0.95 / trials)
    # the classical test on noisy counts rejects true hypotheses far too often; an independent implementation
    # (own draws) gives the same rate within Monte Carlo error
    ref = _pearson_noisy_rate(tp, n, rho, 4000, seed=99)
    assert size["classical_noisy"] > 0.05 + 10 * se
    assert abs(size["classical_noisy"] - ref) <= 4 * math.sqrt(ref * (1 - ref) * (1 / trials + 1 / 4000))
    # AsymptIndep is conservative here, as the thesis reports (§6.3.2, Figure 8); the projected test holds α
    assert size["asympt_indep"] <= 0.05 + 2 * se
    assert abs(size["projected"] - 0.05) <= 3 * se
    alt = tp + 0.01 * np.array([[1, 0], [-1, 0]])
    power = P.simulate_independence(alt, n=20_000, alpha=0.05, noise="gaussian", rho=rho, trials=trials,
                                    rng=np.random.default_rng(8)).rates
    assert power["asympt_indep"] > 0.5 and power["projected"] > 0.5


@pytest.mark.parametrize("a,b,n,rho,seed", [([0.2, 0.3, 0.5], [0.3, 0.3, 0.4], 20_000, 0.01, 11),
                                            ([0.5, 0.5], [0.2, 0.3, 0.5], 10_000, 0.005, 12)])
def test_rxc_size_close_to_alpha(a, b, n, rho, seed):
    tp = np.outer(a, b)
    res = P.simulate_independence(tp, n=n, alpha=0.05, noise="gaussian", rho=rho, trials=1000,
                                  tests=("asympt_indep", "projected"), rng=np.random.default_rng(seed))
    se = math.sqrt(0.05 * 0.95 / 1000)
    for t in ("asympt_indep", "projected"):
        assert abs(res.rates[t] - 0.05) <= 3 * se, (t, res.rates[t])
    assert res.settings["shape"] == [len(a), len(b)] and res.settings["gamma"] == 1.0


def test_rxc_power_exceeds_size():
    tp = np.outer([0.2, 0.3, 0.5], [0.3, 0.3, 0.4])
    shift = np.zeros((3, 3))
    shift[0, 0], shift[2, 0] = 0.02, -0.02
    res = P.simulate_independence(tp + shift, n=20_000, alpha=0.05, noise="gaussian", rho=0.01, trials=300,
                                  tests=("asympt_indep", "projected"), rng=np.random.default_rng(3))
    assert res.rates["asympt_indep"] > 0.5 and res.rates["projected"] > 0.5


# --------------------------------------------------------------------------- Monte Carlo grids (joblib)
def test_simulate_grid_independent_of_n_jobs_and_progress():
    p0 = np.full(4, 0.25)
    p1 = p0 + 0.02 * np.array([1, -1, -1, 1])
    kw = dict(ns=[500, 5000], privacy=[0.01, 0.1], alpha=0.05, noise="gaussian", trials=300, m=59, rng=42, chunk=100)
    calls = []
    one = P.simulate_grid("gof", p0, p1, n_jobs=1, progress=calls.append, **kw)
    two = P.simulate_grid("gof", p0, p1, n_jobs=2, **kw)
    assert one.equals(two)
    assert len(one) == 2 * 2 * 2 * 4 and set(one["quantity"]) == {"size", "power"}
    assert calls == sorted(calls) and calls[-1] == 1.0 and len(calls) >= 12
    # power beats size at the larger n and ρ
    big = one[(one.n == 5000) & (one.rho == 0.1) & (one.test == "projected")].set_index("quantity")["rate"]
    assert big["power"] > big["size"] + 0.3
    other = P.simulate_grid("gof", p0, p1, n_jobs=1, **{**kw, "rng": 43})
    assert not other.equals(one)


def test_simulate_grid_independence_laplace():
    tp = np.outer([0.5, 0.5], [0.5, 0.5])
    df = P.simulate_grid("independence", tp, tp, ns=[20_000], privacy=[0.5, 2.0], alpha=0.05, noise="laplace",
                         trials=200, rng=1, tests=("projected", "classical_noisy"))
    assert df["epsilon"].notna().all() and df["rho"].isna().all()
    assert set(df["epsilon"]) == {0.5, 2.0} and (df["trials"] == 200).all()


@pytest.mark.parametrize("call,match", [
    (lambda: P.project_counts([1.0, 2.0], n=3, gamma=0.0), "gamma"),
    (lambda: P.project_counts([1.0, float("nan")], n=3), "finite"),
    (lambda: P.two_step_mle([1.0, 2.0, 3.0], n=6), "r × c"),
    (lambda: P.asympt_indep_statistic(np.ones((2, 2)), n=4, pi1=[0.5, 0.5], pi2=[0.2, 0.3, 0.5]), "marginals"),
    (lambda: P.independence_test(np.ones((2, 2)) * 100, n=400, rho=1, test="mc"), "test must be"),
    (lambda: P.simulate_grid("gof", [0.5, 0.5], [0.5, 0.5, 0.0], ns=[10], privacy=[1], alpha=0.05,
                             noise="gaussian"), "same shape"),
    (lambda: P.simulate_independence(np.full((2, 2), 0.25), n=10, alpha=0.05, noise="gaussian", rho=1,
                                     tests=("mc",), rng=np.random.default_rng(0)), "unknown test"),
])
def test_new_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_simulation_figure_from_a_hand_made_table():
    import pandas as pd

    from dpdash.epsilon import figures as ef
    rows = [{"n": n, "rho": rho, "epsilon": math.nan, "quantity": q, "test": t, "rate": rate, "std_error": 0.01,
             "trials": 100}
            for n in (100, 1000) for rho in (0.01, 0.1) for q, rate in (("size", 0.05), ("power", 0.6))
            for t in ("projected", "asympt_indep")]
    sim = pd.DataFrame(rows)
    fig = ef.make_simulation_figure(sim[sim.rho == 0.01], axis="n", alpha=0.05)
    assert len(fig.data) == 2 * 2  # two panels × two tests
    assert list(fig.data[0].x) == [100, 1000] and list(fig.data[0].error_y.array) == pytest.approx([0.0196] * 2)
    both = ef.make_simulation_figure(sim, axis="n", series="rho", alpha=0.05)
    assert len(both.data) == 2 * 2 * 2
    assert {tr.line.dash for tr in both.data} == {"solid", "dash"}
    assert sum(tr.showlegend for tr in both.data) == 4


def test_noisy_table_moments():
    tp = np.outer([0.3, 0.7], [0.2, 0.3, 0.5])
    rng = np.random.default_rng(2)
    draws = np.array([P.noisy_table(tp, n=1000, noise="gaussian", rho=0.04, rng=rng) for _ in range(4000)])
    assert draws.shape == (4000, 2, 3)
    assert draws.mean(axis=0) == pytest.approx(1000 * tp, abs=1.1)  # 4 standard errors of the mean
    # Var = n p (1 − p) + 1/ρ per cell
    assert draws.var(axis=0) == pytest.approx(1000 * tp * (1 - tp) + 25.0, rel=0.08)
    lap = np.array([P.noisy_table(tp, n=1000, noise="laplace", epsilon=0.5, rng=rng) for _ in range(4000)])
    assert lap.var(axis=0) == pytest.approx(1000 * tp * (1 - tp) + 8 / 0.25, rel=0.08)


def test_noise_rho_and_default_gamma():
    # [T] §6.3: ρ = ε²/8 gives Gaussian noise the variance 8/ε² of Lap(2/ε); §6.3.2: γ = 1 (Gaussian), 0.01 (Laplace)
    assert P.noise_rho("laplace", epsilon=0.1) == pytest.approx(0.00125)
    assert P.noise_rho("gaussian", rho=0.3) == 0.3
    assert (P.default_gamma("gaussian"), P.default_gamma("laplace")) == (1.0, 0.01)
    with pytest.raises(ValueError, match="noise"):
        P.default_gamma("uniform")


def test_default_alternatives_are_the_thesis_shifts():
    # [T] power settings: d = 4, Δ = 0.01·(1, −1/3, −1/3, −1/3); 2 × 2, Δ = 0.01·(1, −1)ᵀ(1, 0)
    assert P.default_gof_shift(4) == pytest.approx([0.01, -0.01 / 3, -0.01 / 3, -0.01 / 3])
    assert P.default_indep_shift(2, 2) == pytest.approx(np.array([[0.01, 0.0], [-0.01, 0.0]]))
    assert P.default_indep_shift(3, 4).sum() == pytest.approx(0.0)
    assert P.default_gof_shift(7).sum() == pytest.approx(0.0)
    with pytest.raises(ValueError):
        P.default_indep_shift(1, 3)


@settings(max_examples=200)
@given(alpha=st.floats(0.001, 0.5), extra=st.integers(1, 5000))
def test_mc_rank_is_the_exact_level_alpha_rank(alpha, extra):
    # [T] Alg. 8: with T and m exchangeable null draws, "reject when T exceeds the t-th smallest draw" has size
    # (m + 1 − t)/(m + 1) exactly; t must be the smallest rank whose size is ≤ α (not from the code: a count)
    m = int(math.floor(1 / alpha)) + extra
    t = P.mc_rank(m, alpha)
    assert 1 <= t <= m
    assert (m + 1 - t) / (m + 1) <= alpha + 1e-12
    assert (m + 1 - (t - 1)) / (m + 1) > alpha - 1e-12


def test_mc_rank_hand_values():
    assert P.mc_rank(100, 0.05) == 96  # ⌈101 · 0.95⌉
    assert P.mc_rank(59, 0.05) == 57


def test_simulate_grid_rng_takes_an_int_or_a_seed_sequence():
    # one randomness keyword: an integer seed and the SeedSequence it names give the same table
    p0 = [0.25] * 4
    kw = dict(ns=[300], privacy=[0.1], alpha=0.05, noise="gaussian", trials=40, m=59, chunk=20,
              tests=("classical_noisy",))
    a = P.simulate_grid("gof", p0, p0, rng=7, **kw)
    c = P.simulate_grid("gof", p0, p0, rng=np.random.SeedSequence(7), **kw)
    assert a.equals(c)
    with pytest.raises(TypeError):
        P.simulate_grid("gof", p0, p0, seed=7, **kw)
