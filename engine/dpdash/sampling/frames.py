"""Parsers for the sampling designer's text inputs (number lists typed or carried by a shared link).

Pure Python; never imports streamlit. Every parser is bounded (characters, entries) before it builds anything,
rejects non-finite and non-numeric entries with a message that says what is expected, and never raises anything
but ``ValueError``. Issue 17 (bounded parsing; links carry these texts).
"""

from __future__ import annotations

import math
import re

#: Longest text a number list may have (a link or a paste beyond this is refused before splitting).
MAX_LIST_CHARS = 1_000_000
#: Most entries a list may have (the Cluster tab's limit on k, spec §8).
MAX_LIST_ENTRIES = 100_000

_SEP = re.compile(r"[,;\s]+")


def parse_numbers(text: str, *, integer: bool = False, max_entries: int = MAX_LIST_ENTRIES,
                  max_chars: int = MAX_LIST_CHARS) -> list[float]:
    """Numbers separated by commas, semicolons, spaces or new lines, e.g. ``"2, -3; 5"`` → [2.0, -3.0, 5.0].

    Parameters
    ----------
    text : str
    integer : bool
        Require whole numbers (returned as floats with integer values).
    max_entries, max_chars : int
        Limits checked before (characters) and while (entries) splitting.

    Raises
    ------
    ValueError
        Too long, too many entries, an entry that is not a number, a non-finite number, or (``integer``) a
        fraction. The message names the first offending entry (cut to 20 characters).

    Examples
    --------
    >>> parse_numbers("3, 8; 15\\n40", integer=True)
    [3.0, 8.0, 15.0, 40.0]
    """
    if not isinstance(text, str):
        raise ValueError("expected text with numbers separated by commas.")
    if len(text) > max_chars:
        raise ValueError(f"the list has {len(text):,} characters; at most {max_chars:,} are allowed.")
    parts = [p for p in _SEP.split(text.strip()) if p]
    if len(parts) > max_entries:
        raise ValueError(f"the list has {len(parts):,} entries; at most {max_entries:,} are allowed.")
    out = []
    for p in parts:
        try:
            v = float(p)
        except ValueError:
            raise ValueError(f"{p[:20]!r} is not a number") from None
        if not math.isfinite(v):
            raise ValueError(f"{p[:20]!r} is not a finite number")
        if integer and v != math.floor(v):
            raise ValueError(f"{p[:20]!r} is not a whole number")
        out.append(v)
    return out
