"""Shared pieces of the leximax cohort picker's tab views: names, sources, bounded caches and small helpers.

The three tabs (``ui.views.leximax_cohort``, ``ui.views.leximax_finite``, ``ui.views.leximax_quota``) render
the views built by ``dpdash.sortition.views``; this module holds what more than one of them needs. Sources:
Henzinger, Peale, Reingold, Shen, *Leximax Approximations and Representative Cohort Selection*, FORC 2022
(seed 003, second paper); Flanigan et al., *Nature* 596 (2021) for the quota tab.
"""

from __future__ import annotations

import hashlib

import numpy as np
import streamlit as st

from dpdash.sortition import core as lx
from dpdash.common.view import TabView
from ui.show import take_away
from ui.text import md_escape
from ui.upload import csv_uploader

PAGE = "leximax_cohort_picker"
TITLE = "Leximax cohort picker"
PAPER = "Henzinger, Peale, Reingold & Shen, *Leximax Approximations and Representative Cohort Selection* (FORC 2022)"
SOURCES = ["Henzinger, Peale, Reingold, Shen, Leximax Approximations and Representative Cohort Selection, FORC 2022 "
           "(seed 003_4b386133f61617e9.txt, second paper): §4 Algorithm 1 and 2, Lemma 15, App. C; errata L1–L9 of "
           "the product spec", "Ogryczak & Tamir (2003), sum of the l smallest as a linear program",
           "Flanigan, Gölz, Gupta, Hennig, Procaccia, Fair algorithms for selecting citizens' assemblies, Nature 596 "
           "(2021)"]


def changed(key: str) -> bool:
    """Whether the control ``key`` holds a different value than on this tab's previous run (first run: no)."""
    cur, prev_key = st.session_state.get(key), f"_lx_prev_{key}"
    prev = st.session_state.get(prev_key, cur)
    st.session_state[prev_key] = cur
    return prev != cur


#: Missing-value codes of the assembly uploads: a blank cell only. "N", "NA", "None" are ordinary codes in
#: respondents and quota files (North, Namibia, no); the user may add them (:data:`NA_CODES`) with one control.
BLANK_ONLY = ("",)
NA_CODES = ("", "NA", "N", "None")


def upload_frame(label: str, *, key: str, max_rows: int, max_cols: int, help: str, min_rows: int = 2,
                 as_text: bool = False, missing_codes: tuple[str, ...] | None = None):
    """The product's one bounded reader (ui.upload → dpdash.common.data.read_uploaded_csv); None after a message."""
    ds = csv_uploader(label, key=key, max_rows=max_rows, max_cols=max_cols, min_rows=min_rows, help=help,
                      as_text=as_text, missing_codes=missing_codes)
    return None if ds is None else ds.frame


def show_problem(prefix: str, exc: object) -> None:
    """An engine or input error as a plain message; its text may quote uploaded or linked values: escaped."""
    st.error(f"{prefix} {md_escape(exc, max_len=600)}".strip())


def digest(obj) -> str:
    """A short stable name for a value (editor keys tied to the table they edit)."""
    return hashlib.sha256(repr(obj).encode()).hexdigest()[:12]


@st.cache_data(max_entries=4, show_spinner=False)
def volunteer_cached():
    return lx.volunteer_pool(), lx.volunteer_quotas()


def artefacts(view: TabView, *, key: str, figures: list, script: str) -> None:
    """Report, settings and "Copy as code" of the open tab, all from its view (ui.show.take_away)."""
    take_away(view, key=key, page=PAGE, title=TITLE, sources=SOURCES, figures=figures, script=script)


@st.cache_resource(max_entries=96, show_spinner=False, scope="session")
def _figure_store(kind: str, digest: str, _build):
    return _build()


def cached_figure(kind: str, build, *inputs):
    """A figure built once per inputs in this session (no copy: figures are only read after building).

    Moving k back and forth revisits the same inputs; building a Plotly figure (its validation) was most of the
    script's time per move. ``inputs`` are everything the figure depends on (arrays hashed by their bytes).
    """
    h = hashlib.sha256()
    for part in inputs:
        h.update(np.ascontiguousarray(part).tobytes() if isinstance(part, np.ndarray) else repr(part).encode())
        h.update(b"|")
    return _figure_store(kind, h.hexdigest(), build)


def from_link(source_key: str, upload_tokens: tuple[str, ...]) -> bool:
    """Whether this session opened on an upload view from a link (``source_key`` in the URL names an upload).

    Decided once per session, at the first look; choosing the source in the page later is not "from a link".
    """
    flag = f"_lx_from_link_{source_key}"
    if flag not in st.session_state:
        st.session_state[flag] = st.query_params.get(source_key) in upload_tokens
    if changed(source_key):
        st.session_state[flag] = False
    return bool(st.session_state[flag])


def files_not_in_links(what: str) -> None:
    """Issue 25: a link restores the settings of an upload view, never the files; say so beside the uploader."""
    st.warning(f"This link opens a view built on an uploaded file, but files do not travel in links: upload the "
               f"{what} again (the link restored the other settings). Nothing you upload leaves this session.")
