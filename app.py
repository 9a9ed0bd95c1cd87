"""Home page: which tool answers which question, first; then the shared dataset and the sources."""

import streamlit as st

from ui import load_active_dataset, page_end, page_setup
from ui.common import TOOLS, methodology

page_setup("Home", icon=":material/shield_lock:")

#: The question each tool answers, in the words of someone who has to decide (same order as ui.common.TOOLS).
QUESTIONS = {
    "pages/epsilon_calculator.py": "How much noise does a privacy budget ε cost, and what risk does it leave?",
    "pages/coherence_explorer.py": "Would a model trained on our release treat the people in it differently?",
    "pages/sampling_designer.py": "Does publishing from a sample, not everyone, add privacy, and how much?",
    "pages/leximax_cohort_picker.py": "How do we draw a fair random panel that serves every group?",
    "pages/stratified_synthesis_viewer.py": "Are small groups served worse by private statistics or synthetic data?",
}

st.title("Privacy/utility explorer")
st.markdown(
    "**Publishing statistics about people always trades privacy against usefulness. Pick your question below: "
    "each tool answers it in plain words first, then shows the numbers behind the answer.**"
)

cols = st.columns(3)
for i, (path, label, icon, blurb) in enumerate(TOOLS):
    with cols[i % 3].container(border=True):
        st.markdown(f"**{QUESTIONS.get(path, label)}**")
        st.page_link(path, label=label, icon=icon)
        st.caption(blurb)

with methodology("What ε means, in one paragraph"):
    st.markdown(
        "Differential privacy makes the trade explicit: a single number, ε (epsilon), bounds how much any one "
        "person's data can change what is published. A smaller ε means more random noise and less accurate "
        "results. These tools show, with the numbers from the research papers, what a given ε buys and costs, so "
        "you can choose parameters you can defend."
    )

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
# the raw columns as they are (a "_preview" container: the presenter check lets a preview scroll sideways)
st.container(key="home_data_preview").dataframe(dataset.frame.head(20), width="stretch", key="home_preview")

with methodology("About these tools and their sources"):
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
