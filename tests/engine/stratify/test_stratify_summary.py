"""The stratified mean from a group summary gives the microdata's answer (issue 24 item 3, first half).

A data holder summarises the rows where they live (group, size, clipped sum, bounds); the page runs the same
Laplace releases from those sums. With the same seed both runs give the same estimates. The clipped sums are also
checked against a plain loop over the rows; the bounds against C(m) = R + √log(m/γ) written out (S4 L113, E1–E2).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpdash.stratify import core as S


def _data(seed=3):
    rng = np.random.default_rng(seed)
    sizes = [3, 25, 400, 1500, 2]
    g = np.repeat(np.arange(5), sizes)
    x = rng.normal(np.repeat([2.0, -1.0, 0.3, 0.0, 5.0], sizes), 1.5)
    perm = rng.permutation(g.size)  # rows in no particular order, as in a file
    return x[perm], g[perm]


@pytest.mark.parametrize("min_frac,small", [(0.0, "pool"), (0.002, "pool"), (0.002, "drop")])
@pytest.mark.parametrize("mode", ["paper", "rigorous"])
def test_summary_reproduces_the_microdata_run(min_frac, small, mode):
    x, g = _data()
    kw = dict(R=3.0, gamma=0.05, mode=mode, min_frac=min_frac, small_strata=small)
    summary = S.summarise_groups(x, g, **kw)
    # Round trip through CSV text, as a file handed over would travel.
    summary = pd.read_csv(pd.io.common.StringIO(summary.to_csv(index=False)))
    a = S.run_mean_experiment_on_data(x, g, epsilons=(0.5, 2.0), reps=7, rng=42, **kw)
    b = S.run_mean_experiment_on_summary(summary, epsilons=(0.5, 2.0), reps=7, rng=42, **kw)
    assert list(a.columns) == list(b.columns) and len(a) == len(b)
    for col in ("rep", "epsilon", "method", "level", "group", "n_i"):
        assert a[col].tolist() == b[col].tolist(), col
    for col in ("estimate", "truth", "abs_err"):
        np.testing.assert_allclose(b[col].to_numpy(float), a[col].to_numpy(float), rtol=1e-10, atol=1e-12,
                                   err_msg=col)
    # A different seed gives different noise (the test can fail).
    c = S.run_mean_experiment_on_summary(summary, epsilons=(0.5, 2.0), reps=7, rng=43, **kw)
    assert not np.allclose(c["estimate"], a["estimate"], equal_nan=True)


def test_summary_sums_and_bounds_by_hand():
    x, g = _data()
    summary = S.summarise_groups(x, g, R=3.0, gamma=0.05)
    sizes = np.bincount(g)
    n = int(sizes.sum())
    width = {m: 3.0 + math.sqrt(math.log(m / 0.05)) for m in (*sizes.tolist(), n)}
    for row in summary.itertuples():
        assert row.size == sizes[row.group]
        assert row.upper == pytest.approx(width[n]) or row.upper == pytest.approx(width[sizes[row.group]])
        vals = [v for v, gi in zip(x, g) if gi == row.group]
        assert row.clipped_sum == pytest.approx(sum(max(-row.upper, min(row.upper, v)) for v in vals))
        assert row.sum == pytest.approx(sum(vals))
    # Each group has its C(n) row and its own C(|G_i|) row.
    assert sorted(summary.groupby("group").size().tolist()) == [2] * 5


def test_summary_at_other_bounds_is_refused_with_the_bounds_needed():
    x, g = _data()
    summary = S.summarise_groups(x, g, R=2.0, gamma=0.05)
    with pytest.raises(ValueError, match="no clipped sum at the bounds"):
        S.run_mean_experiment_on_summary(summary, epsilons=(1.0,), R=3.0, gamma=0.05, reps=2, rng=0)
    bad = summary.assign(clipped_sum=summary["clipped_sum"] + 1e6)
    with pytest.raises(ValueError, match="exceeds size × bound"):
        S.run_mean_experiment_on_summary(bad, epsilons=(1.0,), R=2.0, gamma=0.05, reps=2, rng=0)
    with pytest.raises(ValueError, match="needs the columns"):
        S.run_mean_experiment_on_summary(summary.drop(columns="upper"), epsilons=(1.0,), R=2.0, gamma=0.05,
                                         reps=2, rng=0)


def test_summary_without_raw_sums_measures_against_the_clipped_means():
    x, g = _data()
    summary = S.summarise_groups(x, g, R=3.0, gamma=0.05, with_sum=False)
    out = S.run_mean_experiment_on_summary(summary, epsilons=(1.0,), R=3.0, gamma=0.05, reps=1, rng=0)
    n = g.size
    Cn = 3.0 + math.sqrt(math.log(n / 0.05))
    pop = out[(out["level"] == "population") & (out["method"] == "naive")]["truth"].iloc[0]
    assert pop == pytest.approx(np.clip(x, -Cn, Cn).mean())
