"""The product's Plotly look: one template, a colour-blind-safe palette, and a chart-with-export helper.

Readable on a projector (large fonts, thick lines) and safe for colour-vision deficiencies (Okabe–Ito palette,
Okabe & Ito 2008, "Color Universal Design").
"""

from __future__ import annotations

import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

from engine.palette import PALETTE
from ui.exports import download_figure_html, download_figure_image

TEMPLATE_NAME = "dpdash"


#: The registered default: plotly_white with our layer on top, merged once.
DEFAULT_TEMPLATE = f"{TEMPLATE_NAME}_white"


def register_template() -> None:
    """Register the "dpdash" template and make plotly_white + dpdash, merged once, the default (idempotent).

    The default is stored pre-merged under one name: Plotly re-merges a "a+b" default on every ``go.Figure()``
    (~12 ms each, measured), which had been the largest share of a page's redraw time.
    """
    if pio.templates.default == DEFAULT_TEMPLATE and DEFAULT_TEMPLATE in pio.templates:
        return
    pio.templates[TEMPLATE_NAME] = go.layout.Template(
        layout=go.Layout(
            colorway=list(PALETTE),
            font=dict(size=16, family="Source Sans Pro, Arial, sans-serif"),
            title=dict(font=dict(size=20)),
            legend=dict(font=dict(size=14)),
            hoverlabel=dict(font=dict(size=14)),
            margin=dict(l=60, r=20, t=60, b=60),
        ),
        data=dict(scatter=[go.Scatter(line=dict(width=3), marker=dict(size=8))]),
    )
    pio.templates[DEFAULT_TEMPLATE] = pio.templates.merge_templates(pio.templates["plotly_white"],
                                                                  pio.templates[TEMPLATE_NAME])
    pio.templates.default = DEFAULT_TEMPLATE


register_template()


#: Presenter mode (issue 14 item 5): tick labels, legends and axis titles at least 18 px, chart titles 22 px.
PRESENT_FONT, PRESENT_TITLE = 18, 22


def presenter_figure(fig: go.Figure) -> go.Figure:
    """A copy of ``fig`` with presenter-mode fonts (never smaller than the figure's own); ``fig`` is unchanged."""
    out = go.Figure(fig)

    def at_least(size, floor: int) -> int:
        return max(int(size or 0), floor)

    out.update_layout(font_size=at_least(out.layout.font.size, PRESENT_FONT),
                      legend_font_size=at_least(out.layout.legend.font.size, PRESENT_FONT),
                      title_font_size=at_least(out.layout.title.font.size, PRESENT_TITLE),
                      hoverlabel_font_size=at_least(out.layout.hoverlabel.font.size, PRESENT_FONT))
    out.for_each_xaxis(lambda a: a.update(tickfont_size=at_least(a.tickfont.size, PRESENT_FONT),
                                          title_font_size=at_least(a.title.font.size, PRESENT_FONT)))
    out.for_each_yaxis(lambda a: a.update(tickfont_size=at_least(a.tickfont.size, PRESENT_FONT),
                                          title_font_size=at_least(a.title.font.size, PRESENT_FONT)))
    for ann in out.layout.annotations or ():
        ann.font.size = at_least(ann.font.size, PRESENT_FONT)
    for trace in out.data:  # colour bars carry their own tick font
        bar = getattr(trace, "colorbar", None)
        if bar is not None and getattr(trace, "showscale", None) is not False:
            try:
                bar.tickfont.size = at_least(bar.tickfont.size, PRESENT_FONT)
            except (AttributeError, ValueError):
                pass
    return out


def show_figure(fig: go.Figure, *, key: str, filename: str, caption: str | None = None,
                alt: str | None = None) -> None:
    """Render a figure full-width, its plain-language reading, and HTML / PNG / SVG download buttons.

    ``key`` must be stable and unique on the page; the buttons use ``key + "_html"``, ``"_png"``, ``"_svg"``.
    ``alt``: a sentence saying what the chart shows, for screen readers (issue 14 item 9); the caption is used
    when no alt text is given. In presenter mode the chart's fonts grow (a copy; ``fig`` is unchanged). The
    files are built only when clicked.
    """
    from ui.common import presenter_mode

    shown = presenter_figure(fig) if presenter_mode() else fig
    text = alt or caption
    kwargs = {"alt": text} if text else {}
    st.plotly_chart(shown, width="stretch", key=key, **kwargs)
    if caption:
        st.caption(caption)
    with st.container(horizontal=True, gap="small"):
        download_figure_html(fig, filename=filename, key=f"{key}_html")
        download_figure_image(fig, filename=filename, key=f"{key}_png", fmt="png")
        download_figure_image(fig, filename=filename, key=f"{key}_svg", fmt="svg")
