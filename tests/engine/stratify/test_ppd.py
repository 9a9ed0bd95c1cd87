"""Tests for dpdash/accounting/public_info.py and dpdash/stratify/partial_release.py: spec §9 worked examples
(partially_private.md),
properties and cross-checks.

Expected numbers come from the spec's worked examples, closed forms, brute force (exact rational
arithmetic, enumeration, quadrature) or independent libraries (scipy.stats, cvxpy) — never from the code
under test.
"""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from dpdash.stratify import partial_release
from dpdash.accounting import public_info
from dpdash.stratify.partial_release import PublicInfo


# ---------------------------------------------------------------------------------------------- P1 Δ_z
@pytest.mark.parametrize("n,z0,z1,expected", [
    (7, .3, .3, 1), (12, 0, 1, 12), (12, 1, 0, 10),
    (100, .5, .75, 28), (100, .9, .1, 79), (10, .1, .25, 4), (50, .2, .4, 13), (50, .4, .2, 11),
    (20, .3, .6, 7), (30, .6, .3, 8),
])
def test_delta_z_binom_spec_values(n, z0, z1, expected):
    assert public_info.delta_z_binom(n, z0, z1) == expected


P1_TABLE = """
0.00: 1 10 10 10 10 10 10
0.10: 8 1 4 6 8 9 10
0.25: 8 2 1 4 6 8 10
0.50: 8 4 2 1 4 6 10
0.75: 8 6 4 2 1 4 10
0.90: 8 7 6 4 2 1 10
1.00: 8 8 8 8 8 8 1
"""


def test_delta_z_full_table_n10():
    zs = [0, .1, .25, .5, .75, .9, 1]
    expected = np.array([[int(v) for v in line.split(":")[1].split()] for line in P1_TABLE.strip().splitlines()])
    np.testing.assert_array_equal(public_info.delta_z_table(10, zs, zs), expected)
    assert public_info.delta_z_binom(10, .9, .1) == expected[5, 1]


def _exact_binom(m: int, p: Fraction, shift: int) -> tuple[list[int], list[Fraction]]:
    return [k + shift for k in range(m + 1)], [math.comb(m, k) * p**k * (1 - p)**(m - k) for k in range(m + 1)]


def _exact_winf(xa, pa, xb, pb) -> int:
    """W∞ by exact rational quantile functions (brute force, no floating point)."""
    def steps(x, p):
        out, acc = [], Fraction(0)
        for xi, pi in zip(x, p):
            if pi > 0:
                acc += pi
                out.append((acc, xi))
        return out
    sa, sb = steps(xa, pa), steps(xb, pb)
    brk = sorted({Fraction(0)} | {c for c, _ in sa} | {c for c, _ in sb})
    best = 0
    for lo, hi in zip(brk[:-1], brk[1:]):
        mid = (lo + hi) / 2
        qa = next(x for c, x in sa if c >= mid)
        qb = next(x for c, x in sb if c >= mid)
        best = max(best, abs(qa - qb))
    return best


@settings(max_examples=25)
@given(n=st.integers(2, 14), i0=st.integers(0, 20), i1=st.integers(0, 20))
def test_delta_z_binom_matches_exact_rational_winf(n, i0, i1):
    z0, z1 = Fraction(i0, 20), Fraction(i1, 20)
    x1, p1 = _exact_binom(n - 1, z1, 1)
    x0, p0 = _exact_binom(n - 1, z0, 0)
    assert public_info.delta_z_binom(n, float(z0), float(z1)) == _exact_winf(x1, p1, x0, p0)


def test_delta_z_errors():
    with pytest.raises(ValueError):
        public_info.delta_z_binom(1, .2, .3)
    with pytest.raises(ValueError):
        public_info.delta_z_binom(10, -0.1, .3)
    with pytest.raises(ValueError):
        public_info.delta_z_binom(10, .2, 1.1)


@settings(max_examples=30)
@given(x=st.lists(st.integers(-20, 20), min_size=1, max_size=6, unique=True),
       w=st.lists(st.integers(1, 9), min_size=6, max_size=6), shift=st.integers(-7, 7))
def test_winf_shift_and_w1_bound(x, w, shift):
    p = np.array(w[:len(x)], float)
    p /= p.sum()
    assert public_info.winf_1d(x, p, np.array(x) + shift, p) == pytest.approx(abs(shift))
    q = np.roll(p, 1)
    w1 = stats.wasserstein_distance(x, x, p, q)
    assert public_info.winf_1d(x, p, x, q) >= w1 - 1e-12


# ---------------------------------------------------------------------------------------------- P2/P3
def test_example2_spec_values():
    assert public_info.gaussian_public_coefficients(10, 0, 0).beta_v == pytest.approx(0.1, abs=1e-5)
    assert public_info.gaussian_public_coefficients(10, 0.5, 0).beta_v == pytest.approx(0.55, abs=1e-5)
    assert public_info.gaussian_public_coefficients(10, 0.9, 0).beta_v == pytest.approx(0.91, abs=1e-5)
    g = public_info.gaussian_public_coefficients(10, 0, 0.3, sigma=1.7, tau=0.6)
    assert (g.beta_v, g.beta_z, g.cond_var) == pytest.approx((0.01099, 0.84066, 0.02858), abs=1e-5)
    assert public_info.gaussian_public_coefficients(10, 0, 0.1, sigma=1.7, tau=0.6).beta_z == pytest.approx(0.257576,
                                                                                                  abs=1e-5)
    g = public_info.gaussian_public_coefficients(20, 0.2, 0.4)
    assert (g.a, g.beta_v, g.beta_z) == pytest.approx((0.24, 0.095238, 0.361905), abs=1e-5)
    with pytest.raises(ValueError, match="exceeds"):
        public_info.gaussian_public_coefficients(10, 0, 0.4)
    with pytest.raises(ValueError):
        public_info.gaussian_public_coefficients(10, -0.2, 0)  # r < −1/(n−1)
    with pytest.raises(ValueError):
        public_info.gaussian_public_coefficients(10, 0.5, 1.0)
    assert public_info.delta_z_gauss(10, 0.5, 0, sensitivity=2) == pytest.approx(1.1, abs=1e-9)


@settings(max_examples=25)
@given(n=st.integers(2, 30), r=st.floats(0, 0.99), rho=st.floats(-0.9, 0.9), sigma=st.floats(0.2, 3),
       tau=st.floats(0.2, 3))
def test_example2_matches_gaussian_conditioning(n, r, rho, sigma, tau):
    """β and Var(X̄|X₁, Z) equal the Gaussian conditioning formulas from the full covariance matrix."""
    a = (1 + (n - 1) * r) / n
    assume(rho * rho <= a - 1e-6)
    g = public_info.gaussian_public_coefficients(n, r, rho, sigma=sigma, tau=tau)
    # (X̄, X₁, Z) covariance: Var X̄ = σ²a, Cov(X̄, X₁) = σ²a, Cov(X̄, Z) = Cov(X₁, Z) = ρστ, Var Z = τ².
    S12 = np.array([sigma**2 * a, rho * sigma * tau])
    S22 = np.array([[sigma**2, rho * sigma * tau], [rho * sigma * tau, tau**2]])
    beta = np.linalg.solve(S22, S12)
    assert (g.beta_v, g.beta_z) == pytest.approx(tuple(beta), rel=1e-6, abs=1e-9)
    cond = sigma**2 * a - S12 @ beta
    assert g.cond_var == pytest.approx(cond, rel=1e-6, abs=1e-9)


def test_effective_epsilon_p3():
    assert public_info.effective_epsilon_dpz(0.5, sensitivity_dp=1, sensitivity_z=13) == pytest.approx(6.5)
    assert public_info.required_scale_dpz(0.5, sensitivity_z=13) == pytest.approx(26)
    with pytest.raises(ValueError):
        public_info.effective_epsilon_dpz(0, sensitivity_dp=1, sensitivity_z=1)
    with pytest.raises(ValueError):
        public_info.effective_epsilon_dpz(float("inf"), sensitivity_dp=1, sensitivity_z=1)
    with pytest.raises(ValueError):
        public_info.effective_epsilon_dpz(1, sensitivity_dp=0, sensitivity_z=1)


# ---------------------------------------------------------------------------------------------- P4 Lemma 5
@pytest.mark.parametrize("eps,N,disc,cont", [
    (0.5, 2, 0.614107, 0.719070), (0.5, 5, 0.696525, 0.815280), (2, 10, 2.110664, 2.623081),
    (0.1, 10, 0.173803, 0.185570), (0.25, 10, 0.402410, 0.445222),
])
def test_lemma5_spec_values(eps, N, disc, cont):
    assert public_info.eps_star_invariant(eps, N, kind="discrete") == pytest.approx(disc, abs=1e-5)
    assert public_info.eps_star_invariant(eps, N, kind="continuous") == pytest.approx(cont, abs=1e-5)


def test_lemma5_limits_and_n1():
    assert public_info.eps_star_invariant(2, math.inf) == pytest.approx(2.110664, abs=1e-5)
    assert public_info.eps_star_invariant(3, math.inf, kind="continuous") == pytest.approx(3.667939, abs=1e-5)
    for e in (0.1, 1, 7):
        assert public_info.eps_star_invariant(e, 1) == pytest.approx(e)
        assert public_info.eps_star_invariant(e, 1, kind="continuous") == pytest.approx(e)
    with pytest.raises(ValueError):
        public_info.eps_star_invariant(1, 0.5)
    with pytest.raises(ValueError):
        public_info.eps_star_invariant(1, 5, kind="gaussian")


@settings(max_examples=40)
@given(eps=st.floats(0.01, 15), N=st.integers(1, 5000), kind=st.sampled_from(["discrete", "continuous"]))
def test_lemma5_band(eps, N, kind):
    e = public_info.eps_star_invariant(eps, N, kind=kind)
    assert eps - 1e-9 <= e <= 2 * eps + 1e-9


@pytest.mark.parametrize("eps,N", [(0.5, 3), (1.3, 6), (0.2, 4)])
def test_lemma5_brute_force(eps, N):
    """Worst log-ratio of the truncated mechanism over all neighbours x, x+1 in [0, N] and outputs y."""
    r = math.exp(-eps)
    ys = np.arange(N + 1)
    worst = 0.0
    for x in range(N):
        p0 = r ** np.abs(ys - x)
        p1 = r ** np.abs(ys - x - 1)
        worst = max(worst, np.max(np.abs(np.log(p0 / p0.sum()) - np.log(p1 / p1.sum()))))
    assert public_info.eps_star_invariant(eps, N) == pytest.approx(worst, abs=1e-10)
    # continuous: normaliser by quadrature, densities compared on a y grid
    norm = lambda x: integrate.quad(lambda y: math.exp(-eps * abs(y - x)), 0, N, points=[x])[0]
    worst_c = 0.0
    for x in np.linspace(0, N - 1, 41):
        yy = np.linspace(0, N, 401)
        lr = -eps * np.abs(yy - x) + eps * np.abs(yy - x - 1) - math.log(norm(x)) + math.log(norm(x + 1))
        worst_c = max(worst_c, np.max(np.abs(lr)))
    assert public_info.eps_star_invariant(eps, N, kind="continuous") == pytest.approx(worst_c, abs=1e-6)


# ---------------------------------------------------------------------------------------------- P5 Example 1
def test_example1_spec_values():
    assert public_info.realized_epsilon_trunc_em(1, epsilon=0.8, kappa=2) == pytest.approx(0.4, abs=1e-3)
    assert public_info.realized_epsilon_trunc_em(20, epsilon=0.3, kappa=2) == pytest.approx(0.2794, abs=1e-3)
    assert public_info.realized_epsilon_trunc_em(20, epsilon=0.3, kappa=1) == pytest.approx(0.5303, abs=1e-3)
    assert public_info.realized_epsilon_trunc_em(10, epsilon=0.5, kappa=2) == pytest.approx(0.4452, abs=1e-3)
    assert public_info.realized_epsilon_trunc_em_limit(3, kappa=2) == pytest.approx(2.0749, abs=1e-3)
    assert public_info.realized_epsilon_trunc_em_limit(3, kappa=1) == pytest.approx(3.6679, abs=1e-3)
    y = public_info.trunc_laplace_em_sample(0.3, 10, epsilon=1, sensitivity=1, kappa=2, size=200_000, rng=0)
    assert y.mean() == pytest.approx(0.2202, abs=0.002)
    assert y.min() >= -0.5 and y.max() <= 0.5


def test_example1_sampler_matches_density():
    """KS test of the inverse-CDF sampler against the truncated Laplace CDF by quadrature."""
    xbar, a, half = -0.2, 3.0, 0.5  # n=3, ε=2, Δ=1, κ=2 → a = 3
    y = public_info.trunc_laplace_em_sample(xbar, 3, epsilon=2, sensitivity=1, kappa=2, size=20_000, rng=3)
    Z = integrate.quad(lambda u: math.exp(-a * abs(u - xbar)), -half, half, points=[xbar])[0]
    cdf = np.vectorize(lambda t: integrate.quad(lambda u: math.exp(-a * abs(u - xbar)), -half, t,
                                                points=[xbar] if -half < xbar < t else None)[0] / Z)
    assert stats.kstest(y, cdf).pvalue > 1e-3


def test_example1_kappa1_exceeds_epsilon_and_limit():
    for eps in (0.3, 1.0, 3.0):
        assert public_info.realized_epsilon_trunc_em(500, epsilon=eps, kappa=1) > eps
        assert public_info.realized_epsilon_trunc_em(500, epsilon=eps, kappa=2) <= eps + 1e-9
        assert public_info.realized_epsilon_trunc_em(5000, epsilon=eps, kappa=2) == pytest.approx(
            eps / 2 + math.log(2 - math.exp(-eps / 2)), abs=2e-3)


# ---------------------------------------------------------------------------------------------- P6 / P7
def test_posterior_bounds_via_risk():
    risk = pytest.importorskip("dpdash.epsilon.risk",
                               reason="dpdash/epsilon/risk.py is owned by the epsilon calculator")
    for p0, eps, lo, hi in [(0.1, 1, 0.039270, 0.231969), (0.3, 0.5, 0.206312, 0.414038),
                            (0.5, 2, 0.119203, 0.880797)]:
        b = risk.posterior_bound(p0, epsilon=eps)
        assert (b.lower, b.upper) == pytest.approx((lo, hi), abs=1e-6)


def test_compose_p7():
    assert public_info.compose_dpz([0.5, 0.7], same_z=True) == pytest.approx(1.2)
    with pytest.raises(ValueError, match="do not compose"):
        public_info.compose_dpz([0.5, 0.7], same_z=False)
    with pytest.raises(ValueError):
        public_info.compose_dpz([0.5, -1], same_z=True)


# ---------------------------------------------------------------------------------------------- P8 Prop 1
def test_prop1_spec():
    r = public_info.prop1_mse(5, 2, sensitivity=1, epsilon=0.5)
    assert (r.projected, r.native, r.ratio) == pytest.approx((48, 24, 2))
    rng = np.random.default_rng(11)
    y1 = public_info.knorm_l2_sample(10, 1.0, size=200_000, rng=rng)
    y2 = public_info.knorm_l2_sample(3, 1.0, size=200_000, rng=rng)
    proj = np.mean(np.sum(y1[:, :3] ** 2, axis=1))
    nat = np.mean(np.sum(y2 ** 2, axis=1))
    exact = public_info.prop1_mse(10, 3, sensitivity=1, epsilon=1)
    assert (exact.projected, exact.native) == (33, 12)
    assert proj == pytest.approx(33, rel=0.015)
    assert nat == pytest.approx(12, rel=0.015)


# ---------------------------------------------------------------------------------------------- P9 DLap
def test_dlap_p9_and_scipy():
    r = math.exp(-0.5)
    assert r == pytest.approx(0.606531, abs=1e-6)
    assert public_info.dlap_var(epsilon=1, sensitivity=2) == pytest.approx(7.835396, abs=1e-6)
    k = np.arange(-400, 401)
    p = public_info.dlap_pmf(k, epsilon=1, sensitivity=2)
    assert p[400] == pytest.approx(0.244919, abs=1e-6)
    assert np.sum(np.abs(k) * p) == pytest.approx(1.919035, abs=1e-6)
    assert np.sum(p[k < 0]) == pytest.approx(0.377541, abs=1e-6)
    np.testing.assert_allclose(p, stats.dlaplace.pmf(k, 0.5), rtol=1e-12)
    assert public_info.dlap_var(epsilon=1, sensitivity=2) == pytest.approx(stats.dlaplace.var(0.5))
    x = public_info.dlap_sample(epsilon=1, sensitivity=2, size=1_000_000, rng=0)
    assert x.var() == pytest.approx(7.835396, rel=0.01)


# ---------------------------------------------------------------------------------------------- P10 DM
def test_dm_spec_and_scipy():
    assert math.exp(partial_release.dm_logpmf([1, 1], 2, [0.5, 0.5])) == pytest.approx(0.25, abs=1e-12)
    assert math.exp(partial_release.dm_logpmf([2, 1, 0], 3, [1, 1, 1])) == pytest.approx(0.1, abs=1e-12)
    assert partial_release.dm_logpmf([4, 0, 1], 5, [2, 0.5, 1.5]) == pytest.approx(-2.010449, abs=1e-6)
    assert partial_release.dm_logpmf([4, 0, 1], 5, [2, 0.5, 1.5]) == pytest.approx(
        stats.dirichlet_multinomial.logpmf([4, 0, 1], [2, 0.5, 1.5], 5), abs=1e-12)
    total = sum(math.exp(partial_release.dm_logpmf(list(x), 7, [0.3, 1.2, 2.5]))
                for x in itertools.product(range(8), repeat=3) if sum(x) == 7)
    assert total == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(ValueError):
        partial_release.dm_logpmf([1, 1], 3, [1, 1])


# ---------------------------------------------------------------------------------------------- P11 PP
YC, YD = [10.3, -2.0, 5.5, 3.2], [1.2, 0.5, 7.0, -1.5]


def test_pp_toy_p11():
    r = partial_release.project_stage1(YC, YD, 14)
    assert r.lam == pytest.approx(2.3, abs=1e-9)
    np.testing.assert_allclose(r.cases, [8, 0, 5.1, 0.9], atol=1e-9)
    np.testing.assert_allclose(r.deaths, [1.2, 0, 5.1, 0], atol=1e-9)
    np.testing.assert_array_equal(r.region, [0, 3, 2, 1])
    rel = partial_release.postprocess(YC, YD, 14).release
    np.testing.assert_array_equal(rel.cases, [8, 0, 5, 1])
    np.testing.assert_array_equal(rel.deaths, [1, 0, 5, 0])
    assert rel.cases.sum() == 14


def _cvxpy_stage1(yc, yd, s):
    cp = pytest.importorskip("cvxpy")
    c, d = cp.Variable(len(yc)), cp.Variable(len(yc))
    prob = cp.Problem(cp.Minimize(cp.sum_squares(c - yc) + cp.sum_squares(d - yd)),
                      [cp.sum(c) == s, c >= d, d >= 0])
    # Clarabel stops short on some degenerate random instances (seed 308, J = 3, s = 3: "user_limit"; found by the
    # random Hypothesis pass); OSQP with solution polishing, another solver, then answers to 1e-10
    attempts = [dict(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12),
                dict(solver="OSQP", eps_abs=1e-10, eps_rel=1e-10, polish=True, max_iter=200_000)]
    for kw in attempts:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # cvxpy's "may be inaccurate": the status is checked
                prob.solve(**kw)
        except cp.error.SolverError:
            continue
        if prob.status == cp.OPTIMAL:
            return c.value, d.value
    raise AssertionError(f"the cvxpy oracle did not solve the instance (status {prob.status})")


def test_pp_stage1_matches_cvxpy_toy():
    c, d = _cvxpy_stage1(np.array(YC), np.array(YD), 14)
    r = partial_release.project_stage1(YC, YD, 14)
    np.testing.assert_allclose(r.cases, c, atol=1e-5)
    np.testing.assert_allclose(r.deaths, d, atol=1e-5)


@settings(max_examples=15)
@given(seed=st.integers(0, 10**6), J=st.integers(2, 8), s=st.integers(0, 60))
def test_pp_stage1_matches_cvxpy_random(seed, J, s):
    rng = np.random.default_rng(seed)
    yc = rng.normal(s / J, 6, J)
    yd = rng.normal(1, 4, J)
    c, d = _cvxpy_stage1(yc, yd, s)
    r = partial_release.project_stage1(yc, yd, s)
    obj = lambda cc, dd: np.sum((cc - yc) ** 2) + np.sum((dd - yd) ** 2)
    assert obj(r.cases, r.deaths) <= obj(c, d) + 1e-5
    np.testing.assert_allclose(r.cases, c, atol=1e-4)
    np.testing.assert_allclose(r.deaths, d, atol=1e-4)


@settings(max_examples=40)
@given(seed=st.integers(0, 10**6), J=st.integers(1, 30), s=st.integers(0, 500),
       st_on=st.booleans(), order=st.booleans(), nonneg=st.booleans())
def test_pp_release_satisfies_public_constraints_exactly(seed, J, s, st_on, order, nonneg):
    rng = np.random.default_rng(seed)
    yc = rng.normal(s / J, 10, J)
    yd = rng.normal(0, 5, J)
    pub = PublicInfo(state_total=st_on, cases_ge_deaths=order, nonnegative=nonneg)
    res = partial_release.postprocess(yc, yd, s, public=pub)
    c, d = res.release.cases, res.release.deaths
    assert c.dtype.kind == "i" and d.dtype.kind == "i"
    if st_on:
        assert int(c.sum()) == s
        assert res.stage1.cases.sum() == pytest.approx(s, abs=1e-6)
    if order:
        assert np.all(c >= d)
    if nonneg:
        assert np.all(d >= 0) and np.all(c >= 0)
    assert (res.stage1.region is not None) == (st_on and order and nonneg)
    # idempotent on feasible input
    again = partial_release.project_stage1(res.stage1.cases, res.stage1.deaths, res.stage1.cases.sum(), public=pub)
    np.testing.assert_allclose(again.cases, res.stage1.cases, atol=1e-7)
    np.testing.assert_allclose(again.deaths, res.stage1.deaths, atol=1e-7)


@settings(max_examples=25)
@given(seed=st.integers(0, 10**6), J=st.integers(1, 3))
def test_stage2_matches_brute_force(seed, J):
    rng = np.random.default_rng(seed)
    yc = rng.normal(5, 4, J)
    yd = rng.normal(1, 3, J)
    s = int(rng.integers(0, 15))
    st1 = partial_release.project_stage1(yc, yd, s)
    rel = partial_release.round_stage2(st1.cases, st1.deaths, s)
    fc, fd = np.floor(st1.cases + 1e-12), np.floor(st1.deaths + 1e-12)
    best = math.inf
    for b in itertools.product((0, 1), repeat=2 * J):
        c, d = fc + b[:J], fd + b[J:]
        if c.sum() != s or np.any(c < d):
            continue
        best = min(best, np.abs(c - st1.cases).sum() + np.abs(d - st1.deaths).sum())
    got = np.abs(rel.cases - st1.cases).sum() + np.abs(rel.deaths - st1.deaths).sum()
    assert got == pytest.approx(best, abs=1e-7)


def test_pp_errors():
    with pytest.raises(ValueError, match="state total"):
        partial_release.project_stage1([1, 2], [0, 0], -3)
    with pytest.raises(ValueError):
        partial_release.project_stage1([1, 2], [0, 0, 1], 3)
    with pytest.raises(ValueError):
        PublicInfo(exact_share=0.95)


# ---------------------------------------------------------------------------------------------- P12–P14
def test_lemma7_p12():
    r = public_info.lemma7_toy(50, epsilon=0.5, noise="dlap", post="clamp")
    assert r.evar_y == pytest.approx(0.0057691, abs=1e-7)
    assert r.evar_ystar == pytest.approx(r.evar_y, abs=1e-10)
    r = public_info.lemma7_toy(5, epsilon=2, noise="dlap", post="clamp")
    assert r.evar_y == pytest.approx(0.0292562, abs=1e-7)
    assert r.evar_ystar == pytest.approx(r.evar_y, abs=1e-10)
    r = public_info.lemma7_toy(5, epsilon=0.5, noise="laplace", post="round_clamp")
    assert r.evar_y == pytest.approx(0.063421, abs=2e-4)
    assert r.evar_ystar == pytest.approx(0.063677, abs=2e-4)
    assert r.evar_y < r.evar_ystar


def test_lemma7_evar_t_closed_form():
    # uniform prior: E Var(θ|T) = E[(T+1)(n−T+1)/((n+2)²(n+3))] with T ~ U{0..n}
    n = 9
    t = np.arange(n + 1)
    expected = np.mean((t + 1) * (n - t + 1) / ((n + 2) ** 2 * (n + 3)))
    assert public_info.lemma7_toy(n, epsilon=1).evar_t == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("n,eps", [(3, 0.7), (6, 2.0)])
def test_lemma7_continuous_matches_quad(n, eps):
    """E Var(θ|Y) = E θ² − ∫ (Σ_t p_t f(y−t) m_t)² / Σ_t p_t f(y−t) dy, by scipy quad (uniform prior)."""
    t = np.arange(n + 1)
    pt = np.full(n + 1, 1 / (n + 1))
    m1 = (1 + t) / (n + 2)
    def g(y):
        w = pt * stats.laplace.pdf(y - t, scale=1 / eps)
        return (w @ m1) ** 2 / w.sum()
    pieces = [(-40 / eps, 0)] + [(k, k + 1) for k in range(n)] + [(n, n + 40 / eps)]  # tails beyond: e^-40
    second = sum(integrate.quad(g, a, b, epsabs=1e-13, epsrel=1e-12)[0] for a, b in pieces)
    expected = 1 / 3 - second
    r = public_info.lemma7_toy(n, epsilon=eps, noise="laplace", post="clamp")
    assert r.evar_y == pytest.approx(expected, abs=1e-10)
    assert r.evar_ystar == pytest.approx(expected, abs=1e-10)


@settings(max_examples=20)
@given(n=st.integers(2, 25), eps=st.floats(0.2, 5), noise=st.sampled_from(["dlap", "laplace"]),
       post=st.sampled_from(["clamp", "round_clamp"]))
def test_lemma7_ordering(n, eps, noise, post):
    r = public_info.lemma7_toy(n, epsilon=eps, noise=noise, post=post)
    assert r.evar_t <= r.evar_y + 1e-9
    assert r.evar_y <= r.evar_ystar + 1e-6
    assert 0 <= r.p_differs <= 1


def test_sum_projection_p13():
    r = public_info.sum_projection_toy(6, epsilon=0.5)
    assert r.evar_y == pytest.approx(0.047004, abs=1e-5)
    assert r.evar_ystar == pytest.approx(0.049372, abs=1e-5)


def test_thm2_power_p14():
    r = public_info.thm2_power(10, epsilon=1, theta0=0.7, theta=0.9)
    assert (r.power_y, r.power_ystar, r.threshold_y) == pytest.approx((0.2131, 0.1981, 10.200), abs=1e-3)
    assert r.k_ystar == 10 and r.gamma_ystar == pytest.approx(0.515, abs=1e-3)
    r = public_info.thm2_power(10, epsilon=0.5, theta0=0.3, theta=0.5)
    assert (r.power_y, r.power_ystar) == pytest.approx((0.1389, 0.1384), abs=1e-3)


@settings(max_examples=15)
@given(n=st.integers(2, 20), eps=st.floats(0.2, 3), th0=st.floats(0.1, 0.8), d=st.floats(0.0, 0.19))
def test_thm2_power_properties(n, eps, th0, d):
    r = public_info.thm2_power(n, epsilon=eps, theta0=th0, theta=th0 + d)
    assert r.power_y >= r.power_ystar - 1e-9  # Y* is a function of Y
    size = public_info.thm2_power(n, epsilon=eps, theta0=th0, theta=th0)
    assert size.power_y == pytest.approx(0.05, abs=1e-8)
    assert size.power_ystar == pytest.approx(0.05, abs=1e-8)


# ---------------------------------------------------------------------------------------------- P15 Alg. 1
ALG1 = dict(y=[6, 1, 4], s=10, prior_alpha=[3, 3, 2], epsilon=1, sensitivity=2)


def test_alg1_exact_p15():
    r = partial_release.posterior_exact_counts(**ALG1)
    assert r.n_compositions == 66
    np.testing.assert_allclose(r.mean, [0.453188, 0.262743, 0.284069], atol=1e-6)
    np.testing.assert_allclose(r.sd, [0.137208, 0.120123, 0.126325], atol=1e-6)
    assert r.acceptance == pytest.approx(0.076902, abs=1e-6)


def test_alg1_rejection_p15():
    ex = partial_release.posterior_exact_counts(**ALG1)
    r = partial_release.posterior_rejection_counts(**ALG1, n_proposals=200_000, rng=5)
    se = ex.sd / math.sqrt(r.n_accepted)
    assert np.all(np.abs(r.mean - ex.mean) < 3 * se)
    assert r.acceptance == pytest.approx(ex.acceptance, abs=0.003)
    lit = partial_release.posterior_rejection_counts(**ALG1, n_proposals=200_000, rng=5, rule="paper_literal")
    assert np.max(np.abs(lit.mean - ex.mean)) > 0.05
    np.testing.assert_allclose(lit.mean, [0.369, 0.384, 0.247], atol=0.01)


def test_alg1_exact_brute_force_small():
    """Posterior mean by numerical integration over the simplex for J = 2 (Beta prior)."""
    y, s, a0, eps, sens = [3, 0], 4, [2.0, 1.5], 0.8, 1.0
    r = math.exp(-eps / sens)
    def lik(p):
        return sum(stats.binom.pmf(x, s, p) * r ** (abs(y[0] - x) + abs(y[1] - (s - x))) for x in range(s + 1))
    prior = stats.beta(a0[0], a0[1]).pdf
    Z = integrate.quad(lambda p: lik(p) * prior(p), 0, 1)[0]
    m = integrate.quad(lambda p: p * lik(p) * prior(p), 0, 1)[0] / Z
    ex = partial_release.posterior_exact_counts(y, s, a0, epsilon=eps, sensitivity=sens)
    assert ex.mean[0] == pytest.approx(m, abs=1e-9)
    assert ex.acceptance == pytest.approx(Z, abs=1e-9)


def test_alg1_guards():
    with pytest.raises(ValueError, match="compositions"):
        partial_release.posterior_exact_counts([1] * 6, 60, [1] * 6, epsilon=1, sensitivity=1)
    with pytest.raises(ValueError):
        partial_release.posterior_rejection_counts(**ALG1, n_proposals=10, rng=0, rule="other")
    with pytest.raises(ValueError):
        public_info.lemma7_toy(201, epsilon=1)


def test_alg1_non_finite_inputs_are_refused():
    # Issue 17: "inf" or "nan" typed into the toy's text boxes gave NaN tables without a word.
    for y, a0 in (([math.inf, 1, 4], [3, 3, 2]), ([math.nan, 1, 4], [3, 3, 2]), ([6, 1, 4], [math.inf, 1, 1]),
                  ([6, 1, 4], [1e308, 1e308, 1e308])):
        with pytest.raises(ValueError, match="finite"):
            partial_release.posterior_exact_counts(y, 10, a0, epsilon=1, sensitivity=2)
        with pytest.raises(ValueError, match="finite"):
            partial_release.posterior_rejection_counts(y, 10, a0, epsilon=1, sensitivity=2, n_proposals=10, rng=0)


@pytest.mark.parametrize("scale", [1e13, 1e150])
def test_alg1_exact_strong_prior_against_mpmath(scale):
    """A strong prior (large α₀): the posterior by 40-digit enumeration with mpmath's rising factorials."""
    import mpmath as mp
    mp.mp.dps = 40
    y, s, eps, sens = [6, 1, 4], 10, 1.0, 2.0
    a0 = [1 * scale, 3 * scale, 2 * scale]
    r = mp.e ** (-mp.mpf(eps) / sens)
    A = mp.mpf(sum(a0))
    W = mp.mpf(0)
    M = [mp.mpf(0)] * 3
    S2 = [mp.mpf(0)] * 3
    for x0 in range(s + 1):
        for x1 in range(s + 1 - x0):
            x = (x0, x1, s - x0 - x1)
            dm = mp.factorial(s) / mp.rf(A, s)
            for a, xi in zip(a0, x):
                dm *= mp.rf(mp.mpf(a), xi) / mp.factorial(xi)
            w = dm * r ** sum(abs(yi - xi) for yi, xi in zip(y, x))
            W += w
            for j in range(3):
                m = (a0[j] + x[j]) / (A + s)
                M[j] += w * m
                S2[j] += w * (m * (1 - m) / (A + s + 1) + m * m)
    ex = partial_release.posterior_exact_counts(y, s, a0, epsilon=eps, sensitivity=sens)
    for j in range(3):
        mean = M[j] / W
        assert ex.mean[j] == pytest.approx(float(mean), rel=1e-12)
        assert ex.sd[j] == pytest.approx(float(mp.sqrt(S2[j] / W - mean ** 2)), rel=1e-6)


# ---------------------------------------------------------------------------------------------- P16 WEM
def test_wem_naive_lattice_mean_p16():
    u = np.arange(-600, 601)
    U, V = np.meshgrid(u, u)
    R = np.hypot(U, V)
    w = np.exp(-0.25 * R)
    exact = float((w * R).sum() / w.sum())
    assert exact == pytest.approx(7.9932, abs=1e-4)
    vals = []
    for i in range(2000):
        r = partial_release.wem_gibbs([0], [0], 0, epsilon=1, sensitivity=2, kappa=2, base="naive", sweeps=4, rng=i)
        vals.append(math.hypot(r.cases[0], r.deaths[0]))
    vals = np.array(vals)
    assert abs(vals.mean() - exact) < 3 * vals.std() / math.sqrt(vals.size)


@settings(max_examples=15)
@given(seed=st.integers(0, 10**6), J=st.integers(2, 6), base=st.sampled_from(["congenial", "prior"]),
       eps=st.sampled_from([0.2, 1.0, 5.0]))
def test_wem_constrained_outputs_feasible(seed, J, base, eps):
    rng = np.random.default_rng(seed)
    xc = rng.integers(0, 40, J)
    xd = rng.binomial(xc, 0.2)
    prev = rng.integers(0, 40, J)
    r = partial_release.wem_gibbs(xc, xd, int(xc.sum()), epsilon=eps, sensitivity=2, base=base, alpha=1.0, prev=prev,
                      sweeps=5, rng=seed)
    assert r.cases.dtype.kind == "i"
    assert int(r.cases.sum()) == int(xc.sum())
    assert np.all(r.cases >= r.deaths) and np.all(r.deaths >= 0)


def test_wem_naive_not_constrained_and_errors():
    P = partial_release.synth_pa_like()
    r = partial_release.release_month(P, 9, method="wem_naive", epsilon=1, rng=0)
    assert r.cases.sum() != P.cases[:, 9].sum() or np.any(r.deaths < 0) or np.any(r.cases < r.deaths)
    with pytest.raises(ValueError, match="previous month"):
        partial_release.release_month(P, 0, method="wem_prior", epsilon=1, rng=0)
    with pytest.raises(ValueError, match="state total"):
        partial_release.wem_gibbs([1, 2], [0, 0], 3, epsilon=1, sensitivity=2, base="prior", alpha=1, prev=[1, 1],
                      public=PublicInfo(state_total=False))
    with pytest.raises(ValueError, match="prev"):
        partial_release.wem_gibbs([1, 2], [0, 0], 3, epsilon=1, sensitivity=2, base="prior", alpha=1)
    with pytest.raises(ValueError, match="alpha"):
        partial_release.wem_gibbs([1, 2], [0, 0], 3, epsilon=1, sensitivity=2, base="prior", alpha=0, prev=[1, 1])
    with pytest.raises(ValueError, match="kappa"):
        partial_release.wem_gibbs([1, 2], [0, 0], 3, epsilon=1, sensitivity=2, base="naive", kappa=0.5)


def test_wem_congenial_without_state_total_respects_bounds():
    xc, xd = np.array([5, 0, 30]), np.array([1, 0, 3])
    r = partial_release.wem_gibbs(xc, xd, 35, epsilon=1, sensitivity=2, base="congenial", sweeps=5, rng=1,
                      public=PublicInfo(state_total=False))
    assert np.all(r.cases >= r.deaths) and np.all(r.deaths >= 0)


@pytest.mark.slow
def test_wem_prior_beats_naive_p16():
    P = partial_release.synth_pa_like()
    for t in (9, 16):
        df = partial_release.run_partially_private_release(P, t, epsilons=[0.5, 1, 2, 5],
                                                           methods=["wem_naive", "wem_prior"],
                                                           alphas=[1e-3, 1e-2, 0.1, 1, 10], reps=3, rng=t)
        loss = df.drop_duplicates(["rep", "epsilon", "method", "alpha"]).groupby(
            ["method", "alpha"], dropna=False)["total_l2"].mean()
        best_prior = loss["wem_prior"].min()
        assert best_prior < loss["wem_naive"].iloc[0]


# ---------------------------------------------------------------------------------------------- P17 data
def test_synth_pa_like_p17():
    P = partial_release.synth_pa_like()
    assert P.cases.shape == (67, 24) and P.deaths.shape == (67, 24)
    assert P.population[0] == 4547 and P.population[-1] == 1603797
    assert np.all(np.diff(P.population) >= 0)
    s = P.state_totals()
    assert s.min() == 34663 and s.max() == 382215
    assert s[:3].tolist() == [34663, 34856, 35618]
    assert s[9] == 243266 and s[16] == 36625
    assert P.cases[0].min() == 4 and P.cases[0].max() == 69
    assert P.cases[0, :5].tolist() == [6, 6, 5, 7, 10]
    assert int((P.deaths[0, 1:] == 0).sum()) == 18
    assert P.deaths[-1, :5].tolist() == [88, 81, 59, 96, 75]
    assert P.cases.sum() == 3_125_293 and P.deaths.sum() == 34_343 and P.deaths.max() == 355
    assert P.synthetic and "not real" in P.source
    assert P.counties[0] == "County 01" and P.months[-1] == "Month 24"


# ---------------------------------------------------------------------------------------------- CSV
def _panel_frame(P) -> pd.DataFrame:
    rows = [(P.counties[j], P.months[t], P.cases[j, t], P.deaths[j, t], P.population[j])
            for j in range(P.J) for t in range(P.T)]
    return pd.DataFrame(rows, columns=["County", "Month", "Cases", "Deaths", "Population"])


def test_csv_roundtrip():
    P = partial_release.synth_pa_like(J=5, T=4)
    df = _panel_frame(P).sample(frac=1, random_state=0)
    Q = partial_release.validate_county_csv(df)
    assert Q.counties == P.counties and Q.months == P.months
    np.testing.assert_array_equal(Q.cases, P.cases)
    np.testing.assert_array_equal(Q.deaths, P.deaths)
    assert not Q.synthetic
    Q2 = partial_release.read_county_csv(_panel_frame(P).to_csv(index=False).encode())
    np.testing.assert_array_equal(Q2.cases, P.cases)


def test_csv_integer_months_sort_numerically():
    P = partial_release.synth_pa_like(J=3, T=12)
    df = _panel_frame(P)
    df["Month"] = df["Month"].str.replace("Month ", "").astype(int)
    Q = partial_release.validate_county_csv(df)
    assert Q.months == tuple(str(m) for m in range(1, 13))
    np.testing.assert_array_equal(Q.cases, P.cases)


def _set(row, col, value):
    def f(d):
        d = d.astype(object)
        d.iloc[row, d.columns.get_loc(col)] = value
        return d
    return f


@pytest.mark.parametrize("mutate,match", [
    (lambda d: d.drop(columns=["Deaths"]), "missing column"),
    (_set(4, "Cases", "1.5"), r"data row 5 .*whole number"),
    (_set(4, "Cases", "abc"), r"data row 5 .*whole number"),
    (_set(2, "Deaths", -1), r"data row 3 .*negative"),
    (_set(6, "Deaths", 10**7), r"data row 7 .*exceed cases"),
    (_set(0, "Population", 0), r"data row 1 .*must be > 0"),
    (_set(2, "Population", 123), r"data row 3 .*constant within a county"),
    (_set(1, "Month", "Month 01"), r"data row 2 .*more than once"),
    (_set(3, "County", None), r"data row 4: the county is empty"),
    (lambda d: d.iloc[1:], r"has no row for month"),
    (lambda d: d[d["County"].isin(["County 01", "County 02"])], r"2 counties; expected between 3 and 500"),
    (lambda d: d[d["Month"] == "Month 01"], r"1 months; expected between 2 and 240"),
    (lambda d: d.iloc[:0], r"no data rows"),
])
def test_csv_rule_violations(mutate, match):
    P = partial_release.synth_pa_like(J=4, T=3)
    with pytest.raises(ValueError, match=match):
        partial_release.validate_county_csv(mutate(_panel_frame(P)))


def test_read_county_csv_bytes_errors():
    with pytest.raises(ValueError, match="empty"):
        partial_release.read_county_csv(b"")
    with pytest.raises(ValueError, match="limit is 10"):
        partial_release.read_county_csv(b"x" * (10_000_001))
    with pytest.raises(ValueError, match="missing column"):
        partial_release.read_county_csv(b"a,b\n1,2\n")


def _county_csv_bytes(J=3, T=2) -> bytes:
    return _panel_frame(partial_release.synth_pa_like(J=J, T=T)).to_csv(index=False).encode()


def test_read_county_csv_refuses_a_column_bomb_quickly():
    # Issue 17: the county reader had its own pd.read_csv(sep=None) and built the frame before any column limit.
    import time
    bomb = b"county,month,cases,deaths,population," + b",".join(b"c%d" % i for i in range(450_000)) + b"\n"
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="columns"):
        partial_release.read_county_csv(bomb + bomb.replace(b"c", b"1"))
    assert time.perf_counter() - t0 < 2.0


def test_read_county_csv_uses_the_shared_checks():
    # Duplicate names, ragged rows and an unclosed quote get the shared reader's messages (pandas renamed
    # a duplicate "county" to "county.1" and read on).
    good = _county_csv_bytes()
    header, rest = good.split(b"\n", 1)
    with pytest.raises(ValueError, match="(?i)more than once"):
        rows = b"\n".join(r + b",x" for r in rest.split(b"\n") if r)
        partial_release.read_county_csv(header + b",county\n" + rows + b"\n")
    with pytest.raises(ValueError, match="(?i)line up|values"):
        partial_release.read_county_csv(good + b"County 09,Month 01,1\n")
    with pytest.raises(ValueError, match="(?i)quote"):
        partial_release.read_county_csv(good + b'"County 09,Month 01,1,0,5\n')


def test_read_county_csv_keeps_text_and_other_encodings():
    # Counties named "NA" stay names (only empty cells are missing); semicolons and UTF-16 are read.
    P = partial_release.synth_pa_like(J=3, T=2)
    df = _panel_frame(P)
    df["County"] = df["County"].map({"County 01": "NA", "County 02": "N", "County 03": "County 03"})
    Q = partial_release.read_county_csv(df.to_csv(index=False).encode())
    assert set(Q.counties) == {"NA", "N", "County 03"}
    Q2 = partial_release.read_county_csv(df.to_csv(index=False, sep=";").encode("utf-16"))
    np.testing.assert_array_equal(Q2.cases, Q.cases)


# ---------------------------------------------------------------------------------------------- P18 / release
def test_guarantees_p18():
    g = lambda m, **k: partial_release.method_guarantee(m, epsilon=1, sensitivity=2, kappa=2, **k)
    assert g("pp") == pytest.approx(2.0)
    assert g("wem_naive") == pytest.approx(0.5)
    assert g("wem_congenial") == pytest.approx(1.0)
    assert g("wem_prior") == pytest.approx(1.0)
    assert g("pp", pp_sensitivity=4) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        g("other")
    tab = partial_release.guarantee_table(epsilon=1, sensitivity=2)
    assert tab["guaranteed epsilon"].tolist() == pytest.approx([2.0, 0.5, 1.0, 1.0])


def test_release_exact_share_and_columns():
    P = partial_release.synth_pa_like()
    pub = PublicInfo(exact_share=0.3)
    df = partial_release.run_partially_private_release(P, 5, epsilons=[1], methods=["pp", "wem_congenial"], reps=2,
                                           public=pub, sweeps=5, rng=0)
    assert list(df.columns) == ["rep", "epsilon", "method", "alpha", "county", "population", "true_cases",
                                "true_deaths", "cases", "deaths", "abs_err_cases", "rel_err_cases", "total_l2"]
    assert len(df) == 2 * 2 * P.J
    exact = df["population"] >= np.sort(P.population)[-int(math.floor(0.3 * P.J))]
    assert (df.loc[exact, "abs_err_cases"] == 0).all()
    assert (df.loc[exact, "cases"] == df.loc[exact, "true_cases"]).all()
    for _, g in df.groupby(["rep", "method"]):
        assert g["cases"].sum() == P.cases[:, 5].sum()
        assert (g["cases"] >= g["deaths"]).all() and (g["deaths"] >= 0).all()
        err = np.sqrt(((g["cases"] - g["true_cases"]) ** 2).sum() + ((g["deaths"] - g["true_deaths"]) ** 2).sum())
        assert g["total_l2"].iloc[0] == pytest.approx(err)
    assert df["alpha"].isna().all()


def test_release_seeds_independent_of_other_methods():
    P = partial_release.synth_pa_like()
    a = partial_release.run_partially_private_release(P, 3, epsilons=[1], methods=["pp"], reps=2, rng=7)
    b = partial_release.run_partially_private_release(P, 3, epsilons=[1], methods=["wem_naive", "pp"], reps=2, sweeps=2,
                                          rng=7)
    np.testing.assert_array_equal(a["cases"].to_numpy(), b[b["method"] == "pp"]["cases"].to_numpy())
    # different months draw independent noise (same seed must not repeat the same errors month after month)
    c = partial_release.run_partially_private_release(P, 4, epsilons=[1], methods=["pp"], reps=2, rng=7)
    err3 = (a["cases"] - a["true_cases"]).to_numpy()
    err4 = (c["cases"] - c["true_cases"]).to_numpy()
    assert not np.array_equal(err3, err4)


def test_pp_release_constraints_on_panel():
    P = partial_release.synth_pa_like()
    for t in (1, 9, 23):
        for eps in (0.1, 1, 10):
            r = partial_release.release_month(P, t, method="pp", epsilon=eps, rng=t)
            assert r.cases.sum() == P.cases[:, t].sum()
            assert np.all(r.cases >= r.deaths) and np.all(r.deaths >= 0)


def test_contraction_frequencies_shape_and_range():
    P = partial_release.synth_pa_like()
    df = partial_release.contraction_frequencies(P, epsilons=[0.1, 5], reps=3, rng=0)
    assert len(df) == 2 * P.J
    for col in ("case_zero", "death_zero", "rate"):
        assert df[col].between(0, 1).all()
    assert (df["death_zero"] >= df["case_zero"]).all()
    lo = df[df.epsilon == 0.1]["death_zero"].mean()
    hi = df[df.epsilon == 5]["death_zero"].mean()
    assert lo > hi  # more noise, more contraction to the boundary


def test_release_input_errors():
    P = partial_release.synth_pa_like()
    with pytest.raises(ValueError):
        partial_release.release_month(P, 1, method="pp", epsilon=0, rng=0)
    with pytest.raises(ValueError):
        partial_release.release_month(P, 1, method="pp", epsilon=1, sensitivity=-1, rng=0)
    with pytest.raises(ValueError):
        partial_release.release_month(P, 99, method="pp", epsilon=1, rng=0)
    with pytest.raises(ValueError, match="previous month"):
        partial_release.release_month(P, 3, method="wem_prior", epsilon=1, rng=0,
                          public=PublicInfo(previous_month_prior=False))
    with pytest.raises(ValueError, match="alpha"):
        partial_release.run_partially_private_release(P, 3, epsilons=[1], methods=["wem_prior"], alphas=[0], rng=0)


# ---------------------------------------------------------------------------------------------- figures
def test_figures_build_from_engine_results():
    from dpdash.epsilon import public_info_figures as F

    fig = F.make_invariant_band_figure(1.0, 1.2, kind="discrete", N=100)
    assert fig.data[0].x[0] == 1.2
    fig = F.make_invariant_ratio_figure(10, epsilons=[0.1, 1.0])
    # ε*/ε from the spec's P4 value at (0.1, 10), discrete trace first
    assert fig.data[0].y[0] == pytest.approx(0.173803 / 0.1, abs=1e-4)
    zs = [0, .1, .25, .5, .75, .9, 1]
    tab = public_info.delta_z_table(10, zs, zs)
    fig = F.make_delta_z_heatmap(10, zs, tab, current=(0.1, 0.25))
    assert np.asarray(fig.data[0].z)[1, 2] == 4  # spec P1 (10, .1, .25)
    assert "ties other" in fig.data[0].hovertext[0][0]
    fig = F.make_posterior_band_figure(0.1, {"a": (0.039270, 0.231969)})
    assert tuple(fig.data[0].x) == (0.039270, 0.231969)
    fig = F.make_em_audit_figure(20, epsilons=[0.3])
    assert fig.data[2].y[0] == pytest.approx(0.2794, abs=2e-3)  # κ = 2 trace, spec P5 (coarser grid)
    l7 = public_info.lemma7_toy(5, epsilon=2)
    fig = F.make_info_loss_figure(l7, public_info.sum_projection_toy(6, epsilon=0.5))
    assert fig.data[1].y[0] == pytest.approx(0.047004, abs=1e-5)
    fig = F.make_power_figure(10, epsilon=1, theta0=0.7, thetas=[0.7, 0.9])
    assert fig.data[0].y[1] == pytest.approx(0.2131, abs=1e-3)  # spec P14
    ex = partial_release.posterior_exact_counts(**ALG1)
    from dpdash.stratify.partial_release_figures import make_alg1_figure
    fig = make_alg1_figure({"exact": ex, "incorrect": ex})
    assert fig.data[0].y[0] == pytest.approx(0.453188, abs=1e-6)


def test_release_figures():
    from dpdash.stratify import partial_release_figures as F

    P = partial_release.synth_pa_like()
    df = partial_release.run_partially_private_release(P, 9, epsilons=[1, 5], methods=["pp"], reps=2, rng=0)
    fig = F.make_loss_vs_epsilon_figure(df)
    assert len(fig.data) == 2 and sorted(set(fig.data[0].x)) == [1, 5]
    fig = F.make_relerr_figure(df)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert len(fig.data[0].x) == int(np.isfinite(df["rel_err_cases"]).sum())
    fig = F.make_series_figure(P.months[1:], P.cases[0, 1:], {"pp": P.cases[0, 1:]}, county=P.counties[0])
    assert list(fig.data[0].y) == P.cases[0, 1:].tolist()
    cf = partial_release.contraction_frequencies(P, epsilons=[0.5, 2], reps=2, rng=0)
    fig = F.make_contraction_figure(cf, [P.counties[0], P.counties[-1]])
    assert len(fig.data) == 6
    df2 = pd.concat([df.assign(method="wem_prior", alpha=a) for a in (0.1, 1.0)] + [df.assign(method="wem_naive")])
    fig = F.make_alpha_sweep_figure(df2)
    assert any(tr.name == partial_release.METHOD_LABELS["wem_naive"] for tr in fig.data)


@settings(max_examples=10)
@given(seed=st.integers(0, 10**6), J=st.integers(3, 12), T=st.integers(2, 8))
def test_csv_roundtrip_property(seed, J, T):
    P = partial_release.synth_pa_like(rng=seed, J=J, T=T)
    df = _panel_frame(P).sample(frac=1, random_state=seed % 1000)
    Q = partial_release.validate_county_csv(df)
    # ties in population are broken by name, so compare through the county labels
    order = [P.counties.index(c) for c in Q.counties]
    np.testing.assert_array_equal(Q.cases, P.cases[order])
    np.testing.assert_array_equal(Q.deaths, P.deaths[order])
    assert np.all(np.diff(Q.population) >= 0)


def test_release_parallel_equals_sequential_and_progress():
    # WEM chains over joblib worker processes: every chain has its own SeedSequence, so n_jobs changes nothing.
    P = partial_release.synth_pa_like()
    kw = dict(epsilons=[0.5, 2], methods=["wem_naive", "wem_congenial", "wem_prior"], alphas=[0.1, 1.0], reps=2,
              sweeps=2, rng=5)
    seen = {1: [], 2: []}
    a = partial_release.run_partially_private_release(P, 7, n_jobs=1, progress=lambda f, m: seen[1].append(f), **kw)
    b = partial_release.run_partially_private_release(P, 7, n_jobs=2, progress=lambda f, m: seen[2].append(f), **kw)
    pd.testing.assert_frame_equal(a, b)
    n_chains = 2 * 2 * (1 + 1 + 2)  # reps × ε × (naive, congenial, prior at two α)
    assert len(a) == n_chains * P.J
    for fr in seen.values():
        assert len(fr) == n_chains and fr[-1] == 1.0 and all(y >= x for x, y in zip(fr, fr[1:]))
    # The page's batched units equal one call per unit, whatever the pool size.
    units = [(7, 2.0, "wem_congenial", float("nan"), 2), (3, 0.5, "wem_prior", 0.1, 1), (9, 1.0, "pp", 5.0, 3)]
    batched = partial_release.run_release_units(P, units, sweeps=2, rng=5, n_jobs=2)
    for (t, e, m, al, r), got in zip(units, batched):
        one = partial_release.run_partially_private_release(P, t, epsilons=[e], methods=[m],
                                                            alphas=[al if al == al else 1.0], reps=r, sweeps=2, rng=5)
        pd.testing.assert_frame_equal(one, got)
    assert not batched[0]["cases"].equals(
        partial_release.run_partially_private_release(P, 7, epsilons=[2.0], methods=["wem_congenial"], reps=2, sweeps=2,
                                          rng=6)["cases"])
