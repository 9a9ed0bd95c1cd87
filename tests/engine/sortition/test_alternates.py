"""Tests for dpdash/sortition/alternates.py: rates, the choice, and the dropout simulation.

The expected shortfall and the probability of meeting every quota are computed here exactly, by enumerating
every dropout pattern of a small panel and its alternates.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from dpdash.sortition import alternates as al
from dpdash.sortition import core

POOL = core.tiny_pool()
QUOTAS = core.tiny_quotas()
PANEL = ("P01", "P02", "P05", "P10")          # F young, M young, F old, M old: meets 2/2 and 2/2
TABLE = pd.DataFrame({"feature": ["gender", "age", "age"], "value": ["F", "young", "old"],
                      "rate": [0.2, 0.3, 0.1]})


def rates():
    return al.rates_from_values(POOL, TABLE)


def test_rates_from_values_combine_independently():
    r = rates()
    for i, row in POOL.iterrows():
        stay = (0.8 if row.gender == "F" else 1.0) * (0.7 if row.age == "young" else 0.9)
        assert r[i] == pytest.approx(1 - stay)


@pytest.mark.parametrize("bad", [1.0, 1.5, -0.1, "abc", float("nan"), None])
def test_rates_outside_unit_interval_are_refused_with_the_row(bad):
    t = TABLE.copy()
    t["rate"] = t["rate"].astype(object)
    t.loc[2, "rate"] = bad
    with pytest.raises(ValueError, match=r"Row 3 \(age = old\)"):
        al.rates_from_values(POOL, t)
    p = POOL.copy()
    p["drop"] = 0.1
    p["drop"] = p["drop"].astype(object)
    p.loc[6, "drop"] = bad
    with pytest.raises(ValueError, match=r"Row 7 \(person P07\)"):
        al.rates_from_column(p, "drop")


def meets(counts):
    return all(q.min <= counts[(q.feature, q.value)] <= q.max for q in QUOTAS)


def counts_of(people):
    sub = POOL[POOL.person_id.isin(people)]
    return {(q.feature, q.value): int((sub[q.feature] == q.value).sum()) for q in QUOTAS}


def exact_shortfall(alts, r):
    """E[Σ_r max(0, min_r − S_r − B_r) + max(0, k − S − B)] by enumerating who stays."""
    people = list(PANEL) + list(alts)
    idx = [int(np.flatnonzero(POOL.person_id == p)[0]) for p in people]
    total = 0.0
    for stay in itertools.product([0, 1], repeat=len(people)):
        pr = math.prod((1 - r[i]) if s else r[i] for i, s in zip(idx, stay))
        kept = [p for p, s in zip(people, stay) if s]
        c = counts_of(kept)
        total += pr * (sum(max(0, q.min - c[(q.feature, q.value)]) for q in QUOTAS) + max(0, 4 - len(kept)))
    return total


def test_one_alternate_is_the_exact_best():
    r = rates()
    res = al.choose_alternates(POOL, QUOTAS, PANEL, k=4, rates=r, size=1, n_scenarios=20_000, rng=0, n_sims=10)
    others = [p for p in POOL.person_id if p not in PANEL]
    exact = {p: exact_shortfall([p], r) for p in others}
    best = min(exact.values())
    assert exact[res.alternates[0]] == pytest.approx(best, abs=1e-12)
    assert res.expected_shortfall_with == pytest.approx(best, abs=0.02)          # the sampled estimate
    assert res.expected_shortfall_without == pytest.approx(exact_shortfall([], r), abs=0.02)


def exact_meet(alts, r):
    """P(every quota met) without and with the alternates, with the module's replacement rule re-implemented:
    fill seats one at a time with the staying alternate (call order) that most reduces the total violation."""
    people = list(PANEL) + list(alts)
    idx = [int(np.flatnonzero(POOL.person_id == p)[0]) for p in people]

    def violation(c, seats):
        v = sum(max(0, q.min - c[(q.feature, q.value)]) + max(0, c[(q.feature, q.value)] - q.max) for q in QUOTAS)
        return v + abs(4 - seats)

    p0 = p1 = 0.0
    for stay in itertools.product([0, 1], repeat=len(people)):
        pr = math.prod((1 - r[i]) if s else r[i] for i, s in zip(idx, stay))
        kept = [p for p, s in zip(people[:4], stay[:4]) if s]
        avail = [p for p, s in zip(people[4:], stay[4:]) if s]
        p0 += pr * meets(counts_of(kept))
        while len(kept) < 4 and avail:
            now = violation(counts_of(kept), len(kept))
            scores = [violation(counts_of(kept + [a]), len(kept) + 1) for a in avail]
            j = int(np.argmin(scores))
            if scores[j] >= now:
                break
            kept.append(avail.pop(j))
        p1 += pr * meets(counts_of(kept))
    return p0, p1


@pytest.mark.slow                       # about 15 s: 5,000 simulated dropouts
def test_simulation_matches_enumeration():
    r = rates()
    res = al.choose_alternates(POOL, QUOTAS, PANEL, k=4, rates=r, size=3, n_scenarios=2_000, rng=1,
                               n_sims=5_000)
    p0, p1 = exact_meet(res.alternates, r)
    s = res.simulation
    for est, p in ((s.meet_without, p0), (s.meet_with, p1)):
        assert abs(est - p) <= 4 * math.sqrt(p * (1 - p) / s.n_sims) + 1e-3
    assert s.meet_with_ci[0] <= s.meet_with <= s.meet_with_ci[1]
    assert p1 > p0                                    # the alternates help on this pool


def test_more_alternates_never_raise_the_shortfall():
    r = rates()
    prev = math.inf
    for size in range(0, 6):
        res = al.choose_alternates(POOL, QUOTAS, PANEL, k=4, rates=r, size=size, rng=2, n_sims=10)
        assert res.expected_shortfall_with <= prev + 1e-12
        prev = res.expected_shortfall_with
        assert len(set(res.alternates)) == size and not set(res.alternates) & set(PANEL)


def test_bad_arguments_are_refused_in_words():
    r = rates()
    with pytest.raises(ValueError, match="not in the pool"):
        al.choose_alternates(POOL, QUOTAS, ("P01", "P02", "P05", "X"), k=4, rates=r, size=1)
    with pytest.raises(ValueError, match="whole number"):
        al.choose_alternates(POOL, QUOTAS, PANEL, k=4, rates=r, size=-1)
    bad = r.copy()
    bad[3] = 1.0
    with pytest.raises(ValueError, match=r"Row 4 \(person P04\).*outside \[0, 1\)"):
        al.choose_alternates(POOL, QUOTAS, PANEL, k=4, rates=bad, size=1)
