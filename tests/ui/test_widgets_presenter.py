"""Presenter mode and static figure export (issue 14 items 5 and 9, issue 15 item 4).

Chart fonts in presenter mode are checked on the figure sent to the browser (a copy; the page's figure keeps its
own sizes), the toggle and the folded method text through AppTest, and the PNG/SVG export by looking at the bytes
kaleido returns from Debian's Chromium (file signatures, the figure's own text inside the SVG).
"""

import json

import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots
from streamlit.testing.v1 import AppTest

from ui.charts import presenter_figure


def _fig():
    fig = make_subplots(rows=1, cols=2)
    fig.add_trace(go.Scatter(x=[1, 2], y=[3, 4], name="a"), 1, 1)
    fig.add_trace(go.Heatmap(z=[[1, 2], [3, 4]]), 1, 2)
    fig.update_layout(title="T", legend_font_size=12)
    fig.update_xaxes(tickfont_size=10, title_text="x")
    fig.add_annotation(text="note", x=1, y=3, font_size=9)
    fig.update_yaxes(tickfont_size=30, row=1, col=2)  # already larger: kept
    return fig


def test_presenter_figure_raises_every_font_and_leaves_the_original():
    fig = _fig()
    before = json.loads(fig.to_json())
    big = presenter_figure(fig)
    assert json.loads(fig.to_json()) == before
    lay = big.layout
    assert lay.font.size >= 18 and lay.legend.font.size == 18 and lay.title.font.size == 22
    assert lay.xaxis.tickfont.size == 18 and lay.xaxis2.tickfont.size == 18 and lay.xaxis.title.font.size == 18
    assert lay.yaxis.tickfont.size == 18 and lay.yaxis2.tickfont.size == 30
    assert lay.annotations[0].font.size == 18
    assert big.data[1].colorbar.tickfont.size == 18


PAGE = """
import streamlit as st
import plotly.graph_objects as go
from ui.common import page_setup, page_end, presenter_mode, methodology
from ui.charts import show_figure
page_setup("Presenter test", uses_dataset=False)
st.write(f"PRESENT={presenter_mode()}")
with methodology():
    st.markdown("method text")
show_figure(go.Figure(go.Scatter(x=[1, 2], y=[1, 2])), key="f", filename="f.html", alt="A rising line.")
page_end()
"""


@pytest.mark.parametrize("present", [False, True])
def test_presenter_toggle_from_the_link_folds_method_text_and_grows_chart_fonts(present):
    at = AppTest.from_string(PAGE, default_timeout=30)
    if present:
        at.query_params["present"] = "true"
    at.run()
    assert not at.exception
    assert any(m.value == f"PRESENT={present}" for m in at.markdown)
    assert at.sidebar.toggle(key="present").value is present
    method = next(e for e in at.main.expander if e.label == "How this is computed")
    assert method.proto.expanded is (not present)
    chart = at.get("plotly_chart")[0].proto
    spec = json.loads(chart.spec)
    size = spec["layout"].get("xaxis", {}).get("tickfont", {}).get("size")
    assert (size == 18) if present else (size is None)
    # the sidebar says the page works on its own data, and there is no dataset picker
    assert "dataset" not in [s.key for s in at.sidebar.selectbox]
    assert any("its own data" in c.value for c in at.sidebar.caption)
    # the HTML, PNG and SVG downloads are offered
    assert {b.proto.label for b in at.get("download_button")} >= {"Download figure (HTML)", "PNG", "SVG"}


@pytest.mark.slow
def test_png_and_svg_export_through_debian_chromium():
    from ui.exports import figure_images

    fig = go.Figure(go.Scatter(x=[1, 2, 3], y=[2, 1, 3]), layout=dict(title="Exported title"))
    svg, png = figure_images([fig], "svg")[0], figure_images([fig], "png")[0]
    assert svg.lstrip().startswith(b"<svg") and b"Exported title" in svg and b"<script" not in svg
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5_000
