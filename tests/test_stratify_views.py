"""dpdash.stratify_views: the viewer's upload defaults and tab views, checked against independent computations.

Counts and bins are worked out from the bundled files with the csv module and plain arithmetic, never by the code
under test.
"""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd

from dpdash import stratify_views as SV
from dpdash.data import load_dataset
from dpdash.paths import DATA_DIR

ACS12 = DATA_DIR / "acs12" / "acs12.csv"


def _acs12_rows() -> list[dict[str, str]]:
    with open(ACS12, newline="") as fh:
        return list(csv.DictReader(fh))


# --------------------------------------------------------------------------- issue 25: upload defaults
def test_acs12_default_group_is_categorical_not_the_averaged_income():
    rows = _acs12_rows()
    frame = pd.read_csv(ACS12)
    groups = SV.suggest_group_columns(frame)
    assert groups and "income" not in groups
    for g in groups:
        levels = {r[g] for r in rows if r[g] != ""}
        assert 2 <= len(levels) <= 20
        assert all(r[g] != "" for r in rows)  # a complete column: no row is left out for its group
        assert not all(v.replace(".", "").isdigit() for v in levels)  # text categories before numbers
    assert groups == ["race"]  # the first complete text column with few levels, in file order
    assert SV.suggest_value_column(frame, exclude=groups) == "income"  # 266 distinct values, the most


def test_shared_dataset_defaults_follow_its_suggested_groups():
    ds = load_dataset("acs12")
    assert SV.suggest_group_columns(ds.frame, preferred=ds.schema.suggested_groups) == ["race", "gender"]
    adult = load_dataset("adult")
    got = SV.suggest_group_columns(adult.frame, preferred=adult.schema.suggested_groups)
    assert got == ["sex", "race"]
    # Without a preference Adult's groups are still categorical: never age, fnlwgt or hours.
    plain = SV.suggest_group_columns(adult.frame)
    assert plain and all(adult.frame[c].nunique() <= 20 for c in plain)


def test_group_codes_bin_a_numeric_group_with_more_than_50_values_into_5():
    rows = [r for r in _acs12_rows() if r["income"] != ""]
    incomes = [float(r["income"]) for r in rows]
    lo, hi = min(incomes), max(incomes)
    width = (hi - lo) / 5
    want = [min(int((v - lo) // width), 4) for v in incomes]  # equal-width bins, the top edge in the last
    frame = pd.read_csv(ACS12).dropna(subset=["income"]).reset_index(drop=True)
    codes, labels = SV.group_codes(frame, ["income"])
    assert len(labels) == 5  # not one group per income value (234 of them among complete rows)
    assert np.bincount(codes).tolist() == np.bincount(want, minlength=5).tolist()


def test_group_codes_cross_two_columns_in_code_order():
    frame = pd.DataFrame({"a": ["y", "x", "y", "x"], "b": [2, 1, 1, 2]})
    codes, labels = SV.group_codes(frame, ["a", "b"])
    assert labels == ["x × 1", "x × 2", "y × 1", "y × 2"]
    assert [labels[c] for c in codes] == ["y × 2", "x × 1", "y × 1", "x × 2"]
