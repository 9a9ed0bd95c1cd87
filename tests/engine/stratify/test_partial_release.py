"""Oracles for dpdash/stratify/partial_release.py (the ppd split's county-release half)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpdash.stratify import partial_release as pr


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


@pytest.mark.parametrize("public,lo", [
    (pr.PublicInfo(state_total=False, previous_month_prior=False), 0),
    (pr.PublicInfo(state_total=False, nonnegative=False, previous_month_prior=False), -60),
    (pr.PublicInfo(state_total=False, cases_ge_deaths=False, previous_month_prior=False), 0),
])
def test_wem_gibbs_without_state_total_matches_the_enumerated_target(public, lo):
    # One county, no state total: the target ∝ exp(−a‖(c, d) − (x_c, x_d)‖₂) on the allowed integers, a = ε/(κΔ) = 1,
    # enumerated on a grid; a long chain (each call one sweep from the last state) must match its means.
    xc, xd = 3, 1
    c, d = np.meshgrid(np.arange(lo, 80), np.arange(lo, 80), indexing="ij")
    ok = np.ones_like(c, dtype=bool)
    if public.nonnegative:
        ok &= (c >= 0) & (d >= 0)
    if public.cases_ge_deaths:
        ok &= c >= d
    w = np.exp(-np.hypot(c - xc, d - xd)) * ok
    w /= w.sum()
    rng = np.random.default_rng(2026)
    state, draws = None, []
    for _ in range(4000):
        r = pr.wem_gibbs([xc], [xd], 0, epsilon=4, sensitivity=2, kappa=2, base="congenial", sweeps=1,
                                      public=public, init=state, rng=rng)
        state = (r.cases, r.deaths)
        draws.append((r.cases[0], r.deaths[0]))
    draws = np.array(draws[200:], dtype=float)
    assert draws[:, 0].mean() == pytest.approx(float((w * c).sum()), abs=0.2)
    assert draws[:, 1].mean() == pytest.approx(float((w * d).sum()), abs=0.2)
    if public.cases_ge_deaths:
        assert np.all(draws[:, 0] >= draws[:, 1])
    if public.nonnegative:
        assert draws.min() >= 0


# ----------------------------------------------------------------------------- argument checks, named
_PANEL = None


def _panel():
    global _PANEL
    if _PANEL is None:
        _PANEL = pr.synth_pa_like(rng=1, J=5, T=3)
    return _PANEL


@pytest.mark.parametrize("call, message", [
    (lambda: pr.round_stage2([1.5, 2.5], [0.5], 4), "same length"),
    (lambda: pr.dm_logpmf([1, 2], 3, [1.0]), "same length"),
    (lambda: pr.dm_logpmf([1, 2], 3, [1.0, 0.0]), "must be > 0"),
    (lambda: pr.dm_logpmf([1, -2], -1, [1.0, 1.0]), "non-negative integers"),
    (lambda: pr.wem_gibbs([1.0], [0.0], 1, epsilon=1.0, sensitivity=2.0, base="uniform"), "base must be"),
    (lambda: pr.wem_gibbs([], [], 0, epsilon=1.0, sensitivity=2.0, base="naive"), "same non-zero length"),
    (lambda: pr.wem_gibbs([1.0], [0.0], 1, epsilon=1.0, sensitivity=2.0, base="naive", sweeps=0),
     "sweeps must be"),
    (lambda: pr.wem_gibbs([1.0, 2.0], [0.0, 1.0], 3, epsilon=1.0, sensitivity=2.0, base="prior", alpha=1.0,
                               prev=[1.0]), "prev must have length"),
    (lambda: pr.posterior_exact_counts([1], 1, [1.0], epsilon=1.0, sensitivity=1.0), "same length"),
    (lambda: pr.posterior_exact_counts([1, 2], 3, [1.0, 0.0], epsilon=1.0, sensitivity=1.0), "prior_alpha must be > 0"),
    (lambda: pr.posterior_exact_counts([1, 2], 2.5, [1.0, 1.0], epsilon=1.0, sensitivity=1.0), "non-negative integer"),
    (lambda: pr.run_partially_private_release(_panel(), 1, epsilons=[1.0], methods=["pp", "magic"]),
     "method must be one of"),
    (lambda: pr.run_partially_private_release(_panel(), 1, epsilons=[1.0], methods=["pp"], reps=0),
     "reps must be"),
    (lambda: pr.run_release_units(_panel(), [(1, 1.0, "magic", 1.0, 1)]), "method must be one of"),
    (lambda: pr.run_release_units(_panel(), [(1, 1.0, "wem_prior", 0.0, 1)]), "alpha must be > 0"),
    (lambda: pr.run_release_units(_panel(), [(1, 1.0, "pp", 1.0, 0)]), "reps must be"),
    (lambda: pr.contraction_frequencies(_panel(), epsilons=[1.0], months=[]), "at least one month"),
    (lambda: pr.contraction_frequencies(_panel(), epsilons=[1.0], reps=0), "reps must be"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_release_functions_refuse_bad_arguments_by_name(call, message):
    """Each entry point names what is wrong instead of returning numbers from an impossible input."""
    with pytest.raises(ValueError, match=message):
        call()
