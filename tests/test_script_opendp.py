"""dpdash.script_opendp: the OpenDP/Polars scripts perform the page's release on bundled data, and OpenDP's own
noise scale for every statistic equals the scale the app computed (issue 24 item 3).

The app's scales come from the budget planner (``dpdash.budget.plan_budget_first``) and, for the stratified means,
from seed 004's b = (U − L)/(m ε); the expected values are also written out here from the sensitivities of seed
002 eq. 2.1 (count 1, replace-one sum U − L, histogram 2 under replace). OpenDP (an independent library) reports
its scale through ``summarize``; the scripts print both.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from dpdash import budget as bud
from dpdash.script_opendp import budget_plan_script, stratified_means_script
from tests.script_runner import run_scripts


ROOT = Path(__file__).resolve().parents[1]
ACS = ROOT / "data" / "acs12" / "acs12.csv"
pytestmark = pytest.mark.slow


def _values(out: str) -> dict[str, float]:
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^(\S+) = ([-0-9.eE+]+)\b", out, re.M)}


def test_budget_plan_release_has_the_planners_noise_scales():
    n = len(pd.read_csv(ACS))
    stats = [bud.StatisticSpec("people", "count", 20.0),
             bud.StatisticSpec("age_sum", "sum", 2000.0, lower=0, upper=100),
             bud.StatisticSpec("age_mean", "mean", 1.0, lower=0, upper=100, n=n),
             bud.StatisticSpec("race_hist", "histogram", 20.0),
             bud.StatisticSpec("hours_mean_g", "mean", 1.0, mechanism="gaussian", lower=0, upper=99, n=n)]
    plan = bud.plan_budget_first(stats, epsilon=2.0, delta=1e-6, rule="basic")
    cols = {"people": "age", "age_sum": "age", "age_mean": "age", "race_hist": "race", "hours_mean_g": "hrs_work"}
    rows = []
    for s, a in zip(stats, plan.allocations):
        rows.append(dict(name=s.name, column=cols[s.name], query=s.query, mechanism=s.mechanism,
                         neighbour=s.neighbour, lower=s.lower, upper=s.upper, n=s.n, epsilon=a.epsilon,
                         scale=a.scale))
    src = budget_plan_script(rows=rows, data=str(ACS), max_rows=n,
                             categories={"race": int(pd.read_csv(ACS)["race"].nunique())})
    out = _values(run_scripts({"plan": src}, Path(ROOT / ".pytest_cache" / "opendp_plan"))["plan"])
    for s, a in zip(stats, plan.allocations):
        assert out[f"{s.name}.opendp_scale"] == pytest.approx(a.scale, rel=1e-6), s.name
    # the Laplace scales, written out from the sensitivities (not from the planner)
    by = {a.name: a for a in plan.allocations}
    assert out["people.opendp_scale"] == pytest.approx(1.0 / by["people"].epsilon, rel=1e-6)
    assert out["age_sum.opendp_scale"] == pytest.approx(100.0 / by["age_sum"].epsilon, rel=1e-6)
    assert out["age_mean.opendp_scale"] == pytest.approx(100.0 / (n * by["age_mean"].epsilon), rel=1e-6)
    assert out["race_hist.opendp_scale"] == pytest.approx(2.0 / by["race_hist"].epsilon, rel=1e-6)
    laplace_total = sum(a.epsilon for s, a in zip(stats, plan.allocations) if s.mechanism == "laplace")
    assert out["total_epsilon"] == pytest.approx(laplace_total, rel=1e-9)


def test_stratified_means_release_has_seed_004s_noise_scale():
    df = pd.read_csv(ACS)
    src = stratified_means_script(data=str(ACS), groups=["gender"], value="age", lower=0, upper=100, epsilon=0.5,
                                  max_rows=len(df), max_groups=2)
    text = run_scripts({"means": src}, Path(ROOT / ".pytest_cache" / "opendp_means"))["means"]
    out = _values(text)
    assert out["per_group.sum_scale"] == pytest.approx(100 / 0.5, rel=1e-6)
    sizes = df["gender"].value_counts()
    for g, m in sizes.items():
        line = next(ln for ln in text.splitlines() if ln.startswith(f"mean[{g}]"))
        assert float(line.rsplit("noise scale", 1)[1]) == pytest.approx(100 / (m * 0.5), rel=1e-4)
        assert abs(float(line.split("=")[1].split("#")[0]) - df.loc[df.gender == g, "age"].mean()) < 5


def test_refusals_name_what_is_wrong():
    with pytest.raises(ValueError, match="no statistics"):
        budget_plan_script(rows=[], data="x.csv", max_rows=10)
    with pytest.raises(ValueError, match="categories"):
        budget_plan_script(rows=[dict(name="h", column="c", query="histogram", mechanism="laplace",
                                      epsilon=1.0, scale=2.0)], data="x.csv", max_rows=10)
    with pytest.raises(ValueError, match="upper > lower"):
        stratified_means_script(data="x.csv", groups=["g"], value="v", lower=1, upper=1, epsilon=1, max_rows=1,
                                max_groups=1)


def test_partially_private_release_with_opendp_noise_keeps_the_public_total_and_the_pp_guarantee(tmp_path):
    from dpdash import partial_release as release
    from dpdash.script_opendp import partial_release_script

    panel = release.synth_pa_like()
    rows = [dict(county=c, month=m, cases=int(panel.cases[j, t]), deaths=int(panel.deaths[j, t]),
                 population=int(panel.population[j])) for j, c in enumerate(panel.counties)
            for t, m in enumerate(panel.months)]
    path = tmp_path / "counties.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    month = panel.months[-1]
    src = partial_release_script(data=str(path), month=month, epsilon=0.5, pp_sensitivity=2.0, exact_share=0.1)
    text = run_scripts({"pp": src}, tmp_path / "run")["pp"]
    out = _values(text)
    assert out["opendp_scale"] == pytest.approx(2.0 / 0.5)
    # OpenDP's own privacy map against the page's guarantee table (S1 §5: PP 4ε/Δ_PP at the readout neighbour)
    assert out["opendp_guaranteed_epsilon"] == pytest.approx(
        release.method_guarantee("pp", epsilon=0.5, sensitivity=2.0, pp_sensitivity=2.0), rel=1e-9)
    assert out["released_state_total"] == int(panel.cases[:, -1].sum())
    counties = [ln for ln in text.splitlines() if ln.startswith("county[")]
    assert len(counties) == panel.J
