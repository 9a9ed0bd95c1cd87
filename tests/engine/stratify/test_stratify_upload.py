"""Uploads to the stratified viewer lose no data (issue 26 item 4): only rows missing a value the analysis uses.

Expected counts are read straight from the bundled acs12 file with the csv module (no pandas, no code under test):
a row misses a column when its cell is empty.
"""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest

from dpdash.common.data import MISSING_LEVEL, DataValidationError, code_column, discrete_table_from_csv, drop_missing
from dpdash.common.paths import DATA_DIR

ACS12 = DATA_DIR / "acs12" / "acs12.csv"


def _rows() -> list[dict[str, str]]:
    with open(ACS12, newline="") as fh:
        return list(csv.DictReader(fh))


def test_acs12_mean_view_keeps_every_row_with_income_and_the_group():
    rows = _rows()
    expected = sum(1 for r in rows if r["income"] != "" and r["race"] != "")
    assert expected == 1623  # issue 26: "the acs12 upload keeps 1,623 rows"
    frame = pd.read_csv(ACS12)
    kept, note = drop_missing(frame, ["income", "race"])
    assert len(kept) == expected
    assert note == f"{len(rows) - expected} of 2,000 rows left out: no value in income, a column the analysis uses."
    # The rows kept are exactly those with an income (same values, same order).
    assert kept["income"].tolist() == [float(r["income"]) for r in rows if r["income"] != ""]


def test_drop_missing_names_each_column_and_counts_rows_once():
    rows = _rows()
    frame = pd.read_csv(ACS12)
    kept, note = drop_missing(frame, ["income", "employment", "income"])
    either = sum(1 for r in rows if r["income"] == "" or r["employment"] == "")
    inc = sum(1 for r in rows if r["income"] == "")
    emp = sum(1 for r in rows if r["employment"] == "")
    assert len(kept) == 2000 - either
    assert note == f"{either:,} of 2,000 rows left out: no value in income ({inc:,}), employment ({emp:,}), " \
                   "columns the analysis uses."
    kept, note = drop_missing(frame, ["race"])
    assert len(kept) == 2000 and note.startswith("All 2,000 rows used")


def test_acs12_synthesis_table_keeps_all_rows_and_codes_missing_as_a_level():
    rows = _rows()
    t = discrete_table_from_csv(pd.read_csv(ACS12), group_cols=("race",), label_col="disability")
    assert len(t.df) == len(rows) == 2000 and "All 2,000 rows used" in t.source
    # employment: 3 values and an empty cell → 4 codes; the empty cells carry the last one.
    values = sorted({r["employment"] for r in rows if r["employment"]})
    assert t.labels["employment"] == tuple(values) + (MISSING_LEVEL,)
    want = [len(values) if r["employment"] == "" else values.index(r["employment"]) for r in rows]
    assert t.df["employment"].tolist() == want
    # A row missing a group value is the only kind dropped.
    t = discrete_table_from_csv(pd.read_csv(ACS12), group_cols=("income",))
    assert len(t.df) == sum(1 for r in rows if r["income"] != "")
    assert "no value in income" in t.source


def test_code_column_bins_with_a_missing_level():
    s = pd.Series([0.0, 10.0, np.nan, 5.0] + list(np.linspace(0, 10, 60)), name="x")
    codes, labels = code_column(s, bins=5, max_levels=50)
    assert labels[-1] == MISSING_LEVEL and len(labels) == 6
    assert codes[2] == 5 and codes[0] == 0 and codes[1] == 4 and codes[3] == 2  # edges 0, 2, 4, 6, 8, 10


def test_all_missing_group_is_refused_with_a_message():
    with pytest.raises(DataValidationError, match="missing value in a group or label column"):
        discrete_table_from_csv(pd.DataFrame({"g": [None, None], "v": [1, 2]}), group_cols=("g",))
