"""Hostile files through the one upload reader (issue 17 deliver 1): refused fast, in bounded memory, clearly.

The bombs are just under the server's 50 MB upload limit. Before the bounded reader, a 9.9 MB file of two
lines and 1,000,000 columns cost 69 s and 4.4 GB; here every bomb must be refused in < 2 s and < 200 MB of
memory allocated beyond the file itself (tracemalloc counts Python and numpy allocations).
"""

from __future__ import annotations

import re
import time
import tracemalloc

import pandas as pd
import pytest

from dpdash.common.data import DataValidationError, read_uploaded_csv
from tests.attack.corpus import BOMB_BYTES, BOMBS, INERT_TEXT, MALFORMED, NON_LATIN_CSV, bomb
from ui.exports import csv_bytes



@pytest.mark.slow
@pytest.mark.parametrize("name", list(BOMBS))
def test_bomb_is_refused_in_bounded_time_and_memory(name):
    data, expected = bomb(name)
    assert len(data) > 0.99 * BOMB_BYTES
    start = time.perf_counter()
    with pytest.raises(DataValidationError, match=expected):
        read_uploaded_csv(data)
    elapsed = time.perf_counter() - start
    tracemalloc.start()
    try:
        with pytest.raises(DataValidationError):
            read_uploaded_csv(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert elapsed < 2.0, f"{name}: {elapsed:.2f} s"
    assert peak < 200e6, f"{name}: {peak / 1e6:.0f} MB"


def _user_runs(data: bytes, length: int) -> set[str]:
    """Every run of ``length`` characters of the file's text (what a message must not echo at length)."""
    text = data.decode("utf-8", errors="ignore")
    return {text[i:i + length] for i in range(0, max(0, len(text) - length))}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_file_gets_a_short_clear_message(name):
    data, expected = MALFORMED[name]
    with pytest.raises(DataValidationError) as info:
        read_uploaded_csv(data)
    message = str(info.value)
    assert re.search(expected, message), message
    assert "Expected" in message or "at least" in message or "Rename" in message or "Remove" in message
    assert len(message) < 400
    # At most a short excerpt of the file: no run of 50 of its characters appears in the message.
    assert not any(run in message for run in _user_runs(data, 50) if run.strip())


def test_huge_names_and_values_are_excerpted_not_echoed():
    name = "![x](http://attacker.invalid/" + "a" * 150 + ")"
    data = f"{name},{name}\n1,2\n3,4\n".encode()
    with pytest.raises(DataValidationError, match="appears 2 times") as info:
        read_uploaded_csv(data, max_cols=10)
    assert "a" * 60 not in str(info.value) and len(str(info.value)) < 200


@pytest.mark.parametrize("name", list(INERT_TEXT))
def test_hostile_text_parses_and_exports_inert(name):
    ds = read_uploaded_csv(INERT_TEXT[name])
    assert ds.frame.shape[1] == 3 and len(ds.frame) >= 2
    back = pd.read_csv(__import__("io").BytesIO(csv_bytes(ds.frame)))
    for cell in [*back.columns, *back.astype(str).to_numpy().ravel()]:
        assert not str(cell).startswith(("=", "+", "@", "\t", "\r")), cell


def test_utf16_and_bom_read_the_same_table():
    plain = read_uploaded_csv(INERT_TEXT["bom"]).frame
    for name in ("utf16", "utf16-no-bom"):
        ds = read_uploaded_csv(INERT_TEXT[name])
        pd.testing.assert_frame_equal(ds.frame, plain)
        assert any("UTF-16" in n for n in ds.notes)


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("name", list(NON_LATIN_CSV))
def test_utf16_without_bom_in_any_script_is_text(name, codec):
    """Greek or Chinese UTF-16 without a byte-order mark was called "a binary file" (issue 26 item 5)."""
    text = NON_LATIN_CSV[name]
    ds = read_uploaded_csv(text.encode(codec))
    expected = pd.read_csv(__import__("io").StringIO(text), sep=None, engine="python")  # the independent reader
    assert list(ds.frame.columns) == list(expected.columns)
    assert ds.frame.astype(str).to_numpy().tolist() == expected.astype(str).to_numpy().tolist()
    assert any("UTF-16" in n for n in ds.notes)
