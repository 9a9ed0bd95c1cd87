"""Private chi-square tests: goodness of fit and independence on noisy counts.

Pure Python (no streamlit). Spec ``epsilon_calculator.md`` §4.7, following Rogers 2017,
*Leveraging Privacy in Data Analysis* (seed ``002_802572da4c9a19ad.txt``), Ch. 6–7: eq. 6.4 (naive
statistic), Thm 6.1.7 (AsymptGOF), eqs 7.14/7.19 (nonprojected/projected statistics), Lemma 6.2.3
(independence covariance), eq. 7.24 and Alg. 15 (GenChiTest), Algs 8 and 16 (Monte Carlo critical values).
Weighted chi-square tails by exact convolution or Imhof (1961).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Callable, Literal

import numpy as np
from scipy import integrate, optimize, stats

MAX_TRIALS = 100_000


# --------------------------------------------------------------------------- validation
def _p0(p0) -> np.ndarray:
    p = np.asarray(p0, dtype=float).ravel()
    if p.size < 2:
        raise ValueError(f"need d ≥ 2 categories, got {p.size}")
    if not np.all(np.isfinite(p)) or np.any(p <= 0):
        raise ValueError("every null probability must be > 0")
    if abs(p.sum() - 1.0) > 1e-9:
        raise ValueError(f"null probabilities must sum to 1 (within 1e-9), got {p.sum():.12g}")
    return p


def _pos(name, v) -> float:
    x = float(v)
    if not math.isfinite(x) or x <= 0:
        raise ValueError(f"{name} must be finite and > 0, got {v!r}")
    return x


def _alpha(a) -> float:
    x = float(a)
    if not (0 < x < 1):
        raise ValueError(f"alpha must lie in (0, 1), got {a!r}")
    return x


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
        dens = math.exp(lognorm + (m2 - 1) * math.log(t) - y / 2.0) * 2.0 if t > 0 else (2.0 * math.exp(lognorm) if m2 == 1 else 0.0)
        return dens * stats.chi2.sf((x - b * y) / a, m1)

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
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"x must be finite, got {x!r}")
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
        g = rng if rng is not None else np.random.default_rng(0)
        draws = g.chisquare(1, (200_000, w.size)) @ w
        return float(np.mean(draws > x))
    raise ValueError(f"method must be auto, imhof, convolution or mc; got {method!r}")


def weighted_chisq_quantile(weights, *, alpha, method="auto", rng=None) -> float:
    """q with P(Σλⱼχ²₁ > q) = alpha (brentq to 1e-6; the MC method uses the empirical quantile)."""
    w = _weights(weights)
    a = _alpha(alpha)
    if method == "mc":
        g = rng if rng is not None else np.random.default_rng(0)
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
    n, rho = _pos("n", n), _pos("rho", rho)
    s = np.sqrt(p)
    m = np.eye(p.size) - np.outer(s, s) + np.diag(1.0 / (n * rho * p))
    return np.sort(np.linalg.eigvalsh(m))[::-1]


def _sigma_ind(pi1: np.ndarray, pi2: np.ndarray) -> np.ndarray:
    """Σ_ind = I − √p√pᵀ − Γ(ΓᵀΓ)⁻¹Γᵀ, Γ = Diag(p)^{-1/2}∇f ([T] Lemma 6.2.3)."""
    r, c = pi1.size, pi2.size
    p = np.outer(pi1, pi2).ravel()
    grad = np.zeros((r * c, r + c - 2))
    for i in range(r):
        for j in range(c):
            row = i * c + j
            for k in range(r - 1):
                grad[row, k] = pi2[j] * ((i == k) - (i == r - 1))
            for l in range(c - 1):
                grad[row, r - 1 + l] = pi1[i] * ((j == l) - (j == c - 1))
    gam = grad / np.sqrt(p)[:, None]
    proj = gam @ np.linalg.pinv(gam.T @ gam) @ gam.T
    s = np.sqrt(p)
    return np.eye(r * c) - np.outer(s, s) - proj


def indep_null_weights(pi1, pi2, *, n, rho) -> np.ndarray:
    """AsymptIndep weights eig(Σ_ind + Diag(1/(nρp̃))) ([T] Lemma 6.2.3, Alg. 13), descending."""
    a, b = _p0(pi1), _p0(pi2)
    n, rho = _pos("n", n), _pos("rho", rho)
    p = np.outer(a, b).ravel()
    m = _sigma_ind(a, b) + np.diag(1.0 / (n * rho * p))
    ev = np.sort(np.linalg.eigvalsh(m))[::-1]
    return ev[ev > 1e-12]


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
    f, s = _q_parts(h, p, _pos("n", n), _pos("rho", rho))
    return f + s if np.ndim(f) else float(f + s)


def projected_statistic(noisy_counts, p0, *, n, rho) -> float:
    """𝒬 of [T] eq. 7.19 = Q − (ρ/d)(ñ − n)² (→ χ²_{d−1} under H₀ for ρ = Ω(1/n))."""
    h = np.asarray(noisy_counts, dtype=float)
    p = _p0(p0)
    n, rho = _pos("n", n), _pos("rho", rho)
    f, s = _q_parts(h, p, n, rho)
    nt = np.sum(h, axis=-1)
    out = f + s - rho / p.size * (nt - n) ** 2
    return out if np.ndim(out) else float(out)


def _sigma0(p: np.ndarray, nrho: float) -> np.ndarray:
    return np.diag(p) - np.outer(p, p) + np.eye(p.size) / nrho


def projected_independence_statistic(noisy_table, *, n, rho) -> float | None:
    """Projected GenChiTest statistic for independence ([T] Alg. 15 with φ of eq. 7.24).

    θ̂ minimises the projected quadratic form with M̂ = Σ⁰_{nρ}(φ(h̃))⁻¹. Returns None ("no conclusion")
    if any n·π̃ᵢπ̃ⱼ ≤ 5 (the rule of thumb of [T] §7.3.1). Erratum: Alg. 15 writes m for s.
    """
    t = np.asarray(noisy_table, dtype=float)
    if t.ndim != 2 or min(t.shape) < 2:
        raise ValueError("noisy_table must be an r × c array with r, c ≥ 2")
    n, rho = _pos("n", n), _pos("rho", rho)
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

    def resid(th):
        pa = np.append(th[: r - 1], 1.0 - th[: r - 1].sum())
        pb = np.append(th[r - 1:], 1.0 - th[r - 1:].sum())
        return L @ (h - n * np.outer(pa, pb).ravel()) / math.sqrt(n)

    x0 = np.concatenate([a[:-1], b[:-1]])
    res = optimize.least_squares(resid, x0, method="lm", xtol=1e-12, ftol=1e-12)
    val = float(np.sum(res.fun**2))
    return min(val, float(np.sum(resid(x0) ** 2)))


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
    n = _pos("n", n)
    d = p.size
    if test == "classical_nonprivate":
        nu = n * float(np.sum(dl * dl / p))
        return float(stats.ncx2.sf(stats.chi2.isf(a, d - 1), d - 1, nu))
    rho = _pos("rho", rho)
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


def _noise_setup(noise: str, rho, epsilon) -> tuple[float, Callable]:
    if (rho is None) == (epsilon is None):
        raise ValueError("give exactly one of rho and epsilon")
    if noise == "gaussian":
        if rho is None:
            raise ValueError("Gaussian noise is calibrated by rho")
        r = _pos("rho", rho)
        return r, lambda g, shape: g.normal(0.0, 1.0 / math.sqrt(r), shape)
    if noise == "laplace":
        if epsilon is None:
            raise ValueError("Laplace noise is calibrated by epsilon")
        e = _pos("epsilon", epsilon)
        # Lap(2/ε) per cell is ε-DP; its variance 8/ε² plays the role of 1/ρ ([T] §7.4)
        return e * e / 8.0, lambda g, shape: g.laplace(0.0, 2.0 / e, shape)
    raise ValueError(f"noise must be gaussian or laplace, got {noise!r}")


def _check_trials(trials: int) -> int:
    t = int(trials)
    if t < 1 or t > MAX_TRIALS:
        raise ValueError(f"trials must lie in [1, 1e5], got {trials!r}")
    return t


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
    trials = _check_trials(trials)
    n_int = int(n)
    if n_int < 1:
        raise ValueError(f"n must be ≥ 1, got {n!r}")
    rho_eff, draw = _noise_setup(noise, rho, epsilon)
    t_rank = mc_rank(m, a)
    d = p.size
    crit_cl = float(stats.chi2.isf(a, d - 1))
    need_mc = "mc_gof" in tests or ("projected" in tests and noise == "laplace")
    crit_as = weighted_chisq_quantile(gof_null_weights(p, n=n_int, rho=rho_eff), alpha=a) if "asympt_gof" in tests else None
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
    rates = {t: rejects[t] / trials for t in tests}
    ses = {t: math.sqrt(max(r * (1 - r), 0.0) / trials) for t, r in rates.items()}
    return SizePowerResult(rates, ses, trials, {"n": n_int, "alpha": a, "noise": noise, "rho": rho,
                                                "epsilon": epsilon, "m": m, "d": d})


def simulate_independence(table_probs, *, n, alpha, noise, rho=None, epsilon=None,
                          tests=("classical_noisy", "asympt_indep", "projected"), trials=1000, rng,
                          progress=None) -> SizePowerResult:
    """Empirical size/power of the private independence tests ([T] Algs 10, 13 and 15).

    classical_noisy: Pearson's statistic with noisy-marginal estimates vs χ²_{(r−1)(c−1)};
    asympt_indep: the same statistic vs the AsymptIndep weighted-χ² quantile (noisy marginals used for
    the weights; the 2MLE projection of Alg. 11 with γ = 1 reduces to them when all cells are large);
    projected: the projected GenChiTest statistic vs χ²_{(r−1)(c−1)}. "No conclusion" counts as no rejection.
    """
    tp = np.asarray(table_probs, dtype=float)
    if tp.ndim != 2 or min(tp.shape) < 2:
        raise ValueError("table_probs must be an r × c array with r, c ≥ 2")
    _p0(tp.ravel())
    a = _alpha(alpha)
    trials = _check_trials(trials)
    n_int = int(n)
    rho_eff, draw = _noise_setup(noise, rho, epsilon)
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
            nt = tab.sum()
            pa, pb = tab.sum(axis=1) / nt, tab.sum(axis=0) / nt
            ok = nt > 0 and np.all(pa > 0) and np.all(pb > 0) and np.all(n_int * np.outer(pa, pb) > 5)
            for t in tests:
                if not ok:
                    continue
                if t == "projected":
                    s = projected_independence_statistic(tab, n=n_int, rho=rho_eff)
                    rejects[t] += int(s is not None and s > crit)
                    continue
                e = n_int * np.outer(pa, pb)
                stat_ = float(np.sum((tab - e) ** 2 / e))
                if t == "classical_noisy":
                    rejects[t] += int(stat_ > crit)
                elif t == "asympt_indep":
                    w = indep_null_weights(pa, pb, n=n_int, rho=rho_eff)
                    rejects[t] += int(weighted_chisq_sf(stat_, w) < a)
                else:
                    raise ValueError(f"unknown test {t!r}")
        done += b
        if progress is not None:
            progress(done / trials)
    rates = {t: rejects[t] / trials for t in tests}
    ses = {t: math.sqrt(max(rr * (1 - rr), 0.0) / trials) for t, rr in rates.items()}
    return SizePowerResult(rates, ses, trials, {"n": n_int, "alpha": a, "noise": noise, "rho": rho,
                                                "epsilon": epsilon, "shape": [r, c]})
