"""Unit tests of the ui helpers that are plain functions (grid, exports)."""

import json
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from hypothesis import given, strategies as st

from ui.exports import csv_bytes, figure_html, params_json
from ui.widgets import log_grid


def test_log_grid_has_round_numbers_and_ends():
    g = log_grid(1e-3, 20)
    for v in (0.001, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0):
        assert v in g
    assert g == sorted(g) and len(set(g)) == len(g)


@given(st.floats(1e-6, 1e3), st.floats(1.5, 1e4), st.integers(5, 40))
def test_log_grid_within_bounds_and_dense(lo, ratio, steps):
    hi = lo * ratio
    g = log_grid(lo, hi, steps)
    assert g[0] == lo and g[-1] == hi and all(lo <= v <= hi for v in g)
    gaps = np.diff(np.log10(g))
    assert gaps.max() <= 1.0 / steps + 0.05  # no hole wider than one step (plus rounding)


def test_csv_export_neutralises_formulas_but_not_numbers():
    df = pd.DataFrame({"a": ["=1+1", "@x", "ok"], "b": [-1.5, 2.0, 3.0]})
    text = csv_bytes(df).decode()
    assert "'=1+1" in text and "'@x" in text and "-1.5" in text and "'-1.5" not in text


def test_params_json_handles_numpy_and_infinity():
    out = json.loads(params_json({"eps": np.float64(1.5), "k": np.int64(3), "bound": math.inf, "xs": (1, 2)}))
    assert out == {"eps": 1.5, "k": 3, "bound": "inf", "xs": [1, 2]}


def test_figure_html_is_standalone():
    html = figure_html(go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))).decode()
    assert "<html>" in html[:200] and "plotly" in html.lower() and len(html) > 100_000


def test_default_template_is_premerged_white_with_okabe_ito():
    import plotly.io as pio

    from ui.charts import PALETTE

    # a "a+b" default is re-merged by Plotly on every go.Figure(); ours must be one registered name
    assert "+" not in pio.templates.default
    fig = go.Figure(go.Scatter(x=[0, 1], y=[1, 0]))
    layout = fig.layout.template.layout
    assert list(layout.colorway) == ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9",
                                     "#F0E442", "#000000"] == list(PALETTE)
    assert layout.plot_bgcolor == "white" and layout.xaxis.gridcolor == "#EBF0F8"  # plotly_white underneath
    assert layout.font.size == 16 and fig.layout.template.data.scatter[0].line.width == 3


def test_csv_export_neutralises_header_cells_too():
    # Issue 17 item 4: an uploaded header =HYPERLINK(...) came back unchanged in exported CSVs.
    import io

    df = pd.DataFrame({'=HYPERLINK("http://attacker.invalid")': ["a"], "+cmd": [1.0], "@SUM(A1)": ["-x"], "ok": [2]})
    back = pd.read_csv(io.BytesIO(csv_bytes(df)))
    assert list(back.columns) == ['\'=HYPERLINK("http://attacker.invalid")', "'+cmd", "'@SUM(A1)", "ok"]
    assert back.loc[0, "'@SUM(A1)"] == "'-x" and back.loc[0, "ok"] == 2
