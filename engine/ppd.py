"""Partially private data: ε-DP relative to public information Z, and count releases that respect it.

Pure numpy/scipy (pandas for tables); never imports streamlit. Two parts:

- **Theory calculators** (epsilon calculator, Tab 9): Lemma 5 invariant inflation, W∞ / Δ_z for correlated
  public information (Examples 2–3), the effective-ε rule (Cor. 1), the Wasserstein exponential mechanism
  audit with the factor κ (Thm. 1, Example 1), Prop. 1 constants, the information-loss toys (Lemma 7,
  Thm. 2) and Algorithm 1 (posterior given noisy counts and a public total), exact and by rejection.
- **County release** (stratified synthesis viewer, third tab): county × month case/death counts released
  under public state totals and public previous-month counts, by post-processing (PP) or by Wasserstein
  exponential mechanisms (WEM) with naive, congenial and prior-congenial base measures.

References
----------
S1 = ``shared/seeds/001_cddb039cfb564267.txt``: Seeman, Slavković & Reimherr, *A Formal Privacy Framework
for Partially Private Data* (working paper, 5 Apr 2022); line numbers ``L123``. Normative reading and the
errata E1–E13: ``shared/specs/partially_private.md`` (§2, §3). The paper prints no numeric results; every
number here is computed, and the county data are synthetic unless the user uploads their own.

Errata handled elsewhere than in a single function: E10 (Ex. 4, L389, "ε ≥ max|Q/P|" is read as
|log Q/P|; the effective-ε rule :func:`effective_epsilon_dpz` uses that reading), E11 (App. A.1 labelled
"Lemma 1" proves Lemma 2; the Lemma 4 proof sits inside A.2 — citations here use the corrected numbers),
E12 (cite §5.1, PA DoH + CPS/IPUMS, not the abstract's Census + CDC), E13 (Lemma 6's ‖L_X(y) − L_X′(y)‖
is a scalar absolute value; :func:`method_guarantee` uses σ(Δ_z) as a scalar).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import optimize, special, stats

from engine.data import read_uploaded_csv
from engine.parallel import imap_unordered

__all__ = [
    "PublicInfo", "GaussianPublicInfo", "Prop1MSE", "Stage1Result", "CountRelease", "PostprocessResult",
    "PosteriorSummary", "Lemma7Result", "SumProjectionResult", "PowerResult", "CountyPanel",
    "winf_1d", "delta_z_binom", "delta_z_table", "gaussian_public_coefficients", "delta_z_gauss",
    "effective_epsilon_dpz", "required_scale_dpz", "eps_star_invariant", "compose_dpz",
    "trunc_laplace_em_sample", "realized_epsilon_trunc_em", "realized_epsilon_trunc_em_limit",
    "knorm_l2_sample", "prop1_mse", "dlap_pmf", "dlap_sample", "dlap_var", "project_stage1",
    "round_stage2", "postprocess", "dm_logpmf", "wem_gibbs", "posterior_exact_counts",
    "posterior_rejection_counts", "lemma7_toy", "sum_projection_toy", "thm2_power", "synth_pa_like",
    "validate_county_csv", "read_county_csv", "method_guarantee", "guarantee_table", "release_month",
    "run_partially_private_release", "contraction_frequencies", "METHODS", "METHOD_LABELS",
    "REGION_NAMES", "MAX_COUNTY_CSV_BYTES", "COMPOSITION_MESSAGE",
]

METHODS = ("pp", "wem_naive", "wem_congenial", "wem_prior")
METHOD_LABELS = {
    "pp": "PP (post-processing)",
    "wem_naive": "WEM-naive",
    "wem_congenial": "WEM-congenial",
    "wem_prior": "WEM-prior",
}
#: Stage-1 cone regions (§2.7): 0 interior, 1 edge (deaths → 0), 2 diagonal (deaths = cases), 3 apex (0, 0).
REGION_NAMES = ("interior", "edge", "diagonal", "apex")
MAX_COUNTY_CSV_BYTES = 10_000_000
MAX_COMPOSITIONS = 200_000
MAX_TOY_N = 200
COMPOSITION_MESSAGE = "releases relative to different public variables do not compose (Lemma 4)"
_TOL = 1e-9


# --------------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------------
def _check_epsilon(epsilon: float, name: str = "epsilon") -> float:
    try:
        eps = float(epsilon)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {epsilon!r}") from None
    if not math.isfinite(eps) or eps <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {epsilon!r}")
    return eps


def _check_sensitivity(sensitivity: float, name: str = "sensitivity") -> float:
    sens = float(sensitivity)
    if not math.isfinite(sens) or sens <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {sensitivity!r}")
    return sens


def _check_kappa(kappa: float) -> float:
    k = float(kappa)
    if not math.isfinite(k) or k < 1:
        raise ValueError(f"kappa must be ≥ 1 (1 = paper-literal, 2 = safe), got {kappa!r}")
    return k


def _check_toy_n(n: int, name: str = "n") -> int:
    if int(n) != n or n < 1:
        raise ValueError(f"{name} must be a positive integer, got {n!r}")
    if n > MAX_TOY_N:
        raise ValueError(f"{name} must be at most {MAX_TOY_N} in the toy calculations, got {n}")
    return int(n)


# --------------------------------------------------------------------------------------------------
# result types
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PublicInfo:
    """Which public information the county release respects (S1 §5, L444; spec §2.7).

    state_total : Σ_j cases_{j,t} = s_t is public (printed "s_{j,t}", erratum E9).
    cases_ge_deaths, nonnegative : the cone c ≥ d ≥ 0.
    previous_month_prior : last month's counts are public and feed the prior-congenial base measure.
    exact_share : float in [0, 0.9]; the ⌊qJ⌋ most populous counties are published exactly (extension).
    """

    state_total: bool = True
    cases_ge_deaths: bool = True
    nonnegative: bool = True
    previous_month_prior: bool = True
    exact_share: float = 0.0

    def __post_init__(self) -> None:
        q = float(self.exact_share)
        if not (0.0 <= q <= 0.9):
            raise ValueError(f"exact_share (share of counties published exactly) must be in [0, 0.9], got {q}")

    @property
    def is_paper_set(self) -> bool:
        """The paper's public set: state total plus the cone c ≥ d ≥ 0."""
        return self.state_total and self.cases_ge_deaths and self.nonnegative


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
class Stage1Result:
    """Stage-1 least-squares projection (real-valued) with the cone region per county and the multiplier λ."""

    cases: np.ndarray
    deaths: np.ndarray
    region: np.ndarray | None
    lam: float


@dataclass(frozen=True)
class CountRelease:
    """Released integer counts per county."""

    cases: np.ndarray
    deaths: np.ndarray


@dataclass(frozen=True)
class PostprocessResult:
    """PP output: the stage-1 projection and the stage-2 integer release."""

    stage1: Stage1Result
    release: CountRelease


@dataclass(frozen=True)
class PosteriorSummary:
    """Posterior mean / sd of the cell probabilities p given noisy counts and a public total (Algorithm 1)."""

    mean: np.ndarray
    sd: np.ndarray
    acceptance: float
    n_accepted: int | None = None
    n_compositions: int | None = None


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


@dataclass(frozen=True, eq=False)
class CountyPanel:
    """County × month cases and deaths, counties in ascending population (S1 §5 case-study layout)."""

    counties: tuple[str, ...]
    months: tuple[str, ...]
    population: np.ndarray
    cases: np.ndarray
    deaths: np.ndarray
    synthetic: bool
    source: str

    @property
    def J(self) -> int:
        return len(self.counties)

    @property
    def T(self) -> int:
        return len(self.months)

    def state_totals(self) -> np.ndarray:
        """Public state totals s_t = Σ_j cases_{j,t}."""
        return self.cases.sum(axis=0)

    def fingerprint(self) -> str:
        """A short stable hash of the panel contents (for caches)."""
        import hashlib

        h = hashlib.sha256()
        for arr in (self.population, self.cases, self.deaths):
            h.update(np.ascontiguousarray(arr, dtype=np.int64).tobytes())
        h.update("|".join(self.counties).encode())
        h.update("|".join(self.months).encode())
        return h.hexdigest()[:16]


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

    lo, hi = 0, n + 1  # the condition holds at h = n + 1 (both laws live in [0, n])
    if ok(0):
        return 0
    while hi - lo > 1:  # invariant: not ok(lo), ok(hi); monotone in h
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


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
    sens = _check_sensitivity(sensitivity)
    return sens * abs(gaussian_public_coefficients(n, r, rho).beta_v)


def effective_epsilon_dpz(epsilon: float, *, sensitivity_dp: float, sensitivity_z: float) -> float:
    """Effective ε relative to Z of noise calibrated as Lap(Δ_DP/ε): ε·Δ_z/Δ_DP (from S1 Cor. 1, L200).

    Examples
    --------
    >>> effective_epsilon_dpz(0.5, sensitivity_dp=1, sensitivity_z=13)
    6.5
    """
    eps = _check_epsilon(epsilon)
    sdp = _check_sensitivity(sensitivity_dp, "sensitivity_dp")
    sz = float(sensitivity_z)
    if not math.isfinite(sz) or sz < 0:
        raise ValueError(f"sensitivity_z must be finite and ≥ 0, got {sensitivity_z!r}")
    return eps * sz / sdp


def required_scale_dpz(epsilon: float, *, sensitivity_z: float) -> float:
    """Laplace scale Δ_z/ε that keeps ε-DP relative to Z (S1 Cor. 1, L200)."""
    eps = _check_epsilon(epsilon)
    sz = _check_sensitivity(sensitivity_z, "sensitivity_z")
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
    eps = _check_epsilon(epsilon)
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
    eps = [_check_epsilon(e) for e in np.atleast_1d(np.asarray(epsilons, dtype=float))]
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
    eps = _check_epsilon(epsilon)
    sens = _check_sensitivity(sensitivity)
    kap = _check_kappa(kappa)
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
    eps = _check_epsilon(epsilon)
    sens = _check_sensitivity(sensitivity)
    kap = _check_kappa(kappa)
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
    eps = _check_epsilon(epsilon)
    kap = _check_kappa(kappa)
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
    scale = _check_sensitivity(scale, "scale")
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
    eps = _check_epsilon(epsilon)
    sens = _check_sensitivity(sensitivity)
    if int(d1) != d1 or int(d2) != d2 or d2 < 1 or d1 < d2:
        raise ValueError(f"need integers d1 ≥ d2 ≥ 1, got d1={d1!r}, d2={d2!r}")
    b2 = (sens / eps) ** 2
    proj = d2 * (d1 + 1) * b2
    nat = d2 * (d2 + 1) * b2
    return Prop1MSE(projected=float(proj), native=float(nat), ratio=float((d1 + 1) / (d2 + 1)))


# --------------------------------------------------------------------------------------------------
# discrete Laplace
# --------------------------------------------------------------------------------------------------
def _dlap_r(epsilon: float, sensitivity: float) -> float:
    return math.exp(-_check_epsilon(epsilon) / _check_sensitivity(sensitivity))


def dlap_pmf(k: ArrayLike, *, epsilon: float, sensitivity: float = 1.0) -> np.ndarray:
    """Discrete Laplace pmf ((1−r)/(1+r))·r^|k| with r = e^−ε/Δ (S1 §5, L446–452)."""
    r = _dlap_r(epsilon, sensitivity)
    k = np.asarray(k)
    return (1 - r) / (1 + r) * np.power(r, np.abs(k))


def dlap_sample(*, epsilon: float, sensitivity: float = 1.0, size, rng=None) -> np.ndarray:
    """Discrete Laplace draws as G₁ − G₂ with G ~ Geometric(1 − r), r = e^−ε/Δ (spec §2.7)."""
    r = _dlap_r(epsilon, sensitivity)
    rng = np.random.default_rng(rng)
    return (rng.geometric(1 - r, size=size) - rng.geometric(1 - r, size=size)).astype(np.int64)


def dlap_var(*, epsilon: float, sensitivity: float = 1.0) -> float:
    """Variance 2r/(1 − r)² of the discrete Laplace with r = e^−ε/Δ."""
    r = _dlap_r(epsilon, sensitivity)
    return 2 * r / (1 - r) ** 2


# --------------------------------------------------------------------------------------------------
# §5 PP: stage 1 projection and stage 2 rounding
# --------------------------------------------------------------------------------------------------
def _project_cells(u: np.ndarray, v: np.ndarray, public: PublicInfo) -> tuple[np.ndarray, np.ndarray,
                                                                              np.ndarray | None]:
    """Project each (u, v) onto the active cell set; returns (c, d, region) with region for the cone only."""
    order, nonneg = public.cases_ge_deaths, public.nonnegative
    if order and nonneg:
        s2 = 0.5 * (u + v)
        interior = (u >= v) & (v >= 0)
        edge = (u >= v) & (v < 0) & (u >= 0)
        diag = (v > u) & (u + v >= 0)
        apex = ~(interior | edge | diag)
        c = np.where(interior | edge, u, np.where(diag, s2, 0.0))
        d = np.where(interior, v, np.where(diag, s2, 0.0))
        region = np.select([interior, edge, diag, apex], [0, 1, 2, 3]).astype(np.int8)
        return c, d, region
    if nonneg:  # orthant
        return np.maximum(u, 0.0), np.maximum(v, 0.0), None
    if order:  # half-space c ≥ d
        s2 = 0.5 * (u + v)
        swap = v > u
        return np.where(swap, s2, u), np.where(swap, s2, v), None
    return u.astype(float), v.astype(float), None


def _bisect_lambda(yc: np.ndarray, yd: np.ndarray, s: np.ndarray, public: PublicInfo,
                   iters: int) -> np.ndarray:
    """Vectorised bisection for the multiplier λ of Σc = s (rows are independent problems)."""
    w = 1.0 + np.max(np.abs(yc), axis=-1) + np.max(np.abs(yd), axis=-1) + np.abs(s)
    lo, hi = -w.astype(float), w.astype(float)

    def total(lam: np.ndarray) -> np.ndarray:
        c, _, _ = _project_cells(yc - lam[:, None], yd, public)
        return c.sum(axis=1)

    # Σc(λ) is continuous and non-increasing; expand by doubling until Σc(lo) ≥ s ≥ Σc(hi).
    for _ in range(200):
        bad = total(lo) < s
        if not bad.any():
            break
        lo = np.where(bad, 2 * lo, lo)
    for _ in range(200):
        bad = total(hi) > s
        if not bad.any():
            break
        hi = np.where(bad, 2 * hi, hi)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if np.all((mid == lo) | (mid == hi)):
            break  # adjacent floats: the remaining steps of the 200 could not change λ
        go_right = total(mid) > s
        lo = np.where(go_right, mid, lo)
        hi = np.where(go_right, hi, mid)
    return 0.5 * (lo + hi)


def _check_release_inputs(yc: ArrayLike, yd: ArrayLike, s: float, public: PublicInfo
                          ) -> tuple[np.ndarray, np.ndarray, float]:
    yc = np.asarray(yc, dtype=float)
    yd = np.asarray(yd, dtype=float)
    if yc.ndim != 1 or yc.shape != yd.shape or yc.size == 0:
        raise ValueError(f"cases and deaths must be 1-D of the same non-zero length, got {yc.shape} and "
                         f"{yd.shape}")
    s = float(s)
    if public.state_total and public.nonnegative and s < 0:
        raise ValueError(f"the state total must be ≥ 0 when counts are non-negative, got {s:g}")
    return yc, yd, s


def project_stage1(yc: ArrayLike, yd: ArrayLike, s: float, *, public: PublicInfo = PublicInfo(),
                   iters: int = 200) -> Stage1Result:
    """Stage 1 of PP: minimise ‖(c, d) − (Y^c, Y^d)‖²₂ subject to Σc = s_t and c ≥ d ≥ 0.

    Exact solver (spec §2.7): a multiplier λ on the sum; for fixed λ each county's (Y^c − λ, Y^d) is
    projected onto the cone (interior / edge / diagonal / apex); Σc(λ) is non-increasing, so λ is found by
    bisection (``iters`` steps) after a doubling bracket. Other public sets: orthant, half-space c ≥ d,
    identity; without the state total λ = 0.

    References
    ----------
    S1 §5.2, L446–461. Erratum E9: the state total is s_t (printed s_{j,t}).

    Examples
    --------
    >>> r = project_stage1([10.3, -2.0, 5.5, 3.2], [1.2, 0.5, 7.0, -1.5], 14)
    >>> np.round(r.cases, 6).tolist(), r.region.tolist()
    ([8.0, 0.0, 5.1, 0.9], [0, 3, 2, 1])
    """
    yc, yd, s = _check_release_inputs(yc, yd, s, public)
    if public.state_total:
        lam = float(_bisect_lambda(yc[None, :], yd[None, :], np.array([s]), public, iters)[0])
    else:
        lam = 0.0
    c, d, region = _project_cells(yc - lam, yd, public)
    if not public.is_paper_set:
        region = None
    return Stage1Result(cases=c, deaths=d, region=region, lam=lam)


def _snap(x: np.ndarray) -> np.ndarray:
    """Snap values within 1e-9 of an integer (bisection round-off) so floors are stable."""
    r = np.rint(x)
    return np.where(np.abs(x - r) < 1e-9, r, x)


def round_stage2(cases: ArrayLike, deaths: ArrayLike, s: int, *, public: PublicInfo = PublicInfo()
                 ) -> CountRelease:
    """Stage 2 of PP: integer counts Y* = ⌊Ỹ⌋ + b with binary b minimising Σ|⌊Ỹ⌋ + b − Ỹ|.

    Constraints: Σ_j b^c_j = s_t − Σ⌊c̃_j⌋ (state total) and b^c_j − b^d_j ≥ ⌊d̃_j⌋ − ⌊c̃_j⌋ (cases ≥
    deaths). The cost of b is frac + b(1 − 2·frac). Solved with ``scipy.optimize.milp`` (HiGHS).

    References
    ----------
    S1 §5.2, L461. Erratum E8: the printed objective misses a "+" and the sum term; fixed as above.
    """
    c = _snap(np.asarray(cases, dtype=float))
    d = _snap(np.asarray(deaths, dtype=float))
    if c.shape != d.shape or c.ndim != 1:
        raise ValueError("cases and deaths must be 1-D of the same length")
    J = c.size
    fc, fd = np.floor(c), np.floor(d)
    rc, rd = c - fc, d - fd
    cost = np.concatenate([1 - 2 * rc, 1 - 2 * rd])
    rows, lo, hi = [], [], []
    if public.state_total:
        need = int(round(s - fc.sum()))
        if need < 0 or need > J:
            raise ValueError(f"stage-1 cases are inconsistent with the state total (need {need} round-ups "
                             f"for {J} counties)")
        rows.append(np.concatenate([np.ones(J), np.zeros(J)]))
        lo.append(need)
        hi.append(need)
    if public.cases_ge_deaths:
        A = np.hstack([np.eye(J), -np.eye(J)])
        rows.extend(A)
        lo.extend(fd - fc)
        hi.extend(np.full(J, np.inf))
    if not rows:
        b = (cost < 0).astype(float)
    else:
        cons = optimize.LinearConstraint(np.vstack(rows), np.array(lo, float), np.array(hi, float))
        res = optimize.milp(cost, constraints=cons, integrality=np.ones(2 * J),
                            bounds=optimize.Bounds(0, 1))
        if res.status != 0 or res.x is None:
            raise ValueError(f"stage-2 rounding found no feasible integer solution ({res.message})")
        b = np.rint(res.x)
    return CountRelease(cases=(fc + b[:J]).astype(np.int64), deaths=(fd + b[J:]).astype(np.int64))


def postprocess(yc: ArrayLike, yd: ArrayLike, s: int, *, public: PublicInfo = PublicInfo()
                ) -> PostprocessResult:
    """PP: stage-1 projection then stage-2 rounding of noisy counts (S1 §5.2, L446–461)."""
    st1 = project_stage1(yc, yd, s, public=public)
    return PostprocessResult(stage1=st1, release=round_stage2(st1.cases, st1.deaths, s, public=public))


# --------------------------------------------------------------------------------------------------
# §5.3 WEM: Dirichlet-multinomial prior and the Gibbs sampler
# --------------------------------------------------------------------------------------------------
def dm_logpmf(y: ArrayLike, s: int, a: ArrayLike) -> float:
    """Dirichlet-multinomial log-pmf in standard form, A = Σa_j.

    log φ = lnΓ(A) + lnΓ(s+1) − lnΓ(s+A) + Σ_j[lnΓ(y_j+a_j) − lnΓ(a_j) − lnΓ(y_j+1)].

    References
    ----------
    S1 §5.3, L483. Erratum E3: the printed version swaps the "+1"s and assumes ΣX_{t−1} = s_t; it puts zero
    mass on zero counts and does not sum to 1.

    Examples
    --------
    >>> round(float(np.exp(dm_logpmf([2, 1, 0], 3, [1, 1, 1]))), 12)
    0.1
    """
    y = np.asarray(y, dtype=float)
    a = np.asarray(a, dtype=float)
    if y.shape != a.shape or y.ndim != 1:
        raise ValueError("y and a must be 1-D of the same length")
    if np.any(a <= 0):
        raise ValueError("Dirichlet-multinomial parameters must be > 0")
    if np.any(y < 0) or np.any(y != np.round(y)):
        raise ValueError("counts must be non-negative integers")
    if int(y.sum()) != int(s):
        raise ValueError(f"counts sum to {int(y.sum())}, not the total s = {s}")
    A = a.sum()
    g = special.gammaln
    return float(g(A) + g(s + 1) - g(s + A) + np.sum(g(y + a) - g(a) - g(y + 1)))


def _window(R: float, a: float, zwin: float) -> int:
    return int(math.ceil(zwin * math.sqrt(math.sqrt(max(R, 1.0)) / a) + zwin / a)) + 2


def _draw(logw: np.ndarray, rng: np.random.Generator) -> int:
    w = np.exp(logw - logw.max())
    cw = np.cumsum(w)
    return int(np.searchsorted(cw, rng.random() * cw[-1], side="right"))


def _largest_remainder(s: int, weights: np.ndarray) -> np.ndarray:
    q = s * weights / weights.sum()
    base = np.floor(q).astype(np.int64)
    rest = int(s - base.sum())
    if rest > 0:
        order = np.argsort(-(q - base), kind="stable")
        base[order[:rest]] += 1
    return base


def wem_gibbs(xc: ArrayLike, xd: ArrayLike, s: int, *, epsilon: float, sensitivity: float, base: str,
              alpha: float | None = None, prev: ArrayLike | None = None, kappa: float = 2.0,
              sweeps: int = 30, zwin: float = 20.0, init: tuple[ArrayLike, ArrayLike] | None = None,
              public: PublicInfo = PublicInfo(), rng=None) -> CountRelease:
    """One approximate draw from the Wasserstein exponential mechanism by Gibbs sampling.

    Target density ∝ exp(−a·‖(c, d) − (X^c_t, X^d_t)‖₂)·ν(c, d), a = ε/(κΔ), with base measure ν:

    - ``naive``: counting measure on ℤ^{2J} (every coordinate updated alone);
    - ``congenial``: integers satisfying the active public constraints (with the state total: J transfer
      moves per sweep between two counties, then each death);
    - ``prior``: congenial × DM(c; s_t, α·(prev + 0.5)) (needs the state total and ``prev``).

    Each conditional is exact on a window W = ⌈z_w·√(√max(R, 1)/a) + z_w/a⌉ + 2 (R the squared distance
    of the other coordinates). Starting points are data-independent (spec §2.7). MCMC is approximate.

    References
    ----------
    S1 Thm. 1 (L204–216), §5.3 (L463–485). Errata: E1 (κ = 2 default), E3 (DM form, pseudo-count 0.5),
    E9 (loss uses X_t, not Y_t; naive space ℤ^{2J}). The paper gives no sampler; this one is ours.
    """
    eps = _check_epsilon(epsilon)
    sens = _check_sensitivity(sensitivity)
    kap = _check_kappa(kappa)
    if base not in ("naive", "congenial", "prior"):
        raise ValueError(f"base must be 'naive', 'congenial' or 'prior', got {base!r}")
    xc = np.asarray(xc, dtype=np.int64)
    xd = np.asarray(xd, dtype=np.int64)
    if xc.ndim != 1 or xc.shape != xd.shape or xc.size == 0:
        raise ValueError("xc and xd must be 1-D of the same non-zero length")
    J = xc.size
    s = int(s)
    if base != "naive" and public.state_total and public.nonnegative and s < 0:
        raise ValueError(f"the state total must be ≥ 0 when counts are non-negative, got {s}")
    if int(sweeps) < 1:
        raise ValueError("sweeps must be ≥ 1")
    prev_arr = None
    if prev is not None:
        prev_arr = np.asarray(prev, dtype=float)
        if prev_arr.shape != xc.shape:
            raise ValueError(f"prev must have length {J}, got {prev_arr.shape}")
    alpha_vec = None
    if base == "prior":
        if prev_arr is None:
            raise ValueError("the prior-congenial base measure needs the previous month's counts (prev)")
        if not public.state_total:
            raise ValueError("the prior-congenial base measure needs the state total to be public")
        if alpha is None or not (float(alpha) > 0) or not math.isfinite(float(alpha)):
            raise ValueError(f"alpha must be > 0, got {alpha!r}")
        alpha_vec = float(alpha) * (np.maximum(prev_arr, 0.0) + 0.5)
    rng = np.random.default_rng(rng)
    a = eps / (kap * sens)
    g = special.gammaln

    # --- starting point (data-independent) ---
    if init is not None:
        c = np.asarray(init[0], dtype=np.int64).copy()
        d = np.asarray(init[1], dtype=np.int64).copy()
        if c.shape != xc.shape or d.shape != xc.shape:
            raise ValueError("init must be a pair of arrays of length J")
    elif base == "naive":
        if prev_arr is not None:
            c = np.rint(prev_arr).astype(np.int64)
        else:
            c = np.zeros(J, dtype=np.int64)
        d = np.zeros(J, dtype=np.int64)
    else:
        w = (np.maximum(prev_arr, 0.0) if prev_arr is not None else np.zeros(J)) + 0.5
        if public.state_total:
            c = _largest_remainder(max(s, 0), w) if s >= 0 else np.zeros(J, np.int64)
            if s < 0:  # only reachable with non-negativity off
                c[0] = s
        else:
            c = np.rint(prev_arr).astype(np.int64) if prev_arr is not None else np.zeros(J, np.int64)
            if public.nonnegative:
                c = np.maximum(c, 0)
        d = np.zeros(J, dtype=np.int64)
        if not public.nonnegative and public.cases_ge_deaths:
            d = np.minimum(d, c)

    uc = (c - xc).astype(float)
    ud = (d - xd).astype(float)
    R_all = float(uc @ uc + ud @ ud)
    lo_d = 0 if public.nonnegative else None
    ordered = public.cases_ge_deaths

    def update_single(val: int, truth: int, R: float, lo: float | None, hi: float | None) -> int:
        W = _window(R, a, zwin)
        lo_w, hi_w = truth - W, truth + W
        if lo is not None:
            lo_w = max(lo_w, lo)
        if hi is not None:
            hi_w = min(hi_w, hi)
        if lo_w > hi_w:  # window misses the feasible set: the density is monotone there, so hug the bound
            if lo is not None and lo > truth:
                lo_w, hi_w = lo, lo + W
            else:
                lo_w, hi_w = hi - W, hi
            if lo is not None:
                lo_w = max(lo_w, lo)
            if hi is not None:
                hi_w = min(hi_w, hi)
        cand = np.arange(lo_w, hi_w + 1)
        uu = (cand - truth).astype(float)
        return int(cand[_draw(-a * np.sqrt(R + uu * uu), rng)])

    for _ in range(int(sweeps)):
        if base == "naive":
            for idx in rng.permutation(2 * J):
                if idx < J:
                    j = idx
                    R = max(R_all - uc[j] ** 2, 0.0)
                    c[j] = update_single(int(c[j]), int(xc[j]), R, None, None)
                    uc[j] = c[j] - xc[j]
                    R_all = R + uc[j] ** 2
                else:
                    j = idx - J
                    R = max(R_all - ud[j] ** 2, 0.0)
                    d[j] = update_single(int(d[j]), int(xd[j]), R, None, None)
                    ud[j] = d[j] - xd[j]
                    R_all = R + ud[j] ** 2
            continue
        # --- cases ---
        if public.state_total and J >= 2:
            for _m in range(J):
                j, k = rng.choice(J, size=2, replace=False)
                R = max(R_all - uc[j] ** 2 - uc[k] ** 2, 0.0)
                W = _window(R, a, zwin)
                m0 = 0.5 * (uc[j] - uc[k])
                m_lo, m_hi = math.floor(m0) - W, math.ceil(m0) + W
                if ordered:
                    m_lo, m_hi = max(m_lo, -(c[k] - d[k])), min(m_hi, c[j] - d[j])
                elif public.nonnegative:
                    m_lo, m_hi = max(m_lo, -c[k]), min(m_hi, c[j])
                if m_lo > m_hi:
                    continue  # cannot happen when the state is feasible (m = 0 is allowed)
                m = np.arange(m_lo, m_hi + 1)
                r1 = uc[j] - m
                r2 = uc[k] + m
                logw = -a * np.sqrt(R + r1 * r1 + r2 * r2)
                if base == "prior":
                    cj, ck = c[j] - m, c[k] + m
                    logw = logw + (g(cj + alpha_vec[j]) - g(cj + 1.0) + g(ck + alpha_vec[k]) - g(ck + 1.0))
                mm = int(m[_draw(logw, rng)])
                c[j] -= mm
                c[k] += mm
                uc[j] -= mm
                uc[k] += mm
                R_all = R + uc[j] ** 2 + uc[k] ** 2
        elif not public.state_total:
            for j in rng.permutation(J):
                R = max(R_all - uc[j] ** 2, 0.0)
                lo = int(d[j]) if ordered else (0 if public.nonnegative else None)
                c[j] = update_single(int(c[j]), int(xc[j]), R, lo, None)
                uc[j] = c[j] - xc[j]
                R_all = R + uc[j] ** 2
        # --- deaths ---
        for j in rng.permutation(J):
            R = max(R_all - ud[j] ** 2, 0.0)
            hi = int(c[j]) if ordered else None
            if ordered and lo_d is not None:
                W = _window(R, a, zwin)
                lo_w, hi_w = max(0, int(xd[j]) - W), min(int(c[j]), int(xd[j]) + W)
                if lo_w > hi_w:
                    lo_w, hi_w = 0, int(c[j])
                cand = np.arange(lo_w, hi_w + 1)
                uu = (cand - xd[j]).astype(float)
                d[j] = int(cand[_draw(-a * np.sqrt(R + uu * uu), rng)])
            else:
                d[j] = update_single(int(d[j]), int(xd[j]), R, lo_d, hi)
            ud[j] = d[j] - xd[j]
            R_all = R + ud[j] ** 2
    return CountRelease(cases=c.astype(np.int64), deaths=d.astype(np.int64))


# --------------------------------------------------------------------------------------------------
# §4 Algorithm 1: posterior of cell probabilities given noisy counts and a public total
# --------------------------------------------------------------------------------------------------
def _compositions(s: int, J: int) -> np.ndarray:
    n_comp = math.comb(s + J - 1, J - 1)
    if n_comp > MAX_COMPOSITIONS:
        raise ValueError(f"{n_comp:,} compositions of s = {s} into {J} cells exceed the limit of "
                         f"{MAX_COMPOSITIONS:,}; use a smaller total or fewer cells")
    bars = np.array(list(itertools.combinations(range(s + J - 1), J - 1)), dtype=np.int64)
    bars = bars.reshape(n_comp, J - 1)
    edges = np.hstack([np.full((n_comp, 1), -1), bars, np.full((n_comp, 1), s + J - 1)])
    return np.diff(edges, axis=1) - 1


def _check_alg1_inputs(y, s, prior_alpha):
    y = np.asarray(y, dtype=float)
    a0 = np.asarray(prior_alpha, dtype=float)
    if y.ndim != 1 or y.shape != a0.shape or y.size < 2:
        raise ValueError("y and prior_alpha must be 1-D of the same length (≥ 2 cells)")
    if not np.all(np.isfinite(y)):
        raise ValueError("the noisy counts y must be finite numbers")
    if not np.all(np.isfinite(a0)) or np.any(np.abs(a0) > np.finfo(float).max / max(a0.size, 1)):
        raise ValueError("prior_alpha must be finite numbers")
    if np.any(a0 <= 0):
        raise ValueError("prior_alpha must be > 0")
    if not math.isfinite(s) or int(s) != s or s < 0:
        raise ValueError(f"the public total s must be a non-negative integer, got {s!r}")
    return y, int(s), a0


def posterior_exact_counts(y: ArrayLike, s: int, prior_alpha: ArrayLike, *, epsilon: float,
                           sensitivity: float) -> PosteriorSummary:
    """Exact posterior of p given noisy counts y and the public total s, by enumerating compositions.

    Model: p ~ Dir(α₀), X | p ~ Mult(s, p), y = X + iid DLap per cell (r = e^−ε/Δ). P(x | y, z) ∝
    DM(x; s, α₀)·r^‖y−x‖₁ and E[p | x] = (α₀ + x)/(Σα₀ + s); the acceptance probability of the corrected
    Algorithm 1 is Σ_x DM(x)·r^‖y−x‖₁.

    References
    ----------
    S1 §4 Algorithm 1, Thm. 3 (L404–430); erratum E2 (spec §2.6).
    """
    y, s, a0 = _check_alg1_inputs(y, s, prior_alpha)
    r = _dlap_r(epsilon, sensitivity)
    X = _compositions(s, y.size)
    A = a0.sum()
    # log DM(x; s, α₀) with the Γ ratios as log rising factorials Σ_{i<x} log(a + i) (x ≤ s): the usual
    # gammaln(x + a) − gammaln(a) cancels catastrophically for large α₀ (a strong prior), and overflows.
    steps = np.arange(s)
    rise = np.concatenate([np.zeros((a0.size, 1)), np.cumsum(np.log(a0[:, None] + steps[None, :]), axis=1)], axis=1)
    log_dm = (special.gammaln(s + 1) - float(np.log(A + steps).sum())
              + np.sum(rise[np.arange(a0.size)[None, :], X] - special.gammaln(X + 1), axis=1))
    log_acc = log_dm + np.abs(y - X).sum(axis=1) * math.log(r)
    acc = float(np.exp(special.logsumexp(log_acc)))
    w = np.exp(log_acc - log_acc.max())
    w /= w.sum()
    B = A + s
    beta = X + a0
    m_x = beta / B
    v_x = m_x * (1.0 - m_x) / (B + 1)
    mean = w @ m_x
    var = w @ v_x + w @ (m_x - mean) ** 2
    return PosteriorSummary(mean=mean, sd=np.sqrt(var), acceptance=acc, n_accepted=None,
                            n_compositions=int(X.shape[0]))


def posterior_rejection_counts(y: ArrayLike, s: int, prior_alpha: ArrayLike, *, epsilon: float,
                               sensitivity: float, n_proposals: int, rng=None,
                               rule: str = "corrected") -> PosteriorSummary:
    """Algorithm 1 by rejection: θ* ~ π(θ|z), X* ~ π(x|θ*, z), accept if U ≤ π(y|X*, z)/M.

    For per-cell discrete Laplace, π(y|X*)/M = r^‖y − X*‖₁ with r = e^−ε/Δ (M = sup_x π(y|x, z)).
    ``rule="paper_literal"`` applies the printed test (return when ratio ≤ U), which is **incorrect
    (reversed test)** and is offered only to show the error.

    References
    ----------
    S1 §4 Algorithm 1, L404–420; Thm. 3 proof L689–702. Erratum E2: the printed accept test is reversed and
    its bound C = sup_y π(y|x*, z) (L697) depends on x*; we accept if U ≤ π(y|x*, z)/M with M constant.
    """
    if rule not in ("corrected", "paper_literal"):
        raise ValueError(f"rule must be 'corrected' or 'paper_literal', got {rule!r}")
    y, s, a0 = _check_alg1_inputs(y, s, prior_alpha)
    r = _dlap_r(epsilon, sensitivity)
    if int(n_proposals) < 1:
        raise ValueError("n_proposals must be ≥ 1")
    n = int(n_proposals)
    rng = np.random.default_rng(rng)
    theta = rng.dirichlet(a0, size=n)
    X = rng.multinomial(s, theta)
    ratio = np.power(r, np.abs(y - X).sum(axis=1))
    u = rng.random(n)
    accept = (u <= ratio) if rule == "corrected" else (ratio <= u)
    k = int(accept.sum())
    if k == 0:
        nan = np.full(y.size, np.nan)
        return PosteriorSummary(mean=nan, sd=nan, acceptance=0.0, n_accepted=0, n_compositions=None)
    th = theta[accept]
    sd = th.std(axis=0, ddof=1) if k > 1 else np.zeros(y.size)
    return PosteriorSummary(mean=th.mean(axis=0), sd=sd, acceptance=k / n, n_accepted=k,
                            n_compositions=None)


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
    n = _check_toy_n(n)
    eps = _check_epsilon(epsilon)
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
    s = _check_toy_n(s, "s")
    eps = _check_epsilon(epsilon)
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
    n = _check_toy_n(n)
    eps = _check_epsilon(epsilon)
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


# --------------------------------------------------------------------------------------------------
# §7 data
# --------------------------------------------------------------------------------------------------
def synth_pa_like(*, seed: int = 2022, J: int = 67, T: int = 24) -> CountyPanel:
    """Synthetic PA-like county × month cases and deaths (spec §7 exact recipe; not real data).

    Populations are log-uniform between the 2020 Census counts of the smallest and largest Pennsylvania
    counties (4,547 and 1,603,797; external facts, not in S1), two epidemic waves, county multipliers
    Gamma(20, 1/20), Poisson cases, binomial deaths with a falling fatality rate.

    References
    ----------
    S1 §5.1 (L432–444; erratum E12: the case study uses PA DoH + CPS/IPUMS, not Census + CDC).
    """
    if int(J) < 3 or int(T) < 2:
        raise ValueError("need J ≥ 3 counties and T ≥ 2 months")
    J, T = int(J), int(T)
    rng = np.random.default_rng(seed)
    pop = np.sort(np.exp(rng.uniform(math.log(4547), math.log(1603797), J)))
    pop[0] = 4547
    pop[-1] = 1603797
    t = np.arange(T)
    wave = 0.002 + 0.012 * np.exp(-0.5 * ((t - 9) / 2) ** 2) + 0.02 * np.exp(-0.5 * ((t - 21) / 1.5) ** 2)
    mult = rng.gamma(20, 1 / 20, J)
    cases = rng.poisson(pop[:, None] * wave[None, :] * mult[:, None])
    cfr = 0.02 * np.exp(-t / 12) + 0.004
    deaths = rng.binomial(cases, cfr[None, :])
    return CountyPanel(
        counties=tuple(f"County {j + 1:02d}" for j in range(J)),
        months=tuple(f"Month {m + 1:02d}" for m in range(T)),
        population=np.rint(pop).astype(np.int64),
        cases=cases.astype(np.int64),
        deaths=deaths.astype(np.int64),
        synthetic=True,
        source="synthetic, PA-like; not real data",
    )


_CSV_COLUMNS = ("county", "month", "cases", "deaths", "population")


def _row_label(i: int, county=None, month=None) -> str:
    extra = ""
    if county is not None:
        extra = f" (county {county!r}" + (f", month {month!r})" if month is not None else ")")
    return f"data row {i + 1}{extra}"


def validate_county_csv(df: pd.DataFrame) -> CountyPanel:
    """Validate an uploaded county × month table and build a :class:`CountyPanel` (spec §7).

    Rules: columns ``county, month, cases, deaths, population`` (case-insensitive); integer values;
    cases, deaths ≥ 0; deaths ≤ cases; population > 0 and constant within each county; every county × month
    exactly once; 3–500 counties; 2–240 months. Months sort as integers if all are integers, otherwise
    lexicographically ("YYYY-MM" recommended); counties by population, then name. Each violation raises
    ``ValueError`` naming the first offending row (data rows are numbered from 1, header excluded).
    """
    if not isinstance(df, pd.DataFrame):
        raise ValueError("expected a table (pandas DataFrame)")
    cols = {str(c).strip().lower(): c for c in df.columns}
    twice = [c for c in _CSV_COLUMNS if sum(str(x).strip().lower() == c for x in df.columns) > 1]
    if twice:
        raise ValueError(f"the column {twice[0]} appears more than once (names are case-insensitive); expected "
                         "each of " + ", ".join(_CSV_COLUMNS) + " once")
    missing = [c for c in _CSV_COLUMNS if c not in cols]
    if missing:
        raise ValueError(f"missing column(s) {', '.join(missing)}; expected the columns "
                         f"{', '.join(_CSV_COLUMNS)} (case-insensitive)")
    if len(df) == 0:
        raise ValueError("the file has no data rows; expected one row per county × month")
    frame = pd.DataFrame({c: df[cols[c]] for c in _CSV_COLUMNS}).reset_index(drop=True)
    county = frame["county"].astype("string").str.strip()
    month = frame["month"].astype("string").str.strip()
    for name, col in (("county", county), ("month", month)):
        bad = col.isna() | (col == "")
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise ValueError(f"{_row_label(i)}: the {name} is empty; every row needs a county and a month")
    ints = {}
    for name in ("cases", "deaths", "population"):
        raw = frame[name]
        num = pd.to_numeric(raw.astype("string").str.strip(), errors="coerce")
        vals = num.to_numpy(dtype=float, na_value=np.nan)
        bad = ~np.isfinite(vals) | (vals != np.round(vals))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{_row_label(i, county[i], month[i])}: {name} = {raw.iloc[i]!r} is not a whole "
                             "number; expected integer counts")
        ints[name] = vals.astype(np.int64)
    c, d, p = ints["cases"], ints["deaths"], ints["population"]
    checks = (
        (c < 0, lambda i: f"cases = {c[i]} is negative; counts must be ≥ 0"),
        (d < 0, lambda i: f"deaths = {d[i]} is negative; counts must be ≥ 0"),
        (d > c, lambda i: f"deaths ({d[i]}) exceed cases ({c[i]}); expected deaths ≤ cases"),
        (p <= 0, lambda i: f"population = {p[i]} must be > 0"),
    )
    for bad, msg in checks:
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{_row_label(i, county[i], month[i])}: {msg(i)}")
    first_pop = pd.Series(p).groupby(county.to_numpy()).transform("first").to_numpy()
    bad = p != first_pop
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{_row_label(i, county[i], month[i])}: population {p[i]} differs from {first_pop[i]} "
                         "given earlier for this county; population must be constant within a county")
    dup = pd.DataFrame({"c": county, "m": month}).duplicated().to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise ValueError(f"{_row_label(i, county[i], month[i])}: this county × month appears more than once; "
                         "expected every county × month exactly once")
    uc = pd.unique(county.to_numpy())
    um = pd.unique(month.to_numpy())
    if not (3 <= len(uc) <= 500):
        raise ValueError(f"found {len(uc)} counties; expected between 3 and 500")
    if not (2 <= len(um) <= 240):
        raise ValueError(f"found {len(um)} months; expected between 2 and 240")
    if len(frame) != len(uc) * len(um):
        have = set(zip(county.to_numpy(), month.to_numpy()))
        for cc in uc:
            for mm in um:
                if (cc, mm) not in have:
                    raise ValueError(f"county {cc!r} has no row for month {mm!r}; expected every county × "
                                     "month exactly once")
    month_strs = [str(m) for m in um]
    try:
        month_order = sorted(month_strs, key=lambda m: int(m))
    except ValueError:
        month_order = sorted(month_strs)
    pop_of = dict(zip(county.to_numpy(), p))
    county_order = sorted((str(cc) for cc in uc), key=lambda cc: (pop_of[cc], cc))
    ci = {cc: k for k, cc in enumerate(county_order)}
    mi = {mm: k for k, mm in enumerate(month_order)}
    J, T = len(county_order), len(month_order)
    cases = np.zeros((J, T), np.int64)
    deaths = np.zeros((J, T), np.int64)
    rows = np.array([ci[x] for x in county.to_numpy()])
    colsi = np.array([mi[x] for x in month.to_numpy()])
    cases[rows, colsi] = c
    deaths[rows, colsi] = d
    return CountyPanel(
        counties=tuple(county_order), months=tuple(month_order),
        population=np.array([pop_of[cc] for cc in county_order], dtype=np.int64),
        cases=cases, deaths=deaths, synthetic=False, source="uploaded CSV",
    )


def read_county_csv(data: bytes) -> CountyPanel:
    """Parse uploaded county CSV bytes with the product's one bounded reader, then :func:`validate_county_csv`.

    ``engine.data.read_uploaded_csv`` enforces the byte, record, column and row limits before any frame is built
    (at most 10 MB, 30 columns and 500 × 240 rows here) and refuses ragged rows, blank or duplicate column
    names; every column stays text (``as_text``) so the counts are checked as whole numbers by the validator,
    and only empty cells count as missing (a county may be called "NA").
    """
    ds = read_uploaded_csv(data, max_bytes=MAX_COUNTY_CSV_BYTES, max_rows=500 * 240, max_cols=30,
                           min_rows=1, min_cols=2, as_text=True, missing_codes=("",))
    return validate_county_csv(ds.frame)


# --------------------------------------------------------------------------------------------------
# §2.7 guarantees and the county release
# --------------------------------------------------------------------------------------------------
def method_guarantee(method: str, *, epsilon: float, sensitivity: float, kappa: float = 2.0,
                     pp_sensitivity: float | None = None) -> float:
    """Privacy loss for the readout neighbour (one person changes county and/or death status, state total
    fixed: ‖ΔX‖₁ ≤ 4, ‖ΔX‖₂ ≤ 2): PP 4ε/Δ_PP; WEM-naive 2ε/(κΔ); WEM-congenial/prior 4ε/(κΔ).

    References
    ----------
    S1 §5 fair comparison (L485, "Δ_Z equal"); erratum E1 (κ; the constrained normaliser can double the loss).
    """
    eps = _check_epsilon(epsilon)
    sens = _check_sensitivity(sensitivity)
    kap = _check_kappa(kappa)
    if method == "pp":
        spp = sens if pp_sensitivity is None else _check_sensitivity(pp_sensitivity, "pp_sensitivity")
        return 4 * eps / spp
    if method == "wem_naive":
        return 2 * eps / (kap * sens)
    if method in ("wem_congenial", "wem_prior"):
        return 4 * eps / (kap * sens)
    raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")


def guarantee_table(*, epsilon: float, sensitivity: float, kappa: float = 2.0,
                    pp_sensitivity: float | None = None) -> pd.DataFrame:
    """The guarantee readout of §2.7 as a table: method, noise scale parameter, guaranteed ε."""
    rows = []
    for m in METHODS:
        g_eps = method_guarantee(m, epsilon=epsilon, sensitivity=sensitivity, kappa=kappa,
                                 pp_sensitivity=pp_sensitivity)
        if m == "pp":
            spp = sensitivity if pp_sensitivity is None else pp_sensitivity
            how = f"discrete Laplace, r = e^(−ε/{spp:g})"
        else:
            how = f"exp(−ε·loss/({kappa:g}·{sensitivity:g}))"
        rows.append({"method": METHOD_LABELS[m], "mechanism": how, "guaranteed epsilon": g_eps,
                     "neighbour": "one person changes county and/or death status; state total fixed"})
    return pd.DataFrame(rows)


def _exact_mask(panel: CountyPanel, public: PublicInfo) -> np.ndarray:
    J = panel.J
    q = int(math.floor(public.exact_share * J + 1e-9))
    mask = np.zeros(J, dtype=bool)
    if q > 0:
        mask[np.argsort(-panel.population, kind="stable")[:q]] = True
    return mask


def _check_month(panel: CountyPanel, t: int) -> int:
    if int(t) != t or not (0 <= t < panel.T):
        raise ValueError(f"month index t must be in 0..{panel.T - 1}, got {t!r}")
    return int(t)


def release_month(panel: CountyPanel, t: int, *, method: str, epsilon: float, sensitivity: float = 2.0,
                  alpha: float = 1.0, kappa: float = 2.0, public: PublicInfo = PublicInfo(), sweeps: int = 30,
                  zwin: float = 20.0, pp_sensitivity: float | None = None, rng=None) -> CountRelease:
    """Release one month of county cases and deaths by PP or by a WEM (S1 §5.2–5.3; spec §2.7).

    Counties in the ``exact_share`` are published exactly; the rest form the private problem with total
    s_t − Σ(public cases). PP adds discrete Laplace noise (r = e^−ε/Δ_PP, Δ_PP = ``pp_sensitivity`` or
    Δ) and post-processes; the WEMs sample :func:`wem_gibbs` with a = ε/(κΔ).
    """
    eps = _check_epsilon(epsilon)
    sens = _check_sensitivity(sensitivity)
    _check_kappa(kappa)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    t = _check_month(panel, t)
    rng = np.random.default_rng(rng)
    exact = _exact_mask(panel, public)
    priv = ~exact
    xc_all, xd_all = panel.cases[:, t], panel.deaths[:, t]
    xc, xd = xc_all[priv], xd_all[priv]
    s = int(xc_all.sum() - xc_all[exact].sum())
    out_c, out_d = xc_all.copy(), xd_all.copy()
    if method == "pp":
        spp = sens if pp_sensitivity is None else _check_sensitivity(pp_sensitivity, "pp_sensitivity")
        yc = xc + dlap_sample(epsilon=eps, sensitivity=spp, size=xc.size, rng=rng)
        yd = xd + dlap_sample(epsilon=eps, sensitivity=spp, size=xd.size, rng=rng)
        rel = postprocess(yc, yd, s, public=public).release
    else:
        base = method.removeprefix("wem_")
        prev = None
        if base == "prior":
            if not public.previous_month_prior:
                raise ValueError("WEM-prior needs the previous month as public information (toggle it on)")
            if t == 0:
                raise ValueError("WEM-prior needs a previous month; choose a month index ≥ 1")
            if not (float(alpha) > 0):
                raise ValueError(f"alpha must be > 0, got {alpha!r}")
            prev = panel.cases[priv, t - 1]
        elif t >= 1:
            prev = panel.cases[priv, t - 1]
        # naive chains start from last month's public counts (cases and deaths), zeros at t = 0 (spec §2.7)
        init = (panel.cases[priv, t - 1], panel.deaths[priv, t - 1]) if (base == "naive" and t >= 1) else None
        rel = wem_gibbs(xc, xd, s, epsilon=eps, sensitivity=sens, base=base, alpha=alpha, prev=prev,
                        kappa=kappa, sweeps=sweeps, zwin=zwin, init=init, public=public, rng=rng)
    out_c[priv] = rel.cases
    out_d[priv] = rel.deaths
    return CountRelease(cases=out_c.astype(np.int64), deaths=out_d.astype(np.int64))


def _chain_seed(root: int, *parts: int) -> np.random.SeedSequence:
    return np.random.SeedSequence([root, *parts])


def _release_chain(i: int, panel: CountyPanel, t: int, rep: int, e: float, m: str, al: float,
                   seed: np.random.SeedSequence, opts: dict) -> tuple[int, pd.DataFrame]:
    """One chain (a PP draw or a WEM Gibbs run) as a per-county frame: the joblib job of the release runs."""
    rel = release_month(panel, t, method=m, epsilon=e, alpha=1.0 if math.isnan(al) else al,
                        rng=np.random.default_rng(seed), **opts)
    xc, xd = panel.cases[:, t], panel.deaths[:, t]
    err_c = rel.cases - xc
    err_d = rel.deaths - xd
    total = float(np.sqrt(np.sum(err_c.astype(float) ** 2) + np.sum(err_d.astype(float) ** 2)))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel_err = np.where(xc > 0, np.abs(err_c) / np.where(xc > 0, xc, 1), np.nan)
    return i, pd.DataFrame({
        "rep": rep, "epsilon": e, "method": m, "alpha": al, "county": list(panel.counties),
        "population": panel.population, "true_cases": xc, "true_deaths": xd, "cases": rel.cases,
        "deaths": rel.deaths, "abs_err_cases": np.abs(err_c), "rel_err_cases": rel_err, "total_l2": total,
    })


def _run_chains(panel: CountyPanel, chains: list[tuple], opts: dict, n_jobs: int,
                progress: Callable[[float, str], None] | None) -> list[pd.DataFrame]:
    """Run (t, rep, ε, method, α) chains, in order or through ``engine.parallel``; frames in chain order.

    Processes, not threads: the Gibbs sweeps are Python loops that hold the GIL. Each chain's seed is a
    SeedSequence of (root, t, rep, ε, method, α), never a shared generator, so the frames do not depend on
    ``n_jobs`` or on completion order.
    """
    root = opts.pop("root")
    jobs = [(i, panel, t, rep, e, m, al,
             _chain_seed(root, t, rep, int(round(e * 1e6)), METHODS.index(m),
                         0 if math.isnan(al) else int(round(al * 1e9))), opts)
            for i, (t, rep, e, m, al) in enumerate(chains)]
    frames: list = [None] * len(jobs)

    def label(i):
        t, rep, e, m, al = chains[i]
        return (METHOD_LABELS[m] + ("" if math.isnan(al) else f", α = {al:g}")
                + f", ε = {e:g}, month {panel.months[t]}, draw {rep + 1}")

    n_jobs = max(1, min(int(n_jobs), len(jobs)))
    results = (r for _, r in imap_unordered(_release_chain, jobs, n_jobs=n_jobs))
    for done, (i, frame) in enumerate(results, start=1):
        frames[i] = frame
        if progress is not None:
            progress(done / len(jobs), label(i))
    return frames


def _release_opts(rng, sensitivity, kappa, public, sweeps, zwin, pp_sensitivity) -> dict:
    _check_sensitivity(sensitivity)
    _check_kappa(kappa)
    return dict(root=int(np.random.default_rng(rng).integers(2**62)), sensitivity=sensitivity, kappa=kappa,
                public=public, sweeps=sweeps, zwin=zwin, pp_sensitivity=pp_sensitivity)


def run_release_units(panel: CountyPanel, units: Sequence[tuple], *, sensitivity: float = 2.0, kappa: float = 2.0,
                      public: PublicInfo = PublicInfo(), sweeps: int = 30, zwin: float = 20.0,
                      pp_sensitivity: float | None = None, rng=None, n_jobs: int = 1,
                      progress: Callable[[float, str], None] | None = None) -> list[pd.DataFrame]:
    """Many release cells at once: ``units`` = (t, ε, method, α, reps) tuples; one frame per unit, in order.

    Frame i equals ``run_partially_private_release(panel, t, epsilons=[ε], methods=[method], alphas=[α],
    reps=reps, rng=rng, …)`` for a seed ``rng`` (an int; α is ignored unless the method is WEM-prior). The
    chains of all units form one job list over ``n_jobs`` joblib worker processes, each chain seeded by its
    own SeedSequence, so the frames are identical for any ``n_jobs``. ``progress(fraction, message)`` is
    called as each chain finishes: nondecreasing, ending at 1.0.

    References
    ----------
    S1 §5.2–5.3 (L446–485); spec ``partially_private.md`` §2.7, §6, §8.
    """
    checked = []
    for t, e, m, al, reps in units:
        if m not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {m!r}")
        al = float(al) if m == "wem_prior" else math.nan
        if m == "wem_prior" and not (al > 0):
            raise ValueError("alpha must be > 0")
        if int(reps) < 1:
            raise ValueError("reps must be ≥ 1")
        checked.append((_check_month(panel, t), _check_epsilon(e), m, al, int(reps)))
    opts = _release_opts(rng, sensitivity, kappa, public, sweeps, zwin, pp_sensitivity)
    chains, owner = [], []
    for u, (t, e, m, al, reps) in enumerate(checked):
        for rep in range(reps):
            chains.append((t, rep, e, m, al))
            owner.append(u)
    frames = _run_chains(panel, chains, opts, n_jobs, progress)
    return [pd.concat([f for f, o in zip(frames, owner) if o == u], ignore_index=True) for u in range(len(checked))]


def run_partially_private_release(panel: CountyPanel, t: int, *, epsilons: ArrayLike, methods: Sequence[str],
                                  alphas: ArrayLike = (1.0,), sensitivity: float = 2.0, kappa: float = 2.0,
                                  reps: int = 3, public: PublicInfo = PublicInfo(), sweeps: int = 30,
                                  zwin: float = 20.0, pp_sensitivity: float | None = None, rng=None,
                                  progress: Callable[[float, str], None] | None = None,
                                  n_jobs: int = 1) -> pd.DataFrame:
    """Replicated releases of month ``t`` over ε × method (× α for WEM-prior), one row per county.

    Columns: rep, epsilon, method, alpha (NaN unless prior), county, population, true_cases, true_deaths,
    cases, deaths, abs_err_cases, rel_err_cases (NaN when the truth is 0), total_l2 (ℓ₂ loss over all 2J
    cells of that draw). Each chain has its own seed derived from (rng, t, rep, ε, method, α), so a chain's
    result does not depend on which other methods are run, different months get independent noise, and
    ``n_jobs`` > 1 (chains over joblib worker processes) returns the same frame. ``progress(fraction,
    message)`` is called per chain.

    References
    ----------
    S1 §5.2–5.3 (L446–485); spec ``partially_private.md`` §4.
    """
    t = _check_month(panel, t)
    eps_list = [_check_epsilon(e) for e in np.atleast_1d(np.asarray(epsilons, dtype=float))]
    methods = list(methods)
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {m!r}")
    alpha_list = [float(a) for a in np.atleast_1d(np.asarray(alphas, dtype=float))]
    if "wem_prior" in methods and any(not (a > 0) for a in alpha_list):
        raise ValueError("alpha must be > 0")
    if int(reps) < 1:
        raise ValueError("reps must be ≥ 1")
    opts = _release_opts(rng, sensitivity, kappa, public, sweeps, zwin, pp_sensitivity)
    chains = [(t, rep, e, m, al) for rep in range(int(reps)) for e in eps_list for m in methods
              for al in (alpha_list if m == "wem_prior" else [math.nan])]
    return pd.concat(_run_chains(panel, chains, opts, n_jobs, progress), ignore_index=True)


def contraction_frequencies(panel: CountyPanel, *, epsilons: ArrayLike, sensitivity: float = 2.0,
                            reps: int = 20, months: Sequence[int] | None = None, rng=None) -> pd.DataFrame:
    """How often PP's stage 1 contracts counts to the boundary, per county and ε (Fig. 7 analogue).

    Events from the stage-1 cone region at the final λ (paper's public set only): case_zero = apex,
    death_zero = edge or apex, rate (survival rate contracted to 0, deaths = cases) = diagonal. Frequencies
    are over ``months`` (default: all months with index ≥ 1) × ``reps``; bisection is vectorised across
    replicates and months.

    References
    ----------
    S1 §5.4, Fig. 7 (L503–518).
    """
    sens = _check_sensitivity(sensitivity)
    eps_list = [_check_epsilon(e) for e in np.atleast_1d(np.asarray(epsilons, dtype=float))]
    months = list(range(1, panel.T)) if months is None else [_check_month(panel, m) for m in months]
    if not months:
        raise ValueError("need at least one month")
    reps = int(reps)
    if reps < 1:
        raise ValueError("reps must be ≥ 1")
    rng = np.random.default_rng(rng)
    public = PublicInfo()
    xc = np.repeat(panel.cases[:, months].T, reps, axis=0).astype(float)  # (P, J)
    xd = np.repeat(panel.deaths[:, months].T, reps, axis=0).astype(float)
    s = xc.sum(axis=1)
    rows = []
    for e in eps_list:
        yc = xc + dlap_sample(epsilon=e, sensitivity=sens, size=xc.shape, rng=rng)
        yd = xd + dlap_sample(epsilon=e, sensitivity=sens, size=xd.shape, rng=rng)
        lam = _bisect_lambda(yc, yd, s, public, 200)
        _, _, region = _project_cells(yc - lam[:, None], yd, public)
        rows.append(pd.DataFrame({
            "epsilon": e, "county": list(panel.counties), "population": panel.population,
            "case_zero": (region == 3).mean(axis=0), "death_zero": ((region == 1) | (region == 3)).mean(axis=0),
            "rate": (region == 2).mean(axis=0),
        }))
    return pd.concat(rows, ignore_index=True)
