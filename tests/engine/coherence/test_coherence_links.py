"""The coherence explorer's link codec for user-built groups (``coh_built``): round trip, bounds, never raises
(issue 17: bounded parsing; links)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpdash.coherence import core as co
from dpdash.coherence import links as cl

_names = st.text(min_size=1, max_size=20).filter(lambda s: s.strip())
_cond = st.one_of(
    st.builds(lambda c, v: co.Condition(c, values=tuple(v)), st.sampled_from(["SEX", "A b", "x=1"]),
              st.lists(st.text(max_size=8), min_size=1, max_size=4)),
    st.builds(lambda c, lo, w: co.Condition(c, low=lo, high=lo + w), st.sampled_from(["AGEP", "INC"]),
              st.floats(-1e6, 1e6), st.floats(0.5, 1e3)),
    st.builds(lambda c, hi: co.Condition(c, high=hi), st.just("AGEP"), st.floats(-1e3, 1e3)),
)


@given(st.lists(st.tuples(_names, st.lists(_cond, min_size=1, max_size=4)), max_size=6,
                unique_by=lambda t: t[0]))
@settings(max_examples=60, deadline=None)
def test_built_groups_survive_a_link(spec):
    groups = [co.GroupSpec(n, tuple(cs)) for n, cs in spec]
    parsed = cl.parse_built_groups(cl.groups_to_json(groups))
    assert parsed.problem is None
    assert list(parsed.groups) == groups


def test_built_groups_link_select_the_same_rows():
    df = pd.DataFrame({"SEX": [1, 2, 2, 1, 2], "AGEP": [70, 66, 30, 80, np.nan]})
    g = co.GroupSpec("Older women", (co.Condition("SEX", values=("2",)), co.Condition("AGEP", low=65.0)))
    back = cl.parse_built_groups(cl.groups_to_json([g]), columns=df.columns).groups
    assert co.group_masks(df, back)["Older women"].tolist() == [False, True, False, False, False]


_ONE = '{"name": "a", "conditions": [{"column": "A", "low": 1}]}'


@pytest.mark.parametrize("text, words", [
    ("{not json", "not valid JSON"),
    ('{"name": "a"}', "JSON list"),
    ('[{"name": "", "conditions": [{"column": "A", "values": ["1"]}]}]', "non-empty"),
    ('[{"name": "a", "conditions": []}]', "1 to 10 conditions"),
    ('[{"name": "a", "conditions": [{"values": ["1"]}]}]', '"column"'),
    ('[{"name": "a", "conditions": [{"column": "A", "values": [1]}]}]', "list of strings"),
    ('[{"name": "a", "conditions": [{"column": "A", "low": 5, "high": 1}]}]', "low < high"),
    ('[{"name": "a", "conditions": [{"column": "A", "low": "5"}]}]', "low < high"),
    ('[{"name": "a", "conditions": [{"column": "A"}]}]', "low < high"),
    (f"[{_ONE}, {_ONE}]", "repeats"),
    ("[" + ",".join(['{"name":"g%d","conditions":[{"column":"A","low":1}]}' % i for i in range(21)]) + "]",
     "at most 20 groups"),
    ("[" + " " * 9000 + "]", "at most 8,000"),
    # issue 17: 1,500 nested brackets raised RecursionError inside json.loads
    ("[" * 1500, "nested"),
    ("[" * 1500 + "]" * 1500, "nested"),
    ('[{"name": "a", "conditions": [{"column": "A", "values": [[[["1"]]]]}]}]', "nested"),
    # non-finite and overflowing numbers (json accepts NaN/Infinity; 1e309 parses to inf)
    ('[{"name": "a", "conditions": [{"column": "A", "low": NaN}]}]', "finite"),
    ('[{"name": "a", "conditions": [{"column": "A", "low": Infinity}]}]', "finite"),
    ('[{"name": "a", "conditions": [{"column": "A", "high": -Infinity}]}]', "finite"),
    ('[{"name": "a", "conditions": [{"column": "A", "low": 1e309}]}]', "finite"),
    ('[{"name": "a", "conditions": [{"column": "A", "low": ' + "9" * 5000 + "}]}]", "finite"),
    ('[{"name": "a", "conditions": [{"column": "A", "low": true}]}]', "low < high"),
    ('[{"name": "a", "conditions": [{"column": "A", "values": ["1"], "low": 1}]}]', "either"),
    ('[{"name": "' + "n" * 500 + '", "conditions": [{"column": "A", "low": 1}]}]', "name"),
    ('[{"name": "a", "conditions": [{"column": "A", "values": ' + json.dumps(["v"] * 300) + "}]}]", "values"),
])
def test_bad_built_groups_link_says_what_is_wrong_and_never_raises(text, words):
    parsed = cl.parse_built_groups(text)
    assert parsed.groups == ()
    assert parsed.problem is not None and words in parsed.problem, parsed.problem


@pytest.mark.parametrize("value", [None, 5, 1.5, ["[]"], b"[]", {"a": 1}])
def test_non_text_link_value_is_refused_without_raising(value):
    parsed = cl.parse_built_groups(value)
    assert parsed.groups == () and parsed.problem


def test_unknown_columns_are_dropped_with_a_note():
    text = cl.groups_to_json([co.GroupSpec("ok", (co.Condition("A", low=1.0),)),
                              co.GroupSpec("gone", (co.Condition("Z", values=("1",)),))])
    parsed = cl.parse_built_groups(text, columns=["A", "B"])
    assert [g.name for g in parsed.groups] == ["ok"]
    assert parsed.problem and "gone" in parsed.problem and "Z" in parsed.problem


def test_empty_list_is_valid():
    assert cl.parse_built_groups("[]") == cl.BuiltGroups(groups=(), problem=None)


@given(st.text(max_size=300))
@settings(max_examples=200, deadline=None)
def test_any_text_never_raises(text):
    parsed = cl.parse_built_groups(text)
    assert isinstance(parsed.groups, tuple)


@given(st.recursive(st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=5),
                    lambda ch: st.lists(ch, max_size=4) | st.dictionaries(
                        st.sampled_from(["name", "conditions", "column", "values", "low", "high", "x"]), ch,
                        max_size=4), max_leaves=30))
@settings(max_examples=200, deadline=None)
def test_any_json_shape_never_raises(obj):
    text = json.dumps(obj)
    parsed = cl.parse_built_groups(text)
    for g in parsed.groups:  # whatever is accepted is well formed
        assert g.name.strip() and 1 <= len(g.conditions) <= cl.MAX_CONDITIONS


@pytest.mark.parametrize("lo, hi, ok", [
    ("65", "", (65.0, None)), ("", "25", (None, 25.0)), (" 18 ", "25", (18.0, 25.0)), ("-1e3", "1e3", (-1e3, 1e3)),
])
def test_range_condition_accepts_finite_bounds(lo, hi, ok):
    cond, problem = cl.range_condition("AGEP", lo, hi)
    assert problem is None and (cond.low, cond.high) == ok and cond.column == "AGEP"


@pytest.mark.parametrize("lo, hi, words", [
    ("nan", "", "finite"), ("", "inf", "finite"), ("1e309", "", "finite"), ("-Infinity", "", "finite"),
    ("abc", "", "must be a number"), ("5", "5", "smaller"), ("7", "2", "smaller"), ("1" * 50, "", "40"),
])
def test_range_condition_refuses_with_a_reason(lo, hi, words):
    cond, problem = cl.range_condition("AGEP", lo, hi)
    assert cond is None and words in problem


def test_range_condition_blank_is_nothing_yet():
    assert cl.range_condition("AGEP", " ", "") == (None, None)
