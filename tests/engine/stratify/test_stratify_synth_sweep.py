"""dpdash.stratify.synth_sweep: the viewer's ε sweep gives the same numbers one fit at a time, on local worker
processes and on a Dask LocalCluster (issue 16), and each point equals a direct single fit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from joblib import parallel_config

from dpdash.stratify import synth_sweep as SW
from dpdash.stratify import synth as Y
from tests.conftest import plain_main_module

EPS = (0.5, 5.0)


@pytest.fixture(scope="module")
def table():
    return Y.make_categorical_population(1200, 3, 1.0, rng=np.random.default_rng(3))


def test_sweep_points_equal_direct_fits_and_are_ordered(table):
    long = SW.synth_epsilon_sweep(table, synthesizer="independent", rng=2, epsilons=EPS, n_jobs=1)
    assert list(long.drop_duplicates(["epsilon", "variant"])[["epsilon", "variant"]].itertuples(index=False,
                name=None)) == [(0.5, "vanilla"), (0.5, "stratified"), (5.0, "vanilla"), (5.0, "stratified")]
    train, test = Y.train_test_split_table(table, rng=2)
    run = Y.fit_and_evaluate(train, test, domain=table.domain, synthesizer="independent", epsilon=5.0,
                             variant="stratified", group_cols=list(table.group_cols), label_col=table.label_col,
                             rng=2, min_frac=0.001, small_strata="drop")
    got = long[(long["epsilon"] == 5.0) & (long["variant"] == "stratified") & (long["metric"] == "workload_global")]
    assert float(got["value"].iloc[0]) == run.metrics.workload_global


@pytest.mark.slow
def test_sweep_identical_on_processes_and_on_a_local_cluster(table):
    distributed = pytest.importorskip("distributed")
    ref = SW.synth_epsilon_sweep(table, synthesizer="independent", rng=2, epsilons=EPS, n_jobs=1)
    seen = []
    procs = SW.synth_epsilon_sweep(table, synthesizer="independent", rng=2, epsilons=EPS, n_jobs=2,
                                   progress=lambda f, m: seen.append(f))
    pd.testing.assert_frame_equal(ref, procs)
    assert seen[-1] == 1.0 and len(seen) == 4
    with plain_main_module(), distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                                     dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        client.wait_for_workers(2, timeout=60)
        with parallel_config(backend="dask", client=client):
            dask = SW.synth_epsilon_sweep(table, synthesizer="independent", rng=2, epsilons=EPS, n_jobs=2)
    pd.testing.assert_frame_equal(ref, dask)


def test_mbi_path_runs_eps_by_eps_through_the_variants_fan_out(table, monkeypatch):
    """MST/AIM sweeps call ``fit_and_evaluate_variants`` once per ε (it fans out the per-stratum fits itself) and
    report progress over the whole sweep. Stand-in: the variants function fits the built-in synthesizer, so the
    result must equal the built-in sweep row for row."""
    ref = SW.synth_epsilon_sweep(table, synthesizer="independent", rng=2, epsilons=EPS, n_jobs=1)
    calls, seen = [], []
    real = Y.fit_and_evaluate_variants

    def variants(train, test, *, synthesizer, epsilon, variants, n_jobs, progress, **kw):
        calls.append((synthesizer, epsilon, n_jobs))
        progress(0.5, "half")
        with monkeypatch.context() as m:  # the real function calls itself through the module: restore it inside
            m.setattr(Y, "fit_and_evaluate_variants", real)
            return real(train, test, synthesizer="independent", epsilon=epsilon, variants=variants, n_jobs=1, **kw)

    monkeypatch.setattr(Y, "fit_and_evaluate_variants", variants)
    got = SW.synth_epsilon_sweep(table, synthesizer="mst", rng=2, epsilons=EPS, n_jobs=3,
                                 progress=lambda f, m: seen.append((f, m)))
    assert calls == [("mst", 0.5, 3), ("mst", 5.0, 3)]
    assert seen == [(0.25, "ε = 0.5: half"), (0.75, "ε = 5: half")]
    pd.testing.assert_frame_equal(got, ref)
    with pytest.raises(ValueError, match="empty"):
        SW.synth_epsilon_sweep(table, synthesizer="independent", rng=2, epsilons=())
