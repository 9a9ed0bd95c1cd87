"""Plain-words verdicts and guidance for the coherence explorer: one or two sentences per tab, from its result.

Each function takes what a tab already computed (engine results, not widgets) and returns plain text (no
Markdown), so the page, the report and the tests read the same sentence. Numbers are rounded for reading with
``dpdash.epsilon.verdicts.number`` / ``percent``; tables and downloads keep full precision. The tables for people
(:func:`summary_for_people`, :func:`runs_for_people`, :func:`sweep_for_people`) rename the engine's columns to
plain words, in the order a reader needs them.

References
----------
Issue 14 items 1, 2 and 6 (verdict first, plain words, guidance). The quantities are those of
``seeds/000_f379639b976c7ffb.txt`` (Enforcing Demographic Coherence): W1 (Def. 5, Eq. 3), the DemCoh failure
(Def. 3), Theorem 7's size constraint (Eq. 12, erratum E1 of specs/coherence_explorer.md), Theorem 9 and 11
(§7); the split-noise floor and the failure-rate estimate are the spec's (§3.3).
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from dpdash.coherence import core as co
from dpdash.common.formatting import number, percent, power_of_ten

__all__ = ["alpha_text", "MAX_MEMBERS", "members_text", "eps_max_text", "alpha_min_text", "interval_text",
           "w1_text", "preview_verdict", "runs_verdict", "sweep_verdict", "theory_verdict", "section7_verdict",
           "small_group_warnings", "min_members_for_alpha", "builder_column_warning", "soft_output_note",
           "summary_for_people", "runs_for_people", "sweep_for_people", "floor_quantiles"]

#: Share of a group a "flag" is read against in the small-group warning: q = 1/2 gives the largest chance W1.
_WORST_Q = 0.5
#: A column with more distinct values than this is a poor "is one of" group column (spec §6: labels ≤ 20 levels).
MANY_LEVELS = 20
#: Group sizes beyond this are "more than any dataset has" (the page reads ≤ 200,000 rows): a tiny α's answer.
MAX_MEMBERS = 10**13


def alpha_text(alpha: float) -> str:
    """α as the user set it: two decimals on the slider's 0.01 grid, else its own digits (a link may carry an
    off-grid value such as 0.125 or 1e-160, which "0.12" or "0.00" would misstate; issue 26).

    >>> alpha_text(0.2), alpha_text(0.125), alpha_text(1e-160), alpha_text(0.0)
    ('0.20', '0.125', '10⁻¹⁶⁰', '0.00')
    """
    a = float(alpha)
    if not math.isfinite(a):
        return "n/a"
    if abs(a - round(a, 2)) <= 1e-12 * a:
        return f"{a:.2f}"
    return f"{a:.4g}" if a >= 1e-3 else power_of_ten(a)


def members_text(g: float) -> str:
    """A size constraint (γ) for reading: rounded **up**, as a group needs at least that many members, so the card,
    the chart and the sentence all say 12,245 for γ = 12,244.31 (issue 25: 12,245 on the card, 12,244 on the
    chart); "∞" / "n/a" where the theorem has none.

    >>> members_text(12244.3106), members_text(80.0), members_text(float("inf")), members_text(float("nan"))
    ('12,245', '80', '∞', 'n/a')
    >>> members_text(168441257.15291858), members_text(80.00000000000001)
    ('168,441,258', '80')
    """
    g = float(g)
    if math.isnan(g):
        return "n/a"
    if math.isinf(g):
        return "∞"
    # only float noise is forgiven (a relative 1e-12, thousands of ulps): 1e-9 forgave 0.17 of a member at
    # γ = 168,441,257.15 and printed 168,441,257, below the size the theorem asks for
    return f"{math.ceil(g - 1e-12 * max(1.0, abs(g))):,}"


def _sig_round(x: float, sig: int, up: bool) -> float:
    mag = math.floor(math.log10(abs(x)))
    q = 10.0 ** (mag - sig + 1)
    return (math.ceil(x / q - 1e-9) if up else math.floor(x / q + 1e-9)) * q


def eps_max_text(e: float, sig: int = 2) -> str:
    """The largest certified ε, rounded **down** (a rounded-up ε would claim a guarantee the theorem does not give).

    >>> eps_max_text(0.0063570), eps_max_text(0.1576966766), eps_max_text(float("nan"))
    ('0.0063', '0.15', 'n/a')
    """
    if e is None or not math.isfinite(float(e)) or e <= 0:
        return "n/a"
    return number(_sig_round(float(e), sig, up=False), sig)


def alpha_min_text(a: float, sig: int = 3) -> str:
    """The smallest certified α, rounded **up** (a rounded-down α would be one the theorem does not certify).

    >>> alpha_min_text(0.487498), alpha_min_text(0.1408012), alpha_min_text(float("nan"))
    ('0.488', '0.141', 'none: group too small for any α ≤ 2')
    """
    if a is None or not math.isfinite(float(a)):
        return "none: group too small for any α ≤ 2"
    return number(_sig_round(float(a), sig, up=True), sig)


def interval_text(lower: float, upper: float) -> str:
    """A failure rate's 95% interval, in the one form the card, the chart and the sentence use.

    >>> interval_text(0.0866, 0.491)
    '8.7%–49%'
    """
    return f"{percent(lower)}–{percent(upper)}"


def w1_text(w: float, against: float | None = None) -> str:
    """A W1 (0 to 2) for reading: two decimals, "n/a" when undefined.

    With ``against`` (the α line it is compared with), more decimals (up to six) when two would make a value
    that differs from α read as α: "W1 0.201, above the 0.20 line", never "W1 0.20, above the 0.20 line".

    >>> w1_text(1.96103951), w1_text(0.0), w1_text(float("nan"))
    ('1.96', '0.00', 'n/a')
    >>> w1_text(0.2005, against=0.2), w1_text(0.1996, against=0.2), w1_text(0.2, against=0.2)
    ('0.201', '0.1996', '0.20')
    """
    if w is None or not math.isfinite(float(w)):
        return "n/a"
    w = float(w)
    for decimals in range(2, 7):
        text = f"{w:.{decimals}f}"
        if against is None or w == against or text != f"{float(against):.{decimals}f}":
            return text
    return text


def _flag_words(output: str) -> str:
    return "flags" if output == "hard" else "gives a negative score to"


# ----------------------------------------------------------------------------------------- single split
def preview_verdict(*, names: Sequence[str], sizes: Sequence[int], w1: Sequence[float],
                    frac_negative: np.ndarray, in_collection: Sequence[bool], alpha: float,
                    output: str = "hard") -> str:
    """The single split's verdict: the most-affected kept group, its shares flagged in each half, against α.

    ``frac_negative[j] = (share of h < 0 among released members, among held-out members)``; W1 and the shares are
    those of :func:`dpdash.coherence.core.run_trial` (Def. 2, Eq. 3). A group above α is a failure of this split
    (Def. 3); when the largest group stays below while a smaller one fails, the sentence says the average hides it.

    >>> preview_verdict(names=["Everyone", "DREM = 1"], sizes=[18946, 1022], w1=[0.10, 1.96],
    ...                 frac_negative=np.array([[0.054, 0.003], [0.986, 0.006]]), in_collection=[True, True],
    ...                 alpha=0.2)  # doctest: +NORMALIZE_WHITESPACE
    'The predictor flags 99% of the released DREM = 1 members and 0.60% of the held-out ones (W1 1.96, above
    the 0.20 line): this release exposes them. Everyone together looks fine (W1 0.10): the overall average hides
    it.'
    """
    w = np.asarray(w1, dtype=float)
    kept = [j for j, ok in enumerate(in_collection) if ok and math.isfinite(w[j])]
    if not kept:
        return ("No kept group has members in both halves of this split, so nothing can be compared: lower γ or "
                "add a larger group.")
    worst = max(kept, key=lambda j: w[j])
    fa, fb = (float(x) for x in np.asarray(frac_negative, dtype=float)[worst])
    if w[worst] > alpha:
        over = [j for j in kept if w[j] > alpha]
        s = (f"The predictor {_flag_words(output)} {percent(fa)} of the released {names[worst]} members and "
             f"{percent(fb)} of the held-out ones (W1 {w1_text(w[worst], alpha)}, above the {alpha_text(alpha)} "
             "line): this release exposes them.")
        if len(over) > 1:
            s += f" {len(over)} of {len(kept)} kept groups are above the line."
        biggest = max(kept, key=lambda j: sizes[j])
        if w[biggest] <= alpha:
            s += (f" {names[biggest]} together looks fine (W1 {w1_text(w[biggest], alpha)}): the overall average "
                  "hides it.")
        return s
    return (f"No kept group is treated differently on this split (largest W1 {w1_text(w[worst], alpha)}, for "
            f"{names[worst]}, below the {alpha_text(alpha)} line).")


# ----------------------------------------------------------------------------------------- repeated runs
def floor_quantiles(floor: Mapping[str, np.ndarray] | None, q: float) -> dict[str, float]:
    """Per group, the ``q``-quantile of the split-noise floor's W1 (NaN where no split had members in both halves).
    """
    out: dict[str, float] = {}
    for g, v in (floor or {}).items():
        a = np.asarray(v, dtype=float)
        a = a[~np.isnan(a)]
        out[g] = float(np.quantile(a, q)) if a.size else math.nan
    return out


def _floor_means(floor: Mapping[str, np.ndarray] | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for g, v in (floor or {}).items():
        a = np.asarray(v, dtype=float)
        a = a[~np.isnan(a)]
        out[g] = float(a.mean()) if a.size else math.nan
    return out


def runs_verdict(result: co.ExperimentResult, *, alpha: float, gamma: float, estimate: co.BetaEstimate,
                 floor: Mapping[str, np.ndarray] | None = None) -> str:
    """The repeated runs' verdict: how many runs failed at α (with the interval), and the most-affected group
    against what random splitting alone produces.

    β̂ describes one learner on one dataset: a lower bound on the worst case (Def. 4; spec §3.3), so a run count of
    zero is said to prove nothing, and rates below 1/R to be unresolved.
    """
    inc = result.in_collection(gamma)
    means = {}
    for j, (nm, ok) in enumerate(zip(result.group_names, inc)):
        col = result.w1[:, j]
        if ok and np.any(~np.isnan(col)):
            means[nm] = float(np.nanmean(col))
    worst = max(means, key=means.get) if means else None
    fl = _floor_means(floor)
    k, R = estimate.failures, estimate.runs
    if k > 0:
        s = (f"In {k} of {R} runs at least one kept group was treated differently (W1 above {alpha_text(alpha)}); "
             f"the failure rate lies between {percent(estimate.lower)} and {percent(estimate.upper)} (95% "
             f"confidence), so this release does not keep groups coherent at α = {alpha_text(alpha)} with a failure "
             f"rate below {percent(estimate.lower)}.")
    else:
        top = np.nanmax(result.max_w1(gamma))
        s = (f"No run out of {R} had a kept group above {alpha_text(alpha)} (largest W1 {w1_text(top, alpha)}). "
             "This learner found nothing, which does not prove that others cannot; failure rates below "
             f"{percent(1 / R)} are not resolved with {R} runs.")
    if worst is not None:
        s += f" Most affected: {worst}, mean W1 {w1_text(means[worst])} over the runs"
        if math.isfinite(fl.get(worst, math.nan)):
            s += f", against {w1_text(fl[worst])} from random splitting alone"
        s += "."
    return s


# ----------------------------------------------------------------------------------------- ε sweep
def sweep_verdict(sweep: pd.DataFrame, *, alpha: float, floor: Mapping[str, np.ndarray] | None = None) -> str:
    """The ε sweep's verdict: up to which ε every group's mean W1 stays at or below the α line, the first ε (and
    group) above it, and what the most-affected group reaches at the largest ε tried, beside what random
    splitting alone gives it (the mean of the split-noise floor, spec §3.3).

    ``sweep`` has the columns of :func:`dpdash.coherence.core.run_epsilon_sweep` (epsilon, group, mean_w1, …);
    ε = ∞ is the exact histogram (not DP).
    """
    d = sweep.dropna(subset=["mean_w1"])
    if d.empty:
        return "No group had members in both halves in any run: nothing to compare."
    line = f"the α = {alpha_text(alpha)} line"
    top_eps = float(d["epsilon"].max())
    at_top = d[d["epsilon"] == top_eps]
    worst = at_top.loc[at_top["mean_w1"].idxmax()]
    eps_words = "with no noise (exact histogram, not DP)" if math.isinf(top_eps) else f"at ε = {top_eps:g}"
    chance = _floor_means(floor).get(worst["group"], math.nan)
    tail = f"{eps_words} {worst['group']} reaches {w1_text(worst['mean_w1'])}"
    tail += f" (random splitting alone gives it {w1_text(chance)})." if math.isfinite(chance) else "."
    finite = sorted(float(e) for e in d["epsilon"].unique() if math.isfinite(e))
    first_bad = None
    for e in finite:
        grp = d[d["epsilon"] == e]
        if (grp["mean_w1"] > alpha).any():
            first_bad = (e, grp.loc[grp["mean_w1"].idxmax()])
            break
    if first_bad is None:
        return (f"At every ε tried (up to {finite[-1]:g}) every group's mean W1 stays at or below {line}; "
                + tail if finite else tail[0].upper() + tail[1:])
    e_bad, row = first_bad
    below = [e for e in finite if e < e_bad]
    if not below:
        return (f"Even at ε = {e_bad:g}, {row['group']} has a mean W1 of {w1_text(row['mean_w1'], alpha)}, "
                f"above {line}; " + tail)
    return (f"Up to ε = {below[-1]:g} every group's mean W1 stays at or below {line}; at ε = {e_bad:g} "
            f"{row['group']} rises to {w1_text(row['mean_w1'], alpha)}, and {tail}")


# ----------------------------------------------------------------------------------------- theory
def theory_verdict(*, gamma_required: float, n: int, epsilon: float, meets: int, kept: int, dp_release: bool,
                   alpha: float, smallest: tuple[str, int] | None = None, eps_for_smallest: float = math.nan) -> str:
    """Theorem 7's verdict: how many kept groups its size constraint γ covers at this ε, or that it is vacuous.

    ``gamma_required`` is ``dpdash.accounting.maxinfo.gamma_pure(...).gamma`` (Theorem 7, Eq. 12 with erratum E1);
    ``eps_for_smallest`` is ``dpdash.accounting.maxinfo.eps_max`` for the smallest kept group (NaN: none certifies it).

    >>> theory_verdict(gamma_required=2.5e6, n=18946, epsilon=1.0, meets=0, kept=2, dp_release=True,
    ...                alpha=0.2, smallest=("DREM = 1", 1022), eps_for_smallest=float("nan"))
    ... # doctest: +NORMALIZE_WHITESPACE
    'At ε = 1, Theorem 7 needs groups of at least 2,500,000 members, more than the whole dataset (18,946
    records): it protects no group here. No ε certifies DREM = 1 (1,022 members) at α = 0.20.'
    """
    head = f"At ε = {epsilon:g}, " if dp_release else f"If this release were ε-DP with ε = {epsilon:g}, "
    g = members_text(gamma_required)  # a size to reach: rounded up, never down
    if gamma_required > n:
        s = (f"{head}Theorem 7 needs groups of at least {g} members, more than the whole dataset ({n:,} "
             "records): it protects no group here.")
    else:
        s = (f"{head}Theorem 7 keeps every group of at least {g} members coherent within α = {alpha_text(alpha)}: "
             f"{meets} of {kept} kept groups are that large.")
    if smallest is not None and meets < kept:
        nm, m = smallest
        if math.isfinite(eps_for_smallest):
            s += (f" ε ≤ {eps_max_text(eps_for_smallest)} would protect the smallest kept group, {nm} ({m:,} "
                  "members).")
        else:
            s += f" No ε certifies {nm} ({m:,} members) at α = {alpha_text(alpha)}."
    return s


# ----------------------------------------------------------------------------------------- Section 7
def section7_verdict(res: co.SingleColumnResult, *, column: str, curator: str) -> str:
    """Section 7's verdict: the largest W1 of the one-bit predictor over the splits, and how often the paper's
    bound (Theorem 9 for the column, Theorem 11 for the count) was exceeded for any group.
    """
    w = np.asarray(res.w1, dtype=float)
    reps = w.shape[0]
    if not np.any(~np.isnan(w)):
        return "No group had members in both halves: nothing to compare."
    col_max = np.nanmax(w, axis=0)
    j = int(np.nanargmax(col_max))
    with np.errstate(invalid="ignore"):
        above = np.any(w > np.asarray(res.bound)[None, :], axis=1)
    k = int(above.sum())
    what = f"the column {column}" if curator == "column" else f"only the count of ones in {column}"
    thm = "Theorem 9" if curator == "column" else "Theorem 11"
    s = (f"Publishing {what}: over {reps:,} random splits the largest W1 was {w1_text(col_max[j])} "
         f"({res.group_names[j]}), and {thm}'s bound was exceeded in {k:,} of {reps:,} splits.")
    finite_bounds = [b for b in res.bound if math.isfinite(b)]
    if finite_bounds and min(finite_bounds) >= 2:
        s += f" The bound is above 2 for every group here, so {thm} says nothing at this size."
    return s


# ----------------------------------------------------------------------------------------- guidance
def _chance_w1(m: float) -> float:
    """Expected W1 by chance for a group of m at q = 1/2 (spec §3.3), for any m ≥ 2 (also beyond an int's float)."""
    return co.expected_floor_binary(_WORST_Q, 2) * math.sqrt(2.0 / m)


def min_members_for_alpha(alpha: float) -> int | float | None:
    """Smallest group size at which random splitting alone gives an expected W1 ≤ α for a predictor flagging
    half of the group (the worst case of the spec's §3.3 floor): ``ceil(8/(π α²))``, at least 2.

    Solved in log space, so every α of the control's range [0, 2] has an answer (issue 26: a doubling search
    overflowed for α < 1e−154); ``math.inf`` when the size exceeds :data:`MAX_MEMBERS`, None for α ≤ 0.

    >>> min_members_for_alpha(0.2), min_members_for_alpha(1e-160)
    (64, inf)
    """
    if not alpha > 0:
        return None
    log_m = math.log(8.0 / math.pi) - 2.0 * math.log(float(alpha))
    if log_m > math.log(MAX_MEMBERS):
        return math.inf
    m = max(2, math.ceil(math.exp(log_m)))
    # the closed form rounded through exp/log may land one off the exact boundary: settle it on the formula
    while m > 2 and _chance_w1(m - 1) <= alpha:
        m -= 1
    while _chance_w1(m) > alpha:
        m += 1
    return m


def small_group_warnings(group_sizes: Mapping[str, int], in_collection: Mapping[str, bool], *,
                         alpha: float) -> list[str]:
    """One warning per kept group so small that random splitting alone can put its W1 above α.

    The chance level is the spec's floor ``4·sqrt(q(1−q)/m)·sqrt(2/π)`` at q = 1/2 (§3.3); the fix is to merge the
    group into a larger one or raise γ to the size at which chance stays below α. When even the largest kept
    group is below that size (a tiny α), one warning says so and names the α that group needs instead.
    """
    need = min_members_for_alpha(alpha)
    if need is None:
        return []
    kept = {g: m for g, m in group_sizes.items() if in_collection.get(g) and m >= 2}
    if not kept:
        return []
    big, m_big = max(kept.items(), key=lambda kv: kv[1])
    a = alpha_text(alpha)
    if m_big < need:
        return [f"At α = {a} random splitting alone puts every kept group above the line: even the largest, "
                f"{big} ({m_big:,} members), gets a W1 of about {number(_chance_w1(m_big))} by chance, so almost "
                f"every run fails whatever the release. Choose α above {number(_chance_w1(m_big))} for a test "
                "that can tell releases apart."]
    out = []
    for g, m in kept.items():
        if m < need:
            out.append(f"{g} has only {m:,} members: random splitting alone gives it a W1 of about "
                       f"{w1_text(_chance_w1(m), alpha)}, above the {a} line, so its result says little about the "
                       f"release. Merge it into a larger group, or raise γ to {need:,} to leave such groups out.")
    return out


def builder_column_warning(column: str, n_levels: int, n: int) -> str | None:
    """A warning when the group builder's "is one of" column has dozens of values (one value is a tiny group).

    >>> builder_column_warning("AGEP", 95, 20000)  # doctest: +NORMALIZE_WHITESPACE
    'AGEP has 95 different values: one value holds about 210 of the 20,000 records on average. Choose several
    values, or use "in range" to take a span of them.'
    """
    if n_levels <= MANY_LEVELS:
        return None
    return (f"{column} has {n_levels:,} different values: one value holds about {number(n / n_levels)} of the "
            f"{n:,} records on average. Choose several values, or use \"in range\" to take a span of them.")


def soft_output_note(learner: str, output: str) -> str | None:
    """Say when the output choice does nothing: a 1-nearest-neighbour predictor's probabilities are 0 or 1, so its
    soft output (2·P − 1) equals the hard one."""
    if learner == "nearest_neighbor" and output == "soft":
        return ("A 1-nearest-neighbour predictor only answers yes or no, so \"soft\" output gives the same "
                "predictions as \"hard\". Choose a random forest or logistic regression to see graded scores.")
    return None


# ----------------------------------------------------------------------------------------- tables for people
def summary_for_people(summary: pd.DataFrame, floor: Mapping[str, np.ndarray] | None = None) -> pd.DataFrame:
    """The per-group summary (:func:`dpdash.coherence.core.summarize`) with plain column names, plus the split-noise
    floor's mean and 95th percentile per group."""
    fm, fq = _floor_means(floor), floor_quantiles(floor, 0.95)
    out = pd.DataFrame({
        "group": summary["group"],
        "members": summary["size"].astype(int),
        "kept (at least γ members)": np.where(summary["in_collection"], "yes", "no"),
        "mean W1 over runs": summary["mean_w1"],
        "W1 spread (s.d.)": summary["sd_w1"],
        "W1, 95th percentile": summary["q95_w1"],
        "largest W1": summary["max_w1"],
        "share flagged, released half": summary["frac_negative_a"],
        "share flagged, held-out half": summary["frac_negative_b"],
        "W1 from chance alone (mean)": [fm.get(g, math.nan) for g in summary["group"]],
        "W1 from chance alone (95th percentile)": [fq.get(g, math.nan) for g in summary["group"]],
        "runs without a value": summary["undefined_runs"].astype(int),
    })
    return out


def runs_for_people(table: pd.DataFrame) -> pd.DataFrame:
    """The per-run table (:meth:`dpdash.coherence.core.ExperimentResult.w1_table`) with plain column names."""
    return table.rename(columns={
        "rep": "run", "size": "members", "w1": "W1", "size_a": "released members", "size_b": "held-out members",
        "frac_negative_a": "share flagged, released half", "frac_negative_b": "share flagged, held-out half",
    })


def sweep_for_people(export: pd.DataFrame) -> pd.DataFrame:
    """The ε-sweep table as exported (:func:`dpdash.coherence.core.sweep_for_export`) with plain column names."""
    return export.rename(columns={
        "epsilon": "ε", "dp": "differentially private", "size": "members", "mean_w1": "mean W1",
        "q05_w1": "W1, 5th percentile", "q95_w1": "W1, 95th percentile",
    })
