"""Issue 34 item 1: a crossover solved on the integers finds the *first* k where DP wins even when the difference of
the widths changes sign twice inside one bracket of the drawing grid.

The widths here are made-up functions with the structure the solver relies on (the DP width grows with k; a split
width depends on k through m = ⌊n/k⌋ and grows with k at a fixed m), with a bump at one chunk size m that makes the
split wider there: DP wins on that short run of k, loses again, and wins for good later. The expected k is found by
brute force over every k.
"""

from __future__ import annotations

import pandas as pd
import pytest

from dpdash.epsilon import verdicts as ev

N = 10_000


def _widths(dp_slope: float, split_base: float, split_slope: float, bump_m: int):
    """A width function (method, n, k, beta, noise) → object with .tau, and the brute-force first k where DP wins."""
    class W:
        def __init__(self, tau):
            self.tau = tau

    def dp(k):
        return 0.29 + dp_slope * k

    def split(m, k):
        return split_base + split_slope * k + (0.1 if m == bump_m else 0.0)

    def width(method, *, n, k, beta, noise):
        m = n // k
        if method == "dfhprr":
            return W(min(dp(k), 0.5))
        if method == "split_binomial":
            return W(min(split(m, k), 0.5))
        return W(0.5)   # the other DP methods and Hoeffding's split: capped (no better)

    first = next((k for k in range(1, N + 1) if min(dp(k), 0.5) < min(split(N // k, k), 0.5)), None)
    return width, first


def _frame(width, ks):
    rows = [(m, k, width(m, n=N, k=k, beta=0.05, noise="gaussian").tau)
            for m in ("dfhprr", "bnsssu", "rz_monitor", "split_binomial", "split_hoeffding") for k in ks]
    return pd.DataFrame(rows, columns=["method", "k", "tau"])


def _bisected(width, lo: int, hi: int) -> int:
    """What bisection between the grid's last losing and first winning k finds (one sign change assumed)."""
    def wins(k):
        return width("dfhprr", n=N, k=k, beta=0.05, noise="").tau < width("split_binomial", n=N, k=k, beta=0.05,
                                                                          noise="").tau
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if wins(mid) else (mid, hi)
    return hi


KS = [1, 10, 100, 1000, 2000, 4000]


@pytest.mark.parametrize("case,want,grid_first,bisected", [
    # DP wins at k = 264…270 (m = 37: the split is 0.1 wider), then from 1,045 on: both ends of the bracket
    # [100, 1000] say "split", the grid's first win is 2,000, and bisecting [1000, 2000] gives 1,045
    ((1e-5, 0.279555, 2e-5, 37), 264, 2000, 1045),
    # DP wins at k = 2,001…2,500 (m = 4), loses, and wins for good from 3,045: three sign changes inside the grid's
    # first winning bracket [2000, 4000], whose bisection finds 3,045
    ((1e-5, 0.259555, 2e-5, 4), 2001, 4000, 3045),
])
def test_first_win_inside_a_bracket_with_two_sign_changes(case, want, grid_first, bisected):
    width, first = _widths(*case)
    assert first == want                                   # brute force over every k
    frame = _frame(width, KS)
    assert ev.width_crossover(frame).first == grid_first   # the grid alone reads a later k
    assert _bisected(width, KS[KS.index(grid_first) - 1], grid_first) == bisected != want
    x = ev.solve_width_crossover(frame, n=N, beta=0.05, noise="gaussian", width=width)
    assert x.first == want and x.exact
    assert x.dp[want] < x.split[want]                      # the solved point is added to the series


def test_a_bracket_shows_no_win_when_none_exists():
    # no bump: DP wins from 1,045 on only; the search must not invent an earlier k
    width, first = _widths(1e-5, 0.279555, 2e-5, bump_m=-1)
    assert first == 1045
    x = ev.solve_width_crossover(_frame(width, KS), n=N, beta=0.05, noise="gaussian", width=width)
    assert x.first == 1045 and x.exact


def test_work_is_bounded_and_said():
    """With a budget of 3 DP evaluations the search stops, returns the smallest k it saw win, and says it is not
    proved the smallest (``exact`` False)."""
    width, _ = _widths(1e-5, 0.279555, 2e-5, 37)
    calls = []

    def counted(method, **kw):
        if method == "dfhprr":
            calls.append(kw["k"])
        return width(method, **kw)
    frame = _frame(width, KS)
    x = ev.solve_width_crossover(frame, n=N, beta=0.05, noise="gaussian", width=counted, max_probes=3)
    assert not x.exact and len(calls) <= 3
    assert x.first is not None and x.dp[x.first] < x.split[x.first]
