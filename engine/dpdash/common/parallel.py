"""One fan-out helper for every engine function that runs independent tasks.

The engine never names a joblib backend: :func:`imap_unordered` runs tasks on whatever
``joblib.parallel_config`` is active (so a caller can send them to a Dask cluster with
``with parallel_config(backend="dask"):``) and, with no configuration, on worker processes on the local cores
(joblib's default). Results come back as tasks finish, so progress callbacks move; a backend that cannot
stream gets its tasks in ordered rounds instead. Each task must take its randomness from its own
``numpy.random.SeedSequence`` child, never from a generator shared with other tasks: then the results do
not depend on the backend, the number of workers or the completion order.

With no configuration, each call gets **its own** pool of worker processes (loky's ``ProcessPoolExecutor``), shut
down when the call ends: joblib's default shares one reusable executor per server process, and when one caller's
run is interrupted (a Streamlit rerun or a closed tab closes the generator) joblib terminates that shared executor,
so every other session's run failed with ``ShutdownExecutorError`` (issue 26 item 3). A private pool is ended
with its own caller only, and its workers' memory is returned when the call ends.

Every worker of a private pool watches the process that started it (:func:`watch_parent`) and exits within
:data:`PARENT_POLL_S` seconds of its death: a server stopped by SIGKILL, or a warm-up process killed at shutdown,
leaves no worker (and, once the workers are gone, no loky resource tracker) behind under PID 1 (issue 35 item 4).
The workers run at a lower priority (:data:`WORKER_NICE`), so the server's own process, which draws every session's
pages, keeps the cores it needs while heavy runs compute (issue 35 item 2). Each task also reports the CPU seconds
it used, so a caller's :class:`dpdash.common.search.Deadline` can charge the
workers' CPU time to the run that asked for it (``imap_unordered(..., budget=deadline)``; issue 35 item 1).

One long task that reports progress as it goes (a leximin's column generation, a Monte Carlo grid computed in one
sequence) runs with :func:`run_in_worker`: in a private pool of one such worker, its progress calls relayed to the
caller's thread, its CPU seconds charged to the caller's deadline as it runs, and the worker ended when the caller
is interrupted or the deadline is spent (issue 35 item 2: the server process keeps only widgets and small work).

References: issue 16 ("When one machine is not enough"); joblib's ``Parallel(return_as="generator_unordered")``
and its Dask backend (``joblib._dask``); issue 26 item 3 (sessions are isolated); issue 35 items 1 and 4.
"""

from __future__ import annotations

import os
import pickle
import threading
import time
from collections import Counter
from contextlib import contextmanager
from concurrent.futures import FIRST_COMPLETED, wait
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs, parallel_config
from joblib.externals.loky import ProcessPoolExecutor
from joblib.parallel import get_active_backend

__all__ = ["PAGE_JOBS", "child_seed", "cpu_budget", "environment", "imap_unordered", "map_ordered", "run_in_worker",
           "spawn_seeds", "watch_parent"]

#: Worker processes for the pages' work on this host: the reference machine's 2 cores, fewer on a smaller host.
PAGE_JOBS = max(1, min(2, os.cpu_count() or 1))

#: Packages whose versions decide the numbers a task returns (the same seeds give the same draws only with the
#: same numpy; a forest's trees depend on scikit-learn's version).
_RESULT_PACKAGES = ("numpy", "scipy", "pandas", "scikit-learn", "joblib", "jax", "mbi")

#: Tasks per worker in one ordered round when a backend cannot stream (progress then moves once a round).
_ROUND_PER_WORKER = 4


#: Backend for joblib calls made *inside* a task (a random forest's trees, say): threads in the task's own
#: process, as joblib's process backends do for nested calls. Dask's backend would otherwise send every inner
#: call, even ``n_jobs=1``, back to the cluster as tiny tasks. This never decides where the tasks run.
_NESTED_BACKEND = "threading"


class _Shared:
    """An argument passed to several tasks, reporting its pickled size as its memory size.

    Joblib's Dask backend sends an argument to the workers once (and refers to it afterwards) when it is the
    same object in every task and ``sizeof`` finds it larger than 1 kB; ``sizeof`` of a plain object such as a
    dataclass of arrays is only its shell (~56 bytes), so the data would travel with every task. Other
    backends just pickle the wrapper with its value, as before.
    """

    __slots__ = ("value", "_nbytes", "__weakref__")

    def __init__(self, value):
        self.value = value
        self._nbytes = None

    def __sizeof__(self) -> int:
        if self._nbytes is None:
            try:
                self._nbytes = len(pickle.dumps(self.value, protocol=pickle.HIGHEST_PROTOCOL))
            except Exception:  # unpicklable here means unshippable anyway; let the backend report it
                self._nbytes = 0
        return self._nbytes

    def __reduce__(self):
        return (_Shared, (self.value,))


def _share_repeated(tasks: list[tuple]) -> list[tuple]:
    """Wrap every argument object that appears in more than one task (by identity) in one :class:`_Shared`."""
    counts = Counter(id(a) for args in tasks for a in args)
    wrappers: dict[int, _Shared] = {}
    out = []
    for args in tasks:
        out.append(tuple(wrappers.setdefault(id(a), _Shared(a)) if counts[id(a)] > 1 and not
                         isinstance(a, (bool, int, float, str, bytes, type(None))) else a for a in args))
    return out


#: Seconds between two looks at the parent process (a worker outlives a killed parent by at most this long).
PARENT_POLL_S = 1.0


def _watch(ppid: int, poll_s: float) -> None:
    while True:
        time.sleep(poll_s)
        # A dead parent's children are re-parented (to PID 1 or a subreaper): the parent id changes for good.
        if os.getppid() != ppid:
            os._exit(0)  # no cleanup that could block: the parent that would collect results is gone


def watch_parent(poll_s: float = PARENT_POLL_S, *, parent: int | None = None) -> threading.Thread | None:
    """Exit this process (``os._exit``) as soon as the process that started it has died; returns the watching
    daemon thread (None if there is nothing to watch: no ``parent`` given and this process's parent is PID 1).

    ``parent`` is the pid the starter passed down (its ``os.getpid()``): a process that starts slowly may find its
    parent already dead and itself re-parented, and must then exit at once instead of watching its new parent.
    Used as the initializer of every private pool's workers and by the server's warm-up process: loky's workers
    do not notice a parent killed by SIGKILL (they lived on under PID 1, issue 35 item 4), and a watching thread
    costs one wake-up per ``poll_s`` seconds. Idempotent per process.
    """
    global _WATCHER
    ppid = os.getppid() if parent is None else int(parent)
    if ppid <= 1:
        return None
    if os.getppid() != ppid:
        os._exit(0)  # the parent died while this process was starting
    with _WATCH_LOCK:
        if _WATCHER is None or not _WATCHER.is_alive():
            _WATCHER = threading.Thread(target=_watch, args=(ppid, poll_s), name="dpdash-parent-watch", daemon=True)
            _WATCHER.start()
        return _WATCHER


_WATCHER: threading.Thread | None = None
_WATCH_LOCK = threading.Lock()
#: True in a private pool's worker: one task at a time, so the process's CPU clock is the task's (BLAS threads
#: included); elsewhere (a Dask worker's threads) a task is timed by its own thread's clock.
_DEDICATED = False


#: Niceness added to every private pool's worker (issue 35 item 2): on a shared server the heavy runs' workers yield
#: the cores to the server process, which draws every session's pages, so a control on one page stays quick while
#: other sessions compute. Scheduling only: a task's result never depends on it, and on an idle machine the workers
#: still get every free cycle.
WORKER_NICE = 10


def _worker_init(parent: int, nice: int = WORKER_NICE) -> None:
    # ``nice`` is the starting process's WORKER_NICE, passed down: the workers are fresh interpreters (loky), so a
    # value set at run time in the starter (the test suite sets 0) would not reach them through the module
    global _DEDICATED
    _DEDICATED = True
    watch_parent(parent=parent)
    if hasattr(os, "nice") and nice:
        try:
            os.nice(nice)
        except OSError:  # not permitted here: run at the parent's priority
            pass


def _task_cpu() -> float:
    return time.process_time() if _DEDICATED else time.thread_time()


def _indexed(fn: Callable, i: int, *args) -> tuple[int, Any, float]:
    """Run one task; return its index, its result and the CPU seconds this process spent on it."""
    args = tuple(a.value if isinstance(a, _Shared) else a for a in args)
    cpu0 = _task_cpu()
    with parallel_config(backend=_NESTED_BACKEND):
        value = fn(*args)
    return i, value, _task_cpu() - cpu0


def _charged(results, budget, enforce: bool = False) -> Iterator[tuple[int, Any]]:
    """``(i, value)`` from ``(i, value, cpu)``, charging each task's CPU seconds to ``budget`` (if any); with
    ``enforce``, ``budget.check()`` after each task (a spent budget ends the run: the pool is closed, its workers
    killed)."""
    try:
        for i, value, cpu in results:
            if budget is not None:
                budget.charge(cpu)
                if enforce:
                    budget.check()
            yield i, value
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()


_AMBIENT = threading.local()


@contextmanager
def cpu_budget(deadline):
    """Within the block, every :func:`imap_unordered` call made in this thread without a ``budget`` of its own
    charges its tasks' CPU seconds to ``deadline`` and checks it after each task: once it is spent the call raises
    its ``SearchLimitError`` and its workers are killed. For engine functions that fan out through
    :func:`imap_unordered` but take no budget (a Monte Carlo grid): the caller bounds their computation, never
    their wall time (issue 35 item 1). Yields ``deadline``.

    >>> from dpdash.common.search import Deadline
    >>> with cpu_budget(Deadline(60.0)) as d:
    ...     sorted(imap_unordered(pow, [(2, 3), (3, 2)], n_jobs=1))
    [(0, 8), (1, 9)]
    """
    before = getattr(_AMBIENT, "budget", None)
    _AMBIENT.budget = deadline
    try:
        yield deadline
    finally:
        _AMBIENT.budget = before


def _check_n_jobs(n_jobs) -> int | None:
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or int(n_jobs) == 0:
        raise ValueError(f"n_jobs must be a non-zero integer or None, got {n_jobs!r}")
    return int(n_jobs)


def imap_unordered(fn: Callable, tasks: Sequence[tuple], *, n_jobs: int | None = -1,
                   budget=None) -> Iterator[tuple[int, Any]]:
    """Yield ``(i, fn(*tasks[i]))`` for every task, in the order the tasks finish.

    Parameters
    ----------
    fn : callable
        A module-level function (worker processes and Dask workers import it by name).
    tasks : sequence of tuple
        One tuple of positional arguments per task. Pass shared inputs as the *same object* in every tuple:
        the Dask backend then ships them to each worker once.
    n_jobs : int (≠ 0) or None, default -1
        ``1`` runs every task here, one after the other, in task order: the reference every other setting
        reproduces. Otherwise the tasks go to the backend of the active ``joblib.parallel_config`` (worker
        processes on the local cores when none is set) with joblib's meaning of ``n_jobs`` (``-1`` = all
        local cores; a Dask backend uses every worker of its cluster whatever the number); ``None`` takes
        ``n_jobs`` from the configuration.
    budget : dpdash.common.search.Deadline, optional
        Charged with the CPU seconds each task used in another process (``budget.charge``), so a CPU-time limit
        covers the workers too; with ``n_jobs=1`` the tasks run in the caller's thread, whose own CPU clock the
        deadline already reads. The caller decides when to ``check()`` it. Without one, the deadline of an
        enclosing :func:`cpu_budget` block is charged and checked after each task.

    Yields
    ------
    (int, object)
        The task's index and its result. Completion order where the backend streams results; where it
        cannot (joblib's ``multiprocessing`` backend), tasks run in ordered rounds of a few per worker.

    Notes
    -----
    Results equal those of ``n_jobs=1`` exactly when each task draws its randomness from its own
    ``SeedSequence`` child (see :func:`spawn_seeds`) and nothing else in it depends on where it runs.

    Examples
    --------
    >>> sorted(imap_unordered(pow, [(2, 3), (3, 2)], n_jobs=1))
    [(0, 8), (1, 9)]
    """
    tasks = [tuple(t) for t in tasks]
    n_jobs = _check_n_jobs(n_jobs)
    enforce = budget is None and getattr(_AMBIENT, "budget", None) is not None
    if enforce:  # the caller's cpu_budget block: charged and checked after each task
        budget = _AMBIENT.budget
    if not tasks:
        return
    if n_jobs == 1:
        for i, args in enumerate(tasks):
            value = fn(*args)
            if enforce:
                budget.check()  # the tasks ran in this thread, whose CPU clock the deadline reads
            yield i, value
        return
    if n_jobs is not None and n_jobs > 0:
        n_jobs = min(n_jobs, len(tasks))
    if _default_processes():
        yield from _charged(_private_pool(fn, tasks, n_jobs), budget, enforce)
        return
    shipped = _share_repeated(tasks)
    jobs = (delayed(_indexed)(fn, i, *args) for i, args in enumerate(shipped))
    try:
        runner = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    except ValueError as exc:
        if "return_as" not in str(exc):
            raise
        yield from _charged(_ordered_rounds(fn, shipped, n_jobs), budget, enforce)
        return
    yield from _charged(runner(jobs), budget, enforce)


def _default_processes() -> bool:
    """Whether tasks would go to joblib's default worker processes (no other backend configured by the caller)."""
    backend, _ = get_active_backend()
    return type(backend).__name__ == "LokyBackend"


#: Tasks in flight per worker of a private pool: enough to keep workers busy, few enough that an interrupted run
#: leaves little queued work to cancel.
_IN_FLIGHT_PER_WORKER = 2


_LIVE_POOLS: set = set()
_LIVE_LOCK = threading.Lock()
_EXIT_HOOK = False


def _kill_live_pools() -> None:
    """At interpreter exit, end every private pool still running, workers first.

    Without this a stopping server (SIGTERM, Ctrl-C) waited for the runs under way: loky's own exit hook joins each
    pool's manager thread, which waits for its pending tasks (issue 35 item 4).
    """
    with _LIVE_LOCK:
        pools = list(_LIVE_POOLS)
        _LIVE_POOLS.clear()
    for pool in pools:
        try:
            pool.shutdown(wait=False, kill_workers=True)
        except Exception:  # a pool that is already broken or closed has nothing left to end
            pass


def _ensure_exit_hook() -> None:
    """Register :func:`_kill_live_pools` once, after loky's own hook, so it runs first.

    ``threading._register_atexit`` hooks run in reverse order of registration, before the interpreter joins its
    threads; loky registers its hook at a pool's first submit, so this is called after that.
    """
    global _EXIT_HOOK
    with _LIVE_LOCK:
        if _EXIT_HOOK:
            return
        _EXIT_HOOK = True
    register = getattr(threading, "_register_atexit", None)
    try:
        if register is not None:
            register(_kill_live_pools)
        else:  # pragma: no cover - Python < 3.9
            import atexit
            atexit.register(_kill_live_pools)
    except RuntimeError:  # the interpreter is already shutting down
        pass


def _private_pool(fn: Callable, tasks: list[tuple], n_jobs: int | None) -> Iterator[tuple[int, Any, float]]:
    """Run the tasks on worker processes that belong to this call alone; yield ``(i, result, cpu)`` as they finish.

    Each worker watches this process (:func:`watch_parent`), so a SIGKILL here leaves no worker behind.

    At most ``_IN_FLIGHT_PER_WORKER`` tasks per worker are submitted at a time, so closing the generator (an
    interrupted run) cancels the rest at once; the pool, and only this pool, is then shut down with its workers.
    """
    workers = max(1, min(len(tasks), effective_n_jobs(n_jobs if n_jobs is not None else -1)))
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_init,
                               initargs=(os.getpid(), WORKER_NICE))
    with _LIVE_LOCK:
        _LIVE_POOLS.add(pool)
    pending: dict = {}
    nxt = 0
    try:
        while nxt < len(tasks) or pending:
            while nxt < len(tasks) and len(pending) < workers * _IN_FLIGHT_PER_WORKER:
                pending[pool.submit(_indexed, fn, nxt, *tasks[nxt])] = nxt
                nxt += 1
            _ensure_exit_hook()
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for fut in done:
                del pending[fut]
                yield fut.result()
    finally:
        with _LIVE_LOCK:
            _LIVE_POOLS.discard(pool)
        for fut in pending:
            fut.cancel()
        # an interrupted run kills its own workers now; a finished one lets them exit
        pool.shutdown(wait=not pending, kill_workers=bool(pending))


#: Seconds between two looks of :func:`run_in_worker` at its worker's progress and CPU time (and between two reports
#: of the worker's CPU time).
RELAY_POLL_S = 0.2


def _relay_write(path: str, state: dict) -> None:
    """Replace the relay file with (sequence number, CPU seconds of the task so far, last progress arguments)."""
    data = pickle.dumps((state["seq"], time.process_time() - state["cpu0"], state["args"]),
                        protocol=pickle.HIGHEST_PROTOCOL)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)  # atomic: the caller never reads half a record


def _relayed(fn: Callable, path: str, poll_s: float, with_progress: bool, args: tuple, kwargs: dict):
    """In the worker: ``fn(*args, **kwargs)`` (with ``progress=`` a relay when asked); returns (value, CPU seconds).

    Each progress call, and every ``poll_s`` seconds a heartbeat, rewrites the relay file at ``path`` with the
    task's CPU seconds so far (the worker runs this task alone: its process clock is the task's)."""
    lock = threading.Lock()
    state = {"seq": 0, "args": None, "cpu0": time.process_time()}

    def relay(*pargs) -> None:
        with lock:
            state["seq"] += 1
            state["args"] = pargs
            _relay_write(path, state)

    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(poll_s):
            with lock:
                _relay_write(path, state)

    beater = threading.Thread(target=beat, name="dpdash-relay-beat", daemon=True)
    beater.start()
    try:
        with parallel_config(backend=_NESTED_BACKEND):
            value = fn(*args, **({**kwargs, "progress": relay} if with_progress else kwargs))
    finally:
        stop.set()
        beater.join(timeout=2 * poll_s)
    return value, time.process_time() - state["cpu0"]


def _relay_read(path: str):
    try:
        with open(path, "rb") as f:
            return pickle.loads(f.read())
    except (OSError, EOFError, pickle.UnpicklingError):
        return None


def run_in_worker(fn: Callable, *args, progress: Callable[..., None] | None = None, budget=None,
                  poll_s: float = RELAY_POLL_S, **kwargs):
    """``fn(*args, **kwargs)`` computed in a worker process of its own; its result (or its exception) returned here.

    The worker is a private pool's (see :func:`imap_unordered`): it watches this process, runs at
    :data:`WORKER_NICE` and is ended at interpreter exit. With ``progress``, ``fn`` is called with a ``progress=``
    keyword whose calls (any positional arguments) are relayed to ``progress`` in the calling thread, the latest
    one every ``poll_s`` seconds at most (earlier ones in between are skipped): the caller's progress bar moves
    while the work happens elsewhere. ``budget`` (a :class:`dpdash.common.search.Deadline`) is charged with the
    worker's CPU seconds as they are spent (reported every ``poll_s``); once it is spent the worker is ended and
    ``budget.check()`` raises its ``SearchLimitError``. CPU time, never wall time: the same run stops after the
    same work whether the machine is idle or busy.

    If the caller is interrupted (an exception from ``progress``, such as Streamlit's stop or rerun, or a spent
    budget), the worker is killed at once and its memory returned; the exception goes on to the caller.
    ``fn`` must be a module-level function and its arguments and result picklable. The result is the one
    ``fn(*args, **kwargs)`` gives in this process when ``fn`` is deterministic (tests compare them).

    >>> run_in_worker(divmod, 7, 2)
    (3, 1)
    """
    import glob
    import tempfile

    fd, path = tempfile.mkstemp(prefix="dpdash-relay-")
    os.close(fd)
    os.unlink(path)  # the worker creates it with its first record
    pool = ProcessPoolExecutor(max_workers=1, initializer=_worker_init, initargs=(os.getpid(), WORKER_NICE))
    with _LIVE_LOCK:
        _LIVE_POOLS.add(pool)
    finished = False
    fut = None
    seen, charged = 0, 0.0

    def take(cpu: float) -> None:
        nonlocal charged
        if budget is not None and cpu > charged:
            budget.charge(cpu - charged)
            charged = cpu

    try:
        fut = pool.submit(_relayed, fn, path, float(poll_s), progress is not None, args, kwargs)
        _ensure_exit_hook()
        while True:
            done, _ = wait([fut], timeout=poll_s)
            record = _relay_read(path)
            if record is not None:
                seq, cpu, pargs = record
                take(cpu)
                if progress is not None and seq != seen and pargs is not None:
                    seen = seq
                    progress(*pargs)
            if done:
                value, cpu = fut.result()
                take(cpu)
                finished = True
                return value
            if budget is not None:
                budget.check()
    finally:
        with _LIVE_LOCK:
            _LIVE_POOLS.discard(pool)
        if not finished and fut is not None:
            fut.cancel()
        # a finished run lets its worker exit; an interrupted or failed one kills it now
        pool.shutdown(wait=finished, kill_workers=not finished)
        for leftover in [path, *glob.glob(glob.escape(path) + ".*.tmp")]:
            try:
                os.unlink(leftover)
            except OSError:
                pass


def _ordered_rounds(fn: Callable, tasks: list[tuple], n_jobs: int | None) -> Iterator[tuple[int, Any, float]]:
    """Fallback for a backend that cannot stream: ordered lists, a few tasks per worker at a time."""
    with Parallel(n_jobs=n_jobs, return_as="list") as runner:
        step = max(1, _ROUND_PER_WORKER * max(1, effective_n_jobs(n_jobs if n_jobs is not None else -1)))
        for start in range(0, len(tasks), step):
            yield from runner(delayed(_indexed)(fn, i, *tasks[i])
                              for i in range(start, min(start + step, len(tasks))))


def map_ordered(fn: Callable, tasks: Sequence[tuple], *, n_jobs: int | None = -1,
                progress: Callable[[int, int], None] | None = None) -> list:
    """``[fn(*t) for t in tasks]`` through :func:`imap_unordered`; ``progress(done, total)`` after each task.

    >>> map_ordered(divmod, [(7, 2), (9, 4)], n_jobs=1)
    [(3, 1), (2, 1)]
    """
    tasks = list(tasks)
    out: list = [None] * len(tasks)
    for done, (i, value) in enumerate(imap_unordered(fn, tasks, n_jobs=n_jobs), start=1):
        out[i] = value
        if progress is not None:
            progress(done, len(tasks))
    return out


def _root(seed) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, np.random.Generator):
        return seed.bit_generator.seed_seq
    return np.random.SeedSequence(seed)


def child_seed(seed, i: int) -> np.random.SeedSequence:
    """Child ``i`` of ``seed`` (an int, a SeedSequence or a Generator): ``spawn_seeds(seed, n)[i]`` for any n > i.

    >>> child_seed(7, 3).spawn_key
    (3,)
    """
    root = _root(seed)
    # Built from the spawn keys, not root.spawn(): spawn() advances the root, so a second call would differ.
    return np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, int(i)), pool_size=root.pool_size)


def spawn_seeds(seed, n: int) -> list[np.random.SeedSequence]:
    """``n`` independent ``SeedSequence`` children of ``seed`` (an int, a SeedSequence or a Generator).

    Child ``i`` depends only on ``seed`` and ``i`` (it equals ``SeedSequence(seed).spawn(n)[i]``, however often
    this is called), so task ``i`` draws the same numbers on any worker.

    >>> a, b = spawn_seeds(7, 2)
    >>> a.spawn_key, b.spawn_key
    ((0,), (1,))
    """
    root = _root(seed)
    return [child_seed(root, i) for i in range(int(n))]


def environment() -> dict[str, str]:
    """Python and the versions of the packages that decide task results, in this process.

    Run on a worker (``client.submit(environment)``), it also proves the worker can import this engine: a
    cluster whose answer differs from the server's could return other numbers, so the app does not use it.

    >>> sorted(environment())[:2]
    ['jax', 'joblib']
    """
    import platform
    from importlib import metadata

    out = {"python": platform.python_version()}
    for name in _RESULT_PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out
