"""dpdash/sortition/verdicts.py: every number a verdict names is checked against an independent computation.

Independent sources: brute force over all k-subsets of tiny pools (uniform selection, seat concentration), the
cvxpy-leximin package as a second leximax solver (worst-off group utility), a maximin LP over every enumerated
quota-feasible panel (the quota tab's smallest chance), and the paper's stated memberships ([b] Example 13).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from scipy.optimize import linprog

from dpdash.sortition import core as lx
from dpdash.sortition import verdicts as lv
from dpdash.common.formatting import percent


def _uniform_by_enumeration(V, k):
    """Expected group utilities when every k-subset is equally likely (enumerated, no k/n formula)."""
    n = V.shape[0]
    combos = list(itertools.combinations(range(n), k))
    return np.mean([V[list(c)].sum(axis=0) for c in combos], axis=0)


def _fewest_for_half(x, k):
    """Brute force: the smallest subset size whose chances add up to at least k/2."""
    n = len(x)
    for size in range(1, n + 1):
        if max(sum(x[i] for i in c) for c in itertools.combinations(range(n), size)) >= k / 2 - 1e-9:
            return size
    return n


def _cvxpy_leximin_y(V, k):
    import cvxpy as cp
    import cvxpy_leximin

    n, m = V.shape
    x = cp.Variable(n)
    utils = [V[:, j] @ x for j in range(m)]
    prob = cvxpy_leximin.Problem(cvxpy_leximin.Leximin(utils), [x >= 0, x <= 1, cp.sum(x) == k])
    prob.solve(method="saturation", solver=cp.HIGHS)
    return np.array([u.value for u in utils])


def test_lx1_cohort_verdict_names_worst_group_uniform_and_concentration():
    V, k, names = lx.LX1_VALUES, 3, ("G1", "G2", "G3", "G4")
    res = lx.leximax_marginals(V, k=k)
    f = lv.cohort_facts(V, res.x, k=k, group_names=names)
    # spec LX1: the worst-off utility at k = 3 is 31/30, shared by G2 and G3 (both named, whatever the round-off)
    assert f.worst_utility == pytest.approx(31 / 30, abs=1e-7) and f.worst_groups == ("G2", "G3")
    yu = _uniform_by_enumeration(V, k)
    assert f.uniform_worst_utility == pytest.approx(yu.min()) and f.uniform_worst_group == f"G{yu.argmin() + 1}"
    assert f.uniform_worst_utility == pytest.approx(0.65)               # G2's column sum 1.3, half of it
    assert f.top_count == _fewest_for_half(res.x, k)
    assert f.n_zero == int(sum(v <= 1e-9 for v in res.x)) and not f.membership
    text = " ".join(lv.cohort_verdicts(f))
    assert "the worst-off groups, G2 and G3, can each expect 1.033 in total value in a cohort of 3" in text
    assert "would give the worst-off group (G2) 0.65" in text
    assert f"go to {f.top_count} candidate" in text


@pytest.mark.parametrize("seed, n, m, k", [(3, 9, 3, 3), (4, 8, 4, 2)])
def test_worst_group_matches_cvxpy_leximin_and_uniform_brute_force(seed, n, m, k):
    V = np.round(np.random.default_rng(seed).random((n, m)), 2)
    y_ind = _cvxpy_leximin_y(V, k)
    res = lx.leximax_marginals(V, k=k)
    f = lv.cohort_facts(V, res.x, k=k, group_names=[f"G{j + 1}" for j in range(m)])
    assert f.worst_utility == pytest.approx(y_ind.min(), abs=1e-6)
    assert f.uniform_worst_utility == pytest.approx(_uniform_by_enumeration(V, k).min())
    assert f.top_count == _fewest_for_half(res.x, k)
    first = lv.cohort_verdicts(f)[0]
    assert f"expect {y_ind.min():.4g} in total value" in first  # the card's 4 significant figures
    tied = [f"G{j + 1}" for j in range(m) if y_ind[j] <= y_ind.min() + 1e-6]
    assert f.worst_groups == tuple(tied)


def test_membership_pool_counts_members_and_flags_groups_far_above_pool_share():
    # 10 candidates; group "rare" has 1 member (10% of the pool). Chances: the rare member is certain, k = 2:
    # rare holds 1 of 2 expected seats = 50%, 5× its pool share; "common" (all 10) holds 100% = 1× its share
    V = np.zeros((10, 2))
    V[:, 0] = 1
    V[0, 1] = 1
    x = np.array([1.0] + [1 / 9] * 9)
    rows = lv.over_represented(V, x, k=2, group_names=["common", "rare"])
    assert rows == [("rare", pytest.approx(0.1), pytest.approx(0.5))]
    msg = lv.over_represented_warning(rows)
    assert "rare is 10% of the pool but holds 50% of the expected seats (5.0× its share)" in msg
    f = lv.cohort_facts(V, x, k=2, group_names=["common", "rare"])
    assert f.membership and "can expect 1 member in a cohort of 2" in lv.cohort_verdicts(f)[0]
    # values other than 0/1 are not head counts: no over-representation claim
    assert lv.over_represented(V * 0.5, x, k=2, group_names=["common", "rare"]) == []


def test_zero_chance_and_equal_chances():
    x = np.array([1.0, 1.0, 0.0, 0.0, 1.0])
    f = lv.cohort_facts(np.eye(5)[:, :2], x, k=3, group_names=["a", "b"])
    text = " ".join(lv.cohort_verdicts(f))
    assert "2 candidates of 5 have no chance" in text and "the most likely candidate has 100%" in text
    # 3 of 5 certain: half of k = 1.5 seats need 2 candidates, who hold 2/3 of the seats
    assert "67% of the seats go to 2 candidates (40% of the pool)" in text
    assert "c3, c4" not in (lv.zero_chance_warning(["c1", "c2", "c3", "c4", "c5"], x) or "")
    assert "(c3 and c4) can never be selected" in lv.zero_chance_warning(["c1", "c2", "c3", "c4", "c5"], x)
    assert lv.zero_chance_warning(["a", "b"], [0.5, 0.5]) is None
    eq = lv.cohort_facts(np.ones((4, 1)), np.full(4, 0.5), k=2, group_names=["all"])
    assert lv.cohort_verdicts(eq)[1] == "Every candidate has the same chance, 50%."


def test_draw_verdict_counts_draws_below_expectation():
    worst = np.array([0.5] * 30 + [1.0] * 50 + [2.0] * 20)          # 100 draws, expectation 1.0
    text = lv.draw_verdict(worst, expected_min=1.0, n_draws=100, scheme="dependent", seed=7)
    assert "in 30% of 100 simulated single draws (exactly k members, seed 7)" in text
    # 0.5 is the 5% quantile, but no draw is below it and 30% are at it (issue 22: a quantile read as a share)
    assert "less than 0.5" not in text
    assert "lowest it got was 0.5, in 30% of draws" in text


def test_draw_verdict_lx1_k3_names_the_lowest_draw_and_its_share():
    """Issue 22: LX1, k = 3 said "in 5% of draws less than 0.9"; only two cohorts exist, none below 0.9.

    Independent: the two cohorts and their worst-off utilities are worked out by hand from spec LX4
    ({c1,c5,c6} → worst 1.0, {c2,c5,c6} → worst 0.9), the share of 0.9 is counted in the drawn cohorts.
    """
    x = np.array([2 / 3, 1 / 3, 0, 0, 1, 1])
    cohorts = lx.sample_dependent(x, n_draws=10_000, rng=0)
    with_c2 = cohorts[:, 1]                                   # the cohort {c2, c5, c6}, worst-off group 0.9
    worst = np.where(with_c2, 0.9, 1.0)
    np.testing.assert_allclose(worst, (cohorts.astype(float) @ lx.LX1_VALUES).min(axis=1), atol=1e-12)
    share = with_c2.mean()
    assert 0.32 < share < 0.35
    text = lv.draw_verdict(worst, expected_min=31 / 30, n_draws=10_000, scheme="dependent", seed=0)
    assert "less than 0.9" not in text
    assert f"lowest it got was 0.9, in {percent(share)} of draws" in text
    assert "in 100% of 10,000 simulated single draws" in text        # both cohorts fall below 31/30


def test_draw_verdict_quantile_sentence_states_the_true_share():
    """Many distinct values: the sentence names a low value and the share of draws at or below it, counted."""
    worst = np.linspace(0.0, 2.0, 1001)
    text = lv.draw_verdict(worst, expected_min=1.0, n_draws=1001, scheme="independent", seed=3)
    assert f"lowest it got was 0, in {percent(1 / 1001)} of draws" in text
    q = float(np.quantile(worst, 0.05))
    assert f"in {percent(float((worst <= q + 1e-12).mean()))} of draws it got {lv.utility_text(q)} or less" in text


def _enumerated_maximin(pool, quotas, k):
    """Largest possible smallest chance: LP over lotteries on every quota-feasible panel (brute-force list)."""
    ids = list(pool["person_id"])
    feasible = []
    for c in itertools.combinations(range(len(ids)), k):
        sub = pool.iloc[list(c)]
        if all(q.min <= int((sub[q.feature] == q.value).sum()) <= q.max for q in quotas):
            feasible.append(c)
    P = np.zeros((len(ids), len(feasible)))
    for j, c in enumerate(feasible):
        P[list(c), j] = 1
    # variables (q_1..q_F, t): maximise t s.t. P q ≥ t, Σq = 1, q ≥ 0
    F = len(feasible)
    res = linprog(np.r_[np.zeros(F), -1.0], A_ub=np.c_[-P, np.ones(len(ids))], b_ub=np.zeros(len(ids)),
                  A_eq=np.r_[np.ones(F), 0.0][None, :], b_eq=[1.0], bounds=[(0, None)] * F + [(None, None)],
                  method="highs")
    return -res.fun


def test_panel_verdict_smallest_chance_matches_enumerated_maximin():
    pool, quotas, k = lx.tiny_pool(), lx.tiny_quotas(), 4
    want = _enumerated_maximin(pool, quotas, k)
    dist = lx.leximin_panels(pool, quotas, k=k, rng=0)
    text = " ".join(lv.panel_verdicts(dist.probabilities, k=k))
    assert f"at least a {percent(want)} chance of a seat" in text
    assert "k/n = 33%" in text                                      # 4 of 12
    base = np.array([0.1] * 6 + [0.5] * 6)
    text = " ".join(lv.panel_verdicts(dist.probabilities, k=k, baseline=base))
    assert "would give 50% of volunteers less than that (smallest chance 10%)" in text
    assert lv.panel_verdicts([0, 0.5, 0.5], k=1, never=["P1"])[0].startswith("1 of 3 volunteers can never")


def test_finite_verdict_example_13_significant_excludes_leximax():
    # [b] Example 13 (ε = 0.01): u(S1) = (ε, 0.5), u(S2) = (0, 1). The paper: S1 is the leximax solution, while
    # the ε-significant recursive set is {S2} (slack ε at level 1 lets S2 in, level 2 keeps only S2).
    e = Fraction(1, 100)
    U = [[e, Fraction(1, 2)], [Fraction(0), Fraction(1)]]
    sets = {"leximax": lx.leximax_set(U), "tradeoff": lx.recursive_set(U, epsilon=e),
            "significant": lx.significant_set(U, epsilon=e)}
    text = lv.finite_verdict(sets, epsilon=0.01)
    assert text.startswith("S1 is leximax; with slack ε = 0.01, S1 and S2 are ε-tradeoff")
    assert "S2 is ε-significant" in text and "leaves out the exact leximax" in text
