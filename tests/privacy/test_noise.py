"""Noise checks: at a fixed input, every randomized release adds noise of the claimed law and scale (issue 26).

Each test draws ≥ 10,000 seeded noise values from the release itself (from its output where the output exposes
the noise, else through a spying generator whose recorded draws are then shown to be exactly what reaches the
output), fits them against the scale the guarantee assigns to that step, computed here from the paper's formula,
and checks that the same test rejects twice that scale (so noise at half the scale would fail it).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpdash.coherence import core as co
from dpdash.stratify import partial_release as pr
from dpdash.epsilon import private_tests as pt
from dpdash.accounting import public_info as pi
from dpdash.stratify import core as S
from dpdash.stratify import synth as sy

from . import reference as ref
from .audit import (PASS_P, SpyGenerator, assert_fits_and_half_fails, discrete_p, gauss_p, ks_p, laplace_p)

EPS = 1.0


def _table(levels: dict[str, int], n: int, seed: int = 0) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    return pd.DataFrame({c: r.integers(0, k, n) for c, k in levels.items()})


def _hist(df: pd.DataFrame, c: str, k: int) -> np.ndarray:
    return np.bincount(df[c].to_numpy(), minlength=k).astype(float)


def _clip_norm(h: np.ndarray) -> np.ndarray:
    p = np.clip(h, 0.0, None)
    return p / p.sum()


# ------------------------------------------------------------------------------------------ synthesizers
def test_independent_laplace_each_column_gets_lap_d_over_eps():
    # S4 spec §3 item 1: d per-column histograms (L1 sensitivity 1, add/remove), ε/d each: b = d/ε.
    levels = {"a": 4000, "b": 4000, "c": 4000}
    df = _table(levels, 500)
    spy = SpyGenerator(1)
    m = sy.IndependentLaplace(EPS).fit(df, levels, rng=spy)
    draws = spy.draws("laplace")
    assert len(draws) == 3
    for d, c in zip(draws, levels):
        np.testing.assert_allclose(m.probs_[c], _clip_norm(_hist(df, c, 4000) + d.values), rtol=1e-12)
    noise = np.concatenate([d.values for d in draws])
    assert noise.size >= 10_000
    assert_fits_and_half_fails(lambda b: laplace_p(noise, b), len(levels) / EPS, "independent Laplace")


def test_full_histogram_gets_lap_one_over_eps():
    levels = {"a": 100, "b": 100}
    df = _table(levels, 3000)
    spy = SpyGenerator(2)
    m = sy.FullHistogramLaplace(EPS).fit(df, levels, rng=spy)
    (d,) = spy.draws("laplace")
    counts = np.bincount(df["a"].to_numpy() * 100 + df["b"].to_numpy(), minlength=10_000).astype(float)
    np.testing.assert_allclose(m.p_, _clip_norm(counts + d.values), rtol=1e-12)
    assert_fits_and_half_fails(lambda b: laplace_p(d.values, b), 1.0 / EPS, "full histogram")


def test_mwem_measurements_and_selection():
    # Hardt–Ligett–McSherry: T rounds of ε/(2T) selection + ε/(2T) Laplace measurement (sensitivity 1): b = 2T/ε.
    T = 10_000
    levels = {"a": 3, "b": 2}
    df = _table(levels, 400)
    spy = SpyGenerator(3)
    sy.MWEM(EPS, rounds=T, sweeps=0).fit(df, levels, rng=spy)
    noise = np.array([d.values for d in spy.draws("laplace")]).ravel()
    assert noise.size == T
    assert_fits_and_half_fails(lambda b: laplace_p(noise, b), 2 * T / EPS, "MWEM measurement")
    # the selection: P(q) ∝ exp(ε_round·|A(q) − D(q)|/(2Δ)) over the cells of the 2-way marginal, A uniform
    # (no sweeps), Δ = 1, ε_round = ε/(2T)
    true = np.bincount(df["a"].to_numpy() * 2 + df["b"].to_numpy(), minlength=6).astype(float)
    approx = np.full(6, 400 / 6)
    logits = (EPS / (2 * T)) * np.abs(approx - true) / 2
    want = np.exp(logits - logits.max())
    np.testing.assert_allclose(spy.choice_p[0], want / want.sum(), rtol=1e-9)


def test_exponential_mechanism_selection_law():
    # McSherry–Talwar: P(i) ∝ exp(ε·s_i/(2Δ)); 20,000 draws, chi-square against it and against 2ε.
    scores = np.array([0.0, 1.0, 2.0, 3.0, 5.0])
    g = np.random.default_rng(4)
    picks = np.array([sy._exp_mech(scores, 1.0, 2.0, g) for _ in range(20_000)])
    obs = np.bincount(picks, minlength=scores.size)

    def p_for(eps):
        w = np.exp(eps * scores / (2 * 2.0))
        return float(stats.chisquare(obs, obs.sum() * w / w.sum()).pvalue)

    assert p_for(1.0) >= PASS_P
    assert p_for(2.0) < 1e-6


@pytest.mark.slow
def test_mst_marginal_noise():
    # MST: ρ = CKS(ε, δ); three stages of ρ/3: d one-way marginals at ρ/(3d) each, d − 1 pairs at ρ/(3(d − 1)).
    pytest.importorskip("mbi")
    levels = {"a": 100, "b": 100, "c": 100}
    df = _table(levels, 2000, seed=5)
    spy = SpyGenerator(6)
    sy.MST(EPS, 1e-9, iters=5).fit(df, levels, rng=spy)
    rho = ref.cks_rho(EPS, 1e-9)
    d = len(levels)
    s1, s2 = 1 / math.sqrt(2 * rho / (3 * d)), 1 / math.sqrt(2 * rho / (3 * (d - 1)))
    draws = spy.draws("normal")
    one = np.concatenate([x.values for x in draws if x.values.size == 100])
    two = np.concatenate([x.values for x in draws if x.values.size == 10_000])
    assert one.size == 300 and two.size == 20_000
    assert_fits_and_half_fails(lambda s: gauss_p(one, s), s1, "MST one-way marginals")
    assert_fits_and_half_fails(lambda s: gauss_p(two, s), s2, "MST pair marginals")


@pytest.mark.slow
def test_aim_measurement_noise():
    # AIM: one-way marginals at σ₀ = √(T/(1.8ρ)) (T = 2d rounds), later rounds at the σ the budget rule sets (the
    # ledger's scale); every draw standardised by its step's σ is N(0, 1). Correlated columns and a large ε so
    # that AIM measures 2-way marginals (≥ 10,000 draws).
    pytest.importorskip("mbi")
    from dpdash.common import ledger
    eps = 10.0
    r = np.random.default_rng(7)
    a = r.integers(0, 80, 20_000)
    df = pd.DataFrame({"a": a, "b": (a + r.integers(0, 3, a.size)) % 80, "c": (a + r.integers(0, 5, a.size)) % 80})
    levels = {"a": 80, "b": 80, "c": 80}
    spy = SpyGenerator(8)
    with ledger.recording() as led:
        sy.AIM(eps, 1e-9, max_iters=5, max_model_size=200.0).fit(df, levels, rng=spy)
    rho = ref.cks_rho(eps, 1e-9)
    s0 = math.sqrt(2 * 3 / (1.8 * rho))
    draws = spy.draws("normal")
    gauss = led.steps("gaussian")
    assert len(draws) == len(gauss)
    for x, st in zip(draws[:3], gauss[:3]):
        assert st.scale == pytest.approx(s0, rel=1e-9)
        assert x.scale == pytest.approx(s0, rel=1e-9)
    z = np.concatenate([x.values / st.scale for x, st in zip(draws, gauss)])
    assert all(x.scale == pytest.approx(st.scale, rel=1e-12) for x, st in zip(draws, gauss))
    assert z.size >= 10_000
    assert_fits_and_half_fails(lambda s: gauss_p(z, s), 1.0, "AIM measurements (standardised)")


def test_stratified_synthesizer_gives_every_stratum_the_full_epsilon():
    # S4 L216–238: each stratum's model at the full ε (parallel composition): Lap(d_value/ε) per value column.
    levels = {"g": 4, "a": 1500, "b": 1500}
    df = _table(levels, 4000, seed=9)
    spy = SpyGenerator(10)
    sy.StratifiedSynthesizer(lambda: sy.IndependentLaplace(EPS), ["g"]).fit(df, levels, rng=spy)
    draws = spy.draws("laplace")
    assert len(draws) == 4 * 2
    noise = np.concatenate([d.values for d in draws])
    assert_fits_and_half_fails(lambda b: laplace_p(noise, b), 2 / EPS, "stratified independent Laplace")


# ------------------------------------------------------------------------------------------ coherence explorer
def _prepared(levels=(50, 100), n=4000, seed=11) -> co.PreparedData:
    r = np.random.default_rng(seed)
    binned = np.column_stack([r.integers(0, k, n) for k in levels])
    y = np.where(r.random(n) < 0.4, 1, -1).astype(np.int8)
    return co.PreparedData(n=n, n_dropped=0, y=y, raw=binned.astype(float), binned=binned,
                           binned_levels=tuple(levels), masks={}, group_sizes={})


def _coherence_draw(kind: str, eps: float, seed: int, delta: float = 1e-6):
    p = _prepared()
    idx = np.arange(0, p.n, 2)
    spy = SpyGenerator(seed)
    co.histogram_release(p, co.ReleaseSpec(kind=kind, epsilon=eps, delta=delta), idx, spy)
    cells = np.ravel_multi_index(tuple(p.binned[idx].T) + ((p.y[idx] > 0).astype(int),), (50, 100, 2))
    counts = np.bincount(cells, minlength=10_000).astype(float)
    (d,) = spy.log
    np.testing.assert_allclose(spy.choice_p[0], _clip_norm(counts + d.values), rtol=1e-12)
    return d.values


def test_coherence_laplace_histogram():
    # spec E16: substitution neighbours, L1 sensitivity 2: b = 2/ε.
    noise = _coherence_draw("dp_histogram", EPS, 12)
    assert noise.size >= 10_000
    assert_fits_and_half_fails(lambda b: laplace_p(noise, b), 2 / EPS, "coherence Laplace histogram")


def test_coherence_gaussian_histogram():
    # Analytic Gaussian (Balle & Wang 2018) for L2 sensitivity √2 at (ε, δ) = (1, 1e-6).
    noise = _coherence_draw("gaussian_histogram", EPS, 13)
    sigma = ref.analytic_gaussian_sigma(EPS, 1e-6, math.sqrt(2))
    assert_fits_and_half_fails(lambda s: gauss_p(noise, s), sigma, "coherence Gaussian histogram")


# ------------------------------------------------------------------------------------------ stratified means
R_, GAMMA = 1.0, 0.1


def test_laplace_mean_noise():
    x = np.random.default_rng(14).uniform(-1, 1, 50)
    g = np.random.default_rng(15)
    out = np.array([S.laplace_mean(x, R=R_, gamma=GAMMA, epsilon=EPS, rng=g) for _ in range(10_000)])
    noise = out - x.mean()  # |x| ≤ 1 < C: clipping is the identity
    assert_fits_and_half_fails(lambda b: laplace_p(noise, b), ref.clipped_mean_scale(50, R_, GAMMA, EPS),
                               "clipped Laplace mean")


def _groups(k=200, each=40, seed=16):
    r = np.random.default_rng(seed)
    g = np.repeat(np.arange(k), each)
    return r.uniform(-1, 1, g.size), g


def test_stratified_mean_release_noise():
    # Prop. 8: each stratum at the full ε, b_i = 2C(m_i)/(m_i ε).
    x, g = _groups()
    gen = np.random.default_rng(17)
    means = np.bincount(g, weights=x) / 40
    z = np.concatenate([
        (S.stratified_mean_release(x, g, R=R_, gamma=GAMMA, epsilon=EPS, rng=gen).groups - means)
        for _ in range(50)])
    assert z.size == 10_000
    assert_fits_and_half_fails(lambda b: laplace_p(z, b), ref.clipped_mean_scale(40, R_, GAMMA, EPS),
                               "stratified means")


@pytest.mark.slow
def test_split_budget_release_noise():
    # S4 L133: global mean at ε/2 and stratum means at ε/2.
    x, g = _groups(k=100, each=20)
    gen = np.random.default_rng(18)
    means = np.bincount(g, weights=x) / 20
    runs = [S.split_budget_release(x, g, R=R_, gamma=GAMMA, epsilon=EPS, rng=gen) for _ in range(100)]
    z = np.concatenate([r.groups - means for r in runs])
    assert_fits_and_half_fails(lambda b: laplace_p(z, b), ref.clipped_mean_scale(20, R_, GAMMA, EPS / 2),
                               "split: stratum means")
    pops = np.array([S.split_budget_release(x, g, R=R_, gamma=GAMMA, epsilon=EPS, rng=gen).population
                     for _ in range(10_000)])
    assert_fits_and_half_fails(lambda b: laplace_p(pops - x.mean(), b),
                               ref.clipped_mean_scale(x.size, R_, GAMMA, EPS / 2), "split: global mean")


def test_mean_experiment_methods_noise():
    # The page's runs (run_mean_experiment_on_data): naive at ε, stratified at ε per stratum, split at ε/2 + ε/2.
    x, g = _groups(k=5, each=30, seed=19)
    df = S.run_mean_experiment_on_data(x, g, epsilons=[EPS], R=R_, gamma=GAMMA, reps=2000, rng=20)
    err = df["estimate"] - df["empirical"]
    for method, level, m, eps in [("naive", "population", 150, EPS), ("stratified", "group", 30, EPS),
                                  ("split", "population", 150, EPS / 2), ("split", "group", 30, EPS / 2)]:
        sel = (df["method"] == method) & (df["level"] == level)
        z = err[sel].to_numpy()
        assert z.size >= 2000
        assert_fits_and_half_fails(lambda b, z=z: laplace_p(z, b), ref.clipped_mean_scale(m, R_, GAMMA, eps),
                                   f"experiment {method} {level}")


def test_coinpress_step_noise():
    # S4 Algorithm 1: project to [ℓ − w, r + w], w = σ√(2 log(2m/β)); Δ = (r − ℓ + 2w)/m; N(0, Δ²/(2ρ)).
    m, rho, beta, sig = 40, 0.5, 0.01, 1.0
    x = np.random.default_rng(21).uniform(-1, 1, m)
    w = sig * math.sqrt(2 * math.log(2 * m / beta))
    sd = (2.0 + 2 * w) / m / math.sqrt(2 * rho)
    gen = np.random.default_rng(22)
    z = np.array([(lambda iv: 0.5 * (iv.low + iv.high))(
        S.coinpress_uvm(x, low=-1, high=1, sigma=sig, rho=rho, beta=beta, rng=gen)) for _ in range(10_000)])
    assert_fits_and_half_fails(lambda s: gauss_p(z - x.mean(), s), sd, "Coinpress step")


def test_strat_coinpress_one_step_noise():
    k, each, rho, beta = 250, 40, 0.5, 0.01
    x, g = _groups(k=k, each=each, seed=23)
    w = math.sqrt(2 * math.log(2 * each / (beta / 4)))
    sd = (2.0 + 2 * w) / each / math.sqrt(2 * rho)
    gen = np.random.default_rng(24)
    means = np.bincount(g, weights=x) / each
    z = np.concatenate([S.strat_coinpress(x, g, low=-1, high=1, sigmas=1.0, rhos=[rho], beta=beta, rng=gen).groups
                        - means for _ in range(40)])
    assert z.size == 10_000
    assert_fits_and_half_fails(lambda s: gauss_p(z, s), sd, "StratCoinpress step")


# ------------------------------------------------------------------------------------------ private tests
@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_noisy_table(noise):
    # [T] Alg. 13 / §7.4: one record replaced moves the table by 2 (L1), √2 (L2): N(0, 2/(2ρ)) or Lap(2/ε).
    probs = np.full((100, 100), 1e-4)
    priv = {"rho": 0.5} if noise == "gaussian" else {"epsilon": EPS}
    out = pt.noisy_table(probs, n=5000, noise=noise, rng=25, **priv)
    counts = np.random.default_rng(25).multinomial(5000, probs.ravel()).reshape(probs.shape)
    z = (out - counts).ravel()
    if noise == "gaussian":
        assert_fits_and_half_fails(lambda s: gauss_p(z, s), math.sqrt(2) / math.sqrt(2 * 0.5), "noisy table (N)")
    else:
        assert_fits_and_half_fails(lambda b: laplace_p(z, b), 2 / EPS, "noisy table (Lap)")


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_simulation_noise(noise):
    # the size/power simulations draw the same noise as noisy_table
    priv = {"rho": 0.5} if noise == "gaussian" else {"epsilon": EPS}
    _, draw = pt._noise_setup(noise, priv.get("rho"), priv.get("epsilon"))
    z = draw(np.random.default_rng(26), (10_000,))
    if noise == "gaussian":
        assert_fits_and_half_fails(lambda s: gauss_p(z, s), 1 / math.sqrt(0.5), "simulation noise (N)")
    else:
        assert_fits_and_half_fails(lambda b: laplace_p(z, b), 2 / EPS, "simulation noise (Lap)")


# ------------------------------------------------------------------------------------------ partially private
NO_PUBLIC = pr.PublicInfo(state_total=False, cases_ge_deaths=False, nonnegative=False, previous_month_prior=False)


def _panel(J: int = 5000) -> pr.CountyPanel:
    r = np.random.default_rng(27)
    cases = r.integers(50, 500, (J, 2))
    return pr.CountyPanel(tuple(f"c{j}" for j in range(J)), ("m0", "m1"), np.arange(J) + 1000, cases,
                          cases // 10, True, "test")


def test_pp_release_discrete_laplace():
    # S1 §5.2: PP adds discrete Laplace with r = e^{−ε/Δ} to cases and deaths; with no public constraint the
    # post-processing keeps the noisy counts.
    panel = _panel()
    rel = pr.release_month(panel, 1, method="pp", epsilon=EPS, sensitivity=2.0, public=NO_PUBLIC, rng=28)
    z = np.concatenate([rel.cases - panel.cases[:, 1], rel.deaths - panel.deaths[:, 1]])
    assert z.size == 10_000

    def p_of(sens):
        return discrete_p(z, lambda k: ref.dlap_pmf(k, EPS, sens))
    assert p_of(2.0) >= PASS_P
    assert p_of(4.0) < 1e-6  # noise at half the scale, e^{−ε/Δ} with Δ halved, is rejected


def test_dlap_sampler_and_contraction_noise():
    z = pi.dlap_sample(epsilon=0.7, sensitivity=2.0, size=20_000, rng=29)
    assert discrete_p(z, lambda k: ref.dlap_pmf(k, 0.7, 2.0)) >= PASS_P
    assert discrete_p(z, lambda k: ref.dlap_pmf(k, 0.7, 4.0)) < 1e-6


def test_truncated_laplace_em_sampler():
    # S1 Example 1: density ∝ exp(−a|y − x̄|) on [−Δ/2, Δ/2], a = nε/(κΔ).
    n, eps, sens, kappa, xbar = 10, 0.5, 1.0, 2.0, 0.2
    a = n * eps / (kappa * sens)
    y = pi.trunc_laplace_em_sample(xbar, n, epsilon=eps, sensitivity=sens, kappa=kappa, size=20_000, rng=30)

    def p_of(rate):
        lap = stats.laplace(loc=xbar, scale=1 / rate)
        lo, hi = lap.cdf(-sens / 2), lap.cdf(sens / 2)
        return float(stats.kstest(y, lambda t: (lap.cdf(t) - lo) / (hi - lo)).pvalue)

    assert p_of(a) >= PASS_P
    assert p_of(a / 2) < 1e-6


def test_knorm_l2_sampler():
    # S1 Prop. 1: density ∝ exp(−‖u‖₂/s): radius ~ Gamma(d, s), direction uniform (in ℝ³ a coordinate of the
    # direction is uniform on [−1, 1], Archimedes).
    u = pi.knorm_l2_sample(3, 2.0, size=20_000, rng=31)
    r = np.linalg.norm(u, axis=1)
    assert_fits_and_half_fails(lambda s: ks_p(r, stats.gamma(3, scale=s)), 2.0, "K-norm radius")
    assert ks_p(u[:, 0] / r, stats.uniform(-1, 2)) >= PASS_P


@pytest.mark.slow
def test_wem_naive_draws_follow_the_exponential_mechanism():
    # S1 Thm. 1 / §5.3: WEM-naive draws (c, d) ∈ ℤ² with P ∝ exp(−a‖(c, d) − x‖₂), a = ε/(κΔ). Independent short
    # chains from the data-independent start; the distance to x is compared (chi-square) with the enumerated law.
    xc, xd, eps, sens, kappa = 2, 1, 4.0, 2.0, 2.0
    a = eps / (kappa * sens)
    g = np.random.default_rng(32)
    out = np.array([(lambda r: (r.cases[0], r.deaths[0]))(
        pr.wem_gibbs([xc], [xd], 0, epsilon=eps, sensitivity=sens, kappa=kappa, base="naive", sweeps=6,
                     public=NO_PUBLIC, rng=g)) for _ in range(10_000)], dtype=float)
    dist = np.hypot(out[:, 0] - xc, out[:, 1] - xd)
    c, d = np.meshgrid(np.arange(-80, 81), np.arange(-80, 81), indexing="ij")
    lattice = np.hypot(c, d).ravel()
    edges = np.array([0, 0.5, 1.2, 1.5, 2.1, 2.5, 2.9, 3.5, 4, 5, 6, 8, np.inf])
    obs = np.histogram(dist, edges)[0].astype(float)

    def p_for(rate):
        w = np.exp(-rate * lattice)
        e = np.histogram(lattice, edges, weights=w / w.sum())[0] * dist.size
        keep = e >= 5  # pool the bins expected below 5 into one
        o2 = np.append(obs[keep], obs[~keep].sum())
        e2 = np.append(e[keep], e[~keep].sum())
        if e2[-1] == 0:
            o2, e2 = o2[:-1], e2[:-1]
        return float(stats.chisquare(o2, e2 * o2.sum() / e2.sum()).pvalue)

    assert p_for(a) >= PASS_P
    assert p_for(2 * a) < 1e-6  # twice the rate = half the noise
