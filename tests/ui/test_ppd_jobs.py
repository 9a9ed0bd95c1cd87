"""ui.views.ppd_jobs: the partially private view's job units, cache keys, loss table and toy parser.

Expected values are written out by hand from the view's contract (which draws each button runs, what a session
key must tell apart, what a table holds), not produced by the module.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpdash.stratify import partial_release as release
from ui.views import ppd_jobs as jobs

CFG = dict(sensitivity=2.0, kappa=2.0, public=(True, True, True, True, 0.0), sweeps=30, pp_sensitivity=None,
           seed=0)


def test_run_at_epsilon_draws_each_wem_at_the_month_and_one_draw_per_later_month():
    units = jobs.units_at_epsilon(["wem_naive", "wem_prior"], t=3, epsilon=1, alpha=0.5, reps=4, months=4)
    head = units[:2]
    assert head[0][:3] == (3, 1.0, "wem_naive") and math.isnan(head[0][3]) and head[0][4] == 4
    assert head[1] == (3, 1.0, "wem_prior", 0.5, 4)
    series = units[2:]
    # months 1, 2, 3 (month 0 is the public prior), one draw each, for both methods
    assert sorted((u[0], u[2], u[4]) for u in series) == sorted(
        (t, m, 1) for m in ("wem_naive", "wem_prior") for t in (1, 2, 3))
    assert [u[3] for u in series if u[2] == "wem_prior"] == [0.5, 0.5, 0.5]
    assert jobs.units_at_epsilon(["wem_congenial"], t=2, epsilon=0.5, alpha=1.0, reps=3)[0][:3] == (2, 0.5,
                                                                                                      "wem_congenial")
    assert len(jobs.units_at_epsilon(["wem_congenial"], t=2, epsilon=0.5, alpha=1.0, reps=3)) == 1


def test_epsilon_sweep_covers_every_method_at_every_sweep_epsilon():
    units = jobs.units_epsilon_sweep(["pp", "wem_prior"], t=5, alpha=2.0, reps=2)
    assert len(units) == 4 * 2
    assert {(u[1], u[2]) for u in units} == {(e, m) for e in (0.5, 1.0, 2.0, 5.0) for m in ("pp", "wem_prior")}
    assert all(u[0] == 5 and u[4] == 2 for u in units)
    assert all(u[3] == 2.0 for u in units if u[2] == "wem_prior")
    assert all(math.isnan(u[3]) for u in units if u[2] == "pp")


def test_alpha_sweep_runs_the_prior_at_five_strengths_and_both_references():
    units = jobs.units_alpha_sweep(t=1, epsilon=2, reps=3)
    prior = [u for u in units if u[2] == "wem_prior"]
    assert [u[3] for u in prior] == [1e-3, 1e-2, 0.1, 1.0, 10.0]
    refs = [u for u in units if u[2] != "wem_prior"]
    assert sorted(u[2] for u in refs) == ["wem_congenial", "wem_naive"]
    assert all(math.isnan(u[3]) for u in refs)
    assert all(u[0] == 1 and u[1] == 2.0 and u[4] == 3 for u in units)


def test_unit_key_finds_a_nan_alpha_unit_again_and_tells_settings_apart():
    a = jobs.unit_key("panel", (1, 1.0, "pp", float("nan"), 3), CFG)
    b = jobs.unit_key("panel", (1, 1.0, "pp", float("nan"), 3), CFG)  # a different NaN object
    assert a == b and hash(a) == hash(b) and b in {a}
    assert jobs.unit_key("panel", (1, 1.0, "pp", float("nan"), 3), {**CFG, "seed": 1}) != a
    assert jobs.unit_key("other", (1, 1.0, "pp", float("nan"), 3), CFG) != a
    assert jobs.unit_key("panel", (1, 1.0, "wem_prior", 0.1, 3), CFG) != jobs.unit_key(
        "panel", (1, 1.0, "wem_prior", 1.0, 3), CFG)
    assert jobs.unit_key("panel", (1, 1.0, "pp", float("nan"), 3), {**CFG, "pp_sensitivity": 4.0}) != a


def test_public_tuple_round_trips_through_public_info():
    info = release.PublicInfo(state_total=False, cases_ge_deaths=True, nonnegative=False, previous_month_prior=False,
                          exact_share=0.3)
    assert release.PublicInfo(*jobs.public_tuple(info)) == info
    assert hash(jobs.public_tuple(info)) == hash((False, True, False, False, 0.3))


def test_loss_summary_counts_each_draw_once():
    # two draws of PP (totals 3 and 5, repeated on each county row) and one of WEM-naive (total 10)
    frame = pd.DataFrame({
        "rep": [0, 0, 1, 1, 0, 0], "method": ["pp"] * 4 + ["wem_naive"] * 2,
        "county": list("ABAB") + list("AB"), "total_l2": [3.0, 3.0, 5.0, 5.0, 10.0, 10.0]})
    out = jobs.loss_summary(frame).set_index("method")
    assert out.loc["PP (post-processing)", "mean total ℓ₂ loss"] == 4.0
    assert out.loc["PP (post-processing)", "sd"] == pytest.approx(math.sqrt(2.0))  # sample sd of {3, 5}
    assert out.loc["PP (post-processing)", "draws"] == 2
    assert out.loc["WEM-naive", "draws"] == 1 and math.isnan(out.loc["WEM-naive", "sd"])


def test_export_drops_only_entirely_empty_columns():
    frame = pd.DataFrame({"alpha": [np.nan, np.nan], "cases": [1, 2], "part": [np.nan, 1.0]})
    assert list(jobs.export_frame(frame).columns) == ["cases", "part"]


@pytest.mark.parametrize("text, expected", [("6, 1, 4", [6, 1, 4]), ("0.5;2; 3", [0.5, 2, 3]),
                                            (" 1,2,3, ", [1, 2, 3])])
def test_parse_vector_reads_three_numbers(text, expected):
    assert jobs.parse_vector(text, "y").tolist() == expected


@pytest.mark.parametrize("text, words", [("1, 2", "exactly 3"), ("1, 2, 3, 4", "exactly 3"), ("a, b, c", "commas"),
                                         ("inf, 1, 2", "finite"), ("nan, 1, 2", "finite"),
                                         ("1" * 500, "at most"), ("1.5, 2, 3", "whole")])
def test_parse_vector_refuses_with_a_message_naming_the_field(text, words):
    with pytest.raises(ValueError, match=words) as info:
        jobs.parse_vector(text, "noisy counts y", integer=True)
    assert str(info.value).startswith("noisy counts y")
