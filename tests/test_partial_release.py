"""Oracles for engine/partial_release.py (the ppd split's county-release half)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from engine import partial_release as pr


def test_p18_guarantees_spec_numbers():
    # spec partially_private.md P18: ε = 1, Δ = 2, κ = 2
    g = {m: pr.method_guarantee(m, epsilon=1, sensitivity=2, kappa=2) for m in pr.METHODS}
    assert g == pytest.approx({"pp": 2.0, "wem_naive": 0.5, "wem_congenial": 1.0, "wem_prior": 1.0})
    assert pr.method_guarantee("pp", epsilon=1, sensitivity=2, pp_sensitivity=4) == pytest.approx(1.0)


@pytest.mark.parametrize("eps, sens, kappa", [(0.3, 1.0, 1.0), (2.0, 5.0, 3.0), (1.5, 0.5, 2.0)])
def test_guarantees_follow_the_readout_neighbour(eps, sens, kappa):
    # spec §2.7: ‖ΔX‖₁ ≤ 4 and ‖ΔX‖₂ ≤ 2 → PP 4ε/Δ_PP, WEM-naive 2ε/(κΔ), WEM-congenial/prior 4ε/(κΔ)
    assert pr.method_guarantee("pp", epsilon=eps, sensitivity=sens, kappa=kappa) == pytest.approx(4 * eps / sens)
    assert pr.method_guarantee("wem_naive", epsilon=eps, sensitivity=sens, kappa=kappa) == pytest.approx(
        2 * eps / (kappa * sens))
    for m in ("wem_congenial", "wem_prior"):
        assert pr.method_guarantee(m, epsilon=eps, sensitivity=sens, kappa=kappa) == pytest.approx(
            4 * eps / (kappa * sens))


@pytest.mark.parametrize("y, a", [([4, 0, 1], [2, 0.5, 1.5]), ([10, 3, 0, 7], [0.2, 5.0, 1.0, 30.0]),
                                  ([1, 1], [1e-3, 1e3])])
def test_dm_logpmf_against_scipy(y, a):
    s = int(np.sum(y))
    assert pr.dm_logpmf(y, s, a) == pytest.approx(stats.dirichlet_multinomial.logpmf(y, a, s), rel=1e-10)
