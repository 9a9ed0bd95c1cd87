"""Public information in ε-DP: the theory calculators of the epsilon calculator's ninth tab.

Pure numpy/scipy; never imports streamlit. Lemma 5 invariant inflation, W∞ / Δ_z for correlated public
information (Examples 2–3), the effective-ε rule (Cor. 1), the Wasserstein exponential mechanism audit with the
factor κ (Thm. 1, Example 1), Prop. 1 constants, the discrete Laplace, and the information-loss toys (Lemma 7,
Thm. 2). The county release that uses these ideas lives in :mod:`dpdash.stratify.partial_release`.

References
----------
S1 = ``shared/seeds/001_cddb039cfb564267.txt``: Seeman, Slavković & Reimherr, *A Formal Privacy Framework
for Partially Private Data* (working paper, 5 Apr 2022); line numbers ``L123``. Normative reading and the
errata E1–E13: ``shared/specs/partially_private.md`` (§2, §3). The paper prints no numeric results; every
number here is computed.

Errata handled elsewhere than in a single function: E10 (Ex. 4, L389, "ε ≥ max|Q/P|" is read as
|log Q/P|; the effective-ε rule :func:`effective_epsilon_dpz` uses that reading), E11 (App. A.1 labelled
"Lemma 1" proves Lemma 2; the Lemma 4 proof sits inside A.2 — citations here use the corrected numbers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, stats

from dpdash.common.search import smallest_true
from dpdash.common.validation import ValidationError, check_epsilon, check_finite, check_int_in_range, check_positive

__all__ = [
    "GaussianPublicInfo", "Prop1MSE", "Lemma7Result", "SumProjectionResult", "PowerResult",
    "winf_1d", "delta_z_binom", "delta_z_table", "gaussian_public_coefficients", "delta_z_gauss",
    "effective_epsilon_dpz", "required_scale_dpz", "eps_star_invariant", "compose_dpz",
    "trunc_laplace_em_sample", "realized_epsilon_trunc_em", "realized_epsilon_trunc_em_limit",
    "knorm_l2_sample", "prop1_mse", "dlap_ratio", "dlap_pmf", "dlap_sample", "dlap_var", "check_kappa",
    "lemma7_toy", "sum_projection_toy", "thm2_power", "MAX_TOY_N", "COMPOSITION_MESSAGE",
]

MAX_TOY_N = 200
COMPOSITION_MESSAGE = "releases relative to different public variables do not compose (Lemma 4)"
_TOL = 1e-9


def check_kappa(kappa: float) -> float:
    """Check the Wasserstein-mechanism factor κ: a finite number ≥ 1 (1 = paper-literal, 2 = safe; Thm. 1, E1).

    Narrower than :func:`dpdash.common.validation.check_positive`: κ < 1 gives no guarantee at all.
    """
    k = check_finite(kappa, name="kappa")
    if k < 1:
        raise ValidationError(f"kappa must be a finite number ≥ 1 (1 = paper-literal, 2 = safe); got {kappa!r}")
    return k


# --------------------------------------------------------------------------------------------------
# result types
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GaussianPublicInfo:
    """Example 2 regression coefficients of X̄ on (X₁, Z) and the conditional variance."""

    a: float
    beta_v: float
    beta_z: float
    cond_var: float


@dataclass(frozen=True)
class Prop1MSE:
    """Prop. 1 closed forms: projected d₁-dim K-norm mechanism vs native d₂-dim mechanism."""

    projected: float
    native: float
    ratio: float


@dataclass(frozen=True)
class Lemma7Result:
    """Expected posterior variances of θ given the noisy Y, the post-processed Y* and the truth T."""

    evar_y: float
    evar_ystar: float
    evar_t: float
    p_differs: float


@dataclass(frozen=True)
class SumProjectionResult:
    """Expected posterior variance of θ given Y = X + noise and given its sum projection Y* (y₁ − y₂)."""

    evar_y: float
    evar_ystar: float


@dataclass(frozen=True)
class PowerResult:
    """Thm. 2 power: UMP test on Y against the randomised UMP test on Y* = round(clamp(Y, 0, n))."""

    power_y: float
    power_ystar: float
    threshold_y: float
    k_ystar: int
    gamma_ystar: float


# --------------------------------------------------------------------------------------------------
# §2.2 W∞ and Example 3
# --------------------------------------------------------------------------------------------------
def winf_1d(support_a: ArrayLike, pmf_a: ArrayLike, support_b: ArrayLike, pmf_b: ArrayLike) -> float:
    """∞-Wasserstein distance between two discrete laws on ℝ: sup_t |F_a⁻(t) − F_b⁻(t)|.

    References
    ----------
    S1 §2.2, L186–192. Erratum E6: the printed "‖μ − ν‖₁" at L190 is a typo; W∞ is the essential supremum
    of ‖a − b‖ over couplings, which in 1-D equals the sup-distance of the quantile functions.

    Examples
    --------
    >>> winf_1d([0, 1], [0.5, 0.5], [0, 3], [0.5, 0.5])
    2.0
    """
    xa, pa = _clean_law(support_a, pmf_a)
    xb, pb = _clean_law(support_b, pmf_b)
    ca, cb = np.cumsum(pa), np.cumsum(pb)
    ca[-1] = cb[-1] = 1.0
    # Quantile functions are step functions whose jumps sit at the cumulative masses; between consecutive
    # breakpoints both are constant, so evaluate at midpoints of the merged breakpoints.
    br = np.unique(np.concatenate([[0.0], ca, cb]))
    mids = 0.5 * (br[:-1] + br[1:])
    qa = xa[np.minimum(np.searchsorted(ca, mids, side="left"), len(xa) - 1)]
    qb = xb[np.minimum(np.searchsorted(cb, mids, side="left"), len(xb) - 1)]
    return float(np.max(np.abs(qa - qb)))


def _clean_law(support: ArrayLike, pmf: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(support, dtype=float).ravel()
    p = np.asarray(pmf, dtype=float).ravel()
    if x.shape != p.shape or x.size == 0:
        raise ValueError("support and pmf must be non-empty and of the same length")
    if np.any(p < 0) or not np.isfinite(p).all():
        raise ValueError("pmf values must be finite and non-negative")
    if abs(p.sum() - 1.0) > 1e-6:
        raise ValueError(f"pmf must sum to 1, got {p.sum():.6g}")
    keep = p > 0
    x, p = x[keep], p[keep]
    order = np.argsort(x, kind="stable")
    return x[order], p[order] / p.sum()


class _LogLaw:
    """Log-CDF and log-SF of an integer law, accurate deep in both tails (log-space cumulative sums)."""

    def __init__(self, offset: int, logpmf: np.ndarray) -> None:
        self.lo = offset
        self.hi = offset + len(logpmf) - 1
        self.logcdf = np.logaddexp.accumulate(logpmf)
        rev = np.logaddexp.accumulate(logpmf[::-1])[::-1]  # log P(X >= k)
        self.logsf = np.concatenate([rev[1:], [-np.inf]])  # log P(X > k)

    def at(self, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        idx = np.clip(k - self.lo, 0, self.hi - self.lo)
        lc = np.where(k < self.lo, -np.inf, np.where(k >= self.hi, 0.0, self.logcdf[idx]))
        ls = np.where(k < self.lo, 0.0, np.where(k >= self.hi, -np.inf, self.logsf[idx]))
        return lc, ls


def _cdf_geq(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """F_A(k) ≥ F_B(k') elementwise: log-CDF when both CDFs < 0.5, else log-SF (S_A ≤ S_B); tol 1e-9."""
    lca, lsa = a
    lcb, lsb = b
    half = math.log(0.5)
    both_small = (lca < half) & (lcb < half)
    with np.errstate(invalid="ignore"):
        by_cdf = lca >= lcb - _TOL
        by_sf = lsa <= lsb + _TOL
    return np.where(both_small, by_cdf, by_sf)


def _binom_law(m: int, p: float, shift: int) -> _LogLaw:
    k = np.arange(m + 1)
    with np.errstate(divide="ignore"):
        lp = stats.binom.logpmf(k, m, p)
    return _LogLaw(shift, lp)


def _winf_int_laws(l1: _LogLaw, l0: _LogLaw, n: int) -> int:
    k = np.arange(-1, n + 1)

    def ok(h: int) -> bool:
        c1, c0 = l1.at(k), l0.at(k)
        return bool(np.all(_cdf_geq(c1, l0.at(k - h))) and np.all(_cdf_geq(c0, l1.at(k - h))))

    if ok(0):
        return 0
    return smallest_true(ok, 0, n + 1)  # the condition holds at h = n + 1 (both laws live in [0, n])


def delta_z_binom(n: int, z0: float, z1: float) -> int:
    """Δ_z of Example 3: W∞ between ΣX | s_i1 ~ 1 + Binom(n−1, z₁) and ΣX | s_i0 ~ Binom(n−1, z₀).

    Exact integer algorithm (spec §2.4): the smallest h ≥ 0 with F₁(k) ≥ F₀(k−h) and F₀(k) ≥ F₁(k−h) for
    all k ∈ [−1, n], comparing in log-CDF space when both CDFs are < 0.5 and in log-SF space otherwise
    (tolerance 1e-9); bisection on h (the condition is monotone). Naive float quantiles fail in the tails.

    Parameters
    ----------
    n : int, ≥ 2
    z0, z1 : float in [0, 1]; how strongly the public information ties the other records to the target's
        secret (extreme dependence, L321). z₀ = z₁ is the iid case with Δ_z = 1 (L302–306).

    References
    ----------
    S1 §3 Example 3, L292–323; Δ_z definition L198 (erratum E7: the pair is (s₁, s₂)).

    Examples
    --------
    >>> delta_z_binom(50, 0.2, 0.4)
    13
    """
    if int(n) != n or n < 2:
        raise ValueError(f"n must be an integer ≥ 2, got {n!r}")
    for name, z in (("z0", z0), ("z1", z1)):
        if not (0.0 <= float(z) <= 1.0):
            raise ValueError(f"{name} must be in [0, 1], got {z!r}")
    n = int(n)
    l1 = _binom_law(n - 1, float(z1), 1)
    l0 = _binom_law(n - 1, float(z0), 0)
    return _winf_int_laws(l1, l0, n)


def delta_z_table(n: int, z0s: ArrayLike, z1s: ArrayLike) -> np.ndarray:
    """Δ_z over a grid (rows z₀, columns z₁), reusing each law's log-CDF/log-SF arrays (spec §8)."""
    if int(n) != n or n < 2:
        raise ValueError(f"n must be an integer ≥ 2, got {n!r}")
    n = int(n)
    z0s = np.asarray(z0s, dtype=float)
    z1s = np.asarray(z1s, dtype=float)
    if np.any((z0s < 0) | (z0s > 1)) or np.any((z1s < 0) | (z1s > 1)):
        raise ValueError("z0 and z1 must be in [0, 1]")
    laws0 = [_binom_law(n - 1, z, 0) for z in z0s]
    laws1 = [_binom_law(n - 1, z, 1) for z in z1s]
    out = np.empty((len(z0s), len(z1s)), dtype=int)
    for i, l0 in enumerate(laws0):
        for j, l1 in enumerate(laws1):
            out[i, j] = _winf_int_laws(l1, l0, n)
    return out


# --------------------------------------------------------------------------------------------------
# Example 2 (Gaussian) and the effective-ε rule
# --------------------------------------------------------------------------------------------------
def gaussian_public_coefficients(n: int, r: float, rho: float, *, sigma: float = 1.0,
                                 tau: float = 1.0) -> GaussianPublicInfo:
    """Example 2: regression of X̄ on (X₁, Z) for exchangeable X_i with Corr(X_i, X_j) = r, Corr(X_i, Z) = ρ.

    a = (1 + (n−1)r)/n, β_v = (a − ρ²)/(1 − ρ²), β_z = ρ(σ/τ)(1 − a)/(1 − ρ²),
    Var(X̄ | X₁, Z) = σ²a − (σ²aβ_v + ρστβ_z). Valid iff −1/(n−1) ≤ r ≤ 1, |ρ| < 1 and ρ² ≤ a.

    References
    ----------
    S1 §3 Example 2, L278–290 (our parameterisation, spec §2.4).
    """
    if int(n) != n or n < 2:
        raise ValueError(f"n must be an integer ≥ 2, got {n!r}")
    r, rho, sigma, tau = float(r), float(rho), float(sigma), float(tau)
    if sigma <= 0 or tau <= 0:
        raise ValueError("sigma and tau must be > 0")
    if not (-1.0 / (n - 1) - 1e-12 <= r <= 1.0):
        raise ValueError(f"r must be in [−1/(n−1), 1] = [{-1.0 / (n - 1):.4g}, 1] for a valid correlation, "
                         f"got {r}")
    if abs(rho) >= 1:
        raise ValueError(f"|ρ| must be < 1, got ρ = {rho}")
    a = (1.0 + (n - 1) * r) / n
    if rho * rho > a + 1e-12:
        raise ValueError(f"ρ² = {rho * rho:.4g} exceeds a = (1 + (n−1)r)/n = {a:.4g}: no joint covariance "
                         "matrix has these correlations")
    beta_v = (a - rho * rho) / (1 - rho * rho)
    beta_z = rho * (sigma / tau) * (1 - a) / (1 - rho * rho)
    cond_var = sigma * sigma * a - (sigma * sigma * a * beta_v + rho * sigma * tau * beta_z)
    return GaussianPublicInfo(a=a, beta_v=beta_v, beta_z=beta_z, cond_var=cond_var)


def delta_z_gauss(n: int, r: float, rho: float, *, sensitivity: float = 1.0) -> float:
    """Example 2 sensitivity Δ_z = Δ·|β_v| of the mean given public Z.

    References
    ----------
    S1 Example 2, L288. Erratum E4: Z is fixed within a secret pair, so the (z − μ_Z) term cancels and
    Δ_z = Δ·|β_v| (under plain DP, r = ρ = 0, this is Δ/n).
    """
    sens = check_positive(sensitivity, name="sensitivity")
    return sens * abs(gaussian_public_coefficients(n, r, rho).beta_v)


def effective_epsilon_dpz(epsilon: float, *, sensitivity_dp: float, sensitivity_z: float) -> float:
    """Effective ε relative to Z of noise calibrated as Lap(Δ_DP/ε): ε·Δ_z/Δ_DP (from S1 Cor. 1, L200).

    Examples
    --------
    >>> effective_epsilon_dpz(0.5, sensitivity_dp=1, sensitivity_z=13)
    6.5
    """
    eps = check_epsilon(epsilon)
    sdp = check_positive(sensitivity_dp, name="sensitivity_dp")
    sz = float(sensitivity_z)
    if not math.isfinite(sz) or sz < 0:
        raise ValueError(f"sensitivity_z must be finite and ≥ 0, got {sensitivity_z!r}")
    return eps * sz / sdp


def required_scale_dpz(epsilon: float, *, sensitivity_z: float) -> float:
    """Laplace scale Δ_z/ε that keeps ε-DP relative to Z (S1 Cor. 1, L200)."""
    eps = check_epsilon(epsilon)
    sz = check_positive(sensitivity_z, name="sensitivity_z")
    return sz / eps


# --------------------------------------------------------------------------------------------------
# Lemma 5, Lemma 4
# --------------------------------------------------------------------------------------------------
def eps_star_invariant(epsilon: float, N: float, *, kind: str = "discrete") -> float:
    """Effective ε* of a Laplace count release conditioned on the public invariant 0 ≤ count ≤ N.

    Worst case at the boundary, neighbours x and x+1 (spec §2.1):

    - discrete, r = e^−ε: ε* = ε + log(𝒩₁/𝒩₀), 𝒩₀ = (1 − r^(N+1))/(1 − r), 𝒩₁ = r + (1 − r^N)/(1 − r);
      N = ∞ gives ε + log(1 + e^−ε − e^−2ε);
    - continuous on [0, N]: ε* = ε + log((2 − e^−ε − e^−ε(N−1))/(1 − e^−εN)); N = ∞ gives ε + log(2 − e^−ε).

    Always ε ≤ ε* ≤ 2ε, and N = 1 gives ε.

    References
    ----------
    S1 Lemma 5, L182 (ε* ∈ [0, 2ε]).
    """
    eps = check_epsilon(epsilon)
    if kind not in ("discrete", "continuous"):
        raise ValueError(f"kind must be 'discrete' or 'continuous', got {kind!r}")
    N = float(N)
    if math.isnan(N) or N < 1:
        raise ValueError(f"N must be ≥ 1 (or infinite), got {N!r}")
    r = math.exp(-eps)
    if kind == "discrete":
        if math.isinf(N):
            return eps + math.log1p(r - r * r)
        n0 = -math.expm1(-eps * (N + 1)) / -math.expm1(-eps)
        n1 = r + -math.expm1(-eps * N) / -math.expm1(-eps)
        return eps + math.log(n1 / n0)
    if math.isinf(N):
        return eps + math.log(2 - r)
    num = 2 - r - math.exp(-eps * (N - 1))
    den = -math.expm1(-eps * N)
    return eps + math.log(num / den)


def compose_dpz(epsilons: ArrayLike, *, same_z: bool) -> float:
    """Sequential composition relative to Z: Σε, valid only for releases relative to the same z.

    References
    ----------
    S1 Lemma 4, L170 (conditionally independent releases; no composition across different public variables).
    """
    if not same_z:
        raise ValueError(COMPOSITION_MESSAGE)
    eps = [check_epsilon(e) for e in np.atleast_1d(np.asarray(epsilons, dtype=float))]
    return float(sum(eps))


# --------------------------------------------------------------------------------------------------
# Thm. 1 / Example 1: truncated-Laplace exponential mechanism and its realised ε
# --------------------------------------------------------------------------------------------------
def _em_rate(n: int, epsilon: float, sensitivity: float, kappa: float) -> float:
    return n * epsilon / (kappa * sensitivity)


def trunc_laplace_em_sample(xbar: float, n: int, *, epsilon: float, sensitivity: float = 1.0,
                            kappa: float = 2.0, size: int = 1, rng=None) -> np.ndarray:
    """Sample Example 1's mechanism: density ∝ exp(−a|y − x̄|) on [−Δ/2, Δ/2] with a = nε/(κΔ).

    Inverse-CDF sampler (spec §2.4): m_L = (1 − e^−a(x̄+Δ/2))/a, m_R = (1 − e^−a(Δ/2−x̄))/a,
    u ~ U(0, m_L + m_R); y = x̄ + log(a·u + e^−a(x̄+Δ/2))/a if u < m_L, else x̄ − log(1 − a(u − m_L))/a.

    References
    ----------
    S1 Example 1, L248–276; Thm. 1, L204–216. Erratum E1: κ = 2 by default (the proof drops the
    x-dependent normaliser, L645); κ = 1 is the paper-literal choice.
    """
    eps = check_epsilon(epsilon)
    sens = check_positive(sensitivity, name="sensitivity")
    kap = check_kappa(kappa)
    if int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    half = sens / 2
    xbar = float(xbar)
    if not (-half - 1e-12 <= xbar <= half + 1e-12):
        raise ValueError(f"xbar must lie in [−Δ/2, Δ/2] = [{-half}, {half}], got {xbar}")
    rng = np.random.default_rng(rng)
    a = _em_rate(int(n), eps, sens, kap)
    m_l = -math.expm1(-a * (xbar + half)) / a
    m_r = -math.expm1(-a * (half - xbar)) / a
    u = rng.uniform(0.0, m_l + m_r, size=size)
    left = u < m_l
    with np.errstate(divide="ignore", invalid="ignore"):
        y_left = xbar + np.log(a * u + math.exp(-a * (xbar + half))) / a
        y_right = xbar - np.log1p(-a * (u - m_l)) / a
    return np.clip(np.where(left, y_left, y_right), -half, half)


def _log_norm_trunc(xbar: np.ndarray, a: float, half: float) -> np.ndarray:
    # log 𝒩(x̄) = log((2 − e^−a(Δ/2−x̄) − e^−a(Δ/2+x̄))/a), written with expm1 for accuracy at small a
    return np.log(-np.expm1(-a * (half - xbar)) - np.expm1(-a * (half + xbar))) - math.log(a)


def realized_epsilon_trunc_em(n: int, *, epsilon: float, sensitivity: float = 1.0, kappa: float = 2.0,
                              grid: int = 20001) -> float:
    """Realised privacy loss of Example 1's mechanism: ε/κ + max_x̄ |log 𝒩(x̄ ± Δ/n)/𝒩(x̄)|.

    The maximum is over a grid of ``grid`` points with x̄ and its neighbour both in [−Δ/2, Δ/2]. n = 1 gives
    ε/κ (the neighbours are the two endpoints, where 𝒩 is equal).

    References
    ----------
    S1 Example 1, L248–276; Thm. 1 proof L639–653. Erratum E1: with κ = 1 the realised ε exceeds ε because
    the normaliser depends on x̄.
    """
    eps = check_epsilon(epsilon)
    sens = check_positive(sensitivity, name="sensitivity")
    kap = check_kappa(kappa)
    if int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if grid < 2:
        raise ValueError("grid must be ≥ 2")
    n = int(n)
    half = sens / 2
    a = _em_rate(n, eps, sens, kap)
    step = sens / n
    x = np.linspace(-half, half - step, int(grid))
    ratio = np.abs(_log_norm_trunc(x + step, a, half) - _log_norm_trunc(x, a, half))
    return eps / kap + float(np.max(ratio))


def realized_epsilon_trunc_em_limit(epsilon: float, *, kappa: float = 2.0) -> float:
    """Large-n limit of the realised ε of Example 1: ε/κ + log(2 − e^−ε/κ) (spec §2.4)."""
    eps = check_epsilon(epsilon)
    kap = check_kappa(kappa)
    return eps / kap + math.log(2 - math.exp(-eps / kap))


# --------------------------------------------------------------------------------------------------
# Prop. 1: K-norm ℓ₂ mechanism
# --------------------------------------------------------------------------------------------------
def knorm_l2_sample(d: int, scale: float, *, size: int, rng=None) -> np.ndarray:
    """Noise with density ∝ exp(−‖u‖₂/scale) in ℝ^d: radius ~ Gamma(d, scale), direction uniform.

    Returns an array of shape (size, d). References: S1 Prop. 1, §2.4 (spec §2.5).
    """
    if int(d) != d or d < 1:
        raise ValueError(f"d must be a positive integer, got {d!r}")
    scale = check_positive(scale, name="scale")
    rng = np.random.default_rng(rng)
    radius = rng.gamma(shape=int(d), scale=scale, size=size)
    g = rng.standard_normal((size, int(d)))
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    return g * radius[:, None]


def prop1_mse(d1: int, d2: int, *, sensitivity: float, epsilon: float) -> Prop1MSE:
    """Prop. 1 exact constants: projected d₁-dim mechanism d₂(d₁+1)(Δ/ε)² vs native d₂(d₂+1)(Δ/ε)².

    The ratio (d₁+1)/(d₂+1) matches the paper's d₁/d₂ asymptotically.

    References
    ----------
    S1 Prop. 1, §2.4, L234–242 (spec §2.5).

    Examples
    --------
    >>> prop1_mse(5, 2, sensitivity=1, epsilon=0.5)
    Prop1MSE(projected=48.0, native=24.0, ratio=2.0)
    """
    eps = check_epsilon(epsilon)
    sens = check_positive(sensitivity, name="sensitivity")
    if int(d1) != d1 or int(d2) != d2 or d2 < 1 or d1 < d2:
        raise ValueError(f"need integers d1 ≥ d2 ≥ 1, got d1={d1!r}, d2={d2!r}")
    b2 = (sens / eps) ** 2
    proj = d2 * (d1 + 1) * b2
    nat = d2 * (d2 + 1) * b2
    return Prop1MSE(projected=float(proj), native=float(nat), ratio=float((d1 + 1) / (d2 + 1)))


# --------------------------------------------------------------------------------------------------
# discrete Laplace
# --------------------------------------------------------------------------------------------------
def dlap_ratio(epsilon: float, sensitivity: float = 1.0) -> float:
    """The discrete Laplace ratio r = e^−ε/Δ (S1 §5, L446–452); ε and Δ finite and > 0."""
    return math.exp(-check_epsilon(epsilon) / check_positive(sensitivity, name="sensitivity"))


def dlap_pmf(k: ArrayLike, *, epsilon: float, sensitivity: float = 1.0) -> np.ndarray:
    """Discrete Laplace pmf ((1−r)/(1+r))·r^|k| with r = e^−ε/Δ (S1 §5, L446–452)."""
    r = dlap_ratio(epsilon, sensitivity)
    k = np.asarray(k)
    return (1 - r) / (1 + r) * np.power(r, np.abs(k))


def dlap_sample(*, epsilon: float, sensitivity: float = 1.0, size, rng=None) -> np.ndarray:
    """Discrete Laplace draws as G₁ − G₂ with G ~ Geometric(1 − r), r = e^−ε/Δ (spec §2.7)."""
    r = dlap_ratio(epsilon, sensitivity)
    rng = np.random.default_rng(rng)
    return (rng.geometric(1 - r, size=size) - rng.geometric(1 - r, size=size)).astype(np.int64)


def dlap_var(*, epsilon: float, sensitivity: float = 1.0) -> float:
    """Variance 2r/(1 − r)² of the discrete Laplace with r = e^−ε/Δ."""
    r = dlap_ratio(epsilon, sensitivity)
    return 2 * r / (1 - r) ** 2

# --------------------------------------------------------------------------------------------------
# Lemma 7 / Thm. 2 toys
# --------------------------------------------------------------------------------------------------
def _beta_binom_moments(n: int, a: float, b: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    t = np.arange(n + 1)
    pt = stats.betabinom.pmf(t, n, a, b)
    B = a + b + n
    m1 = (a + t) / B
    m2 = (a + t) * (a + t + 1) / (B * (B + 1))
    return pt, m1, m2


def _expected_post_var(joint: np.ndarray, m1: np.ndarray, m2: np.ndarray) -> float:
    """E Var(θ | obs) from joint[obs, t] = P(obs, T = t) and the moments of θ given t."""
    py = joint.sum(axis=1)
    keep = py > 0
    j, py = joint[keep], py[keep]
    e1 = (j @ m1) / py
    e2 = (j @ m2) / py
    return float(np.sum(py * (e2 - e1 * e1)))


def lemma7_toy(n: int, *, epsilon: float, noise: str = "dlap", post: str = "clamp", a: float = 1.0,
               b: float = 1.0) -> Lemma7Result:
    """Information lost by enforcing 0 ≤ T ≤ n on a noisy count: E Var(θ|Y), E Var(θ|Y*), E Var(θ|T).

    θ ~ Beta(a, b), T | θ ~ Binom(n, θ). ``noise="dlap"``: Y = T + DLap(ε), exact Beta-binomial mixture
    (noise truncated at K = ⌈60/ε⌉ + 5). ``noise="laplace"``: Y = T + Lap(1/ε); the tails y ≤ 0 and y ≥ n are
    integrated in closed form (the posterior is constant there) and (0, n) by Gauss–Legendre on each unit
    interval, which is more accurate than the spec's 40,001-point y grid and makes the clamp-only equality
    exact; Y* masses come from the Laplace CDF. ``post``: "clamp" or "round_clamp".
    Moments of θ given T are exact Beta moments (no θ grid is needed because T is discrete).

    References
    ----------
    S1 Lemma 7 and Thm. 2 (L325–369). Erratum E5: the strictness claim of Thm. 2 is false for clamp-only
    post-processing of Laplace noise (the lumped values are likelihood-equivalent, so the two expected
    variances are equal); a strict loss appears with rounding or with coordinate-mixing projections.
    """
    n = check_int_in_range(n, name="n", lo=1, hi=MAX_TOY_N)
    eps = check_epsilon(epsilon)
    noise = {"discrete": "dlap", "continuous": "laplace"}.get(noise, noise)
    post = {"round∘clamp": "round_clamp", "round": "round_clamp"}.get(post, post)
    if noise not in ("dlap", "laplace"):
        raise ValueError(f"noise must be 'dlap' (discrete) or 'laplace' (continuous), got {noise!r}")
    if post not in ("clamp", "round_clamp"):
        raise ValueError(f"post must be 'clamp' or 'round_clamp', got {post!r}")
    if a <= 0 or b <= 0:
        raise ValueError("a and b must be > 0")
    pt, m1, m2 = _beta_binom_moments(n, a, b)
    t = np.arange(n + 1)
    evar_t = float(np.sum(pt * (m2 - m1 * m1)))
    if noise == "dlap":
        K = math.ceil(60 / eps) + 5
        yv = np.arange(-K, n + K + 1)
        lik = dlap_pmf(yv[:, None] - t[None, :], epsilon=eps)
        joint = lik * pt[None, :]
        evar_y = _expected_post_var(joint, m1, m2)
        # discrete: round∘clamp = clamp
        ys = np.clip(yv, 0, n)
        joint_s = np.zeros((n + 1, n + 1))
        np.add.at(joint_s, ys, joint)
        evar_ys = _expected_post_var(joint_s, m1, m2)
        p_diff = float(joint[(yv < 0) | (yv > n)].sum())
        return Lemma7Result(evar_y=evar_y, evar_ystar=evar_ys, evar_t=evar_t, p_differs=p_diff)
    bsc = 1.0 / eps
    # Below 0 (above n) the posterior of t does not depend on y (the Laplace density is ∝ e^{±εy}), so those
    # regions contribute exactly like the lumps P(Y ≤ 0, t), P(Y ≥ n, t); inside, 40-point Gauss–Legendre per
    # unit interval (the density has kinks only at the integers).
    lo_mass = stats.laplace.cdf(0 - t, scale=bsc) * pt
    hi_mass = stats.laplace.sf(n - t, scale=bsc) * pt
    gx, gw = np.polynomial.legendre.leggauss(40)
    nodes = (np.arange(n)[:, None] + (gx[None, :] + 1) / 2).ravel()
    wts = np.tile(gw / 2, n)
    dens = stats.laplace.pdf(nodes[:, None] - t[None, :], scale=bsc) * pt[None, :] * wts[:, None]
    inner = _expected_post_var(dens, m1, m2)
    tails = _expected_post_var(np.vstack([lo_mass, hi_mass]), m1, m2)
    evar_y = inner + tails
    if post == "clamp":
        evar_ys = evar_y  # the lumped values are likelihood-equivalent (erratum E5)
        p_diff = float(lo_mass.sum() + hi_mass.sum())
    else:
        k = np.arange(n + 1)
        upper = np.where(k == n, np.inf, k + 0.5)
        lower = np.where(k == 0, -np.inf, k - 0.5)
        mass = (stats.laplace.cdf(upper[:, None] - t[None, :], scale=bsc)
                - stats.laplace.cdf(lower[:, None] - t[None, :], scale=bsc))
        evar_ys = _expected_post_var(mass * pt[None, :], m1, m2)
        p_diff = 1.0
    return Lemma7Result(evar_y=evar_y, evar_ystar=evar_ys, evar_t=evar_t, p_differs=p_diff)


def sum_projection_toy(s: int, *, epsilon: float) -> SumProjectionResult:
    """Strict information loss from a coordinate-mixing projection (spec §2.6).

    θ ~ U(0, 1), T | θ ~ Binom(s, θ), X = (T, s − T), Y = X + iid DLap(ε); Y* keeps only y₁ − y₂ (the
    projection onto the public total x₁ + x₂ = s). θ moments are exact Beta moments given T.

    E Var(θ | Y) is exact without a noise window: with a = y₁ and b = s − y₂ the likelihood of t is
    r^(|a − t| + |b − t|), and on t ∈ [0, s] this depends on (a, b) only through (clip(a), clip(b)) to [0, s];
    given t those are iid with closed-form masses. E Var(θ | Y*) uses the closed-form pmf of the difference
    of two discrete Laplace draws, r^|d|·(|d| + 1 + 2r²/(1 − r²))·((1 − r)/(1 + r))², on the window
    |d| ≤ 2K, K = ⌈40/ε⌉.

    References
    ----------
    S1 Lemma 7 / Thm. 2; erratum E5.
    """
    s = check_int_in_range(s, name="s", lo=1, hi=MAX_TOY_N)
    eps = check_epsilon(epsilon)
    r = math.exp(-eps)
    pt, m1, m2 = _beta_binom_moments(s, 1.0, 1.0)
    t = np.arange(s + 1)
    x = np.arange(s + 1)
    # q[x, t] = P(clip(t + k, 0, s) = x) for k ~ DLap(ε); P(k ≤ −m) = r^m/(1 + r) for m ≥ 0
    q = dlap_pmf(x[:, None] - t[None, :], epsilon=eps)
    q[0, :] = r ** t / (1 + r)
    q[s, :] = r ** (s - t) / (1 + r)
    joint = (q[:, None, :] * q[None, :, :] * pt[None, None, :]).reshape(-1, s + 1)
    evar_y = _expected_post_var(joint, m1, m2)
    K = math.ceil(40 / eps)
    c2 = ((1 - r) / (1 + r)) ** 2
    w = np.arange(-s - 2 * K, s + 2 * K + 1)
    d = np.abs(w[:, None] - (2 * t - s)[None, :]).astype(float)
    lik = np.where(d <= 2 * K, c2 * r ** d * (d + 1 + 2 * r * r / (1 - r * r)), 0.0)
    evar_ys = _expected_post_var(lik * pt[None, :], m1, m2)
    return SumProjectionResult(evar_y=evar_y, evar_ystar=evar_ys)


def thm2_power(n: int, *, epsilon: float, theta0: float, theta: float, alpha: float = 0.05) -> PowerResult:
    """Power of level-α one-sided tests of θ = θ₀ against θ > θ₀ on Y = T + Lap(1/ε) and on Y*.

    The UMP test on Y rejects when Y > c (c by ``brentq`` on [−50, 80]); on Y* = round(clamp(Y, 0, n)) the
    randomised UMP test uses k = max{k : P(Y* ≥ k) > α}, γ = (α − P(Y* > k))/P(Y* = k).

    References
    ----------
    S1 Thm. 2 (L355–369); erratum E5 (rounding makes the loss strict).
    """
    n = check_int_in_range(n, name="n", lo=1, hi=MAX_TOY_N)
    eps = check_epsilon(epsilon)
    for nm, v in (("theta0", theta0), ("theta", theta)):
        if not (0.0 <= float(v) <= 1.0):
            raise ValueError(f"{nm} must be in [0, 1], got {v!r}")
    if not (0 < alpha < 1):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    bsc = 1.0 / eps
    t = np.arange(n + 1)

    def sf_y(c: float, th: float) -> float:
        return float(np.sum(stats.binom.pmf(t, n, th) * stats.laplace.sf(c - t, scale=bsc)))

    # the spec's bracket [−50, 80] covers ε ≳ 0.5; widen it with the noise scale for small ε
    c = optimize.brentq(lambda x: sf_y(x, theta0) - alpha, min(-50.0, -60 * bsc), max(80.0, n + 60 * bsc),
                        xtol=1e-12)

    def ystar_pmf(th: float) -> np.ndarray:
        k = np.arange(n + 1)
        upper = np.where(k == n, np.inf, k + 0.5)
        lower = np.where(k == 0, -np.inf, k - 0.5)
        m = (stats.laplace.cdf(upper[:, None] - t[None, :], scale=bsc)
             - stats.laplace.cdf(lower[:, None] - t[None, :], scale=bsc))
        return m @ stats.binom.pmf(t, n, th)

    p0 = ystar_pmf(theta0)
    ge = np.cumsum(p0[::-1])[::-1]  # P(Y* ≥ k)
    k_star = int(np.max(np.nonzero(ge > alpha)[0]))
    p_gt = float(ge[k_star] - p0[k_star])
    gamma = (alpha - p_gt) / p0[k_star]
    p1 = ystar_pmf(theta)
    power_ys = float(p1[k_star + 1:].sum() + gamma * p1[k_star])
    return PowerResult(power_y=sf_y(c, theta), power_ystar=power_ys, threshold_y=float(c), k_ystar=k_star,
                       gamma_ystar=float(gamma))
