"""The coherence explorer's "Copy as code" scripts (issue 15 item 2), one per results tab: all run in ONE subprocess
(``tests.script_runner.run_scripts``), each from a clean temporary directory. Each prints the engine's numbers and an
independent recomputation written in the script without the engine (scikit-learn + scipy's wasserstein_distance;
the histogram release written out from the spec; the theorems' formulas from the seed solved with scipy's brentq;
the Gaussian σ calibrated with scipy). Here the engine's numbers must equal the engine run as the page runs it, the
independent ones must agree within the stated tolerances, the theory numbers must equal the spec's worked examples
(specs/coherence_explorer.md §9, items 5, 6, 8), and a script with a changed constant in its independent half must
fail the same checks."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpdash.coherence import core as co
from dpdash.coherence import tabs as ct
from dpdash.common.data import census_population, read_uploaded_csv
from dpdash.coherence.script import (SCRIPT_SWEEP_REPS, independent_supported, runs_script, section7_script,
                                     sweep_script, theory_script)
from tests.script_runner import run_scripts

ROOT = Path(__file__).resolve().parents[3]
LENS = ("AGEP", "DENSITY", "INDP_CAT", "INDP", "SEX", "EDU", "HISP", "RAC1P")
SIX = ("AGEP", "SEX", "RAC1P", "EDU", "HISP", "DENSITY")
GROUPS = (co.GroupSpec("Everyone"), co.GroupSpec("DREM = 1", (co.Condition("DREM", values=("1",)),)),
          co.GroupSpec("Age 65+", (co.Condition("AGEP", low=65),)),
          co.GroupSpec("Men 18–24", (co.Condition("SEX", values=(1,)), co.Condition("AGEP", low=18, high=25))))
#: Four groups of a population of 20,000 labelled by SEX (the theory and Section 7 spec cases)
FOUR = (GROUPS[0], GROUPS[2], co.GroupSpec("Black", (co.Condition("RAC1P", values=(2,)),)),
        co.GroupSpec("Hispanic", (co.Condition("HISP", low=1),)))
N, SEED = 2000, 3
SYN = {"source": "synthetic", "n": N, "seed": SEED}
#: Tolerances: same floating-point path → 1e-9; the theory's root finding vs the engine's closed form / bisection
#: (precision 1e-10) → 1e-8; the Gaussian σ from scipy vs dp-accounting's search → relative 1e-6.
TOL, TOL_ROOT, TOL_SIGMA = 1e-9, 1e-8, 1e-6

# ---------------------------------------------------------------------------------------------- the cases
RUNS = {
    "runs_tree": (co.ReleaseSpec(), co.LearnerSpec(kind="decision_tree")),
    "runs_forest_subsample": (co.ReleaseSpec(kind="subsample", subsample_size=300, features=("AGEP", "SEX", "EDU")),
                              co.LearnerSpec(kind="random_forest", output="soft", n_estimators=10)),
}
SWEEPS = {
    "sweep_laplace": (co.ReleaseSpec(kind="dp_histogram", features=SIX), co.LearnerSpec(kind="decision_tree")),
    "sweep_gauss": (co.ReleaseSpec(kind="gaussian_histogram", features=SIX, delta=1e-6),
                    co.LearnerSpec(kind="random_forest", output="soft", n_estimators=5)),
}
#: Section 7: (label, column, one value, groups, curator, reps, population size)
S7 = {
    "s7_column": ("DREM", "SEX", "2", GROUPS, "column", 1000, N),
    "s7_count": ("DREM", "SEX", "2", GROUPS[:3], "count", 300, N),
    # spec §9 item 8: w1_bound_single_column(20000, 0.05, 4, 20000) = 0.0592083 (label SEX: every row labelled)
    "s7_spec": ("SEX", "DREM", "1", FOUR, "column", 100, 20000),
}
#: Theory on an uploaded file of 27,254 rows with a group of 1,521 (spec §9 items 5, 6, 8 at β = 0.05, |𝒞*| = 2)
SPEC_N, SPEC_M = 27254, 1521
THEORY_SPEC = {"epsilon": 0.05, "alpha": 1.0, "beta": 0.05, "gamma": 100.0}
THEORY_SYN = {"epsilon": 1.0, "alpha": 0.2, "beta": 0.05, "gamma": 50.0}
#: Theory where the ε-free term T2 = 144·ln(6/α)/α² sets Theorem 7's γ: 20,000 labelled rows (label SEX), |𝒞*| = 4,
#: α = 0.2, β = 0.05, a hypothetical ε = 0.01 (spec §9 item 8: gamma_thm3(0, 0.2, 0.05, 4).gamma = 12244.3106 and
#: gamma_single_column(20000, 0.2, 0.05, 4) = 5920.8287)
THEORY_T2 = {"epsilon": 0.01, "alpha": 0.2, "beta": 0.05, "gamma": 100.0}


def _config(release, learner, *, label="DREM", sensitive="1", lens=LENS, groups=GROUPS, reps=10):
    return co.ExperimentConfig(label=label, sensitive_value=sensitive, lens=lens, groups=groups, release=release,
                               learner=learner, repetitions=reps, rng=SEED)


def _spec_frame() -> pd.DataFrame:
    y = np.zeros(SPEC_N, dtype=int)
    y[:SPEC_M] = 1
    return pd.DataFrame({"y": y, "x": np.arange(SPEC_N) % 7})


SPEC_GROUPS = (co.GroupSpec("Everyone"), co.GroupSpec("y = 1", (co.Condition("y", values=("1",)),)))
SPEC_CONFIG = _config(co.ReleaseSpec(), co.LearnerSpec(kind="decision_tree"), label="y", lens=("x",),
                      groups=SPEC_GROUPS, reps=1)
T2_CONFIG = _config(co.ReleaseSpec(), co.LearnerSpec(kind="decision_tree"), label="SEX", sensitive="2",
                    lens=("AGEP", "EDU"), groups=FOUR, reps=1)
SYN_CONFIG = _config(co.ReleaseSpec(kind="dp_histogram", epsilon=1.0, features=SIX), co.LearnerSpec(), reps=1)


def _scripts(csv_path: Path) -> dict[str, str]:
    out = {name: runs_script(data=SYN, config=_config(rel, lrn, reps=20), alpha=0.2,
                             gamma=50.0, repetitions=3) for name, (rel, lrn) in RUNS.items()}
    out["runs_histogram"] = runs_script(data={"source": "synthetic", "n": N, "seed": 1},
                                        config=_HIST, alpha=0.2, gamma=0.0, repetitions=2)
    for name, (rel, lrn) in SWEEPS.items():
        out[name] = sweep_script(data=SYN, config=_config(rel, lrn), epsilons=ct.SWEEP_EPSILONS)
    for name, (label, column, one, groups, curator, reps, n) in S7.items():
        out[name] = section7_script(data={"source": "synthetic", "n": n, "seed": SEED},
                                    label=label, column=column, one_value=one, groups=groups, seed=SEED, beta=0.05,
                                    curator=curator, reps=reps)
    out["theory_spec"] = theory_script(data={"source": "upload", "path": str(csv_path)},
                                       config=SPEC_CONFIG, **THEORY_SPEC)
    out["theory_syn"] = theory_script(data=SYN, config=SYN_CONFIG, **THEORY_SYN)
    out["theory_t2"] = theory_script(data={"source": "synthetic", "n": 20000, "seed": SEED},
                                     config=T2_CONFIG, **THEORY_T2)
    # the same scripts with one constant changed in the independent half: the checks below must catch each
    out["mutant_theory"] = _mutate(out["theory_spec"], "math.log(16 * G / BETA)", "math.log(17 * G / BETA)")
    out["mutant_s7"] = _mutate(out["s7_column"], "bound_independent = 4 * np.sqrt", "bound_independent = 4.1 * np.sqrt")
    out["mutant_sweep"] = _mutate(out["sweep_laplace"], "rng.laplace(0.0, 2.0 / e, size)",
                                  "rng.laplace(0.0, 1.0 / e, size)")
    return out


def _mutate(script: str, old: str, new: str) -> str:
    head, tail = script.split("# ---- 2. Independently", 1)
    assert tail.count(old) == 1, old  # the constant sits in the independent half only
    return head + "# ---- 2. Independently" + tail.replace(old, new)


_HIST = co.ExperimentConfig(label="DREM", sensitive_value="1", lens=LENS, groups=GROUPS[:2],
                            release=co.ReleaseSpec(kind="dp_histogram", epsilon=math.inf, features=("AGEP", "SEX")),
                            learner=co.LearnerSpec(kind="decision_tree"), repetitions=4, rng=1)


@pytest.fixture(scope="module")
def printed(tmp_path_factory) -> dict[str, dict[str, str]]:
    """Every case's script, run once in one subprocess: name → {printed name: printed value}."""
    work = tmp_path_factory.mktemp("coherence_scripts")
    csv_path = work / "uploaded.csv"
    csv_path.write_text(_spec_frame().to_csv(index=False), encoding="utf-8")
    outs = run_scripts(_scripts(csv_path), work)
    return {name: dict(line.rsplit(" = ", 1) for line in out.splitlines() if " = " in line)
            for name, out in outs.items()}


def _close(a: str, b: float, tol: float) -> bool:
    x = float(a)
    return (math.isnan(x) and math.isnan(b)) or math.isclose(x, b, rel_tol=tol, abs_tol=tol)


# ---------------------------------------------------------------------------------------------- repeated runs
@pytest.mark.parametrize("name", list(RUNS))
def test_runs_script_reproduces_the_engine_and_the_independent_half_agrees(printed, name):
    rel, lrn = RUNS[name]
    config, alpha, gamma = _config(rel, lrn, reps=20), 0.2, 50.0
    got = printed[name]
    res = co.run_experiment(census_population(N, rng=SEED), config, n_jobs=1)  # the page's run; its first three
    first = res.w1[:3]
    kept = np.array(res.in_collection(gamma))
    failures = int(np.sum(np.nanmax(first[:, kept], axis=1) > alpha))
    for j, g in enumerate(res.group_names):
        want = float(np.nanmean(first[:, j]))
        assert _close(got[f"engine mean W1 [{g}]"], want, TOL), g
        assert _close(got[f"independent mean W1 [{g}]"], want, TOL), g
        assert float(got[f"difference mean W1 [{g}]"]) <= TOL
    assert int(got["engine runs above alpha"]) == int(got["independent runs above alpha"]) == failures
    assert first[:, 1].max() > first[:, 0].max()  # a non-trivial case: the sensitive group stands out


def test_histogram_release_runs_script_prints_engine_numbers_only(printed):
    assert not independent_supported(_HIST)
    got = printed["runs_histogram"]
    res = co.run_experiment(census_population(N, rng=1), _HIST, n_jobs=1)
    assert _close(got["engine mean W1 [DREM = 1]"], float(np.nanmean(res.w1[:2, 1])), TOL)
    assert got["independent"] == "not available for this release"


# ---------------------------------------------------------------------------------------------- W1 vs ε
def _check_sweep(got: dict[str, str], config: co.ExperimentConfig) -> None:
    sw = co.run_epsilon_sweep(census_population(N, rng=SEED), replace(config, repetitions=SCRIPT_SWEEP_REPS),
                              ct.SWEEP_EPSILONS, n_jobs=1)
    for r in sw.itertuples():
        key = f"mean W1 [eps={r.epsilon:g}, {r.group}]"
        assert _close(got[f"engine {key}"], r.mean_w1, TOL), key
        assert _close(got[f"independent {key}"], r.mean_w1, TOL), key
    # the verdict's chance level, as the page computes it (same config: the floor does not depend on ε or R)
    for g, v in co.noise_floor(census_population(N, rng=SEED), config, reps=ct.FLOOR_REPS).items():
        for who in ("engine", "independent"):
            assert _close(got[f"{who} chance alone [{g}]"], float(np.nanmean(v)), TOL), (who, g)


@pytest.mark.parametrize("name", list(SWEEPS))
def test_sweep_script_reproduces_the_engine_and_the_independent_half_agrees(printed, name):
    rel, lrn = SWEEPS[name]
    config = _config(rel, lrn)
    got = printed[name]
    _check_sweep(got, config)
    assert sum(k.startswith("engine mean W1") for k in got) == len(ct.SWEEP_EPSILONS) * len(GROUPS)
    # the exact histogram exposes the sensitive group far more than ε = 0.1 (spec §9 item 15)
    assert float(got["engine mean W1 [eps=inf, DREM = 1]"]) > float(got["engine mean W1 [eps=0.1, DREM = 1]"])
    if rel.kind == "gaussian_histogram":
        for e in ct.SWEEP_EPSILONS[:-1]:
            want = co.gaussian_histogram_sigma(epsilon=e, delta=rel.delta)
            assert _close(got[f"engine noise sigma [eps={e:g}]"], want, TOL)
            assert math.isclose(float(got[f"independent noise sigma [eps={e:g}]"]), want, rel_tol=TOL_SIGMA)


# ---------------------------------------------------------------------------------------------- theory
def _check_theory(got: dict[str, str], th: ct.TheoryNumbers) -> None:
    want = {"Theorem 7 gamma required": th.thm7.gamma, "groups meeting it": th.meets,
            "largest pure eps for the smallest group": th.eps_pure,
            "largest approximate eps for the smallest group": th.eps_approx, "Theorem 9 gamma": th.thm9_gamma,
            **{f"smallest alpha certified [{g}]": a for g, a in zip(th.kept, th.alpha_min)}}
    if th.epsilon <= 0.5:
        want["Theorem 8 gamma"] = th.thm8_gamma
    for k, v in want.items():
        assert _close(got[f"engine {k}"], v, TOL), k
        assert _close(got[f"independent {k}"], v, TOL_ROOT), k


def test_theory_script_matches_the_engine_and_the_spec(printed):
    got = printed["theory_spec"]
    df = read_uploaded_csv(_spec_frame().to_csv(index=False).encode()).frame
    prepared = co.prepare(df, SPEC_CONFIG)  # as the page computes it
    th = ct.theory_numbers(n=prepared.n, group_sizes=prepared.group_sizes, **THEORY_SPEC)
    _check_theory(got, th)
    # spec §9: item 5 eps_max(27254, 1.0, 0.05, 2, 1521); item 6 alpha_min(0.05, 27254, 0.05, 2, m), m = 1521,
    # 27254; item 8 gamma_single_column(27254, 1.0, 0.05, 2)
    for who in ("engine", "independent"):
        assert math.isclose(float(got[f"{who} largest pure eps for the smallest group"]), 0.0635663984, abs_tol=1e-9)
        assert math.isclose(float(got[f"{who} smallest alpha certified [y = 1]"]), 0.846048, abs_tol=1e-6)
        assert math.isclose(float(got[f"{who} smallest alpha certified [Everyone]"]), 0.199869, abs_tol=1e-6)
        assert math.isclose(float(got[f"{who} Theorem 9 gamma"]), 1268.3010, abs_tol=1e-4)


def test_theory_script_where_the_epsilon_free_term_binds(printed):
    got = printed["theory_t2"]
    prepared = co.prepare(census_population(20000, rng=SEED), T2_CONFIG)
    th = ct.theory_numbers(n=prepared.n, group_sizes=prepared.group_sizes, **THEORY_T2)
    _check_theory(got, th)
    assert th.n_groups == 4 and th.thm7.binding_term == 1
    for who in ("engine", "independent"):
        assert math.isclose(float(got[f"{who} Theorem 7 gamma required"]), 12244.3106, abs_tol=1e-4)
        assert math.isclose(float(got[f"{who} Theorem 9 gamma"]), 5920.8287, abs_tol=1e-4)
        assert int(got[f"{who} groups meeting it"]) == 1  # only Everyone has 12,245 or more members


def test_theory_script_on_a_dp_release(printed):
    got = printed["theory_syn"]
    prepared = co.prepare(census_population(N, rng=SEED), SYN_CONFIG)
    th = ct.theory_numbers(n=prepared.n, group_sizes=prepared.group_sizes, **THEORY_SYN)
    _check_theory(got, th)
    assert "engine Theorem 8 gamma" not in got  # ε = 1 > 0.5: Theorem 8 does not apply, the card shows a dash
    assert th.thm7.vacuous and float(got["independent groups meeting it"]) == 0


# ---------------------------------------------------------------------------------------------- Section 7
def _check_s7(got: dict[str, str], name: str) -> co.SingleColumnResult:
    label, column, one, groups, curator, reps, n = S7[name]
    kept = tuple(g for g in groups)
    res = ct.section7_result(census_population(n, rng=SEED), label=label, column=column, one_value=one, groups=kept,
                             rng=SEED, beta=0.05, curator=curator, reps=reps)
    above = int(np.any(res.w1 > res.bound[None, :], axis=1).sum())
    for j, g in enumerate(res.group_names):
        for who in ("engine", "independent"):
            assert _close(got[f"{who} largest W1 [{g}]"], float(np.nanmax(res.w1[:, j])), TOL), (who, g)
            assert _close(got[f"{who} bound [{g}]"], float(res.bound[j]), TOL), (who, g)
    assert int(got["engine splits above the bound"]) == int(got["independent splits above the bound"]) == above
    return res


@pytest.mark.parametrize("name", list(S7))
def test_section7_script_reproduces_the_engine_and_the_independent_half_agrees(printed, name):
    res = _check_s7(printed[name], name)
    if name == "s7_spec":  # spec §9 item 8: Theorem 9's bound for the whole population of 20,000, |𝒞| = 4
        assert math.isclose(float(printed[name]["independent bound [Everyone]"]), 0.0592083, abs_tol=1e-7)
    if name == "s7_count":  # Theorem 11's bound is far weaker: above 2 for every group here
        assert min(res.bound) > 2


# ---------------------------------------------------------------------------------------------- the checks can fail
def test_a_changed_constant_in_an_independent_half_fails_the_checks(printed):
    df = read_uploaded_csv(_spec_frame().to_csv(index=False).encode()).frame
    prepared = co.prepare(df, SPEC_CONFIG)
    th = ct.theory_numbers(n=prepared.n, group_sizes=prepared.group_sizes, **THEORY_SPEC)
    with pytest.raises(AssertionError):
        _check_theory(printed["mutant_theory"], th)
    with pytest.raises(AssertionError):
        _check_s7(printed["mutant_s7"], "s7_column")
    with pytest.raises(AssertionError):
        _check_sweep(printed["mutant_sweep"], _config(*SWEEPS["sweep_laplace"]))
    # and each mutant says so itself: a non-zero difference line
    for name, key in (("mutant_theory", "difference Theorem 7 gamma required"),
                      ("mutant_s7", "difference bound [Everyone]"),
                      ("mutant_sweep", "difference mean W1 [eps=0.1, DREM = 1]")):
        assert float(printed[name][key]) > TOL, name
