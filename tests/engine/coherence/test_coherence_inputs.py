"""Data defaults and run-time estimates of the coherence explorer (dpdash/coherence/inputs.py; issue 25).

Expected values come from the data themselves (pandas counts) and, for the estimate, from a step-by-step
simulation of a fair scheduler written here, not from the cost model under test."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpdash.coherence import inputs as ci
from dpdash.common.data import load_dataset


def _frame(n=60, **cols):
    rng = np.random.default_rng(0)
    base = {"age": rng.integers(18, 90, n), "sex": rng.choice(["f", "m"], n)}
    base.update(cols)
    return pd.DataFrame(base)


def test_a_column_named_label_is_the_label_even_with_three_values():
    df = _frame(label=["yes", "no", "maybe"] * 20, smoker=["y"] * 10 + ["n"] * 50)
    assert df["label"].nunique() == 3
    # the dataset's own suggestion (its rarest binary column) loses to a column named "label"
    assert ci.default_label(df, suggested="smoker") == "label"
    assert ci.default_label(df.rename(columns={"label": " Label "}), suggested="smoker") == " Label "
    assert ci.default_label(df.drop(columns="label"), suggested="smoker") == "smoker"
    assert ci.default_label(_frame(DREM=[1, 2] * 30, label=["a", "b"] * 30)) == "DREM"


def test_a_constant_label_is_refused_with_what_is_expected():
    df = _frame(label=["yes"] * 60)
    assert "label" not in ci.label_candidates(df)
    msg = ci.label_problem(df, "label")
    assert "'label'" in msg and "'yes'" in msg and "all 60 rows" in msg and "2 to 20 different values" in msg
    wide = _frame(label=[f"v{i}" for i in range(60)])
    assert "60 different values" in ci.label_problem(wide, "label")
    assert ci.label_problem(_frame(label=[None] * 60), "label").startswith("The column 'label' has no values")
    assert ci.label_problem(_frame(label=["a", "b"] * 30), "label") is None


def test_adult_default_lens_leaves_out_the_sampling_weight_and_the_file_marker():
    ds = load_dataset("adult")
    label = ci.default_label(ds.frame, suggested=ds.schema.suggested_label)
    lens, left = ci.default_lens(ds.frame, label)
    assert label == "income"
    assert set(left) == {"fnlwgt", "split"} and "weight" in left["fnlwgt"] and "file" in left["split"]
    assert set(lens) == set(ds.frame.columns) - {"income", "fnlwgt", "split"} and len(lens) <= 30


def test_acs12_default_lens_keeps_every_column_that_describes_a_person():
    ds = load_dataset("acs12")
    label = ci.default_label(ds.frame, suggested=ds.schema.suggested_label)
    lens, left = ci.default_lens(ds.frame, label)
    assert label == "disability" and left == {} and lens == [c for c in ds.frame.columns if c != label]


@pytest.mark.parametrize("col, values, excluded", [
    ("PWGTP", np.arange(60) * 3.5, True), ("weight", np.arange(60) + 40.0, False),  # body weight stays
    ("fold", [1, 2, 3] * 20, True), ("part", ["train", "test"] * 30, True), ("id", np.arange(60), True),
    ("person_code", [f"p{i}" for i in range(60)], True), ("income", np.arange(60) * 1000.5, False),
])
def test_non_features_by_name_and_by_values(col, values, excluded):
    df = _frame(**{col: values})
    assert (ci.non_feature_reason(df, col) is not None) is excluded


def test_preferred_lens_wins_when_all_present_and_lens_is_capped_at_30():
    df = pd.DataFrame({f"c{i}": np.arange(40) % 7 for i in range(40)})
    lens, _ = ci.default_lens(df, "c0")
    assert len(lens) == 30 and "c0" not in lens
    assert ci.default_lens(df, "c0", preferred=("c3", "c1"))[0] == ["c3", "c1"]


# ------------------------------------------------------------------------------------------ run-time estimate
def _simulate(per_run: float, runs: int, workers: int, cores: int, others: int, dt: float = 1e-3) -> float:
    """Processor sharing, step by step: every runnable job (the others and our busy workers) gets an equal share
    of the cores, at most one core each; our workers take repetitions from a queue."""
    left = [per_run] * min(workers, runs)
    queued = runs - len(left)
    t = 0.0
    while left:
        share = min(1.0, cores / (others + len(left)))
        t += dt
        left = [x - share * dt for x in left]
        done = sum(x <= 1e-12 for x in left)
        left = [x for x in left if x > 1e-12]
        take = min(done, queued)
        left += [per_run] * take
        queued -= take
    return t


@pytest.mark.parametrize("runs, workers, cores, others", [(10, 1, 2, 0), (10, 1, 2, 3), (6, 1, 1, 1)])
def test_estimate_matches_a_simulated_fair_scheduler(runs, workers, cores, others):
    per_run = 0.05
    est = ci.run_estimate(per_run_s=per_run, runs=runs, workers=workers, cores=cores, load=others)
    assert est.seconds == pytest.approx(_simulate(per_run, runs, workers, cores, others), rel=0.02)


def test_estimate_on_a_busy_server_is_not_the_idle_one():
    # issue 25: "about 0.1 min" announced, 0.5 min taken, on 2 cores with other jobs running
    idle = ci.run_estimate(per_run_s=0.6, runs=20, workers=2, cores=2, load=0.0)
    busy = ci.run_estimate(per_run_s=0.6, runs=20, workers=2, cores=2, load=6.0)
    sim_busy = _simulate(0.6, 20, 2, 2, 6, dt=0.005) * ci.PARALLEL_OVERHEAD
    assert busy.busy and not idle.busy
    assert busy.seconds == pytest.approx(sim_busy, rel=0.03)
    assert busy.seconds / idle.seconds == pytest.approx(4.0)  # 2 cores shared by 8 jobs: a quarter core each
    old_model = 0.6 * 20 / 2  # the page's former estimate: preview × R / cores
    assert busy.seconds > 4 * old_model


def test_time_words_and_time_left():
    assert ci.time_words(0.2) == "under a second" and ci.time_words(7.4) == "about 7 s"
    assert ci.time_words(44) == "about 40 s" and ci.time_words(75) == "about 1.2 min"
    assert ci.time_words(600) == "about 10 min" and ci.time_words(7200) == "about 2.0 h"
    # calibrated on what has run: 2 of 10 runs in 6 s leave 8 × 3 s
    assert ci.time_left_words(2, 10, 6.0) == "2/10 runs, about 20 s left"
    assert ci.time_left_words(0, 10, 1.0) == "0/10 runs" and ci.time_left_words(10, 10, 9.0) == "10/10 runs"


def test_estimate_refuses_nonsense():
    for bad in (dict(per_run_s=-1.0), dict(per_run_s=math.nan), dict(runs=0), dict(workers=0)):
        kw = dict(per_run_s=1.0, runs=5, workers=2, cores=2) | bad
        with pytest.raises(ValueError):
            ci.run_estimate(**kw)


# ------------------------------------------------------------------------------------------ memory of a run
def _many_valued(n=6000, seed=1):
    rng = np.random.default_rng(seed)
    raw = np.column_stack([rng.integers(0, 5000, n), rng.normal(size=n), rng.integers(0, 3, n)]).astype(float)
    y = np.where(rng.random(n) < 0.2, -1, 1)
    return raw, y


def test_probe_tree_predicts_the_size_of_a_real_forest():
    from sklearn.ensemble import RandomForestClassifier

    raw, y = _many_valued()
    fp = ci.probe_tree(raw, y, learner="random_forest", trees=20, workers=2, seed=3)
    half = raw[: len(raw) // 2]
    forest = RandomForestClassifier(20, random_state=0).fit(half.astype(np.float32), y[: len(raw) // 2])
    actual = sum(t.tree_.__getstate__()["nodes"].nbytes + t.tree_.__getstate__()["values"].nbytes
                 for t in forest.estimators_)
    assert 0.7 < fp.bytes_per_tree * fp.trees / actual < 1.4
    assert fp.peak_bytes == pytest.approx(2 * fp.bytes_per_tree * 20)
    nodes = [t.tree_.node_count for t in forest.estimators_]
    assert min(nodes) * 0.8 < fp.nodes < max(nodes) * 1.2
    assert ci.probe_tree(raw, y, learner="logistic", trees=50, workers=2) is None
    single = ci.probe_tree(raw, y, learner="decision_tree", trees=50, workers=1)
    assert single.trees == 1 and single.peak_bytes == single.bytes_per_tree


def test_a_run_that_would_blow_up_is_refused_with_what_to_change():
    raw, y = _many_valued()
    fp = ci.probe_tree(raw, y, learner="random_forest", trees=50, workers=2)
    budget = fp.peak_bytes / 3  # a run three times over the budget
    msg = ci.footprint_problem(fp, many_levels={"zone": 5000, "sex": 2}, rows=6000, budget=budget)
    fit = int(budget // (fp.bytes_per_tree * 2))
    assert 1 <= fit < 50
    assert f"at most {fit} trees" in msg and "zone (5,000 values)" in msg and "6,000 rows" in msg
    assert f"about {fp.nodes:,} branches per tree" in msg
    assert ci.footprint_problem(fp, many_levels={}, rows=6000, budget=fp.peak_bytes * 1.01) is None
    assert ci.footprint_problem(None, many_levels={}, rows=6000, budget=1.0) is None


def test_level_counts_are_the_distinct_values():
    df = pd.DataFrame({"a": [1, 2, 2, None], "b": ["x", "y", "z", "x"]})
    assert ci.level_counts(df, ["a", "b"]) == {"a": 2, "b": 3}


def test_calibration_learns_the_servers_ratio_and_is_bounded():
    # the run of the screenshot: the model said 3 s on a busy server, the run took 74.8 s (worker start-up)
    r = ci.calibration(None, predicted_s=3.0, actual_s=74.8)
    assert r == pytest.approx(74.8 / 3.0)
    assert ci.calibration(r, predicted_s=10.0, actual_s=100.0) == pytest.approx((r + 10.0) / 2)
    assert ci.calibration(None, predicted_s=1.0, actual_s=1e6) == 100.0
    assert ci.calibration(None, predicted_s=1.0, actual_s=0.0) == 0.5
    assert ci.calibration(4.0, predicted_s=0.0, actual_s=3.0) == 4.0  # nothing to learn from


def test_row_numbers_are_left_out_of_the_default_lens_whatever_their_name():
    """Issue 31: R's write.csv rownames (1…n) stayed in the lens and the forest memorised them (Arrests: W1 1.92
    with it, 0.78 without). A frame that did not come through the reader still leaves them out."""
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"rownames": np.arange(1, 201), "n0": np.arange(200), "age": rng.integers(18, 80, 200),
                       "colour": rng.choice(["White", "Black"], 200), "released": rng.choice(["Yes", "No"], 200)})
    lens, left = ci.default_lens(df, "released")
    assert set(left) == {"rownames", "n0"} and all("row numbers" in r for r in left.values())
    assert lens == ["age", "colour"]
