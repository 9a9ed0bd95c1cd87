"""The shape of a tab view: everything one results tab shows, built by one pure engine function.

A tab's card, chart, verdict box, CSV, report and "Copy as code" script all read one :class:`TabView`, so a
sentence can never restate a number differently from the card beside it. Pages only render a view
(``ui.show``); the functions that build views live in ``dpdash/<page>_views.py`` and are tested against
independent computations like the rest of the engine.

References
----------
Issue 22 item 1 (tab views); developers' guide, "What a tab shows is one engine view".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, Mapping

#: How a sentence is shown: good news (green), plain information (blue), a warning (orange).
Tone = Literal["good", "neutral", "warning"]
TONES: tuple[str, ...] = ("good", "neutral", "warning")


@dataclass(frozen=True)
class Sentence:
    """One verdict or guidance sentence and the tone its news deserves.

    >>> Sentence("The release is safe.", "good").tone
    'good'
    """

    text: str
    tone: Tone = "neutral"

    def __post_init__(self) -> None:
        if self.tone not in TONES:
            raise ValueError(f"tone must be one of {TONES}, not {self.tone!r}")


_SERIOUSNESS = {"good": 0, "neutral": 1, "warning": 2}


def worst(*tones: str) -> str:
    """The most serious of ``tones`` (good < neutral < warning); "good" when none is given.

    >>> worst("good", "neutral"), worst()
    ('neutral', 'good')
    """
    return max(tones, key=_SERIOUSNESS.__getitem__, default="good")


def with_stakes(sentences, stake) -> tuple[Sentence, ...]:
    """The verdict ``sentences`` with the lead sentence's tone raised to ``stake.tone`` (a
    ``dpdash.accounting.tones.ToneCall``: the tone of the guarantee at stake) and the stake's reasons added as
    sentences of that tone, each unless a sentence already says it (issue 34 item 3: a green box beside ε = 10).
    """
    out = list(sentences)
    if not out:
        return tuple(Sentence(r, stake.tone) for r in stake.reasons)
    out[0] = Sentence(out[0].text, worst(out[0].tone, stake.tone))
    said = " ".join(s.text for s in out)
    out += [Sentence(r, stake.tone) for r in stake.reasons if r not in said]
    return tuple(out)


@dataclass(frozen=True)
class Headline:
    """One headline number: ``value`` already formatted for reading; ``raw`` keeps the full value (tooltip, tests).

    >>> Headline("ε′", "0.017", raw=0.0171).value
    '0.017'
    """

    label: str
    value: str
    raw: float | None = None
    note: str = ""


@dataclass(frozen=True)
class ReportSection:
    """A titled block of the tab's report: sentences, and optionally a table by its name in :attr:`TabView.tables`."""

    title: str
    lines: tuple[str, ...] = ()
    table: str | None = None


def frozen_map(d: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    """A read-only mapping (views are shared by the card, chart and downloads; none may change it)."""
    return MappingProxyType(dict(d or {}))


@dataclass(frozen=True)
class TabView:
    """Everything one results tab shows.

    - ``headlines``: the cards, in order;
    - ``verdicts``: the plain sentences that lead the tab, each with its tone;
    - ``tables``: named frames (shown, and downloaded as CSV);
    - ``figures``: named inputs of the tab's figure builders (frames, arrays, numbers), not figures;
    - ``question``, ``params``, ``sections``: the report (question asked, parameters in words, extra sections);
    - ``script``: keyword arguments of the tab's "Copy as code" builder;
    - ``epsilon``, ``delta``, ``seed``: the privacy statement and the seed of a stochastic result.
    """

    headlines: tuple[Headline, ...] = ()
    verdicts: tuple[Sentence, ...] = ()
    tables: Mapping[str, Any] = field(default_factory=frozen_map)
    figures: Mapping[str, Any] = field(default_factory=frozen_map)
    question: str = ""
    params: Mapping[str, str] = field(default_factory=frozen_map)
    sections: tuple[ReportSection, ...] = ()
    script: Mapping[str, Any] = field(default_factory=frozen_map)
    epsilon: float | None = None
    delta: float | None = None
    seed: int | None = None

    def headline(self, label: str) -> Headline:
        """The headline with this label (KeyError naming the labels there are)."""
        for h in self.headlines:
            if h.label == label:
                return h
        raise KeyError(f"no headline {label!r}; the view has {[h.label for h in self.headlines]}")

    @property
    def verdict_text(self) -> tuple[str, ...]:
        """The verdict sentences as plain text, for the report."""
        return tuple(s.text for s in self.verdicts)
