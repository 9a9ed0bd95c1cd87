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
server process, never raises, and is off under pytest or with ``DPDASH_WARMUP=0``.
"""

from __future__ import annotations

import logging
import os
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


class WarmupState:
    """What the warm-up of this server process did (for logs and tests)."""

    def __init__(self) -> None:
        self.started = False
        self.thread: threading.Thread | None = None
        self.returncode: int | None = None
        self.seconds: float | None = None
        self.error: str | None = None


state = WarmupState()
_lock = threading.Lock()


def warmup_enabled() -> bool:
    """Off under pytest (AppTest sessions must not start processes) and when ``DPDASH_WARMUP`` says so."""
    if os.environ.get("PYTEST_CURRENT_TEST"):
        return False
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


def _command() -> list[str]:
    return [sys.executable, "-m", "ui.warmup"]


#: Warm-up passes, each a fresh process. Which small programs an MST run compiles varies a little from process to
#: process (measured: after one pass a page-like run still compiled 4–6 programs and took 10.1–10.5 s; after two,
#: 1 program and 7.2 s; with a cache filled by many runs, 6.2 s), so a second pass fills most of the rest.
PASSES = 2


def _run(command: list[str]) -> None:
    t0 = time.perf_counter()
    try:
        for _ in range(PASSES):
            proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800)
            state.returncode = proc.returncode
            if proc.returncode != 0:
                state.error = proc.stderr[-500:]
                logger.warning("JAX warm-up failed (%s): %s", proc.returncode, state.error)
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


if __name__ == "__main__":
    if hasattr(os, "nice"):
        os.nice(NICE)  # here, not via preexec_fn: the server that starts this process runs threads
    out = warm_synthesizers()
    print(" ".join(f"{k} {v:.1f} s" for k, v in out.items()))
