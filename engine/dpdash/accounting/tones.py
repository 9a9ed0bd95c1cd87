"""Tones by stakes: one rule, in one table, maps a privacy guarantee to good / neutral / warning with its reasons.

Every results tab of the epsilon calculator and the sampling designer colours its verdict by what is at stake, and
the stake is read from the bound that is the guarantee (the upper end of an interval, the worst stratum, the
correlated ε, the amplified ε′, the plan's total): never from a lower bound or a nominal value. A view combines
the tone of its own news (a plan that misses its target, a test that keeps its level) with :func:`privacy_tone` by
:func:`worst`, so a green box can never sit beside an ε of 10.

The table (issue 34 item 3, issue 36 item 5)::

    quantity      good            neutral (a caution)          warning
    ε, ε′, total  ε ≤ 1           1 < ε < 10                   ε ≥ 10, or not finite
    δ             δ ≤ 10⁻⁵        10⁻⁵ < δ < 10⁻³ (and < 1/n)  δ ≥ 10⁻³, or δ ≥ 1/n when n is known

The ε thresholds are the ones the deployments registry shows (``dpdash.epsilon.deployments``: central releases
mostly at ε ≤ 1 per release; values above 1 are common but need the unit and period named; values of 10 and above
let an attacker's odds grow by e¹⁰ ≈ 22,000 and protect almost nothing). The δ thresholds follow the rule of thumb
δ ≪ 1/n (Dwork & Roth 2014, §2.3: δ of order 1/n allows releasing a whole record at random).

Changing a threshold: change the constant here; ``tests/engine/epsilon/test_tones.py`` holds the table with cases
on both sides of each threshold, computed there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpdash.common.formatting import given, number, power_of_ten, times_ten_to
from dpdash.common.view import worst

#: ε above this deserves a caution (neutral tone)
EPSILON_CAUTION = 1.0
#: ε at or above this is a warning
EPSILON_WARNING = 10.0
#: δ above this deserves a caution
DELTA_CAUTION = 1e-5
#: δ at or above this is a warning (as is δ ≥ 1/n)
DELTA_WARNING = 1e-3

__all__ = ["EPSILON_CAUTION", "EPSILON_WARNING", "DELTA_CAUTION", "DELTA_WARNING", "ToneCall", "worst",
           "epsilon_tone", "delta_tone", "privacy_tone"]


@dataclass(frozen=True)
class ToneCall:
    """A tone and the reasons for it, in plain words (empty when the tone is good); each reason a sentence."""

    tone: str
    reasons: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "reasons", tuple(_capital(r) for r in self.reasons))

    @property
    def text(self) -> str:
        """The reasons as one paragraph."""
        return " ".join(self.reasons)


def _odds(epsilon: float) -> str:
    """e^ε for reading: "2.7", "22,000", "4.9·10⁸"."""
    if epsilon < math.log(1e6):
        return number(math.exp(epsilon))
    if epsilon > 1e4:  # beyond the calculator's ε range the exponent alone would be a wall of digits
        return "more than " + times_ten_to("1", 4342)
    # written from log₁₀ e^ε, so ε beyond 709 (where e^ε overflows a float) still reads right
    exp10 = epsilon / math.log(10.0)
    e = math.floor(exp10)
    m = 10.0 ** (exp10 - e)
    if round(m, 1) >= 10.0:
        m, e = m / 10.0, e + 1
    return times_ten_to(f"{m:.1f}", e)


def _shown(e: float, threshold: float) -> str:
    """ε as typed, with more digits when 4 figures would read as the threshold itself (10.00004 is not 10)."""
    s = given(e)
    return s if e == threshold or s != given(threshold) else f"{e:.10g}"


def epsilon_tone(epsilon: float | None, *, name: str = "ε") -> ToneCall:
    """The tone of a privacy-loss guarantee ε (or ε′, or a total) by the table above.

    None (no guarantee computed) is neutral with the reason said.
    """
    if epsilon is None or (isinstance(epsilon, float) and math.isnan(epsilon)):
        return ToneCall("neutral", (f"No value of {name} was computed, so no privacy guarantee is stated.",))
    e = float(epsilon)
    if not math.isfinite(e):
        return ToneCall("warning", (f"{name} is infinite: the release has no privacy guarantee.",))
    if e >= EPSILON_WARNING:
        return ToneCall("warning", (f"{name} = {_shown(e, EPSILON_WARNING)} is extreme ({given(EPSILON_WARNING)} or "
                                    f"more): it lets an attacker's odds grow by a factor of up to {_odds(e)}, so it "
                                    "protects almost nothing. Values up to about 1–2 are usual for one release: "
                                    "lower ε, or add noise.",))
    if e > EPSILON_CAUTION:
        return ToneCall("neutral", (f"{name} = {_shown(e, EPSILON_CAUTION)} is above {given(EPSILON_CAUTION)}: an "
                                    "attacker's odds can "
                                    f"grow by a factor of up to {_odds(e)}. Deployments do go this high, but name "
                                    "what one ε protects (a person, a day) and how often it is spent.",))
    return ToneCall("good")


def delta_tone(delta: float | None, *, n: float | None = None) -> ToneCall:
    """The tone of a failure probability δ by the table above (``n``: the number of records, when known)."""
    if not delta:
        return ToneCall("good")
    d = float(delta)
    if n is not None and n >= 1 and d >= 1.0 / n:
        return ToneCall("warning", (f"δ = {power_of_ten(d)} is at least 1/n = 1/{number(n)}: a release may reveal a "
                                    "whole record with that probability. Use δ far below 1/n.",))
    if d >= DELTA_WARNING:
        return ToneCall("warning", (f"δ = {power_of_ten(d)} is at least {power_of_ten(DELTA_WARNING)}: with that "
                                    "probability the guarantee may fail outright. Use δ far below 1/n.",))
    if d > DELTA_CAUTION:
        return ToneCall("neutral", (f"δ = {power_of_ten(d)} is above {power_of_ten(DELTA_CAUTION)}: make sure it "
                                    "is far below 1/n for the number of people n.",))
    return ToneCall("good")


def _capital(text: str) -> str:
    """A sentence's first letter in capitals when it is a Latin one ("the total ε" → "The total ε"; "ε" stays)."""
    return text[:1].upper() + text[1:] if text[:1].isascii() else text


def privacy_tone(*, epsilon: float | None, delta: float | None = 0.0, n: float | None = None,
                 name: str = "ε") -> ToneCall:
    """The tone of an (ε, δ) guarantee: the worse of :func:`epsilon_tone` and :func:`delta_tone`, with the reasons
    of both."""
    a, b = epsilon_tone(epsilon, name=name), delta_tone(delta, n=n)
    return ToneCall(worst(a.tone, b.tone), a.reasons + b.reasons)
