"""Oracles for dpdash/accounting/public_info.py (the ppd split's theory half): values from outside the code under
test.
"""

from __future__ import annotations

import math

import mpmath as mp
import pytest

from dpdash.accounting import public_info as pi
from dpdash.common.validation import ValidationError


@pytest.mark.parametrize("eps, sens", [(0.1, 1.0), (1.0, 2.0), (3.0, 0.5)])
def test_discrete_laplace_against_mpmath_sums(eps, sens):
    # pmf ∝ r^|k| with r = e^{−ε/Δ} (S1 §5, L446–452): normalised, geometric ratio r, variance Σ k²·pmf
    mp.mp.dps = 40
    r = mp.exp(-mp.mpf(eps) / sens)
    z = 1 + 2 * mp.nsum(lambda k: r ** k, [1, mp.inf])                  # Σ_k r^|k|
    var = 2 * mp.nsum(lambda k: k ** 2 * r ** k, [1, mp.inf]) / z
    ks = list(range(-6, 7))
    got = pi.dlap_pmf(ks, epsilon=eps, sensitivity=sens)
    for k, g in zip(ks, got):
        assert g == pytest.approx(float(r ** abs(k) / z), rel=1e-12)
    assert pi.dlap_var(epsilon=eps, sensitivity=sens) == pytest.approx(float(var), rel=1e-12)
    assert pi.dlap_ratio(eps, sens) == pytest.approx(float(r), rel=1e-14)


@pytest.mark.parametrize("eps, kappa", [(0.5, 1.0), (1.0, 2.0), (4.0, 3.0)])
def test_trunc_em_limit_matches_spec_formula_and_large_n(eps, kappa):
    # spec §2.4: the realised ε of Example 1 tends to ε/κ + log(2 − e^{−ε/κ}); the finite-n value (a separate
    # numerical computation) approaches it
    want = eps / kappa + math.log(2 - math.exp(-eps / kappa))
    assert pi.realized_epsilon_trunc_em_limit(eps, kappa=kappa) == pytest.approx(want, rel=1e-14)
    assert pi.realized_epsilon_trunc_em(20_000, epsilon=eps, kappa=kappa) == pytest.approx(want, rel=2e-2)


def test_kappa_domain_is_narrower_and_named():
    assert pi.check_kappa(1) == 1.0
    for bad in (0.99, math.inf, float("nan"), "2"):
        with pytest.raises(ValidationError, match="kappa"):
            pi.check_kappa(bad)
