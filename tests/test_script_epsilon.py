"""engine/script_epsilon.py: the epsilon calculator's "Copy as code" scripts run in a subprocess from a clean
directory; their engine numbers equal the page's (the engine called here as the page calls it), and the
independent library's numbers (scipy, dp-accounting, closed forms) agree within the stated tolerances."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine import accounting as acc
from engine import mechanisms as mech
from engine import risk
from engine import script_epsilon as se

ROOT = Path(__file__).resolve().parents[1]


def run_script(src: str, tmp_path: Path) -> dict[str, float]:
    path = tmp_path / "recompute.py"
    path.write_text(src)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the script finds the engine by itself
    out = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=180,
                         env=env)
    assert out.returncode == 0, out.stderr
    got = {}
    for line in out.stdout.splitlines():
        if " = " in line:
            name, value = line.split(" = ", 1)
            try:
                got[name.strip()] = float(value.split("#")[0])
            except ValueError:
                got[name.strip()] = math.nan
    return got


NOISE_CASES = [
    dict(mechanism="laplace", sensitivity=1.0, epsilon=1.0),
    dict(mechanism="gaussian", sensitivity=1.0, epsilon=1.0, delta=1e-6),
    dict(mechanism="gaussian", sensitivity=2.0, fix="accuracy", half_width=3.0, delta=1e-5),
    dict(mechanism="gaussian", sensitivity=1.0, rho=0.1, delta=1e-6, gaussian_rule="zcdp"),
    dict(mechanism="discrete_laplace", sensitivity=1.0, epsilon=0.5),
]  # each case is one subprocess (~3 s): the four cover scipy's Laplace, Balle–Wang, zCDP and dlaplace paths


@pytest.mark.parametrize("case", NOISE_CASES, ids=lambda c: f"{c['mechanism']}-{c.get('fix', 'privacy')}")
def test_noise_script_matches_the_page_and_scipy(case, tmp_path):
    got = run_script(se.noise_script(repo_root=str(ROOT), **case), tmp_path)
    kw = {k: case[k] for k in ("epsilon", "rho", "scale", "half_width") if k in case}
    page = mech.calibrate(case["mechanism"], sensitivity=case["sensitivity"], delta=case.get("delta", 0.0),
                          confidence=case.get("confidence", 0.95),
                          gaussian_rule=case.get("gaussian_rule", "analytic"), **kw)
    if case == NOISE_CASES[0]:  # the textbook number: b·ln(1/β) with b = 1, β = 0.05
        assert got["independent.half_width"] == pytest.approx(math.log(20), rel=1e-10)
    for name in ("scale", "epsilon", "half_width"):
        assert got[f"engine.{name}"] == pytest.approx(getattr(page, name), rel=1e-10)
        # independent: scipy quantiles, Balle–Wang's δ(ε, σ) solved by brentq; relative tolerance 1e-9
        assert got[f"independent.{name}"] == pytest.approx(getattr(page, name), rel=1e-9)
        assert got[f"difference.{name}"] < 1e-9


@pytest.mark.slow
def test_composition_script_matches_the_page_and_dp_accounting(tmp_path):
    rows = [dict(kind="laplace", epsilon=0.2, count=30), dict(kind="gaussian", noise_multiplier=10.0, count=20)]
    got = run_script(se.composition_script(repo_root=str(ROOT), mechanisms=rows, delta=1e-6), tmp_path)
    ms = [acc.Mechanism(**r) for r in rows]
    page = acc.composition_table(ms, delta=1e-6, rules=("basic", "advanced", "kov_optimal", "zcdp", "rdp", "pld"))
    for rule, eps in zip(page["rule"], page["epsilon"]):
        assert got[f"engine.{rule}"] == pytest.approx(eps, rel=1e-9)
    # dp-accounting: the same PLD discretisation (1e-4, pessimistic) within 1e-4; RDP with the same orders, 1e-9
    assert got["difference.pld"] < 1e-4
    assert got["difference.rdp"] < 1e-9


def test_composition_script_laplace_basic_sum_and_pld(tmp_path):
    rows = [dict(kind="laplace", epsilon=0.1, count=100)]
    got = run_script(se.composition_script(repo_root=str(ROOT), mechanisms=rows, delta=1e-6,
                                           rules=("basic", "pld")), tmp_path)
    assert got["engine.basic"] == pytest.approx(10.0, rel=1e-12)  # 100 × 0.1
    assert got["independent.basic"] == pytest.approx(10.0, rel=1e-12)
    assert got["difference.pld"] < 1e-4
    assert got["engine.pld"] < 10.0


def test_composition_script_says_when_no_library_covers_the_list(tmp_path):
    src = se.composition_script(repo_root=str(ROOT), mechanisms=[dict(kind="zcdp", rho=0.1, count=3)], delta=1e-6,
                                rules=("basic", "zcdp"))
    out = subprocess.run([sys.executable, "-c", src], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "no independent computation" in out.stdout


@pytest.mark.parametrize("epsilon, delta, prior", [(1.0, 0.0, 0.1), (3.0, 1e-3, 0.01)])
def test_risk_script_matches_the_page_and_the_closed_forms(epsilon, delta, prior, tmp_path):
    got = run_script(se.risk_script(repo_root=str(ROOT), epsilon=epsilon, delta=delta, prior=prior), tmp_path)
    b = risk.posterior_bound(prior, epsilon=epsilon)
    assert got["engine.posterior_upper"] == pytest.approx(b.upper, rel=1e-10)
    assert got["engine.advantage"] == pytest.approx(risk.advantage_bound(epsilon=epsilon, delta=delta), rel=1e-10)
    for name in ("posterior_upper", "posterior_lower", "advantage", "least_fnr"):
        assert got[f"difference.{name}"] < 1e-12
    if delta == 0:
        assert got["independent.randomized_response_advantage"] == pytest.approx(got["engine.advantage"], rel=1e-6)
