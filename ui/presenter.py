"""Presenter mode's switch (issue 14 item 5): one key, read by page setup, charts and views.

Split out of ``ui.common`` (issue 30) so that ``ui.charts`` and ``ui.show`` can read it without an import circle;
``ui.common`` re-exports it.
"""

from __future__ import annotations

import streamlit as st

#: Query-parameter / session key of the presenter-mode toggle (same on every page).
PRESENT_KEY = "present"


def presenter_mode() -> bool:
    """Whether presenter mode is on (the sidebar toggle ``present``; a link with ``?present=true`` turns it on)."""
    return bool(st.session_state.get(PRESENT_KEY, False))
