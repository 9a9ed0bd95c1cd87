"""The link sanitiser and the honest-link notice (issue 17 deliver 2, issue 14 item 4)."""

from __future__ import annotations

import pytest

from tests.attack.pages import ROOT, injected_markdown, run_page
from ui.links import MAX_JSON_DEPTH, MAX_VALUE_CHARS, check_value, json_depth, notice_text, sanitise_params, Ignored

TINY = "tests/attack/link_page.py"


# ------------------------------------------------------------------ pure checks
@pytest.mark.parametrize("value", ["inf", "-inf", "Infinity", "nan", "NaN", "1e309", "-1e309", " inf "])
def test_non_finite_numbers_are_dropped(value):
    assert "finite" in check_value(value)


@pytest.mark.parametrize("value", ["0", "-3", "1e308", "0.15", "1e-320", "abc", "infant", "nano", "[[1, 2]]",
                                   "![x](http://a/b)", "a" * MAX_VALUE_CHARS])
def test_ordinary_values_pass(value):
    assert check_value(value) is None


def test_deep_json_long_values_and_control_characters_are_dropped():
    assert "nested" in check_value("[" * 1500)                      # the RecursionError link
    assert "nested" in check_value('{"a":' * 50 + "1" + "}" * 50)
    assert check_value('[["[[[[[[[[[[[[[[[[[[[", 1]]') is None     # brackets inside a JSON string do not count
    assert "longer" in check_value("a" * (MAX_VALUE_CHARS + 1))
    assert "control" in check_value("a\x00b") and "control" in check_value("a\u202eb")


def test_json_depth_counts_like_a_parser():
    import json

    for depth in (0, 1, 2, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 3):
        text = json.dumps(_nest(depth))
        assert json_depth(text) == min(depth, MAX_JSON_DEPTH + 1)  # counting stops past the bound


def _nest(depth):
    value = 1
    for i in range(depth):
        value = [value, "]["] if i % 2 else {"k": value}
    return value


def test_sanitise_params_keeps_good_and_names_the_rest():
    kept, dropped = sanitise_params({"a": "1", "b": ["2", "inf"], "c": "[" * 100, "d\x00": "1"})
    assert kept == {"a": ["1"]}
    assert {i.name for i in dropped} == {"b", "c", "d\x00"}


def test_notice_escapes_names():
    text = notice_text([Ignored("![x](http://attacker.invalid/p.png)", "out of range or not an option")])
    assert "](" not in text.replace("\\]\\(", "") and "http" in text


# ------------------------------------------------------------------ tiny page
def _toast(at) -> str:
    return " ".join(t.value for t in at.toast)


def test_an_unsanitised_inf_link_crashes_and_a_sanitised_one_does_not():
    raw = run_page(TINY, {"raw": "1", "t_n": "inf"})
    assert raw.exception, "Streamlit no longer fails on inf: the sanitiser's reason to exist changed"
    at = run_page(TINY, {"t_n": "inf"})
    assert not at.exception and at.number_input(key="t_n").value == 5
    assert "t\\_n" in _toast(at) and "finite" in _toast(at)


def test_injection_check_can_fail():
    raw = run_page(TINY, {"raw": "1", "echo": "![x](http://attacker.invalid/p.png)"})
    assert injected_markdown(raw)


@pytest.mark.parametrize(
    "params, reported, values",
    [
        ({"t_n": "7", "t_c": "b"}, set(), {"t_n": 7, "t_c": "b"}),
        ({"t_n": "5"}, set(), {"t_n": 5}),                          # equal to the default: used, not reported
        ({"t_n": "500", "t_c": "b"}, {"t_n"}, {"t_n": 5, "t_c": "b"}),  # out of range; the rest kept
        ({"t_n": "-1"}, {"t_n"}, {"t_n": 5}),
        ({"t_n": "abc"}, {"t_n"}, {"t_n": 5}),
        ({"t_x": "2"}, {"t_x"}, {"t_x": 0.5}),
        ({"t_x": "nan"}, {"t_x"}, {"t_x": 0.5}),
        ({"t_c": "zz"}, {"t_c"}, {"t_c": "a"}),
        ({"t_m": ["q", "zz"]}, {"t_m"}, {"t_m": ["q"]}),              # partly accepted
        ({"t_m": ["p"]}, set(), {"t_m": ["p"]}),
        ({"t_t": "[" * 1500}, {"t_t"}, {"t_t": "hi"}),
        ({"t_t": "![x](http://a/b)"}, set(), {"t_t": "![x](http://a/b)"}),  # text is a valid text value
        ({"nope": "1"}, {"nope"}, {}),
        ({"![x](http://attacker.invalid/p.png)": "1"}, {"![x](http://attacker.invalid/p.png)"}, {}),
    ],
)
def test_notice_names_exactly_the_ignored_parameters(params, reported, values):
    at = run_page(TINY, params)
    assert not at.exception
    for key, value in values.items():
        assert at.session_state[key] == value
    text = _toast(at)
    names = {k for k in params if k.replace("_", "\\_") in text or any(
        ch in k for ch in "![]()") and "attacker" in text}
    assert names == reported, text
    assert not injected_markdown(at)
    at.run()  # a rerun with the same link: no second notice
    assert not at.toast


# ------------------------------------------------------------------ real pages
@pytest.mark.parametrize(
    "page, params, reported",
    [
        ("pages/sampling_designer.py", {"sd_n": "inf", "sd_eps": "0.5"}, "sd\\_n"),
        ("pages/epsilon_calculator.py", {"eps_b_rows": "[" * 1500, "eps_tab": "Budget planner"}, "eps\\_b\\_rows"),
        ("pages/coherence_explorer.py", {"coh_built": "[" * 1500}, "coh\\_built"),
        ("app.py", {"dataset": "no-such-dataset"}, "dataset"),
    ],
)
def test_real_pages_report_ignored_link_values(page, params, reported):
    assert (ROOT / page).is_file()
    at = run_page(page, params)
    assert not at.exception
    assert reported in _toast(at)
