"""Argument checks shared by every engine module: one domain and one message per kind of parameter.

Each check converts its argument to the plain Python type the formulas use and returns it, or raises
:class:`ValidationError` with a message in plain words that names the parameter, its allowed domain and the
value received, the same wording everywhere ("epsilon must be a finite number > 0; got -1"). A function that
needs a narrower domain than the default says so in its docstring and calls the check with the narrower
options (for example ``check_delta(delta, allow_zero=False)`` where a bound divides by delta).

Randomness: every engine function that draws takes one keyword, ``rng``, and passes it through
:func:`as_generator` (Scientific Python SPEC 7: None, an integer seed, a ``SeedSequence`` or a ``Generator``).

References
----------
Scientific Python SPEC 7, "Seeding pseudo-random number generation" (the ``rng`` keyword).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

__all__ = [
    "EPSILON_MAX",
    "ValidationError",
    "as_generator",
    "check_delta",
    "check_epsilon",
    "check_finite",
    "check_int_in_range",
    "check_positive",
    "check_probability",
    "check_probability_vector",
    "check_rate",
    "check_rho",
    "check_size",
]


#: Largest ε any engine formula accepts where it needs e^ε as a float (e^1e4 overflows; ε beyond a few dozen is
#: already no privacy in any practical sense). Functions that need it pass ``at_most=EPSILON_MAX``.
EPSILON_MAX = 1e4


class ValidationError(ValueError):
    """An argument outside its domain; a ``ValueError``, so existing ``except ValueError`` handlers still apply."""


def _show(value: Any) -> str:
    """The received value as a short plain string (no ``np.float64(...)`` wrapper)."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        f = float(value)
        return str(int(f)) if f.is_integer() and abs(f) < 1e15 else repr(f)
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _fail(name: str, domain: str, value: Any) -> ValidationError:
    return ValidationError(f"{name} must be {domain}; got {_show(value)}")


def _as_real(value: Any, name: str, domain: str) -> float:
    """``value`` as a float, refusing strings, booleans, arrays with more than one element and non-numbers."""
    if isinstance(value, (str, bytes, bool, np.bool_)) or np.ndim(value) != 0:
        raise _fail(name, domain, value)
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        raise _fail(name, domain, value) from None


def check_positive(x: Any, *, name: str, allow_zero: bool = False, allow_inf: bool = False) -> float:
    """Check that ``x`` is a number > 0 (or ≥ 0), finite unless ``allow_inf``.

    Parameters
    ----------
    x : float
        The value to check.
    name : str
        Parameter name used in the message.
    allow_zero : bool, default False
        Accept 0 (domain ≥ 0 instead of > 0).
    allow_inf : bool, default False
        Accept +inf.

    Returns
    -------
    float

    Examples
    --------
    >>> check_positive(2, name="sensitivity")
    2.0
    >>> check_positive(0, name="sensitivity")
    Traceback (most recent call last):
    ...
    dpdash.common.validation.ValidationError: sensitivity must be a finite number > 0; got 0
    """
    bound = "≥ 0" if allow_zero else "> 0"
    domain = f"a number {bound} (inf allowed)" if allow_inf else f"a finite number {bound}"
    v = _as_real(x, name, domain)
    if math.isnan(v) or (v == math.inf and not allow_inf) or v < 0 or (v == 0 and not allow_zero):
        raise _fail(name, domain, x)
    return v


def check_epsilon(epsilon: Any, *, name: str = "epsilon", allow_zero: bool = False,
                  allow_inf: bool = False, at_most: float | None = None) -> float:
    """Check a privacy-loss parameter ε: a finite number > 0 by default.

    Parameters
    ----------
    epsilon : float
        The value to check.
    name : str, default "epsilon"
        Parameter name used in the message.
    allow_zero : bool, default False
        Accept ε = 0 (a zero share of a budget, for instance).
    allow_inf : bool, default False
        Accept ε = inf (no privacy).
    at_most : float, optional
        A narrower top of the domain, e.g. :data:`EPSILON_MAX` where a formula needs e^ε as a float.

    Returns
    -------
    float

    Examples
    --------
    >>> check_epsilon(0.5)
    0.5
    >>> check_epsilon(-1)
    Traceback (most recent call last):
    ...
    dpdash.common.validation.ValidationError: epsilon must be a finite number > 0; got -1
    >>> check_epsilon(2e4, at_most=EPSILON_MAX)
    Traceback (most recent call last):
    ...
    dpdash.common.validation.ValidationError: epsilon must be a finite number in (0, 1e4]; got 20000
    >>> check_epsilon(0, allow_zero=True, at_most=EPSILON_MAX)
    0.0
    """
    v = check_positive(epsilon, name=name, allow_zero=allow_zero, allow_inf=allow_inf)
    if at_most is not None and v > at_most:
        exp = math.log10(at_most)
        top = f"1e{exp:.0f}" if at_most >= 1e4 and exp.is_integer() else f"{at_most:g}"
        raise _fail(name, f"a finite number in {'[' if allow_zero else '('}0, {top}]", epsilon)
    return v


def check_rho(rho: Any, *, name: str = "rho") -> float:
    """Check a zero-concentrated DP parameter ρ: a finite number > 0.

    Examples
    --------
    >>> check_rho(0.125)
    0.125
    """
    return check_positive(rho, name=name)


def check_finite(x: Any, *, name: str) -> float:
    """Check that ``x`` is a finite real number (any sign).

    Examples
    --------
    >>> check_finite(-3, name="centre")
    -3.0
    """
    domain = "a finite number"
    v = _as_real(x, name, domain)
    if not math.isfinite(v):
        raise _fail(name, domain, x)
    return v


def _check_interval(x: Any, name: str, lo_closed: bool, hi_closed: bool, lo: float = 0.0,
                    hi: float = 1.0) -> float:
    domain = f"a number in {'[' if lo_closed else '('}{lo:g}, {hi:g}{']' if hi_closed else ')'}"
    v = _as_real(x, name, domain)
    ok_lo = v >= lo if lo_closed else v > lo
    ok_hi = v <= hi if hi_closed else v < hi
    if not (ok_lo and ok_hi):  # also refuses nan
        raise _fail(name, domain, x)
    return v


def check_delta(delta: Any, *, name: str = "delta", allow_zero: bool = True, allow_one: bool = False) -> float:
    """Check a failure probability δ: a number in [0, 1) by default.

    Parameters
    ----------
    delta : float
        The value to check.
    name : str, default "delta"
        Parameter name used in the message.
    allow_zero : bool, default True
        Accept δ = 0 (pure DP). Bounds that divide by δ or take its logarithm pass False: (0, 1).
    allow_one : bool, default False
        Accept δ = 1.

    Returns
    -------
    float

    Examples
    --------
    >>> check_delta(1e-6)
    1e-06
    >>> check_delta(0, allow_zero=False)
    Traceback (most recent call last):
    ...
    dpdash.common.validation.ValidationError: delta must be a number in (0, 1); got 0
    """
    return _check_interval(delta, name, allow_zero, allow_one)


def check_rate(q: Any, *, name: str = "rate", allow_zero: bool = False) -> float:
    """Check a sampling rate: a number in (0, 1] by default, [0, 1] with ``allow_zero``.

    Examples
    --------
    >>> check_rate(0.01)
    0.01
    """
    return _check_interval(q, name, allow_zero, True)


def check_probability(p: Any, *, name: str = "probability") -> float:
    """Check a probability: a number in [0, 1].

    Examples
    --------
    >>> check_probability(1)
    1.0
    """
    return _check_interval(p, name, True, True)


def check_probability_vector(p: Any, *, name: str = "probabilities", atol: float = 1e-9) -> np.ndarray:
    """Check a probability vector: a non-empty 1-D array of finite entries ≥ 0 that sum to 1 within ``atol``.

    Parameters
    ----------
    p : array_like
        The vector to check.
    name : str, default "probabilities"
        Parameter name used in the message.
    atol : float, default 1e-9
        Allowed absolute difference between the sum and 1.

    Returns
    -------
    numpy.ndarray
        A float copy of ``p`` (not renormalised).

    Examples
    --------
    >>> check_probability_vector([0.25, 0.75]).tolist()
    [0.25, 0.75]
    """
    domain = "a non-empty list of numbers ≥ 0 that sum to 1"
    try:
        a = np.array(p, dtype=float)
    except (TypeError, ValueError):
        raise _fail(name, domain, p) from None
    if a.ndim != 1 or a.size == 0 or not np.all(np.isfinite(a)) or np.any(a < 0):
        raise _fail(name, domain, p)
    total = float(a.sum())
    if abs(total - 1.0) > atol:
        raise ValidationError(f"{name} must be {domain}; got a sum of {total!r}")
    return a


def check_int_in_range(n: Any, *, name: str, lo: float, hi: float) -> int:
    """Check that ``n`` is an integer with ``lo <= n <= hi`` (``hi`` may be ``math.inf``).

    Integral floats such as ``3.0`` are accepted (slider values); booleans and ``3.5`` are not.

    Examples
    --------
    >>> check_int_in_range(3.0, name="k", lo=1, hi=10)
    3
    >>> check_int_in_range(11, name="k", lo=1, hi=10)
    Traceback (most recent call last):
    ...
    dpdash.common.validation.ValidationError: k must be an integer in [1, 10]; got 11
    """
    if hi == math.inf:
        domain = f"an integer ≥ {_show(lo)}"
    else:
        domain = f"an integer in [{_show(lo)}, {_show(hi)}]"
    if isinstance(n, numbers.Integral) and not isinstance(n, (bool, np.bool_)):
        iv = int(n)
    else:
        v = _as_real(n, name, domain)
        if not (math.isfinite(v) and v.is_integer()):
            raise _fail(name, domain, n)
        iv = int(v)
    if not (lo <= iv <= hi):
        raise _fail(name, domain, n)
    return iv


def check_size(n: Any, *, name: str = "n", minimum: int = 1) -> int:
    """Check a count or size: an integer ≥ ``minimum`` (default 1).

    Examples
    --------
    >>> check_size(100)
    100
    >>> check_size(0)
    Traceback (most recent call last):
    ...
    dpdash.common.validation.ValidationError: n must be an integer ≥ 1; got 0
    """
    return check_int_in_range(n, name=name, lo=minimum, hi=math.inf)


def as_generator(rng: Any = None) -> np.random.Generator:
    """A ``numpy.random.Generator`` from what SPEC 7 lets an ``rng`` keyword accept.

    Parameters
    ----------
    rng : None, int, sequence of int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator
        None gives fresh OS entropy; an integer seed (≥ 0) or a ``SeedSequence`` gives a reproducible stream; a
        ``Generator`` is returned unchanged, so the caller's stream advances.

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> g = as_generator(7)
    >>> as_generator(g) is g
    True
    >>> bool(as_generator(7).random() == as_generator(7).random())
    True
    """
    if isinstance(rng, np.random.Generator):
        return rng
    domain = "None, an integer seed ≥ 0, a numpy SeedSequence or a numpy Generator"
    if rng is None or isinstance(rng, (np.random.SeedSequence, np.random.BitGenerator)):
        return np.random.default_rng(rng)
    if isinstance(rng, (bool, np.bool_)):
        raise _fail("rng", domain, rng)
    if isinstance(rng, numbers.Integral):
        if int(rng) < 0:
            raise _fail("rng", domain, rng)
        return np.random.default_rng(int(rng))
    if isinstance(rng, (list, tuple)) and rng and all(
            isinstance(s, numbers.Integral) and not isinstance(s, (bool, np.bool_)) and s >= 0 for s in rng):
        return np.random.default_rng([int(s) for s in rng])
    raise _fail("rng", domain, rng)
