"""Alternates: who to keep in reserve so the panel still meets its quotas after people drop out.

Source: Assos, Baharav, Flanigan, Procaccia, "Alternates, assemble! Selecting optimal alternates for citizens'
assemblies", EC 2025, arXiv 2506.15716 [ABFP25]: choose a set of alternates of a given size, against dropout
probabilities, to minimise the expected deviation from the quotas after the dropouts have been replaced from the
alternates; they optimise over sampled dropout scenarios.

Our objective is a documented simpler one: the *expected quota shortfall*

    E[ Σ_r max(0, min_r − S_r − B_r) + max(0, k − S − B) ],

with S_r the panel members of quota value r who stay and B_r the alternates of value r who stay (S, B without r:
all of them), estimated over sampled dropout scenarios (sample-average approximation, as [ABFP25]). It counts
what is missing even if every staying alternate could be seated, and ignores the maxima. Reason: the shortfall
after the *best* replacement needs an integer program per scenario and per candidate; this one is a lower bound
on it whose gain from adding one alternate is computed for every candidate at once (a matrix product), so the
greedy choice below takes milliseconds per alternate. The maxima are then respected by the replacement rule in
the simulation, which reports what happens with the chosen alternates.

Dropout rates: one per person (a column of the respondents file), or one per feature value; a person's rate is
then 1 − Π_f (1 − r_{f, value}) (independent reasons to drop out; a value without a row has rate 0) [derived].
Each rate must lie in [0, 1): a rate of 1 means the person is certain to drop out and should not be in the pool.

Simulation: fresh scenarios (not the ones the choice was made on), each person drops out independently at their
rate. Without alternates the panel is the members who stay. With alternates, open seats are filled one at a
time by the staying alternate that most reduces the total violation Σ_r (max(0, min_r − c_r) + max(0, c_r −
max_r)), seats and quotas together; it stops when no alternate reduces it. A panel "meets every quota" when every
min and max holds. Rates are binomial proportions with 95% Wilson intervals.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from dpdash.common.validation import as_generator
from dpdash.sortition import core

__all__ = ["rates_from_values", "rates_from_column", "AlternatesResult", "choose_alternates", "simulate_dropouts",
           "DropoutSimulation"]


def _rate(v, where: str) -> float:
    try:
        if isinstance(v, bool) or v is None:
            raise TypeError
        r = float(str(v).strip()) if isinstance(v, str) else float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: the dropout rate {v!r} is not a number; enter a number from 0 up to but not "
                         "including 1 (for example 0.15).") from None
    if not math.isfinite(r) or r < 0 or r >= 1:
        raise ValueError(f"{where}: the dropout rate {v!r} is outside [0, 1); enter a number from 0 up to but not "
                         "including 1 (for example 0.15). A rate of 1 means certain to drop out: leave that person "
                         "out of the pool instead.")
    return r


def rates_from_values(pool: pd.DataFrame, table: pd.DataFrame) -> np.ndarray:
    """Each person's dropout rate from a table ``feature, value, rate`` (one row per feature value).

    A person's rate is 1 − Π_f (1 − r_{f, v_f}); values without a row count 0. A rate outside [0, 1) is refused
    with its row named ("Row 3 (age = 16-29): …"); so is a feature that is not a pool column."""
    cols = {str(c).strip().lower(): c for c in table.columns}
    if not {"feature", "value", "rate"} <= cols.keys():
        raise ValueError("The dropout table needs the columns feature, value, rate; found "
                         f"{', '.join(map(str, table.columns))}.")
    stay = np.ones(len(pool))
    seen = set()
    for i, r in enumerate(table.itertuples(index=False), start=1):
        rec = dict(zip(table.columns, r))
        f, v = str(rec[cols["feature"]]).strip(), str(rec[cols["value"]]).strip()
        where = f"Row {i} ({f} = {v})"
        rate = _rate(rec[cols["rate"]], where)
        if f not in pool.columns:
            raise ValueError(f"{where}: '{f}' is not a column of the pool (columns: "
                             f"{', '.join(map(str, pool.columns))}).")
        if (f, v) in seen:
            raise ValueError(f"{where}: this value has a dropout rate twice.")
        seen.add((f, v))
        hit = pool[f].astype(str).str.strip().to_numpy() == v
        stay[hit] *= 1.0 - rate
    return 1.0 - stay


def rates_from_column(pool: pd.DataFrame, column: str, *, id_col: str = "person_id") -> np.ndarray:
    """Each person's dropout rate from a column of the respondents file; a rate outside [0, 1) or a blank is
    refused with the row and the person named ("Row 17 (person P0016): …")."""
    if column not in pool.columns:
        raise ValueError(f"The pool has no column {column!r} (columns: {', '.join(map(str, pool.columns))}).")
    ids = pool[id_col].astype(str).tolist() if id_col in pool.columns else [str(i) for i in range(len(pool))]
    out = np.empty(len(pool))
    for i, (pid, v) in enumerate(zip(ids, pool[column].tolist())):
        where = f"Row {i + 1} (person {pid})"
        if v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and not v.strip()):
            raise ValueError(f"{where}: the dropout rate is blank; enter a number from 0 up to but not including 1.")
        out[i] = _rate(v, where)
    return out


def _membership(pool: pd.DataFrame, quotas: Sequence[core.Quota]) -> np.ndarray:
    """people × quota rows, 1 where the person has the row's value."""
    M = np.zeros((len(pool), len(quotas)), dtype=np.int64)
    for r, q in enumerate(quotas):
        M[:, r] = pool[q.feature].astype(str).str.strip().to_numpy() == q.value
    return M


@dataclass(frozen=True)
class DropoutSimulation:
    """How often the panel meets every quota after dropouts, without and with the alternates (and 95% Wilson
    intervals), and the mean number of seats filled."""

    n_sims: int
    meet_without: float
    meet_without_ci: tuple[float, float]
    meet_with: float
    meet_with_ci: tuple[float, float]
    seats_without: float
    seats_with: float


@dataclass(frozen=True)
class AlternatesResult:
    """The alternates chosen (in the order they would be called) and what they buy."""

    panel: tuple[str, ...]
    alternates: tuple[str, ...]
    expected_shortfall_without: float
    expected_shortfall_with: float
    simulation: DropoutSimulation
    n_scenarios: int
    cpu_seconds: float
    complete: bool
    message: str


def _wilson(x: int, n: int) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    z = 1.959963984540054
    p = x / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def _violation(c: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    return float(np.maximum(0, lo - c).sum() + np.maximum(0, c - hi).sum())


def simulate_dropouts(M: np.ndarray, lo, hi, k: int, panel_idx, alt_idx, rates, *, n_sims: int = 2_000,
                      rng=None) -> DropoutSimulation:
    """Simulate ``n_sims`` dropout scenarios (see the module docstring for the replacement rule).

    ``M`` is people × quota rows (0/1); ``panel_idx``/``alt_idx`` index people; ``rates`` are per person."""
    g = as_generator(rng)
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    lo_s, hi_s = np.append(lo, k), np.append(hi, k)            # the seats as one more row
    Ms = np.hstack([M, np.ones((M.shape[0], 1), dtype=M.dtype)])
    panel_idx, alt_idx = np.asarray(panel_idx, int), np.asarray(alt_idx, int)
    rates = np.asarray(rates, float)
    ok0 = ok1 = 0
    seats0 = seats1 = 0.0
    for _ in range(int(n_sims)):
        stay_p = panel_idx[g.random(panel_idx.size) >= rates[panel_idx]]
        stay_a = list(alt_idx[g.random(alt_idx.size) >= rates[alt_idx]])
        c = Ms[stay_p].sum(axis=0).astype(float)
        seats0 += stay_p.size
        ok0 += bool(np.all(c[:-1] >= lo) and np.all(c[:-1] <= hi))
        filled = stay_p.size
        while filled < k and stay_a:
            now = _violation(c, lo_s, hi_s)
            best, bj = now, None
            for j, a in enumerate(stay_a):                       # the alternates in call order: ties go first
                v = _violation(c + Ms[a], lo_s, hi_s)
                if v < best - 1e-12:
                    best, bj = v, j
            if bj is None:
                break
            c = c + Ms[stay_a.pop(bj)]
            filled += 1
        seats1 += filled
        ok1 += bool(np.all(c[:-1] >= lo) and np.all(c[:-1] <= hi))
    n = int(n_sims)
    return DropoutSimulation(n_sims=n, meet_without=ok0 / n, meet_without_ci=_wilson(ok0, n), meet_with=ok1 / n,
                             meet_with_ci=_wilson(ok1, n), seats_without=seats0 / n, seats_with=seats1 / n)


def choose_alternates(pool: pd.DataFrame, quotas: Sequence[core.Quota], panel: Sequence[str], *, k: int,
                      rates, size: int, id_col: str = "person_id", n_scenarios: int = 1_000, n_sims: int = 2_000,
                      rng=None, cpu_limit_s: float = 60.0) -> AlternatesResult:
    """Choose ``size`` alternates from the people not on ``panel`` that minimise the expected quota shortfall
    after dropouts (module docstring), greedily: each step adds the candidate whose staying removes the most
    shortfall over ``n_scenarios`` sampled scenarios (ties: the lower dropout rate, then pool order). Then
    simulate the panel with and without them on ``n_sims`` fresh scenarios.

    ``rates``: per person (pool order), from :func:`rates_from_values` or :func:`rates_from_column`."""
    t0 = time.process_time()
    g = as_generator(rng)
    if id_col not in pool.columns:
        raise ValueError(f"The pool has no id column {id_col!r}.")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
        raise ValueError(f"The number of alternates must be a whole number ≥ 0; got {size!r}.")
    rates = np.asarray(rates, float)
    if rates.shape != (len(pool),):
        raise ValueError(f"Give one dropout rate per person ({len(pool)}); got {rates.size}.")
    for i in np.flatnonzero(~np.isfinite(rates) | (rates < 0) | (rates >= 1)):
        _rate(rates[i], f"Row {i + 1} (person {pool[id_col].iloc[i]})")
    ids = pool[id_col].astype(str).str.strip().tolist()
    pos = {p: i for i, p in enumerate(ids)}
    missing = [p for p in panel if str(p).strip() not in pos]
    if missing:
        raise ValueError(f"Panel member(s) not in the pool: {', '.join(map(str, missing[:5]))}.")
    panel_idx = np.array([pos[str(p).strip()] for p in panel], dtype=int)
    if panel_idx.size != k:
        raise ValueError(f"The panel has {panel_idx.size} members but k is {k}.")
    M = _membership(pool, quotas)
    lo = np.array([q.min for q in quotas], float)
    hi = np.array([q.max for q in quotas], float)
    cand = np.setdiff1d(np.arange(len(pool)), panel_idx)
    size = int(min(size, cand.size))
    lo_s = np.append(lo, k)
    Ms = np.hstack([M, np.ones((len(pool), 1), dtype=np.int64)])
    S = int(n_scenarios)
    stay_panel = (g.random((S, panel_idx.size)) >= rates[panel_idx]).astype(np.int64)
    base = stay_panel @ Ms[panel_idx]                               # scenarios × rows
    U = (g.random((S, cand.size)) >= rates[cand]).astype(np.int64)    # scenarios × candidates
    alt = np.zeros_like(base)
    chosen: list[int] = []
    avail = np.ones(cand.size, dtype=bool)
    complete, message = True, "Chosen greedily against sampled dropout scenarios."

    def shortfall(extra):
        return float(np.maximum(0, lo_s[None, :] - base - extra).sum(axis=1).mean())

    before = shortfall(alt)
    for _ in range(size):
        if time.process_time() - t0 > cpu_limit_s:
            complete = False
            message = f"Stopped at the CPU limit ({cpu_limit_s:g} s) after {len(chosen)} alternates."
            break
        short = (lo_s[None, :] - base - alt) > 0                      # scenarios × rows still short
        gain = ((U.T @ short.astype(np.int64)) * Ms[cand]).sum(axis=1).astype(float)
        gain[~avail] = -1.0
        # ties: the lower dropout rate, then pool order (lexsort's last key is the primary one)
        j = int(np.lexsort((np.arange(cand.size), rates[cand], -gain))[0])
        chosen.append(j)
        avail[j] = False
        alt = alt + U[:, [j]] * Ms[cand[j]][None, :]
    after = shortfall(alt)
    alt_idx = cand[chosen]
    sim = simulate_dropouts(M, lo, hi, k, panel_idx, alt_idx, rates, n_sims=n_sims, rng=g)
    return AlternatesResult(panel=tuple(ids[i] for i in panel_idx), alternates=tuple(ids[i] for i in alt_idx),
                            expected_shortfall_without=before, expected_shortfall_with=after, simulation=sim,
                            n_scenarios=S, cpu_seconds=time.process_time() - t0, complete=complete,
                            message=message)


