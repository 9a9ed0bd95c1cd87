"""Empirical privacy audits of the small releases (issue 26 item 1).

Each audit runs a release on two neighbouring datasets under its page's neighbouring notion, counts a fixed event
(the output lands on the neighbour's side of its true value, in every coordinate the neighbour moves), and turns
the two frequencies into a lower bound on ε with exact Clopper–Pearson bounds (``audit.epsilon_lower_bound``).
The bound must stay below the claimed ε; the same audit on the release with its noise halved (the release called
with twice the ε, so its scale is half, while the claim stays) must exceed the claimed ε.

Trials: releases that return the noisy value are called once per trial (``laplace_mean``, ``split_budget``).
Where the output holds many independent noisy cells, each cell or disjoint block is one trial on its own
neighbouring pair (white-box: the histogram cells before sampling, via the spying generator; strata of a
stratified release; county pairs of a PP release), which is the same mechanism with the same neighbour applied to
independent copies.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpdash.coherence import core as co
from dpdash.stratify import partial_release as pr
from dpdash.epsilon import private_tests as pt
from dpdash.stratify import core as S
from dpdash.stratify import synth as sy

from . import reference as ref
from .audit import SpyGenerator, audit, report
from .test_noise import NO_PUBLIC, _prepared

EPS = 1.0
R_, GAMMA = 1.0, 0.1


def _check(name: str, claimed: float, run, *, delta: float = 0.0):
    """``run(eps)`` → (event on D, event on D′) at the release's ε parameter; audit at ε and at 2ε (half noise)."""
    at = audit(*run(claimed), delta=delta)
    half = audit(*run(2 * claimed), delta=delta)
    report(name, claimed, at, half)
    assert at.epsilon_lb < claimed, f"{name}: the audit finds ε ≥ {at.epsilon_lb:.3f} > claimed {claimed}"
    assert half.epsilon_lb > claimed, (f"{name}: with half the noise the audit only finds ε ≥ {half.epsilon_lb:.3f}"
                                       f" ≤ claimed {claimed}; it cannot detect the violation")
    return at, half


# ------------------------------------------------------------------------------------------ stratified means
def _mean_pair(m: int):
    """Replace-one neighbours (m public): one record at −10 in D, +10 in D′ (both clipped to ±C)."""
    x0 = np.zeros(m)
    x0[0] = -10.0
    x1 = x0.copy()
    x1[0] = 10.0
    C = ref.clip_halfwidth(m, R_, GAMMA)
    return x0, x1, C / m  # the neighbour's clipped mean


def test_audit_laplace_mean():
    m, N = 20, 6_000
    x0, x1, target = _mean_pair(m)

    def run(eps):
        g = np.random.default_rng(1)
        y0 = np.array([S.laplace_mean(x0, R=R_, gamma=GAMMA, epsilon=eps, rng=g) for _ in range(N)])
        y1 = np.array([S.laplace_mean(x1, R=R_, gamma=GAMMA, epsilon=eps, rng=g) for _ in range(N)])
        return y0 >= target, y1 >= target

    _check("clipped Laplace mean (replace one)", EPS, run)


def test_audit_stratified_means_parallel():
    # One record changes in one stratum; every stratum is an independent trial (disjoint rows), 1,000 per call.
    k, m, calls = 1000, 20, 10
    x0, x1, target = _mean_pair(m)
    g = np.repeat(np.arange(k), m)

    def run(eps):
        gen = np.random.default_rng(2)
        y0 = np.concatenate([S.stratified_mean_release(np.tile(x0, k), g, R=R_, gamma=GAMMA, epsilon=eps,
                                                       rng=gen).groups for _ in range(calls)])
        y1 = np.concatenate([S.stratified_mean_release(np.tile(x1, k), g, R=R_, gamma=GAMMA, epsilon=eps,
                                                       rng=gen).groups for _ in range(calls)])
        return y0 >= target, y1 >= target

    _check("stratified means (parallel over strata)", EPS, run)


@pytest.mark.slow
def test_audit_split_budget_sequential():
    # The record moves both the global mean (ε/2) and its stratum's mean (ε/2): event on both.
    N, m = 3000, 20
    x0, x1, t_group = _mean_pair(m)
    g = np.repeat([0, 1], m)
    X0, X1 = np.concatenate([x0, np.zeros(m)]), np.concatenate([x1, np.zeros(m)])
    t_pop = ref.clip_halfwidth(2 * m, R_, GAMMA) / (2 * m)

    def run(eps):
        gen = np.random.default_rng(3)
        out = []
        for X in (X0, X1):
            rs = [S.split_budget_release(X, g, R=R_, gamma=GAMMA, epsilon=eps, rng=gen) for _ in range(N)]
            out.append(np.array([(r.population >= t_pop) and (r.groups[0] >= t_group) for r in rs]))
        return out

    _check("split budget (global ε/2 + strata ε/2)", EPS, run)


# ------------------------------------------------------------------------------------------ synthesizers
def _spy_noise(fit, calls: int, seed: int) -> np.ndarray:
    spy = SpyGenerator(seed)
    for _ in range(calls):
        fit(spy)
    return spy


def test_audit_full_histogram_add_remove():
    # Add one record: its cell count +1. Cells are independent trials (10,000 per fit).
    levels = {"a": 100, "b": 100}
    df = pd.DataFrame({"a": np.arange(100).repeat(100) % 100, "b": np.tile(np.arange(100), 100)})
    counts = np.ones(10_000)

    def run(eps):
        spy = _spy_noise(lambda r: sy.FullHistogramLaplace(eps).fit(df, levels, rng=r), 2, 4)
        n0, n1 = (d.values for d in spy.draws("laplace"))
        return counts + n0 >= counts + 1, counts + 1 + n1 >= counts + 1

    _check("full histogram (add/remove)", EPS, run)


def test_audit_independent_laplace_composition():
    # Add one record: one cell per column moves (d = 3 columns at ε/3 each); the event needs all three.
    levels = {"a": 3000, "b": 3000, "c": 3000}
    df = pd.DataFrame({c: np.arange(3000) for c in levels})

    def run(eps):
        spy = _spy_noise(lambda r: sy.IndependentLaplace(eps).fit(df, levels, rng=r), 2, 5)
        d = [x.values for x in spy.draws("laplace")]
        base = np.all([v >= 1 for v in d[:3]], axis=0)       # D: counts c, event h ≥ c + 1
        neigh = np.all([v >= 0 for v in d[3:]], axis=0)      # D′: counts c + 1
        return base, neigh

    _check("independent Laplace (3 columns composed)", EPS, run)


# ------------------------------------------------------------------------------------------ coherence explorer
def test_audit_coherence_laplace_histogram_substitution():
    # Substitution: one record moves from cell u to cell v (u −1, v +1). Disjoint cell pairs are trials.
    p = _prepared()
    idx = np.arange(0, p.n, 2)

    def run(eps):
        spy = SpyGenerator(6)
        for _ in range(4):
            co.histogram_release(p, co.ReleaseSpec(kind="dp_histogram", epsilon=eps), idx, spy)
        d = [x.values.reshape(-1, 2) for x in spy.draws("laplace")]
        n0, n1 = np.concatenate(d[:2]), np.concatenate(d[2:])
        # D: (c_u, c_v); D′: (c_u − 1, c_v + 1); event: h_u ≤ c_u − 1 and h_v ≥ c_v + 1
        base = (n0[:, 0] <= -1) & (n0[:, 1] >= 1)
        neigh = (n1[:, 0] <= 0) & (n1[:, 1] >= 0)
        return base, neigh

    _check("coherence Laplace histogram (substitution)", EPS, run)


@pytest.mark.slow
def test_audit_coherence_gaussian_histogram():
    # (ε, δ) audit: the record moves (u, v) by (−1, +1), L2 √2; statistic T = (n_v − n_u)/√2 + shift, event
    # T ≥ t with t fixed so that half the claimed σ shows. 1,000,000 pair trials from 200 releases.
    p = _prepared()
    idx = np.arange(0, p.n, 2)
    delta = 1e-6
    sigma = ref.analytic_gaussian_sigma(EPS, delta, math.sqrt(2))
    t = 1.75 * sigma  # about 3.3 sd of the half-noise release: where its loss exceeds ε

    def run(eps):
        spy = SpyGenerator(7)
        for _ in range(200):
            co.histogram_release(p, co.ReleaseSpec(kind="gaussian_histogram", epsilon=eps, delta=delta), idx, spy)
        d = np.concatenate([x.values.reshape(-1, 2) for x in spy.draws("normal")])
        T = (d[:, 1] - d[:, 0]) / math.sqrt(2)
        half = T.size // 2
        return T[:half] >= t, T[half:] + math.sqrt(2) >= t

    # the release at 2ε carries 0.53× the claimed σ (analytic calibration), a little more than half
    _check("coherence Gaussian histogram (ε, δ = 1e-6)", EPS, run, delta=delta)


# ------------------------------------------------------------------------------------------ private tests
def test_audit_private_tests_laplace_table():
    # One record replaced: one cell −1, another +1 (Lap(2/ε) per cell, as noisy_table and the simulations add).
    def run(eps):
        _, draw = pt._noise_setup("laplace", None, eps)
        g = np.random.default_rng(9)
        n0, n1 = draw(g, (20_000, 2)), draw(g, (20_000, 2))
        return (n0[:, 0] <= -1) & (n0[:, 1] >= 1), (n1[:, 0] <= 0) & (n1[:, 1] >= 0)

    _check("private tests' Laplace table (replace one)", EPS, run)


# ------------------------------------------------------------------------------------------ partially private
def test_audit_pp_readout_neighbour():
    # Readout neighbour: a dead person moves from county A to B: cases A −1, B +1; deaths A −1, B +1 (L1 = 4).
    # PP's guarantee is 4ε/Δ (= 2ε at Δ = 2). Disjoint county pairs are trials; no public constraint, so the
    # release is the noisy counts.
    J = 2000
    cases = np.full((J, 2), 100)
    panel = pr.CountyPanel(tuple(f"c{j}" for j in range(J)), ("m0", "m1"), np.arange(J) + 1000, cases,
                           np.full((J, 2), 10), True, "test")
    claimed = pr.method_guarantee("pp", epsilon=EPS, sensitivity=2.0)

    def run(scale_eps):
        g = np.random.default_rng(10)
        z = []
        for _ in range(20):
            rel = pr.release_month(panel, 1, method="pp", epsilon=scale_eps, sensitivity=2.0, public=NO_PUBLIC, rng=g)
            z.append(np.column_stack([(rel.cases - 100).reshape(-1, 2), (rel.deaths - 10).reshape(-1, 2)]))
        z = np.concatenate(z)
        n0, n1 = z[: z.shape[0] // 2], z[z.shape[0] // 2:]
        # D: (A, B) at their counts; D′: A −1, B +1 in cases and deaths; event: A ≤ D′'s A and B ≥ D′'s B
        base = (n0[:, 0] <= -1) & (n0[:, 1] >= 1) & (n0[:, 2] <= -1) & (n0[:, 3] >= 1)
        neigh = (n1[:, 0] <= 0) & (n1[:, 1] >= 0) & (n1[:, 2] <= 0) & (n1[:, 3] >= 0)
        return base, neigh

    at = audit(*run(EPS))
    half = audit(*run(2 * EPS))
    report("PP discrete Laplace (readout neighbour)", claimed, at, half)
    assert at.epsilon_lb < claimed < half.epsilon_lb
