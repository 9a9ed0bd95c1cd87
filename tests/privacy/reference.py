"""Independent reference formulas for the privacy audit: each written from its paper, never imported from dpdash."""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats


def clip_halfwidth(m: float, R: float, gamma: float) -> float:
    """S4 L113 with errata E1–E2: C(m) = R + √log(m/γ) ("paper" mode)."""
    return R + math.sqrt(math.log(m / gamma))


def clipped_mean_scale(m: int, R: float, gamma: float, eps: float) -> float:
    """S4 Eq. 3 (L125): a mean of m values clipped to [−C, C] moves by ≤ 2C/m when one is replaced: b = 2C/(mε)."""
    return 2.0 * clip_halfwidth(m, R, gamma) / (m * eps)


def cks_log_delta(rho: float, eps: float) -> float:
    """log δ of Canonne, Kamath & Steinke (2020), Prop. 12: δ = inf_{α>1} e^{(α−1)(αρ−ε)}/(α−1)·(1 − 1/α)^α."""
    def log_d(a):
        return (a - 1) * (a * rho - eps) - math.log(a - 1) + a * math.log1p(-1 / a)
    res = optimize.minimize_scalar(log_d, bounds=(1.0 + 1e-9, 1e6), method="bounded",
                                   options={"xatol": 1e-12})
    grid = np.concatenate([np.linspace(1.0001, 2, 200), np.geomspace(2, 1e6, 2000)])
    return min(0.0, float(res.fun), min(log_d(a) for a in grid))


def cks_rho(eps: float, delta: float) -> float:
    """Largest ρ with δ_CKS(ρ, ε) ≤ δ (root in log δ)."""
    return optimize.brentq(lambda r: cks_log_delta(r, eps) - math.log(delta), 1e-8, eps + 1, xtol=1e-14,
                           rtol=1e-12)


def analytic_gaussian_delta(sigma: float, eps: float, sens: float) -> float:
    """Balle & Wang (2018), Thm. 8: δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ)."""
    a, b = sens / (2 * sigma), eps * sigma / sens
    return float(stats.norm.cdf(a - b) - math.exp(eps) * stats.norm.cdf(-a - b))


def analytic_gaussian_sigma(eps: float, delta: float, sens: float) -> float:
    """Smallest σ with analytic_gaussian_delta(σ) ≤ δ."""
    return optimize.brentq(lambda s: analytic_gaussian_delta(s, eps, sens) - delta, 1e-6 * sens, 1e6 * sens,
                           xtol=1e-14, rtol=1e-13)


def dlap_pmf(k, eps: float, sens: float) -> np.ndarray:
    """Discrete Laplace (Inusah & Kozubowski 2006) with r = e^{−ε/Δ}: P(k) = (1−r)/(1+r)·r^|k|."""
    r = math.exp(-eps / sens)
    return (1 - r) / (1 + r) * r ** np.abs(np.asarray(k, dtype=float))
