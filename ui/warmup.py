"""Background warm-up at server start: compile the first MST run's JAX programs into the persistent cache.

Issue 14 item 8: the first MST/AIM run in a fresh server took 26–42 s on Adult, mostly JAX compilation. The
engine keeps compiled programs on disk (``dpdash.stratify.synth.jax_cache_dir()``); this module fills that cache once
per
server process, in the background, by running the page's default first MST Run (Adult, ε = 1, seed 0, vanilla +
stratified sex × race) in a separate low-priority process. A separate process, not a thread of the server:
tracing JAX programs holds the interpreter lock for seconds, which would slow every page; worker processes of a
real run read the same disk cache. The server process itself only imports mbi/JAX afterwards (it unpickles the
fitted models a run sends back).

Call :func:`start_background_warmup` from ``ui.common.page_setup``: it returns at once, starts at most once per
server process, never raises, and starts only in a real ``streamlit run`` server (never under AppTest or pytest)
unless ``DPDASH_WARMUP=1`` asks for it; ``DPDASH_WARMUP=0`` turns it off everywhere.

Lifecycle (issue 35 item 4): the warm-up runs in a process group of its own (it, its loky workers and their resource
tracker). When the server stops (SIGTERM, Ctrl-C: Streamlit then exits normally and runs ``atexit``) that group is
sent SIGTERM, then SIGKILL after :data:`STOP_GRACE_S`; a server killed with SIGKILL cannot do that, so the warm-up
process watches its parent (``dpdash.common.parallel.watch_parent``) and exits within about a second of the
server's death, and its workers watch it the same way.
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

__all__ = ["start_background_warmup", "warm_synthesizers", "warmup_enabled", "WarmupState", "state"]

logger = logging.getLogger("dpdash")

ROOT = Path(__file__).resolve().parents[1]
#: Environment switch: ``0``/``false``/``no``/``off`` turns the warm-up off (e.g. on a host without mbi/JAX).
ENV_SWITCH = "DPDASH_WARMUP"
#: The page's default first MST Run (pages/stratified_synthesis_viewer.py: Adult, ε slider default 1.0, seed 0,
#: smallest stratum fraction 0.001, small strata dropped). Another ε or seed selects another MST tree and
#: compiles a few more programs; those then come from the run itself.
DEFAULT_RUN = {"synthesizer": "mst", "epsilon": 1.0, "seed": 0, "min_frac": 0.001, "small_strata": "drop"}
#: Niceness of the warm-up process: pages keep priority on the shared cores.
NICE = 10
#: Seconds a stopping server gives the warm-up's process group after SIGTERM before it sends SIGKILL.
STOP_GRACE_S = 3.0
#: Seconds one warm-up pass may take before it is stopped.
PASS_TIMEOUT_S = 1800
#: Environment variable carrying the server's pid to the warm-up process (which exits once that process is gone).
PARENT_ENV = "DPDASH_WARMUP_PARENT"
_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off")


class WarmupState:
    """What the warm-up of this server process did (for logs and tests)."""

    def __init__(self) -> None:
        self.started = False
        self.thread: threading.Thread | None = None
        self.returncode: int | None = None
        self.seconds: float | None = None
        self.error: str | None = None
        self.proc: subprocess.Popen | None = None  # the pass running now (None between passes and after)
        self.stopping = False


state = WarmupState()
_lock = threading.Lock()


def _in_real_server() -> bool:
    """Whether this process is a ``streamlit run`` server (AppTest installs a mock runtime instead)."""
    try:
        from streamlit import runtime
        from streamlit.runtime import Runtime
    except ImportError:  # pragma: no cover - streamlit is a dependency of the app
        return False
    if not runtime.exists():
        return False
    # AppTest installs MagicMock(spec=Runtime), which passes isinstance(); the class itself tells them apart
    return type(Runtime.instance()) is Runtime


def warmup_enabled() -> bool:
    """``DPDASH_WARMUP`` decides when set (1/true/yes/on or 0/false/no/off); unset, the warm-up runs only in a real
    server that is not under pytest, so AppTest sessions and test processes never start one unless asked."""
    switch = os.environ.get(ENV_SWITCH, "").strip().lower()
    if switch in _OFF:
        return False
    if switch in _ON:
        return True
    return not os.environ.get("PYTEST_CURRENT_TEST") and _in_real_server()


def _command() -> list[str]:
    return [sys.executable, "-m", "ui.warmup"]


#: Warm-up passes, each a fresh process. Which small programs an MST run compiles varies a little from process to
#: process (measured: after one pass a page-like run still compiled 4–6 programs and took 10.1–10.5 s; after two,
#: 1 program and 7.2 s; with a cache filled by many runs, 6.2 s), so a second pass fills most of the rest.
PASSES = 2


def stop_warmup(grace_s: float = STOP_GRACE_S) -> None:
    """End the warm-up's whole process group now (SIGTERM, then SIGKILL after ``grace_s``); no further pass starts.

    Registered with ``atexit`` when the warm-up starts, so a server stopped by SIGTERM or Ctrl-C takes it along.
    """
    with _lock:
        state.stopping = True
        proc = state.proc
    if proc is None or proc.poll() is not None:
        return
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)  # the group: the warm-up, its loky workers and their resource tracker
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait_s)
            break
        except subprocess.TimeoutExpired:
            continue
    # the workers may outlive the leader by a moment; a last SIGKILL to the group ends them
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _one_pass(command: list[str]) -> tuple[int, str]:
    with _lock:
        if state.stopping:
            return -signal.SIGTERM, "the server is stopping"
        # A group of its own, so stopping it reaches its workers; stdout to nowhere (its one line is not needed).
        proc = state.proc = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.PIPE, text=True, start_new_session=True,
                                             env={**os.environ, PARENT_ENV: str(os.getpid())})
    try:
        _, err = proc.communicate(timeout=PASS_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        stop_warmup()
        _, err = proc.communicate()
    with _lock:
        state.proc = None
    return proc.returncode, err or ""


def _run(command: list[str]) -> None:
    t0 = time.perf_counter()
    try:
        for _ in range(PASSES):
            returncode, err = _one_pass(command)
            state.returncode = returncode
            if returncode != 0:
                state.error = err[-500:]
                if not state.stopping:
                    logger.warning("JAX warm-up failed (%s): %s", returncode, state.error)
                return
        # The server unpickles fitted models: import mbi/JAX here too, configured like the workers.
        from dpdash.stratify.synth import SynthesizerUnavailable, import_jax_libraries

        try:
            import_jax_libraries()
        except SynthesizerUnavailable as exc:
            state.error = str(exc)
    except Exception as exc:  # a warm-up must never take the server down
        state.error = f"{type(exc).__name__}: {exc}"
        logger.warning("JAX warm-up failed: %s", state.error)
    finally:
        state.seconds = time.perf_counter() - t0


def start_background_warmup(*, command: list[str] | None = None, force: bool = False) -> threading.Thread | None:
    """Start the warm-up once per server process in a daemon thread; return that thread (None when off).

    Idempotent: later calls return the first call's thread. ``command`` replaces the warm-up process (tests);
    ``force`` ignores :func:`warmup_enabled`.
    """
    if not force and not warmup_enabled():
        return None
    with _lock:
        if state.started:
            return state.thread
        state.started = True
        atexit.register(stop_warmup)
        state.thread = threading.Thread(target=_run, args=(command or _command(),), name="jax-warmup", daemon=True)
        state.thread.start()
        return state.thread


def warm_synthesizers() -> dict[str, float]:
    """Run the page's default first MST Run here (the body of the warm-up process); returns seconds per step.

    The same call as the page's Run button, with the page's workers, so the programs the run needs are compiled
    and written to the persistent cache.
    """
    t0 = time.perf_counter()
    from dpdash.stratify import synth as Y
    from dpdash.common.data import load_adult
    from dpdash.common.parallel import PAGE_JOBS  # worker processes compile a few programs of their own

    tab = load_adult()
    train, test = Y.train_test_split_table(tab, rng=DEFAULT_RUN["seed"])
    Y.fit_and_evaluate_variants(train, test, domain=tab.domain, synthesizer=DEFAULT_RUN["synthesizer"],
                                epsilon=DEFAULT_RUN["epsilon"], group_cols=list(tab.group_cols),
                                label_col=tab.label_col, rng=DEFAULT_RUN["seed"], min_frac=DEFAULT_RUN["min_frac"],
                                small_strata=DEFAULT_RUN["small_strata"], real_baseline=0.0, n_jobs=PAGE_JOBS)
    return {"mst": time.perf_counter() - t0}


def watch_server():
    """In the warm-up process: exit as soon as the server that started it is gone (a server killed with SIGKILL
    cannot stop this process, so it stops itself; issue 35 item 4). Returns the watching thread."""
    from dpdash.common.parallel import watch_parent

    return watch_parent(parent=int(os.environ.get(PARENT_ENV) or os.getppid()))


if __name__ == "__main__":
    watch_server()
    if hasattr(os, "nice"):
        os.nice(NICE)  # here, not via preexec_fn: the server that starts this process runs threads
    out = warm_synthesizers()
    print(" ".join(f"{k} {v:.1f} s" for k, v in out.items()))
