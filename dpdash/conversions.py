"""Conversions between privacy parameters: ε-DP, ρ-zCDP, Rényi DP and (ε, δ)-DP.

The lowest layer of the privacy modules: ``mechanisms`` (noise calibration) and ``accounting`` (composition)
both call these, and this module imports neither, so the two no longer import each other. Formulas follow the
Epsilon-calculator spec §4.2 and §4.9, citing Rogers 2017 (seed ``002_802572da4c9a19ad.txt``, "[T]"),
Bun–Steinke 2016 [X-BS] and Canonne–Kamath–Steinke 2020 [X-CKS].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpdash.search import bracketed_root
from dpdash.validation import check_delta, check_epsilon, check_positive, check_rho

#: dp-accounting's ``DEFAULT_RDP_ORDERS``: {1.1, …, 10.9} ∪ {11, …, 63} ∪ {128, 256, 512, 1024}.
RDP_ORDERS: np.ndarray = np.array([1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024],
                                  dtype=float)


def half_square(a, b):
    """½(a/b)², e.g. ρ = Δ²/(2σ²) of a Gaussian, as ∞ when it overflows (a float ``**`` would raise).

    Works elementwise on arrays as well. No validation: callers check their arguments.

    >>> half_square(1.0, 2.0)
    0.125
    """
    r = a / b
    return 0.5 * r * r


def pure_to_zcdp(epsilon) -> float:
    """ε-DP implies (ε²/2)-zCDP ([T] Thm 2.2.3; Bun–Steinke 2016 Prop. 1.4).

    >>> pure_to_zcdp(1.0)
    0.5
    """
    return half_square(check_epsilon(epsilon), 1.0)


def pure_epsilon_for_rho(rho) -> float:
    """ε = √(2ρ): the pure ε whose zCDP guarantee ε²/2 equals ρ (the inverse of :func:`pure_to_zcdp`).

    >>> pure_epsilon_for_rho(0.5)
    1.0
    """
    return math.sqrt(2.0 * check_rho(rho))


def gaussian_rho(sigma, *, sensitivity=1.0) -> float:
    """ρ = Δ²/(2σ²) of the Gaussian mechanism with noise σ ([T] Thm 2.2.2); ∞ where it overflows.

    >>> gaussian_rho(2.0, sensitivity=1.0)
    0.125
    """
    return half_square(check_positive(sensitivity, name="sensitivity"), check_positive(sigma, name="sigma"))


def sigma_for_rho(rho, *, sensitivity=1.0) -> float:
    """Noise σ = Δ/√(2ρ) of the Gaussian mechanism that is ρ-zCDP (the inverse of :func:`gaussian_rho`).

    >>> sigma_for_rho(0.125)
    2.0
    """
    return check_positive(sensitivity, name="sensitivity") / math.sqrt(2.0 * check_rho(rho))


def zcdp_to_dp(rho, delta, *, xi=0.0, method: Literal["best", "standard", "bun_steinke", "rdp"] = "best") -> float:
    """ε of (ξ, ρ)-zCDP at δ, for any δ in (0, 1) (a per-mechanism share δ/(2K) may lie far below 1e-300).

    "standard": ξ + ρ + 2√(ρ ln(1/δ)) [X-BS Prop. 1.3]; "bun_steinke": ξ + ρ + 2√(ρ·max(0, ln(√(πρ)/δ)))
    ([T] Thm 2.2.4 = [X-BS] Lemma 3.6). Erratum (spec §4.9): the √(πρ) form is undefined for δ > √(πρ) and
    worse than the standard form when πρ > 1, so the log is clamped at 0 and "best" takes the smaller of the
    two. "rdp" converts the RDP curve ξ + ρα [X-CKS Prop. 12].

    >>> round(zcdp_to_dp(0.1, 1e-5, method="standard"), 6)
    2.245966
    """
    r = check_rho(rho)
    d = check_delta(delta, allow_zero=False)
    xi = float(xi)
    if method == "standard":
        return xi + r + 2.0 * math.sqrt(r * -math.log(d))
    if method == "bun_steinke":
        return xi + r + 2.0 * math.sqrt(r * max(0.0, 0.5 * math.log(math.pi * r) - math.log(d)))
    if method == "best":
        return min(zcdp_to_dp(r, d, xi=xi, method="standard"), zcdp_to_dp(r, d, xi=xi, method="bun_steinke"))
    if method == "rdp":
        return rdp_to_dp(xi + r * RDP_ORDERS, delta=d).epsilon
    raise ValueError(f"method must be best, standard, bun_steinke or rdp; got {method!r}")


def zcdp_rho_for_epsilon(epsilon, delta, *, method="best") -> float:
    """Largest ρ whose zcdp_to_dp(ρ, δ) equals ε (brentq in ln ρ; inverse of :func:`zcdp_to_dp`)."""
    eps = check_epsilon(epsilon)
    d = check_delta(delta, allow_zero=False)
    f = lambda lr: zcdp_to_dp(math.exp(lr), d, method=method) - eps  # noqa: E731
    lr = bracketed_root(f, math.log(eps) - 10.0, math.log(eps) + 1.0, increasing=True, step_lo=10.0,
                        xtol=1e-14, rtol=1e-14)
    return math.exp(lr)


@dataclass(frozen=True)
class RdpConversion:
    """ε at δ from an RDP curve, and the order that achieved it."""

    epsilon: float
    order: float


def rdp_to_dp(rdp, *, delta, orders=RDP_ORDERS) -> RdpConversion:
    """Convert an RDP curve to (ε, δ) by Canonne–Kamath–Steinke 2020 Prop. 12 (as dp-accounting does).

    ε = min_α [ε(α) + ln(1−1/α) − (ln δ + ln α)/(α−1)]; an order gives 0 when δ² + expm1(−ε(α)) > 0.
    δ : float, in (0, 1).
    """
    d = check_delta(delta, allow_zero=False)
    a = np.asarray(orders, dtype=float)
    r = np.asarray(rdp, dtype=float)
    if r.shape != a.shape:
        raise ValueError("rdp and orders must have the same length")
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        eps = r + np.log1p(-1.0 / a) - (math.log(d) + np.log(a)) / (a - 1.0)
        eps = np.where(d * d + np.expm1(-r) > 0, 0.0, eps)
        eps = np.where(a > 1.01, eps, np.inf)
    eps = np.maximum(eps, 0.0)
    i = int(np.argmin(eps))
    return RdpConversion(float(eps[i]), float(a[i]))
