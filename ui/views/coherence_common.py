"""What the coherence explorer's tabs share: the page state they read (:class:`Ctx`), the cached engine calls, the
run-time estimate and the report/script wiring of a tab view.

Caches are per session (an upload's results are never shared with another session) and bounded. Results that
are read, never copied, are kept with ``st.cache_resource(scope="session")``: a 200,000-row prepared dataset is not
unpickled again on every rerun (issue 26, memory per upload), and it goes when the session ends.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from dpdash.coherence import core as co
from dpdash.coherence import figures as cf
from dpdash.coherence import inputs as ci
from dpdash.coherence import tabs as ct
from dpdash.coherence import views as vw
from dpdash.coherence import script as sc_script
from dpdash.common.data import census_population
from dpdash.common.view import TabView
from ui import cluster, progress, show
from ui.progress import RunProgress
from ui.shared_runs import RUNS, shared_or_session
from ui.common import CORES

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Ctx:
    """The page's settings and data, as the tabs read them (built once per run by the page)."""

    df: pd.DataFrame
    data_key: tuple
    data_spec: dict
    source: str
    seed: int
    label: str
    config: co.ExperimentConfig
    preview_config: co.ExperimentConfig
    prepared: co.PreparedData
    groups: list
    in_coll: dict
    coll_names: list
    n: int
    n_groups: int
    alpha: float
    beta: float
    gamma: float
    reps: int
    release_kind: str
    release_choice: str
    coarsen: bool
    epsilon: float
    delta: float
    output: str
    params: dict = field(default_factory=dict)
    footprint: ci.ModelFootprint | None = None
    many_levels: dict = field(default_factory=dict)


# ------------------------------------------------------------------------------------------ cached engine calls
@st.cache_data(max_entries=4, show_spinner=False)
def population(n: int, seed: int) -> pd.DataFrame:
    return census_population(n, rng=seed)


@st.cache_resource(max_entries=4, show_spinner=False, scope="session")
def prepared(data_key: tuple, config: co.ExperimentConfig, _df: pd.DataFrame):
    try:
        return co.prepare(_df, config), None
    except ValueError as exc:
        return None, str(exc)


@st.cache_resource(max_entries=4, show_spinner=False, scope="session")
def footprint(data_key: tuple, config: co.ExperimentConfig, _prepared: co.PreparedData):
    """One probe tree's size scaled to one model of ``config`` (issue 26: counted before any model is built)."""
    # the learner sees the release's encoding: the binned released features, or the raw released lens columns
    rel = config.release
    X = _prepared.binned if (rel.kind in co.HISTOGRAM_KINDS or rel.binned) and _prepared.binned is not None \
        else _prepared.raw[:, list(_prepared.feature_idx)] if _prepared.feature_idx else _prepared.raw
    return ci.probe_tree(X, _prepared.y, learner=config.learner.kind,
                         trees=config.learner.n_estimators, workers=1, seed=int(config.rng))


def run_problem(ctx: Ctx, runs: int) -> str | None:
    """Why a run of ``runs`` repetitions would hold too much memory (the models fitted at once), or None."""
    if ctx.footprint is None:
        return None
    fp = replace(ctx.footprint, workers=max(1, min(_parallelism(), runs)))
    return ci.footprint_problem(fp, many_levels=ctx.many_levels, rows=ctx.n)


def other_load() -> float:
    """Runnable jobs besides this page's own, from the 1-minute load average (0 where the system has none)."""
    try:
        return max(0.0, os.getloadavg()[0] - 1.0)
    except (AttributeError, OSError):
        return 0.0


@st.cache_resource(max_entries=4, show_spinner=False, scope="session")
def preview(data_key: tuple, config: co.ExperimentConfig, _df: pd.DataFrame):
    """Repetition 0 with its predictions, the error text, the seconds it took, and the time one repetition takes
    on an idle core."""
    prep, err = prepared(data_key, config, _df)
    if err:
        return None, err, 0.0, 0.0
    others = other_load()
    t0 = time.perf_counter()
    try:
        trial = co.run_trial(prep, config, 0, keep_predictions=True)
    except ValueError as exc:  # e.g. a learner refusing the data: a message, not a traceback
        return None, str(exc), 0.0, 0.0
    took = time.perf_counter() - t0
    # the share of a core the server's other jobs left this run is taken out, so an estimate made later under
    # another load does not count it twice (issue 25)
    return trial, None, took, took * min(1.0, CORES / (others + 1.0))


def _shared_key(kind: str, data_key: tuple, config: co.ExperimentConfig) -> tuple:
    """The server-wide key of a run (issue 23 item 5): bundled or generated data are shared by every session, an
    upload stays with the session that uploaded it."""
    return shared_or_session(kind, config, repr(data_key), uploaded=data_key[0] == "upload")


def experiment(ctx: Ctx, progress=None):
    key = _shared_key("coh_experiment", ctx.data_key, ctx.config)
    return show.session_memo("coh_experiment", (ctx.data_key, ctx.config),
                             lambda: RUNS.get(key, lambda: cluster.run(co.run_experiment, ctx.df, ctx.config,
                                                                       n_jobs=CORES, progress=progress)),
                             max_entries=4)


def finished_elsewhere(ctx: Ctx, config: co.ExperimentConfig | None = None, kind: str = "coh_experiment"):
    """The result another session already computed on this server for these settings and data, else None."""
    found, res = RUNS.peek(_shared_key(kind, ctx.data_key, config or ctx.config))
    return res if found else None


@st.cache_data(max_entries=8, show_spinner=False, scope="session")
def floor(data_key: tuple, config: co.ExperimentConfig, _df: pd.DataFrame):
    return co.noise_floor(_df, config, reps=ct.FLOOR_REPS)


def sweep(ctx: Ctx, config: co.ExperimentConfig, progress=None):
    key = _shared_key("coh_sweep", ctx.data_key, config)
    return show.session_memo("coh_sweep", (ctx.data_key, config),
                             lambda: RUNS.get(key, lambda: cluster.run(co.run_epsilon_sweep, ctx.df, config,
                                                                       ct.SWEEP_EPSILONS, n_jobs=CORES,
                                                                       progress=progress)), max_entries=4)


@st.cache_data(max_entries=8, show_spinner=False, scope="session")
def single_column(data_key: tuple, bit_col: str, one_value: str, groups: tuple, seed: int, beta: float,
                  label: str, curator: str, reps: int, _df: pd.DataFrame):
    return ct.section7_result(_df, label=label, column=bit_col, one_value=one_value, groups=groups, rng=seed,
                              beta=beta, curator=curator, reps=reps)


# ------------------------------------------------------------------------------------------ where and how long
def where_words() -> str:
    """Where a long run goes: this server's cores or the Dask cluster (issue 16), for help texts."""
    where = cluster.placement()
    if where.on_cluster:
        return f"the Dask cluster ({where.workers} workers, {where.threads} threads)"
    return f"this server's {CORES} cores"


def _parallelism() -> int:
    where = cluster.placement()
    return max(1, where.threads) if where.on_cluster else CORES


#: The server's correction to the cost model, learnt from finished runs of any session (a number only: no user
#: data). A process-wide property of this server: its start-up costs and how busy it really is.
_SERVER = {"ratio": None}


def model_seconds(runs: int, per_run_s: float) -> float:
    """The cost model's time for ``runs`` repetitions under the server's present load (uncalibrated)."""
    return ci.run_estimate(per_run_s=per_run_s, runs=runs, workers=_parallelism(), cores=CORES,
                           load=other_load()).seconds


def estimate(ctx: Ctx, runs: int, per_run_s: float, what: str) -> tuple[float, str]:
    """How long ``runs`` repetitions will take here now, in words: the rate measured on the last run of the same
    settings, else the engine's cost model under the server's present load, corrected by what earlier runs on
    this server took against the model (issue 25: an uncorrected estimate was 5× to 25× optimistic)."""
    measured = st.session_state.get("_coh_rate", {}).get((ctx.data_key, ctx.preview_config))
    if measured:
        secs = measured * runs
        return secs, (f"Estimated time for {what}: {ci.time_words(secs)} on {where_words()} (measured on the "
                      "last run of these settings).")
    est = ci.run_estimate(per_run_s=per_run_s, runs=runs, workers=_parallelism(), cores=CORES, load=other_load())
    ratio = _SERVER["ratio"]
    secs = est.seconds * (ratio or 1.0)
    how = "from the preview's time"
    if est.busy:
        how += f"; the server is busy ({est.load:.0f} other jobs), so each core is shared"
    how += (f"; runs here have taken {ratio:.1f}× the model's time, which is included" if ratio and ratio > 1.05
            else "; a first run also starts its worker processes, which can take longer" if ratio is None else "")
    return secs, f"Estimated time for {what}: {ci.time_words(secs)} on {where_words()} ({how})."


def learn(predicted_s: float, actual_s: float) -> None:
    """Correct the cost model with a finished run's time (see :func:`dpdash.coherence.inputs.calibration`)."""
    _SERVER["ratio"] = ci.calibration(_SERVER["ratio"], predicted_s=predicted_s, actual_s=actual_s)


def remember_rate(ctx: Ctx, elapsed_s: float, runs: int) -> None:
    """Keep the wall time per repetition of a finished run: the next estimate of these settings uses it."""
    rates = st.session_state.setdefault("_coh_rate", {})
    rates[(ctx.data_key, ctx.preview_config)] = elapsed_s / max(1, runs)
    while len(rates) > 8:
        rates.pop(next(iter(rates)))


def progress_bar(text: str, kind: str = "experiment", total: int | None = None):
    """A progress bar with its Stop button (``ui.progress.RunProgress``) and its callback, whose text gives the
    time left calibrated on the runs done so far.

    Stop (the button under the bar, or Streamlit's own) reruns the page at once, and the tab says "Stopped … after
    36 of 60 runs" (:func:`stopped_note`) where the frozen "36/60 runs, about 20 s left" used to stay (issue 31).
    Call :func:`run_ended` when the run ends."""
    bar = RunProgress(text, kind=kind, key=f"coh_stop_{kind}", total=total)
    t0 = time.perf_counter()

    def step(d, t):
        bar.step(d, t, text=ci.time_left_words(d, t, time.perf_counter() - t0))

    return bar, step


def run_ended() -> None:
    """The run came to its end (a result or a message): nothing was stopped."""
    progress.run_ended()


def stopped_note(kind: str) -> str | None:
    """"Stopped: the last ε sweep was stopped after 36 of 60 runs …" once, after a run of ``kind`` that never
    ended."""
    r = progress.stopped(kind)
    if r is None:
        return None
    what = "ε sweep" if kind == "sweep" else "experiment"
    return (f"Stopped: the last {what} was stopped{progress.runs_words(r)}, so it has no result. Press **Run "
            f"{what}** to start it again.")


# ------------------------------------------------------------------------------------------ rendering a view
def figure(view: TabView, name: str, builder, *, key: str, filename: str, caption: str):
    """Build figure ``name`` from the view's inputs and show it with its alt text; returns ``(alt, fig)``."""
    fig = builder(**view.figures[name])
    alt = cf.alt_text(fig)
    show.figure(fig, key=key, filename=filename, alt=alt, caption=caption)
    return alt, fig


def script_text(view: TabView) -> str | None:
    """The tab's "Copy as code" script from the view's builder and arguments (None when the view has none)."""
    if not view.script:
        return None
    kwargs: dict[str, Any] = dict(view.script)
    builder = getattr(sc_script, kwargs.pop("builder"))
    return builder(**kwargs)


def take_away(view: TabView, tab: str, figures=()) -> None:
    """Report, settings and "Copy as code" for the open tab, all from ``view``."""
    show.take_away(view, key=f"coh_art_{tab}", page=vw.PAGE, title=vw.TITLE, sources=list(vw.SOURCES),
                   figures=list(figures), script=script_text(view))

