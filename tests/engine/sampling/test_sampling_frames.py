"""dpdash.sampling.frames: bounded number-list parser of the sampling designer (issue 17)."""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpdash.sampling.frames import MAX_LIST_CHARS, parse_numbers


def test_separators_and_values():
    assert parse_numbers("2, -3; 5\n 1e2\t7") == [2.0, -3.0, 5.0, 100.0, 7.0]
    assert parse_numbers("  ") == []
    assert parse_numbers("3, 8, 15, 40", integer=True) == [3.0, 8.0, 15.0, 40.0]


@pytest.mark.parametrize("text, message", [
    ("1, inf", "finite"), ("nan", "finite"), ("1e309", "finite"), ("1, x", "not a number"),
    ("1.5", "whole"), ("1,,,2,](http://e/x)", "not a number"),
])
def test_refusals(text, message):
    with pytest.raises(ValueError, match=message):
        parse_numbers(text, integer=message == "whole")


def test_bounded_before_work():
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="characters"):
        parse_numbers("1," * (MAX_LIST_CHARS // 2 + 1))
    with pytest.raises(ValueError, match="entries"):
        parse_numbers(",".join(["1"] * 11), max_entries=10)
    assert time.perf_counter() - t0 < 1.0
    with pytest.raises(ValueError):
        parse_numbers(None)  # type: ignore[arg-type]


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=50))
def test_round_trip(values):
    assert parse_numbers(", ".join(repr(v) for v in values)) == values


@given(st.text(max_size=200))
def test_never_raises_other_than_valueerror(text):
    try:
        out = parse_numbers(text)
    except ValueError:
        return
    assert all(math.isfinite(v) for v in out)
