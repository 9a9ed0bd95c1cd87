"""The stratified synthesis viewer's ε sweep: one model vs one model per group at each ε of a grid.

Fans out through :mod:`dpdash.common.parallel` (no backend named here: a caller's ``joblib.parallel_config`` may send
the
fits to a Dask cluster). Every fit is seeded from ``seed`` alone (``dpdash.stratify.synth.fit_and_evaluate`` derives its
randomness from it), so the result is identical for any backend and any number of workers.

References
----------
Seed ``004_c5ca305e20a1adba.txt`` (Rosenblatt, Stoyanovich & Musco), *Stratified Data Synthesis* (L216–238) and the
paper's ε grid; issue 16 (fan-out through one helper, identical results on any backend).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd

from dpdash.common import parallel
from dpdash.stratify import core as S
from dpdash.stratify import synth as Y
from dpdash.common.validation import as_generator

#: Synthesizers that fan out inside one fit (one process per stratum model): their sweep runs ε by ε.
MBI_SYNTHESIZERS = ("mst", "aim")


def _long(run: Y.SynthRun, epsilon: float, variant: str) -> pd.DataFrame:
    long = Y.metrics_long(run.metrics)
    long.insert(0, "variant", variant)
    long.insert(0, "epsilon", epsilon)
    long.insert(0, "rep", 0)
    return long


def _fit_one(table, synthesizer: str, epsilon: float, variant: str, seed: int, min_frac: float, small_strata: str,
             classifier: str) -> pd.DataFrame:
    train, test = Y.train_test_split_table(table, rng=seed)
    run = Y.fit_and_evaluate(train, test, domain=table.domain, synthesizer=synthesizer, epsilon=epsilon,
                             variant=variant, group_cols=list(table.group_cols), label_col=table.label_col, rng=seed,
                             min_frac=min_frac, small_strata=small_strata, classifier=classifier)
    return _long(run, epsilon, variant)


def synth_epsilon_sweep(table, *, synthesizer: str, rng, min_frac: float = 0.001, small_strata: str = "drop",
                        classifier: str = "logreg", epsilons: Sequence[float] = S.PAPER_EPSILONS,
                        n_jobs: int = 1, progress: Callable[[float, str], None] | None = None) -> pd.DataFrame:
    """Metrics of the vanilla and stratified synthesizer at each ε (long format: rep, epsilon, variant, metric,
    group, value), rows ordered by ε then variant whatever order the fits finish in.

    Built-in synthesizers: the (ε, variant) fits are independent tasks over ``n_jobs`` workers. MST/AIM: ε by ε,
    each fitting its vanilla model and every stratum's model over ``n_jobs`` workers
    (``dpdash.stratify.synth.fit_and_evaluate_variants``). ``progress(fraction, message)`` follows the fits. ``rng``: an
    integer seed used by every fit (a Generator gives one draw below 2³² as that seed).
    """
    seed = int(rng) if isinstance(rng, (int, np.integer)) else int(as_generator(rng).integers(2**32))
    eps = [float(e) for e in epsilons]
    if not eps:
        raise ValueError("epsilons is empty")
    variants = ("vanilla", "stratified")
    if synthesizer in MBI_SYNTHESIZERS:
        train, test = Y.train_test_split_table(table, rng=seed)
        out = []
        for i, e in enumerate(eps):
            def prog(f, msg, i=i, e=e):
                if progress is not None:
                    progress(min((i + f) / len(eps), 1.0), f"ε = {e:g}: {msg}")
            runs = Y.fit_and_evaluate_variants(train, test, domain=table.domain, synthesizer=synthesizer, epsilon=e,
                                               variants=variants, group_cols=list(table.group_cols),
                                               label_col=table.label_col, rng=seed, min_frac=min_frac,
                                               small_strata=small_strata, classifier=classifier, n_jobs=n_jobs,
                                               progress=prog)
            out += [_long(runs[v], e, v) for v in variants]
        return pd.concat(out, ignore_index=True)
    tasks = [(table, synthesizer, e, v, seed, min_frac, small_strata, classifier) for e in eps for v in variants]

    def done(k: int, total: int) -> None:
        if progress is not None:
            progress(k / total, f"{k} of {total} fits done")
    frames = parallel.map_ordered(_fit_one, tasks, n_jobs=n_jobs, progress=done)
    return pd.concat(frames, ignore_index=True)
