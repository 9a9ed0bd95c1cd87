"""Issue 34 item 4: inputs mean what was typed. A decimal comma is a decimal; an entry the page cannot use is
cleared from the box with a message naming the accepted range; the shown value and the used value always agree.

Expected values are written out by hand (what a user types and what they mean), not computed by the code under
test; the Hypothesis property reads the box after every entry and compares it with the value the page printed.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from ui.widgets import read_number

PAGE = """
import streamlit as st
from ui.common import page_setup, page_end
from ui.widgets import log_slider, typed_number
page_setup("Typed test")
eps = log_slider("ε", key="eps", value=1.0, min_value=1e-3, max_value=20.0)
n = typed_number("Population size n", key="n", value=10_000, min_value=2, max_value=10**9, integer=True)
st.write(f"USED eps={eps!r} n={n!r}")
page_end()
"""


@pytest.mark.parametrize("text, lo, hi, integer, want", [
    ("0,5", 1e-3, 20, False, 0.5), ("0,25", 1e-3, 20, False, 0.25), ("2,5e-3", 1e-3, 20, False, 0.0025),
    ("1.5", 1e-3, 20, False, 1.5), ("1,500", 0, 1e9, False, None),  # 1.5 or 1500: refused, both readings named
    ("10,000", 2, 1e9, True, 10000.0), ("1,000,000", 2, 1e9, True, 1e6), ("1 000 000", 2, 1e9, True, 1e6),
    ("0", 1e-3, 20, False, None), ("-1", 1e-3, 20, False, None), ("1e300", 1e-3, 20, False, None),
    ("1e300", 2, 1e9, True, None), ("2.5", 2, 1e9, True, None), ("1,5", 2, 1e9, True, None), ("x", 0, 1, False, None),
    ("inf", 0, 1, False, None), ("", 0, 1, False, None),
])
def test_read_number(text, lo, hi, integer, want):
    v, why = read_number(text, min_value=lo, max_value=hi, integer=integer)
    assert v == want
    assert (why is None) == (want is not None)
    if want is None and text not in ("", "x", "inf", "1,500"):
        assert "from" in why and " to " in why  # the accepted range is named


def test_ambiguous_comma_names_both_readings():
    _, why = read_number("1,500", min_value=0, max_value=1e9)
    assert "1.500" in why and "1500" in why


def _run(**params):
    at = AppTest.from_string(PAGE, default_timeout=30)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _used(at):
    text = next(m.value for m in at.markdown if m.value.startswith("USED"))
    eps, n = text.removeprefix("USED eps=").split(" n=")
    return float(eps), float(n)


def test_decimal_comma_in_the_exact_box_is_a_decimal():
    at = _run()
    at.text_input(key="eps__exact").set_value("0,5").run()
    assert _used(at)[0] == 0.5 and at.text_input(key="eps__exact").value == "0.5"


@pytest.mark.parametrize("typed", ["0", "-1", "1e300", "abc"])
def test_out_of_range_entry_is_cleared_with_the_range_named(typed):
    at = _run()
    at.text_input(key="eps__exact").set_value(typed).run()
    assert _used(at)[0] == 1.0 and at.text_input(key="eps__exact").value == "1"  # the box shows what is used
    said = " ".join(w.value for w in at.warning)
    assert "0.001" in said and "20" in said and "still uses 1" in said
    at.text_input(key="n").set_value(typed).run()
    assert _used(at)[1] == 10_000 and at.text_input(key="n").value == "10000"
    assert "1,000,000,000" in " ".join(w.value for w in at.warning)


def test_population_with_separators_and_a_bad_link():
    at = _run(n="20,000")
    assert _used(at)[1] == 20_000
    bad = _run(n="inf")
    assert _used(bad)[1] == 10_000 and "**n**" in " ".join(t.value for t in bad.toast)


ENTRY = st.one_of(
    st.floats(min_value=-10, max_value=1e12, allow_nan=False).map(lambda x: f"{x:g}"),
    st.floats(min_value=0.001, max_value=20).map(lambda x: f"{x:.3f}".replace(".", ",")),
    st.integers(min_value=-5, max_value=2 * 10**9).map(lambda i: f"{i:,}"),
    st.sampled_from(["", "abc", "1e300", "nan", "0,5", "1,500", " 7 ", "2.5"]),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries=st.lists(st.tuples(st.sampled_from(["eps__exact", "n"]), ENTRY), min_size=1, max_size=4))
def test_shown_and_used_values_agree(entries):
    """A state machine over the two typed boxes: after any sequence of entries, each box shows the value the page
    uses (read back with the box's own rule), and a usable entry is what the page uses."""
    at = _run()
    for key, text in entries:
        at.text_input(key=key).set_value(text).run()
        eps, n = _used(at)
        assert read_number(at.text_input(key="eps__exact").value, min_value=1e-3, max_value=20)[0] == eps
        assert read_number(at.text_input(key="n").value, min_value=2, max_value=1e9, integer=True)[0] == n
        want, _ = read_number(text, min_value=1e-3, max_value=20) if key == "eps__exact" else read_number(
            text, min_value=2, max_value=1e9, integer=True)
        if want is not None:
            assert (eps if key == "eps__exact" else n) == want
