"""The quality gates stay switched on (issue 13): the linter passes, and the configuration that enforces doctests,
warnings as errors, the coverage floor and the random Hypothesis pass is still in place."""

from __future__ import annotations

import configparser
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _ruff() -> list[str]:
    exe = Path(sys.executable).with_name("ruff")
    return [str(exe)] if exe.exists() else [shutil.which("ruff") or "ruff"]


def test_ruff_is_clean_on_the_tree():
    out = subprocess.run([*_ruff(), "check", "--no-cache", "--output-format", "concise", "."], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-1000:]


def test_pytest_configuration_keeps_the_gates():
    ini = configparser.ConfigParser()
    ini.read(ROOT / "pytest.ini", encoding="utf-8")
    cfg = ini["pytest"]
    assert "--doctest-modules" in cfg["addopts"] and "engine" in cfg["testpaths"].split()
    assert cfg["xfail_strict"].strip() == "true" and "--strict-markers" in cfg["addopts"]
    filters = [f.strip() for f in cfg["filterwarnings"].splitlines() if f.strip() and not f.strip().startswith("#")]
    assert filters[0].startswith("error::Warning:") and all(p in filters[0] for p in ("dpdash", "ui"))
    # every other entry ignores something by name, never everything
    assert all(f.startswith("ignore:") and f != "ignore" for f in filters[1:])


def test_make_test_runs_lint_coverage_floor_and_the_random_hypothesis_pass():
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    target = re.search(r"^test: (.*?)\n((?:\t.*\n)+)", make, re.M)
    assert target and "lint" in target.group(1)
    body = target.group(2)
    assert "--cov=dpdash" in body and "--cov-branch" in body and "--cov-fail-under=$(COV_FLOOR)" in body
    assert "test-hypothesis-random" in body
    assert "tests/coverage_per_module.py" in body and "--floor $(COV_FLOOR)" in body  # every module, not the total
    floor = int(re.search(r"^COV_FLOOR \?= (\d+)", make, re.M).group(1))
    assert floor >= 90
    assert "--hypothesis-seed=$(HYPOTHESIS_SEED)" in make and "ci-random" in make
