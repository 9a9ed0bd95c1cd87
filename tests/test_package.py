"""The engine as a package (issue 24 item 1): the wheel builds, installs into a fresh virtual environment outside the
checkout, and a generated "Copy as code" script of each page runs there with only that installed package.

The fresh environment gets the third-party libraries from the test environment's site-packages through a ``.pth``
line (installing numpy, scipy, … again would take minutes and need the network); ``.pth`` files inside that
directory are not processed, so the checkout's editable install of ``dpdash`` is not visible there. Each script
runs from its own empty directory outside the checkout, and the test checks that ``dpdash`` was imported from the
wheel, not from the checkout.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

import dpdash
from dpdash.coherence import script as scc
from dpdash.epsilon import script as se
from dpdash.sortition import script as sl
from dpdash.sampling import script as ss
from dpdash.stratify import script as sst
from dpdash.coherence import core as co

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

_COHERENCE = co.ExperimentConfig(
    label="DREM", sensitive_value="1", lens=("AGEP", "SEX", "EDU"),
    groups=(co.GroupSpec("Everyone"), co.GroupSpec("DREM = 1", (co.Condition("DREM", values=("1",)),))),
    release=co.ReleaseSpec(), learner=co.LearnerSpec(kind="decision_tree"), repetitions=1, rng=3)


def _scripts() -> dict[str, str]:
    """One generated script per page (small settings, so the whole run takes seconds)."""
    return {
        "epsilon_calculator": se.noise_script(mechanism="laplace", sensitivity=1.0, fix="privacy",
                                              epsilon=1.0, confidence=0.95),
        "sampling_designer": ss.simple_script(epsilon=1.0, n=10_000, m=100, rate=0.01),
        "leximax_cohort_picker": sl.cohort_script(k=3, values_code="lx.LX1_VALUES"),
        "stratified_synthesis_viewer": sst.mean_script(sizes=[40, 60], mu=[0.0, 1.0], sigma=[1.0, 1.0],
                                                       epsilon=1.0, R=3.0, gamma=0.05, reps=5, seed=0,
                                                       min_frac=0.0, small_strata="pool", mode="paper",
                                                       labels=["A", "B"]),
        "coherence_explorer": scc.runs_script(data={"source": "synthetic", "n": 1000, "seed": 3},
                                              config=_COHERENCE, alpha=0.2, gamma=50.0, repetitions=1),
        # the synthetic-data view on UCI Adult: the script loads the dataset bundled in the wheel
        "stratified_synthesis_viewer_adult": sst.synth_script(source="adult", synthesizer="independent",
                                                              synthesizer_label="Independent", epsilon=1.0, seed=0,
                                                              min_frac=0.001, small_strata="drop",
                                                              classifier="logreg"),
    }


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh venv outside the checkout with the built wheel installed; returns its python."""
    tmp = tmp_path_factory.mktemp("pkg")
    wheels = tmp / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "-w", str(wheels), str(ROOT / "engine")], check=True, capture_output=True, timeout=300)
    (wheel,) = wheels.glob("dpdash-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "dpdash/bundled/adult/adult.data" in names and "dpdash/bundled/deployments.csv" in names
    assert not any(n.startswith(("pages/", "ui/", "tests/")) for n in names)
    env_dir = tmp / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    # third-party libraries only: the test environment's site-packages as a plain path entry
    (site / "zz_test_libs.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps",
                    "--no-index", str(wheel)], check=True, capture_output=True, timeout=300)
    return py


def test_the_wheel_installs_outside_the_checkout(installed, tmp_path):
    out = subprocess.run([str(installed), "-c", "import dpdash, dpdash.common.data as d; print(dpdash.__file__); "
                          "print(dpdash.__version__); print(d.DATA_DIR); print(len(d.load_adult().df))"],
                         cwd=tmp_path, check=True, capture_output=True, text=True,
                         env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"}).stdout.split("\n")
    assert not out[0].startswith(str(ROOT)) and "site-packages" in out[0]
    assert out[1] == dpdash.__version__
    assert "bundled" in out[2]
    assert int(out[3]) == 45_222  # UCI Adult's complete rows (train 30,162 + test 15,060; the dataset's documentation)


@pytest.mark.parametrize("page", list(_scripts()))
def test_a_generated_script_runs_with_only_the_installed_package(installed, tmp_path, page):
    src = _scripts()[page]
    assert str(ROOT) not in src and "sys.path" not in src
    assert f"dpdash {dpdash.__version__}" in src
    path = tmp_path / "recompute.py"
    path.write_text(src + "\nimport dpdash as _d\nprint('dpdash file =', _d.__file__)\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([str(installed), str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                         env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Warning" not in run.stderr or "made with dpdash" not in run.stderr
    where = [ln for ln in run.stdout.splitlines() if ln.startswith("dpdash file =")][-1]
    assert str(ROOT) not in where and "site-packages" in where
    assert any("=" in ln for ln in run.stdout.splitlines()[:-1])  # it printed its numbers
