"""Home page: what the tool is, the five tools, and the shared dataset picker."""

import streamlit as st

from ui import load_active_dataset, page_end, page_setup
from ui.common import TOOLS

page_setup("Home", icon=":material/shield_lock:")

st.title("Privacy/utility explorer")
st.markdown(
    "Publishing statistics about people always trades **privacy** against **usefulness**. "
    "Differential privacy makes the trade explicit: a single number, ε (epsilon), bounds how much any one "
    "person's data can change what is published, and a smaller ε means more random noise and less accurate "
    "results. These tools show, with the numbers from the research papers, what a given ε buys and costs, so "
    "you can choose parameters you can defend."
)

cols = st.columns(3)
for i, (path, label, icon, blurb) in enumerate(TOOLS):
    with cols[i % 3].container(border=True):
        st.markdown(f"#### {icon} {label}")
        st.write(blurb)
        st.page_link(path, label=f"Open the {label.lower()}", icon=":material/arrow_forward:")

st.subheader("Shared dataset")
st.write(
    "Choose a dataset in the sidebar (**Shared dataset**). Your choice is kept in the page address, so a link "
    "you share opens with the same data, and it stays selected as you move between tools."
)
dataset = load_active_dataset()
c1, c2, c3 = st.columns(3)
c1.metric("Rows", f"{len(dataset.frame):,}")
c2.metric("Columns", dataset.frame.shape[1])
c3.metric("Suggested label", dataset.schema.suggested_label or "—")
st.caption(f"Source: {dataset.source}")
for note in dataset.notes:
    st.caption(note)
st.dataframe(dataset.frame.head(20), width="stretch", key="home_preview")

with st.expander("About these tools and their sources"):
    st.markdown(
        "- Demographic coherence: *Enforcing Demographic Coherence* (seed 000).\n"
        "- Partially private data: Seeman, Slavković & Reimherr (seed 001).\n"
        "- Composition, odometers, private tests: Rogers, *Leveraging Privacy in Data Analysis* (seed 002).\n"
        "- Sampling designs: Bun et al.; leximax cohorts: Henzinger et al., FORC 2022 (seed 003).\n"
        "- Stratification and disparate impact: Rosenblatt, Stoyanovich & Musco (seed 004).\n\n"
        "UCI Adult: Becker & Kohavi (1996), doi:10.24432/C5XW20, CC BY 4.0. "
        "acs12: OpenIntro, CC BY-SA 3.0. Open source; nothing you upload is stored."
    )

page_end()
