"""Plain-words verdicts and guidance for the stratified synthesis viewer, computed from its results.

Each function takes numbers a view already computed (engine results, not widgets) and returns plain text (no
Markdown), so the page, the report and the tests read the same sentence. Numbers are rounded for reading with
:func:`dpdash.epsilon.verdicts.number`; tables and downloads keep full precision.

References
----------
Issue 14 items 1 (a verdict on every result) and 6 (guidance where users go wrong). The quantities are those of
``004_c5ca305e20a1adba.txt`` (Rosenblatt, Stoyanovich & Musco, arXiv 2312.11712): per-group error of the naive
and stratified clipped-Laplace means (Eq. 2–4, L111–135), the crossover of spec §2.4, Definition 11 (parity),
Definition 13 (workload error); and ``001_cddb039cfb564267.txt`` §5 for the partially private release.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from dpdash.common.formatting import number, percent
from dpdash.common.view import Sentence

#: The experiment's method names of the global and the per-group release, per estimator.
GLOBAL_METHODS = ("naive", "coinpress")
STRATIFIED_METHODS = ("stratified", "strat_coinpress")
#: At or above this many groups the page warns that the groups are too many for their records.
MANY_GROUPS = 24
#: A share of clipped values above this is reported as a problem (clipping biases the means).
CLIP_WARN_SHARE = 0.05
#: A ratio within this factor of 1 is read as "about the same".
SAME = 1.1


def records(m: int) -> str:
    """ "1 record", "1,234 records"."""
    m = int(m)
    return f"{m:,} record" + ("" if m == 1 else "s")


def _list(names: Sequence[str], limit: int = 3) -> str:
    names = list(names)
    if len(names) <= limit:
        return ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1] if names else ""
    return ", ".join(names[:limit]) + f" and {len(names) - limit} more"


def _ratio_words(before: float, after: float) -> str:
    """ "3.2× smaller", "1.5× larger", "about the same" (after relative to before)."""
    if not (math.isfinite(before) and math.isfinite(after)) or before <= 0 or after <= 0:
        return "not comparable"
    r = after / before
    if 1 / SAME <= r <= SAME:
        return "about the same"
    return f"{number(1 / r)}× smaller" if r < 1 else f"{number(r)}× larger"


# --------------------------------------------------------------------------- mean estimation
def group_error_comparison(df: pd.DataFrame, *, epsilon: float, labels: Sequence[str],
                           status: Sequence[str]) -> pd.DataFrame:
    """Mean |error| per group of the global (naive) and the stratified release at one ε, over the repetitions.

    ``df`` is the long format of ``dpdash.stratify.core.run_mean_experiment``; ``status`` is each group's fate
    ("kept", "pooled", "dropped", from ``strata_layout``). Returns one row per group with records (mean size
    over the repetitions), status, mean |error| of each release (NaN where nothing was released) and the
    number of repetitions; column names are plain words (the table is shown and downloaded).
    """
    at = df[(df["level"] == "group") & np.isclose(df["epsilon"].to_numpy(float), epsilon)]
    glob = at[at["method"].isin(GLOBAL_METHODS)].groupby("group")
    strat = at[at["method"].isin(STRATIFIED_METHODS)].groupby("group")
    k = len(labels)
    idx = np.arange(k)
    out = pd.DataFrame({
        "group": list(labels),
        "records": glob["n_i"].mean().reindex(idx).to_numpy(),
        "status": list(status),
        "mean error, one global release": glob["abs_err"].mean().reindex(idx).to_numpy(),
        "mean error, per-group release": strat["abs_err"].mean().reindex(idx).to_numpy(),
        "repetitions": glob["rep"].nunique().reindex(idx).fillna(0).astype(int).to_numpy(),
    })
    return out


def mean_verdict(comparison: pd.DataFrame, *, epsilon: float, pop_global: float, pop_stratified: float,
                 reps: int) -> list[str]:
    """Two sentences: how many groups stratification helped (naming those it hurt) and the population's price.

    ``comparison`` is :func:`group_error_comparison`'s table; ``pop_*`` are the mean |error| of the population
    estimate of each release. A group counts as helped when its mean stratified error is below its global one.

    >>> t = pd.DataFrame({"group": ["A", "B"], "records": [900, 1], "status": ["kept", "kept"],
    ...                   "mean error, one global release": [0.5, 0.5],
    ...                   "mean error, per-group release": [0.01, 9.0], "repetitions": [10, 10]})
    >>> mean_verdict(t, epsilon=1, pop_global=0.01, pop_stratified=0.02, reps=10)[0].split("; ")[1]
    'B (1 record) got worse.'
    """
    g = comparison["mean error, one global release"].to_numpy(float)
    s = comparison["mean error, per-group release"].to_numpy(float)
    released = np.isfinite(g) & np.isfinite(s)
    helped = released & (s < g)
    hurt = released & ~helped
    n_rel = int(released.sum())
    reps_txt = f"averaged over {reps:,} repetition{'s' if reps != 1 else ''}"
    lead = f"At ε = {epsilon:g}, releasing each group on its own (full ε each)"
    if n_rel == 0:
        return [f"{lead} released no group: every group is below the minimum stratum size and dropped."]
    if hurt.any():
        order = np.argsort(comparison["records"].to_numpy(float)[hurt], kind="stable")
        names = [f"{comparison['group'].iloc[i]} ({records(round(comparison['records'].iloc[i]))}"
                 + (", pooled" if comparison["status"].iloc[i] == "pooled" else "") + ")"
                 for i in np.flatnonzero(hurt)[order]]
        first = (f"{lead} lowered the error of {int(helped.sum())} of {n_rel} groups, {reps_txt}; "
                 f"{_list(names)} got worse.")
    else:
        first = f"{lead} lowered the error of all {n_rel} groups, {reps_txt}."
    med_g, med_s = float(np.median(g[released])), float(np.median(s[released]))
    if n_rel >= 3 and med_s < med_g:
        first += (f" The median group's error went from {number(med_g)} to {number(med_s)} "
                  f"({_ratio_words(med_g, med_s)}).")
    dropped = int((~released).sum())
    if dropped:
        first += f" {dropped} group{'s were' if dropped != 1 else ' was'} not released (dropped as too small)."
    return [first, population_text(pop_global, pop_stratified)]


def population_text(pop_global: float, pop_stratified: float) -> str:
    """The population estimate's mean |error|, global release then per-group release, and their ratio in words."""
    second = (f"The population estimate's error went from {number(pop_global)} to {number(pop_stratified)} "
              f"({_ratio_words(pop_global, pop_stratified)})")
    return second + (": the price of adding every group's noise." if pop_stratified > pop_global * SAME else ".")


def count_tone(helped: int, compared: int) -> str:
    """The tone of "stratification lowered the error of ``helped`` of ``compared`` groups".

    Every group better is good news; half of them or fewer is bad news (a warning); anything between is mixed
    (neutral). Issue 22: "51 of 234 groups better, 183 worse" had been shown as good news.

    >>> count_tone(9, 9), count_tone(8, 9), count_tone(51, 234)
    ('good', 'neutral', 'warning')
    """
    if compared <= 0:
        return "warning"
    if helped >= compared:
        return "good"
    return "warning" if 2 * helped <= compared else "neutral"


def ratio_tone(before: float, after: float) -> str:
    """The tone of an error going from ``before`` to ``after``: good when it is about the same or smaller
    (:data:`SAME`), neutral when it grows up to twofold (the expected price), a warning beyond."""
    if not (math.isfinite(before) and math.isfinite(after)) or before <= 0:
        return "neutral"
    r = after / before
    if r <= SAME:
        return "good"
    return "neutral" if r <= 2 else "warning"


def _helped_counts(before, after) -> tuple[int, int]:
    g, s = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    ok = np.isfinite(g) & np.isfinite(s)
    return int((ok & (s < g)).sum()), int(ok.sum())


def mean_verdict_sentences(comparison: pd.DataFrame, *, epsilon: float, pop_global: float, pop_stratified: float,
                           reps: int) -> tuple[Sentence, Sentence] | tuple[Sentence]:
    """:func:`mean_verdict` with the tone each sentence's news deserves (:func:`count_tone`, :func:`ratio_tone`)."""
    texts = mean_verdict(comparison, epsilon=epsilon, pop_global=pop_global, pop_stratified=pop_stratified,
                         reps=reps)
    helped, compared = _helped_counts(comparison["mean error, one global release"],
                                      comparison["mean error, per-group release"])
    out = [Sentence(texts[0], count_tone(helped, compared))]
    if len(texts) > 1:
        out.append(Sentence(texts[1], ratio_tone(pop_global, pop_stratified)))
    return tuple(out)


def parity_verdict(phi: dict, *, epsilon: float, normalized: bool, reps: int) -> Sentence:
    """The Parity tab's answer: Definition 11's parity error of the global and the per-group release at ε.

    ``phi`` maps method names (``naive``/``coinpress`` for the global release, ``stratified``/
    ``strat_coinpress`` for the per-group one, optionally ``split``) to the mean parity error over the
    repetitions (``dpdash.stratify.core.mean_parity_by_method``). Lower is fairer; the tone follows the change.
    Source: 004_c5ca305e20a1adba.txt Definition 11 (L183–193), a sum with ω = 1/k (erratum E7).
    """
    glob = next((float(phi[m]) for m in GLOBAL_METHODS if m in phi), float("nan"))
    strat = next((float(phi[m]) for m in STRATIFIED_METHODS if m in phi), float("nan"))
    form = "normalised form, each error divided by the true mean" if normalized else "absolute form"
    head = (f"At ε = {epsilon:g}, the parity error (Definition 11, {form}; lower means the groups are served more "
            f"evenly) is {number(glob)} with one global release and {number(strat)} with the per-group release "
            f"({_ratio_words(glob, strat)}), averaged over {reps:,} repetition{'s' if reps != 1 else ''}")
    if "split" in phi and math.isfinite(float(phi["split"])):
        head += f"; splitting the budget gives {number(float(phi['split']))}"
    if not (math.isfinite(glob) and math.isfinite(strat)) or glob <= 0 or strat <= 0:
        tone = "neutral"
    elif strat * SAME < glob:
        tone = "good"
    elif strat > glob * SAME:
        tone = "warning"
    else:
        tone = "neutral"
    return Sentence(head + ".", tone)


def clipped_share(x, groups, clip_of_group) -> tuple[int, int]:
    """How many values lie outside ±C of their group's clip width (those the release clips), and how many in all.

    ``clip_of_group[g]`` is the half-width used for group ``g`` (NaN for a group not released: not counted).
    """
    x = np.asarray(x, dtype=float).ravel()
    c = np.asarray(clip_of_group, dtype=float)[np.asarray(groups, dtype=np.int64).ravel()]
    use = np.isfinite(c)
    return int(np.sum(np.abs(x[use]) > c[use])), int(use.sum())


def clipping_guidance(n_clipped: int, n_total: int, *, upload: bool, low: float | None = None,
                      high: float | None = None, median: float | None = None) -> str | None:
    """A warning when more than :data:`CLIP_WARN_SHARE` of the values are clipped, with the count and the fix.

    For an upload the fix is the public centre and scale (the raw column's median and range are given to help
    choose them, with the caveat that numbers read from the data are not public); otherwise the public bound R.
    """
    if n_total <= 0 or n_clipped <= CLIP_WARN_SHARE * n_total:
        return None
    share = n_clipped / n_total
    most = "most values" if share > 0.5 else "many values"
    head = (f"{n_clipped:,} of {n_total:,} values ({percent(share)}) lie outside the clipping range and are "
            f"clipped: {most} are cut, so the released means are biased towards zero.")
    if upload:
        fix = " Fix: set the public centre near the column's typical value and the public scale near its spread"
        if median is not None and low is not None and high is not None:
            fix += (f" (in your file the values run from {number(low, 3)} to {number(high, 3)}, median "
                    f"{number(median, 3)}; numbers read from the data are not public, so use them only if they "
                    "are known from elsewhere, e.g. a codebook)")
        return head + fix + "."
    return head + " Fix: raise the public bound R on the group means."


def many_groups_guidance(k: int, n: int) -> str | None:
    """A warning when the group column has dozens of levels (each group's release brings its own noise)."""
    if k < MANY_GROUPS:
        return None
    return (f"The groups number {k}: with {n:,} records that is {number(n / k)} records per group on average, "
            "and every group's release adds its own noise. Use a coarser group column (fewer levels), or raise "
            "the minimum stratum fraction so that small groups are pooled.")


def pooled_guidance(labels: Sequence[str], sizes, status: Sequence[str]) -> str | None:
    """A warning when the pooled stratum holds one record or a single group (pooling then protects nothing)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    pooled = [i for i, s in enumerate(status) if s == "pooled"]
    if not pooled:
        return None
    total = int(sizes[pooled].sum())
    if total == 1:
        return (f"The pooled stratum is one record ({labels[pooled[0]]}): its released mean is that person's value "
                "plus heavy noise and helps nobody. Choose “Drop” for groups below the threshold, or raise the "
                "minimum stratum fraction so that more groups are pooled together.")
    if len(pooled) == 1:
        return (f"Only one group ({labels[pooled[0]]}, {records(total)}) is below the threshold, so “pooling” "
                "estimates it alone, exactly as without a threshold. Raise the minimum stratum fraction to pool "
                "more groups with it, or choose “Drop”.")
    return None


def sizes_verdict(*, k: int, n: int, gap: float, alpha_hat: float, alpha: float | None = None) -> str:
    """Theorem 10 in one sentence: where these sizes sit between equal sizes (worst) and one big group (best).

    ``alpha``: the Dirichlet α the expectation (and so ``gap``) was computed with, when it is not the fitted α̂
    (simulated sizes drawn with the slider's α); the sentence then names it, so the share is not read as α̂'s.
    """
    if not math.isfinite(gap):
        return f"{k} groups share {n:,} records."
    shape = "equal sizes" if math.isinf(alpha_hat) else f"a fitted imbalance α̂ = {number(alpha_hat, 3)}"
    # Theorem 10 is exact for continuous sizes: at small α many groups hold under one record in expectation, so E can
    # fall below the best case for whole groups (spec §2.6) and the share passes 100%.
    beyond = ("; past the best case for whole groups, because Theorem 10 treats sizes as continuous and at this "
              "imbalance many groups would hold less than one record") if gap > 1 else ""
    if alpha is not None:
        return (f"{k} groups share {n:,} records ({shape}): for sizes drawn with α = {alpha:g}, the stratified "
                f"error's size term is expected {percent(gap)} of the way from the worst case (equal groups) to the "
                f"best case (one big group){beyond}.")
    return (f"{k} groups share {n:,} records ({shape}): the stratified error's size term sits {percent(gap)} "
            f"of the way from the worst case (equal groups) to the best case (one big group){beyond}.")


# --------------------------------------------------------------------------- synthetic data
def synth_verdict(per_group: pd.DataFrame, *, epsilon: float, synthesizer: str, accuracy_vanilla: float | None,
                  accuracy_stratified: float | None, majority: float | None = None) -> list[str]:
    """How many groups' workload error stratified synthesis lowered, naming those it raised; and the accuracy.

    ``per_group``: columns group (plain label), size, error_vanilla, error_stratified (one row per evaluated
    group, Definition 13 per group). ``majority``: the accuracy of always guessing the commonest label; a
    classifier no better than that learned nothing from the synthetic data, and the sentence says so.
    """
    v = per_group["error_vanilla"].to_numpy(float)
    s = per_group["error_stratified"].to_numpy(float)
    ok = np.isfinite(v) & np.isfinite(s)
    helped = ok & (s < v)
    hurt = ok & (s > v)
    n = int(ok.sum())
    lead = f"At ε = {epsilon:g}, one model per group ({synthesizer})"
    if n == 0:
        return [f"{lead} could not be compared: no group was evaluated."]
    sizes = per_group["size"].to_numpy(float)
    if hurt.any():
        idx = np.flatnonzero(hurt)[np.argsort(sizes[hurt], kind="stable")]
        names = [f"{per_group['group'].iloc[i]} ({records(sizes[i])})" for i in idx]
        first = (f"{lead} lowered the workload error of {int(helped.sum())} of {n} groups; {_list(names)} got "
                 "worse.")
    else:
        first = f"{lead} lowered the workload error of {'all ' if helped.all() else ''}{int(helped.sum())} of {n} " \
                "groups."
    out = [first]
    if accuracy_vanilla is not None and accuracy_stratified is not None and \
            math.isfinite(accuracy_vanilla) and math.isfinite(accuracy_stratified):
        acc = (f"A classifier trained on the synthetic data scores {percent(accuracy_vanilla)} accuracy on real "
               f"held-out rows with one model and {percent(accuracy_stratified)} with one model per group")
        if majority is not None and math.isfinite(majority) and \
                max(accuracy_vanilla, accuracy_stratified) <= majority + 1e-9:
            acc += (f", no better than always guessing the commonest label ({percent(majority)}): neither "
                    "synthetic table taught it anything about the label")
        out.append(acc + ".")
    return out


def synth_verdict_sentences(per_group: pd.DataFrame, *, epsilon: float, synthesizer: str,
                            accuracy_vanilla: float | None, accuracy_stratified: float | None,
                            majority: float | None = None) -> tuple[Sentence, ...]:
    """:func:`synth_verdict` with tones: the group count by :func:`count_tone`; the accuracy sentence a warning
    when neither classifier beats guessing the commonest label, else neutral."""
    texts = synth_verdict(per_group, epsilon=epsilon, synthesizer=synthesizer, accuracy_vanilla=accuracy_vanilla,
                          accuracy_stratified=accuracy_stratified, majority=majority)
    helped, compared = _helped_counts(per_group["error_vanilla"], per_group["error_stratified"])
    out = [Sentence(texts[0], count_tone(helped, compared))]
    for t in texts[1:]:
        out.append(Sentence(t, "warning" if "no better than always guessing" in t else "neutral"))
    return tuple(out)


# --------------------------------------------------------------------------- partially private release
def release_verdict(loss: pd.DataFrame, *, epsilon: float, month: str) -> str:
    """Which method's release is closest to the true counts (lowest mean total ℓ₂ loss) and by what factor.

    ``loss``: columns method (plain label) and "mean total ℓ₂ loss" (one row per method).
    """
    d = loss.dropna(subset=["mean total ℓ₂ loss"]).sort_values("mean total ℓ₂ loss", kind="stable")
    if d.empty:
        return f"No release was computed at ε = {epsilon:g} for {month}."
    best = d.iloc[0]
    head = (f"At ε = {epsilon:g} for {month}, {best['method']} comes closest to the true counts "
            f"(mean total error {number(best['mean total ℓ₂ loss'])})")
    if len(d) == 1:
        return (f"At ε = {epsilon:g} for {month}, the counts released by {best['method']} are off by "
                f"{number(best['mean total ℓ₂ loss'])} in total (ℓ₂ distance over all counties, mean over draws).")
    worst = d.iloc[-1]
    return head + (f"; {worst['method']} is furthest off ({number(worst['mean total ℓ₂ loss'])}, "
                   f"{_ratio_words(best['mean total ℓ₂ loss'], worst['mean total ℓ₂ loss'])}).")


def guarantee_verdict(guarantees: pd.DataFrame, *, column: str = "guaranteed epsilon") -> str | None:
    """When the methods carry different guarantees: name the weakest (largest ε) and the strongest.

    ``guarantees``: ``dpdash.stratify.partial_release.guarantee_table`` (columns method and ``column``).
    """
    if column not in guarantees or guarantees.empty:
        return None
    col = column
    vals = pd.to_numeric(guarantees[col], errors="coerce")
    if vals.isna().all():
        return None
    lo, hi = vals.idxmin(), vals.idxmax()
    if math.isclose(vals[lo], vals[hi]):
        return f"Every method shown protects a person's record with the same ε = {number(vals[lo])}."
    return (f"The methods do not protect equally: {guarantees.loc[hi, 'method']} carries ε = {number(vals[hi])} "
            f"for one person's record, {guarantees.loc[lo, 'method']} ε = {number(vals[lo])}; compare errors only "
            "with this in mind, or tick “Calibrate PP to the WEM guarantee”.")
