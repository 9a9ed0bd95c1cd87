"""Where long runs execute: this server's cores, or a Dask cluster the server is pointed at (opt-in).

With a scheduler address in the environment variable ``DPDASH_DASK_SCHEDULER`` or in
``.streamlit/secrets.toml`` (``[dask] scheduler_address = "tcp://host:8786"``; the variable wins), the app
keeps one ``dask.distributed.Client`` per server process (a cached resource) and :func:`run` sends a long
run's independent tasks there through ``joblib.parallel_config``; the engine itself stays backend-free
(``dpdash.common.parallel``). If the scheduler cannot be reached, or has no workers, runs stay on the local cores
and :func:`show_where` says why. Without an address nothing changes. Results are the same wherever a run
executes: every task seeds itself from its own ``SeedSequence`` child.

References: issue 16 ("When one machine is not enough"); README section of the same name.
"""

from __future__ import annotations

import concurrent.futures
import functools
import os
import threading
import time
from dataclasses import dataclass

import streamlit as st
from joblib import parallel_config

from ui.text import md_escape

#: Environment variable holding the scheduler address (wins over the secrets file).
ENV_VAR = "DPDASH_DASK_SCHEDULER"
#: ``.streamlit/secrets.toml`` section and key holding the scheduler address.
SECRETS_SECTION, SECRETS_KEY = "dask", "scheduler_address"
#: Seconds to wait for the scheduler when connecting.
CONNECT_TIMEOUT_S = 5
#: After a failed connection, seconds before the next attempt (so a dead scheduler does not slow every rerun).
RETRY_AFTER_S = 60
#: Seconds a first tiny task may take on a new connection (it proves the cluster can run this app's code).
PROBE_TIMEOUT_S = 20
#: Errors that mean "the cluster went away", not "the computation is wrong" (comm errors subclass OSError).
CLUSTER_ERRORS = (OSError, TimeoutError, concurrent.futures.CancelledError)

_failures: dict[str, tuple[float, str]] = {}
_failures_lock = threading.Lock()
_made: list = []  # every client this process opened, so reset() can close them
_verified: set[int] = set()  # ids of clients whose cluster passed the probe


@dataclass(frozen=True)
class Placement:
    """Where the next long run executes.

    ``address`` is the configured scheduler (None: no cluster configured); ``client`` is set only when the
    scheduler answered and has workers; otherwise ``problem`` says what went wrong and runs are local.
    """

    address: str | None
    client: object | None = None
    workers: int = 0
    threads: int = 0
    problem: str | None = None

    @property
    def on_cluster(self) -> bool:
        return self.client is not None


def scheduler_address() -> str | None:
    """The configured scheduler address, or None: ``DPDASH_DASK_SCHEDULER``, else the secrets file."""
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return env
    try:
        section = st.secrets.get(SECRETS_SECTION)
        value = section.get(SECRETS_KEY) if section is not None else None
    except Exception:  # no secrets file, or one that does not parse: no cluster configured
        return None
    value = str(value).strip() if value is not None else ""
    return value or None


@st.cache_resource(show_spinner=False, max_entries=2)
def _connection(address: str) -> tuple:
    """One client per server process and address (an exception is not cached, so the next call retries).

    Returned inside a tuple: a ``Client`` is awaitable, and Streamlit refuses to cache an awaitable.
    """
    Client = _client_class()
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except AssertionError:
        # distributed starts each client's IO loop in a new thread and waits 10 s for it (LoopRunner), then fails
        # with a bare AssertionError; seen twice in `make test` while both cores were busy. Try once more.
        client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    _made.append(client)
    return (client,)


@functools.cache
def _client_class():
    """``distributed.Client`` that closes itself, IO-loop thread included, when it cannot connect.

    A plain ``Client`` whose connection fails (a refused port, a malformed address) raises from its constructor
    with its IO-loop thread still running and, for some errors, its status still "connecting". Dropped, it is
    closed later by its ``__del__``, from whatever code the garbage collector interrupts; when that code held
    distributed's class-wide ``LoopRunner`` lock (another client starting its loop), ``__del__`` waited on that
    lock for ever: a test process hung until its 600 s timeout (2026-11-28).
    """
    from distributed import Client

    class SelfClosingClient(Client):
        def start(self, **kwargs):
            try:
                return super().start(**kwargs)
            except BaseException:
                if self.status not in ("closed", "newly-created"):
                    self.close(timeout=CONNECT_TIMEOUT_S)
                self._loop_runner.stop()  # close() skips this when the failed start already marked it closed
                raise

    return SelfClosingClient


def _client(address: str):
    return _connection(address)[0]


def _note_failure(address: str, message: str) -> None:
    with _failures_lock:
        _failures[address] = (time.monotonic(), message)


def reset() -> None:
    """Close and forget the cached clients and any remembered failure (tests, or after fixing the setting)."""
    _connection.clear()
    while _made:
        try:
            _made.pop().close()
        except Exception:  # closing a client whose scheduler is gone may fail; it is forgotten either way
            pass
    _verified.clear()
    with _failures_lock:
        _failures.clear()


def _probe(client) -> str | None:
    """None when the scheduler and every worker run this engine with the server's package versions, else why not.

    Without the probe a cluster that cannot import ``engine`` hangs the run: the scheduler fails to read the
    tasks and the futures never finish.
    """
    from dpdash.common.parallel import environment

    future = client.submit(environment, pure=False)
    try:
        remote = [future.result(timeout=PROBE_TIMEOUT_S)]
        # callback_timeout bounds the wait: without it a worker that never answers held the page (seen: 600 s)
        remote += list(client.run(environment, callback_timeout=PROBE_TIMEOUT_S).values())
    except Exception as exc:
        future.cancel()
        return (f"it could not run this app's code ({type(exc).__name__}); the scheduler and every worker need this "
                "repository on their PYTHONPATH and the pinned requirements")
    here = environment()
    diff = sorted({f"{k} {env.get(k)} there, {v} here" for env in remote for k, v in here.items() if env.get(k) != v})
    if diff:
        return f"its packages differ from this server's ({'; '.join(diff[:3])}), so its numbers could differ"
    return None


def placement() -> Placement:
    """Connect (once per server) to the configured scheduler and describe where runs execute."""
    address = scheduler_address()
    if address is None:
        return Placement(None)
    with _failures_lock:
        failed = _failures.get(address)
    if failed is not None and time.monotonic() - failed[0] < RETRY_AFTER_S:
        return Placement(address, problem=failed[1])
    try:
        client = _client(address)
        if client.status != "running":  # the scheduler went away since we connected: start afresh
            _connection.clear()
            client = _client(address)
        workers = client.scheduler_info(n_workers=-1).get("workers", {})
    except Exception as exc:  # any failure to connect means "run locally"; the page says why
        _connection.clear()
        message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        _note_failure(address, message)
        return Placement(address, problem=message)
    with _failures_lock:
        _failures.pop(address, None)
    if not workers:
        return Placement(address, problem="the scheduler has no workers")
    if id(client) not in _verified:
        problem = _probe(client)
        if problem is not None:
            _note_failure(address, problem)
            return Placement(address, problem=problem)
        _verified.add(id(client))
    threads = sum(int(w.get("nthreads", 1)) for w in workers.values())
    return Placement(address, client, len(workers), threads)


def where_text(where: Placement, n_jobs: int) -> str:
    """One sentence for the page: where the run executes (Markdown-safe: the address is escaped)."""
    local = f"this server's {n_jobs} core{'s' if n_jobs != 1 else ''}"
    if where.address is None:
        return f"Runs on {local}."
    addr = md_escape(where.address)
    if where.on_cluster:
        return (f"Runs on the Dask cluster at {addr}: {where.workers} worker{'s' if where.workers != 1 else ''}, "
                f"{where.threads} thread{'s' if where.threads != 1 else ''} (same numbers as a local run).")
    return f"The Dask cluster at {addr} cannot be used ({md_escape(where.problem)}): runs on {local} instead."


def show_where(n_jobs: int) -> Placement:
    """Say under a Run button where the run will execute: a caption, or a warning when the cluster failed."""
    where = placement()
    text = where_text(where, n_jobs)
    if where.address is not None and not where.on_cluster:
        st.warning(text, icon=":material/cloud_off:")
    else:
        st.caption(text)
    return where


def run(fn, *args, n_jobs: int, **kwargs):
    """``fn(*args, n_jobs=n_jobs, **kwargs)``, with its fan-out on the cluster when one is connected.

    On the cluster ``n_jobs`` becomes the cluster's thread count (at least 2, so no engine function takes its
    in-process path). If the cluster fails during the run, the failure is remembered and the run is repeated
    on the local cores: the result is the same either way.
    """
    where = placement()
    if not where.on_cluster:
        return fn(*args, n_jobs=n_jobs, **kwargs)
    try:
        with parallel_config(backend="dask", client=where.client):
            return fn(*args, n_jobs=max(2, where.threads), **kwargs)
    except CLUSTER_ERRORS as exc:
        _note_failure(where.address, f"lost during a run: {type(exc).__name__}")
        _connection.clear()
        return fn(*args, n_jobs=n_jobs, **kwargs)
