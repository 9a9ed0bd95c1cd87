"""Budget ledger: every release's recorded spends compose to the ε (δ, ρ) its page states (issue 26 item 1).

Expected totals come from the guarantee as the page states it (the synthesizer's ε, MST/AIM's ρ from the CKS
conversion recomputed in ``reference``, the guarantee table's formulas), under the composition the docstring
names: sequential sums, parallel composition (max) over disjoint strata, zCDP sums ρ.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdash.coherence import core as co
from dpdash.common import ledger
from dpdash.stratify import partial_release as pr
from dpdash.epsilon import private_tests as pt
from dpdash.stratify import core as S
from dpdash.stratify import synth as sy

from . import reference as ref
from .test_noise import NO_PUBLIC, _groups, _panel, _prepared, _table

EPS = 0.8
REL = 1e-9


# ------------------------------------------------------------------------------------------ the ledger itself
def test_record_without_listener_is_free_and_silent():
    assert not ledger.active()
    assert ledger.record("x", epsilon=1.0) is None
    with ledger.partition("g"):
        assert ledger.record("y", epsilon=1.0) is None
    with ledger.recording() as led:
        assert ledger.active()
    assert led.spends == [] and not ledger.active()


def test_composition_rules():
    with ledger.recording() as led:
        ledger.record("global", epsilon=0.5, delta=1e-7, rho=0.1)
        for g, e in [("a", 0.2), ("b", 0.4), ("c", 0.3)]:
            with ledger.partition(g):
                ledger.record("m1", epsilon=e, rho=e / 10)
                ledger.record("m2", epsilon=e, delta=1e-8)
        with ledger.partition("d"):
            ledger.record("m", epsilon=0.1, group=0)
            ledger.record("m", epsilon=0.9, group=1)
    t = led.total()
    # 0.5 + max(0.4, 0.8, 0.6, max(0.1, 0.9)) = 1.4; δ 1e-7 + 1e-8; ρ 0.1 + 0.04
    assert t.epsilon == pytest.approx(1.4) and t.delta == pytest.approx(1.1e-7) and t.rho == pytest.approx(0.14)
    with ledger.recording() as inner_outer:
        with ledger.recording() as inner:
            ledger.record("z", epsilon=1.0)
    assert inner.total().epsilon == 1.0 and inner_outer.spends == []


# ------------------------------------------------------------------------------------------ synthesizers
LEVELS = {"a": 4, "b": 3, "c": 5}


def _fit(model, seed=0, levels=LEVELS, n=300):
    df = _table(levels, n, seed=seed)
    with ledger.recording() as led:
        model.fit(df, levels, rng=seed)
    return led


def test_independent_and_full_histogram_spend_epsilon():
    led = _fit(sy.IndependentLaplace(EPS))
    assert len(led.spends) == 3 and all(s.epsilon == pytest.approx(EPS / 3, rel=REL) for s in led.spends)
    assert led.total().epsilon == pytest.approx(EPS, rel=REL)
    led = _fit(sy.FullHistogramLaplace(EPS))
    assert led.total() == pytest.approx((EPS, 0.0, 0.0), rel=REL)


def test_mwem_spends_epsilon_over_rounds():
    led = _fit(sy.MWEM(EPS, rounds=7))
    assert len(led.steps("exponential")) == 7 and len(led.steps("laplace")) == 7
    assert all(s.epsilon == pytest.approx(EPS / 14, rel=REL) for s in led.spends)
    assert led.total().epsilon == pytest.approx(EPS, rel=REL)



@pytest.mark.slow
@pytest.mark.parametrize("name", ["mst", "aim"])
def test_mst_aim_spend_rho_of_the_stated_epsilon_delta(name):
    pytest.importorskip("mbi")
    opts = {"iters": 5} if name == "mst" else {"max_iters": 5}
    led = _fit(sy.make_synthesizer(name, epsilon=EPS, delta=1e-9, **opts), n=500)
    rho = ref.cks_rho(EPS, 1e-9)
    assert led.total().rho == pytest.approx(rho, rel=1e-7)
    # the stated (ε, δ) holds for that ρ (CKS Prop. 12, recomputed)
    assert ref.cks_log_delta(led.total().rho, EPS) <= math.log(1e-9) + 1e-6
    if name == "mst":
        d = len(LEVELS)
        assert len(led.steps("gaussian")) == d + d - 1 and len(led.steps("exponential")) == d - 1
        for st in led.steps("exponential"):
            assert st.epsilon == pytest.approx(math.sqrt(8 * (rho / 3) / (d - 1)), rel=1e-7)
        assert sum(s.rho for s in led.steps("gaussian")[:d]) == pytest.approx(rho / 3, rel=1e-7)
    else:
        # AIM (McKenna et al. 2022, Alg. 1): T = 2d rounds here; σ₀ = √(T/(1.8ρ)), ε₀ = √(0.8ρ/T): each round
        # spends 0.9 of its ρ on the measurement and 0.1 on the selection, a split that σ/2, 2ε and the final
        # round keep
        T = 2 * len(LEVELS)
        assert led.steps("gaussian")[0].scale == pytest.approx(math.sqrt(T / (1.8 * rho)), rel=1e-7)
        sel, meas = led.steps("exponential"), led.steps("gaussian")[len(LEVELS):]
        assert sel[0].epsilon == pytest.approx(math.sqrt(0.8 * rho / T), rel=1e-7)
        assert len(sel) == len(meas) >= 1
        for a, b in zip(sel, meas):
            assert a.rho / b.rho == pytest.approx(1 / 9, rel=1e-7)


def test_stratified_synthesizer_composes_in_parallel():
    levels = {"g": 3, **LEVELS}
    df = _table(levels, 600, seed=1)
    with ledger.recording() as led:
        sy.StratifiedSynthesizer(lambda: sy.IndependentLaplace(EPS), ["g"]).fit(df, levels, rng=2)
    assert len({s.group for s in led.spends}) == 3
    assert led.total().epsilon == pytest.approx(EPS, rel=REL)
    assert sum(s.epsilon for s in led.spends) == pytest.approx(3 * EPS, rel=REL)  # the strata really are split


def test_synth_variants_state_the_ledger_epsilon():
    # What the page shows per variant (SynthRun.epsilon) equals the ledger's composed total.
    levels = {"g": 2, "a": 3, "b": 3}
    df = _table(levels, 400, seed=3)
    for variant in ("vanilla", "stratified"):
        with ledger.recording() as led:
            run = sy.fit_and_evaluate(df, df, domain=levels, synthesizer="independent", epsilon=EPS,
                                      variant=variant, group_cols=["g"], label_col=None, rng=4)
        assert led.total().epsilon == pytest.approx(run.epsilon, rel=REL) == pytest.approx(EPS, rel=REL)


# ------------------------------------------------------------------------------------------ coherence explorer
def test_coherence_releases():
    p = _prepared(levels=(3, 4), n=200)
    idx = np.arange(0, p.n, 2)
    with ledger.recording() as led:
        co.histogram_release(p, co.ReleaseSpec(kind="dp_histogram", epsilon=EPS), idx, np.random.default_rng(0))
    assert led.total() == pytest.approx((EPS, 0.0, 0.0), rel=REL)
    with ledger.recording() as led:
        co.histogram_release(p, co.ReleaseSpec(kind="gaussian_histogram", epsilon=EPS, delta=1e-6), idx,
                             np.random.default_rng(0))
    (st,) = led.spends
    assert (st.epsilon, st.delta) == (EPS, 1e-6)
    # the noise actually added meets (ε, δ) for L2 sensitivity √2 (Balle & Wang, recomputed), without waste
    assert ref.analytic_gaussian_delta(st.scale, EPS, math.sqrt(2)) <= 1e-6 * (1 + 1e-6)
    assert st.scale == pytest.approx(ref.analytic_gaussian_sigma(EPS, 1e-6, math.sqrt(2)), rel=1e-6)
    with ledger.recording() as led:
        co.histogram_release(p, co.ReleaseSpec(kind="dp_histogram", epsilon=math.inf), idx, np.random.default_rng(0))
    assert led.total().epsilon == math.inf


def test_coherence_clear_and_subsample_are_not_dp():
    from dpdash.common.data import census_population
    df = census_population(600, rng=1)
    for rel in (co.ReleaseSpec(kind="subsample", subsample_size=50), co.ReleaseSpec(kind="clear")):
        cfg = co.ExperimentConfig("DREM", 1, ("AGEP", "EDU"), (co.GroupSpec("All"),), rel,
                                  co.LearnerSpec("decision_tree"), rng=3)
        with ledger.recording() as led:
            co.run_trial(co.prepare(df, cfg), cfg, 0)
        assert led.total().epsilon == math.inf


# ------------------------------------------------------------------------------------------ stratified means
R_, GAMMA = 1.0, 0.1


def test_mean_releases():
    x, g = _groups(k=6, each=30)
    with ledger.recording() as led:
        S.laplace_mean(x, R=R_, gamma=GAMMA, epsilon=EPS, rng=0)
    assert led.total().epsilon == pytest.approx(EPS, rel=REL)
    with ledger.recording() as led:
        rel = S.stratified_mean_release(x, g, R=R_, gamma=GAMMA, epsilon=EPS, rng=0)
    assert len(led.spends) == 6 and led.total().epsilon == pytest.approx(rel.budget, rel=REL)
    with ledger.recording() as led:
        rel = S.split_budget_release(x, g, R=R_, gamma=GAMMA, epsilon=EPS, rng=0)
    assert led.total().epsilon == pytest.approx(EPS, rel=REL) and rel.budget == EPS
    assert led.spends[0].epsilon == pytest.approx(EPS / 2, rel=REL)


def test_coinpress_releases_sum_rho():
    x, g = _groups(k=4, each=50)
    rhos = [0.05, 0.15, 0.3]
    with ledger.recording() as led:
        rel = S.coinpress_release(x, g, low=-2, high=2, sigma=1.0, rhos=rhos, beta=0.01, rng=0)
    assert led.total().rho == pytest.approx(sum(rhos), rel=REL) == pytest.approx(rel.budget, rel=REL)
    with ledger.recording() as led:
        rel = S.strat_coinpress(x, g, low=-2, high=2, sigmas=1.0, rhos=rhos, beta=0.01, rng=0)
    assert len(led.spends) == 4 * 3
    assert led.total().rho == pytest.approx(sum(rhos), rel=REL) == pytest.approx(rel.budget, rel=REL)


@pytest.mark.parametrize("method", ["naive", "stratified", "split"])
def test_mean_experiment_spends_epsilon_per_method(method):
    x, g = _groups(k=5, each=30)
    with ledger.recording() as led:
        S.run_mean_experiment_on_data(x, g, epsilons=[EPS], R=R_, gamma=GAMMA, reps=1, rng=0, methods=(method,))
    assert led.total().epsilon == pytest.approx(EPS, rel=REL)


def test_mean_experiment_coinpress_spends_the_page_rho():
    x, g = _groups(k=5, each=30)
    for method in ("naive", "stratified"):
        with ledger.recording() as led:
            S.run_mean_experiment_on_data(x, g, epsilons=[EPS], R=R_, gamma=GAMMA, reps=1, rng=0,
                                          estimator="coinpress", methods=(method,))
        assert led.total().rho == pytest.approx(EPS**2 / 2, rel=REL)  # spec §2.8: ρ = ε²/2


def test_noisy_weights_spend_their_own_epsilon():
    with ledger.recording() as led:
        S.run_mean_experiment(sizes=np.array([40, 60]), mu=np.zeros(2), sigma=np.ones(2), epsilons=[EPS], R=R_,
                              gamma=GAMMA, reps=1, rng=0, methods=("stratified",), weights_mode="noisy",
                              epsilon_weights=0.3)
    # S4 spec "noisy" weights: total ε + ε_w
    assert led.total().epsilon == pytest.approx(EPS + 0.3, rel=REL)


# ------------------------------------------------------------------------------------------ private tests
@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_noisy_table_spend(noise):
    priv = {"rho": 0.25} if noise == "gaussian" else {"epsilon": EPS}
    with ledger.recording() as led:
        pt.noisy_table(np.full((2, 3), 1 / 6), n=100, noise=noise, rng=0, **priv)
    (st,) = led.spends
    if noise == "gaussian":
        assert st.rho == 0.25 and st.sensitivity**2 / (2 * st.scale**2) == pytest.approx(0.25, rel=REL)
    else:
        assert st.epsilon == EPS and st.sensitivity / st.scale == pytest.approx(EPS, rel=REL)


# ------------------------------------------------------------------------------------------ partially private
@pytest.mark.parametrize("method", pr.METHODS)
@pytest.mark.parametrize("sens,kappa,pp_sens", [(2.0, 2.0, None), (1.0, 3.0, 4.0)])
def test_partial_release_spend_is_the_guarantee_table(method, sens, kappa, pp_sens):
    # spec §2.7 readout neighbour (‖ΔX‖₁ ≤ 4, ‖ΔX‖₂ ≤ 2): PP 4ε/Δ_PP; WEM-naive 2ε/(κΔ); constrained 4ε/(κΔ).
    panel = _panel(J=6)
    with ledger.recording() as led:
        pr.release_month(panel, 1, method=method, epsilon=EPS, sensitivity=sens, kappa=kappa, sweeps=1,
                         pp_sensitivity=pp_sens, rng=0)
    want = {"pp": 4 * EPS / (pp_sens or sens), "wem_naive": 2 * EPS / (kappa * sens)}.get(
        method, 4 * EPS / (kappa * sens))
    assert led.total().epsilon == pytest.approx(want, rel=REL)
    assert led.total().epsilon == pytest.approx(
        pr.method_guarantee(method, epsilon=EPS, sensitivity=sens, kappa=kappa, pp_sensitivity=pp_sens), rel=REL)


def test_pp_without_public_info_spends_the_same():
    with ledger.recording() as led:
        pr.release_month(_panel(J=6), 1, method="pp", epsilon=EPS, sensitivity=2.0, public=NO_PUBLIC, rng=0)
    assert led.total().epsilon == pytest.approx(2 * EPS, rel=REL)




@pytest.mark.parametrize("method", ["naive", "stratified", "split"])
def test_mean_experiment_from_a_group_summary_spends_epsilon(method):
    # The summary upload path runs the same releases from per-group clipped sums.
    x, g = _groups(k=5, each=30)
    summary = S.summarise_groups(x, g, R=R_, gamma=GAMMA)
    with ledger.recording() as led:
        S.run_mean_experiment_on_summary(summary, epsilons=[EPS], R=R_, gamma=GAMMA, reps=1, rng=0, methods=(method,))
    assert led.total().epsilon == pytest.approx(EPS, rel=REL)
