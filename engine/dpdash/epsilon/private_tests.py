"""Private chi-square tests: goodness of fit and independence on noisy counts.

Pure Python (no streamlit). Spec ``epsilon_calculator.md`` §4.7, following Rogers 2017,
*Leveraging Privacy in Data Analysis* (seed ``002_802572da4c9a19ad.txt``), Ch. 6–7: eq. 6.4 (naive
statistic), Thm 6.1.7 (AsymptGOF), eqs 7.14/7.19 (nonprojected/projected statistics), Lemma 6.2.3
(independence covariance), Alg. 11 (2MLE) and Alg. 13 (AsymptIndep), eq. 7.24 and Alg. 15 (GenChiTest),
Algs 8 and 16 (Monte Carlo critical values). Weighted chi-square tails by exact convolution or Imhof (1961).
Monte Carlo grids run in parallel through ``dpdash.common.parallel``, one spawned seed per task, so results do not
depend
on n_jobs or on where the tasks run.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Callable, Literal

import numpy as np
import pandas as pd
from scipy import integrate, optimize, special, stats

from dpdash.common.validation import (ValidationError, as_generator, check_delta, check_finite, check_int_in_range,
                                      check_positive, check_probability_vector, check_size)
from dpdash.common import ledger
from dpdash.common.parallel import imap_unordered

MAX_TRIALS = 100_000


# --------------------------------------------------------------------------- validation
# Scalars go through dpdash.common.validation; α is a level in (0, 1).
def _p0(p0) -> np.ndarray:
    """Null probabilities: a probability vector with d ≥ 2 entries, all > 0 (narrower than a probability vector)."""
    p = check_probability_vector(np.asarray(p0, dtype=float).ravel(), name="null probabilities")
    if p.size < 2 or np.any(p <= 0):
        raise ValidationError(f"null probabilities must be d ≥ 2 numbers > 0 that sum to 1; got {p.size} values, "
                              f"smallest {p.min():.6g}")
    return p


def _alpha(a) -> float:
    return check_delta(a, name="alpha", allow_zero=False)


# --------------------------------------------------------------------------- weighted chi-square
def _weights(weights) -> np.ndarray:
    w = np.asarray(weights, dtype=float).ravel()
    if w.size == 0 or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("weights must be a non-empty list of finite values ≥ 0")
    w = w[w > 0]
    if w.size == 0:
        raise ValueError("at least one weight must be > 0")
    return w


def _distinct(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    vals, counts = [], []
    for x in np.sort(w)[::-1]:
        if vals and abs(x - vals[-1]) <= 1e-12 * max(1.0, abs(x)):
            counts[-1] += 1
        else:
            vals.append(float(x))
            counts.append(1)
    return np.array(vals), np.array(counts)


def _sf_convolution(x: float, vals: np.ndarray, counts: np.ndarray) -> float:
    if x <= 0:
        return 1.0
    if vals.size == 1:
        return float(stats.chi2.sf(x / vals[0], counts[0]))
    # Q = aX + bY, X ~ χ²_{m1}, Y ~ χ²_{m2}; integrate over Y with y = t² (smooth integrand for any m2)
    (a, b), (m1, m2) = vals, counts
    tmax = math.sqrt(x / b)
    lognorm = -(m2 / 2.0) * math.log(2.0) - math.lgamma(m2 / 2.0)

    def f(t):
        y = t * t
        if t > 0:
            dens = math.exp(lognorm + (m2 - 1) * math.log(t) - y / 2.0) * 2.0
        else:
            dens = 2.0 * math.exp(lognorm) if m2 == 1 else 0.0
        # special.chdtrc is chi2.sf without the distribution-object overhead (~30× faster per call)
        return dens * special.chdtrc(m1, max(0.0, (x - b * y) / a))

    # beyond √χ²_{m2} quantile 1e-17 the density is negligible; a long empty range would hide the mass from quad
    upper = min(tmax, math.sqrt(stats.chi2.isf(1e-17, m2)))
    val, _ = integrate.quad(f, 0.0, upper, epsabs=1e-13, epsrel=1e-11, limit=400)
    return float(min(1.0, max(0.0, val + stats.chi2.sf(x / b, m2))))


def _sf_imhof(x: float, w: np.ndarray, err: float = 1e-7) -> float:
    """Imhof (1961): P(Q > x) = ½ + (1/π)∫₀^∞ sin θ(u)/(u ρ(u)) du, truncated at U for error ``err``."""
    # the tail probability is scale-free: normalising by the largest weight keeps the oscillation tame
    scale = float(w.max())
    w, x = w / scale, x / scale
    # Imhof's bound: truncation error ≤ 1/(π k U^k Π λⱼ^{1/2}). Since every factor (1 + λ²u²)^{1/4} ≥ 1, the
    # bound also holds with only the m largest weights (k = m/2); the best m keeps U small when some λ are tiny.
    ws = np.sort(w)[::-1]
    m = np.arange(1, ws.size + 1)
    km = 0.5 * m
    logUs = -(np.log(err * math.pi * km) + 0.5 * np.cumsum(np.log(ws))) / km
    U = float(math.exp(np.min(logUs)))

    def integrand(u):
        if u == 0.0:
            return 0.5 * (np.sum(w) - x)
        theta = 0.5 * np.sum(np.arctan(w * u)) - 0.5 * x * u
        logrho = 0.25 * np.sum(np.log1p((w * u) ** 2))
        return math.sin(theta) / (u * math.exp(logrho))

    omega = 0.5 * x
    # Far out θ(u) = g(u) − ωu with g = ½Σ arctan(λu) slowly varying, so sin θ = sin g·cos ωu − cos g·sin ωu:
    # beyond A the two pieces go to QUADPACK's Fourier integrator (QAWF) instead of chasing the oscillation.
    fourier = omega * U > 60.0
    A = min(U, max(1.0, 12.0 * math.pi / omega)) if fourier else U
    # geometric sub-intervals (ratio 1.5) keep quad accurate on [0, A]
    u0 = min(A, 0.5)
    edges = [0.0, u0]
    while edges[-1] < A:
        edges.append(min(A, edges[-1] * 1.5))
    # P(Q > x) ≤ P(λ_max χ²_r > x): far in the tail the oscillating integral cannot resolve the tiny value
    upper = float(stats.chi2.sf(x, w.size))
    total = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        for lo, hi in zip(edges[:-1], edges[1:]):
            v, _ = integrate.quad(integrand, lo, hi, epsabs=1e-12, epsrel=1e-10, limit=200)
            total += v
        if fourier:
            def amp(u, trig):
                g = 0.5 * np.sum(np.arctan(w * u))
                return trig(g) / (u * math.exp(0.25 * np.sum(np.log1p((w * u) ** 2))))
            c, _ = integrate.quad(amp, A, np.inf, args=(math.sin,), weight="cos", wvar=omega, epsabs=1e-12, limlst=100)
            s_, _ = integrate.quad(amp, A, np.inf, args=(math.cos,), weight="sin", wvar=omega, epsabs=1e-12, limlst=100)
            total += c - s_
    return float(min(upper, max(0.0, 0.5 + total / math.pi)))


def weighted_chisq_sf(x, weights, *, method: Literal["auto", "imhof", "convolution", "mc"] = "auto", rng=None) -> float:
    """P(Σλⱼχ²₁ > x).

    "convolution" (≤ 2 distinct weights): exact 1-D integral; "imhof": Imhof 1961 [X-Imh];
    "mc": 2e5 draws of χ²₁ (needs ``rng``); "auto" picks convolution when possible, else Imhof.

    >>> round(weighted_chisq_sf(9.0, [1] * 5), 7)
    0.1090642
    """
    w = _weights(weights)
    x = check_finite(x, name="x")
    vals, counts = _distinct(w)
    if method == "auto":
        method = "convolution" if vals.size <= 2 else "imhof"
    if method == "convolution":
        if vals.size > 2:
            raise ValueError("the convolution method needs at most 2 distinct weight values")
        return _sf_convolution(x, vals, counts)
    if method == "imhof":
        if x <= 0:
            return 1.0
        return _sf_imhof(x, w)
    if method == "mc":
        g = as_generator(0 if rng is None else rng)
        draws = g.chisquare(1, (200_000, w.size)) @ w
        return float(np.mean(draws > x))
    raise ValueError(f"method must be auto, imhof, convolution or mc; got {method!r}")


def weighted_chisq_quantile(weights, *, alpha, method="auto", rng=None) -> float:
    """q with P(Σλⱼχ²₁ > q) = alpha (brentq to 1e-6; the MC method uses the empirical quantile)."""
    w = _weights(weights)
    a = _alpha(alpha)
    if method == "mc":
        g = as_generator(0 if rng is None else rng)
        draws = g.chisquare(1, (200_000, w.size)) @ w
        return float(np.quantile(draws, 1.0 - a))
    lo = float(w.min() * stats.chi2.isf(a, w.size))
    hi = float(w.max() * stats.chi2.isf(a, w.size))
    if hi <= lo:
        return lo
    f = lambda q: weighted_chisq_sf(q, w, method=method) - a  # noqa: E731
    return float(optimize.brentq(f, lo * (1 - 1e-9), hi * (1 + 1e-9), xtol=1e-6 * max(1.0, hi) * 1e-3, rtol=1e-10))


# --------------------------------------------------------------------------- null weights
def gof_null_weights(p0, *, n, rho) -> np.ndarray:
    """AsymptGOF weights λ = eig(I − √p⁰√p⁰ᵀ + Diag(1/(nρp⁰))) ([T] Thm 6.1.7), descending.

    Equals the printed eig(BᵀΛB) since WᵀΛW = ‖U + ΛV‖² [derived]. Erratum (§6.1.3): V = √ρ·Z.
    """
    p = _p0(p0)
    n, rho = check_positive(n, name="n"), check_positive(rho, name="rho")
    s = np.sqrt(p)
    m = np.eye(p.size) - np.outer(s, s) + np.diag(1.0 / (n * rho * p))
    return np.sort(np.linalg.eigvalsh(m))[::-1]


def _grad_f(pi1: np.ndarray, pi2: np.ndarray) -> np.ndarray:
    """∇f of f(π⁽¹⁾, π⁽²⁾) = π⁽¹⁾π⁽²⁾ᵀ (row by row) in the free parameters θ = (π⁽¹⁾_{<r}, π⁽²⁾_{<c}).

    [T] Lemma 6.2.3.
    """
    r, c = pi1.size, pi2.size
    # ∂(π⁽¹⁾ᵢπ⁽²⁾ⱼ)/∂π⁽¹⁾ₖ = π⁽²⁾ⱼ(δᵢₖ − δᵢᵣ) because π⁽¹⁾ᵣ = 1 − Σ_{k<r}π⁽¹⁾ₖ; likewise for the columns
    d1 = np.vstack([np.eye(r - 1), -np.ones((1, r - 1))])
    d2 = np.vstack([np.eye(c - 1), -np.ones((1, c - 1))])
    return np.hstack([np.kron(d1, pi2[:, None]), np.kron(pi1[:, None], d2)])


def _sigma_ind(pi1: np.ndarray, pi2: np.ndarray) -> np.ndarray:
    """Σ_ind = I − √p√pᵀ − Γ(ΓᵀΓ)⁻¹Γᵀ with Γ = Diag(p)^{-1/2}∇f, p = π⁽¹⁾π⁽²⁾ᵀ row by row ([T] Lemma 6.2.3)."""
    p = np.outer(pi1, pi2).ravel()
    gam = _grad_f(pi1, pi2) / np.sqrt(p)[:, None]
    proj = gam @ np.linalg.solve(gam.T @ gam, gam.T)
    s = np.sqrt(p)
    return np.eye(p.size) - np.outer(s, s) - proj


def indep_null_weights(pi1, pi2, *, n, rho) -> np.ndarray:
    """AsymptIndep weights eig(Σ_ind + Diag(1/(nρp̃))), descending, zeros dropped.

    References: seed 002_802572da4c9a19ad.txt, Lemma 6.2.3 and eqs 6.19–6.21 (Alg. 13). The printed
    eig(B̃ᵀΛ̃B̃) equals this, as for AsymptGOF, since W̃ᵀΛ̃W̃ = ‖Ũ + Diag(nρp̃)^{-1/2}Z√ρ‖² [derived].
    """
    a, b = _p0(pi1), _p0(pi2)
    n, rho = check_positive(n, name="n"), check_positive(rho, name="rho")
    p = np.outer(a, b).ravel()
    m = _sigma_ind(a, b) + np.diag(1.0 / (n * rho * p))
    ev = np.sort(np.linalg.eigvalsh(m))[::-1]
    return ev[ev > 1e-12]


# --------------------------------------------------------------------------- 2MLE (Alg. 11)
def project_counts(noisy_counts, *, n, gamma=1.0) -> np.ndarray:
    """The table h closest to the noisy counts h̃ with h ≥ 0 and Σh = n: program (6.17).

    Minimises (1−γ)‖h̃ − h‖₁ + γ‖h̃ − h‖₂² (γ = 1 for Gaussian noise, a small γ > 0 for Laplace). The program
    separates once the constraint Σh = n gets a multiplier τ; each cell's minimiser over h ≥ 0 is
    hᵢ(τ) = max(0, h̃ᵢ − S(τ, 1−γ)/(2γ)), S the soft threshold, and Σhᵢ(τ) is nonincreasing, so τ is the root
    of Σhᵢ(τ) = n (scipy ``brentq``), polished by one exact step on its linear piece [derived; for γ = 1 this
    is the Euclidean projection onto the scaled simplex]. The thesis gives no closed form.

    References: seed 002_802572da4c9a19ad.txt, §6.2.1 eq. 6.17 and Alg. 11.
    """
    x = np.asarray(noisy_counts, dtype=float)
    shape = x.shape
    x = x.ravel()
    if x.size < 1 or not np.all(np.isfinite(x)):
        raise ValueError("noisy counts must be a non-empty array of finite numbers")
    n = check_positive(n, name="n")
    g = float(gamma)
    if not (0 < g <= 1):
        raise ValueError(f"gamma must lie in (0, 1], got {gamma!r}")
    a = 1.0 - g

    def cells(tau: float) -> np.ndarray:
        shift = math.copysign(max(abs(tau) - a, 0.0), tau) / (2.0 * g)
        return np.maximum(0.0, x - shift)

    excess = lambda tau: float(cells(tau).sum()) - n  # noqa: E731
    # at τ = −(a + 2g(n + max|h̃|)) every cell is ≥ n, at τ = a + 2g·max|h̃| every cell is 0
    span = n + float(np.max(np.abs(x)))
    lo, hi = -(a + 2.0 * g * span), a + 2.0 * g * span
    tau = optimize.brentq(excess, lo, hi, xtol=1e-13 * max(1.0, hi), rtol=4 * np.finfo(float).eps)
    h = cells(tau)
    moving = (h > 0) & (abs(tau) > a)
    if np.any(moving):
        # Σh is linear in τ near the root with slope −|moving|/(2γ): one Newton step lands on it exactly
        t2 = tau + (h.sum() - n) * 2.0 * g / np.count_nonzero(moving)
        h2 = cells(t2)
        if abs(h2.sum() - n) <= abs(h.sum() - n):
            h = h2
    return h.reshape(shape)


@dataclass(frozen=True)
class TwoStepMLE:
    """2MLE output: the projected table (cells ≥ 0, summing to n) and its MLE marginals (6.15)."""

    table: np.ndarray
    pi1: np.ndarray
    pi2: np.ndarray


def two_step_mle(noisy_table, *, n, gamma=1.0, min_count=5.0) -> TwoStepMLE | None:
    """Two-step MLE of the marginals from a noisy r × c table; None (NULL) if a projected cell is < 5.

    Step 1 projects the noisy table onto {h ≥ 0, Σh = n} (``project_counts``, program 6.17); step 2 takes
    the independence MLE (6.15) of the projected table: row and column sums over n.

    References: seed 002_802572da4c9a19ad.txt, Alg. 11 (γ = 1 for Gaussian noise), Lemma 6.2.1.
    Erratum (§4.9 of the spec): Lemma 6.2.1 prints f(π̂⁽¹⁾, π̂⁽¹⁾) and swapped ranges; the MLE is used.
    """
    t = np.asarray(noisy_table, dtype=float)
    if t.ndim != 2 or min(t.shape) < 2:
        raise ValueError("noisy_table must be an r × c array with r, c ≥ 2")
    n = check_positive(n, name="n")
    h = project_counts(t, n=n, gamma=gamma)
    if np.any(h < min_count):
        return None
    return TwoStepMLE(h, h.sum(axis=1) / n, h.sum(axis=0) / n)


# --------------------------------------------------------------------------- statistics
def classical_statistic(counts, p0) -> float:
    """Pearson statistic T = Σ(hᵢ − np⁰ᵢ)²/(np⁰ᵢ) with n = Σhᵢ ([T] Alg. 7).

    For noisy counts with a known public n use ``naive_statistic`` ([T] eq. 6.4).
    """
    h = np.asarray(counts, dtype=float).ravel()
    p = _p0(p0)
    if h.size != p.size:
        raise ValueError("counts and p0 must have the same length")
    n = h.sum()
    return float(np.sum((h - n * p) ** 2 / (n * p)))


def naive_statistic(noisy_counts, p0, *, n) -> float:
    """T = Σ(H̃ᵢ − np⁰ᵢ)²/(np⁰ᵢ) ([T] eq. 6.4): the classical statistic on noisy counts."""
    h = np.asarray(noisy_counts, dtype=float)
    p = _p0(p0)
    out = np.sum((h - n * p) ** 2 / (n * p), axis=-1)
    return out if np.ndim(out) else float(out)


def _q_parts(h: np.ndarray, p: np.ndarray, n: float, rho: float):
    v = (h - n * p) / math.sqrt(n)
    inv = 1.0 / (n * rho)
    om = p / (p + inv)
    first = np.sum(v * v / (p + inv), axis=-1)
    second = n * rho / om.sum() * np.sum(om * v, axis=-1) ** 2
    return first, second


def nonprojected_statistic(noisy_counts, p0, *, n, rho) -> float:
    """Q of [T] eq. 7.14 (→ χ²_d under H₀ when nρ → ρ* > 0)."""
    h = np.asarray(noisy_counts, dtype=float)
    p = _p0(p0)
    f, s = _q_parts(h, p, check_positive(n, name="n"), check_positive(rho, name="rho"))
    return f + s if np.ndim(f) else float(f + s)


def projected_statistic(noisy_counts, p0, *, n, rho) -> float:
    """𝒬 of [T] eq. 7.19 = Q − (ρ/d)(ñ − n)² (→ χ²_{d−1} under H₀ for ρ = Ω(1/n))."""
    h = np.asarray(noisy_counts, dtype=float)
    p = _p0(p0)
    n, rho = check_positive(n, name="n"), check_positive(rho, name="rho")
    f, s = _q_parts(h, p, n, rho)
    nt = np.sum(h, axis=-1)
    out = f + s - rho / p.size * (nt - n) ** 2
    return out if np.ndim(out) else float(out)


def _sigma0(p: np.ndarray, nrho: float) -> np.ndarray:
    return np.diag(p) - np.outer(p, p) + np.eye(p.size) / nrho


def _table(noisy_table) -> np.ndarray:
    t = np.asarray(noisy_table, dtype=float)
    if t.ndim != 2 or min(t.shape) < 2:
        raise ValueError("noisy_table must be an r × c array with r, c ≥ 2")
    if not np.all(np.isfinite(t)):
        raise ValueError("noisy_table must contain finite numbers only")
    return t


def projected_independence_statistic(noisy_table, *, n, rho) -> float | None:
    """Projected GenChiTest statistic for independence in an r × c table, or None for "no conclusion".

    θ̂ minimises (h̃ − np(θ))ᵀΠM̂Π(h̃ − np(θ))/n with M̂ = Σ⁰_{nρ}(φ(h̃))⁻¹ and φ the noisy marginals (7.24)
    (scipy ``least_squares``, Levenberg–Marquardt, analytic Jacobian). Under H₀ it is → χ²_{(r−1)(c−1)}.
    None if any n·π̃ᵢπ̃ⱼ ≤ 5 (the rule of thumb of §7.3.1).

    References: seed 002_802572da4c9a19ad.txt, Alg. 15, eqs 7.23–7.24, Thm 7.3.1. Erratum: Alg. 15 writes
    m for s.
    """
    t = _table(noisy_table)
    n, rho = check_positive(n, name="n"), check_positive(rho, name="rho")
    r, c = t.shape
    nt = t.sum()
    if nt <= 0:
        return None
    a, b = t.sum(axis=1) / nt, t.sum(axis=0) / nt
    if np.any(a <= 0) or np.any(b <= 0) or np.any(n * np.outer(a, b) <= 5):
        return None
    p_hat = np.outer(a, b).ravel()
    d = r * c
    M = np.linalg.inv(_sigma0(p_hat, n * rho))
    P = np.eye(d) - np.ones((d, d)) / d
    A = P @ M @ P
    ev, U = np.linalg.eigh(A)
    L = (U * np.sqrt(np.clip(ev, 0, None))).T
    h = t.ravel()
    sn = math.sqrt(n)

    def split(th):
        return np.append(th[: r - 1], 1.0 - th[: r - 1].sum()), np.append(th[r - 1:], 1.0 - th[r - 1:].sum())

    def resid(th):
        pa, pb = split(th)
        return L @ (h - n * np.outer(pa, pb).ravel()) / sn

    def jac(th):
        return -sn * (L @ _grad_f(*split(th)))

    x0 = np.concatenate([a[:-1], b[:-1]])
    res = optimize.least_squares(resid, x0, jac=jac, method="lm", xtol=1e-12, ftol=1e-12)
    val = float(np.sum(res.fun**2))
    return min(val, float(np.sum(resid(x0) ** 2)))


def asympt_indep_statistic(noisy_table, *, n, pi1, pi2) -> float:
    """T̃ (6.18): Pearson's statistic of the noisy table against n·p̃ with p̃ = π̃⁽¹⁾π̃⁽²⁾ᵀ (from 2MLE).

    References: seed 002_802572da4c9a19ad.txt, eq. 6.18 and Alg. 13.
    """
    t = _table(noisy_table)
    n = check_positive(n, name="n")
    a, b = _p0(pi1), _p0(pi2)
    if t.shape != (a.size, b.size):
        raise ValueError(f"the table is {t.shape[0]} × {t.shape[1]} but the marginals have {a.size} and {b.size} "
                         "entries")
    e = n * np.outer(a, b)
    return float(np.sum((t - e) ** 2 / e))


@dataclass(frozen=True)
class IndependenceTestResult:
    """One private independence test on a noisy table; statistic/critical value/reject are None for "no conclusion"."""

    test: str
    statistic: float | None
    critical_value: float | None
    reject: bool
    pi1: np.ndarray | None
    pi2: np.ndarray | None


def _sf_below(x: float, w: np.ndarray, alpha: float) -> bool:
    """Whether P(Σλⱼχ²₁ > x) < alpha, settled where possible by two-weight bounds before Imhof.

    Lowering (raising) every weight lowers (raises) the tail. Splitting the sorted weights at their largest
    ratio gap and replacing each group by its smallest (largest) weight gives two-value bounds that the exact
    convolution evaluates quickly; the AsymptIndep weights cluster near 1 and near 1/(nρp̃), so they are tight.
    """
    ws = np.sort(np.asarray(w, dtype=float))[::-1]
    if _distinct(ws)[0].size <= 2:
        return weighted_chisq_sf(x, ws) < alpha
    j = int(np.argmax(np.log(ws[:-1]) - np.log(ws[1:]))) + 1
    lower = np.concatenate([np.full(j, ws[j - 1]), np.full(ws.size - j, ws[-1])])
    if weighted_chisq_sf(x, lower) >= alpha:
        return False
    upper = np.concatenate([np.full(j, ws[0]), np.full(ws.size - j, ws[j])])
    if weighted_chisq_sf(x, upper) < alpha:
        return True
    return weighted_chisq_sf(x, ws) < alpha


def independence_test(noisy_table, *, n, rho, alpha=0.05,
                      test: Literal["asympt_indep", "projected"] = "asympt_indep", gamma=1.0) -> IndependenceTestResult:
    """AsymptIndep (Alg. 13, after 2MLE) or the projected GenChiTest (Alg. 15) on a noisy r × c table.

    AsymptIndep: 2MLE (Alg. 11, ``gamma``; NULL → fail to reject), T̃ of (6.18) vs the 1−α quantile of
    Σλⱼχ²₁ with λ = eig(Σ_ind + Diag(1/(nρp̃))) (Lemma 6.2.3). Projected: 𝒬 vs χ²_{(r−1)(c−1),1−α}.

    References: seed 002_802572da4c9a19ad.txt, Algs 11, 13 and 15; Lemma 6.2.3; eqs 6.18–6.21, 7.23–7.24.
    """
    t = _table(noisy_table)
    a = _alpha(alpha)
    r, c = t.shape
    if test == "projected":
        s = projected_independence_statistic(t, n=n, rho=rho)
        if s is None:
            return IndependenceTestResult(test, None, None, False, None, None)
        crit = float(stats.chi2.isf(a, (r - 1) * (c - 1)))
        return IndependenceTestResult(test, s, crit, s > crit, None, None)
    if test != "asympt_indep":
        raise ValueError(f"test must be asympt_indep or projected, got {test!r}")
    rho = check_positive(rho, name="rho")
    mle = two_step_mle(t, n=n, gamma=gamma)
    if mle is None:
        return IndependenceTestResult(test, None, None, False, None, None)
    s = asympt_indep_statistic(t, n=n, pi1=mle.pi1, pi2=mle.pi2)
    w = indep_null_weights(mle.pi1, mle.pi2, n=n, rho=rho)
    crit = weighted_chisq_quantile(w, alpha=a)
    return IndependenceTestResult(test, s, crit, s > crit, mle.pi1, mle.pi2)


# --------------------------------------------------------------------------- critical values and power
@dataclass(frozen=True)
class GofCriticalValues:
    """Critical values at level α: classical χ²_{d−1}, AsymptGOF (weighted), projected χ²_{d−1}, nonprojected χ²_d."""

    classical: float
    asympt_gof: float
    projected: float
    nonprojected: float


def gof_critical_values(p0, *, n, rho, alpha=0.05) -> GofCriticalValues:
    """Critical values of the four GOF tests ([T] Alg. 7, Thm 6.1.7, Thms 7.2.3 and 7.2.6)."""
    p = _p0(p0)
    a = _alpha(alpha)
    d = p.size
    w = gof_null_weights(p, n=n, rho=rho)
    return GofCriticalValues(float(stats.chi2.isf(a, d - 1)), weighted_chisq_quantile(w, alpha=a),
                             float(stats.chi2.isf(a, d - 1)), float(stats.chi2.isf(a, d)))


def naive_type_one_error(p0, *, n, rho, alpha=0.05) -> float:
    """Asymptotic size of the classical test applied to noisy counts: P(Σλⱼχ²₁ > χ²_{d−1,1−α}) ([T] Thm 6.1.7)."""
    p = _p0(p0)
    a = _alpha(alpha)
    return weighted_chisq_sf(float(stats.chi2.isf(a, p.size - 1)), gof_null_weights(p, n=n, rho=rho))


@dataclass(frozen=True)
class IndepCriticalValues:
    """Critical values at level α for r × c independence: classical and projected χ²_{(r−1)(c−1)}, AsymptIndep."""

    classical: float
    asympt_indep: float
    projected: float


def indep_critical_values(pi1, pi2, *, n, rho, alpha=0.05) -> IndepCriticalValues:
    """Critical values of the independence tests at marginals π⁽¹⁾, π⁽²⁾ (Alg. 10, Alg. 13 and Alg. 15).

    References: seed 002_802572da4c9a19ad.txt, Thm 6.2.2, Lemma 6.2.3 with eq. 6.21, Thm 7.3.1.
    """
    a = _alpha(alpha)
    w = indep_null_weights(pi1, pi2, n=n, rho=rho)
    df = (np.size(pi1) - 1) * (np.size(pi2) - 1)
    chi = float(stats.chi2.isf(a, df))
    return IndepCriticalValues(chi, weighted_chisq_quantile(w, alpha=a), chi)


def naive_indep_type_one_error(pi1, pi2, *, n, rho, alpha=0.05) -> float:
    """Asymptotic size of Pearson's independence test on noisy counts: P(Σλⱼχ²₁ > χ²_{(r−1)(c−1),1−α}).

    References: seed 002_802572da4c9a19ad.txt, Lemma 6.2.3 and eq. 6.21 (weights ``indep_null_weights``).
    """
    a = _alpha(alpha)
    df = (np.size(pi1) - 1) * (np.size(pi2) - 1)
    return weighted_chisq_sf(float(stats.chi2.isf(a, df)), indep_null_weights(pi1, pi2, n=n, rho=rho))


def default_gof_shift(d: int, size: float = 0.01) -> np.ndarray:
    """The thesis's GOF alternative Δ = size·(1, −1/(d−1), …, −1/(d−1)) (sums to 0).

    References: seed 002_802572da4c9a19ad.txt, §6.4 / §7.2 power experiments (Δ = 0.01·(1, −1/3, −1/3, −1/3)
    for d = 4).
    """
    d = int(d)
    if d < 2:
        raise ValueError(f"d must be ≥ 2, got {d!r}")
    return size * np.array([1.0] + [-1.0 / (d - 1)] * (d - 1))


def default_indep_shift(r: int, c: int, size: float = 0.01) -> np.ndarray:
    """The thesis's independence alternative size·(1, 0, …, −1)ᵀ(1, 0, …, 0), generalised to r × c.

    Moves ``size`` of probability from cell (r, 1) to cell (1, 1); for 2 × 2 it is the thesis's
    0.01·(1, −1)ᵀ(1, 0). References: seed 002_802572da4c9a19ad.txt, §6.4 and §7.3.1.
    """
    r, c = int(r), int(c)
    if r < 2 or c < 2:
        raise ValueError(f"the table needs r, c ≥ 2, got {r} × {c}")
    shift = np.zeros((r, c))
    shift[0, 0], shift[-1, 0] = size, -size
    return shift


def asymptotic_power(p0, shift, *, n, rho, alpha=0.05,
                     test: Literal["projected", "nonprojected", "classical_nonprivate"] = "projected") -> float:
    """Asymptotic power at p⁰ + Δ (the thesis's local-alternative convention, [T] §7.2).

    ν = n·ΔᵀΣ⁰_{nρ}⁻¹Δ with Σ⁰_{nρ} = Diag(p⁰) − p⁰p⁰ᵀ + I/(nρ): projected ncχ²_{d−1}(ν), nonprojected
    ncχ²_d(ν); non-private ncχ²_{d−1}(nΣΔᵢ²/p⁰ᵢ).
    """
    p = _p0(p0)
    dl = np.asarray(shift, dtype=float).ravel()
    if dl.size != p.size:
        raise ValueError("shift and p0 must have the same length")
    if abs(dl.sum()) > 1e-9:
        raise ValueError(f"the shift must sum to 0, got {dl.sum():.3g}")
    a = _alpha(alpha)
    n = check_positive(n, name="n")
    d = p.size
    if test == "classical_nonprivate":
        nu = n * float(np.sum(dl * dl / p))
        return float(stats.ncx2.sf(stats.chi2.isf(a, d - 1), d - 1, nu))
    rho = check_positive(rho, name="rho")
    nu = n * float(dl @ np.linalg.solve(_sigma0(p, n * rho), dl))
    df = d - 1 if test == "projected" else d
    if test not in ("projected", "nonprojected"):
        raise ValueError(f"test must be projected, nonprojected or classical_nonprivate; got {test!r}")
    return float(stats.ncx2.sf(stats.chi2.isf(a, df), df, nu))


def mc_rank(m: int, alpha: float) -> int:
    """Rank t = ⌈(m+1)(1−α)⌉ of the MC critical value among m null draws ([T] Alg. 8); needs m > 1/α.

    >>> mc_rank(99, 0.05)
    95
    """
    a = _alpha(alpha)
    if int(m) != m or m <= 1.0 / a:
        raise ValueError(f"m must be an integer > 1/alpha = {1 / a:.6g}, got {m!r}")
    return int(math.ceil((m + 1) * (1.0 - a) - 1e-9))


# --------------------------------------------------------------------------- simulation
@dataclass(frozen=True)
class SizePowerResult:
    """Empirical rejection rates (size if p1 = p0, else power) with standard errors."""

    rates: dict[str, float]
    std_errors: dict[str, float]
    trials: int
    settings: dict


def _size_power(rejects: dict[str, int], trials: int, params: dict) -> SizePowerResult:
    """Rejection rates of a Monte Carlo grid cell with their binomial standard errors √(r(1−r)/trials)."""
    rates = {t: k / trials for t, k in rejects.items()}
    ses = {t: math.sqrt(max(r * (1 - r), 0.0) / trials) for t, r in rates.items()}
    return SizePowerResult(rates, ses, trials, params)


def _noise_setup(noise: str, rho, epsilon) -> tuple[float, Callable]:
    if (rho is None) == (epsilon is None):
        raise ValueError("give exactly one of rho and epsilon")
    if noise == "gaussian":
        if rho is None:
            raise ValueError("Gaussian noise is calibrated by rho")
        r = check_positive(rho, name="rho")
        return r, lambda g, shape: g.normal(0.0, 1.0 / math.sqrt(r), shape)
    if noise == "laplace":
        if epsilon is None:
            raise ValueError("Laplace noise is calibrated by epsilon")
        e = check_positive(epsilon, name="epsilon")
        # Lap(2/ε) per cell is ε-DP; its variance 8/ε² plays the role of 1/ρ ([T] §7.4)
        return e * e / 8.0, lambda g, shape: g.laplace(0.0, 2.0 / e, shape)
    raise ValueError(f"noise must be gaussian or laplace, got {noise!r}")


def noise_rho(noise: Literal["gaussian", "laplace"], *, rho=None, epsilon=None) -> float:
    """The ρ the tests use for this noise: ρ itself for N(0, 1/ρ); ε²/8 for Lap(2/ε), whose variance is 8/ε².

    References: seed 002_802572da4c9a19ad.txt, §6.3 (ρ = ε²/8 gives equal variances) and §7.4.
    """
    return _noise_setup(noise, rho, epsilon)[0]


def default_gamma(noise: Literal["gaussian", "laplace"]) -> float:
    """2MLE's weight γ in program (6.17): 1 for Gaussian noise, 0.01 for Laplace noise.

    References: seed 002_802572da4c9a19ad.txt, Alg. 11 and §6.3.2.
    """
    if noise not in ("gaussian", "laplace"):
        raise ValueError(f"noise must be gaussian or laplace, got {noise!r}")
    return 1.0 if noise == "gaussian" else 0.01


def noisy_table(table_probs, *, n, noise: Literal["gaussian", "laplace"], rho=None, epsilon=None, rng) -> np.ndarray:
    """One private r × c table: Multinomial(n, p) counts plus N(0, 1/ρ) or Lap(2/ε) noise in every cell.

    References: seed 002_802572da4c9a19ad.txt, Alg. 13 (Gaussian, ρ-zCDP) and §7.4 (Laplace, ε-DP).
    """
    tp = np.asarray(table_probs, dtype=float)
    if tp.ndim != 2 or min(tp.shape) < 2:
        raise ValueError("table_probs must be an r × c array with r, c ≥ 2")
    _p0(tp.ravel())
    n_int = check_size(n, name="n")
    rng = as_generator(rng)
    _, draw = _noise_setup(noise, rho, epsilon)
    # one record replaced: the table moves by 2 in L1 and √2 in L2 (N(0, 1/ρ) is ρ-zCDP, Lap(2/ε) is ε-DP)
    if noise == "gaussian":
        ledger.record("noisy table", rho=float(rho), mechanism="gaussian", scale=1.0 / math.sqrt(float(rho)),
                      sensitivity=math.sqrt(2.0))
    else:
        ledger.record("noisy table", epsilon=float(epsilon), mechanism="laplace", scale=2.0 / float(epsilon),
                      sensitivity=2.0)
    return (rng.multinomial(n_int, tp.ravel()).astype(float) + draw(rng, tp.size)).reshape(tp.shape)


def simulate_gof(p0, p1, *, n, alpha, noise: Literal["gaussian", "laplace"], rho=None, epsilon=None,
                 tests=("classical_noisy", "asympt_gof", "projected", "mc_gof"), trials=1000, m=59, rng,
                 progress: Callable[[float], None] | None = None) -> SizePowerResult:
    """Empirical size (p1 = p0) or power of the private GOF tests ([T] Algs 7–9, 14, 16).

    classical_noisy: T vs χ²_{d−1}; asympt_gof: T vs the weighted-χ² quantile; projected: 𝒬 vs χ²_{d−1}
    (Gaussian) or its MC critical value (Laplace, Alg. 16 with the inverse restored); mc_gof: T vs its
    MC critical value (Alg. 8, rank ⌈(m+1)(1−α)⌉).
    """
    p = _p0(p0)
    q = _p0(p1)
    if q.size != p.size:
        raise ValueError("p0 and p1 must have the same length")
    a = _alpha(alpha)
    trials = check_int_in_range(trials, name="trials", lo=1, hi=MAX_TRIALS)
    n_int = check_size(n, name="n")
    rng = as_generator(rng)
    rho_eff, draw = _noise_setup(noise, rho, epsilon)
    t_rank = mc_rank(m, a)
    d = p.size
    crit_cl = float(stats.chi2.isf(a, d - 1))
    need_mc = "mc_gof" in tests or ("projected" in tests and noise == "laplace")
    crit_as = (weighted_chisq_quantile(gof_null_weights(p, n=n_int, rho=rho_eff), alpha=a)
               if "asympt_gof" in tests else None)
    rejects = {t: 0 for t in tests}
    chunk = max(1, trials // 50)
    done = 0
    while done < trials:
        b = min(chunk, trials - done)
        h = rng.multinomial(n_int, q, size=b).astype(float) + draw(rng, (b, d))
        T = naive_statistic(h, p, n=n_int)
        PQ = projected_statistic(h, p, n=n_int, rho=rho_eff)
        if need_mc:
            h0 = rng.multinomial(n_int, p, size=(b, m)).astype(float) + draw(rng, (b, m, d))
            T0 = np.sort(naive_statistic(h0, p, n=n_int), axis=1)[:, t_rank - 1]
            P0 = np.sort(projected_statistic(h0, p, n=n_int, rho=rho_eff), axis=1)[:, t_rank - 1]
        for t in tests:
            if t == "classical_noisy":
                rejects[t] += int(np.sum(T > crit_cl))
            elif t == "asympt_gof":
                rejects[t] += int(np.sum(T > crit_as))
            elif t == "projected":
                rejects[t] += int(np.sum(PQ > (P0 if noise == "laplace" else crit_cl)))
            elif t == "mc_gof":
                rejects[t] += int(np.sum(T > T0))
            else:
                raise ValueError(f"unknown test {t!r}")
        done += b
        if progress is not None:
            progress(done / trials)
    return _size_power(rejects, trials, {"n": n_int, "alpha": a, "noise": noise, "rho": rho, "epsilon": epsilon,
                                         "m": m, "d": d})


def simulate_independence(table_probs, *, n, alpha, noise, rho=None, epsilon=None,
                          tests=("classical_noisy", "asympt_indep", "projected"), trials=1000, rng,
                          progress=None, gamma=None) -> SizePowerResult:
    """Empirical size (independent table) or power of the private r × c independence tests.

    classical_noisy: Pearson's statistic with noisy-marginal estimates vs χ²_{(r−1)(c−1)} (Alg. 10 on noisy
    counts); asympt_indep: AsymptIndep after 2MLE (Algs 11 and 13); projected: the projected GenChiTest
    statistic vs χ²_{(r−1)(c−1)} (Alg. 15, φ of eq. 7.24). "No conclusion" counts as no rejection. ``gamma``
    is 2MLE's elastic-net weight: 1 for Gaussian noise, 0.01 for Laplace noise as in §6.3.2 (default).

    References: seed 002_802572da4c9a19ad.txt, Algs 10, 11, 13 and 15; §6.3.2, §7.3.1. With Laplace noise the
    tests use ρ = ε²/8 (equal variance, §7.4); their χ² nulls are then approximations.
    """
    tp = np.asarray(table_probs, dtype=float)
    if tp.ndim != 2 or min(tp.shape) < 2:
        raise ValueError("table_probs must be an r × c array with r, c ≥ 2")
    _p0(tp.ravel())
    a = _alpha(alpha)
    trials = check_int_in_range(trials, name="trials", lo=1, hi=MAX_TRIALS)
    n_int = check_size(n, name="n")
    rng = as_generator(rng)
    rho_eff, draw = _noise_setup(noise, rho, epsilon)
    g = default_gamma(noise) if gamma is None else float(gamma)
    unknown = [t for t in tests if t not in ("classical_noisy", "asympt_indep", "projected")]
    if unknown:
        raise ValueError(f"unknown test {unknown[0]!r}: use classical_noisy, asympt_indep or projected")
    r, c = tp.shape
    df = (r - 1) * (c - 1)
    crit = float(stats.chi2.isf(a, df))
    rejects = {t: 0 for t in tests}
    chunk = max(1, trials // 50)
    done = 0
    while done < trials:
        b = min(chunk, trials - done)
        hs = rng.multinomial(n_int, tp.ravel(), size=b).astype(float) + draw(rng, (b, r * c))
        for h in hs:
            tab = h.reshape(r, c)
            for t in tests:
                if t == "projected":
                    s = projected_independence_statistic(tab, n=n_int, rho=rho_eff)
                    rejects[t] += int(s is not None and s > crit)
                elif t == "asympt_indep":
                    mle = two_step_mle(tab, n=n_int, gamma=g)
                    if mle is not None:
                        s = asympt_indep_statistic(tab, n=n_int, pi1=mle.pi1, pi2=mle.pi2)
                        w = indep_null_weights(mle.pi1, mle.pi2, n=n_int, rho=rho_eff)
                        rejects[t] += int(_sf_below(s, w, a))
                else:
                    nt = tab.sum()
                    if nt <= 0:
                        continue
                    pa, pb = tab.sum(axis=1) / nt, tab.sum(axis=0) / nt
                    e = n_int * np.outer(pa, pb)
                    if np.all(e > 5):
                        rejects[t] += int(float(np.sum((tab - e) ** 2 / e)) > crit)
        done += b
        if progress is not None:
            progress(done / trials)
    return _size_power(rejects, trials, {"n": n_int, "alpha": a, "noise": noise, "rho": rho, "epsilon": epsilon,
                                         "shape": [r, c], "gamma": g})


GOF_TESTS = ("classical_noisy", "asympt_gof", "projected", "mc_gof")
INDEP_TESTS = ("classical_noisy", "asympt_indep", "projected")


def _grid_task(kind: str, null: np.ndarray, probs: np.ndarray, n: int, noise: str, value: float, alpha: float,
               trials: int, m: int, tests: tuple, rng: np.random.SeedSequence, progress=None) -> dict[str, int]:
    priv = {"rho": value} if noise == "gaussian" else {"epsilon": value}
    rng = as_generator(rng)
    if kind == "gof":
        res = simulate_gof(null, probs, n=n, alpha=alpha, noise=noise, tests=tests, trials=trials, m=m, rng=rng,
                           progress=progress, **priv)
    else:
        res = simulate_independence(probs, n=n, alpha=alpha, noise=noise, tests=tests, trials=trials, rng=rng,
                                    progress=progress, **priv)
    return {t: int(round(v * trials)) for t, v in res.rates.items()}


def simulate_grid(kind: Literal["gof", "independence"], null, alternative, *, ns, privacy, alpha,
                  noise: Literal["gaussian", "laplace"], trials=1000, m=59, rng=0, n_jobs=1, tests=None,
                  chunk=250, progress: Callable[[float], None] | None = None) -> pd.DataFrame:
    """Empirical size (data from the null) and power (data from the alternative) on an n × privacy grid.

    ``null``/``alternative`` are p⁰/p¹ for "gof" and r × c table probabilities for "independence" (the null
    table should be independent). ``privacy`` lists ρ (Gaussian) or ε (Laplace). Each grid cell's trials are
    split into fixed chunks of ``chunk``; every chunk gets its own child of one ``SeedSequence``, spawned in a
    fixed order, so the table is identical for any ``n_jobs`` (joblib processes). ``rng`` is an integer seed
    or a ``SeedSequence`` (default 0: the table is reproducible). ``progress`` gets the finished fraction,
    ending at 1.0.

    Returns columns n, rho, epsilon, quantity ("size"/"power"), test, rate, std_error, trials.

    References: seed 002_802572da4c9a19ad.txt, Ch. 6–7 simulation design (§§6.3–6.4, 7.2–7.3).
    """
    if kind not in ("gof", "independence"):
        raise ValueError(f"kind must be gof or independence, got {kind!r}")
    p_null = np.asarray(null, dtype=float)
    p_alt = np.asarray(alternative, dtype=float)
    if p_null.shape != p_alt.shape:
        raise ValueError("null and alternative must have the same shape")
    trials = check_int_in_range(trials, name="trials", lo=1, hi=MAX_TRIALS)
    ns_ = [int(x) for x in ns]
    vals = [float(v) for v in privacy]
    if not ns_ or not vals:
        raise ValueError("the grid needs at least one n and one privacy value")
    tests = tuple(tests) if tests is not None else (GOF_TESTS if kind == "gof" else INDEP_TESTS)
    chunk = max(1, int(chunk))
    sizes = [chunk] * (trials // chunk) + ([trials % chunk] if trials % chunk else [])
    cells = [(n, v, q) for n in ns_ for v in vals for q in ("size", "power")]
    tasks = [(ci, s) for ci in range(len(cells)) for s in sizes]
    root = rng
    if not isinstance(root, np.random.SeedSequence):
        root = np.random.SeedSequence(check_size(root, name="rng", minimum=0))
    seeds = root.spawn(len(tasks))
    args = [(kind, p_null, p_null if cells[ci][2] == "size" else p_alt, cells[ci][0], noise, cells[ci][1],
             float(alpha), s, int(m), tests, seeds[i]) for i, (ci, s) in enumerate(tasks)]
    out: list[dict[str, int] | None] = [None] * len(tasks)
    total = sum(s for _, s in tasks)
    done = 0
    if int(n_jobs) == 1:
        for i, a_ in enumerate(args):
            inner = None
            if progress is not None:
                inner = lambda f, base=done, s=a_[7]: progress(min(1.0, (base + f * s) / total))  # noqa: E731
            out[i] = _grid_task(*a_, progress=inner)
            done += a_[7]
    else:
        for i, rej in imap_unordered(_grid_task, args, n_jobs=int(n_jobs)):
            out[i] = rej
            done += args[i][7]
            if progress is not None:
                progress(min(1.0, done / total))
    rows = []
    for ci, (n, v, q) in enumerate(cells):
        parts = [out[i] for i, (cj, _) in enumerate(tasks) if cj == ci]
        for t in tests:
            rate = sum(p[t] for p in parts) / trials
            rows.append({"n": n, "rho": v if noise == "gaussian" else math.nan,
                         "epsilon": v if noise == "laplace" else math.nan, "quantity": q, "test": t, "rate": rate,
                         "std_error": math.sqrt(max(rate * (1 - rate), 0.0) / trials), "trials": trials})
    if progress is not None:
        progress(1.0)
    return pd.DataFrame(rows)
