"""Leximax cohort selection: exact and approximate leximax marginals, rounding, and quota-constrained panels.

Everything here follows [b] = ``003_4b386133f61617e9.txt`` (second paper: Henzinger, Peale, Reingold, Shen,
*Leximax Approximations and Representative Cohort Selection*, FORC 2022) as corrected by the product spec
``leximax_cohort_picker.md`` (§7, errata L1–L9), plus two external tools the spec names: the compact LP for
"sum of the l smallest" of Ogryczak & Tamir (2003) [OT] and the leximin panel lottery of Flanigan et al. (2021)
[F21], solved with open-source HiGHS (scipy / highspy).

The module is pure Python (numpy, scipy, pandas, cvxpy, highspy); it never imports streamlit.
"""

from __future__ import annotations

import itertools
import math
import re
import time
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral
from typing import Callable, Literal, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from dpdash.common.validation import as_generator, check_positive, check_size

__all__ = [
    "LeximaxResult", "leximax_marginals", "leximax_saturation", "OracleResult", "separation_oracle",
    "utilitarian_marginals", "maxmin_marginals", "IntegerLeximax", "integer_leximax_bruteforce",
    "sample_independent", "sample_dependent", "dependent_round", "realized_utilities", "MonteCarloSummary",
    "monte_carlo", "poisson_binomial_pmf", "size_interval", "hoeffding_tail", "hoeffding_tail_refined", "settle",
    "SETTLE_TOL", "UniformBaseline", "uniform_baseline",
    "reverse_markov_lower",
    "sorted_profiles", "leximax_set", "elementwise_set", "tradeoff_set", "recursive_chain", "recursive_set",
    "significant_set", "interval_significant_member", "membership_table", "lemma19_check", "lemma18_check",
    "parse_number", "parse_exact_cell", "parse_utility_matrix", "parse_alpha", "parse_intersections", "Pool",
    "pool_from_values", "GroupDef", "groups_from_columns", "pool_from_attributes",
    "Quota", "quotas_from_frame", "QuotaReport", "BLANK", "MissingAnswers", "missing_answers", "blank_rows",
    "resolve_blanks",
    "check_quotas", "PanelDistribution", "leximin_panels",
    "draw_panel", "SelectionMetrics", "selection_metrics", "gini", "uniform_panel_baseline",
    "volunteer_pool", "volunteer_quotas", "tiny_pool", "tiny_quotas", "quota_case_warnings",
    "panel_quota_table", "LX1_VALUES", "random_values", "VALUE_GRIDS",
]

#: Relaxation of already-fixed right-hand sides (spec §5): without it round-off makes LP_{l+1} infeasible.
TAU = 1e-9
#: Tolerance of the verifier (corrected Algorithm 2) and of the saturation fixing test.
VERIFY_TOL = 1e-7
#: HiGHS feasibility tolerances for the leximax LPs, below τ and the snap tolerance (1e-9). With HiGHS's default
#: 1e-7 the fixed levels drifted by more than τ, a later LP_l became infeasible and Σx missed k by ~1e-8 (random
#: 0.01-grid pools; tests/engine/sortition/test_leximax.py, hard instances). The cap of C_l at what x achieves
#: (leximax_marginals)
#: is what keeps LP_{l+1} feasible; this tolerance keeps the drift per level near 1e-10 (and is no slower).
HIGHS_TOL = 1e-10
_HIGHS_OPTIONS = {"primal_feasibility_tolerance": HIGHS_TOL, "dual_feasibility_tolerance": HIGHS_TOL}
#: Float tolerance of the finite-set explorer (spec §3 "Arithmetic").
FINITE_TOL = 1e-12

#: [b]-style worked instance LX1 "Four-region panel" (spec §11): rows c1..c6, columns G1..G4.
LX1_VALUES = np.array([[0.8, 0.3, 0.3, 0.4], [0.5, 0.1, 0.4, 0.6], [0.1, 0.1, 0.2, 0.3],
                       [1.0, 0.0, 0.2, 0.2], [0.5, 0.0, 0.5, 0.2], [0.3, 0.8, 0.2, 0.6]])


# ---------------------------------------------------------------------------------------------------------
# Input validation
# ---------------------------------------------------------------------------------------------------------

def _check_values(V) -> np.ndarray:
    V = np.asarray(V, dtype=float)
    if V.ndim != 2:
        raise ValueError(f"The values matrix must be 2-D (candidates × groups); got {V.ndim} dimension(s).")
    if V.shape[0] == 0 or V.shape[1] == 0:
        raise ValueError("The values matrix is empty: it needs at least one candidate and one group.")
    if not np.all(np.isfinite(V)):
        raise ValueError("The values matrix contains missing or infinite entries; every value must be a number.")
    if V.min() < 0 or V.max() > 1:
        raise ValueError(f"Values must lie in [0, 1] (found {V.min():g} to {V.max():g}); "
                         "rescale by the maximum (divide every value by the largest one).")
    return V


def _check_k(k, n: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (Integral, float)) or float(k) != int(k):
        raise ValueError(f"k must be an integer; got {k!r}.")
    k = int(k)
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of candidates ({n}); got {k}.")
    return k


def _check_alpha(alpha, m: int) -> np.ndarray:
    if alpha is None:
        return np.zeros(m)
    a = np.asarray(alpha, dtype=float)
    if a.ndim == 0:
        a = np.full(m, float(a))
    if a.shape != (m,):
        raise ValueError(f"alpha must be a number or have one entry per group ({m}); got {a.size} entries.")
    if not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError("alpha (the slack per level) must be finite and ≥ 0.")
    return a


def _check_x(x) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise ValueError("The marginals x must be a non-empty 1-D vector.")
    if not np.all(np.isfinite(x)) or x.min() < -1e-9 or x.max() > 1 + 1e-9:
        raise ValueError("Marginals must lie in [0, 1].")
    return np.clip(x, 0.0, 1.0)



# ---------------------------------------------------------------------------------------------------------
# Leximax marginals (§4.2, Algorithm 1, compact form [OT])
# ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LeximaxResult:
    """Leximax (or slack-approximate) marginals and what they give each group.

    x: marginals (n,); y: expected group utilities Vᵀx (m,) in input order; gammas: γ*_l; cumulative: C_l;
    alpha: slack per level; verified: the corrected Algorithm 2 accepted (x, C).
    """

    x: np.ndarray
    y: np.ndarray
    gammas: np.ndarray
    cumulative: np.ndarray
    alpha: np.ndarray
    k: int
    method: str
    verified: bool
    lp_solves: int
    seconds: float


def _lp_linprog(V: np.ndarray, k: int, l: int, C: np.ndarray) -> tuple[float, np.ndarray]:
    """Solve LP_l with y explicit and [OT] blocks (3 non-zeros per row); returns (γ*, x)."""
    n, m = V.shape
    nb = min(l, m - 1)                       # [OT] blocks for l' = 1..l (l' = m uses Σy instead)
    base = n + m + 1
    nvar = base + nb * (m + 1)
    # equalities: Σx = k; y_j − Σ_i V_ij x_i = 0
    Vt = sp.csr_matrix(V.T)
    A_eq = sp.vstack([
        sp.hstack([sp.csr_matrix(np.ones((1, n))), sp.csr_matrix((1, nvar - n))]),
        sp.hstack([-Vt, sp.identity(m, format="csr"), sp.csr_matrix((m, nvar - n - m))]),
    ], format="csr")
    b_eq = np.concatenate([[float(k)], np.zeros(m)])
    rows, cols, vals, b_ub = [], [], [], []
    r = 0
    for lp in range(1, l + 1):
        last = lp == l
        rhs = C[lp - 2] if lp >= 2 else 0.0  # C_{l-1}
        if lp == m:                            # θ_m(y) = Σ y
            rows += [r] * m
            cols += list(range(n, n + m))
            vals += [-1.0] * m
            if last:
                rows.append(r)
                cols.append(n + m)
                vals.append(1.0)
                b_ub.append(-rhs)
            else:
                b_ub.append(-(C[lp - 1] - TAU))
            r += 1
            continue
        off = base + (lp - 1) * (m + 1)
        for j in range(m):                     # t − y_j − d_j ≤ 0
            rows += [r, r, r]
            cols += [off, n + j, off + 1 + j]
            vals += [1.0, -1.0, -1.0]
            b_ub.append(0.0)
            r += 1
        rows += [r] * (m + 1)                  # −l'·t + Σ d (+ g) ≤ −rhs
        cols += [off] + list(range(off + 1, off + 1 + m))
        vals += [-float(lp)] + [1.0] * m
        if last:
            rows.append(r)
            cols.append(n + m)
            vals.append(1.0)
            b_ub.append(-rhs)
        else:
            b_ub.append(-(C[lp - 1] - TAU))
        r += 1
    A_ub = sp.csr_matrix((vals, (rows, cols)), shape=(r, nvar))
    bounds = np.empty((nvar, 2))
    bounds[:n] = (0.0, 1.0)
    bounds[n:base] = (-np.inf, np.inf)
    for b in range(nb):
        off = base + b * (m + 1)
        bounds[off] = (-np.inf, np.inf)
        bounds[off + 1: off + 1 + m] = (0.0, np.inf)
    c = np.zeros(nvar)
    c[n + m] = -1.0
    res = linprog(c, A_ub=A_ub, b_ub=np.asarray(b_ub), A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs",
                  options=_HIGHS_OPTIONS)
    if res.status != 0:
        raise RuntimeError(f"LP_{l} failed: {res.message}")
    return float(res.x[n + m]), res.x[:n]


def _lp_cvxpy(V: np.ndarray, k: int, l: int, C: np.ndarray) -> tuple[float, np.ndarray]:
    import cvxpy as cp

    n, m = V.shape
    x = cp.Variable(n)                         # fresh variables: see spec §5 (cvxpy 1.9.3 canonicalisation)
    y = cp.Variable(m)
    g = cp.Variable()
    cons = [cp.sum(x) == k, x >= 0, x <= 1, y == V.T @ x]
    for lp in range(1, l):
        cons.append(cp.sum_smallest(y, lp) >= C[lp - 1] - TAU)
    theta = cp.sum(y) if l == m else cp.sum_smallest(y, l)
    cons.append(theta >= (C[l - 2] if l >= 2 else 0.0) + g)
    prob = cp.Problem(cp.Maximize(g), cons)
    prob.solve(solver=cp.HIGHS, ignore_dpp=True,   # not parametrised: skip the DPP compile
               **_HIGHS_OPTIONS)
    if prob.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"LP_{l} failed: {prob.status}")
    return float(g.value), np.asarray(x.value, dtype=float)


def leximax_marginals(V, *, k: int, alpha: float | Sequence[float] | None = None,
                      method: Literal["linprog", "cvxpy"] = "linprog", tol: float = 1e-9) -> LeximaxResult:
    """Leximax (α = 0) or cumulative-slack marginals by the sequence of LPs of Algorithm 1.

    Source: [b] §4.2, Algorithm 1; compact "sum of the l smallest" constraints from Ogryczak & Tamir (2003).
    For l = 1..m maximise γ with θ_{l'}(y) ≥ C_{l'} − τ (l' < l) and θ_l(y) ≥ C_{l−1} + γ; C_l = C_{l−1} + γ*_l − α_l.

    Erratum: L2 (slack constraints use "≥", not ">"), L3 (index l in Algorithm 1), L5 (α > 0 is the
    cumulative-slack surrogate, labelled "ε-significant (LP, cumulative slack)"), L7 (compact LP instead of the
    ellipsoid method; Algorithm 2 is kept as the verifier, see :func:`separation_oracle`).

    Parameters
    ----------
    V : array (n, m), entries in [0, 1]
    k : int, 1 ≤ k ≤ n
    alpha : None (exact), float (same slack at each level) or sequence of m floats ≥ 0
    method : "linprog" (scipy HiGHS, sparse) or "cvxpy" (``cp.sum_smallest``, HiGHS)
    tol : marginals within ``tol`` of 0 or 1 are snapped.

    Examples
    --------
    >>> r = leximax_marginals([[1, 0], [0, 1]], k=1)
    >>> [round(float(v), 6) for v in r.y]
    [0.5, 0.5]
    """
    V = _check_values(V)
    n, m = V.shape
    k = _check_k(k, n)
    a = _check_alpha(alpha, m)
    if method not in ("linprog", "cvxpy"):
        raise ValueError(f"Unknown method {method!r}; use 'linprog' or 'cvxpy'.")
    solve = _lp_linprog if method == "linprog" else _lp_cvxpy
    t0 = time.perf_counter()
    gam = np.zeros(m)
    C = np.zeros(m)
    x = np.full(n, k / n)
    for l in range(1, m + 1):
        g, x = solve(V, k, l, C)
        x = _repair_marginals(x, k, tol)
        gam[l - 1] = g
        C[l - 1] = (C[l - 2] if l >= 2 else 0.0) + g - a[l - 1]
        # Keep "the previous x is feasible" (App. A) true in floating point: a fixed level may not exceed what
        # the repaired x achieves plus τ, otherwise LP_{l+1} can be infeasible by the solver's round-off.
        theta = np.cumsum(np.sort(V.T @ x))[:l]
        C[:l] = np.minimum(C[:l], theta + TAU)
    y = V.T @ x
    ok = separation_oracle(V, x, C, k=k).ok
    return LeximaxResult(x=x, y=y, gammas=gam, cumulative=C, alpha=a, k=k, method=method, verified=ok,
                         lp_solves=m, seconds=time.perf_counter() - t0)


def _repair_marginals(x, k: int, tol: float) -> np.ndarray:
    """Marginals in [0, 1] with Σx = k to round-off, from a solver's x that meets them to its tolerance.

    Snap entries within ``tol`` of 0 or 1, then spread the residual k − Σx over the entries with room (the
    fractional ones first), in proportion to their room; dependent rounding then returns exactly k members.
    """
    x = np.clip(np.asarray(x, dtype=float), 0.0, 1.0)
    x[x < tol] = 0.0
    x[x > 1 - tol] = 1.0
    for _ in range(3):
        r = k - math.fsum(x)
        if r == 0:
            break
        room = (1.0 - x) if r > 0 else x.copy()
        frac = (x > 0) & (x < 1)
        use = frac if room[frac].sum() >= abs(r) else room > 0
        total = room[use].sum()
        if total <= 0:
            break
        x[use] = np.clip(x[use] + r * room[use] / total, 0.0, 1.0)
    return x


def maxmin_marginals(V, *, k: int) -> np.ndarray:
    """Maxmin baseline (ours): the marginals of LP_1 only (maximise the worst group's expected utility)."""
    V = _check_values(V)
    k = _check_k(k, V.shape[0])
    _, x = _lp_linprog(V, k, 1, np.zeros(V.shape[1]))
    return np.clip(x, 0.0, 1.0)


def utilitarian_marginals(V, *, k: int) -> np.ndarray:
    """Utilitarian baseline (ours): maximise Σ_j y_j, i.e. select the k candidates with the largest row sums.

    Ties are broken by the smaller index (stable sort).
    """
    V = _check_values(V)
    k = _check_k(k, V.shape[0])
    order = np.argsort(-V.sum(axis=1), kind="stable")
    x = np.zeros(V.shape[0])
    x[order[:k]] = 1.0
    return x


@dataclass(frozen=True)
class OracleResult:
    """Verdict of the corrected Algorithm 2: violated ∈ {"bounds", "sum", "level"}; groups 0-based."""

    ok: bool
    violated: str | None
    level: int | None
    groups: tuple[int, ...] | None


def separation_oracle(V, x, cumulative, *, k: int, tol: float = 1e-7) -> OracleResult:
    """Check 0 ≤ x ≤ 1, Σx = k and θ_l(Vᵀx) ≥ C_l for every l; return the first violated constraint.

    Source: [b] App. A, Algorithm 2 (O(nm + m log m)). Erratum L4: the printed "if S ≠ k then" branch is empty;
    here it returns the violated constraint Σx = k.
    """
    V = np.asarray(V, dtype=float)
    x = np.asarray(x, dtype=float)
    cum = np.asarray(cumulative, dtype=float)
    if np.any(x < -tol) or np.any(x > 1 + tol):
        return OracleResult(False, "bounds", None, None)
    if abs(float(x.sum()) - k) > tol:
        return OracleResult(False, "sum", None, None)
    y = V.T @ x
    order = np.argsort(y, kind="stable")
    run = np.cumsum(y[order])
    for l in range(1, len(y) + 1):
        if run[l - 1] < cum[l - 1] - tol:
            return OracleResult(False, "level", l, tuple(int(j) for j in order[:l]))
    return OracleResult(True, None, None, None)


def leximax_saturation(V, *, k: int, tol: float = 1e-9) -> np.ndarray:
    """Per-group leximax utilities by the saturation (water-filling) method, as a cross-check.

    Source: [b] §4.2 (Balan et al.'s approach): raise a common floor t over the free groups, then fix every free
    group that cannot exceed the floor; repeat. Returns y (m,), input order.
    """
    V = _check_values(V)
    n, m = V.shape
    k = _check_k(k, n)
    nvar = n + m + 1
    Vt = sp.csr_matrix(V.T)
    A_eq = sp.vstack([
        sp.hstack([sp.csr_matrix(np.ones((1, n))), sp.csr_matrix((1, m + 1))]),
        sp.hstack([-Vt, sp.identity(m, format="csr"), sp.csr_matrix((m, 1))]),
    ], format="csr")
    b_eq = np.concatenate([[float(k)], np.zeros(m)])
    fixed = np.full(m, np.nan)

    def bounds_for(t_lo, t_hi):
        b = [(0.0, 1.0)] * n
        for j in range(m):
            b.append((fixed[j] - TAU, None) if np.isfinite(fixed[j]) else (None, None))
        b.append((t_lo, t_hi))
        return b

    def ub_rows(free):
        rows = []
        for j in free:                          # t − y_j ≤ 0 for free j
            r = np.zeros(nvar)
            r[n + m] = 1.0
            r[n + j] = -1.0
            rows.append(r)
        return sp.csr_matrix(np.array(rows)) if rows else None, (np.zeros(len(rows)) if rows else None)

    while np.isnan(fixed).any():
        free = [j for j in range(m) if np.isnan(fixed[j])]
        A_ub, b_ub = ub_rows(free)
        c = np.zeros(nvar)
        c[n + m] = -1.0
        res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds_for(None, None),
                      method="highs")
        if res.status != 0:
            raise RuntimeError(f"saturation LP failed: {res.message}")
        tstar = float(res.x[n + m])
        newly = []
        for j in free:
            if res.x[n + j] > tstar + VERIFY_TOL:   # already above the floor in this solution: not saturated
                continue
            c = np.zeros(nvar)
            c[n + j] = -1.0
            r2 = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq,
                         bounds=bounds_for(tstar - TAU, tstar - TAU), method="highs")
            if r2.status != 0 or -r2.fun <= tstar + VERIFY_TOL:
                newly.append(j)
        if not newly:                                   # numerical safety: fix the tightest group
            newly = [free[int(np.argmin(res.x[[n + j for j in free]]))]]
        for j in newly:
            fixed[j] = tstar
    return fixed


# ---------------------------------------------------------------------------------------------------------
# Integer optimum (App. D), brute force
# ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class IntegerLeximax:
    """Best deterministic cohort of size k (smallest index tuple among maximal sorted profiles)."""

    cohort: tuple[int, ...]
    utilities: np.ndarray
    sorted_utilities: np.ndarray
    n_cohorts: int


def integer_leximax_bruteforce(V, *, k: int, max_combos: int = 200_000) -> IntegerLeximax | None:
    """Integer leximax cohort by enumerating all C(n, k) cohorts; None if C(n, k) > ``max_combos``.

    Source: [b] App. D (Lemma 20: integer leximax is NP-hard, so only small pools are enumerated).
    Profiles are compared after rounding to 1e-9.
    """
    V = _check_values(V)
    n, m = V.shape
    k = _check_k(k, n)
    total = math.comb(n, k)
    if total > max_combos:
        return None
    combos = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(n), k)),
                         dtype=np.int64, count=total * k).reshape(total, k)
    util = V[combos].sum(axis=1)
    prof = np.sort(util, axis=1)
    key = np.round(prof * 1e9).astype(np.int64)
    cand = np.arange(total)
    for col in range(m):
        vals = key[cand, col]
        cand = cand[vals == vals.max()]
        if cand.size == 1:
            break
    best = int(cand[0])                            # combinations are in lexicographic order: smallest tuple
    return IntegerLeximax(cohort=tuple(int(i) for i in combos[best]), utilities=util[best],
                          sorted_utilities=prof[best], n_cohorts=total)


# ---------------------------------------------------------------------------------------------------------
# Sampling cohorts (§4.1.2, App. C) and concentration (Lemma 15)
# ---------------------------------------------------------------------------------------------------------

def sample_independent(x, *, n_draws: int, rng) -> np.ndarray:
    """Include candidate i independently with probability x_i ([b] §4.1.2). Returns bool (n_draws, n)."""
    x = _check_x(x)
    n_draws = check_size(n_draws, name="n_draws")
    return as_generator(rng).random((n_draws, x.size)) < x


def _snap(v: np.ndarray, tol: float) -> np.ndarray:
    v = np.where(v <= tol, 0.0, v)
    return np.where(v >= 1 - tol, 1.0, v)


def sample_dependent(x, *, n_draws: int, rng, tol: float = 1e-9) -> np.ndarray:
    """Cohorts of exactly Σx members with inclusion probabilities x, by Srinivasan's dependent rounding.

    Source: [b] App. C, Srinivasan (2001) ([b] ref. 28); the exact reproducible procedure of spec §4
    (pairwise rounding along the fractional indices in increasing order, one uniform per fractional index,
    vectorised across draws). Each step keeps E[x_i] and Σx. Returns bool (n_draws, n).
    """
    x = _check_x(x).copy()
    n_draws = check_size(n_draws, name="n_draws")
    g = as_generator(rng)
    x = _snap(x, tol)
    n = x.size
    F = np.flatnonzero((x > 0) & (x < 1))
    out = np.zeros((n_draws, n), dtype=bool)
    out[:, x == 1.0] = True
    U = g.random((n_draws, F.size))
    if F.size == 0:
        return out
    carry = np.full(n_draws, F[0])
    cval = np.full(n_draws, x[F[0]])
    has = np.ones(n_draws, dtype=bool)
    rows_all = np.arange(n_draws)
    for s in range(1, F.size):
        j = F[s]
        xj = x[j]
        act = has.copy()
        start = ~has
        if start.any():
            carry[start] = j
            cval[start] = xj
            has[start] = True
        if not act.any():
            continue
        r = rows_all[act]
        c = cval[act]
        a = np.minimum(1.0 - c, xj)
        b = np.minimum(c, 1.0 - xj)
        up = U[act, s] < b / (a + b)
        nc = _snap(np.where(up, c + a, c - b), tol)
        nj = _snap(np.where(up, xj - a, xj + b), tol)
        ci = (nc == 0.0) | (nc == 1.0)
        ji = (nj == 0.0) | (nj == 1.0)
        # carry became integral: record it; j becomes the carry if still fractional
        rc = r[ci]
        out[rc, carry[rc]] = nc[ci] > 0.5
        done_j = ci & ji
        out[r[done_j], j] = nj[done_j] > 0.5
        has[r[done_j]] = False
        move = ci & ~ji
        carry[r[move]] = j
        cval[r[move]] = nj[move]
        # carry still fractional: j is integral (one of the two always hits a bound)
        stay = ~ci
        out[r[stay], j] = nj[stay] > 0.5
        cval[r[stay]] = nc[stay]
    if has.any():                                  # Σx not an integer: settle the last carry with u_0
        r = rows_all[has]
        out[r, carry[r]] = U[r, 0] < cval[r]
    return out


def dependent_round(x, *, rng, tol: float = 1e-9) -> np.ndarray:
    """One dependent-rounding cohort: equals ``sample_dependent(x, n_draws=1, rng=rng)[0]`` ([b] App. C)."""
    return sample_dependent(x, n_draws=1, rng=rng, tol=tol)[0]


def realized_utilities(V, cohorts) -> np.ndarray:
    """Group utilities u(C, G_j) = Σ_{i∈C} v_ij of each drawn cohort ([b] §4.1.1). Returns (n_draws, m)."""
    V = np.asarray(V, dtype=float)
    C = np.atleast_2d(np.asarray(cohorts)).astype(float)
    return C @ V


def poisson_binomial_pmf(x) -> np.ndarray:
    """Exact distribution of the cohort size under independent selection (Poisson binomial, [b] App. C).

    Returns p with p[s] = Pr[|C| = s], s = 0..n, by sequential convolution.
    """
    x = _check_x(x)
    p = np.zeros(x.size + 1)
    p[0] = 1.0
    for i, xi in enumerate(x, start=1):
        p[1:i + 1] = p[1:i + 1] * (1 - xi) + p[:i] * xi
        p[0] *= 1 - xi
    return p


def size_interval(x, *, coverage: float = 0.95) -> tuple[int, int]:
    """Central range of the cohort size under independent selection: (lo, hi) with Pr[|C| < lo] ≤ (1−c)/2 and
    Pr[|C| > hi] ≤ (1−c)/2, from the exact Poisson-binomial distribution (:func:`poisson_binomial_pmf`).

    lo is the smallest s with Pr[|C| ≤ s] > (1−c)/2 and hi the smallest s with Pr[|C| ≤ s] ≥ 1 − (1−c)/2.
    """
    if not 0 < coverage < 1:
        raise ValueError(f"coverage must be in (0, 1), got {coverage!r}.")
    cdf = np.cumsum(poisson_binomial_pmf(x))
    tail = (1 - coverage) / 2
    lo = int(np.searchsorted(cdf, tail, side="right"))
    hi = int(np.searchsorted(cdf, 1 - tail - 1e-12, side="left"))
    return lo, min(hi, cdf.size - 1)


def hoeffding_tail(*, n: int, delta: float) -> float:
    """Lemma 15 bound Pr[U(C, G_j) < y_j − δ] < exp(−2δ²/n) ([b] §4.1.2, Lemma 15)."""
    n = check_size(n, name="n")
    delta = check_positive(delta, name="delta")
    return float(math.exp(-2.0 * delta * delta / n))


#: Solver outputs within this distance of 0 or 1 are settled there before they enter a bound (issue 34): the LPs'
#: tolerances (HIGHS_TOL, TAU, VERIFY_TOL) leave chances such as 0.99999999 that are 1 in exact arithmetic.
SETTLE_TOL = 1e-6


def settle(x, *, tol: float = SETTLE_TOL) -> tuple[np.ndarray, float]:
    """(x with entries within ``tol`` of 0 or 1 set to it, the total distance moved).

    The distance is what the settling costs a probability bound: a candidate at 1 − d is left out of a draw with
    probability d, so a bound computed with it fixed holds up to d more (union bound) [derived].
    """
    x = np.asarray(x, dtype=float)
    lo, hi = x < tol, x > 1 - tol
    out = np.where(lo, 0.0, np.where(hi, 1.0, x))
    return out, float(np.abs(out - x).sum())


def hoeffding_tail_refined(V, x, *, delta: float) -> np.ndarray:
    """Hoeffding with ranges v_ij over the fractional candidates: exp(−2δ²/Σ_{0<x_i<1} v_ij²) per group.

    Source: [derived] refinement of [b] Lemma 15 (candidates with x_i ∈ {0, 1} are not random); 0 if the sum is 0.
    Solver round-off is settled first (:func:`settle`): a chance of 0.99999999 is a decided candidate, not a
    random one (issue 34: it raised a bound from 0.976 to 0.981); the distance settled is added to the bound, which
    keeps it valid for the unsettled chances too.
    """
    if not delta > 0:
        raise ValueError("delta must be > 0.")
    V = np.asarray(V, dtype=float)
    x, moved = settle(_check_x(x))
    frac = (x > 0.0) & (x < 1.0)
    s = (V[frac] ** 2).sum(axis=0)
    with np.errstate(divide="ignore"):
        out = np.where(s > 0, np.exp(-2.0 * delta ** 2 / np.where(s > 0, s, 1.0)), 0.0)
    return np.minimum(1.0, out + moved)


def reverse_markov_lower(*, expected: float, threshold: float, maximum: float) -> float:
    """Reverse-Markov bound Pr[U ≥ a] ≥ (E − a)/(max − a) for U ≤ max (our reading of [b]'s "1/3", erratum L9)."""
    if not maximum > threshold:
        raise ValueError("maximum must exceed threshold.")
    return float(min(1.0, max(0.0, (expected - threshold) / (maximum - threshold))))


@dataclass(frozen=True)
class MonteCarloSummary:
    """Realised group utilities over many drawn cohorts (per group: mean, sd, 5% and 50% quantiles)."""

    scheme: str
    n_draws: int
    seed: int | None
    size_counts: dict
    mean: np.ndarray
    sd: np.ndarray
    q05: np.ndarray
    q50: np.ndarray
    min_group_counts: dict
    delta: float
    empirical_tail: np.ndarray
    hoeffding_paper: float
    hoeffding_refined: np.ndarray
    expected: np.ndarray
    utilities: np.ndarray          # (n_draws, m), for plots (downsample before drawing)


def monte_carlo(V, x, *, n_draws: int, rng, scheme: Literal["dependent", "independent"] = "dependent",
                delta: float) -> MonteCarloSummary:
    """Draw ``n_draws`` cohorts (chunks of 10,000) and summarise realised utilities against Lemma 15.

    Source: [b] §4.1.2 (Lemma 15) and App. C (dependent rounding keeps the bound via negative correlation).
    """
    V = _check_values(V)
    x = _check_x(x)
    if x.size != V.shape[0]:
        raise ValueError("x must have one entry per candidate (row of V).")
    n_draws = check_size(n_draws, name="n_draws")
    if scheme not in ("dependent", "independent"):
        raise ValueError(f"Unknown scheme {scheme!r}; use 'dependent' or 'independent'.")
    if not delta > 0:
        raise ValueError("delta must be > 0.")
    seed = int(rng) if isinstance(rng, Integral) else None
    g = as_generator(rng)
    sampler = sample_dependent if scheme == "dependent" else sample_independent
    utils, sizes = [], []
    for start in range(0, n_draws, 10_000):
        b = min(10_000, n_draws - start)
        C = sampler(x, n_draws=b, rng=g)
        sizes.append(C.sum(axis=1))
        utils.append(C.astype(np.float64) @ V)
    U = np.concatenate(utils)
    S = np.concatenate(sizes)
    y = V.T @ x
    mins = np.round(U.min(axis=1), 9)
    return MonteCarloSummary(
        scheme=scheme, n_draws=n_draws, seed=seed,
        size_counts={int(s): int(c) for s, c in sorted(Counter(S.tolist()).items())},
        mean=U.mean(axis=0), sd=U.std(axis=0), q05=np.quantile(U, 0.05, axis=0), q50=np.quantile(U, 0.5, axis=0),
        min_group_counts={float(v): int(c) for v, c in sorted(Counter(mins.tolist()).items())},
        delta=float(delta), empirical_tail=(U < y - delta).mean(axis=0),
        hoeffding_paper=hoeffding_tail(n=V.shape[0], delta=delta),
        hoeffding_refined=hoeffding_tail_refined(V, x, delta=delta), expected=y, utilities=U,
    )


# ---------------------------------------------------------------------------------------------------------
# Finite-set notions (§2–3, App. B)
# ---------------------------------------------------------------------------------------------------------

def parse_number(v):
    """Parse "1/100", "0.3", 3 → Fraction for integers/fractions typed as a/b, else float (page editor helper)."""
    if isinstance(v, (Fraction, Integral)) and not isinstance(v, bool):
        return Fraction(v)
    if isinstance(v, float):
        return v
    s = str(v).strip()
    if not s:
        raise ValueError("empty cell")
    if "/" in s:
        num, den = s.split("/", 1)
        f = Fraction(int(num.strip()), int(den.strip()))
        return f
    try:
        return Fraction(int(s))
    except ValueError:
        return float(s)


_DECIMAL = re.compile(r"[+-]?(?:\d{1,30}(?:\.\d{0,30})?|\.\d{1,30})(?:[eE][+-]?\d{1,2})?")
_FRACTION = re.compile(r"([+-]?\d{1,30})\s*/\s*(\d{1,30})")


def parse_exact_cell(text) -> Fraction:
    """One typed value as an exact fraction: a decimal ("0.25", "1e-3") or a fraction ("1/100").

    Bounded so that a hostile cell cannot stall the page: at most 30 digits per part and a two-digit exponent
    (``Fraction("1e99999999")`` would build a 100-million-digit integer). Raises ValueError otherwise.
    """
    s = "" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text).strip()
    m = _FRACTION.fullmatch(s)
    if m:
        if int(m.group(2)) == 0:
            raise ValueError("division by zero")
        return Fraction(int(m.group(1)), int(m.group(2)))
    if _DECIMAL.fullmatch(s):
        return Fraction(s)
    raise ValueError("not a decimal or a fraction")


def parse_utility_matrix(rows, *, what: str = "Utilities", max_rows: int = 12, max_cols: int = 6) -> list[list]:
    """The finite-set explorer's matrix (solutions × groups) from typed cells, exact (spec §9 Tab B).

    2–``max_rows`` rows, 1–``max_cols`` columns, every cell a bounded decimal or fraction
    (:func:`parse_exact_cell`). Messages name the cell as S<i>, G<j> and quote at most 40 characters of it.
    """
    rows = [list(r) for r in rows]
    if not 2 <= len(rows) <= max_rows or not rows[0] or len(rows[0]) > max_cols:
        raise ValueError(f"{what}: use 2–{max_rows} solutions (rows) and 1–{max_cols} groups (columns).")
    out = []
    for i, r in enumerate(rows, start=1):
        row = []
        for j, v in enumerate(r, start=1):
            try:
                row.append(parse_exact_cell(v))
            except ValueError:
                shown = "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v).strip()[:40]
                has = f"has {shown!r}" if shown else "is empty"         # a new editor row: never "None"
                raise ValueError(f"{what}: row S{i}, group G{j} {has}; enter a decimal (0.25) or a "
                                 "fraction (1/100).") from None
        out.append(row)
    return out


def parse_alpha(text: str, *, m: int, max_chars: int = 2_000) -> tuple[float, ...]:
    """Custom slack vector α from "0.05, 0.1, …" (commas or semicolons): m finite numbers ≥ 0, else ValueError."""
    s = str(text)
    if len(s) > max_chars:
        raise ValueError("too long")
    al = tuple(float(v) for v in s.replace(";", ",").split(",") if v.strip())
    if len(al) != m or any(not math.isfinite(a) or a < 0 for a in al):
        raise ValueError(f"needs {m} non-negative numbers")
    return al


def parse_intersections(text: str, *, max_groups: int = 20, max_conditions: int = 6,
                        max_chars: int = 2_000) -> list[GroupDef]:
    """Extra groups from "gender=F & age=young; region=north" (';' between groups, '&' between conditions)."""
    s = str(text)
    if len(s) > max_chars:
        raise ValueError(f"Extra groups: at most {max_chars:,} characters.")
    parts = [p.strip() for p in s.split(";") if p.strip()]
    if len(parts) > max_groups:
        raise ValueError(f"Extra groups: at most {max_groups} groups.")
    out = []
    for part in parts:
        conds = []
        pieces = [c for c in part.split("&") if c.strip()]
        if len(pieces) > max_conditions:
            raise ValueError(f"Intersection {part[:60]!r}: at most {max_conditions} conditions.")
        for c in pieces:
            if "=" not in c:
                raise ValueError(f"Intersection {part[:60]!r}: write conditions as column=value.")
            a, b = (t.strip() for t in c.split("=", 1))
            conds.append((a, b))
        out.append(GroupDef(part, tuple(conds)))
    return out


class _Arith:
    """Exact comparisons for ints/Fractions, tolerance 1e-12 otherwise (spec §3 "Arithmetic")."""

    def __init__(self, U):
        if isinstance(U, pd.DataFrame):
            U = U.values.tolist()
        rows = [list(r) for r in (U.tolist() if isinstance(U, np.ndarray) else U)]
        if not rows or any(len(r) == 0 for r in rows):
            raise ValueError("The utility matrix is empty: it needs at least one solution and one group.")
        if len({len(r) for r in rows}) != 1:
            raise ValueError("The utility matrix is ragged: every solution needs one value per group.")
        self.exact = all(isinstance(v, (Fraction, Integral, np.integer)) and not isinstance(v, bool)
                         for r in rows for v in r)
        if self.exact:
            self.rows = [[Fraction(int(v)) if isinstance(v, (Integral, np.integer)) else v for v in r]
                         for r in rows]
            self.tol = Fraction(0)
        else:
            self.rows = [[float(v) for v in r] for r in rows]
            if not all(math.isfinite(v) for r in self.rows for v in r):
                raise ValueError("The utility matrix contains missing or infinite values.")
            self.tol = FINITE_TOL
        self.s = len(self.rows)
        self.m = len(self.rows[0])
        self.prof = [sorted(r) for r in self.rows]

    def num(self, v, name="epsilon"):
        if v is None:
            v = 0
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"{name} must be finite.")
        if self.exact:
            out = Fraction(v) if isinstance(v, (Fraction, Integral)) else Fraction(str(float(v)))
        else:
            out = float(v)
        return out

    def ge(self, a, b) -> bool:
        return a >= b - self.tol

    def gt(self, a, b) -> bool:
        return a > b + self.tol


def _nonneg(A: _Arith, v, name):
    out = A.num(v, name)
    if out < 0:
        raise ValueError(f"{name} must be ≥ 0; got {v}.")
    return out


def sorted_profiles(U) -> list[list]:
    """Each solution's utilities sorted ascending: u(S, G_[1]) ≤ … ≤ u(S, G_[m]) ([b] §2)."""
    return _Arith(U).prof


def _lex_greater(A: _Arith, p, q) -> bool:
    """p ≻ q lexicographically, ties within tolerance ([b] Def 2)."""
    for a, b in zip(p, q):
        if A.gt(a, b):
            return True
        if A.gt(b, a):
            return False
    return False


def leximax_set(U) -> frozenset[int]:
    """Solutions whose sorted profile is ⪰ every other ([b] Defs 2–3)."""
    A = _Arith(U)
    return frozenset(s for s in range(A.s) if not any(_lex_greater(A, A.prof[t], A.prof[s]) for t in range(A.s)))


def elementwise_set(U, *, alpha) -> frozenset[int]:
    """α-element-wise approximations: max_i (ℓ_i − u(S, G_[i])) ≤ α, ℓ = leximax profile ([b] Def 6)."""
    A = _Arith(U)
    al = _nonneg(A, alpha, "alpha")
    best = next(iter(sorted(leximax_set(U))))
    ell = A.prof[best]
    return frozenset(s for s in range(A.s) if all(A.ge(p, l - al) for p, l in zip(A.prof[s], ell)))


def tradeoff_set(U, *, epsilon, epsilon2=0) -> frozenset[int]:
    """ε-tradeoff (ε₂ = 0, [b] Def 7) or (ε, ε₂)-significant tradeoff ([b] Def 9) solutions.

    S qualifies if for every S′, i with u(S, G_[i]) < u(S′, G_[i]) − ε there is j < i with
    u(S, G_[j]) > u(S′, G_[j]) + ε₂. May be empty when ε₂ > 0 ([b] Ex 8).
    """
    A = _Arith(U)
    e1 = _nonneg(A, epsilon, "epsilon")
    e2 = _nonneg(A, epsilon2, "epsilon2")
    out = []
    for s in range(A.s):
        p = A.prof[s]
        ok = True
        for t in range(A.s):
            q = A.prof[t]
            for i in range(A.m):
                if not A.ge(p[i], q[i] - e1):
                    if not any(A.gt(p[j], q[j] + e2) for j in range(i)):
                        ok = False
                        break
            if not ok:
                break
        if ok:
            out.append(s)
    return frozenset(out)


def _chain(A: _Arith, alpha_of: Callable[[int, int], object]) -> list[frozenset[int]]:
    cur = frozenset(range(A.s))
    chain = [cur]
    for i in range(A.m):
        mx = max(A.prof[t][i] for t in cur)
        cur = frozenset(t for t in cur if A.ge(A.prof[t][i], mx - alpha_of(i, t)))
        chain.append(cur)
    return chain


def recursive_chain(U, *, alpha: Sequence) -> tuple[frozenset[int], ...]:
    """The sets 𝒮₀^α ⊇ 𝒮₁^α ⊇ … ⊇ 𝒮_m^α of [b] Def 10 (0-based solution indices)."""
    A = _Arith(U)
    if isinstance(alpha, (int, float, Fraction)):
        alpha = [alpha] * A.m
    al = [_nonneg(A, a, "alpha") for a in alpha]
    if len(al) != A.m:
        raise ValueError(f"alpha needs one slack per group ({A.m}); got {len(al)}.")
    return tuple(_chain(A, lambda i, t: al[i]))


def recursive_set(U, *, epsilon) -> frozenset[int]:
    """ε-recursive solutions: S ∈ 𝒮_m^α for some α ∈ [0, ε]^m ([b] Def 10; equals ε-tradeoff by Thm 11).

    Membership test [derived]: at each level give S the minimal slack a_i = max(0, max u_[i] − u_[i](S)) and
    fail if a_i > ε; smaller sets only lower later maxima, so the minimal slack is the best choice for S.
    """
    A = _Arith(U)
    eps = _nonneg(A, epsilon, "epsilon")
    out = []
    for s in range(A.s):
        cur = range(A.s)
        ok = True
        for i in range(A.m):
            mx = max(A.prof[t][i] for t in cur)
            if not A.ge(A.prof[s][i], mx - eps):
                ok = False
                break
            a = max(0, mx - A.prof[s][i])
            cur = [t for t in cur if A.ge(A.prof[t][i], mx - a)]
        if ok:
            out.append(s)
    return frozenset(out)


def significant_set(U, *, epsilon) -> frozenset[int]:
    """ε-significant recursive solutions: 𝒮_m^ε with slack ε at every level ([b] Def 12). Never empty."""
    A = _Arith(U)
    eps = _nonneg(A, epsilon, "epsilon")
    return _chain(A, lambda i, t: eps)[-1]


def interval_significant_member(U, s: int, *, alpha1, alpha2) -> bool:
    """Is S_s (α₁, α₂)-significant recursive ([b] App. B, Lemma 19 notion; per-solution slacks in [α₁, α₂])?

    Test [derived]: give S slack α₂ and every other solution α₁ at every level (largest chance for S to stay,
    smallest sets for the others).
    """
    A = _Arith(U)
    if isinstance(s, bool) or not isinstance(s, Integral) or not 0 <= s < A.s:
        raise ValueError(f"s must be a solution index between 0 and {A.s - 1}; got {s!r}.")
    a1 = A.num(alpha1, "alpha1")
    a2 = A.num(alpha2, "alpha2")
    if a1 > a2:
        raise ValueError("alpha1 must be ≤ alpha2.")
    return s in _chain(A, lambda i, t: a2 if t == s else a1)[-1]


MEMBERSHIP_COLUMNS = ("leximax", "element-wise (α = ε)", "ε-tradeoff", "ε-recursive", "(ε,ε)-sig-tradeoff",
                      "ε-significant")


def _label(s: int) -> str:
    return "S" + "".join("₀₁₂₃₄₅₆₇₈₉"[int(d)] for d in str(s + 1))


def membership_table(U, *, epsilon) -> pd.DataFrame:
    """Which solution belongs to which notion ([b] Fig. 1): rows S₁…, one boolean column per notion."""
    A = _Arith(U)
    sets = [leximax_set(U), elementwise_set(U, alpha=epsilon), tradeoff_set(U, epsilon=epsilon),
            recursive_set(U, epsilon=epsilon), tradeoff_set(U, epsilon=epsilon, epsilon2=epsilon),
            significant_set(U, epsilon=epsilon)]
    df = pd.DataFrame({"solution": [_label(s) for s in range(A.s)],
                       "sorted profile": [", ".join(_fmt(v) for v in p) for p in A.prof]})
    for name, st_ in zip(MEMBERSHIP_COLUMNS, sets):
        df[name] = [s in st_ for s in range(A.s)]
    return df


def _fmt(v) -> str:
    if isinstance(v, Fraction):
        return str(v) if v.denominator != 1 else str(v.numerator)
    return f"{v:g}"


def _check_noise(At: _Arith, An: _Arith, delta):
    if (At.s, At.m) != (An.s, An.m):
        raise ValueError("The noisy matrix must have the same shape as the true matrix.")
    d = At.num(delta, "delta")
    if d < 0:
        raise ValueError("delta must be ≥ 0.")
    worst = max(abs(float(a) - float(b)) for ra, rb in zip(At.rows, An.rows) for a, b in zip(ra, rb))
    if worst > float(d) + 1e-12:
        raise ValueError(f"The noisy utilities differ from the true ones by up to {worst:g} > δ = {float(d):g}; "
                         "Lemmas 18–19 assume noise within δ.")
    return d


def lemma19_check(U_true, U_noisy, *, epsilon, delta) -> pd.DataFrame:
    """Corrected Lemma 19: each ε-significant solution on δ-noisy utilities is (ε−2δ, ε+2δ)-significant recursive
    on the true ones.

    Source: [b] App. B, Lemma 19. Erratum L1: the printed statement ("any ε-tradeoff … (ε−2d, ε+2d)") is false
    even at δ = 0; the statement checked here is the one about ε-significant recursive solutions, with 2δ.
    Returns one row per noisy-significant solution.
    """
    At, An = _Arith(U_true), _Arith(U_noisy)
    d = _check_noise(At, An, delta)
    eps = At.num(epsilon)
    noisy_sig = sorted(significant_set(U_noisy, epsilon=epsilon))
    true_sig = significant_set(U_true, epsilon=epsilon)
    rows = []
    for s in noisy_sig:
        rows.append({"solution": _label(s), "index": s, "ε-significant (true)": s in true_sig,
                     "(ε−2δ, ε+2δ)-significant (true)": interval_significant_member(
                         U_true, s, alpha1=eps - 2 * d, alpha2=eps + 2 * d)})
    return pd.DataFrame(rows, columns=["solution", "index", "ε-significant (true)",
                                       "(ε−2δ, ε+2δ)-significant (true)"])


def lemma18_check(U_true, U_noisy, *, epsilon, delta) -> pd.DataFrame:
    """Lemma 18: each (ε−2δ, 2δ)-significant-tradeoff solution on δ-noisy utilities is ε-tradeoff on the true ones.

    Source: [b] App. B, Lemma 18. Needs ε ≥ 2δ. One row per noisy (ε−2δ, 2δ)-significant-tradeoff solution.
    """
    At, An = _Arith(U_true), _Arith(U_noisy)
    d = _check_noise(At, An, delta)
    eps = At.num(epsilon)
    if eps - 2 * d < 0:
        raise ValueError("Lemma 18 needs ε ≥ 2δ.")
    noisy = sorted(tradeoff_set(U_noisy, epsilon=eps - 2 * d, epsilon2=2 * d))
    true_t = tradeoff_set(U_true, epsilon=eps)
    return pd.DataFrame([{"solution": _label(s), "index": s, "ε-tradeoff (true)": s in true_t} for s in noisy],
                        columns=["solution", "index", "ε-tradeoff (true)"])


# ---------------------------------------------------------------------------------------------------------
# Pool inputs
# ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Pool:
    """Candidates (ids), groups (names) and the values matrix V (n × m) in [0, 1]."""

    ids: tuple[str, ...]
    group_names: tuple[str, ...]
    values: np.ndarray


def _ids(df: pd.DataFrame, id_col: str | None, prefix: str = "c") -> tuple[str, ...]:
    if id_col is None:
        return tuple(f"{prefix}{i + 1}" for i in range(len(df)))
    if id_col not in df.columns:
        raise ValueError(f"The id column {id_col!r} is not in the file (columns: {', '.join(map(str, df.columns))}).")
    ids = df[id_col]
    if ids.isna().any() or (ids.astype(str).str.strip() == "").any():
        raise ValueError(f"The id column {id_col!r} has missing ids; every row needs an id.")
    s = ids.astype(str).str.strip()
    dup = s[s.duplicated()]
    if len(dup):
        raise ValueError(f"The id column {id_col!r} has duplicate ids, e.g. {dup.iloc[0]!r}; ids must be unique.")
    return tuple(s.tolist())


def pool_from_values(df: pd.DataFrame, *, id_col: str | None = None, rescale: bool = False) -> Pool:
    """Pool from a table of candidates × group values (optional id column; other columns numeric in [0, 1]).

    ``rescale=True`` divides every value by the largest one (values must be ≥ 0).
    """
    ids = _ids(df, id_col)
    cols = [c for c in df.columns if c != id_col]
    if not cols:
        raise ValueError("No group columns: expected one numeric column per group besides the id column.")
    bad = [c for c in cols if not pd.api.types.is_numeric_dtype(df[c])]
    if bad:
        raise ValueError(f"Column {bad[0]!r} is not numeric. Expected numbers (group values in [0, 1]) in every "
                         "column except the id column.")
    V = df[cols].to_numpy(dtype=float)
    if not np.all(np.isfinite(V)):
        r, c = np.argwhere(~np.isfinite(V))[0]
        raise ValueError(f"Row {r + 1}, column {cols[c]!r} is empty or not a finite number.")
    if rescale:
        if V.min() < 0:
            raise ValueError("Values must be ≥ 0 to rescale by the maximum.")
        if V.max() > 0:
            V = V / V.max()
    _check_values(V)
    return Pool(ids=ids, group_names=tuple(map(str, cols)), values=V)


@dataclass(frozen=True)
class GroupDef:
    """A group: candidates meeting all (column, value) conditions."""

    name: str
    conditions: tuple[tuple[str, str], ...]


def groups_from_columns(df: pd.DataFrame, columns: Sequence[str]) -> list[GroupDef]:
    """One group per value of each chosen column (values compared as stripped strings, sorted)."""
    out = []
    for c in columns:
        if c not in df.columns:
            raise ValueError(f"Column {c!r} is not in the table.")
        vals = sorted(set(df[c].dropna().astype(str).str.strip()))
        out += [GroupDef(f"{c}={v}", ((str(c), v),)) for v in vals]
    return out


#: Bounds on a pool built from attributes (issue 26 item 3: memory per upload is bounded, counted before expanding).
MAX_GROUPS = 200
MAX_VALUE_CELLS = 5_000_000


def pool_from_attributes(df, groups: Sequence[GroupDef], *, id_col: str | None = None,
                         rule: Literal["membership", "share", "partial"] = "membership",
                         shares: Sequence[float] | None = None) -> Pool:
    """Pool from candidates' attributes and group definitions.

    Rules [derived]: membership v_ij = 1[i ∈ G_j] (utility = expected number of members); share
    v_ij = 1[i ∈ G_j]·s_min/s_j for target shares s_j (default: pool shares), so leximax equalises count_j/s_j;
    partial v_ij = fraction of G_j's conditions that i meets.
    """
    ids = _ids(df, id_col)
    if rule not in ("membership", "share", "partial"):
        raise ValueError(f"Unknown rule {rule!r}; use 'membership', 'share' or 'partial'.")
    if not groups:
        raise ValueError("Define at least one group.")
    n = len(df)
    # counted before anything is expanded: a column of 10,000 distinct values made 10,000 groups and a 2 GB matrix
    if len(groups) > MAX_GROUPS or n * len(groups) > MAX_VALUE_CELLS:
        raise ValueError(f"{len(groups):,} groups over {n:,} candidates is more than this page handles (at most "
                         f"{MAX_GROUPS} groups and {MAX_VALUE_CELLS:,} candidate-group values). Define fewer, "
                         "coarser groups (group a column with many distinct values into a few bands).")
    V = np.zeros((n, len(groups)))
    for j, g in enumerate(groups):
        if not g.conditions:
            raise ValueError(f"Group {g.name!r} has no conditions.")
        hits = np.zeros(n)
        for col, val in g.conditions:
            if col not in df.columns:
                raise ValueError(f"Group {g.name!r} uses column {col!r}, which is not in the table.")
            hits += (df[col].astype(str).str.strip() == str(val).strip()).to_numpy()
        frac = hits / len(g.conditions)
        V[:, j] = frac if rule == "partial" else (frac == 1.0)
    if rule == "share":
        if shares is None:
            s = V.mean(axis=0)
        else:
            s = np.asarray(shares, dtype=float)
            if s.shape != (len(groups),):
                raise ValueError(f"shares needs one target share per group ({len(groups)}).")
            if not np.all(np.isfinite(s)) or np.any(s <= 0):
                raise ValueError("Target shares must be positive numbers.")
        pos = s > 0
        smin = s[pos].min() if pos.any() else 1.0
        V = V * np.where(pos, smin / np.where(pos, s, 1.0), 0.0)
    return Pool(ids=ids, group_names=tuple(g.name for g in groups), values=V)


# ---------------------------------------------------------------------------------------------------------
# Quota-constrained leximin panels [F21] (beyond [b])
# ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Quota:
    """Quota for one value of one feature: min ≤ (panel members with feature = value) ≤ max."""

    feature: str
    value: str
    min: int
    max: int


def _as_int(v, what: str) -> int:
    if v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and not v.strip()):
        raise ValueError(f"{what} is empty; enter a whole number.")     # an emptied editor cell: never "None"
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be an integer; got {v!r}.") from None
    if not math.isfinite(f) or f != int(f):
        raise ValueError(f"{what} must be an integer; got {v!r}.")
    return int(f)


def quotas_from_frame(df: pd.DataFrame) -> list[Quota]:
    """Quotas from a table with headers ``feature,value,min,max`` or the replication format
    ``category,feature,min,max`` (category → feature, feature → value)."""
    cols = {str(c).strip().lower(): c for c in df.columns}
    if {"feature", "value", "min", "max"} <= cols.keys():
        fcol, vcol = cols["feature"], cols["value"]
    elif {"category", "feature", "min", "max"} <= cols.keys():
        fcol, vcol = cols["category"], cols["feature"]
    else:
        raise ValueError("The quotas table needs the columns feature, value, min, max "
                         f"(or category, feature, min, max); found {', '.join(map(str, df.columns))}.")
    out, seen = [], set()
    for i, r in enumerate(df.itertuples(index=False), start=1):
        rec = dict(zip(df.columns, r))
        f, v = str(rec[fcol]).strip(), str(rec[vcol]).strip()
        lo = _as_int(rec[cols["min"]], f"Row {i} ({f}={v}): min")
        hi = _as_int(rec[cols["max"]], f"Row {i} ({f}={v}): max")
        if lo < 0 or lo > hi:
            raise ValueError(f"Row {i} ({f}={v}): bounds must satisfy 0 ≤ min ≤ max; got min {lo}, max {hi}.")
        if (f, v) in seen:
            raise ValueError(f"Row {i}: quota for '{v}' ({f}) appears twice.")
        seen.add((f, v))
        out.append(Quota(f, v, lo, hi))
    if not out:
        raise ValueError("The quotas table has no rows.")
    return out


@dataclass(frozen=True)
class QuotaReport:
    """Feasibility of quotas; if infeasible, plain-language problems and a minimal relaxation."""

    feasible: bool
    problems: tuple[str, ...]
    relaxation: pd.DataFrame | None
    seats_changed: int | None


#: The value a blank quota answer takes when the user chooses to keep blanks as their own category.
BLANK = "(blank)"


@dataclass(frozen=True)
class MissingAnswers:
    """Respondents with no answer for one quota feature: ``rows`` are file rows (the header is row 1), ``ids`` the
    respondents' ids where the pool has an id column (else empty)."""

    feature: str
    rows: tuple[int, ...]
    ids: tuple[str, ...] = ()

    def sentence(self, *, shown: int = 8) -> str:
        """"9 respondents have no value for gender: rows 3, 7, … (ids p1, p5, …)." — sortition-algorithms names
        the person and the row of a missing answer; this names the first ``shown`` of each."""
        n = len(self.rows)
        more = ", …" if n > shown else ""
        who = "1 respondent has" if n == 1 else f"{n:,} respondents have"
        text = f"{who} no value for {self.feature}: row{'s' if n > 1 else ''} " \
               + ", ".join(map(str, self.rows[:shown])) + more
        if self.ids:
            text += f" (id{'s' if n > 1 else ''} " + ", ".join(self.ids[:shown]) + more + ")"
        return text + "."


def _is_blank(col: pd.Series) -> np.ndarray:
    """Blank answers: NaN/None or empty text after trimming. The texts "N", "NA" and "None" are answers (North,
    Namibia, no), never blanks: only the reader's missing-value codes, which the user chooses, become NaN."""
    isna = col.isna().to_numpy()
    text = col.astype(str).str.strip().to_numpy()
    return isna | (text == "")


def blank_rows(pool: pd.DataFrame, features: Sequence[str]) -> np.ndarray:
    """Which respondents (pool order) have a blank answer for any of ``features`` present in the pool."""
    out = np.zeros(len(pool), dtype=bool)
    for f in features:
        if f in pool.columns:
            out |= _is_blank(pool[f])
    return out


def missing_answers(pool: pd.DataFrame, features: Sequence[str], *, id_col: str | None = None
                    ) -> list[MissingAnswers]:
    """Per quota feature with blank answers, the file rows (position + 2: the header is row 1) and ids."""
    out = []
    ids = None
    if id_col is not None and id_col in pool.columns:
        ids = pool[id_col].astype(str).str.strip().to_numpy()
    for f in features:
        if f not in pool.columns:
            continue
        pos = np.flatnonzero(_is_blank(pool[f]))
        if pos.size:
            out.append(MissingAnswers(str(f), tuple(int(i) + 2 for i in pos),
                                      tuple(str(ids[i]) for i in pos) if ids is not None else ()))
    return out


def resolve_blanks(pool: pd.DataFrame, quotas: Sequence[Quota], *, k: int, how: Literal["drop", "value"]
                   ) -> tuple[pd.DataFrame, list[Quota], int]:
    """The pool and quotas with blank quota answers handled: (pool, quotas, respondents changed).

    ``how="drop"`` leaves out every respondent with a blank answer for any quota feature; ``how="value"`` keeps them,
    with the blank read as the value :data:`BLANK`, and adds a free quota row (min 0, max k) for it where the quotas
    have none, so the blank category is counted but not constrained.
    """
    features = list(dict.fromkeys(q.feature for q in quotas))
    feats = [f for f in features if f in pool.columns]
    blank = np.zeros(len(pool), dtype=bool)
    per = {}
    for f in feats:
        per[f] = _is_blank(pool[f])
        blank |= per[f]
    if not blank.any():
        return pool, list(quotas), 0
    if how == "drop":
        return pool[~blank].reset_index(drop=True), list(quotas), int(blank.sum())
    if how != "value":
        raise ValueError(f"how must be 'drop' or 'value'; got {how!r}.")
    out = pool.copy()
    have = {(q.feature, q.value) for q in quotas}
    extra = []
    for f in feats:
        if per[f].any():
            col = out[f].astype(object)
            col[per[f]] = BLANK
            out[f] = col
            if (f, BLANK) not in have:
                extra.append(Quota(f, BLANK, 0, int(k)))
    # each new row goes after its feature's last row, so the quota table keeps features together
    qs = list(quotas)
    for e in extra:
        last = max(i for i, q in enumerate(qs) if q.feature == e.feature)
        qs.insert(last + 1, e)
    return out, qs, int(blank.sum())


def _quota_structure(pool: pd.DataFrame, quotas: Sequence[Quota], k: int):
    """Validate and aggregate into types. Returns (features, type_keys, sizes, type_of_person, A, lo, hi)."""
    if not isinstance(pool, pd.DataFrame) or len(pool) == 0:
        raise ValueError("The pool is empty.")
    if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
        raise ValueError(f"The panel size must be an integer ≥ 1; got {k!r}.")
    if k > len(pool):
        raise ValueError(f"The panel size ({k}) is larger than the pool ({len(pool)} people).")
    if not quotas:
        raise ValueError("No quotas given.")
    features = list(dict.fromkeys(q.feature for q in quotas))
    if len(features) > 12:
        raise ValueError(f"At most 12 quota features are supported; got {len(features)}.")
    for q in quotas:
        if q.feature not in pool.columns:
            raise ValueError(f"Quota feature {q.feature!r} is not a column of the pool "
                             f"(columns: {', '.join(map(str, pool.columns))}).")
        if not (isinstance(q.min, Integral) and isinstance(q.max, Integral)) or q.min < 0 or q.min > q.max:
            raise ValueError(f"Quota '{q.value}' ({q.feature}): bounds must be integers with 0 ≤ min ≤ max.")
    gaps = missing_answers(pool, features)
    if gaps:
        raise ValueError(" ".join(g.sentence() for g in gaps) + " Drop these respondents or treat a blank answer as "
                         "its own value.")
    vals = pool[features].astype(str).apply(lambda s: s.str.strip())
    qset = {(q.feature, q.value) for q in quotas}
    for f in features:
        for v in sorted(set(vals[f])):
            if (f, v) not in qset:
                raise ValueError(f"'{f}' has pool value '{v}' with no quota row; add min 0, max {k} to leave it "
                                 "free.")
    keys = list(map(tuple, vals.to_numpy().tolist()))
    uniq = sorted(set(keys))
    index = {t: i for i, t in enumerate(uniq)}
    tp = np.array([index[t] for t in keys], dtype=np.int64)
    sizes = np.bincount(tp, minlength=len(uniq))
    fpos = {f: i for i, f in enumerate(features)}
    A = np.zeros((len(quotas), len(uniq)))
    for r, q in enumerate(quotas):
        fi = fpos[q.feature]
        A[r] = [1.0 if t[fi] == q.value else 0.0 for t in uniq]
    lo = np.array([q.min for q in quotas], dtype=float)
    hi = np.array([q.max for q in quotas], dtype=float)
    return features, uniq, sizes, tp, A, lo, hi


#: Kept for scripts that read it; no longer a limit (issue 35: limits are work, never wall time).
CHECK_SECONDS = 60.0
#: Work limits of each quota-feasibility MIP (branch-and-bound nodes) and of the final lottery LP (simplex
#: iterations). These problems are small (types × quota rows) and solve at the root or in a few hundred iterations;
#: the limits only stop a pathological instance, the same way on an idle and on a busy server.
CHECK_NODES = 10_000
CHECK_ITERATIONS = 1_000_000


def _feasible_counts(A, lo, hi, sizes, k, *, lower=None) -> np.ndarray | None:
    T = len(sizes)
    cons = [LinearConstraint(np.ones((1, T)), k, k)]
    if len(lo):
        cons.append(LinearConstraint(A, lo, hi))
    res = milp(np.zeros(T), constraints=cons, integrality=np.ones(T),
               bounds=Bounds(np.zeros(T) if lower is None else lower, sizes.astype(float)),
               options={"node_limit": CHECK_NODES})
    if res.x is not None:
        return np.round(res.x).astype(int)
    if res.status == 2:                                  # proven infeasible
        return None
    raise ValueError(f"Checking whether any panel meets the quotas did not finish within {CHECK_NODES:,} "
                     f"branch-and-bound nodes ({len(sizes)} distinct combinations of quota values). Merge rare values "
                     "or drop a quota.")


def _seats(k: int) -> str:
    return f"{k} seat" if k == 1 else f"{k} seats"


def check_quotas(pool: pd.DataFrame, quotas: Sequence[Quota], *, k: int) -> QuotaReport:
    """Check whether any panel of size k meets every quota, and explain why not (feature, value, numbers).

    Pre-checks per quota and per feature, then an ILP (HiGHS); if infeasible, the minimal relaxation ILP
    (integer slacks on the bounds, Σ slack minimised, panel size kept) [derived, spec §6].
    Infeasible quotas are not an error here: they are reported.
    """
    features, uniq, sizes, tp, A, lo, hi = _quota_structure(pool, quotas, k)
    counts = A @ sizes
    problems = []
    for r, q in enumerate(quotas):
        if counts[r] < q.min:
            problems.append(f"Quota needs at least {q.min} '{q.value}' ({q.feature}) but the pool has only "
                            f"{int(counts[r])}.")
    for f in features:
        rows = [r for r, q in enumerate(quotas) if q.feature == f]
        smin = sum(quotas[r].min for r in rows)
        if smin > k:
            problems.append(f"The minimums for {f} add up to {smin} but the panel has {_seats(k)}.")
        smax = sum(min(quotas[r].max, int(counts[r])) for r in rows)
        if smax < k:
            problems.append(f"The maximums for {f} (capped by who is in the pool) allow at most {smax} people, "
                            f"fewer than the panel's {_seats(k)}.")
    if not problems and _feasible_counts(A, lo, hi, sizes, k) is not None:
        return QuotaReport(True, (), None, None)
    if not problems:
        problems.append("Each quota can be met on its own, but no panel meets all of them at once.")
    # minimal relaxation: variables c (T, integer), s⁻ (Q), s⁺ (Q)
    T, Q = len(sizes), len(quotas)
    cvec = np.concatenate([np.zeros(T), np.ones(2 * Q)])
    cons = [LinearConstraint(np.concatenate([np.ones(T), np.zeros(2 * Q)])[None, :], k, k),
            LinearConstraint(np.hstack([A, np.eye(Q), np.zeros((Q, Q))]), lo, np.inf),      # A c + s⁻ ≥ lo
            LinearConstraint(np.hstack([A, np.zeros((Q, Q)), -np.eye(Q)]), -np.inf, hi)]    # A c − s⁺ ≤ hi
    res = milp(cvec, constraints=cons, integrality=np.ones(T + 2 * Q),
               bounds=Bounds(np.zeros(T + 2 * Q), np.concatenate([sizes, np.full(2 * Q, np.inf)])),
               options={"node_limit": CHECK_NODES})       # no answer within it: the report gives no relaxation
    relax, seats = None, None
    if res.status == 0:
        sm = np.round(res.x[T:T + Q]).astype(int)
        spl = np.round(res.x[T + Q:]).astype(int)
        rows = []
        for r, q in enumerate(quotas):
            if sm[r] or spl[r]:
                rows.append({"feature": q.feature, "value": q.value, "min": q.min, "max": q.max,
                             "new_min": q.min - int(sm[r]), "new_max": q.max + int(spl[r])})
        relax = pd.DataFrame(rows, columns=["feature", "value", "min", "max", "new_min", "new_max"])
        seats = int(sm.sum() + spl.sum())
    return QuotaReport(False, tuple(problems), relax, seats)


def relaxation_sentences(report: QuotaReport) -> list[str]:
    """Plain sentences for each change of a minimal relaxation ("lower the minimum of 'young' (age) from 3 to 2")."""
    out = []
    if report.relaxation is None:
        return out
    for r in report.relaxation.itertuples(index=False):
        if r.new_min != r.min:
            out.append(f"lower the minimum of '{r.value}' ({r.feature}) from {r.min} to {r.new_min}")
        if r.new_max != r.max:
            out.append(f"raise the maximum of '{r.value}' ({r.feature}) from {r.max} to {r.new_max}")
    return out


def apply_relaxation(quotas: Sequence[Quota], report: QuotaReport) -> list[Quota]:
    """Quotas with the relaxation of ``report`` applied."""
    if report.relaxation is None:
        return list(quotas)
    ch = {(r.feature, r.value): (int(r.new_min), int(r.new_max)) for r in report.relaxation.itertuples(index=False)}
    return [Quota(q.feature, q.value, *ch.get((q.feature, q.value), (q.min, q.max))) for q in quotas]


def quota_case_warnings(pool: pd.DataFrame, quotas: Sequence[Quota]) -> list[str]:
    """Warnings for pool/quota values of a feature that differ only by upper/lower case."""
    out = []
    for f in dict.fromkeys(q.feature for q in quotas):
        vals = set(q.value for q in quotas if q.feature == f)
        if f in pool.columns:
            vals |= set(pool[f].astype(str).str.strip())
        by = {}
        for v in vals:
            by.setdefault(v.lower(), set()).add(v)
        for group in by.values():
            if len(group) > 1:
                out.append(f"'{f}' has values that differ only by case: {', '.join(sorted(group))}. "
                           "They are treated as different values.")
    return out


@dataclass(frozen=True)
class PanelDistribution:
    """Leximin lottery over quota-feasible panels and each person's selection probability."""

    person_ids: tuple[str, ...]
    probabilities: np.ndarray
    type_index: np.ndarray
    type_table: pd.DataFrame
    panels: np.ndarray
    panel_probabilities: np.ndarray
    levels: tuple[tuple[float, int], ...]
    never_selectable: tuple[str, ...]
    residual: float
    complete: bool
    lp_solves: int
    ilp_solves: int
    seconds: float                   # CPU seconds of this process (time.process_time), not wall time
    upper_min: float = math.nan      # proven upper bound on the leximin's smallest chance (the relaxation's level)
    stopped: str = ""                # why a partial run stopped: "cpu" (the user's limit), "work", "memory"

    @property
    def guaranteed_min(self) -> float:
        """The smallest chance this lottery gives anyone: the leximin's is at least this (it maximises it)."""
        return float(np.min(self.probabilities)) if len(self.probabilities) else 0.0


#: Work limits of one HiGHS call inside the leximin (issue 35 item 1): simplex iterations and branch-and-bound
#: nodes, never HiGHS's ``time_limit``, which is wall time and cut solves short on a busy server (the same settings
#: then gave another lottery). The user's limit is CPU time of this process (``time.process_time``), checked between
#: solves; these caps only bound one call. Both count per ``run()`` (HiGHS resets them), so a persistent model gets
#: them afresh each time.
SOLVE_ITERATIONS = 2_000_000
SOLVE_NODES = 50_000


def _limit(h, seconds: float) -> None:
    """Bound the next ``run()`` of a HiGHS object by work: no wall-clock limit; no work at all when ``seconds``
    (the CPU time left) is ≤ 0, else at most SOLVE_ITERATIONS simplex iterations and SOLVE_NODES MIP nodes."""
    import highspy

    h.setOptionValue("time_limit", highspy.kHighsInf)
    h.setOptionValue("simplex_iteration_limit", SOLVE_ITERATIONS if seconds > 0 else 0)
    h.setOptionValue("mip_max_nodes", SOLVE_NODES if seconds > 0 else 0)


def _highs_status(highspy, h) -> str:
    """"optimal", "infeasible" or "time_limit" (any other stop: no answer, never read as a proof) of a HiGHS run."""
    st_ = h.getModelStatus()
    M = highspy.HighsModelStatus
    if st_ == M.kOptimal:
        return "optimal"
    if st_ in (M.kInfeasible, M.kUnboundedOrInfeasible):
        return "infeasible"
    return "time_limit"


#: HiGHS options of the pricing MIP (measured on the Volunteer 500/6/40 pricing problems: 3.9 s → 1.6 s, same optima).
MIP_OPTIONS = {"presolve": "off", "mip_heuristic_effort": 0.0, "mip_heuristic_run_feasibility_jump": False,
               "mip_heuristic_run_zi_round": False, "mip_heuristic_run_shifting": False,
               "mip_heuristic_run_root_reduced_cost": False, "mip_heuristic_run_rins": False,
               "mip_heuristic_run_rens": False}


class _Pricer:
    """Persistent HiGHS MIP: maximise w·c over quota-feasible count vectors c, with its LP relaxation beside it.

    Most pricing calls of the leximin only have to show that no panel beats the master's ŷ: the LP relaxation
    (about 0.5 ms against 7 ms for the MIP) proves that whenever its bound is already ≤ ŷ, and an integral
    relaxation optimum is the MIP optimum. Every solve gets the time left (issue 26: limits go into the solver);
    ``status`` tells "optimal", "infeasible" and "time_limit" apart, so a solver that stopped without an answer
    is never read as "this type can never be selected".
    """

    def __init__(self, A, lo, hi, sizes, k):
        import highspy

        self.hp = highspy
        T = len(sizes)
        self.T = T
        self.sizes = sizes.astype(float)
        self.cols = np.arange(T, dtype=np.int32)
        self.h = self._model(A, lo, hi, k, integer=True)
        self.relax = self._model(A, lo, hi, k, integer=False)
        self.solves = 0
        self.relax_solves = 0

    def _model(self, A, lo, hi, k, *, integer: bool):
        hp = self.hp
        T = self.T
        h = hp.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("mip_rel_gap", 1e-9)
        if integer:
            h.setOptionValue("mip_improving_solution_save", True)
            # a pricing MIP is small (types × quotas) and its relaxation nearly integral: HiGHS's start-up work
            # (presolve, feasibility jump and the other primal heuristics) took over half of each ~20 ms solve
            for opt, value in MIP_OPTIONS.items():
                h.setOptionValue(opt, value)
        h.setOptionValue("threads", 1)
        inf = hp.kHighsInf
        h.addVars(T, np.zeros(T), self.sizes)
        if integer:
            h.changeColsIntegrality(T, self.cols, np.array([hp.HighsVarType.kInteger] * T))
        h.addRow(float(k), float(k), T, self.cols, np.ones(T))
        for r in range(A.shape[0]):
            idx = np.flatnonzero(A[r]).astype(np.int32)
            h.addRow(float(lo[r]), float(hi[r]) if np.isfinite(hi[r]) else inf, idx.size, idx, np.ones(idx.size))
        h.changeObjectiveSense(hp.ObjSense.kMaximize)
        return h

    def solve(self, w, *, force: int | None = None, above: float | None = None, time_left: float = math.inf):
        """(c, value, status) of max w·c; with ``above``, (None, bound, "optimal") when the relaxation already
        shows that no panel has w·c > ``above``."""
        w = np.asarray(w, dtype=float)
        self.extra = []
        if above is not None and force is None:
            r = self.relax
            r.changeColsCost(self.T, self.cols, w)
            _limit(r, time_left)
            r.run()
            self.relax_solves += 1
            if _highs_status(self.hp, r) == "optimal":
                bound = self.bound = float(r.getInfo().objective_function_value)
                if bound <= above:
                    return None, bound, "optimal"
                x = np.asarray(r.getSolution().col_value)
                if np.all(np.abs(x - np.round(x)) < 1e-9):
                    return np.round(x).astype(int), bound, "optimal"
        h = self.h
        h.changeColsCost(self.T, self.cols, w)
        if force is not None:
            h.changeColBounds(int(force), 1.0, self.sizes[force])
        _limit(h, time_left)
        h.run()
        self.solves += 1
        status = _highs_status(self.hp, h)
        ok = status == "optimal"
        c = np.round(np.asarray(h.getSolution().col_value)).astype(int) if ok else None
        val = float(h.getInfo().objective_function_value) if ok else None
        self.bound = float(h.getInfo().mip_dual_bound) if ok else math.inf     # ≥ val by the MIP's gap
        if ok and above is not None:
            # the improving panels the MIP met on its way to the optimum also beat ŷ: more columns per round
            for s in h.getSavedMipSolutions():
                e = np.round(np.asarray(s.col_value)).astype(int)
                if float(w @ e) > above and not np.array_equal(e, c):
                    self.extra.append(e)
        if force is not None:
            h.changeColBounds(int(force), 0.0, self.sizes[force])
        return c, val, status


#: Weight of the stability centre in the dual smoothing of the leximin's column generation (Wentges 1997).
SMOOTHING = 0.8


class _Master:
    """Persistent HiGHS LP, the primal leximin master over the panels found so far [F21]:

        max z  s.t.  Σ_P q_P = 1,   Σ_P q_P c_{P,t}/N_t − z ≥ 0 (free t),   ≥ f_t (fixed t),   q ≥ 0.

    Row t's dual y_t and the convexity row's dual ŷ are the dual master's variables: a panel with
    Σ_t y_t c_t/N_t > ŷ improves z. A new panel is a new column, so the optimal basis stays primal feasible and the
    next solve starts from it; the basis is one row per type (T + 1), where the dual form had one row per panel.
    Never-selectable types and types not reached in time have free rows (no constraint, dual 0).
    """

    def __init__(self, N: np.ndarray, free: np.ndarray):
        import highspy

        self.hp = highspy
        self.T = T = len(N)
        self.N = N
        self.solves = 0
        inf = highspy.kHighsInf
        h = self.h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        h.setOptionValue("simplex_strategy", 4)     # primal simplex: a new column leaves the basis primal feasible
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        h.addVar(-inf, inf)                                        # column 0: the level z
        h.changeColCost(0, 1.0)
        idx = np.flatnonzero(free)
        lower = np.concatenate([[1.0], np.where(free, 0.0, -inf)])
        upper = np.concatenate([[1.0], np.full(T, inf)])
        h.addRows(T + 1, lower, upper, 0, np.zeros(T + 1, dtype=np.int32), np.zeros(0, np.int32), np.zeros(0))
        for t in idx:
            h.changeCoeff(int(t) + 1, 0, -1.0)
        self.in_z = free.copy()                                     # rows that still carry −z

    def add_panel(self, c: np.ndarray) -> None:
        idx = np.flatnonzero(c)
        rows = np.concatenate([[0], idx + 1]).astype(np.int32)
        vals = np.concatenate([[1.0], c[idx] / self.N[idx]])
        self.h.addCol(0.0, 0.0, self.hp.kHighsInf, rows.size, rows, vals)

    def fix(self, t: int, level: float) -> None:
        """Type t's probability is fixed at ``level``: it leaves z's rows and keeps at least ``level``."""
        self.h.changeCoeff(t + 1, 0, 0.0)
        self.in_z[t] = False
        self.h.changeRowBounds(t + 1, float(level), self.hp.kHighsInf)

    def aim(self, f: np.ndarray) -> None:
        """Every row in z asks Σ_P q_P c_{P,t}/N_t − z ≥ f_t: the best z is minus the largest shortfall from the
        target chances f (z ≥ 0 when some lottery over these panels reaches every f_t)."""
        for t in np.flatnonzero(self.in_z):
            self.h.changeRowBounds(int(t) + 1, float(f[t]), self.hp.kHighsInf)

    def solve(self, time_left: float) -> str:
        h = self.h
        _limit(h, time_left)
        h.run()
        self.solves += 1
        status = _highs_status(self.hp, h)
        if status == "optimal":
            sol = h.getSolution()
            d = np.asarray(sol.row_dual)
            # HiGHS's sign convention for a maximisation: z's reduced cost 0 gives Σ_free y = ±1; read the sign there
            s = -1.0 if d[1:][self.in_z].sum() < 0 else 1.0
            self.yhat = -s * float(d[0])                            # the convexity row's dual has the other sign
            self.y = np.clip(s * d[1:], 0.0, None)
            self.level = float(np.asarray(sol.col_value)[0])
            self.q = np.clip(np.asarray(sol.col_value)[1:], 0.0, None)     # the panel weights: a valid lottery
        return status


def _settle_level(y, z: float, fixed, f, levels: list, N, tol: float) -> np.ndarray:
    """Fix at level z the free types whose rows have a positive dual [F21] (for numerical safety, the largest dual
    when none is above ``tol``); updates ``fixed``, ``f`` and ``levels`` and returns the types fixed."""
    newly = np.flatnonzero(~fixed & (y > tol))
    if newly.size == 0:
        free = np.flatnonzero(~fixed)
        newly = free[[int(np.argmax(y[free]))]]
    f[newly] = z
    fixed[newly] = True
    levels.append((z, int(N[newly].sum())))
    return newly


#: Largest shortfall from the relaxation's chances that still counts as reaching them: the relaxation fixes each
#: level τ = 1e-9 low (so round-off never blocks the next level's LP), and a later level may use that slack.
REACH_TOL = 1e-8


def _quota_lp(hp, A, lo, hi, N, k):
    """HiGHS model of the quota polytope's LP relaxation over type counts: 0 ≤ x ≤ N, Σx = k, lo ≤ A x ≤ hi."""
    T = len(N)
    h = hp.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    inf = hp.kHighsInf
    h.addVars(T, np.zeros(T), N.astype(float))
    cols = np.arange(T, dtype=np.int32)
    h.addRow(float(k), float(k), T, cols, np.ones(T))
    for r in range(A.shape[0]):
        idx = np.flatnonzero(A[r]).astype(np.int32)
        h.addRow(float(lo[r]), float(hi[r]) if np.isfinite(hi[r]) else inf, idx.size, idx, np.ones(idx.size))
    return h


def _relaxed_leximin(A, lo, hi, N, k, left: Callable[[], float]):
    """Leximin of the chances x_t/N_t over the LP relaxation of the quota polytope: (f, levels, LP solves), or
    None when a solve stops without an optimum (out of time).

    The lottery's expected counts lie in the convex hull of the quota-feasible panels, inside this relaxation, so f
    is lexicographically at least the true leximin; a lottery that reaches f is the leximin (it is unique) [derived].
    Each level is one LP: max z over x in the relaxation with x_t ≥ N_t z (free t), x_t ≥ N_t f_t (fixed t); the
    types whose rows have a positive dual are fixed, as in [F21]'s column generation.
    """
    import highspy as hp

    T = len(N)
    h = _quota_lp(hp, A, lo, hi, N, k)
    for opt, value in _HIGHS_OPTIONS.items():                  # levels to 1e-10: they are the chances promised
        h.setOptionValue(opt, value)
    inf = hp.kHighsInf
    h.addVar(-inf, inf)                                        # column T: the level z
    h.changeColCost(T, 1.0)
    h.changeObjectiveSense(hp.ObjSense.kMaximize)
    base = h.getNumRow()
    for t in range(T):
        h.addRow(0.0, inf, 2, np.array([t, T], dtype=np.int32), np.array([1.0, -N[t]]))
    fixed = np.zeros(T, dtype=bool)
    f = np.zeros(T)
    levels: list[tuple[float, int]] = []
    solves = 0
    while not fixed.all():
        _limit(h, left())
        h.run()
        solves += 1
        if _highs_status(hp, h) != "optimal":
            return None
        sol = h.getSolution()
        z = max(0.0, float(sol.col_value[T]))
        d = np.asarray(sol.row_dual)[base:]
        y = -d if d[~fixed].sum() < 0 else d                  # read the sign as _Master does
        for t in _settle_level(y, z, fixed, f, levels, N, 1e-9):
            h.changeCoeff(base + int(t), T, 0.0)
            h.changeRowBounds(base + int(t), float((z - TAU) * N[t]), inf)    # τ: round-off never blocks the next LP
    return f, levels, solves


def _face_panels(x, A, lo, hi, N, k, rng, left: Callable[[], float], say: Callable[[str], None]):
    """Quota-feasible panels around the target counts x by Carathéodory's construction: (panels, LP solves, MIPs).

    Repeat: take an integer point v of the smallest face of the relaxation that holds x (a vertex of a random
    objective, or a MIP on the face when that vertex is fractional), then step from v through x to the face's
    boundary; x is a mix of v and the new point, which lies on a smaller face, so at most T + 1 steps. The steps
    stop early when a face has no integer point or time runs out; what the panels can reach is then settled by the
    caller's master LP, never assumed [derived: the standard proof of Carathéodory's theorem, with the quota
    polytope's integer points in place of its vertices].
    """
    import highspy as hp

    T = len(N)
    R = A.shape[0]
    h = _quota_lp(hp, A, lo, hi, N, k)
    mip = _quota_lp(hp, A, lo, hi, N, k)
    for opt, value in MIP_OPTIONS.items():
        mip.setOptionValue(opt, value)
    cols = np.arange(T, dtype=np.int32)
    rows = np.arange(1, R + 1, dtype=np.int32)
    mip.changeColsIntegrality(T, cols, np.array([hp.HighsVarType.kInteger] * T))
    inf = hp.kHighsInf
    hi_ = np.where(np.isfinite(hi), hi, np.inf)
    panels: list[np.ndarray] = []
    lps = mips = 0
    x = np.asarray(x, dtype=float).copy()
    for step in range(T + 2):
        if left() <= 0:
            break
        r = np.round(x)
        if np.all(np.abs(x - r) < 1e-7):                      # x is an integer point: the last panel
            panels.append(r.astype(np.int64))
            break
        at0, atN = x <= 1e-9, x >= N - 1e-9
        Ax = A @ x
        rlo, rhi = Ax <= lo + 1e-9, Ax >= hi_ - 1e-9
        cl = np.where(atN, N, 0.0)
        cu = np.where(at0, 0.0, N)
        rl = np.where(rhi, hi_, lo)
        ru = np.where(rlo, lo, np.where(np.isfinite(hi_), hi_, inf))
        w = rng.standard_normal(T)
        v = None
        for model, is_mip in ((h, False), (mip, True)):
            model.changeColsBounds(T, cols, cl, cu)
            model.changeRowsBounds(R, rows, rl, ru)
            model.changeColsCost(T, cols, w)
            _limit(model, left())
            model.run()
            if is_mip:
                mips += 1
            else:
                lps += 1
            if _highs_status(hp, model) != "optimal":
                break
            cand = np.asarray(model.getSolution().col_value)
            if np.all(np.abs(cand - np.round(cand)) < 1e-7):
                v = np.round(cand)
                break
        if v is None:
            break
        panels.append(v.astype(np.int64))
        d = x - v
        # the longest step x + μ(x − v) that stays in the relaxation; constraints tight at x stay tight
        mu = math.inf
        up, down = (d > 1e-12) & ~atN, (d < -1e-12) & ~at0
        if up.any():
            mu = min(mu, float(np.min((N[up] - x[up]) / d[up])))
        if down.any():
            mu = min(mu, float(np.min(x[down] / -d[down])))
        g = A @ d
        gu, gd = (g > 1e-12) & ~rhi & np.isfinite(hi_), (g < -1e-12) & ~rlo
        if gu.any():
            mu = min(mu, float(np.min((hi_[gu] - Ax[gu]) / g[gu])))
        if gd.any():
            mu = min(mu, float(np.min((Ax[gd] - lo[gd]) / -g[gd])))
        if not math.isfinite(mu) or mu <= 1e-12:
            break
        x = np.clip(x + mu * d, 0.0, N)
        if step % 25 == 0:
            say(f"building panels from the relaxation: {len(panels)} panels")
    return panels, lps, mips


def _final_lottery(P: np.ndarray, sizes: np.ndarray, f: np.ndarray):
    """min s s.t. Σq = 1, q ≥ 0, Σ_P q_P c_{P,t}/N_t ≥ f_t − s (spec §6 step 6)."""
    Pn, T = P.shape
    pi = P / sizes[None, :]
    c = np.zeros(Pn + 1)
    c[-1] = 1.0
    A_ub = np.hstack([-pi.T, -np.ones((T, 1))])
    res = linprog(c, A_ub=A_ub, b_ub=-f, A_eq=np.concatenate([np.ones(Pn), [0.0]])[None, :], b_eq=[1.0],
                  bounds=[(0, None)] * (Pn + 1), method="highs", options={"maxiter": CHECK_ITERATIONS})
    if res.status != 0:
        raise RuntimeError(f"The final lottery over {Pn} panels did not solve within {CHECK_ITERATIONS:,} simplex "
                           f"iterations ({res.message}).")
    q = np.clip(res.x[:Pn], 0.0, None)
    q[q < 1e-12] = 0.0
    q = q / q.sum()
    return q, float(res.x[-1])


#: Memory budget of one leximin run (issue 35 item 3). The run's largest arrays are the dense quota matrix (quota rows
#: × types) and its panels (types each, held several times while the final lottery is solved), so its memory grows
#: with types × (quota rows + panels); a pool over the budget is refused before any work starts.
LEXIMIN_MEMORY_BYTES = 512 * 2**20
#: Panels a run may hold per type: the leximin's support needs at most types + 1 panels (a basic solution of the
#: final LP) and Carathéodory's construction builds at most types + 2; column generation keeps the rest.
PANELS_PER_TYPE = 3
#: Copies of the panel matrix alive at once (the panels, their chances per type, the final LP's constraint matrix
#: and its transpose), and bytes per HiGHS non-zero (value, index, and the row-wise copy) in the 5 solver models.
_PANEL_COPIES, _NZ_BYTES, _MODELS = 4, 32, 5


@dataclass(frozen=True)
class LeximinSize:
    """What a leximin run would hold in memory, estimated from the accepted input before it starts."""

    people: int
    features: int
    quota_rows: int
    types: int
    bytes: int
    budget: int
    max_types: int

    @property
    def fits(self) -> bool:
        return self.bytes <= self.budget

    def message(self) -> str | None:
        """None when the run fits; else what it would need, the budget and the largest pool shape accepted."""
        if self.fits:
            return None
        return (f"This pool is too large for the leximin here: {self.people:,} people × {self.features} quota features "
                f"({self.quota_rows:,} quota rows) form {self.types:,} distinct combinations of quota values, and the "
                f"run would need about {_bytes_text(self.bytes)} of memory; the limit is {_bytes_text(self.budget)}, "
                f"which fits at most {self.max_types:,} combinations with these quota rows. Merge rare values "
                "(e.g. fewer age bands or regions) or drop a quota feature.")


def _bytes_text(b: float) -> str:
    for unit, size in (("GB", 2**30), ("MB", 2**20), ("kB", 2**10)):
        if b >= size:
            return f"{b / size:,.1f} {unit}"
    return f"{int(b)} bytes"


def _leximin_bytes(types: int, rows: int, features: int) -> int:
    T = int(types)
    panels = PANELS_PER_TYPE * (T + 1)
    dense = 8 * T * (rows + _PANEL_COPIES * panels)
    models = _MODELS * _NZ_BYTES * T * (features + 2)
    return int(dense + models)


def leximin_size(pool: pd.DataFrame, quotas: Sequence[Quota], *, budget: int = LEXIMIN_MEMORY_BYTES) -> LeximinSize:
    """The memory a leximin run on ``pool`` would need: types × (quota rows + panels) in 8-byte numbers plus the
    solver models, with the types counted from the pool (one pass, no solver). Blank answers count as a value here
    (the run itself refuses them with their rows)."""
    features = [f for f in dict.fromkeys(q.feature for q in quotas) if f in pool.columns]
    R = len(quotas)
    T = int(len(pool[features].astype(str).drop_duplicates())) if features and len(pool) else 0
    need = _leximin_bytes(T, R, len(features))
    lo, hi = 0, max(T, 1)
    while _leximin_bytes(hi, R, len(features)) <= budget:
        hi *= 2
    while lo < hi:                                   # the largest type count within the budget
        mid = (lo + hi + 1) // 2
        if _leximin_bytes(mid, R, len(features)) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return LeximinSize(people=len(pool), features=len(features), quota_rows=R, types=T, bytes=need, budget=int(budget),
                       max_types=lo)


class _OutOfPanels(Exception):
    """The run reached its panel cap (its memory budget): stop with the lottery found so far."""


def leximin_panels(pool, quotas, *, k: int, id_col: str = "person_id", rng=None, time_limit_s: float = 120.0,
                   progress: Callable[[float, str], None] | None = None, tol: float = 1e-7,
                   relaxation_first: bool = True, memory_budget: int | None = LEXIMIN_MEMORY_BYTES
                   ) -> PanelDistribution:
    """Leximin lottery over quota-feasible panels: maximise the smallest selection probability, then the next…

    Source: Flanigan, Gölz, Gupta, Hennig, Procaccia (2021) [F21] ([b] ref. 13), column generation with HiGHS;
    type aggregation and a persistent warm-started master [derived, spec §6].

    With ``relaxation_first`` (the default) the leximin is first computed over the LP relaxation of the quotas,
    one small LP per level: an upper bound in the leximin order. Panels around its expected counts come from
    Carathéodory's construction, and a master LP with pricing then looks for a lottery over panels that reaches
    those chances. If one does, it is the leximin, proven by the bound: on the Volunteer pools this takes seconds
    where the column generation below took minutes. If the relaxation's chances are out of reach (the quota
    polytope has fractional corners that matter), the column generation runs as before, starting from the panels
    found. Both paths give the same chances; the tests compare them.

    The column generation's master is the primal LP over
    panel weights (one row per type, primal simplex from the last basis), and pricing uses the dual smoothing of
    Wentges (1997, "Weighted Dantzig–Wolfe decomposition for linear mixed-integer programming", Int. Trans.
    Oper. Res. 4): it halves the master solves on the degenerate leximin master without changing the levels,
    which are only fixed once the master's own duals admit no better panel.
    Beyond [b]: [b] leximaxes group utilities over free marginals; here individual probabilities under quotas.

    Limits (issue 35): ``time_limit_s`` is CPU time of this process (``time.process_time``), checked between
    solver calls, and each call is bounded by iterations and nodes (:func:`_limit`), never by wall time, so a busy
    server gives the same lottery as an idle one. ``memory_budget`` (bytes; None: no limit) refuses a pool whose
    estimated run (:func:`leximin_size`) is larger, before any work, and caps the panels a run may hold. A run that
    stops early returns ``complete=False`` with ``stopped`` saying why, the lottery found so far (its smallest chance,
    ``guaranteed_min``, is a proven lower bound on the leximin's) and ``upper_min`` (the relaxation's first level, an
    upper bound) when it was computed.

    Raises ValueError (with the quota report text) if the quotas are infeasible.
    """
    t0 = time.process_time()
    w0 = time.perf_counter()                 # only for how often progress is said, never for a limit
    g = as_generator(rng)
    if id_col not in pool.columns:
        raise ValueError(f"The pool has no id column {id_col!r}.")
    ids = _ids(pool, id_col)
    max_panels = None
    if memory_budget is not None:
        size = leximin_size(pool, quotas, budget=memory_budget)
        if not size.fits:
            raise ValueError(size.message())
        max_panels = PANELS_PER_TYPE * (size.types + 1) + 64
    report = check_quotas(pool, quotas, k=k)
    if not report.feasible:
        msg = " ".join(report.problems)
        sent = relaxation_sentences(report)
        if sent:
            msg += f" Smallest fix ({report.seats_changed} seat(s) changed): " + "; ".join(sent) + "."
        raise ValueError(msg)
    features, uniq, sizes, tp, A, lo, hi = _quota_structure(pool, quotas, k)
    T = len(sizes)
    pricer = _Pricer(A, lo, hi, sizes, k)
    say = progress or (lambda frac, msg: None)
    panels: list[np.ndarray] = []
    seen: set[bytes] = set()

    def add(c):
        key = c.astype(np.int16).tobytes()
        if key not in seen:
            if max_panels is not None and len(panels) >= max_panels:
                raise _OutOfPanels
            seen.add(key)
            panels.append(c)
            return True
        return False

    def left() -> float:
        return time_limit_s - (time.process_time() - t0)

    try:
        return _leximin_run(ids, pool, quotas, k, g, tol, relaxation_first, t0, w0, say, panels, add, left,
                            features, uniq, sizes, tp, A, lo, hi, pricer)
    except _OutOfPanels:
        # the memory budget's panel cap: the lottery over the panels found that maximises the smallest chance
        f = np.ones(T)
        return _distribution(ids, tp, features, uniq, sizes, panels, f, [], np.zeros(T, dtype=bool), complete=False,
                             lp_solves=pricer.relax_solves, ilp_solves=pricer.solves, t0=t0, say=say,
                             stopped="memory")


def _leximin_run(ids, pool, quotas, k, g, tol, relaxation_first, t0, w0, say, panels, add, left,
                 features, uniq, sizes, tp, A, lo, hi, pricer) -> PanelDistribution:
    """The body of :func:`leximin_panels` (the relaxation first, then column generation), after validation."""
    T = len(sizes)
    N = sizes.astype(float)
    bound: dict = {}

    # 2b. the leximin of the LP relaxation, and a lottery over panels that reaches it when there is one
    relax_lps = relax_mips = 0
    if relaxation_first and left() > 0:
        fast = _leximin_by_relaxation(A, lo, hi, N, k, pricer, g, left, say, add, panels, tol, bound)
        relax_lps, relax_mips = fast[-2], fast[-1]
        if fast[0] is not None:
            f, levels, never, lottery = fast[:4]
            return _distribution(ids, tp, features, uniq, sizes, panels, f, levels, never, complete=True,
                                 lp_solves=relax_lps + pricer.relax_solves, ilp_solves=relax_mips + pricer.solves,
                                 t0=t0, say=say, lottery=lottery, upper_min=bound.get("upper", math.nan))

    # 3. initial panels by multiplicative weights, then cover every type that can be covered
    complete = True
    w = np.ones(T)
    for _ in range(10):
        c, _v, status = pricer.solve(w * (1.0 + 0.01 * g.random(T)), time_left=left())
        if c is None:
            complete = complete and status != "time_limit"
            break
        add(c)
        w[c > 0] *= 0.5
    covered = np.zeros(T, dtype=bool)
    for c in panels:
        covered |= c > 0
    never = np.zeros(T, dtype=bool)
    last_say = time.perf_counter()
    for t in range(T):
        if time.perf_counter() - last_say > 0.5:
            last_say = time.perf_counter()
            say(0.0, f"finding initial panels: {int(covered.sum())} of {T} types covered · "
                     f"{time.process_time() - t0:.0f} s of computation")
        if covered[t]:
            continue
        if not complete or left() <= 0:
            complete = False                # out of time: uncovered types stay unknown, never "never selectable"
            continue
        c, _v, status = pricer.solve(w * (1.0 + 0.01 * g.random(T)), force=t, time_left=left())
        if status == "infeasible":
            never[t] = True                 # proven: no quota-feasible panel contains this type
        elif c is None:
            complete = False                # stopped at the time limit without an answer: unknown, not "never"
        else:
            add(c)
            covered |= c > 0
    say(0.0, f"{len(panels)} initial panels")

    # 4. column generation on the primal master (persistent HiGHS LP over panel weights q_P and the level z)
    unknown = ~covered & ~never                # types the covering pass could not reach in time
    master = _Master(N, ~never & ~unknown)
    for c in panels:
        master.add_panel(c)
    fixed = never | unknown
    f = np.zeros(T)
    levels: list[tuple[float, int]] = []
    lowered = 0
    z = 0.0
    center, center_ub = None, math.inf
    last_say = time.perf_counter()
    n_people = float(N.sum())
    while complete and not fixed.all():
        if left() <= 0:
            complete = False
            break
        status = master.solve(left())
        if status == "time_limit":
            complete = False                   # the solver stopped at the limit: report what is fixed so far
            break
        if status != "optimal":
            # 5. round-off safeguard: fixed levels slightly too high make the master infeasible
            fx = fixed & ~never & ~unknown
            f[fx] -= 1e-6
            lowered += 1
            for t in np.flatnonzero(fx):
                master.fix(int(t), f[t])
            if lowered > 20:
                raise RuntimeError("leximin master LP keeps failing after lowering the fixed levels")
            continue
        z, yv, yhat = master.level, master.y, master.yhat

        def take(cands) -> bool:
            """Add every new panel that beats ŷ at the master's duals (positive reduced cost)."""
            took = False
            for e in cands:
                if e is not None and float(yv @ (e / N)) > yhat + tol and add(e):
                    master.add_panel(e)
                    took = True
            return took

        if center is not None and SMOOTHING > 0:
            # dual smoothing (Wentges 1997): price at a point between the best dual bound so far and the master's
            # duals; the master's duals jump between the many optimal dual solutions of this degenerate LP
            ys = SMOOTHING * center + (1.0 - SMOOTHING) * yv
            c, val, status = pricer.solve(ys / N, above=-math.inf, time_left=left())
            if status != "optimal":
                complete = False
                break
            ub = pricer.bound - float(f[fixed] @ ys[fixed])    # any dual point bounds z from above
            if ub < center_ub:
                center, center_ub = ys, ub
            if take([c, *pricer.extra]):
                continue
        c, val, status = pricer.solve(yv / N, above=yhat + tol, time_left=left())
        if status != "optimal":
            complete = False                   # no proof either way: stop with an honest partial result
            break
        if c is not None and val > yhat + tol and take([c, *pricer.extra]):
            ub = pricer.bound - float(f[fixed] @ yv[fixed])
            if center is None or ub < center_ub:
                center, center_ub = yv, ub
        else:
            for t in _settle_level(yv, z, fixed, f, levels, N, tol):
                master.fix(int(t), z)
            center, center_ub = None, math.inf              # the duals of the next level live on other types
            if fixed.all():
                break
        now = time.perf_counter()
        if now - last_say > 0.5:
            last_say = now
            share = float(N[fixed].sum() / n_people)
            say(share, f"{share:.0%} of people fixed · level {z:.4f} · {len(panels)} panels · "
                       f"{time.process_time() - t0:.0f} s of computation")
    lp_solves = master.solves + relax_lps
    if not complete:
        f[~fixed & ~unknown] = z
        f[unknown] = 0.0
    if not panels:              # out of time before the first panel: an honest, empty partial result
        tt = pd.DataFrame(uniq, columns=features)
        tt["people"] = sizes
        tt["probability"] = 0.0
        tt["expected seats"] = 0.0
        return PanelDistribution(
            person_ids=ids, probabilities=np.zeros(len(ids)), type_index=tp, type_table=tt,
            panels=np.zeros((0, T), dtype=np.int64), panel_probabilities=np.zeros(0), levels=(),
            never_selectable=tuple(i for i, t in zip(ids, tp) if never[t]), residual=math.nan, complete=False,
            lp_solves=lp_solves + 1 + pricer.relax_solves, ilp_solves=pricer.solves + 2 + relax_mips,
            seconds=time.process_time() - t0, upper_min=bound.get("upper", math.nan),
            stopped="cpu" if left() <= 0 else "work")
    # the master's last weights meet every fixed level and z: the lottery to report if the final LP stalls
    held = None
    w = getattr(master, "q", None)
    if w is not None and w.sum() > 0:
        w = w / w.sum()
        held = (w, max(0.0, float(np.max(f - (w @ np.array(panels[:w.size], dtype=float)) / N))))
    return _distribution(ids, tp, features, uniq, sizes, panels, f, levels, never, complete=complete,
                         lp_solves=lp_solves + 1 + pricer.relax_solves, ilp_solves=pricer.solves + 2 + relax_mips,
                         t0=t0, say=say, lowered=lowered, held=held, upper_min=bound.get("upper", math.nan),
                         stopped="" if complete else ("cpu" if left() <= 0 else "work"))


def _leximin_by_relaxation(A, lo, hi, N, k, pricer: _Pricer, g, left, say, add, panels, tol, bound=None):
    """(f, levels, never, (lottery, shortfall), LP solves, MIPs) when a lottery over panels reaches the relaxation's
    leximin, else Nones and the counts, with the panels found left in ``panels`` for the column generation."""
    T = len(N)
    miss = (None, None, None, None)
    rel = _relaxed_leximin(A, lo, hi, N, k, left)
    if rel is None:
        return (*miss, None, 0, 0)
    f, levels, lps = rel
    if bound is not None and levels:
        bound["upper"] = float(levels[0][0])        # no lottery's smallest chance (among selectable people) is higher
    say(0.0, f"the relaxation's leximin has {len(levels)} levels; building panels")
    found, n_lp, mips = _face_panels(f * N, A, lo, hi, N, k, g, left, lambda m: say(0.0, m))
    lps += n_lp
    for c in found:
        add(c)
    if not panels:
        return (*miss, lps, mips)
    # types at zero in the relaxation can be in no panel; each is proven so by the MIP, as the column generation does
    never = f <= 1e-12
    for t in np.flatnonzero(never):
        _c, _v, status = pricer.solve(np.ones(T), force=int(t), time_left=left())
        if status != "infeasible":
            return (*miss, lps, mips)
    f = np.where(never, 0.0, f)
    master = _Master(N, np.ones(T, dtype=bool))
    for opt, value in _HIGHS_OPTIONS.items():     # its weights are the lottery: HiGHS's 1e-7 let chances slip 7e-8
        master.h.setOptionValue(opt, value)
    for c in panels:
        master.add_panel(c)
    master.aim(f)
    def push(stop: float, price_tol: float) -> bool:
        """Solve and price until the master's z ≥ ``stop``; False when no panel improves it or time runs out."""
        while left() > 0:
            if master.solve(left()) != "optimal":
                return False
            if master.level >= stop:
                return True
            yv, yhat = master.y, master.yhat
            c, _val, status = pricer.solve(yv / N, above=yhat + price_tol, time_left=left())
            if status != "optimal" or c is None:
                return False                # no panel brings the lottery closer
            took = False
            for e in [c, *pricer.extra]:
                if float(yv @ (e / N)) > yhat + price_tol and add(e):
                    master.add_panel(e)
                    took = True
            if not took:
                return False
        return False

    reached = push(-REACH_TOL, tol)                 # False: the relaxation is out of reach (or out of time)
    lps += master.solves
    if not reached:
        return (*miss, lps, mips)
    # the master's own weights are the lottery: they reach f within REACH_TOL (a new LP over them can stall)
    q = np.clip(np.asarray(master.h.getSolution().col_value)[1:], 0.0, None)
    q /= q.sum()
    short = float(np.max(f - (q @ np.array(panels, dtype=float)) / N))       # recomputed, not the solver's z
    if short > 2 * REACH_TOL:                      # (twice: HiGHS's own feasibility tolerance comes on top)
        return (*miss, lps, mips)
    return f, levels, never, (q, max(0.0, short)), lps, mips


def _distribution(ids, tp, features, uniq, sizes, panels, f, levels, never, *, complete: bool, lp_solves: int,
                  ilp_solves: int, t0: float, say, lowered: int = 0, lottery=None, held=None,
                  upper_min: float = math.nan, stopped: str = "") -> PanelDistribution:
    """The lottery over ``panels`` closest to the chances f (spec §6 step 6), or the given (lottery, shortfall),
    and the distribution it gives. ``held`` (weights over the first panels, shortfall) is used if that LP stalls."""
    N = sizes.astype(float)
    P = np.array(panels, dtype=np.int64)
    if lottery is None:
        try:
            lottery = _final_lottery(P, N, f)
        except RuntimeError:
            if held is None:
                raise
            lottery = (np.concatenate([held[0], np.zeros(len(P) - held[0].size)]), held[1])
    q, s = lottery
    keep = q > 1e-9
    P, q = P[keep], q[keep] / q[keep].sum()
    pt = (q[:, None] * P).sum(axis=0) / N
    probs = pt[tp]
    tt = pd.DataFrame(uniq, columns=features)
    tt["people"] = sizes
    tt["probability"] = pt
    tt["expected seats"] = pt * N
    never_ids = tuple(i for i, t in zip(ids, tp) if never[t])
    say(1.0, "done")
    return PanelDistribution(
        person_ids=ids, probabilities=probs, type_index=tp, type_table=tt, panels=P, panel_probabilities=q,
        levels=tuple(levels), never_selectable=never_ids, residual=s + lowered * 1e-6, complete=complete,
        lp_solves=lp_solves, ilp_solves=ilp_solves, seconds=time.process_time() - t0, upper_min=upper_min,
        stopped=stopped)


def draw_panel(dist: PanelDistribution, *, rng) -> tuple[str, ...]:
    """Draw a panel: P ~ q, then c_{P,t} members of each type uniformly without replacement (spec §6 step 8)."""
    g = as_generator(rng)
    p = int(g.choice(len(dist.panel_probabilities), p=dist.panel_probabilities))
    c = dist.panels[p]
    chosen = []
    for t in np.flatnonzero(c):
        members = np.flatnonzero(dist.type_index == t)
        chosen += g.choice(members, size=int(c[t]), replace=False).tolist()
    return tuple(dist.person_ids[i] for i in sorted(chosen))


def panel_quota_table(pool: pd.DataFrame, quotas: Sequence[Quota], members: Sequence[str], *,
                      id_col: str = "person_id") -> pd.DataFrame:
    """For a drawn panel: each quota, the number of members with that value, and whether it is met."""
    sel = pool[pool[id_col].astype(str).str.strip().isin(set(members))]
    rows = []
    for q in quotas:
        cnt = int((sel[q.feature].astype(str).str.strip() == q.value).sum())
        rows.append({"feature": q.feature, "value": q.value, "min": q.min, "max": q.max, "on panel": cnt,
                     "met": q.min <= cnt <= q.max})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class SelectionMetrics:
    """Summary of selection probabilities (spec §6 "Metrics")."""

    minimum: float
    maximum: float
    mean: float
    gini: float
    geometric_mean: float
    share_below_equal: float
    n_zero: int
    n_panels: int


def gini(values) -> float:
    """Gini coefficient Σ_i (2i − n − 1)·π_(i) / (n·Σπ), π sorted ascending (0 for an all-zero vector)."""
    v = np.sort(np.asarray(values, dtype=float))
    n = v.size
    if n == 0 or v.sum() == 0:
        return 0.0
    i = np.arange(1, n + 1)
    return float(((2 * i - n - 1) * v).sum() / (n * v.sum()))


def selection_metrics(dist_or_probabilities, *, k: int) -> SelectionMetrics:
    """Min, max, mean (= k/n), Gini, geometric mean, share below k/n, number at 0 and panels in the support."""
    if isinstance(dist_or_probabilities, PanelDistribution):
        p = dist_or_probabilities.probabilities
        npan = int((dist_or_probabilities.panel_probabilities > 1e-9).sum())
    else:
        p = np.asarray(dist_or_probabilities, dtype=float)
        npan = 0
    n = p.size
    eq = k / n
    gm = 0.0 if np.any(p <= 0) else float(np.exp(np.log(p).mean()))
    return SelectionMetrics(minimum=float(p.min()), maximum=float(p.max()), mean=float(p.mean()), gini=gini(p),
                            geometric_mean=gm, share_below_equal=float((p < eq - 1e-9).mean()),
                            n_zero=int((p <= 1e-12).sum()), n_panels=npan)


#: Fewest accepted panels for the uniform baseline: with fewer, a person's estimated chance (about k/n ± its
#: standard error √(p/A)) is too rough for "x% of volunteers below" (issue 34: 25 accepted panels gave 62% with one
#: seed and 43% with another).
MIN_ACCEPTED = 1_000
#: Batches of accepted panels kept apart for the batch bootstrap of the baseline's shares.
BASELINE_BATCHES = 20
#: Working memory of one batch of random panels (the draws' keys and the quota counts).
BASELINE_BATCH_BYTES = 32 * 2**20


@dataclass(frozen=True)
class UniformBaseline:
    """Uniform over quota-meeting panels, estimated by rejection sampling: per-person chances (None when too few
    panels were accepted), how many of how many random panels met the quotas, and the accepted hits in
    BASELINE_BATCHES batches (for :meth:`share_below`'s interval)."""

    probabilities: np.ndarray | None
    accepted: int
    draws: int
    batch_hits: np.ndarray
    batch_counts: np.ndarray

    @property
    def acceptance(self) -> float:
        return self.accepted / self.draws if self.draws else 0.0

    def share_below(self, threshold: float, *, level: float = 0.95, replicates: int = 400,
                    rng=0) -> tuple[float, float, float]:
        """(share, low, high): the share of people whose estimated chance is below ``threshold`` and a ``level``
        percentile interval from a bootstrap over the batches of accepted panels (the batches are independent, so
        resampling them carries the sampling error of every person's estimate into the share) [derived]."""
        if self.probabilities is None:
            raise ValueError("Too few accepted samples for an estimate.")
        share = float((self.probabilities < threshold - 1e-9).mean())
        g = as_generator(rng)
        B = len(self.batch_counts)
        picks = g.integers(0, B, size=(int(replicates), B))
        reps = []
        for row in picks:
            c = self.batch_counts[row].sum()
            if c == 0:
                continue
            reps.append(float(((self.batch_hits[row].sum(axis=0) / c) < threshold - 1e-9).mean()))
        a = (1 - level) / 2
        return share, float(np.quantile(reps, a)), float(np.quantile(reps, 1 - a))


def uniform_baseline(pool, quotas, *, k: int, n_draws: int = 100_000, rng=None,
                     min_accepted: int = MIN_ACCEPTED) -> UniformBaseline:
    """Uniform over quota-feasible panels by rejection sampling of k-subsets, with its acceptance (issue 34).

    Draws ``n_draws`` uniform k-subsets in batches of at most BASELINE_BATCH_BYTES and keeps those meeting every
    quota. ``probabilities`` is None when fewer than ``min_accepted`` were accepted: the estimate is then
    unavailable ("too few accepted samples"), never shown. Baseline of spec §6 [derived].
    """
    features, uniq, sizes, tp, A, lo, hi = _quota_structure(pool, quotas, k)
    n_draws = check_size(n_draws, name="n_draws")
    g = as_generator(rng)
    n = len(pool)
    M = A[:, tp].T.astype(np.int16)           # person × quota row membership
    per_draw = 8 * n + 2 * k * max(1, len(lo)) + 8 * k
    step = int(max(1, min(5_000, BASELINE_BATCH_BYTES // per_draw)))
    hits = np.zeros((BASELINE_BATCHES, n))
    counts = np.zeros(BASELINE_BATCHES)
    accepted = 0
    for start in range(0, n_draws, step):
        b = min(step, n_draws - start)
        idx = np.argpartition(g.random((b, n)), k - 1, axis=1)[:, :k]
        cnt = M[idx].sum(axis=1)
        ok = np.flatnonzero(np.all((cnt >= lo) & (cnt <= hi), axis=1))
        for j, row in enumerate(ok):
            batch = (accepted + j) % BASELINE_BATCHES
            hits[batch, idx[row]] += 1.0
            counts[batch] += 1
        accepted += int(ok.size)
    probs = hits.sum(axis=0) / accepted if accepted >= max(1, int(min_accepted)) else None
    return UniformBaseline(probabilities=probs, accepted=accepted, draws=n_draws, batch_hits=hits,
                           batch_counts=counts)


def uniform_panel_baseline(pool, quotas, *, k: int, n_draws: int = 100_000, rng=None,
                           min_acceptance: float = 1e-4) -> np.ndarray | None:
    """Selection probabilities of "uniform over quota-feasible panels", by rejection sampling of k-subsets.

    Returns per-person probabilities (pool order), or None when the acceptance rate is below ``min_acceptance``
    (quota-feasible panels are too rare for rejection sampling). Baseline of spec §6 [derived]. The page uses
    :func:`uniform_baseline`, which also reports acceptance and refuses too few accepted samples.
    """
    b = uniform_baseline(pool, quotas, k=k, n_draws=n_draws, rng=rng, min_accepted=1)
    if b.accepted == 0 or b.acceptance < min_acceptance:
        return None
    return b.probabilities


# ---------------------------------------------------------------------------------------------------------
# Presets (spec §8, §11)
# ---------------------------------------------------------------------------------------------------------

#: Features of the synthetic volunteer pool: value → (population share, pool share) (spec §8).
VOLUNTEER_FEATURES: dict[str, dict[str, tuple[float, float]]] = {
    "gender": {"female": (.50, .42), "male": (.48, .56), "other": (.02, .02)},
    "age": {"16-29": (.24, .12), "30-44": (.25, .22), "45-64": (.31, .36), "65+": (.20, .30)},
    "region": {"north": (.22, .18), "south": (.20, .20), "east": (.18, .14), "west": (.22, .30),
               "centre": (.18, .18)},
    "education": {"none/school": (.35, .18), "vocational": (.33, .30), "degree": (.32, .52)},
    "ethnicity": {"A": (.80, .86), "B": (.08, .06), "C": (.07, .05), "D": (.05, .03)},
    "area": {"urban": (.78, .80), "rural": (.22, .20)},
}


def volunteer_pool(n: int = 500, rng=1) -> pd.DataFrame:
    """Synthetic volunteer pool (ids P0000…; each feature drawn independently at the pool shares, in order)."""
    g = as_generator(rng)
    df = pd.DataFrame({"person_id": [f"P{i:04d}" for i in range(n)]})
    for feat, vals in VOLUNTEER_FEATURES.items():
        names = list(vals)
        p = np.array([vals[v][1] for v in names])
        df[feat] = g.choice(names, size=n, p=p / p.sum())
    return df


def volunteer_quotas(k: int = 40, tolerance: float = 0.1) -> list[Quota]:
    """Quotas [floor(k·s(1−tol)), ceil(k·s(1+tol))] around the population share s of every value (spec §8)."""
    out = []
    for feat, vals in VOLUNTEER_FEATURES.items():
        for v, (s, _pool) in vals.items():
            out.append(Quota(feat, v, int(math.floor(k * s * (1 - tolerance) + 1e-9)),
                             int(math.ceil(k * s * (1 + tolerance) - 1e-9))))
    return out


#: Value grids of the random pool (spec §11 "Random"): coarse grids make ties between groups.
VALUE_GRIDS = (0.1, 0.01)


def random_values(n: int, m: int, *, grid: float, rng=None) -> np.ndarray:
    """A random pool's values: n × m uniform draws on [0, 1] rounded to multiples of ``grid`` (one of VALUE_GRIDS).

    The same ``rng`` seed gives the same pool, so a link or a script reproduces it. Values are
    ``round(u / grid) · grid`` (0 and 1 included, each with half the weight of an inner grid point).
    """
    n, m = check_size(n, name="n"), check_size(m, name="m")
    if grid not in VALUE_GRIDS:
        raise ValueError(f"grid must be one of {', '.join(map(str, VALUE_GRIDS))}, got {grid!r}.")
    return np.round(as_generator(rng).random((n, m)) / grid) * grid


def tiny_pool() -> pd.DataFrame:
    """LX9 "Tiny example": 12 people (P01 F young; P02–P04 M young; P05–P09 F old; P10–P12 M old)."""
    spec = [("F", "young")] + [("M", "young")] * 3 + [("F", "old")] * 5 + [("M", "old")] * 3
    return pd.DataFrame({"person_id": [f"P{i:02d}" for i in range(1, 13)],
                         "gender": [s[0] for s in spec], "age": [s[1] for s in spec]})


def tiny_quotas() -> list[Quota]:
    """LX9 quotas for k = 4: gender F [2,2], M [2,2]; age young [2,2], old [2,2]."""
    return [Quota("gender", "F", 2, 2), Quota("gender", "M", 2, 2), Quota("age", "young", 2, 2),
            Quota("age", "old", 2, 2)]
