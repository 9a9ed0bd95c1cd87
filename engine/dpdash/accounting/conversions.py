"""Conversions between privacy parameters: ε-DP, ρ-zCDP, Rényi DP and (ε, δ)-DP.

The lowest layer of the privacy modules: ``mechanisms`` (noise calibration) and ``accounting`` (composition)
both call these, and this module imports neither, so the two no longer import each other. Formulas follow the
Epsilon-calculator spec §4.2 and §4.9, citing Rogers 2017 (seed ``002_802572da4c9a19ad.txt``, "[T]"),
Bun–Steinke 2016 [X-BS] and Canonne–Kamath–Steinke 2020 [X-CKS].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np
from scipy import optimize

from dpdash.common.search import bracketed_root
from dpdash.common.validation import check_delta, check_epsilon, check_positive, check_rho

#: dp-accounting's ``DEFAULT_RDP_ORDERS``: {1.1, …, 10.9} ∪ {11, …, 63} ∪ {128, 256, 512, 1024}.
RDP_ORDERS: np.ndarray = np.array([1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024],
                                  dtype=float)


#: One unit in the last place at 1 (2⁻⁵²): the relative size of a float step, used for outward-rounding margins.
ULP = 2.0 ** -52
#: Operations whose rounding a margin covers: each float operation or libm call errs by at most one ULP of its
#: result (correctly rounded operations by half of one), and none of the formulas below chains more than this.
_OPS = 8


def round_up(x, err=0.0):
    """x + err, then one float step up: how a privacy loss (ε, δ, ρ spent) is reported, never below its value.

    ``err`` bounds the rounding error of the computation that gave x (see :func:`margin`). Issue 36 item 6: a
    guarantee must never be reported below its exact value (OpenDP rounds outward the same way). Elementwise on
    arrays; ∞ and NaN pass through.

    >>> round_up(1.0) > 1.0
    True
    """
    with np.errstate(invalid="ignore", over="ignore"):
        v = np.nextafter(np.asarray(x, dtype=float) + err, np.inf)
    return float(v) if np.ndim(v) == 0 else v


def round_down(x, err=0.0):
    """x − err, then one float step down (not below 0): how a privacy budget (a ρ or ε to spend) is reported."""
    with np.errstate(invalid="ignore", over="ignore"):
        v = np.maximum(np.nextafter(np.asarray(x, dtype=float) - err, -np.inf), 0.0)
    return float(v) if np.ndim(v) == 0 else v


def margin(*terms, ops: int = _OPS):
    """A bound on the rounding error of a formula whose terms (before cancellation) have these sizes.

    ops·ULP·Σ|termᵢ|: a first-order bound on the error of a sum of terms each computed with at most ``ops``
    roundings (standard forward error analysis, Higham 2002, *Accuracy and Stability of Numerical Algorithms*,
    §3.1). Elementwise on arrays; non-finite terms give ∞ (the value is ∞ too).
    """
    with np.errstate(invalid="ignore", over="ignore"):
        total = sum(np.abs(np.asarray(t, dtype=float)) for t in terms)
        m = ops * ULP * total
    return float(m) if np.ndim(m) == 0 else m


def sum_up(values) -> float:
    """Σ values rounded up: math.fsum (correctly rounded to nearest), one step up only when it fell below.

    The sign of fsum(values − fsum(values)) is the sign of the exact residual, so exact sums (0.001 × 1000
    = 1.0 is not exact, 0.5 + 0.25 is) are left as they are.

    >>> sum_up([0.5, 0.25]), sum_up([0.1, 0.2]) > 0.1 + 0.2
    (0.75, False)
    """
    vals = [float(v) for v in values]
    s = math.fsum(vals)
    if not math.isfinite(s):
        return s
    return math.nextafter(s, math.inf) if math.fsum(vals + [-s]) > 0.0 else s


def div_up(a: float, b: float) -> float:
    """a/b rounded up (exact rational check): the noise scale Δ/ε of a budget ε, never below (so Δ/b ≤ ε exactly).

    >>> div_up(1.0, 4.0), div_up(1.0, 3.0) > 1.0 / 3.0
    (0.25, True)
    """
    q = a / b
    if math.isfinite(q) and q > 0.0 and Fraction(q) * Fraction(b) < Fraction(a):
        q = math.nextafter(q, math.inf)
    return q


def half_square(a, b):
    """½(a/b)², e.g. ρ = Δ²/(2σ²) of a Gaussian, rounded up; ∞ when it overflows (a float ``**`` would raise).

    A loss: the float result is never below the exact value (issue 36 item 6). For scalars the exact rational
    value decides whether to step up (no step when the result is exact: ½(1/2)² = 0.125); on arrays, two
    float steps cover the three roundings (a/b, r·r; ½· is exact). No validation: callers check their arguments.

    >>> half_square(1.0, 2.0)
    0.125
    """
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        r = a / b
        v = 0.5 * r * r
    if np.ndim(v) == 0:
        v = float(v)
        if v == 0.0 and a != 0.0 and math.isfinite(float(b)):
            return math.nextafter(0.0, 1.0)     # an underflowed loss is still > 0: the smallest float above it
        if math.isfinite(v) and v > 0.0:
            exact = Fraction(float(a)) ** 2 / (2 * Fraction(float(b)) ** 2)
            for _ in range(4):      # three roundings put v at most two steps below …
                if Fraction(v) >= exact:
                    break
                v = math.nextafter(v, math.inf)
            for _ in range(4):      # … or above: the nearest float on the safe side, not one further
                if Fraction(math.nextafter(v, 0.0)) < exact:
                    break
                v = math.nextafter(v, 0.0)
        return v
    with np.errstate(invalid="ignore", over="ignore"):
        return np.nextafter(np.nextafter(v, np.inf), np.inf)


def pure_to_zcdp(epsilon) -> float:
    """ε-DP implies (ε²/2)-zCDP ([T] Thm 2.2.3; Bun–Steinke 2016 Prop. 1.4).

    >>> pure_to_zcdp(1.0)
    0.5
    """
    return half_square(check_epsilon(epsilon), 1.0)


def pure_epsilon_for_rho(rho) -> float:
    """ε = √(2ρ): the pure ε whose zCDP guarantee ε²/2 equals ρ (the inverse of :func:`pure_to_zcdp`).

    A budget (the ε a ρ share allows), so rounded down: the largest float whose square is ≤ 2ρ exactly.

    >>> pure_epsilon_for_rho(0.5)
    1.0
    """
    r = check_rho(rho)
    e = math.sqrt(2.0 * r)
    if math.isfinite(e):
        for _ in range(4):      # sqrt is correctly rounded and 2ρ may round: at most two steps are ever needed
            if Fraction(e) ** 2 <= 2 * Fraction(r):
                break
            e = math.nextafter(e, 0.0)
        for _ in range(4):      # and the largest such float
            if Fraction(math.nextafter(e, math.inf)) ** 2 > 2 * Fraction(r):
                break
            e = math.nextafter(e, math.inf)
    return e


def gaussian_rho(sigma, *, sensitivity=1.0) -> float:
    """ρ = Δ²/(2σ²) of the Gaussian mechanism with noise σ ([T] Thm 2.2.2); ∞ where it overflows.

    >>> gaussian_rho(2.0, sensitivity=1.0)
    0.125
    """
    return half_square(check_positive(sensitivity, name="sensitivity"), check_positive(sigma, name="sigma"))


def sigma_for_rho(rho, *, sensitivity=1.0) -> float:
    """Noise σ = Δ/√(2ρ) of the Gaussian mechanism that is ρ-zCDP (the inverse of :func:`gaussian_rho`).

    The noise of a budget, so rounded up: the smallest float σ with Δ²/(2σ²) ≤ ρ exactly (more noise is safe).

    >>> sigma_for_rho(0.125)
    2.0
    """
    d, r = check_positive(sensitivity, name="sensitivity"), check_rho(rho)
    s = d / math.sqrt(2.0 * r)
    if math.isfinite(s) and s > 0.0:
        for _ in range(8):      # three roundings (2ρ, √, Δ/·): a few steps at most
            if Fraction(d) ** 2 <= 2 * Fraction(r) * Fraction(s) ** 2:
                break
            s = math.nextafter(s, math.inf)
        for _ in range(8):      # and not a step more noise than that
            if Fraction(d) ** 2 > 2 * Fraction(r) * Fraction(math.nextafter(s, 0.0)) ** 2:
                break
            s = math.nextafter(s, 0.0)
    return s


ZCDP_METHODS = ("best", "standard", "bun_steinke", "cks", "rdp")


def _cks_epsilon_at(t: float, rho: float, log_inv_delta: float) -> float:
    """ε(α) of [X-CKS] Cor. 13 at α = 1 + u, u = eᵗ (a float): αρ + ln(1 − 1/α) + (ln(1/δ) − ln α)/(α − 1), rounded up.

    Every α > 1 gives a valid ε, so the search for α needs no conservative rounding (a slightly wrong α only
    gives a slightly larger, still valid ε); the evaluation does. ln(1 − 1/α) = −log1p(1/u) is evaluated without
    the cancellation of t − ln(1 + u) (which put the result up to 5e-14 below the exact bound, issue 36), and the
    result is rounded up by a bound on the error of its terms.
    """
    u = math.exp(t)
    l1p = math.log1p(u)
    a = (1.0 + u) * rho
    b = math.log1p(1.0 / u)
    c = (log_inv_delta - l1p) / u
    return round_up(a - b + c, margin(a, b, log_inv_delta / u, l1p / u))


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
    if not math.isfinite(math.sqrt(big_l / rho)):
        return math.inf     # ρ so small the bracket overflows: a valid (if useless) bound; "best" takes another
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
    Every method's ε is rounded up (issue 36 item 6): never below the exact value of its formula.

    >>> round(zcdp_to_dp(0.1, 1e-5, method="standard"), 6), round(zcdp_to_dp(0.1, 1e-5), 6)
    (2.245966, 1.914239)
    """
    r = check_rho(rho)
    d = check_delta(delta, allow_zero=False)
    xi = float(xi)
    if method == "standard":
        root = 2.0 * math.sqrt(r * -math.log(d))
        return round_up(xi + r + root, margin(xi, r, root))
    if method == "bun_steinke":
        lp, ld = 0.5 * math.log(math.pi * r), math.log(d)
        inner = max(0.0, lp - ld)
        root = 2.0 * math.sqrt(r * inner)
        # inner errs by e = margin(lp, ld): the root then by ≤ root·e/(2·inner), and by ≤ 2√(r·e) near inner = 0
        e = margin(lp, ld)
        e_root = (0.0 if lp - ld < -e                   # clamped with room to spare: the exact inner is 0 too
                  else min(2.0 * math.sqrt(r * e), root * e / (2.0 * inner)) if inner > 0.0
                  else 2.0 * math.sqrt(r * e))
        return round_up(xi + r + root, margin(xi, r, root) + e_root)
    if method == "cks":
        v = _cks_epsilon(r, d)
        return v if xi == 0.0 else round_up(xi + v, margin(xi, v, ops=1))
    if method == "best":
        return min(zcdp_to_dp(r, d, xi=xi, method=m) for m in ("standard", "bun_steinke", "cks"))
    if method == "rdp":
        return rdp_to_dp(xi + r * RDP_ORDERS, delta=d).epsilon
    raise ValueError(f"method must be best, standard, bun_steinke, cks or rdp; got {method!r}")


def _cks_log_delta(rho: float, eps: float) -> float:
    """ln δ of ρ-zCDP at ε: min over α > 1 of (α−1)(αρ − ε) + (α−1)ln(1 − 1/α) − ln α [X-CKS] Cor. 13.

    The derivative in α, (2α − 1)ρ − ε + ln(1 − 1/α), increases; it is < 0 at ln(α − 1) = min(0, ε − 3ρ − 1)
    and ≥ 0 at α − 1 = max(1, (ε + 1)/(2ρ)), so one bounded brentq in t = ln(α − 1) finds the minimiser.
    Rounded up like ε (any α > 1 gives a valid δ; the evaluation's error is bounded by its terms' sizes), with
    ln(1 − 1/α) = −log1p(1/u) free of cancellation.
    """
    def deriv(t):
        u = math.exp(t)
        return (1.0 + 2.0 * u) * rho - eps + t - math.log1p(u)

    t_lo = min(0.0, eps - 3.0 * rho - 1.0)
    t_hi = math.log(max(1.0, (eps + 1.0) / (2.0 * rho)))
    t = t_hi if deriv(t_hi) <= 0.0 else optimize.brentq(deriv, t_lo, t_hi, xtol=1e-15, rtol=8.9e-16, maxiter=200)
    u = math.exp(t)
    a, b, c, l1p = u * (1.0 + u) * rho, u * eps, u * math.log1p(1.0 / u), math.log1p(u)
    return round_up(a - b - c - l1p, margin(a, b, c, l1p))


def zcdp_delta(rho, epsilon, *, xi=0.0,
               method: Literal["best", "standard", "bun_steinke", "cks"] = "best") -> float:
    """δ of (ξ, ρ)-zCDP at ε: the inverse direction of :func:`zcdp_to_dp`, method by method.

    "standard": exp(−(ε−ξ−ρ)²/(4ρ)) for ε > ξ + ρ, else 1 [X-BS Prop. 1.3 solved for δ]; "bun_steinke":
    √(πρ)·exp(−(ε−ξ−ρ)²/(4ρ)) ([T] Thm 2.2.4 solved for δ); "cks": min over α > 1 of
    exp((α−1)(αρ − ε + ξ))/α·(1 − 1/α)^(α−1) [X-CKS] Cor. 13 (OpenDP's ``cdp_delta``). "best" is the smallest,
    which is consistent with "best" ε: zcdp_to_dp(ρ, δ) ≤ ε exactly when zcdp_delta(ρ, ε) ≤ δ. Capped at 1.
    Rounded up (issue 36 item 6): ln δ carries a bound on its rounding error before exp, then one step up.

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
        return min(1.0, round_up(math.exp(min(0.0, _cks_log_delta(r, e))), 0.0))
    if e <= r:
        return 1.0 if method == "standard" else min(1.0, round_up(math.sqrt(math.pi * r)))
    q = -(e - r) ** 2 / (4.0 * r)
    # ε − ξ carries one rounding of size |ε| + |ξ|; dq/de = −(e − r)/(2r)
    err = margin(q) + (e - r) / (2.0 * r) * margin(epsilon, xi, r, ops=2)
    log_d = q
    if method == "bun_steinke":
        lp = 0.5 * math.log(math.pi * r)
        log_d += lp
        err += margin(lp)
    return min(1.0, round_up(math.exp(log_d + err)))


def zcdp_rho_for_epsilon(epsilon, delta, *, method="best") -> float:
    """Largest ρ whose zcdp_to_dp(ρ, δ) is ≤ ε (brentq in ln ρ; inverse of :func:`zcdp_to_dp`).

    A budget, so rounded down (issue 36 item 6): after the root, ρ steps down (relative steps 2⁻⁴⁶, doubling,
    at most 60) until the outward-rounded conversion of ρ is ≤ ε, so the exact ε of the returned ρ is ≤ ε.
    """
    eps = check_epsilon(epsilon)
    d = check_delta(delta, allow_zero=False)
    f = lambda lr: zcdp_to_dp(math.exp(lr), d, method=method) - eps  # noqa: E731
    lr = bracketed_root(f, math.log(eps) - 10.0, math.log(eps) + 1.0, increasing=True, step_lo=10.0,
                        xtol=1e-14, rtol=1e-14)
    rho = math.exp(lr)
    step = 2.0 ** -46
    for _ in range(60):
        if zcdp_to_dp(rho, d, method=method) <= eps:
            return rho
        rho *= 1.0 - step
        step = min(0.5, 2.0 * step)
    return rho


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
    δ : float, in (0, 1). Each order's ε is rounded up by a bound on its terms' rounding error (issue 36).
    """
    d = check_delta(delta, allow_zero=False)
    a = np.asarray(orders, dtype=float)
    r = np.asarray(rdp, dtype=float)
    if r.shape != a.shape:
        raise ValueError("rdp and orders must have the same length")
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        t1, t2, t3 = np.log1p(-1.0 / a), -math.log(d) / (a - 1.0), np.log(a) / (a - 1.0)
        eps = round_up(r + t1 + t2 - t3, margin(r, t1, t2, t3))
        eps = np.where(d * d + np.expm1(-r) > 0, 0.0, eps)
        eps = np.where(a > 1.01, eps, np.inf)
    eps = np.maximum(eps, 0.0)
    i = int(np.argmin(eps))
    return RdpConversion(float(eps[i]), float(a[i]))
