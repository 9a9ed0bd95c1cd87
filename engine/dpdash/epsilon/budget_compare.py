"""The budget question in one table (issue 14 item 7): k statistics from one data set under a total (ε, δ).

Pure Python (no streamlit). For every composition rule the engine has and every noise mechanism, the largest
per-statistic privacy whose k-fold composition stays within the total budget, the noise scale that gives, and the
± at a chosen confidence. Nothing is re-derived here: composition is ``dpdash.accounting.composition.compose`` (basic
and
advanced: Rogers 2017, seed ``002_802572da4c9a19ad.txt`` Thm 2.1.4 / 2.1.5; optimal: Kairouz–Oh–Viswanath 2015 /
Murtagh–Vadhan; zCDP: Bun–Steinke 2016; Rényi DP: Mironov 2017; PLD: Google dp-accounting), the per-statistic
Laplace ε is ``accounting.per_mechanism_epsilon``, and noise and accuracy are ``dpdash.accounting.mechanisms``.

Conventions: each statistic has sensitivity Δ (1 for a count). Laplace noise has scale Δ/ε₀ and is pure ε-DP
(its δ per statistic is 0). Gaussian noise has σ = m·Δ for the smallest noise multiplier m whose composition meets
the budget; its "ε per statistic" is that one release's exact ε at δ/(2k), the share ``compose`` charges each
Gaussian run under the (ε, δ) rules (the other half of δ is the advanced and optimal rules' slack). Under the basic
rule, which adds up εᵢ and δᵢ and needs no slack, each Gaussian statistic gets (ε/k, δ/k): all of the budget (issue
34: it was given δ/(2k), so half of δ went unspent). The discrete Laplace (scale t, ε₀ = Δ/t) and discrete Gaussian
(σ) of Canonne, Kamath & Steinke 2020 [X-CKS] need a whole-number Δ; their ± is a whole number.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go

from dpdash.accounting import budget as bud
from dpdash.accounting import composition as acc
from dpdash.accounting import mechanisms as mech
from dpdash.epsilon.verdicts import sig4
from dpdash.common.formatting import power_of_ten
from dpdash.common.palette import palette_color
from dpdash.common.search import Deadline, SearchLimitError, bracketed_root, timed
from dpdash.common.validation import check_delta, check_epsilon, check_positive, check_size

RULES: tuple[str, ...] = ("basic", "advanced", "kov_optimal", "zcdp", "rdp", "pld")
RULE_PLAIN = {
    "basic": "Add up the ε's (basic)",
    "advanced": "Advanced composition",
    "kov_optimal": "Optimal composition (Kairouz–Oh–Viswanath)",
    "zcdp": "Zero-concentrated DP",
    "rdp": "Rényi DP",
    "pld": "Privacy-loss distribution (numerical)",
}
MECHANISMS: tuple[str, ...] = ("laplace", "gaussian", "discrete_laplace", "discrete_gaussian")
MECH_PLAIN = {"laplace": "Laplace", "gaussian": "Gaussian", "discrete_laplace": "Discrete Laplace",
              "discrete_gaussian": "Discrete Gaussian"}
#: The continuous pair, computed by default (the discrete kinds take a few seconds more)
DEFAULT_MECHANISMS: tuple[str, ...] = ("laplace", "gaussian")
MAX_K = 10_000
#: PLD resolution for the Gaussian search (ε is overstated by at most about this much: a safe bound)
PLD_RESOLUTION = 1e-3


@dataclass(frozen=True)
class BudgetRow:
    """One rule × mechanism answer for k statistics under a total (ε, δ)."""

    rule: str
    mechanism: str
    k: int
    epsilon_total: float
    delta_total: float
    epsilon_each: float
    delta_each: float
    scale: float
    std: float
    half_width: float
    confidence: float
    valid: bool
    note: str = ""


#: Time budget of one comparison table (issue 26: a link must not make the server compute without end)
TABLE_SECONDS = 8.0
#: The largest factor by which a search may raise the noise above its first guess before it gives up
MAX_NOISE_FACTOR = {"continuous": 1e4, "discrete": 20.0}


def _noise_root(make, rule: str, *, epsilon: float, delta: float, k: int, guess: float, width: float,
                deadline: Deadline | None = None, discrete: bool = False) -> float:
    """Smallest noise parameter p with compose([make(p) × k]).ε ≤ ε: Brent in ln p from [guess ± width]; NaN if the
    rule does not apply. The composed ε falls as the noise grows.

    Bounded (issue 26): the bracket widens at most 40 times (doubling steps), the noise never exceeds
    :data:`MAX_NOISE_FACTOR` times the guess (a numerical accountant has a floor below which its pessimistic ε
    never falls: the discrete Gaussian's PLD at resolution 1e-3 never reaches ε = 0.01 for k = 60), every
    composition checks ``deadline``; :class:`SearchLimitError` carries the sentence for the table.
    """
    def f(x: float) -> float:
        r = acc.compose([make(math.exp(x), k)], delta=delta, rule=rule, pld_resolution=PLD_RESOLUTION)
        if not r.valid:
            raise _NoBound(r.note)
        return r.epsilon - epsilon

    f = timed(f, deadline, "the noise search")
    kind = "discrete" if discrete else "continuous"
    bounds = dict(step=2 * width, growth=2.0, max_steps=40, lo_min=guess - 60.0,
                  hi_max=guess + math.log(MAX_NOISE_FACTOR[kind]))
    try:
        if discrete and rule == "pld":
            # whole-number noise under the PLD: ε(t) is a staircase (the loss is rounded to the 1e-3 grid), on
            # which Brent's interpolations fail and it takes ~37 compositions; bisection takes ~20 (issue 23 item 3)
            # from a bracket of ±0.002 around the continuous answer (the bench's rows lie within 0.005 of it)
            x = _bisect_root(f, guess - 0.002, guess + 0.002, xtol=1e-7, **{**bounds, "step": 0.004})
        else:
            x = bracketed_root(f, guess - width, guess + width, increasing=False, step_lo=bounds["step"],
                               step_hi=bounds["step"], growth=2.0, max_steps=40, lo_min=bounds["lo_min"],
                               hi_max=bounds["hi_max"], what="the noise search",
                               # whole-number noise has a whole-number ±: 1e-7 in ln scale is ample
                               xtol=1e-7 if discrete else 1e-9, rtol=1e-9)
    except _NoBound:
        return math.nan
    except SearchLimitError as e:
        if "time limit" in str(e):
            raise
        noise = "whole-number noise" if discrete else "this noise"
        where = " at this resolution" if rule == "pld" else ""
        raise SearchLimitError(f"no noise scale reaches ε = {epsilon:.3g} with {noise}{where}") from None
    # brentq stops within xtol of the root on either side: step up to the side that meets the budget
    step = 1e-9
    for _ in range(60):
        if f(x) <= 0:
            return math.exp(x)
        x += step
        step *= 2.0
    raise SearchLimitError(f"no noise scale reaches ε = {epsilon:.3g} with this noise")


def _bisect_root(f, lo: float, hi: float, *, step: float, growth: float, max_steps: int, lo_min: float,
                 hi_max: float, xtol: float) -> float:
    """The end of a bracket narrowed to ``xtol`` where a decreasing ``f`` is ≤ 0, by bisection; [lo, hi] is first
    widened as ``dpdash.common.search.bracketed_root`` widens it (same bounds and messages).

    For staircase functions, where Brent's method takes more evaluations than plain bisection; the end returned
    already meets the budget, so no evaluation is spent stepping up to it.
    """
    steps = 0

    def count() -> None:
        nonlocal steps
        steps += 1
        if steps > max_steps:
            raise SearchLimitError(f"the noise search found no root after widening its bracket {max_steps} times")

    s_lo = s_hi = step
    f_lo = f(lo)
    f_hi = None
    while f_lo <= 0:                    # lo already meets the budget: the answer is lower
        if lo <= lo_min:
            return lo
        count()
        hi, f_hi = lo, f_lo
        lo = max(lo - s_lo, lo_min)
        s_lo *= growth
        f_lo = f(lo)
    if f_hi is None:
        f_hi = f(hi)
    while f_hi > 0:
        if hi >= hi_max:
            raise SearchLimitError("the noise search found no root below the largest value it may try")
        count()
        lo, hi = hi, min(hi + s_hi, hi_max)
        s_hi *= growth
        f_hi = f(hi)
    for _ in range(200):                # f(lo) > 0 ≥ f(hi): halve until the bracket is within xtol
        if hi - lo <= xtol:
            break
        mid = 0.5 * (lo + hi)
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return hi


class _NoBound(Exception):
    """The rule gives no bound for this noise (compose returned valid=False)."""


def gaussian_multiplier(rule: str, *, epsilon, delta, k, deadline: Deadline | None = None) -> float:
    """Smallest noise multiplier m = σ/Δ whose k-fold Gaussian composition has ε ≤ ``epsilon`` at ``delta``.

    Brent's method in ln m on ``accounting.compose`` (the composed ε falls as m grows); NaN if the rule does not
    apply. PLD uses resolution :data:`PLD_RESOLUTION`.
    """
    eps, d, k = check_epsilon(epsilon), check_delta(delta, allow_zero=False), check_size(k, name="k")
    guess = math.log(math.sqrt(k * 2.0 * math.log(1.25 / d)) / eps)  # the classic σ with ε/√k per run
    return _noise_root(lambda m, c: acc.gaussian(m, count=c), rule, epsilon=eps, delta=d, k=k, guess=guess,
                       width=1.0, deadline=deadline)


def discrete_noise(mechanism: str, rule: str, *, epsilon, delta, k, sensitivity: int, start: float,
                   deadline: Deadline | None = None) -> float:
    """Smallest discrete-Laplace scale t or discrete-Gaussian σ whose k-fold composition meets (ε, δ) [X-CKS].

    ``start`` is the continuous mechanism's answer (scale Δ/ε₀ or σ = mΔ), a close first bracket: the discrete
    mechanisms are at least as private as their continuous counterparts at the same scale.
    """
    eps, d, k = check_epsilon(epsilon), check_delta(delta, allow_zero=False), check_size(k, name="k")
    sens = mech.integer_sensitivity(sensitivity)
    if mechanism == "discrete_laplace":
        def make(t, c):
            return acc.discrete_laplace(t, sensitivity=sens, count=c)
    else:
        def make(s, c):
            return acc.discrete_gaussian(s, sensitivity=sens, count=c)
    return _noise_root(make, rule, epsilon=eps, delta=d, k=k, guess=math.log(start), width=0.05, deadline=deadline,
                       discrete=True)


def _is_whole(x: float) -> bool:
    return abs(x - round(x)) <= 1e-12 and x >= 1


def budget_row(rule: str, mechanism: str, *, epsilon, delta, k, sensitivity=1.0, confidence=0.95,
               deadline: Deadline | None = None) -> BudgetRow:
    """Per-statistic privacy, noise scale and ± for one rule and mechanism (see the module conventions).

    A search that cannot reach the budget, or runs past ``deadline``, gives an invalid row whose note says so.
    """
    key = (rule, mechanism, float(epsilon), float(delta), int(k), float(sensitivity), float(confidence))
    with _ROW_LOCK:
        if key in _ROW_CACHE:
            _ROW_CACHE.move_to_end(key)
            return _ROW_CACHE[key]
    try:
        row = _budget_row(rule, mechanism, epsilon=epsilon, delta=delta, k=k, sensitivity=sensitivity,
                          confidence=confidence, deadline=deadline)
    except SearchLimitError as e:
        row = BudgetRow(rule, mechanism, int(k), float(epsilon), float(delta), math.nan, math.nan, math.nan,
                        math.nan, math.nan, float(confidence), False, str(e))
        if "time limit" in row.note:     # a row cut short by a shared budget is not the row's answer: not kept
            return row
    with _ROW_LOCK:
        _ROW_CACHE[key] = row
        while len(_ROW_CACHE) > ROW_CACHE_SIZE:
            _ROW_CACHE.popitem(last=False)
    return row


#: Rows kept across calls (issue 23 item 3): turning whole-number noise on computes only the new rows, and a
#: slider moved back redraws at once. Bounded; a row is a few numbers.
ROW_CACHE_SIZE = 4096
_ROW_CACHE: OrderedDict = OrderedDict()
_ROW_LOCK = threading.Lock()


def _budget_row(rule: str, mechanism: str, *, epsilon, delta, k, sensitivity, confidence,
                deadline: Deadline | None) -> BudgetRow:
    eps, k = check_epsilon(epsilon), check_size(k, name="k")
    d = check_delta(delta)
    sens = check_positive(sensitivity, name="sensitivity")
    conf = check_delta(confidence, name="confidence", allow_zero=False)
    if k > MAX_K:
        raise ValueError(f"k must be at most {MAX_K:,}; got {k}")
    if rule not in RULES or mechanism not in MECHANISMS:
        raise ValueError(f"rule must be one of {RULES} and mechanism one of {MECHANISMS}")

    def invalid(note: str) -> BudgetRow:
        return BudgetRow(rule, mechanism, k, eps, d, math.nan, math.nan, math.nan, math.nan, math.nan, conf, False,
                         note)

    def row(e_each: float, d_each: float, scale: float) -> BudgetRow:
        return BudgetRow(rule, mechanism, k, eps, d, e_each, d_each, scale, mech.noise_std(mechanism, scale=scale),
                         mech.half_width(mechanism, scale=scale, confidence=conf), conf, True)

    pure = mechanism in ("laplace", "discrete_laplace")
    if d == 0.0 and not (rule == "basic" and pure):
        return invalid("needs δ > 0" if pure else "Gaussian noise needs δ > 0")
    if mechanism.startswith("discrete") and not _is_whole(sens):
        return invalid("discrete noise needs a whole-number sensitivity")
    if pure:
        if rule == "pld":
            # Brent in ln(1/ε₀) at PLD_RESOLUTION: the bisection of per_mechanism_epsilon takes ~40 PLD compositions
            e0 = 1.0 / _noise_root(lambda b, c: acc.laplace(1.0 / b, count=c), rule, epsilon=eps, delta=d, k=k,
                                   guess=math.log(k / eps), width=0.5, deadline=deadline)
        else:
            # per_mechanism_epsilon needs δ > 0 for its compose calls; basic composition of pure ε is Σ ε₀ = k·ε₀
            e0 = acc.per_mechanism_epsilon(rule, epsilon=eps, delta=d if d > 0 else 0.5, k=k)
        if not e0 > 0:
            return invalid("no per-statistic ε fits the budget under this rule")
        if mechanism == "laplace":
            return row(e0, 0.0, sens / e0)
        if rule == "basic":  # the discrete Laplace with scale t is exactly (Δ/t)-DP, as the Laplace
            return row(e0, 0.0, sens / e0)
        t = discrete_noise(mechanism, rule, epsilon=eps, delta=d, k=k, sensitivity=sens, start=sens / e0,
                           deadline=deadline)
        if not math.isfinite(t):
            return invalid("this rule gives no bound for this noise here")
        return row(sens / t, 0.0, t)
    if rule == "basic":
        # Σεᵢ, Σδᵢ (Rogers 2017 Thm 2.1.4): nothing else needs δ, so each Gaussian gets all of its share, δ/k (issue
        # 34: compose's δ/(2k), which keeps half of δ for the slack of the advanced rules, left half of it unspent)
        e_each, d_each = bud.basic_share(eps, k), bud.basic_share(d, k)
        if mechanism == "gaussian":
            m = _up_until(lambda x: mech.gaussian_epsilon(d_each, sigma=x) <= e_each,
                          mech.gaussian_sigma(e_each, d_each))
            return row(mech.gaussian_epsilon(d_each, sigma=m), d_each, m * sens)
        si = int(round(sens))
        s = _up_until(lambda x: mech.discrete_gaussian_epsilon(d_each, sigma=x, sensitivity=si) <= e_each,
                      mech.discrete_gaussian_sigma(e_each, d_each, sensitivity=si))
        return row(mech.discrete_gaussian_epsilon(d_each, sigma=s, sensitivity=si), d_each, s)
    m = gaussian_multiplier(rule, epsilon=eps, delta=d, k=k, deadline=deadline)
    if not math.isfinite(m):
        return invalid("this rule gives no bound for Gaussian noise here")
    d_each = d / (2.0 * k)
    if mechanism == "gaussian":
        return row(mech.gaussian_epsilon(d_each, sigma=m), d_each, m * sens)
    s = discrete_noise(mechanism, rule, epsilon=eps, delta=d, k=k, sensitivity=sens, start=m * sens,
                       deadline=deadline)
    if not math.isfinite(s):
        return invalid("this rule gives no bound for this noise here")
    return row(mech.discrete_gaussian_epsilon(d_each, sigma=s, sensitivity=int(round(sens))), d_each, s)


def _up_until(ok, x: float) -> float:
    """``x`` raised by doubling relative steps from 1e-12 until ``ok`` holds (a root found within a tolerance of
    either side is moved to the side that meets the budget; at most 60 steps)."""
    step = 1e-12
    for _ in range(60):
        if ok(x):
            return x
        x *= 1.0 + step
        step *= 2.0
    raise SearchLimitError("no noise scale reaches the basic rule's share of the budget")


def budget_table(*, epsilon, delta, k, sensitivity=1.0, confidence=0.95, rules=RULES,
                 mechanisms=DEFAULT_MECHANISMS, seconds: float | None = TABLE_SECONDS) -> list[BudgetRow]:
    """Every rule × mechanism for k statistics under the total (ε, δ), in rule order.

    The whole table shares one time budget of ``seconds``: rows whose search runs past it say so in their note.
    """
    deadline = Deadline(seconds, what="the comparison")
    return [budget_row(r, m, epsilon=epsilon, delta=delta, k=k, sensitivity=sensitivity, confidence=confidence,
                       deadline=deadline)
            for r in rules for m in mechanisms]


def best_row(rows: list[BudgetRow]) -> BudgetRow | None:
    """The valid row with the smallest ± (ties: the first, i.e. the simpler rule)."""
    ok = [r for r in rows if r.valid]
    return min(ok, key=lambda r: r.half_width) if ok else None


def _g(x: float) -> str:
    """A number as the table beside the sentence shows it (4 significant figures: issue 22, a sentence must not read
    coarser than its table; it said ±59.9 beside 59.91)."""
    return sig4(x)


def budget_verdict(rows: list[BudgetRow]) -> str:
    """One plain sentence: the best accuracy per statistic and how it compares with simply dividing ε by k."""
    best = best_row(rows)
    if best is None:
        return "No rule gives a usable answer for this budget: allow a small δ or publish fewer statistics."
    conf = f"{100 * best.confidence:g}%"
    d = f" and δ = {power_of_ten(best.delta_total)}" if best.delta_total > 0 else ""
    text = (f"Publishing {best.k} statistics with a total ε = {_g(best.epsilon_total)}{d}: each can be "
            f"accurate to ±{_g(best.half_width)} ({conf} of the time) with {MECH_PLAIN[best.mechanism]} noise under "
            f"{RULE_PLAIN[best.rule].lower()}")
    basic = next((r for r in rows if r.valid and r.rule == "basic" and r.mechanism == "laplace"), None)
    if basic is not None and best is not basic and basic.half_width > best.half_width:
        text += f", {_g(basic.half_width / best.half_width)}× tighter than splitting ε equally with Laplace noise"
    return text + "."


def rows_for_people(rows: list[BudgetRow]) -> pd.DataFrame:
    """The table with plain column names; k appears in its own column (and so in the CSV)."""
    conf = f"{100 * rows[0].confidence:g}%" if rows else "95%"
    return pd.DataFrame({
        "Composition rule": [RULE_PLAIN[r.rule] for r in rows],
        "Noise": [MECH_PLAIN[r.mechanism] for r in rows],
        "Statistics (k)": [r.k for r in rows],
        "Total ε": [r.epsilon_total for r in rows],
        "Total δ": [r.delta_total for r in rows],
        "ε per statistic": [r.epsilon_each for r in rows],
        "δ per statistic": [r.delta_each for r in rows],
        "Noise scale": [r.scale for r in rows],
        "Noise standard deviation": [r.std for r in rows],
        f"± at {conf}": [r.half_width for r in rows],
        # never an all-empty column: it would not read back through our own CSV reader
        "Note": [r.note or ("—" if r.valid else "does not apply") for r in rows],
    })


def total_from_per_release(epsilon_each, *, k, delta, rules=RULES) -> pd.DataFrame:
    """The other direction: the total ε of k Laplace releases of ε₀ each, under every rule (``accounting.compose``).

    Columns: rule (plain words), statistics (k), ε per statistic, total ε, total δ. Rules that need δ > 0 are
    left out when δ = 0.
    """
    e0, k = check_epsilon(epsilon_each, name="epsilon_each"), check_size(k, name="k")
    d = check_delta(delta)
    out = []
    for r in rules:
        if d == 0.0:
            if r != "basic":
                continue
            total = acc.basic_composition([e0] * k).epsilon
        else:
            res = acc.compose([acc.laplace(e0, count=k)], delta=d, rule=r, pld_resolution=PLD_RESOLUTION)
            if not res.valid:
                continue
            total = res.epsilon
        out.append((RULE_PLAIN[r], k, e0, total, d))
    return pd.DataFrame(out, columns=["Composition rule", "Statistics (k)", "ε per statistic", "Total ε", "Total δ"])


def totals_verdict(totals: pd.DataFrame) -> str:
    """One plain sentence for the per-release → total direction: the smallest total and what adding up gives."""
    if totals.empty:
        return "No rule applies: allow a small δ."
    best = totals.loc[totals["Total ε"].idxmin()]
    k, e0 = int(best["Statistics (k)"]), float(best["ε per statistic"])
    text = (f"{k} releases of ε = {_g(e0)} each add up to a total ε of at most {_g(float(best['Total ε']))} "
            f"({best['Composition rule'].lower()})")
    basic = totals[totals["Composition rule"] == RULE_PLAIN["basic"]]
    if not basic.empty and best["Composition rule"] != RULE_PLAIN["basic"]:
        text += f"; adding up gives {_g(float(basic['Total ε'].iloc[0]))}"
    return text + "."


def make_budget_figure(rows: list[BudgetRow]) -> go.Figure:
    """Horizontal bars: the ± per statistic under each rule (rows) for each noise mechanism (colours)."""
    ok = [r for r in rows if r.valid]
    fig = go.Figure()
    conf = f"{100 * rows[0].confidence:g}%" if rows else "95%"
    for i, m in enumerate(MECHANISMS):
        g = [r for r in ok if r.mechanism == m]
        if not g:
            continue
        fig.add_trace(go.Bar(y=[RULE_PLAIN[r.rule] for r in g], x=[r.half_width for r in g], orientation="h",
                             name=f"{MECH_PLAIN[m]} noise", marker_color=palette_color(i),
                             hovertemplate="%{y}<br>±%{x:.4g}<extra>" + MECH_PLAIN[m] + "</extra>"))
    k = rows[0].k if rows else 0
    fig.update_layout(barmode="group", title=f"Accuracy of each of {k} statistics (± at {conf}; shorter is better)",
                      xaxis=dict(title=f"± per statistic at {conf}", rangemode="tozero"),
                      yaxis=dict(title=None, autorange="reversed", automargin=True),
                      legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0),
                      # room for the title above a legend of four noises, which wraps to two rows at 1280 px
                      margin=dict(t=120 if len(fig.data) > 2 else 80))
    return fig


def budget_figure_alt(rows: list[BudgetRow]) -> str:
    """Alt text for the bar chart: what it shows, with the best and the plain equal-split numbers."""
    best = best_row(rows)
    if best is None:
        return "Bar chart of the accuracy per statistic under each composition rule: no rule applies."
    return (f"Bar chart of the ± per statistic for {best.k} statistics under {len({r.rule for r in rows})} "
            f"composition rules and {len({r.mechanism for r in rows})} noise mechanisms; the smallest is "
            f"±{_g(best.half_width)} ({MECH_PLAIN[best.mechanism]} noise, {RULE_PLAIN[best.rule].lower()}).")
