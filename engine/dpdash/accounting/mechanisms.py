"""Noise mechanisms: sensitivity, calibration, accuracy and adaptive-query widths.

Pure Python (no streamlit). Formulas follow the Epsilon-calculator spec §4.1 and §4.6,
which cite Rogers 2017, *Leveraging Privacy in Data Analysis* (seed ``002_802572da4c9a19ad.txt``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import optimize, special, stats

from dpdash.accounting.conversions import half_square, sigma_for_rho, zcdp_rho_for_epsilon, zcdp_to_dp
from dpdash.common.search import SearchLimitError, bracketed_root, grow_until, smallest_true
from dpdash.common.validation import (EPSILON_MAX, ValidationError, check_delta, check_epsilon, check_finite,
                                      check_positive, check_rho, check_size)

Mech = Literal["laplace", "gaussian", "discrete_laplace", "discrete_gaussian"]
Query = Literal["count", "sum", "mean", "histogram"]
Neighbour = Literal["replace", "add_remove"]

MECHANISMS: tuple[str, ...] = ("laplace", "gaussian", "discrete_laplace", "discrete_gaussian")
GAUSSIAN_RULES: tuple[str, ...] = ("analytic", "classic", "zcdp")
DELTA_MIN = 1e-300


# --------------------------------------------------------------------------- validation
# Scalars go through dpdash.common.validation. A δ here is any number in (0, 1) (every computation is in log space, so
# a per-mechanism share δ/(2K) far below the spec's 1e-300 input floor is usable, issue 17); DELTA_MIN is the
# pages' control floor. A confidence lies in the open interval (0, 1).
def _confidence(confidence) -> float:
    return check_delta(confidence, name="confidence", allow_zero=False)


def integer_sensitivity(sensitivity) -> int:
    """A discrete mechanism's sensitivity: an integer ≥ 1 (values within 1e-12 of one, as a computed Δ may be)."""
    s = check_positive(sensitivity, name="sensitivity")
    return check_size(round(s) if abs(s - round(s)) <= 1e-12 else s, name="sensitivity of a discrete mechanism")


def z_value(confidence: float) -> float:
    """Two-sided normal quantile z(c) = Φ⁻¹(1 − (1−c)/2) (spec §3)."""
    c = _confidence(confidence)
    return float(special.ndtri(1.0 - (1.0 - c) / 2.0))


# --------------------------------------------------------------------------- sensitivity
@dataclass(frozen=True)
class Sensitivity:
    """L1 and L2 sensitivity of a query."""

    l1: float
    l2: float
    query: str
    neighbour: str


def query_sensitivity(query: Query, *, lower: float = 0.0, upper: float = 1.0, n: int | None = None,
                      neighbour: Neighbour = "replace") -> Sensitivity:
    """Sensitivity of a clipped query.

    References
    ----------
    ``002_802572da4c9a19ad.txt`` eq. 2.1; spec §4.1 table.

    Examples
    --------
    >>> query_sensitivity("mean", lower=0, upper=200, n=500).l1
    0.4
    """
    if neighbour not in ("replace", "add_remove"):
        raise ValueError(f"neighbour must be 'replace' or 'add_remove', got {neighbour!r}")
    lo, hi = check_finite(lower, name="lower"), check_finite(upper, name="upper")
    if query == "count":
        return Sensitivity(1.0, 1.0, query, neighbour)
    if query == "histogram":
        if neighbour == "replace":
            return Sensitivity(2.0, math.sqrt(2.0), query, neighbour)
        return Sensitivity(1.0, 1.0, query, neighbour)
    if hi <= lo:
        raise ValueError(f"upper must be > lower, got lower={lower!r}, upper={upper!r}")
    if not math.isfinite(hi - lo):
        raise ValueError("the range U − L is too large to be a number; use clipping bounds within ±1e300")
    if query == "sum":
        s = hi - lo if neighbour == "replace" else max(abs(lo), abs(hi))
        return Sensitivity(s, s, query, neighbour)
    if query == "mean":
        if neighbour == "add_remove":
            raise ValueError("mean has unbounded sensitivity under add/remove: release sum and count")
        if n is None:
            raise ValueError("mean needs the (public) number of records n ≥ 1")
        nn = check_finite(n, name="n")
        if nn < 1:
            raise ValidationError(f"n must be a finite number ≥ 1; got {n!r}")
        s = (hi - lo) / nn
        return Sensitivity(s, s, query, neighbour)
    raise ValueError(f"query must be one of count, sum, mean, histogram; got {query!r}")


# --------------------------------------------------------------------------- discrete helpers
def _dlap_p(scale: float) -> float:
    return math.exp(-1.0 / scale)


def _dgauss_support(sigma: float) -> np.ndarray:
    m = math.ceil(12.0 * sigma) + 10
    return np.arange(0, m + 1, dtype=float)


#: From this σ on, discrete-Gaussian tails use the Euler–Maclaurin form below instead of the direct sum over
#: ⌈12σ⌉ + 10 points (spec §4.1 sums up to σ = 1e5; that sum made one Tab 1 move take 44 s, issue 12).
_DGAUSS_SUM_LIMIT = 1e3


def _dgauss_log_tail_em(sigma: float, x: np.ndarray) -> np.ndarray:
    """log P(Y > x) for a discrete Gaussian with large σ, by the midpoint Euler–Maclaurin formula.

    With u = ⌊x⌋ + ½ and z = u/σ, the midpoint Euler–Maclaurin formula gives Σ_{y > x} f(y) = ∫_u^∞ f
    + f′(u)/24 − 7f‴(u)/5760 + … for f(t) = e^{−t²/2σ²}, and the normaliser is σ√(2π) up to e^{−2π²σ²}
    (Poisson summation), so P(Y > x) = Q(z) + φ(z)·[−z/(24σ²) + 7(z³ − 3z)/(5760σ⁴)], with a relative error
    of order z⁶/σ⁶ (checked against mpmath and the direct sum in tests/engine/accounting/test_mechanisms.py). Erratum
    to the
    spec's plain midpoint rule Q(z) above σ = 1e5, which drops the z/(24σ²) term.
    """
    z = (np.floor(x) + 0.5) / sigma
    lq = special.log_ndtr(-z)
    s2 = sigma * sigma  # a float product: ∞ past 1e154, never OverflowError; the terms then vanish
    corr = -z / (24.0 * s2) + 7.0 * (z**3 - 3.0 * z) / (5760.0 * s2 * s2)
    with np.errstate(over="ignore"):
        # φ(z)/Q(z) = √(2/π)/erfcx(z/√2): no difference of two huge logs (z up to 1e12 here)
        mills = math.sqrt(2.0 / math.pi) / special.erfcx(z / math.sqrt(2.0))
    return lq + np.log1p(mills * corr)


def logsumexp(a) -> float:
    """log Σ e^{aᵢ} of a 1-D array (−∞ entries allowed) with one max shift: ``scipy.special.logsumexp``'s algorithm
    without its per-call array-API overhead (about 0.3 ms a call, thousands of calls per noise search).

    >>> round(logsumexp(np.log([1.0, 2.0, 3.0])), 12) == round(math.log(6.0), 12)
    True
    """
    a = np.asarray(a, dtype=float)
    top = float(np.max(a)) if a.size else -math.inf
    if not math.isfinite(top):
        return top
    return top + math.log(float(np.sum(np.exp(a - top))))


def _dgauss_log_tail(sigma: float, thresholds: np.ndarray) -> np.ndarray:
    """log P(Y > x) for a discrete Gaussian with parameter sigma, vectorised in x (CKS)."""
    x = np.asarray(thresholds, dtype=float)
    if sigma >= _DGAUSS_SUM_LIMIT:
        return _dgauss_log_tail_em(sigma, x)
    ys = _dgauss_support(sigma)
    ys = np.concatenate([-ys[:0:-1], ys])
    with np.errstate(over="ignore"):  # (y/σ)² → ∞ for tiny σ: a point mass at 0, not 0/0
        logp = -0.5 * (ys / sigma) ** 2
    logz = logsumexp(logp)
    logp = logp - logz
    # reverse cumulative log-sum: tail[j] = log Σ_{i ≥ j} p_i
    rev = np.logaddexp.accumulate(logp[::-1])[::-1]
    idx = np.searchsorted(ys, np.floor(x), side="right")  # first y > floor(x), i.e. y > x
    out = np.full(x.shape, -np.inf)
    ok = idx < len(ys)
    out[ok] = rev[idx[ok]]
    out[idx == 0] = 0.0
    return out


def discrete_noise_pmf(mechanism: Mech, *, scale: float, values) -> np.ndarray:
    """P(Y = y) of discrete Laplace or discrete Gaussian noise at the integers ``values`` [X-CKS].

    Discrete Laplace with scale t: tanh(1/(2t))·e^{−|y|/t} (= (1−p)/(1+p)·p^{|y|}, p = e^{−1/t}). Discrete
    Gaussian: e^{−y²/(2σ²)}/Σ_z e^{−z²/(2σ²)}, normalised over the whole support (the sum to ⌈12σ⌉ + 10, or
    σ√(2π) from σ = 1e3 on, as for the tails).
    """
    b = check_positive(scale, name="scale")
    y = np.asarray(values, dtype=float)
    if mechanism == "discrete_laplace":
        return math.tanh(0.5 / b) * np.exp(-np.abs(y) / b)
    if mechanism == "discrete_gaussian":
        with np.errstate(over="ignore"):
            logw = -0.5 * (y / b) ** 2
            if b >= _DGAUSS_SUM_LIMIT:
                logz = math.log(b * math.sqrt(2.0 * math.pi))
            else:
                ys = _dgauss_support(b)
                logz = logsumexp(np.concatenate([-0.5 * (ys[1:] / b) ** 2] * 2 + [[0.0]]))
        return np.exp(logw - logz)
    raise ValueError(f"mechanism must be discrete_laplace or discrete_gaussian, got {mechanism!r}")


def _dgauss_std(sigma: float) -> float:
    if sigma >= _DGAUSS_SUM_LIMIT:
        return sigma  # Var = σ²(1 − O(σ²e^{−2π²σ²})) by Poisson summation: equal to σ in floating point
    ys = _dgauss_support(sigma)
    with np.errstate(over="ignore"):
        w = np.exp(-0.5 * (ys / sigma) ** 2)
    w[1:] *= 2.0
    return float(math.sqrt(np.sum(w * ys**2) / np.sum(w)))


# --------------------------------------------------------------------------- accuracy
def half_width(mechanism: Mech, *, scale: float, confidence: float = 0.95) -> float:
    """Half-width h with P(|noise| ≤ h) ≥ confidence (spec §4.1; discrete kinds give integers).

    Laplace: b·ln(1/β) (exact tail e^{−t/b}). Gaussian: σ·Φ⁻¹(1−β/2) (exact; the thesis bound
    σ√(2 ln(2/β)) of ``002_802572da4c9a19ad.txt`` Thm 2.1.3 is not used). Discrete Laplace /
    Gaussian: smallest integer m with P(|Y| > m) ≤ β [X-CKS].
    """
    b = check_positive(scale, name="scale")
    beta = 1.0 - _confidence(confidence)
    if mechanism == "laplace":
        return b * math.log(1.0 / beta)
    if mechanism == "gaussian":
        return b * z_value(1.0 - beta)
    if mechanism == "discrete_laplace":
        p = _dlap_p(b)
        # 2 p^{m+1}/(1+p) ≤ β  ⇔  m+1 ≥ t(ln(2/(1+p)) − ln β)
        need = b * (math.log(2.0 / (1.0 + p)) - math.log(beta))
        m = max(0, math.ceil(need - 1e-12) - 1)
        while m > 0 and math.log(2.0) + m * (-1.0 / b) - math.log1p(p) <= math.log(beta):
            m -= 1  # guard against rounding in ceil
        while math.log(2.0) + (m + 1) * (-1.0 / b) - math.log1p(p) > math.log(beta):
            m += 1
        return float(m)
    if mechanism == "discrete_gaussian":
        # P(|Y| > m) = 2 P(Y > m); scan candidates near the continuous answer
        zc = z_value(1.0 - beta) * b
        cand = np.arange(max(0, math.floor(zc) - 3), math.ceil(zc) + 5, dtype=float)
        lt = math.log(2.0) + _dgauss_log_tail(b, cand)
        ok = np.nonzero(lt <= math.log(beta))[0]
        if len(ok) and (ok[0] > 0 or cand[0] == 0):
            return float(cand[ok[0]])

        # otherwise bisect on the integers: P(|Y| > m) falls with m. (A scan from 0 allocated ⌈zσ⌉ + 50 values:
        # at σ ~ 1e12 that was a MemoryError on a valid control value, issue 17.)
        def fits(m: float) -> bool:
            return bool(math.log(2.0) + _dgauss_log_tail(b, np.array([m]))[0] <= math.log(beta))
        lo, hi = -1.0, max(1.0, math.ceil(zc) + 5.0)
        while not fits(hi):
            lo, hi = hi, 2.0 * hi
            if not math.isfinite(hi):
                return math.inf
        while hi - lo > 1.0:
            mid = math.floor((lo + hi) / 2.0)
            if mid <= lo or mid >= hi:
                break  # beyond 2⁵³ neighbouring integers are not floats: hi is the answer to float precision
            if fits(mid):
                hi = mid
            else:
                lo = mid
        return float(hi)
    raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}")


_half_width = half_width  # alias: several functions take a ``half_width`` argument


def scale_for_half_width(mechanism: Mech, *, half_width: float, confidence: float = 0.95) -> float:
    """Scale giving a target half-width (largest scale whose integer h ≤ target for discrete kinds)."""
    h = check_positive(half_width, name="half_width")
    beta = 1.0 - _confidence(confidence)
    if mechanism == "laplace":
        return h / math.log(1.0 / beta)
    if mechanism == "gaussian":
        return h / z_value(1.0 - beta)
    if mechanism not in ("discrete_laplace", "discrete_gaussian"):
        raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}")
    cont = "laplace" if mechanism == "discrete_laplace" else "gaussian"
    guess = scale_for_half_width(cont, half_width=max(h, 1.0), confidence=confidence)
    lo, hi = guess / 64.0, guess * 4.0 + 1.0
    if _half_width(mechanism, scale=lo, confidence=confidence) > h:
        raise ValueError(f"half_width {half_width!r} is below the smallest achievable integer width")
    hi = grow_until(lambda x: _half_width(mechanism, scale=x, confidence=confidence) > h, hi, factor=2.0,
                    cap=1e300)
    if not math.isfinite(hi):
        raise SearchLimitError(f"no noise scale gives a ± as wide as {half_width!r}")
    for _ in range(80):  # bisection in log scale on a step function
        mid = math.sqrt(lo * hi)
        if _half_width(mechanism, scale=mid, confidence=confidence) <= h:
            lo = mid
        else:
            hi = mid
        if hi / lo - 1.0 < 1e-12:
            break
    return lo


def noise_std(mechanism: Mech, *, scale: float) -> float:
    """Standard deviation of the noise (spec §4.1 table)."""
    b = check_positive(scale, name="scale")
    if mechanism == "laplace":
        return math.sqrt(2.0) * b
    if mechanism == "gaussian":
        return b
    if mechanism == "discrete_laplace":
        p = _dlap_p(b)
        return math.sqrt(2.0 * p) / (-math.expm1(-1.0 / b))
    if mechanism == "discrete_gaussian":
        return _dgauss_std(b)
    raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}")


# --------------------------------------------------------------------------- Gaussian privacy
def _log_gaussian_delta(epsilon: float, sigma: float, sensitivity: float) -> float:
    a = sensitivity / (2.0 * sigma) - epsilon * sigma / sensitivity
    b = -sensitivity / (2.0 * sigma) - epsilon * sigma / sensitivity
    la, lb = float(special.log_ndtr(a)), float(special.log_ndtr(b))
    r = epsilon + lb - la
    if r >= 0.0:  # only through rounding; the exact value is < 0
        return -math.inf
    return la + math.log(-math.expm1(r))


def gaussian_delta(epsilon: float, *, sigma: float, sensitivity: float = 1.0) -> float:
    """Exact δ(ε) of the Gaussian mechanism (Balle–Wang 2018 analytic Gaussian, spec §4.1 [X-BW]).

    δ = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ), evaluated in log space.

    >>> round(gaussian_delta(1.0, sigma=1), 7)
    0.1269367
    """
    eps = check_epsilon(epsilon, allow_zero=True)
    return math.exp(_log_gaussian_delta(eps, check_positive(sigma, name="sigma"),
                                        check_positive(sensitivity, name="sensitivity")))


def _epsilon_for_log_delta(log_delta, ld: float, *, xtol: float, rtol: float) -> float:
    """Smallest ε ≥ 0 with log δ(ε) ≤ ld for a decreasing privacy profile (0 if δ(0) already fits; ∞ past 1e12)."""
    if log_delta(0.0) <= ld:
        return 0.0
    hi = grow_until(lambda e: log_delta(e) <= ld, 1.0, factor=2.0, cap=1e12)
    if math.isinf(hi):
        return math.inf
    return float(optimize.brentq(lambda e: log_delta(e) - ld, 0.0, hi, xtol=xtol, rtol=rtol))


def gaussian_epsilon(delta: float, *, sigma: float, sensitivity: float = 1.0) -> float:
    """Smallest ε with δ(ε; σ) ≤ delta for the Gaussian mechanism [X-BW]; 0 if δ(0) ≤ delta (any δ in (0, 1))."""
    d = check_delta(delta, allow_zero=False)
    s, sens = check_positive(sigma, name="sigma"), check_positive(sensitivity, name="sensitivity")
    return _epsilon_for_log_delta(lambda e: _log_gaussian_delta(e, s, sens), math.log(d), xtol=1e-15, rtol=1e-13)


def _classic_sigma_epsilon(delta: float, sensitivity: float) -> float:
    """σ·ε = Δ√(2 ln(1.25/δ)) of the classic Gaussian mechanism [X-DR Thm A.1] (valid for ε < 1)."""
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta))


def gaussian_sigma(epsilon: float, delta: float, *, sensitivity: float = 1.0,
                   rule: Literal["analytic", "classic"] = "analytic") -> float:
    """Noise σ giving (ε, δ)-DP: analytic [X-BW] (smallest σ) or classic [X-DR Thm A.1] (ε < 1)."""
    eps = check_epsilon(epsilon)
    d = check_delta(delta, allow_zero=False)
    sens = check_positive(sensitivity, name="sensitivity")
    if rule == "classic":
        if eps >= 1.0:
            raise ValueError(f"the classic Gaussian rule needs epsilon < 1, got {epsilon!r}")
        return _classic_sigma_epsilon(d, sens) / eps
    if rule != "analytic":
        raise ValueError(f"rule must be 'analytic' or 'classic', got {rule!r}")
    ld = math.log(d)
    f = lambda ls: _log_gaussian_delta(eps, math.exp(ls), sens) - ld  # noqa: E731
    # bounded bracket (issue 26): at most MAX_STEPS unit steps in ln σ each way
    ls = bracketed_root(f, math.log(sens) - 1.0, math.log(sens) + 1.0, increasing=False, what="the σ search",
                        xtol=1e-14, rtol=1e-13)
    return math.exp(ls)


def _log_dgauss_delta(epsilon: float, sigma: float, sensitivity: int) -> float:
    t = epsilon * sigma * sigma / sensitivity  # a float product is ∞ on overflow; ** would raise
    la, lb = _dgauss_log_tail(sigma, np.array([t - sensitivity / 2.0, t + sensitivity / 2.0]))
    if la == -math.inf:
        return -math.inf
    r = epsilon + lb - la
    if r >= 0.0:
        return -math.inf
    return float(la + math.log(-math.expm1(r)))


def discrete_gaussian_delta(epsilon: float, *, sigma: float, sensitivity: int = 1) -> float:
    """Exact δ(ε) of the discrete Gaussian mechanism (Canonne–Kamath–Steinke 2020 Thm 7, [X-CKS]).

    δ = P[Y > εσ²/Δ − Δ/2] − e^ε P[Y > εσ²/Δ + Δ/2].
    """
    eps = check_epsilon(epsilon, allow_zero=True)
    return math.exp(_log_dgauss_delta(eps, check_positive(sigma, name="sigma"), integer_sensitivity(sensitivity)))


def discrete_gaussian_epsilon(delta: float, *, sigma: float, sensitivity: int = 1) -> float:
    """Smallest ε with discrete-Gaussian δ(ε) ≤ delta [X-CKS Thm 7] (any δ in (0, 1))."""
    d = check_delta(delta, allow_zero=False)
    s, sens = check_positive(sigma, name="sigma"), integer_sensitivity(sensitivity)
    return _epsilon_for_log_delta(lambda e: _log_dgauss_delta(e, s, sens), math.log(d), xtol=1e-13, rtol=1e-12)


def discrete_gaussian_sigma(epsilon: float, delta: float, *, sensitivity: int = 1) -> float:
    """Smallest σ whose discrete Gaussian is (ε, δ)-DP [X-CKS Thm 7] (brentq in ln σ; δ in (0, 1))."""
    epsilon, delta = check_epsilon(epsilon), check_delta(delta, allow_zero=False)
    sensitivity = integer_sensitivity(sensitivity)
    ld = math.log(delta)
    f = lambda ls: _log_dgauss_delta(epsilon, math.exp(ls), sensitivity) - ld  # noqa: E731
    # the continuous Gaussian's σ is an excellent starting bracket (the two agree closely for σ ≫ 1)
    s0 = math.log(gaussian_sigma(epsilon, delta, sensitivity=sensitivity))
    return math.exp(bracketed_root(f, s0 - 0.05, s0 + 0.05, increasing=False, lo_min=-20.0, xtol=1e-13, rtol=1e-12))


# --------------------------------------------------------------------------- calibration
@dataclass(frozen=True)
class NoiseCalibration:
    """Scale, privacy and accuracy of one mechanism, all three consistent."""

    mechanism: str
    scale: float
    sensitivity: float
    epsilon: float
    delta: float
    rho: float | None
    std: float
    half_width: float
    confidence: float
    rule: str
    source: str


def calibrate(mechanism: Mech, *, sensitivity: float, epsilon: float | None = None, rho: float | None = None,
              scale: float | None = None, half_width: float | None = None, delta: float = 0.0,
              confidence: float = 0.95,
              gaussian_rule: Literal["analytic", "classic", "zcdp"] = "analytic") -> NoiseCalibration:
    """Three-way calibration: exactly one of privacy, scale and half-width drives the other two.

    References
    ----------
    Spec §4.1; ``002_802572da4c9a19ad.txt`` Thm 2.1.2 (Laplace), Thm 2.2.2 (Gaussian zCDP);
    [X-BW] analytic Gaussian; [X-DR] Thm A.1 classic; [X-CKS] discrete mechanisms.
    """
    given = [x is not None for x in (epsilon, rho, scale, half_width)]
    if sum(given) != 1:
        raise ValueError("give exactly one of epsilon, rho, scale and half_width")
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}")
    if gaussian_rule not in GAUSSIAN_RULES:
        raise ValueError(f"gaussian_rule must be one of {GAUSSIAN_RULES}, got {gaussian_rule!r}")
    sens = check_positive(sensitivity, name="sensitivity")
    conf = _confidence(confidence)
    d = check_delta(delta)
    gaussian_kind = mechanism in ("gaussian", "discrete_gaussian")
    if mechanism.startswith("discrete"):
        sens_i = integer_sensitivity(sens)
    if epsilon is not None:
        epsilon = check_epsilon(epsilon, at_most=EPSILON_MAX)  # narrower domain: (0, 1e4]
    if rho is not None:
        rho = check_rho(rho)
        if not gaussian_kind:
            raise ValueError("rho is for the Gaussian mechanisms only")
    if gaussian_kind and epsilon is not None and d == 0.0:
        raise ValueError("a Gaussian mechanism calibrated by epsilon needs delta > 0")
    if not gaussian_kind and d != 0.0:
        raise ValueError("the Laplace mechanisms are pure ε-DP: use delta = 0")

    source = "external"
    if mechanism in ("laplace", "discrete_laplace"):
        source = "thesis" if mechanism == "laplace" else "external"
        if epsilon is not None:
            b = sens / epsilon
        elif scale is not None:
            b = check_positive(scale, name="scale")
        else:
            b = scale_for_half_width(mechanism, half_width=half_width, confidence=conf)
        eps = sens / b
        return NoiseCalibration(mechanism, b, sens, eps, 0.0, half_square(eps, 1.0), noise_std(mechanism, scale=b),
                                _half_width(mechanism, scale=b, confidence=conf), conf,
                                "pure", source)

    # Gaussian kinds: one σ from whichever of ρ, scale, half-width or ε was given, then the other two
    discrete = mechanism == "discrete_gaussian"
    if rho is not None:
        s = sigma_for_rho(rho, sensitivity=sens)
    elif scale is not None:
        s = check_positive(scale, name="scale")
    elif half_width is not None:
        s = scale_for_half_width(mechanism, half_width=half_width, confidence=conf)
    elif gaussian_rule == "zcdp":
        s = sigma_for_rho(zcdp_rho_for_epsilon(epsilon, d), sensitivity=sens)
    elif discrete:  # exact for the discrete Gaussian under either (ε, δ) rule
        s = discrete_gaussian_sigma(epsilon, d, sensitivity=sens_i)
    else:
        s = gaussian_sigma(epsilon, d, sensitivity=sens, rule=gaussian_rule)
    r = half_square(sens, s)
    if epsilon is not None:
        eps = epsilon
    elif d == 0.0:
        eps = math.inf
    elif gaussian_rule == "zcdp":
        eps = zcdp_to_dp(r, d)
    elif discrete:
        eps = discrete_gaussian_epsilon(d, sigma=s, sensitivity=sens_i)
    elif gaussian_rule == "classic":
        eps = _classic_sigma_epsilon(d, sens) / s
        if eps >= 1.0:  # classic rule is only proven for ε < 1: fall back to the exact value
            eps = gaussian_epsilon(d, sigma=s, sensitivity=sens)
    else:
        eps = gaussian_epsilon(d, sigma=s, sensitivity=sens)
    if discrete:
        rule, source = ("zcdp" if gaussian_rule == "zcdp" else "exact"), "external"
    else:
        rule, source = gaussian_rule, ("thesis" if gaussian_rule == "zcdp" else "external")
    return NoiseCalibration(mechanism, s, sens, eps, d, r, noise_std(mechanism, scale=s),
                            _half_width(mechanism, scale=s, confidence=conf), conf, rule, source)


# --------------------------------------------------------------------------- DP vs data splitting (Ch. 3)
@dataclass(frozen=True)
class AdaptiveWidth:
    """Width τ that holds for all k adaptive [0, 1] queries at once with probability 1 − β.

    ``parameter`` is the per-query ε′ (Laplace) or ρ′ (Gaussian) at the optimum; τ is capped at ½.
    """

    method: str
    tau: float
    parameter: float | None
    noise_std: float | None
    capped: bool


ADAPTIVE_METHODS: tuple[str, ...] = ("nonadaptive", "split_binomial", "split_hoeffding", "dfhprr", "bnsssu",
                                     "rz_monitor")


def _cubic_root(a: float, b: float) -> float:
    """Positive root s of s³ − 8a·s − 8b = 0 (a, b ≥ 0; unique since the constant term is negative)."""
    roots = np.roots([1.0, 0.0, -8.0 * a, -8.0 * b])
    real = roots[np.abs(roots.imag) < 1e-9 * max(1.0, np.abs(roots).max())].real
    s = float(real.max())
    # one Newton step polishes the companion-matrix root
    f, fp = s**3 - 8 * a * s - 8 * b, 3 * s * s - 8 * a
    return s - f / fp if fp > 0 else s


def _min_crossing(dec, inc, lo: float, hi: float) -> float:
    """argmin over ln x of max(dec(x), inc(x)) for decreasing dec and increasing inc (crossing by brentq)."""
    g = lambda lx: math.log(dec(math.exp(lx))) - math.log(inc(math.exp(lx)))  # noqa: E731
    if g(hi) > 0:
        return math.exp(hi)
    if g(lo) < 0:
        return math.exp(lo)
    return math.exp(optimize.brentq(g, lo, hi, xtol=1e-12))


def _dfhprr(n: float, k: float, beta: float, noise: str) -> tuple[float, float]:
    c1 = 2.0 * math.sqrt(48.0 / n * math.log(8.0 * k / beta))
    L16 = math.log(16.0 * k / beta)
    if noise == "laplace":
        dec = lambda e: 2.0 * math.log(2.0 * k / beta) / (n * e)  # noqa: E731

        def inc(e):
            s = _cubic_root(e * k * math.tanh(e / 2.0), 4.0 * e * math.sqrt(k * L16))
            return s * s
    else:
        dec = lambda r: 2.0 / n * math.sqrt(math.log(4.0 * k / beta) / r)  # noqa: E731

        def inc(r):
            # τ ≥ g(τ), g decreasing in τ (spec §4.6, factor 8 restored): smallest fixed point
            def g(t):
                inner = max(0.0, 0.5 * math.log(math.pi * r * k) + 8.0 * L16 / t)
                return 8.0 * (r * k + 2.0 * math.sqrt(r * k * inner))
            hi = grow_until(lambda t: t - g(t) >= 0, max(1.0, g(1.0)) * 2.0, factor=2.0, cap=1e300)
            if not math.isfinite(hi):
                raise SearchLimitError("no width τ satisfies the Gaussian condition")
            return optimize.brentq(lambda t: t - g(t), 1e-12, hi, xtol=1e-15, rtol=1e-13)
    x = _min_crossing(dec, inc, math.log(1e-12), math.log(EPSILON_MAX))
    tau = max(c1, dec(x), inc(x))
    return tau, x


def _bnsssu(n: float, k: float, beta: float, noise: str) -> tuple[float, float]:
    fb = math.floor(1.0 / beta)
    P = 1.0 / (-math.expm1(fb * math.log1p(-beta)))

    def obj(v):
        lx, ld = v
        x, d = math.exp(lx), math.exp(ld)
        if d >= 1:
            return math.inf
        if noise == "laplace":
            ex = x * k * math.tanh(x / 2.0) + x * math.sqrt(2.0 * k * -ld)
            tail = math.log(2.0 * k / d) / (x * n)
        else:
            ex = k * x + 2.0 * math.sqrt(k * x * max(0.0, 0.5 * math.log(math.pi * x * k) - ld))
            tail = math.sqrt(math.log(4.0 * k / d) / x) / n
        if ex > 700:
            return math.inf
        return math.expm1(ex) + 2.0 * fb * d + tail

    lxs = np.linspace(math.log(1e-9), math.log(10.0), 60)
    lds = np.linspace(math.log(1e-30), math.log(0.5), 60)
    best = min(((obj((a, b)), a, b) for a in lxs for b in lds), key=lambda t: t[0])
    res = optimize.minimize(obj, x0=[best[1], best[2]], method="Nelder-Mead",
                            options={"xatol": 1e-9, "fatol": 1e-12 * max(best[0], 1e-300), "maxiter": 4000})
    val, lx = (res.fun, res.x[0]) if res.fun <= best[0] else (best[0], best[1])
    return float(P * val), float(math.exp(lx))


def _rz_monitor(n: float, k: float, beta: float) -> tuple[float, float]:
    def inc(r):
        B = r * k * n
        if B <= 1:
            return math.inf
        lb = math.log(B)
        return math.sqrt(2.0 / (n * beta) * (2 * B + lb + (2 * B + lb) / (B - 1.0)))

    dec = lambda r: 2.0 / n * math.sqrt(math.log(4.0 * k / beta) / r)  # noqa: E731
    lo = math.log(1.0 / (k * n)) + 1e-9
    lrs = np.linspace(lo, math.log(EPSILON_MAX), 400)
    vals = [max(inc(math.exp(x)), dec(math.exp(x))) for x in lrs]
    i = int(np.argmin(vals))
    a, b = lrs[max(i - 1, 0)], lrs[min(i + 1, len(lrs) - 1)]
    res = optimize.minimize_scalar(lambda x: max(inc(math.exp(x)), dec(math.exp(x))), bounds=(a, b),
                                   method="bounded", options={"xatol": 1e-10})
    if res.fun <= vals[i]:
        return float(res.fun), math.exp(res.x)
    return float(vals[i]), math.exp(lrs[i])


def adaptive_width_grid(n: int, beta: float, noise: Literal["laplace", "gaussian"] = "gaussian", *,
                        points: int = 25, k_max: int = 10_000) -> list[tuple[str, int, AdaptiveWidth]]:
    """Every method's width on the k grid the epsilon calculator's DP-vs-splitting tab draws ([T] Ch. 3).

    k runs over ``points`` geometric steps from 1 to min(n, ``k_max``) (rounded, duplicates dropped); a method is
    left out where it is undefined (Rogers–Zhang with Laplace noise; splitting beyond k = n). Rows: (method, k,
    width). The page, its script and the tests read this one grid.
    """
    ks = np.unique(np.round(np.geomspace(1, min(n, k_max), points)).astype(int))
    rows = []
    for m in ADAPTIVE_METHODS:
        if m == "rz_monitor" and noise == "laplace":
            continue
        for k in ks:
            if m.startswith("split") and k > n:
                continue
            rows.append((m, int(k), adaptive_width(m, n=n, k=int(k), beta=beta, noise=noise)))
    return rows


def adaptive_width(method: Literal["nonadaptive", "split_binomial", "split_hoeffding", "dfhprr", "bnsssu",
                   "rz_monitor"], *, n, k, beta, noise: Literal["laplace", "gaussian"] = "gaussian") -> AdaptiveWidth:
    """Simultaneous width τ for k adaptively chosen [0, 1] statistical queries on n records ([T] Ch. 3).

    nonadaptive: Hoeffding + union bound. split_binomial / split_hoeffding: fresh chunks of m = ⌊n/k⌋
    records ([T] §3.5; Erratum: width t/m − ½, the thesis leaves t in counts). dfhprr: [T] Thm 3.2.2
    (Erratum: the Gaussian branch regains the factor 8 of the proof). bnsssu: [T] Thm 3.3.1 with the
    App. A.2 constants (Erratum: ln(2k/δ), ln(4k/δ), √(πρ′k)). rz_monitor: [T] Thm 3.4.1 (Gaussian only).
    """
    if method not in ADAPTIVE_METHODS:
        raise ValueError(f"method must be one of {ADAPTIVE_METHODS}, got {method!r}")
    if noise not in ("laplace", "gaussian"):
        raise ValueError(f"noise must be laplace or gaussian, got {noise!r}")
    nn, kk = check_finite(n, name="n"), check_finite(k, name="k")
    b = check_delta(beta, name="beta", allow_zero=False)
    for name, v in (("n", nn), ("k", kk)):  # real-valued counts ≥ 1 (the bounds are smooth in n and k)
        if v < 1:
            raise ValidationError(f"{name} must be a finite number ≥ 1; got {v!r}")
    if method.startswith("split") and kk > nn:
        raise ValueError(f"data splitting needs k ≤ n (got k={k!r}, n={n!r})")
    if method == "rz_monitor" and noise == "laplace":
        raise ValueError("rz_monitor is defined for Gaussian noise only")
    param = std = None
    if method == "nonadaptive":
        tau = math.sqrt(math.log(2.0 * kk / b) / (2.0 * nn))
    elif method == "split_hoeffding":
        m = math.floor(nn / kk)
        tau = math.sqrt(math.log(2.0 * kk / b) / (2.0 * m))
    elif method == "split_binomial":
        m = int(math.floor(nn / kk))
        target = b / (2.0 * kk)
        ok = lambda t: stats.binom.sf(t, m, 0.5) + 2.0**-m <= target  # noqa: E731
        if not ok(m):
            tau = math.inf  # no width meets the target: vacuous, shown as ½ and marked capped like the others
        else:
            tau = smallest_true(ok, -1, m) / m - 0.5  # ok(m) holds
    elif method == "dfhprr":
        tau, param = _dfhprr(nn, kk, b, noise)
    elif method == "bnsssu":
        tau, param = _bnsssu(nn, kk, b, noise)
    else:
        tau, param = _rz_monitor(nn, kk, b)
    if param is not None:
        # per-query noise of a [0, 1] mean over n records: Laplace scale 1/(nε′), or Gaussian with ρ′ at Δ = 1/n
        std = (noise_std("laplace", scale=1.0 / (nn * param)) if noise == "laplace"
               else sigma_for_rho(param, sensitivity=1.0 / nn))
    capped = not (tau <= 0.5)
    return AdaptiveWidth(method, float(min(tau, 0.5)), param, std, capped)
