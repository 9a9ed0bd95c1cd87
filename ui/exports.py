"""Download buttons for results: tables as CSV, figures as standalone HTML, parameters as JSON."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from engine.data import neutralise_formulas


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
