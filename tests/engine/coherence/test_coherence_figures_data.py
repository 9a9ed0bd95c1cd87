"""Data of the coherence explorer's figures checked against the inputs they were built from.

Oracles come from outside dpdash/coherence/figures.py: numpy's ECDF and sort, scipy.stats.wasserstein_distance,
scipy.stats.beta (Clopper–Pearson written out), brute-force counts of failing runs.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from scipy import stats

from dpdash.coherence import core as co
from dpdash.coherence import figures as cf
from tests.engine.coherence.test_coherence import _fake_result  # an ExperimentResult with a given W1 matrix


def _cp(k: int, n: int, c: float) -> tuple[float, float]:
    """Clopper–Pearson bounds written out from the beta quantiles (not the engine's function)."""
    lo = 0.0 if k == 0 else stats.beta.ppf((1 - c) / 2, k, n - k + 1)
    hi = 1.0 if k == n else stats.beta.ppf((1 + c) / 2, k + 1, n - k)
    return lo, hi


# ----------------------------------------------------------------------------- plot 1: predictions
def test_sorted_predictions_downsampled_are_quantiles_of_the_input():
    rng = np.random.default_rng(7)
    a, b = rng.uniform(-1, 1, 2000), rng.uniform(-0.5, 1, 1500)  # both above MAX_POINTS: downsampled
    fig = cf.make_predictions_figure(a, b, group="G")
    assert f"W1 = {stats.wasserstein_distance(a, b):.2f}" in fig.layout.title.text
    assert "released 2,000, held out 1,500" in fig.layout.title.text
    for tr, v in zip(fig.data, (a, b)):
        x, y = np.asarray(tr.x), np.asarray(tr.y)
        s, m = np.sort(v), v.size
        assert 2 <= y.size <= cf.MAX_POINTS
        idx = np.searchsorted(s, y)  # continuous draws: every value is unique
        np.testing.assert_array_equal(s[idx], y)  # a subset of the sorted input
        np.testing.assert_allclose(x, (idx + 1 - 0.5) / m)  # ranks (i − 0.5)/m, i 1-based
        assert np.all(np.diff(idx) > 0) and y[0] == s[0] and y[-1] == s[-1]  # min and max kept
    alt = cf.alt_text(fig)
    assert f"{np.mean(a < 0):.0%} of the 2,000 released" in alt
    assert f"W1 = {stats.wasserstein_distance(a, b):.2f}" in alt


def test_ecdf_mode_on_a_reduced_grid_equals_numpy_ecdf():
    rng = np.random.default_rng(3)
    a, b = rng.uniform(-1, 1, 1500), rng.uniform(-1, 0.6, 1400)  # 2,902 distinct values > 4·MAX_POINTS
    fig = cf.make_predictions_figure(a, b, group="G", mode="ecdf")
    grid = np.asarray(fig.data[0].x)
    assert grid.size <= 4 * cf.MAX_POINTS + 2 and grid[0] == -1.0 and grid[-1] == 1.0
    assert np.all(np.diff(grid) > 0)
    np.testing.assert_array_equal(np.asarray(fig.data[1].x), grid)
    for tr, v in zip(fig.data, (a, b)):
        brute = (v[None, :] <= grid[:, None]).mean(axis=1)  # share of members ≤ x, by brute force
        np.testing.assert_allclose(np.asarray(tr.y), brute)
    assert f"W1 = {stats.wasserstein_distance(a, b):.2f}" in fig.layout.title.text
    assert f"W1 = {stats.wasserstein_distance(a, b):.2f}." in cf.alt_text(fig)


@pytest.mark.parametrize("mode", ["sorted", "ecdf"])
@pytest.mark.parametrize("empty_first", [True, False])
def test_a_half_without_members_gives_no_chart(mode, empty_first):
    full = np.array([-1.0, 1.0, 0.5])
    a, b = (np.array([]), full) if empty_first else (full, np.array([]))
    fig = cf.make_predictions_figure(a, b, group="A & B", mode=mode)
    assert len(fig.data) == 0
    assert fig.layout.title.text == "A &amp; B: a half has no members"
    assert cf.alt_text(fig) == "No chart: one half has no members of A & B."


def test_alt_text_of_a_figure_without_dict_meta_is_empty():
    assert cf.alt_text(go.Figure()) == ""
    assert cf.alt_text(go.Figure(layout=dict(meta=["not", "a", "dict"]))) == ""
    assert cf.alt_text(go.Figure(layout=dict(meta={"alt": "hello"}))) == "hello"


# ----------------------------------------------------------------------------- plot 3: sorted W1
def test_sorted_w1_skips_excluded_and_undefined_groups_and_titles_without_estimate():
    rng = np.random.default_rng(1)
    R = 40
    w = np.column_stack([rng.uniform(0, 1, R), rng.uniform(0, 2, R), np.full(R, np.nan), rng.uniform(0, 1, R)])
    w[[2, 9, 30], 0] = np.nan
    res = _fake_result(w, sizes=(500, 20, 400, 300))  # g1 below γ = 100; g2 never defined
    fig = cf.make_sorted_w1_figure(res, gamma=100, alpha=0.3, estimate=None)
    assert fig.layout.title.text == f"Sorted W1 over {R} runs"
    assert [tr.name for tr in fig.data] == ["g0", "g3"]
    for tr, j in zip(fig.data, (0, 3)):
        col = w[:, j][~np.isnan(w[:, j])]
        m = col.size
        np.testing.assert_array_equal(np.asarray(tr.y), np.sort(col))
        np.testing.assert_allclose(np.asarray(tr.x), (np.arange(1, m + 1) - 0.5) / m)
    assert len(fig.data[0].y) == R - 3
    alt = cf.alt_text(fig)
    assert f"g0 median {np.median(w[~np.isnan(w[:, 0]), 0]):.2f}; g3 median {np.median(w[:, 3]):.2f}" in alt
    assert "g1" not in alt and "g2" not in alt
    assert [s.y0 for s in fig.layout.shapes] == [0.3]  # the α line


# ----------------------------------------------------------------------------- plot 4: failure rate
def test_failure_rate_without_any_run_gives_no_chart():
    w = np.full((5, 2), np.nan)
    fig = cf.make_failure_rate_figure(_fake_result(w, sizes=(100, 100)), gamma=0, alpha=0.2)
    assert len(fig.data) == 0
    assert fig.layout.title.text == "No run had members of a kept group in both halves"
    assert cf.alt_text(fig).startswith("No chart")


def test_failure_rate_step_curve_and_band_against_counts_and_scipy_beta():
    rng = np.random.default_rng(5)
    R = 25
    w = np.column_stack([rng.uniform(0, 0.8, R), rng.uniform(0, 1.6, R), rng.uniform(0, 2, R)])
    w[3, :] = np.nan  # an undefined run is not counted
    w[7, 1] = np.nan
    res = _fake_result(w, sizes=(800, 600, 10))  # γ = 50 drops g2
    fig = cf.make_failure_rate_figure(res, gamma=50, alpha=0.4, beta_theory=None, confidence=0.9)
    maxes = np.array([np.nanmax(row[:2]) for row in w if not np.all(np.isnan(row[:2]))])
    n = maxes.size
    assert n == R - 1 and fig.layout.title.text == f"Failure rate vs α ({n} runs)"
    hi_tr, lo_tr, step = fig.data
    alphas = np.asarray(step.x)
    assert alphas[0] == 0.0 and alphas[-1] == 2.0 and np.all(np.diff(alphas) > 0)
    k = np.array([np.count_nonzero(maxes > a) for a in alphas])
    np.testing.assert_allclose(np.asarray(step.y), k / n)
    band = np.array([_cp(int(ki), n, 0.9) for ki in k])
    np.testing.assert_allclose(np.asarray(lo_tr.y), band[:, 0], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(hi_tr.y), band[:, 1], rtol=1e-12, atol=1e-15)
    assert lo_tr.name == "90% uncertainty band"
    # just after each observed maximum the curve has dropped past it
    for d in maxes:
        assert np.asarray(step.y)[np.searchsorted(alphas, min(d + 1e-9, 2.0))] == pytest.approx(np.mean(maxes > d))
    # no β line without beta_theory: only the α line
    assert len(fig.layout.shapes) == 1 and fig.layout.shapes[0].x0 == 0.4
    assert f"at α = 0.40 it is {np.mean(maxes > 0.4):.0%}" in cf.alt_text(fig)
    assert f"to 0% at α = {maxes.max():.2f}" in cf.alt_text(fig)


# ----------------------------------------------------------------------------- plot 5: size vs mean W1
@pytest.mark.parametrize("g7", [None, math.inf, 0.0])
def test_size_figure_without_gamma_lines(g7):
    summary = pd.DataFrame({"group": ["a", "b", "c"], "size": [50, 4000, 700], "in_collection": [False, True, True],
                            "mean_w1": [0.9, 0.05, np.nan], "sd_w1": [0.2, np.nan, np.nan]})
    fig = cf.make_size_w1_figure(summary, gamma=0, gamma_theorem7=g7)
    assert len(fig.layout.shapes) == 0 and len(fig.layout.annotations) == 0
    tr = fig.data[0]
    assert list(tr.x) == [50, 4000] and list(tr.y) == [0.9, 0.05] and list(tr.text) == ["a", "b"]
    np.testing.assert_array_equal(np.asarray(tr.error_y.array), [0.2, 0.0])
    assert list(tr.marker.color) == [cf.GREY, cf.PALETTE[0]]
    assert cf.alt_text(fig) == "Group size against mean W1 over the runs: a (50 members) 0.90; b (4,000 members) 0.05."
    # the log axis spans the sizes (25 … 8000) in log10 units
    lo, hi = fig.layout.xaxis.range
    assert lo <= math.log10(50) and hi >= math.log10(4000)


# ----------------------------------------------------------------------------- plot 6: W1 vs ε
def _sweep() -> pd.DataFrame:
    rows = []
    for g, base in (("p", 0.8), ("q", 0.4)):
        for e, f in ((math.inf, 0.1), (1.0, 0.5), (0.1, 1.0)):
            m = base * f
            rows.append({"epsilon": e, "group": g, "size": 100, "mean_w1": m, "q05_w1": m - 0.05, "q95_w1": m + 0.1})
    return pd.DataFrame(rows)


def test_sweep_without_floor_or_clear_means_draws_only_the_data():
    sw = _sweep()
    fig = cf.make_sweep_figure(sw)
    assert len(fig.layout.shapes) == 0
    assert [tr.name for tr in fig.data] == ["p", "q"]
    for tr, g in zip(fig.data, ("p", "q")):
        d = sw[sw["group"] == g].sort_values("epsilon")
        np.testing.assert_allclose(np.asarray(tr.x), [0.1, 1.0, 10.0])  # ∞ drawn at 10 × the largest finite ε
        np.testing.assert_allclose(np.asarray(tr.y), d["mean_w1"])
        np.testing.assert_allclose(np.asarray(tr.error_y.array), [0.1] * 3)
        np.testing.assert_allclose(np.asarray(tr.error_y.arrayminus), [0.05] * 3)
    assert list(fig.layout.xaxis.tickvals) == [0.1, 1.0, 10.0]
    assert "p from 0.80 at ε = 0.1 to 0.08 at ε = ∞" in cf.alt_text(fig)


def test_sweep_skips_empty_floor_and_undefined_clear_mean():
    sw = _sweep()
    floor_q = np.array([0.02, np.nan, 0.1, 0.04, 0.07])
    fig = cf.make_sweep_figure(sw, clear_means={"p": float("nan"), "q": 0.3},
                               floor={"p": np.array([np.nan, np.nan]), "q": floor_q})
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    lines = [s for s in fig.layout.shapes if s.type == "line"]
    ok = floor_q[~np.isnan(floor_q)]
    assert len(rects) == 1  # only q's floor: p's is all undefined
    assert (rects[0].y0, rects[0].y1) == pytest.approx((np.percentile(ok, 5), np.percentile(ok, 95)))
    assert [s.y0 for s in lines] == [0.3]  # only q's clear-release line: p's is NaN
    assert [a.text for a in fig.layout.annotations] == ["clear release: q"]


# ----------------------------------------------------------------------------- plot 8: Section 7
def test_single_column_figure_omits_infinite_bounds_and_caps_at_two():
    w = np.array([[0.1, 0.4, 1.0], [np.nan, 0.2, 0.3], [0.3, np.nan, 0.5]])
    res = co.SingleColumnResult(("a", "b", "c"), (30, 40, 5), w, np.array([0.5, np.inf, 3.0]),
                                np.array([0.0, 0.0, 0.0]))
    fig = cf.make_single_column_figure(res)
    kinds = [(type(tr).__name__, tr.name) for tr in fig.data]
    assert kinds == [("Box", "a (30)"), ("Scatter", "paper's bound"), ("Box", "b (40)"), ("Box", "c (5)"),
                     ("Scatter", None)]
    for tr, j in ((fig.data[0], 0), (fig.data[2], 1), (fig.data[3], 2)):
        np.testing.assert_array_equal(np.asarray(tr.y), w[:, j][~np.isnan(w[:, j])])
    assert list(fig.data[1].y) == [0.5] and list(fig.data[4].y) == [2.0]  # bound 3 drawn at 2
    alt = cf.alt_text(fig)
    assert "over 3 random splits" in alt and "b largest 0.40, bound none" in alt and "c largest 1.00, bound 3.00" in alt
