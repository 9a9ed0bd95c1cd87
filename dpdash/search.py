"""Monotone searches shared by the engine: integer bisection and bracketed root finding.

Several formulas are inverted numerically: the largest number of mechanisms a budget allows, the smallest
integer shift or threshold meeting a bound, the noise scale or ρ at which a privacy curve reaches a target.
Each used to carry its own loop; one definition each lives here (issue 13, "call, don't copy").
"""

from __future__ import annotations

import math
from collections.abc import Callable

from scipy import optimize


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
    with ``cap``, stops doubling past it and returns the last k known to hold.

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
    while pred(hi):
        lo, hi = hi, hi * 2
        if cap is not None and hi > cap:
            return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pred(mid):
            lo = mid
        else:
            hi = mid
    return lo


def grow_until(done: Callable[[float], bool], start: float, *, factor: float, cap: float) -> float:
    """Smallest ``start·factorᵏ`` (k = 0, 1, …) at which ``done`` holds, or ∞ once it passes ``cap``.

    The upper end of a bracket for a monotone condition whose scale is unknown (a noise scale, a group size).

    >>> grow_until(lambda x: x >= 10, 1.0, factor=2.0, cap=1e6), grow_until(lambda x: False, 1.0, factor=4.0, cap=100)
    (16.0, inf)
    """
    x = start
    while not done(x):
        x *= factor
        if x > cap:
            return math.inf
    return x


def bracketed_root(f: Callable[[float], float], lo: float, hi: float, *, increasing: bool,
                   step_lo: float = 1.0, step_hi: float = 1.0, lo_min: float = -math.inf,
                   xtol: float = 2e-12, rtol: float = 8.9e-16) -> float:
    """Root of a monotone ``f`` by Brent's method, after widening a starting bracket [lo, hi] until it holds.

    ``increasing`` says which way ``f`` goes; ``lo`` moves down by ``step_lo`` (not below ``lo_min``) and ``hi``
    up by ``step_hi`` until ``f`` has opposite signs at the ends. Usually called in log space (x = ln σ, ln ρ).

    >>> round(bracketed_root(lambda x: x ** 3 - 2.0, 0.0, 0.5, increasing=True), 12)
    1.259921049895
    >>> round(bracketed_root(lambda x: 1.0 - x, 5.0, 6.0, increasing=False, step_lo=2.0), 12)
    1.0
    """
    sign = 1.0 if increasing else -1.0
    while sign * f(lo) > 0 and lo > lo_min:
        lo -= step_lo
    while sign * f(hi) < 0:
        hi += step_hi
    return optimize.brentq(f, lo, hi, xtol=xtol, rtol=rtol)
