"""Shared test setup: the repo root on sys.path, and hypothesis profiles.

Profiles (``--hypothesis-profile`` or the ``HYPOTHESIS_PROFILE`` variable; default ``ci`` under ``CI``, else
``dev``):

- ``ci``: derandomised, so the same examples run on every CI run and a failure reproduces as is;
- ``ci-random``: a fresh random seed per CI run (``make test`` draws it, prints it, and passes it as
  ``--hypothesis-seed``), run on the property tests of the engine only, so the suite is not doubled;
  replay a failure with ``make test-hypothesis-random HYPOTHESIS_SEED=<the printed seed>``;
- ``dev``: random, for local exploration.
"""

import contextlib
import os
import sys
import types
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

_COMMON = dict(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", derandomize=True, **_COMMON)
settings.register_profile("ci-random", derandomize=False, print_blob=True, **_COMMON)
settings.register_profile("dev", **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


def _pool_workers_at_the_callers_priority() -> None:
    """Run the engine's pool workers at the test process's own priority in this process (and in the AppTest pages
    it runs), not at ``WORKER_NICE`` (10) below it.

    On a server the niceness makes heavy runs yield the cores to the process that draws every session's pages. Under
    ``pytest -n 2`` on two cores the other test process is always busy at niceness 0, so a test's workers at +10 got
    a small share of a core (a full run on a loaded box spent 570 s in one partially private release test and 534 s
    in the coherence paper test). Each pool passes the starter's value to its workers, so the value set here reaches
    them; the browser tests' servers are separate processes and keep the product's niceness, and
    tests/engine/common/test_parallel.py sets it back to check it.
    """
    from dpdash.common import parallel

    parallel.WORKER_NICE = 0


_pool_workers_at_the_callers_priority()


def _share_compiled_pages() -> None:
    """Compile each page once per test process, as the server does, instead of once per AppTest run.

    Streamlit's server keeps one ``ScriptCache`` for its lifetime, so a page is parsed, rewritten for "magic" and
    compiled once. AppTest builds a fresh cache for every ``run()``, so each rerun recompiled the whole page: a
    py-spy profile of the epsilon calculator's walk (2026-11-24) spent 45% of the script thread's time in
    ``ScriptCache.get_bytecode``. One cache per process, keyed by the file's path, size and modification time
    (a test that rewrites a script gets it recompiled), keeps what the page runs identical and removes that cost.
    """
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import local_script_runner

    class _SharedScriptCache(ScriptCache):
        def get_bytecode(self, script_path: str):
            path = os.path.abspath(script_path)
            try:
                st_ = os.stat(path)
                key = (path, st_.st_size, st_.st_mtime_ns)
            except OSError:
                return super().get_bytecode(script_path)
            with _LOCK:
                code = _COMPILED.get(key)
            if code is None:
                code = ScriptCache().get_bytecode(path)
                with _LOCK:
                    _COMPILED[key] = code
            return code

    shared = _SharedScriptCache()
    local_script_runner.ScriptCache = lambda: shared


_COMPILED: dict[tuple, object] = {}
_LOCK = __import__("threading").Lock()
_share_compiled_pages()


def pytest_report_header(config):
    """Name the Hypothesis profile and seed in the header, so a failing random run can be replayed."""
    seed = config.getoption("--hypothesis-seed", default=None)
    profile = settings.get_current_profile_name()
    if seed is None:
        return f"hypothesis: profile {profile!r}"
    return (f"hypothesis: profile {profile!r}, seed {seed} (replay: make test-hypothesis-random "
            f"HYPOTHESIS_SEED={seed})")


@contextlib.contextmanager
def plain_main_module():
    """Hide a page script that an earlier AppTest left installed as ``__main__`` while worker processes start.

    Streamlit's script runner installs the page it runs as ``sys.modules["__main__"]``; multiprocessing's spawn
    start method (Dask's Nanny) then re-runs that page in every new worker, which fails outside a session. A
    LocalCluster started after any AppTest in the same pytest-xdist worker needs a plain ``__main__``.
    """
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved


#: Test files in the order xdist hands them out (``--no-loadscope-reorder`` in the Makefile; by default its loadfile
#: scheduler sorts files by their number of tests, which put the one-test walks last, run alone for minutes).
#: The long files start first, so the short ones fill the gaps at the end, and CPU-bound files (AppTest walks and
#: pages) alternate in pairs with browser files: a browser test spends about half its time waiting on the server
#: and Chromium, and a CPU-bound file on the other worker uses that time. xdist gives each worker its first file,
#: then each its second, then a file to whichever runs low, so the pairs (W B B W …) start each worker with one
#: of each. Times under `make test` on 2026-11-24, two workers: walks 32–85 s, browser files 25–80 s.
LONG_FIRST = (
    "tests/e2e/test_random_walk.py", "tests/product/test_epsilon_calculator_walk.py",
    "tests/e2e/test_presenter_every_tab.py", "tests/privacy/", "tests/e2e/test_sessions.py",
    "tests/e2e/test_no_outside_requests.py",
    "tests/e2e/test_settings_roundtrip_e2e.py", "tests/product/test_stratified_synthesis_viewer_walk.py",
    "tests/product/test_sampling_designer_walk.py", "tests/e2e/test_coherence_explorer_e2e.py",
    "tests/e2e/test_epsilon_calculator_e2e.py", "tests/product/test_coherence_explorer_walk.py",
    "tests/product/test_leximax_cohort_picker_walk.py", "tests/e2e/test_report_e2e.py",
    "tests/attack/test_browser_attacks.py", "tests/attack/test_hostile_links.py",
    "tests/pages/test_sampling_designer_page.py", "tests/e2e/test_stratified_synthesis_viewer_e2e.py",
    "tests/e2e/test_sampling_designer_e2e.py", "tests/pages/test_epsilon_calculator_page.py",
    "tests/engine/stratify/test_ppd.py", "tests/e2e/test_leximax_cohort_picker_e2e.py", "tests/e2e/", "tests/pages/",
    "tests/engine/stratify/test_synth.py",
)


def _rank(item) -> int:
    path = item.nodeid.split("::", 1)[0]
    return next((i for i, prefix in enumerate(LONG_FIRST) if path.startswith(prefix)), len(LONG_FIRST))


#: Test layers not traced for coverage (pytest-cov's ``no_cover``): they drive whole pages (AppTest, or a server
#: and Chromium) and their value is what the page shows, checked by their oracles. Tracing made them much slower
#: (measured 2026-11-25: the epsilon and sampling page tests 58 s untraced, 101 s traced; a walk ~80% more), and the
#: engine's coverage floor, in total and per module, is met by the engine tests and doctests alone.
UNTRACED = ("tests/pages/", "tests/product/", "tests/e2e/", "tests/attack/")


def pytest_collection_modifyitems(config, items):
    items.sort(key=_rank)  # stable: each file's tests stay together and in their order
    for item in items:
        if item.nodeid.startswith(UNTRACED):
            item.add_marker(pytest.mark.no_cover)
