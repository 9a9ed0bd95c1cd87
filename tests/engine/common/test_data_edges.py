"""dpdash.common.data: the upload table coder's bins and refusals, and the CSV reader's messages for malformed text.

Expected bins are equal-width edges worked out by hand; expected refusals are the documented ones (each message
says what is wrong and what is expected)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpdash.common.data import DataValidationError, discrete_table_from_csv, read_uploaded_csv


def test_numeric_column_is_cut_into_equal_width_bins_closed_at_the_top():
    df = pd.DataFrame({"x": np.arange(11.0), "g": ["a", "b"] * 5 + ["a"]})
    t = discrete_table_from_csv(df, bins=5, max_levels=3)
    # edges 0, 2, 4, 6, 8, 10: 0–1 → bin 0, 2–3 → 1, …, 8–10 → 4 (the top edge belongs to the last bin)
    assert t.df["x"].tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 4]
    assert t.labels["x"] == ("[0, 2)", "[2, 4)", "[4, 6)", "[6, 8)", "[8, 10]")
    assert t.df["g"].tolist() == [0, 1] * 5 + [0] and t.labels["g"] == ("a", "b")


def test_only_rows_missing_a_group_or_label_are_dropped_and_counted():
    # Issue 26 item 4 (no data lost): elsewhere an empty cell is a level of its own, "(missing)".
    df = pd.DataFrame({"a": [1, 2, None, 1], "b": ["x", None, "y", "y"]})
    t = discrete_table_from_csv(df)
    assert len(t.df) == 4 and t.labels["b"] == ("x", "y", "(missing)") and t.df["b"].tolist() == [0, 2, 1, 1]
    t = discrete_table_from_csv(df, group_cols=["a"])
    assert len(t.df) == 3 and "1 of 4 rows left out: no value in a" in t.source


def test_mixed_type_levels_sort_as_text():
    df = pd.DataFrame({"m": [1, "a", 1, "b"]}, dtype=object)
    t = discrete_table_from_csv(df)
    assert t.labels["m"] == ("1", "a", "b") and t.df["m"].tolist() == [0, 1, 0, 2]


@pytest.mark.parametrize("frame, kwargs, words", [
    (pd.DataFrame(), {}, "empty"),
    (pd.DataFrame({"a": range(5)}), {"max_rows": 4}, "at most 4 are allowed"),
    (pd.DataFrame({f"c{i}": [1] for i in range(4)}), {"max_cols": 3}, "at most 3 are allowed"),
    (pd.DataFrame({"a": [1]}), {"group_cols": ["nope"]}, "not in the table"),
    (pd.DataFrame({"a": [None, None]}), {}, "Every row has a missing value"),
    (pd.DataFrame({"a": [None, 1]}), {"group_cols": ["a"], "label_col": "a"}, "exactly 2 values"),
    (pd.DataFrame({"t": [f"name {i}" for i in range(50)]}), {"max_levels": 10}, "distinct text values"),
    (pd.DataFrame({"y": [0, 1, 2]}), {"label_col": "y"}, "exactly 2 values"),
])
def test_unusable_tables_are_refused_with_a_message(frame, kwargs, words):
    with pytest.raises(DataValidationError, match=words):
        discrete_table_from_csv(frame, **kwargs)


def test_fewer_than_two_bins_is_a_programming_error():
    with pytest.raises(ValueError, match="bins must be at least 2"):
        discrete_table_from_csv(pd.DataFrame({"a": [1]}), bins=1)


@pytest.mark.parametrize("data, words", [
    (b'a,b\n1,"2\n3,4\n', "never closed"),
    (b'a,b\n"1"x,2\n3,4\n', "right after a closing quote"),
    (b"a,b\n" + b"1,2\n" * 20, "at most 10 are allowed"),
])
def test_malformed_csv_text_gets_a_message_saying_what_is_expected(data, words):
    with pytest.raises(DataValidationError, match=words):
        read_uploaded_csv(data, max_rows=10)


def test_too_many_cells_are_refused_before_a_frame_is_built():
    with pytest.raises(DataValidationError, match="values"):
        read_uploaded_csv(b"a,b,c\n" + b"1,2,3\n" * 10, max_cells=12)
