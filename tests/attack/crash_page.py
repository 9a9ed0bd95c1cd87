"""A page that fails with a message quoting a link value, for the clean-log test."""

import streamlit as st

from ui import page_setup

page_setup("Crash test page")
value = st.query_params.get("secret", "")


def parse_cell(text):
    raise ValueError(f"cannot parse {text!r}")


try:
    parse_cell(value)
except ValueError as exc:
    raise RuntimeError(f"upload failed on {value}") from exc
