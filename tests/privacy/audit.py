"""Test-only helpers of the privacy audit layer: noise goodness-of-fit, a spying generator, and the empirical ε
lower bound of DP auditing (issue 26 item 1).

Empirical audit: run a mechanism many times on each of two neighbouring datasets D, D′, count how often a fixed
event E happens (k₁ of n₁ on D′, k₀ of n₀ on D), and bound the privacy loss from below with exact
Clopper–Pearson intervals: ε ≥ ln((P̲(E | D′) − δ) / P̄(E | D)) with confidence 1 − α (Jagielski, Ullman & Oprea
2020, "Auditing differentially private machine learning", §3; Nasr et al. 2021). The event is fixed before the
draws (from the mechanism's form, not chosen on the same samples), so no correction for selection is needed.
A release that keeps its guarantee gives a bound below the claimed ε; one with too little noise gives a bound above.

Scales in the tests are computed here from the papers' formulas (Laplace b = Δ/ε, Gaussian σ = Δ/√(2ρ)), never
read from the code under test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

#: Two-sided confidence of the audit's Clopper–Pearson bounds (each side α/2): a fixed seed then lands above the
#: claimed ε by chance with probability below 1e-3.
AUDIT_ALPHA = 1e-3
#: A goodness-of-fit test passes when p ≥ this (and must give p below FAIL_P for half the scale).
PASS_P = 1e-3
FAIL_P = 1e-6


# ------------------------------------------------------------------------------------------ noise checks
def ks_p(draws, dist) -> float:
    """Kolmogorov–Smirnov p-value of continuous ``draws`` against a frozen scipy distribution."""
    return float(stats.kstest(np.ravel(draws), dist.cdf).pvalue)


def laplace_p(draws, b: float) -> float:
    return ks_p(draws, stats.laplace(scale=b))


def gauss_p(draws, sigma: float) -> float:
    return ks_p(draws, stats.norm(scale=sigma))


def discrete_p(draws, pmf, *, min_expected: float = 5.0) -> float:
    """Chi-square p-value of integer ``draws`` against ``pmf(k)`` (an independent formula); tails pooled so every
    bin expects ≥ ``min_expected``."""
    x = np.ravel(np.asarray(draws, dtype=np.int64))
    n = x.size
    lo, hi = int(x.min()), int(x.max())
    ks = np.arange(lo, hi + 1)
    obs = np.bincount(x - lo, minlength=ks.size).astype(float)
    exp_ = n * pmf(ks)
    # pool from both ends inwards until each bin expects enough
    bins_o, bins_e, acc_o, acc_e = [], [], 0.0, 0.0
    for o, e in zip(obs, exp_):
        acc_o += o
        acc_e += e
        if acc_e >= min_expected:
            bins_o.append(acc_o)
            bins_e.append(acc_e)
            acc_o = acc_e = 0.0
    bins_o[-1] += acc_o
    bins_e[-1] += acc_e
    e = np.asarray(bins_e)
    # the mass outside [lo, hi] belongs to the end bins
    e[0] += n * max(0.0, 1.0 - float(pmf(ks).sum())) / 2
    e[-1] += n * max(0.0, 1.0 - float(pmf(ks).sum())) / 2
    e *= n / e.sum()
    return float(stats.chisquare(np.asarray(bins_o), e).pvalue)


def assert_fits_and_half_fails(p_of_scale, scale: float, what: str) -> None:
    """``p_of_scale(s)``: the GOF p-value of the observed noise against scale s. The claimed scale must fit; the
    same noise must be rejected against twice the scale (i.e. this check would fail on noise at half the scale)."""
    p = p_of_scale(scale)
    assert p >= PASS_P, f"{what}: noise does not fit the claimed scale {scale:g} (p = {p:.2e})"
    p2 = p_of_scale(2.0 * scale)
    assert p2 < FAIL_P, f"{what}: the check cannot tell scale {scale:g} from {2 * scale:g} (p = {p2:.2e})"


# ------------------------------------------------------------------------------------------ spying generator
@dataclass
class Draw:
    method: str
    scale: float
    values: np.ndarray


class SpyGenerator(np.random.Generator):
    """A numpy Generator that records every Laplace, normal, geometric and weighted-choice draw it makes.

    Children from ``spawn`` are spies too and share the parent's log, so a stratified fit is seen whole.
    """

    def __init__(self, seed: int, log: list | None = None):
        super().__init__(np.random.PCG64(seed))
        self.log: list[Draw] = [] if log is None else log
        self.choice_p: list[np.ndarray] = []

    def spawn(self, n_children: int):
        seeds = np.random.SeedSequence(int(self.integers(2**63))).generate_state(n_children)
        return [SpyGenerator(int(s), self.log) for s in seeds]

    def laplace(self, loc=0.0, scale=1.0, size=None):
        v = super().laplace(loc, scale, size)
        self.log.append(Draw("laplace", float(np.mean(scale)), np.asarray(v, dtype=float) - loc))
        return v

    def normal(self, loc=0.0, scale=1.0, size=None):
        v = super().normal(loc, scale, size)
        self.log.append(Draw("normal", float(np.mean(scale)), np.asarray(v, dtype=float) - loc))
        return v

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        if p is not None:
            self.choice_p.append(np.asarray(p, dtype=float).copy())
        return super().choice(a, size=size, replace=replace, p=p, axis=axis, shuffle=shuffle)

    def draws(self, method: str) -> list[Draw]:
        return [d for d in self.log if d.method == method]


# ------------------------------------------------------------------------------------------ empirical audit
def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """Exact two-sided (1 − alpha) binomial interval (Clopper & Pearson 1934)."""
    lo = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


@dataclass
class Audit:
    """Outcome of one audit: the ε lower bound and the counts behind it."""

    epsilon_lb: float
    k_neighbour: int
    k_base: int
    n: int
    notes: dict = field(default_factory=dict)


def epsilon_lower_bound(k1: int, n1: int, k0: int, n0: int, *, delta: float = 0.0,
                        alpha: float = AUDIT_ALPHA) -> float:
    """ln((P̲₁ − δ)/P̄₀) from Clopper–Pearson bounds (each at confidence 1 − alpha/2); −inf when P̲₁ ≤ δ."""
    p1_lo, _ = clopper_pearson(k1, n1, alpha)
    _, p0_hi = clopper_pearson(k0, n0, alpha)
    if p1_lo <= delta:
        return -math.inf
    return math.log((p1_lo - delta) / p0_hi)


def audit(event_on_base, event_on_neighbour, *, delta: float = 0.0) -> Audit:
    """Audit from boolean arrays of the fixed event E on draws from D (base) and D′ (neighbour)."""
    e0 = np.asarray(event_on_base, dtype=bool)
    e1 = np.asarray(event_on_neighbour, dtype=bool)
    lb = epsilon_lower_bound(int(e1.sum()), e1.size, int(e0.sum()), e0.size, delta=delta)
    return Audit(lb, int(e1.sum()), int(e0.sum()), int(e0.size))


#: The running test's item (set by tests/privacy/conftest.py), so results reach the controller under xdist.
CURRENT: list = [None]


def report(name: str, claimed: float, at_claim: Audit, at_half: Audit) -> None:
    """Attach (name, claimed ε, bound at the claimed noise, bound at half the noise) to the test's report; the
    run's summary prints them (tests/privacy/conftest.py)."""
    if CURRENT[0] is not None:
        CURRENT[0].user_properties.append(("privacy_audit", (name, claimed, at_claim.epsilon_lb,
                                                              at_half.epsilon_lb)))
