"""engine.sampling_figures: the cluster guarantee figure (P6) shows bars per cluster up to 200 clusters and a size
histogram with the extremes marked beyond; values are the table's, placed where the inputs say."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from engine import sampling_figures as sf


def test_cluster_table_pairs_each_size_with_its_bounds_in_order():
    bounds = SimpleNamespace(lower=np.array([0.1, 0.2, 0.3]), upper=np.array([0.5, 0.6, 0.9]))
    df = sf.cluster_bars_table([30, 10, 20], bounds)
    assert df.to_dict("list") == {"cluster": [1, 2, 3], "size": [30.0, 10.0, 20.0], "lower_thm7": [0.1, 0.2, 0.3],
                                  "upper_thm8": [0.5, 0.6, 0.9]}


def test_few_clusters_get_grouped_bars_and_the_two_reference_lines():
    df = pd.DataFrame({"cluster": [1, 2], "size": [30.0, 10.0], "lower_thm7": [0.1, 0.2], "upper_thm8": [0.5, 0.6]})
    fig = sf.make_cluster_bars_figure(df, epsilon=1.0, naive=0.25)
    assert [t.type for t in fig.data] == ["bar", "bar"]
    assert list(fig.data[0].x) == ["1 (n=30)", "2 (n=10)"]
    assert list(fig.data[0].y) == [0.1, 0.2] and list(fig.data[1].y) == [0.5, 0.6]
    assert sorted(s.y0 for s in fig.layout.shapes) == [0.25, 1.0]


def test_many_clusters_get_a_histogram_with_the_smallest_and_largest_marked():
    sizes = np.arange(5, 5 + 201, dtype=float)
    df = pd.DataFrame({"cluster": np.arange(1, 202), "size": sizes, "lower_thm7": 0.0, "upper_thm8": 1.0})
    fig = sf.make_cluster_bars_figure(df, epsilon=1.0, naive=0.5)
    assert [t.type for t in fig.data] == ["histogram"]
    assert sorted(s.x0 for s in fig.layout.shapes) == [5.0, 205.0]
    assert "201 clusters" in fig.layout.title.text
