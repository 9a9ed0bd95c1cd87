"""Partially private county release: counts released under public totals, by post-processing or Wasserstein EM.

Pure numpy/scipy (pandas for tables); never imports streamlit. Used by the stratified synthesis viewer's third
tab: county × month case/death counts released under public state totals and public previous-month counts, by
post-processing (PP) or by Wasserstein exponential mechanisms (WEM) with naive, congenial and prior-congenial
base measures, and Algorithm 1 (posterior given noisy counts and a public total), exact and by rejection. The
theory calculators (Δ_z, Lemma 5, Thm. 1's κ, the discrete Laplace) live in :mod:`dpdash.accounting.public_info`.

References
----------
S1 = ``shared/seeds/001_cddb039cfb564267.txt``: Seeman, Slavković & Reimherr, *A Formal Privacy Framework
for Partially Private Data* (working paper, 5 Apr 2022); line numbers ``L123``. Normative reading and the
errata E1–E13: ``shared/specs/partially_private.md`` (§2, §3). The county data are synthetic unless the user
uploads their own.

Errata handled elsewhere than in a single function: E12 (cite §5.1, PA DoH + CPS/IPUMS, not the abstract's
Census + CDC), E13 (Lemma 6's ‖L_X(y) − L_X′(y)‖ is a scalar absolute value; :func:`method_guarantee` uses
σ(Δ_z) as a scalar).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import optimize, special

from dpdash.common import ledger
from dpdash.common.data import read_uploaded_csv
from dpdash.common.parallel import imap_unordered
from dpdash.accounting.public_info import check_kappa, dlap_ratio, dlap_sample
from dpdash.common.validation import as_generator, check_epsilon, check_positive

__all__ = [
    "PublicInfo", "Stage1Result", "CountRelease", "PostprocessResult", "PosteriorSummary", "CountyPanel",
    "project_stage1", "round_stage2", "postprocess", "dm_logpmf", "wem_gibbs", "posterior_exact_counts",
    "posterior_rejection_counts", "synth_pa_like", "validate_county_csv", "read_county_csv",
    "method_guarantee", "guarantee_table", "release_month", "run_release_units",
    "run_partially_private_release", "contraction_frequencies", "METHODS", "METHOD_LABELS",
    "REGION_NAMES", "MAX_COUNTY_CSV_BYTES",
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
    eps = check_epsilon(epsilon)
    sens = check_positive(sensitivity, name="sensitivity")
    kap = check_kappa(kappa)
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
    # density ∝ exp(−a‖·‖₂), readout neighbour ‖ΔX‖₂ ≤ 2: loss 2a; a data-dependent normaliser (constrained
    # base measure) can double it (erratum E1)
    ledger.record(f"WEM-{base} draw", epsilon=(2.0 if base == "naive" else 4.0) * a, mechanism="wem",
                  scale=1.0 / a, sensitivity=2.0)
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
    r = dlap_ratio(epsilon, sensitivity)
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
    r = dlap_ratio(epsilon, sensitivity)
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
# §7 data
# --------------------------------------------------------------------------------------------------
def synth_pa_like(*, rng=2022, J: int = 67, T: int = 24) -> CountyPanel:
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
    rng = as_generator(rng)
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

    ``dpdash.common.data.read_uploaded_csv`` enforces the byte, record, column and row limits before any frame is built
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
    eps = check_epsilon(epsilon)
    sens = check_positive(sensitivity, name="sensitivity")
    kap = check_kappa(kappa)
    if method == "pp":
        spp = sens if pp_sensitivity is None else check_positive(pp_sensitivity, name="pp_sensitivity")
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
    eps = check_epsilon(epsilon)
    sens = check_positive(sensitivity, name="sensitivity")
    check_kappa(kappa)
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
        spp = sens if pp_sensitivity is None else check_positive(pp_sensitivity, name="pp_sensitivity")
        yc = xc + dlap_sample(epsilon=eps, sensitivity=spp, size=xc.size, rng=rng)
        yd = xd + dlap_sample(epsilon=eps, sensitivity=spp, size=xd.size, rng=rng)
        if ledger.active():
            # discrete Laplace ratio r: loss −ln r per unit of L1; the readout neighbour moves each vector by ≤ 2
            loss = -math.log(dlap_ratio(eps, spp))
            ledger.record("PP cases", epsilon=2.0 * loss, mechanism="discrete_laplace", scale=1.0 / loss,
                          sensitivity=2.0)
            ledger.record("PP deaths", epsilon=2.0 * loss, mechanism="discrete_laplace", scale=1.0 / loss,
                          sensitivity=2.0)
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
    """Run (t, rep, ε, method, α) chains, in order or through ``dpdash.common.parallel``; frames in chain order.

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
    check_positive(sensitivity, name="sensitivity")
    check_kappa(kappa)
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
        checked.append((_check_month(panel, t), check_epsilon(e), m, al, int(reps)))
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
    eps_list = [check_epsilon(e) for e in np.atleast_1d(np.asarray(epsilons, dtype=float))]
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
    sens = check_positive(sensitivity, name="sensitivity")
    eps_list = [check_epsilon(e) for e in np.atleast_1d(np.asarray(epsilons, dtype=float))]
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
