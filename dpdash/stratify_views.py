"""What each results tab of the stratified synthesis viewer shows, built once per input (issue 22: one view per tab).

Pure functions, no Streamlit: the page renders what they return (``ui.show``). Also the upload defaults the views
start from (issue 25: group columns default to categorical columns; one binning rule everywhere).

References
----------
``004_c5ca305e20a1adba.txt`` (Rosenblatt, Stoyanovich & Musco, arXiv 2312.11712): Eq. 2–4 and Prop. 8 (the
per-group release, L109–138), Theorem 10 (L150–166), Definition 11 (parity, L183–193), Definition 13 (workload
error, L511–523). Spec ``stratified_synthesis_viewer.md`` §6 item 5 (uploads), §7 (the tabs).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from dpdash.data import code_column

#: Uploads: a column with at most this many distinct values is categorical; other numeric columns are binned.
MAX_LEVELS = 50
#: Uploads: the number of equal-width bins of a numeric column with more than :data:`MAX_LEVELS` values.
BINS = 5
#: A suggested group column has at most this many levels (the viewer allows at most 100 strata).
GROUP_LEVELS = 20


def _levels(s: pd.Series) -> int:
    return int(s.dropna().nunique())


def is_categorical(s: pd.Series, *, max_levels: int = MAX_LEVELS) -> bool:
    """True for a column the uploads' rule keeps as categories (≤ ``max_levels`` distinct values)."""
    return 2 <= _levels(s) <= max_levels


def suggest_group_columns(frame: pd.DataFrame, *, preferred: Sequence[str] = (), exclude: Sequence[str] = (),
                          max_groups: int = 1) -> list[str]:
    """Default group columns of a table: categorical columns, never the averaged column (issue 25).

    ``preferred`` (a bundled dataset's suggested groups) come first when categorical. Otherwise the first
    categorical columns of at most :data:`GROUP_LEVELS` levels, text before numbers and complete columns (no
    missing value, so no row is left out for its group) before incomplete ones, in file order. acs12 gives
    ``race`` (not ``income``, 266 values, whose 234 "groups" hold one income value each).
    """
    ok = [c for c in frame.columns if c not in exclude and is_categorical(frame[c])]
    pref = [c for c in preferred if c in ok]
    if pref:
        return pref[:2]

    def rank(c):
        s = frame[c]
        return (_levels(s) > GROUP_LEVELS, pd.api.types.is_numeric_dtype(s), bool(s.isna().any()))
    return sorted(ok, key=lambda c: (rank(c), list(frame.columns).index(c)))[:max_groups]


def numeric_columns(frame: pd.DataFrame) -> list[str]:
    """Columns the mean view can average: numeric with at least two distinct values."""
    return [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c]) and _levels(frame[c]) >= 2]


def suggest_value_column(frame: pd.DataFrame, *, exclude: Sequence[str] = ()) -> str | None:
    """The column to average by default: the numeric column (not a group) with the most distinct values."""
    cols = [c for c in numeric_columns(frame) if c not in exclude]
    if not cols:
        return None
    return max(cols, key=lambda c: (_levels(frame[c]), -list(frame.columns).index(c)))


def group_codes(frame: pd.DataFrame, groups: Sequence[str], *, bins: int = BINS,
                max_levels: int = MAX_LEVELS) -> tuple[np.ndarray, list[str]]:
    """Each row's stratum (codes 0..K−1) and the strata's labels, by the one rule every view uses.

    Each group column is coded by ``dpdash.data.code_column`` (a numeric column with more than ``max_levels``
    values is cut into ``bins`` equal-width bins, as in the synthetic-data view); strata are the combinations
    that occur, labelled "a × b", in the order of the columns' codes.
    """
    if not groups:
        raise ValueError("at least one group column is needed")
    parts = [code_column(frame[g], bins=bins, max_levels=max_levels) for g in groups]
    key = np.zeros(len(frame), dtype=np.int64)
    for codes, labels in parts:
        key = key * len(labels) + codes
    uniq, inv = np.unique(key, return_inverse=True)
    names = []
    for u in uniq:
        digits = []
        for codes, labels in reversed(parts):
            digits.append(labels[int(u % len(labels))])
            u //= len(labels)
        names.append(" × ".join(reversed(digits)))
    return inv.astype(int), names
