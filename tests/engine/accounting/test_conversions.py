"""dpdash.accounting.conversions: ε/ρ/RDP conversions against the papers' closed forms and dp-accounting's RDP
accountant.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scipy import special

from dpdash.accounting import conversions as C
from tests import opendp_oracle as oracle


@pytest.mark.parametrize("sigma", [0.8, 2.0, 10.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-10])
def test_rdp_to_dp_matches_dp_accounting(sigma, delta):
    # the Gaussian mechanism's RDP curve α/(2σ²) (Mironov 2017), converted by dp-accounting's own accountant
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant as rdp
    acct = rdp.RdpAccountant(list(C.RDP_ORDERS))
    acct.compose(dp_accounting.GaussianDpEvent(sigma))
    ref = acct.get_epsilon(delta)
    ours = C.rdp_to_dp(C.RDP_ORDERS / (2 * sigma**2), delta=delta).epsilon
    assert ours == pytest.approx(ref, rel=1e-9)


@given(rho=st.floats(1e-6, 50), ld=st.floats(math.log(1e-300), math.log(0.5)))
def test_zcdp_to_dp_printed_forms(rho, ld):
    d = math.exp(ld)
    standard = rho + 2 * math.sqrt(rho * math.log(1 / d))                                # Bun–Steinke Prop. 1.3
    bs = rho + 2 * math.sqrt(rho * max(0.0, math.log(math.sqrt(math.pi * rho) / d)))     # [T] Thm 2.2.4 (clamped)
    cks = oracle.cdp_epsilon(rho, d)                        # OpenDP's CKS Prop. 12 / Cor. 13, an independent code
    assert C.zcdp_to_dp(rho, d, method="standard") == pytest.approx(standard, rel=1e-12)
    assert C.zcdp_to_dp(rho, d, method="bun_steinke") == pytest.approx(bs, rel=1e-12)
    assert C.zcdp_to_dp(rho, d, method="cks") == pytest.approx(cks, rel=1e-9, abs=1e-12)
    assert C.zcdp_to_dp(rho, d) == pytest.approx(min(standard, bs, cks), rel=1e-9, abs=1e-12)


def test_opendp_literals():
    # OpenDP's own test values: rust/src/combinators/measure_cast/zCDP_to_approxDP/test.rs (cdp_epsilon) and the
    # δ of ρ = 0.05 at ε = 0.25 quoted in issue 23
    assert C.zcdp_to_dp(0.03125, 1e-3, method="cks") == pytest.approx(0.6880024554878086, rel=1e-14)
    assert C.zcdp_to_dp(0.03125, 1e-3) == pytest.approx(0.6880024554878086, rel=1e-14)
    assert C.zcdp_delta(0.05, 0.25) == pytest.approx(0.0817727531, rel=1e-9)
    assert C.zcdp_delta(0.03125, 0.0) == pytest.approx(0.1508457845622862, rel=1e-12)   # OpenDP test_meas.py


def test_spec_examples_amended():
    # spec §9, amended 2026-11-27: standard 2.245966; bun_steinke 2.191315; cks = best 1.914239; ρ(2, 1e-5)
    assert C.zcdp_to_dp(0.1, 1e-5, method="standard") == pytest.approx(2.245966, rel=1e-6)
    assert C.zcdp_to_dp(0.1, 1e-5, method="bun_steinke") == pytest.approx(2.191315, rel=1e-6)
    assert C.zcdp_to_dp(0.1, 1e-5) == pytest.approx(1.914239, rel=1e-6)
    assert C.zcdp_rho_for_epsilon(2.0, 1e-5) == pytest.approx(0.1082564, rel=1e-6)


def test_gaussian_calibration_under_zcdp_matches_dp_accounting():
    # dp-accounting's RDP accountant test value: a Gaussian with σ = 4.530877117 is (1, 1e-6)-DP; the tight
    # conversion (continuous α) needs no more noise than the order grid
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant as rdp
    sigma = 1.0 / math.sqrt(2.0 * C.zcdp_rho_for_epsilon(1.0, 1e-6))
    assert sigma == pytest.approx(4.530877117, rel=1e-8)
    acct = rdp.RdpAccountant(list(C.RDP_ORDERS))
    acct.compose(dp_accounting.GaussianDpEvent(sigma))
    assert acct.get_epsilon(1e-6) >= 1.0 - 1e-9


@given(rho=st.floats(1e-6, 100), eps=st.floats(0.0, 60))
def test_zcdp_delta_matches_opendp(rho, eps):
    ours, theirs = C.zcdp_delta(rho, eps, method="cks"), oracle.cdp_delta(rho, eps)
    if 1.02 * rho - eps + math.log(1 / 101) < 0:      # the optimal α is above 1.01, where OpenDP's search starts
        assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-300)
    else:                                             # OpenDP stops at α = 1.01; any α > 1 is valid, ours is lower
        assert ours <= theirs * (1 + 1e-12)


@given(rho=st.floats(1e-5, 10), ld=st.floats(math.log(1e-300), math.log(0.5)))
def test_best_is_valid_and_each_direction_inverts_the_other(rho, ld):
    d = math.exp(ld)
    best = C.zcdp_to_dp(rho, d)
    for m in ("standard", "bun_steinke", "cks"):
        assert best <= C.zcdp_to_dp(rho, d, method=m)
    # never below the exact Gaussian with this ρ (σ = 1/√(2ρ), Δ = 1): that mechanism is ρ-zCDP, so the exact
    # δ it has at the reported ε must not exceed δ (Balle–Wang 2018 Thm 8, evaluated with scipy here)
    sigma = 1.0 / math.sqrt(2.0 * rho)
    a, b = 0.5 / sigma - best * sigma, -0.5 / sigma - best * sigma
    exact_log_delta = special.log_ndtr(a) + math.log(max(1e-300, -math.expm1(best + special.log_ndtr(b)
                                                                            - special.log_ndtr(a))))
    assert exact_log_delta <= ld + 1e-7
    for m in ("standard", "bun_steinke", "cks", "best"):
        e = C.zcdp_to_dp(rho, d, method=m)
        back = math.log(C.zcdp_delta(rho, e, method=m))
        if e > rho * (1 + 1e-9):
            assert back == pytest.approx(ld, rel=1e-7, abs=1e-9)
        else:       # on a clamped plateau (ε = ρ) the inverse is the smallest δ with that ε
            assert back <= ld + 1e-9


@given(eps=st.floats(1e-6, 100))
def test_pure_zcdp_round_trip(eps):
    assert C.pure_to_zcdp(eps) == pytest.approx(eps * eps / 2, rel=1e-15)
    assert C.pure_epsilon_for_rho(C.pure_to_zcdp(eps)) == pytest.approx(eps, rel=1e-14)


@given(sigma=st.floats(1e-3, 1e3), sens=st.floats(1e-3, 1e3))
def test_gaussian_rho_and_sigma_are_inverse(sigma, sens):
    rho = C.gaussian_rho(sigma, sensitivity=sens)
    assert rho == pytest.approx(sens**2 / (2 * sigma**2), rel=1e-13)   # [T] Thm 2.2.2
    assert C.sigma_for_rho(rho, sensitivity=sens) == pytest.approx(sigma, rel=1e-13)


@given(eps=st.floats(0.01, 20), ld=st.floats(math.log(1e-12), math.log(0.1)))
def test_rho_for_epsilon_inverts_zcdp_to_dp(eps, ld):
    d = math.exp(ld)
    rho = C.zcdp_rho_for_epsilon(eps, d)
    assert C.zcdp_to_dp(rho, d) == pytest.approx(eps, rel=1e-9)


def test_half_square_overflows_to_inf_not_an_error():
    assert C.half_square(1e200, 1e-200) == math.inf
    # on arrays the loss is rounded up by two float steps (issue 36 item 6): never below, never far above
    got = C.half_square(np.array([1.0, 2.0, 1.0]), np.array([2.0, 2.0, 3.0]))
    assert np.all(got >= [0.125, 0.5, 1 / 18]) and np.all(got <= np.array([0.125, 0.5, 1 / 18]) * (1 + 1e-15))


@pytest.mark.parametrize("rho", [0.05, 0.5, 3.0])
@pytest.mark.parametrize("delta", [1e-6, 1e-10])
def test_zcdp_to_dp_by_rdp_matches_dp_accounting(rho, delta):
    # ρ-zCDP is the RDP curve ε(α) = ρα; a Gaussian with σ² = 1/(2ρ) has exactly that curve in dp-accounting
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant as rdp
    acct = rdp.RdpAccountant(list(C.RDP_ORDERS))
    acct.compose(dp_accounting.GaussianDpEvent(math.sqrt(1 / (2 * rho))))
    assert C.zcdp_to_dp(rho, delta, method="rdp") == pytest.approx(acct.get_epsilon(delta), rel=1e-9)


def test_conversion_arguments_are_checked():
    with pytest.raises(ValueError, match="method must be best, standard, bun_steinke, cks or rdp"):
        C.zcdp_to_dp(0.5, 1e-6, method="tight")
    with pytest.raises(ValueError, match="same length"):
        C.rdp_to_dp([0.1, 0.2], delta=1e-6, orders=[2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="method must be best, standard, bun_steinke or cks"):
        C.zcdp_delta(0.5, 1.0, method="rdp")
    with pytest.raises(ValueError, match="finite"):
        C.zcdp_delta(0.5, math.nan)
    with pytest.raises(ValueError, match="method must be one of"):
        C.conversion_note("tight")
    assert "Canonne" in C.conversion_note() and "Canonne" in C.conversion_note("cks")
    assert C.zcdp_delta(0.5, 0.1, method="standard") == 1.0 and C.zcdp_delta(0.5, -1.0) == 1.0
    # δ = 0 has no zCDP budget (ρ would be 0): refused in words, for the budget and for the conversion
    for call in (lambda: C.zcdp_rho_for_epsilon(1.0, 0.0), lambda: C.zcdp_to_dp(0.5, 0.0),
                 lambda: C.rdp_to_dp([0.1, 0.2], delta=0.0, orders=[2.0, 3.0])):
        with pytest.raises(ValueError, match="delta"):
            call()


# --------------------------------------------------------------------------- outward rounding (issue 36 item 6)
# The product reports the nearest float on the safe side: never below the exact rational value of a loss, never
# above that of a budget, and no further than one float step from it (mutation testing found these untested).
from fractions import Fraction  # noqa: E402


def _smallest_float_at_least(x: float, exact: Fraction) -> bool:
    return Fraction(x) >= exact and Fraction(math.nextafter(x, -math.inf)) < exact


def _largest_float_at_most(x: float, exact: Fraction) -> bool:
    return Fraction(x) <= exact and Fraction(math.nextafter(x, math.inf)) > exact


@pytest.mark.parametrize("a,b", [(1.0, 4.0), (1.0, 3.0), (7.0, 0.3), (0.002, 1e-5), (1e4, 3.7), (2.0, 1.0)])
def test_div_up_is_the_smallest_float_at_or_above_the_quotient(a, b):
    assert _smallest_float_at_least(C.div_up(a, b), Fraction(a) / Fraction(b))


@pytest.mark.parametrize("a,b", [(1.0, 2.0), (1.0, 3.0), (0.7, 0.3), (7.0, 1.1), (1e4, 0.002), (0.1, 1.0)])
def test_half_square_is_the_smallest_float_at_or_above(a, b):
    assert _smallest_float_at_least(C.half_square(a, b), Fraction(a) ** 2 / (2 * Fraction(b) ** 2))
    assert _smallest_float_at_least(C.gaussian_rho(b, sensitivity=a), Fraction(a) ** 2 / (2 * Fraction(b) ** 2))


def test_half_square_underflow_is_the_smallest_positive_float_and_arrays_stay_quiet():
    assert C.half_square(1e-200, 1.0) == 5e-324 and C.half_square(1.0, 1e200) == 5e-324
    assert C.half_square(0.0, 1.0) == 0.0
    # overflow and 0/0 on arrays give ∞ and NaN without a warning (warnings from dpdash are errors here)
    got = C.half_square(np.array([1e200, 0.0]), np.array([1e-200, 0.0]))
    assert got[0] == math.inf and math.isnan(got[1])


@pytest.mark.parametrize("rho", [0.5, 0.125, 0.3, 1e-7, 3.3])
@pytest.mark.parametrize("sens", [1.0, 0.002, 7.0])
def test_budget_side_roundings_are_one_step_at_most(rho, sens):
    # σ of a ρ budget: the smallest float whose exact ρ is ≤ the budget
    s = C.sigma_for_rho(rho, sensitivity=sens)
    assert Fraction(sens) ** 2 <= 2 * Fraction(rho) * Fraction(s) ** 2
    assert Fraction(sens) ** 2 > 2 * Fraction(rho) * Fraction(math.nextafter(s, 0.0)) ** 2
    # the pure ε of a ρ share: the largest float whose ε²/2 is ≤ ρ
    e = C.pure_epsilon_for_rho(rho)
    assert Fraction(e) ** 2 <= 2 * Fraction(rho) < Fraction(math.nextafter(e, math.inf)) ** 2
