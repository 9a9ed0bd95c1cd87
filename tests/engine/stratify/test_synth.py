"""Tests for dpdash/stratify/synth.py: spec §9 X9–X12 worked examples, domain checks, ε-monotonicity, MST/AIM toys."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpdash.stratify import synth as Y
from dpdash.common.data import load_adult


@pytest.fixture(scope="module")
def adult():
    return load_adult()


@pytest.fixture(scope="module")
def adult_split(adult):
    return Y.train_test_split_table(adult)


@pytest.fixture(scope="module")
def toy():
    # Spec §8: 4 columns, ≤ 4 levels, 2,000 rows.
    return Y.make_categorical_population(2000, 3, 1.0, d=2, card=4, rng=0)


def _toy_domain(toy):
    return toy.domain


# --- X11 accounting --------------------------------------------------------------------------------------

def test_x11_cdp_rho():
    assert Y.cdp_rho(1, 1e-9) == pytest.approx(0.01497306, abs=1e-8)
    assert math.sqrt(3 / (2 * Y.cdp_rho(1, 1e-9))) == pytest.approx(10.008993, rel=1e-6)
    assert Y.cdp_rho(0.1, 1e-9) == pytest.approx(0.00017714, abs=1e-7)
    assert Y.cdp_rho(5, 1e-9) == pytest.approx(0.31169326, abs=1e-7)
    with pytest.raises(ValueError):
        Y.cdp_rho(1, 0)
    with pytest.raises(ValueError):
        Y.cdp_rho(0, 1e-9)


def test_cdp_rho_is_a_valid_zcdp_budget():
    # Independent check: Bun–Steinke's ρ + 2√(ρ log 1/δ) ≥ ε-conversion is looser, so CKS ρ must be ≥ its ρ.
    eps, delta = 1.0, 1e-9
    L = math.log(1 / delta)
    rho_bs = (math.sqrt(L + eps) - math.sqrt(L)) ** 2
    assert Y.cdp_rho(eps, delta) >= rho_bs


# --- X9 metric toys --------------------------------------------------------------------------------------

def test_x9_workload_error():
    real = pd.DataFrame({"a": [0, 0, 1, 1, 1, 2], "b": [0, 1, 0, 1, 1, 0]})
    syn = pd.DataFrame({"a": [0, 1, 1, 2], "b": [0, 0, 1, 1]})
    assert Y.workload_error(real, syn, ["a", "b"], way=1) == pytest.approx(0.0833333, rel=1e-6)
    assert Y.workload_error(real, syn, ["a", "b"], way=2) == pytest.approx(0.8333333, rel=1e-6)
    assert Y.workload_error(real, real, ["a", "b"], way=2) == 0.0


def test_x9_dpr_fnr():
    g = np.array(list("AAAAABBBBB"))
    y = np.array([1, 1, 0, 0, 1, 1, 0, 1, 1, 0])
    yh = np.array([1, 0, 0, 1, 1, 0, 0, 1, 0, 0])
    assert Y.demographic_parity_ratio(yh, g) == pytest.approx(1 / 3)
    assert Y.fnr_difference(y, yh, g) == pytest.approx(1 / 3)
    assert math.isnan(Y.demographic_parity_ratio(np.zeros(10), g))


def test_mean_parity_matches_definition_11():
    real = pd.DataFrame({"g": [0, 0, 1, 1], "v": [0, 1, 1, 1]})
    syn = pd.DataFrame({"g": [0, 0, 1, 1], "v": [0, 0, 1, 0]})
    rep = Y.mean_parity(real, syn, group_cols=["g"], value_cols=["v"])
    # 1-based codes: real means g0 1.5, g1 2, pop 1.75; synth g0 1, g1 1.5, pop 1.25.
    expect_groups = 0.5 / 1.5 + 0.5 / 2
    assert rep.per_group.sum() == pytest.approx(expect_groups)
    assert rep.population_term == pytest.approx(0.5 * 0.5 / 1.75)
    assert rep.total == pytest.approx(expect_groups + 0.5 * 0.5 / 1.75)
    assert rep.max_disparity == pytest.approx(1 / 3)
    # A stratum missing from the synthetic data falls back to the whole table and is flagged.
    rep2 = Y.mean_parity(real, syn[syn.g == 0], group_cols=["g"], value_cols=["v"])
    assert rep2.fallback_groups == ("1",)
    gw = Y.group_workload_errors(real, syn[syn.g == 0], group_cols=["g"], value_cols=["v"], way=1)
    assert gw["fallback"].tolist() == [False, True]


# --- X10 stratified wrapper ------------------------------------------------------------------------------

def _strata_frame(sizes):
    g = np.repeat(np.arange(len(sizes)), sizes)
    r = np.random.default_rng(0)
    return pd.DataFrame({"g": g, "v": r.integers(0, 3, g.size)}), {"g": len(sizes), "v": 3}


def test_x10_sample_counts():
    df, dom = _strata_frame([600, 300, 100])
    s = Y.StratifiedSynthesizer(lambda: Y.IndependentLaplace(1.0), ["g"], min_frac=0.0).fit(df, dom, rng=0)
    out = s.sample(1000, rng=0)
    assert out.groupby("g").size().tolist() == [600, 300, 100]
    s2 = Y.StratifiedSynthesizer(lambda: Y.IndependentLaplace(1.0), ["g"], min_frac=0.15).fit(df, dom, rng=0)
    out2 = s2.sample(1000, rng=0)
    assert out2.groupby("g").size().tolist() == [667, 333]
    assert s2.strata["kept"].tolist() == [True, True, False]


def test_x10_epsilon_reported_and_order_independent():
    df, dom = _strata_frame([600, 300, 100])
    s = Y.StratifiedSynthesizer(lambda: Y.MWEM(0.7, rounds=3), ["g"], min_frac=0.0).fit(df, dom, rng=5)
    assert s.epsilon == 0.7 and all(m.epsilon == 0.7 for m in s.models.values())
    # Shuffle the rows: every stratum's model must be the same (keyed by stratum, not by fit order).
    df2 = df.sample(frac=1.0, random_state=3).reset_index(drop=True)
    s2 = Y.StratifiedSynthesizer(lambda: Y.MWEM(0.7, rounds=3), ["g"], min_frac=0.0).fit(df2, dom, rng=5)
    for key in s.models:
        np.testing.assert_allclose(s.models[key].p_, s2.models[key].p_)
    # Each stratum's model sees only its own rows: a stratum with a single value keeps it at high ε.
    df3 = df.copy()
    df3.loc[df3.g == 2, "v"] = 2
    s3 = Y.StratifiedSynthesizer(lambda: Y.IndependentLaplace(50.0), ["g"], min_frac=0.0).fit(df3, dom, rng=0)
    assert s3.models[(2,)].probs_["v"][2] > 0.9


def test_stratified_pool_mode():
    df, dom = _strata_frame([600, 300, 100])
    s = Y.StratifiedSynthesizer(lambda: Y.IndependentLaplace(5.0), ["g"], min_frac=0.15, small_strata="pool")
    s.fit(df, dom, rng=0)
    out = s.sample(1000, rng=0)
    assert len(out) == 1000 and s.pooled_model_ is not None
    # The strata table shows each group's share of the mixture: the pooled group's 100 of 1,000 rows go through
    # the pooled model, so its weight is 0.1, not 0, and the weights sum to 1 (spec §3: weights n_s/Σ n_s).
    assert s.strata["weight"].tolist() == pytest.approx([0.6, 0.3, 0.1])
    assert s.strata["pooled"].tolist() == [False, False, True]


def test_sample_counts_modes():
    assert Y.sample_counts([0.5, 0.5], 11).sum() == 11
    assert Y.sample_counts([0.999, 0.001], 10, mode="proportional").tolist() == [9, 1]
    assert Y.sample_counts([0.3, 0.7], 100, mode="multinomial", rng=0).sum() == 100
    with pytest.raises(ValueError):
        Y.sample_counts([0.3, 0.7], 0)


# --- Built-ins: domain and ε -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["independent", "full_histogram", "mwem"])
def test_builtins_respect_domain(name, toy):
    m = Y.make_synthesizer(name, epsilon=1.0).fit(toy.df, toy.domain, rng=0)
    out = m.sample(500, rng=1)
    assert list(out.columns) == list(toy.domain)
    for c, card in toy.domain.items():
        assert out[c].between(0, card - 1).all()
    assert m.delta == 0.0


@pytest.mark.parametrize("name", ["independent", "full_histogram", "mwem"])
def test_builtins_improve_with_epsilon(name, toy):
    cols = list(toy.domain)
    way = 1 if name == "independent" else 2

    def err(eps):
        vals = []
        for seed in range(3):
            m = Y.make_synthesizer(name, epsilon=eps).fit(toy.df, toy.domain, rng=seed)
            vals.append(Y.workload_error(toy.df, m.sample(4000, rng=seed), cols, way=way))
        return np.mean(vals)

    assert err(20.0) < err(0.05)


def test_full_histogram_guard(adult):
    all_cols = load_adult(columns="all")
    with pytest.raises(ValueError, match="316,108,800"):
        Y.FullHistogramLaplace(1.0).fit(all_cols.df, all_cols.domain, rng=0)


def test_validation():
    df = pd.DataFrame({"a": [0, 1, 5]})
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        Y.IndependentLaplace(1.0).fit(df, {"a": 3}, rng=0)
    with pytest.raises(ValueError):
        Y.IndependentLaplace(0.0)
    with pytest.raises(ValueError):
        Y.make_synthesizer("gan", epsilon=1.0)
    with pytest.raises(ValueError):
        Y.IndependentLaplace(1.0).fit(pd.DataFrame({"a": []}), {"a": 3}, rng=0)
    with pytest.raises(ValueError):
        Y.StratifiedSynthesizer(lambda: Y.IndependentLaplace(1.0), ["zz"]).fit(
            pd.DataFrame({"a": [0, 1]}), {"a": 2}, rng=0)
    with pytest.raises(ValueError):
        Y.StratifiedSynthesizer(lambda: Y.IndependentLaplace(1.0), ["a"], min_frac=1.5)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(2, 5), st.floats(0.05, 20.0), st.integers(0, 1000))
def test_independent_property_domain(d, card, eps, seed):
    r = np.random.default_rng(seed)
    df = pd.DataFrame({f"c{j}": r.integers(0, card, 50) for j in range(d)})
    dom = {f"c{j}": card for j in range(d)}
    out = Y.IndependentLaplace(eps).fit(df, dom, rng=seed).sample(30, rng=seed)
    assert out.shape == (30, d) and (out.to_numpy() >= 0).all() and (out.to_numpy() < card).all()


def test_categorical_population_shape_and_order():
    t = Y.make_categorical_population(500, 4, 0.5, d=3, card=3, rng=1)
    assert list(t.df.columns) == ["group", "x1", "x2", "x3", "y"]
    assert len(t.df) == 500 and t.group_cols == ("group",) and t.label_col == "y"
    r = np.random.default_rng(1)
    w = r.dirichlet(np.full(4, 0.5))
    from dpdash.stratify.core import proportions_to_sizes

    got = t.df.groupby("group").size().reindex(range(4), fill_value=0).tolist()
    assert got == proportions_to_sizes(w, 500).tolist()


# --- X12 Adult -------------------------------------------------------------------------------------------

def test_x12_adult_counts(adult, adult_split):
    tr, te = adult_split
    assert len(adult.df) == 45222 and len(tr) == 30162 and len(te) == 15060
    race = adult.df.groupby("race").size()
    labels = adult.labels["race"]
    assert {labels[i]: int(v) for i, v in race.items()} == {
        "White": 38903, "Black": 4228, "Asian-Pac-Islander": 1303, "Amer-Indian-Eskimo": 435, "Other": 353}
    assert adult.df["income"].mean() == pytest.approx(0.24784, abs=1e-5)
    assert (te["income"] == 0).mean() == pytest.approx(0.754316, abs=1e-6)
    sr = adult.df.groupby(["sex", "race"]).size()
    assert int(sr.min()) == 126


def test_x12_real_and_independent_accuracy(adult, adult_split):
    tr, te = adult_split
    feats = [c for c in adult.domain if c != "income"]
    acc = Y.downstream_accuracy(tr, te, feature_cols=feats, label_col="income", domain=adult.domain)
    assert acc == pytest.approx(0.8244, abs=0.003)
    maj = (te["income"] == 0).mean()
    for eps in (0.1, 1.0, 10.0):
        m = Y.IndependentLaplace(eps).fit(tr, adult.domain, rng=0)
        a = Y.downstream_accuracy(m.sample(len(tr), rng=1), te, feature_cols=feats, label_col="income",
                                  domain=adult.domain)
        assert abs(a - maj) <= 0.005


def test_x12_real_accuracy_all_columns():
    t = load_adult(columns="all")
    tr, te = Y.train_test_split_table(t)
    feats = [c for c in t.domain if c != "income"]
    assert Y.downstream_accuracy(tr, te, feature_cols=feats, label_col="income", domain=t.domain) == pytest.approx(
        0.8451, abs=0.003)


def test_synth_metrics_and_experiment_long_format(toy):
    out = Y.run_synth_experiment(toy, synthesizer="independent", epsilons=[1.0], group_cols=["group"], rng=0)
    assert list(out.columns) == ["rep", "epsilon", "variant", "metric", "group", "value"]
    assert set(out["variant"]) == {"vanilla", "stratified"}
    assert {"accuracy", "workload_global", "parity_total", "dpr", "fnr_difference", "workload_group"} <= set(
        out["metric"])


def test_non_binary_label_rejected(toy):
    df = toy.df.copy()
    with pytest.raises(ValueError, match="binary"):
        Y.downstream_accuracy(df, df, feature_cols=["x1"], label_col="x2", domain=toy.domain)


# --- MST / AIM on mbi (toy) -----------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name,opts", [("mst", dict(iters=150)), ("aim", dict(max_iters=60, rounds=4))])
def test_mbi_synthesizers_domain_and_epsilon(name, opts, toy):
    cols = list(toy.domain)
    errs = {}
    for eps in (0.05, 20.0):
        m = Y.make_synthesizer(name, epsilon=eps, **opts)
        seen = []
        m.fit(toy.df, toy.domain, rng=0, progress=lambda f, msg: seen.append(f))
        out = m.sample(2000, rng=1)
        assert list(out.columns) == cols and len(out) == 2000
        for c, card in toy.domain.items():
            assert out[c].between(0, card - 1).all()
        assert m.delta == 1e-9 and seen and max(seen) <= 1.0
        errs[eps] = Y.workload_error(toy.df, out, cols, way=2)
    assert errs[20.0] < errs[0.05]


@pytest.mark.slow
def test_mst_sampling_restores_global_numpy_state(toy):
    m = Y.MST(5.0, iters=50).fit(toy.df, toy.domain, rng=0)
    np.random.seed(123)
    before = np.random.get_state()[1].copy()
    a = m.sample(300, rng=7)
    assert np.array_equal(np.random.get_state()[1], before)
    b = m.sample(300, rng=7)
    pd.testing.assert_frame_equal(a, b)


def test_rng_is_the_one_name_and_takes_seeds_sequences_and_generators(toy):
    """Issue 13: ``rng=`` everywhere. An integer is the seed itself (the split is numpy's own permutation of it);
    a SeedSequence or Generator stands for its first draw below 2**32."""
    tr, te = Y.train_test_split_table(toy, rng=5)
    perm = np.random.default_rng(5).permutation(len(toy.df))
    n_test = int(round(0.3 * len(toy.df)))
    pd.testing.assert_frame_equal(te, toy.df.iloc[perm[:n_test]].reset_index(drop=True))
    same = int(np.random.default_rng(np.random.SeedSequence(11)).integers(2**32))
    kw = dict(domain=toy.domain, synthesizer="independent", epsilon=1.0, variant="vanilla", group_cols=["group"],
              label_col="y")
    a = Y.fit_and_evaluate(tr, te, rng=np.random.SeedSequence(11), **kw)
    b = Y.fit_and_evaluate(tr, te, rng=np.random.default_rng(11), **kw)
    c = Y.fit_and_evaluate(tr, te, rng=same, **kw)
    pd.testing.assert_frame_equal(a.synthetic, c.synthetic)
    pd.testing.assert_frame_equal(b.synthetic, c.synthetic)
    with pytest.raises(ValueError, match="rng"):
        Y.train_test_split_table(toy, rng=-1)


def test_fit_and_evaluate_and_decode(toy):
    tr, te = Y.train_test_split_table(toy, rng=0)
    run = Y.fit_and_evaluate(tr, te, domain=toy.domain, synthesizer="independent", epsilon=1.0, variant="stratified",
                             group_cols=["group"], label_col="y", rng=0)
    assert len(run.synthetic) == len(tr) and run.strata is not None and run.epsilon == 1.0
    again = Y.fit_and_evaluate(tr, te, domain=toy.domain, synthesizer="independent", epsilon=1.0,
                               variant="stratified", group_cols=["group"], label_col="y", rng=0)
    pd.testing.assert_frame_equal(run.synthetic, again.synthetic)
    dec = Y.decode_table(run.synthetic.head(), toy.labels)
    assert set(dec["group"]) <= set(toy.labels["group"])
    from dpdash.stratify import figures as F

    m = run.metrics
    fig = F.make_synth_group_error_figure(m.workload_per_group, m.workload_per_group, title="t")
    assert len(fig.data) == 2
    assert len(F.make_parity_heatmap(m.parity.per_cell, m.parity.per_cell).data) == 2


# --- Parallel fits: identical for any n_jobs (one SeedSequence child per job) -----------------------------

def _nondecreasing_to_one(fracs):
    return bool(fracs) and all(b >= a for a, b in zip(fracs, fracs[1:])) and fracs[-1] == 1.0 and fracs[0] >= 0.0


@pytest.mark.parametrize("make", [lambda: Y.IndependentLaplace(1.0), lambda: Y.MWEM(0.7, rounds=3)])
def test_stratified_builtin_parallel_equals_sequential(make):
    df, dom = _strata_frame([600, 300, 100, 5])
    runs = {}
    for n_jobs in (1, 2):
        seen = []
        s = Y.StratifiedSynthesizer(make, ["g"], min_frac=0.01, small_strata="pool")
        s.fit(df, dom, rng=11, n_jobs=n_jobs, progress=lambda f, msg: seen.append(f))
        assert _nondecreasing_to_one(seen), seen
        runs[n_jobs] = s.sample(1000, rng=4)
    pd.testing.assert_frame_equal(runs[1], runs[2])
    # Not trivially equal: another seed gives another sample.
    other = Y.StratifiedSynthesizer(make, ["g"], min_frac=0.01, small_strata="pool").fit(df, dom, rng=12)
    assert not other.sample(1000, rng=4).equals(runs[1])


@pytest.mark.slow
@pytest.mark.parametrize("name,opts", [("mst", dict(iters=100)), ("aim", dict(max_iters=40, rounds=4))])
def test_mbi_variants_parallel_equals_sequential(name, opts, toy):
    # The page's Run button: vanilla + every stratum's MST/AIM in one pool of worker processes. Fitted JAX
    # models come back pickled; the sample must not change with n_jobs (float64 kept, per-job seeds).
    tr, te = Y.train_test_split_table(toy, rng=0)
    common = dict(domain=toy.domain, synthesizer=name, epsilon=2.0, group_cols=["group"], label_col="y", rng=3,
                  synth_options=opts)
    out = {}
    for n_jobs in (1, 2):
        seen = []
        out[n_jobs] = Y.fit_and_evaluate_variants(tr, te, n_jobs=n_jobs, progress=lambda f, msg: seen.append(f),
                                                  **common)
        assert _nondecreasing_to_one(seen), seen
    for v in ("vanilla", "stratified"):
        pd.testing.assert_frame_equal(out[1][v].synthetic, out[2][v].synthetic)
        assert out[1][v].metrics.workload_global == out[2][v].metrics.workload_global
    # Same as fitting each variant on its own (the page's former sequential path).
    alone = Y.fit_and_evaluate(tr, te, variant="stratified", **common)
    pd.testing.assert_frame_equal(alone.synthetic, out[2]["stratified"].synthetic)
    assert out[2]["stratified"].strata["kept"].sum() == 3 and out[2]["stratified"].delta == 1e-9


def test_mwem_tiny_table_small_epsilon_stays_finite():
    """Issue 17: at ε = 0.01 on a 10-row table the update factor exp((m − q(A))/(2n)) overflowed (OverflowError,
    then NaN weights) for most seeds. The normalised update is computed without forming the factor."""
    df = pd.DataFrame({"a": [0, 1, 2, 0, 1, 2, 0, 1, 2, 0], "b": [0, 0, 1, 1, 2, 2, 0, 1, 2, 0]})
    for seed in range(40):
        m = Y.make_synthesizer("mwem", epsilon=0.01).fit(df, {"a": 3, "b": 3}, rng=seed)
        assert np.all(np.isfinite(m.p_)) and m.p_.min() >= 0 and m.p_.sum() == pytest.approx(1.0, abs=1e-12)
        assert len(m.sample(25, rng=seed)) == 25


def test_mwem_update_matches_the_plain_formula_when_it_is_representable():
    """At ordinary settings the stable update equals A[cell] *= exp((m − q)/(2n)); A *= n/ΣA, computed here in
    extended precision (mpmath) for one step."""
    import mpmath as mp
    mp.mp.dps = 30
    A = np.array([3.0, 1.0, 4.0, 2.0])
    mask = np.array([True, False, True, False])
    n, val = 10.0, 9.5
    qa = A[mask].sum()
    e = mp.mpf(val - qa) / (2 * n)
    exact = [mp.mpf(a) * (mp.e ** e if m_ else 1) for a, m_ in zip(A, mask)]
    tot = sum(exact)
    got = Y._mw_update(A.copy(), mask, val, n)
    for g, x in zip(got, exact):
        assert g == pytest.approx(float(x * n / tot), rel=1e-14)


def test_the_shared_compilation_cache_is_read_and_written_under_a_file_lock():
    """Concurrent MST runs share JAX's on-disk cache: with a size limit JAX locks every read and write, so no
    process reads an entry another is still writing (issue 26: "Error -5 while decompressing")."""
    import jax

    Y._import_mbi()
    assert jax.config.jax_compilation_cache_max_size == Y.JAX_CACHE_MAX_BYTES > 0
    from jax._src import lru_cache

    cache = lru_cache.LRUCache(str(Y.jax_cache_dir()), max_size=jax.config.jax_compilation_cache_max_size)
    assert cache.eviction_enabled and type(cache.lock).__name__.endswith("FileLock")  # an OS-level lock


def test_a_cache_written_without_a_size_limit_gets_access_times(tmp_path):
    """Entries from before the size limit have no '-atime' file; JAX's eviction scan failed on them and kept no
    new program. Configuring the cache stamps them."""
    (tmp_path / "jit_f-abc-cache").write_bytes(b"x")
    (tmp_path / "jit_g-def-cache").write_bytes(b"y")
    (tmp_path / "jit_g-def-atime").write_bytes((7).to_bytes(8, "little"))
    Y._stamp_unstamped_entries(tmp_path)
    assert (tmp_path / "jit_f-abc-atime").is_file()
    assert (tmp_path / "jit_g-def-atime").read_bytes() == (7).to_bytes(8, "little")  # an existing stamp is kept
