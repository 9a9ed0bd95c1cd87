"""Issue 34 item 1: every threshold a sentence states is solved on the exact function, never read off a grid.

Each threshold is recomputed here independently (brute force over the integers with the widths written out, or the
closed form of a line–line crossing), and the stated value satisfies the claim while its predecessor does not.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from dpdash.accounting import maxinfo as mi
from dpdash.accounting import mechanisms as mech
from dpdash.epsilon import views as evw


def _widths(n, beta, noise):
    rows = [(m, k, w.tau, w.parameter, w.noise_std, w.capped) for m, k, w in mech.adaptive_width_grid(n, beta, noise)]
    return pd.DataFrame(rows, columns=["method", "k", "tau", "parameter", "noise_std", "capped"])


def split_binomial(n, k, beta):
    """Rogers 2017 §3.5 by brute force: chunks of m = ⌊n/k⌋; smallest t with P(Bin(m, ½) > t) + 2⁻ᵐ ≤ β/(2k)."""
    m = n // k
    t = np.arange(m + 1)
    ok = stats.binom.sf(t, m, 0.5) + 2.0**-m <= beta / (2 * k)
    return min(t[ok].min() / m - 0.5, 0.5) if ok.any() else 0.5


def rz_monitor(n, k, beta):
    """Rogers 2017 Thm 3.4.1 written out: τ = min over ρ′ of max(monitor term, noise term); the two cross once."""
    def inc(r):
        B = r * k * n
        return math.sqrt(2 / (n * beta) * (2 * B + math.log(B) + (2 * B + math.log(B)) / (B - 1)))

    def dec(r):
        return 2 / n * math.sqrt(math.log(4 * k / beta) / r)

    def worst(lr):
        return max(inc(math.exp(lr)), dec(math.exp(lr)))

    lrs = np.linspace(math.log(1.0 / (k * n)) + 1e-6, math.log(1e4), 600)  # the monitor term blows up at B → 1
    i = int(np.argmin([worst(x) for x in lrs]))
    res = optimize.minimize_scalar(worst, bounds=(lrs[max(i - 1, 0)], lrs[min(i + 1, 599)]), method="bounded",
                                   options={"xatol": 1e-12})
    return min(res.fun, worst(lrs[i]), 0.5)


def test_dp_beats_splitting_from_the_solved_k_337_not_the_grid_point_345():
    """The issue's case: n = 6,400, β = 0.05, Gaussian noise. Brute force over every k from 1 to 400 with the binomial
    split and the Rogers–Zhang monitor written out: the first k where DP wins is 337 (the grid's point was 345)."""
    n, beta = 6400, 0.05
    first = next(k for k in range(1, 401)
                 if rz_monitor(n, k, beta) < min(split_binomial(n, k, beta),
                                                 math.sqrt(math.log(2 * k / beta) / (2 * (n // k)))))
    assert first == 337
    v = evw.widths_view(_widths(n, beta, "gaussian"), n=n, beta=beta, noise="gaussian")
    assert v.headline("DP beats splitting from k").raw == first
    text = v.verdicts[0].text
    assert f"from k = {first} on" in text and f"at k = {first}:" in text  # the example quotes the same k
    assert "497" not in text and "345" not in text
    assert v.figures["annotate_k"] == first and f"k = {first}" in v.figures["annotation"]


@pytest.mark.parametrize("n,beta", [(6400, 0.05), (10**6, 1e-6), (50_000, 0.05)])
def test_stated_k_is_better_and_its_predecessor_is_not(n, beta):
    """Property: at the stated k some DP method's width is below every split's; at k − 1 none is (every method's
    exact width, the split recomputed by brute force here)."""
    v = evw.widths_view(_widths(n, beta, "gaussian"), n=n, beta=beta, noise="gaussian")
    k = int(v.headline("DP beats splitting from k").raw)

    def dp_better(k):
        split = min(split_binomial(n, k, beta), math.sqrt(math.log(2 * k / beta) / (2 * (n // k))), 0.5)
        dp = min(mech.adaptive_width(m, n=n, k=k, beta=beta, noise="gaussian").tau
                 for m in ("dfhprr", "bnsssu", "rz_monitor"))
        return dp < split

    assert dp_better(k)
    assert not dp_better(k - 1)


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1, 0.3, 0.5])
def test_maxinfo_crossover_is_the_closed_form_line_crossing(alpha):
    """In log₂ γ both corrections are lines in t (Cor. 4.6.3: log₂(α/2) − (2/α)(t + 0.54); Thm 4.6.4's falling
    branch: −1 − log₂(e)·t/α²): they meet at t* = (log₂(α/2) + 1 − 1.08/α) / (2/α − log₂(e)/α²)."""
    l2e = 1 / math.log(2)
    t_star = (math.log2(alpha / 2) + 1 - 1.08 / alpha) / (2 / alpha - l2e / alpha**2)
    got = mi.correction_crossover(alpha)
    if not 1e-3 <= t_star <= 10:
        assert got is None
        return
    assert got == pytest.approx(t_star, rel=1e-10)
    # the claim on both sides: below t* Russo–Zou's threshold is the larger, above it the smaller
    below, above = t_star * (1 - 1e-7), t_star * (1 + 1e-7)
    assert mi.pvalue_correction_russo_zou(alpha, t_bits=below) > mi.pvalue_correction_mutual_info(alpha, t_bits=below)
    assert mi.pvalue_correction_russo_zou(alpha, t_bits=above) < mi.pvalue_correction_mutual_info(alpha, t_bits=above)


def test_maxinfo_view_states_t_0_04826_not_the_grid_point():
    v = evw.maxinfo_view(alpha=0.05, epsilon=0.01, n=10_000, beta=None, target_gamma=0.01, outcomes=2**20)
    t_star = (math.log2(0.025) + 1 - 21.6) / (40 - 1 / math.log(2) / 0.0025)
    assert v.figures["crossover"] == pytest.approx(t_star, rel=1e-10)
    assert "t = 0.04826 bits" in v.figures["alt"]
