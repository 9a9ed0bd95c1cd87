"""The coherence explorer's "Copy as code" script (issue 15 item 2): run in a subprocess from a clean temporary
directory, it prints the engine's numbers and an independent recomputation (scikit-learn + scipy's
wasserstein_distance, written in the script without the engine); both must equal the engine's run here."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine import coherence as co
from engine.data import census_population
from engine.script_coherence import independent_supported, runs_script

ROOT = Path(__file__).resolve().parents[1]
LENS = ("AGEP", "DENSITY", "INDP_CAT", "INDP", "SEX", "EDU", "HISP", "RAC1P")
GROUPS = (co.GroupSpec("Everyone"), co.GroupSpec("DREM = 1", (co.Condition("DREM", values=("1",)),)),
          co.GroupSpec("Age 65+", (co.Condition("AGEP", low=65),)),
          co.GroupSpec("Men 18–24", (co.Condition("SEX", values=(1,)), co.Condition("AGEP", low=18, high=25))))


def _run(script: str, tmp_path: Path) -> dict[str, str]:
    (tmp_path / "coherence_script.py").write_text(script, encoding="utf-8")
    out = subprocess.run([sys.executable, "coherence_script.py"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, check=True).stdout
    return dict(line.rsplit(" = ", 1) for line in out.splitlines() if " = " in line)


@pytest.mark.parametrize("release, learner", [
    (co.ReleaseSpec(), co.LearnerSpec(kind="decision_tree")),
    (co.ReleaseSpec(kind="subsample", subsample_size=300, features=("AGEP", "SEX", "EDU")),
     co.LearnerSpec(kind="random_forest", output="soft", n_estimators=10)),
])
def test_script_reproduces_the_engine_and_the_independent_half_agrees(tmp_path, release, learner):
    n, seed, alpha, gamma = 2000, 3, 0.2, 50.0
    config = co.ExperimentConfig(label="DREM", sensitive_value="1", lens=LENS, groups=GROUPS, release=release,
                                 learner=learner, repetitions=20, rng=seed)
    script = runs_script(repo_root=str(ROOT), data={"source": "synthetic", "n": n, "seed": seed}, config=config,
                         alpha=alpha, gamma=gamma, repetitions=3)
    printed = _run(script, tmp_path)
    # the page's first three runs, computed here with the engine
    res = co.run_experiment(census_population(n, rng=seed), config, n_jobs=1)
    first = res.w1[:3]
    kept = np.array(res.in_collection(gamma))
    failures = int(np.sum(np.nanmax(first[:, kept], axis=1) > alpha))
    for j, name in enumerate(res.group_names):
        want = float(np.nanmean(first[:, j]))
        assert math.isclose(float(printed[f"engine mean W1 [{name}]"]), want, abs_tol=1e-9), name
        assert math.isclose(float(printed[f"independent mean W1 [{name}]"]), want, abs_tol=1e-9), name
        assert float(printed[f"difference mean W1 [{name}]"]) <= 1e-9
    assert int(printed["engine runs above alpha"]) == failures
    assert int(printed["independent runs above alpha"]) == failures
    assert first[:, 1].max() > first[:, 0].max()  # a non-trivial case: the sensitive group stands out


def test_histogram_release_prints_engine_numbers_only(tmp_path):
    config = co.ExperimentConfig(label="DREM", sensitive_value="1", lens=LENS, groups=GROUPS[:2],
                                 release=co.ReleaseSpec(kind="dp_histogram", epsilon=math.inf,
                                                        features=("AGEP", "SEX")),
                                 learner=co.LearnerSpec(kind="decision_tree"), repetitions=4, rng=1)
    assert not independent_supported(config)
    script = runs_script(repo_root=str(ROOT), data={"source": "synthetic", "n": 2000, "seed": 1}, config=config,
                         alpha=0.2, gamma=0.0, repetitions=2)
    assert "math.inf" in script
    printed = _run(script, tmp_path)
    res = co.run_experiment(census_population(2000, rng=1), config, n_jobs=1)
    assert math.isclose(float(printed["engine mean W1 [DREM = 1]"]), float(np.nanmean(res.w1[:2, 1])),
                        abs_tol=1e-9)
    assert printed["independent"] == "not available for this release"
