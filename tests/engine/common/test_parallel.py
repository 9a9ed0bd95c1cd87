"""Tests for dpdash/common/parallel.py (issue 16): one fan-out helper, no backend named in the engine, and every
fan-out function returns exactly the ``n_jobs=1`` result on a Dask LocalCluster (2 worker processes,
1 thread each) and on local processes.

The reference for every fan-out check is the same engine function run with ``n_jobs=1`` (all tasks in this
process, in order): the issue's requirement is that the backend changes nothing, so the reference is
independent of the backend under test. Each check also asserts the work really ran on the cluster.
"""

from __future__ import annotations

import ast
import math
import os
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from joblib import parallel_config
from joblib.parallel import BACKENDS

from dpdash.coherence import core as co
from dpdash.stratify import partial_release as ppd
from dpdash.epsilon import private_tests as P
from dpdash.stratify import synth as Y
from dpdash.common.data import census_population
from dpdash.common.parallel import child_seed, imap_unordered, map_ordered, spawn_seeds
from tests.conftest import plain_main_module

distributed = pytest.importorskip("distributed")  # pinned in requirements.txt; always present in CI

ROOT = Path(__file__).resolve().parents[3]
BACKEND_NAMES = set(BACKENDS) | {"dask", "loky", "multiprocessing", "threading", "sequential", "ray", "spark"}


@pytest.fixture(scope="module")
def dask_client():
    """A LocalCluster with 2 worker processes × 1 thread, started once for this module."""
    with plain_main_module(), distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                                     dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        client.wait_for_workers(2, timeout=60)
        yield client


def _on_cluster(client, fn):
    """Run ``fn()`` with the fan-out on the cluster; return its result and how many tasks the workers ran."""
    with distributed.get_task_stream(client) as ts, parallel_config(backend="dask", client=client):
        out = fn()
    return out, len(ts.data)


# ------------------------------------------------------------------------------------------ no backend named
def _engine_modules():
    return sorted((ROOT / "engine" / "dpdash").rglob("*.py"))


def test_no_engine_module_names_a_joblib_backend():
    offenders = []
    for path in _engine_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "backend" and isinstance(node.value, ast.Constant):
                if node.value.value is not None:
                    offenders.append(f"{path.name}:{node.lineno} backend={node.value.value!r}")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in BACKEND_NAMES:
                # The one allowed name: threads for calls nested *inside* a task (never where tasks run).
                if not (path.name == "parallel.py" and node.value == "threading"):
                    offenders.append(f"{path.name}:{node.lineno} {node.value!r}")
    assert not offenders, offenders
    assert len(_engine_modules()) > 10  # the scan really saw the engine


def test_only_the_helper_builds_a_joblib_pool():
    users = []
    for path in _engine_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("joblib"):
                if any(a.name in ("Parallel", "delayed") for a in node.names) and path.name != "parallel.py":
                    users.append(path.name)
    assert not users, users


# ------------------------------------------------------------------------------------------ the helper itself
def test_sequential_path_keeps_task_order_and_runs_here():
    assert list(imap_unordered(divmod, [(7, 2), (9, 4), (1, 5)], n_jobs=1)) == [(0, (3, 1)), (1, (2, 1)),
                                                                                  (2, (0, 1))]
    assert {pid for _, pid in imap_unordered(os.getpid, [()] * 3, n_jobs=1)} == {os.getpid()}
    assert list(imap_unordered(divmod, [], n_jobs=4)) == []


@pytest.mark.parametrize("bad", [0, 1.5, "2", True])
def test_bad_n_jobs_is_refused(bad):
    with pytest.raises(ValueError, match="n_jobs"):
        list(imap_unordered(divmod, [(1, 1)], n_jobs=bad))


def test_default_is_local_processes_and_parallel_config_is_honoured():
    here = os.getpid()
    procs = {pid for _, pid in imap_unordered(os.getpid, [()] * 6, n_jobs=2)}
    assert here not in procs  # worker processes by default
    with parallel_config(backend="threading"):
        threads = {pid for _, pid in imap_unordered(os.getpid, [()] * 6, n_jobs=2)}
    assert threads == {here}  # the caller's configuration decides


def test_results_stream_in_completion_order():
    with parallel_config(backend="threading"):
        order = [i for i, _ in imap_unordered(time.sleep, [(0.8,), (0.01,), (0.01,)], n_jobs=2)]
    assert order[0] != 0 and order[-1] == 0 and sorted(order) == [0, 1, 2]


def test_backend_that_cannot_stream_gets_ordered_rounds():
    # joblib's multiprocessing backend refuses return_as="generator_unordered": results must still all arrive.
    seen = []
    with parallel_config(backend="multiprocessing"):
        out = map_ordered(pow, [(i, 2) for i in range(30)], n_jobs=2, progress=lambda d, t: seen.append((d, t)))
    assert out == [i * i for i in range(30)]
    assert seen == [(d, 30) for d in range(1, 31)]


def test_spawn_seeds_match_numpy_spawn_and_do_not_drift():
    ref = np.random.SeedSequence(2024).spawn(5)
    root = np.random.SeedSequence(2024)
    first, second = spawn_seeds(root, 5), spawn_seeds(root, 5)
    for a, b, c in zip(ref, first, second):
        assert a.generate_state(4).tolist() == b.generate_state(4).tolist() == c.generate_state(4).tolist()
    assert [s.spawn_key for s in spawn_seeds(7, 3)] == [(0,), (1,), (2,)]
    g = np.random.default_rng(7)
    assert spawn_seeds(g, 2)[1].generate_state(2).tolist() == np.random.SeedSequence(7).spawn(2)[1] \
        .generate_state(2).tolist()


def test_child_seed_is_numpy_spawn_child_for_every_kind_of_seed():
    ref = np.random.SeedSequence(31).spawn(4)[3].generate_state(3).tolist()
    for seed in (31, np.random.SeedSequence(31), np.random.default_rng(31)):
        assert child_seed(seed, 3).generate_state(3).tolist() == ref
    nested = np.random.SeedSequence(31).spawn(2)[1]
    assert child_seed(nested, 0).generate_state(2).tolist() == nested.spawn(1)[0].generate_state(2).tolist()


def test_dask_backend_runs_tasks_on_the_workers_and_streams(dask_client):
    worker_pids = set(dask_client.run(os.getpid).values())
    pids, n_tasks = _on_cluster(dask_client, lambda: {p for _, p in imap_unordered(os.getpid, [()] * 8, n_jobs=2)})
    assert pids and pids <= worker_pids and os.getpid() not in pids and n_tasks >= 1
    with parallel_config(backend="dask", client=dask_client):
        order = [i for i, _ in imap_unordered(time.sleep, [(1.0,), (0.01,), (0.01,)], n_jobs=2)]
    assert order[0] != 0 and sorted(order) == [0, 1, 2]  # the quick task on the other worker comes back first


def test_inner_joblib_calls_stay_in_the_task(dask_client):
    # A random forest's trees (joblib n_jobs=1 inside a task) must not go back to the cluster as tiny tasks:
    # Dask's backend alone sends them there (checked first), the helper keeps them in the task's thread.
    import threading

    from joblib import Parallel, delayed

    def where():
        return os.getpid(), threading.get_ident()

    def probe():  # closures: shipped by value, so the workers need not import this test module
        return where(), Parallel(n_jobs=1)(delayed(where)() for _ in range(4))

    def in_dask_batch():
        with parallel_config(backend="dask"):  # what joblib's Dask batch wrapper sets around every task
            return probe()

    with parallel_config(backend="dask", client=dask_client):
        raw = dask_client.submit(in_dask_batch, pure=False).result()
        helper = map_ordered(probe, [()] * 2, n_jobs=2)
    assert any(inner != raw[0] for inner in raw[1])  # without the helper: inner calls leave the task
    assert all(set(inner) == {outer} for outer, inner in helper)


def test_an_input_shared_by_all_tasks_goes_to_the_cluster_once(dask_client):
    # A dataclass of arrays looks tiny to Dask's sizeof (its shell only), so without the helper's wrapper it
    # would travel inside every task; wrapped, joblib scatters it once and tasks refer to it by key.
    from types import SimpleNamespace

    from dask.sizeof import sizeof

    shared = SimpleNamespace(values=np.arange(200_000, dtype=float))
    assert sizeof(shared) < 1_000  # the trap

    def held_keys(obj, i):  # a closure: shipped by value
        from distributed import get_worker

        return float(obj.values.sum()) + i, sorted(str(k) for k in get_worker().data)

    with parallel_config(backend="dask", client=dask_client):
        out = map_ordered(held_keys, [(shared, i) for i in range(4)], n_jobs=2)
    total = float(shared.values.sum())
    assert [v for v, _ in out] == [total + i for i in range(4)]
    assert all(any(k.startswith("_Shared-") for k in keys) for _, keys in out)


# ------------------------------------------------------------------------------------------ every fan-out
LENS = ("AGEP", "DENSITY", "INDP_CAT", "INDP", "SEX", "EDU", "HISP", "RAC1P")
GROUPS = (co.GroupSpec("Everyone"), co.GroupSpec("DREM = 1", (co.Condition("DREM", values=(1,)),)))


@pytest.fixture(scope="module")
def pop() -> pd.DataFrame:
    return census_population(3000, rng=3)


@pytest.mark.slow
def test_coherence_repetitions_identical_on_cluster_and_processes(dask_client, pop):
    cfg = co.ExperimentConfig("DREM", 1, LENS, GROUPS, co.ReleaseSpec(), co.LearnerSpec(n_estimators=10),
                              repetitions=6, rng=5)
    ref = co.run_experiment(pop, cfg, n_jobs=1)
    seen = []
    got, n_tasks = _on_cluster(dask_client, lambda: co.run_experiment(pop, cfg, n_jobs=2,
                                                                     progress=lambda d, t: seen.append(d)))
    local = co.run_experiment(pop, cfg, n_jobs=2)
    assert n_tasks >= 1 and seen == list(range(1, 7))
    assert np.isfinite(ref.w1).all() and ref.w1.shape == (6, 2)
    for other in (got, local):
        np.testing.assert_array_equal(other.w1, ref.w1)
        np.testing.assert_array_equal(other.half_sizes, ref.half_sizes)
        np.testing.assert_array_equal(other.first_trial.predictions_a, ref.first_trial.predictions_a)
    # not trivially equal: another seed gives other distances
    assert not np.array_equal(co.run_experiment(pop, replace(cfg, rng=6), n_jobs=1).w1, ref.w1)


def test_coherence_epsilon_sweep_identical_on_cluster(dask_client, pop):
    cfg = co.ExperimentConfig("DREM", 1, ("AGEP", "SEX", "EDU"), GROUPS,
                              co.ReleaseSpec(kind="dp_histogram", epsilon=1.0, binned=True, bins=4),
                              co.LearnerSpec("decision_tree"), repetitions=3, rng=2)
    eps = [0.3, math.inf]
    ref = co.run_epsilon_sweep(pop, cfg, eps, n_jobs=1)
    got, n_tasks = _on_cluster(dask_client, lambda: co.run_epsilon_sweep(pop, cfg, eps, n_jobs=2))
    assert n_tasks >= 1 and len(ref) == 4
    pd.testing.assert_frame_equal(got, ref)


def _strata_frame(sizes):
    g = np.repeat(np.arange(len(sizes)), sizes)
    r = np.random.default_rng(0)
    return pd.DataFrame({"g": g, "v": r.integers(0, 3, g.size)}), {"g": len(sizes), "v": 3}


@pytest.mark.parametrize("make", [lambda: Y.IndependentLaplace(1.0), lambda: Y.MWEM(0.7, rounds=3)],
                         ids=["independent", "mwem"])
def test_synth_per_stratum_fits_identical_on_cluster(dask_client, make):
    df, dom = _strata_frame([600, 300, 100, 5])

    def fit(n_jobs):
        s = Y.StratifiedSynthesizer(make, ["g"], min_frac=0.01, small_strata="pool")
        s.fit(df, dom, rng=11, n_jobs=n_jobs)
        return s.sample(1000, rng=4)

    ref = fit(1)
    got, n_tasks = _on_cluster(dask_client, lambda: fit(2))
    assert n_tasks >= 1
    pd.testing.assert_frame_equal(got, ref)


def test_ppd_wem_chains_identical_on_cluster(dask_client):
    panel = ppd.synth_pa_like()
    kw = dict(epsilons=[0.5, 2], methods=["pp", "wem_congenial", "wem_prior"], alphas=[0.1], reps=2, sweeps=2,
              rng=5)
    ref = ppd.run_partially_private_release(panel, 7, n_jobs=1, **kw)
    seen = []
    got, n_tasks = _on_cluster(dask_client, lambda: ppd.run_partially_private_release(
        panel, 7, n_jobs=2, progress=lambda f, m: seen.append(f), **kw))
    assert n_tasks >= 1 and len(seen) == 2 * 2 * 3 and seen[-1] == 1.0
    pd.testing.assert_frame_equal(got, ref)


def test_private_test_grid_identical_on_cluster(dask_client):
    p0 = np.full(4, 0.25)
    p1 = p0 + 0.03 * np.array([1, -1, -1, 1])
    kw = dict(ns=[500, 3000], privacy=[0.05], alpha=0.05, noise="gaussian", trials=200, m=59, rng=42, chunk=100)
    ref = P.simulate_grid("gof", p0, p1, n_jobs=1, **kw)
    got, n_tasks = _on_cluster(dask_client, lambda: P.simulate_grid("gof", p0, p1, n_jobs=2, **kw))
    assert n_tasks >= 1 and len(ref) == 2 * 2 * len(P.GOF_TESTS)
    pd.testing.assert_frame_equal(got, ref)


@pytest.mark.slow
def test_synth_mst_per_stratum_fits_identical_on_cluster(dask_client):
    # The stratified viewer's MST fits: fitted JAX models come back pickled from the workers; the sample must
    # equal the in-process fits (float64 kept, per-stratum seeds). Tiny on purpose: JAX compiles per process.
    df, dom = _strata_frame([400, 300])
    df["w"] = (df["v"] + df["g"]) % 2
    dom = {**dom, "w": 2}

    def fit(n_jobs):
        s = Y.StratifiedSynthesizer(lambda: Y.MST(2.0, 1e-9, iters=30), ["g"], min_frac=0.01)
        s.fit(df, dom, rng=11, n_jobs=n_jobs)
        return s.sample(700, rng=4)

    ref = fit(1)
    got, n_tasks = _on_cluster(dask_client, lambda: fit(2))
    assert n_tasks >= 1
    pd.testing.assert_frame_equal(got, ref)


# ------------------------------------------------------------------------------------------ isolation (issue 26)
def _slow_square(x: int) -> int:
    import time as _t

    _t.sleep(0.05)
    return x * x


def test_an_interrupted_run_leaves_another_run_intact():
    """Two callers (two sessions) fan out at once; one closes its generator mid-run (a rerun or a closed tab).

    With joblib's shared executor the other caller failed with ShutdownExecutorError; each run now has its own
    pool, so the survivor finishes with exactly the results it gives alone.
    """
    import threading

    tasks = [(i,) for i in range(40)]
    alone = sorted(imap_unordered(_slow_square, tasks, n_jobs=2))
    survivor: dict = {}

    def run_to_end():
        try:
            survivor["out"] = sorted(imap_unordered(_slow_square, tasks, n_jobs=2))
        except BaseException as exc:  # noqa: BLE001 - the failure is the finding
            survivor["error"] = repr(exc)

    t = threading.Thread(target=run_to_end)
    t.start()
    victim = imap_unordered(_slow_square, tasks, n_jobs=2)
    for _ in range(3):
        next(victim)
    victim.close()  # what Streamlit's StopException does to a run's generator
    t.join(120)
    assert "error" not in survivor, survivor.get("error")
    assert survivor["out"] == alone == [(i, i * i) for i in range(40)]


def test_a_private_pool_is_used_by_default_and_ends_with_its_run():
    from dpdash.common import parallel

    assert parallel._default_processes()
    with parallel_config(backend="threading"):
        assert not parallel._default_processes()
    gen = imap_unordered(os.getpid, [()] * 8, n_jobs=2)
    first = next(gen)
    gen.close()
    assert first[1] != os.getpid()


# ------------------------------------------------------------------------------- lifecycle (issue 35 item 4)
# A child Python process fans out with the helper, each task marking that it started and then sleeping; the test
# ends that process the way a server ends (SIGKILL, or a normal exit with the run still under way) and checks with
# psutil that none of its descendants (loky workers, resource trackers) is left. The tasks sleep instead of
# computing, so the test adds no load; the bounds are the issue's.
_FAN_OUT = """
import os, sys, threading, time
from dpdash.common.parallel import imap_unordered

def task(marker_dir, i):
    open(os.path.join(marker_dir, f"{os.getpid()}-{i}"), "w").close()
    time.sleep(120)
    return i

def run():
    for _ in imap_unordered(task, [(sys.argv[1], i) for i in range(8)], n_jobs=2):
        pass

threading.Thread(target=run, daemon=True).start()  # a daemon thread, as Streamlit's script threads are
if sys.argv[2] == "exit":  # return from the main thread once both tasks run: a normal exit, the run under way
    while len(os.listdir(sys.argv[1])) < 2:
        time.sleep(0.05)
    open(os.path.join(sys.argv[1], "..", "exiting"), "w").close()
else:
    time.sleep(600)
"""


def _start_fan_out(tmp_path, mode: str):
    import subprocess
    import sys

    import psutil

    markers = tmp_path / "m"
    markers.mkdir()
    script = tmp_path / "fan_out.py"
    script.write_text(_FAN_OUT)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, str(script), str(markers), mode], cwd=ROOT, env=env,
                            start_new_session=True)
    return proc, psutil.Process(proc.pid), markers


def _wait_for(cond, timeout: float, step: float = 0.2) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(step)
    return cond()


def _alive(procs) -> list:
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != "zombie":
                out.append(p)
        except Exception:  # psutil.NoSuchProcess: gone
            pass
    return out


def _kill_group(proc) -> None:
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait(10)


def _family(parent) -> list:
    try:
        return parent.children(recursive=True)
    except Exception:  # the parent is gone
        return []


@pytest.mark.slow
@pytest.mark.parametrize("when", ["running", "starting"])
def test_workers_of_a_sigkilled_process_exit_on_their_own(tmp_path, when):
    """SIGKILL the fanning-out process: its workers and their resource trackers exit within 60 s (they watch their
    parent). "starting": killed as soon as the workers exist, before they run a task (a worker that finds its parent
    already gone must exit too, not watch PID 1)."""
    import signal

    proc, parent, markers = _start_fan_out(tmp_path, "stay")
    try:
        def workers():
            return [c for c in _family(parent) if "popen_loky_posix" in " ".join(c.cmdline())]
        if when == "running":
            assert _wait_for(lambda: len(list(markers.iterdir())) >= 2, 120), "the tasks never started"
        else:
            assert _wait_for(lambda: len(workers()) >= 2, 120, step=0.02), "no workers started"
        family = _family(parent)
        assert len(family) >= 3  # two workers and at least one resource tracker
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        t0 = time.monotonic()
        gone = _wait_for(lambda: not _alive(family), 60)
        assert gone, f"still alive 60 s after SIGKILL: {[' '.join(p.cmdline())[-60:] for p in _alive(family)]}"
        print(f"descendants gone {time.monotonic() - t0:.1f} s after SIGKILL")
    finally:
        _kill_group(proc)  # whatever happens, nothing of this test stays behind (the group: workers included)


@pytest.mark.slow
def test_a_normal_exit_ends_a_run_under_way_within_10_s(tmp_path):
    """The main thread returns while a daemon thread's run is under way (what Streamlit does on SIGTERM or Ctrl-C):
    the interpreter exits within 10 s and takes every worker along. Loky's own exit hook would wait for the tasks
    (two minutes each here)."""
    proc, parent, markers = _start_fan_out(tmp_path, "exit")
    try:
        assert _wait_for(lambda: len(list(markers.iterdir())) >= 2, 120), "the tasks never started"
        family = _family(parent)
        assert _wait_for(lambda: (tmp_path / "exiting").exists(), 30)
        t0 = time.monotonic()
        proc.wait(10)  # raises TimeoutExpired (the test fails) if the interpreter waits for the run
        assert _wait_for(lambda: not _alive(family), 10 - (time.monotonic() - t0)), \
            f"still alive: {[' '.join(p.cmdline())[-60:] for p in _alive(family)]}"
    finally:
        _kill_group(proc)


def test_watch_parent_exits_a_process_whose_parent_is_already_gone(tmp_path):
    """A process told its parent's pid exits at once when that is no longer its parent (started too late)."""
    import subprocess
    import sys

    code = "from dpdash.common.parallel import watch_parent; import time; watch_parent(parent=1234567); " \
           "time.sleep(30); print('still here')"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0 and "still here" not in out.stdout


def _niceness() -> int:
    return os.nice(0)


def test_pool_workers_run_at_a_lower_priority_than_their_caller(monkeypatch):
    """Issue 35 item 2: heavy runs' workers yield the cores to the server process that draws the pages.

    tests/conftest.py runs the workers at the caller's priority (WORKER_NICE = 0) for the suite's speed; the product's
    value is the module's own, read from its source here, and set back for this test (each pool passes it to its
    workers)."""
    import ast
    import inspect

    from dpdash.common import parallel

    tree = ast.parse(inspect.getsource(parallel))
    product = next(n.value.value for n in tree.body if isinstance(n, ast.Assign)
                   and any(getattr(t, "id", None) == "WORKER_NICE" for t in n.targets))
    assert product >= 5
    monkeypatch.setattr(parallel, "WORKER_NICE", product)
    here = os.nice(0)
    got = {v for _, v in imap_unordered(_niceness, [()] * 2, n_jobs=2)}
    assert got == {min(19, here + product)}
