"""dpdash/sortition/script.py: the "Copy as code" scripts run from a clean directory and print the engine's numbers
and an independent solver's (cvxpy-leximin, a direct HiGHS LP); both are compared here with the page's numbers
and with each other.

All of this file's scripts run in ONE subprocess (tests/script_runner.run_scripts, module-scoped fixture); each
test looks up its own script's output.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dpdash.sortition import core as lx
from dpdash.sortition import script as sl
from tests.script_runner import run_scripts

ROOT = Path(__file__).resolve().parents[3]
SF = ROOT / "tests" / "data" / "sortition_foundation"
SF_ID = "nationbuilder_id"


def _strat_app():
    """The Strat App's public test pool (150 people, panel of 22; provenance in data/DATA.md)."""
    import pandas as pd

    from dpdash.sortition import files as sf

    qf = sf.read_quotas(pd.read_csv(SF / "categories.csv", dtype=str, keep_default_na=False))
    pool = pd.read_csv(SF / "candidates.csv", dtype=str, keep_default_na=False)
    feats = list(dict.fromkeys(qf.table["feature"]))
    return pool[[SF_ID] + feats], [(q.feature, q.value, q.min, q.max) for q in qf.quotas()]


SF_POOL, SF_QUOTAS = _strat_app()

V_SLACK = lx.random_values(12, 3, grid=0.1, rng=2)
ALPHA = [0.05, 0.05, 0.05]
TINY_QUOTAS = [(q.feature, q.value, q.min, q.max) for q in lx.tiny_quotas()]

#: name → script source; every one of them runs once, in the same subprocess
SCRIPTS = {
    "cohort_lx1_exact": sl.cohort_script(k=3, values_code="lx.LX1_VALUES"),
    "cohort_embedded_slack": sl.cohort_script(k=4, values=V_SLACK, alpha=ALPHA),
    "panel_tiny": sl.panel_script(k=4, quotas=TINY_QUOTAS, seed=0, pool_code="lx.tiny_pool()",
                                  n_people=12),
    "panel_embedded_records": sl.panel_script(k=4, quotas=TINY_QUOTAS, seed=1,
                                              pool_records=lx.tiny_pool().to_dict("records")),
    # issue 31: a 150-person pool gets the independent maximin by column generation (was "skipped")
    "panel_strat_app_150": sl.panel_script(k=22, quotas=SF_QUOTAS, seed=0, pool_records=SF_POOL.to_dict("records"),
                                           id_col=SF_ID, n_people=150),
    # [b] Example 13 (ε = 0.01): S1 is leximax, the ε-significant set is {S2}
    "finite_example_13": sl.finite_script(rows=[["0.01", "0.5"], ["0", "1"]],
                                          epsilon="0.01"),
}


def _parse(stdout: str) -> dict[str, str]:
    lines = [ln.split(" = ", 1) for ln in stdout.splitlines() if " = " in ln]
    return {a.strip(): b.strip() for a, b in lines}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, dict[str, str]]:
    """Every script of this file, run once in one subprocess: name → its printed ``name = value`` lines."""
    stdout = run_scripts(SCRIPTS, tmp_path_factory.mktemp("script_leximax"))
    return {name: _parse(text) for name, text in stdout.items()}


def test_cohort_script_lx1_exact(outputs):
    got = outputs["cohort_lx1_exact"]
    page = lx.leximax_marginals(lx.LX1_VALUES, k=3)
    assert float(got["engine.worst_off_utility"]) == pytest.approx(page.y.min(), abs=1e-8)
    assert float(got["engine.worst_off_utility"]) == pytest.approx(31 / 30, abs=1e-7)      # spec LX1
    assert float(got["independent.worst_off_utility"]) == pytest.approx(31 / 30, abs=1e-6)
    assert float(got["difference.sorted_utilities"]) < 1e-6
    assert float(got["difference.first_level"]) < 1e-7
    chances = np.array([float(v) for v in got["engine.selection_chances"].split(",")])
    np.testing.assert_allclose(chances, page.x, atol=1e-6)
    assert float(got["engine.chances_sum"]) == pytest.approx(3, abs=1e-7)


def test_cohort_script_embedded_values_with_slack(outputs):
    got = outputs["cohort_embedded_slack"]
    page = lx.leximax_marginals(V_SLACK, k=4, alpha=ALPHA)
    assert float(got["engine.smallest_chance"]) == pytest.approx(page.x.min(), abs=1e-8)
    assert float(got["engine.first_level"]) == pytest.approx(page.gammas[0], abs=1e-8)
    assert float(got["difference.first_level"]) < 1e-7          # slack does not change the first level's gain
    assert "independent.worst_off_utility" not in got           # no independent leximax with slack


def test_panel_script_tiny_example(outputs):
    got = outputs["panel_tiny"]
    page = lx.leximin_panels(lx.tiny_pool(), lx.tiny_quotas(), k=4, rng=0)
    assert float(got["engine.smallest_chance"]) == pytest.approx(page.probabilities.min(), abs=1e-8)
    assert float(got["engine.smallest_chance"]) == pytest.approx(0.25, abs=1e-7)          # spec LX9
    assert float(got["difference.smallest_chance"]) < 1e-7


def test_panel_script_embedded_records_and_skip(outputs):
    assert "independent.smallest_chance" in outputs["panel_embedded_records"]
    big = sl.panel_script(k=40, quotas=[("a", "b", 0, 40)], seed=0,
                          pool_code="lx.volunteer_pool()", n_people=500)
    assert "skipped" not in big and "itertools.combinations(range" not in big and "best_panel" in big
    huge = sl.panel_script(k=40, quotas=[("a", "b", 0, 40)], seed=0, pool_code="lx.volunteer_pool(501)",
                           n_people=501)
    assert "independent.smallest_chance = skipped: more than 500 people" in huge
    with pytest.raises(ValueError):
        sl.cohort_script(k=1)


def test_finite_script_example_13(outputs):
    got = outputs["finite_example_13"]
    assert got["dpdash.sortition.core"] == got["independent.leximax"] == "S1"
    assert got["engine.significant"] == got["independent.significant"] == "S2"
    assert got["difference.leximax"] == got["difference.significant"] == "0"


def test_panel_script_150_people_runs_its_independent_check(outputs):
    """Issue 31: the Strat App pool (150 people) printed `independent.smallest_chance = skipped`. Its maximin is
    1/11 (sortition-algorithms' maximin, tests/engine/sortition/test_sortition_files.py); the script's own column
    generation reaches it, with an upper bound that meets it."""
    got = outputs["panel_strat_app_150"]
    assert float(got["independent.smallest_chance"]) == pytest.approx(1 / 11, abs=1e-7)
    assert float(got["independent.upper_bound"]) == pytest.approx(1 / 11, abs=1e-7)
    assert float(got["engine.smallest_chance"]) == pytest.approx(1 / 11, abs=1e-7)
    assert float(got["difference.smallest_chance"]) < 1e-6


def test_scripts_need_no_test_only_library():
    """Issue 34: the cohort script imported cvxpy_leximin (a test-only library) and failed after `pip install`;
    every script now imports only numpy, scipy, pandas and the package."""
    import ast

    allowed = {"numpy", "scipy", "pandas", "dpdash", "itertools", "fractions", "sys", "importlib", "math", "warnings"}
    for name, src in SCRIPTS.items():
        mods = set()
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.Import):
                mods |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                mods.add(node.module.split(".")[0])
        assert mods <= allowed, (name, mods - allowed)
