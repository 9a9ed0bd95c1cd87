"""Plain-words verdicts for the leximax cohort picker: the sentences each tab leads with, computed from its result.

Each function takes what a tab already computed (engine results, not widgets) and returns plain text (no
Markdown), so the page, the report and the tests read the same sentence. Numbers are rounded for reading with
``dpdash.epsilon.verdicts.number`` / ``percent`` (2 significant figures); tables and downloads keep full precision.

References
----------
Issue 14 items 1 (a verdict on every result) and 6 (guidance: candidates with zero chance, groups far above their
pool share, quotas that cannot be met). The quantities are those of [b] = ``003_4b386133f61617e9.txt`` (Henzinger
et al., FORC 2022) §4.1 — expected group utility y = Vᵀx of marginals x with Σx = k — and, for the quota tab,
the leximin selection probabilities of Flanigan et al., *Nature* 596 (2021). "Uniform" is every candidate with
chance k/n, i.e. a cohort of k drawn uniformly at random (each k-subset equally likely).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from dpdash.common.formatting import number, percent

__all__ = ["CohortFacts", "cohort_facts", "cohort_verdicts", "over_represented", "over_represented_warning",
           "zero_chance_warning", "draw_verdict", "panel_verdicts", "finite_verdict", "is_membership", "utility_text"]

#: Chances within this of each other count as equal; a chance at most this counts as zero (LP round-off).
CHANCE_TOL = 1e-9
#: Group utilities within this of the smallest are tied for worst off (the LP verifier's tolerance, 1e-7).
TIE_TOL = 1e-7


def _names(items: Sequence[str], limit: int = 6) -> str:
    """"a, b and c" (at most ``limit`` names, then "and N more")."""
    items = [str(s) for s in items]
    if len(items) > limit:
        return ", ".join(items[:limit]) + f" and {len(items) - limit} more"
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _candidates(c: int) -> str:
    return f"{c:,} candidate" + ("" if c == 1 else "s")


def is_membership(V) -> bool:
    """True when every value is 0 or 1 (a group's utility is then its expected number of members)."""
    V = np.asarray(V, dtype=float)
    return bool(np.all((V == 0) | (V == 1)))


@dataclass(frozen=True)
class CohortFacts:
    """The numbers the cohort tab's verdict names (all from the marginals x and the values V).

    worst_groups / worst_utility: the groups within TIE_TOL of the smallest expected utility y = Vᵀx (LP round-off
    must not pick one of two tied groups) and that utility; uniform_worst_group / uniform_worst_utility: the
    same for every chance k/n;
    min_chance / max_chance: smallest and largest x_i; n_zero: candidates with x_i ≤ CHANCE_TOL; top_count: the
    fewest candidates whose chances add up to at least half of k, and top_seats the share of k they hold.
    """

    n: int
    k: int
    worst_groups: tuple[str, ...]
    worst_utility: float
    uniform_worst_group: str
    uniform_worst_utility: float
    min_chance: float
    max_chance: float
    n_zero: int
    top_count: int
    top_seats: float
    membership: bool


def cohort_facts(V, x, *, k: int, group_names: Sequence[str]) -> CohortFacts:
    """The cohort verdict's numbers from the values V (n × m) and the marginals x (Σx = k)."""
    V = np.asarray(V, dtype=float)
    x = np.asarray(x, dtype=float)
    n = x.size
    y = V.T @ x
    yu = V.T @ np.full(n, k / n)
    worst = tuple(str(g) for g, v in zip(group_names, y) if v <= y.min() + TIE_TOL)
    ju = int(np.argmin(yu))
    desc = np.sort(x)[::-1]
    # the fewest candidates holding at least half the seats (tolerance: an LP's chances add up to k ± 1e-9)
    top = int(np.searchsorted(np.cumsum(desc), 0.5 * k - CHANCE_TOL) + 1)
    top = min(top, n)
    return CohortFacts(n=n, k=int(k), worst_groups=worst, worst_utility=float(y.min()),
                       uniform_worst_group=str(group_names[ju]), uniform_worst_utility=float(yu[ju]),
                       min_chance=float(x.min()), max_chance=float(x.max()),
                       n_zero=int((x <= CHANCE_TOL).sum()), top_count=top,
                       top_seats=float(desc[:top].sum() / k), membership=is_membership(V))


def utility_text(y: float) -> str:
    """An expected group utility as the page's card shows it: 4 significant figures, no padding zeros.

    The verdict and the "Worst-off group can expect" card both call this, so they never disagree (31/30 is "1.033"
    in both, not "1.0" in the sentence). LP round-off within 1e-9 of zero reads "0".

    >>> utility_text(31 / 30), utility_text(4 / 11), utility_text(0.5), utility_text(-3e-12), utility_text(1234.5)
    ('1.033', '0.3636', '0.5', '0', '1,234')
    """
    y = float(y)
    return "0" if abs(y) < 1e-9 else f"{y:,.4g}"


def cohort_verdicts(facts: CohortFacts, *, what: str = "leximax") -> list[str]:
    """Two or three sentences: what the worst-off group gets (vs uniform), and how the seats are spread.

    ``what`` names the selection chances ("leximax", "the ε-significant chances", …).
    """
    f = facts
    worst = utility_text(f.worst_utility)
    unit = ("member" if worst == "1" else "members") if f.membership else "in total value"
    who = (f"the worst-off group, {f.worst_groups[0]}, can" if len(f.worst_groups) == 1
           else f"the worst-off groups, {_names(f.worst_groups)}, can each")
    first = (f"With {what} chances, {who} expect {worst} {unit} in a cohort of {f.k}; "
             f"picking {f.k} of the {f.n:,} candidates uniformly at random would give the worst-off group "
             f"({f.uniform_worst_group}) {utility_text(f.uniform_worst_utility)}.")
    out = [first]
    if f.max_chance - f.min_chance <= CHANCE_TOL:
        out.append(f"Every candidate has the same chance, {percent(f.min_chance)}.")
        return out
    out.append(f"{percent(f.top_seats)} of the seats go to {_candidates(f.top_count)} "
               f"({percent(f.top_count / f.n)} of the pool).")
    if f.n_zero:
        out.append(f"{_candidates(f.n_zero)} of {f.n:,} have no chance of being selected; the most likely "
                   f"candidate has {percent(f.max_chance)}.")
    else:
        out.append(f"Every candidate has at least a {percent(f.min_chance)} chance (uniform would give everyone "
                   f"{percent(f.k / f.n)}); the most likely has {percent(f.max_chance)}.")
    return out


def zero_chance_warning(ids: Sequence[str], x, *, unique_utilities: bool = True) -> str | None:
    """Guidance when some candidates can never be drawn: who, and why that can be legitimate."""
    x = np.asarray(x, dtype=float)
    zero = [str(i) for i, v in zip(ids, x) if v <= CHANCE_TOL]
    if not zero:
        return None
    note = (" Leximax fixes what each group gets, not who is drawn: other chances with the same group utilities "
            "may exist." if unique_utilities else "")
    return (f"{_candidates(len(zero))} ({_names(zero)}) can never be selected with these chances: they add "
            f"nothing a worse-off group needs.{note} If everyone must have a chance, add a group they belong to "
            "or compare with uniform selection.")


def over_represented(V, x, *, k: int, group_names: Sequence[str], factor: float = 2.0,
                     min_seats: float = 0.5) -> list[tuple[str, float, float]]:
    """Membership pools: groups whose share of the expected seats is at least ``factor`` × their pool share.

    Returns (group, pool share, seat share) with seat share = y_j / k and pool share = mean of column j; only
    groups with at least ``min_seats`` expected members (one stray seat is not a pattern). Empty unless every
    value is 0 or 1 (with other values a group's utility is not a head count).
    """
    V = np.asarray(V, dtype=float)
    if not is_membership(V):
        return []
    y = V.T @ np.asarray(x, dtype=float)
    pool = V.mean(axis=0)
    out = [(str(g), float(p), float(s / k)) for g, p, s in zip(group_names, pool, y)
           if p > 0 and s >= min_seats and s / k >= factor * p]
    return sorted(out, key=lambda t: -t[2] / t[1])


def over_represented_warning(rows: Sequence[tuple[str, float, float]], limit: int = 3) -> str | None:
    """"'age=65+' is 5.0% of the pool but holds 20% of the expected seats (4.0× its share)."."""
    if not rows:
        return None
    parts = [f"{g} is {percent(p)} of the pool but holds {percent(s)} of the expected seats "
             f"({number(s / p)}× its share)" for g, p, s in rows[:limit]]
    more = f" ({len(rows) - limit} more groups likewise)" if len(rows) > limit else ""
    return ("; ".join(parts) + more + ". Leximax lifts the worst-off groups first, and a small group's members "
            "often belong to other groups it needs, so small groups can end up far above their pool share. If "
            "seats should follow pool shares, use the 'share' value rule (attributes upload) or quotas.")


#: Realised utilities within this of each other are the same value (sums of a few floats, e.g. 0.5 + 0.4 ≠ 0.9).
VALUE_TOL = 1e-9


def draw_verdict(worst_per_draw, *, expected_min: float, n_draws: int, scheme: str, seed: int) -> str:
    """"In expectation every group gets at least 1.033; in 100% of 10,000 simulated single draws … got less. The
    lowest it got was 0.9, in 33% of draws."

    Every share is counted in the draws, never read off a quantile: with few possible cohorts the 5% quantile is
    a value many draws sit at, not one 5% fall below (issue 22: LX1, k = 3 said "in 5% of draws less than 0.9"
    when no draw is below 0.9 and a third are at it). A low quantile is named with the share of draws at or below
    it, counted, and only when it differs from the lowest value.
    """
    w = np.asarray(worst_per_draw, dtype=float)
    below = float((w < expected_min - 1e-12).mean())
    lowest = float(w.min())
    at_lowest = float((w <= lowest + VALUE_TOL).mean())
    q05 = float(np.quantile(w, 0.05))
    how = "exactly k members" if scheme == "dependent" else "k members on average"
    text = (f"In expectation every group gets at least {utility_text(expected_min)}; in {percent(below)} of "
            f"{n_draws:,} simulated single draws ({how}, seed {seed}) the worst-off group got less. The lowest it "
            f"got was {utility_text(lowest)}, in {percent(at_lowest)} of draws")
    if q05 > lowest + VALUE_TOL:
        text += f"; in {percent(float((w <= q05 + VALUE_TOL).mean()))} of draws it got {utility_text(q05)} or less"
    return text + "."


def panel_verdicts(probabilities, *, k: int, baseline=None, never: Sequence[str] = (),
                   interval: tuple[float, float] | None = None, sample: tuple[int, int] | None = None) -> list[str]:
    """Quota tab: the smallest chance against the equal chance k/n, the largest, and the uniform baseline.

    ``interval`` is the baseline share's 95% interval and ``sample`` (accepted, drawn) the rejection sample it
    rests on (issue 34: a Monte Carlo number carries its uncertainty and its sample size)."""
    p = np.asarray(probabilities, dtype=float)
    n = p.size
    pmin, pmax = float(p.min()), float(p.max())
    out = [f"Every volunteer has at least a {percent(pmin)} chance of a seat (equal chances would be k/n = "
           f"{percent(k / n)}); the largest chance is {percent(pmax)}."]
    if never:
        out[0] = (f"{len(never):,} of {n:,} volunteers can never be selected under these quotas; the largest chance "
                  f"is {percent(pmax)} (equal chances would be {percent(k / n)}).")
    if baseline is not None:
        b = np.asarray(baseline, dtype=float)
        below = float((b < pmin - 1e-9).mean())
        ci = f" (95% interval {percent(interval[0])} to {percent(interval[1])})" if interval is not None else ""
        est = (f"; estimated from the {sample[0]:,} of {sample[1]:,} random panels that met the quotas"
               if sample is not None else "")
        out.append(f"Picking uniformly among the panels that meet the quotas would give {percent(below)}{ci} of "
                   f"volunteers less than that (smallest chance {percent(float(b.min()))}{est}).")
    return out


def _set_words(members) -> str:
    return _names([f"S{s + 1}" for s in sorted(members)], limit=8) if members else "none"


def finite_verdict(sets: Mapping[str, frozenset], *, epsilon: float) -> str:
    """Finite-set tab: the leximax solution(s), the ε-tradeoff set and the ε-significant set, named S1, S2, ….

    ``sets`` has the keys "leximax", "tradeoff" (= ε-recursive, [b] Thm 11) and "significant" (Def 12).
    """
    lex, trade, sig = sets["leximax"], sets["tradeoff"], sets["significant"]
    eps = f"{epsilon:g}"
    s = (f"{_set_words(lex)} {'is' if len(lex) == 1 else 'are'} leximax; with slack ε = {eps}, "
         f"{_set_words(trade)} {'is' if len(trade) == 1 else 'are'} ε-tradeoff (= ε-recursive) and "
         f"{_set_words(sig)} {'is' if len(sig) == 1 else 'are'} ε-significant.")
    if not (lex & sig):
        s += " The ε-significant choice leaves out the exact leximax: a tiny loss for a worse-off group buys a " \
             "large gain for the next."
    return s
