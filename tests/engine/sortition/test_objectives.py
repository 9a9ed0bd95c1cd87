"""Tests for dpdash/sortition/objectives.py: every objective against an independent formulation written here.

Pools of at most 12 people, so every quota-feasible panel of *people* can be enumerated; each objective is then
solved over all of them with scipy / cvxpy in this file (no type aggregation, no column generation), and the
legacy draw's exact distribution is computed by walking every branch of its random choices.
"""

from __future__ import annotations

import itertools
import math

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog

from dpdash.sortition import core
from dpdash.sortition import objectives as ob

pytestmark = pytest.mark.slow      # the enumerated cases take about 20 s to build


def small_instance(seed: int):
    """A feasible pool of 9–12 people with 2–3 features and quotas a little tighter than the pool's shares."""
    g = np.random.default_rng(seed)
    while True:
        n = int(g.integers(9, 13))
        k = int(g.integers(3, 6))
        nf = int(g.integers(2, 4))
        df = pd.DataFrame({"person_id": [f"p{i}" for i in range(n)]})
        quotas = []
        for f in range(nf):
            vals = [f"v{j}" for j in range(int(g.integers(2, 4)))]
            col = g.choice(vals, size=n, p=g.dirichlet(np.ones(len(vals))))
            df[f"f{f}"] = col
            for v in sorted(set(col)):
                share = float((col == v).mean())
                quotas.append(core.Quota(f"f{f}", v, max(0, math.floor(k * share) - 0),
                                         min(k, math.ceil(k * share) + (1 if g.random() < 0.5 else 0))))
        if core.check_quotas(df, quotas, k=k).feasible:
            return df, quotas, k


def all_panels(df, quotas, k):
    """Every quota-feasible panel of people, as a 0/1 matrix (panels × people)."""
    n = len(df)
    rows = []
    for S in itertools.combinations(range(n), k):
        sub = df.iloc[list(S)]
        if all(q.min <= int((sub[q.feature].astype(str) == q.value).sum()) <= q.max for q in quotas):
            x = np.zeros(n)
            x[list(S)] = 1
            rows.append(x)
    return np.array(rows)


def lp_max_min(X, fixed_lo, free, extra_obj=None):
    """max z s.t. π_i ≥ z (free i), π_i ≥ fixed_lo_i (fixed), π = Xᵀλ, λ in the simplex; returns (z, λ)."""
    m, n = X.shape
    c = np.concatenate([np.zeros(m), [-1.0]])
    A, b = [], []
    for i in range(n):
        row = np.concatenate([-X[:, i], [1.0 if free[i] else 0.0]])
        A.append(row)
        b.append(0.0 if free[i] else -fixed_lo[i])
    res = linprog(c, A_ub=np.array(A), b_ub=np.array(b), A_eq=np.concatenate([np.ones(m), [0.0]])[None, :],
                  b_eq=[1.0], bounds=[(0, None)] * m + [(None, None)], method="highs")
    assert res.status == 0
    return res.x[-1], res.x[:m]


def leximin_bruteforce(X):
    """Leximin chances over all panels: raise the level, fix everyone who cannot go above it, repeat."""
    m, n = X.shape
    sel = X.sum(axis=0) > 0
    fixed = ~sel
    f = np.zeros(n)
    while not fixed.all():
        z, _ = lp_max_min(X, f, ~fixed)
        for i in np.flatnonzero(~fixed):
            # can person i get more than z while every other free person keeps z and fixed people keep theirs?
            c = np.zeros(m)
            c -= X[:, i]
            A = [-X[:, j] for j in range(n) if j != i and (fixed[j] or True)]
            b = [-(f[j] if fixed[j] else z - 1e-9) for j in range(n) if j != i]
            res = linprog(c, A_ub=np.array(A), b_ub=np.array(b), A_eq=np.ones((1, m)), b_eq=[1.0],
                          bounds=[(0, None)] * m, method="highs")
            if -res.fun <= z + 1e-7:
                f[i] = z
                fixed[i] = True
        if not (fixed & sel).any() and not fixed.all():
            raise AssertionError("no progress")
    return f


def nash_bruteforce(X):
    m, n = X.shape
    sel = X.sum(axis=0) > 0
    lam = cp.Variable(m, nonneg=True)
    pi = X.T @ lam
    cp.Problem(cp.Maximize(cp.sum(cp.log(pi[sel]))), [cp.sum(lam) == 1]).solve(solver=cp.CLARABEL)
    return X.T @ lam.value


def goldilocks_bruteforce(X, n, k, gamma):
    """[BF24]'s own form: min (n/k) x + (k/n) y, π_i ≤ x, and the cone π_i·y ≥ γ (SOC), over all panels."""
    m, _ = X.shape
    sel = np.flatnonzero(X.sum(axis=0) > 0)
    lam = cp.Variable(m, nonneg=True)
    x, y = cp.Variable(), cp.Variable()
    pi = X.T @ lam
    bal = n / k
    cons = [cp.sum(lam) == 1]
    for i in sel:
        cons.append(cp.SOC(pi[i] + y, cp.hstack([2 * math.sqrt(gamma), pi[i] - y])))
        cons.append(pi[i] <= x)
    prob = cp.Problem(cp.Minimize(bal * x + y / bal), cons)
    prob.solve(solver=cp.CLARABEL)
    return prob.value


SEEDS = [1, 2, 3, 4, 5]


@pytest.fixture(scope="module")
def cases():
    out = []
    for s in SEEDS:
        df, quotas, k = small_instance(s)
        X = all_panels(df, quotas, k)
        cmp = ob.compare_objectives(df, quotas, k=k, rng=s, legacy_draws=400, cpu_limit_s=30)
        out.append((df, quotas, k, X, cmp))
    out.append((core.tiny_pool(), core.tiny_quotas(), 4, all_panels(core.tiny_pool(), core.tiny_quotas(), 4),
                ob.compare_objectives(core.tiny_pool(), core.tiny_quotas(), k=4, rng=0, legacy_draws=400,
                                      cpu_limit_s=30)))
    return out


def test_leximin_matches_enumeration(cases):
    for df, quotas, k, X, cmp in cases:
        r = cmp.result("leximin")
        assert r.complete
        np.testing.assert_allclose(r.probabilities, leximin_bruteforce(X), atol=1e-6)


def test_maximin_matches_enumeration(cases):
    for df, quotas, k, X, cmp in cases:
        r = cmp.result("maximin")
        assert r.complete
        sel = X.sum(axis=0) > 0
        z, _ = lp_max_min(X, np.zeros(X.shape[1]), sel)
        assert r.probabilities[sel].min() == pytest.approx(z, abs=1e-7)
        assert r.objective_value == pytest.approx(z, abs=1e-7)


def test_nash_matches_enumeration(cases):
    for df, quotas, k, X, cmp in cases:
        r = cmp.result("nash")
        assert r.complete
        np.testing.assert_allclose(r.probabilities, nash_bruteforce(X), atol=2e-4)
        sel = X.sum(axis=0) > 0
        assert r.objective_value == pytest.approx(np.log(nash_bruteforce(X)[sel]).sum(), abs=1e-5)


@pytest.mark.parametrize("gamma", [0.5, 1.0, 3.0])
def test_goldilocks_matches_enumeration(cases, gamma):
    for df, quotas, k, X, cmp in cases:
        inst = cmp.instance
        r = ob.goldilocks_lottery(inst, cmp.result("leximin").panels, gamma=gamma, cpu_limit_s=30)
        assert r.complete
        best = goldilocks_bruteforce(X, len(df), k, gamma)
        assert r.objective_value == pytest.approx(best, rel=1e-5)
        # the value is the lottery's own: recomputed here from its chances
        sel = X.sum(axis=0) > 0
        p = r.probabilities[sel]
        assert (len(df) / k) * p.max() + gamma * (k / len(df)) / p.min() == pytest.approx(best, rel=1e-5)


def test_goldilocks_uniform_is_one_plus_gamma():
    """[BF24]: at the uniform chance k/n the objective is 1 + γ, its optimum when quotas allow k/n for all."""
    df = pd.DataFrame({"person_id": [f"p{i}" for i in range(10)], "g": ["a"] * 5 + ["b"] * 5})
    quotas = [core.Quota("g", "a", 0, 4), core.Quota("g", "b", 0, 4)]
    cmp = ob.compare_objectives(df, quotas, k=4, objectives=("leximin", "goldilocks"), rng=0, gamma=2.0)
    r = cmp.result("goldilocks")
    assert r.objective_value == pytest.approx(3.0, abs=1e-7)
    np.testing.assert_allclose(r.probabilities, 0.4, atol=1e-7)


def legacy_exact(df, quotas, k):
    """Exact chances of [SA]'s legacy draw conditioned on success, by walking every branch (people, not types)."""
    n = len(df)
    vals = {(q.feature, q.value): set(np.flatnonzero(df[q.feature].astype(str).to_numpy() == q.value))
            for q in quotas}
    hits = np.zeros(n)
    total = [0.0]

    def walk(remaining: frozenset, selected: tuple, prob: float):
        if len(selected) == k:
            if all(q.min <= len(vals[(q.feature, q.value)] & set(selected)) <= q.max for q in quotas):
                total[0] += prob
                hits[list(selected)] += prob
            return
        best, bq = -math.inf, None
        for q in quotas:
            rem = len(vals[(q.feature, q.value)] & remaining)
            need = q.min - len(vals[(q.feature, q.value)] & set(selected))
            if rem < need:
                return
            if rem == 0 or q.max == 0:
                continue
            if need / rem > best:
                best, bq = need / rem, q
        if bq is None:
            return
        cands = sorted(vals[(bq.feature, bq.value)] & remaining)
        for p in cands:
            sel = selected + (p,)
            rem = set(remaining - {p})
            for q in quotas:
                members = vals[(q.feature, q.value)]
                if p in members and len(members & set(sel)) >= q.max:
                    rem -= members
            if len(sel) < k and not rem:
                continue
            walk(frozenset(rem), sel, prob / len(cands))

    start = set(range(n))
    for q in quotas:
        if q.max == 0:
            start -= vals[(q.feature, q.value)]
    walk(frozenset(start), (), 1.0)
    return hits / total[0]


def test_legacy_within_its_uncertainty(cases):
    for df, quotas, k, X, cmp in cases:
        r = cmp.result("legacy")
        exact = legacy_exact(df, quotas, k)
        # the stated 95% half-width is per person; at most a few of ≤ 12 people may fall outside, none far
        assert np.max(np.abs(r.probabilities - exact)) <= 2.0 * r.uncertainty
        assert r.uncertainty < 0.1


def test_entropy_matches_people_level_enumeration(cases):
    for df, quotas, k, X, cmp in cases[:3]:
        r = cmp.result("nash")
        inst = cmp.instance
        # expand the composition lottery into panels of people and take the entropy directly
        probs = {}
        for c, w in zip(r.panels, r.panel_probabilities):
            groups = [np.flatnonzero(inst.type_index == t) for t in range(len(inst.sizes))]
            choices = [list(itertools.combinations(groups[t], int(c[t]))) for t in range(len(c))]
            combos = list(itertools.product(*choices))
            for combo in combos:
                key = tuple(sorted(itertools.chain.from_iterable(combo)))
                probs[key] = probs.get(key, 0.0) + w / len(combos)
        p = np.array([v for v in probs.values() if v > 0])
        assert r.entropy_bits == pytest.approx(float(-(p * np.log2(p)).sum()), abs=1e-9)


def test_summary_fields_are_the_chances_own(cases):
    df, quotas, k, X, cmp = cases[0]
    n = len(df)
    for r in cmp.results:
        p = r.probabilities
        assert r.smallest == pytest.approx(p.min()) and r.largest == pytest.approx(p.max())
        assert r.smallest_ratio == pytest.approx(p.min() * n / k)
        assert r.largest_ratio == pytest.approx(p.max() * n / k)
        assert r.share_below_half == pytest.approx(float(np.mean(p < 0.5 * k / n)))
        s = np.sort(p)
        i = np.arange(1, n + 1)
        assert r.gini == pytest.approx(float(((2 * i - n - 1) * s).sum() / (n * s.sum())))
        assert p.sum() == pytest.approx(k)            # every lottery seats k people
        assert r.cpu_seconds >= 0
    assert list(cmp.table()["objective"]) == list(ob.OBJECTIVES)


def test_cpu_limit_stops_with_a_message():
    pool, quotas = core.volunteer_pool(200, rng=3), core.volunteer_quotas(20)
    inst = ob.quota_instance(pool, quotas, k=20)
    start = core.leximin_panels(pool, quotas, k=20, rng=0).panels
    # leximin's panels are over core's types, the same sorted tuples as the instance's
    r = ob.nash_lottery(inst, start[:3], cpu_limit_s=0.0)
    assert not r.complete and "CPU limit" in r.message
    r = ob.legacy_greedy(inst, n_draws=10_000, cpu_limit_s=0.05, rng=0)
    assert not r.complete and "CPU limit" in r.message and r.details["draws"] < 10_000


def test_bad_input_is_refused_in_words():
    df, quotas, k = core.tiny_pool(), core.tiny_quotas(), 4
    with pytest.raises(ValueError, match="Unknown objective"):
        ob.compare_objectives(df, quotas, k=k, objectives=("leximax",))
    bad = [core.Quota("gender", "F", 3, 3), core.Quota("gender", "M", 3, 3), core.Quota("age", "young", 2, 2),
           core.Quota("age", "old", 2, 2)]
    with pytest.raises(ValueError, match="Smallest fix"):
        ob.compare_objectives(df, bad, k=4)
    inst = ob.quota_instance(df, quotas, k=k)
    with pytest.raises(ValueError, match="γ must be a finite number > 0"):
        ob.goldilocks_lottery(inst, np.zeros((1, len(inst.sizes)), dtype=int) + 0, gamma=-1)


def cover(panels):
    """A few of the panels that still cover every type the panels cover (greedy), so the column generation has
    to find the rest itself."""
    P = np.asarray(panels)
    need = (P > 0).any(axis=0)
    chosen, got = [], np.zeros(P.shape[1], dtype=bool)
    while (need & ~got).any():
        j = int(np.argmax(((P > 0) & ~got).sum(axis=1)))
        chosen.append(j)
        got |= P[j] > 0
    return P[chosen]


def test_column_generation_from_a_bare_cover(cases):
    """Started from a minimal cover (not the leximin's panels), each objective still reaches the enumerated
    optimum: the pricing finds the missing panels."""
    grew = 0
    for df, quotas, k, X, cmp in cases:
        inst = cmp.instance
        start = cover(cmp.result("leximin").panels)
        sel = X.sum(axis=0) > 0
        r = ob.maximin_lottery(inst, start)
        z, _ = lp_max_min(X, np.zeros(X.shape[1]), sel)
        assert r.complete and r.probabilities[sel].min() == pytest.approx(z, abs=1e-7)
        r = ob.nash_lottery(inst, start)
        assert r.complete
        np.testing.assert_allclose(r.probabilities, nash_bruteforce(X), atol=2e-4)
        r = ob.goldilocks_lottery(inst, start, gamma=1.0)
        assert r.complete and r.objective_value == pytest.approx(goldilocks_bruteforce(X, len(df), k, 1.0),
                                                                 rel=1e-5)
        grew += len(r.panels) > len(start)
    assert grew >= 3                      # the pricing had work to do on most cases
