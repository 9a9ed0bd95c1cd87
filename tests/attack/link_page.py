"""A tiny page for the link tests: one widget of each bound kind, between page_setup and page_end.

With ``?raw=1`` it skips page_setup's sanitiser (to show what an unsanitised link does) and echoes the
``echo`` parameter without escaping (to show that the injection check can fail).
"""

import streamlit as st

from ui import page_end, page_setup

RAW = st.query_params.get("raw") == "1"
if RAW:
    st.set_page_config(page_title="raw")
else:
    page_setup("Link test page")
n = st.number_input("n", min_value=0, max_value=100, value=5, step=1, key="t_n", bind="query-params")
x = st.slider("x", min_value=0.0, max_value=1.0, value=0.5, key="t_x", bind="query-params")
c = st.selectbox("c", ["a", "b"], key="t_c", bind="query-params")
m = st.multiselect("m", ["p", "q", "r"], default=["p"], key="t_m", bind="query-params")
t = st.text_input("t", value="hi", key="t_t", bind="query-params")
if RAW and "echo" in st.query_params:
    st.markdown(st.query_params["echo"])
st.write(f"n={n} x={x} c={c} m={m}")
if not RAW:
    page_end()
