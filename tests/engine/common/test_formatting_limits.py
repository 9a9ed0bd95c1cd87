"""Number formatting over the whole double range, subnormals included (issue 31: ``power_of_ten(5e-324)`` divided by
``10.0**-324``, which is 0). Each label is read back and compared with the value by mpmath, not by the code."""

from __future__ import annotations

import math

import mpmath
import pytest

from dpdash.common import formatting as F

_DIGITS = {v: str(i) for i, v in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")}
VALUES = [5e-324, 1e-323, 1e-320, 1e-310, 2.2250738585072014e-308, 3e-300, 1e-160, 4.9e-7, 1e-6, 2e-5,
          9.6e-6, 0.05, 0.5, 2.996, 1234.5, 1e15, 6.02e23, 1e308, 1.7976931348623157e308]


def read_back(label: str) -> mpmath.mpf:
    """A label such as "4.9·10⁻³²⁴", "10⁻⁶", "1,200", "4.9e-324" as an exact mpmath number."""
    label = label.replace(",", "").replace("−", "-")
    if "10" in label and any(ch in label for ch in "⁰¹²³⁴⁵⁶⁷⁸⁹"):
        mant, _, power = label.rpartition("10")
        mant = mant.rstrip("·") or "1"
        sign = -1 if mant.startswith("-") else 1
        mant = mant.lstrip("-") or "1"
        exp = int(("-" if power.startswith("⁻") else "") + "".join(_DIGITS[c] for c in power.lstrip("⁻")))
        return sign * mpmath.mpf(mant) * mpmath.power(10, exp)
    return mpmath.mpf(label)


@pytest.mark.parametrize("x", VALUES)
def test_labels_read_back_to_the_value(x):
    mpmath.mp.dps = 40
    exact = mpmath.mpf(x)
    for label, rel in ((F.power_of_ten(x), 0.05), (F.number(x), 0.05), (F.tick_text(x), 0.5)):
        back = read_back(label)
        assert abs(back - exact) <= rel * exact, (x, label)
    typed = mpmath.mpf(repr(x))  # number_down cuts the decimal a user would type (the shortest that reads back)
    cut = read_back(F.number_down(x))
    assert typed * (1 - mpmath.mpf(1e-3)) <= cut <= typed, (x, F.number_down(x))
    assert len(F.number(x)) < 30 and len(F.tick_text(x)) < 30  # 1e308 is not written out in 309 digits


@pytest.mark.parametrize("x", [0.0, -0.0, -1e-5, -5e-324, float("inf"), float("nan")])
def test_edges_do_not_raise(x):
    for f in (F.power_of_ten, F.number, F.number_down, F.given):
        assert isinstance(f(x), str)


def test_split_decimal_matches_mpmath():
    mpmath.mp.dps = 40
    for x in VALUES:
        m, e = F.split_decimal(x)
        assert 1 <= abs(m) < 10
        assert e == int(mpmath.floor(mpmath.log10(mpmath.mpf(repr(x)))))
        assert math.isclose(m, float(mpmath.mpf(repr(x)) / mpmath.power(10, e)), rel_tol=1e-14)
