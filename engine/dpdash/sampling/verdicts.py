"""Plain-words verdicts for the sampling designer: one or two sentences per tab, computed from its result.

Each function takes numbers a tab already computed (engine results, not widgets) and returns plain text (no
Markdown), so the page, the report and the tests read the same sentence. Numbers are rounded for reading
(``dpdash.epsilon.verdicts.number``, 2 significant figures); the cards, tables and downloads keep full precision.
The guidance functions return a warning with its fix, or None when the choice is sound.

References
----------
Issue 14 items 1 (a verdict on every result) and 6 (guidance where users go wrong). The quantities are those of
``003_4b386133f61617e9.txt``, paper 1 (Bun, Drechsler, Gaboardi, McMillan, Sarathy, FORC 2022): Theorem 2 (simple
random samples), Theorem 3 (random sample size), Theorem 6 (randomised rounding), Theorems 7–8 (cluster sampling),
Theorem 11 and §6.2 (stratified sampling, Neyman allocation).
"""

from __future__ import annotations

import math
from typing import Mapping

from dpdash.common.formatting import number, power_of_ten

#: ε′ at or above this share of ε counts as "almost no amplification" (the page's red/orange banners agree).
LITTLE_GAIN = 0.9

METHOD_WORDS = {"neyman": "Neyman", "proportional": "proportional", "privacy_aware": "privacy-aware"}


def trim(s: str) -> str:
    """Drop trailing zeros after a decimal point ("1.0" → "1", "0.50" → "0.5"); thousands separators stay.

    >>> trim("1.0"), trim("0.050"), trim("1,200"), trim("2.5")
    ('1', '0.05', '1,200', '2.5')
    """
    if "." in s and "e" not in s:
        s = s.rstrip("0").rstrip(".")
    return s


def eps_text(x: float) -> str:
    """A chosen ε as a reader would type it (3 significant figures, no trailing zeros): 1 → "1", 0.05 → "0.05"."""
    return trim(number(x, 3))


def pct(q: float) -> str:
    """A rate as a percentage for reading: 0.1 → "10%", 0.0283 → "2.8%", 1e-4 → "0.01%"."""
    return trim(number(100 * q, 2)) + "%"


def gain_words(epsilon: float, epsilon_population: float) -> str:
    """How much of ε the population keeps, in words: "no amplification", "almost no amplification", or ""."""
    if epsilon_population >= epsilon * (1 - 1e-9):
        return "no amplification"
    if epsilon_population >= LITTLE_GAIN * epsilon:
        return "almost no amplification"
    return ""


def _times(epsilon: float, epsilon_population: float) -> str:
    """", about 59 times smaller" when the gain is large enough to say so."""
    if epsilon_population <= 0:
        return ""
    f = epsilon / epsilon_population
    return f" ({trim(number(f, 2))} times smaller)" if f >= 1.5 else ""


def _interval(lo: float, hi: float) -> str:
    """"ε′ = 0.50" when both bounds read the same, else "ε′ between 0.40 and 0.50"."""
    a, b = number(lo), number(hi)
    return f"ε′ = {b}" if a == b else f"ε′ between {a} and {b}"


# --------------------------------------------------------------------------- Tab 1: simple random samples
def simple_verdict(*, epsilon: float, epsilon_population: float, rate: float, scheme: str,
                   m: int | None = None, n: int | None = None, delta: float = 0.0,
                   delta_population: float | None = None, shortcut: float | None = None) -> str:
    """"A 1% simple random sample (100 of 10,000) turns ε = 1 into ε′ = 0.017 for the population (59 times
    smaller)." ``scheme`` is "srswor", "poisson" or "srswr"; a second sentence says how far the q·ε shortcut is off
    when it is off by more than 10%.

    Source: Theorem 2 of paper 1 (SRS without replacement), [BBG18] for Poisson and with replacement.
    """
    design = {"srswor": f"A {pct(rate)} simple random sample" + (f" ({m:,} of {n:,})" if m and n else ""),
              "poisson": f"Poisson sampling at rate {pct(rate)}",
              "srswr": f"Drawing {m:,} times with replacement from {n:,}" if m and n else
                       "Sampling with replacement"}[scheme]
    e, ep = eps_text(epsilon), number(epsilon_population)
    gain = gain_words(epsilon, epsilon_population)
    if gain:
        s = f"{design} gives {gain}: ε = {e} on the sample is ε′ = {ep} for the population."
    else:
        s = f"{design} turns ε = {e} into ε′ = {ep} for the population{_times(epsilon, epsilon_population)}"
        if delta > 0 and delta_population is not None:
            s += f", and δ = {power_of_ten(delta)} into δ′ = {power_of_ten(delta_population)}"
        s += "."
    if scheme == "srswr":
        s += " This is the ε part only (δ′ is not computed): not for release decisions."
    elif shortcut is not None and epsilon_population > 0 and abs(shortcut / epsilon_population - 1) > 0.1:
        off = abs(1 - shortcut / epsilon_population)
        s += (f" The shortcut q·ε = {number(shortcut)} is {pct(off)} "
              f"{'too optimistic' if shortcut < epsilon_population else 'too pessimistic'}.")
    return s


# --------------------------------------------------------------------------- Tab 2: random sample size
def random_size_verdict(*, epsilon: float, n: int, mean_size: float, tilted_mean: float, lower: float,
                        upper: float) -> str:
    """"A random sample size averaging 5,000 of 10,000 turns ε = 0.01 into ε′ between 0.0050 and 0.0050." or,
    when the tilt puts the weight on near-complete samples, "… gives almost no amplification …, because …".

    Source: Theorem 3 of paper 1 (lower and upper bounds through the tilted mean E_t̃[m]).
    """
    head = f"A random sample size averaging {number(mean_size, 3) if mean_size < 100 else f'{mean_size:,.0f}'} " \
           f"of {n:,}"
    gain = gain_words(epsilon, upper)
    if gain:
        return (f"{head} gives {gain}: ε = {eps_text(epsilon)} becomes {_interval(lower, upper)}, because the "
                f"privacy bound weighs large sizes by e^(ε·m) (weighted mean size {tilted_mean:,.0f}, "
                f"{pct(tilted_mean / n)} of the population).")
    return (f"{head} turns ε = {eps_text(epsilon)} into {_interval(lower, upper)} for the population"
            f"{_times(epsilon, upper)}.")


# --------------------------------------------------------------------------- Tab 3: rounding
def rounding_verdict(*, epsilon: float, rate: float, epsilon_population: float, crossover: float) -> str:
    """"Proportional sampling at r = 5% with randomised rounding turns ε = 1 into at most ε′ = 0.77 (Theorem 6);
    deterministic rounding can reveal the full ε through the sample size." Above the crossover rate r*, the
    sentence says there is no guaranteed amplification and gives the rate to go below.

    Source: Theorem 6 of paper 1 and §4.1 (degradation); the crossover r* is derived (spec §4.6).
    """
    if rate > crossover:
        return (f"Randomised rounding at r = {pct(rate)} gives no guaranteed amplification: Theorem 6 allows "
                f"ε′ up to {number(epsilon_population)}, more than ε = {eps_text(epsilon)}. Lower the rate below "
                f"r* = {pct(crossover)}.")
    s = (f"Proportional sampling at r = {pct(rate)} with randomised rounding turns ε = {eps_text(epsilon)} into at "
         f"most ε′ = {number(epsilon_population)} (Theorem 6)")
    gain = gain_words(epsilon, epsilon_population)
    s += f", {gain}" if gain else ""
    return s + "; deterministic rounding can reveal the full ε through the sample size."


# --------------------------------------------------------------------------- Tab 4: cluster sampling
def cluster_verdict(*, epsilon: float, n_drawn: int, n_clusters: int, worst_lower: float, worst_upper: float,
                    naive_srs: float, equal_size: int | None = None, within_rate: float = 1.0,
                    two_stage: float | None = None) -> str:
    """"Cluster sampling of 10 of 100 clusters (20 records each) gives no amplification: ε′ = 1.0 for ε = 1.
    A 10% simple random sample would give 0.16."

    With a within-cluster rate r_w < 1 the design is two-stage and its guarantee is ``two_stage`` (the derived
    upper bound, spec §4.8): the sentence states that number, then what keeping everyone would give (issue 22:
    the banner said "no amplification, ε′ = 0.50" beside the two-stage card's 0.01385).

    Source: Theorems 7–8 of paper 1 (lower and upper bounds; equal sizes make them equal); §5.2 and [BBG18]
    for the two-stage bound.
    """
    what = f"Cluster sampling of {n_drawn:,} of {n_clusters:,} clusters"
    if equal_size is not None:
        what += f" ({equal_size:,} record{'s' if equal_size != 1 else ''} each)"
    if within_rate < 1 and two_stage is not None:
        what += f", keeping {pct(within_rate)} of each drawn cluster,"
        gain = gain_words(epsilon, two_stage)
        if gain:
            s = f"{what} gives {gain}: ε′ ≤ {number(two_stage)} for ε = {eps_text(epsilon)} (two-stage bound)."
        else:
            s = (f"{what} turns ε = {eps_text(epsilon)} into at most ε′ = {number(two_stage)} for the population"
                 f"{_times(epsilon, two_stage)} (two-stage bound).")
        single = gain_words(epsilon, worst_upper)
        rng = _interval(worst_lower, worst_upper)
        return s + f" Keeping everyone in the drawn clusters would give {f'{single}: ' if single else ''}{rng}."
    gain = gain_words(epsilon, worst_upper)
    if gain:
        s = f"{what} gives {gain}: {_interval(worst_lower, worst_upper)} for ε = {eps_text(epsilon)}."
    else:
        s = (f"{what} turns ε = {eps_text(epsilon)} into {_interval(worst_lower, worst_upper)} for the population"
             f"{_times(epsilon, worst_upper)}.")
    q = n_drawn / n_clusters
    if naive_srs < LITTLE_GAIN * worst_upper:
        s += (f" Treating it as a {pct(q)} simple random sample would wrongly claim ε′ = {number(naive_srs)}: "
              "large clusters let an analysis tell which were drawn.")
    return s


# --------------------------------------------------------------------------- Tab 5: stratified sampling
def stratified_verdict(*, epsilon: float, m: int, population: int, epsilon_population: float, covered: bool,
                       shift_total: int, shift_loss: float) -> str:
    """"Proportional allocation of 120 of 4,250 (2.8%) with randomised rounding turns ε = 1 into ε′ = 0.17
    (Theorem 11). Neyman allocation is riskier: one added person can move the sample sizes by 10 in total, which
    released counts reveal at ε′ = 10."

    Source: Theorem 11 of paper 1 (proportional allocation), §6.2 and §4.1 (Neyman's sensitivity, degradation).
    """
    rate = m / population
    if m >= population:
        # a census: "sample, then run M" is M itself (issue 22: the Theorem 11 bound 4.6 was shown for ε = 1)
        s = (f"Sampling all {population:,} units is a census: the mechanism runs on the whole population, so "
             f"ε′ = ε = {eps_text(epsilon)} (no amplification).")
    elif covered:
        gain = gain_words(epsilon, epsilon_population)
        s = (f"Proportional allocation of {m:,} of {population:,} ({pct(rate)}) with randomised rounding "
             + (f"gives {gain}: ε′ = {number(epsilon_population)} for ε = {eps_text(epsilon)} (Theorem 11)."
                if gain else f"turns ε = {eps_text(epsilon)} into ε′ = {number(epsilon_population)} (Theorem 11)."))
    else:
        s = (f"Proportional allocation of {m:,} of {population:,} ({pct(rate)}) has no guarantee here: Theorem 11 "
             "needs every stratum to hold at least 1/r records.")
    if shift_total > 0:
        s += (f" Neyman allocation is riskier: one added person can move the sample sizes by {shift_total:,} in "
              f"total, which released counts reveal at ε′ = {number(shift_loss)}.")
    else:
        s += " One added person cannot change the Neyman sample sizes here."
    return s


def allocation_verdict(totals: Mapping[str, float]) -> str | None:
    """"The privacy-aware allocation gives the smallest error of the private mean (variance 3.5; Neyman 5.1,
    proportional 4.5)." ``totals`` maps method tokens to total variance; None when fewer than one method."""
    ok = {k: v for k, v in totals.items() if math.isfinite(v)}
    if not ok:
        return None
    best = min(ok, key=ok.get)
    others = ", ".join(f"{METHOD_WORDS.get(k, k)} {number(v)}" for k, v in ok.items() if k != best)
    return (f"The {METHOD_WORDS.get(best, best)} allocation gives the smallest error of the private mean "
            f"(variance {number(ok[best])}" + (f"; {others}" if others else "") + ").")


# --------------------------------------------------------------------------- guidance (issue 14 item 6)
def sample_exceeds_population(*, m: int, n: int) -> str | None:
    """A warning with the fix when the sample asked for is larger than the population."""
    if m > n:
        return (f"The sample size m = {m:,} is larger than the population n = {n:,}: the page uses m = n (everyone, "
                "no amplification). Lower m or raise n.")
    return None


def little_gain_guidance(*, epsilon: float, epsilon_population: float, fix: str) -> str | None:
    """A warning with ``fix`` when the design keeps at least 90% of ε (sampling buys almost nothing)."""
    gain = gain_words(epsilon, epsilon_population)
    if gain:
        return (f"{gain.capitalize()}: the population gets ε′ = {number(epsilon_population)} of the "
                f"ε = {eps_text(epsilon)} spent on the sample. {fix}")
    return None
