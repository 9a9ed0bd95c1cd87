"""Download buttons for results: tables as CSV, figures as standalone HTML, PNG or SVG, parameters as JSON."""

from __future__ import annotations

import json
import math
import os
import shutil
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dpdash.common.data import neutralise_formulas


def csv_bytes(df: pd.DataFrame) -> bytes:
    """CSV (UTF-8) of a frame with spreadsheet formula cells neutralised (see ``neutralise_formulas``)."""
    return neutralise_formulas(df).to_csv(index=False).encode("utf-8")


def figure_html(fig: go.Figure) -> bytes:
    """A standalone HTML file of the figure (Plotly.js embedded, so it opens offline)."""
    return fig.to_html(include_plotlyjs=True, full_html=True).encode("utf-8")


def _jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)


def params_json(params: dict) -> bytes:
    return json.dumps(_jsonable(params), indent=2, ensure_ascii=False).encode("utf-8")


def download_csv(df: pd.DataFrame, *, filename: str, key: str, label: str = "Download table (CSV)") -> None:
    st.download_button(label, lambda: csv_bytes(df), file_name=filename, mime="text/csv", key=key,
                       on_click="ignore")


def download_figure_html(fig: go.Figure, *, filename: str, key: str,
                         label: str = "Download figure (HTML)") -> None:
    # Deferred: the ~4 MB standalone HTML is built only when the user clicks, so redraws stay fast.
    st.download_button(label, lambda: figure_html(fig), file_name=filename, mime="text/html", key=key,
                       on_click="ignore")


def download_json(params: dict, *, filename: str, key: str, label: str = "Download parameters (JSON)") -> None:
    st.download_button(label, lambda: params_json(params), file_name=filename, mime="application/json", key=key,
                       on_click="ignore")


# --------------------------------------------------------------------------- static images (kaleido)
#: The browser kaleido drives: Debian's Chromium (CI installs it); never one downloaded at run time.
#: ``DPDASH_CHROMIUM`` overrides the path (e.g. ``/usr/bin/chromium-browser`` elsewhere).
CHROMIUM = os.environ.get("DPDASH_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
#: Static figure size (px) for downloads and the report: wide enough for a legend, A4-friendly aspect.
IMAGE_WIDTH, IMAGE_HEIGHT = 900, 500
_KALEIDO_LOCK = threading.Lock()  # one Chromium at a time on a 2-core machine


def figure_images(figs: Sequence[go.Figure], fmt: str = "svg", *, width: int = IMAGE_WIDTH,
                  height: int = IMAGE_HEIGHT, scale: float = 1.0) -> list[bytes]:
    """Static images of ``figs`` (``fmt`` "svg" or "png"), rendered by kaleido in one headless Chromium session.

    Kaleido loads plotly.js from the installed plotly package and MathJax is off, so nothing is fetched from the
    network. Slow (a browser start, ~2-6 s): call it only when the user asks for the file.
    """
    if fmt not in ("svg", "png"):
        raise ValueError("fmt must be 'svg' or 'png'")
    if not figs:
        return []
    import kaleido
    from kaleido import _sync_server

    from ui.logs import excuse_browser_goodbye

    excuse_browser_goodbye()

    os.environ.setdefault("BROWSER_PATH", CHROMIUM)  # choreographer's lookup, should any path miss ours
    opts = dict(format=fmt, width=width, height=height, scale=scale)

    async def _render() -> list[bytes]:
        async with kaleido.Kaleido(n=1, path=CHROMIUM, mathjax=False, timeout=60) as k:
            return [await k.calc_fig(fig, opts=opts) for fig in figs]

    with _KALEIDO_LOCK:
        return _sync_server.oneshot_async_run(_render, args=(), kwargs={})


def figure_image(fig: go.Figure, fmt: str = "svg", **kwargs: Any) -> bytes:
    """One figure as SVG or PNG bytes (see :func:`figure_images`)."""
    return figure_images([fig], fmt, **kwargs)[0]


def download_figure_image(fig: go.Figure, *, filename: str, key: str, fmt: str) -> None:
    """A PNG or SVG download button; the image is rendered only when clicked (a browser start takes seconds)."""
    stem = filename.rsplit(".", 1)[0] if filename.lower().endswith((".html", ".png", ".svg")) else filename
    mime = "image/svg+xml" if fmt == "svg" else "image/png"
    st.download_button(f"{fmt.upper()}", lambda: figure_image(fig, fmt, scale=2.0 if fmt == "png" else 1.0),
                       file_name=f"{stem}.{fmt}", mime=mime, key=key, on_click="ignore",
                       icon=":material/image:", help=f"The figure as a static {fmt.upper()} image.")
