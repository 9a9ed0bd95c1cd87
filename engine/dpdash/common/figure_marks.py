"""Reference lines and bands on Plotly figures, as Plotly's add_vline/add_hline/add_vrect/add_hrect draw them.

Not from a seed: a speed shim. Plotly's ``add_vline`` and friends validate and re-process every axis-spanning
shape of the figure on each call (4–9 ms per line, measured on this machine); a chart with a dozen guide lines
spent more time there than in its data. These helpers append the same shape and annotation dicts (checked
equal to Plotly's own output in tests/engine/common/test_figure_marks.py) in one cheap
``add_shape``/``add_annotation`` each.

Supported: a single pair of axes (``x``/``y``, or subplot (1, 1)); annotation positions ``top right``
(Plotly's default), ``top left``, ``bottom right``, ``bottom left``, ``top``, ``bottom``.
"""

from __future__ import annotations

import plotly.graph_objects as go

__all__ = ["vline", "hline", "vrect", "hrect", "vline_spec", "hline_spec", "POSITIONS", "apply_layout"]

POSITIONS = ("top right", "top left", "bottom right", "bottom left", "top", "bottom")

# (x, y, xanchor, yanchor) of the label for each position: value in data units ("v") or the domain end (0/1).
_VLINE = {"top right": (1, "left", "top"), "top left": (1, "right", "top"), "bottom right": (0, "left", "bottom"),
          "bottom left": (0, "right", "bottom"), "top": (1, "center", "bottom"), "bottom": (0, "center", "top")}
_HLINE = {"top right": (1, "right", "bottom"), "top left": (0, "left", "bottom"), "bottom right": (1, "right", "top"),
          "bottom left": (0, "left", "top"), "top": (0.5, "center", "bottom"), "bottom": (0.5, "center", "top")}


def _line_props(line: dict | None, kw: dict) -> dict:
    """Merge ``line=dict(...)`` with Plotly's magic-underscore ``line_dash=``/``line_color=``/``line_width=``."""
    props = dict(line or {})
    for k in list(kw):
        if k.startswith("line_"):
            props[k[5:]] = kw.pop(k)
    return props


def _position(annotation_position: str | None) -> str:
    pos = annotation_position or "top right"
    if pos not in POSITIONS:
        raise ValueError(f"annotation_position must be one of {POSITIONS}, got {annotation_position!r}")
    return pos


def _line_spec(value: float, vertical: bool, line: dict | None, annotation_text: str | None,
               annotation_position: str | None, kw: dict) -> tuple[dict, dict | None]:
    """One axis-spanning line at data ``value`` (x if ``vertical``, else y) and its optional label."""
    props = _line_props(line, kw)
    data, span = ("x", "y") if vertical else ("y", "x")
    shape = {"type": "line", f"{data}0": value, f"{data}1": value, f"{data}ref": data, f"{span}0": 0, f"{span}1": 1,
             f"{span}ref": f"{span} domain", "line": props, **kw}
    note = None
    if annotation_text is not None:
        at, xa, ya = (_VLINE if vertical else _HLINE)[_position(annotation_position)]
        note = {"text": annotation_text, "showarrow": False, data: value, f"{data}ref": data, span: at,
                f"{span}ref": f"{span} domain", "xanchor": xa, "yanchor": ya}
    return shape, note


def vline_spec(x: float, *, line: dict | None = None, annotation_text: str | None = None,
               annotation_position: str | None = None, **kw) -> tuple[dict, dict | None]:
    """The shape and label dicts that ``fig.add_vline`` would add, for a figure built in one layout update."""
    return _line_spec(x, True, line, annotation_text, annotation_position, kw)


def hline_spec(y: float, *, line: dict | None = None, annotation_text: str | None = None,
               annotation_position: str | None = None, **kw) -> tuple[dict, dict | None]:
    """The shape and label dicts that ``fig.add_hline`` would add, for a figure built in one layout update."""
    return _line_spec(y, False, line, annotation_text, annotation_position, kw)


def _add(fig: go.Figure, spec: tuple[dict, dict | None]) -> go.Figure:
    shape, note = spec
    fig.add_shape(**shape)
    if note is not None:
        fig.add_annotation(**note)
    return fig


def vline(fig: go.Figure, x: float, *, line: dict | None = None, annotation_text: str | None = None,
          annotation_position: str | None = None, **kw) -> go.Figure:
    """Vertical line across the plot at data ``x`` (as ``fig.add_vline``), with an optional label."""
    return _add(fig, vline_spec(x, line=line, annotation_text=annotation_text,
                                annotation_position=annotation_position, **kw))


def hline(fig: go.Figure, y: float, *, line: dict | None = None, annotation_text: str | None = None,
          annotation_position: str | None = None, **kw) -> go.Figure:
    """Horizontal line across the plot at data ``y`` (as ``fig.add_hline``), with an optional label."""
    return _add(fig, hline_spec(y, line=line, annotation_text=annotation_text,
                                annotation_position=annotation_position, **kw))


def vrect(fig: go.Figure, x0: float, x1: float, *, line: dict | None = None, annotation_text: str | None = None,
          annotation_position: str | None = None, **kw) -> go.Figure:
    """Vertical band from data ``x0`` to ``x1`` over the plot's height (as ``fig.add_vrect``)."""
    props = _line_props(line, kw)
    fig.add_shape(type="rect", x0=x0, x1=x1, xref="x", y0=0, y1=1, yref="y domain", line=props, **kw)
    if annotation_text is not None:
        pos = _position(annotation_position)
        y, ya = (1, "top") if pos.startswith("top") else (0, "bottom")
        x, xa = {"left": (x0, "left"), "right": (x1, "right")}.get(pos.split()[-1], ((x0 + x1) / 2, "center"))
        fig.add_annotation(text=annotation_text, showarrow=False, x=x, xref="x", y=y, yref="y domain",
                           xanchor=xa, yanchor=ya)
    return fig


def hrect(fig: go.Figure, y0: float, y1: float, *, line: dict | None = None, **kw) -> go.Figure:
    """Horizontal band from data ``y0`` to ``y1`` across the plot's width (as ``fig.add_hrect``), no label."""
    props = _line_props(line, kw)
    fig.add_shape(type="rect", x0=0, x1=1, xref="x domain", y0=y0, y1=y1, yref="y", line=props, **kw)
    return fig


def apply_layout(fig: go.Figure, title: str, **kw) -> go.Figure:
    """Title plus a horizontal legend above the plot (extra ``legend`` keys override), as every ppd figure uses."""
    legend = dict(orientation="h", yanchor="bottom", y=1.02, x=0)
    legend.update(kw.pop("legend", {}))
    fig.update_layout(title=title, legend=legend, **kw)
    return fig
