"""dpdash.common.figure_marks draws exactly what Plotly's add_vline/add_hline/add_vrect/add_hrect draw."""

import plotly.graph_objects as go
import pytest

from dpdash.common import figure_marks as fm


def _base():
    return go.Figure(go.Scatter(x=[0, 1, 2], y=[0, 1, 4]))


def _layout(fig):
    d = fig.to_plotly_json()["layout"]
    return d.get("shapes"), d.get("annotations")


STYLES = [dict(line=dict(color="red", dash="dot")), dict(line_dash="dash", line_color="#444444", line_width=1),
          dict(line=dict(color="#000000", width=2), opacity=0.5)]


@pytest.mark.parametrize("pos", [None, *fm.POSITIONS])
@pytest.mark.parametrize("style", range(len(STYLES)))
@pytest.mark.parametrize("text", [None, "α = 0.20"])
def test_lines_match_plotly(pos, style, text):
    # Plotly adds an empty label when annotation_text=None is passed explicitly; that draws nothing, so compare
    # only calls that give a label or none at all.
    kw = dict(STYLES[style], **({} if text is None else {"annotation_text": text}),
              **({} if pos is None or text is None else {"annotation_position": pos}))
    for ours, theirs, v in ((fm.vline, go.Figure.add_vline, 1.5), (fm.hline, go.Figure.add_hline, 2.5)):
        a, b = _base(), _base()
        theirs(a, v, **kw)
        ours(b, v, **kw)
        assert _layout(b) == _layout(a)


@pytest.mark.parametrize("pos", [None, *fm.POSITIONS])
@pytest.mark.parametrize("text", [None, "below min. fraction"])
def test_rects_match_plotly(pos, text):
    kw = dict(fillcolor="#999999", opacity=0.2, line_width=0, **({} if text is None else {"annotation_text": text}),
              **({} if pos is None or text is None else {"annotation_position": pos}))
    a, b = _base(), _base()
    a.add_vrect(x0=1, x1=3, **kw)
    fm.vrect(b, 1, 3, **kw)
    assert _layout(b) == _layout(a)
    a, b = _base(), _base()
    a.add_hrect(y0=0.5, y1=2, fillcolor="#999999", opacity=0.25, line_width=0)
    fm.hrect(b, 0.5, 2, fillcolor="#999999", opacity=0.25, line_width=0)
    assert _layout(b) == _layout(a)


def test_several_marks_accumulate_in_order():
    a, b = _base(), _base()
    a.add_vline(x=1, line=dict(dash="dot"))
    a.add_hline(y=2, annotation_text="k/n")
    fm.vline(b, 1, line=dict(dash="dot"))
    fm.hline(b, 2, annotation_text="k/n")
    assert _layout(b) == _layout(a)


def test_unknown_position_is_refused():
    with pytest.raises(ValueError, match="annotation_position"):
        fm.vline(_base(), 1, annotation_text="x", annotation_position="middle")
