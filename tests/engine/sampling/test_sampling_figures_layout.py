"""dpdash.sampling.figures: figure layouts a reader can read (issue 14 item 2).

The cluster guarantee figure (P6) draws one pair of bars per distinct size (no row of 100 rotated labels), markers
over the size when there are many distinct sizes, and a size histogram beyond 200 clusters; log axes carry ticks at
1, 2, 5 per decade at most; CSV headers are words. Expected values are the inputs, placed where they say.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd

from dpdash.sampling import figures as sf


def _clean_decade_ticks(axis) -> bool:
    """Every tick is 1, 2 or 5 times a power of ten (0.5 for a size-0 column allowed as '0')."""
    for v in axis.tickvals:
        mant = v / 10 ** math.floor(math.log10(v) + 1e-12)
        if round(mant, 6) not in (1, 2, 5):
            return False
    return True


def test_cluster_table_has_one_row_per_size_with_its_count():
    bounds = SimpleNamespace(lower=np.array([0.1, 0.2, 0.3, 0.1]), upper=np.array([0.5, 0.6, 0.9, 0.5]))
    df = sf.cluster_bars_table([30, 10, 20, 30], bounds)
    assert df.to_dict("list") == {"size": [10.0, 20.0, 30.0], "clusters": [1, 1, 2], "lower_thm7": [0.2, 0.3, 0.1],
                                  "upper_thm8": [0.6, 0.9, 0.5]}


def test_hundred_equal_clusters_give_one_labelled_pair_of_bars_not_a_hundred():
    df = pd.DataFrame({"size": [20.0], "clusters": [100], "lower_thm7": [0.99], "upper_thm8": [0.99]})
    fig = sf.make_cluster_bars_figure(df, epsilon=1.0, naive=0.16)
    assert [t.type for t in fig.data] == ["bar", "bar"]
    assert list(fig.data[0].x) == ["20"] and "100 clusters" in fig.layout.title.text
    assert sorted(s.y0 for s in fig.layout.shapes) == [0.16, 1.0]


def test_many_distinct_sizes_become_markers_on_a_log_axis():
    sizes = np.unique(np.geomspace(2, 900, 150).round())
    df = pd.DataFrame({"size": sizes, "clusters": 1, "lower_thm7": 0.1, "upper_thm8": 0.2})
    fig = sf.make_cluster_bars_figure(df, epsilon=1.0, naive=0.5)
    assert [t.type for t in fig.data] == ["scatter", "scatter"] and fig.layout.xaxis.type == "log"
    assert _clean_decade_ticks(fig.layout.xaxis)


def test_many_clusters_get_a_histogram_with_the_smallest_and_largest_marked():
    df = pd.DataFrame({"size": [5.0, 50.0, 205.0], "clusters": [100, 100, 1], "lower_thm7": 0.0, "upper_thm8": 1.0})
    fig = sf.make_cluster_bars_figure(df, epsilon=1.0, naive=0.5)
    assert [t.type for t in fig.data] == ["histogram"] and fig.data[0].histfunc == "sum"
    assert list(fig.data[0].y) == [100, 100, 1]
    assert sorted(s.x0 for s in fig.layout.shapes) == [5.0, 205.0]
    assert "201 clusters" in fig.layout.title.text


def test_heatmap_axes_have_decade_ticks_and_size_zero_reads_0():
    df = sf.cluster_heatmap_table(n_clusters=100, n_drawn=10)
    fig = sf.make_cluster_heatmap(df, current_size=20, current_epsilon=1.0)
    x, y = fig.layout.xaxis, fig.layout.yaxis
    assert _clean_decade_ticks(x) and _clean_decade_ticks(y)
    assert x.ticktext[0] == "0" and x.tickvals[0] == 0.5 and "1,000" in x.ticktext
    assert y.ticktext[0] == "0.001" and y.ticktext[-1] == "10"


def test_rate_and_sigma_axes_stop_at_the_data():
    df = sf.rate_curve_table(epsilon=1.0, n=10_000)
    fig = sf.make_rate_figure(df, epsilon=1.0, schemes=["SRSWOR"], current_rate=0.01)
    assert _clean_decade_ticks(fig.layout.xaxis) and fig.layout.xaxis.tickvals[0] == 1e-4
    # the cluster mark and the shaded zone do not share a colour
    band = sf.make_rate_figure(df, epsilon=1.0, schemes=["SRSWOR"], current_rate=0.01, cluster_band=(0.1, 0.5, 0.9))
    colours = [t.line.color for t in band.data if t.line is not None and t.line.color]
    assert len(colours) == len(set(colours))


def test_tilt_chart_draws_both_curves_on_one_readable_scale():
    # t spread out (peak 0.01), t̃ a spike (peak 0.9): each is shown relative to its own peak
    df = pd.DataFrame({"size_from": np.arange(100), "size_to": np.arange(100),
                       "t": np.full(100, 0.01), "t_tilted": np.r_[np.full(99, 0.1 / 99), 0.9]})
    fig = sf.make_pmf_figure(df, tilted_mean=95.0)
    assert max(fig.data[0].y) == 1.0 and max(fig.data[1].y) == 1.0
    assert list(fig.layout.yaxis.range) == [0, 1.12]


def test_csv_headers_are_words():
    df = sf.rate_curve_table(epsilon=1.0, n=100, points=3)
    plain = sf.for_people(df)
    assert "srswor" not in plain.columns and "sampling rate q" in plain.columns
    assert all("_" not in c for c in plain.columns)
    alloc = sf.allocation_table([40, 25, 15], [2, 6, 15], m=24, value_max=30, epsilon=1.0, names=["a", "b", "c"])
    out = sf.for_people(alloc)
    assert set(out["allocation"]) == {"Neyman (take-all)", "proportional", "privacy-aware"}
    assert all("_" not in c for c in out.columns)
