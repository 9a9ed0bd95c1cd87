"""dpdash.stratify.verdicts: the viewer's sentences name the right numbers and groups.

Expected counts, means and shares are computed in the tests by brute force (plain loops over the rows), never by
calling the function under test twice.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpdash.stratify import partial_release
from dpdash.stratify import core as S
from dpdash.stratify import verdicts as V


def _experiment():
    sizes = np.array([1, 30, 300, 3000])
    return sizes, S.run_mean_experiment(sizes=sizes, mu=np.array([2.0, 0.5, -0.3, 0.1]), sigma=np.ones(4),
                                        epsilons=(0.5, 1.0), R=3.0, gamma=0.05, reps=12, rng=7)


def test_comparison_is_the_mean_over_repetitions_per_group():
    sizes, df = _experiment()
    comp = V.group_error_comparison(df, epsilon=1.0, labels=list("ABCD"), status=["kept"] * 4)
    for i in range(4):
        for method, col in (("naive", "mean error, one global release"),
                            ("stratified", "mean error, per-group release")):
            vals = [r.abs_err for r in df.itertuples() if r.level == "group" and r.group == i
                    and r.method == method and r.epsilon == 1.0]
            assert len(vals) == 12 and comp[col].iloc[i] == pytest.approx(sum(vals) / 12)
    assert list(comp["records"]) == list(sizes) and list(comp["repetitions"]) == [12] * 4


def test_mean_verdict_counts_helped_groups_and_names_the_hurt_one():
    sizes, df = _experiment()
    comp = V.group_error_comparison(df, epsilon=1.0, labels=["G1", "G2", "G3", "G4"], status=["kept"] * 4)
    g = comp["mean error, one global release"].to_numpy()
    s = comp["mean error, per-group release"].to_numpy()
    helped = sum(1 for a, b in zip(g, s) if b < a)
    hurt = [f"G{i + 1}" for i in range(4) if not s[i] < g[i]]
    text = V.mean_verdict(comp, epsilon=1.0, pop_global=0.01, pop_stratified=0.03, reps=12)
    assert f"lowered the error of {helped} of 4 groups" in text[0]
    # G1 (1 record, mean 2.0 far from the rest) must be hurt: its own noise has scale 2C(1)/ε ≈ 9.
    assert "G1" in hurt and "G1 (1 record) got worse" in text[0]
    assert "from 0.010 to 0.030 (3.0× larger)" in text[1]


def test_mean_verdict_all_helped_and_dropped_groups():
    comp = pd.DataFrame({"group": ["A", "B", "C"], "records": [10, 20, 1], "status": ["kept", "kept", "dropped"],
                         "mean error, one global release": [1.0, 2.0, np.nan],
                         "mean error, per-group release": [0.5, 0.1, np.nan], "repetitions": [5, 5, 5]})
    first, second = V.mean_verdict(comp, epsilon=2, pop_global=0.1, pop_stratified=0.105, reps=5)
    assert "lowered the error of all 2 groups" in first and "1 group was not released" in first
    assert "about the same" in second


def test_clipped_share_brute_force():
    rng = np.random.default_rng(1)
    x = rng.normal(0, 3, 500)
    g = rng.integers(0, 3, 500)
    clip = np.array([1.0, 4.0, np.nan])
    n_clip, n_all = V.clipped_share(x, g, clip)
    assert n_all == sum(1 for gi in g if gi != 2)
    assert n_clip == sum(1 for xi, gi in zip(x, g) if gi != 2 and abs(xi) > clip[gi])


def test_clipping_guidance_says_how_many_and_offers_the_fix():
    assert V.clipping_guidance(4, 100, upload=True) is None  # 4% ≤ 5%
    text = V.clipping_guidance(80, 100, upload=True, low=10.0, high=90.0, median=50.0)
    assert text.startswith("80 of 100 values (80%)") and "most values" in text and "median 50.0" in text
    assert "raise the public bound R" in V.clipping_guidance(10, 100, upload=False)


def test_many_groups_and_pooled_guidance():
    assert V.many_groups_guidance(9, 10_000) is None
    assert "48" in V.many_groups_guidance(48, 4_800) and "100 records per group" in V.many_groups_guidance(48, 4_800)
    lay = S.strata_layout([1, 500, 600], min_frac=0.001, small_strata="pool")
    assert "one record (A)" in V.pooled_guidance(["A", "B", "C"], [1, 500, 600], lay.status)
    lay = S.strata_layout([2, 500, 600], min_frac=0.002, small_strata="pool")
    assert "Only one group (A, 2 records)" in V.pooled_guidance(["A", "B", "C"], [2, 500, 600], lay.status)
    lay = S.strata_layout([2, 2, 600], min_frac=0.01, small_strata="pool")
    assert V.pooled_guidance(["A", "B", "C"], [2, 2, 600], lay.status) is None


def test_synth_verdict_counts_and_accuracy():
    t = pd.DataFrame({"group": ["a", "b", "c"], "size": [500, 40, 3], "error_vanilla": [0.2, 0.5, 0.9],
                      "error_stratified": [0.1, 0.3, 1.2]})
    first, second = V.synth_verdict(t, epsilon=1, synthesizer="MWEM", accuracy_vanilla=0.8, accuracy_stratified=0.75)
    assert "lowered the workload error of 2 of 3 groups; c (3 records) got worse" in first
    assert "80%" in second and "75%" in second


def test_release_and_guarantee_verdicts():
    loss = pd.DataFrame({"method": ["PP", "WEM-naive"], "mean total ℓ₂ loss": [10.0, 35.0]})
    text = V.release_verdict(loss, epsilon=1, month="2021-03")
    assert "PP comes closest" in text and "WEM-naive is furthest off (35, 3.5× larger)" in text
    # Spec §2.7: at Δ = κ = 2, PP carries 4ε/Δ = 2ε and WEM-naive 2ε/(κΔ) = ε/2.
    gt = partial_release.guarantee_table(epsilon=1.0, sensitivity=2.0, kappa=2.0, pp_sensitivity=None)
    text = V.guarantee_verdict(gt)
    assert "PP (post-processing) carries ε = 2.0" in text and "WEM-naive ε = 0.50" in text


def test_synth_verdict_says_when_the_classifier_learned_nothing():
    t = pd.DataFrame({"group": ["a"], "size": [10], "error_vanilla": [0.2], "error_stratified": [0.1]})
    text = V.synth_verdict(t, epsilon=1, synthesizer="MWEM", accuracy_vanilla=0.75, accuracy_stratified=0.75,
                           majority=0.75)[1]
    assert "no better than always guessing the commonest label (75%)" in text
    text = V.synth_verdict(t, epsilon=1, synthesizer="MWEM", accuracy_vanilla=0.8, accuracy_stratified=0.75,
                           majority=0.75)[1]
    assert "no better" not in text


def test_edge_sentences():
    # More than three hurt groups: three named (smallest first), the rest counted.
    t = pd.DataFrame({"group": list("ABCDE"), "records": [5, 4, 3, 2, 1], "status": ["kept"] * 5,
                      "mean error, one global release": [0.1] * 5, "mean error, per-group release": [1.0] * 5,
                      "repetitions": [1] * 5})
    first, _ = V.mean_verdict(t, epsilon=1, pop_global=0.0, pop_stratified=0.1, reps=1)
    assert "lowered the error of 0 of 5 groups, averaged over 1 repetition;" in first
    assert "E (1 record), D (2 records), C (3 records) and 2 more got worse" in first
    assert "not comparable" in V.mean_verdict(t, epsilon=1, pop_global=0.0, pop_stratified=0.1, reps=1)[1]
    none = t.assign(**{"mean error, per-group release": np.nan})
    assert "released no group" in V.mean_verdict(none, epsilon=1, pop_global=1, pop_stratified=1, reps=1)[0]
    assert V.sizes_verdict(k=3, n=30, gap=float("nan"), alpha_hat=1.0) == "3 groups share 30 records."
    assert "(equal sizes)" in V.sizes_verdict(k=3, n=30, gap=0.0, alpha_hat=float("inf"))
    assert "41%" in V.sizes_verdict(k=9, n=10_000, gap=0.41, alpha_hat=0.53)
    assert "past the best case" not in V.sizes_verdict(k=9, n=10_000, gap=0.41, alpha_hat=0.53)


def test_sizes_verdict_past_the_best_case_says_why():
    """Theorem 10's E for continuous sizes: k = 40, α = 0.13, n = 1,000 gives E = k(ψ(α) − ψ(kα) + log n) below the
    whole-group minimum (k−1) + log(n−k), so the share exceeds 100% and the sentence must say why (spec §2.6)."""
    from scipy.special import digamma
    k, a, n = 40, 0.13, 1000
    E = k * (digamma(a) - digamma(k * a) + math.log(n))
    worst, best = k * math.log(n / k), (k - 1) + math.log(n - k)
    gap = (worst - E) / (worst - best)
    assert gap > 1
    text = V.sizes_verdict(k=k, n=n, gap=gap, alpha_hat=0.2, alpha=a)
    assert "past the best case for whole groups" in text and "less than one record" in text
    # Clipping guidance for an upload without the raw column's numbers.
    assert V.clipping_guidance(60, 100, upload=True).endswith("near its spread.")
    assert V.pooled_guidance(["A", "B"], [5, 6], ["kept", "kept"]) is None
    # Synthesis: nothing evaluated; all groups helped; partially private edge cases.
    empty = pd.DataFrame({"group": ["a"], "size": [3], "error_vanilla": [np.nan], "error_stratified": [0.1]})
    assert "could not be compared" in V.synth_verdict(empty, epsilon=1, synthesizer="MWEM", accuracy_vanilla=None,
                                                      accuracy_stratified=None)[0]
    good = pd.DataFrame({"group": ["a", "b"], "size": [3, 4], "error_vanilla": [0.5, 0.5],
                         "error_stratified": [0.1, 0.2]})
    assert "lowered the workload error of all 2 of 2 groups." in V.synth_verdict(
        good, epsilon=1, synthesizer="MWEM", accuracy_vanilla=None, accuracy_stratified=None)[0]
    assert V.release_verdict(pd.DataFrame({"method": ["PP"], "mean total ℓ₂ loss": [np.nan]}), epsilon=1,
                             month="m").startswith("No release was computed")
    assert "off by 12 in total" in V.release_verdict(pd.DataFrame({"method": ["PP"], "mean total ℓ₂ loss": [12.0]}),
                                                     epsilon=1, month="m")
    assert V.guarantee_verdict(pd.DataFrame({"method": ["PP"]})) is None
    assert V.guarantee_verdict(pd.DataFrame({"method": ["PP"], "guaranteed epsilon": ["x"]})) is None
    same = pd.DataFrame({"method": ["PP", "WEM"], "guaranteed epsilon": [1.0, 1.0]})
    assert V.guarantee_verdict(same) == "Every method shown protects a person's record with the same ε = 1.0."


# --------------------------------------------------------------------------- issue 22: the tone follows the news
def _comparison(helped: int, hurt: int) -> pd.DataFrame:
    """``helped`` groups whose per-group error is below the global one, then ``hurt`` groups above it."""
    k = helped + hurt
    g = np.full(k, 0.5)
    s = np.concatenate([np.full(helped, 0.1), np.full(hurt, 0.9)])
    return pd.DataFrame({"group": [f"G{i}" for i in range(k)], "records": np.arange(k, 0, -1) + 1,
                         "status": ["kept"] * k, "mean error, one global release": g,
                         "mean error, per-group release": s, "repetitions": [5] * k})


def test_mean_verdict_51_of_234_is_not_good_news():
    # Issue 22: the acs12 upload (grouped by income) showed "lowered the error of 51 of 234 groups … 183 got
    # worse" in a green "good news" box. 51 better against 183 worse is bad news: a warning.
    sentences = V.mean_verdict_sentences(_comparison(51, 183), epsilon=1.0, pop_global=0.01, pop_stratified=0.012,
                                         reps=30)
    first = sentences[0]
    assert "lowered the error of 51 of 234 groups" in first.text and "got worse" in first.text
    assert first.tone == "warning"


@pytest.mark.parametrize("helped,hurt,tone", [(9, 0, "good"), (8, 1, "neutral"), (5, 4, "neutral"),
                                              (4, 4, "warning"), (1, 8, "warning"), (0, 3, "warning")])
def test_mean_verdict_tone_by_share_of_groups_helped(helped, hurt, tone):
    first = V.mean_verdict_sentences(_comparison(helped, hurt), epsilon=1.0, pop_global=0.01, pop_stratified=0.01,
                                     reps=5)[0]
    assert first.tone == tone
    assert (f"all {helped} groups" if hurt == 0 else f"{helped} of {helped + hurt} groups") in first.text


@pytest.mark.parametrize("glob,strat,tone,words", [(0.01, 0.0105, "good", "about the same"),
                                                   (0.01, 0.005, "good", "2.0× smaller"),
                                                   (0.01, 0.015, "neutral", "1.5× larger"),
                                                   (0.01, 0.05, "warning", "5.0× larger")])
def test_population_sentence_tone(glob, strat, tone, words):
    second = V.mean_verdict_sentences(_comparison(3, 0), epsilon=1.0, pop_global=glob, pop_stratified=strat,
                                      reps=5)[1]
    assert second.tone == tone and words in second.text


def test_synth_verdict_tone_follows_the_news():
    def table(helped, hurt):
        k = helped + hurt
        return pd.DataFrame({"group": [f"g{i}" for i in range(k)], "size": np.arange(k) + 10,
                             "error_vanilla": np.full(k, 0.5),
                             "error_stratified": np.concatenate([np.full(helped, 0.2), np.full(hurt, 0.8)])})
    kw = dict(epsilon=1, synthesizer="MWEM", accuracy_vanilla=0.8, accuracy_stratified=0.8, majority=0.7)
    assert V.synth_verdict_sentences(table(2, 8), **kw)[0].tone == "warning"
    assert V.synth_verdict_sentences(table(8, 2), **kw)[0].tone == "neutral"
    assert V.synth_verdict_sentences(table(10, 0), **kw)[0].tone == "good"
    # A classifier no better than guessing the commonest label is a warning, whatever the groups did.
    flat = dict(kw, accuracy_vanilla=0.7, accuracy_stratified=0.7)
    assert V.synth_verdict_sentences(table(10, 0), **flat)[1].tone == "warning"


@pytest.mark.parametrize("naive,strat,tone,words", [(2.0, 0.5, "good", "4.0× smaller"),
                                                    (0.5, 2.0, "warning", "4.0× larger"),
                                                    (1.0, 1.05, "neutral", "about the same")])
def test_parity_verdict(naive, strat, tone, words):
    # Issue 25: the stratified Parity tab had cards and no verdict.
    s = V.parity_verdict({"naive": naive, "stratified": strat, "split": 1.0}, epsilon=0.5, normalized=False,
                         reps=10)
    assert s.tone == tone and words in s.text
    assert "ε = 0.5" in s.text and "absolute" in s.text and "10 repetitions" in s.text
    assert V.parity_verdict({"coinpress": 1.0, "strat_coinpress": 1.0}, epsilon=1, normalized=True,
                            reps=1).tone == "neutral"
