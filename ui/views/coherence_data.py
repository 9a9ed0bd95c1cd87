"""The coherence explorer's uploaded file, kept for the session (issue 25) and read once (issue 26).

The uploader forgets its file whenever it is not drawn (another data source chosen), so the parsed file is kept in
this session's state, keyed by the SHA-256 of its bytes: coming back to "Upload a CSV" brings it back, a new file
replaces it, removing it in the uploader forgets it. The kept object is the one every rerun uses (no cache copy of
a 200,000-row frame per rerun, no re-hash of the frame).
"""

from __future__ import annotations

import hashlib

import streamlit as st

from dpdash.common.data import DataValidationError, Dataset, read_uploaded_csv
from ui.text import md_escape
from ui.upload import missing_words_control, show_row_labels, show_upload_error, uploaded_bytes

_KEPT = "_coh_upload_kept"          # (sha256, Dataset, missing codes, bytes) of the session's file
_RESTORED = "_coh_upload_restored"  # the kept file is in use while the uploader shows none
MIN_ROWS = 20


def upload_source(*, prev_source: str | None, key: str = "coh_upload") -> tuple[str, Dataset] | None:
    """The session's uploaded file as ``(sha256, dataset)``, or None (nothing uploaded, or a refused file)."""
    data = uploaded_bytes("CSV file (one row per person, a header row)", key=key,
                          help="Comma or semicolon separated, ≤ 50 MB, ≤ 200,000 rows, ≤ 100 columns. "
                               "Kept in memory only, for this session.")
    codes = missing_words_control("coh_na_missing")
    kept = st.session_state.get(_KEPT)
    if data is not None:
        sha = hashlib.sha256(data).hexdigest()
        if kept is None or kept[0] != sha or kept[2] != codes:
            try:
                ds = read_uploaded_csv(data, min_rows=MIN_ROWS, missing_codes=codes)
            except DataValidationError as exc:
                show_upload_error(exc)
                return None
            kept = (sha, ds, codes, data)  # the bytes too: the missing-value control may ask for a new reading
            st.session_state[_KEPT] = kept
        st.session_state[_RESTORED] = False
        for note in kept[1].notes:
            st.info(md_escape(note, max_len=600))
        show_row_labels(kept[1])
        return kept[:2]
    if kept is None:
        return None
    if prev_source == "upload" and not st.session_state.get(_RESTORED):
        # the uploader was drawn with the file and is empty now: the user removed it
        st.session_state.pop(_KEPT, None)
        return None
    st.session_state[_RESTORED] = True
    if kept[2] != codes:  # the missing-value control changed while the file is kept: read it again
        try:
            kept = (kept[0], read_uploaded_csv(kept[3], min_rows=MIN_ROWS, missing_codes=codes), codes, kept[3])
        except DataValidationError as exc:
            show_upload_error(exc)
            return None
        st.session_state[_KEPT] = kept
    st.caption(f"Using the file uploaded earlier in this session ({len(kept[1].frame):,} rows, "
               f"{kept[1].frame.shape[1]} columns). Upload another file to replace it.")
    show_row_labels(kept[1])
    return kept[:2]
