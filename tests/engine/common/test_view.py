"""dpdash.common.view: the tab-view shape (lookups, read-only mappings, tone checks)."""

from __future__ import annotations

import pytest

from dpdash.stratify import script_opendp as so
from dpdash.common.view import Headline, ReportSection, Sentence, TabView, frozen_map


def test_a_view_is_read_only_and_finds_its_headlines():
    v = TabView(headlines=(Headline("ε′", "0.017", raw=0.0171),), verdicts=(Sentence("Good.", "good"),),
                tables=frozen_map({"t": 1}), sections=(ReportSection("S", ("line",)),))
    assert v.headline("ε′").raw == 0.0171 and v.verdict_text == ("Good.",)
    with pytest.raises(KeyError, match="ε′"):
        v.headline("missing")
    with pytest.raises(TypeError):
        v.tables["t"] = 2  # type: ignore[index]
    with pytest.raises(ValueError, match="tone"):
        Sentence("x", "great")  # type: ignore[arg-type]


def test_opendp_builders_refuse_what_they_cannot_map():
    with pytest.raises(ValueError, match="neighbour"):
        so._unit("swap")
    with pytest.raises(ValueError, match="ε > 0"):
        so._loss("laplace", None, None, 1.0)
    with pytest.raises(ValueError, match="σ > 0"):
        so._loss("gaussian", None, None, 1.0)
    with pytest.raises(ValueError, match="unknown mechanism"):
        so._loss("exponential", 1.0, None, 1.0)
    with pytest.raises(ValueError, match="unknown query"):
        so._expression("median", "x", 0, 1)
    with pytest.raises(ValueError, match="max_rows"):
        so.budget_plan_script(rows=[dict(name="c", column="c", query="count", mechanism="laplace", epsilon=1.0,
                                         scale=1.0)], data="x.csv", max_rows=0)
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        so.stratified_means_script(data="x.csv", groups=["g"], value="v", epsilon=0, R=3, gamma=0.05, sizes=[1],
                                   labels=["a"])
    with pytest.raises(ValueError, match="group column"):
        so.stratified_means_script(data="x.csv", groups=[], value="v", epsilon=1, R=3, gamma=0.05, sizes=[1],
                                   labels=["a"])
    with pytest.raises(ValueError, match="PP sensitivity"):
        so.partial_release_script(data="x.csv", month="m", epsilon=1.0, pp_sensitivity=0.0)
    rho_rows = [dict(name="g", column="x", query="sum", mechanism="gaussian", neighbour="add_remove", lower=0,
                     upper=10, scale=5.0)]
    src = so.budget_plan_script(rows=rho_rows, data="x.parquet", max_rows=10)
    assert "loss_of(rho=2.0)" in src and "contributions=1" in src  # ρ = Δ²/(2σ²) = 100/50
