"""File upload helpers: read the bytes in memory, validate in Python, show clear messages."""

from __future__ import annotations

import hashlib

import streamlit as st

from dpdash.common.data import (MAX_UPLOAD_BYTES, MAX_UPLOAD_COLS, MAX_UPLOAD_ROWS, NA_WORDS, DataValidationError,
                                Dataset, read_uploaded_csv)
from ui.text import md_escape


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


def missing_words_control(key: str, *, container=None) -> tuple[str, ...]:
    """The one visible control over missing values (issue 31), bound to the link: the missing codes to read with.

    Blank cells are always missing. ``NA``, ``N`` and ``None`` are values (North, Namibia, "no") unless the user
    turns this on; in a column of numbers they are missing either way (the reader says how many).
    """
    target = container if container is not None else st
    on = target.checkbox("Read NA, N and None as missing", key=key, bind="query-params",
                         help="Blank cells are always missing. NA, N and None are kept as values (N can be North, "
                              "NA Namibia) unless this is on; in a column of numbers they are missing either way.")
    return missing_codes(on)


def missing_codes(na_missing: object) -> tuple[str, ...]:
    """The reader's missing codes for the state of that control (blank only, or blank plus NA, N and None)."""
    return ("", *NA_WORDS) if na_missing else ("",)


def show_row_labels(dataset: Dataset, *, container=None) -> None:
    """The caption that says which columns were read as row labels and left out (R's rownames, pandas' index)."""
    if dataset.row_label_note:
        (container if container is not None else st).caption(md_escape(dataset.row_label_note, max_len=600))


def show_upload_error(message: object, *, container=None) -> None:
    """``st.error`` for a refused upload, with the reason escaped: it may quote the file's text (issue 17).

    Pages that call ``dpdash.common.data.read_uploaded_csv`` themselves show ``DataValidationError`` through this.
    """
    target = container if container is not None else st
    target.error(f"This file cannot be used: {md_escape(message, max_len=600)}")


@st.cache_data(max_entries=8, show_spinner=False, scope="session")
def _parse(digest: str, _data: bytes, max_bytes: int, max_rows: int, max_cols: int, min_rows: int,
           min_cols: int = 2, as_text: bool = False, missing_codes: tuple[str, ...] | None = None,
           max_cells: int | None = None):
    extra = {}
    if missing_codes is not None:
        extra["missing_codes"] = missing_codes
    if max_cells is not None:
        extra["max_cells"] = max_cells
    try:
        return read_uploaded_csv(_data, max_bytes=max_bytes, max_rows=max_rows, max_cols=max_cols,
                                 min_rows=min_rows, min_cols=min_cols, as_text=as_text, **extra), None
    except DataValidationError as exc:
        return None, str(exc)


def csv_uploader(label: str, *, key: str, max_bytes: int = MAX_UPLOAD_BYTES, max_rows: int = MAX_UPLOAD_ROWS,
                 max_cols: int = MAX_UPLOAD_COLS, min_rows: int = 2, help: str | None = None,
                 container=None, min_cols: int = 2, as_text: bool = False,
                 missing_codes: tuple[str, ...] | None = None, max_cells: int | None = None,
                 missing_key: str | None = None) -> Dataset | None:
    """Upload + validate a CSV; on a bad file show ``st.error`` with the reason and return None.

    Parsed data are cached per session, keyed by the SHA-256 of the bytes. ``min_cols`` and ``as_text`` are
    passed to ``dpdash.common.data.read_uploaded_csv``, and so are ``missing_codes`` (e.g. ``("",)`` where "N" is a
    real code such as North) and ``max_cells`` when given (defaults: the reader's). Notes (e.g. "read as Latin-1")
    are shown as ``st.info``, and the row labels left out as a caption. With ``missing_key`` the missing-value
    control (:func:`missing_words_control`) is drawn under the uploader and decides ``missing_codes``.
    """
    target = container if container is not None else st
    data = uploaded_bytes(label, key=key, max_bytes=max_bytes, help=help, container=target)
    if missing_key is not None:
        missing_codes = missing_words_control(missing_key, container=target)
    if data is None:
        return None
    dataset, error = _parse(hashlib.sha256(data).hexdigest(), data, max_bytes, max_rows, max_cols, min_rows,
                            min_cols, as_text, None if missing_codes is None else tuple(missing_codes), max_cells)
    if error:
        show_upload_error(error, container=target)
        return None
    for note in dataset.notes:
        target.info(md_escape(note, max_len=600))
    show_row_labels(dataset, container=target)
    return dataset
