"""dpdash.stratify.views: the viewer's upload defaults and tab views, checked against independent computations.

Counts and bins are worked out from the bundled files with the csv module and plain arithmetic, never by the code
under test.
"""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest

from dpdash.stratify import views as SV
from dpdash.common.data import load_dataset
from dpdash.common.paths import DATA_DIR

ACS12 = DATA_DIR / "acs12" / "acs12.csv"


def _acs12_rows() -> list[dict[str, str]]:
    with open(ACS12, newline="") as fh:
        return list(csv.DictReader(fh))


# --------------------------------------------------------------------------- issue 25: upload defaults
def test_acs12_default_group_is_categorical_not_the_averaged_income():
    rows = _acs12_rows()
    frame = pd.read_csv(ACS12)
    groups = SV.suggest_group_columns(frame)
    assert groups and "income" not in groups
    for g in groups:
        levels = {r[g] for r in rows if r[g] != ""}
        assert 2 <= len(levels) <= 20
        assert all(r[g] != "" for r in rows)  # a complete column: no row is left out for its group
        assert not all(v.replace(".", "").isdigit() for v in levels)  # text categories before numbers
    assert groups == ["race"]  # the first complete text column with few levels, in file order
    assert SV.suggest_value_column(frame, exclude=groups) == "income"  # 266 distinct values, the most
    # a preferred column comes first when it can be averaged; a group or a text column is passed over
    assert SV.suggest_value_column(frame, exclude=groups, prefer=("age",)) == "age"
    assert SV.suggest_value_column(frame, exclude=["age"], prefer=("race", "age", "hrs_work")) == "hrs_work"


def test_shared_dataset_defaults_follow_its_suggested_groups():
    ds = load_dataset("acs12")
    assert SV.suggest_group_columns(ds.frame, preferred=ds.schema.suggested_groups) == ["race", "gender"]
    adult = load_dataset("adult")
    got = SV.suggest_group_columns(adult.frame, preferred=adult.schema.suggested_groups)
    assert got == ["sex", "race"]
    # Without a preference Adult's groups are still categorical: never age, fnlwgt or hours.
    plain = SV.suggest_group_columns(adult.frame)
    assert plain and all(adult.frame[c].nunique() <= 20 for c in plain)


def test_group_codes_bin_a_numeric_group_with_more_than_50_values_into_5():
    rows = [r for r in _acs12_rows() if r["income"] != ""]
    incomes = [float(r["income"]) for r in rows]
    lo, hi = min(incomes), max(incomes)
    width = (hi - lo) / 5
    want = [min(int((v - lo) // width), 4) for v in incomes]  # equal-width bins, the top edge in the last
    frame = pd.read_csv(ACS12).dropna(subset=["income"]).reset_index(drop=True)
    codes, labels = SV.group_codes(frame, ["income"])
    assert len(labels) == 5  # not one group per income value (234 of them among complete rows)
    assert np.bincount(codes).tolist() == np.bincount(want, minlength=5).tolist()


def test_group_codes_cross_two_columns_in_code_order():
    frame = pd.DataFrame({"a": ["y", "x", "y", "x"], "b": [2, 1, 1, 2]})
    codes, labels = SV.group_codes(frame, ["a", "b"])
    assert labels == ["x × 1", "x × 2", "y × 1", "y × 2"]
    assert [labels[c] for c in codes] == ["y × 2", "x × 1", "y × 1", "x × 2"]


# --------------------------------------------------------------------------- issue 22: one view per tab
import math  # noqa: E402

from scipy.special import digamma  # noqa: E402
from scipy.optimize import brentq  # noqa: E402

from dpdash.stratify import core as S  # noqa: E402
from dpdash.stratify import synth as Y  # noqa: E402
from dpdash.common.formatting import number, percent  # noqa: E402

SIZES = np.array([1, 40, 400, 4000])
MU = np.array([2.0, 0.5, -0.3, 0.1])


def _runs(epsilons=(1.0,), reps=15):
    return S.run_mean_experiment(sizes=SIZES, mu=MU, sigma=np.ones(4), epsilons=epsilons, R=3.0, gamma=0.05,
                                 reps=reps, rng=11, min_frac=0.0)


def _brute_means(df, level, method, eps):
    out = {}
    for r in df.itertuples():
        if r.level == level and r.method == method and math.isclose(r.epsilon, eps):
            out.setdefault(r.group, []).append(r.abs_err)
    return {g: sum(v) / len(v) for g, v in out.items()}


def test_mean_error_view_cards_and_sentences_agree_with_a_brute_force_count():
    df = _runs()
    view = SV.mean_error_view(df, epsilon=1.0, labels=list("ABCD"), status=["kept"] * 4, sizes=SIZES, reps=15, seed=0)
    g = _brute_means(df, "group", "naive", 1.0)
    s = _brute_means(df, "group", "stratified", 1.0)
    helped = sum(1 for i in range(4) if s[i] < g[i])
    assert view.headline("Groups helped").value == f"{helped} of 4"
    pop_g = _brute_means(df, "population", "naive", 1.0)[-1]
    pop_s = _brute_means(df, "population", "stratified", 1.0)[-1]
    assert view.headline("Population error, one global release").raw == pytest.approx(pop_g)
    assert view.headline("Population error, per group").raw == pytest.approx(pop_s)
    # Issue 22 class: the sentence restates the cards' numbers with the cards' rounding.
    text = " ".join(view.verdict_text)
    assert f"from {number(pop_g)} to {number(pop_s)}" in text
    assert view.headline("Population error, one global release").value == number(pop_g)
    assert f"lowered the error of {helped} of 4 groups" in text or (helped == 4 and "all 4 groups" in text)
    tone = "good" if helped == 4 else ("warning" if 2 * helped <= 4 else "neutral")
    assert view.verdicts[0].tone == tone
    # Group A (1 record, μ = 2 far from the rest) needs guidance? Not pooled here: no pooled warning.
    assert all(v.tone != "warning" or "pooled" not in v.text for v in view.verdicts)


def test_population_view_ratio_is_the_closed_form():
    df = _runs()
    an = S.analytic_mean_errors(SIZES, R=3.0, gamma=0.05, epsilon=1.0, mu=MU, sigma=np.ones(4))
    view = SV.population_view(df, epsilon=1.0, reps=15, seed=0, analytic=an)
    # Spec §2.4, written out: RMSE ratio = √(Σ C_i²)/C(n), C(m) = R + √log(m/γ).
    C = [3.0 + math.sqrt(math.log(m / 0.05)) for m in SIZES]
    want = math.sqrt(sum(c * c for c in C)) / (3.0 + math.sqrt(math.log(SIZES.sum() / 0.05)))
    h = view.headline("Typical noise, per group ÷ one global release")
    assert h.raw == pytest.approx(want, rel=1e-9) and h.value == number(want, 3)
    cp = SV.population_view(df, epsilon=0.5, reps=15, seed=0, estimator="coinpress")
    rho = 0.5 ** 2 / 2
    assert cp.headline("Budget (each method)").raw == pytest.approx(rho)
    assert cp.headline("As (ε, δ = 10⁻⁶)-DP").raw == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1e6)))


def test_sizes_view_theorem10_against_digamma():
    sizes = np.array([600, 300, 80, 20])
    view = SV.sizes_view(sizes, list("ABCD"), ["kept"] * 4, alpha=None, min_frac=0.001, seed=0)
    v = sizes / sizes.sum()
    k, n = 4, 1000
    a_hat = brentq(lambda a: digamma(a) - digamma(k * a) - np.mean(np.log(v)), 1e-8, 1e8)
    E = k * (digamma(a_hat) - digamma(k * a_hat) + math.log(n))
    worst, best = k * math.log(n / k), (k - 1) + math.log(n - k)
    gap = (worst - E) / (worst - best)
    assert view.headline("Fitted imbalance α̂").raw == pytest.approx(a_hat, rel=1e-6)
    assert view.headline("Expected Σ log (Theorem 10)").raw == pytest.approx(E, rel=1e-6)
    assert view.headline("Share of the way to the best case").value == percent(gap)
    # The sentence and the cards share their rounding (a card said 0.4123 beside "41%").
    assert percent(gap) in view.verdicts[0].text
    assert view.headline("Fitted imbalance α̂").value in view.verdicts[0].text


def test_parity_view_against_definition_11_written_out():
    df = _runs(reps=6)
    view = SV.parity_view(df, epsilon=1.0, group_mask=None, normalized=False, reps=6, seed=0)
    for method, label in (("naive", "Naive"), ("stratified", "Stratified")):
        per_rep = {}
        for r in df.itertuples():
            if r.method == method and math.isclose(r.epsilon, 1.0):
                d = per_rep.setdefault(r.rep, {"g": 0.0, "p": 0.0})
                err = abs(r.truth - r.estimate)
                if r.level == "group":
                    d["g"] += err
                else:
                    d["p"] += err / 4  # ω = 1/k
        want = sum(d["g"] + d["p"] for d in per_rep.values()) / len(per_rep)
        h = view.headline(f"Parity error, {label}")
        assert h.raw == pytest.approx(want) and h.value in view.verdicts[0].text


def test_sweep_view_reads_the_worst_group_at_both_ends():
    df = _runs(epsilons=(0.1, 1.0, 10.0), reps=5)
    view = SV.sweep_view(df, paper_grid=True, seed=0)
    worst = {}
    for m in ("naive", "stratified"):
        for e in (0.1, 10.0):
            worst[m, e] = max(_brute_means(df, "group", m, e).values())
    text = view.verdicts[0].text
    assert (f"one global release goes from {number(worst['naive', 0.1])} to {number(worst['naive', 10.0])}"
            in text)
    assert f"per-group release from {number(worst['stratified', 0.1])} to {number(worst['stratified', 10.0])}" in text


def test_synth_view_counts_groups_and_shows_accuracy_as_in_the_sentence():
    table = Y.make_categorical_population(3000, 3, 1.0, rng=np.random.default_rng(0))
    train, test = Y.train_test_split_table(table, rng=0)
    runs = {v: Y.fit_and_evaluate(train, test, domain=table.domain, synthesizer="independent", epsilon=1.0,
                                  variant=v, group_cols=list(table.group_cols), label_col=table.label_col, rng=0)
            for v in ("vanilla", "stratified")}
    view = SV.synth_view(runs["vanilla"], runs["stratified"], epsilon=1.0, synthesizer="Independent",
                         decode=lambda g: f"G{g}", seed=0)
    wv = runs["vanilla"].metrics.workload_per_group.set_index("group")["error"]
    ws = runs["stratified"].metrics.workload_per_group.set_index("group")["error"]
    helped = sum(1 for g in wv.index if ws[g] < wv[g])
    first = view.verdicts[0]
    assert (f"{helped} of {len(wv)} groups" in first.text) or (helped == len(wv) and "all" in first.text)
    assert first.tone == ("good" if helped == len(wv) else ("warning" if 2 * helped <= len(wv) else "neutral"))
    acc = view.headline("Accuracy, one model")
    assert acc.value == percent(runs["vanilla"].metrics.accuracy) and acc.value in view.verdicts[1].text
    kept = runs["stratified"].strata
    assert view.headline("Models fitted per group").value == str(int(kept["kept"].sum()) + int(kept["pooled"].any()))


def test_partial_release_view_cards_match_the_sentences():
    from dpdash.stratify import partial_release
    loss = pd.DataFrame({"method": ["PP (post-processing)", "WEM-naive"], "mean total ℓ₂ loss": [123.456, 987.6],
                         "sd": [1.0, 2.0], "draws": [20, 20]})
    gt = partial_release.guarantee_table(epsilon=1.0, sensitivity=2.0, kappa=2.0, pp_sensitivity=None)
    view = SV.partial_release_view(loss, gt, epsilon=1.0, month="2021-03", seed=0)
    first = view.verdicts[0].text
    assert view.headline("Mean total error, PP (post-processing)").value in first  # "120" in both
    assert view.headline("Mean total error, PP (post-processing)").raw == 123.456
    # Spec §2.7: at Δ = κ = 2, PP carries 4ε/Δ = 2ε and WEM-naive 2ε/(κΔ) = ε/2: unequal, so a warning.
    assert view.headline("Guaranteed ε, PP (post-processing)").raw == pytest.approx(2.0)
    assert view.headline("Guaranteed ε, WEM-naive").raw == pytest.approx(0.5)
    assert view.verdicts[1].tone == "warning"
    assert view.headline("Guaranteed ε, WEM-naive").value in view.verdicts[1].text
    same = partial_release.guarantee_table(epsilon=1.0, sensitivity=2.0, kappa=2.0, pp_sensitivity=4.0)
    same = same[same["method"].isin(["PP (post-processing)"])]
    assert SV.partial_release_view(None, same, epsilon=1.0, month="m", seed=0).verdicts[0].tone == "neutral"


def test_sizes_view_names_the_alpha_its_share_uses():
    # The Mixture's sizes are drawn with the slider's α; the share of the way to the best case is E at that α,
    # and the sentence said "a fitted imbalance α̂ = 0.533 … 41%" as if the share were α̂'s.
    sizes = np.array([600, 300, 80, 20])
    view = SV.sizes_view(sizes, list("ABCD"), ["kept"] * 4, alpha=0.3, min_frac=0.001, seed=0)
    k, n = 4, 1000
    E = k * (digamma(0.3) - digamma(k * 0.3) + math.log(n))
    worst, best = k * math.log(n / k), (k - 1) + math.log(n - k)
    gap = (worst - E) / (worst - best)
    assert view.headline("Share of the way to the best case").value == percent(gap)
    assert f"for sizes drawn with α = 0.3, the stratified error's size term is expected {percent(gap)}" \
        in view.verdicts[0].text


# --------------------------------------------------------------------------- issue 24 item 3: the OpenDP script
def test_opendp_group_keys_name_every_row_as_the_page_does():
    """Polars, reading the file itself, names each row's group as ``group_codes`` labels it from pandas: text
    levels, numeric levels (integers and floats) and equal-width bins, combined with " × "."""
    import polars as pl

    from dpdash.stratify.script_opendp import _group_key_code
    from dpdash.common.data import drop_missing

    for groups in (["race", "gender"], ["hrs_work"], ["gender", "income"], ["age"]):
        frame, _ = drop_missing(pd.read_csv(ACS12), groups)
        codes, labels = SV.group_codes(frame, groups)
        keys = SV.opendp_group_keys(frame, groups)
        expr = eval("pl.concat_str([" + ", ".join(_group_key_code(g, keys[g]) for g in groups)
                    + "], separator=' × ')", {"pl": pl})
        got = (pl.scan_csv(ACS12).filter(pl.all_horizontal([pl.col(g).is_not_null() for g in groups]))
               .select(expr.alias("k")).collect()["k"].to_list())
        assert got == [labels[c] for c in codes], groups
    assert SV.opendp_group_keys(pd.read_csv(ACS12), ["income"])["income"]["kind"] == "bins"


def test_opendp_script_params_only_for_the_laplace_release_with_exact_weights():
    source = dict(data="d.csv", groups=["g"], value="v", center=1.0, scale=2.0, group_keys=None)
    common = dict(sizes=np.array([3, 4]), labels=["a", "b"], epsilon=0.5, R=3.0, gamma=0.05, mode="paper",
                  min_frac=0.01, small_strata="pool")
    p = SV.opendp_script_params(source, estimator="laplace", **common)
    assert p["sizes"] == [3, 4] and p["center"] == 1.0 and p["scale"] == 2.0 and p["epsilon"] == 0.5
    assert SV.opendp_script_params(source, estimator="coinpress", **common) is None
    assert SV.opendp_script_params(source, estimator="laplace", weights_mode="noisy", **common) is None
    assert SV.opendp_script_params(None, estimator="laplace", **common) is None


# Issue 31 item 5: the parameters file records exactly the analysis shown, and reads back.
_ALL = dict(epsilon=0.5, epsilons=[0.5], alpha=0.3, k=9, n=10_000, reps=30, seed=4, min_frac=0.001,
            small_strata="pool", estimator="laplace", R=3.0, gamma=0.05, clip_mode="paper", tau=1.0,
            sigma_mode="equal", weights="holdout", holdout=0.5, epsilon_weights=0.1, parity_normalized=False)


def test_upload_parameters_name_the_data_not_the_simulation():
    data = dict(value="wage", groups=["race", "health"], center=100.0, scale=40.0, data="wage.csv")
    p = SV.mean_parameters(_ALL, source="Upload", data_name="Your upload", data=data)
    assert (p["value_column"], p["group_columns"], p["center"], p["scale"]) == ("wage", ["race", "health"], 100, 40)
    assert not {"alpha", "k", "n", "tau", "sigma_mode", "weights", "holdout", "epsilon_weights"} & set(p)
    import json
    assert SV.read_mean_parameters(b"\xef\xbb\xbf" + json.dumps(p).encode()) == p  # reads back, BOM or not


def test_simulation_parameters_keep_only_the_controls_that_apply():
    p = SV.mean_parameters(_ALL, source="Mixture", data_name="Mixture")
    assert {"alpha", "k", "n", "tau", "sigma_mode", "weights", "holdout"} <= set(p) and "value_column" not in p
    assert "epsilon_weights" not in p  # weights come from a public share, not noisy counts
    acs = SV.mean_parameters({**_ALL, "estimator": "coinpress"}, source="ACS preset", data_name="ACS preset")
    assert "n" in acs and not {"alpha", "k", "gamma", "clip_mode"} & set(acs)
    with pytest.raises(ValueError, match="not a Mean view"):
        SV.read_mean_parameters('{"mode": "synthesis"}')


# --------------------------------------------------------------------------- issue 31 item 2: one row count
def test_rows_used_view_counts_and_reasons_match_the_file_read_with_the_csv_module():
    """acs12 averaged on income, grouped by race and lang: the count, the per-row reasons and the kept rows from the
    file's blank cells (the csv module, not pandas or the view)."""
    rows = _acs12_rows()
    frame = pd.read_csv(ACS12)
    rv = SV.rows_used_view(frame, value="income", groups=["race", "lang"], what="acs12")
    want = [", ".join(c for c in ("income", "race", "lang") if r[c] == "") for r in rows]
    gone = sum(1 for w in want if w)
    table = rv.tables["rows"]
    assert table["row"].tolist() == list(range(1, len(rows) + 1))
    assert table["reason"].tolist() == [f"no value in {w}" if w else "" for w in want]
    assert table["kept"].tolist() == [not w for w in want]
    assert (rv.headline("Rows used").raw, rv.headline("Rows left out").raw) == (len(rows) - gone, gone)
    left = dict(zip(rv.tables["left_out"]["reason"], rv.tables["left_out"]["rows"]))
    assert left == {f"no value in {w}": want.count(w) for w in set(want) if w}
    per_col = {c: sum(1 for r in rows if r[c] == "") for c in ("income", "lang")}
    assert dict(zip(rv.tables["by_column"]["column"], rv.tables["by_column"]["rows"])) == per_col
    assert len(rv.tables["kept"]) == len(rv.figures["codes"]) == len(rows) - gone
    assert rv.tables["kept"]["income"].tolist() == [float(r["income"]) for r, w in zip(rows, want) if not w]
    n_groups = len({(r["race"], r["lang"]) for r, w in zip(rows, want) if not w})
    assert len(rv.figures["labels"]) == n_groups
    text = rv.verdicts[0].text
    assert text.startswith(f"acs12: {len(rows) - gone:,} rows, {n_groups} groups. {gone:,} of {len(rows):,} rows "
                           f"left out: no value in income ({per_col['income']:,}), lang ({per_col['lang']:,})"), text


def test_rows_used_view_with_nothing_missing_says_all_rows_used():
    frame = pd.DataFrame({"v": [1.0, 2.0, 3.0], "g": ["a", "b", "a"], "other": [None, None, None]})
    rv = SV.rows_used_view(frame, value="v", groups=["g"])
    assert rv.verdicts[0].text == ("Your upload: 3 rows, 2 groups. All 3 rows used: none misses a value in a column "
                                   "the analysis uses.")
    assert rv.headline("Rows left out").raw == 0 and rv.tables["left_out"].empty and rv.tables["by_column"].empty
