"""The Epsilon calculator's link codecs (``eps_comp_rows``, ``eps_b_rows``) and row readers (issue 17).

A link is written by a stranger: whatever it holds, decoding returns a table or a message, never raises, and
takes time proportional to the bounded length. Messages quote user text only in escaped form.
"""

import json
import math
import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpdash.epsilon import views as evw
from ui import eps_codecs as ec

COMP_COLS = ["kind", "epsilon", "delta", "multiplier", "sigma", "scale", "sensitivity", "rho", "count"]
BUDGET_COLS = list(evw.BUDGET_COLS)  # the planner's table, as the tab builds it


def _payload(cols, rows) -> str:
    return json.dumps({"cols": cols, "rows": rows})


def test_deep_nesting_is_refused_without_recursion():
    raw = "[" * 1500 + "]" * 1500
    for key in (raw, '{"cols": ' + raw + ', "rows": []}'):
        out = ec.decode_table(key, COMP_COLS)
        assert out.frame is None and "nest" in out.problem


def test_over_long_link_value_is_refused_fast():
    raw = _payload(COMP_COLS, [["laplace", 0.1, 0, None, None, None, 1, None, 1]] * 20_000)
    t = time.perf_counter()
    out = ec.decode_table(raw, COMP_COLS)
    assert time.perf_counter() - t < 0.5
    assert out.frame is None and "long" in out.problem


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_refused(bad):
    raw = '{"cols": %s, "rows": [["laplace", 0.1, 0, null, null, null, 1, null, %s]]}' % (json.dumps(COMP_COLS), bad)
    out = ec.decode_table(raw, COMP_COLS)
    assert out.frame is None and "finite" in out.problem


def test_non_finite_count_in_a_frame_is_a_row_message_not_an_exception():
    df = pd.DataFrame([["laplace", 0.1, 0, None, None, None, 1, None, math.inf]], columns=COMP_COLS)
    with pytest.raises(ValueError, match="row 1.*count"):
        ec.mechanisms_from_frame(df)
    df.loc[0, "count"] = 1e30
    with pytest.raises(ValueError, match="row 1.*count"):
        ec.mechanisms_from_frame(df)


def test_budget_row_non_finite_n_and_cells_are_messages():
    row = ["m", "mean", "laplace", 0, 10, math.inf, 1, 5.0, 0.95, None, None, 1.0]
    with pytest.raises(ValueError, match="row 1.*n"):
        ec.stats_from_frame(pd.DataFrame([row], columns=BUDGET_COLS))
    row = ["h", "histogram", "laplace", 0, 1, None, 1e300, 5.0, 0.95, None, None, 1.0]
    with pytest.raises(ValueError, match="row 1.*cells"):
        ec.stats_from_frame(pd.DataFrame([row], columns=BUDGET_COLS))


def test_unknown_kind_is_quoted_escaped():
    df = pd.DataFrame([["![x](http://host/p)", 0.1, 0, None, None, None, 1, None, 1]], columns=COMP_COLS)
    with pytest.raises(ValueError) as ei:
        ec.mechanisms_from_frame(df)
    assert "](http" not in str(ei.value) and "\\]\\(http" in str(ei.value)


def test_round_trip_of_the_default_tables():
    comp = pd.DataFrame({"kind": ["laplace", "gaussian"], "epsilon": [0.2, None], "delta": [0.0, 0.0],
                         "multiplier": [None, 10.0], "sigma": [None, None], "scale": [None, None],
                         "sensitivity": [1, 1], "rho": [None, None], "count": [30, 20]})
    out = ec.decode_table(ec.encode_table(comp), COMP_COLS)
    assert out.problem is None
    ms = ec.mechanisms_from_frame(out.frame)
    assert [(m.kind, m.count) for m in ms] == [("laplace", 30), ("gaussian", 20)]
    assert ms[0].epsilon == 0.2 and ms[1].noise_multiplier == 10.0


def test_wrong_columns_and_row_counts_are_messages():
    assert "columns" in ec.decode_table(_payload(["kind"], [["laplace"]]), COMP_COLS).problem
    assert "rows" in ec.decode_table(_payload(COMP_COLS, []), COMP_COLS).problem
    many = [["laplace", 0.1, 0, None, None, None, 1, None, 1]] * 51
    assert "rows" in ec.decode_table(_payload(COMP_COLS, many), COMP_COLS).problem
    assert ec.decode_table(None, COMP_COLS) == ec.DecodedTable(None, None)
    assert ec.decode_table("", COMP_COLS) == ec.DecodedTable(None, None)


def test_huge_cell_text_is_refused():
    row = ["x" * 5000, "count", "laplace", 0, 1, None, 1, 50.0, 0.95, None, None, 1.0]
    assert "long" in ec.decode_table(_payload(BUDGET_COLS, [row]), BUDGET_COLS).problem


_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                       st.text(max_size=30))
_json = st.recursive(_json_leaf, lambda ch: st.lists(ch, max_size=5) | st.dictionaries(st.text(max_size=8), ch,
                                                                                       max_size=5), max_leaves=40)


@given(st.one_of(st.text(max_size=300), _json.map(lambda v: json.dumps(v, allow_nan=True)),
                 st.lists(st.lists(_json_leaf, max_size=12), max_size=4).map(
                     lambda rows: json.dumps({"cols": COMP_COLS, "rows": rows}, allow_nan=True))))
def test_decode_and_read_never_raise_anything_but_value_error(raw):
    out = ec.decode_table(raw, COMP_COLS)
    assert (out.frame is None) or (out.problem is None)
    if out.frame is not None:
        try:
            ec.mechanisms_from_frame(out.frame)
        except ValueError:
            pass


# =========================================================================== typed inputs of Tabs 4 and 7 (issue 13)
def test_epsilon_sequence_geometric_sums_to_the_closed_form():
    seq = ec.epsilon_sequence("geometric", {"eps_a_g0": 0.1, "eps_a_ratio": 0.99, "eps_a_count": 500})
    assert len(seq) == 500
    assert math.fsum(seq) == pytest.approx(0.1 * (1 - 0.99**500) / (1 - 0.99), rel=1e-12)


def test_epsilon_sequence_uniform_is_seeded_and_in_range():
    vals = {"eps_a_lo": 0.02, "eps_a_hi": 0.001, "eps_a_seed": 7, "eps_a_count": 300}  # ends given in either order
    a, b = ec.epsilon_sequence("uniform", vals), ec.epsilon_sequence("uniform", vals)
    assert a == b and min(a) >= 0.001 and max(a) <= 0.02
    assert a != ec.epsilon_sequence("uniform", {**vals, "eps_a_seed": 8})


def test_epsilon_sequence_constant_defaults_and_bad_pastes():
    assert ec.epsilon_sequence("constant", {}) == [0.01] * 2000
    for text, words in [("0.1, oops", "numbers separated"), ("0.1, -2", "each > 0"), ("", "1 to 100,000"),
                        ("1," * 100_001, "1 to 100,000")]:
        with pytest.raises(ValueError, match=words):
            ec.epsilon_sequence("pasted", {"eps_a_paste": text})
    with pytest.raises(ValueError, match="unknown"):
        ec.epsilon_sequence("fibonacci", {})


def test_parse_vector_reads_fractions_and_quotes_bad_text_escaped():
    assert ec.parse_vector("1/3; 2/3", 2, "π").tolist() == pytest.approx([1 / 3, 2 / 3])
    with pytest.raises(ValueError, match="expected 3 numbers"):
        ec.parse_vector("1, 2", 3, "π")
    with pytest.raises(ValueError) as err:
        ec.parse_vector("0.5, *bold*", 2, "π")
    assert "\\*bold\\*" in str(err.value)  # Markdown specials escaped
    with pytest.raises(ValueError, match="cannot read"):
        ec.parse_vector("1/0, 1", 2, "π")
    assert ec.count_items("1, , 2; 3") == 3


def test_indep_setting_null_is_the_outer_product_and_checks_the_shift():
    pi1, pi2, null, alt = ec.indep_setting(2, 3, "2/3, 1/3", "0.2, 0.3, 0.5", "")
    assert null == pytest.approx(np.array([[2 / 15, 0.2, 1 / 3], [1 / 15, 0.1, 1 / 6]]))
    assert alt.sum() == pytest.approx(1.0) and (alt > 0).all()
    with pytest.raises(ValueError, match="sum to 1"):
        ec.indep_setting(2, 2, "0.5, 0.6", "0.5, 0.5", "")
    with pytest.raises(ValueError, match="sum to 0"):
        ec.indep_setting(2, 2, "0.5, 0.5", "0.5, 0.5", "0.1, 0, 0, 0")
    with pytest.raises(ValueError, match="cell ≤ 0"):
        ec.indep_setting(2, 2, "0.5, 0.5", "0.5, 0.5", "0.3, -0.3, 0, 0")


def test_sweep_values_clip_and_round():
    assert ec.sweep_values(0.00125, 1e-6, 10.0, 3, integer=False) == (0.000125, 0.00125, 0.0125)
    assert ec.sweep_values(5e6, 100, 1e7, 3, integer=True) == (500_000, 5_000_000, 10_000_000)  # top clipped
    assert ec.sweep_values(42.0, 1, 100, 1, integer=False) == (42.0,)


def test_indep_demo_projection_is_a_table_of_n_and_reproducible():
    alt = np.array([[1 / 3 + 0.01, 1 / 3], [1 / 6 - 0.01, 1 / 6]])
    tab, proj, res = ec.indep_demo(alt, n=10_000, noise="gaussian", privacy=0.00125, alpha=0.05, seed=3)
    assert proj.sum() == pytest.approx(10_000) and (proj >= 0).all()
    tab2, _, _ = ec.indep_demo(alt, n=10_000, noise="gaussian", privacy=0.00125, alpha=0.05, seed=3)
    assert np.array_equal(tab, tab2) and len(res) == 2
