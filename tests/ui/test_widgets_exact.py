"""Exact entry beside the log sliders and δ exponents, and short option tokens in links (issue 14 items 3, 4).

Pure checks of the parsing rules, then small AppTest pages: a link restores a typed value exactly, typing a value
writes it to the URL, option tokens and labels are accepted and anything else is named in the link notice.
Expected values are written out by hand (the URL text a user would see), not computed by the code under test.
"""

import math

import pytest
from streamlit.testing.v1 import AppTest

from ui.widgets import delta_from_exponent, exact_value, token_for

SLIDERS = """
import streamlit as st
from ui.common import page_setup, page_end
from ui.widgets import log_slider, delta_exponent
page_setup("Widget test")
eps = log_slider("ε", key="eps", value=1.0)
d = delta_exponent(key="dl", min_exp=-12, max_exp=-3)
st.write(f"EPS={eps!r} DELTA={d!r}")
page_end()
"""

CHOICES = """
import streamlit as st
from ui.common import page_setup, page_end
from ui.widgets import choice
page_setup("Choice test")
a = choice("Mode", {"budget_first": "Budget first", "k_first": "Releases first"}, key="mode")
b = choice("Kind", {"x": "Ex", "y": "Why"}, key="kind", widget="radio", default="y", horizontal=True)
c = choice("Look", {"p": "Pee", "q": "Queue"}, key="look", widget="segmented")
st.write(f"OUT={a},{b},{c}")
page_end()
"""


@pytest.mark.parametrize("text, lo, hi, want", [
    ("0.3", 1e-3, 20, 0.3), ("0.15", 1e-3, 20, 0.15), ("3", 1e-3, 20, 3.0), (" 6 ", 1e-3, 20, 6.0),
    ("5e-7", 1e-12, 1e-3, 5e-7), ("0.1234567", 0.1, 1, 0.123457), (0.75, 1e-3, 20, 0.75),
    ("20.0000001", 1e-3, 20, 20.0),  # 6 significant figures first, then the range check
    ("25", 1e-3, 20, None), ("0", 1e-3, 20, None), ("nan", 0, 1, None), ("inf", 0, 1, None),
    ("1e999", 0, 1, None), ("abc", 0, 1, None), ("", 0, 1, None), (None, 0, 1, None), (True, 0, 1, None),
])
def test_exact_value_parses_and_checks_the_range(text, lo, hi, want):
    assert exact_value(text, lo, hi) == want


def test_delta_from_exponent_is_exact_on_decades_and_round_trips_typed_values():
    assert all(delta_from_exponent(x) == float(f"1e{x}") for x in range(-300, 0))
    for d in (5e-7, 2.5e-10, 3.3e-5, 1.23456e-200):
        assert delta_from_exponent(math.log10(d)) == d


def test_token_for_accepts_tokens_and_labels_only():
    opts = {"budget_first": "Budget first", "k_first": "Releases first"}
    assert token_for("k_first", opts) == "k_first"
    assert token_for("Releases first", opts) == "k_first"
    assert token_for("  releases FIRST", opts) == "k_first"
    assert token_for("Releases", opts) is None and token_for("", opts) is None


def _run(script, **params):
    at = AppTest.from_string(script, default_timeout=30)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _out(at, prefix):
    return next(m.value for m in at.markdown if m.value.startswith(prefix))


def _notice(at):
    return " ".join(t.value for t in at.toast)


def test_link_restores_an_off_grid_epsilon_and_typing_writes_it():
    at = _run(SLIDERS, eps="0.3")
    assert _out(at, "EPS") == "EPS=0.3 DELTA=1e-06" and not _notice(at)
    assert at.text_input(key="eps__exact").value == "0.3"
    at.text_input(key="eps__exact").set_value("0.15").run()
    assert _out(at, "EPS") == "EPS=0.15 DELTA=1e-06"
    assert at.query_params["eps"] in ("0.15", ["0.15"])
    at.select_slider(key="eps").set_value(0.5).run()  # the slider moves the box
    assert at.text_input(key="eps__exact").value == "0.5"


def test_link_spellings_of_the_same_number_are_accepted_and_out_of_range_is_named():
    assert _out(_run(SLIDERS, eps="0.30"), "EPS") == "EPS=0.3 DELTA=1e-06"
    at = _run(SLIDERS, eps="25")
    assert _out(at, "EPS") == "EPS=1.0 DELTA=1e-06" and "**eps** (out of range" in _notice(at)


def test_delta_typed_value_round_trips_through_the_link():
    at = _run(SLIDERS)
    at.text_input(key="dl__exact").set_value("5e-7").run()
    assert _out(at, "EPS") == "EPS=1.0 DELTA=5e-07"
    link = at.query_params["dl"]
    link = link[-1] if isinstance(link, list) else link
    again = _run(SLIDERS, dl=link)
    assert _out(again, "EPS") == "EPS=1.0 DELTA=5e-07" and not _notice(again)
    # an old-style exponent link, and δ given directly, both work
    assert _out(_run(SLIDERS, dl="-9"), "EPS") == "EPS=1.0 DELTA=1e-09"
    assert _out(_run(SLIDERS, dl="2.5e-10"), "EPS") == "EPS=1.0 DELTA=2.5e-10"
    assert "**dl**" in _notice(_run(SLIDERS, dl="0.5"))  # δ above the slider's 10^-3


def test_choice_writes_tokens_not_at_the_default():
    at = _run(CHOICES)
    assert _out(at, "OUT") == "OUT=budget_first,y,p" and dict(at.query_params) == {}
    at.selectbox(key="mode").set_value("k_first").run()
    at.radio(key="kind").set_value("x").run()
    assert _out(at, "OUT") == "OUT=k_first,x,p"
    assert dict(at.query_params) == {"mode": "k_first", "kind": "x"}
    at.selectbox(key="mode").set_value("budget_first").run()  # back to the default: the link drops it
    assert dict(at.query_params) == {"kind": "x"}


def test_choice_link_accepts_token_or_label_and_names_the_rest():
    at = _run(CHOICES, mode="k_first", kind="Ex", look="q")
    assert _out(at, "OUT") == "OUT=k_first,x,q" and not _notice(at)
    assert at.query_params["kind"] in ("x", ["x"])  # a label in the link becomes the token
    at = _run(CHOICES, mode="everything", kind="why", other="1")
    assert _out(at, "OUT") == "OUT=budget_first,y,p"
    notice = _notice(at)
    assert "**mode** (not one of the options)" in notice and "**other** (not a setting" in notice
    assert "kind" not in notice and "mode" not in dict(at.query_params)
