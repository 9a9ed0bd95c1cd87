"""Tests for dpdash/accounting/maxinfo.py: worked examples of specs/coherence_explorer.md §9 (items 1-8)
and specs/epsilon_calculator.md §9, plus independent brute-force cross-checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpdash.accounting import maxinfo as mi

ABS = 1e-4


# ----------------------------------------------------------------- §9.1 max-information
def test_max_info_examples():
    assert mi.max_info_pure(0.1, 1e4, 0.01) == pytest.approx(36.50904, abs=ABS)
    assert mi.max_info_approx(0.1, 1e4, 0.01) == pytest.approx(26776.21689, abs=ABS)
    assert mi.max_info_approx_delta_max(0.1, 1e4, 0.01) == pytest.approx(6.9444e-19, rel=1e-4)


# ----------------------------------------------------------------- §9.2 Theorem 3
def test_gamma_thm3_examples():
    r = mi.gamma_thm3(10, 0.5, 0.01, 10)
    assert r.gamma == pytest.approx(2613.54968, abs=ABS)
    assert r.terms == pytest.approx((2613.54968, 1431.30623, 326.69371, 21.2, 80), abs=ABS)
    assert r.binding_term == 0 and r.theorem == "Theorem 3" and r.n is None and r.vacuous is None
    r = mi.gamma_thm3(0, 2, 0.05, 1)
    assert r.gamma == pytest.approx(95.75413, abs=ABS)
    assert r.terms == pytest.approx((47.87706, 39.55004, 95.75413, 5.3, 80), abs=ABS)
    assert r.binding_term == 2
    assert r.log_term == pytest.approx(math.log(16 / 0.05))


def test_binding_term_lowest_on_tie():
    # α = √2 makes T1 = T3 (T1/T3 = 2/α²); pick ζ large so they dominate.
    r = mi.gamma_thm3(1e6, math.sqrt(2), 0.05, 1)
    assert r.terms[0] == pytest.approx(r.terms[2], rel=1e-12)
    assert r.binding_term in (0, 2)
    r2 = mi.gamma_thm3(0, 2, 1.0, 1)  # small: T5 = 80 binds
    assert r2.gamma == max(r2.terms)
    assert r2.binding_term == r2.terms.index(max(r2.terms))


# ----------------------------------------------------------------- §9.3-4 Theorems 7, 8
def test_gamma_pure_examples():
    r = mi.gamma_pure(0.5, 1e5, 1.0, 0.05, 5)
    assert r.gamma == pytest.approx(214169.51935, abs=ABS)
    assert r.zeta == pytest.approx(6443.51138, abs=ABS)
    assert r.vacuous is True and r.theorem == "Theorem 7"
    r = mi.gamma_pure(0.01, 1e6, 0.5, 1e-6, 10)
    assert (r.gamma, r.zeta) == pytest.approx((8606.74256, 45.91912), abs=ABS)
    assert r.vacuous is False
    r = mi.gamma_pure(0.05, 1e6, 1.0, 1e-6, 10)
    assert (r.gamma, r.zeta) == pytest.approx((24849.74531, 729.59562), abs=ABS)


def test_gamma_pure_is_thm3_at_theorem5_zeta():
    # E1: ζ is Theorem 5 at η = β/(2|𝒞|).
    eps, n, a, b, g = 0.03, 50_000, 0.7, 0.01, 7
    zeta = mi.max_info_pure(eps, n, b / (2 * g))
    assert mi.gamma_pure(eps, n, a, b, g).gamma == pytest.approx(mi.gamma_thm3(zeta, a, b, g).gamma, rel=1e-12)


def test_gamma_approx_examples():
    r = mi.gamma_approx(0.1, 1e5, 1.0, 0.05, 5)
    assert r.gamma == pytest.approx(4446705.92728, abs=ABS)
    assert r.vacuous is True
    assert mi.delta_max_approx(0.1, 1e5, 0.05, 5) == pytest.approx(6.9444e-21, rel=1e-4)
    r = mi.gamma_approx(0.001, 1e6, 0.5, 1e-6, 10)
    assert (r.gamma, r.zeta) == pytest.approx((26930.47604, 183.20590), abs=ABS)
    assert r.log_term == pytest.approx(math.log(32 * 10 / 1e-6))
    assert mi.delta_max_approx(0.001, 1e6, 1e-6, 10) == pytest.approx(6.9444e-37, rel=1e-4)
    with pytest.raises(ValueError, match="epsilon"):
        mi.gamma_approx(0.6, 1e6, 0.5, 1e-6, 10)


def test_gamma_approx_delta_range():
    dmax = mi.delta_max_approx(0.1, 1e5, 0.05, 5)
    mi.gamma_approx(0.1, 1e5, 1.0, 0.05, 5, delta=dmax)
    with pytest.raises(ValueError, match="δ_max"):
        mi.gamma_approx(0.1, 1e5, 1.0, 0.05, 5, delta=2 * dmax)
    with pytest.raises(ValueError):
        mi.gamma_approx(0.1, 1e5, 1.0, 0.05, 5, delta=0.0)


# ----------------------------------------------------------------- §9.5 eps_max
@pytest.mark.parametrize(
    "alpha,pure,approx",
    [
        (0.1, 0.0037170347, 0.0001501472),
        (0.5, 0.0501667947, 0.0021671257),
        (1.0, 0.1053156474, 0.0045583979),
        (1.5, 0.1508591602, 0.0065330367),
    ],
)
def test_eps_max_examples(alpha, pure, approx):
    assert mi.eps_max(1e6, alpha, 1e-6, 10, 1e5) == pytest.approx(pure, abs=1e-9)
    assert mi.eps_max(1e6, alpha, 1e-6, 10, 1e5, kind="approx") == pytest.approx(approx, abs=1e-9)


def test_eps_max_small_examples_and_nan():
    assert mi.eps_max(27254, 1.0, 0.05, 2, 1521) == pytest.approx(0.0635663984, abs=1e-9)
    assert mi.eps_max(27254, 0.5, 0.05, 2, 27254) == pytest.approx(0.1576966766, abs=1e-9)
    assert math.isnan(mi.eps_max(27254, 0.2, 0.05, 2, 1521))
    assert math.isnan(mi.eps_max(1e6, 0.5, 1e-6, 10, 1000))


@settings(max_examples=60, deadline=None)
@given(
    n=st.floats(1e3, 1e7),
    alpha=st.floats(0.05, 2.0),
    beta=st.floats(1e-8, 1.0),
    g=st.integers(1, 200),
    frac=st.floats(0.001, 1.0),
    kind=st.sampled_from(["pure", "approx"]),
)
def test_eps_max_inverts_gamma(n, alpha, beta, g, frac, kind):
    target = frac * n
    e = mi.eps_max(n, alpha, beta, g, target, kind=kind)
    if math.isnan(e):
        return
    f = mi.gamma_pure if kind == "pure" else mi.gamma_approx
    if kind == "approx" and 1.0001 * e > 0.5:
        return
    assert f(e, n, alpha, beta, g).gamma == pytest.approx(target, rel=1e-9)
    assert f(1.0001 * e, n, alpha, beta, g).gamma > target


# ----------------------------------------------------------------- §9.6 alpha_min
@pytest.mark.parametrize(
    "eps,m,kind,expected",
    [
        (0.001, 1521, "pure", 0.487498),
        (0.01, 1521, "pure", 0.487498),
        (0.05, 1521, "pure", 0.846048),
        (0.1, 1521, "pure", math.nan),
        (0.001, 27254, "pure", 0.140801),
        (0.01, 27254, "pure", 0.140801),
        (0.05, 27254, "pure", 0.199869),
        (0.1, 27254, "pure", 0.336933),
        (0.001, 27254, "approx", 0.140801),
        (0.01, 27254, "approx", 0.710381),
    ],
)
def test_alpha_min_examples(eps, m, kind, expected):
    got = mi.alpha_min(eps, 27254, 0.05, 2, m, kind=kind)
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(expected, abs=1e-6)


@settings(max_examples=40, deadline=None)
@given(eps=st.floats(1e-4, 0.5), m=st.floats(100, 1e6), n=st.floats(1e3, 1e7))
def test_alpha_min_is_smallest(eps, m, n):
    a = mi.alpha_min(eps, n, 0.05, 3, m)
    if math.isnan(a):
        assert mi.gamma_pure(eps, n, 2.0, 0.05, 3).gamma > m
        return
    assert mi.gamma_pure(eps, n, a, 0.05, 3).gamma <= m * (1 + 1e-12)
    if a > 1e-6:
        assert mi.gamma_pure(eps, n, a - 1e-6, 0.05, 3).gamma > m


# ----------------------------------------------------------------- gamma_curve
def test_gamma_curve_matches_scalar_and_nan():
    eps = np.array([-1.0, 0.0, 1e-4, 0.01, 0.3, 0.6, 2.0, np.inf, np.nan])
    pure = mi.gamma_curve(eps, 1e6, 0.5, 1e-6, 10)
    approx = mi.gamma_curve(eps, 1e6, 0.5, 1e-6, 10, kind="approx")
    for e, p, a in zip(eps, pure, approx):
        if np.isfinite(e) and e > 0:
            assert p == pytest.approx(mi.gamma_pure(e, 1e6, 0.5, 1e-6, 10).gamma, rel=1e-12)
        else:
            assert np.isnan(p)
        if np.isfinite(e) and 0 < e <= 0.5:
            assert a == pytest.approx(mi.gamma_approx(e, 1e6, 0.5, 1e-6, 10).gamma, rel=1e-12)
        else:
            assert np.isnan(a)


@settings(max_examples=40, deadline=None)
@given(a=st.floats(0.01, 2.0), b=st.floats(0.01, 2.0), z=st.floats(0, 1e4))
def test_gamma_nonincreasing_in_alpha(a, b, z):
    lo, hi = min(a, b), max(a, b)
    assert mi.gamma_thm3(z, lo, 0.05, 4).gamma >= mi.gamma_thm3(z, hi, 0.05, 4).gamma


# ----------------------------------------------------------------- §9.7-8 Lemma 1, Section 7
def test_lemma1_examples():
    assert mi.lemma1_min_size(0.25, 1e-4) == pytest.approx(703.61655, abs=ABS)
    assert mi.lemma1_min_size(0.9, 0.01) == pytest.approx(49.72916, abs=ABS)
    with pytest.raises(ValueError, match="alpha"):
        mi.lemma1_min_size(1.0, 0.01)


@pytest.mark.parametrize(
    "args,single,count,thm3",
    [
        ((5e6, 0.5, 0.05, 100), 49318.2399, 2520793.1350, 1431.3062),
        ((27254, 1.0, 0.05, 2), 1268.3010, 74430.3216, 258.0134),
        ((1e6, 0.5, 0.01, 10), 21026.0871, 1074869.8043, 1431.3062),
        ((20000, 0.2, 0.05, 4), 5920.8287, 322553.1874, 12244.3106),
    ],
)
def test_section7_examples(args, single, count, thm3):
    assert mi.gamma_single_column(*args) == pytest.approx(single, abs=ABS)
    assert mi.gamma_count(*args) == pytest.approx(count, abs=ABS)
    assert mi.gamma_thm3(0, *args[1:]).gamma == pytest.approx(thm3, abs=ABS)


def test_w1_bound_single_column():
    assert mi.w1_bound_single_column(20000, 0.05, 4, 20000) == pytest.approx(0.0592083, abs=1e-6)
    with pytest.raises(ValueError, match="group_size"):
        mi.w1_bound_single_column(20000, 0.05, 4, 0)


# ----------------------------------------------------------------- validation (spec §5.1)
@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: mi.max_info_pure(0, 100, 0.1), "epsilon"),
        (lambda: mi.max_info_pure(math.inf, 100, 0.1), "epsilon"),
        (lambda: mi.max_info_pure(True, 100, 0.1), "epsilon"),
        (lambda: mi.max_info_pure(0.1, 1, 0.1), "n"),
        (lambda: mi.max_info_pure(0.1, 100, 0), "eta"),
        (lambda: mi.max_info_pure(0.1, 100, 1.5), "eta"),
        (lambda: mi.max_info_approx(0.7, 100, 0.1), "epsilon"),
        (lambda: mi.max_info_approx(0.1, 0, 0.1), "m"),
        (lambda: mi.max_info_approx_delta_max(0.51, 100, 0.1), "epsilon"),
        (lambda: mi.gamma_thm3(-1, 0.5, 0.1, 2), "zeta"),
        (lambda: mi.gamma_thm3(math.nan, 0.5, 0.1, 2), "zeta"),
        (lambda: mi.gamma_thm3(1, 0, 0.1, 2), "alpha"),
        (lambda: mi.gamma_thm3(1, 2.01, 0.1, 2), "alpha"),
        (lambda: mi.gamma_thm3(1, 0.5, 1.5, 2), "beta"),
        (lambda: mi.gamma_thm3(1, 0.5, 0.1, 0), "n_groups"),
        (lambda: mi.gamma_thm3(1, 0.5, 0.1, 2.5), "n_groups"),
        (lambda: mi.gamma_thm3(1, 0.5, 0.1, True), "n_groups"),
        (lambda: mi.eps_max(1000, 0.5, 0.1, 2, 2000), "gamma"),
        (lambda: mi.eps_max(1000, 0.5, 0.1, 2, 0), "gamma"),
        (lambda: mi.eps_max(1000, 0.5, 0.1, 2, 100, kind="other"), "kind"),
        (lambda: mi.alpha_min(0.6, 1000, 0.1, 2, 100, kind="approx"), "epsilon"),
        (lambda: mi.alpha_min(0.1, 1000, 0.1, 2, 0), "m"),
        (lambda: mi.delta_max_approx(0.6, 1000, 0.1, 2), "epsilon"),
        (lambda: mi.gamma_count(1000, 0.5, 0, 2), "beta_prime"),
        (lambda: mi.lemma1_min_size(0.5, 0), "mu"),
    ],
)
def test_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_gamma_thm3_accepts_numpy_and_integral_float_groups():
    a = mi.gamma_thm3(np.float64(1.0), 0.5, 0.1, np.int64(3)).gamma
    b = mi.gamma_thm3(1.0, 0.5, 0.1, 3.0).gamma
    assert a == b


# ----------------------------------------------------------------- thesis functions (epsilon calculator)
def test_description_length_example():
    assert mi.maxinfo_description_length(2**20, beta=0.05) == pytest.approx(24.32193, rel=1e-6)


def test_maxinfo_pure_dp_formula():
    r = mi.maxinfo_pure_dp(epsilon=0.1, n=1000, beta=0.05)
    log2e = 1 / math.log(2)
    assert r.general_bits == pytest.approx(log2e * 100, rel=1e-12)
    assert r.product_bits == pytest.approx(log2e * (5 + 0.1 * math.sqrt(1000 * math.log(40) / 2)), rel=1e-12)


def test_pvalue_correction():
    assert mi.pvalue_correction(0.05, beta=0.01, m_bits=2) == pytest.approx(0.01)
    assert mi.pvalue_correction(0.05, beta=0.06, m_bits=2) == 0.0


def test_pvalue_correction_pure_dp_vs_brute_force():
    alpha, eps, n = 0.05, 0.05, 2000
    r = mi.pvalue_correction_pure_dp(alpha, epsilon=eps, n=n)
    betas = np.geomspace(1e-12, alpha * (1 - 1e-9), 200_001)
    m = mi.LOG2E * (eps**2 * n / 2 + eps * np.sqrt(n * np.log(2 / betas) / 2))
    brute = np.max((alpha - betas) / 2.0**m)
    assert r.gamma >= brute * (1 - 1e-9)
    assert r.gamma == pytest.approx(brute, rel=1e-6)
    assert r.gamma == pytest.approx(mi.pvalue_correction(alpha, beta=r.beta_star, m_bits=r.m_bits), rel=1e-12)
    assert 0 < r.beta_star < alpha


def test_mutual_info_and_russo_zou():
    # Eq. (4.13) and Thm 4.6.4 written out by hand.
    assert mi.pvalue_correction_mutual_info(0.05, t_bits=1.0) == pytest.approx(0.025 * 2 ** (-40 * 1.54))
    assert mi.pvalue_correction_russo_zou(0.05, t_bits=1.0) == pytest.approx(0.5 * math.exp(-1 / 0.0025))
    assert mi.pvalue_correction_russo_zou(0.05, t_bits=0.0) == pytest.approx(0.025)
    # The thesis: γ(α) beats γ_RZ for α ≤ 0.05 once t ≥ 0.05 ... (checked at t = 1).
    assert mi.pvalue_correction_mutual_info(0.05, t_bits=1.0) > mi.pvalue_correction_russo_zou(0.05, t_bits=1.0)


def test_max_epsilon_for_correction_roundtrip():
    r = mi.pvalue_correction_pure_dp(0.05, epsilon=0.1, n=1000)
    e = mi.max_epsilon_for_correction(0.05, gamma=r.gamma, n=1000)
    assert e == pytest.approx(0.1, rel=1e-6)
    with pytest.raises(ValueError, match="gamma"):
        mi.max_epsilon_for_correction(0.05, gamma=0.06, n=1000)


# ----------------------------------------------------------------- seed Table 1 (spec §3.6 E1)
@pytest.mark.parametrize(
    "alpha,eps",
    [(0.1, 0.003), (0.2, 0.01), (0.3, 0.02), (0.4, 0.025), (0.8, 0.056), (0.9, 0.065), (1.3, 0.09), (1.4, 0.1)],
)
def test_table1_rows_satisfy_theorem7(alpha, eps):
    # Spec E1: every row of the seed's Table 1 (n = 5e6, β = e^-30, |𝒞| = 100, γ = 0.05n) satisfies the
    # corrected Eq. (12); equivalently the printed ε is at most the largest certified ε.
    n, beta, g = 5e6, math.exp(-30), 100
    assert mi.gamma_pure(eps, n, alpha, beta, g).gamma <= 0.05 * n
    assert eps <= mi.eps_max(n, alpha, beta, g, 0.05 * n)


# ----------------------------------------------------------------- issue 13: formulas against the seed, inputs varied
@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.2])
@pytest.mark.parametrize("t", [0.0, 1e-3, 0.05, 0.3])
def test_pvalue_corrections_written_from_the_thesis(alpha, t):
    # [T] eq. 4.13 (Cor. 4.6.3): γ = (α/2)·2^{−(2/α)(t + 0.54)}; Thm 4.6.4 (Russo–Zou): min(α/2, ½e^{−t·ln2·log2(e)/α²})
    # relative tolerance only: these values are far below pytest.approx's default absolute floor
    mi_ref = alpha / 2 * 2 ** (-(2 / alpha) * (t + 0.54))
    rz_ref = min(alpha / 2, 0.5 * math.exp(-t / alpha**2))  # 2^{−log2(e)·x} = e^{−x}
    assert mi.pvalue_correction_mutual_info(alpha, t_bits=t) == pytest.approx(mi_ref, rel=1e-12, abs=0)
    assert mi.pvalue_correction_russo_zou(alpha, t_bits=t) == pytest.approx(rz_ref, rel=1e-12, abs=0)


@pytest.mark.parametrize("eps,m,eta", [(0.1, 1e4, 0.01), (0.5, 37.0, 1.0), (0.003, 2e6, 1e-5)])
def test_max_info_approx_delta_bound_is_corollary_1(eps, m, eta):
    # seed 000 Corollary 1: δ ≤ ε²η²/(120m)² (hand-expanded: ε²η²/(14400 m²))
    assert mi.max_info_approx_delta_max(eps, m, eta) == pytest.approx(eps**2 * eta**2 / (14400 * m * m), rel=1e-12,
                                                                      abs=0)
    g, beta = 7, 0.02
    assert mi.delta_max_approx(eps, m + 2, beta, g) == pytest.approx(eps**2 * beta**2 / (14400 * (m + 2)**2 * g * g),
                                                                     rel=1e-12, abs=0)
