"""The quota leximin and the private tests' Monte Carlo run in worker processes, never in the server (issue 35 item 2).

AppTest runs the page script in this process: a spy on ``run_in_worker`` shows which engine function went to a
worker, and the result shown is compared with the engine called here. A run stopped mid-way (Streamlit's Stop or a
changed setting ends the script and the worker) leaves its note, which the next run says; a run past its CPU budget
ends its worker and says so.
"""

from __future__ import annotations

import pytest

from dpdash.common import parallel
from dpdash.epsilon import private_tests as pt
from dpdash.sortition import core as lx
from tests.pages.test_epsilon_calculator_page import fresh, frames
from tests.pages.test_leximax_cohort_picker_page import TAB_C, _quota_upload_app, app, metric, plain
from ui.views import eps_tests, leximax_quota

TESTS = "Private tests"


@pytest.fixture
def spy(monkeypatch):
    """Every run_in_worker call of the two views: (engine function, its keyword arguments)."""
    calls = []

    def recording(fn, *args, **kwargs):
        calls.append((fn, kwargs))
        return parallel.run_in_worker(fn, *args, **kwargs)

    monkeypatch.setattr(leximax_quota, "run_in_worker", recording)
    monkeypatch.setattr(eps_tests, "run_in_worker", recording)
    return calls


def test_compute_leximin_runs_in_a_worker_with_the_engine_result(spy):
    at = _quota_upload_app()
    at.button(key="lx_q_run").click().run()
    assert not at.exception and not at.error
    assert [fn for fn, _ in spy] == [lx.leximin_panels]
    assert spy[0][1]["time_limit_s"] == 120.0 and callable(spy[0][1]["progress"])
    assert spy[0][1]["budget"].seconds == leximax_quota.backstop_s(120)
    # independent: each gender's 3 seats over its 30 people, 3/30 each
    assert metric(at, "Smallest chance") == "10%"
    assert leximax_quota.RUNNING not in at.session_state  # the run ended: no "stopped" note on the next run


def test_a_stopped_leximin_run_is_said_on_the_next_run():
    at = app(lx_tab=TAB_C, lx_q_source="volunteers")
    at.session_state[leximax_quota.RUNNING] = {"done": 0.35, "msg": "pricing: 12 panels"}
    at.run()
    said = plain(at.info)
    assert "Stopped: the last leximin run was stopped" in said and "after 35% of its work" in said
    assert "pricing: 12 panels" in said and "Press **Compute leximin** to start again" in said
    at.run()  # said once
    assert "Stopped: the last leximin run" not in plain(at.info)
    at.session_state[leximax_quota.RUNNING] = {"done": 0.35, "msg": "pricing: 12 panels"}
    at.button(key="lx_q_run").click().run(timeout=120)  # started again: no note beside the new run
    assert "Stopped: the last leximin run" not in plain(at.info)
    assert not at.exception and metric(at, "Equal share k/n") == "8.0%"


def test_a_leximin_worker_past_its_backstop_is_ended_and_says_so(monkeypatch):
    monkeypatch.setattr(leximax_quota, "backstop_s", lambda limit: 0.0)
    leximax_quota._leximin_store.clear()  # a lottery another test computed for this pool would be shown instead
    at = app(lx_tab=TAB_C, lx_q_source="volunteers")
    at.button(key="lx_q_run").click().run(timeout=120)
    assert not at.exception
    said = plain(at.error)
    assert "its worker used more than 0 s of computation (CPU time), past the limit of 120 s" in said
    assert not at.metric or not any(m.label.replace("\\", "") == "Smallest chance" for m in at.metric)
    assert leximax_quota.RUNNING not in at.session_state


def _sim_table(at):
    sims = [f for f in frames(at) if "standard error" in f.columns]
    assert sims, "no simulation table"
    return sims[0]


def test_simulate_runs_in_a_worker_with_the_engine_numbers(spy):
    at = fresh(eps_tab=TESTS, eps_t_trials="50", eps_t_points="2")
    at.button(key="eps_t_sim").click().run()
    assert not at.exception
    assert [fn for fn, _ in spy] == [pt.simulate_grid]
    kw = spy[0][1]
    assert kw["budget"].seconds == eps_tests.SIM_CPU_SECONDS and kw["n_jobs"] == 1
    table = _sim_table(at)
    # the engine here, with the grid the page sent: the same rates in the same order
    args = dict(kw)
    for name in ("budget", "progress"):
        args.pop(name)
    here = pt.simulate_grid("gof", [0.25] * 4, list(pt.default_gof_shift(4) + 0.25), **args)
    assert list(table["rejection rate"]) == pytest.approx(list(here["rate"]), abs=0)


def test_a_stopped_simulation_is_said_and_not_restarted_on_its_own():
    at = fresh(eps_tab=TESTS, eps_t_trials="50")
    at.button(key="eps_t_sim").click().run()
    key = at.session_state["eps_t_last_sim"]
    at.session_state[eps_tests.RUNNING] = {"key": key, "done": 0.5}
    at.session_state["_memo_sim"] = {}  # as after a stop: no table was kept
    at.run()
    said = " ".join(i.value for i in at.info)
    assert "Stopped: the last simulation was stopped after 50% of its trials" in said
    assert not [f for f in frames(at) if "standard error" in f.columns]
    at.button(key="eps_t_sim").click().run()
    assert _sim_table(at) is not None


def test_a_simulation_past_its_cpu_budget_is_ended_and_says_so(monkeypatch):
    monkeypatch.setattr(eps_tests, "SIM_CPU_SECONDS", 0.0)
    at = fresh(eps_tab=TESTS, eps_t_trials="50")
    at.button(key="eps_t_sim").click().run()
    assert not at.exception
    said = " ".join(e.value for e in at.error).replace("\\", "")
    assert "The simulation stopped at its limit of 0 s of computation (CPU time)" in said
    assert "Lower the trials or the points per axis" in said
    assert not [f for f in frames(at) if "standard error" in f.columns]


def test_a_large_simulation_on_both_cores_is_bounded_by_the_same_budget(monkeypatch, spy):
    monkeypatch.setattr(eps_tests, "SIM_CPU_SECONDS", 0.0)
    at = fresh(eps_tab=TESTS, eps_t_trials="20000")  # 20,000 trials × 6 cells: both cores' worker processes
    at.button(key="eps_t_sim").click().run()
    assert not at.exception
    assert spy == []  # chunks on the pool's workers (cluster.run → imap_unordered), not one worker
    said = " ".join(e.value for e in at.error).replace("\\", "")
    assert "The simulation stopped at its limit of 0 s of computation (CPU time)" in said
