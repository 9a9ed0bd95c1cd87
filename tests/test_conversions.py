"""dpdash.conversions: ε/ρ/RDP conversions against the papers' closed forms and dp-accounting's RDP accountant."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpdash import conversions as C


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
    assert C.zcdp_to_dp(rho, d, method="standard") == pytest.approx(standard, rel=1e-12)
    assert C.zcdp_to_dp(rho, d, method="bun_steinke") == pytest.approx(bs, rel=1e-12)
    assert C.zcdp_to_dp(rho, d) == pytest.approx(min(standard, bs), rel=1e-12)


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
    assert np.array_equal(C.half_square(np.array([1.0, 2.0]), 2.0), [0.125, 0.5])


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
    with pytest.raises(ValueError, match="method must be best, standard, bun_steinke or rdp"):
        C.zcdp_to_dp(0.5, 1e-6, method="tight")
    with pytest.raises(ValueError, match="same length"):
        C.rdp_to_dp([0.1, 0.2], delta=1e-6, orders=[2.0, 3.0, 4.0])
