"""dpdash.stratify.figures: the viewer's synthesis and population figures show the numbers they are given.

Expected values are computed in the test from the input frames by hand (means per variant and ε, the larger of the
two heatmaps' maxima), not taken from the builders."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpdash.stratify import figures as F
from dpdash.common.palette import PALETTE


def test_synth_sweep_figure_plots_the_mean_over_repetitions_of_the_all_group_only():
    rows = []
    for variant, base in (("vanilla", 1.0), ("stratified", 0.5)):
        for eps in (0.1, 1.0):
            for rep in range(3):
                rows.append(dict(metric="accuracy", group="all", variant=variant, epsilon=eps, value=base + rep + eps))
                rows.append(dict(metric="accuracy", group="g1", variant=variant, epsilon=eps, value=100.0))
    fig = F.make_synth_sweep_figure(pd.DataFrame(rows), metrics=("accuracy",))
    by = {t.name: t for t in fig.data}
    # mean of base + {0, 1, 2} + ε = base + 1 + ε; the per-group rows (100) are left out
    assert list(by["One model"].y) == pytest.approx([2.1, 3.0])
    assert list(by["One model per group"].y) == pytest.approx([1.6, 2.5])
    assert by["One model"].line.color == PALETTE[3] and by["One model per group"].line.color == PALETTE[0]
    assert fig.layout.xaxis.type == "log"


def test_synth_sweep_figure_skips_a_variant_that_was_not_run():
    long = pd.DataFrame(dict(metric=["parity_total"] * 2, group=["all"] * 2, variant=["stratified"] * 2,
                             epsilon=[1.0, 2.0], value=[0.3, 0.2]))
    fig = F.make_synth_sweep_figure(long, metrics=("parity_total",))
    assert [t.name for t in fig.data] == ["One model per group"]


def test_parity_heatmaps_share_one_colour_scale_up_to_the_larger_maximum():
    vanilla = pd.DataFrame([[0.1, np.nan], [0.7, 0.2]], index=["a", "b"], columns=["age", "income"])
    strat = pd.DataFrame([[0.05, 0.3], [0.1, 0.2]], index=["a", "b"], columns=["age", "income"])
    fig = F.make_parity_heatmap(vanilla, strat)
    assert [t.zmax for t in fig.data] == [0.7, 0.7] and all(t.zmin == 0 for t in fig.data)
    assert list(fig.data[1].x) == ["age", "income"] and list(fig.data[0].y) == ["a", "b"]
    assert [t.showscale for t in fig.data] == [False, True]


def test_synth_group_error_bars_show_each_variant_and_skip_a_missing_one():
    v = pd.DataFrame({"group": ["g0", "g1"], "error": [0.4, 0.9], "size": [120, 8]})
    s = pd.DataFrame({"group": ["g0", "g1"], "error": [0.3, 0.5], "size": [120, 8]})
    fig = F.make_synth_group_error_figure(v, s, title="t")
    assert [list(t.y) for t in fig.data] == [[0.4, 0.9], [0.3, 0.5]] and list(fig.data[0].customdata) == [120, 8]
    assert len(F.make_synth_group_error_figure(v, None, title="t").data) == 1


def test_population_error_boxes_keep_only_the_population_level_at_this_epsilon():
    df = pd.DataFrame({"level": ["population"] * 4 + ["group"] * 2, "epsilon": [1.0, 1.0, 2.0, 1.0, 1.0, 1.0],
                       "method": ["naive", "naive", "naive", "stratified", "naive", "stratified"],
                       "abs_err": [0.1, 0.3, 9.0, 0.2, 7.0, 7.0]})
    fig = F.make_population_error_figure(df, epsilon=1.0)
    assert [sorted(t.y) for t in fig.data] == [[0.1, 0.3], [0.2]]
    assert "ε = 1" in fig.layout.title.text


def test_dirichlet_ternary_figure_has_one_trace_per_alpha():
    rng = np.random.default_rng(0)
    draws = {0.1: rng.dirichlet([0.1] * 3, 20), 10.0: rng.dirichlet([10.0] * 3, 20)}
    fig = F.make_dirichlet_ternary_figure(draws)
    assert [t.name for t in fig.data] == ["α = 0.1", "α = 10"]
    assert np.allclose(np.asarray(fig.data[0].a) + fig.data[0].b + fig.data[0].c, 1.0)


def test_group_error_figure_draws_the_two_releases_with_distinct_colours_and_clean_axes():
    import math

    import plotly.graph_objects as go

    rows = []
    for method, err in (("naive", 0.5), ("stratified", 0.02), ("split", 0.04)):
        for g, size in ((0, 10), (1, 1000)):
            for rep in range(3):
                rows.append(dict(level="group", epsilon=1.0, method=method, group=g, n_i=size, estimate=1.0,
                                 abs_err=err * (rep + 1)))
    df = pd.DataFrame(rows)
    analytic = pd.DataFrame({"size": [10, 1000], "bias": [0.3, 0.0], "crossover_total": [40.0, np.inf]})
    fig = F.make_group_error_figure(df, analytic, epsilon=1.0, R=3.0, gamma=0.05, min_frac=0.001, n=1010)
    go.Figure(fig.to_dict())  # a validated rebuild accepts every property
    by = {t.name: t for t in fig.data}
    assert "Split budget (ε/2 + ε/2)" not in by  # only the two releases the verdict compares
    assert sorted(by["Per group (full ε each)"].y) == pytest.approx(sorted([0.02, 0.04, 0.06] * 2))
    colours = [t.marker.color if t.mode == "markers" else t.line.color for t in fig.data]
    assert len(colours) == len(set(colours)), colours
    # Crossover only where the bias is positive and the size finite.
    assert list(by["Crossover size (below it, the global release wins)"].x) == [40.0]
    for axis in (fig.layout.xaxis, fig.layout.yaxis):
        assert axis.type == "log"
        for v in axis.tickvals:
            mant = v / 10 ** math.floor(math.log10(v) + 1e-12)
            assert round(mant, 6) in (1, 2, 5)
    # The y range stops at the data: from the smallest error (0.02) to the largest (1.5), padded.
    lo, hi = fig.layout.yaxis.range
    assert lo == pytest.approx(math.log10(0.02) - 0.03) and hi == pytest.approx(math.log10(1.5) + 0.03)


def test_sizes_sweep_theorem10_and_population_lines():
    import math

    from scipy import special

    from dpdash.stratify import core as S

    fig = F.make_group_sizes_figure([1, 500, 0, 40], ["a", "b", "c", "d"], ["pooled", "kept", "dropped", "kept"])
    by = {t.name: list(t.y) for t in fig.data}
    assert by == {"Kept": [500, 40], "Pooled": [1], "Dropped": [0]}  # largest first within each status
    assert fig.layout.yaxis.type == "log" and fig.layout.xaxis.showticklabels
    rows = []
    for method, base in (("naive", 1.0), ("stratified", 0.1)):
        for eps in (0.1, 1.0):
            rows.append(dict(level="population", method=method, epsilon=eps, group=-1, abs_err=base / eps))
            for g in range(2):
                rows.append(dict(level="group", method=method, epsilon=eps, group=g, abs_err=base * (g + 1) / eps))
    fig = F.make_epsilon_sweep_figure(pd.DataFrame(rows))
    worst = {t.name: list(t.y) for t in fig.data if t.xaxis == "x2"}
    assert worst["One global release"] == pytest.approx([20.0, 2.0])  # the larger group error at each ε
    fig = F.make_theorem10_figure(4, 1000, 0.5, 0.8, mc=pd.DataFrame({"alpha": [0.5], "mean": [20.0]}),
                                  realized=21.0)
    current = next(t for t in fig.data if t.name == "current α = 0.5")
    assert current.y[0] == pytest.approx(4 * (special.digamma(0.5) - special.digamma(2.0) + math.log(1000)))
    assert len(fig.layout.shapes) == 3  # worst, best and these sizes
    df = pd.DataFrame({"level": ["population"] * 2, "epsilon": [1.0, 1.0], "method": ["naive", "stratified"],
                       "abs_err": [0.1, 0.2]})
    an = S.analytic_mean_errors([100, 900], R=3.0, gamma=0.05, epsilon=1.0, mu=[0.0, 1.0])
    fig = F.make_population_error_figure(df, epsilon=1.0, analytic=an)
    assert [s.y0 for s in fig.layout.shapes] == pytest.approx([an.pop_naive_rmse, an.pop_strat_rmse,
                                                               an.pop_statistical_sd])


_SUPERSCRIPTS = "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"


def _label_value(text: str) -> tuple[str, float]:
    """(form, value) of one tick label, parsed here by hand: "decimal" for plain numbers ("0.0001", "1,000"),
    "power" for m·10ᵉ ("10⁻⁴", "2·10⁻⁵", "10⁰")."""
    if any(c in _SUPERSCRIPTS for c in text):
        mant, _, power = text.rpartition("10")
        exp = int(power.translate(str.maketrans(_SUPERSCRIPTS, "-0123456789")))
        return "power", (float(mant.rstrip("·")) if mant else 1.0) * 10.0 ** exp
    return "decimal", float(text.replace(",", ""))


def _errors_frame(errors) -> pd.DataFrame:
    return pd.DataFrame([dict(level="group", epsilon=1.0, method=m, group=g, n_i=size, estimate=1.0, abs_err=e)
                         for m in ("naive", "stratified") for g, size in ((0, 10), (1, 1000)) for e in errors])


@pytest.mark.parametrize("errors, form", [
    ([8e-5, 0.003, 0.5], "decimal"),   # issue 14 item 2: this axis read "10⁻⁴, 0.001, 0.01, 0.1"
    ([0.0, 0.02, 0.9], "decimal"),     # a zero error is drawn at the floor 10⁻⁵: "0.00001"
    ([0.004, 0.3], "decimal"),         # within three decades: 1, 2, 5 per decade
])
def test_group_error_y_ticks_are_all_in_one_form_and_read_as_their_values(errors, form):
    fig = F.make_group_error_figure(_errors_frame(errors), None, epsilon=1.0, R=3.0, gamma=0.05, show_curve=False)
    for axis in (fig.layout.yaxis, fig.layout.xaxis):
        parsed = [_label_value(t) for t in axis.ticktext]
        assert {f for f, _ in parsed} == {form}, axis.ticktext
        assert [v for _, v in parsed] == pytest.approx(list(axis.tickvals), rel=1e-9)
        assert not any(t.startswith(("5", "2")) and 0 < v < 1 for t, v in zip(axis.ticktext, axis.tickvals))
    if errors[0] == 8e-5:  # 10⁻⁴ is written 0.0001, like its neighbour 0.001
        assert fig.layout.yaxis.ticktext[:2] == ("0.0001", "0.001")


def test_sweep_axes_below_the_decimal_floor_use_powers_of_ten_throughout():
    rows = [dict(level=lvl, method="stratified", epsilon=eps, group=-1 if lvl == "population" else 0, abs_err=e)
            for lvl in ("population", "group") for eps, e in ((0.01, 0.5), (5.0, 3e-7))]
    fig = F.make_epsilon_sweep_figure(pd.DataFrame(rows))
    parsed = [_label_value(t) for t in fig.layout.yaxis.ticktext]
    assert {f for f, _ in parsed} == {"power"}
    assert [v for _, v in parsed] == pytest.approx(list(fig.layout.yaxis.tickvals), rel=1e-9)
    assert fig.layout.yaxis.ticktext[0] == "10⁻⁶" and fig.layout.yaxis.ticktext[-1] == "10⁻¹"
    # the ε axis (0.01 … 5) stays in decimals
    assert {_label_value(t)[0] for t in fig.layout.xaxis.ticktext} == {"decimal"}
