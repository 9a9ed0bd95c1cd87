"""dpdash.common.validation: each check accepts exactly its documented domain and names the parameter when it
refuses.
"""

import doctest
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpdash.common.validation as V
from dpdash.common.validation import (ValidationError, as_generator, check_delta, check_epsilon, check_finite,
                                      check_int_in_range, check_positive, check_probability, check_probability_vector,
                                      check_rate, check_rho, check_size)

reals = st.floats(allow_nan=True, allow_infinity=True)
NOT_NUMBERS = ["0.5", b"1", None, [0.5], np.array([0.5, 0.2]), True, np.bool_(False), 1 + 2j, object()]


def test_doctests_pass():
    failures, tried = doctest.testmod(V, optionflags=doctest.ELLIPSIS)
    assert tried > 10 and failures == 0


def test_validation_error_is_a_value_error():
    assert issubclass(ValidationError, ValueError)
    with pytest.raises(ValueError):
        check_epsilon(-1)


def test_message_wording_is_the_documented_one():
    with pytest.raises(ValidationError) as e:
        check_epsilon(-1)
    assert str(e.value) == "epsilon must be a finite number > 0; got -1"
    with pytest.raises(ValidationError) as e:
        check_delta(np.float64(1.0))
    assert str(e.value) == "delta must be a number in [0, 1); got 1"  # no np.float64(...) wrapper
    with pytest.raises(ValidationError) as e:
        check_size(2.5, name="trials")
    assert str(e.value) == "trials must be an integer ≥ 1; got 2.5"


# ------------------------------------------------------------------ scalar domains, checked against the spec
# Each case: check, options, predicate written from the documented domain.
SCALAR_CASES = [
    (check_epsilon, {}, lambda v: math.isfinite(v) and v > 0),
    (check_epsilon, {"allow_zero": True}, lambda v: math.isfinite(v) and v >= 0),
    (check_epsilon, {"allow_inf": True}, lambda v: not math.isnan(v) and v > 0),
    (check_epsilon, {"allow_zero": True, "allow_inf": True}, lambda v: not math.isnan(v) and v >= 0),
    (check_rho, {}, lambda v: math.isfinite(v) and v > 0),
    (check_delta, {}, lambda v: 0 <= v < 1),
    (check_delta, {"allow_zero": False}, lambda v: 0 < v < 1),
    (check_delta, {"allow_one": True}, lambda v: 0 <= v <= 1),
    (check_delta, {"allow_zero": False, "allow_one": True}, lambda v: 0 < v <= 1),
    (check_rate, {}, lambda v: 0 < v <= 1),
    (check_rate, {"allow_zero": True}, lambda v: 0 <= v <= 1),
    (check_probability, {}, lambda v: 0 <= v <= 1),
    (check_positive, {"name": "scale"}, lambda v: math.isfinite(v) and v > 0),
    (check_positive, {"name": "scale", "allow_zero": True}, lambda v: math.isfinite(v) and v >= 0),
    (check_finite, {"name": "centre"}, math.isfinite),
]
EDGES = [0.0, -0.0, 1.0, -1.0, 1e-300, 5e-324, 1 - 1e-16, 1 + 1e-15, math.inf, -math.inf, math.nan, 0.5, 1e300]


def _param_name(check, opts):
    return opts.get("name") or {check_epsilon: "epsilon", check_rho: "rho", check_delta: "delta",
                                check_rate: "rate", check_probability: "probability"}[check]


def _stable_id(v) -> str:
    """A test id that is the same in every pytest-xdist worker (object reprs carry memory addresses)."""
    r = repr(v)
    return type(v).__name__ if " at 0x" in r else r


@pytest.mark.parametrize("check,opts,ok", SCALAR_CASES)
@pytest.mark.parametrize("value", EDGES)
def test_scalar_edges(check, opts, ok, value):
    _assert_domain(check, opts, ok, value)


@pytest.mark.parametrize("check,opts,ok", SCALAR_CASES)
@given(value=reals)
def test_scalar_domains_random(check, opts, ok, value):
    _assert_domain(check, opts, ok, value)


def _assert_domain(check, opts, ok, value):
    if ok(value):
        out = check(value, **opts)
        assert type(out) is float and out == value
        out = check(np.float64(value), **opts)
        assert type(out) is float
    else:
        with pytest.raises(ValidationError) as e:
            check(value, **opts)
        msg = str(e.value)
        assert msg.startswith(_param_name(check, opts) + " must be "), msg
        assert "; got " in msg


@pytest.mark.parametrize("check,opts,ok", SCALAR_CASES)
@pytest.mark.parametrize("bad", NOT_NUMBERS, ids=_stable_id)
def test_non_numbers_refused(check, opts, ok, bad):
    with pytest.raises(ValidationError, match=_param_name(check, opts) + " must be"):
        check(bad, **opts)


def test_custom_name_is_used():
    with pytest.raises(ValidationError, match=r"^epsilon_target must be a finite number > 0; got 0$"):
        check_epsilon(0, name="epsilon_target")
    with pytest.raises(ValidationError, match=r"^delta_g must be a number in \(0, 1\)"):
        check_delta(0.0, name="delta_g", allow_zero=False)


# ------------------------------------------------------------------ integers
@given(n=st.integers(-10**20, 10**20), lo=st.integers(-50, 50), width=st.integers(0, 100))
def test_int_in_range_accepts_exactly_the_range(n, lo, width):
    hi = lo + width
    if lo <= n <= hi:
        assert check_int_in_range(n, name="k", lo=lo, hi=hi) == n
        assert type(check_int_in_range(np.int64(n) if abs(n) < 2**62 else n, name="k", lo=lo, hi=hi)) is int
    else:
        with pytest.raises(ValidationError, match=rf"^k must be an integer in \[{lo}, {hi}\]; got {n}$"):
            check_int_in_range(n, name="k", lo=lo, hi=hi)


@given(x=reals)
def test_size_accepts_integral_floats_only(x):
    ok = math.isfinite(x) and x.is_integer() and x >= 1
    if ok:
        assert check_size(x) == int(x)
    else:
        with pytest.raises(ValidationError, match=r"^n must be an integer ≥ 1; got "):
            check_size(x)


@pytest.mark.parametrize("bad", NOT_NUMBERS, ids=_stable_id)
def test_size_refuses_non_numbers(bad):
    with pytest.raises(ValidationError, match="^trials must be an integer"):
        check_size(bad, name="trials")


def test_size_minimum():
    assert check_size(0, minimum=0) == 0
    with pytest.raises(ValidationError, match="≥ 2"):
        check_size(1, minimum=2)


# ------------------------------------------------------------------ probability vectors
@given(w=st.lists(st.floats(0, 1e6), min_size=1, max_size=30).filter(lambda w: sum(w) > 0))
def test_probability_vector_accepts_normalised_weights(w):
    p = np.asarray(w) / np.sum(w)
    out = check_probability_vector(p)
    assert out.dtype == float and np.array_equal(out, p)
    assert out is not p


@pytest.mark.parametrize("bad", [[], [[0.5, 0.5]], [0.5, 0.6], [1.5, -0.5], [0.5, math.nan], [math.inf, 0], "ab",
                                 None, [0.3, 0.3, 0.3]])
def test_probability_vector_refusals(bad):
    with pytest.raises(ValidationError, match="^weights must be a non-empty list of numbers ≥ 0 that sum to 1"):
        check_probability_vector(bad, name="weights")


def test_probability_vector_atol():
    p = [0.5, 0.5 + 1e-7]
    with pytest.raises(ValidationError, match="sum of"):
        check_probability_vector(p)
    assert check_probability_vector(p, atol=1e-6).sum() == pytest.approx(1.0 + 1e-7)


# ------------------------------------------------------------------ rng
def test_as_generator_accepts_spec7_inputs():
    g = np.random.default_rng(3)
    assert as_generator(g) is g
    assert isinstance(as_generator(None), np.random.Generator)
    # same seed → same stream, through every accepted seed form
    ref = np.random.default_rng(12).random(4)
    for seed in (12, np.int64(12), np.random.SeedSequence(12), np.random.PCG64(12)):
        assert np.array_equal(as_generator(seed).random(4), ref)
    assert np.array_equal(as_generator([1, 2]).random(3), np.random.default_rng([1, 2]).random(3))


def test_as_generator_shares_the_callers_stream():
    g = np.random.default_rng(5)
    a = as_generator(g).random()
    b = g.random()
    ref = np.random.default_rng(5).random(2)
    assert [a, b] == ref.tolist()


@pytest.mark.parametrize("bad", [-1, 1.5, "7", True, np.random.RandomState(0), [1, -2], [], object()], ids=_stable_id)
def test_as_generator_refusals(bad):
    with pytest.raises(ValidationError, match="^rng must be None, an integer seed"):
        as_generator(bad)
