"""The product's one colour palette, for the engine's figure builders and the UI's Plotly template alike.

Okabe–Ito, colour-blind safe (Okabe & Ito 2008, "Color Universal Design"), black moved last so the first
colours read well on white. It lives in the engine so that figure builders need no UI import; ``ui.charts``
uses it as the template's colourway.
"""

from __future__ import annotations

#: Blue, orange, green, vermillion, reddish purple, sky blue, yellow, black.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")


def palette_color(i: int) -> str:
    """The ``i``-th palette colour, cycling.

    >>> palette_color(0), palette_color(len(PALETTE))
    ('#0072B2', '#0072B2')
    """
    return PALETTE[i % len(PALETTE)]
