"""Numbers for reading, one definition each: verdict text (``number``, ``percent``, ``given``, ``power_of_ten``) and
chart axes (``tick_text``, ``tick_texts``, ``log_axis``, ``finite_range``), shared by every page's verdicts and
figures.

References
----------
Issue 14 item 2 (plain words; clean decade ticks, one label form per axis, ranges that stop at the data).
"""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np

SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def split_decimal(x: float) -> tuple[float, int]:
    """``x`` as mantissa × 10**exponent with 1 ≤ |mantissa| < 10, read from the decimal form Python prints, so that
    it holds down to the smallest subnormal float (5e-324, where ``10.0**-324`` is 0 and dividing by it fails).

    >>> split_decimal(5e-7), split_decimal(1e-310), split_decimal(-2500.0)
    ((5.0, -7), (1.0, -310), (-2.5, 3))
    """
    d = Decimal(repr(float(x)))  # the shortest decimal that reads back as x: 1e-310, not 9.99999999999997e-311
    if not d.is_finite() or d.is_zero():
        return float(x), 0
    e = d.adjusted()
    return float(d.scaleb(-e)), e


def times_ten_to(mantissa: str, exponent: int) -> str:
    """"10⁻⁶" when the mantissa is "1" (or empty), else "5·10⁻⁷": the one way powers of ten are written.

    >>> times_ten_to("1", -6), times_ten_to("2", -5), times_ten_to("4.9", 8)
    ('10⁻⁶', '2·10⁻⁵', '4.9·10⁸')
    """
    power = "10" + str(int(exponent)).translate(SUPERSCRIPT)
    return power if mantissa in ("", "1") else f"{mantissa}·{power}"


def number(x: float, sig: int = 2) -> str:
    """``x`` rounded to ``sig`` significant figures, trailing zeros kept (2.996 → "3.0"), thousands separated.

    >>> number(2.996), number(0.01234), number(1234.5), number(float("inf")), number(-0.5)
    ('3.0', '0.012', '1,200', '∞', '-0.50')
    """
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x == 0:
        return "0"
    if abs(x) >= 1e15:  # 1e308 written out would be 400 digits (and round() overflows near the largest double)
        mant, exp = f"{x:.{sig - 1}e}".split("e")  # rounded as text: 1.8e308 is no float
        return times_ten_to(mant, int(exp))
    mag = math.floor(math.log10(abs(x)))
    rounded = round(x, sig - 1 - mag)
    mag = math.floor(math.log10(abs(rounded))) if rounded else mag  # 9.96 rounds up to 10
    decimals = max(0, sig - 1 - mag)
    if abs(rounded) < 1e-4:
        return f"{rounded:.{sig - 1}e}".replace("e-0", "e-")
    return f"{rounded:,.{decimals}f}"


def number_down(x: float, sig: int = 4) -> str:
    """``x`` cut (not rounded) to ``sig`` significant figures, for a limit the reader must not exceed: "use ε ≤ 5.298"
    where ε = ln 200 = 5.2983 (rounded, "5.30" would break the promise).

    >>> number_down(5.298317), number_down(1.0986123, 3), number_down(0.5), number_down(float("inf"))
    ('5.298', '1.09', '0.5000', '∞')
    """
    if x is None or not math.isfinite(x) or x <= 0:
        return number(x, sig)
    m, e = split_decimal(x)
    digits = str(math.floor(m * 10 ** (sig - 1) * (1 + 1e-12)))  # the first ``sig`` digits, cut
    if x < 1e-4:  # written from the digits: a subnormal read back as a float could round up again
        return f"{digits[0]}.{digits[1:]}e{e}" if sig > 1 else f"{digits}e{e}"
    return number(float(f"{digits}e{e - sig + 1}"), sig)


def power_of_ten(x: float) -> str:
    """δ for reading: 1e-06 → "10⁻⁶", 5e-07 → "5·10⁻⁷" (exact powers of ten without a mantissa).

    >>> power_of_ten(1e-6), power_of_ten(5e-7), power_of_ten(0.05)
    ('10⁻⁶', '5·10⁻⁷', '0.05')
    """
    if x == 0:
        return "0"
    if not math.isfinite(x):
        return number(x)
    if abs(x) >= 1e-3:
        return f"{x:g}"
    m, e = split_decimal(abs(x))
    sign = "−" if x < 0 else ""
    return sign + times_ten_to("" if abs(m - 1) < 1e-9 else f"{m:.2g}", e)


def given(x: float) -> str:
    """A value the user set, as they would type it (up to 4 significant figures, no padding zeros).

    >>> given(1.0), given(0.125), given(2000.0)
    ('1', '0.125', '2,000')
    """
    return f"{x:,.4g}" if x < 1e6 else number(x, 4)


def percent(p: float, sig: int = 2) -> str:
    """A probability as a percentage with ``sig`` significant figures (0.2315 → "23%", 0.0046 → "0.46%")."""
    return number(100 * p, sig) + "%"


def tick_text(v: float) -> str:
    """A tick label written out in full: 0.5 (never a bare "5"), 1000 as "1,000", 1e-6 as "10⁻⁶".

    >>> [tick_text(v) for v in (0.5, 2, 1000, 1e-6, 2e-5, 1e5, 1e-4)]
    ['0.5', '2', '1,000', '10⁻⁶', '2·10⁻⁵', '100,000', '10⁻⁴']
    """
    if v >= 1e15:  # a tick at 10³⁰⁸ written out would be 400 digits
        return _power_tick(v)
    if v >= 1:
        return f"{v:,.0f}" if v >= 1000 else f"{v:g}"
    if v >= 1e-3:
        return f"{v:.10f}".rstrip("0").rstrip(".")
    return _power_tick(v)


#: Smallest tick an axis writes as a decimal ("0.00001"); an axis reaching below it writes every tick as a power.
DECIMAL_TICK_FLOOR = 1e-5


def _decimal_tick(v: float) -> str:
    """0.00002, 0.5, 1, 1,000: the plain decimal form (``tick_text`` for 1 and above)."""
    return tick_text(v) if v >= 1 else f"{v:.12f}".rstrip("0").rstrip(".")


def _power_tick(v: float) -> str:
    """10⁻⁶, 2·10⁻⁵, 10⁰: the power-of-ten form."""
    if not (math.isfinite(v) and v > 0):
        return number(v)
    m, e = split_decimal(v)
    if round(m) == 10:  # 9.6·10⁻⁶ is labelled as the decade above
        m, e = 1.0, e + 1
    return times_ten_to(str(round(m)), e)


def tick_texts(vals) -> list[str]:
    """Labels for one axis's ticks, all in one form (issue 14 item 2: never "10⁻⁴, 0.001" on one axis).

    Decimals when every tick is at least 10⁻⁵, else powers of ten for every tick.

    >>> tick_texts([1e-4, 1e-3, 0.01]), tick_texts([1e-6, 1e-3, 1.0]), tick_texts([0.5, 1, 2000])
    (['0.0001', '0.001', '0.01'], ['10⁻⁶', '10⁻³', '10⁰'], ['0.5', '1', '2,000'])
    """
    vals = [float(v) for v in vals]
    fmt = _decimal_tick if vals and min(vals) >= DECIMAL_TICK_FLOOR / 1.0001 else _power_tick
    return [fmt(v) for v in vals]


def log_axis(lo: float, hi: float, *, title: str | None = None, pad: float = 0.03) -> dict:
    """A Plotly log axis over [lo, hi] with full-number ticks at 1, 2, 5 per decade (1 only beyond 3 decades),
    labelled in one form (``tick_texts``).

    The range stops where the data stop (padded by ``pad`` decades), so no axis runs on to 10⁻³⁰¹.
    """
    lo, hi = float(lo), float(hi)
    if not (0 < lo <= hi and math.isfinite(hi)):
        return dict(type="log", title=title)
    if hi == lo:
        lo, hi = lo / 2, hi * 2
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    decades = math.log10(hi) - math.log10(lo)
    step = 1 if decades <= 12 else math.ceil(decades / 12)
    mults = (1, 2, 5) if decades <= 3.05 else (1,)
    vals = [m * 10.0**e for e in range(a, b + 1, step) for m in mults if lo / 1.0001 <= m * 10.0**e <= hi * 1.0001]
    if len(vals) < 2:  # under one decade: 1–9 per decade rather than a single tick
        vals = [m * 10.0**e for e in range(a, b + 1) for m in range(1, 10) if lo / 1.0001 <= m * 10.0**e <= hi * 1.0001]
    ax = dict(type="log", tickvals=vals, ticktext=tick_texts(vals),
              range=[math.log10(lo) - pad, math.log10(hi) + pad])
    if title is not None:
        ax["title"] = title
    return ax


def finite_range(*arrays) -> tuple[float, float]:
    """Smallest and largest finite positive value over the arrays (for a log axis); (1, 10) when there is none."""
    vals = np.concatenate([np.asarray(a, dtype=float).ravel() for a in arrays]) if arrays else np.array([])
    vals = vals[np.isfinite(vals) & (vals > 0)]
    return (float(vals.min()), float(vals.max())) if vals.size else (1.0, 10.0)
