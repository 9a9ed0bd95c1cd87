"""dpdash.search against brute force: linear scans for the integer searches, closed forms for the root."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpdash.search import bracketed_root, largest_true, smallest_true

pytestmark = pytest.mark.hypothesis


@given(st.integers(-50, 200), st.integers(1, 300), st.integers(0, 400))
def test_smallest_true_matches_a_linear_scan(lo, width, threshold):
    hi = lo + width
    pred = lambda t: t >= lo + 1 + threshold % width  # noqa: E731  (true at hi by construction)
    expected = next(t for t in range(lo + 1, hi + 1) if pred(t))
    assert smallest_true(pred, lo, hi) == expected


@given(st.integers(0, 5000), st.integers(1, 4))
def test_largest_true_matches_a_linear_scan(threshold, start):
    pred = lambda k: k <= threshold  # noqa: E731
    expected = max((k for k in range(start, threshold + 1)), default=start - 1)
    assert largest_true(pred, start=start) == expected


def test_largest_true_cap_returns_the_last_value_known_to_hold():
    calls = []
    assert largest_true(lambda k: calls.append(k) or True, cap=10**6) == 2**19
    assert max(calls) == 2**19  # nothing past the cap is evaluated


@given(st.floats(0.01, 1e6), st.floats(-30, 30))
def test_bracketed_root_finds_a_log_root_far_outside_the_start(target, start):
    # f(x) = e^x − target is increasing with its root at ln(target); the start bracket may be far away
    x = bracketed_root(lambda x: math.exp(x) - target, start, start + 0.1, increasing=True, step_lo=3.0, step_hi=3.0)
    assert x == pytest.approx(math.log(target), rel=1e-9, abs=1e-9)
    y = bracketed_root(lambda x: target - math.exp(x), start, start + 0.1, increasing=False, step_lo=3.0, step_hi=3.0)
    assert y == pytest.approx(math.log(target), rel=1e-9, abs=1e-9)
