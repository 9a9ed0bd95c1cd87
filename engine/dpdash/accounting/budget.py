"""Accuracy-first and budget-first privacy budget planning (in the manner of the Harvard PSI budgeter).

Pure Python (no streamlit). Spec ``epsilon_calculator.md`` §4.4; mechanisms from
``002_802572da4c9a19ad.txt`` (Rogers 2017) Thm 2.1.2 (Laplace) and Thm 2.2.2 (Gaussian, zCDP),
composition from ``dpdash.accounting.composition``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal, Sequence

import numpy as np
from scipy import optimize, stats

from dpdash.accounting import composition as acc
from dpdash.accounting import mechanisms as mech
from dpdash.common.formatting import number
from dpdash.accounting.conversions import (div_up, half_square, margin, pure_epsilon_for_rho, pure_to_zcdp, round_down,
                                           round_up, sigma_for_rho, sum_up)
from dpdash.accounting.mechanisms import Mech, Neighbour, Query
from dpdash.common.search import MAX_STEPS, SearchLimitError, grow_until
from dpdash.common.validation import (ValidationError, check_delta, check_epsilon, check_positive, check_probability,
                                      check_size)

PlanRule = Literal["basic", "advanced", "kov_optimal", "zcdp", "pld"]
PLAN_RULES: tuple[str, ...] = ("basic", "advanced", "kov_optimal", "zcdp", "pld")
ADDITIVE_RULES = ("basic", "zcdp")
MAX_STATISTICS = 50
_SIG = 6  # significant figures kept in allocations


@dataclass(frozen=True)
class StatisticSpec:
    """One statistic to release: its query, clipping bounds, mechanism and target half-width."""

    name: str
    query: Query
    target_half_width: float
    confidence: float = 0.95
    mechanism: Mech = "laplace"
    lower: float = 0.0
    upper: float = 1.0
    n: int | None = None
    cells: int = 1
    neighbour: Neighbour = "replace"
    hold_half_width: float | None = None
    hold_share: float | None = None
    weight: float = 1.0


@dataclass(frozen=True)
class StatisticAllocation:
    """Privacy and accuracy given to one statistic; ``ratio`` = achieved half-width / target."""

    name: str
    epsilon: float
    delta: float
    rho: float | None
    scale: float
    half_width: float
    target_half_width: float
    ratio: float
    held: bool


@dataclass(frozen=True)
class BudgetPlan:
    """A full plan: allocations, the total under the rule, and the budget with its reserve."""

    rule: str
    mode: Literal["accuracy_first", "budget_first"]
    currency: Literal["epsilon", "rho"]
    allocations: tuple[StatisticAllocation, ...]
    epsilon: float
    delta: float
    rho: float | None
    budget: float
    reserved: float
    reserve_fraction: float
    feasible: bool
    message: str


# --------------------------------------------------------------------------- helpers
def _round_sig(x: float, up: bool) -> float:
    """Round to 6 significant figures, up or down, never landing on the wrong side of x."""
    if x == 0 or not math.isfinite(x):
        return x
    e = math.floor(math.log10(abs(x))) - (_SIG - 1)
    q = x / 10.0**e
    r = round(q) if abs(q - round(q)) < 1e-9 else (math.ceil(q) if up else math.floor(q))
    v = float(f"{r}e{e}")
    while up and v < x:
        r += 1
        v = float(f"{r}e{e}")
    while not up and v > x:
        r -= 1
        v = float(f"{r}e{e}")
    return v


def _validate_stats(stats_: Sequence[StatisticSpec]) -> list[StatisticSpec]:
    ss = list(stats_)
    if not ss:
        raise ValueError("the statistics list is empty: add at least one statistic")
    if len(ss) > MAX_STATISTICS:
        raise ValueError(f"at most {MAX_STATISTICS} statistics, got {len(ss)}")
    names = [s.name for s in ss]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"two statistics share the name {sorted(dup)[0]!r}: names must be unique")
    for s in ss:
        check_positive(s.target_half_width, name=f"{s.name}: the target half-width")
        if s.hold_half_width is not None and s.hold_share is not None:
            raise ValueError(f"{s.name}: set either hold ± or hold share, not both")
        if s.hold_half_width is not None:
            check_positive(s.hold_half_width, name=f"{s.name}: hold ±")
        if s.hold_share is not None:
            check_delta(s.hold_share, name=f"{s.name}: hold share", allow_zero=False)  # (0, 1)
        if s.query == "mean" and s.n is None:
            raise ValueError(f"{s.name}: a mean needs n (the public number of records)")
        check_size(s.cells, name=f"{s.name}: cells")
        check_delta(s.confidence, name=f"{s.name}: confidence", allow_zero=False)  # (0, 1)
        check_positive(s.weight, name=f"{s.name}: weight")
        if s.mechanism not in mech.MECHANISMS:
            raise ValueError(f"{s.name}: mechanism must be one of {mech.MECHANISMS}")
        _sens(s)
    return ss


def _reserve(reserve_fraction) -> float:
    """A reserve fraction: a number in [0, 0.95] (narrower than a probability: something must be spendable)."""
    r = check_probability(reserve_fraction, name="reserve_fraction")
    if r > 0.95:
        raise ValidationError(f"reserve_fraction must be a number in [0, 0.95]; got {r!r}")
    return r


def _check_rule(rule: str, delta: float | None = None) -> None:
    if rule not in PLAN_RULES:
        raise ValueError(f"rule must be one of {PLAN_RULES}, got {rule!r}")
    if rule == "pld" and delta is not None and delta < acc.PLD_MIN_DELTA:
        raise ValueError("the PLD rule needs δ ≥ 1e-12 (below that the numeric accountant has no value); "
                         "choose a larger δ or another rule")


def _sens(stat: StatisticSpec) -> float:
    """Δ₁ for the Laplace kinds, Δ₂ for the Gaussian kinds (spec §4.1)."""
    s = mech.query_sensitivity(stat.query, lower=stat.lower, upper=stat.upper, n=stat.n, neighbour=stat.neighbour)
    return s.l1 if stat.mechanism in ("laplace", "discrete_laplace") else s.l2


def _is_int(x: float) -> bool:
    return abs(x - round(x)) < 1e-12


def _cell_conf(stat: StatisticSpec, beta: float | None) -> float:
    if beta is None:
        return stat.confidence
    return 1.0 - beta / stat.cells


def _scale_for_target(stat: StatisticSpec, target: float, conf: float) -> float:
    if stat.mechanism.startswith("discrete") and not _is_int(_sens(stat)) and stat.mechanism == "discrete_laplace":
        raise ValueError(f"{stat.name}: discrete Laplace needs an integer sensitivity")
    return mech.scale_for_half_width(stat.mechanism, half_width=target, confidence=conf)


def _privacy_of_scale(stat: StatisticSpec, scale: float, *, rule: str, delta_i: float) -> float:
    """ε (or ρ under zcdp) of the statistic's mechanism at a given scale."""
    d = _sens(stat)
    if stat.mechanism in ("laplace", "discrete_laplace"):
        eps = d / scale
        return pure_to_zcdp(eps) if rule == "zcdp" else eps
    rho = half_square(d, scale)
    if rule == "zcdp":
        return rho
    if stat.mechanism == "gaussian":
        return mech.gaussian_epsilon(delta_i, sigma=scale, sensitivity=d)
    if _is_int(d):
        return mech.discrete_gaussian_epsilon(delta_i, sigma=scale, sensitivity=int(round(d)))
    return acc.zcdp_to_dp(rho, delta_i)


def _scale_of_privacy(stat: StatisticSpec, privacy: float, *, rule: str, delta_i: float) -> float:
    d = _sens(stat)
    if stat.mechanism in ("laplace", "discrete_laplace"):
        eps = pure_epsilon_for_rho(privacy) if rule == "zcdp" else privacy
        return div_up(d, eps)       # the noise of a budget: Δ/b ≤ ε exactly (issue 36 item 6)
    if rule == "zcdp":
        return sigma_for_rho(privacy, sensitivity=d)
    if stat.mechanism == "gaussian":
        return mech.gaussian_sigma(privacy, delta_i, sensitivity=d)
    if _is_int(d):
        return mech.discrete_gaussian_sigma(privacy, delta_i, sensitivity=int(round(d)))
    return sigma_for_rho(acc.zcdp_rho_for_epsilon(privacy, delta_i), sensitivity=d)


def _as_mechanism(stat: StatisticSpec, scale: float, privacy: float, rule: str, delta_i: float) -> acc.Mechanism:
    """The accounting row for one statistic (worst-case pure/zCDP rows where no exact PLD applies)."""
    d = _sens(stat)
    one_d = stat.query != "histogram"
    if stat.mechanism == "laplace":
        eps = d / scale
        return acc.laplace(eps) if one_d else acc.pure_dp(eps)
    if stat.mechanism == "discrete_laplace":
        return acc.discrete_laplace(scale, int(round(d))) if one_d and _is_int(d) else acc.pure_dp(d / scale)
    if stat.mechanism == "gaussian":
        return acc.gaussian(scale / d)
    if _is_int(d) and one_d:
        return acc.discrete_gaussian(scale, int(round(d)))
    if rule == "pld" and not one_d and _is_int(d * d):
        # a histogram's neighbours differ by ±1 in Δ₂² cells (2 under replacement, 1 under add/remove) with
        # independent noise per cell: its loss is that many 1-D discrete Gaussians composed, which has a PLD
        # (a zCDP row has none, and the plan said "epsilon inf")
        return acc.discrete_gaussian(scale, 1, count=int(round(d * d)))
    return acc.zcdp(half_square(d, scale))


def basic_share(total: float, k: int) -> float:
    """total/k, or the float just below it: the largest x whose k-fold sum, rounded up as basic composition adds
    (``conversions.sum_up``), stays within ``total``. The basic rule's equal share of a budget (ε or δ).

    >>> basic_share(0.75, 3), basic_share(1e-6, 25)      # 25 × 4e-08 (a float just above 4·10⁻⁸) exceeds 1e-06
    (0.25, 3.9999999999999994e-08)
    """
    k = check_size(k, name="k")
    x = float(total) / k
    for _ in range(64):     # a division errs by half an ulp: one or two steps down at most
        if sum_up([x] * k) <= total:
            return x
        x = math.nextafter(x, 0.0)
    raise ValueError(f"no equal share of {total!r} over {k} parts")


def _delta_i(stats_: Sequence[StatisticSpec], delta: float, rule: str) -> float:
    """δᵢ of each Gaussian statistic (0 when there is none, or under zcdp, where they spend ρ).

    basic: Σεᵢ, Σδᵢ ([T] Thm 2.1.4) needs no δ of its own, so the Gaussian statistics share all of δ, δ/K_δ (issue 34:
    they got δ/(2K_δ) and half of δ went unspent). advanced, kov_optimal and pld: δ/(2K_δ), the share
    ``composition.compose`` charges each Gaussian run; the other half is the advanced and optimal rules' δ′ (the
    slack in their bound), and for pld only names each statistic's own ε (the PLD composes the noise itself).
    """
    kd = sum(1 for s in stats_ if s.mechanism in ("gaussian", "discrete_gaussian"))
    if rule == "zcdp" or kd == 0:
        return 0.0
    if rule == "basic":
        return basic_share(delta, kd)
    return delta / (2.0 * kd)


def _total(stats_, scales, privs, *, rule: str, delta: float, delta_i: float,
           pld_resolution: float = 1e-4) -> tuple[float, float | None]:
    """(total ε at δ, total ρ or None) under the rule; sums rounded up (a total is a loss, issue 36 item 6)."""
    if rule == "basic":
        return sum_up(privs), None
    if rule == "zcdp":
        rho = sum_up(privs)
        return acc.zcdp_to_dp(rho, delta), rho
    ms = [_as_mechanism(s, sc, p, rule, delta_i) for s, sc, p in zip(stats_, scales, privs)]
    res = acc.compose(ms, delta=delta, rule=rule, pld_resolution=pld_resolution)
    if not res.valid:
        raise _RuleInvalid(res.note)
    return res.epsilon, None


class _RuleInvalid(Exception):
    """The rule gives no bound for these statistics (the composition's note says why)."""


def _invalid_plan(rule: str, mode: str, cur: str, delta: float, budget: float, r: float, note: str) -> BudgetPlan:
    msg = f"This rule cannot plan these statistics: {note}"
    return BudgetPlan(rule, mode, cur, (), math.nan, delta, None, budget, budget * r, r, False, msg)


# --------------------------------------------------------------------------- public API
def minimal_privacy(stat: StatisticSpec, *, rule: PlanRule, delta_i=0.0, beta=None) -> float:
    """Least privacy (ε, or ρ under zcdp) meeting the statistic's target half-width.

    Laplace: Δ₁ ln(1/β)/w ([T] Thm 2.1.2 with the exact tail); Gaussian under zcdp: Δ₂²z²/(2w²)
    ([T] Thm 2.2.2); Gaussian under an (ε, δ) rule: analytic ε at δᵢ for σ = w/z [X-BW]; discrete kinds by
    bisection. ``beta`` (optional) is the statistic's failure probability, split over its cells.
    """
    _check_rule(rule)
    p = _minimal_privacy(stat, rule=rule, delta_i=delta_i, beta=beta)
    if not math.isfinite(p):
        # e.g. a sum over [0, 1e200] at ±0.001: Δ²z²/(2w²) is beyond any float (issue 17: no OverflowError)
        raise ValueError(f"{stat.name}: the privacy this target needs is too large to compute; widen the target "
                         "or narrow the clipping range")
    return p


def _minimal_privacy(stat: StatisticSpec, *, rule: str, delta_i, beta) -> float:
    target = stat.hold_half_width if stat.hold_half_width is not None else stat.target_half_width
    if not (target > 0):
        raise ValueError(f"{stat.name}: the target half-width must be > 0")
    conf = _cell_conf(stat, beta)
    if stat.mechanism == "laplace":
        eps = _sens(stat) / mech.scale_for_half_width("laplace", half_width=target, confidence=conf)
        return pure_to_zcdp(eps) if rule == "zcdp" else eps
    if stat.mechanism == "gaussian" and rule == "zcdp":
        sigma = mech.scale_for_half_width("gaussian", half_width=target, confidence=conf)
        return half_square(_sens(stat), sigma)
    if stat.mechanism in ("gaussian", "discrete_gaussian") and rule != "zcdp" and not delta_i > 0:
        raise ValueError(f"{stat.name}: a Gaussian statistic under an (ε, δ) rule needs delta_i > 0")
    scale = _scale_for_target(stat, target, conf)
    # a very loose target can need ε = 0 (δᵢ alone covers it): keep a tiny positive ε so the inverse exists
    return max(_privacy_of_scale(stat, scale, rule=rule, delta_i=delta_i), 1e-12)


def half_width_at(stat: StatisticSpec, privacy, *, rule: PlanRule, delta_i=0.0) -> float:
    """Half-width (at the statistic's confidence) bought by a privacy amount (ε, or ρ under zcdp)."""
    _check_rule(rule)
    check_positive(privacy, name="privacy")
    scale = _scale_of_privacy(stat, privacy, rule=rule, delta_i=delta_i)
    return mech.half_width(stat.mechanism, scale=scale, confidence=stat.confidence)


def hold_at_half_width(stat: StatisticSpec, half_width) -> StatisticSpec:
    """PSI's "edit the error, re-split ε": fix the statistic at this half-width."""
    h = check_positive(half_width, name="hold half-width")
    return replace(stat, hold_half_width=h, hold_share=None)


def _joint_betas(ss, *, rule: str, beta: float, delta_i: float, delta: float) -> np.ndarray:
    """Optimal union-bound split of the failure probability β over the statistics (spec §4.4)."""
    if all(s.mechanism == "laplace" for s in ss) and rule == "basic":
        c = np.array([_sens(s) / _target(s) for s in ss])
        return beta * c / c.sum()
    if all(s.mechanism == "gaussian" for s in ss) and rule == "zcdp":
        c = np.array([half_square(_sens(s), _target(s)) for s in ss])
        d = np.array([float(s.cells) for s in ss])

        def betas(log_lam: float) -> np.ndarray:
            out = np.empty(len(ss))
            for i in range(len(ss)):
                # c z/(d φ(z)) = λ, increasing in z > 0; solve in log form
                g = lambda z: math.log(c[i] * z / d[i]) - stats.norm.logpdf(z) - log_lam  # noqa: E731
                lo = 1e-8
                hi = grow_until(lambda z: g(z) >= 0, 2.0, factor=2.0, cap=1e150)
                z = optimize.brentq(g, lo, hi, xtol=1e-14) if g(lo) < 0 else lo
                out[i] = 2.0 * d[i] * stats.norm.sf(z)
            return out

        lo, hi = -50.0, 50.0
        for _ in range(MAX_STEPS):      # bounded widening (issue 26); Σβᵢ falls from 2Σdᵢ to 0 as λ grows
            if betas(lo).sum() >= beta:
                break
            lo -= 50
        else:
            raise SearchLimitError("no split of the failure probability meets the joint confidence")
        for _ in range(MAX_STEPS):
            if betas(hi).sum() <= beta:
                break
            hi += 50
        else:
            raise SearchLimitError("no split of the failure probability meets the joint confidence")
        for _ in range(200):  # Σβᵢ decreases in λ
            mid = 0.5 * (lo + hi)
            if betas(mid).sum() > beta:
                lo = mid
            else:
                hi = mid
            if hi - lo < 1e-13:
                break
        b = betas(hi)
        return b * beta / b.sum()
    # any other combination: SLSQP on log βᵢ
    def total(logb: np.ndarray) -> float:
        bs = np.exp(logb)
        privs = [minimal_privacy(s, rule=rule, delta_i=delta_i, beta=float(b)) for s, b in zip(ss, bs)]
        scales = [_scale_of_privacy(s, p, rule=rule, delta_i=delta_i) for s, p in zip(ss, privs)]
        return _total(ss, scales, privs, rule=rule, delta=delta, delta_i=delta_i)[0]

    x0 = np.log(np.full(len(ss), beta / len(ss)))
    cons = {"type": "eq", "fun": lambda lb: np.sum(np.exp(lb)) / beta - 1.0}
    res = optimize.minimize(total, x0, method="SLSQP", constraints=[cons],
                            bounds=[(math.log(beta) - 30, math.log(beta))] * len(ss), options={"ftol": 1e-12})
    b = np.exp(res.x if res.success else x0)
    return b * beta / b.sum()


def _target(s: StatisticSpec) -> float:
    return s.hold_half_width if s.hold_half_width is not None else s.target_half_width


def _alloc(s, scale, priv, *, rule, delta_i, conf, delta, held) -> StatisticAllocation:
    """One row of the allocation table: each number is the statistic's own guarantee from the noise it gets.

    ε and δ describe the statistic released alone: Laplace kinds are pure ε = Δ₁/b (δ = 0) under every rule;
    Gaussian kinds give their exact ε at δᵢ (the (ε, δ) rules) or, under zcdp, at the plan's δ. Erratum (issue
    12): under zcdp the ε column used to be zcdp_to_dp(ρᵢ, δ), which for Laplace rows is not the noise used
    (20 counts at ε_B = 1: 0.2066 shown, pure ε 0.0440 actually spent per count).
    """
    hw = mech.half_width(s.mechanism, scale=scale, confidence=conf)
    gauss = s.mechanism in ("gaussian", "discrete_gaussian")
    d = _sens(s)
    if not gauss:
        eps = d / scale
        di = 0.0
        rho = half_square(eps, 1.0)
    else:
        rho = half_square(d, scale)
        if rule == "zcdp":
            di = delta
            if s.mechanism == "gaussian":
                eps = mech.gaussian_epsilon(delta, sigma=scale, sensitivity=d)
            elif _is_int(d):
                eps = mech.discrete_gaussian_epsilon(delta, sigma=scale, sensitivity=int(round(d)))
            else:
                eps = acc.zcdp_to_dp(rho, delta)
        else:
            di = delta_i
            eps = priv
    tgt = _target(s)
    return StatisticAllocation(s.name, eps, di, rho, scale, hw, tgt, hw / tgt, held)


@dataclass(frozen=True)
class BudgetShares:
    """The budget bar: spent per statistic, unused and reserve, in one unit, summing to ``budget``.

    Additive rules (basic: ε, zcdp: ρ) add the statistics' own amounts exactly. Under advanced, kov_optimal and
    pld the total is a composition, not a sum, so each statistic's bar is the composed total split in proportion
    to its own ε (``proportional=True``); the bars then still sum to the composed total.
    """

    names: tuple[str, ...]
    values: tuple[float, ...]
    unused: float
    reserve: float
    budget: float
    unit: str
    proportional: bool


def budget_shares(plan: BudgetPlan) -> BudgetShares | None:
    """The plan's budget split for the stacked bar (None when the plan has no finite total: infeasible)."""
    total = plan.rho if plan.currency == "rho" else plan.epsilon
    if total is None or not math.isfinite(total) or not math.isfinite(plan.budget):
        return None
    additive = plan.rule in ADDITIVE_RULES
    if plan.rule == "zcdp":
        own = [a.rho for a in plan.allocations]
    else:
        own = [a.epsilon for a in plan.allocations]
    if additive:
        values = [float(v) for v in own]
    else:
        tot_own = math.fsum(own)
        values = [total * v / tot_own for v in own] if tot_own > 0 else [0.0] * len(own)
    spent = math.fsum(values)
    reserve = plan.reserved
    unused = plan.budget - reserve - spent
    if unused < 1e-12 * plan.budget:
        unused = 0.0
    return BudgetShares(tuple(a.name for a in plan.allocations), tuple(values), unused, reserve, plan.budget,
                        "ρ" if plan.currency == "rho" else "ε", not additive)


def plan_accuracy_first(stats, *, rule="basic", delta=1e-6, reserve_fraction=0.0, joint_confidence=None) -> BudgetPlan:
    """Least total privacy meeting every target (each statistic at its minimal privacy; every rule is monotone).

    Allocations are rounded *up* to 6 significant figures so every target is still met. With reserve r the
    budget needed is total/(1−r). ``joint_confidence`` covers all statistics at once by a union bound with
    the optimal split of β (spec §4.4). δ : float, in (0, 1); ``reserve_fraction`` in [0, 0.95];
    ``joint_confidence`` in (0, 1).
    """
    ss = _validate_stats(stats)
    delta = check_delta(delta, allow_zero=False)
    _check_rule(rule, delta)
    r = _reserve(reserve_fraction)
    di = _delta_i(ss, delta, rule)
    if joint_confidence is not None:
        jc = check_delta(joint_confidence, name="joint_confidence", allow_zero=False)  # (0, 1)
        betas = _joint_betas(ss, rule=rule, beta=1.0 - jc, delta_i=di, delta=delta)
    else:
        betas = [None] * len(ss)
    privs, scales, confs = [], [], []
    for s, b in zip(ss, betas):
        p = _round_sig(minimal_privacy(s, rule=rule, delta_i=di, beta=b), up=True)
        privs.append(p)
        scales.append(_scale_of_privacy(s, p, rule=rule, delta_i=di))
        confs.append(_cell_conf(s, b))
    try:
        eps, rho = _total(ss, scales, privs, rule=rule, delta=delta, delta_i=di)
    except _RuleInvalid as e:
        return _invalid_plan(rule, "accuracy_first", "epsilon", delta, math.nan, r, str(e))
    allocs = tuple(_alloc(s, sc, p, rule=rule, delta_i=di, conf=c, delta=delta, held=s.hold_half_width is not None)
                   for s, sc, p, c in zip(ss, scales, privs, confs))
    total = rho if rule == "zcdp" else eps
    budget = total if r == 0.0 else round_up(total / (1.0 - r), margin(total / (1.0 - r), ops=2))
    cur = "rho" if rule == "zcdp" else "epsilon"
    sym = "ρ" if rule == "zcdp" else "ε"
    msg = (f"Least privacy meeting every target: {sym} = {total:.3g}" if math.isfinite(total)
           else "No finite privacy budget meets every target under this rule")
    msg += f"; with a {r:.0%} reserve the budget is {sym} = {budget:.3g}" if r and math.isfinite(total) else ""
    return BudgetPlan(rule, "accuracy_first", cur, allocs, eps, delta, rho, budget, budget * r, r,
                      math.isfinite(eps), msg)


def plan_budget_first(stats, *, epsilon, delta=1e-6, rule="basic", reserve_fraction=0.0,
                      objective: Literal["equal_ratio", "weighted_mse"] = "equal_ratio") -> BudgetPlan:
    """The accuracy a budget (ε_B, δ) buys (see :func:`_plan_budget_first`); a rule that gives no bound for these
    statistics (say, optimal composition of more than 10⁶ grouped terms) gives an infeasible plan saying why."""
    try:
        return _plan_budget_first(stats, epsilon=epsilon, delta=delta, rule=rule, reserve_fraction=reserve_fraction,
                                  objective=objective)
    except _RuleInvalid as e:
        delta = check_delta(delta, allow_zero=False)
        budget = acc.zcdp_rho_for_epsilon(epsilon, delta) if rule == "zcdp" else float(epsilon)
        return _invalid_plan(rule, "budget_first", "rho" if rule == "zcdp" else "epsilon", delta, budget,
                             _reserve(reserve_fraction), str(e))


def _plan_budget_first(stats, *, epsilon, delta, rule, reserve_fraction, objective) -> BudgetPlan:
    """The accuracy a budget (ε_B, δ) buys: split the spendable budget over the unheld statistics.

    Spendable = (1−r)·budget − held statistics. ``equal_ratio`` gives every unheld statistic the same ratio
    s = achieved/target; ``weighted_mse`` minimises Σuᵢ(hᵢ/wᵢ)² (basic and zcdp only). Under zcdp the budget
    is ρ_B = zcdp_rho_for_epsilon(ε_B, δ). Allocations are rounded *down* to 6 significant figures, so the
    recomputed total never exceeds the budget. epsilon : float, > 0; δ : float, in (0, 1); ``reserve_fraction`` in
    [0, 0.95].
    """
    ss = _validate_stats(stats)
    delta = check_delta(delta, allow_zero=False)
    _check_rule(rule, delta)
    eps_b = check_epsilon(epsilon)
    r = _reserve(reserve_fraction)
    if objective not in ("equal_ratio", "weighted_mse"):
        raise ValueError(f"objective must be equal_ratio or weighted_mse, got {objective!r}")
    additive = rule in ADDITIVE_RULES
    if not additive and any(s.hold_share is not None for s in ss):
        raise ValueError("hold share needs an additive rule (basic or zcdp)")
    if not additive and objective == "weighted_mse":
        raise ValueError("weighted_mse needs an additive rule (basic or zcdp)")
    di = _delta_i(ss, delta, rule)
    cur = "rho" if rule == "zcdp" else "epsilon"
    budget = acc.zcdp_rho_for_epsilon(eps_b, delta) if rule == "zcdp" else eps_b
    spend = budget if r == 0.0 else round_down((1.0 - r) * budget, margin(budget, ops=2))
    privs: list[float | None] = [None] * len(ss)
    held = [s.hold_half_width is not None or s.hold_share is not None for s in ss]
    for i, s in enumerate(ss):
        if s.hold_half_width is not None:
            privs[i] = minimal_privacy(s, rule=rule, delta_i=di)
        elif s.hold_share is not None:
            privs[i] = s.hold_share * spend
    free = [i for i in range(len(ss)) if not held[i]]
    mins = {i: minimal_privacy(ss[i], rule=rule, delta_i=di) for i in free}

    def fail(used: float) -> BudgetPlan:
        unit = "ρ" if cur == "rho" else "ε"
        msg = (f"The statistics held at a fixed accuracy need {unit} = {number(used, 3)}, more than the "
               f"{number(spend, 3)} left after the reserve.")
        allocs = tuple(_alloc(s, _scale_of_privacy(s, p, rule=rule, delta_i=di), p, rule=rule, delta_i=di,
                              conf=s.confidence, delta=delta, held=True) for s, p in zip(ss, privs) if p is not None)
        return BudgetPlan(rule, "budget_first", cur, allocs, math.nan, delta, None, budget, budget * r, r, False, msg)

    if additive:
        used = math.fsum(p for p in privs if p is not None)
        left = spend - used
        if left <= 0 or (not free and used > spend * (1 + 1e-12)):
            return fail(used)
        if free:
            if objective == "equal_ratio":
                if rule == "basic" and all(ss[i].mechanism == "laplace" for i in free):
                    s_ratio = math.fsum(mins.values()) / left
                    for i in free:
                        privs[i] = mins[i] / s_ratio
                elif rule == "zcdp" and all(ss[i].mechanism in ("gaussian", "laplace") for i in free) and \
                        all(ss[i].mechanism == "gaussian" for i in free):
                    s2 = math.fsum(mins.values()) / left
                    for i in free:
                        privs[i] = mins[i] / s2
                else:
                    _equal_ratio_bisect(ss, free, privs, rule=rule, delta=delta, di=di, limit=left, additive=True)
            else:
                u = {i: ss[i].weight for i in free}
                if rule == "basic":
                    w = {i: u[i] ** (1.0 / 3.0) * mins[i] ** (2.0 / 3.0) for i in free}
                else:
                    w = {i: math.sqrt(u[i] * mins[i]) for i in free}
                tot = math.fsum(w.values())
                for i in free:
                    privs[i] = left * w[i] / tot
    else:
        if free:
            ok = _equal_ratio_bisect(ss, free, privs, rule=rule, delta=delta, di=di, limit=spend, additive=False)
            if not ok and not any(held):
                return BudgetPlan(rule, "budget_first", cur, (), math.nan, delta, None, budget, budget * r, r, False,
                                  f"the {spend:.6g} left after the reserve cannot cover the statistics under this "
                                  "rule at this δ, however wide their intervals")
            if not ok:
                hs = [i for i in range(len(ss)) if held[i]]
                return fail(_total([ss[i] for i in hs],
                                   [_scale_of_privacy(ss[i], privs[i], rule=rule, delta_i=di) for i in hs],
                                   [privs[i] for i in hs], rule=rule, delta=delta, delta_i=di)[0])
        else:
            scales = [_scale_of_privacy(s, p, rule=rule, delta_i=di) for s, p in zip(ss, privs)]
            t = _total(ss, scales, privs, rule=rule, delta=delta, delta_i=di)[0]
            if t > spend:
                return fail(t)
    privs = [_round_sig(float(p), up=False) for p in privs]
    scales = [_scale_of_privacy(s, p, rule=rule, delta_i=di) for s, p in zip(ss, privs)]
    eps, rho = _total(ss, scales, privs, rule=rule, delta=delta, delta_i=di)
    allocs = tuple(_alloc(s, sc, p, rule=rule, delta_i=di, conf=s.confidence, delta=delta, held=h)
                   for s, sc, p, h in zip(ss, scales, privs, held))
    total = rho if rule == "zcdp" else eps
    feasible = total <= spend * (1 + 1e-9)
    msg = (f"Spent {total:.6g} of {budget:.6g} ({cur}); {budget * r:.6g} held in reserve" if feasible
           else f"the plan needs {total:.6g}, more than the {spend:.6g} left after the reserve")
    return BudgetPlan(rule, "budget_first", cur, allocs, eps, delta, rho, budget, budget * r, r, feasible, msg)


def _equal_ratio_bisect(ss, free, privs, *, rule, delta, di, limit, additive) -> bool:
    """Common ratio s for the free statistics by bisection on ln s (generic rules/mechanisms)."""
    fixed = {i: privs[i] for i in range(len(ss)) if i not in free}

    def assign(log_s: float) -> list[float]:
        out = list(privs)
        for i in free:
            st = replace(ss[i], hold_half_width=ss[i].target_half_width * math.exp(log_s))
            out[i] = minimal_privacy(st, rule=rule, delta_i=di)
        for i, p in fixed.items():
            out[i] = p
        return out

    def total(log_s: float) -> float:
        ps = assign(log_s)
        if additive:
            return math.fsum(ps)
        scales = [_scale_of_privacy(s, p, rule=rule, delta_i=di) for s, p in zip(ss, ps)]
        # a coarser PLD grid is pessimistic, so the bracket found with it is safe at the final resolution
        return _total(ss, scales, ps, rule=rule, delta=delta, delta_i=di, pld_resolution=1e-3)[0]

    if additive:
        lo, hi = -5.0, 5.0
    else:
        # start next to the answer: a composed ε falls roughly as 1/s, so s ≈ (total at s = 1)/limit. Far from
        # it a PLD is costly (ln s = −5 asked for Gaussians with μ ~ 100: millions of grid points, 480 s).
        t0 = total(0.0)
        x1 = math.log(t0 / limit) if math.isfinite(t0) and t0 > 0 else 0.0
        lo, hi = x1 - 0.05, x1 + 0.05
    step = 0.1 if not additive else 5.0
    for _ in range(40):
        if not (total(lo) <= limit and lo > -60):
            break
        lo -= step
        step = step * 2.0 if not additive else step
    step = 0.1 if not additive else 5.0
    for _ in range(40):
        if total(hi) <= limit:
            break
        hi += step
        step = step * 2.0 if not additive else step
        if hi > 60:
            return False
    else:
        return False
    if additive:
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            if total(mid) <= limit:
                hi = mid
            else:
                lo = mid
            if hi - lo < 1e-10:
                break
    else:
        # a composition per evaluation (PLD: tens of ms): Brent's method needs about 8 where bisection to 1e-7
        # took 27 (issue 23 item 3), then steps up to the side that meets the budget (at most 40 steps)
        x = optimize.brentq(lambda t: total(t) - limit, lo, hi, xtol=1e-7, rtol=1e-9, maxiter=100)
        step = 1e-7
        for _ in range(40):
            if total(x) <= limit:
                hi = x
                break
            x += step
            step *= 2.0
    ps = assign(hi)
    for i in free:
        privs[i] = ps[i]
    return True
