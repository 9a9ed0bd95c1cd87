"""File upload helpers: read the bytes in memory, validate in Python, show clear messages."""

from __future__ import annotations

import hashlib

import streamlit as st

from engine.data import (MAX_UPLOAD_BYTES, MAX_UPLOAD_COLS, MAX_UPLOAD_ROWS, DataValidationError, Dataset,
                         read_uploaded_csv)


def uploaded_bytes(label: str, *, key: str, max_bytes: int = MAX_UPLOAD_BYTES, help: str | None = None,
                   container=None) -> bytes | None:
    """A CSV file uploader returning the file's bytes (or None); re-checks the size server-side.

    Upload widgets cannot be bound to the URL (a link cannot carry a file). Oversized files show an error.
    """
    target = container if container is not None else st
    f = target.file_uploader(label, type=["csv", "txt", "tsv"], key=key, help=help)
    if f is None:
        return None
    data = f.getvalue()
    if len(data) > max_bytes:
        target.error(f"The file is {len(data) / 1e6:.1f} MB; the limit is {max_bytes / 1e6:.0f} MB. "
                     "Upload a smaller extract.")
        return None
    return data


@st.cache_data(max_entries=8, show_spinner=False, scope="session")
def _parse(digest: str, _data: bytes, max_bytes: int, max_rows: int, max_cols: int, min_rows: int):
    try:
        return read_uploaded_csv(_data, max_bytes=max_bytes, max_rows=max_rows, max_cols=max_cols,
                                 min_rows=min_rows), None
    except DataValidationError as exc:
        return None, str(exc)


def csv_uploader(label: str, *, key: str, max_bytes: int = MAX_UPLOAD_BYTES, max_rows: int = MAX_UPLOAD_ROWS,
                 max_cols: int = MAX_UPLOAD_COLS, min_rows: int = 2, help: str | None = None,
                 container=None) -> Dataset | None:
    """Upload + validate a CSV; on a bad file show ``st.error`` with the reason and return None.

    Parsed data are cached per session, keyed by the SHA-256 of the bytes.
    """
    target = container if container is not None else st
    data = uploaded_bytes(label, key=key, max_bytes=max_bytes, help=help, container=target)
    if data is None:
        return None
    dataset, error = _parse(hashlib.sha256(data).hexdigest(), data, max_bytes, max_rows, max_cols, min_rows)
    if error:
        target.error(f"This file cannot be used: {error}")
        return None
    for note in dataset.notes:
        target.info(note)
    return dataset
