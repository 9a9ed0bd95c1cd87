"""Privacy amplification and degradation by sampling designs, and privacy-aware stratum allocation.

Pure Python (numpy, scipy, pandas); never imports streamlit. Every formula is the exact form; the paper's
small-ε shortcuts are returned separately (``*_paper_approx``) for grey display only.

References
----------
- [a] ``003_4b386133f61617e9.txt``, paper 1: Bun, Drechsler, Gaboardi, McMillan, Sarathy, "Controlling
  Privacy Loss in Sampling Schemes: An Analysis of Stratified and Cluster Sampling", FORC 2022.
- [BBG18] Balle, Barthe, Gaboardi, "Privacy amplification by subsampling", NeurIPS 2018 ([a] ref. [5]).
- Product decisions and errata E1–E13: ``shared/specs/sampling_designer.md`` §4–§5.

Errata implemented here (spec §5): E1/E2/E3 exact formulas and exact inverses, shortcuts kept apart; E4 the
printed CBP allocations are returned verbatim (they do not sum to 10,000); E5 Eq. (4) read with θ̃; E6/E7 the
theorem statements are used, not the garbled/inconsistent proofs; E8 Poisson and with-replacement results are
[BBG18] (external), SRSWR ε-part only; E9 integer discretisation of the Gaussian size law; E10 ddof 0 default;
E11 round(x) = floor(x + 0.5); E12 Theorem 11 read with (ε,…,ε)-stratified unbounded DP; E13 the
privacy-aware allocation is our formulation (derived), solved exactly by greedy marginal allocation.
"""

from __future__ import annotations

import heapq
import math
from fractions import Fraction
import warnings
from dataclasses import dataclass, field
from typing import Literal, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.special import logsumexp

from dpdash.common.validation import (ValidationError, as_generator, check_delta, check_epsilon, check_int_in_range,
                                      check_rate, check_size)

Status = Literal["paper", "external", "derived"]

SEED_FILE = "003_4b386133f61617e9.txt, paper 1"
BBG18 = "Balle, Barthe & Gaboardi (NeurIPS 2018), cited as [5] in " + SEED_FILE

#: Largest population handled by the random-size pmfs (spec §8: n ≤ 10⁶ keeps the redraw under budget).
MAX_RANDOM_SIZE_N = 1_000_000

# Values this close to an integer are treated as that integer (rates like 0.02 are not exact in binary, so
# 0.02·150 may come out as 2.9999999999999996; the design intends 3).
_INT_SNAP = 1e-9


# ----------------------------------------------------------------------------------------------------------
# Result types
# ----------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Amplification:
    """Population-level guarantee ε′ (and δ′) of "sample, then run M" for a per-record ε on the sample."""

    epsilon: float
    epsilon_population: float
    delta: float
    delta_population: float | None
    epsilon_paper_approx: float | None
    neighbour: str
    source: str
    status: Status
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Calibration:
    """Per-record ε to spend on the sample so that the population gets a target ε′."""

    epsilon_target: float
    epsilon_sample: float
    epsilon_sample_paper_approx: float | None
    noise_scale_per_sensitivity: float
    source: str
    status: Status


@dataclass(frozen=True)
class RandomSizeBounds:
    """Theorem 3 lower/upper bounds for a random, data-independent sample size."""

    n: int
    mean_size: float
    tilted_mean: float
    epsilon_lower: float
    epsilon_upper: float
    epsilon_paper_approx: float
    source: str


@dataclass(frozen=True)
class WorstSizeChannel:
    """Largest size-channel loss over neighbouring population sizes (N, N+1) in a range."""

    loss: float
    population_size: int


@dataclass(frozen=True)
class Degradation:
    """Loss from releasing stratum counts when one person shifts the sample sizes by Δ ([a] §4.1)."""

    l1: float
    linf: float
    linf_index: int
    loss_all_counts: float
    loss_one_count: float


@dataclass(frozen=True)
class ClusterBounds:
    """Per-cluster Theorem 7 (lower) and Theorem 8 (upper) bounds and whole-design summaries."""

    rate_clusters: float
    lower: np.ndarray
    upper: np.ndarray
    worst_upper: float
    worst_lower: float
    naive_srs: float


@dataclass(frozen=True)
class ProportionalAllocation:
    """Proportional allocation r·N_h with randomised (or deterministic) rounding and its guarantee."""

    expected: np.ndarray
    support: tuple[dict[int, float], ...]
    draw: np.ndarray | None
    theorem11_applies: bool
    amplification: Amplification


@dataclass(frozen=True)
class NeymanAllocation:
    """Neyman allocation with the take-all rule: continuous, largest-remainder integers, take-all mask."""

    continuous: np.ndarray
    rounded: np.ndarray
    take_all: np.ndarray


@dataclass(frozen=True)
class StratumStats:
    """Stratum sizes, means and (ddof 0) standard deviations."""

    N_h: np.ndarray
    mean_h: np.ndarray
    sd_h: np.ndarray


@dataclass(frozen=True)
class NeymanShift:
    """The single added record that moves the Neyman allocation most (L1 of the continuous allocation)."""

    stratum: int
    value: float
    before: np.ndarray
    after: np.ndarray
    delta: np.ndarray
    l1: float
    before_rounded: np.ndarray
    after_rounded: np.ndarray
    delta_rounded: np.ndarray
    l1_rounded: int
    linf_rounded: int
    sd_after: float = float("nan")


@dataclass(frozen=True)
class CbpExample:
    """The two printed 12-stratum Neyman allocations of [a] §6.2 (County Business Patterns), verbatim."""

    allocation_p: np.ndarray
    allocation_p_prime: np.ndarray
    m: int
    source: str


@dataclass(frozen=True)
class AllocationVariance:
    """Per-stratum sampling and privacy-noise variance of the stratified mean, and their total."""

    sampling: np.ndarray
    noise: np.ndarray
    epsilon_sample: np.ndarray
    total: float


@dataclass(frozen=True)
class FrameSummary:
    """Summary of an uploaded sampling frame: strata statistics and cluster sizes."""

    n: int
    strata: pd.DataFrame | None
    cluster_sizes: pd.Series | None
    dropped: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)


# ----------------------------------------------------------------------------------------------------------
# Helpers (argument checks come from dpdash.common.validation: one domain and message per kind)
# ----------------------------------------------------------------------------------------------------------







def _snap(x: np.ndarray | float) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    r = np.floor(x + 0.5)
    return np.where(np.abs(x - r) <= _INT_SNAP * np.maximum(1.0, np.abs(x)), r, x)


def _log1p_expm1_over_q(t: float, q: float, *, log_q: float | None = None) -> float:
    """log(1 + expm1(t)/q), the inverse of the amplification map, without overflow for large t or tiny q.

    ``log_q`` (log q, when known) keeps a q that underflows to 0 usable.
    """
    if q < 1e-300:   # 1/q would overflow (a size law whose mean is ~e^{−700}): log(e^t − 1 + q) − log q
        lq = math.log(q) if log_q is None else log_q
        if t <= 30.0:
            return math.log(math.expm1(t) + q) - lq
        return t + math.log(-math.expm1(-t) + math.exp(-t) * q) - lq
    if t <= 30.0:
        return float(np.log1p(np.expm1(t) / q))
    return float(t + np.log(-np.expm1(-t) / q + np.exp(-t)))


def amplification_map(q, epsilon):
    """log(1 + q(e^ε − 1)) without cancellation or overflow (the amplification map of Theorems 2, 6, 8).

    Vectorised kernel without argument checks (callers check q and ε); the one definition that every sampling
    bound, table and figure uses. For large ε it uses the identical form ε + log(q + (1 − q)e^{−ε}), which
    cannot overflow.

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, Theorem 2 (from [BBG18]).
    """
    q = np.asarray(q, dtype=float)
    e = np.asarray(epsilon, dtype=float)
    small = e <= 30.0
    with np.errstate(over="ignore", divide="ignore"):
        a = np.log1p(q * np.expm1(np.where(small, e, 0.0)))
        b = e + np.log(q + (1.0 - q) * np.exp(-e))
    out = np.where(small, a, b)
    return out if out.ndim else float(out)


# ----------------------------------------------------------------------------------------------------------
# 4.1–4.4 Simple random samples
# ----------------------------------------------------------------------------------------------------------

def amplify_srswor(*, epsilon: float, m: int, n: int, delta: float = 0.0) -> Amplification:
    """Population guarantee of an (ε,δ)-DP mechanism run on a simple random sample without replacement.

    Parameters
    ----------
    epsilon : float, ≥ 0
        Per-record ε of M on the sample (bounded neighbours).
    m, n : int, 0 ≤ m ≤ n, n ≥ 1
        Sample and population size.
    delta : float in [0, 1]

    Returns
    -------
    Amplification
        ε′ = log1p(q·expm1(ε)), δ′ = q·δ with q = m/n; bounded → bounded.

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, Theorem 2 (from [BBG18]). Erratum E1: the §2.4 example applies the
    shortcut ε′ ≈ qε (Eqs. (1)–(2)); the exact value is always used, the shortcut is ``epsilon_paper_approx``.

    Examples
    --------
    >>> round(amplify_srswor(epsilon=2, m=2000, n=10000).epsilon_population, 6)
    0.823215
    """
    eps = check_epsilon(epsilon, allow_zero=True)
    n = check_int_in_range(n, name="n", lo=1, hi=math.inf)
    m = check_int_in_range(m, name="m", lo=0, hi=n)
    d = check_delta(delta, allow_one=True)
    q = m / n
    return Amplification(eps, float(amplification_map(q, eps)), d, q * d, q * eps, "bounded",
                         f"{SEED_FILE}, Theorem 2 (from [BBG18])", "paper")


def calibrate_srswor(*, epsilon_target: float, rate: float) -> Calibration:
    """Per-record ε on a sample drawn at rate q so the population gets ε′_t (exact inverse of Theorem 2).

    λ = log1p(expm1(ε′_t)/q). Also valid for Poisson sampling at rate q ([BBG18], add/remove relation).

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, Theorem 2 inverted. Erratum E1: the §2.4 shortcut λ ≈ ε′_t/q is only
    returned as ``epsilon_sample_paper_approx``.
    """
    t = check_epsilon(epsilon_target, name="epsilon_target")
    q = check_rate(rate)
    lam = _log1p_expm1_over_q(t, q)
    return Calibration(t, lam, t / q, 1.0 / lam, f"{SEED_FILE}, Theorem 2 (exact inverse)", "paper")


def amplify_poisson(*, epsilon: float, rate: float, delta: float = 0.0) -> Amplification:
    """Population guarantee of an (ε,δ)-DP mechanism run on a Poisson sample (each record kept w.p. q).

    ε′ = log1p(q·expm1(ε)), δ′ = q·δ; unbounded (add/remove) → unbounded.

    References
    ----------
    [BBG18] (external; [a] §1.2 and §5.2 only mention Poisson sampling). Erratum E8: no Poisson theorem is
    in the seed file.
    """
    eps = check_epsilon(epsilon, allow_zero=True)
    q = check_rate(rate)
    d = check_delta(delta, allow_one=True)
    return Amplification(eps, float(amplification_map(q, eps)), d, q * d, q * eps, "unbounded", BBG18, "external")


def amplify_srswr(*, epsilon: float, m: int, n: int) -> Amplification:
    """ε-part of the guarantee for simple random sampling *with* replacement (external, incomplete).

    ε′ = log1p(η·expm1(ε)) with η = 1 − (1 − 1/n)^m, the chance a given record is drawn at least once. The δ′
    term (group privacy over repeated draws of one record) is not computed: ``delta_population`` is None.

    References
    ----------
    [BBG18] (external). Erratum E8: ε-part only; not for release decisions.
    """
    eps = check_epsilon(epsilon, allow_zero=True)
    n = check_int_in_range(n, name="n", lo=1, hi=math.inf)
    m = check_int_in_range(m, name="m", lo=0, hi=n)
    eta = float(srswr_inclusion(m, n))
    return Amplification(eps, float(amplification_map(eta, eps)), 0.0, None, eta * eps, "bounded", BBG18, "external",
                         ("external, approximate — δ′ not computed; not for release decisions",))


def srswr_inclusion(m, n: int):
    """η = 1 − (1 − 1/n)^m: the chance a given record is drawn at least once in m draws with replacement from n.

    Vectorised over ``m`` (real m is allowed for curves over a rate, m = q·n); no argument checks.

    References
    ----------
    [BBG18] (external), the with-replacement amplification; used by :func:`amplify_srswr`.
    """
    m = np.asarray(m, dtype=float)
    out = -np.expm1(m * np.log1p(-1.0 / n)) if n > 1 else (m > 0).astype(float)
    return out if out.ndim else float(out)


def lemma16_bound(*, epsilon: float, m: int, m_prime: int, n: int) -> float:
    """Indistinguishability of "SRSWOR of m from P" and "SRSWOR of m′ from P ∪ {x}" (|P| = n, M unbounded).

    Returns log1p(m/(n+1)·expm1(2ε)) + |m − m′|·ε (note the 2ε).

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, Lemma 16 (Appendix B).
    """
    eps = check_epsilon(epsilon, allow_zero=True)
    n = check_int_in_range(n, name="n", lo=1, hi=math.inf)
    m = check_int_in_range(m, name="m", lo=0, hi=n)
    mp = check_int_in_range(m_prime, name="m_prime", lo=0, hi=n + 1)
    return float(amplification_map(m / (n + 1), 2 * eps) + abs(m - mp) * eps)


# ----------------------------------------------------------------------------------------------------------
# 4.5 Random data-independent sample size (Theorem 3)
# ----------------------------------------------------------------------------------------------------------


def check_size_n(n) -> int:
    """Population size for the random-size laws: an integer in [1, MAX_RANDOM_SIZE_N] (the pmf has n + 1 cells)."""
    n = check_size(n, name="n")
    if n > MAX_RANDOM_SIZE_N:
        raise ValidationError(f"n must be at most {MAX_RANDOM_SIZE_N:,} for random sample sizes; got {n}")
    return n


@dataclass(frozen=True)
class SizeLaw:
    """A sample-size law t on {0, …, n} held as natural-log probabilities (−inf where t(m) = 0).

    Held in log space because a Gaussian law's probabilities underflow to 0 beyond ~38σ from the mean, and the
    tilt e^{εm} of Theorem 3 can put almost all of its weight exactly there (spec §4.5, amendment 2026-11-24).
    ``pmf`` gives the probabilities for display.
    """

    log_pmf: np.ndarray

    @property
    def n(self) -> int:
        return int(self.log_pmf.size - 1)

    @property
    def pmf(self) -> np.ndarray:
        return np.exp(self.log_pmf)


def _logsumexp(a: np.ndarray) -> float:
    """log Σ e^{a_i} of a 1-D float array (−inf entries allowed) with one max shift.

    The algorithm of ``scipy.special.logsumexp`` without its per-call array conversions, which cost ~40 ms at the
    10⁶ sizes of the largest size law against ~8 ms here.
    """
    top = float(np.max(a)) if a.size else -math.inf
    if not math.isfinite(top):
        return top
    return top + math.log(float(np.sum(np.exp(a - top))))


def _law_from_log(logw: np.ndarray) -> SizeLaw:
    """Normalise unnormalised log-weights (logsumexp) into a :class:`SizeLaw`."""
    logw = np.asarray(logw, dtype=float)
    out = logw - _logsumexp(logw)
    out.setflags(write=False)
    return SizeLaw(out)


def _as_log_pmf(law) -> np.ndarray:
    """Log-probabilities of a :class:`SizeLaw`, or of a plain pmf array (checked; log of its probabilities)."""
    if isinstance(law, SizeLaw):
        return law.log_pmf
    p = _check_pmf(law)
    with np.errstate(divide="ignore"):
        return np.log(p)


def _check_pmf(pmf) -> np.ndarray:
    p = np.asarray(pmf, dtype=float)
    if p.ndim != 1 or p.size < 2:
        raise ValueError(f"pmf must be a 1-D array over sizes 0…n (length ≥ 2); got shape {p.shape}.")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError("pmf must contain finite, non-negative probabilities.")
    s = float(p.sum())
    if abs(s - 1.0) > 1e-9:
        raise ValueError(f"pmf must sum to 1 (within 1e-9); it sums to {s!r}.")
    return p


def size_law_point(n: int, *, m: int) -> SizeLaw:
    """Size law that always draws m records (Theorem 3 then reduces to Theorem 2)."""
    n = check_size_n(n)
    m = check_int_in_range(m, name="m", lo=0, hi=n)
    logp = np.full(n + 1, -np.inf)
    logp[m] = 0.0
    logp.setflags(write=False)
    return SizeLaw(logp)


def size_law_truncnorm(n: int, *, mean: float, sd: float) -> SizeLaw:
    """Discretised Gaussian size law t(m) ∝ exp(−(m−μ)²/(2σ²)) on {0,…,n}, in log space.

    σ = 0 gives a point mass at floor(μ + 0.5) (clipped to [0, n]). The log-weights are shifted by the squared
    distance of the nearest size before dividing by σ², so for σ → 0 the nearest size(s) keep weight 1 instead
    of every weight underflowing (two sizes equally near share the mass, the σ → 0 limit).

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, §3 and Figure 2. Erratum E9: the figure's discretisation is not
    specified; this integer discretisation is the product's convention.
    """
    n = check_size_n(n)
    mu = float(mean)
    s = float(sd)
    if not math.isfinite(mu):
        raise ValueError(f"mean must be finite; got {mean!r}.")
    if not math.isfinite(s) or s < 0:
        raise ValueError(f"sd must be a finite number ≥ 0; got {sd!r}.")
    if s == 0:
        return size_law_point(n, m=int(min(max(math.floor(mu + 0.5), 0), n)))
    m = np.arange(n + 1, dtype=float)
    d2 = (m - mu) ** 2
    d2 -= d2.min()
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        logw = -0.5 * (d2 / (s * s)) if s * s > 0 else np.where(d2 == 0, 0.0, -np.inf)
    logw = np.where(np.isnan(logw), -np.inf, logw)
    return _law_from_log(logw)


def size_law_uniform(n: int, *, low: int = 0, high: int | None = None) -> SizeLaw:
    """Uniform size law on {low, …, high} (high defaults to n)."""
    n = check_size_n(n)
    hi = n if high is None else check_int_in_range(high, name="high", lo=0, hi=n)
    lo = check_int_in_range(low, name="low", lo=0, hi=n)
    if lo > hi:
        raise ValueError(f"low must not exceed high; got low={low}, high={hi}.")
    logp = np.full(n + 1, -np.inf)
    logp[lo:hi + 1] = -math.log(hi - lo + 1)
    logp.setflags(write=False)
    return SizeLaw(logp)


def size_law_mixture(base: SizeLaw | np.ndarray, *, p_full: float) -> SizeLaw:
    """(1 − p)·base + p·(point mass at n): a tiny chance of sampling everyone ([a] §3), in log space."""
    lb = _as_log_pmf(base)
    p = float(p_full)
    if not (0.0 <= p <= 1.0):
        raise ValueError(f"p_full must lie in [0, 1]; got {p_full!r}.")
    with np.errstate(divide="ignore"):
        out = lb + math.log1p(-p) if p < 1 else np.full(lb.size, -np.inf)
        out = np.array(out, dtype=float)
        out[-1] = np.logaddexp(out[-1], math.log(p) if p > 0 else -np.inf)
    out.setflags(write=False)
    return SizeLaw(out)


def size_pmf_point(n: int, *, m: int) -> np.ndarray:
    """Probabilities of :func:`size_law_point` (display; Theorem 3 calls should pass the law)."""
    return size_law_point(n, m=m).pmf


def size_pmf_truncnorm(n: int, *, mean: float, sd: float) -> np.ndarray:
    """Probabilities of :func:`size_law_truncnorm`; they underflow far from the mean, so pass the law itself
    to :func:`amplify_random_size` (at n = 10,000, μ = 5,000, σ = 100, ε = 1 the array gives upper ε′ 0.9242,
    the law 0.99990)."""
    return size_law_truncnorm(n, mean=mean, sd=sd).pmf


def size_pmf_uniform(n: int, *, low: int = 0, high: int | None = None) -> np.ndarray:
    """Probabilities of :func:`size_law_uniform`."""
    return size_law_uniform(n, low=low, high=high).pmf


def size_pmf_mixture(base: np.ndarray, *, p_full: float) -> np.ndarray:
    """Probabilities of :func:`size_law_mixture`."""
    return size_law_mixture(base, p_full=p_full).pmf


def size_law_from_controls(n: int, *, family: Literal["gaussian", "point", "uniform", "mixture"], mean: float,
                           sd: float, low: int, high: int, base: Literal["gaussian", "point", "uniform"] = "gaussian",
                           p_full: float = 0.0) -> SizeLaw:
    """The size law a set of Theorem 3 controls describe (spec §7 Tab 2): the point family uses floor(mean + 0.5),
    clipped to [0, n]; the mixture adds ``p_full`` at n to the ``base`` family."""
    if family == "mixture":
        if base == "mixture":
            raise ValueError("the mixture's base must be gaussian, point or uniform.")
        return size_law_mixture(size_law_from_controls(n, family=base, mean=mean, sd=sd, low=low, high=high),
                                p_full=p_full)
    if family == "point":
        n = check_size_n(n)
        mu = float(mean)
        if not math.isfinite(mu):
            raise ValueError(f"mean must be finite; got {mean!r}.")
        return size_law_point(n, m=int(min(max(math.floor(mu + 0.5), 0), n)))
    if family == "uniform":
        return size_law_uniform(n, low=low, high=high)
    if family == "gaussian":
        return size_law_truncnorm(n, mean=mean, sd=sd)
    raise ValueError(f"family must be gaussian, point, uniform or mixture; got {family!r}.")


def _finite_sizes(logp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The log-probabilities of the sizes with t(m) > 0 and those sizes as floats."""
    if np.all(np.isfinite(logp)):   # the Gaussian laws: no index copy
        return logp, np.arange(logp.size, dtype=float)
    idx = np.flatnonzero(np.isfinite(logp))
    return logp[idx], idx.astype(float)


# Sums of e^{lw}·m below this (with the largest e^{lw} = 1) may have lost terms to underflow: each lost term is
# below ~2.2e-308·n ≤ 2.2e-302 and there are at most n + 1 ≤ 10⁶ + 1 of them, so above 1e-280 the loss is
# below 1e-16 relative; below it the sum is redone term by term in log space.
_SUM_FLOOR = 1e-280


def _log_means(lp: np.ndarray, m: np.ndarray, rest: np.ndarray, eps: float) -> tuple[float, float]:
    """log E[m] and log E[n − m] under weights ∝ e^{lp + εm}, from one exponential pass (−inf for 0).

    ``lp`` finite log-weights of the sizes ``m``; ``rest`` = n − m. The log-weights are shifted by their
    largest value, so the weights lie in (0, 1] and the two means are dot products; this is logsumexp's
    max shift, shared by the three sums, and it keeps log E[m] exact when e^{εm} is huge (εm ≈ 10⁶ left only
    ~1e-10 absolute precision in logsumexp(lw + log m) − logsumexp(lw)).

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, Theorem 3 (E_t̃[m] with t̃(m) ∝ e^{εm}t(m)).
    """
    if eps:
        # e^{ε(m − c)} with c the heaviest size: a product of a small difference keeps digits that ε·m ≈ 10⁷ loses
        c = m[int(np.argmax(lp + eps * m))]
        lw = m - c
        lw *= eps
        lw += lp
    else:
        lw = lp.copy()
    lw -= lw.max()
    w = np.exp(lw, out=lw)
    # products summed by np.sum (pairwise, as logsumexp sums); BLAS dot threads cost ~8 ms per call here
    buf = np.empty_like(w)
    s0, s1, s2 = float(w.sum()), float(np.multiply(w, m, out=buf).sum()), float(np.multiply(w, rest, out=buf).sum())
    out = []
    for s, x in ((s1, m), (s2, rest)):
        if s >= _SUM_FLOOR:
            out.append(math.log(s) - math.log(s0))
        else:   # the mass sits (almost) all on m = 0 or on m = n: sum the other sizes in log space
            with np.errstate(divide="ignore"):
                lw2 = lp + eps * m
                out.append(_logsumexp(lw2 + np.log(x)) - _logsumexp(lw2))
    return out[0], out[1]


def _tilt_logs(logp: np.ndarray, eps: float) -> tuple[float, float, float]:
    """log E_t̃[m], log E_t̃[n − m] and log E_t[m] (−inf for 0), from log t (−inf entries skipped)."""
    lp, m = _finite_sizes(logp)
    rest = (logp.size - 1) - m
    lt, lr = _log_means(lp, m, rest, eps)
    return lt, lr, _log_means(lp, m, rest, 0.0)[0]


def theorem3_bounds_from_fraction(log_frac, log_rest, *, epsilon: float):
    """Theorem 3 (lower, upper) from log f and log(1 − f), f = E_t̃[m]/n (vectorised), without cancellation.

    upper = log1p(f·expm1(ε)), lower = −log1p(f·expm1(−ε)); where f·expm1(−ε) is near −1 (f → 1, large ε) the
    lower bound is −log((1 − f) + f·e^{−ε}) from log(1 − f), and above ε = 30 the upper bound is
    log((1 − f) + f·e^ε) (no overflow). Taking 1 − f as a separate input keeps it exact when f ≈ 1.

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, Theorem 3.
    """
    eps = check_epsilon(epsilon, allow_zero=True)
    lf = np.asarray(log_frac, dtype=float)
    lr = np.asarray(log_rest, dtype=float)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        f = np.exp(lf)
        x = f * math.expm1(-eps)
        lower = np.where(x > -0.5, -np.log1p(np.maximum(x, -1.0)), -np.logaddexp(lr, lf - eps))
        upper = (np.log1p(f * math.expm1(eps)) if eps <= 30 else np.logaddexp(lr, lf + eps))
    lower, upper = np.maximum(lower, 0.0), np.maximum(upper, 0.0)
    return (lower, upper) if lower.ndim else (float(lower), float(upper))


def _theorem3_bounds(log_frac: float, log_rest: float, eps: float) -> tuple[float, float]:
    return theorem3_bounds_from_fraction(log_frac, log_rest, epsilon=eps)


def tilted_law(law: SizeLaw | np.ndarray, *, epsilon: float) -> SizeLaw:
    """The tilted size law t̃(m) ∝ e^{εm}·t(m), normalised in log space (sizes with t(m) = 0 keep probability 0).

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, Theorem 3 (definition of t̃).
    """
    logp = _as_log_pmf(law)
    eps = check_epsilon(epsilon, allow_zero=True)
    return _law_from_log(logp + eps * np.arange(logp.size, dtype=float))


def tilted_mean(law: SizeLaw | np.ndarray, *, epsilon: float) -> float:
    """E_t̃[m] for the tilted law t̃(m) ∝ e^{εm}·t(m), computed in log space (sizes with t(m) = 0 skipped).

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, Theorem 3 (definition of t̃ and the displayed ratio below it).
    """
    logp = _as_log_pmf(law)
    eps = check_epsilon(epsilon, allow_zero=True)
    return float(math.exp(_tilt_logs(logp, eps)[0]))


def amplify_random_size(law: SizeLaw | np.ndarray, *, epsilon: float) -> RandomSizeBounds:
    """Theorem 3 bounds when the sample size m ~ t is random but independent of the data.

    upper ε′ = log1p((E_t̃[m]/n)·expm1(ε)); lower ε′ = −log1p(−(E_t̃[m]/n)·(−expm1(−ε))).
    M is ε-unbounded DP; the guarantee for "sample, then run M" is bounded DP with n fixed and known.
    Pass a :class:`SizeLaw` (log space); a plain pmf array is accepted but its underflowed zeros are final.

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, Theorem 3 (upper and lower bound). The shortcut (E_t̃[m]/n)·ε is the
    paper's small-ε approximation, returned for grey display only.
    """
    logp = _as_log_pmf(law)
    eps = check_epsilon(epsilon, allow_zero=True)
    n = logp.size - 1
    lt, lr, lm = _tilt_logs(logp, eps)
    lower, upper = _theorem3_bounds(lt - math.log(n), lr - math.log(n), eps)
    et = math.exp(lt)
    return RandomSizeBounds(n, math.exp(lm), et, lower, upper, et / n * eps, f"{SEED_FILE}, Theorem 3")


def random_size_lower_bound_direct(law: SizeLaw | np.ndarray, *, epsilon: float) -> float:
    """Theorem 3's lower-bound witness evaluated literally (log space), as an independent check.

    P = n ones, P′ = one 1 replaced by 0, M(S) = #{x = 1 in S} + Lap(1/ε); the log density ratio at output n
    is log Σ t(m) e^{−(n−m)ε} − log Σ t(m)[(m/n)e^{−(n−m+1)ε} + (1 − m/n)e^{−(n−m)ε}].

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, Appendix B, proof of Theorem 3 (lower bound).
    """
    logp = _as_log_pmf(law)
    eps = check_epsilon(epsilon, allow_zero=True)
    n = logp.size - 1
    idx = np.flatnonzero(np.isfinite(logp))
    m = idx.astype(float)
    base = logp[idx] - (n - m) * eps
    frac = m / n
    # (m/n)e^{−ε} + (1 − m/n) = 1 − (m/n)(1 − e^{−ε}): with expm1 for precision at small ε, and as
    # log((n − m)/n + (m/n)e^{−ε}) where that nears 0 (m = n at large ε: expm1(−50) rounds to −1)
    with np.errstate(divide="ignore"):
        x = frac * np.expm1(-eps)
        inner = np.where(x > -0.5, np.log1p(np.maximum(x, -0.5)),
                         np.logaddexp(np.log(n - m) - math.log(n), np.log(m) - math.log(n) - eps))
    return float(logsumexp(base) - logsumexp(base + inner))


def calibrate_random_size(law: SizeLaw | np.ndarray, *, epsilon_target: float) -> Calibration:
    """Per-record ε whose Theorem 3 *upper* bound equals the target (bisection, bracket proven below).

    Bracket: upper(ε) ≤ ε, and E_t̃[m] ≥ E_t[m] gives upper(ε) ≥ log1p(E_t[m]/n·expm1(ε)), so the root lies in
    [ε′_t, log1p(expm1(ε′_t)·n/E_t[m])]. A size law concentrated on 0 never reveals anyone: ε = ∞.

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, Theorem 3 (upper bound), inverted numerically [derived].
    """
    logp = _as_log_pmf(law)
    t = check_epsilon(epsilon_target, name="epsilon_target")
    n = logp.size - 1
    lp, fi = _finite_sizes(logp)
    lm = _log_means(lp, fi, n - fi, 0.0)[0]
    src = f"{SEED_FILE}, Theorem 3 upper bound, inverted by bisection"
    if lm == -math.inf:
        return Calibration(t, math.inf, math.inf, 0.0, src, "derived")
    mean = math.exp(lm)   # may underflow to 0 when t(m > 0) is below ~e^{−745}: the bracket uses log q
    lo, hi = t, _log1p_expm1_over_q(t, min(mean / n, 1.0), log_q=min(lm - math.log(n), 0.0))
    # Drop sizes that are negligible for every ε in [lo, hi]: log-weights are linear in ε, so a size whose
    # log-weight is 800 below that of a fixed reference size at both ends is below it everywhere between
    # (e^{−800} is below double precision after normalisation). References: the heaviest size at each end.
    at_lo, at_hi = lp + lo * fi, lp + hi * fi
    keep = np.ones(fi.size, dtype=bool)
    for lw in (at_lo, at_hi):
        j = int(np.argmax(lw))
        keep &= ((at_lo[j] - at_lo) < 800) | ((at_hi[j] - at_hi) < 800)
    lp, fi = lp[keep], fi[keep]
    rest = n - fi
    log_n = math.log(n)

    def upper(e: float) -> float:
        lf, lr = _log_means(lp, fi, rest, e)
        return _theorem3_bounds(lf - log_n, lr - log_n, e)[1]

    if upper(lo) >= t:
        lam = lo
    else:
        lam = brentq(lambda e: upper(e) - t, lo, hi * (1 + 1e-12) + 1e-300, xtol=1e-15, rtol=1e-15, maxiter=200)
    return Calibration(t, float(lam), t * n / mean if mean > 0 else math.inf, 1.0 / lam, src, "derived")


def truncnorm_tilted_means(n: int, *, mean: float, sds: Sequence[float], epsilon: float,
                           untilted: bool = True, with_rest: bool = False) -> np.ndarray:
    """E_t[m] and E_t̃[m] of the discretised Gaussian for many σ at once (for the bounds-vs-σ curve).

    Only sizes within √80·σ of each (clipped) peak are summed: every size outside carries a weight below
    e^{−40} of the peak, so the skipped mass is below 1e-18 of the total. Returns shape (len(sds), 2);
    with ``untilted=False`` the first column (E_t[m]) is not computed (NaN), halving the work. With
    ``with_rest`` a third column holds E_t̃[n − m], summed directly so that 1 − E_t̃[m]/n keeps its digits
    when the tilted mean sits next to n (Theorem 3's bounds need it there).
    """
    n = check_size_n(n)
    eps = check_epsilon(epsilon, allow_zero=True)
    out = np.full((len(sds), 3 if with_rest else 2), np.nan)
    mean = float(mean)
    c = min(max(math.floor(mean + 0.5), 0), n)
    for i, s in enumerate(np.asarray(sds, dtype=float)):
        if s <= 0:
            out[i, :2] = (c, c)
            if with_rest:
                out[i, 2] = n - c
            continue
        half = math.sqrt(2 * 40.0) * s + 2
        for j, tilt in enumerate((0.0, eps)):
            if j == 0 and not untilted:
                continue
            # separate windows: with a large tilt the two peaks can be far apart
            vertex = mean + tilt * s * s
            centre = min(max(vertex, 0.0), float(n))
            width = half
            if vertex > n:
                # log-weight is concave and still rising at n with slope g: below its tangent, sizes more than
                # T/g below n weigh under e^{−T}, and their total under e^{−T}/g; T makes that < 1e-17
                g = tilt - (n - mean) / (s * s)
                T = 40.0 + max(0.0, math.log(1.0 / g))
                width = min(half, T / g + 2)
            a = int(max(0, math.floor(centre - width)))
            b = int(min(n, math.ceil(centre + width)))
            m = np.arange(a, b + 1, dtype=float)
            logw = m - mean
            logw *= 1.0 / s
            with np.errstate(over="ignore"):
                np.square(logw, out=logw)
            logw *= -0.5
            if tilt:
                logw += tilt * m
            top = logw.max()
            if not np.isfinite(top):   # σ too small to resolve: the point-mass limit
                out[i, j] = c
                if j == 1 and with_rest:
                    out[i, 2] = n - c
                continue
            logw -= top
            np.exp(logw, out=logw)
            tot = logw.sum()
            # products summed by np.sum (pairwise); BLAS dot threads cost more than the sum here
            out[i, j] = float((logw * m).sum() / tot)
            if j == 1 and with_rest:
                np.subtract(n, m, out=m)
                m *= logw
                out[i, 2] = float(m.sum() / tot)
    return out


# ----------------------------------------------------------------------------------------------------------
# 4.6 Data-dependent sizes, rounding (Theorems 6 and 11)
# ----------------------------------------------------------------------------------------------------------

def _split_rate_times(rate: float, N) -> tuple[np.ndarray, np.ndarray]:
    """floor(r·N) and its fractional part, with r read as the decimal the user chose (its shortest repr).

    A float product r·N loses the fraction at large N (at N ≈ 10⁹ its error is ~5e-9), a snap relative to |r·N|
    swallows real fractions (1e-9·5·10⁷ = 0.05), and the binary 0.05 is 0.05 + 2.8e-18, which N = 10⁹ turns into
    2.8e-9. Exact integers on the decimal instead; a distance below 2⁻⁵⁰·r·N (a 17-digit decimal's error, as in
    r = 1/3 read as 0.3333333333333333) counts as an integer.
    """
    num, den = Fraction(repr(float(rate))).as_integer_ratio()
    Ns = np.atleast_1d(np.asarray(N)).astype(np.int64)
    lo = np.empty(Ns.size, dtype=float)
    frac = np.empty(Ns.size, dtype=float)
    for i, n in enumerate(Ns.tolist()):
        q, rem = divmod(num * n, den)
        f = rem / den
        tol = 2.0 ** -50 * max(1.0, num * n / den)
        if f <= tol:
            f = 0.0
        elif 1.0 - f <= tol:
            q, f = q + 1, 0.0
        lo[i], frac[i] = q, f
    return lo, frac


def rounding_size_pmf(population_size: int, *, rate: float,
                      method: Literal["deterministic", "randomized"]) -> dict[int, float]:
    """Distribution of the sample size r·N after deterministic or randomised rounding.

    Deterministic: floor(rN + 0.5). Randomised: ceil(rN) with probability rN − floor(rN), else floor(rN).

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, §4.3. Erratum E11: "round" is unspecified; we use floor(x + 0.5), not
    Python's half-to-even ``round``.
    """
    N = check_int_in_range(population_size, name="population_size", lo=0, hi=math.inf)
    r = check_rate(rate)
    lo_a, frac_a = _split_rate_times(r, N)
    lo, frac = int(lo_a[0]), float(frac_a[0])
    if method == "deterministic":
        return {lo + (1 if frac >= 0.5 else 0): 1.0}
    if method != "randomized":
        raise ValueError(f"method must be 'deterministic' or 'randomized'; got {method!r}.")
    if frac == 0:
        return {int(lo): 1.0}
    return {int(lo): 1.0 - frac, int(lo) + 1: frac}


def size_channel_loss(p: Mapping[int, float], p_prime: Mapping[int, float], *, epsilon: float) -> float:
    """Largest log-ratio of "sample size + Lap(1/ε)" under two size laws: a lower bound on ε′.

    L = sup_y |log(Σ_a p_a e^{−ε|y−a|} / Σ_a p′_a e^{−ε|y−a|})|. Between consecutive support points the ratio
    is a Möbius function of e^{2εy}, hence monotone, so the sup is attained at a support point or as y → ±∞.

    References
    ----------
    [derived] from 003_4b386133f61617e9.txt, paper 1, §4.1 (count mechanism) and §4.2 (Proposition 4).
    """
    eps = check_epsilon(epsilon, allow_zero=True)
    if not p or not p_prime:
        raise ValueError("size distributions must be non-empty.")
    a = np.array(list(p.keys()), dtype=float)
    pa = np.array(list(p.values()), dtype=float)
    b = np.array(list(p_prime.keys()), dtype=float)
    pb = np.array(list(p_prime.values()), dtype=float)
    for name, w in (("p", pa), ("p_prime", pb)):
        if np.any(w < 0) or abs(w.sum() - 1.0) > 1e-9:
            raise ValueError(f"{name} must be a normalised size distribution (non-negative, sums to 1).")
    return float(_size_channel_batch(a[None, :], pa[None, :], b[None, :], pb[None, :], eps)[0])


def _size_channel_batch(a, pa, b, pb, eps) -> np.ndarray:
    """Vectorised size-channel loss for rows of (support, weights) pairs; zero weights allowed."""
    with np.errstate(divide="ignore"):
        la, lb = np.log(pa), np.log(pb)
    shift = np.minimum(a.min(axis=1, keepdims=True), b.min(axis=1, keepdims=True))
    a0, b0 = a - shift, b - shift
    ys = np.concatenate([a0, b0], axis=1)                       # every support point
    num = logsumexp(la[:, None, :] - eps * np.abs(ys[:, :, None] - a0[:, None, :]), axis=2)
    den = logsumexp(lb[:, None, :] - eps * np.abs(ys[:, :, None] - b0[:, None, :]), axis=2)
    best = np.max(np.abs(num - den), axis=1)
    for sgn in (1.0, -1.0):                                     # y → +∞ and y → −∞
        lim = logsumexp(la + sgn * eps * a0, axis=1) - logsumexp(lb + sgn * eps * b0, axis=1)
        best = np.maximum(best, np.abs(lim))
    return best


def size_channel_curve(*, epsilon: float, rate: float, method: Literal["deterministic", "randomized"],
                       n_min: int, n_max: int) -> tuple[np.ndarray, np.ndarray]:
    """Size-channel loss for every pair (N, N+1), N = n_min … n_max (vectorised; for the sawtooth plot)."""
    eps = check_epsilon(epsilon, allow_zero=True)
    r = check_rate(rate)
    n_min = check_int_in_range(n_min, name="n_min", lo=0, hi=math.inf)
    n_max = check_int_in_range(n_max, name="n_max", lo=n_min, hi=math.inf)
    if method not in ("deterministic", "randomized"):
        raise ValueError(f"method must be 'deterministic' or 'randomized'; got {method!r}.")
    N = np.arange(n_min, n_max + 1)
    sizes, probs = [], []
    for NN in (N, N + 1):
        lo, frac = _split_rate_times(r, NN)
        if method == "deterministic":
            lo = lo + (frac >= 0.5)
            frac = np.zeros_like(frac)
        sizes.append(np.stack([lo, lo + 1], axis=1))
        probs.append(np.stack([1 - frac, frac], axis=1))
    loss = _size_channel_batch(sizes[0], probs[0], sizes[1], probs[1], eps)
    return N, loss


def worst_size_channel_loss(*, epsilon: float, rate: float, method: Literal["deterministic", "randomized"],
                            n_max: int, n_min: int | None = None) -> WorstSizeChannel:
    """Largest size-channel loss over pairs (N, N+1), n_min ≤ N ≤ n_max (n_min defaults to ceil(1/r)).

    Under randomised rounding the maximum is log1p(r·expm1(ε)), attained when rN is an integer; it always lies
    below Theorem 6. Deterministic rounding loses ε whenever the rounded sizes differ.

    References
    ----------
    [derived, checked numerically] from 003_4b386133f61617e9.txt, paper 1, §4.2–§4.3.
    """
    r = check_rate(rate)
    lo = math.ceil(_snap(1.0 / r)) if n_min is None else n_min
    N, loss = size_channel_curve(epsilon=epsilon, rate=r, method=method, n_min=lo, n_max=n_max)
    best = float(loss.max())
    i = int(np.flatnonzero(loss >= best - 1e-12 * max(best, 1e-300))[0])
    return WorstSizeChannel(best, int(N[i]))


def degradation_loss(delta_sizes: Sequence[float], *, epsilon: float) -> Degradation:
    """Privacy loss when one person changes the sample sizes by Δ and the counts are released with Lap(1/ε).

    All counts released: ε·‖Δ‖₁; a single count: ε·‖Δ‖∞.

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, §4.1 (sensitivity and privacy degradation).
    """
    eps = check_epsilon(epsilon, allow_zero=True)
    d = np.abs(np.atleast_1d(np.asarray(delta_sizes, dtype=float)))
    if d.size == 0 or not np.all(np.isfinite(d)):
        raise ValueError("delta_sizes must be a non-empty list of finite numbers.")
    i = int(np.argmax(d))
    l1, linf = float(d.sum()), float(d[i])
    return Degradation(l1, linf, i, eps * l1, eps * linf)


def amplify_randomized_rounding(*, epsilon: float, rate: float) -> Amplification:
    """Theorem 6 (and Theorem 11) guarantee for proportional sampling with randomised rounding.

    z = expm1(2ε); ε′ = log1p(2rz) + log1p(rz); M is ε-unbounded DP, the guarantee is unbounded, valid for
    populations (strata) of at least 1/r records.

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, Theorem 6 (§4.3) and Theorem 11 (§6.3). Erratum E3: "≈ 6rε" only holds
    for small ε and the bound exceeds ε when r > r*(ε) (``randomized_rounding_crossover``). Erratum E6: the
    Appendix C proof is garbled; the statement is used.
    """
    eps = check_epsilon(epsilon, allow_zero=True)
    r = check_rate(rate)
    if r == 1.0:
        # r·N is whole for every N, so the "sample" is the population with certainty and M_C is M itself:
        # ε′ = ε exactly (the Theorem 6 bound, 4.6 at ε = 1, is valid here but no guarantee anyone should read)
        return Amplification(eps, eps, 0.0, 0.0, None, "unbounded", f"{SEED_FILE}, census (r = 1): the sample is "
                             "the whole population, so the mechanism runs unsampled", "derived",
                             ("A census (r = 1): everyone is sampled, so there is no amplification: ε′ = ε.",))
    # log1p(2r·z) + log1p(r·z) with z = expm1(2ε), via the overflow-safe map
    val = float(amplification_map(2 * r, 2 * eps) + amplification_map(r, 2 * eps))
    notes = [f"Theorem 6 applies only to populations of at least 1/r = {1 / r:.4g} records."]
    if eps > 0 and val > eps:
        notes.append("No amplification guaranteed: at this rate the Theorem 6 bound exceeds ε "
                     f"(crossover rate r* = {randomized_rounding_crossover(epsilon=eps):.4g}).")
    return Amplification(eps, val, 0.0, 0.0, 6 * r * eps, "unbounded", f"{SEED_FILE}, Theorem 6", "paper",
                         tuple(notes))


def calibrate_randomized_rounding(*, epsilon_target: float, rate: float) -> Calibration:
    """Exact inverse of Theorem 6: the per-record ε whose bound equals the target.

    (1 + 2rz)(1 + rz) = e^{ε′_t} ⇒ z = 2·expm1(ε′_t)/(r·(√(1 + 8e^{ε′_t}) + 3)), λ = ½·log1p(z).

    References
    ----------
    [derived] from 003_4b386133f61617e9.txt, paper 1, Theorem 6. Erratum E2: the §6.3 shortcut λ ≈ ε/(6r)
    overstates the allowed ε many-fold; it is ``epsilon_sample_paper_approx`` only.
    """
    t = check_epsilon(epsilon_target, name="epsilon_target")
    r = check_rate(rate)
    if r == 1.0:   # a census: the mechanism runs unsampled, so the target is the per-record ε
        return Calibration(t, t, None, 1.0 / t, f"{SEED_FILE}, census (r = 1): no sampling, ε = ε′", "derived")
    z = 2 * np.expm1(t) / (r * (np.sqrt(1 + 8 * np.exp(t)) + 3))
    lam = float(0.5 * np.log1p(z))
    return Calibration(t, lam, t / (6 * r), 1.0 / lam, f"{SEED_FILE}, Theorem 6 (exact inverse, derived)",
                       "derived")


def randomized_rounding_crossover(*, epsilon: float) -> float:
    """Rate r*(ε) above which the Theorem 6 bound exceeds ε (no amplification guaranteed).

    r*(ε) = 2·expm1(ε)/(expm1(2ε)·(√(1 + 8e^ε) + 3)); → 1/6 as ε → 0 and falls as ε grows.

    References
    ----------
    [derived] from 003_4b386133f61617e9.txt, paper 1, Theorem 6; Erratum E3.
    """
    eps = check_epsilon(epsilon, allow_zero=True)
    # expm1(ε)/expm1(2ε) = 1/(e^ε + 1) exactly, so r* = 2/((e^ε + 1)(√(1 + 8e^ε) + 3)): no 0/0 at ε = 0
    # (r* = 1/6) and no overflow warning for huge ε (r* → 0)
    with np.errstate(over="ignore"):
        ee = np.exp(eps)
        return float(2.0 / ((ee + 1.0) * (np.sqrt(1.0 + 8.0 * ee) + 3.0)))


# ----------------------------------------------------------------------------------------------------------
# 4.7–4.8 Cluster sampling (Theorems 7, 8, 9)
# ----------------------------------------------------------------------------------------------------------

def _check_clusters(n_clusters, n_drawn) -> tuple[int, int]:
    k = check_int_in_range(n_clusters, name="n_clusters", lo=2, hi=math.inf)
    ell = check_int_in_range(n_drawn, name="n_drawn", lo=1, hi=k - 1)
    return k, ell


def cluster_amplification(epsilon, q, n_pair):
    """B(ε, q, N) = log1p(q/(q + (1−q)·e^{−Nε})·expm1(ε)), broadcasting over arrays; no argument checks.

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, Theorems 7 and 8 (§5.1); :func:`cluster_bound` is the checked form.
    """
    eps = np.asarray(epsilon, dtype=float)
    npair = np.asarray(n_pair, dtype=float)
    frac = q / (q + (1 - q) * np.exp(-npair * eps))
    return amplification_map(frac, eps)


def cluster_bound(*, epsilon: float, n_clusters: int, n_drawn: int, n_pair: float) -> float:
    """B(ε, q, N) of Theorems 7/8: one record added to cluster i; N = n_i + n_other, q = ℓ/k.

    With n_other = min_{j≠i} n_j it is Theorem 7's lower bound (some ε-DP M attains it); with max_{j≠i} n_j
    it is Theorem 8's upper bound (every ε-unbounded DP M). N = 0 gives the SRSWOR form, but size-1 clusters
    are not Theorem 2 (different neighbour relation).

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, Theorems 7 and 8 (§5.1). Erratum E7: the Appendix D proof sketch of
    Theorem 7 substitutes a record; the statements (one record added) are used.
    """
    eps = check_epsilon(epsilon, allow_zero=True)
    k, ell = _check_clusters(n_clusters, n_drawn)
    npair = float(n_pair)
    if not math.isfinite(npair) or npair < 0:
        raise ValueError(f"n_pair must be a finite number ≥ 0; got {n_pair!r}.")
    return float(cluster_amplification(eps, ell / k, npair))


def _check_sizes(sizes) -> np.ndarray:
    s = np.asarray(sizes, dtype=float).ravel()
    if s.size < 2:
        raise ValueError(f"sizes must list at least 2 clusters; got {s.size}.")
    if not np.all(np.isfinite(s)) or np.any(s < 0):
        raise ValueError("cluster sizes must be finite and ≥ 0.")
    return s


def _others_extremes(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each i, min and max of the sizes of the *other* clusters (O(k) via the two extremes)."""
    order = np.argsort(s, kind="stable")
    i_min, i_min2 = order[0], order[1]
    i_max, i_max2 = order[-1], order[-2]
    mins = np.full(s.shape, s[i_min])
    mins[i_min] = s[i_min2]
    maxs = np.full(s.shape, s[i_max])
    maxs[i_max] = s[i_max2]
    return mins, maxs


def cluster_bounds(sizes: Sequence[int], *, epsilon: float, n_drawn: int) -> ClusterBounds:
    """Per-cluster Theorem 7 lower and Theorem 8 upper bounds for arbitrary cluster sizes.

    Whole design [derived]: the worst upper bound uses the two largest sizes; the "cannot do better" lower
    bound is the largest per-cluster lower bound (largest + smallest other). ``naive_srs`` is
    log1p(q·expm1(ε)) at the cluster rate q = ℓ/k: what SRS reasoning would claim (grey reference only).

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, Theorems 7 and 8 (§5.1).
    """
    s = _check_sizes(sizes)
    eps = check_epsilon(epsilon, allow_zero=True)
    k, ell = _check_clusters(s.size, n_drawn)
    q = ell / k
    mins, maxs = _others_extremes(s)
    lower = cluster_amplification(eps, q, s + mins)
    upper = cluster_amplification(eps, q, s + maxs)
    return ClusterBounds(q, lower, upper, float(upper.max()), float(lower.max()), float(amplification_map(q, eps)))


def cluster_test_bound(*, epsilon_conditional: float, epsilon_test: float, n_clusters: int, n_drawn: int,
                       epsilon: float | None = None) -> float:
    """Theorem 9: lower bound on ε̃ when a test tells "C_i drawn" from "not drawn" with likelihood ratio e^{ε_T}.

    ε̃ ≥ log1p(expm1(ε_c)·q/(q + e^{−ε_T}(1 − q))), q = ℓ/k, ε_c ∈ [0, ε] the loss given C_i is drawn.
    Theorems 7/8 are this with ε_T = N·ε. If ``epsilon`` is given and ε_c > ε, a warning is issued.

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, Theorem 9 (§5.2).
    """
    ec = check_epsilon(epsilon_conditional, name="epsilon_conditional", allow_zero=True)
    et = check_epsilon(epsilon_test, name="epsilon_test", allow_zero=True)
    k, ell = _check_clusters(n_clusters, n_drawn)
    if epsilon is not None and ec > float(epsilon):
        warnings.warn(f"epsilon_conditional = {ec} exceeds epsilon = {epsilon}; Theorem 9 needs ε_c ≤ ε.",
                      stacklevel=2)
    q = ell / k
    return float(np.log1p(np.expm1(ec) * q / (q + np.exp(-et) * (1 - q))))


def two_stage_cluster_upper(sizes: Sequence[int], *, epsilon: float, n_drawn: int, within_rate: float) -> float:
    """Upper bound for two-stage cluster sampling: ℓ of k clusters, then each record kept w.p. r_w.

    M∘Poisson(r_w) is ε_w-unbounded DP with ε_w = log1p(r_w·expm1(ε)) ([BBG18]), so Theorem 8 applies with
    ε → ε_w at the two largest sizes: ε′ ≤ B(ε_w, ℓ/k, n₍₁₎ + n₍₂₎). r_w = 1 is single-stage.

    References
    ----------
    [derived] making rigorous the remark of 003_4b386133f61617e9.txt, paper 1, §5.2 ("approximately rε").
    """
    s = _check_sizes(sizes)
    eps = check_epsilon(epsilon, allow_zero=True)
    k, ell = _check_clusters(s.size, n_drawn)
    rw = check_rate(within_rate, name="within_rate")
    eps_w = amplification_map(rw, eps)
    top2 = np.sort(s)[-2:].sum()
    return float(cluster_amplification(eps_w, ell / k, top2))


def calibrate_cluster(sizes: Sequence[int], *, epsilon_target: float, n_drawn: int,
                      within_rate: float = 1.0) -> Calibration:
    """Per-record ε whose worst Theorem 8 (two-stage) upper bound equals the target (bisection).

    Bracket: the bound is ≤ ε and ≥ log1p(q·r_w·expm1(ε)), so the root lies in
    [ε′_t, log1p(expm1(ε′_t)/(q·r_w))]; the bound increases with ε.

    References
    ----------
    [derived] from 003_4b386133f61617e9.txt, paper 1, Theorem 8 and §5.2.
    """
    s = _check_sizes(sizes)
    t = check_epsilon(epsilon_target, name="epsilon_target")
    k, ell = _check_clusters(s.size, n_drawn)
    rw = check_rate(within_rate, name="within_rate")
    q = ell / k

    def f(e: float) -> float:
        return two_stage_cluster_upper(s, epsilon=e, n_drawn=ell, within_rate=rw) - t

    lo, hi = t, _log1p_expm1_over_q(t, q * rw)
    lam = lo if f(lo) >= 0 else brentq(f, lo, hi * (1 + 1e-12), xtol=1e-15, rtol=1e-15, maxiter=200)
    return Calibration(t, float(lam), None, 1.0 / lam, f"{SEED_FILE}, Theorem 8 (inverted by bisection)",
                       "derived")


# ----------------------------------------------------------------------------------------------------------
# 4.9 Stratified sampling and allocation
# ----------------------------------------------------------------------------------------------------------

#: Largest magnitude of a value, SD or bound in the stratified functions: their squares (variances, U², (x − μ)²)
#: must stay finite in double precision (1e100² = 1e200; 1e155² overflows).
MAX_MAGNITUDE = 1e100


def _check_magnitude(a: np.ndarray, name: str) -> None:
    if np.any(np.abs(a) > MAX_MAGNITUDE):
        raise ValueError(f"{name} must lie within ±1e+100 (their squares must stay finite); got a value of "
                         f"{float(np.max(np.abs(a))):.3g}. Rescale the values (e.g. to thousands).")


def _check_strata(N_h, *others, names=()) -> list[np.ndarray]:
    N = np.asarray(N_h, dtype=float).ravel()
    if N.size < 1:
        raise ValueError("N_h must list at least one stratum.")
    if not np.all(np.isfinite(N)) or np.any(N < 1) or np.any(N != np.floor(N)):
        raise ValueError(f"N_h must be whole numbers ≥ 1; got {N_h!r}.")
    out = [N]
    for arr, name in zip(others, names):
        a = np.asarray(arr, dtype=float).ravel()
        if a.size != N.size:
            raise ValueError(f"{name} has {a.size} entries but N_h has {N.size}; they must have equal length.")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must be finite numbers.")
        _check_magnitude(a, name)
        out.append(a)
    return out


def _check_eps_h(epsilon, H: int) -> np.ndarray:
    e = np.broadcast_to(np.asarray(epsilon, dtype=float), (H,)).astype(float) if np.ndim(epsilon) == 0 else \
        np.asarray(epsilon, dtype=float).ravel()
    if e.size != H:
        raise ValueError(f"epsilon has {e.size} entries but there are {H} strata.")
    if not np.all(np.isfinite(e)) or np.any(e < 0):
        raise ValueError(f"epsilon (per stratum) must be finite and ≥ 0; got {epsilon!r}.")
    return e


def round_largest_remainder(x: Sequence[float], *, caps: Sequence[int] | None = None) -> np.ndarray:
    """Integers with the same rounded total: floor, then +1 to the largest fractional parts.

    Ties go to the lower index; no entry is raised above its cap. Values within 1e-9 of an integer are
    treated as that integer (floating noise in allocations such as 11.9999999999).

    References
    ----------
    Spec §4.9 (survey practice, Hamilton's method).
    """
    v = _snap(np.asarray(x, dtype=float).ravel())
    if not np.all(np.isfinite(v)) or np.any(v < 0):
        raise ValueError("x must be finite and ≥ 0.")
    total = int(math.floor(float(v.sum()) + 0.5))
    base = np.floor(v)
    cap = np.full(v.shape, np.inf) if caps is None else np.asarray(caps, dtype=float).ravel()
    if cap.size != v.size:
        raise ValueError(f"caps has {cap.size} entries but x has {v.size}.")
    base = np.minimum(base, cap)
    need = total - int(base.sum())
    frac = np.round(v - base, 12)
    order = np.lexsort((np.arange(v.size), -frac))          # largest fraction first, ties: lower index
    out = base.copy()
    for i in order:
        if need <= 0:
            break
        if out[i] + 1 <= cap[i]:
            out[i] += 1
            need -= 1
    return out.astype(int)


def _neyman_batch(NS: np.ndarray, N: np.ndarray, m: float) -> tuple[np.ndarray, np.ndarray]:
    """Neyman allocation with the take-all rule for each row of (N_h·S_h, N_h); returns (alloc, take_all).

    Fixing every over-allocated stratum at once equals fixing them one at a time: after fixing, the share
    per unit of N_h·S_h only grows, so a stratum over its size stays over.
    """
    NS = np.atleast_2d(NS).astype(float)
    N = np.broadcast_to(np.atleast_2d(N), NS.shape).astype(float)
    fixed = np.zeros(NS.shape, dtype=bool)
    for _ in range(NS.shape[1] + 1):
        rem = m - np.where(fixed, N, 0.0).sum(axis=1, keepdims=True)
        w = np.where(fixed, 0.0, NS)
        tot = w.sum(axis=1, keepdims=True)
        # all remaining strata have S_h = 0: Neyman is indifferent, spread the rest in proportion to N_h
        wn = np.where(fixed, 0.0, N)
        use_n = tot <= 0
        w = np.where(use_n, wn, w)
        tot = np.where(use_n, wn.sum(axis=1, keepdims=True), tot)
        with np.errstate(invalid="ignore", divide="ignore"):
            alloc = np.where(fixed, N, np.where(tot > 0, rem * w / tot, 0.0))
        over = (~fixed) & (alloc > N * (1 + 1e-12))
        if not over.any():
            return alloc, fixed
        fixed |= over
    return alloc, fixed


def neyman_allocation(N_h: Sequence[int], S_h: Sequence[float], *, m: int) -> NeymanAllocation:
    """Neyman allocation m_h ∝ N_h·S_h with the take-all rule and largest-remainder integers.

    Take-all (survey practice): a stratum with m_h > N_h is fully sampled, dropped, and the rest re-allocated
    by Neyman, repeated. If every remaining stratum has S_h = 0 the remainder is spread in proportion to N_h.

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, §6.2 (Neyman allocation, valid if m_h ≤ N_h); take-all rule and
    rounding per spec §4.9.
    """
    N, S = _check_strata(N_h, S_h, names=("S_h",))
    if np.any(S < 0):
        raise ValueError(f"S_h must be ≥ 0; got {S_h!r}.")
    m = check_int_in_range(m, name="m", lo=0, hi=int(N.sum()))
    alloc, fixed = _neyman_batch((N * S)[None, :], N[None, :], float(m))
    cont = alloc[0]
    return NeymanAllocation(cont, round_largest_remainder(cont, caps=N), fixed[0].copy())


def add_record(N_h, mean_h, sd_h, *, stratum: int, value: float) -> StratumStats:
    """Stratum statistics after adding one record with ``value`` to ``stratum`` (ddof 0, Welford update).

    μ′ = μ + (x − μ)/(N + 1), M2′ = Nσ² + (x − μ)(x − μ′), σ′ = √(M2′/(N + 1)), N′ = N + 1.

    References
    ----------
    Spec §4.9 (Neyman sensitivity, [a] §6.2).
    """
    N, mu, sd = _check_strata(N_h, mean_h, sd_h, names=("mean_h", "sd_h"))
    if np.any(sd < 0):
        raise ValueError("sd_h must be ≥ 0.")
    h = check_int_in_range(stratum, name="stratum", lo=0, hi=N.size - 1)
    x = float(value)
    N2, mu2, sd2 = N.copy(), mu.copy(), sd.copy()
    mu_new = mu[h] + (x - mu[h]) / (N[h] + 1)
    m2 = N[h] * sd[h] ** 2 + (x - mu[h]) * (x - mu_new)
    N2[h] += 1
    mu2[h] = mu_new
    sd2[h] = math.sqrt(max(m2, 0.0) / N2[h])
    return StratumStats(N2, mu2, sd2)


def neyman_worst_shift(N_h, mean_h, sd_h, *, m: int, bounds: Sequence[tuple[float, float]], grid: int = 201,
                       within_bounds: bool = True) -> NeymanShift:
    """Worst single-record addition for Neyman allocation: the largest L1 shift of the continuous allocation.

    Searches x on a ``grid``-point grid (endpoints included) in each stratum's [lo_h, hi_h] (or over
    [min lo_h, max hi_h] when ``within_bounds`` is False), and also reports the integer Δ after largest-remainder
    rounding of both allocations (caps N_h, then N_h with the addition).

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, §6.2 (sensitivity of Neyman allocation); worst-case search [derived].
    Erratum E10: ddof unspecified in the paper; ddof 0 here.
    """
    N, mu, sd = _check_strata(N_h, mean_h, sd_h, names=("mean_h", "sd_h"))
    if np.any(sd < 0):
        raise ValueError("sd_h must be ≥ 0.")
    m = check_int_in_range(m, name="m", lo=0, hi=int(N.sum()))
    grid = check_int_in_range(grid, name="grid", lo=2, hi=math.inf)
    bd = np.asarray(bounds, dtype=float)
    _check_magnitude(bd, "bounds")
    if bd.shape != (N.size, 2):
        raise ValueError(f"bounds must give (lo, hi) for each of the {N.size} strata.")
    if np.any(bd[:, 0] > bd[:, 1]):
        h = int(np.flatnonzero(bd[:, 0] > bd[:, 1])[0])
        raise ValueError(f"bounds for stratum {h}: lo {bd[h, 0]} exceeds hi {bd[h, 1]}.")
    H = N.size
    before, _ = _neyman_batch((N * sd)[None, :], N[None, :], float(m))
    before = before[0]
    if within_bounds:
        xs = bd[:, 0:1] + (bd[:, 1:2] - bd[:, 0:1]) * np.linspace(0, 1, grid)[None, :]       # (H, G)
    else:
        xs = np.broadcast_to(np.linspace(bd[:, 0].min(), bd[:, 1].max(), grid), (H, grid))
    mu_new = mu[:, None] + (xs - mu[:, None]) / (N[:, None] + 1)
    m2 = N[:, None] * sd[:, None] ** 2 + (xs - mu[:, None]) * (xs - mu_new)
    sd_new = np.sqrt(np.maximum(m2, 0.0) / (N[:, None] + 1))                                 # (H, G)
    best = (-1.0, 0, 0, None)
    base_NS = N * sd
    for h in range(H):   # one (G, H) batch per stratum keeps memory at G·H
        NS = np.broadcast_to(base_NS, (grid, H)).copy()
        NS[:, h] = (N[h] + 1) * sd_new[h]
        Nn = N.copy()
        Nn[h] += 1
        alloc, _ = _neyman_batch(NS, Nn[None, :], float(m))
        l1 = np.abs(alloc - before[None, :]).sum(axis=1)
        g = int(np.argmax(l1))
        if l1[g] > best[0] + 1e-12:
            best = (float(l1[g]), h, g, alloc[g].copy())
    l1, h, g, after = best
    Nn = N.copy()
    Nn[h] += 1
    br = round_largest_remainder(before, caps=N)
    ar = round_largest_remainder(after, caps=Nn)
    dr = ar - br
    return NeymanShift(h, float(xs[h, g]), before, after, after - before, l1, br, ar, dr,
                       int(np.abs(dr).sum()), int(np.abs(dr).max()), float(sd_new[h, g]))


def cbp_example() -> CbpExample:
    """The printed Neyman allocations for the County Business Patterns population and a neighbour (m = 10,000).

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, §6.2. Erratum E4: the printed vectors do not sum to m = 10,000 (sums
    10,004 and 10,005); they are returned verbatim, never renormalised.
    """
    p = np.array([1261, 621, 517, 1969, 833, 1947, 1058, 762, 257, 248, 306, 225])
    pp = np.array([1259, 620, 516, 1965, 831, 1943, 1056, 761, 257, 247, 306, 244])
    return CbpExample(p, pp, 10_000, f"{SEED_FILE}, §6.2 (County Business Patterns, printed verbatim)")


def _variance_terms(m_h: np.ndarray, N: np.ndarray, S: np.ndarray, U: float, eps: np.ndarray):
    W = N / N.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.log1p((N / m_h) * np.expm1(eps))
        samp = W ** 2 * (1 - m_h / N) * S ** 2 / m_h
        noise = W ** 2 * 2 * U ** 2 / (m_h * lam) ** 2
    samp = np.where(m_h > 0, samp, np.inf)
    noise = np.where((m_h > 0) & (lam > 0), noise, np.inf)
    lam = np.where(m_h > 0, lam, np.nan)
    return samp, noise, lam


def allocation_variance(m_h, N_h, S_h, *, value_max: float, epsilon: float | Sequence[float]) -> AllocationVariance:
    """Sampling and Laplace-noise variance of the stratified mean for a fixed allocation.

    Per stratum: release ȳ_h + Lap(U/(m_h·λ_h)) with λ_h = log1p((N_h/m_h)·expm1(ε_h)) (Theorem 2 inside the
    stratum gives ε_h to that stratum's records under substitution within the stratum).
    V(m) = Σ_h W_h²·[(1 − m_h/N_h)·S_h²/m_h + 2U²/(m_h·λ_h)²], W_h = N_h/N. Strata with m_h = 0 have infinite
    variance.

    References
    ----------
    [derived] formulation of 003_4b386133f61617e9.txt, paper 1, §6.1 Eqs. (3)–(5) (Erratum E5: Eq. (4) read
    with θ̃; Erratum E13: the paper leaves the optimal private allocation open).
    """
    N, mh, S = _check_strata(N_h, m_h, S_h, names=("m_h", "S_h"))
    if np.any(S < 0):
        raise ValueError("S_h must be ≥ 0.")
    if np.any(mh < 0) or np.any(mh > N):
        raise ValueError("m_h must lie in [0, N_h] for every stratum.")
    U = float(value_max)
    if not math.isfinite(U) or U <= 0:
        raise ValueError(f"value_max must be a finite number > 0; got {value_max!r}.")
    _check_magnitude(np.asarray([U]), "value_max")
    eps = _check_eps_h(epsilon, N.size)
    samp, noise, lam = _variance_terms(mh, N, S, U, eps)
    return AllocationVariance(samp, noise, lam, float(samp.sum() + noise.sum()))


def _gains(k: np.ndarray, N, S, U, eps, W2) -> np.ndarray:
    """Drop in stratum h's variance term when m_h goes from k to k + 1 (elementwise over h)."""
    def term(mm):
        lam = np.log1p((N / mm) * np.expm1(eps))
        return W2 * ((1 - mm / N) * S ** 2 / mm + 2 * U ** 2 / (mm * lam) ** 2)
    k = np.asarray(k, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = term(k) - term(k + 1)
    g = np.where(np.isnan(g), 0.0, g)       # ε_h = 0: infinite variance at every size, no gain from units
    return np.where(k + 1 <= N, g, -np.inf)


def privacy_aware_allocation(N_h, S_h, *, m: int, value_max: float, epsilon: float | Sequence[float],
                             m_min: int = 1, method: Literal["auto", "greedy", "threshold"] = "auto"
                             ) -> tuple[np.ndarray, AllocationVariance]:
    """Allocation minimising sampling + privacy-noise variance of the stratified mean (our formulation).

    Each term of V(m) (``allocation_variance``) is convex and decreasing in m_h (m·log(1 + b/m) is concave
    increasing, so its inverse square is convex), so greedy marginal allocation is optimal for the integer
    problem: start at m_min, add one unit where the term drops most (ties: lower index; full strata skipped).
    ``method="threshold"`` takes the m − H·m_min largest marginal gains directly (used above 2,000 units);
    both return the same vector.

    Assumptions: N_h public; S_h from historic data, not from P; allocation fixed in advance; Σ m_h = m,
    m_min ≤ m_h ≤ N_h; values clipped to [0, U].

    References
    ----------
    [derived] — 003_4b386133f61617e9.txt, paper 1, §6.1 defines the optimal private allocation (Eqs. (3)–(5))
    and leaves it open (Erratum E13).
    """
    N, S = _check_strata(N_h, S_h, names=("S_h",))
    if np.any(S < 0):
        raise ValueError(f"S_h must be ≥ 0; got {S_h!r}.")
    H = N.size
    m = check_int_in_range(m, name="m", lo=1, hi=int(N.sum()))
    m_min = check_int_in_range(m_min, name="m_min", lo=0, hi=math.inf)
    if H * m_min > m:
        raise ValueError(f"H·m_min = {H}·{m_min} = {H * m_min} exceeds the sample size m = {m}.")
    if np.any(N < m_min):
        raise ValueError(f"m_min = {m_min} exceeds some stratum size N_h.")
    U = float(value_max)
    if not math.isfinite(U) or U <= 0:
        raise ValueError(f"value_max must be a finite number > 0; got {value_max!r}.")
    _check_magnitude(np.asarray([U]), "value_max")
    eps = _check_eps_h(epsilon, H)
    W2 = (N / N.sum()) ** 2
    R = m - H * m_min
    if method == "auto":
        method = "threshold" if R > 2_000 else "greedy"
    if method == "greedy":
        alloc = _greedy(N, S, U, eps, W2, m_min, R)
    elif method == "threshold":
        alloc = _threshold(N, S, U, eps, W2, m_min, R)
    else:
        raise ValueError(f"method must be 'auto', 'greedy' or 'threshold'; got {method!r}.")
    return alloc, allocation_variance(alloc, N, S, value_max=U, epsilon=eps)


def _greedy(N, S, U, eps, W2, m_min, R) -> np.ndarray:
    return _greedy_from(np.full(N.size, float(m_min)), N, S, U, eps, W2, R)


def _count_at_least(tau: float, N, S, U, eps, W2, m_min) -> np.ndarray:
    """Per stratum, how many marginal gains (from m_min upward) are ≥ tau (gains decrease with k)."""
    lo = np.full(N.size, float(m_min))            # invariant: gain(k) ≥ tau for k < lo
    hi = N.copy()                                 # gains exist for k = m_min … N_h − 1
    while np.any(lo < hi):
        mid = np.floor((lo + hi) / 2)
        ok = _gains(mid, N, S, U, eps, W2) >= tau
        act = lo < hi
        lo = np.where(act & ok, mid + 1, lo)
        hi = np.where(act & ~ok, mid, hi)
    return lo - m_min


def _threshold(N, S, U, eps, W2, m_min, R) -> np.ndarray:
    if R == 0:
        return np.full(N.size, m_min, dtype=int)
    g0 = _gains(np.full(N.size, float(m_min)), N, S, U, eps, W2)
    hi = float(np.max(g0[np.isfinite(g0)])) * 2 + 1.0     # no gain reaches hi: count(≥ hi) = 0 < R
    lo = 0.0                                              # gains are ≥ 0: count(≥ 0) = all units ≥ R
    c_lo = int(_count_at_least(lo, N, S, U, eps, W2, m_min).sum())
    c_hi = 0
    for _ in range(200):
        if c_lo - c_hi <= N.size:
            break
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        c = int(_count_at_least(mid, N, S, U, eps, W2, m_min).sum())
        if c >= R:
            lo, c_lo = mid, c
        else:
            hi, c_hi = mid, c
    take = _count_at_least(hi, N, S, U, eps, W2, m_min)
    alloc = (m_min + take).astype(float)
    # every gain ≥ hi is among the R best; the remaining units (gains below hi) are handed out greedily in
    # the same (gain, lower index) order as the plain greedy, so both return the same vector
    return _greedy_from(alloc, N, S, U, eps, W2, R - int(take.sum()))


def _greedy_from(alloc, N, S, U, eps, W2, R) -> np.ndarray:
    alloc = alloc.copy()
    g = _gains(alloc, N, S, U, eps, W2)
    heap = [(-float(g[h]), h) for h in range(N.size) if np.isfinite(g[h])]
    heapq.heapify(heap)
    for _ in range(R):
        _, h = heapq.heappop(heap)
        alloc[h] += 1
        gh = float(_gains(alloc[h:h + 1], N[h:h + 1], S[h:h + 1], U, eps[h:h + 1], W2[h:h + 1])[0])
        if math.isfinite(gh):
            heapq.heappush(heap, (-gh, h))
    return alloc.astype(int)


def proportional_rounded(N_h, *, m: int) -> np.ndarray:
    """Deterministic proportional allocation: largest remainder of m·N_h/N (caps N_h)."""
    (N,) = _check_strata(N_h)
    m = check_int_in_range(m, name="m", lo=0, hi=int(N.sum()))
    return round_largest_remainder(m * N / N.sum(), caps=N)


def compare_allocations(N_h, S_h, *, m: int, value_max: float, epsilon: float | Sequence[float],
                        m_min: int = 1) -> pd.DataFrame:
    """Neyman (take-all, rounded), proportional (largest remainder) and privacy-aware allocations side by side.

    Columns: allocation (list of m_h), sampling, noise, total (variance of the private stratified mean).

    References
    ----------
    [derived] comparison for 003_4b386133f61617e9.txt, paper 1, §6.1–§6.2.
    """
    N, S = _check_strata(N_h, S_h, names=("S_h",))
    ney = neyman_allocation(N, S, m=m).rounded
    prop = proportional_rounded(N, m=m)
    pa, _ = privacy_aware_allocation(N, S, m=m, value_max=value_max, epsilon=epsilon, m_min=m_min)
    rows = []
    for name, a in (("neyman", ney), ("proportional", prop), ("privacy_aware", pa)):
        v = allocation_variance(a, N, S, value_max=value_max, epsilon=epsilon)
        rows.append({"method": name, "allocation": [int(x) for x in a], "sampling": float(v.sampling.sum()),
                     "noise": float(v.noise.sum()), "total": v.total})
    return pd.DataFrame(rows).set_index("method")


def proportional_allocation(N_h: Sequence[int], *, rate: float, epsilon: float,
                            method: Literal["randomized", "deterministic"] = "randomized",
                            rng: np.random.Generator | int | None = None) -> ProportionalAllocation:
    """Proportional allocation r·N_h per stratum with randomised (Theorem 11) or deterministic rounding.

    Randomised: Theorem 11 gives the Theorem 6 value when r·N_h ≥ 1 for every stratum; strata with r·N_h < 1
    are listed in the warnings. Deterministic: no amplification theorem; the reported ε′ is Lemma 16's bound
    at the worst stratum and neighbour (derived), which exceeds ε whenever one person can change a rounded size.
    ``draw`` is one random allocation when ``rng`` is given (else None).

    References
    ----------
    003_4b386133f61617e9.txt, paper 1, Theorem 11 (§6.3). Erratum E12: M is read as (ε,…,ε)-stratified
    unbounded DP, as in the proof (Appendix E). Erratum E11: deterministic rounding is floor(x + 0.5).
    """
    (N,) = _check_strata(N_h)
    r = check_rate(rate)
    eps = check_epsilon(epsilon, allow_zero=True)
    if method not in ("randomized", "deterministic"):
        raise ValueError(f"method must be 'randomized' or 'deterministic'; got {method!r}.")
    expected = r * N
    support = tuple(rounding_size_pmf(int(n), rate=r, method=method) for n in N)
    uncovered = [h for h in range(N.size) if _snap(r * N[h]) < 1]
    applies = not uncovered and method == "randomized"
    if method == "randomized":
        a = amplify_randomized_rounding(epsilon=eps, rate=r)
        notes = list(a.warnings) + [f"Theorem 11 does not cover stratum {h} (r·N_h = {r * N[h]:.4g} < 1)."
                                    for h in uncovered]
        amp = Amplification(eps, a.epsilon_population, 0.0, 0.0, a.epsilon_paper_approx, "stratified-unbounded",
                            f"{SEED_FILE}, Theorem 11" if r < 1 else a.source, "paper" if r < 1 else a.status,
                            tuple(notes))
    else:
        worst = 0.0
        for n in N.astype(int):
            for lo in (n - 1, n):
                if lo < 1:
                    continue
                m0 = next(iter(rounding_size_pmf(lo, rate=r, method="deterministic")))
                m1 = next(iter(rounding_size_pmf(lo + 1, rate=r, method="deterministic")))
                worst = max(worst, lemma16_bound(epsilon=eps, m=min(m0, lo), m_prime=min(m1, lo + 1), n=lo))
        amp = Amplification(eps, worst, 0.0, 0.0, None, "stratified-unbounded",
                            f"{SEED_FILE}, Lemma 16 applied to deterministic rounding (derived)", "derived",
                            ("Deterministic rounding: one person can change a stratum's sample size, which a "
                             "released count reveals at the full ε (§4.1); no amplification theorem applies.",))
    draw = None
    if rng is not None:
        g = as_generator(rng)
        if method == "randomized":
            x = _snap(expected)
            lo = np.floor(x)
            draw = (lo + (g.random(N.size) < (x - lo))).astype(int)
        else:
            draw = np.floor(_snap(expected) + 0.5).astype(int)
    return ProportionalAllocation(expected, support, draw, applies, amp)


#: The strata editor's column headers (the page's editor shows these; error messages name columns by them).
STRATA_COLUMN_LABELS: Mapping[str, str] = {
    "stratum": "stratum", "N_h": "size N_h", "S_h": "spread S_h", "mean_h": "mean", "lo_h": "smallest value",
    "hi_h": "largest value", "eps_h": "ε in stratum"}


def strata_from_table(df: pd.DataFrame, *, epsilon: float, max_strata: int = 200) -> dict:
    """Validate an edited strata table (stratum, N_h, S_h, mean_h, lo_h, hi_h, eps_h) into float arrays.

    Blank rows are ignored; blank eps_h means the global ``epsilon``; duplicate or blank stratum names are made
    unique. Raises ValueError with a message naming the column by its header on the page
    (:data:`STRATA_COLUMN_LABELS`) and the row.

    References
    ----------
    Spec §7 Tab 5 (strata editor, 1–200 rows).
    """
    eps = check_epsilon(epsilon, allow_zero=True)
    lab = {c: f"“{v}”" for c, v in STRATA_COLUMN_LABELS.items()}
    need = list(STRATA_COLUMN_LABELS)
    missing = [lab[c] for c in need if c not in df.columns]
    if missing:
        raise ValueError(f"the table lacks the column(s) {', '.join(missing)}.")
    df = df.dropna(how="all", subset=need[1:])
    if not 1 <= len(df) <= max_strata:
        raise ValueError(f"the table needs 1 to {max_strata} strata; it has {len(df)}.")

    def first_row(bad: np.ndarray) -> int:
        return int(np.flatnonzero(bad)[0]) + 1

    out: dict = {}
    for col in need[1:-1]:
        v = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float)
        if not np.all(np.isfinite(v)):
            raise ValueError(f"column {lab[col]} has an empty or non-numeric cell (row {first_row(~np.isfinite(v))}).")
        out[col] = v
    bad = (out["N_h"] < 1) | (out["N_h"] != np.floor(out["N_h"]))
    if bad.any():
        raise ValueError(f"{lab['N_h']} must be a whole number ≥ 1 in every row (row {first_row(bad)}).")
    if np.any(out["S_h"] < 0):
        raise ValueError(f"{lab['S_h']} must be ≥ 0 in every row (row {first_row(out['S_h'] < 0)}).")
    if np.any(out["lo_h"] > out["hi_h"]):
        raise ValueError(f"{lab['lo_h']} must not exceed {lab['hi_h']} (row {first_row(out['lo_h'] > out['hi_h'])}).")
    e = pd.to_numeric(df["eps_h"], errors="coerce")
    bad = e.isna() & df["eps_h"].notna() & (df["eps_h"].astype(str).str.strip() != "")
    if bad.any() or (e.dropna() < 0).any() or not np.all(np.isfinite(e.dropna().to_numpy(dtype=float))):
        raise ValueError(f"{lab['eps_h']} must be blank (use the global ε) or a number ≥ 0.")
    out["eps_h"] = e.fillna(eps).to_numpy(dtype=float)
    names = [str(x).strip() if str(x).strip() not in ("", "nan", "None", "<NA>") else f"stratum {i + 1}"
             for i, x in enumerate(df["stratum"])]
    seen: dict[str, int] = {}
    for i, nm in enumerate(names):   # duplicate names would merge strata in the tables
        seen[nm] = seen.get(nm, 0) + 1
        if seen[nm] > 1:
            names[i] = f"{nm} ({seen[nm]})"
    out["names"] = tuple(names)
    return out


# ----------------------------------------------------------------------------------------------------------
# Frame upload summary
# ----------------------------------------------------------------------------------------------------------

def summarize_frame(df: pd.DataFrame, *, stratum_col: str | None = None, cluster_col: str | None = None,
                    value_col: str | None = None, ddof: int = 0) -> FrameSummary:
    """Stratum statistics and cluster sizes of a sampling frame (one row per population unit).

    Rows with a missing stratum, cluster or value (in the mapped columns) are dropped and counted.
    strata columns: stratum, N_h, mean_h, sd_h (``ddof``), min_h, max_h (NaN without a value column).

    References
    ----------
    Spec §7 Tab 5 (frame upload). Erratum E10: ddof 0 by default.
    """
    if not isinstance(df, pd.DataFrame):
        raise ValueError("df must be a pandas DataFrame.")
    cols = [c for c in (stratum_col, cluster_col, value_col) if c is not None]
    roles = {"stratum": stratum_col, "cluster": cluster_col, "value": value_col}
    for c in set(cols):
        same = [r for r, v in roles.items() if v == c]
        if len(same) > 1:
            raise ValueError(f"the {' and '.join(same)} columns must be different: the same column {c!r} is "
                             "chosen for both. Choose another column for one of them.")
    for c in cols:
        if c not in df.columns:
            raise ValueError(f"column {c!r} is not in the file; columns are: {', '.join(map(str, df.columns))}.")
    if ddof not in (0, 1):
        raise ValueError(f"ddof must be 0 or 1; got {ddof!r}.")
    sub = df[cols].copy() if cols else df.iloc[:, :0].copy()
    notes = []
    if value_col is not None:
        raw = sub[value_col]
        vals = raw if pd.api.types.is_numeric_dtype(raw) else pd.to_numeric(raw, errors="coerce")
        bad = vals.isna() & raw.notna()
        if bad.any():   # blank strings count as missing, anything else is an error
            bad[bad] = raw[bad].astype(str).str.strip() != ""
        if bad.any():
            example = raw[bad].iloc[0]
            raise ValueError(f"value column {value_col!r} must be numeric; found {int(bad.sum())} non-numeric "
                             f"entries such as {example!r}.")
        vals = vals.astype(float)
        if np.isinf(vals.to_numpy()).any():
            raise ValueError(f"value column {value_col!r} must hold finite numbers; found "
                             f"{int(np.isinf(vals.to_numpy()).sum())} infinite entries.")
        sub[value_col] = vals
    n0 = len(sub)
    sub = sub.dropna() if cols else sub
    dropped = n0 - len(sub)
    if dropped:
        notes.append(f"{dropped:,} rows with a missing stratum, cluster or value were dropped.")
    if len(sub) == 0:
        raise ValueError("no rows left after dropping rows with missing values in the chosen columns.")
    strata = None
    if stratum_col is not None:
        g = sub.groupby(stratum_col, sort=True)
        if value_col is not None:
            agg = g[value_col].agg(["size", "mean", "min", "max", "var"])
            var = agg["var"].to_numpy(dtype=float)
            cnt = agg["size"].to_numpy(dtype=float)
            if ddof == 0:   # pandas' var is ddof 1
                var = np.where(cnt > 1, var * (cnt - 1) / cnt, 0.0)
            strata = pd.DataFrame({"stratum": [str(k) for k in agg.index], "N_h": agg["size"].to_numpy()})
            strata["mean_h"] = agg["mean"].to_numpy()
            strata["sd_h"] = np.sqrt(np.nan_to_num(var, nan=0.0))
            strata["min_h"] = agg["min"].to_numpy()
            strata["max_h"] = agg["max"].to_numpy()
        else:
            sizes = g.size()
            strata = pd.DataFrame({"stratum": [str(k) for k in sizes.index], "N_h": sizes.to_numpy()})
            for c in ("mean_h", "sd_h", "min_h", "max_h"):
                strata[c] = np.nan
    elif value_col is not None:
        v = sub[value_col]
        strata = pd.DataFrame({"stratum": ["all"], "N_h": [len(v)], "mean_h": [v.mean()],
                               "sd_h": [float(np.nan_to_num(v.std(ddof=ddof)))], "min_h": [v.min()],
                               "max_h": [v.max()]})
    clusters = None
    if cluster_col is not None:
        clusters = sub.groupby(cluster_col, sort=True).size().rename("size")
    return FrameSummary(len(sub), strata, clusters, dropped, tuple(notes))
