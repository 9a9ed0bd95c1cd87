"""Product random walk over the Leximax cohort picker (issue 12, deliver 4).

Seeded walks on each tab (opened through the ``lx_tab`` link parameter), with small pools so that the LP solves
stay cheap. After every move the oracle reads the visible controls, the metric cards and the CSVs the page offers
(the bytes a user would download) and checks the headline numbers against computations written here from the
spec (shared/specs/leximax_cohort_picker.md) and the paper [b] (Henzinger et al., FORC 2022), never through
``dpdash.sortition.core``:

* Cohort tab: the pool matrix is rebuilt from the controls (spec §9 Random formula, LX1, [b] §1.2); the marginals
  CSV sums to k and lies in [0, 1]; the group-utilities CSV equals Vᵀx; the "Worst-off group can expect" card
  is the minimum of that CSV; the caption says the chances add up to k; γ*₁ (levels CSV, "gain at this level")
  and, in exact mode, the smallest utility equal an
  independent maxmin LP (scipy linprog, HiGHS) written here; on small exact instances the whole sorted profile
  equals ``cvxpy-leximin`` (an independent package).
* Finite-set tab: leximax, element-wise (Def 6), ε-tradeoff (Def 7), (ε,ε)-significant tradeoff (Def 9) and
  ε-significant (Def 12) sets recomputed by brute force in exact fractions; ε-recursive must equal ε-tradeoff
  (Thm 11).
* Citizens' assembly tab (LX9 pool): the probabilities CSV sums to k and lies in [0, 1]; the cards (smallest,
  largest, Gini, k/n) equal the CSV's minimum, maximum, mean-absolute-difference Gini and k/12; the smallest
  chance equals the maxmin value of an LP over every quota-meeting panel enumerated by brute force; when no
  panel meets the quotas the page says so in words and shows no cards.
"""

from __future__ import annotations

import io
import itertools
import math
import time
from fractions import Fraction

import cvxpy
import cvxpy_leximin
import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT
from tests.product.walk import capture_downloads, metric_number, metrics, walk, widget_values

PAGE = str(ROOT / "pages" / "leximax_cohort_picker.py")
TAB_A, TAB_B, TAB_C = "Cohort (paper)", "Finite-set explorer", "Citizens' assembly (quotas)"

# spec §11 LX1 "Four-region panel"
LX1 = np.array([[0.8, 0.3, 0.3, 0.4], [0.5, 0.1, 0.4, 0.6], [0.1, 0.1, 0.2, 0.3],
                [1.0, 0.0, 0.2, 0.2], [0.5, 0.0, 0.5, 0.2], [0.3, 0.8, 0.2, 0.6]])
# [b] §3 examples as the spec instantiates them (ε = 0.01) and LX6 "Five committees"
FS_U = {
    "ex5": [["0", "1"], ["1/100", "1/100"]],                                  # Example 5 (sensitivity)
    "ex8": [["0", "0.56"], ["0.005", "0.54"], ["0.01", "0.52"], ["0.015", "0.5"]],   # Example 8
    "ex13": [["0.01", "0.5"], ["0", "1"]],                                    # Example 13
    "ex17": [["0.1", "0.2"], ["0.1001", "0.8"], ["0.11", "0.2"]],             # Example 17 (noise)
    "lx6": [["0.30", "0.10", "0.08"], ["0.80", "0.90", "0.00"], ["0.04", "0.10", "0.08"],   # Five committees
            ["0.30", "0.04", "0.50"], ["0.04", "0.70", "0.40"]],
}
# spec §11 LX9 "Tiny example": P01 F young; P02–P04 M young; P05–P09 F old; P10–P12 M old; quotas 2/2 each
LX9 = ([("F", "young")] + [("M", "young")] * 3 + [("F", "old")] * 5 + [("M", "old")] * 3)
LX9_QUOTAS = {0: {"F": (2, 2), "M": (2, 2)}, 1: {"young": (2, 2), "old": (2, 2)}}

STATES: list[int] = []


def _close_to_shown(shown: str, value: float, *, sig: int | None = None, dp: int | None = None) -> None:
    """A card's text equals ``value`` rounded as the card rounds it (``sig`` significant digits or ``dp``)."""
    got = metric_number(shown)
    assert got is not None, shown
    if dp is not None:
        assert abs(got - value) <= 0.5 * 10 ** -dp + 1e-12, (shown, value)
    else:
        scale = 10 ** (math.floor(math.log10(abs(value))) - sig + 1) if value != 0 else 10 ** -sig
        assert abs(got - value) <= 0.5 * scale + 1e-12, (shown, value)


def _cards(at: AppTest) -> dict[str, str]:
    """Cards by label; labels reach Markdown escaped (ui.show.cards), so the escapes are dropped."""
    return {label.replace("\\", ""): value for label, value in metrics(at).items()}


def _csv(files: dict[str, bytes], name: str) -> pd.DataFrame:
    assert name in files, (name, sorted(files))
    return pd.read_csv(io.BytesIO(files[name]))


# ------------------------------------------------------------------------------------------------------------
# independent LPs
# ------------------------------------------------------------------------------------------------------------

_memo: dict = {}


def maxmin_lp(V: np.ndarray, k: int) -> float:
    """max t s.t. Vᵀx ≥ t·1, Σx = k, 0 ≤ x ≤ 1 (LP_1 of [b] Algorithm 1), dense, scipy HiGHS."""
    key = ("mm", V.tobytes(), V.shape, k)
    if key not in _memo:
        n, m = V.shape
        c = np.r_[np.zeros(n), -1.0]
        res = linprog(c, A_ub=np.hstack([-V.T, np.ones((m, 1))]), b_ub=np.zeros(m),
                      A_eq=np.r_[np.ones(n), 0.0][None, :], b_eq=[k], bounds=[(0, 1)] * n + [(None, None)],
                      method="highs")
        assert res.status == 0
        _memo[key] = -res.fun
    return _memo[key]


def leximin_profile(V: np.ndarray, k: int) -> np.ndarray:
    """Sorted leximax profile of expected group utilities by the independent ``cvxpy-leximin`` package."""
    key = ("lex", V.tobytes(), V.shape, k)
    if key not in _memo:
        n, m = V.shape
        x = cvxpy.Variable(n)
        y = V.T @ x
        prob = cvxpy_leximin.Problem(cvxpy_leximin.Leximin([y[j] for j in range(m)]),
                                     [x >= 0, x <= 1, cvxpy.sum(x) == k])
        prob.solve(solver=cvxpy.HIGHS)
        _memo[key] = np.sort(V.T @ np.asarray(x.value, dtype=float))
    return _memo[key]


def panel_maxmin(k: int) -> float | None:
    """Max over lotteries of quota-meeting panels (LX9 pool) of the smallest selection chance; None if no panel."""
    key = ("panel", k)
    if key not in _memo:
        panels = [c for c in itertools.combinations(range(12), k)
                  if all(lo <= sum(LX9[i][f] == v for i in c) <= hi
                         for f, qs in LX9_QUOTAS.items() for v, (lo, hi) in qs.items())]
        if not panels:
            _memo[key] = None
        else:
            P = len(panels)
            A = np.zeros((12, P))
            for p, c in enumerate(panels):
                A[list(c), p] = 1.0
            res = linprog(np.r_[np.zeros(P), -1.0], A_ub=np.hstack([-A, np.ones((12, 1))]), b_ub=np.zeros(12),
                          A_eq=np.r_[np.ones(P), 0.0][None, :], b_eq=[1.0], bounds=[(0, None)] * P + [(None, None)],
                          method="highs")
            assert res.status == 0
            _memo[key] = -res.fun
    return _memo[key]


# ------------------------------------------------------------------------------------------------------------
# oracles
# ------------------------------------------------------------------------------------------------------------

def pool_matrix(vals: dict) -> np.ndarray | None:
    """The values matrix the controls describe (spec §9), or None for pools this oracle does not rebuild."""
    src = vals.get("lx_source", "preset")
    if src == "random":
        n, m, grid, seed = int(vals["lx_n"]), int(vals["lx_m"]), float(vals["lx_grid"]), int(vals["lx_pool_seed"])
        return np.round(np.random.default_rng(seed).random((n, m)) / grid) * grid
    if src == "preset":
        return {"arbitration": np.eye(2), "four_region": LX1}.get(vals.get("lx_preset"))
    return None


def cohort_oracle(dl: capture_downloads):
    def check(at: AppTest) -> None:
        files = dl.files(".csv")
        dl.clear()
        vals, cards = widget_values(at), _cards(at)
        if "Worst-off group can expect" not in cards:      # no pool yet (upload) or large pool behind "Solve"
            assert vals.get("lx_source") in ("values", "attributes") or any(
                "Solve" in i.value for i in at.info), cards
            return
        k = int(vals["lx_k"])
        x = _csv(files, "leximax_chances.csv")["chance of selection"].to_numpy(dtype=float)
        y = _csv(files, "leximax_group_utilities.csv")["expected utility"].to_numpy(dtype=float)
        gam = _csv(files, "leximax_levels.csv")["gain at this level"].to_numpy(dtype=float)
        assert x.min() >= 0.0 and x.max() <= 1.0
        assert abs(math.fsum(x) - k) <= 1e-9 * max(1, k)
        assert f"chances add up to {k} (k = {k})" in " ".join(c.value for c in at.caption)
        _close_to_shown(cards["Worst-off group can expect"], float(y.min()), sig=4)
        assert cards["Check (paper's Algorithm 2)"] == "✓ verified"
        V = pool_matrix(vals)
        if V is None:
            return
        assert V.shape[0] == x.size and V.shape[1] == y.size
        np.testing.assert_allclose(V.T @ x, y, atol=1e-9)
        mm = maxmin_lp(V, k)
        assert gam[0] == pytest.approx(mm, abs=1e-6)          # γ*_1 is the maxmin value whatever the slack
        if vals["lx_mode"] == "exact":
            assert y.min() == pytest.approx(mm, abs=1e-6)
            if V.size <= 24:
                np.testing.assert_allclose(np.sort(y), leximin_profile(V, k), atol=1e-5)
        STATES.append(1)
    return check


def _sorted(U, s):
    return sorted(U[s])


def finite_oracle(at: AppTest) -> None:
    """[b] Defs 2–3, 6, 7, 9, 12 by brute force in exact fractions; Thm 11: ε-recursive = ε-tradeoff."""
    vals = widget_values(at)
    U = [[Fraction(v) for v in r] for r in FS_U[vals["lx_fs_preset"]]]
    eps = Fraction(str(vals["lx_fs_eps"]))
    tab = next(d.value for d in at.dataframe if "ε-significant" in d.value.columns)
    S, m = range(len(U)), len(U[0])
    P = [_sorted(U, s) for s in S]
    best = max(P)                                             # lexicographic order on sorted profiles
    leximax = {s for s in S if P[s] == best}
    elementwise = {s for s in S if max(best[i] - P[s][i] for i in range(m)) <= eps}

    def tradeoff(s, e2):
        return all(any(P[s][j] > P[t][j] + e2 for j in range(i))
                   for t in S for i in range(m) if P[s][i] < P[t][i] - eps)

    tradeoff_set = {s for s in S if tradeoff(s, 0)}
    sig_tradeoff = {s for s in S if tradeoff(s, eps)}
    chain = set(S)                                            # Def 12: slack ε at every level
    for i in range(m):
        top = max(P[s][i] for s in chain)
        chain = {s for s in chain if P[s][i] >= top - eps}
    got = {c: {s for s, v in enumerate(tab[c]) if bool(v)} for c in tab.columns if c not in ("solution", "")}
    assert got["leximax"] == leximax
    assert got["element-wise (α = ε)"] == elementwise
    assert got["ε-tradeoff"] == tradeoff_set
    assert got["ε-recursive"] == tradeoff_set                 # Thm 11
    assert got["(ε,ε)-sig-tradeoff"] == sig_tradeoff
    assert got["ε-significant"] == chain and chain            # never empty
    STATES.append(1)


def quota_oracle(dl: capture_downloads):
    def check(at: AppTest) -> None:
        files = dl.files(".csv")
        dl.clear()
        vals, cards = widget_values(at), _cards(at)
        if vals.get("lx_q_source") != "tiny":
            return
        k = int(vals["lx_q_k"])
        best = panel_maxmin(k) if k <= 12 else None
        if best is None:                                     # no quota-meeting panel: said in words, no cards
            words = " ".join(w.value for w in at.warning)
            assert "Smallest chance" not in cards
            assert "cannot all be met" in words or "larger than the pool" in words, words
            return
        pi = _csv(files, "leximin_chances.csv")["chance of a seat"].to_numpy(dtype=float)
        assert pi.size == 12 and pi.min() >= -1e-12 and pi.max() <= 1 + 1e-12
        assert abs(math.fsum(pi) - k) <= 1e-6
        # chances are percentages with 2 significant figures on the cards, as in the verdict (one formatter)
        assert cards["Smallest chance"].endswith("%") and cards["Equal share k/n"].endswith("%")
        _close_to_shown(cards["Smallest chance"], 100 * float(pi.min()), sig=2)
        _close_to_shown(cards["Largest chance"], 100 * float(pi.max()), sig=2)
        _close_to_shown(cards["Equal share k/n"], 100 * k / 12, sig=2)
        gini = np.abs(pi[:, None] - pi[None, :]).sum() / (2 * pi.size ** 2 * pi.mean())
        if gini > 1e-9:
            _close_to_shown(cards["Inequality (Gini)"], float(gini), sig=4)
        assert pi.min() == pytest.approx(best, abs=1e-6)      # leximin's first level = maxmin over panels
        STATES.append(1)
    return check


# ------------------------------------------------------------------------------------------------------------
# the walks
# ------------------------------------------------------------------------------------------------------------

COHORT_SKIP = {"lx_solve_btn", "lx_crosscheck", "lx_draw", "lx_simulate"}


@pytest.mark.slow
def test_leximax_cohort_picker_walk():
    t0 = time.perf_counter()
    total = 0
    with capture_downloads() as dl:
        runs = [
            # Cohort tab, a small random pool (7 × 3): k, mode, ε, custom α, δ, sampler, seeds
            dict(seed=1, steps=18, start_params={"lx_tab": TAB_A, "lx_source": "random", "lx_n": "7", "lx_m": "3",
                                                 "lx_draws": "1000"},
                 key_prefixes=("lx_",), skip_keys=COHORT_SKIP | {"lx_n", "lx_m", "lx_draws", "lx_solver",
                                                                 "lx_source"}, oracle=cohort_oracle(dl)),
            # Cohort tab, the pool itself: n, m, grid, seed and k over their whole ranges (corners: n = 5, m = 20)
            dict(seed=2, steps=10, start_params={"lx_tab": TAB_A, "lx_source": "random", "lx_n": "6", "lx_m": "2",
                                                 "lx_draws": "1000"},
                 only_keys={"lx_n", "lx_m", "lx_k", "lx_grid", "lx_pool_seed"}, oracle=cohort_oracle(dl)),
            # Cohort tab, paper presets (LX1, fair arbitration), both solvers, data sources
            dict(seed=3, steps=14, start_params={"lx_tab": TAB_A, "lx_draws": "1000"},
                 only_keys={"lx_source", "lx_preset", "lx_k", "lx_mode", "lx_solver", "lx_draws"},
                 oracle=cohort_oracle(dl)),
            # Finite-set explorer: every example, ε over [0.001, 0.5], noise on and off
            dict(seed=4, steps=80, start_params={"lx_tab": TAB_B}, key_prefixes=("lx_fs_",), oracle=finite_oracle),
            dict(seed=5, steps=80, start_params={"lx_tab": TAB_B, "lx_fs_preset": "ex8"}, key_prefixes=("lx_fs_",),
                 oracle=finite_oracle),
            # Citizens' assembly, LX9 pool: k over 1..1000 (most values infeasible), seed, time limit, colour
            dict(seed=6, steps=75, start_params={"lx_tab": TAB_C}, key_prefixes=("lx_q_",),
                 skip_keys={"lx_q_source", "lx_q_run", "lx_q_draw"}, oracle=quota_oracle(dl)),
            # ... and the other pool sources (volunteer pool behind its button, upload without files)
            dict(seed=7, steps=35, start_params={"lx_tab": TAB_C, "lx_q_k": "3"}, key_prefixes=("lx_q_",),
                 skip_keys={"lx_q_run", "lx_q_draw"}, oracle=quota_oracle(dl)),
        ]
        for kw in runs:
            dl.clear()
            t1 = time.perf_counter()
            states = walk(PAGE, timeout=120, **kw).states
            total += states
            print(f"walk seed {kw['seed']}: {states} states in {time.perf_counter() - t1:.1f} s")
    seconds = time.perf_counter() - t0
    print(f"leximax walk: {total} states ({len(STATES)} with numbers checked) in {seconds:.1f} s")
    assert total >= 300
    assert len(STATES) >= 200                                 # most states carry numbers the oracle checked
