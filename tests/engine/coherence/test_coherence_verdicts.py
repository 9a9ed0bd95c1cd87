"""Verdict sentences of the coherence explorer (dpdash/coherence/verdicts.py, issue 14 items 1, 2, 6).

Every number a sentence names is recomputed here from the inputs with other code: scipy's wasserstein_distance
and beta quantiles, numpy shares and quantiles, the spec's closed forms (§3.3 floor, §3.5 Theorem 7)."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta as beta_dist
from scipy.stats import wasserstein_distance

from dpdash.coherence import core as co
from dpdash.coherence import verdicts as cv
from dpdash.accounting import maxinfo as mi


def _pct(p: float) -> str:
    """Two significant figures, as a reader sees a share (independent of the engine's formatter)."""
    x = 100 * p
    if x == 0:
        return "0%"
    digits = max(0, 1 - math.floor(math.log10(abs(x))))
    return f"{x:,.{digits}f}%"


# ------------------------------------------------------------------------------------------ single split
def _split(rng, m, qa, qb):
    return np.where(rng.random(m) < qa, -1.0, 1.0), np.where(rng.random(m) < qb, -1.0, 1.0)


def test_preview_verdict_names_the_exposed_group_with_its_shares_and_w1():
    rng = np.random.default_rng(5)
    ev_a, ev_b = _split(rng, 4000, 0.06, 0.01)
    sm_a, sm_b = _split(rng, 300, 0.95, 0.02)
    w = [wasserstein_distance(ev_a, ev_b), wasserstein_distance(sm_a, sm_b)]
    frac = np.array([[np.mean(ev_a < 0), np.mean(ev_b < 0)], [np.mean(sm_a < 0), np.mean(sm_b < 0)]])
    s = cv.preview_verdict(names=["Everyone", "Rare"], sizes=[8000, 600], w1=w, frac_negative=frac,
                           in_collection=[True, True], alpha=0.2)
    assert w[0] < 0.2 < w[1]
    assert f"flags {_pct(frac[1, 0])} of the released Rare members and {_pct(frac[1, 1])} of the held-out" in s
    assert f"W1 {w[1]:.2f}, above the 0.20 line" in s and "exposes them" in s
    assert f"Everyone together looks fine (W1 {w[0]:.2f})" in s
    # the same split below the line: no group treated differently, the largest W1 named
    s2 = cv.preview_verdict(names=["Everyone", "Rare"], sizes=[8000, 600], w1=w, frac_negative=frac,
                            in_collection=[True, True], alpha=1.99)
    assert s2.startswith("No kept group is treated differently") and f"largest W1 {w[1]:.2f}, for Rare" in s2
    # an excluded group does not count, even when its W1 is large
    s3 = cv.preview_verdict(names=["Everyone", "Rare"], sizes=[8000, 600], w1=w, frac_negative=frac,
                            in_collection=[True, False], alpha=0.2)
    assert "No kept group" in s3 and f"largest W1 {w[0]:.2f}, for Everyone" in s3
    soft = cv.preview_verdict(names=["Everyone", "Rare"], sizes=[8000, 600], w1=w, frac_negative=frac,
                              in_collection=[True, True], alpha=0.2, output="soft")
    assert "gives a negative score to" in soft


@pytest.mark.parametrize("w_top, word", [(0.2004, "above"), (0.20049, "above"), (0.1996, "below"),
                                          (0.19999, "below"), (0.2, "below")])
def test_a_w1_next_to_alpha_is_never_written_as_alpha(w_top, word):
    """A W1 that differs from α is shown with enough decimals to differ from it, on the right side of it."""
    frac = np.array([[0.05, 0.01], [0.6, 0.1]])
    s = cv.preview_verdict(names=["Everyone", "Rare"], sizes=[8000, 600], w1=[0.05, w_top], frac_negative=frac,
                           in_collection=[True, True], alpha=0.2)
    shown = re.search(r"W1 (\d\.\d+)", s if word == "above" else s.split("largest ")[1]).group(1)
    decimals = len(shown.split(".")[1])
    assert abs(float(shown) - w_top) <= 0.5 * 10 ** -decimals + 1e-12, (shown, w_top)
    assert f"{word} the 0.20 line" in s
    if w_top != 0.2:
        assert float(shown) != 0.2 and (float(shown) > 0.2) == (word == "above"), s
    sweep = pd.DataFrame([dict(epsilon=1.0, group="A", size=900, mean_w1=0.1, q05_w1=0, q95_w1=1),
                          dict(epsilon=10.0, group="A", size=900, mean_w1=0.20049, q05_w1=0, q95_w1=1)])
    assert "at ε = 10 A rises to 0.2005" in cv.sweep_verdict(sweep, alpha=0.2)


def test_preview_verdict_without_a_comparable_group():
    s = cv.preview_verdict(names=["A"], sizes=[3], w1=[math.nan], frac_negative=np.full((1, 2), np.nan),
                           in_collection=[True], alpha=0.2)
    assert "lower γ" in s


# ------------------------------------------------------------------------------------------ repeated runs
def _result(w1: np.ndarray, sizes=(1000, 60)) -> co.ExperimentResult:
    R, G = w1.shape
    cfg = co.ExperimentConfig(label="y", sensitive_value=1, lens=("x",),
                              groups=tuple(co.GroupSpec(f"g{j}") for j in range(G)), repetitions=R)
    tr = co.TrialResult(0, w1[0], np.ones((G, 2)), np.zeros((G, 2)))
    return co.ExperimentResult(cfg, ("Everyone", "Small"), tuple(sizes), 2000, 0, w1, np.ones((R, G, 2)),
                               np.zeros((R, G, 2)), tr, 0.1)


def test_runs_verdict_counts_failures_with_the_clopper_pearson_interval():
    rng = np.random.default_rng(2)
    w1 = np.column_stack([rng.uniform(0, 0.1, 20), rng.uniform(0, 0.6, 20)])
    res = _result(w1)
    alpha = 0.3
    k = int(np.sum(w1.max(axis=1) > alpha))
    lo, hi = beta_dist.ppf(0.025, k, 20 - k + 1), beta_dist.ppf(0.975, k + 1, 20 - k)
    floor = {"Everyone": rng.uniform(0, 0.05, 200), "Small": rng.uniform(0, 0.3, 200)}
    s = cv.runs_verdict(res, alpha=alpha, gamma=0, estimate=co.beta_hat(res, alpha), floor=floor)
    assert 0 < k < 20
    assert f"In {k} of 20 runs" in s and f"between {_pct(lo)} and {_pct(hi)}" in s
    assert f"Most affected: Small, mean W1 {w1[:, 1].mean():.2f}" in s
    assert f"against {floor['Small'].mean():.2f} from random splitting alone" in s


def test_runs_verdict_without_failures_says_it_proves_nothing():
    w1 = np.full((10, 2), 0.05)
    w1[3, 1] = 0.17
    res = _result(w1, sizes=(1000, 1))  # the small group is below γ = 2: excluded
    s = cv.runs_verdict(res, alpha=0.1, gamma=0, estimate=co.beta_hat(res, 0.1))
    assert s.startswith("No run out of 10") and "largest W1 0.05" in s and "does not prove" in s
    assert "below 10%" in s and "Most affected: Everyone" in s


# ------------------------------------------------------------------------------------------ ε sweep
def test_sweep_verdict_finds_the_largest_epsilon_below_alpha():
    rng = np.random.default_rng(9)
    floor = {"A": rng.uniform(0, 0.1, 200), "B": rng.uniform(0, 0.3, 200)}
    rows = []
    for e, a, b in ((0.1, 0.02, 0.05), (1.0, 0.05, 0.19), (10.0, 0.08, 0.9), (math.inf, 0.09, 1.5)):
        rows += [dict(epsilon=e, group="A", size=900, mean_w1=a, q05_w1=0, q95_w1=1),
                 dict(epsilon=e, group="B", size=50, mean_w1=b, q05_w1=0, q95_w1=1)]
    sweep = pd.DataFrame(rows)
    alpha = 0.2
    ok = [e for e in (0.1, 1.0, 10.0) if (sweep[sweep.epsilon == e].mean_w1 <= alpha).all()]
    assert ok == [0.1, 1.0]
    s = cv.sweep_verdict(sweep, alpha=alpha, floor=floor)
    assert s.startswith("Up to ε = 1 every group's mean W1 stays at or below the α = 0.20 line")
    assert "at ε = 10 B rises to 0.90" in s
    assert f"with no noise (exact histogram, not DP) B reaches 1.50 (random splitting alone gives it " \
           f"{floor['B'].mean():.2f})" in s
    s2 = cv.sweep_verdict(sweep.assign(mean_w1=sweep.mean_w1 + 0.5), alpha=alpha)
    assert s2.startswith("Even at ε = 0.1, B has a mean W1 of 0.55, above the α = 0.20 line")
    s3 = cv.sweep_verdict(sweep, alpha=1.9)
    assert s3.startswith("At every ε tried (up to 10) every group's mean W1 stays at or below the α = 1.90 line")


# ------------------------------------------------------------------------------------------ theory
def _gamma7(eps, n, a, b, G):  # spec §3.5, Eq. (12) with erratum E1
    zeta = eps**2 * n / 4 + (eps / 2) * math.sqrt(n * math.log(4 * G / b))
    L = math.log(16 * G / b)
    return max(33.2 * (zeta + L) / a**2, 144 * math.log(6 / a) / a**2, 16.6 * (zeta + L), 10.6 / a, 80.0)


def test_theory_verdict_states_the_size_constraint():
    n, a, b, G = 18946, 0.2, 0.05, 2
    g = _gamma7(0.01, n, a, b, G)
    assert g == pytest.approx(mi.gamma_pure(0.01, n, a, b, G).gamma)
    s = cv.theory_verdict(gamma_required=g, n=n, epsilon=0.01, meets=1, kept=2, dp_release=False, alpha=a,
                          smallest=("DREM = 1", 1022), eps_for_smallest=0.0031)
    assert s.startswith("If this release were ε-DP with ε = 0.01, Theorem 7")
    assert f"at least {math.ceil(g):,} members" in s and "1 of 2 kept groups" in s
    assert "ε ≤ 0.0031 would protect the smallest kept group, DREM = 1 (1,022 members)" in s
    g1 = _gamma7(1.0, n, a, b, G)
    s1 = cv.theory_verdict(gamma_required=g1, n=n, epsilon=1.0, meets=0, kept=2, dp_release=True, alpha=a)
    assert g1 > n and s1.startswith("At ε = 1, Theorem 7 needs") and "protects no group here" in s1


# ------------------------------------------------------------------------------------------ Section 7
def test_section7_verdict_counts_splits_above_the_bound():
    w = np.array([[0.01, 0.3], [0.02, 0.05], [0.5, 0.9], [0.03, 0.04]])
    res = co.SingleColumnResult(("Everyone", "Few"), (1000, 20), w, np.array([0.4, 0.8]), np.zeros(2))
    k = int(np.any(w > np.array([0.4, 0.8]), axis=1).sum())
    s = cv.section7_verdict(res, column="SEX", curator="column")
    assert k == 1 and f"exceeded in {k} of 4 splits" in s and "largest W1 was 0.90 (Few)" in s
    s2 = cv.section7_verdict(co.SingleColumnResult(("A",), (9,), w[:, :1], np.array([3.0]), np.zeros(1)),
                             column="SEX", curator="count")
    assert "count of ones in SEX" in s2 and "says nothing at this size" in s2


# ------------------------------------------------------------------------------------------ guidance
@pytest.mark.parametrize("alpha", [0.05, 0.2, 0.37, 1.0, 1.9])
def test_min_members_for_alpha_is_where_chance_drops_below_alpha(alpha):
    chance = [4 * math.sqrt(0.25 / m) * math.sqrt(2 / math.pi) for m in range(2, 20_000)]  # spec §3.3, q = 1/2
    want = next(m for m, c in zip(range(2, 20_000), chance) if c <= alpha)
    assert cv.min_members_for_alpha(alpha) == want
    assert cv.min_members_for_alpha(0.0) is None


def test_small_group_warning_names_the_group_the_chance_level_and_the_fix():
    sizes = {"Everyone": 5000, "Few": 7, "Excluded": 3}
    out = cv.small_group_warnings(sizes, {"Everyone": True, "Few": True, "Excluded": False}, alpha=0.2)
    chance = 4 * math.sqrt(0.25 / 7) * math.sqrt(2 / math.pi)
    assert len(out) == 1 and out[0].startswith("Few has only 7 members")
    assert f"W1 of about {chance:.2f}" in out[0] and "raise γ to 64" in out[0]


def test_builder_and_output_guidance():
    assert cv.builder_column_warning("SEX", 2, 1000) is None
    w = cv.builder_column_warning("INDP", 285, 12000)
    assert w.startswith("INDP has 285 different values") and f"about {12000 / 285:.0f} of the 12,000" in w
    assert cv.soft_output_note("nearest_neighbor", "soft") and cv.soft_output_note("random_forest", "soft") is None


# ------------------------------------------------------------------------------------------ tables for people
def test_tables_for_people_have_no_code_names():
    rng = np.random.default_rng(0)
    res = _result(rng.uniform(0, 0.5, (6, 2)))
    floor = {"Everyone": rng.uniform(0, 0.1, 50), "Small": rng.uniform(0, 0.4, 50)}
    summ = cv.summary_for_people(co.summarize(res), floor)
    runs = cv.runs_for_people(res.w1_table())
    for frame in (summ, runs):
        assert not [c for c in frame.columns if re.search(r"_|^[a-z]+[A-Z]", c)], list(frame.columns)
    assert summ["W1 from chance alone (mean)"].tolist() == pytest.approx([floor["Everyone"].mean(),
                                                                        floor["Small"].mean()])
    assert summ["mean W1 over runs"].tolist() == pytest.approx(res.w1.mean(axis=0).tolist())
    sweep = pd.DataFrame([dict(epsilon=1.0, group="A", size=3, mean_w1=0.1, q05_w1=0.0, q95_w1=0.2)])
    assert "_" not in "".join(cv.sweep_for_people(co.sweep_for_export(sweep)).columns)


# ------------------------------------------------------------------------------------------ issue 26: α over [0, 2]
def _need_log10(alpha: float) -> float:
    """log10 of the size at which chance W1 = 4·sqrt(1/(4m))·sqrt(2/π) equals α (spec §3.3, q = 1/2), in log space."""
    return math.log10(8 / math.pi) - 2 * math.log10(alpha)


@pytest.mark.parametrize("alpha", [1e-160, 1e-200, 1e-300, 5e-324, 1e-9, 1e-7])
def test_min_members_for_alpha_is_unbounded_for_tiny_alpha_without_overflow(alpha):
    # issue 26: /coherence_explorer?coh_alpha=1e-160 raised OverflowError (the doubling search reached 2**1064)
    need = cv.min_members_for_alpha(alpha)
    assert _need_log10(alpha) > math.log10(cv.MAX_MEMBERS)
    assert need == math.inf


@pytest.mark.parametrize("alpha", [2.0, 1.0, 0.2, 0.01, 0.005, 1e-4, 1e-6])
def test_min_members_for_alpha_matches_the_closed_form_where_finite(alpha):
    need = cv.min_members_for_alpha(alpha)
    chance = lambda m: 4 * math.sqrt(0.25 / m) * math.sqrt(2 / math.pi)  # noqa: E731
    assert isinstance(need, int) and need >= 2
    assert chance(need) <= alpha and (need == 2 or chance(need - 1) > alpha)
    closed = 8 / (math.pi * alpha * alpha)  # the same bound solved for m
    assert abs(need - max(2.0, closed)) < 1 + 1e-9 * need


def test_small_group_warnings_with_an_alpha_below_chance_for_every_group():
    sizes = {"Everyone": 20_000, "DREM = 1": 1_022}
    out = cv.small_group_warnings(sizes, {"Everyone": True, "DREM = 1": True}, alpha=1e-160)
    assert len(out) == 1, out
    chance_all = 4 * math.sqrt(0.25 / 20_000) * math.sqrt(2 / math.pi)
    assert "10⁻¹⁶⁰" in out[0] and "0.00" not in out[0]
    assert f"{chance_all:.3f}" in out[0]  # the α a reader needs for the largest kept group


@pytest.mark.parametrize("alpha, text", [(0.2, "0.20"), (0.0, "0.00"), (1.25, "1.25"), (0.125, "0.125"),
                                         (1e-160, "10⁻¹⁶⁰"), (0.0004, "4·10⁻⁴"), (2.0, "2.00")])
def test_alpha_is_written_as_set_never_rounded_to_another_value(alpha, text):
    assert cv.alpha_text(alpha) == text


def test_verdicts_say_a_tiny_alpha_as_it_is():
    s = cv.preview_verdict(names=["Everyone"], sizes=[100], w1=[0.04], frac_negative=np.array([[0.1, 0.12]]),
                           in_collection=[True], alpha=1e-160)
    assert "10⁻¹⁶⁰ line" in s and "0.00 line" not in s
