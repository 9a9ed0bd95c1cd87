"""dpdash.epsilon.figures: the DP-vs-splitting figure and the plain-word tables show exactly the engine results they
are given (values compared with the input frames and with closed forms written out here), and no code name
survives as a label."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from dpdash.accounting import composition as acc
from dpdash.epsilon import figures as ef
from dpdash.accounting import mechanisms as mech
from dpdash.epsilon import risk

# the engine's column names that are not plain words ("method", "rule", "n", "trials", "source" are, and stay)
CODE_NAMES = ("ratio_to_basic", "half_width", "noise_std", "std_error", "epsilon", "rho", "tau", "capped", "rate",
              "note", "valid", "prior", "lower", "upper", "increase", "parameter", "scale", "std")


def _no_code_names(df: pd.DataFrame) -> None:
    for c in df.columns:
        assert c not in CODE_NAMES and "_" not in str(c), c


# --------------------------------------------------------------------------- DP vs data splitting figure
def _widths(n: int, beta: float, noise: str) -> pd.DataFrame:
    """The frame the epsilon calculator page builds from the engine grid (pages/epsilon_calculator.cached_widths)."""
    rows = [(m, k, w.tau, w.parameter, w.noise_std, w.capped)
            for m, k, w in mech.adaptive_width_grid(n, beta, noise, points=8)]
    return pd.DataFrame(rows, columns=["method", "k", "tau", "parameter", "noise_std", "capped"])


def test_width_figure_draws_each_methods_tau_and_marks_capped_points():
    n, beta = 400, 0.05
    widths = _widths(n, beta, "gaussian")
    fig = ef.make_width_figure(widths, annotate_k=31, annotation="RZ + monitor beats splitting from k = 31")
    left = [t for t in fig.data if t.xaxis == "x"]
    right = [t for t in fig.data if t.xaxis == "x2"]
    # one τ line per method, in the frame's order, with the plain label
    assert [t.name for t in left] == [ef.WIDTH_LABELS[m] for m in dict.fromkeys(widths["method"])]
    assert "DP: RZ + monitor (Thm 3.4.1)" in [t.name for t in left]
    for t in left:
        m = {v: k for k, v in ef.WIDTH_LABELS.items()}[t.name]
        g = widths[widths["method"] == m]
        assert list(t.x) == list(g["k"]) and np.allclose(t.y, g["tau"].to_numpy(float))
        assert list(t.marker.symbol) == ["x" if c else "circle" for c in g["capped"]]
    # capped points exist here (Hoeffding splitting at k ≥ 31 on 400 records) and are drawn as ×
    hoeff = next(t for t in left if t.name == "Split (Hoeffding)")
    assert "x" in list(hoeff.marker.symbol) and "circle" in list(hoeff.marker.symbol)
    # the non-adaptive baseline is Hoeffding + union bound: τ = √(ln(2k/β) / (2n)), written out here
    base = next(t for t in left if t.name == "Non-adaptive (Hoeffding)")
    assert np.allclose(base.y, [math.sqrt(math.log(2 * k / beta) / (2 * n)) for k in base.x])
    # only the DP methods have a noise std; the right panel draws exactly those, equal to the frame
    dp = [m for m in dict.fromkeys(widths["method"]) if widths.loc[widths["method"] == m, "noise_std"].notna().any()]
    assert dp == ["dfhprr", "bnsssu", "rz_monitor"]
    assert [t.name for t in right] == [ef.WIDTH_LABELS[m] for m in dp]
    for t, m in zip(right, dp):
        assert np.allclose(t.y, widths.loc[widths["method"] == m, "noise_std"].to_numpy(float))
        assert t.showlegend is False
    # the annotation names k, and a dotted line stands at that k in the left panel
    texts = [a.text for a in fig.layout.annotations]
    assert "RZ + monitor beats splitting from k = 31" in texts
    assert any(s.x0 == 31 == s.x1 and s.line.dash == "dot" for s in fig.layout.shapes)
    assert list(fig.layout.yaxis.range) == [0, 0.52] and fig.layout.title.text == "DP vs data splitting"
    # log x axis spanning the k grid 1 … n
    assert fig.layout.xaxis.type == "log"
    assert fig.layout.xaxis.range[0] <= math.log10(1) and fig.layout.xaxis.range[1] >= math.log10(n)


def test_width_figure_without_annotation_and_with_laplace_noise():
    widths = _widths(400, 0.05, "laplace")
    fig = ef.make_width_figure(widths)
    assert "rz_monitor" not in set(widths["method"])  # Rogers–Zhang is Gaussian only
    assert not [a for a in fig.layout.annotations if "beats splitting" in (a.text or "")]
    assert not fig.layout.shapes
    assert {t.name for t in fig.data} == {ef.WIDTH_LABELS[m] for m in widths["method"]}


# --------------------------------------------------------------------------- branches of other builders
def test_composition_figure_with_no_valid_point_has_no_envelope_and_falls_back_to_1_10():
    curve = pd.DataFrame({"k": [1, 10], "rule": ["zcdp", "zcdp"], "epsilon": [np.nan, np.nan],
                          "valid": [False, False]})
    fig = ef.make_composition_figure(curve, delta=1e-6)
    assert len(fig.data) == 0
    assert fig.layout.xaxis.range == pytest.approx((-0.03, 1.03))
    assert fig.layout.yaxis.range == pytest.approx((-0.03, 1.03))


def test_budget_figure_with_nothing_unused_or_reserved_draws_only_the_statistics():
    shares = SimpleNamespace(names=("mean", "count"), values=(0.6, 0.4), unused=0.0, reserve=0.0, unit="ε",
                             budget=1.0, proportional=True)
    fig = ef.make_budget_figure(shares)
    assert [t.name for t in fig.data] == ["mean", "count"]
    assert sum(t.x[0] for t in fig.data) == pytest.approx(1.0)
    assert fig.layout.title.text == "Budget ε = 1 (composed, split by own ε)"


def test_advantage_figure_without_a_current_epsilon_has_no_marker_line():
    eps = np.array([0.1, 1.0, 5.0])
    pure = (np.exp(eps) - 1) / (np.exp(eps) + 1)  # advantage bound of pure ε-DP, (e^ε − 1)/(e^ε + 1)
    fig = ef.make_advantage_figure(eps, {"pure ε-DP": pure})
    assert not fig.layout.shapes
    assert np.allclose(fig.data[0].y, [0.0499583, 0.4621172, 0.9866143])


# --------------------------------------------------------------------------- tables for people
@pytest.mark.parametrize("epsilon, sensitivity, confidence", [(0.5, 1.0, 0.95), (2.0, 3.0, 0.9)])
def test_calibration_table_for_a_laplace_calibration(epsilon, sensitivity, confidence):
    cal = mech.calibrate("laplace", sensitivity=sensitivity, epsilon=epsilon, confidence=confidence)
    t = ef.calibration_table(cal)
    assert t.shape[0] == 1
    row = t.iloc[0]
    b = sensitivity / epsilon  # Laplace scale Δ/ε
    assert row["mechanism"] == "Laplace"
    assert row["noise scale"] == pytest.approx(b)
    assert row["sensitivity"] == sensitivity and row["ε"] == epsilon and row["δ"] == 0.0
    assert row["noise standard deviation"] == pytest.approx(math.sqrt(2) * b)
    # P(|L| ≤ h) = 1 − e^{−h/b} = confidence  ⇒  h = b·ln(1/β), β = 1 − confidence
    assert row["± half-width"] == pytest.approx(b * math.log(1 / (1 - confidence)))
    assert row["confidence"] == confidence
    assert row["calibration"] == "pure ε (Laplace)"
    assert row["source"] == cal.source
    assert list(t.columns) == ["mechanism", "noise scale", "sensitivity", "ε", "δ", "ρ (zCDP)",
                               "noise standard deviation", "± half-width", "confidence", "calibration", "source"]
    _no_code_names(t)


def test_calibration_table_keeps_an_unknown_mechanism_and_rule_as_given():
    cal = SimpleNamespace(mechanism="staircase", scale=1.0, sensitivity=1.0, epsilon=1.0, delta=0.0, rho=None,
                          std=1.0, half_width=2.0, confidence=0.95, rule="other", source="x")
    row = ef.calibration_table(cal).iloc[0]
    assert row["mechanism"] == "staircase" and row["calibration"] == "other"


def test_composition_table_for_people_names_rules_and_maps_validity():
    table = acc.composition_table([acc.approx_dp(1.0, 1e-7, count=3)], delta=1e-6,
                                  rules=("basic", "advanced", "zcdp"))
    t = ef.composition_table_for_people(table, k=3)
    assert list(t.columns) == ["rule", "releases k", "total ε", "δ", "valid here", "share of the basic sum",
                               "why not valid"]
    _no_code_names(t)
    assert list(t["rule"]) == ["Basic sum (Thm 2.1.4)", "Advanced (Thm 2.1.5)", "zCDP"]
    assert list(t["releases k"]) == [3, 3, 3]
    # basic composition of three (1, 10⁻⁷)-DP releases is ε = 3; advanced ([T] Thm 2.1.5) written out:
    # kε(e^ε − 1)/(e^ε + 1) + ε√(2k ln(1/δ̂)), δ̂ = 1 − (1 − δ)/(1 − δᵢ)^k
    k, e = 3, 1.0
    dhat = 1 - (1 - 1e-6) / (1 - 1e-7) ** k
    adv = k * e * (math.exp(e) - 1) / (math.exp(e) + 1) + e * math.sqrt(2 * k * math.log(1 / dhat))
    assert t["total ε"].iloc[0] == pytest.approx(3.0)
    assert t["total ε"].iloc[1] == pytest.approx(adv, rel=1e-9)
    assert math.isnan(t["total ε"].iloc[2])
    assert np.allclose(t["δ"], table["delta"])
    assert list(t["valid here"]) == ["yes", "yes", "no"]
    assert t["share of the basic sum"].iloc[1] == pytest.approx(adv / 3.0, rel=1e-9)
    assert t["why not valid"].iloc[0] == "—" and t["why not valid"].iloc[1] == "—"
    assert t["why not valid"].iloc[2] == table["note"].iloc[2] != ""


def test_widths_table_for_people_has_the_frames_values_in_plain_words():
    widths = _widths(400, 0.05, "gaussian")
    t = ef.widths_table_for_people(widths)
    assert list(t.columns) == ["method", "queries k", "error for all answers τ", "tuning parameter",
                               "noise standard deviation", "capped at 0.5"]
    _no_code_names(t)
    assert set(t["method"]) == set(ef.WIDTH_LABELS.values())
    assert list(t["queries k"]) == list(widths["k"])
    assert np.allclose(t["error for all answers τ"], widths["tau"])
    assert t["tuning parameter"].equals(widths["parameter"])
    assert t["noise standard deviation"].equals(widths["noise_std"])
    assert list(t["capped at 0.5"]) == ["yes" if c else "no" for c in widths["capped"]]
    assert {"yes", "no"} == set(t["capped at 0.5"])


@pytest.mark.parametrize("privacy, label", [("rho", "ρ"), ("epsilon", "ε")])
def test_simulation_table_for_people_keeps_the_privacy_column_asked_for(privacy, label):
    # columns as documented for private_tests.simulate_grid: n, rho, epsilon, quantity, test, rate, std_error, trials
    sim = pd.DataFrame({"n": [100, 100, 1000, 1000], "rho": [0.1, 0.1, 0.5, 0.5], "epsilon": [1.2, 1.2, 3.4, 3.4],
                        "quantity": ["size", "power", "size", "power"],
                        "test": ["asympt_gof", "mc_gof", "projected", "classical_noisy"],
                        "rate": [0.05, 0.8, 0.04, 0.99], "std_error": [0.007, 0.013, 0.006, 0.003],
                        "trials": [1000, 1000, 1000, 1000]})
    t = ef.simulation_table_for_people(sim, privacy=privacy)
    assert list(t.columns) == ["n", label, "quantity", "test", "rejection rate", "standard error", "trials"]
    _no_code_names(t)
    assert list(t[label]) == list(sim[privacy])
    assert list(t["quantity"]) == ["size (false alarms)", "power", "size (false alarms)", "power"]
    assert list(t["test"]) == ["AsymptGOF", "MC GOF", "projected", "classical on noisy counts"]
    assert list(t["rejection rate"]) == list(sim["rate"]) and list(t["standard error"]) == list(sim["std_error"])
    assert list(t["n"]) == list(sim["n"]) and list(t["trials"]) == list(sim["trials"])


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_posterior_table_for_people_renames_and_keeps_the_bayes_bounds(epsilon):
    priors = (0.01, 0.25, 0.5, 0.9)
    t = ef.posterior_table_for_people(risk.posterior_table(epsilon=epsilon, priors=priors))
    assert list(t.columns) == ["belief before", "lowest belief after", "highest belief after", "largest increase"]
    _no_code_names(t)
    p = np.array(priors)
    e = math.exp(epsilon)
    # worst-case Bayes update under ε-DP: odds multiply by at most e^ε, at least e^{−ε}
    upper = e * p / (e * p + 1 - p)
    lower = p / (p + e * (1 - p))
    assert np.allclose(t["belief before"], p)
    assert np.allclose(t["highest belief after"], upper)
    assert np.allclose(t["lowest belief after"], lower)
    assert np.allclose(t["largest increase"], upper - p)
