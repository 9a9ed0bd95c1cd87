"""Stratified private mean estimation: group sizes, Theorem 10, Laplace/Coinpress releases, error laws.

Pure Python (numpy, scipy, pandas); never imports streamlit.

References
----------
Seed ``004_c5ca305e20a1adba.txt`` ("S4"): Rosenblatt, Stoyanovich & Musco, *A Simple and Practical Method
for Reducing the Disparate Impact of Differential Privacy* (arXiv 2312.11712v1). Line numbers (L…) refer to
the seed file. Normative restatement and errata E1–E14: ``shared/specs/stratified_synthesis_viewer.md`` §2.

Privacy model (S4 L107): n and the group sizes |G_i| are public, so the mean releases' neighbours replace one
record's value within its group (sizes unchanged): a clipped mean's sensitivity is then 2C/m and its Laplace
scale 2C/(mε). S4 L60 calls a record "modified or removed"; with public sizes only the modification is a
neighbour, and it is the one these scales protect.
Disjoint strata each receive the *full* budget (parallel composition, Def. 7, Prop. 8, L97–138), and
recombining the group estimates with public weights is post-processing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import integrate, optimize, special

from dpdash.common import ledger
from dpdash.common.search import grow_until
from dpdash.common.validation import as_generator, check_epsilon, check_finite, check_positive, check_rho, check_size

MODES = ("paper", "rigorous")
SMALL_STRATA = ("pool", "drop")
ESTIMATORS = ("laplace", "coinpress")
METHODS = ("naive", "stratified", "split")
WEIGHTS_MODES = ("exact", "holdout", "noisy")

#: Paper grid of privacy budgets (S4 L222, the reference's ε values).
PAPER_EPSILONS = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0)


# ---------------------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class MeanRelease:
    """One private release of a population mean and the k group means.

    ``groups`` holds the released group estimates (NaN = not released); ``weights`` the recombination
    weights (0 for dropped groups); ``kept`` marks groups estimated in their own stratum, ``pooled`` those
    merged into the small-groups stratum; ``budget`` is ε (``privacy_unit="epsilon-DP"``) or ρ
    (``"rho-zCDP"``).
    """

    method: str
    population: float
    groups: np.ndarray
    weights: np.ndarray
    kept: np.ndarray
    pooled: np.ndarray
    budget: float
    privacy_unit: str


@dataclass(frozen=True, eq=False)
class AnalyticMeanErrors:
    """Closed-form error laws of spec §2.4 (fixed group sizes and σ_i, no clipping)."""

    pop_naive_mean_abs: float
    pop_naive_rmse: float
    pop_strat_rmse: float
    variance_ratio: float
    pop_statistical_sd: float
    table: pd.DataFrame


@dataclass(frozen=True)
class LogsumBounds:
    """Bounds on Σ log|G_i| (S4 L156–158): ``worst`` k log(n/k), ``best`` (k−1)+log(n−k),
    ``integer_floor`` log(n−k+1) (the smallest value with integer sizes ≥ 1)."""

    worst: float
    best: float
    integer_floor: float


@dataclass(frozen=True)
class DirichletShape:
    """Monte Carlo summaries of a symmetric Dirichlet draw (S4 App. E)."""

    mean_max: float
    mean_min: float
    prob_max_above_0_9: float
    var_first: float


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


@dataclass(frozen=True)
class UVMConstants:
    """Deterministic quantities of one Coinpress UVM step (S4 App. B, Algorithm 1)."""

    projection_low: float
    projection_high: float
    delta: float
    noise_sd: float
    half_width: float


@dataclass(frozen=True, eq=False)
class MixtureSample:
    """A Gaussian mixture sample: ``x`` with group codes ``groups`` (sorted, contiguous), true ``mu``, ``sigma``."""

    x: np.ndarray
    groups: np.ndarray
    mu: np.ndarray
    sigma: np.ndarray


# ---------------------------------------------------------------------------------------------------------
# Validation helpers
# ---------------------------------------------------------------------------------------------------------




def _check_R_gamma(R, gamma) -> tuple[float, float]:
    R = check_positive(R, name="R", allow_zero=True)
    g = check_finite(gamma, name="gamma")
    if not (0 < g < 1):
        raise ValueError(f"gamma must lie in (0, 1), got {gamma!r}")
    return R, g


def _check_choice(value: str, name: str, options: tuple[str, ...]) -> str:
    if value not in options:
        raise ValueError(f"{name} must be one of {options}, got {value!r}")
    return value


def _check_min_frac(min_frac) -> float:
    f = float(min_frac)
    if not (0 <= f < 1):
        raise ValueError(f"min_frac must lie in [0, 1), got {min_frac!r}")
    return f


def _check_beta(beta) -> float:
    b = float(beta)
    if not (0 < b < 1):
        raise ValueError(f"beta must lie in (0, 1), got {beta!r}")
    return b


def _xy(x, groups, k=None) -> tuple[np.ndarray, np.ndarray, int]:
    x = np.asarray(x, dtype=float).ravel()
    if x.size == 0:
        raise ValueError("x is empty: need at least one record")
    if not np.all(np.isfinite(x)):
        raise ValueError("x contains NaN or infinite values")
    g = np.asarray(groups)
    if g.shape != x.shape:
        raise ValueError(f"x and groups must have the same length, got {x.size} and {g.size}")
    if g.size and not np.issubdtype(g.dtype, np.integer):
        if not np.all(np.mod(g, 1) == 0):
            raise ValueError("groups must be integer codes 0..k−1")
        g = g.astype(np.int64)
    if g.min() < 0:
        raise ValueError("groups must be non-negative integer codes 0..k−1")
    kk = int(g.max()) + 1 if k is None else int(k)
    if g.max() >= kk:
        raise ValueError(f"group codes must lie in [0, {kk}), found {int(g.max())}")
    return x, g.astype(np.int64), kk


# ---------------------------------------------------------------------------------------------------------
# Dirichlet group sizes and Theorem 10 (S4 L150–170, L386–432, App. E)
# ---------------------------------------------------------------------------------------------------------

def draw_group_proportions(k: int, alpha: float, *, rng) -> np.ndarray:
    """Draw group shares g ~ Dir(α·1_k) (S4 L160, App. E).

    Parameters
    ----------
    k : int, ≥ 2
    alpha : float, > 0
        Small α ⇒ one or two dominant groups; α = 1 is uniform on the simplex.
    rng : numpy Generator or seed
    """
    k = int(k)
    if k < 2:
        raise ValueError(f"k must be at least 2, got {k}")
    alpha = check_positive(alpha, name="alpha")
    g = as_generator(rng).dirichlet(np.full(k, alpha))
    # Tiny α can underflow every share to 0 in floating point; fall back to the dominant coordinate.
    if not np.isfinite(g).all() or g.sum() <= 0:
        g = np.zeros(k)
        g[0] = 1.0
    return g


def proportions_to_sizes(weights, n: int, *, min_size: int = 1) -> np.ndarray:
    """Integer group sizes round(n·g_i) by largest remainder, each ≥ ``min_size``, summing to n.

    Source: spec §2.6 (erratum E5: the paper writes g_i/n at L162 and n/k at L479; sizes are n·g_i).
    Every group first gets ``min_size``; the remaining n − k·min_size units are split proportionally and
    floored; leftover units go to the largest fractional parts (ties: lower index first).

    Examples
    --------
    >>> proportions_to_sizes([0.5, 0.3, 0.2], 7).tolist()
    [3, 2, 2]
    """
    w = np.asarray(weights, dtype=float).ravel()
    if w.size == 0:
        raise ValueError("weights is empty")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("weights must be finite, non-negative and not all zero")
    n, min_size = int(n), int(min_size)
    if min_size < 0:
        raise ValueError(f"min_size must be ≥ 0, got {min_size}")
    k = w.size
    if n < k * min_size:
        raise ValueError(f"n = {n} is smaller than k·min_size = {k * min_size}")
    return _lr_sizes(w[None, :] / w.sum(), n, min_size)[0]


def _lr_sizes(W: np.ndarray, n: int, min_size: int) -> np.ndarray:
    """Row-wise largest remainder for a (draws, k) matrix of normalised shares."""
    rest = n - W.shape[1] * min_size
    raw = W * rest
    base = np.floor(raw)
    frac = raw - base
    left = (rest - base.sum(axis=1)).round().astype(np.int64)
    order = np.argsort(-frac, axis=1, kind="stable")
    rank = np.empty_like(order)
    rows = np.arange(W.shape[0])[:, None]
    rank[rows, order] = np.arange(W.shape[1])[None, :]
    return (base.astype(np.int64) + (rank < left[:, None]) + min_size).astype(np.int64)


def fit_symmetric_dirichlet_alpha(proportions) -> float:
    """Maximum-likelihood α of a symmetric Dirichlet from one share vector (counts accepted).

    Solves ψ(α) − ψ(kα) = mean(log v) with ``scipy.optimize.brentq`` on [1e-8, 1e8] (spec §2.7).
    Equal shares give ``math.inf``. Erratum E11: the paper's α ≈ 0.13 (L170) comes from an unspecified
    Monte Carlo fit and is not reproduced; this MLE is shown instead.
    """
    v = np.asarray(proportions, dtype=float).ravel()
    if v.size < 2:
        raise ValueError("need at least 2 group shares to fit α")
    if not np.all(np.isfinite(v)) or np.any(v < 0):
        raise ValueError("shares must be finite and non-negative")
    if np.any(v == 0):
        raise ValueError("a group share is zero: the Dirichlet likelihood is zero for every α")
    v = v / v.sum()
    k = v.size
    target = float(np.mean(np.log(v)))

    def f(a: float) -> float:
        return float(special.digamma(a) - special.digamma(k * a) - target)

    lo, hi = 1e-8, 1e8
    if np.allclose(v, 1.0 / k, rtol=1e-12, atol=0) or f(hi) <= 0:
        return math.inf
    if f(lo) >= 0:
        return lo
    return float(optimize.brentq(f, lo, hi, xtol=1e-14, rtol=1e-13, maxiter=500))


def theorem10_expectation(k: int, alpha: float, n: float) -> float:
    """E Σ log|G_i| = k(ψ(α) − ψ(kα) + log n) for sizes n·g, g ~ Dir(α·1_k) (S4 Thm. 10, L160–166).

    An equality for continuous sizes (spec §2.6); negative for small α because sizes below 1 are allowed.
    """
    k = int(k)
    if k < 2:
        raise ValueError(f"k must be at least 2, got {k}")
    alpha = check_positive(alpha, name="alpha")
    n = check_positive(n, name="n")
    return float(k * (special.digamma(alpha) - special.digamma(k * alpha) + math.log(n)))


def logsum_bounds(k: int, n: int) -> LogsumBounds:
    """Worst (equal sizes), best (one majority group) and integer-floor values of Σ log|G_i| (S4 L156–158)."""
    k, n = int(k), int(n)
    if k < 2:
        raise ValueError(f"k must be at least 2, got {k}")
    if n <= k:
        raise ValueError(f"n must exceed k, got n = {n}, k = {k}")
    return LogsumBounds(k * math.log(n / k), (k - 1) + math.log(n - k), math.log(n - k + 1))


def gap_share(k: int, alpha: float, n: int) -> float:
    """(worst − E)/(worst − best): the share of the worst-to-best gap closed by Dir(α) sizes (spec §2.6)."""
    b = logsum_bounds(k, n)
    return float((b.worst - theorem10_expectation(k, alpha, n)) / (b.worst - b.best))


def realized_logsum(sizes) -> float:
    """Σ log|G_i| of observed sizes (all > 0); the quantity behind Prop. 9's k log(n/k) (S4 L150)."""
    s = np.asarray(sizes, dtype=float).ravel()
    if s.size == 0 or np.any(s <= 0):
        raise ValueError("sizes must be non-empty and all > 0")
    return float(np.log(s).sum())


def integer_logsum_mc(k: int, alpha: float, n: int, *, draws: int = 2000, rng, min_size: int = 1) -> float:
    """Monte Carlo mean of Σ log|G_i| over integer sizes (largest remainder, each ≥ ``min_size``)."""
    k, n, draws = int(k), int(n), int(draws)
    if k < 2:
        raise ValueError(f"k must be at least 2, got {k}")
    alpha = check_positive(alpha, name="alpha")
    if draws < 1:
        raise ValueError("draws must be ≥ 1")
    if min_size < 1:
        raise ValueError("min_size must be ≥ 1 (log of an empty group is undefined)")
    if n < k * min_size:
        raise ValueError(f"n = {n} is smaller than k·min_size = {k * min_size}")
    W = as_generator(rng).dirichlet(np.full(k, alpha), size=draws)
    bad = ~np.isfinite(W).all(axis=1) | (W.sum(axis=1) <= 0)
    if bad.any():
        W[bad] = 0.0
        W[bad, 0] = 1.0
    W = W / W.sum(axis=1, keepdims=True)
    return float(np.log(_lr_sizes(W, n, int(min_size))).sum(axis=1).mean())


def dirichlet_shape_mc(k: int, alpha: float, *, draws: int = 100_000, rng) -> DirichletShape:
    """Mean max/min share, P(max > 0.9) and Var g_1 of Dir(α·1_k) by Monte Carlo (S4 App. E)."""
    k = int(k)
    if k < 2:
        raise ValueError(f"k must be at least 2, got {k}")
    alpha = check_positive(alpha, name="alpha")
    W = as_generator(rng).dirichlet(np.full(k, alpha), size=int(draws))
    W = W[np.isfinite(W).all(axis=1)]
    mx = W.max(axis=1)
    return DirichletShape(float(mx.mean()), float(W.min(axis=1).mean()), float((mx > 0.9).mean()),
                          float(W[:, 0].var()))


def dirichlet_share_variance(k: int, alpha: float) -> float:
    """Var g_i = (k−1)/(k²(kα+1)) for g ~ Dir(α·1_k) (Beta(α, (k−1)α) marginal)."""
    k = int(k)
    alpha = check_positive(alpha, name="alpha")
    return (k - 1) / (k * k * (k * alpha + 1))


_TABLE3 = [
    ("Female", "White", 70881), ("Male", "White", 67593), ("Female", "Black", 12947), ("Male", "Black", 11077),
    ("Female", "Asian", 8900), ("Male", "Asian", 8130), ("Female", "Some other race", 5668),
    ("Male", "Some other race", 5296), ("Female", "Two or more races", 3026), ("Male", "Two or more races", 2620),
    ("Male", "American Indian", 277), ("Female", "American Indian", 231),
    ("Male", "AIAN tribes", 125), ("Female", "AIAN tribes", 119),
    ("Male", "Native Hawaiian", 42), ("Female", "Native Hawaiian", 30),
    ("Female", "Alaska Native", 3), ("Male", "Alaska Native", 2),
]


def table3_preset() -> pd.DataFrame:
    """S4 Table 3 (L540–559): ACS New York SEX × RAC1P group counts, in the paper's order."""
    return pd.DataFrame(_TABLE3, columns=["sex", "race", "count"])


def preset_sizes(level: str = "sex_race") -> pd.Series:
    """Group counts of S4 Table 3 at level "sex_race" (k = 18), "race" (k = 9) or "sex" (k = 2), largest first."""
    t = table3_preset()
    if level == "sex_race":
        s = pd.Series(t["count"].to_numpy(), index=t["sex"] + " – " + t["race"])
    elif level == "race":
        s = t.groupby("race", sort=False)["count"].sum()
    elif level == "sex":
        s = t.groupby("sex", sort=False)["count"].sum()
    else:
        raise ValueError(f"level must be 'sex_race', 'race' or 'sex', got {level!r}")
    return s.sort_values(ascending=False, kind="stable").rename("count")


def make_gaussian_mixture(sizes, *, mu=None, sigma=None, mu_scale: float = 1.0, sigma_mode: str = "equal",
                          rng) -> MixtureSample:
    """Simulate the paper's Gaussian mixture: group i has |G_i| draws of N(μ_i, σ_i²) (S4 App. B, L476–480).

    Draw order: μ ~ N(0, mu_scale²) if not given, then σ (``"equal"``: 1; ``"uniform"``: U(0.1, 2.0)) if
    not given, then x group by group. Group codes are returned sorted (contiguous blocks).
    """
    s = np.asarray(sizes).ravel()
    if s.size == 0 or np.any(s < 0) or not np.all(np.mod(s, 1) == 0):
        raise ValueError("sizes must be non-negative integers")
    s = s.astype(np.int64)
    if s.sum() < 1:
        raise ValueError("sizes sum to zero: need at least one record")
    k = s.size
    r = as_generator(rng)
    if mu is None:
        mu = r.normal(0.0, float(mu_scale), k)
    mu = np.asarray(mu, dtype=float).ravel()
    if sigma is None:
        if sigma_mode == "equal":
            sigma = np.ones(k)
        elif sigma_mode == "uniform":
            sigma = r.uniform(0.1, 2.0, k)
        else:
            raise ValueError(f"sigma_mode must be 'equal' or 'uniform', got {sigma_mode!r}")
    sigma = np.broadcast_to(np.asarray(sigma, dtype=float), (k,)).copy()
    if mu.size != k:
        raise ValueError(f"mu has {mu.size} entries for {k} groups")
    if np.any(sigma <= 0):
        raise ValueError("sigma must be > 0")
    groups = np.repeat(np.arange(k), s)
    # One standard-normal stream scaled per block equals group-by-group normal(μ_i, σ_i) draws.
    x = mu[groups] + sigma[groups] * r.standard_normal(groups.size)
    return MixtureSample(x, groups, mu, sigma)


# ---------------------------------------------------------------------------------------------------------
# Clipped Laplace mean (S4 L111–125)
# ---------------------------------------------------------------------------------------------------------

def clip_halfwidth(m, *, R: float, gamma: float, mode: str = "paper"):
    """Clip half-width C(m) = R + √log(m/γ) (``"paper"``) or R + √(2 log(2m/γ)) (``"rigorous"``).

    Source: S4 L113 with errata E1 (symmetric [−C, C], not "R − √…"), E2 (log(m/γ), not "log m/γ"; proof
    L356) and E3 (the rigorous width is Coinpress's UVM width, L444). Accepts arrays of m.
    """
    R, gamma = _check_R_gamma(R, gamma)
    _check_choice(mode, "mode", MODES)
    m_arr = np.asarray(m, dtype=float)
    if np.any(m_arr < 1):
        raise ValueError(f"m must be ≥ 1, got {m!r}")
    if mode == "paper":
        c = R + np.sqrt(np.log(m_arr / gamma))
    else:
        c = R + np.sqrt(2.0 * np.log(2.0 * m_arr / gamma))
    return float(c) if np.ndim(c) == 0 else c


def laplace_scale(m, *, R: float, gamma: float, epsilon: float, mode: str = "paper"):
    """Laplace scale b = 2C(m)/(mε) of the clipped mean of m records (S4 Eq. 3, L125)."""
    eps = check_epsilon(epsilon)
    c = clip_halfwidth(m, R=R, gamma=gamma, mode=mode)
    b = 2.0 * np.asarray(c) / (np.asarray(m, dtype=float) * eps)
    return float(b) if np.ndim(b) == 0 else b


def laplace_mean(x, *, R: float, gamma: float, epsilon: float, rng, mode: str = "paper") -> float:
    """(ε, 0)-DP mean: mean(clip(x, −C, C)) + Lap(2C(m)/(mε)), m = len(x) public (S4 L111–125, E1–E3)."""
    x = np.asarray(x, dtype=float).ravel()
    if x.size == 0:
        raise ValueError("x is empty: need at least one record")
    if not np.all(np.isfinite(x)):
        raise ValueError("x contains NaN or infinite values")
    eps = check_epsilon(epsilon)
    m = x.size
    c = clip_halfwidth(m, R=R, gamma=gamma, mode=mode)
    b = 2.0 * c / (m * eps)
    ledger.record("clipped mean", epsilon=(2.0 * c / m) / b, mechanism="laplace", scale=b, sensitivity=2.0 * c / m)
    return float(np.clip(x, -c, c).mean() + as_generator(rng).laplace(0.0, b))


def _record_strata(step: str, scales, sensitivities, mechanism: str) -> None:
    """Ledger entries of one noisy value per stratum (disjoint rows: one partition each), from the noise added."""
    if not ledger.active():
        return
    for i, (b, d) in enumerate(zip(np.broadcast_to(scales, np.shape(sensitivities)), np.ravel(sensitivities))):
        if mechanism == "laplace":
            ledger.record(f"{step}, stratum {i}", epsilon=d / b, mechanism="laplace", scale=b, sensitivity=d, group=i)
        else:
            ledger.record(f"{step}, stratum {i}", rho=d * d / (2 * b * b), mechanism="gaussian", scale=b,
                          sensitivity=d, group=i)


# ---------------------------------------------------------------------------------------------------------
# Strata layout and clipped sums shared by the releases and the experiment runner
# ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class StrataLayout:
    """Which groups have their own stratum, which are pooled, and the strata's row sizes.

    ``status`` names each group's fate for display: "kept", "pooled" or "dropped".
    """

    sizes: np.ndarray      # (k,)
    kept: np.ndarray       # (k,) own stratum
    pooled: np.ndarray     # (k,) in the pooled stratum
    strata_sizes: np.ndarray   # (K,) sizes of kept strata then (if any) the pooled stratum
    stratum_of_group: np.ndarray  # (k,) index into strata, −1 if dropped

    @property
    def status(self) -> tuple[str, ...]:
        return tuple("kept" if k else ("pooled" if p else "dropped") for k, p in zip(self.kept, self.pooled))


def strata_layout(sizes, *, min_frac: float, small_strata: str) -> StrataLayout:
    """The small-strata rule: a group with 0 < |G_i| ≤ min_frac·n is small; small groups are merged into one
    pooled stratum (``"pool"``) or not released (``"drop"``); empty groups are always dropped.

    Raises ``ValueError`` when every stratum would be dropped.

    References
    ----------
    Spec §2.3 (small strata); seed ``004_c5ca305e20a1adba.txt`` code default ``smallest_strata = 0.001``.
    """
    return _layout(np.asarray(sizes, dtype=np.int64).ravel(), _check_min_frac(min_frac),
                   _check_choice(small_strata, "small_strata", SMALL_STRATA))


def _layout(sizes: np.ndarray, min_frac: float, small_strata: str) -> StrataLayout:
    n = sizes.sum()
    small = (sizes <= min_frac * n) & (sizes > 0)
    empty = sizes == 0
    kept = ~small & ~empty
    pooled = small if small_strata == "pool" else np.zeros_like(small)
    if not kept.any() and not pooled.any():
        raise ValueError("every stratum is dropped: lower min_frac or use small_strata='pool'")
    kept_idx = np.flatnonzero(kept)
    stratum_of_group = np.full(sizes.size, -1, dtype=np.int64)
    stratum_of_group[kept_idx] = np.arange(kept_idx.size)
    strata_sizes = list(sizes[kept_idx])
    if pooled.any():
        stratum_of_group[pooled] = kept_idx.size
        strata_sizes.append(sizes[pooled].sum())
    return StrataLayout(sizes, kept, pooled, np.asarray(strata_sizes, dtype=np.int64), stratum_of_group)


def _clipped_stratum_means(x: np.ndarray, g: np.ndarray, lay: StrataLayout, C: np.ndarray) -> np.ndarray:
    """Mean of clip(x, −C_s, C_s) within each stratum s (vectorised with bincount)."""
    s = lay.stratum_of_group[g]
    use = s >= 0
    xs, ss = x[use], s[use]
    c = C[ss]
    sums = np.bincount(ss, weights=np.clip(xs, -c, c), minlength=lay.strata_sizes.size)
    return sums / lay.strata_sizes


def _recombine(lay: StrataLayout, strata_est: np.ndarray, weights: np.ndarray | None):
    """Group estimates, recombination weights and the population estimate Σ w_i p̂_i (S4 Eq. 4)."""
    k = lay.sizes.size
    est = np.full(k, np.nan)
    released = lay.stratum_of_group >= 0
    est[released] = strata_est[lay.stratum_of_group[released]]
    base = lay.sizes / lay.sizes.sum() if weights is None else weights
    w = np.where(released, base, 0.0)
    if w.sum() <= 0:
        raise ValueError("the released groups have zero total weight")
    w = w / w.sum()
    pop = float(np.sum(w[released] * est[released]))
    return est, w, pop


def _check_weights(weights, k: int) -> np.ndarray:
    w = np.asarray(weights, dtype=float).ravel()
    if w.size != k:
        raise ValueError(f"weights has {w.size} entries for {k} groups")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("weights must be finite, non-negative and not all zero")
    return w / w.sum()


# ---------------------------------------------------------------------------------------------------------
# Releases (S4 Eq. 2–4, Prop. 8, L111–138)
# ---------------------------------------------------------------------------------------------------------

def naive_mean_release(x, groups, *, R: float, gamma: float, epsilon: float, rng, k: int | None = None,
                       mode: str = "paper") -> MeanRelease:
    """One clipped-Laplace mean over all n records, reported for the population and every group.

    Naive convention (S4 L211): each group's estimate is the population estimate, so its error keeps the
    bias μ_pop − μ_i whatever ε.
    """
    x, g, k = _xy(x, groups, k)
    p = laplace_mean(x, R=R, gamma=gamma, epsilon=epsilon, rng=rng, mode=mode)
    sizes = np.bincount(g, minlength=k)
    return MeanRelease("naive", p, np.full(k, p), sizes / sizes.sum(), sizes > 0, np.zeros(k, bool),
                       float(epsilon), "epsilon-DP")


def stratified_mean_release(x, groups, *, R: float, gamma: float, epsilon: float, rng, k: int | None = None,
                            weights=None, min_frac: float = 0.0, small_strata: str = "pool",
                            mode: str = "paper") -> MeanRelease:
    """Per-stratum clipped-Laplace means at the full ε, recombined p̂_strat = Σ w_i p̂_i (S4 Eq. 3–4, Prop. 8).

    Strata with |G_i| ≤ min_frac·n are pooled into one stratum estimated once at full ε (``"pool"``; each
    merged group reports the pooled estimate) or not released (``"drop"``; weights renormalised over kept
    strata). Empty strata are always dropped. The release is (ε, 0)-DP by parallel composition; ``weights``
    (public, e.g. from a holdout) replace |G_i|/n in the recombination.
    """
    x, g, k = _xy(x, groups, k)
    eps = check_epsilon(epsilon)
    lay = _layout(np.bincount(g, minlength=k), _check_min_frac(min_frac),
                  _check_choice(small_strata, "small_strata", SMALL_STRATA))
    w = None if weights is None else _check_weights(weights, k)
    C = np.asarray(clip_halfwidth(lay.strata_sizes, R=R, gamma=gamma, mode=mode), dtype=float).reshape(-1)
    means = _clipped_stratum_means(x, g, lay, C)
    b = 2.0 * C / (lay.strata_sizes * eps)
    _record_strata("clipped mean", b, 2.0 * C / lay.strata_sizes, "laplace")
    noisy = means + as_generator(rng).laplace(0.0, 1.0, means.size) * b
    est, w, pop = _recombine(lay, noisy, w)
    return MeanRelease("stratified", pop, est, w, lay.kept, lay.pooled, eps, "epsilon-DP")


def split_budget_release(x, groups, *, R: float, gamma: float, epsilon: float, rng, k: int | None = None,
                         min_frac: float = 0.0, small_strata: str = "pool", mode: str = "paper") -> MeanRelease:
    """Fresh global mean at ε/2 plus stratified group means at ε/2: total ε by sequential composition (S4 L133)."""
    eps = check_epsilon(epsilon)
    r = as_generator(rng)
    x, g, k = _xy(x, groups, k)
    pop = laplace_mean(x, R=R, gamma=gamma, epsilon=eps / 2, rng=r, mode=mode)
    s = stratified_mean_release(x, g, R=R, gamma=gamma, epsilon=eps / 2, rng=r, k=k, min_frac=min_frac,
                                small_strata=small_strata, mode=mode)
    return MeanRelease("split", pop, s.groups, s.weights, s.kept, s.pooled, eps, "epsilon-DP")


# ---------------------------------------------------------------------------------------------------------
# Analytic error laws and the crossover (spec §2.4)
# ---------------------------------------------------------------------------------------------------------

def _mean_abs_shift_normal(d: float, s: float) -> float:
    """E|d + N(0, s²)|."""
    if s <= 0:
        return abs(d)
    return s * math.sqrt(2 / math.pi) * math.exp(-d * d / (2 * s * s)) + d * (1 - 2 * special.ndtr(-d / s))


def expected_abs_error(shift: float, normal_sd: float, laplace_b: float) -> float:
    """E|shift + N(0, s²) + Lap(b)| in closed form.

    Conditioning on the normal part X = shift + N(0, s²): E|X + Lap(b)| = |X| + b·e^{−|X|/b}, and
    E e^{−|X|/b} = e^{s²/(2b²)}[e^{−d/b} Φ(d/s − s/b) + e^{d/b} Φ(−d/s − s/b)] (evaluated in log space).
    Equal to the quadrature of spec §2.4 (``expected_abs_error_quad``, checked in the tests) but fast enough
    for the page's live curves.
    """
    d, s, b = abs(float(shift)), float(normal_sd), float(laplace_b)
    if b <= 0:
        return _mean_abs_shift_normal(d, s)
    if s <= 0:
        return d + b * math.exp(-d / b)
    return float(_mean_abs_shift_normal(d, s) + b * (_exp_half_sq_ndtr(d, s, b, -1.0)
                                                     + _exp_half_sq_ndtr(d, s, b, 1.0)))


def _exp_half_sq_ndtr(d: float, s: float, b: float, sign: float) -> float:
    """e^{s²/(2b²) + sign·d/b}·Φ(−z), z = s/b + sign·d/s, without forming e^{s²/(2b²)} when s ≫ b.

    For z ≥ 0, Φ(−z) = ½·erfcx(z/√2)·e^{−z²/2} and the exponents cancel to −d²/(2s²) exactly. Otherwise
    (only for sign = −1, where −d/s < z < 0) the exponent s²/(2b²) − d/b = ½(z² − d²/s²) is negative, so the
    log-space form cannot overflow.
    """
    z = s / b + sign * d / s
    if z >= 0:
        return 0.5 * float(special.erfcx(z / math.sqrt(2))) * math.exp(-d * d / (2 * s * s))
    return math.exp(s * s / (2 * b * b) + sign * d / b + float(special.log_ndtr(-z)))


def expected_abs_error_quad(shift: float, normal_sd: float, laplace_b: float) -> float:
    """E|shift + N(0, s²) + Lap(b)| by ``scipy.integrate.quad`` over the Laplace part (spec §2.4)."""
    d, s, b = abs(float(shift)), float(normal_sd), float(laplace_b)
    if b <= 0 or s <= 0:
        return expected_abs_error(d, s, b)

    def f(l: float) -> float:
        return _mean_abs_shift_normal(d + l, s) * math.exp(-abs(l) / b) / (2 * b)

    edges = [-np.inf, *sorted({-d, 0.0}), np.inf]
    return float(sum(integrate.quad(f, lo, hi, epsabs=1e-13, epsrel=1e-11, limit=200)[0]
                     for lo, hi in zip(edges[:-1], edges[1:]) if lo != hi))


def crossover_size(bias: float, *, R: float, gamma: float, epsilon: float, sigma: float | None = None,
                   mode: str = "paper") -> float:
    """Group size m at which the stratified error equals the naive bias d (spec §2.4).

    ``sigma=None`` (privacy only): solve 2C(m)/(mε) = d. Otherwise solve
    E|N(0, σ²/m) + Lap(2C(m)/(mε))| = d. Real m ≥ 1 via ``brentq`` on log m; returns 1 if already
    satisfied at m = 1 and ``inf`` if d = 0. Groups smaller than this are better served by the naive
    (pooled) estimate.
    """
    d = float(bias)
    if not (math.isfinite(d) and d >= 0):
        raise ValueError(f"bias must be a finite number ≥ 0, got {bias!r}")
    eps = check_epsilon(epsilon)
    _check_R_gamma(R, gamma)
    if sigma is not None:
        sigma = check_positive(sigma, name="sigma")
    if d == 0:
        return math.inf

    def err(m: float) -> float:
        b = laplace_scale(m, R=R, gamma=gamma, epsilon=eps, mode=mode)
        if sigma is None:
            return b
        return expected_abs_error(0.0, sigma / math.sqrt(m), b)

    if err(1.0) <= d:
        return 1.0
    hi = grow_until(lambda m: err(m) <= d, 1.0, factor=4.0, cap=1e15)
    if math.isinf(hi):
        return math.inf
    t = optimize.brentq(lambda lm: err(math.exp(lm)) - d, math.log(max(hi / 4, 1.0)), math.log(hi),
                        xtol=1e-12, rtol=1e-12)
    return float(math.exp(t))


def analytic_mean_errors(sizes, *, R: float, gamma: float, epsilon: float, mu=None, sigma=None,
                         mode: str = "paper", min_frac: float = 0.0, small_strata: str = "pool"
                         ) -> AnalyticMeanErrors:
    """Closed-form population and group error laws for fixed sizes (spec §2.4; S4 Prop. 9 discussion).

    Population privacy part: naive E|·| = 2C(n)/(nε), RMSE √8·C(n)/(nε); stratified RMSE √(8ΣC_s²)/(n_rel ε)
    over the strata actually released (:func:`strata_layout` with ``min_frac``/``small_strata``: a pooled
    stratum counts once with its summed size; dropped groups leave the recombination, whose weights are
    renormalised over the n_rel released rows); variance ratio = (stratified RMSE / naive RMSE)², which is
    ΣC_i²/C(n)² when every group is its own stratum (the default ``min_frac=0``). The group table stays per
    group at its own size. Statistical sd √(Σ n_i σ_i²)/n. With ``mu``: bias d_i = |μ_pop − μ_i|,
    E|stratified group error| = E|N(0, σ_i²/n_i) + Lap(b_i)|, E|naive group error| =
    E|d_i + N(0, Σ n_j σ_j²/n²) + Lap(2C(n)/(nε))| (closed form, checked against quadrature), and both
    crossover sizes.

    References: S4 Prop. 9 and its proof (L142–148, L319–362). Erratum E6: the recombined noise keeps the 1/n
    of the weights |G_i|/n that Eq. 11 drops (each group contributes 2C_i/(nε)). Erratum E4: Prop. 9 holds with
    probability 1 − O(γk) (L333), not 1 − O(γ) (L142).
    """
    s = np.asarray(sizes, dtype=float).ravel()
    if s.size == 0 or np.any(s < 1):
        raise ValueError("sizes must be non-empty and all ≥ 1")
    eps = check_epsilon(epsilon)
    R, gamma = _check_R_gamma(R, gamma)
    k = s.size
    sig = np.ones(k) if sigma is None else np.broadcast_to(np.asarray(sigma, dtype=float), (k,)).copy()
    if np.any(sig <= 0):
        raise ValueError("sigma must be > 0")
    n = s.sum()
    Cn = clip_halfwidth(n, R=R, gamma=gamma, mode=mode)
    Ci = np.atleast_1d(clip_halfwidth(s, R=R, gamma=gamma, mode=mode))
    bi = 2 * Ci / (s * eps)
    b_naive = 2 * Cn / (n * eps)  # the global release's Laplace scale (= its E|noise|)
    table = pd.DataFrame({"size": s.astype(np.int64), "C": Ci, "laplace_scale": bi,
                          "strat_priv_mean_abs": bi, "strat_priv_rmse": math.sqrt(2) * bi})
    stat_sd = math.sqrt(float(np.sum(s * sig**2))) / n
    if mu is not None:
        m = np.asarray(mu, dtype=float).ravel()
        if m.size != k:
            raise ValueError(f"mu has {m.size} entries for {k} groups")
        mu_pop = float(np.sum(s * m) / n)
        d = np.abs(mu_pop - m)
        table["bias"] = d
        table["strat_total_mean_abs"] = [expected_abs_error(0.0, sig[i] / math.sqrt(s[i]), bi[i]) for i in range(k)]
        table["naive_total_mean_abs"] = [expected_abs_error(d[i], stat_sd, b_naive) for i in range(k)]
        table["stratified_better"] = table["strat_total_mean_abs"] < table["naive_total_mean_abs"]
        table["crossover_privacy"] = [crossover_size(d[i], R=R, gamma=gamma, epsilon=eps, mode=mode) for i in range(k)]
        table["crossover_total"] = [crossover_size(d[i], R=R, gamma=gamma, epsilon=eps, sigma=sig[i], mode=mode)
                                    for i in range(k)]
    lay = strata_layout(s.astype(np.int64), min_frac=min_frac, small_strata=small_strata)
    Cs = np.atleast_1d(clip_halfwidth(lay.strata_sizes.astype(float), R=R, gamma=gamma, mode=mode))
    n_rel = float(lay.strata_sizes.sum())
    naive_rmse = math.sqrt(8) * Cn / (n * eps)
    strat_rmse = math.sqrt(8 * np.sum(Cs**2)) / (n_rel * eps)
    return AnalyticMeanErrors(
        pop_naive_mean_abs=float(b_naive),
        pop_naive_rmse=float(naive_rmse),
        pop_strat_rmse=float(strat_rmse),
        variance_ratio=float((strat_rmse / naive_rmse) ** 2),
        pop_statistical_sd=float(stat_sd),
        table=table,
    )


def stratified_error_curve(m, *, R: float, gamma: float, epsilon: float, sigma: float = 1.0,
                           mode: str = "paper") -> np.ndarray:
    """E|N(0, σ²/m) + Lap(2C(m)/(mε))| on a grid of group sizes m (the analytic overlay of the page)."""
    m = np.atleast_1d(np.asarray(m, dtype=float))
    b = np.atleast_1d(laplace_scale(m, R=R, gamma=gamma, epsilon=epsilon, mode=mode))
    return np.array([expected_abs_error(0.0, sigma / math.sqrt(mi), bb) for mi, bb in zip(m, b)])


# ---------------------------------------------------------------------------------------------------------
# Coinpress and StratCoinpress (S4 App. B, Algorithms 1–3)
# ---------------------------------------------------------------------------------------------------------

def uvm_constants(m: int, *, low: float, high: float, sigma: float, rho: float, beta: float) -> UVMConstants:
    """Projection interval, Δ, Gaussian noise sd and returned half-width of one UVM step (Algorithm 1, L440–450)."""
    if int(m) < 1:
        raise ValueError(f"m must be ≥ 1, got {m}")
    if not float(high) > float(low):
        raise ValueError(f"high must exceed low, got [{low}, {high}]")
    sigma, rho, beta = check_positive(sigma, name="sigma"), check_rho(rho), _check_beta(beta)
    m = int(m)
    w = sigma * math.sqrt(2 * math.log(2 * m / beta))
    delta = (high - low + 2 * w) / m
    sd = delta / math.sqrt(2 * rho)
    half = math.sqrt(2 * (sigma**2 / m + sd**2) * math.log(2 / beta))
    return UVMConstants(low - w, high + w, delta, sd, half)


def coinpress_uvm(x, *, low: float, high: float, sigma: float, rho: float, beta: float, rng) -> Interval:
    """One ρ-zCDP Coinpress step: project, add N(0, Δ²/(2ρ)), return Z ± half-width (S4 Algorithm 1)."""
    x = np.asarray(x, dtype=float).ravel()
    if x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError("x must be non-empty and finite")
    c = uvm_constants(x.size, low=low, high=high, sigma=sigma, rho=rho, beta=beta)
    ledger.record("Coinpress step", rho=c.delta**2 / (2 * c.noise_sd**2), mechanism="gaussian", scale=c.noise_sd,
                  sensitivity=c.delta)
    z = np.clip(x, c.projection_low, c.projection_high).mean() + as_generator(rng).normal(0.0, c.noise_sd)
    return Interval(float(z - c.half_width), float(z + c.half_width))


def _check_rhos(rhos) -> np.ndarray:
    r = np.asarray(rhos, dtype=float).ravel()
    if r.size == 0:
        raise ValueError("rhos is empty: give at least one step budget")
    if not np.all(np.isfinite(r)) or np.any(r <= 0):
        raise ValueError("every rho must be a finite number > 0")
    return r


def coinpress_uvmrec(x, *, low: float, high: float, sigma: float, rhos, beta: float, rng) -> float:
    """(Σρ)-zCDP mean by t UVM steps (S4 Algorithm 2): steps 1..t−1 at β/(4(t−1)), the last at β/4.

    Erratum E9: returns the midpoint of the *last* interval [ℓ_t, r_t] (L460 writes [ℓ_i, r_i]).
    """
    r = _check_rhos(rhos)
    beta = _check_beta(beta)
    gen = as_generator(rng)
    t = r.size
    lo, hi = float(low), float(high)
    for i, rho in enumerate(r):
        b = beta / 4 if i == t - 1 else beta / (4 * (t - 1))
        iv = coinpress_uvm(x, low=lo, high=hi, sigma=sigma, rho=rho, beta=b, rng=gen)
        lo, hi = iv.low, iv.high
    return 0.5 * (lo + hi)


def _uvmrec_strata(x: np.ndarray, s: np.ndarray, sizes: np.ndarray, sigmas: np.ndarray, low: float, high: float,
                   rhos: np.ndarray, beta: float, rng: np.random.Generator) -> np.ndarray:
    """UVMRec run independently in every stratum at once (stratum index ``s`` per row, all ≥ 0)."""
    K = sizes.size
    t = rhos.size
    lo = np.full(K, float(low))
    hi = np.full(K, float(high))
    for i, rho in enumerate(rhos):
        b = beta / 4 if i == t - 1 else beta / (4 * (t - 1))
        w = sigmas * np.sqrt(2 * np.log(2 * sizes / b))
        pl, ph = lo - w, hi + w
        delta = (hi - lo + 2 * w) / sizes
        sd = delta / math.sqrt(2 * rho)
        _record_strata(f"Coinpress step {i + 1}", sd, delta, "gaussian")
        half = np.sqrt(2 * (sigmas**2 / sizes + sd**2) * math.log(2 / b))
        z = np.bincount(s, weights=np.clip(x, pl[s], ph[s]), minlength=K) / sizes + rng.standard_normal(K) * sd
        lo, hi = z - half, z + half
    return 0.5 * (lo + hi)


def coinpress_release(x, groups, *, low: float, high: float, sigma: float, rhos, beta: float, rng,
                      k: int | None = None) -> MeanRelease:
    """Naive Coinpress: one UVMRec over all records, reported for the population and every group (S4 App. B)."""
    x, g, k = _xy(x, groups, k)
    r = _check_rhos(rhos)
    p = coinpress_uvmrec(x, low=low, high=high, sigma=sigma, rhos=r, beta=beta, rng=rng)
    sizes = np.bincount(g, minlength=k)
    return MeanRelease("coinpress", p, np.full(k, p), sizes / sizes.sum(), sizes > 0, np.zeros(k, bool),
                       float(r.sum()), "rho-zCDP")


def strat_coinpress(x, groups, *, low: float, high: float, sigmas, rhos, beta: float, rng, k: int | None = None,
                    weights=None, min_frac: float = 0.0, small_strata: str = "pool") -> MeanRelease:
    """StratCoinpress: the full UVMRec schedule in every stratum, population Σ (|G_i|/n)·μ̂_i (S4 Algorithm 3).

    Erratum E8: the recombination is Σ (|G_i|/n)·μ̂_i, not (1/k)Σ ω_i μ_i (L471). (Σρ)-zCDP by parallel
    composition. A pooled small-groups stratum uses the largest σ_i of its members.
    """
    x, g, k = _xy(x, groups, k)
    r = _check_rhos(rhos)
    beta = _check_beta(beta)
    sig = np.broadcast_to(np.asarray(sigmas, dtype=float), (k,))
    if np.any(sig <= 0):
        raise ValueError("sigmas must be > 0")
    if not float(high) > float(low):
        raise ValueError(f"high must exceed low, got [{low}, {high}]")
    lay = _layout(np.bincount(g, minlength=k), _check_min_frac(min_frac),
                  _check_choice(small_strata, "small_strata", SMALL_STRATA))
    w = None if weights is None else _check_weights(weights, k)
    s_sig = _strata_sigmas(lay, sig)
    srow = lay.stratum_of_group[g]
    use = srow >= 0
    est = _uvmrec_strata(x[use], srow[use], lay.strata_sizes.astype(float), s_sig, low, high, r, beta,
                         as_generator(rng))
    groups_est, w, pop = _recombine(lay, est, w)
    return MeanRelease("strat_coinpress", pop, groups_est, w, lay.kept, lay.pooled, float(r.sum()), "rho-zCDP")


def _strata_sigmas(lay: StrataLayout, sig: np.ndarray) -> np.ndarray:
    out = list(sig[lay.kept])
    if lay.pooled.any():
        out.append(float(sig[lay.pooled].max()))
    return np.asarray(out, dtype=float)


def mixture_sigma(sizes, mu, sigma) -> float:
    """σ_mix = √(Σ n_i(σ_i² + (μ_i − μ_pop)²)/n): the known σ naive Coinpress uses (spec §2.8)."""
    s = np.asarray(sizes, dtype=float)
    m = np.asarray(mu, dtype=float)
    sg = np.broadcast_to(np.asarray(sigma, dtype=float), s.shape)
    mp = np.sum(s * m) / s.sum()
    return float(math.sqrt(np.sum(s * (sg**2 + (m - mp) ** 2)) / s.sum()))


def coinpress_defaults(epsilon: float, R: float) -> dict:
    """Page defaults for Coinpress (spec §2.8): ρ = ε²/2, schedule (ρ/4, 3ρ/4), β = 0.01, [−R, R].

    Erratum E10: an (ε′, δ) statement of ρ-zCDP uses ε′ = ρ + 2√(ρ log(1/δ)) (L75 gives a different form);
    the page calls ``dpdash.accounting.composition.zcdp_to_dp(rho, delta, method="standard")``.
    """
    rho = check_epsilon(epsilon) ** 2 / 2
    return {"rhos": (rho / 4, 3 * rho / 4), "beta": 0.01, "low": -float(R), "high": float(R), "rho": rho}


# ---------------------------------------------------------------------------------------------------------
# Parity error (S4 Def. 11)
# ---------------------------------------------------------------------------------------------------------

def parity_error(true_groups, est_groups, true_pop, est_pop, *, omega: float | None = None,
                 normalized: bool = True) -> float:
    """φ = ω|(f_pop − f̂_pop)/f_pop| + Σ_i |(f_i − f̂_i)/f_i| (S4 Def. 11, L183–193).

    Erratum E7: a *sum* over groups (L189 says "average"), default ω = 1/k. ``normalized=False`` drops the
    denominators. Vector statistics (arrays of shape (k, c) and (c,)) sum their per-column terms; with
    ``normalized=True`` terms whose true value is 0 are skipped. Groups whose estimate is NaN (not released)
    are skipped.

    Examples
    --------
    >>> round(parity_error([2, 4, 5], [2.2, 3, 5.5], 3.5, 3.4, omega=1/3), 7)
    0.4595238
    """
    tg = np.asarray(true_groups, dtype=float)
    eg = np.asarray(est_groups, dtype=float)
    tp = np.asarray(true_pop, dtype=float)
    ep = np.asarray(est_pop, dtype=float)
    if tg.shape != eg.shape:
        raise ValueError(f"true and estimated groups differ in shape: {tg.shape} vs {eg.shape}")
    if tp.shape != ep.shape or (tg.ndim == 2 and tp.shape != tg.shape[1:]):
        raise ValueError("true and estimated population values must match the groups' column count")
    if tg.ndim not in (1, 2) or tg.shape[0] == 0:
        raise ValueError("true_groups must be a non-empty (k,) or (k, c) array")
    k = tg.shape[0]
    if omega is None:
        omega = 1.0 / k
    omega = float(omega)
    if not (math.isfinite(omega) and omega >= 0):
        raise ValueError(f"omega must be a finite number ≥ 0, got {omega!r}")

    def terms(t: np.ndarray, e: np.ndarray) -> float:
        ok = np.isfinite(e) & np.isfinite(t)
        if normalized:
            ok &= t != 0
            return float(np.sum(np.abs((t[ok] - e[ok]) / t[ok])))
        return float(np.sum(np.abs(t[ok] - e[ok])))

    return omega * terms(np.atleast_1d(tp), np.atleast_1d(ep)) + terms(tg, eg)


# ---------------------------------------------------------------------------------------------------------
# Experiment runner
# ---------------------------------------------------------------------------------------------------------

def group_moments(x, groups, k: int, *, var_floor: float = 1e-12) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Non-private per-group sizes, means and standard deviations (ddof 0) of a real table.

    Used as the *truth* that DP releases are scored against (seed 004 §5 evaluates errors against the
    empirical group means), never released. Empty groups get mean 0; variances are floored at ``var_floor``.
    """
    x = np.asarray(x, float)
    g = np.asarray(groups, int)
    sizes = np.bincount(g, minlength=k)
    means = np.divide(np.bincount(g, weights=x, minlength=k), sizes, out=np.zeros(k), where=sizes > 0)
    var = np.divide(np.bincount(g, weights=x * x, minlength=k), sizes, out=np.zeros(k), where=sizes > 0) - means**2
    return sizes, means, np.sqrt(np.maximum(var, var_floor))


def _check_experiment(epsilons, R, gamma, mode: str, reps, estimator: str, methods) -> tuple:
    """The mean experiments' shared arguments: ε grid, (R, γ), mode, repetitions, estimator and methods."""
    eps_arr = np.asarray(epsilons, dtype=float).ravel()
    if eps_arr.size == 0:
        raise ValueError("epsilons is empty")
    for e in eps_arr:
        check_epsilon(e)
    R, gamma = _check_R_gamma(R, gamma)
    _check_choice(mode, "mode", MODES)
    reps = check_size(reps, name="reps")
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"unknown method {m!r}; expected a subset of {METHODS}")
    return eps_arr, R, gamma, reps


def run_mean_experiment(*, sizes, mu, sigma, epsilons, R: float, gamma: float, reps: int, rng,
                        estimator: str = "laplace", methods: Sequence[str] = ("naive", "stratified", "split"),
                        min_frac: float = 0.0, small_strata: str = "pool", weights_mode: str = "exact",
                        holdout_frac: float = 0.5, epsilon_weights: float | None = None, mode: str = "paper",
                        beta: float = 0.01) -> pd.DataFrame:
    """Repeat the naive / stratified / split releases on fresh mixture draws; long-format errors.

    The data are drawn once per rep (``make_gaussian_mixture`` with the given μ, σ) and shared across ε.
    Clipped sums depend only on the (public) stratum sizes, so they are computed once per rep and only the
    noise is redrawn per ε. ``estimator="coinpress"`` uses the spec §2.8 defaults (ρ = ε²/2, schedule
    (ρ/4, 3ρ/4), [−R, R]); "naive"/"stratified" are then reported as "coinpress"/"strat_coinpress", "split"
    is skipped. ``weights_mode``: "exact" (public sizes), "holdout" (weights from a random public share
    ``holdout_frac`` of rows, removed from the private data; PubStratCoinpress, L197), "noisy" (counts +
    Lap(1/ε_w) clipped ≥ 1; total budget ε + ε_w).

    Returns
    -------
    DataFrame with columns rep, epsilon, method, level ("group" | "population"), group (−1 for the
    population row), n_i, estimate, truth, empirical, abs_err = |estimate − truth|,
    priv_err = estimate − empirical.
    """
    s = np.asarray(sizes).ravel().astype(np.int64)
    k = s.size
    if k < 1 or np.any(s < 0) or s.sum() < 1:
        raise ValueError("sizes must be non-negative integers with a positive sum")
    mu = np.asarray(mu, dtype=float).ravel()
    if mu.size != k:
        raise ValueError(f"mu has {mu.size} entries for {k} groups")
    sig = np.broadcast_to(np.asarray(sigma, dtype=float), (k,)).copy()
    if np.any(sig <= 0):
        raise ValueError("sigma must be > 0")
    eps_arr, R, gamma, reps = _check_experiment(epsilons, R, gamma, mode, reps, estimator, methods)
    if weights_mode not in WEIGHTS_MODES:
        raise ValueError(f"weights_mode must be one of {WEIGHTS_MODES}, got {weights_mode!r}")
    if weights_mode == "holdout" and not (0 < float(holdout_frac) < 1):
        raise ValueError(f"holdout_frac must lie in (0, 1), got {holdout_frac!r}")
    if weights_mode == "noisy":
        if epsilon_weights is None:
            raise ValueError("weights_mode='noisy' needs epsilon_weights > 0")
        check_positive(epsilon_weights, name="epsilon_weights")
    min_frac = _check_min_frac(min_frac)
    small_strata = _check_choice(small_strata, "small_strata", SMALL_STRATA)
    beta = _check_beta(beta)
    gen = as_generator(rng)
    mu_pop = float(np.sum(s * mu) / s.sum())
    sigma_mix = mixture_sigma(s, mu, sig)

    groups_rows = np.repeat(np.arange(k), s)
    mu_rows = np.repeat(mu, s)
    sig_rows = None if np.all(sig == 1.0) else np.repeat(sig, s)

    def draw():
        # Same stream as make_gaussian_mixture(s, mu=mu, sigma=sig, rng=gen), with the per-row arrays reused.
        z = gen.standard_normal(groups_rows.size)
        return (mu_rows + z if sig_rows is None else mu_rows + sig_rows * z), groups_rows

    return _experiment_loop(draw, k=k, truth=np.concatenate([[mu_pop], mu]), sig=sig, sigma_mix=sigma_mix,
                            eps_arr=eps_arr, R=R, gamma=gamma, reps=reps, gen=gen, estimator=estimator,
                            methods=methods, min_frac=min_frac, small_strata=small_strata,
                            weights_mode=weights_mode, holdout_frac=holdout_frac, epsilon_weights=epsilon_weights,
                            mode=mode, beta=beta)


def _experiment_loop(draw, *, k, truth, sig, sigma_mix, eps_arr, R, gamma, reps, gen, estimator, methods, min_frac,
                     small_strata, weights_mode, holdout_frac, epsilon_weights, mode, beta) -> pd.DataFrame:
    cols: dict[str, list] = {c: [] for c in ("rep", "epsilon", "method", "n_i", "estimate", "truth", "empirical")}
    cache: dict = {}
    for rep in range(reps):
        x, g = draw()
        w_public = None
        if weights_mode == "holdout":
            hold = gen.random(x.size) < holdout_frac
            hc = np.bincount(g[hold], minlength=k).astype(float)
            x, g = x[~hold], g[~hold]
            w_public = hc / hc.sum() if hc.sum() > 0 else None
        psizes = np.bincount(g, minlength=k)
        n = int(psizes.sum())
        if n == 0:
            continue
        key = psizes.tobytes()
        if key not in cache:
            cache.clear()
            cache[key] = _layout(psizes, min_frac, small_strata)
        lay = cache[key]
        grp_emp = np.divide(np.bincount(g, weights=x, minlength=k), psizes,
                            out=np.full(k, np.nan), where=psizes > 0)
        emp = np.concatenate([[float(x.mean())], grp_emp])
        n_i = np.concatenate([[n], psizes])
        # Clipped means depend only on public sizes, not on ε: compute them once per rep.
        pre = _laplace_precompute(x, g, lay, R, gamma, mode, methods) if estimator == "laplace" else None
        for eps in eps_arr:
            w_eps = w_public
            if weights_mode == "noisy":
                noisy = np.maximum(psizes + gen.laplace(0.0, 1.0 / epsilon_weights, k), 1.0)
                ledger.record("noisy group sizes", epsilon=epsilon_weights, mechanism="laplace",
                              scale=1.0 / epsilon_weights, sensitivity=1.0)
                w_eps = noisy / noisy.sum()
            if estimator == "laplace":
                res = _laplace_methods(pre, lay, eps, methods, w_eps, gen)
            else:
                res = _coinpress_methods(x, g, lay, k, eps, R, sig, sigma_mix, methods, w_eps, beta, gen)
            for name, pop, grp in res:
                cols["rep"].append(rep)
                cols["epsilon"].append(eps)
                cols["method"].append(name)
                cols["n_i"].append(n_i)
                cols["estimate"].append(np.concatenate([[pop], grp]))
                cols["truth"].append(truth)
                cols["empirical"].append(emp)
    if not cols["rep"]:
        raise ValueError("no records were left to estimate from (holdout took every row)")
    R_ = len(cols["rep"])
    out = pd.DataFrame({
        "rep": np.repeat(np.asarray(cols["rep"]), k + 1),
        "epsilon": np.repeat(np.asarray(cols["epsilon"], dtype=float), k + 1),
        "method": np.repeat(np.asarray(cols["method"], dtype=object), k + 1),
        "level": np.tile(np.array(["population"] + ["group"] * k, dtype=object), R_),
        "group": np.tile(np.arange(-1, k), R_),
        "n_i": np.concatenate(cols["n_i"]),
        "estimate": np.concatenate(cols["estimate"]),
        "truth": np.concatenate(cols["truth"]),
        "empirical": np.concatenate(cols["empirical"]),
    })
    out["abs_err"] = (out["estimate"] - out["truth"]).abs()
    out["priv_err"] = out["estimate"] - out["empirical"]
    return out


def run_mean_experiment_on_data(x, groups, *, epsilons, R: float, gamma: float, reps: int, rng,
                                estimator: str = "laplace", methods: Sequence[str] = ("naive", "stratified", "split"),
                                min_frac: float = 0.0, small_strata: str = "pool", mode: str = "paper",
                                beta: float = 0.01, k: int | None = None) -> pd.DataFrame:
    """Like :func:`run_mean_experiment` on a fixed real table: the data are the population, so the truths are
    the empirical group and population means and reps redraw only the privacy noise (same long format).

    For Coinpress the σ_i are the groups' standard deviations, treated as known (Coinpress's known-variance
    setting, S4 App. B); state this assumption when showing the result.
    """
    x, g, k = _xy(x, groups, k)
    eps_arr, R, gamma, reps = _check_experiment(epsilons, R, gamma, mode, reps, estimator, methods)
    sizes, means, sig = group_moments(x, g, k)
    sig = np.where(sizes > 0, np.maximum(sig, 1e-6), 1.0)
    truth = np.concatenate([[float(x.mean())], np.where(sizes > 0, means, np.nan)])
    order = np.argsort(g, kind="stable")
    xs, gs = x[order], g[order]
    return _experiment_loop(lambda: (xs, gs), k=k, truth=truth, sig=sig, sigma_mix=float(x.std()) or 1.0,
                            eps_arr=eps_arr, R=R, gamma=gamma, reps=int(reps), gen=as_generator(rng),
                            estimator=estimator,
                            methods=methods, min_frac=_check_min_frac(min_frac),
                            small_strata=_check_choice(small_strata, "small_strata", SMALL_STRATA),
                            weights_mode="exact", holdout_frac=0.5, epsilon_weights=None, mode=mode,
                            beta=_check_beta(beta))


# ---------------------------------------------------------------------------------------------------------
# From group summaries (issue 24 item 3): the Laplace releases need only each group's size and clipped sums
# ---------------------------------------------------------------------------------------------------------

#: Columns of a group summary: one row per (group, clipping bound); ``sum`` (unclipped) is optional.
SUMMARY_COLUMNS = ("group", "size", "clipped_sum", "lower", "upper")


def summary_bounds(sizes, *, R: float, gamma: float, mode: str = "paper", min_frac: float = 0.0,
                   small_strata: str = "pool") -> pd.DataFrame:
    """The clipping bounds a group summary must use for the Laplace releases, per group (group code, bound).

    The global release clips every value at ±C(n); the per-group release clips group i at ±C(|S|) of its
    stratum S (its own group, or the pooled stratum). C(m) is :func:`clip_halfwidth`; n and the sizes are public
    (S4 L107), so a data holder computes these bounds without looking at values.
    """
    sizes = np.asarray(sizes, dtype=np.int64).ravel()
    lay = strata_layout(sizes, min_frac=min_frac, small_strata=small_strata)
    Cn = clip_halfwidth(int(sizes.sum()), R=R, gamma=gamma, mode=mode)
    C = np.atleast_1d(clip_halfwidth(lay.strata_sizes, R=R, gamma=gamma, mode=mode))
    rows = []
    for i in np.flatnonzero(sizes > 0):
        rows.append((int(i), float(Cn)))
        if lay.stratum_of_group[i] >= 0 and not math.isclose(C[lay.stratum_of_group[i]], Cn):
            rows.append((int(i), float(C[lay.stratum_of_group[i]])))
    return pd.DataFrame(rows, columns=["group", "bound"])


def summarise_groups(x, groups, *, R: float, gamma: float, mode: str = "paper", min_frac: float = 0.0,
                     small_strata: str = "pool", k: int | None = None, with_sum: bool = True) -> pd.DataFrame:
    """The group summary a data holder computes where the data live: size and clipped sum per group and bound.

    One row per group and per bound of :func:`summary_bounds` (columns :data:`SUMMARY_COLUMNS`, and ``sum``, the
    unclipped sum, when ``with_sum``: it gives the page the true means to measure errors against and is never
    released). :func:`run_mean_experiment_on_summary` on the result equals :func:`run_mean_experiment_on_data`
    on ``x, groups`` (Laplace estimator, same seed).
    """
    x, g, k = _xy(x, groups, k)
    order = np.argsort(g, kind="stable")
    xs, gs = x[order], g[order]
    sizes = np.bincount(gs, minlength=k)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rows = []
    for i, bound in summary_bounds(sizes, R=R, gamma=gamma, mode=mode, min_frac=min_frac,
                                   small_strata=small_strata).itertuples(index=False):
        seg = xs[starts[i]:starts[i] + sizes[i]]
        row = {"group": int(i), "size": int(sizes[i]), "clipped_sum": float(np.clip(seg, -bound, bound).sum()),
               "lower": -bound, "upper": bound}
        if with_sum:
            row["sum"] = float(seg.sum())
        rows.append(row)
    return pd.DataFrame(rows)


def _summary_sum(summary: pd.DataFrame, group: int, bound: float) -> float:
    hit = summary[(summary["group"] == group) & np.isclose(summary["upper"], bound, rtol=1e-9, atol=0)
                  & np.isclose(summary["lower"], -bound, rtol=1e-9, atol=0)]
    if hit.empty:
        have = ", ".join(f"[{lo:.6g}, {hi:.6g}]" for lo, hi in
                         summary.loc[summary["group"] == group, ["lower", "upper"]].itertuples(index=False))
        raise ValueError(f"group {group} has no clipped sum at the bounds [{-bound:.6g}, {bound:.6g}] this release "
                         f"uses (it has {have or 'none'}); recompute the summary with dpdash.stratify.core."
                         "summary_bounds for these R, γ and clipping mode")
    return float(hit["clipped_sum"].iloc[0])


def check_summary(summary: pd.DataFrame, k: int | None = None) -> tuple[pd.DataFrame, np.ndarray]:
    """A group summary checked (columns, finite numbers, whole non-negative sizes, one size per group, sums within
    size × bounds) and each group's size (codes 0..k−1, 0 for a group absent from the summary)."""
    missing = [c for c in SUMMARY_COLUMNS if c not in summary.columns]
    if missing:
        raise ValueError(f"a group summary needs the columns {list(SUMMARY_COLUMNS)}; missing {missing}")
    cols = list(SUMMARY_COLUMNS) + (["sum"] if "sum" in summary.columns else [])
    num = summary[cols].apply(pd.to_numeric, errors="coerce")
    if num.isna().any(axis=None) or not np.all(np.isfinite(num.to_numpy(float))):
        raise ValueError("every cell of a group summary must be a finite number (group codes 0..k−1)")
    g = num["group"].to_numpy(float)
    size = num["size"].to_numpy(float)
    if np.any(g < 0) or np.any(g % 1) or np.any(size < 0) or np.any(size % 1):
        raise ValueError("group codes and sizes must be whole numbers ≥ 0")
    if np.any(num["upper"] <= 0) or not np.allclose(num["lower"], -num["upper"]):
        raise ValueError("the bounds must be symmetric, lower = −upper < 0 (S4 clips to [−C, C])")
    if np.any(np.abs(num["clipped_sum"]) > size * num["upper"] * (1 + 1e-9)):
        raise ValueError("a clipped sum exceeds size × bound: it cannot come from values clipped to those bounds")
    kk = int(g.max()) + 1 if k is None else int(k)
    sizes = np.zeros(kk, dtype=np.int64)
    for gi, m in zip(g.astype(int), size.astype(np.int64)):
        if sizes[gi] and sizes[gi] != m:
            raise ValueError(f"group {gi} has two different sizes in the summary ({sizes[gi]} and {m})")
        sizes[gi] = m
    num["group"] = num["group"].astype(int)
    return num, sizes


def run_mean_experiment_on_summary(summary: pd.DataFrame, *, epsilons, R: float, gamma: float, reps: int, rng,
                                   methods: Sequence[str] = ("naive", "stratified", "split"), min_frac: float = 0.0,
                                   small_strata: str = "pool", mode: str = "paper",
                                   k: int | None = None) -> pd.DataFrame:
    """:func:`run_mean_experiment_on_data` from a group summary instead of rows (Laplace estimator).

    The clipped Laplace releases (S4 Eq. 2–4) read each stratum's clipped mean, Σ clip(x, −C, C)/|S|, and the
    population's at C(n): sums that :func:`summarise_groups` computes where the data live. Same noise draws,
    same order: with the same seed the estimates equal the microdata run's (to rounding of the sums). The truths
    are the unclipped means when the summary has a ``sum`` column, otherwise the clipped means at C(n) (said in
    the page's note). Coinpress projects every row and cannot run from sums.
    """
    num, sizes = check_summary(summary, k)
    k = sizes.size
    eps_arr, R, gamma, reps = _check_experiment(epsilons, R, gamma, mode, reps, "laplace", methods)
    lay = _layout(sizes, _check_min_frac(min_frac), _check_choice(small_strata, "small_strata", SMALL_STRATA))
    n = int(sizes.sum())
    Cn = clip_halfwidth(n, R=R, gamma=gamma, mode=mode)
    pre = {"n": n, "Cn": Cn}
    present = np.flatnonzero(sizes > 0)
    clipped_n = np.array([_summary_sum(num, i, Cn) for i in present])
    if any(m in methods for m in ("naive", "split")):
        pre["clipped_all"] = float(clipped_n.sum() / n)
    if any(m in methods for m in ("stratified", "split")):
        C = np.asarray(clip_halfwidth(lay.strata_sizes, R=R, gamma=gamma, mode=mode), dtype=float).reshape(-1)
        pre["C"] = C
        gsum = np.zeros(k)
        for i in present:
            if lay.stratum_of_group[i] >= 0:
                gsum[i] = _summary_sum(num, i, C[lay.stratum_of_group[i]])
        rel = lay.stratum_of_group >= 0
        sums = np.bincount(lay.stratum_of_group[rel], weights=gsum[rel], minlength=lay.strata_sizes.size)
        pre["means"] = sums / lay.strata_sizes
    if "sum" in num.columns:
        raw = np.zeros(k)
        for i in present:
            raw[i] = float(num.loc[num["group"] == i, "sum"].iloc[0])
    else:
        raw = np.zeros(k)
        raw[present] = clipped_n
    grp = np.divide(raw, sizes, out=np.full(k, np.nan), where=sizes > 0)
    truth = np.concatenate([[float(raw.sum() / n)], grp])
    n_i = np.concatenate([[n], sizes])
    gen = as_generator(rng)
    rows = []
    for rep in range(int(reps)):
        for eps in eps_arr:
            for name, pop, est in _laplace_methods(pre, lay, eps, methods, None, gen):
                rows.append((rep, eps, name, np.concatenate([[pop], est])))
    R_ = len(rows)
    out = pd.DataFrame({
        "rep": np.repeat([r[0] for r in rows], k + 1),
        "epsilon": np.repeat(np.asarray([r[1] for r in rows], dtype=float), k + 1),
        "method": np.repeat(np.asarray([r[2] for r in rows], dtype=object), k + 1),
        "level": np.tile(np.array(["population"] + ["group"] * k, dtype=object), R_),
        "group": np.tile(np.arange(-1, k), R_),
        "n_i": np.tile(n_i, R_),
        "estimate": np.concatenate([r[3] for r in rows]),
        "truth": np.tile(truth, R_),
        "empirical": np.tile(truth, R_),
    })
    out["abs_err"] = (out["estimate"] - out["truth"]).abs()
    out["priv_err"] = out["estimate"] - out["empirical"]
    return out


def _laplace_precompute(x, g, lay, R, gamma, mode, methods) -> dict:
    n = lay.sizes.sum()
    Cn = clip_halfwidth(n, R=R, gamma=gamma, mode=mode)
    pre = {"n": n, "Cn": Cn}
    if any(m in methods for m in ("stratified", "split")):
        C = np.asarray(clip_halfwidth(lay.strata_sizes, R=R, gamma=gamma, mode=mode), dtype=float).reshape(-1)
        pre["C"] = C
        if g.size > 1 and np.all(g[1:] >= g[:-1]):
            # Rows sorted by group (the simulations and real-data runs): clip with per-row widths, sum each
            # contiguous block with reduceat, then add group sums into strata. Dropped groups clip to 0.
            Cg = np.where(lay.stratum_of_group >= 0, C[np.maximum(lay.stratum_of_group, 0)], 0.0)
            rowC = np.repeat(Cg, lay.sizes)
            nz = lay.sizes > 0
            starts = np.concatenate([[0], np.cumsum(lay.sizes)[:-1]])[nz]
            gsum = np.zeros(lay.sizes.size)
            gsum[nz] = np.add.reduceat(np.clip(x, -rowC, rowC), starts)
            rel = lay.stratum_of_group >= 0
            sums = np.bincount(lay.stratum_of_group[rel], weights=gsum[rel], minlength=lay.strata_sizes.size)
            pre["means"] = sums / lay.strata_sizes
        else:
            pre["means"] = _clipped_stratum_means(x, g, lay, C)
    if any(m in methods for m in ("naive", "split")):
        pre["clipped_all"] = float(np.clip(x, -Cn, Cn).mean())
    return pre


def _laplace_methods(pre, lay, eps, methods, w_public, gen):
    n, Cn = pre["n"], pre["Cn"]
    out = []
    for m in methods:
        if m == "naive":
            b = 2 * Cn / (n * eps)
            ledger.record("naive mean", epsilon=2 * Cn / n / b, mechanism="laplace", scale=b, sensitivity=2 * Cn / n)
            p = pre["clipped_all"] + gen.laplace(0.0, b)
            out.append(("naive", p, np.where(lay.sizes > 0, p, np.nan)))
        elif m == "stratified":
            C, means = pre["C"], pre["means"]
            b = 2 * C / (lay.strata_sizes * eps)
            _record_strata("stratified mean", b, 2 * C / lay.strata_sizes, "laplace")
            noisy = means + gen.laplace(0.0, 1.0, means.size) * b
            est, _, p = _recombine(lay, noisy, w_public)
            out.append(("stratified", p, est))
        elif m == "split":
            C, means = pre["C"], pre["means"]
            b = 2 * Cn / (n * eps / 2)
            ledger.record("split: global mean", epsilon=2 * Cn / n / b, mechanism="laplace", scale=b,
                          sensitivity=2 * Cn / n)
            p = pre["clipped_all"] + gen.laplace(0.0, b)
            b = 2 * C / (lay.strata_sizes * eps / 2)
            _record_strata("split: stratum mean", b, 2 * C / lay.strata_sizes, "laplace")
            noisy = means + gen.laplace(0.0, 1.0, means.size) * b
            est, _, _ = _recombine(lay, noisy, w_public)
            out.append(("split", p, est))
    return out


def _coinpress_methods(x, g, lay, k, eps, R, sig, sigma_mix, methods, w_public, beta, gen):
    d = coinpress_defaults(eps, R)
    rhos = np.asarray(d["rhos"])
    out = []
    for m in methods:
        if m == "naive":
            p = float(_uvmrec_strata(x, np.zeros(x.size, dtype=np.int64), np.array([float(x.size)]),
                                     np.array([sigma_mix]), d["low"], d["high"], rhos, beta, gen)[0])
            out.append(("coinpress", p, np.where(lay.sizes > 0, p, np.nan)))
        elif m == "stratified":
            srow = lay.stratum_of_group[g]
            use = srow >= 0
            est = _uvmrec_strata(x[use], srow[use], lay.strata_sizes.astype(float), _strata_sigmas(lay, sig),
                                 d["low"], d["high"], rhos, beta, gen)
            ge, _, p = _recombine(lay, est, w_public)
            out.append(("strat_coinpress", p, ge))
    return out


def mean_parity_by_method(df: pd.DataFrame, *, epsilon: float, group_mask=None,
                          normalized: bool = True) -> dict[str, float]:
    """Definition 11 parity error φ per method at one ε, averaged over the repetitions.

    ``df`` is :func:`run_mean_experiment`'s long format (columns epsilon, method, level, rep, truth, estimate;
    each (method, rep) lists its group rows in group order). ``group_mask`` selects the groups that enter φ
    (e.g. the non-empty ones); default all. Repetitions without a population row are skipped; a method with
    none left gets NaN.

    References
    ----------
    Seed ``004_c5ca305e20a1adba.txt``, Definition 11 (L183–193) via :func:`parity_error`; erratum E7 (a sum).
    """
    at = np.isclose(df["epsilon"].to_numpy(float), epsilon)
    level = df["level"].to_numpy()[at]
    method = df["method"].to_numpy()[at]
    rep = df["rep"].to_numpy()[at]
    truth = df["truth"].to_numpy(float)[at]
    est = df["estimate"].to_numpy(float)[at]
    out: dict[str, float] = {}
    for m in pd.unique(df["method"]):
        gm = (method == m) & (level == "group")
        pm = (method == m) & (level == "population")
        vals = []
        for r in np.unique(rep[gm]):
            gi = gm & (rep == r)
            pi = np.flatnonzero(pm & (rep == r))
            if not pi.size:
                continue
            sel = slice(None) if group_mask is None else np.asarray(group_mask)
            vals.append(parity_error(truth[gi][sel], est[gi][sel], truth[pi[0]], est[pi[0]], normalized=normalized))
        out[str(m)] = float(np.mean(vals)) if vals else float("nan")
    return out


def summarize_mean_experiment(df: pd.DataFrame) -> pd.DataFrame:
    """Mean |error| and its standard error per (epsilon, method, level, group, n_i)."""
    g = df.groupby(["epsilon", "method", "level", "group", "n_i"], sort=True)["abs_err"]
    out = g.agg(["mean", "std", "count"]).reset_index()
    out["se"] = out["std"] / np.sqrt(out["count"])
    return out.rename(columns={"mean": "mean_abs_err"})
