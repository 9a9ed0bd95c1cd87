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
from scipy import optimize

from dpdash.common.search import bracketed_root
from dpdash.common.validation import check_delta, check_epsilon, check_positive, check_rho

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


ZCDP_METHODS = ("best", "standard", "bun_steinke", "cks", "rdp")


def _cks_epsilon_at(t: float, rho: float, log_inv_delta: float) -> float:
    """ε(α) of [X-CKS] Cor. 13 at α = 1 + eᵗ: αρ + ln(1 − 1/α) + (ln(1/δ) − ln α)/(α − 1), in u = α − 1.

    Every α > 1 gives a valid ε, so the search for α below needs no conservative rounding (a slightly wrong α
    only gives a slightly larger, still valid ε).
    """
    u = math.exp(t)
    l1p = math.log1p(u)
    return (1.0 + u) * rho + t - l1p + (log_inv_delta - l1p) / u


def _cks_epsilon(rho: float, delta: float) -> float:
    """Tight ε of ρ-zCDP at δ: min over α > 1 of ε(α) [X-CKS] Prop. 12 / Cor. 13 (OpenDP's ``cdp_epsilon``).

    dε/dα = ρ − (ln(1/δ) − ln α)/(α − 1)² changes sign once, from − to +, so the minimum is the root of the
    derivative, found by Brent's method in t = ln(α − 1) inside a bracket proved valid: at
    u = min(L/4, √(L/(4ρ))) the derivative is < 0 and at u = √(L/ρ) it is ≥ 0 (L = ln(1/δ)). Bounded work: one
    brentq with at most 200 iterations.
    """
    big_l = -math.log(delta)
    if not math.isfinite(rho):
        return math.inf
    t_lo = math.log(min(big_l / 4.0, math.sqrt(big_l / (4.0 * rho))))
    t_hi = math.log(math.sqrt(big_l / rho)) + 1e-9

    def deriv(t):
        u = math.exp(t)
        return rho - (big_l - math.log1p(u)) / (u * u)

    if deriv(t_hi) <= 0.0:          # rounding at the bracket's end: that end is (numerically) the minimiser
        t = t_hi
    else:
        t = optimize.brentq(deriv, t_lo, t_hi, xtol=1e-15, rtol=8.9e-16, maxiter=200)
    return max(0.0, _cks_epsilon_at(t, rho, big_l))


def zcdp_to_dp(rho, delta, *, xi=0.0,
               method: Literal["best", "standard", "bun_steinke", "cks", "rdp"] = "best") -> float:
    """ε of (ξ, ρ)-zCDP at δ, for any δ in (0, 1) (a per-mechanism share δ/(2K) may lie far below 1e-300).

    "standard": ξ + ρ + 2√(ρ ln(1/δ)) [X-BS Prop. 1.3]; "bun_steinke": ξ + ρ + 2√(ρ·max(0, ln(√(πρ)/δ)))
    ([T] Thm 2.2.4 = [X-BS] Lemma 3.6); "cks": the tight ξ + min_{α>1} [αρ + ln(1−1/α) + (ln(1/δ) − ln α)/(α−1)]
    (Canonne–Kamath–Steinke 2020, "The Discrete Gaussian for Differential Privacy", Prop. 12 / Cor. 13; the
    conversion of OpenDP's ``cdp_epsilon``). "best" (default, spec §4.2 amended 2026-11-27) is the smallest of
    the three. "rdp" converts the RDP curve ξ + ρα on dp-accounting's order grid [X-CKS Prop. 12].
    Erratum (spec §4.9): the √(πρ) form is undefined for δ > √(πρ), so its log is clamped at 0.

    >>> round(zcdp_to_dp(0.1, 1e-5, method="standard"), 6), round(zcdp_to_dp(0.1, 1e-5), 6)
    (2.245966, 1.914239)
    """
    r = check_rho(rho)
    d = check_delta(delta, allow_zero=False)
    xi = float(xi)
    if method == "standard":
        return xi + r + 2.0 * math.sqrt(r * -math.log(d))
    if method == "bun_steinke":
        return xi + r + 2.0 * math.sqrt(r * max(0.0, 0.5 * math.log(math.pi * r) - math.log(d)))
    if method == "cks":
        return xi + _cks_epsilon(r, d)
    if method == "best":
        return min(zcdp_to_dp(r, d, xi=xi, method=m) for m in ("standard", "bun_steinke", "cks"))
    if method == "rdp":
        return rdp_to_dp(xi + r * RDP_ORDERS, delta=d).epsilon
    raise ValueError(f"method must be best, standard, bun_steinke, cks or rdp; got {method!r}")


def _cks_log_delta(rho: float, eps: float) -> float:
    """ln δ of ρ-zCDP at ε: min over α > 1 of (α−1)(αρ − ε) + (α−1)ln(1 − 1/α) − ln α [X-CKS] Cor. 13.

    The derivative in α, (2α − 1)ρ − ε + ln(1 − 1/α), increases; it is < 0 at ln(α − 1) = min(0, ε − 3ρ − 1)
    and ≥ 0 at α − 1 = max(1, (ε + 1)/(2ρ)), so one bounded brentq in t = ln(α − 1) finds the minimiser.
    """
    def deriv(t):
        u = math.exp(t)
        return (1.0 + 2.0 * u) * rho - eps + t - math.log1p(u)

    t_lo = min(0.0, eps - 3.0 * rho - 1.0)
    t_hi = math.log(max(1.0, (eps + 1.0) / (2.0 * rho)))
    t = t_hi if deriv(t_hi) <= 0.0 else optimize.brentq(deriv, t_lo, t_hi, xtol=1e-15, rtol=8.9e-16, maxiter=200)
    u = math.exp(t)
    return u * ((1.0 + u) * rho - eps) + u * (t - math.log1p(u)) - math.log1p(u)


def zcdp_delta(rho, epsilon, *, xi=0.0,
               method: Literal["best", "standard", "bun_steinke", "cks"] = "best") -> float:
    """δ of (ξ, ρ)-zCDP at ε: the inverse direction of :func:`zcdp_to_dp`, method by method.

    "standard": exp(−(ε−ξ−ρ)²/(4ρ)) for ε > ξ + ρ, else 1 [X-BS Prop. 1.3 solved for δ]; "bun_steinke":
    √(πρ)·exp(−(ε−ξ−ρ)²/(4ρ)) ([T] Thm 2.2.4 solved for δ); "cks": min over α > 1 of
    exp((α−1)(αρ − ε + ξ))/α·(1 − 1/α)^(α−1) [X-CKS] Cor. 13 (OpenDP's ``cdp_delta``). "best" is the smallest,
    which is consistent with "best" ε: zcdp_to_dp(ρ, δ) ≤ ε exactly when zcdp_delta(ρ, ε) ≤ δ. Capped at 1.

    >>> round(zcdp_delta(0.05, 0.25), 10)
    0.0817727531
    """
    r = check_rho(rho)
    e = float(epsilon) - float(xi)
    if not math.isfinite(e) or (method not in ("best", "standard", "bun_steinke", "cks")):
        if method not in ("best", "standard", "bun_steinke", "cks"):
            raise ValueError(f"method must be best, standard, bun_steinke or cks; got {method!r}")
        raise ValueError(f"epsilon must be a finite number; got {epsilon!r}")
    if method == "best":
        return min(zcdp_delta(r, epsilon, xi=xi, method=m) for m in ("standard", "bun_steinke", "cks"))
    if e < 0.0:
        return 1.0
    if method == "cks":
        return min(1.0, math.exp(min(0.0, _cks_log_delta(r, e))))
    if e <= r:
        return 1.0 if method == "standard" else min(1.0, math.sqrt(math.pi * r))
    log_d = -(e - r) ** 2 / (4.0 * r)
    if method == "bun_steinke":
        log_d += 0.5 * math.log(math.pi * r)
    return min(1.0, math.exp(log_d))


def zcdp_rho_for_epsilon(epsilon, delta, *, method="best") -> float:
    """Largest ρ whose zcdp_to_dp(ρ, δ) equals ε (brentq in ln ρ; inverse of :func:`zcdp_to_dp`)."""
    eps = check_epsilon(epsilon)
    d = check_delta(delta, allow_zero=False)
    f = lambda lr: zcdp_to_dp(math.exp(lr), d, method=method) - eps  # noqa: E731
    lr = bracketed_root(f, math.log(eps) - 10.0, math.log(eps) + 1.0, increasing=True, step_lo=10.0,
                        xtol=1e-14, rtol=1e-14)
    return math.exp(lr)


def conversion_note(method: str = "best") -> str:
    """One plain sentence saying which zCDP → (ε, δ) conversion a shown ε used, with its source, for method notes.

    >>> conversion_note()[:60]
    'ε is converted from ρ by the tightest of three published bou'
    """
    notes = {
        "best": ("ε is converted from ρ by the tightest of three published bounds: Bun and Steinke's two (2016, "
                 "Prop. 1.3 and Lemma 3.6) and the conversion of Canonne, Kamath and Steinke (2020, Prop. 12), "
                 "which OpenDP also uses."),
        "cks": "ε is converted from ρ by the conversion of Canonne, Kamath and Steinke (2020, Prop. 12).",
        "standard": "ε is converted from ρ by the standard bound ρ + 2√(ρ ln(1/δ)) (Bun and Steinke 2016, Prop. 1.3).",
        "bun_steinke": "ε is converted from ρ by Bun and Steinke's bound (2016, Lemma 3.6).",
        "rdp": "ε is converted from ρ through Rényi DP on dp-accounting's grid of orders.",
    }
    if method not in notes:
        raise ValueError(f"method must be one of {', '.join(notes)}; got {method!r}")
    return notes[method]


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
