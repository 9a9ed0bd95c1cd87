"""dpdash/leximax_views.py: every number a tab view shows, checked against an independent computation.

Independent sources: the spec's worked examples solved by hand (LX1 at k = 3: x = (2/3, 1/3, 0, 0, 1, 1),
y = (3/2, 31/30, 31/30, 19/15); LX9's leximin chances 3/4, 5/12, 1/4), counts taken straight from the drawn cohorts
with numpy, enumeration of k-subsets (uniform selection), and the paper's memberships for the five-committee
example (spec LX6).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpdash import leximax as lx
from dpdash import leximax_views as lxv
from dpdash.formatting import percent

LX1_POOL = lx.Pool(tuple(f"c{i}" for i in range(1, 7)), ("G1", "G2", "G3", "G4"), lx.LX1_VALUES)
X3 = np.array([2 / 3, 1 / 3, 0, 0, 1, 1])                 # spec LX1, k = 3: one optimal x (worked by hand)
Y3 = np.array([3 / 2, 31 / 30, 31 / 30, 19 / 15])


def _mc(x, *, n_draws=10_000, seed=0, scheme="dependent", delta=0.1):
    return lx.monte_carlo(lx.LX1_VALUES, x, n_draws=n_draws, rng=seed, scheme=scheme, delta=delta)


def test_simulation_view_lx1_k3_lowest_draw_and_its_share():
    """Issue 22: "in 5% of draws less than 0.9" — only {c1,c5,c6} (worst 1.0) and {c2,c5,c6} (worst 0.9) occur."""
    mc = _mc(X3)
    cohorts = lx.sample_dependent(X3, n_draws=10_000, rng=0)      # the same seed: the same cohorts
    share_09 = float(cohorts[:, 1].mean())                        # c2 drawn ⇔ the cohort whose worst-off gets 0.9
    view = lxv.simulation_view(LX1_POOL, mc, k=3, x=X3, expected_min=31 / 30, n_draws=10_000, seed=0,
                               sampler="dependent", delta=0.1)
    text = " ".join(view.verdict_text)
    assert "less than 0.9" not in text
    assert f"The lowest it got was 0.9, in {percent(share_09)} of draws." in text
    assert "in 100% of 10,000 simulated single draws" in text      # 1.0 and 0.9 are both below 31/30
    tab = view.tables["simulation"].set_index("group")
    # per group: the two cohorts' utilities worked out by hand, the share of the lower one counted in the draws
    low = {"G1": (1.3, share_09), "G2": (0.9, share_09), "G3": (1.0, 1 - share_09), "G4": (1.2, 1 - share_09)}
    for g, (value, share) in low.items():
        assert tab.loc[g, "lowest in the draws"] == pytest.approx(value)
        assert tab.loc[g, "share of draws at the lowest"] == pytest.approx(share)
        # the 5th percentile is the lowest value here: the share at or below it is that value's share, not 5%
        assert tab.loc[g, "share of draws at or below the 5th percentile"] == pytest.approx(share)
    np.testing.assert_allclose(tab["expected"], Y3, atol=1e-12)
    assert view.seed == 0


def test_simulation_view_independent_coins_size_sentence():
    """Independent coins: P(size = 3) = 5/9 for x = (2/3, 1/3, 0, 0, 1, 1) (spec LX4), by enumerating the coins."""
    mc = _mc(X3, scheme="independent")
    view = lxv.simulation_view(LX1_POOL, mc, k=3, x=X3, expected_min=31 / 30, n_draws=10_000, seed=0,
                               sampler="independent", delta=0.1)
    p3 = sum(np.prod([p if b else 1 - p for p, b in zip(X3, bits)])
             for bits in itertools.product([0, 1], repeat=6) if sum(bits) == 3)
    assert p3 == pytest.approx(5 / 9)
    assert f"exactly 3 members in {percent(p3)} of draws" in view.verdict_text[-1]
