"""Monotone searches shared by the engine: integer bisection and bracketed root finding.

Several formulas are inverted numerically: the largest number of mechanisms a budget allows, the smallest
integer shift or threshold meeting a bound, the noise scale or ρ at which a privacy curve reaches a target.
Each used to carry its own loop; one definition each lives here (issue 13, "call, don't copy").
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from scipy import optimize

#: Default cap on the steps that widen a bracket or double a guess (issue 26: every search has a bound)
MAX_STEPS = 200


class SearchLimitError(ValueError):
    """A search stopped at its iteration cap or CPU-time budget without reaching its target (issue 26 item 2).

    A ``ValueError``, so callers that turn refusals into messages keep working; the text says what was sought.
    """


def _thread_cpu_clock() -> Callable[[], float]:
    """A clock of the calling thread's CPU seconds that any thread may read (``pthread_getcpuclockid``), or, where
    the platform has none, :func:`time.thread_time` (then read it from the calling thread only)."""
    try:
        clock_id = time.pthread_getcpuclockid(threading.get_ident())
        time.clock_gettime(clock_id)
    except (AttributeError, OSError):
        return time.thread_time
    last = [0.0]

    def read() -> float:
        try:
            last[0] = time.clock_gettime(clock_id)
        except OSError:  # the thread has ended: its CPU time no longer grows
            pass
        return last[0]
    return read


class Deadline:
    """A budget of CPU seconds for one search or run: ``check()`` raises :class:`SearchLimitError` once it is spent.

    The clock is the CPU time of the thread that created the deadline plus what :meth:`charge` adds (the CPU
    seconds worker processes spent on the run: ``dpdash.common.parallel.imap_unordered(..., budget=deadline)``
    charges them). Never wall time (issue 35 item 1): a search given 8 s stops after the same work whether the
    server is idle or busy with other sessions, so a limit a user sets or a link carries gives the same answer
    whatever else the machine is doing. Not ``time.process_time()``: in a Streamlit server every session's script
    thread runs in one process, so the process clock counts other users' work too. ``seconds`` keeps its name
    (callers and messages say "time limit"); the seconds are seconds of computation.

    >>> Deadline(None).check("x") is None
    True
    >>> d = Deadline(1.0, what="the table")
    >>> d.charge(2.5)
    >>> d.expired(), d.left()
    (True, 0.0)
    """

    def __init__(self, seconds: float | None, *, what: str = "the search"):
        self.seconds = seconds
        self.what = what
        self._clock = _thread_cpu_clock()
        self._start = self._clock()
        self._charged = 0.0
        self._lock = threading.Lock()

    def charge(self, cpu_seconds: float) -> None:
        """Add CPU seconds spent on this run elsewhere (a worker process's task)."""
        with self._lock:
            self._charged += max(0.0, float(cpu_seconds))

    def spent(self) -> float:
        """CPU seconds used so far: the creating thread's since creation, plus every :meth:`charge`."""
        with self._lock:
            charged = self._charged
        return self._clock() - self._start + charged

    def left(self) -> float:
        """CPU seconds left (∞ without a budget, never below 0)."""
        return math.inf if self.seconds is None else max(0.0, self.seconds - self.spent())

    def expired(self) -> bool:
        return self.seconds is not None and self.spent() > self.seconds

    def check(self, what: str | None = None) -> None:
        if self.expired():
            raise SearchLimitError(f"{what or self.what} stopped at its time limit of {self.seconds:g} s")


def timed(f: Callable[[float], float], deadline: Deadline | None, what: str) -> Callable[[float], float]:
    """``f`` that first checks ``deadline`` (a slow evaluation, e.g. a PLD composition, cannot run past it)."""
    if deadline is None or deadline.seconds is None:
        return f

    def g(x: float) -> float:
        deadline.check(what)
        return f(x)
    return g


def smallest_true(pred: Callable[[int], bool], lo: int, hi: int) -> int:
    """Smallest integer t in (lo, hi] with ``pred(t)``, for ``pred`` monotone (False … False True … True).

    The caller guarantees ``pred(hi)`` holds; ``pred(lo)`` is taken as False and never evaluated.

    >>> smallest_true(lambda t: t * t >= 50, 0, 100)
    8
    >>> smallest_true(lambda t: True, -1, 10)
    0
    """
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid
        else:
            lo = mid
    return hi


def largest_true(pred: Callable[[int], bool], *, start: int = 1, cap: int | None = None) -> int:
    """Largest integer k ≥ ``start`` with ``pred(k)``, for ``pred`` monotone (True … True False … False).

    Returns ``start − 1`` if ``pred(start)`` fails. Doubles from ``start`` until ``pred`` fails, then bisects;
    with ``cap``, stops doubling past it and returns the last k known to hold. Without ``cap`` the doubling
    stops after :data:`MAX_STEPS` steps with :class:`SearchLimitError` (a predicate that never fails).

    >>> largest_true(lambda k: k * k <= 50)
    7
    >>> largest_true(lambda k: False)
    0
    >>> largest_true(lambda k: True, cap=1000)
    512
    """
    if not pred(start):
        return start - 1
    lo, hi = start, 2 * start
    steps = 0
    while pred(hi):
        lo, hi = hi, hi * 2
        if cap is not None and hi > cap:
            return lo
        steps += 1
        if steps > MAX_STEPS:
            raise SearchLimitError(f"no upper end found below {lo:,}: the condition never failed")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pred(mid):
            lo = mid
        else:
            hi = mid
    return lo


def grow_until(done: Callable[[float], bool], start: float, *, factor: float, cap: float) -> float:
    """Smallest ``start·factorᵏ`` (k = 0, 1, …) at which ``done`` holds, or ∞ once it passes ``cap``.

    Bounded: ``factor`` > 1 is required, so the loop ends after at most log(cap/start)/log(factor) steps.

    The upper end of a bracket for a monotone condition whose scale is unknown (a noise scale, a group size).

    >>> grow_until(lambda x: x >= 10, 1.0, factor=2.0, cap=1e6), grow_until(lambda x: False, 1.0, factor=4.0, cap=100)
    (16.0, inf)
    """
    if not factor > 1.0:
        raise ValueError(f"factor must be > 1; got {factor}")
    x = start
    while not done(x):
        x *= factor
        if x > cap:
            return math.inf
    return x


def bracketed_root(f: Callable[[float], float], lo: float, hi: float, *, increasing: bool,
                   step_lo: float = 1.0, step_hi: float = 1.0, lo_min: float = -math.inf, hi_max: float = math.inf,
                   growth: float = 1.0, max_steps: int = MAX_STEPS, deadline: Deadline | None = None,
                   what: str = "the search", xtol: float = 2e-12, rtol: float = 8.9e-16) -> float:
    """Root of a monotone ``f`` by Brent's method, after widening a starting bracket [lo, hi] until it holds.

    ``increasing`` says which way ``f`` goes; ``lo`` moves down by ``step_lo`` (not below ``lo_min``) and ``hi``
    up by ``step_hi`` (each step ``growth`` times the last) until ``f`` has opposite signs at the ends. Usually
    called in log space (x = ln σ, ln ρ). Bounded (issue 26): at most ``max_steps`` widening steps, ``hi`` never
    past ``hi_max``, every evaluation checks ``deadline``; :class:`SearchLimitError` (naming ``what``) says which
    bound stopped it.

    >>> round(bracketed_root(lambda x: x ** 3 - 2.0, 0.0, 0.5, increasing=True), 12)
    1.259921049895
    >>> round(bracketed_root(lambda x: 1.0 - x, 5.0, 6.0, increasing=False, step_lo=2.0), 12)
    1.0
    >>> bracketed_root(lambda x: -1.0, 0.0, 1.0, increasing=True, max_steps=5)
    Traceback (most recent call last):
    ...
    dpdash.common.search.SearchLimitError: the search found no root after widening its bracket 5 times
    """
    f = timed(f, deadline, what)
    sign = 1.0 if increasing else -1.0
    steps = 0

    def count() -> None:
        nonlocal steps
        steps += 1
        if steps > max_steps:
            raise SearchLimitError(f"{what} found no root after widening its bracket {max_steps} times")

    while sign * f(lo) > 0 and lo > lo_min:
        count()
        lo -= step_lo
        step_lo *= growth
    while sign * f(hi) < 0:
        if hi >= hi_max:
            raise SearchLimitError(f"{what} found no root below the largest value it may try")
        count()
        hi = min(hi + step_hi, hi_max)
        step_hi *= growth
    return optimize.brentq(f, lo, hi, xtol=xtol, rtol=rtol, maxiter=200)
