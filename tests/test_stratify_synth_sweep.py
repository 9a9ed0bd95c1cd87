"""engine.stratify_synth_sweep: the viewer's ε sweep gives the same numbers one fit at a time, on local worker
processes and on a Dask LocalCluster (issue 16), and each point equals a direct single fit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from joblib import parallel_config

from engine import stratify_synth_sweep as SW
from engine import synth as Y
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
