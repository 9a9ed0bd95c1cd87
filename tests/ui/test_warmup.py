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
    monkeypatch.delenv(warmup.ENV_SWITCH, raising=False)
    assert fresh_state.warmup_enabled() is False  # PYTEST_CURRENT_TEST is set while this runs
    assert fresh_state.start_background_warmup() is None and not fresh_state.state.started
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    # unset and outside a real `streamlit run` server (this plain process): off
    assert fresh_state.warmup_enabled() is False
    for off in ("0", "off", "False"):
        monkeypatch.setenv(warmup.ENV_SWITCH, off)
        assert fresh_state.warmup_enabled() is False
    monkeypatch.setenv(warmup.ENV_SWITCH, "1")
    assert fresh_state.warmup_enabled() is True


# ----------------------------------------------------------------------------------- lifecycle (issue 35 item 4)
PROBE_PAGE = textwrap.dedent("""
    import streamlit as st
    from ui import warmup
    st.write(f"warmup thread: {warmup.start_background_warmup()!r}; started: {warmup.state.started}")
""")


def test_an_apptest_session_starts_no_warmup_unless_asked(fresh_state, monkeypatch, tmp_path):
    """AppTest runs a page with a mock runtime: no warm-up, even outside pytest's variable, unless DPDASH_WARMUP=1."""
    from streamlit.testing.v1 import AppTest

    page = tmp_path / "probe.py"
    page.write_text(PROBE_PAGE)
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    monkeypatch.delenv(warmup.ENV_SWITCH, raising=False)
    at = AppTest.from_file(str(page), default_timeout=60).run()
    assert not at.exception
    assert at.markdown[0].value == "warmup thread: None; started: False"
    # asked for: it starts (with a harmless command, so no real warm-up runs here)
    monkeypatch.setenv(warmup.ENV_SWITCH, "1")
    monkeypatch.setattr(warmup, "_command", lambda: [sys.executable, "-c", "pass"])
    at = AppTest.from_file(str(page), default_timeout=60).run()
    assert "started: True" in at.markdown[0].value
    fresh_state.state.thread.join(60)


#: A stand-in warm-up: starts a grandchild (as the real one starts loky workers), says so, then waits.
FAKE_WARMUP = textwrap.dedent("""
    import subprocess, sys, time
    from ui import warmup
    warmup.watch_server()
    kid = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    open(sys.argv[1], "w").write(f"{kid.pid}")
    time.sleep(600)
""")


def _pids_alive(pids) -> list[int]:
    import psutil

    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.NoSuchProcess:
            pass
    return out


def _wait(cond, timeout: float) -> bool:
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def test_stop_warmup_ends_the_warmup_and_its_children(fresh_state, tmp_path, monkeypatch):
    """What the server's atexit hook does on SIGTERM/Ctrl-C: the warm-up's whole process group ends, within 10 s."""
    import signal

    script, marker = tmp_path / "fake.py", tmp_path / "kid.pid"
    script.write_text(FAKE_WARMUP)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the stand-in imports ui, as `python -m ui.warmup` does from ROOT
    t = fresh_state.start_background_warmup(command=[sys.executable, str(script), str(marker)], force=True)
    try:
        assert _wait(marker.exists, 60) and marker.read_text()
        pids = [fresh_state.state.proc.pid, int(marker.read_text())]
        assert _pids_alive(pids) == pids
        fresh_state.stop_warmup()
        assert _wait(lambda: not _pids_alive(pids), 10), _pids_alive(pids)
        t.join(30)
        assert not t.is_alive()
        # no second pass starts after a stop
        assert fresh_state.state.proc is None and fresh_state.state.stopping
    finally:
        for pid in _pids_alive(pids if marker.exists() and marker.read_text() else []):
            os.kill(pid, signal.SIGKILL)


def test_a_warmup_exits_on_its_own_when_its_server_is_killed(tmp_path):
    """A server killed with SIGKILL runs no hook: the warm-up watches the server and exits (within 60 s)."""
    import signal

    script, marker = tmp_path / "fake.py", tmp_path / "kid.pid"
    script.write_text(FAKE_WARMUP)
    server = textwrap.dedent(f"""
        import sys, time
        from ui import warmup
        warmup.start_background_warmup(command=[sys.executable, {str(script)!r}, {str(marker)!r}], force=True)
        time.sleep(600)
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the stand-in warm-up imports ui, as `python -m ui.warmup` does
    proc = subprocess.Popen([sys.executable, "-c", server], cwd=ROOT, env=env, start_new_session=True)
    pids: list[int] = []
    try:
        import psutil

        assert _wait(lambda: marker.exists() and marker.read_text(), 120)
        pids = [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
        assert len(pids) >= 2  # the warm-up and its child
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        # the warm-up exits within about a second; its own child is a plain process here (the real warm-up's loky
        # workers watch it in turn: tests/engine/common/test_parallel.py), so only the warm-up itself is checked
        assert _wait(lambda: not _pids_alive(pids[:1]), 60), _pids_alive(pids)
    finally:
        for pid in _pids_alive(pids):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
