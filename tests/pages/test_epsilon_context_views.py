"""AppTests for the epsilon calculator's context views: ε among published deployments and risk → ε
(ui/views/epsilon_context.py, keys eps_ctx_* / eps_inv_*) and the budget comparison (ui/views/budget_compare.py,
keys eps_cmp_*). Each view is rendered by a tiny script that calls it, as the host page does inside a tab.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PRELUDE = f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
CONTEXT = PRELUDE + "from ui.views.epsilon_context import render_in_context\nrender_in_context({eps}, {delta})\n"
INVERSE = PRELUDE + "from ui.views.epsilon_context import render_risk_inverse\nrender_risk_inverse()\n"
COMPARE = PRELUDE + "from ui.views.budget_compare import render_budget_comparison\nrender_budget_comparison()\n"


def _app(script: str) -> AppTest:
    at = AppTest.from_string(script, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _bold(at: AppTest) -> list[str]:
    return [m.value.replace("\\", "") for m in at.markdown if m.value.startswith("**")]


def test_context_view_places_epsilon():
    import csv
    from pathlib import Path
    rows = list(csv.DictReader(open(Path(__file__).resolve().parents[2] / "data" / "deployments.csv")))
    lowest = min(float(r["epsilon"]) for r in rows)
    at = _app(CONTEXT.format(eps=lowest / 2, delta=1e-6))
    verdict = _bold(at)[0]
    # below the smallest bundled value (counted from data/deployments.csv itself)
    assert "smaller than all" in verdict and f"ε = {lowest / 2:g}" in verdict
    assert len(at.get("plotly_chart")) == 1
    df = at.dataframe[0].value
    assert "Source" in df.columns and "Where the value was read" in df.columns
    at = _app(CONTEXT.format(eps=4.0, delta=None))
    same = sum(float(r["epsilon"]) == 4.0 for r in rows)
    assert same >= 2 and f", {same} the same" in _bold(at)[0]


def test_risk_inverse_view_defaults_and_controls():
    at = _app(INVERSE)
    # default: prior 5%, target posterior 20%, pure ε: logit(0.2) − logit(0.05) = ln(4.75) = 1.558
    assert "ε ≤ 1.558" in _bold(at)[0]  # logit 0.2 − logit 0.05 = 1.5581, cut to 4 figures
    assert float(at.metric[0].value) == pytest.approx(math.log(0.25 / 0.05 * 0.95), rel=1e-3)
    at.selectbox(key="eps_inv_measure").set_value("advantage").run()
    assert not at.exception
    # advantage 10%, δ = 0: ln(1.1/0.9) = 0.2007
    assert float(at.metric[0].value) == pytest.approx(math.log(1.1 / 0.9), rel=1e-3)
    at.selectbox(key="eps_inv_measure").set_value("power").run()
    # TPR 10% at FPR 1%, δ = 0: max(ln 10, ln(0.99/0.9)) = ln 10
    assert float(at.metric[0].value) == pytest.approx(math.log(10), rel=1e-3)
    at.toggle(key="eps_inv_use_delta").set_value(True).run()
    assert not at.exception
    at.selectbox(key="eps_inv_measure").set_value("posterior").run()
    assert not at.exception and "when accusing" in _bold(at)[0]


def test_budget_comparison_view():
    at = _app(COMPARE)
    assert _bold(at)[0].startswith("**Publishing 10 statistics")
    df = at.dataframe[0].value
    assert (df["Statistics (k)"] == 10).all()
    basic = df[(df["Composition rule"] == "Add up the ε's (basic)") & (df["Noise"] == "Laplace")].iloc[0]
    # k = 10, total ε = 1: ε₀ = 0.1, scale 10, ± = 10·ln(20) at 95%
    assert basic["ε per statistic"] == pytest.approx(0.1, rel=1e-8)
    assert basic["± at 95%"] == pytest.approx(10 * math.log(20), rel=1e-8)
    at.radio(key="eps_cmp_direction").set_value("each").run()
    assert not at.exception
    tot = at.dataframe[0].value
    assert tot.loc[tot["Composition rule"] == "Add up the ε's (basic)", "Total ε"].iloc[0] == pytest.approx(1.0)


def test_risk_inverse_view_sliders_and_link():
    at = _app(INVERSE)
    at.select_slider(key="eps_inv_prior").set_value(10).run()
    at.select_slider(key="eps_inv_target_post").set_value(50).run()
    assert float(at.metric[0].value) == pytest.approx(math.log(9), rel=1e-3)  # logit(0.5) − logit(0.1)
    # δ > 0: the answer solves Bayes' rule with the best test at 1% false accusations (written out here)
    at.toggle(key="eps_inv_use_delta").set_value(True).run()
    e = float(at.metric[0].value)
    tpr = min(1.0, math.exp(e) * 0.01 + 1e-6)
    assert 0.1 * tpr / (0.1 * tpr + 0.9 * 0.01) == pytest.approx(0.5, rel=2e-3)
    assert len(at.get("plotly_chart")) == 1
    # a link with the measure's token opens that measure; Gaussian σ shown for the same promise
    at = AppTest.from_string(INVERSE, default_timeout=120)
    at.query_params["eps_inv_measure"] = "advantage"
    at.query_params["eps_inv_target_adv"] = "50"  # percent
    at.run()
    assert not at.exception
    assert float(at.metric[0].value) == pytest.approx(math.log(3), rel=1e-3)
    # Gaussian: advantage 2Φ(μ/2) − 1 = 0.5 → μ = 2Φ⁻¹(0.75) = 1.349, σ ≥ Δ/μ = 0.741
    assert at.metric[1].value.startswith("0.741")


def test_budget_comparison_controls():
    at = _app(COMPARE)
    at.number_input(key="eps_cmp_k").set_value(4).run()
    at.select_slider(key="eps_cmp_eps").set_value(2.0).run()
    at.toggle(key="eps_cmp_use_delta").set_value(False).run()
    assert not at.exception
    df = at.dataframe[0].value
    ok = df[df["Note"] == "—"]
    assert list(zip(ok["Composition rule"], ok["Noise"])) == [("Add up the ε's (basic)", "Laplace")]
    assert ok["ε per statistic"].iloc[0] == pytest.approx(0.5, rel=1e-8) and (df["Statistics (k)"] == 4).all()
    # the verdict leads the tab, as a bold line or (issue 34: tones by stakes, ε = 2 is a caution) in its tone's box
    verdicts = _bold(at) + [m.value.replace("\\", "") for kind in ("success", "info", "warning")
                            for m in getattr(at, kind)]
    assert any("total ε = 2:" in v for v in verdicts), verdicts
