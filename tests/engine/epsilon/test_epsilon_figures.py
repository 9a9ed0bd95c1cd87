"""dpdash.epsilon.figures: the epsilon calculator's figure builders show what they are given, and the noise figure
shows the right distribution (checked against scipy and closed forms, not against the builder's own arithmetic)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

from dpdash.common import formatting as nf
from dpdash.epsilon import figures as ef
from dpdash.common.palette import PALETTE


@pytest.mark.parametrize("scale, half_width", [(1.0, 3.0), (0.5, 0.2), (4.0, 10.0)])
def test_laplace_noise_figure_shades_the_interval_mass(scale, half_width):
    fig = ef.make_noise_figure("laplace", scale=scale, half_width=half_width)
    density, shaded = fig.data[0], fig.data[1]
    x, y = np.asarray(density.x), np.asarray(density.y)
    assert np.allclose(y, stats.laplace.pdf(x, scale=scale))
    xs, ys = np.asarray(shaded.x), np.asarray(shaded.y)
    assert xs.min() >= -half_width and xs.max() <= half_width
    # P(|L| ≤ h) = 1 − e^{−h/b} for Laplace(b): the shaded area is that mass (trapezoid on the 801-point grid)
    assert integrate.trapezoid(ys, xs) == pytest.approx(1 - math.exp(-half_width / scale), rel=0.02)


def test_gaussian_noise_figure_is_the_normal_density():
    fig = ef.make_noise_figure("gaussian", scale=2.0, half_width=3.92)
    x, y = np.asarray(fig.data[0].x), np.asarray(fig.data[0].y)
    assert np.allclose(y, stats.norm.pdf(x, scale=2.0))
    shaded = fig.data[1]
    assert integrate.trapezoid(shaded.y, shaded.x) == pytest.approx(stats.norm.cdf(1.96) - stats.norm.cdf(-1.96),
                                                                    rel=0.02)


@pytest.mark.parametrize("scale", [0.5, 1.0, 3.0])
def test_discrete_laplace_pmf_matches_scipy_dlaplace(scale):
    fig = ef.make_noise_figure("discrete_laplace", scale=scale, half_width=2)
    bar = fig.data[0]
    ys, pmf = np.asarray(bar.x), np.asarray(bar.y)
    # scipy's dlaplace(a) has pmf ∝ e^{−a|k|}: a = 1/scale
    assert np.allclose(pmf, stats.dlaplace.pmf(ys, 1.0 / scale), rtol=1e-12, atol=0)
    colours = np.asarray(bar.marker.color)
    assert set(colours[np.abs(ys) <= 2]) == {PALETTE[0]} and PALETTE[0] not in set(colours[np.abs(ys) > 2])


def test_discrete_gaussian_pmf_matches_a_brute_force_normalisation():
    sigma = 3.0
    bar = ef.make_noise_figure("discrete_gaussian", scale=sigma, half_width=5).data[0]
    ys, pmf = np.asarray(bar.x), np.asarray(bar.y)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12) and np.allclose(pmf, pmf[::-1])
    # N_Z(0, σ²): P(k) = e^{−k²/2σ²} / Σ_{j ∈ Z} e^{−j²/2σ²}; the sum over |j| ≤ 200 is exact to double precision.
    # The figure shows the support ±4σ only, renormalised, so each bar is within the cut tail mass (< 1e-4).
    j = np.arange(-200, 201)
    norm = np.exp(-(j**2) / (2 * sigma**2)).sum()
    exact = np.exp(-(ys.astype(float) ** 2) / (2 * sigma**2)) / norm
    assert np.allclose(pmf, exact, rtol=1e-4, atol=0)
    assert abs(ys).max() == 12


def test_halfwidth_figure_draws_one_curve_per_mechanism_and_the_current_point():
    curves = pd.DataFrame({"mechanism": ["laplace"] * 3 + ["discrete_gaussian"] * 3, "epsilon": [0.1, 1, 10] * 2,
                           "half_width": [30.0, 3.0, 0.3, 40.0, 4.0, 1.0]})
    fig = ef.make_halfwidth_figure(curves, current_epsilon=1.0, current_half_width=3.0, current_mechanism="laplace",
                                   confidence=95)
    names = [t.name for t in fig.data]
    assert names == ["Laplace", "Discrete Gaussian", "current"]
    assert list(fig.data[1].y) == [40.0, 4.0, 1.0] and fig.data[1].line.shape == "hv"
    assert (fig.data[2].x[0], fig.data[2].y[0]) == (1.0, 3.0)
    assert fig.layout.xaxis.type == "log" and "95%" in fig.layout.title.text
    no_current = ef.make_halfwidth_figure(curves, current_epsilon=math.inf, current_half_width=0,
                                          current_mechanism="laplace", confidence=90)
    assert [t.name for t in no_current.data] == ["Laplace", "Discrete Gaussian"]


def test_best_valid_envelope_is_the_least_valid_epsilon_at_each_k():
    curve = pd.DataFrame({"k": [1, 1, 1, 2, 2, 2], "rule": ["basic", "advanced", "pld"] * 2,
                          "epsilon": [1.0, 0.5, np.inf, 2.0, 3.0, 1.5], "valid": [True, False, True, True, True, True]})
    env = ef.best_valid_envelope(curve)
    # k = 1: 0.5 is not valid and ∞ is no bound, so 1.0; k = 2: min(2, 3, 1.5)
    assert env.to_dict("list") == {"k": [1, 2], "epsilon": [1.0, 1.5]}


def test_composition_figure_omits_invalid_points_and_adds_the_envelope():
    curve = pd.DataFrame({"k": [1, 10, 1, 10], "rule": ["basic", "basic", "advanced", "advanced"],
                          "epsilon": [0.1, 1.0, 0.3, 0.8], "valid": [True, True, False, True]})
    fig = ef.make_composition_figure(curve, delta=1e-5, log_axes=False)
    by_name = {t.name: t for t in fig.data}
    assert list(by_name["best valid bound"].y) == [0.1, 0.8]
    adv = [t for t in fig.data if list(t.x) == [10]]
    assert adv and list(adv[0].y) == [0.8]
    assert fig.layout.xaxis.type is None and "10⁻⁵" in fig.layout.title.text
    # the band behind the rules reuses no rule's colour
    colours = [t.line.color for t in fig.data]
    assert len(set(colours)) == len(colours)


def test_budget_figure_bars_add_up_to_the_budget_and_names_are_inert():
    shares = SimpleNamespace(names=["<b>mean</b>", "count"], values=[0.3, 0.2], unused=0.1, reserve=0.4,
                             unit="ε", budget=1.0, proportional=False)
    fig = ef.make_budget_figure(shares)
    assert sum(t.x[0] for t in fig.data) == pytest.approx(1.0)
    assert [t.name for t in fig.data] == ["&lt;b&gt;mean&lt;/b&gt;", "count", "not spent", "reserve"]
    assert ef.plain_label("x" * 100, max_len=10) == "x" * 9 + "…"


def test_adaptive_figure_marks_each_halt_and_the_stop_line():
    trace = pd.DataFrame({"round": [1, 2, 3] * 2, "rule": ["basic"] * 3 + ["heuristic"] * 3,
                          "bound": [0.5, 1.0, np.inf, 0.2, 0.4, 0.6]})
    fig = ef.make_adaptive_figure(trace, epsilon_g=1.0, halts={"basic": 2, "RDP": None})
    vlines = [s for s in fig.layout.shapes if s.x0 == s.x1 and s.type == "line" and s.xref == "x"]
    assert [s.x0 for s in vlines] == [2]
    assert list(fig.layout.yaxis.range) == [0, 3.0]
    basic = [t for t in fig.data if t.line.dash != "dash"][0]
    assert math.isnan(basic.y[2])  # an infinite bound is a gap, not a point at the top


def test_tradeoff_advantage_size_power_and_gamma_figures_show_their_inputs():
    fpr = np.linspace(0, 1, 5)
    tr = ef.make_tradeoff_figure(fpr, {"ε = 1": 1 - fpr, "ε = 2": (1 - fpr) / 2})
    assert [t.name for t in tr.data][:2] == ["ε = 1", "ε = 2"] and tr.data[0].fill == "tozeroy"
    adv = ef.make_advantage_figure(np.array([0.1, 1.0]), {"pure": np.array([0.05, 0.46])}, current=1.0)
    assert list(adv.data[0].y) == [0.05, 0.46] and adv.layout.shapes[0].x0 == 1.0
    size = ef.make_size_figure(np.array([10, 100]), np.array([0.2, 0.06]), alpha=0.05)
    assert list(size.data[0].y) == [0.2, 0.06]
    assert any(s.y0 == 0.05 for s in size.layout.shapes)
    power = ef.make_power_figure(np.array([1.0, 2.0]), {"a": np.array([0.1, 0.5]), "b": np.array([0.2, 0.9])},
                                 xlabel="n", alpha=0.05)
    assert [t.name for t in power.data][:2] == ["a", "b"]
    gamma = ef.make_gamma_figure(np.array([1.0, 2.0]), np.array([0.04, 0.03]), np.array([0.045, 0.02]), crossover=1.5)
    assert list(gamma.data[1].y) == [0.045, 0.02] and any(s.x0 == 1.5 for s in gamma.layout.shapes)


@pytest.mark.parametrize("lo, hi, expected", [
    (0.3, 7, ["0.5", "1", "2", "5"]),
    (1e-3, 20, ["0.001", "0.01", "0.1", "1", "10"]),  # beyond 3 decades: one tick per decade
    (1, 1000, ["1", "2", "5", "10", "20", "50", "100", "200", "500", "1,000"]),
    (1e-10, 0.5, ["10⁻¹⁰", "10⁻⁹", "10⁻⁸", "10⁻⁷", "10⁻⁶", "10⁻⁵", "10⁻⁴", "10⁻³", "10⁻²", "10⁻¹"]),  # one form
])
def test_log_axis_ticks_are_full_numbers_at_1_2_5_per_decade(lo, hi, expected):
    ax = nf.log_axis(lo, hi)
    assert ax["ticktext"] == expected
    # the range stops at the data (padded by 0.03 decades), never at the float limits
    assert ax["range"] == pytest.approx([math.log10(lo) - 0.03, math.log10(hi) + 0.03])
    assert all(float(t.replace(",", "")) == pytest.approx(v) for t, v in zip(ax["ticktext"], ax["tickvals"])
               if "⁻" not in t)


def test_gamma_figure_axis_stops_above_the_float_floor():
    t = np.geomspace(1e-3, 10, 50)
    fig = ef.make_gamma_figure(t, np.full(50, 1e-300), np.geomspace(0.05, 1e-3, 50), crossover=None)
    assert fig.layout.yaxis.range[0] >= -12.1
