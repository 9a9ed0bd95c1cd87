"""The product's Plotly look: one template, a colour-blind-safe palette, and a chart-with-export helper.

Readable on a projector (large fonts, thick lines) and safe for colour-vision deficiencies (Okabe–Ito palette,
Okabe & Ito 2008, "Color Universal Design").
"""

from __future__ import annotations

import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

from ui.exports import download_figure_html

#: Okabe–Ito palette (black moved last so the first colours read well on white).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")

TEMPLATE_NAME = "dpdash"


def register_template() -> None:
    """Register the "dpdash" template and make ``plotly_white+dpdash`` the default (idempotent)."""
    if TEMPLATE_NAME in pio.templates and pio.templates.default == f"plotly_white+{TEMPLATE_NAME}":
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
    pio.templates.default = f"plotly_white+{TEMPLATE_NAME}"


register_template()


def show_figure(fig: go.Figure, *, key: str, filename: str, caption: str | None = None) -> None:
    """Render a figure full-width, its plain-language reading, and an HTML download button.

    ``key`` must be stable and unique on the page; the download button uses ``key + "_html"``.
    """
    st.plotly_chart(fig, width="stretch", key=key)
    if caption:
        st.caption(caption)
    download_figure_html(fig, filename=filename, key=f"{key}_html")
