"""Files as R, pandas, Excel and Notepad write them (issue 31 deliver 6, STYLE "Files as users write them"), each
through the one reader and the engine's choices of the pages it fits: which columns are row labels, which are
numbers, how many cells are missing, the coherence explorer's default label and lens, the stratified viewer's value
column. The expectations are stated by the corpus (``tests.attack.corpus.user_files``) from how each file was
written, and checked here against pandas reading the same bytes with the row labels' position known."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from dpdash.coherence import inputs as ci
from dpdash.common.data import NA_WORDS, read_uploaded_csv
from dpdash.stratify import views as SV
from tests.attack.corpus import user_files

FILES = user_files()


def _pandas(data: bytes, row_labels: int) -> pd.DataFrame:
    """The same file read by pandas alone, told what the reader must find out: encoding, delimiter, row labels."""
    encoding = "utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "latin-1" if b"\xe2ge" in data else "utf-8"
    sep = ";" if data.replace(b"\xef\xbb\xbf", b"").split(b"\n")[0].count(b";") else ","
    frame = pd.read_csv(io.BytesIO(data), encoding=encoding, sep=sep, keep_default_na=False, na_values=["", "NA"])
    return frame.iloc[:, row_labels:]


@pytest.mark.parametrize("name", list(FILES))
def test_the_reader_finds_row_labels_numbers_and_missing_cells(name):
    data, want = FILES[name]
    ds = read_uploaded_csv(data)
    assert list(ds.frame.columns) == want["columns"]
    assert len(ds.row_labels) == want["row_labels"]
    if want["row_labels"]:
        assert "row label" in ds.row_label_note and "left out" in ds.row_label_note
    numeric = {c for c in ds.frame.columns if pd.api.types.is_numeric_dtype(ds.frame[c])}
    assert numeric == want["numeric"]
    for col, n in want.get("missing", {}).items():
        assert int(ds.frame[col].isna().sum()) == n, col
    if "note" in want:
        assert any(want["note"] in n for n in ds.notes), ds.notes
    independent = _pandas(data, want["row_labels"])
    assert len(ds.frame) == len(independent)
    for col in want["numeric"]:
        pd.testing.assert_series_equal(ds.frame[col].astype(float), independent[col].astype(float), check_names=False)


def test_region_codes_N_NA_None_are_values_unless_the_user_says_otherwise():
    data, _ = FILES["pandas-to-csv-index"]
    ds = read_uploaded_csv(data)
    assert sorted(ds.frame["region"].unique()) == ["N", "NA", "None", "S"]
    asked = read_uploaded_csv(data, missing_codes=("", *NA_WORDS))
    assert int(asked.frame["region"].isna().sum()) == 30 and set(asked.frame["region"].dropna()) == {"S"}


@pytest.mark.parametrize("name", [n for n, (_, w) in FILES.items() if "label" in w])
def test_coherence_default_lens_has_no_row_label(name):
    data, want = FILES[name]
    frame = read_uploaded_csv(data, min_rows=20).frame
    label = ci.default_label(frame)
    lens, left = ci.default_lens(frame, label)
    assert label == want["label"] or label in frame.columns
    assert set(lens) | set(left) | {label} == set(want["columns"])
    assert not any("row" in c.lower() or "unnamed" in c.lower() for c in lens)


def test_arrests_like_rownames_would_be_left_out_even_if_read_elsewhere():
    """The issue's Arrests: a frame read by pandas keeps R's row names as a column; the lens still leaves it out."""
    data, want = FILES["r-write-csv"]
    frame = pd.read_csv(io.BytesIO(data)).rename(columns={"Unnamed: 0": "rownames"})
    lens, left = ci.default_lens(frame, "released")
    assert "rownames" in left and "rownames" not in lens


@pytest.mark.parametrize("name", [n for n, (_, w) in FILES.items() if "value" in w])
def test_stratified_value_column_is_never_the_row_label(name):
    data, want = FILES[name]
    frame = read_uploaded_csv(data).frame
    assert SV.suggest_value_column(frame) in want["value"]
    raw = pd.read_csv(io.BytesIO(data))  # rownames kept, as another reader would
    assert "rownames" not in SV.numeric_columns(raw) and SV.suggest_value_column(raw) in want["value"]


def test_code_reading_pages_keep_an_index_or_x_column_that_may_be_an_id():
    """A respondents file's ``index`` 1…n may be the person's id: pages reading codes keep it; blank names go."""
    text = "index,region,answer\n" + "".join(f"{i + 1},{'N' if i % 2 else 'S'},yes\n" for i in range(30))
    assert list(read_uploaded_csv(text.encode(), as_text=True).frame.columns) == ["index", "region", "answer"]
    assert list(read_uploaded_csv(text.encode()).frame.columns) == ["region", "answer"]
    blank = "," + text.split("\n", 1)[0].split(",", 1)[1] + "\n" + "".join(
        f"{i + 1},{'N' if i % 2 else 'S'},yes\n" for i in range(30))
    assert list(read_uploaded_csv(blank.encode(), as_text=True).frame.columns) == ["region", "answer"]
