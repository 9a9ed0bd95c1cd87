"""dpdash.common.parallel.run_in_worker: one long task in a worker process of its own (issue 35 item 2).

The leximax quota leximin and the private tests' Monte Carlo run this way so the server process, which draws every
session's pages, never computes them. Expected values come from the same engine function called in this process
(the reference), never from the worker path itself.
"""

from __future__ import annotations

import dataclasses
import os
import time

import numpy as np
import pandas as pd
import pytest

from dpdash.common.parallel import run_in_worker
from dpdash.common.search import Deadline, SearchLimitError
from dpdash.epsilon import private_tests as pt
from dpdash.sortition import core as lx


def _children() -> set[int]:
    """Live (not zombie) child processes of this process (Linux /proc)."""
    me, out = os.getpid(), set()
    for stat in os.listdir("/proc"):
        if not stat.isdigit():
            continue
        try:
            with open(f"/proc/{stat}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me and fields[0] != "Z":
            out.add(int(stat))
    return out


def _gone(before: set[int], timeout: float = 10.0) -> set[int]:
    """Children started since ``before`` that are still alive after up to ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        left = _children() - before
        if not left:
            return set()
        time.sleep(0.1)
    return _children() - before


def _pool_60() -> pd.DataFrame:
    """60 volunteers, two features (the page test's upload): k = 6 with 3 F, 3 M and 2–4 of each age."""
    return pd.DataFrame({"person_id": [f"P{i:02d}" for i in range(60)],
                         "gender": ["FM"[i % 2] for i in range(60)],
                         "age": [("young", "old")[(i // 2) % 3 == 0] for i in range(60)]})


QUOTAS_60 = [lx.Quota("gender", "F", 3, 3), lx.Quota("gender", "M", 3, 3), lx.Quota("age", "young", 2, 4),
             lx.Quota("age", "old", 2, 4)]


def _same_lottery(a: lx.PanelDistribution, b: lx.PanelDistribution) -> None:
    for f in dataclasses.fields(lx.PanelDistribution):
        if f.name == "seconds":  # CPU seconds of the process that computed it
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert np.array_equal(x, y), f.name
        elif isinstance(x, pd.DataFrame):
            pd.testing.assert_frame_equal(x, y)
        elif isinstance(x, float) and np.isnan(x):
            assert np.isnan(y), f.name
        else:
            assert x == y, f.name


@pytest.mark.parametrize("case", ["tiny", "pool60", "volunteers_k20"])
def test_leximin_in_a_worker_equals_the_engine_here(case):
    if case == "tiny":
        pool, quotas, k = lx.tiny_pool(), lx.tiny_quotas(), 4
    elif case == "pool60":
        pool, quotas, k = _pool_60(), QUOTAS_60, 6
    else:
        pool, quotas, k = lx.volunteer_pool(), lx.volunteer_quotas(), 40
    here = lx.leximin_panels(pool, quotas, k=k, rng=5, time_limit_s=120.0)
    said: list[tuple] = []
    there = run_in_worker(lx.leximin_panels, pool, quotas, k=k, rng=5, time_limit_s=120.0,
                          progress=lambda frac, msg: said.append((frac, msg)), budget=Deadline(600.0))
    assert here.complete and there.complete
    _same_lottery(here, there)
    if case == "pool60":
        # independent: every person of a gender can get the same chance, 3 seats of 30 people
        assert np.allclose(there.probabilities, 3 / 30)
    assert all(isinstance(m, str) for _, m in said)


def test_monte_carlo_in_a_worker_equals_the_engine_here_and_reports_progress():
    kw = dict(ns=[1000, 10_000], privacy=[0.01, 0.1], alpha=0.05, noise="gaussian", trials=600, m=59, rng=3)
    null, alt = np.full(4, 0.25), np.array([0.27, 0.23, 0.25, 0.25])
    here = pt.simulate_grid("gof", null, alt, n_jobs=1, **kw)
    seen: list[float] = []
    budget = Deadline(600.0)
    there = run_in_worker(pt.simulate_grid, "gof", null, alt, n_jobs=1, progress=seen.append, budget=budget, **kw)
    pd.testing.assert_frame_equal(here, there)
    assert seen and seen[-1] == 1.0 and seen == sorted(seen)
    assert budget.spent() > 0.0  # the worker's CPU seconds were charged to the caller's deadline


def test_a_spent_budget_ends_the_worker_with_the_deadline_message():
    before = _children()
    budget = Deadline(0.5, what="the simulation")
    with pytest.raises(SearchLimitError, match="the simulation stopped at its time limit of 0.5 s"):
        run_in_worker(pt.simulate_grid, "gof", np.full(4, 0.25), np.full(4, 0.25), ns=[10_000], privacy=[0.01],
                      alpha=0.05, noise="gaussian", trials=100_000, m=59, rng=0, n_jobs=1, budget=budget)
    # CPU time, not wall time: it stopped after about half a second of the worker's computation
    assert 0.5 < budget.spent() < 5.0
    assert _gone(before) == set()


class _Interrupted(Exception):
    pass


def test_an_interrupted_caller_kills_its_worker_at_once():
    """Streamlit's Stop or a rerun raises in the progress callback: the exception goes on, the worker is ended."""
    before = _children()
    calls = []

    def progress(f):
        calls.append(f)
        raise _Interrupted

    t0 = time.monotonic()
    with pytest.raises(_Interrupted):
        run_in_worker(pt.simulate_grid, "gof", np.full(4, 0.25), np.full(4, 0.25), ns=[10_000, 20_000],
                      privacy=[0.01, 0.1], alpha=0.05, noise="gaussian", trials=100_000, m=59, rng=0, n_jobs=1,
                      progress=progress)
    assert len(calls) == 1
    assert _gone(before) == set()
    assert time.monotonic() - t0 < 120  # far less than the grid's minutes of work


def test_an_engine_refusal_comes_back_as_itself():
    with pytest.raises(ValueError, match="trials"):
        run_in_worker(pt.simulate_grid, "gof", np.full(4, 0.25), np.full(4, 0.25), ns=[100], privacy=[0.1],
                      alpha=0.05, noise="gaussian", trials=0, n_jobs=1)


def test_a_cpu_budget_block_bounds_a_fan_out_that_takes_no_budget():
    """simulate_grid fans out through imap_unordered without a budget of its own: the caller's cpu_budget block
    charges its workers' CPU seconds and ends the run (workers killed) once the deadline is spent."""
    from dpdash.common.parallel import cpu_budget

    kw = dict(ns=[10_000, 20_000], privacy=[0.01, 0.1], alpha=0.05, noise="gaussian", m=59, rng=0)
    null = np.full(4, 0.25)
    before = _children()
    with pytest.raises(SearchLimitError, match="the simulation stopped"):
        with cpu_budget(Deadline(0.5, what="the simulation")) as d:
            pt.simulate_grid("gof", null, null, trials=100_000, n_jobs=2, **kw)
    assert d.spent() >= 0.5
    assert _gone(before) == set()
    # a budget that is not spent changes nothing: the same table as without one, on 2 workers or here
    with cpu_budget(Deadline(600.0)) as d:
        there = pt.simulate_grid("gof", null, null, trials=600, n_jobs=2, **kw)
    pd.testing.assert_frame_equal(there, pt.simulate_grid("gof", null, null, trials=600, n_jobs=1, **kw))
    assert d.spent() > 0.0
