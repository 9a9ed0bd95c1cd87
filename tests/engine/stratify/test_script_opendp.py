"""dpdash.stratify.script_opendp: the OpenDP/Polars scripts perform the page's release on bundled data, and OpenDP's own
noise scale for every statistic equals the scale the app computed (issue 24 item 3).

The app's scales come from the budget planner (``dpdash.accounting.budget.plan_budget_first``) and, for the stratified
means,
from seed 004's b = 2C(m)/(m ε) per stratum (its own clipping bound C(m), spec §2.2–2.3); the expected values are
also written out here from the sensitivities of seed 002 eq. 2.1 (count 1, replace-one sum U − L, histogram 2
under replace) and from C(m) = R + √log(m/γ) or R + √(2 log(2m/γ)). OpenDP (an independent library) reports
its scale through ``summarize``; the scripts print both.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpdash.accounting import budget as bud
from dpdash.stratify import views as SV
from dpdash.common.data import drop_missing
from dpdash.stratify.script_opendp import budget_plan_script, page_strata, stratified_means_script
from tests.script_runner import run_scripts


ROOT = Path(__file__).resolve().parents[3]
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


def _paper_c(m: float, R: float, gamma: float, mode: str) -> float:
    """C(m) written out from spec §2.2 (seed 004 L113, errata E1–E3), not read from the engine."""
    return R + math.sqrt(math.log(m / gamma)) if mode == "paper" else R + math.sqrt(2 * math.log(2 * m / gamma))


def _strata_lines(text: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for m in re.finditer(r"^stratum\[(.+)\]\.(\w+) = ([-0-9.eE+]+)", text, re.M):
        out.setdefault(m.group(1), {})[m.group(2)] = float(m.group(3))
    return out


#: acs12 by race (white 1555, black 206, other 152, asian 87): at min_frac 0.08 (160 records) "other" and
#: "asian" are pooled into one stratum of 239; age standardised with a public centre 40 and scale 20.
RACE = dict(groups=["race"], value="age", center=40.0, scale=20.0, R=3.0, gamma=0.05, mode="paper", epsilon=0.5,
            min_frac=0.08, small_strata="pool")
#: acs12 by gender × income (income has 266 values: five equal-width bins, as on the page), hours worked
#: (missing for 1,003 rows, which the page leaves out), rigorous clipping, small groups dropped.
GENDER_INCOME = dict(groups=["gender", "income"], value="hrs_work", center=40.0, scale=10.0, R=2.0, gamma=0.1,
                     mode="rigorous", epsilon=1.0, min_frac=0.01, small_strata="drop")


def _page_args(df: pd.DataFrame, cfg: dict) -> dict:
    """What the stratified viewer's mean view hands the builder for ``df`` (its upload path, through the engine)."""
    frame, _ = drop_missing(df, [cfg["value"], *cfg["groups"]])
    codes, labels = SV.group_codes(frame, cfg["groups"])
    sizes = np.bincount(codes, minlength=len(labels))
    source = dict(data=str(ACS), groups=cfg["groups"], value=cfg["value"], center=cfg["center"],
                  scale=cfg["scale"], group_keys=SV.opendp_group_keys(frame, cfg["groups"]))
    return SV.opendp_script_params(source, sizes=sizes, labels=labels, epsilon=cfg["epsilon"], R=cfg["R"],
                                   gamma=cfg["gamma"], mode=cfg["mode"], min_frac=cfg["min_frac"],
                                   small_strata=cfg["small_strata"], estimator="laplace")


def _expected_strata(frame: pd.DataFrame, cfg: dict, key: pd.Series) -> dict[str, tuple[int, float, float]]:
    """The page's strata written out from spec §2.2–2.3: (records, C, 2C/(mε)) per stratum, from pandas sizes."""
    sizes = key.value_counts()
    n = int(sizes.sum())
    small = sizes[sizes <= cfg["min_frac"] * n]
    strata = {str(g): int(m) for g, m in sizes.items() if g not in small.index}
    if cfg["small_strata"] == "pool" and len(small):
        strata["(pooled)"] = int(small.sum())
    out = {}
    for s, m in strata.items():
        c = _paper_c(m, cfg["R"], cfg["gamma"], cfg["mode"])
        out[s] = (m, c, 2 * c / (m * cfg["epsilon"]))
    return out


def test_stratified_means_release_has_the_pages_per_stratum_noise_scales(tmp_path):
    df = pd.read_csv(ACS)
    race = _page_args(df, RACE)
    gi = _page_args(df, GENDER_INCOME)
    scripts = {"race": stratified_means_script(**race, include_global=True),
               "gender_income": stratified_means_script(**gi)}
    text = run_scripts(scripts, tmp_path)

    # race: three strata, one pooled, each at its own bound, the full ε each
    frame = df.dropna(subset=["age", "race"])
    x = (frame["age"] - 40.0) / 20.0
    want = _expected_strata(frame, RACE, frame["race"])
    assert sorted(want) == ["(pooled)", "black", "white"] and want["(pooled)"][0] == 152 + 87
    got = _strata_lines(text["race"])
    assert sorted(got) == sorted(want)
    pooled = frame["race"].isin(["other", "asian"])
    for s, (m, c, b) in want.items():
        assert got[s]["records"] == m, s
        assert got[s]["bound"] == pytest.approx(c, rel=1e-9), s
        assert got[s]["opendp_scale"] == pytest.approx(b, rel=1e-9), s   # OpenDP's own scale, the page's 2C/(mε)
        assert got[s]["app_scale"] == pytest.approx(b, rel=1e-9), s      # the page's number, printed beside it
        rows = x[pooled] if s == "(pooled)" else x[frame["race"] == s]
        assert abs(got[s]["release"] - rows.clip(-c, c).mean()) < 15 * b, s   # P(|Lap(b)| > 15b) = e^-15
    assert "group[asian] = stratum (pooled)" in text["race"] and "group[other] = stratum (pooled)" in text["race"]
    out = _values(text["race"])
    n = len(frame)
    cn = _paper_c(n, 3.0, 0.05, "paper")
    assert out["global.opendp_scale"] == pytest.approx(2 * cn / (n * 0.5), rel=1e-9)
    assert out["global.app_scale"] == pytest.approx(2 * cn / (n * 0.5), rel=1e-9)
    assert out["total_epsilon"] == pytest.approx(1.0)   # ε for the strata (parallel) + ε for the global mean
    # the population: the released strata recombined with public weights |S|/n (post-processing)
    pop = sum(want[s][0] / n * got[s]["release"] for s in want)
    assert out["population.release"] == pytest.approx(pop, abs=1e-8)

    # gender × income bins, rigorous clipping, small strata dropped: the rows missing hrs_work left out
    frame = df.dropna(subset=["hrs_work", "gender", "income"])
    edges = np.linspace(frame["income"].min(), frame["income"].max(), 6)
    bins = np.clip(np.digitize(frame["income"], edges[1:-1]), 0, 4)
    key = frame["gender"] + " × " + pd.Series(bins, index=frame.index).map(
        lambda i: f"[{edges[i]:.4g}, {edges[i + 1]:.4g}{']' if i == 4 else ')'}")
    want = _expected_strata(frame, GENDER_INCOME, key)
    got = _strata_lines(text["gender_income"])
    dropped = set(key.unique()) - set(want)
    assert dropped and "(pooled)" not in got and sorted(got) == sorted(want)
    for s, (m, c, b) in want.items():
        assert (got[s]["records"], got[s]["opendp_scale"]) == (m, pytest.approx(b, rel=1e-9)), s
        assert got[s]["app_scale"] == pytest.approx(b, rel=1e-9), s
    for g in dropped:
        assert f"group[{g}] = not released (too small)" in text["gender_income"]
    assert _values(text["gender_income"])["total_epsilon"] == pytest.approx(1.0)


def test_page_strata_follow_the_small_strata_rule():
    """The builder's record of the page's strata (its app_scale) against spec §2.3, without OpenDP."""
    got = page_strata([87, 206, 152, 1555], ["asian", "black", "other", "white"], R=3.0, gamma=0.05, epsilon=0.5,
                      min_frac=0.08, small_strata="pool")
    assert list(got) == ["black", "white", "(pooled)"]
    c = _paper_c(239, 3.0, 0.05, "paper")
    assert got["(pooled)"] == (239, pytest.approx(c), pytest.approx(2 * c / (239 * 0.5)))
    got = page_strata([87, 206, 152, 1555], ["asian", "black", "other", "white"], R=3.0, gamma=0.05, epsilon=0.5,
                      min_frac=0.08, small_strata="drop", mode="rigorous")
    assert list(got) == ["black", "white"]
    c = _paper_c(206, 3.0, 0.05, "rigorous")
    assert got["black"] == (206, pytest.approx(c), pytest.approx(2 * c / (206 * 0.5)))


def test_refusals_name_what_is_wrong():
    with pytest.raises(ValueError, match="no statistics"):
        budget_plan_script(rows=[], data="x.csv", max_rows=10)
    with pytest.raises(ValueError, match="categories"):
        budget_plan_script(rows=[dict(name="h", column="c", query="histogram", mechanism="laplace",
                                      epsilon=1.0, scale=2.0)], data="x.csv", max_rows=10)
    base = dict(data="x.csv", groups=["g"], value="v", epsilon=1.0, R=3.0, gamma=0.05, sizes=[5, 5],
                labels=["a", "b"])
    with pytest.raises(ValueError, match="scale > 0"):
        stratified_means_script(**base, scale=0.0)
    with pytest.raises(ValueError, match="mode"):
        stratified_means_script(**base, mode="loose")
    with pytest.raises(ValueError, match="2 group sizes but 1 labels"):
        stratified_means_script(**{**base, "labels": ["a"]})
    with pytest.raises(ValueError, match="every stratum is dropped"):
        stratified_means_script(**base, min_frac=0.6, small_strata="drop")
    with pytest.raises(ValueError, match="unknown kind"):
        stratified_means_script(**base, group_keys={"g": {"kind": "regex", "labels": []}})
    with pytest.raises(ValueError, match="3 levels but 2 labels"):
        stratified_means_script(**base, group_keys={"g": {"kind": "levels", "values": [0, 1, 2], "labels": "ab"}})
    with pytest.raises(ValueError, match="2 bins need 3 edges"):
        stratified_means_script(**base, group_keys={"g": {"kind": "bins", "edges": [0, 1], "labels": "ab"}})
    assert SV.opendp_script_params(dict(data="x.csv", groups=["g"], value="v"), sizes=[5, 5], labels="ab",
                                   epsilon=1.0, R=3.0, gamma=0.05, mode="paper", min_frac=0.0, small_strata="pool",
                                   estimator="coinpress") is None   # zCDP: not the Laplace release


def test_partially_private_release_with_opendp_noise_keeps_the_public_total_and_the_pp_guarantee(tmp_path):
    from dpdash.stratify import partial_release as release
    from dpdash.stratify.script_opendp import partial_release_script

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
