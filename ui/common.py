"""Page scaffolding shared by every page: page config, the shared sidebar and the active dataset."""

from __future__ import annotations

import logging
import os

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from engine.data import DATASET_DESCRIPTIONS, DATASETS, Dataset, load_dataset
from ui.charts import register_template

logger = logging.getLogger("dpdash")

#: Query-parameter / session key of the shared dataset picker (same on every page).
#: Worker processes for the pages' joblib work: the reference machine's 2 cores, fewer on a smaller host.
CORES = max(1, min(2, os.cpu_count() or 1))

DATASET_KEY = "dataset"
DEFAULT_DATASET = "census"
_REMEMBERED_KEY = "_dataset_remembered"
_LAST_PAGE_KEY = "_dataset_last_page"

#: The home page and the five tools: script path, label, Material icon, one-line description.
HOME = ("app.py", "Home", ":material/home:")
TOOLS = (
    ("pages/epsilon_calculator.py", "Epsilon calculator", ":material/calculate:",
     "Noise ↔ ε ↔ accuracy, composing many releases, budgets, what ε means as a risk, public information."),
    ("pages/coherence_explorer.py", "Coherence explorer", ":material/balance:",
     "Would a model trained on a data release treat two random halves of a population, or a subgroup, "
     "differently? Demographic coherence, measured per subgroup."),
    ("pages/sampling_designer.py", "Sampling designer", ":material/filter_alt:",
     "How much privacy a survey sample adds (or removes): simple random, Poisson, cluster and stratified "
     "designs, and allocation under privacy."),
    ("pages/leximax_cohort_picker.py", "Leximax cohort picker", ":material/groups:",
     "Fair random selection of a cohort or citizens' panel so that every group is served as well as possible."),
    ("pages/stratified_synthesis_viewer.py", "Stratified synthesis viewer", ":material/stacked_bar_chart:",
     "DP averages and synthetic data per demographic group versus for the whole population."),
)


@st.cache_data(max_entries=len(DATASETS), show_spinner="Loading dataset…")
def _load(name: str) -> Dataset:
    return load_dataset(name)


def active_dataset() -> str:
    """Name of the dataset chosen in the shared picker (a key of ``engine.data.DATASETS``)."""
    name = st.session_state.get(DATASET_KEY, DEFAULT_DATASET)
    return name if name in DATASETS else DEFAULT_DATASET


def load_active_dataset() -> Dataset:
    """The active bundled dataset (cached across sessions; bundled files never change at run time)."""
    return _load(active_dataset())


def dataset_picker(container=None, *, page_id: str = "") -> str:
    """The shared dataset picker: URL-bound and kept for the whole session, so it survives page switches."""
    target = container if container is not None else st.sidebar
    # A page switch drops the query string, and a bound widget then falls back to its default; carry the
    # last choice over by hand unless the new URL names a dataset itself (a shared link wins).
    remembered = st.session_state.get(_REMEMBERED_KEY)
    last_page = st.session_state.get(_LAST_PAGE_KEY)
    switched = last_page is not None and last_page != page_id
    if switched and remembered in DATASETS and DATASET_KEY not in st.query_params:
        st.session_state[DATASET_KEY] = remembered
    st.session_state[_LAST_PAGE_KEY] = page_id
    kwargs = {} if DATASET_KEY in st.session_state else {"index": list(DATASETS).index(DEFAULT_DATASET)}
    choice = target.selectbox(
        "Shared dataset", options=list(DATASETS), format_func=lambda k: DATASETS[k], key=DATASET_KEY,
        bind="query-params", help="Pages that work on a data table start from this dataset. "
        "Each page can also take an upload.", **kwargs,
    )
    st.session_state[_REMEMBERED_KEY] = choice
    return choice


def page_setup(title: str, *, icon: str | None = None) -> None:
    """Call first on every page: page config, chart theme and the shared sidebar (dataset picker)."""
    st.set_page_config(page_title=f"{title} · Privacy/utility explorer", page_icon=icon or ":material/shield_lock:", layout="wide")
    register_template()
    with st.sidebar:
        _navigation()
        dataset_picker(st.sidebar, page_id=title)
        st.caption(DATASET_DESCRIPTIONS[active_dataset()])


def _navigation() -> None:
    """Links to the home page and the five tools, with their real names.

    Streamlit's automatic menu (switched off in .streamlit/config.toml) would label the home page "app", after
    its file; st.navigation would replace the file-based pages/ routing that deep links rely on.
    """
    try:
        for path, label, icon, *_ in (HOME, *TOOLS):
            st.page_link(path, label=label, icon=icon)
    except StreamlitPageNotFoundError:
        # Only when one page runs as an app of its own (streamlit.testing.AppTest): nothing to link to.
        return
    st.divider()


def page_end() -> None:
    """Call last on every page: report link values that the page did not use (issues 14 and 17).

    A stub until the link sanitiser lands; it must stay cheap, as it runs on every full rerun.
    """
    return None
