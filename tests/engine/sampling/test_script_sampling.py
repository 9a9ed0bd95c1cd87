"""dpdash.sampling.script: every "Copy as code" script runs from a clean directory and reproduces the tab's numbers.

All the scripts run in ONE subprocess (``tests/script_runner.run_scripts``), each from its own clean temporary
directory. Its ``engine_*`` lines must equal what the engine gives in this process (the page's numbers), and its
independent lines (dp-accounting PLD, mpmath closed forms, spec §4) must agree with them within stated tolerances.
Settings include the page defaults and the spec's worked examples (shared/specs/sampling_designer.md §9: SP9,
SP14, SP19), so the independent values are also checked against printed numbers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdash.sampling import core as sp
from dpdash.sampling import script as ss
from tests.script_runner import run_scripts

# one interpreter importing the engine and dp-accounting, then every script (~2 s CPU each for the PLD parts)
pytestmark = pytest.mark.slow

RANDOM_CASES = {
    ("gaussian", "point"): "random_size_gaussian",
    ("mixture", "uniform"): "random_size_mixture",
}


def random_size_params(family: str, base: str) -> dict:
    return dict(epsilon=0.05, n=2000, family=family, mean=1000.0, sd=20.0, low=400, high=600, base=base,
                p_full=1e-6, epsilon_target=0.02)


def build_scripts() -> dict[str, str]:
    """Every case's script, by name (the settings of the former one-subprocess-per-test version)."""
    scripts = {
        "simple_defaults": ss.simple_script(epsilon=1.0, n=10_000, m=100, rate=0.01, delta=1e-6,
                                            epsilon_target=1.0),
        "simple_large_epsilon": ss.simple_script(epsilon=5.0, n=1000, m=50, rate=0.0503),
        # spec SP9: ε = 0.3, r = 0.02; §4.3 pair N = 14 at r = 0.1
        "rounding_sp9": ss.rounding_script(epsilon=0.3, rate=0.02, pair_n=14, epsilon_target=0.5),
        "rounding_pair": ss.rounding_script(epsilon=1.0, rate=0.1, pair_n=14),
        "cluster_sp14": ss.cluster_script(epsilon=0.2, sizes=[3] * 50, n_drawn=5, within_rate=0.1,
                                          epsilon_target=0.05),
        "cluster_sp15": ss.cluster_script(epsilon=0.05, sizes=[3, 8, 15, 40], n_drawn=1),
        "stratified_sp19": ss.stratified_script(epsilon=1.0, N_h=[40, 25, 15], S_h=[2, 6, 15],
                                                epsilon_h=[1.0] * 3, m=24, value_max=30.0,
                                                methods=("neyman", "proportional", "privacy_aware")),
    }
    for (family, base), name in RANDOM_CASES.items():
        scripts[name] = ss.random_size_script(**random_size_params(family, base))
    return scripts


def parse(stdout: str) -> dict[str, float]:
    """The script's ``name = value`` lines."""
    out = {}
    for line in stdout.splitlines():
        name, _, value = line.partition(" = ")
        out[name] = float(value)
    return out


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, dict[str, float]]:
    """Every script run once, in one subprocess: case name → its printed numbers."""
    stdout = run_scripts(build_scripts(), tmp_path_factory.mktemp("script_sampling"))
    return {name: parse(text) for name, text in stdout.items()}


def test_simple_defaults_and_dp_accounting(outputs):
    out = outputs["simple_defaults"]
    a = sp.amplify_srswor(epsilon=1.0, m=100, n=10_000, delta=1e-6)
    assert out["engine_srswor_epsilon"] == pytest.approx(a.epsilon_population, rel=1e-11)
    assert out["engine_srswor_delta"] == pytest.approx(1e-8, rel=1e-11)
    assert out["engine_calibrated_epsilon"] == pytest.approx(
        sp.calibrate_srswor(epsilon_target=1.0, rate=0.01).epsilon_sample, rel=1e-11)
    # closed form: log1p(0.01·(e − 1)) = 0.0170368632…; dp-accounting's PLD is pessimistic by at most its grid
    assert out["closed_form_srswor_epsilon"] == pytest.approx(math.log1p(0.01 * math.expm1(1)), rel=1e-12)
    assert abs(out["difference_srswor_closed_form"]) < 1e-12 and abs(out["difference_calibration"]) < 1e-9
    assert -3e-5 < out["difference_srswor_dp_accounting"] <= 1e-12
    assert -3e-5 < out["difference_poisson_dp_accounting"] <= 1e-12


def test_simple_large_epsilon_poisson_rate_differs(outputs):
    out = outputs["simple_large_epsilon"]
    assert out["engine_poisson_epsilon"] == pytest.approx(
        sp.amplify_poisson(epsilon=5.0, rate=0.0503).epsilon_population, rel=1e-11)
    assert -3e-5 < out["difference_poisson_dp_accounting"] <= 1e-12


@pytest.mark.parametrize("family, base", list(RANDOM_CASES))
def test_random_size(outputs, family, base):
    out = outputs[RANDOM_CASES[family, base]]
    params = random_size_params(family, base)
    law = sp.size_law_from_controls(2000, family=family, mean=1000.0, sd=20.0, low=400, high=600, base=base,
                                    p_full=1e-6)
    b = sp.amplify_random_size(law, epsilon=params["epsilon"])
    assert out["engine_upper_epsilon"] == pytest.approx(b.epsilon_upper, rel=1e-11)
    if family == "gaussian":   # spec SP7a: tilted mean 1020.000, lower 0.0251875534, upper 0.0258122384
        assert out["independent_upper_epsilon"] == pytest.approx(0.0258122384, abs=1e-8)
        assert out["independent_lower_epsilon"] == pytest.approx(0.0251875534, abs=1e-8)
        assert out["independent_weighted_mean_size"] == pytest.approx(1020.0, abs=1e-3)
    for key in ("difference_lower", "difference_upper"):
        assert abs(out[key]) < 1e-10, (key, out[key])
    assert abs(out["difference_calibration_round_trip"]) < 1e-7


def test_rounding_sp9_and_the_paper_pair(outputs):
    # spec SP9: ε = 0.3, r = 0.02 → 0.0486642815, r* = 0.1322644588; §4.3 pair N = 14 at r = 0.1
    out = outputs["rounding_sp9"]
    assert out["independent_theorem6_epsilon"] == pytest.approx(0.0486642815, abs=1e-9)
    assert out["independent_crossover_rate"] == pytest.approx(0.1322644588, abs=1e-9)
    assert out["engine_theorem6_epsilon"] == pytest.approx(
        sp.amplify_randomized_rounding(epsilon=0.3, rate=0.02).epsilon_population, rel=1e-11)
    for key, value in out.items():
        if key.startswith("difference_"):
            assert abs(value) < 1e-9, (key, value)
    out = outputs["rounding_pair"]
    assert out["independent_size_loss_deterministic"] == pytest.approx(1.0)   # 1 case vs 2 cases: the full ε


def test_cluster_sp14_and_two_stage(outputs):
    # spec SP14 (ε = 0.2, 5 of 50 clusters, pair N = 6 → equal clusters of 3): 0.0579530708; naive 0.0218987385
    out = outputs["cluster_sp14"]
    assert out["independent_upper_epsilon"] == pytest.approx(0.0579530708, abs=1e-9)
    assert out["engine_upper_epsilon"] == pytest.approx(0.0579530708, abs=1e-9)
    assert out["dp_accounting_simple_random_sample_reading"] == pytest.approx(0.0218987385, abs=3e-6)
    assert abs(out["difference_upper"]) < 1e-12 and abs(out["difference_lower"]) < 1e-12
    # the two-stage parts go through dp-accounting's PLD (grid 2·10⁻⁶ at ε = 0.2): agreement to its resolution
    assert abs(out["difference_two_stage"]) < 1e-5 and abs(out["difference_calibration_round_trip"]) < 1e-5


def test_cluster_unequal_sizes_sp15(outputs):
    sizes = [3, 8, 15, 40]
    out = outputs["cluster_sp15"]
    # spec SP15: worst upper 0.0421208, worst lower 0.0372900
    assert out["independent_upper_epsilon"] == pytest.approx(0.0421208, abs=1e-7)
    assert out["independent_lower_epsilon"] == pytest.approx(0.0372900, abs=1e-7)
    b = sp.cluster_bounds(np.array(sizes, float), epsilon=0.05, n_drawn=1)
    assert out["engine_lower_epsilon"] == pytest.approx(b.worst_lower, rel=1e-11)
    assert abs(out["difference_two_stage"]) < 1e-12 and abs(out["difference_calibration_round_trip"]) < 1e-9


def test_stratified_sp19(outputs):
    out = outputs["stratified_sp19"]
    # spec SP19 totals: privacy-aware 3.5097822035, Neyman 5.1341619627, proportional 4.4500832275
    assert out["independent_variance_privacy_aware"] == pytest.approx(3.5097822035, abs=1e-8)
    assert out["independent_variance_neyman"] == pytest.approx(5.1341619627, abs=1e-8)
    assert out["independent_variance_proportional"] == pytest.approx(4.4500832275, abs=1e-8)
    r = 24 / 80
    assert out["independent_theorem11_epsilon"] == pytest.approx(
        math.log1p(2 * r * math.expm1(2)) + math.log1p(r * math.expm1(2)), rel=1e-12)
    for key, value in out.items():
        if key.startswith("difference_"):
            assert abs(value) < 1e-9, (key, value)
