"""Fair-selection objectives side by side: leximin, maximin, Nash welfare, Goldilocks and the legacy greedy draw.

Every objective is a lottery over quota-feasible panels on the same pool and quotas; the panels are count vectors
over *types* (people with the same quota values), as in :func:`dpdash.sortition.core.leximin_panels`, and within a
type the seats go to members uniformly at random, so everyone of a type has the same chance. All objectives are
symmetric within a type and concave (or convex to minimise), so an optimum with equal chances inside each type
exists and the aggregation loses nothing.

Sources
-------
[F21] Flanigan, Gölz, Gupta, Hennig, Procaccia, "Fair algorithms for selecting citizens' assemblies", Nature 596
      (2021): leximin and maximin by column generation, Nash welfare (maximise Σ_i log π_i), the legacy greedy
      algorithm of the Sortition Foundation as the baseline.
[BF24] Baharav, Flanigan, "Fair, manipulation-robust, and transparent sortition", arXiv 2406.15009: Goldilocks_γ
      minimises (n/k)·max_i π_i + γ·(k/n)/min_i π_i ("True Goldilocks"; their code's
      ``find_opt_distribution_true_gold``: objective balance·x + y/balance with y ≥ γ/π_i, balance = n/k).
[SA]  sortition-algorithms (Sortition Foundation), ``committee_generation/legacy.py``: the legacy draw picks, k
      times, the feature value with the largest (min − selected)/remaining (ties: the first in quota order), then a
      uniformly random remaining person with that value; values that reach their max remove their remaining
      people; an attempt that runs out of people or misses a minimum is retried from scratch.

Method
------
Leximin is :func:`core.leximin_panels`. Maximin, Nash and Goldilocks are solved by column generation started
from the leximin's panels (which cover every type that can be selected): a master problem over the panels found
(an LP with HiGHS for maximin; a convex program with cvxpy/Clarabel for Nash and Goldilocks), then a pricing MIP
(HiGHS through ``scipy.optimize.milp``) looks for a panel whose reduced cost improves the master; none means the
master's lottery is optimal over all panels. For Nash the pricing value also bounds the gap: for a concave f,
f(π*) − f(π) ≤ max_P ∇f(π)·(π_P − π) = max_P Σ_t c_{P,t}/π_t − n (Frank–Wolfe gap) [derived].
The legacy draw is estimated by Monte Carlo with a stated 95% uncertainty. Every solve is bounded by a CPU budget
(``cpu_limit_s``, checked between steps and passed to each solver as its time limit); a run that stops says so
in ``message`` and has ``complete=False``.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.optimize import linprog
from scipy.special import gammaln

from dpdash.common.validation import as_generator
from dpdash.sortition import core

__all__ = ["OBJECTIVES", "QuotaInstance", "quota_instance", "ObjectiveResult", "ObjectiveComparison",
           "compare_objectives", "leximin_lottery", "maximin_lottery", "nash_lottery", "goldilocks_lottery",
           "legacy_greedy", "lottery_entropy_bits", "result_from_lottery"]

#: Objectives in the order the comparison lists them.
OBJECTIVES = ("leximin", "maximin", "nash", "goldilocks", "legacy")
#: Pricing threshold: a panel improves the master only if its reduced cost beats the current best by this much.
PRICE_TOL = 1e-7
#: Nash stops when the Frank–Wolfe gap per person is below this (the geometric mean is then within a factor
#: exp(NASH_GAP) ≈ 1 + 1e-6 of the optimum).
NASH_GAP = 1e-6
#: A reduced cost this small (relative) on a panel already in the master is the master solver's round-off.
ROUNDOFF_TOL = 1e-5
#: Most rounds of column generation for one objective (each round adds at least one new panel).
MAX_ROUNDS = 2_000
#: Frank–Wolfe steps (one pricing MIP each) between two Nash master solves.
NASH_INNER_STEPS = 10


@dataclass(frozen=True)
class QuotaInstance:
    """A pool aggregated into types: ``sizes[t]`` people share the quota values ``types[t]``; ``A[r, t]`` is 1
    when type t has quota r's value; ``lo``/``hi`` the quota bounds; ``type_index[i]`` person i's type."""

    person_ids: tuple[str, ...]
    features: tuple[str, ...]
    types: tuple[tuple[str, ...], ...]
    sizes: np.ndarray
    type_index: np.ndarray
    A: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    k: int

    @property
    def n(self) -> int:
        return int(self.sizes.sum())


def quota_instance(pool: pd.DataFrame, quotas: Sequence[core.Quota], *, k: int,
                   id_col: str = "person_id") -> QuotaInstance:
    """Aggregate ``pool`` into types for ``quotas`` (values compared as stripped strings, as core does).

    Raises ValueError with the quota report's words when no panel meets the quotas (and the smallest fix)."""
    if id_col not in pool.columns:
        raise ValueError(f"The pool has no id column {id_col!r}.")
    report = core.check_quotas(pool, quotas, k=k)         # validates the pool, k and the quotas
    if not report.feasible:
        msg = " ".join(report.problems)
        sent = core.relaxation_sentences(report)
        if sent:
            msg += f" Smallest fix ({report.seats_changed} seat(s) changed): " + "; ".join(sent) + "."
        raise ValueError(msg)
    features = tuple(dict.fromkeys(q.feature for q in quotas))
    vals = pool[list(features)].astype(str).apply(lambda s: s.str.strip())
    keys = list(map(tuple, vals.to_numpy().tolist()))
    uniq = sorted(set(keys))
    index = {t: i for i, t in enumerate(uniq)}
    tp = np.array([index[t] for t in keys], dtype=np.int64)
    sizes = np.bincount(tp, minlength=len(uniq)).astype(np.int64)
    fpos = {f: i for i, f in enumerate(features)}
    A = np.array([[1.0 if t[fpos[q.feature]] == q.value else 0.0 for t in uniq] for q in quotas])
    ids = tuple(pool[id_col].astype(str).str.strip())
    return QuotaInstance(person_ids=ids, features=features, types=tuple(uniq), sizes=sizes, type_index=tp, A=A,
                         lo=np.array([q.min for q in quotas], float), hi=np.array([q.max for q in quotas], float),
                         k=int(k))


@dataclass(frozen=True)
class ObjectiveResult:
    """One objective's lottery and its summary (chances as multiples of k/n too).

    ``panels`` are count vectors over the instance's types, ``panel_probabilities`` their weights (for the legacy
    draw: the sampled compositions and their frequencies). ``uncertainty`` is the 95% half-width of each person's
    chance (0 for an exact lottery; the Monte Carlo's for the legacy draw). ``entropy_bits`` is the entropy of
    the lottery over panels of people as drawn (composition, then members uniformly within each type);
    ``composition_entropy_bits`` that over compositions alone.
    """

    name: str
    probabilities: np.ndarray
    type_probabilities: np.ndarray
    panels: np.ndarray
    panel_probabilities: np.ndarray
    smallest: float
    largest: float
    smallest_ratio: float
    largest_ratio: float
    gini: float
    geometric_mean: float
    entropy_bits: float
    composition_entropy_bits: float
    share_below_half: float
    cpu_seconds: float
    complete: bool
    message: str
    uncertainty: float = 0.0
    objective_value: float = math.nan
    details: dict = field(default_factory=dict)


def lottery_entropy_bits(panels: np.ndarray, weights: np.ndarray, sizes: np.ndarray) -> tuple[float, float]:
    """(entropy over panels of people, entropy over compositions) in bits.

    A composition c is drawn with weight q_c and then each of its Π_t C(N_t, c_t) member sets is equally likely,
    so H = H(q) + Σ_c q_c Σ_t log2 C(N_t, c_t) (chain rule) [derived]."""
    q = np.asarray(weights, float)
    keep = q > 0
    q, P = q[keep], np.asarray(panels)[keep]
    hq = float(-(q * np.log2(q)).sum())
    N = np.asarray(sizes, float)
    logc = (gammaln(N + 1)[None, :] - gammaln(P + 1) - gammaln(N[None, :] - P + 1)).sum(axis=1) / math.log(2)
    return hq + float(q @ logc), hq


def result_from_lottery(name: str, inst: QuotaInstance, panels, weights, *, cpu_seconds: float, complete: bool,
                        message: str, uncertainty: float = 0.0, objective_value: float = math.nan,
                        details: dict | None = None) -> ObjectiveResult:
    """Summarise a lottery over compositions into an :class:`ObjectiveResult`."""
    P = np.asarray(panels, dtype=np.int64).reshape(-1, len(inst.sizes))
    q = np.asarray(weights, float)
    q = q / q.sum()
    N = inst.sizes.astype(float)
    pt = (q @ P) / N
    probs = pt[inst.type_index]
    m = core.selection_metrics(probs, k=inst.k)
    eq = inst.k / inst.n
    h, hc = lottery_entropy_bits(P, q, inst.sizes)
    return ObjectiveResult(
        name=name, probabilities=probs, type_probabilities=pt, panels=P, panel_probabilities=q,
        smallest=m.minimum, largest=m.maximum, smallest_ratio=m.minimum / eq, largest_ratio=m.maximum / eq,
        gini=m.gini, geometric_mean=m.geometric_mean, entropy_bits=h, composition_entropy_bits=hc,
        share_below_half=float((probs < 0.5 * eq - 1e-12).mean()), cpu_seconds=float(cpu_seconds),
        complete=bool(complete), message=message, uncertainty=float(uncertainty),
        objective_value=float(objective_value), details=dict(details or {}))


# ---------------------------------------------------------------------------------------------------------
# Column generation shared by maximin, Nash and Goldilocks
# ---------------------------------------------------------------------------------------------------------

class _Budget:
    """CPU seconds left (time.process_time: the solvers run in this process, single-threaded)."""

    def __init__(self, seconds: float):
        self.t0 = time.process_time()
        self.seconds = float(seconds)

    def used(self) -> float:
        return time.process_time() - self.t0

    def left(self) -> float:
        return self.seconds - self.used()


class _Pricer:
    """Persistent HiGHS MIP over quota-feasible count vectors: max w·c, plus the improving solutions HiGHS met on
    the way (each is a panel too, so one solve can add several columns). Options as core.MIP_OPTIONS (a pricing
    MIP is small and nearly integral: presolve and primal heuristics cost more than they save).

    HiGHS's time limit counts wall time, which under load runs ahead of CPU time: it then stops early, never
    late."""

    def __init__(self, inst: QuotaInstance):
        import highspy

        self.hp = highspy
        T = self.T = len(inst.sizes)
        self.cols = np.arange(T, dtype=np.int32)
        h = self.h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        h.setOptionValue("mip_rel_gap", 1e-9)
        h.setOptionValue("mip_improving_solution_save", True)
        for opt, value in core.MIP_OPTIONS.items():
            h.setOptionValue(opt, value)
        h.addVars(T, np.zeros(T), inst.sizes.astype(float))
        h.changeColsIntegrality(T, self.cols, np.array([highspy.HighsVarType.kInteger] * T))
        h.addRow(float(inst.k), float(inst.k), T, self.cols, np.ones(T))
        for r in range(inst.A.shape[0]):
            idx = np.flatnonzero(inst.A[r]).astype(np.int32)
            h.addRow(float(inst.lo[r]), float(inst.hi[r]), idx.size, idx, np.ones(idx.size))
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)

    def solve(self, w, budget: "_Budget"):
        """(c, value, extras, "optimal" | "stopped")."""
        h = self.h
        w = np.asarray(w, float)
        h.changeColsCost(self.T, self.cols, w)
        h.setOptionValue("time_limit", float(h.getRunTime()) + max(1e-3, budget.left()))
        h.run()
        if h.getModelStatus() != self.hp.HighsModelStatus.kOptimal:
            return None, None, [], "stopped"
        c = np.round(np.asarray(h.getSolution().col_value)).astype(np.int64)
        extras = [np.round(np.asarray(e.col_value)).astype(np.int64) for e in h.getSavedMipSolutions()]
        return c, float(w @ c), extras, "optimal"


def _start_panels(inst: QuotaInstance, panels) -> tuple[list[np.ndarray], np.ndarray]:
    """Distinct start panels and the types they cover (types no panel covers get chance 0 and are left out)."""
    out, seen = [], set()
    for c in np.asarray(panels, dtype=np.int64):
        key = c.tobytes()
        if key not in seen:
            seen.add(key)
            out.append(c)
    covered = np.zeros(len(inst.sizes), dtype=bool)
    for c in out:
        covered |= c > 0
    return out, covered


def _column_generation(inst, panels, covered, master, budget: _Budget, *, gap_of=None, inner=None):
    """Run master → price → add until no panel improves the master (or the budget/round limit stops it).

    ``master(P)`` returns (q, w, thr, value): the lottery over the rows of P, the per-type pricing weights w and
    the threshold thr (a panel improves when w·c > thr + PRICE_TOL·scale). ``gap_of(best, thr)`` may declare
    convergence earlier (Nash's Frank–Wolfe gap). ``inner(P, q, c, price)`` may return more panels found by cheap
    steps between master solves (Nash). Returns (P, q, value, complete, message, rounds)."""
    P = list(panels)
    seen = {c.tobytes() for c in P}
    pricer = _Pricer(inst)

    def price(w):
        return pricer.solve(np.where(covered, w, 0.0), budget)

    def add(c) -> bool:
        key = np.asarray(c, np.int64).tobytes()
        if key in seen:
            return False
        seen.add(key)
        P.append(np.asarray(c, np.int64))
        return True

    q = np.full(len(P), 1.0 / len(P))
    value = math.nan
    for rounds in range(1, MAX_ROUNDS + 1):
        q = np.concatenate([q, np.zeros(len(P) - len(q))])     # the last master's lottery, over every column
        if budget.left() <= 0:
            return np.array(P), q, value, False, (f"Stopped at the CPU limit ({budget.seconds:g} s) after "
                                                  f"{rounds - 1} rounds; the lottery is the best found so far."), rounds
        out = master(np.array(P))
        if out is None:
            return np.array(P), q, value, False, ("The master problem did not solve within the CPU limit; the "
                                                  "lottery is the best found so far."), rounds
        q, w, thr, value = out
        w = np.where(covered, w, 0.0)
        c, best, extras, status = price(w)
        if status != "optimal":
            msg = (f"The search for a better panel stopped at the CPU limit ({budget.seconds:g} s); the lottery is "
                   "the best found so far.")
            return np.array(P), q, value, False, msg, rounds
        scale = max(1.0, abs(thr))
        if gap_of is not None and gap_of(best, thr):
            return np.array(P), q, value, True, "Optimal (the duality gap is below its tolerance).", rounds
        if best <= thr + PRICE_TOL * scale:
            return np.array(P), q, value, True, "Optimal: no panel improves the lottery.", rounds
        took = add(c)
        for e in extras:
            if float(w @ e) > thr + PRICE_TOL * scale:
                took = add(e) or took
        if inner is not None:
            for e in inner(np.array(P[:len(q)]), q, c, price):
                took = add(e) or took
        if not took:
            # every improving panel is already a column: the master's solution is off by round-off
            ok = best - thr <= ROUNDOFF_TOL * scale
            return np.array(P), q, value, ok, ("Optimal within round-off (the best panel is already in the "
                                               f"lottery; reduced cost {best - thr:.1e})." if ok else
                                               "The best panel is already in the lottery but the solvers disagree "
                                               f"about its value by {best - thr:.1e}; the lottery is the best "
                                               "found."), rounds
    return np.array(P), q, value, False, f"Stopped after {MAX_ROUNDS} rounds of column generation.", MAX_ROUNDS


def _support_threshold(P: np.ndarray, w: np.ndarray) -> float:
    """The master's dual convexity value read off its columns: at an optimum every column has w·c ≤ μ, with
    equality on the support, so μ = max over the columns (robust to the solver's sign conventions)."""
    return float(np.max(P @ w))


def maximin_lottery(inst: QuotaInstance, panels, *, cpu_limit_s: float = 120.0) -> ObjectiveResult:
    """Maximin [F21]: maximise the smallest chance among the types that can be selected.

    The lottery returned is the LP's optimal vertex; only its smallest chance is determined by the objective
    (the other chances are whatever that vertex gives, which is why leximin refines it)."""
    budget = _Budget(cpu_limit_s)
    P0, covered = _start_panels(inst, panels)
    N = inst.sizes.astype(float)
    idx = np.flatnonzero(covered)

    def master(P):
        m = len(P)
        M = (P[:, idx] / N[idx]).T                       # types × panels
        c = np.concatenate([np.zeros(m), [-1.0]])       # maximise z
        A_ub = sp.hstack([sp.csr_matrix(-M), np.ones((idx.size, 1))]).tocsr()   # z − Σ q c/N ≤ 0 (panels are sparse)
        res = linprog(c, A_ub=A_ub, b_ub=np.zeros(idx.size),
                      A_eq=np.concatenate([np.ones(m), [0.0]])[None, :], b_eq=[1.0],
                      bounds=[(0, None)] * m + [(None, None)], method="highs",
                      options={"time_limit": max(1e-3, budget.left()), "primal_feasibility_tolerance": 1e-10,
                               "dual_feasibility_tolerance": 1e-10})
        if res.status != 0:
            return None
        y = np.zeros(len(N))
        y[idx] = np.clip(-res.ineqlin.marginals, 0.0, None)
        w = y / N
        return np.clip(res.x[:m], 0.0, None), w, _support_threshold(P, w), float(res.x[-1])

    P, q, value, complete, msg, rounds = _column_generation(inst, P0, covered, master, budget)
    return result_from_lottery("maximin", inst, P, q, cpu_seconds=budget.used(), complete=complete, message=msg,
                               objective_value=value, details={"rounds": rounds})


def _cvx_solve(prob, budget: _Budget) -> bool:
    import cvxpy as cp

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")        # "may be inaccurate": the caller recomputes from the lottery
            prob.solve(solver=cp.CLARABEL, time_limit=max(1e-3, budget.left()), max_iter=500, tol_gap_abs=1e-10,
                       tol_gap_rel=1e-10, tol_feas=1e-10)
    except cp.error.SolverError:
        return False
    return prob.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE)


def nash_lottery(inst: QuotaInstance, panels, *, cpu_limit_s: float = 120.0) -> ObjectiveResult:
    """Nash welfare [F21]: maximise Σ_i log π_i over the people who can be selected (the geometric mean of their
    chances). The chances are unique (strictly concave in π); the objective value reported is Σ_i log π_i."""
    import cvxpy as cp

    budget = _Budget(cpu_limit_s)
    P0, covered = _start_panels(inst, panels)
    N = inst.sizes.astype(float)
    idx = np.flatnonzero(covered)
    n_cov = float(N[idx].sum())

    def master(P):
        m = len(P)
        M = (P[:, idx] / N[idx]).T
        q = cp.Variable(m, nonneg=True)
        pi = M @ q
        prob = cp.Problem(cp.Maximize(N[idx] @ cp.log(pi)), [cp.sum(q) == 1])
        if not _cvx_solve(prob, budget):
            return None
        qv = np.clip(q.value, 0.0, None)
        qv /= qv.sum()
        piv = np.maximum(M @ qv, 1e-300)
        w = np.zeros(len(N))
        w[idx] = 1.0 / piv                              # ∂/∂q_P Σ_t N_t log π_t = Σ_t c_{P,t}/π_t
        return qv, w, n_cov, float(N[idx] @ np.log(piv))

    def gap_small(best, thr):
        return best - thr <= NASH_GAP * n_cov

    def inner(P, q, c, price):
        """Frank–Wolfe steps with exact line search between master solves: each prices at the moved chances and
        yields its panel, so one (costly) master solve gets several columns."""
        pi = (q @ P) / N
        found = []
        for _ in range(NASH_INNER_STEPS):
            d = c / N - pi
            lo_, hi_ = 0.0, 1.0
            for _b in range(50):                      # bisection on the derivative of the concave step function
                mid = 0.5 * (lo_ + hi_)
                if float(np.sum(N[idx] * d[idx] / (pi[idx] + mid * d[idx]))) > 0:
                    lo_ = mid
                else:
                    hi_ = mid
            pi = pi + lo_ * d
            if budget.left() <= 0:
                break
            w = np.zeros(len(N))
            w[idx] = 1.0 / pi[idx]
            c, best, extras, status = price(w)
            if status != "optimal" or best - n_cov <= NASH_GAP * n_cov:
                break
            found.append(c)
            found.extend(e for e in extras if float(w @ e) > n_cov)
        return found

    P, q, value, complete, msg, rounds = _column_generation(inst, P0, covered, master, budget, gap_of=gap_small,
                                                            inner=inner)
    return result_from_lottery("nash", inst, P, q, cpu_seconds=budget.used(), complete=complete, message=msg,
                               objective_value=value, details={"rounds": rounds})


def goldilocks_lottery(inst: QuotaInstance, panels, *, gamma: float = 1.0,
                       cpu_limit_s: float = 120.0) -> ObjectiveResult:
    """Goldilocks_γ [BF24]: minimise (n/k)·max π + γ·(k/n)/min π over the people who can be selected.

    At the uniform chance k/n the objective is 1 + γ; γ weighs the bottom against the top (γ = 1 in [BF24]'s
    tables). Solved as the LP min (n/k)·u + (k/n)·y with ℓ ≤ π_t ≤ u and y above tangent cuts of γ/ℓ (Kelley's
    cutting planes: y ≥ 2γ/ℓ_j − γℓ/ℓ_j², added at each master's ℓ until y is within 1e-9·γ/ℓ of γ/ℓ), with
    column generation on the LP's duals. Same optimum as [BF24]'s second-order cone form y ≥ γ/π_i; a persistent
    HiGHS LP (new panels are columns, new cuts rows, each solve warm-started) instead of a conic program rebuilt
    every round (cvxpy; on the 500-person Volunteer pool the rebuilt master took 34 s CPU)."""
    if isinstance(gamma, bool) or not (isinstance(gamma, (int, float)) and math.isfinite(gamma) and gamma > 0):
        raise ValueError(f"Goldilocks' γ must be a finite number > 0; got {gamma!r}.")
    gamma = float(gamma)
    budget = _Budget(cpu_limit_s)
    P0, covered = _start_panels(inst, panels)
    N = inst.sizes.astype(float)
    idx = np.flatnonzero(covered)
    bal = inst.n / inst.k
    cuts: list[float] = []
    state = {"added": 0}
    import highspy

    nt = idx.size
    inf = highspy.kHighsInf
    h = highspy.Highs()      # persistent: new panels are new columns, new cuts new rows; each solve starts warm
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("primal_feasibility_tolerance", 1e-10)
    h.setOptionValue("dual_feasibility_tolerance", 1e-10)
    h.addVar(0.0, inf)                                   # column 0: u, the largest chance
    h.addVar(1e-12, 1.0)                                 # column 1: ℓ, the smallest
    h.addVar(0.0, inf)                                   # column 2: y ≥ γ/ℓ through the cuts
    h.changeColsCost(3, np.arange(3, dtype=np.int32), np.array([bal, 0.0, 1.0 / bal]))
    h.addRow(1.0, 1.0, 0, np.zeros(0, np.int32), np.zeros(0))                      # row 0: Σ q = 1
    for _t in range(nt):                                                            # rows 1..nt: ℓ − π_t ≤ 0
        h.addRow(-inf, 0.0, 1, np.array([1], np.int32), np.array([1.0]))
    for _t in range(nt):                                                            # rows nt+1..2nt: π_t − u ≤ 0
        h.addRow(-inf, 0.0, 1, np.array([0], np.int32), np.array([-1.0]))
    rows_lo = np.arange(1, nt + 1, dtype=np.int32)
    rows_hi = rows_lo + nt

    def add_cut(lj: float) -> None:
        # y ≥ 2γ/ℓ_j − γℓ/ℓ_j²  ⟺  −(γ/ℓ_j²)ℓ − y ≤ −2γ/ℓ_j
        cuts.append(lj)
        h.addRow(-inf, -2.0 * gamma / lj, 2, np.array([1, 2], np.int32), np.array([-gamma / lj ** 2, -1.0]))

    add_cut(inst.k / inst.n)

    def master(P):
        for c in P[state["added"]:]:
            v = c[idx] / N[idx]
            nz = np.flatnonzero(v)
            rows = np.concatenate([[0], rows_lo[nz], rows_hi[nz]]).astype(np.int32)
            vals = np.concatenate([[1.0], -v[nz], v[nz]])
            h.addCol(0.0, 0.0, inf, rows.size, rows, vals)
        state["added"] = len(P)
        while True:
            h.setOptionValue("time_limit", float(h.getRunTime()) + max(1e-3, budget.left()))
            h.run()
            if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
                return None
            x = np.asarray(h.getSolution().col_value)
            ell, y = float(x[1]), float(x[2])
            if gamma / ell - y <= 1e-9 * gamma / ell or budget.left() <= 0 or len(cuts) > 500:
                break
            add_cut(ell)                                  # the tangent at this ℓ cuts off the LP's point
        d = np.asarray(h.getSolution().row_dual)
        w = np.zeros(len(N))
        # a row at its upper bound has a dual of one sign; only the magnitudes matter here
        w[idx] = (np.abs(d[rows_lo]) - np.abs(d[rows_hi])) / N[idx]
        qv = np.clip(x[3:], 0.0, None)
        qv /= qv.sum()
        piv = ((qv @ P)[idx]) / N[idx]
        state["cuts"] = len(cuts)
        return qv, w, _support_threshold(P, w), bal * float(piv.max()) + gamma / bal / float(piv.min())

    P, q, value, complete, msg, rounds = _column_generation(inst, P0, covered, master, budget)
    return result_from_lottery("goldilocks", inst, P, q, cpu_seconds=budget.used(), complete=complete,
                               message=msg, objective_value=value,
                               details={"rounds": rounds, "gamma": gamma, "cuts": state.get("cuts", 1)})


# ---------------------------------------------------------------------------------------------------------
# The legacy greedy draw [SA], by Monte Carlo
# ---------------------------------------------------------------------------------------------------------

def _legacy_attempt(inst: QuotaInstance, g: np.random.Generator) -> np.ndarray | None:
    """One attempt of the legacy algorithm on type counts: the composition drawn, or None when it fails."""
    A = inst.A.astype(bool)
    remaining = inst.sizes.astype(np.int64).copy()
    # values with max 0 are pruned first [SA: prune_for_feature_max_0]
    for r in np.flatnonzero(inst.hi == 0):
        remaining[A[r]] = 0
    sel_v = np.zeros(A.shape[0], dtype=np.int64)
    comp = np.zeros(len(remaining), dtype=np.int64)
    for step in range(inst.k):
        rem_v = A.astype(np.int64) @ remaining
        need = inst.lo - sel_v
        if np.any(rem_v < need):
            return None                                  # not enough people left for a minimum: retry
        ok = (rem_v > 0) & (inst.hi > 0)
        if not ok.any():
            return None
        ratio = np.where(ok, need / np.maximum(rem_v, 1), -np.inf)
        r = int(np.argmax(ratio))                        # first maximum in quota order, as [SA]'s strict ">"
        w = np.where(A[r], remaining, 0).astype(float)
        t = int(g.choice(len(w), p=w / w.sum()))         # a uniform remaining person with value r: its type
        comp[t] += 1
        remaining[t] -= 1
        sel_v += A[:, t]
        for rr in np.flatnonzero(A[:, t] & (sel_v >= inst.hi)):
            remaining[A[rr]] = 0                         # the value is full: its remaining people leave
        if step < inst.k - 1 and remaining.sum() == 0:
            return None
    counts = A.astype(np.int64) @ comp
    if np.any(counts < inst.lo) or np.any(counts > inst.hi):
        return None                                      # [SA]'s post-selection check
    return comp


def legacy_greedy(inst: QuotaInstance, *, n_draws: int = 2_000, rng=None, cpu_limit_s: float = 120.0,
                  max_attempts: int = 100) -> ObjectiveResult:
    """The legacy greedy draw [SA] estimated by ``n_draws`` Monte Carlo panels (fewer if the CPU limit stops it).

    Each person's chance is the mean share of their type's seats; ``uncertainty`` is the largest 95% half-width
    (1.96 standard errors of a type's mean count / N_t) over the types. Each draw retries up to ``max_attempts``
    failed attempts, as [SA] does; a draw that fails them all stops the run with that message. The lottery
    reported is the empirical one (sampled compositions and their frequencies), so its entropies are plug-in
    estimates (biased low)."""
    budget = _Budget(cpu_limit_s)
    g = as_generator(rng)
    T = len(inst.sizes)
    comps = []
    fails = 0
    message = ""
    complete = True
    for _ in range(int(n_draws)):
        if budget.left() <= 0:
            complete = False
            message = f"Stopped at the CPU limit ({budget.seconds:g} s) after {len(comps)} draws."
            break
        for _a in range(int(max_attempts)):
            c = _legacy_attempt(inst, g)
            if c is not None:
                comps.append(c)
                break
            fails += 1
        else:
            complete = False
            message = (f"The legacy algorithm failed {max_attempts} attempts in a row (the quotas are tight for "
                       "its greedy order); the estimate uses the draws made before.")
            break
    if not comps:
        raise ValueError(message or "The legacy algorithm made no panel.")
    C = np.array(comps)
    N = inst.sizes.astype(float)
    d = len(C)
    se = C.std(axis=0, ddof=1) / math.sqrt(d) / N if d > 1 else np.full(T, np.inf)
    half = float(1.96 * se.max())
    uniq, counts = np.unique(C, axis=0, return_counts=True)
    if not message:
        message = (f"Estimated from {d} draws ({fails} failed attempts retried); each chance ±{half:.4f} "
                   "(95%).")
    return result_from_lottery("legacy", inst, uniq, counts / d, cpu_seconds=budget.used(), complete=complete,
                               message=message, uncertainty=half,
                               details={"draws": d, "failed_attempts": fails})


# ---------------------------------------------------------------------------------------------------------
# All of them side by side
# ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ObjectiveComparison:
    """The objectives on one pool and quota set, and the instance they share."""

    instance: QuotaInstance
    results: tuple[ObjectiveResult, ...]

    def result(self, name: str) -> ObjectiveResult:
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(name)

    def table(self) -> pd.DataFrame:
        """One row per objective: the columns a comparison table shows."""
        rows = [{"objective": r.name, "smallest chance": r.smallest, "largest chance": r.largest,
                 "smallest ÷ k/n": r.smallest_ratio, "largest ÷ k/n": r.largest_ratio, "Gini": r.gini,
                 "geometric mean": r.geometric_mean, "entropy (bits)": r.entropy_bits,
                 "share below ½ k/n": r.share_below_half, "± (95%)": r.uncertainty, "CPU s": r.cpu_seconds,
                 "complete": r.complete, "note": r.message} for r in self.results]
        return pd.DataFrame(rows)


def leximin_lottery(pool, quotas, inst: QuotaInstance, *, id_col: str = "person_id", rng=None,
                    cpu_limit_s: float = 120.0) -> ObjectiveResult:
    """The leximin of :func:`core.leximin_panels` as an :class:`ObjectiveResult` over ``inst``'s types (its
    ``cpu_limit_s`` is passed on as core's time limit, which counts wall seconds)."""
    c0 = time.process_time()
    dist = core.leximin_panels(pool, quotas, k=inst.k, id_col=id_col, rng=rng, time_limit_s=cpu_limit_s)
    cpu = time.process_time() - c0
    # core's types are the same sorted tuples; map its panel columns onto ours by the type's values
    feats = list(inst.features)
    theirs = [tuple(str(v) for v in row) for row in dist.type_table[feats].itertuples(index=False)]
    pos = {t: i for i, t in enumerate(inst.types)}
    P = np.zeros((len(dist.panels), len(inst.types)), dtype=np.int64)
    for j, t in enumerate(theirs):
        P[:, pos[t]] = dist.panels[:, j]
    msg = ("Exact leximin (column generation with HiGHS)." if dist.complete else
           "Stopped at the time limit: the chances are the best lottery found so far, not the leximin's.")
    return result_from_lottery("leximin", inst, P, dist.panel_probabilities, cpu_seconds=cpu,
                               complete=dist.complete, message=msg, objective_value=float(dist.probabilities.min()),
                               details={"lp_solves": dist.lp_solves, "ilp_solves": dist.ilp_solves,
                                        "wall_seconds": dist.seconds})


def compare_objectives(pool: pd.DataFrame, quotas: Sequence[core.Quota], *, k: int, id_col: str = "person_id",
                       gamma: float = 1.0, objectives: Sequence[str] = OBJECTIVES, cpu_limit_s: float = 120.0,
                       legacy_draws: int = 2_000, rng=None) -> ObjectiveComparison:
    """Every objective in ``objectives`` on the same pool and quotas, each within ``cpu_limit_s`` CPU seconds.

    The leximin always runs first: its panels start the other column generations (they cover every type that
    can be selected). Its CPU time is its own; the others' times exclude it. Infeasible quotas raise ValueError
    with the smallest fix (as :func:`core.leximin_panels`). Sources: see the module docstring."""
    unknown = [o for o in objectives if o not in OBJECTIVES]
    if unknown:
        raise ValueError(f"Unknown objective(s) {', '.join(map(repr, unknown))}; choose from {', '.join(OBJECTIVES)}.")
    g = as_generator(rng)
    inst = quota_instance(pool, quotas, k=k, id_col=id_col)
    lex = leximin_lottery(pool, quotas, inst, id_col=id_col, rng=g, cpu_limit_s=cpu_limit_s)
    out = []
    for name in objectives:
        if name == "leximin":
            out.append(lex)
        elif name == "maximin":
            out.append(maximin_lottery(inst, lex.panels, cpu_limit_s=cpu_limit_s))
        elif name == "nash":
            out.append(nash_lottery(inst, lex.panels, cpu_limit_s=cpu_limit_s))
        elif name == "goldilocks":
            out.append(goldilocks_lottery(inst, lex.panels, gamma=gamma, cpu_limit_s=cpu_limit_s))
        else:
            out.append(legacy_greedy(inst, n_draws=legacy_draws, rng=g, cpu_limit_s=cpu_limit_s))
    return ObjectiveComparison(instance=inst, results=tuple(out))
