"""Plain-words verdicts for the epsilon calculator: one or two sentences per tab, computed from its result.

Each function takes the numbers a tab already computed (engine results, not widgets) and returns plain text
(no Markdown), so the page, the report and the tests read the same sentence. Numbers are rounded for reading
(:func:`sig4`, 4 significant figures, wherever a card or table beside the sentence shows the same number, so
both read alike (issue 22); :func:`number`, 2 significant figures, for the rest); the downloads keep full
precision.

References
----------
Issue 14 item 1 (a verdict on every result) and item 6 (guidance where users go wrong); the quantities are those
of ``002_802572da4c9a19ad.txt`` (Rogers 2017) as cited in each tab's engine function.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Mapping, Sequence

import pandas as pd

from dpdash.common.formatting import given, number, percent, power_of_ten, times_ten_to

#: Composition rules in plain words (the page's legends keep their theorem labels).
RULE_WORDS = {
    "basic": "the basic sum", "advanced": "advanced composition", "advanced_drv": "advanced composition (DRV form)",
    "kov_analytic": "the Kairouz–Oh–Viswanath formula", "kov_optimal": "optimal composition",
    "zcdp": "zCDP", "rdp": "Rényi DP", "pld": "privacy loss distributions (PLD)",
}
MECH_WORDS = {"laplace": "Laplace", "gaussian": "Gaussian", "discrete_laplace": "discrete Laplace",
              "discrete_gaussian": "discrete Gaussian", "pure_dp": "pure ε-DP", "approx_dp": "(ε, δ)-DP",
              "zcdp": "zCDP"}
QUERY_WORDS = {"count": "a count", "sum": "a sum", "mean": "a mean", "histogram": "each count of a histogram"}


# --------------------------------------------------------------------------- Tab 1: noise and accuracy
def noise_verdict(*, mechanism: str, query: str, half_width: float, confidence: float, fix: str,
                  epsilon: float, delta: float = 0.0, rho: float | None = None, scale: float | None = None,
                  by_rho: bool = False) -> str:
    """"With ε = 1, Laplace noise keeps a count within ±3.0 of its true value 95% of the time."

    ``confidence`` is a fraction (0.95); ``fix`` is which quantity the user set ("privacy", "scale" or
    "accuracy"); the other two are the calibration's results.
    """
    what = QUERY_WORDS.get(query, "the statistic")
    mech = MECH_WORDS.get(mechanism, mechanism)
    conf = f"{100 * confidence:.4g}%"
    # a value the user set reads as typed; a computed one is rounded
    show = given if fix == "privacy" else sig4
    privacy = f"ρ = {show(rho)}" if by_rho and rho is not None else (
        f"ε = {show(epsilon)}" if epsilon <= 1e4 else "ε above 10,000 (no useful privacy)")
    if delta > 0 and not by_rho:
        privacy += f" and δ = {power_of_ten(delta)}"
    hw = sig4(half_width)
    if fix == "accuracy":
        return (f"To keep {what} within ±{given(half_width)} of its true value {conf} of the time, {mech} noise needs "
                f"{privacy}.")
    if fix == "scale" and scale is not None:
        return (f"{mech} noise of scale {sig4(scale)} gives {privacy} and keeps {what} within ±{hw} of its "
                f"true value {conf} of the time.")
    return f"With {privacy}, {mech} noise keeps {what} within ±{hw} of its true value {conf} of the time."


def noise_guidance(*, query: str, half_width: float, lower: float, upper: float, n: int | None,
                   epsilon: float | None = None) -> str | None:
    """A warning when the noise swamps the statistic (its ± is wider than the values it can take), else None."""
    span = {"mean": upper - lower, "sum": (upper - lower) * (n or 1), "count": float(n or 0),
            "histogram": float(n or 0)}.get(query)
    if epsilon is not None and epsilon_guidance(epsilon):
        return epsilon_guidance(epsilon)
    if span and half_width > span:
        fix = "raise ε or n" if query in ("mean", "count", "histogram") else "raise ε or narrow L and U"
        noun = {"mean": f"the whole range of the mean ({number(lower, 3)} to {number(upper, 3)})",
                "sum": "the largest possible sum", "count": f"the number of records ({n:,})",
                "histogram": f"the number of records ({n:,})"}[query]
        return (f"The noise (±{sig4(half_width)}) is wider than {noun}: the released value says almost "
                f"nothing. To fix: {fix}.")
    return None


def _big(x: float) -> str:
    """A large number as "4.9·10⁸"."""
    m, e = f"{x:.1e}".split("e+")
    return times_ten_to(m, int(e))


def epsilon_guidance(epsilon: float) -> str | None:
    """A warning for an ε so large it protects almost nothing (``dpdash.accounting.tones``: ε ≥ 10), else None."""
    from dpdash.accounting import tones

    call = tones.epsilon_tone(epsilon)
    return call.text if call.tone == "warning" else None


# --------------------------------------------------------------------------- Tab 2: composition
def describe_releases(kinds: Sequence[str], counts: Sequence[int], epsilons: Sequence[float | None],
                      multipliers: Sequence[float | None]) -> str:
    """"1,000 Laplace releases (ε = 0.1 each)" for one row; "50 releases of 2 kinds" for a list."""
    total = int(sum(counts))
    if len(kinds) == 1:
        kind, e, m = kinds[0], epsilons[0], multipliers[0]
        each = (f" (ε = {given(e)} each)" if e is not None else
                f" (noise multiplier σ/Δ = {given(m)})" if m is not None else "")
        return f"{total:,} {MECH_WORDS.get(kind, kind)} release{'s' if total != 1 else ''}{each}"
    return f"{total:,} releases of {len(set(kinds))} kind{'s' if len(set(kinds)) != 1 else ''}"


def composition_verdict(table: pd.DataFrame, *, releases: str, delta: float) -> str:
    """"Composing 10 Gaussian releases costs ε = 2.1 at δ = 10⁻⁶ under PLD, 1.6 less than the basic sum (3.7)."

    ``table`` has columns rule, epsilon, valid (``dpdash.accounting.composition.composition_table``); the verdict
    names the
    tightest valid rule and compares it with the basic sum when that row is valid.
    """
    ok = table[table["valid"] & table["epsilon"].map(lambda v: math.isfinite(v))]
    if ok.empty:
        return (f"No rule you selected gives a finite bound for {releases} at δ = {power_of_ten(delta)}: select "
                "another rule or change the list.")
    best = ok.loc[ok["epsilon"].idxmin()]
    head = (f"Composing {releases} costs ε = {sig4(best['epsilon'])} at δ = {power_of_ten(delta)} under "
            f"{RULE_WORDS.get(best['rule'], best['rule'])}")
    basic = ok[ok["rule"] == "basic"]
    if best["rule"] == "basic" or basic.empty:
        tail = ": the basic sum is already the tightest here." if best["rule"] == "basic" else "."
        return head + tail
    b = float(basic["epsilon"].iloc[0])
    gain = b - float(best["epsilon"])
    if gain <= 0.005 * b:
        return head + f", within 0.5% of the basic sum ({sig4(b)})."
    return head + f", {sig4(gain)} less than the basic sum ({sig4(b)})."


def total_guidance(table: pd.DataFrame) -> str | None:
    """A warning when even the tightest valid total ε is extreme (``dpdash.accounting.tones``: 10 or more), with the
    fix; else None."""
    from dpdash.accounting import tones

    ok = table[table["valid"] & table["epsilon"].map(lambda v: math.isfinite(v))]
    if ok.empty or float(ok["epsilon"].min()) < tones.EPSILON_WARNING:
        return None
    best = float(ok["epsilon"].min())
    return (f"A total ε of {sig4(best)} protects almost nothing (an attacker's odds can grow by a factor of "
            f"{number(math.exp(best)) if best < 13 else _big(math.exp(min(best, 700)))}). To fix: publish fewer "
            "releases, or spend less ε on each.")


# --------------------------------------------------------------------------- Tab 3: budget planner
def sig4(x: float | None) -> str:
    """A number as the tables beside it show it ("{:.4g}": 4 significant figures, trailing zeros dropped), with
    thousands separators, whole numbers in full, ∞ and n/a spelled out. Headlines and the budget verdict use it so
    a sentence never reads coarser than its table (issue 22: "±176.55" shown as "±180", 1.044× as "1.0×").

    >>> sig4(176.55), sig4(1.0441), sig4(27254.0), sig4(0.000123456), sig4(float("inf")), sig4(None), sig4(2.5e9)
    ('176.6', '1.044', '27,254', '0.0001235', '∞', 'n/a', '2.5·10⁹')
    """
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    x = float(x)
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x.is_integer() and abs(x) < 1e9:
        return f"{int(x):,}"
    if abs(x) >= 1e9 or abs(x) < 1e-4:
        m, e = f"{x:.3e}".split("e")
        return times_ten_to(f"{float(m):g}", int(e))
    return f"{x:,.4g}" if abs(x) < 1e4 else f"{round(x):,}"  # whole units above 10⁴: never coarser than 4g


def plan_is_pure(plan) -> bool:
    """True when the plan is pure ε-DP: every row's own δ is 0 and the rule adds ε (basic), so no δ is spent and
    the δ control plays no part (issue 25: "at δ = 10⁻⁶" was shown on a plan of Laplace rows)."""
    return plan.rule == "basic" and all(a.delta == 0 for a in plan.allocations)


def plan_delta(plan) -> float:
    """The δ the plan really spends: 0 for a pure plan (:func:`plan_is_pure`), else the plan's δ."""
    return 0.0 if plan_is_pure(plan) else float(plan.delta)


def budget_verdict(plan, *, listed: int = 4) -> str:
    """One sentence for an ``dpdash.accounting.budget.BudgetPlan``: the total it costs, or the accuracy the budget buys.

    Numbers have 4 significant figures, as in the plan's table beside it (issue 22: ±176.55 was read "±180" and
    1.044× "1.0×"); a budget-first plan says what its reserve keeps back and what it spends (issue 22); a pure plan
    names no δ (issue 25); at most ``listed`` statistics are named, the rest counted (no "…." double stop).
    """
    unit = "ρ" if plan.currency == "rho" else "ε"
    allocs = list(plan.allocations)
    if not plan.feasible:
        return plan.message
    k = len(allocs)
    rule = RULE_WORDS.get(plan.rule, plan.rule)
    d = plan_delta(plan)
    at = f" at δ = {power_of_ten(d)}" if d > 0 else ""
    kind = f" ({rule}{', pure ε-DP' if d == 0 and unit == 'ε' else ''})"
    total = plan.rho if unit == "ρ" and plan.rho is not None else plan.epsilon
    if plan.mode == "accuracy_first":
        s = (f"Meeting all {k} accuracy target{'s' if k != 1 else ''} costs {unit} = {sig4(total)} in total"
             f"{at}{kind}.")
        if plan.reserved > 0:
            s += (f" With the {plan.reserve_fraction * 100:g}% reserve the budget to ask for is {unit} = "
                  f"{sig4(plan.budget)}.")
        return s
    worst = max(allocs, key=lambda a: a.ratio) if allocs else None
    named = ", ".join(f"{a.name} ±{sig4(a.half_width)}" for a in allocs[:listed])
    more = f" and {k - listed:,} more (all in the table)" if k > listed else ""
    if plan.reserved > 0:
        s = (f"A total budget of {unit} = {given(plan.budget)} keeps {plan.reserve_fraction * 100:g}% "
             f"({unit} = {sig4(plan.reserved)}) in reserve and spends {unit} = {sig4(total)}{at}{kind}, "
             f"giving {named}{more}.")
    else:
        s = f"A total budget of {unit} = {given(plan.budget)}{at}{kind} gives {named}{more}."
    if worst is not None and worst.ratio > 1.0005:
        s += f" The furthest from its target is {worst.name}: {sig4(worst.ratio)}× its target ±."
    elif worst is not None:
        s += " Every statistic meets its target."
    return s


# --------------------------------------------------------------------------- Tab 4: adaptive analysis
def adaptive_verdict(*, answered: Mapping[str, int], requests: int, epsilon_g: float, rule: str) -> str:
    """"With a total budget ε_g = 1, the advanced filter answers 1,234 of 2,000 requests; basic: 100; zCDP: 1,500."

    ``answered`` maps each filter rule to the number of requests it lets run.
    """
    words = {"basic": "basic", "advanced": "advanced", "zcdp": "zCDP"}
    a = answered[rule]
    head = (f"With a total budget ε_g = {given(epsilon_g)}, the {words.get(rule, rule)} filter answers {a:,} of "
            f"{requests:,} requests" + (" (all of them)." if a == requests else "."))
    others = [f"{words.get(r, r)} {n:,}" for r, n in answered.items() if r != rule]
    best = max(answered, key=answered.get)
    if others:
        head += " Other filters: " + ", ".join(others) + "."
        if best != rule and answered[best] > a:
            head += f" The {words.get(best, best)} filter answers the most here."
    return head


# --------------------------------------------------------------------------- Tab 5: ε as risk
def risk_verdict(*, prior: float, epsilon: float, lower: float, upper: float, advantage: float,
                 delta: float = 0.0) -> str:
    """"With ε = 1, someone 10% sure that a person is in the data can become at most 23% sure …"."""
    s = (f"With ε = {given(epsilon)}, someone {percent(prior)} sure that a person is in the data (or has a "
         f"trait) can become at most {percent(upper)} sure, and at least {percent(lower)}. No membership test "
         f"can beat guessing by more than {number(100 * advantage)} percentage points (true-positive minus "
         "false-positive rate).")
    if delta > 0:
        s += f" With δ = {power_of_ten(delta)} these hold except with probability up to δ."
    return s


# --------------------------------------------------------------------------- Tab 6: DP vs data splitting
DP_METHODS = ("dfhprr", "bnsssu", "rz_monitor")
SPLIT_METHODS = ("split_binomial", "split_hoeffding")


@dataclass(frozen=True)
class WidthCrossover:
    """Tab 6's comparison, made once: per k the best DP and the best splitting method, and the first k where DP wins.

    ``dp`` and ``split`` are (k → τ) series, ``dp_method`` and ``split_method`` (k → method) the winners; ``first``
    is the smallest k where the best DP τ is below the best split τ (None: not on this grid); ``shown`` the largest
    such k where DP still gives a useful answer (τ < ½, the cap), else ``first``; ``kmax`` the grid's largest k;
    ``exact`` False when :func:`solve_width_crossover` ran out of its work budget (``first`` is then the smallest k
    seen to win, not proved the smallest).
    """

    dp: pd.Series
    split: pd.Series
    dp_method: pd.Series
    split_method: pd.Series
    first: int | None
    shown: int | None
    kmax: int
    exact: bool = True


def width_crossover(widths: pd.DataFrame) -> WidthCrossover:
    """The crossover of ``widths`` (columns method, k, tau: ``dpdash.accounting.mechanisms.adaptive_width_grid``)."""
    piv = widths.pivot_table(index="k", columns="method", values="tau", aggfunc="min")
    dp_cols = [c for c in DP_METHODS if c in piv]
    split_cols = [c for c in SPLIT_METHODS if c in piv]
    dp, split = piv[dp_cols].min(axis=1), piv[split_cols].min(axis=1)
    dp_m = piv[dp_cols].idxmin(axis=1) if dp_cols else pd.Series(dtype=object)
    split_m = piv[split_cols].idxmin(axis=1) if split_cols else pd.Series(dtype=object)
    both = dp.index[dp.notna() & split.notna()]
    better = [int(k) for k in both if dp[k] < split[k]]
    kmax = int(both.max()) if len(both) else int(piv.index.max())
    if not better:
        return WidthCrossover(dp, split, dp_m, split_m, None, None, kmax)
    useful = [k for k in better if dp[k] < 0.5]
    return WidthCrossover(dp, split, dp_m, split_m, min(better), max(useful) if useful else min(better), kmax)


#: Most DP-width evaluations (five bounds each, ~0.08 s) one solve of the crossover may spend (issue 26: bounded work)
CROSSOVER_PROBES = 80
#: Most chunk sizes m whose split widths bound a bracket before it is halved instead
CROSSOVER_CHUNKS = 64


def solve_width_crossover(widths: pd.DataFrame, *, n: int, beta: float, noise: str, width=None,
                          max_probes: int = CROSSOVER_PROBES) -> WidthCrossover:
    """The crossover solved on the integers, not read off the drawing grid (issue 34 item 1).

    ``first`` = k*, the smallest k where the best DP width is below the best split's, so DP is better at k* and at no
    k < k*. The difference is not monotone in k: the binomial split's width jumps with m = ⌊n/k⌋ (and with the
    parity of m), so DP can win inside a grid bracket whose ends both say "split", or win, lose and win again inside
    the bracket where the grid first says "DP"; a bisection between the grid's ends can miss the first win. Instead
    every bracket of the grid, left to right, is searched by branch and bound:

    - the best DP width D(k) is nondecreasing in k (each DP bound grows with the number of queries), so D(a) bounds
      it from below on [a, b];
    - each split width depends on k through m = ⌊n/k⌋ and grows with k at a fixed m (Hoeffding's ln(2k/β), the
      binomial's target β/(2k)), so on [a, b] it is at most its value at (m, b) for the chunk sizes m met there:
      at most Hoeffding's at (⌊n/b⌋, b) (it also falls with m), and at most the largest over those m (when there
      are at most :data:`CROSSOVER_CHUNKS` of them) of the best split at (m, b);
    - a bracket where D(a) is not below that bound holds no k where DP wins; any other is halved (left half first)
      down to single integers.

    At most ``max_probes`` DP evaluations (the split widths cost little); past that the smallest probed k where DP
    wins is returned (the grid's first, or one found on the way) with ``exact`` False. ``width`` (default
    ``dpdash.accounting.mechanisms.adaptive_width``) gives a method's width; tests pass their own.

    Erratum (issue 34): the page said "DP beats splitting from k = 345" (a grid point) at n = 6,400, β = 0.05,
    Gaussian noise; DP (Rogers–Zhang + monitor, ±0.4241) already beats the binomial split (±0.4444, ⌊6400/337⌋ = 18
    records a chunk) at k = 337, and not at k = 336 (±0.4238 against ±0.3947, 19 records a chunk).
    """
    from dpdash.accounting import mechanisms as mech

    width = mech.adaptive_width if width is None else width
    n = int(n)
    x = width_crossover(widths)
    ks = sorted(int(k) for k in x.dp.index[x.dp.notna() & x.split.notna()])
    if not ks:
        return x
    present = set(widths["method"])
    dp_methods = [m for m in DP_METHODS if m in present]
    split_methods = [m for m in SPLIT_METHODS if m in present]
    probed: dict[int, tuple[float, str, float, str]] = {
        k: (float(x.dp[k]), x.dp_method[k], float(x.split[k]), x.split_method[k]) for k in ks}
    evals = 0

    class _Budget(Exception):
        pass

    taus: dict[tuple[str, int, int], float] = {}

    def tau(m: str, nn: int, k: int) -> float:
        if (m, nn, k) not in taus:
            taus[(m, nn, k)] = float(width(m, n=nn, k=k, beta=beta, noise=noise).tau)
        return taus[(m, nn, k)]

    def best(k: int) -> tuple[float, str, float, str]:
        nonlocal evals
        if k not in probed:
            if evals >= max_probes:
                raise _Budget
            evals += 1
            dp = {m: tau(m, n, k) for m in dp_methods}
            sp = {m: tau(m, n, k) for m in split_methods}
            d, s = min(dp, key=dp.get), min(sp, key=sp.get)
            probed[k] = (dp[d], d, sp[s], s)
        return probed[k]

    def wins(k: int) -> bool:
        d, _, s, _ = best(k)
        return d < s

    def split_bound(a: int, b: int) -> float:
        """An upper bound of the best split width on [a, b] (see above); ∞ when none is cheap."""
        bound = tau("split_hoeffding", (n // b) * b, b) if "split_hoeffding" in split_methods else math.inf
        if best(a)[0] >= bound:
            return bound
        chunks = sorted({n // k for k in range(a, b + 1)}) if b - a < CROSSOVER_CHUNKS else \
            (list(range(n // b, n // a + 1)) if n // a - n // b < CROSSOVER_CHUNKS else None)
        if chunks is None:
            return bound
        return min(bound, max(min(tau(m, c * b, b) for m in split_methods) for c in chunks))

    def search(a: int, b: int) -> int | None:
        """The smallest k in (a, b] where DP wins, or None."""
        if b <= a or best(a)[0] >= split_bound(a, b):
            return None
        if b - a == 1:
            return b if wins(b) else None
        mid = (a + b) // 2
        r = search(a, mid)
        return r if r is not None else search(mid, b)

    exact = True
    try:
        first = ks[0] if wins(ks[0]) else None
        for a, b in zip(ks, ks[1:]):
            if first is not None:
                break
            first = search(a, b)
    except _Budget:
        exact = False
        won = [k for k, (d, _, s, _) in probed.items() if d < s]
        first = min(won) if won else x.first
    if first is None or first == x.first:
        return x if exact else replace(x, exact=False)
    d, dm, s, sm = probed[first]

    def put(series: pd.Series, value) -> pd.Series:
        out = series.copy()
        out.loc[first] = value
        return out.sort_index()

    shown = x.shown if x.shown is not None and x.shown != x.first else first
    return WidthCrossover(put(x.dp, d), put(x.split, s), put(x.dp_method, dm), put(x.split_method, sm), first, shown,
                          x.kmax, exact)


def widths_verdict(widths: pd.DataFrame, *, n: int, crossover: WidthCrossover | None = None) -> str:
    """From which k the best DP method answers all k adaptive queries more accurately than the best split.

    ``widths`` has columns method, k, tau (``dpdash.accounting.mechanisms.adaptive_width`` on a grid of k);
    ``crossover``
    (:func:`width_crossover` of it) when the caller already has it, so headline and verdict share one comparison.
    """
    x = crossover if crossover is not None else width_crossover(widths)
    if x.first is None:
        return (f"With n = {n:,} records, splitting the data is at least as accurate as DP for every k up to "
                f"{x.kmax:,} adaptive queries: DP needs more data to pay off.")
    k0 = ks = x.first  # the example quotes the threshold's own k (issue 34: it quoted a later grid point)
    capped = " (capped: no useful answer)" if x.split[ks] >= 0.5 else ""
    return (f"With n = {n:,} records, DP answers k adaptive queries more accurately than splitting the data from "
            f"k = {k0:,} on (at k = {ks:,}: ±{sig4(x.dp[ks])} with DP against ±{sig4(x.split[ks])}{capped} by "
            "splitting, for all answers at once).")


# --------------------------------------------------------------------------- Tab 7: private tests
def private_tests_verdict(*, n: float, privacy: str, alpha: float, naive_size: float,
                          power: float | None = None) -> str:
    """"At n = 10,000 and ρ = 0.00125 the classical χ² test on noisy counts raises false alarms 31% of the time
    instead of 5%; the private tests keep 5% …"."""
    a = f"{given(100 * alpha)}%"
    s = (f"At n = {int(n):,} and {privacy}, the classical χ² test on noisy counts raises false alarms "
         f"{percent(naive_size)} of the time instead of {a}; the private tests keep {a}")
    if power is not None:
        s += f" and detect the shift Δ with probability {percent(power)} (projected test)"
    return s + "."


# --------------------------------------------------------------------------- Tab 8: max-information
def maxinfo_verdict(*, alpha: float, gamma: float, epsilon: float, n: int, bits: float) -> str:
    """"After a selection step with ε = 0.01 on 10,000 records, reject only when p ≤ 0.012 …"."""
    return (f"After choosing the hypothesis with an ε = {given(epsilon)} step on {int(n):,} records (which leaks "
            f"at most {sig4(bits)} bits), reject only when p ≤ {sig4(gamma)}, not p ≤ {alpha:g}, to keep the "
            f"false-rejection rate at {given(100 * alpha)}%.")


# Tab 9 (public information): its sentences are built with the cards in dpdash.epsilon.public_info_views.
