"""Tests for the JAX persistent compilation cache (dpdash/stratify/synth.py) and the server's background warm-up
(ui/warmup.py).

Issue 14 item 8: the first MST/AIM run in a fresh server must not pay JAX compilation again. The cache directory is
checked in a fresh interpreter, because JAX fixes its cache at the first compilation of a process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ui import warmup

ROOT = Path(__file__).resolve().parents[2]

FIT = textwrap.dedent("""
    import jax, numpy as np, pandas as pd
    from dpdash.stratify import synth as Y
    df = pd.DataFrame({"a": [0, 1, 1, 0, 1, 0] * 20, "b": [1, 1, 0, 0, 1, 0] * 20, "c": [0, 1, 2, 2, 1, 0] * 20})
    m = Y.MST(epsilon=1.0, iters=50).fit(df, {"a": 2, "b": 2, "c": 3}, rng=0)
    m.sample(10, rng=1)
    print(jax.config.jax_compilation_cache_dir, jax.config.jax_enable_compilation_cache, jax.config.jax_enable_x64)
""")


def _fit_in_fresh_process(cache: Path) -> str:
    env = {**os.environ, "JAX_COMPILATION_CACHE_DIR": str(cache)}
    env.pop("PYTEST_CURRENT_TEST", None)
    proc = subprocess.run([sys.executable, "-W", "error::UserWarning", "-c", FIT], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip().splitlines()[-1]


def _entries(cache: Path) -> set[str]:
    return {p.name for p in cache.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_mst_fit_writes_the_persistent_cache_and_a_new_process_reuses_it(tmp_path):
    cache = tmp_path / "jax"
    out = _fit_in_fresh_process(cache)
    # The cache is on, float64 is on, and the directory is ours; mbi's warning about the cache is not raised
    # (-W error::UserWarning would have failed the fit).
    assert out == f"{cache} True True"
    first = _entries(cache)
    assert len(first) >= 3, first
    # A second fresh process with the same fit compiles nothing new: every program comes from the cache.
    _fit_in_fresh_process(cache)
    assert _entries(cache) == first


def test_cache_dir_default_is_the_git_ignored_project_cache(monkeypatch):
    from dpdash.stratify import synth as Y

    monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR", raising=False)
    assert Y.jax_cache_dir() == ROOT / ".cache" / "jax"
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", "/somewhere/else")
    assert Y.jax_cache_dir() == Path("/somewhere/else")


@pytest.fixture
def fresh_state(monkeypatch):
    monkeypatch.setattr(warmup, "state", warmup.WarmupState())
    return warmup


def test_warmup_starts_once_per_process_and_never_blocks(fresh_state, tmp_path):
    marker = tmp_path / "runs.txt"
    cmd = [sys.executable, "-c", f"open({str(marker)!r}, 'a').write('x')"]
    t1 = fresh_state.start_background_warmup(command=cmd, force=True)
    t2 = fresh_state.start_background_warmup(command=cmd, force=True)
    assert t1 is not None and t2 is t1 and t1.daemon
    t1.join(timeout=120)
    assert not t1.is_alive()
    assert fresh_state.start_background_warmup(command=cmd, force=True) is t1
    # one warm-up (PASSES processes, one after another), however often it is asked for
    assert marker.read_text() == "x" * fresh_state.PASSES and fresh_state.PASSES == 2
    assert fresh_state.state.returncode == 0 and fresh_state.state.error is None


def test_warmup_failure_is_recorded_not_raised(fresh_state):
    t = fresh_state.start_background_warmup(command=[sys.executable, "-c", "raise SystemExit(3)"], force=True)
    t.join(timeout=120)
    assert fresh_state.state.returncode == 3


def test_warmup_is_off_under_pytest_and_by_switch(fresh_state, monkeypatch):
    assert fresh_state.warmup_enabled() is False  # PYTEST_CURRENT_TEST is set while this runs
    assert fresh_state.start_background_warmup() is None and not fresh_state.state.started
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    for off in ("0", "off", "False"):
        monkeypatch.setenv(warmup.ENV_SWITCH, off)
        assert fresh_state.warmup_enabled() is False
    monkeypatch.setenv(warmup.ENV_SWITCH, "1")
    assert fresh_state.warmup_enabled() is True
