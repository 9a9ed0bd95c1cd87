"""Random sample sizes for census-size populations (n up to 10⁹) at a cost independent of n (Theorem 3).

The dense size laws of :mod:`dpdash.sampling.core` hold n + 1 log-probabilities, which stops at n = 10⁶. Here a law is
a few *pieces*, each summed only where it carries weight:

- ``points``: explicit sizes with log-weights (a point mass; the mixture's mass at n);
- ``block``: the uniform law on {a, …, b}, summed in closed form (geometric series) whatever b − a;
- ``gauss``: the discretised Gaussian on {a, …, b}. Tilted by e^{εm} it is again a Gaussian, with vertex
  v = μ + εσ² (clipped to [a, b]); sizes whose log-weight is more than ``T`` = 45 below the largest carry less than
  e^{−45}·(window) of the mass and are skipped. Windows up to ``max_points`` sizes are summed term by term
  (log-sum-exp); wider ones (σ ≳ 10³, where the weights change by less than 10⁻² per unit step where they matter) by the
  Euler–Maclaurin formula in mpmath (the normal integral plus end corrections to the third derivative), which
  is exact far below double precision there and keeps any exponent (no underflow).

Each piece gives log Σw, log Σ m·w and log Σ (n − m)·w under the tilt, so E_t̃[m]/n and 1 − E_t̃[m]/n keep their
digits (Theorem 3's bounds need 1 − f where the tilted mean sits next to n).

References
----------
003_4b386133f61617e9.txt, paper 1, Theorem 3 and Figure 2; spec §4.5 (families, discretisation, Erratum E9).
Issue 23 item 4 (census-size designs: n up to 10⁹, cost independent of n, checked against the full computation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath as mp
import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.special import logsumexp

from dpdash.sampling import core as sp
from dpdash.common.validation import check_epsilon

#: Largest population the random-size tab takes (issue 23 item 4).
MAX_N = 10**9
#: Sizes whose tilted log-weight is this far below the largest are skipped (e^{−45} ≈ 3·10⁻²⁰).
T = 45.0
#: Widest window summed term by term; wider Gaussian windows use Euler–Maclaurin (σ large, weights smooth).
MAX_POINTS = 20_000
SOURCE = f"{sp.SEED_FILE}, Theorem 3 (census-size laws: windowed sums, derived)"


@dataclass(frozen=True)
class CensusSizeLaw:
    """A size law on {0, …, n} as pieces (see the module docstring); ``log_mass`` is each piece's log-probability.

    ``pieces``: tuples ("points", sizes, log_weights) | ("block", a, b) | ("gauss", a, b, μ, σ); each piece's
    weights are normalised to its mass by :func:`_normalised`.
    """

    n: int
    pieces: tuple
    log_mass: tuple


def _check_n(n) -> int:
    n = sp.check_size(n, name="n")
    if n > MAX_N:
        raise ValueError(f"n must be at most {MAX_N:,} for random sample sizes; got {n}")
    return n


# ---------------------------------------------------------------------------------------------------------------
# sums of one piece: (shift, log Σ w, log Σ m w, log Σ (n − m) w) − shift with w(m) = e^{base(m) + εm},
# unnormalised. The shift (ε·m ≈ 10⁹ at n = 10⁹) is kept apart: added to the logs it would leave ~10⁻⁷ of
# absolute precision, and E_t̃[m] = e^{log Σ m w − log Σ w} needs their difference to 10⁻¹⁵.
# ---------------------------------------------------------------------------------------------------------------

def _points_sums(sizes, logw, eps, n) -> tuple[float, float, float, float]:
    m = np.asarray(sizes, dtype=float)
    lw = np.asarray(logw, dtype=float) + eps * (m - m.max())
    with np.errstate(divide="ignore"):
        return (eps * float(m.max()), float(logsumexp(lw)), float(logsumexp(lw + np.log(m))),
                float(logsumexp(lw + np.log(n - m))))


def _block_sums(a: int, b: int, eps: float, n: int) -> tuple[float, float, float, float]:
    """Closed forms over {a, …, b} of e^{εm}: with k = b − m ∈ {0, …, L − 1} and weights e^{−εk},
    Σ = e^{εb}(1 − e^{−Lε})/(1 − e^{−ε}) and E[k] = 1/expm1(ε) − L/expm1(Lε) (series for small Lε)."""
    L = b - a + 1
    x = eps * L
    if eps == 0:
        logz, ek = math.log(L), (L - 1) / 2
    else:
        logz = math.log(-math.expm1(-x)) - math.log(-math.expm1(-eps))   # shift εb kept apart
        if x < 1e-2:   # 1/(e^y − 1) = 1/y − 1/2 + y/12 − y³/720 + …: the 1/y terms cancel exactly
            ek = (L - 1) / 2 + eps * (1 - L * L) / 12 - eps ** 3 * (1 - float(L) ** 4) / 720
        else:
            ek = 1 / math.expm1(eps) - (L / math.expm1(x) if x < 700 else 0.0)
    em, erest = b - ek, (n - b) + ek
    return (eps * b, logz, logz + (math.log(em) if em > 0 else -math.inf),
            logz + (math.log(erest) if erest > 0 else -math.inf))


def _gauss_window(a: int, b: int, mu: float, sd: float, eps: float) -> tuple[int, int]:
    """The sizes of {a, …, b} whose tilted log-weight is within ``T`` of the largest."""
    v = mu + eps * sd * sd
    half = math.sqrt(2 * T) * sd + 2
    if v > b:   # the log-weight rises up to b with slope g there and is concave: below its tangent
        g = (v - b) / (sd * sd)
        return max(a, math.floor(b - min(half, (T + max(0.0, math.log(1 / g))) / g + 2))), b
    if v < a:
        g = (a - v) / (sd * sd)
        return a, min(b, math.ceil(a + min(half, (T + max(0.0, math.log(1 / g))) / g + 2)))
    return max(a, math.floor(v - half)), min(b, math.ceil(v + half))


def _gauss_sums(a: int, b: int, mu: float, sd: float, eps: float, n: int, *,
                max_points: int = MAX_POINTS) -> tuple[float, float, float, float]:
    """Sums of w(m) = exp(−(m − μ)²/(2σ²) + εm) over {a, …, b}: term by term in the window, else Euler–Maclaurin."""
    lo, hi = _gauss_window(a, b, mu, sd, eps)
    if hi - lo + 1 <= max_points:
        m = np.arange(lo, hi + 1, dtype=float)
        c = float(min(max(math.floor(mu + eps * sd * sd + 0.5), lo), hi))   # the heaviest size (clipped vertex)
        # h(m) − h(c) = −(m − c)(m + c − 2μ)/(2σ²) + ε(m − c): products of small differences, so no digits are
        # lost to (m − μ)²/σ² ≈ 10⁶ or ε·m ≈ 10⁹; h(c) is the shift, kept apart
        d = m - c
        lw = d * (eps - (m + c - 2 * mu) / (2 * sd * sd))
        with np.errstate(divide="ignore"):
            return (eps * c - (c - mu) ** 2 / (2 * sd * sd), float(logsumexp(lw)), float(logsumexp(lw + np.log(m))),
                    float(logsumexp(lw + np.log(n - m))))
    return _gauss_sums_em(a, b, mu, sd, eps, n)


def _gauss_sums_em(a: int, b: int, mu: float, sd: float, eps: float, n: int) -> tuple[float, float, float, float]:
    """Euler–Maclaurin in mpmath: Σ_{m=a}^{b} f(m) = ∫f + (f(a) + f(b))/2 + (f′(b) − f′(a))/12
    − (f‴(b) − f‴(a))/720, for f = w, m·w and (n − m)·w. w = e^{C}·N(v, σ²)-shaped with v = μ + εσ², so
    ∫w = e^{C}σ√(2π)(Φ(β) − Φ(α)), ∫(m − v)w = σ²(w(a) − w(b)). Used only where the window exceeds
    ``MAX_POINTS`` sizes, i.e. where |w′/w| ≲ 2·10⁻³ on the weight that matters (the Gaussian's σ ≳ 10³): the
    next term, of order (w′/w)⁵/30240, is below 10⁻¹⁷ of the sum."""
    with mp.workdps(40):
        mu_, s, e = mp.mpf(mu), mp.mpf(sd), mp.mpf(eps)
        A, B, N = mp.mpf(a), mp.mpf(b), mp.mpf(n)
        v = mu_ + e * s * s
        C = e * mu_ + e * e * s * s / 2   # h(m) = −(m − v)²/(2σ²) + C

        up = -1 / (s * s)
        wa, wb = (mp.exp(-(x - v) ** 2 / (2 * s * s) + C) for x in (A, B))
        ua, ub = -(A - v) / (s * s), -(B - v) / (s * s)   # w′/w at the ends
        d1 = {A: wa * ua, B: wb * ub}
        d2 = {A: wa * (ua ** 2 + up), B: wb * (ub ** 2 + up)}
        d3 = {A: wa * (ua ** 3 + 3 * ua * up), B: wb * (ub ** 3 + 3 * ub * up)}
        alpha, beta = (A - v) / s, (B - v) / s
        phi = mp.ncdf(beta) - mp.ncdf(alpha) if alpha < 0 else mp.ncdf(-alpha) - mp.ncdf(-beta)
        I0 = mp.exp(C) * s * mp.sqrt(2 * mp.pi) * phi
        s0 = I0 + (wa + wb) / 2 + (d1[B] - d1[A]) / 12 - (d3[B] - d3[A]) / 720
        # f = m·w: f′ = w + m·w′, f‴ = 3w″ + m·w‴
        i1 = v * I0 + s * s * (wa - wb)
        s1 = (i1 + (A * wa + B * wb) / 2 + ((wb + B * d1[B]) - (wa + A * d1[A])) / 12
              - ((3 * d2[B] + B * d3[B]) - (3 * d2[A] + A * d3[A])) / 720)
        # f = (n − m)·w: f′ = −w + (n − m)·w′, f‴ = −3w″ + (n − m)·w‴
        i2 = (N - v) * I0 - s * s * (wa - wb)
        s2 = (i2 + ((N - A) * wa + (N - B) * wb) / 2 + ((-wb + (N - B) * d1[B]) - (-wa + (N - A) * d1[A])) / 12
              - ((-3 * d2[B] + (N - B) * d3[B]) - (-3 * d2[A] + (N - A) * d3[A])) / 720)
        return (float(mp.log(s0)), 0.0) + tuple(float(mp.log(x / s0)) if x > 0 else -math.inf for x in (s1, s2))


def _piece_sums(piece, eps: float, n: int, max_points: int) -> tuple[float, float, float, float]:
    kind = piece[0]
    if kind == "points":
        return _points_sums(piece[1], piece[2], eps, n)
    if kind == "block":
        return _block_sums(piece[1], piece[2], eps, n)
    return _gauss_sums(piece[1], piece[2], piece[3], piece[4], eps, n, max_points=max_points)


def _law_sums(law: CensusSizeLaw, eps: float, max_points: int = MAX_POINTS, heads0=None) -> tuple[float, float, float]:
    """(log Σ t̃-weight, log Σ m·t̃-weight, log Σ (n − m)·t̃-weight) over all pieces, each scaled to its mass, all
    less one common constant (only their differences are used: E_t̃[m] = e^{second − first}). ``heads0``: each
    piece's (shift, log Σ w) at ε = 0 (its normalisation), when already known."""
    if len(law.pieces) == 1:   # one piece: its normalisation cancels
        return _piece_sums(law.pieces[0], eps, law.n, max_points)[1:]
    heads0 = heads0 or _heads0(law, max_points)
    heads, tails = [], []
    for piece, lmass, (sh0, z0) in zip(law.pieces, law.log_mass, heads0):
        sh, z, s1, s2 = _piece_sums(piece, eps, law.n, max_points)
        heads.append((lmass - z0) + (sh - sh0) if lmass > -math.inf else -math.inf)
        tails.append((z, s1, s2))
    top = max(heads)
    p = np.array([[h - top + x for x in t] for h, t in zip(heads, tails)])
    return float(logsumexp(p[:, 0])), float(logsumexp(p[:, 1])), float(logsumexp(p[:, 2]))


def _heads0(law: CensusSizeLaw, max_points: int = MAX_POINTS) -> list[tuple[float, float]]:
    return [_piece_sums(piece, 0.0, law.n, max_points)[:2] for piece in law.pieces]


# ---------------------------------------------------------------------------------------------------------------
# laws
# ---------------------------------------------------------------------------------------------------------------

def census_size_law(n: int, *, family: str, mean: float, sd: float, low: int, high: int, base: str = "gaussian",
                    p_full: float = 0.0) -> CensusSizeLaw:
    """The size law the Random-size tab's controls describe (as :func:`dpdash.sampling.core.size_law_from_controls`),
    for n up to 10⁹: point at floor(mean + ½), Gaussian (σ = 0: that point), uniform {low, …, high}, mixture."""
    n = _check_n(n)
    if family == "mixture":
        if base == "mixture":
            raise ValueError("the mixture's base must be gaussian, point or uniform.")
        p = float(p_full)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p_full must lie in [0, 1]; got {p_full!r}.")
        inner = census_size_law(n, family=base, mean=mean, sd=sd, low=low, high=high)
        pieces, masses = list(inner.pieces), [lm + math.log1p(-p) if p < 1 else -math.inf for lm in inner.log_mass]
        if p > 0:
            pieces.append(("points", np.array([n], dtype=float), np.array([0.0])))
            masses.append(math.log(p))
        return CensusSizeLaw(n, tuple(pieces), tuple(masses))
    mu, s = float(mean), float(sd)
    if not math.isfinite(mu):
        raise ValueError(f"mean must be finite; got {mean!r}.")
    if family == "uniform":
        hi = sp.check_int_in_range(high, name="high", lo=0, hi=n)
        lo = sp.check_int_in_range(low, name="low", lo=0, hi=n)
        if lo > hi:
            raise ValueError(f"low must not exceed high; got low={low}, high={hi}.")
        return CensusSizeLaw(n, (("block", lo, hi),), (0.0,))
    if family == "gaussian":
        if not math.isfinite(s) or s < 0:
            raise ValueError(f"sd must be a finite number ≥ 0; got {sd!r}.")
        if s > 0:
            return CensusSizeLaw(n, (("gauss", 0, n, mu, s),), (0.0,))
    elif family != "point":
        raise ValueError(f"family must be gaussian, point, uniform or mixture; got {family!r}.")
    m = int(min(max(math.floor(mu + 0.5), 0), n))
    return CensusSizeLaw(n, (("points", np.array([m], dtype=float), np.array([0.0])),), (0.0,))


def amplify(law: CensusSizeLaw, *, epsilon: float, max_points: int = MAX_POINTS) -> sp.RandomSizeBounds:
    """Theorem 3's lower and upper ε′ for a census-size law (as :func:`dpdash.sampling.core.amplify_random_size`)."""
    eps = check_epsilon(epsilon, allow_zero=True)
    z, s1, s2 = _law_sums(law, eps, max_points)
    z0, m1, _ = _law_sums(law, 0.0, max_points)
    ln = math.log(law.n)
    lower, upper = sp.theorem3_bounds_from_fraction(s1 - z - ln, s2 - z - ln, epsilon=eps)
    # e^{log} of a mean at n comes back as n·(1 ± 10⁻¹⁶): a mean of sizes in [0, n] is clipped to it
    et, mean = min(float(law.n), math.exp(s1 - z)), min(float(law.n), math.exp(m1 - z0))
    return sp.RandomSizeBounds(law.n, mean, et, lower, upper, et / law.n * eps, SOURCE)


def calibrate(law: CensusSizeLaw, *, epsilon_target: float, max_points: int = MAX_POINTS) -> sp.Calibration:
    """Per-record ε whose Theorem 3 upper bound equals the target (bracket as in
    :func:`dpdash.sampling.core.calibrate_random_size`; Brent's method, at most 200 evaluations)."""
    t = check_epsilon(epsilon_target, name="epsilon_target")
    n = law.n
    z0, m1, _ = _law_sums(law, 0.0, max_points)
    lm = m1 - z0
    src = f"{sp.SEED_FILE}, Theorem 3 upper bound, inverted by bisection"
    if lm == -math.inf:
        return sp.Calibration(t, math.inf, math.inf, 0.0, src, "derived")
    ln = math.log(n)
    lo, hi = t, sp._log1p_expm1_over_q(t, min(math.exp(lm) / n, 1.0), log_q=min(lm - ln, 0.0))

    h0 = _heads0(law, max_points)

    def upper(e: float) -> float:
        z, s1, s2 = _law_sums(law, e, max_points, h0)
        return sp.theorem3_bounds_from_fraction(s1 - z - ln, s2 - z - ln, epsilon=e)[1]

    lam = lo if upper(lo) >= t else brentq(lambda e: upper(e) - t, lo, hi * (1 + 1e-12) + 1e-300, xtol=1e-15,
                                           rtol=1e-15, maxiter=200)
    mean = math.exp(lm)
    return sp.Calibration(t, float(lam), t * n / mean if mean > 0 else math.inf, 1.0 / lam, src, "derived")


def sigma_fractions(n: int, *, mean: float, sds, epsilon: float, max_points: int = MAX_POINTS) -> np.ndarray:
    """For Gaussian laws at each σ: columns E_t̃[m], log(E_t̃[m]/n), log(1 − E_t̃[m]/n) (the bounds-vs-σ curve)."""
    n = _check_n(n)
    out = []
    for s in np.asarray(sds, dtype=float):
        law = census_size_law(n, family="gaussian", mean=mean, sd=s, low=0, high=n)
        # one piece: its normalisation cancels in E_t̃[m], so only the tilted sums are needed
        _, z, s1, s2 = _piece_sums(law.pieces[0], float(epsilon), n, max_points)
        out.append((math.exp(s1 - z), s1 - z - math.log(n), s2 - z - math.log(n)))
    return np.array(out)


def pmf_table(law: CensusSizeLaw, *, epsilon: float, max_points: int = 2000) -> pd.DataFrame:
    """t and the tilted t̃ binned over at most ``max_points`` bins covering where either carries weight.

    Bin masses: exact for points; for blocks and Gaussians the weight at the bin's centre times its width (exact
    for bins of one size; wider bins come from windows ≥ 2,000 sizes wide), each curve normalised to sum 1."""
    eps = float(epsilon)
    n = law.n
    ends = []
    for piece in law.pieces:
        if piece[0] == "points":
            ends += [float(piece[1].min()), float(piece[1].max())]
        elif piece[0] == "block":
            ends += [piece[1], piece[2]]
        else:
            for e in (0.0, eps):
                ends += list(_gauss_window(piece[1], piece[2], piece[3], piece[4], e))
    # the range where either law has weight, ignoring a mixture's far point unless it is all there is
    a, b = int(max(0, math.floor(min(ends)))), int(min(n, math.ceil(max(ends))))
    width = max(1, math.ceil((b - a + 1) / max_points))
    starts = np.arange(a, b + 1, width)
    x = starts + (np.minimum(starts + width - 1, b) - starts) / 2
    logs = {}
    for tilt in (0.0, eps):
        acc = np.full(starts.size, -np.inf)
        for piece, lmass in zip(law.pieces, law.log_mass):
            sh0, z0 = _piece_sums(piece, 0.0, n, MAX_POINTS)[:2]
            if piece[0] == "points":
                idx = np.clip(((piece[1] - a) // width).astype(int), 0, starts.size - 1)
                for i, val in zip(idx, lmass - sh0 - z0 + piece[2] + tilt * (piece[1] - b)):
                    acc[i] = np.logaddexp(acc[i], val)
                continue
            if piece[0] == "block":
                base = np.where((x >= piece[1]) & (x <= piece[2]), 0.0, -np.inf)
            else:
                base = -0.5 * ((x - piece[3]) / piece[4]) ** 2
            with np.errstate(invalid="ignore"):
                # each curve is normalised below, so e^{εb} (huge) is left out of both
                acc = np.logaddexp(acc, lmass - sh0 - z0 + base + tilt * (x - b) + math.log(width))
        logs[tilt] = acc - logsumexp(acc[np.isfinite(acc)]) if np.isfinite(acc).any() else acc
    return pd.DataFrame({"size_from": starts, "size_to": np.minimum(starts + width - 1, b),
                         "t": np.exp(logs[0.0]), "t_tilted": np.exp(logs[eps])})
