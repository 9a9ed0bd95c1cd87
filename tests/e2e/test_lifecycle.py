"""A stopped server leaves no process behind (issue 35 item 4).

Before the fix, after ``kill PID`` (SIGTERM) of ``streamlit run app.py`` the warm-up process (``python -m
ui.warmup``) and its two loky workers stayed alive 4 times out of 4, and after a SIGKILL mid-run the loky workers and
resource trackers lived on under PID 1. Here a real server (``DPDASH_WARMUP=1``, so the real warm-up runs) gets one
browser session that starts a heavy run (the coherence explorer's repeated runs, on the server's own worker pool);
once the warm-up's workers and the run's workers exist, the server gets the signal and psutil watches every process
that descended from it: SIGTERM and SIGINT (Ctrl-C) must end them all within 10 s, a SIGKILL within 60 s (the
workers and the warm-up watch their parent).

Every process the test saw is killed in ``finally`` whatever happens, and the server runs in its own process group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from tests.e2e.conftest import CHROMIUM_ARGS, _free_port  # noqa: F401 - CHROMIUM_ARGS documents the browser setup
from tests.e2e.helpers import open_page
from tests.e2e.test_sessions import RUN_BUTTON, RUN_LINK

ROOT = Path(__file__).resolve().parents[2]

#: The issue's bounds: a clean stop within 10 s; a SIGKILLed server's workers on their own within 60 s.
BOUND_S = {signal.SIGTERM: 10.0, signal.SIGINT: 10.0, signal.SIGKILL: 60.0}
#: Until the warm-up's and the run's workers exist (the warm-up loads Adult first; the machine may be busy).
START_TIMEOUT_S = 300


def _start_server(port: int, log) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env.update({"DPDASH_WARMUP": "1", "DPDASH_SHARED_RUNS": "0"})
    return subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.address",
         "127.0.0.1", "--server.port", str(port), "--server.fileWatcherType", "none",
         "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _healthy(url: str, timeout: float = 90) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return True
        except OSError:
            time.sleep(0.3)
    return False


def _cmd(p: psutil.Process) -> str:
    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return ""


def _alive(procs) -> list[psutil.Process]:
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.Error:
            pass
    return out


def _descendants(root: psutil.Process) -> list[psutil.Process]:
    try:
        return root.children(recursive=True)
    except psutil.Error:
        return []


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=["SIGTERM", "SIGINT", "SIGKILL"])
def test_a_stopped_server_leaves_no_process_behind(browser, tmp_path, sig):
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(tmp_path / "server.log", "w")
    proc = _start_server(port, log)
    server = psutil.Process(proc.pid)
    seen: dict[int, psutil.Process] = {}
    ctx = None
    try:
        assert _healthy(url), "the server did not become healthy"
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        pg = ctx.new_page()
        pg.set_default_timeout(120_000)
        open_page(pg, f"{url}/{RUN_LINK}", timeout=180_000)  # the first page run starts the warm-up
        pg.get_by_role("button", name=RUN_BUTTON).click()

        def families():
            kids = _descendants(server)
            for k in kids:
                seen.setdefault(k.pid, k)
            warm = [k for k in kids if "ui.warmup" in _cmd(k)]
            warm_workers = [w for k in warm for w in _descendants(k) if "popen_loky_posix" in _cmd(w)]
            run_workers = [k for k in server.children() if "popen_loky_posix" in _cmd(k)]
            return warm, warm_workers, run_workers

        end = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < end:
            warm, warm_workers, run_workers = families()
            if warm and warm_workers and run_workers:
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"after {START_TIMEOUT_S} s: warm-up {len(warm)}, its workers {len(warm_workers)}, "
                        f"the run's workers {len(run_workers)}")
        families()
        os.kill(proc.pid, sig)
        t0 = time.monotonic()
        bound = BOUND_S[sig]
        while time.monotonic() - t0 < bound:
            for p in _alive(list(seen.values())):  # a process started after the signal is caught too
                for k in _descendants(p):
                    seen.setdefault(k.pid, k)
            if proc.poll() is not None and not _alive(list(seen.values())):
                break
            time.sleep(0.2)
        left = _alive(list(seen.values()))
        took = time.monotonic() - t0
        assert proc.poll() is not None, f"the server itself still runs {bound:g} s after {sig.name}"
        assert not left, (f"{len(left)} of {len(seen)} processes alive {bound:g} s after {sig.name}: "
                          + "; ".join(_cmd(p)[-70:] for p in left))
        print(f"{sig.name}: server and {len(seen)} descendants gone in {took:.1f} s")
    finally:
        if ctx is not None:
            ctx.close()
        for p in _alive(list(seen.values())):
            try:
                p.kill()
            except psutil.Error:
                pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait(10)
        log.close()
