"""Page scaffolding shared by every page: page config, the shared sidebar and the active dataset."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from dpdash.common.parallel import PAGE_JOBS
from dpdash.common.data import DATASET_DESCRIPTIONS, DATASETS, Dataset, load_dataset
from ui.charts import register_template
from ui.dossier import restore_notice, restore_uploader
from ui.warmup import start_background_warmup
from ui.links import link_notice, sanitise_link
from ui.logs import BrowserGoodbye, ScrubUserData, excuse_browser_goodbye, install_log_filter  # noqa: F401
from ui.presenter import PRESENT_KEY, presenter_mode  # noqa: F401
from ui.widgets import choice as token_choice

logger = logging.getLogger("dpdash")

#: Query-parameter / session key of the shared dataset picker (same on every page).
#: Worker processes for the pages' joblib work (``dpdash.common.parallel.PAGE_JOBS``).
CORES = PAGE_JOBS

DATASET_KEY = "dataset"
DEFAULT_DATASET = "census"
_REMEMBERED_KEY = "_dataset_remembered"
_LAST_PAGE_KEY = "_dataset_last_page"

#: The browser tab's icon, bundled (issue 26 item 5). A ":material/…" page icon would make the browser fetch an
#: SVG from fonts.gstatic.com on every page view (Streamlit's frontend builds that URL for favicons only; the
#: in-page Material icons come from the font Streamlit serves itself): an outside request, broken offline.
FAVICON = Path(__file__).resolve().parent / "assets" / "favicon.svg"

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
    """Name of the dataset chosen in the shared picker (a key of ``dpdash.common.data.DATASETS``)."""
    name = st.session_state.get(DATASET_KEY, DEFAULT_DATASET)
    return name if name in DATASETS else DEFAULT_DATASET


def load_active_dataset() -> Dataset:
    """The active bundled dataset (cached across sessions; bundled files never change at run time)."""
    return _load(active_dataset())


def dataset_picker(container=None, *, page_id: str = "") -> str:
    """The shared dataset picker: its short name in the link (``?dataset=adult``; the display name is accepted
    too), kept for the whole session, so it survives page switches."""
    target = container if container is not None else st.sidebar
    # A page switch drops the query string, and a bound widget then falls back to its default; carry the
    # last choice over by hand unless the new URL names a dataset itself (a shared link wins).
    remembered = st.session_state.get(_REMEMBERED_KEY)
    last_page = st.session_state.get(_LAST_PAGE_KEY)
    switched = last_page is not None and last_page != page_id
    if switched and remembered in DATASETS and DATASET_KEY not in st.query_params:
        st.session_state[DATASET_KEY] = remembered
    st.session_state[_LAST_PAGE_KEY] = page_id
    choice = token_choice("Shared dataset", DATASETS, key=DATASET_KEY, default=DEFAULT_DATASET, container=target,
                          help="Pages that work on a data table start from this dataset. Each page can also take an "
                               "upload. The link keeps the choice as a short name (adult, census, acs12).")
    st.session_state[_REMEMBERED_KEY] = choice
    return choice



#: Always on: the exact-entry boxes beside sliders lose their ± steppers (a log slider's linear step is
#: meaningless and the box is narrow); tab bars wrap onto a second line instead of scrolling, so every tab name
#: stays visible at 1280 px (the epsilon calculator has 9 tabs); metric values and labels wrap, never cut.
_BASE_CSS = """
[class*="__exact"] [data-testid="stNumberInputStepUp"],
[class*="__exact"] [data-testid="stNumberInputStepDown"] { display: none; }
[data-testid="stTabs"] [role="tablist"] { flex-wrap: wrap; overflow-x: visible; row-gap: 0.15rem; }
[data-testid="stTabs"] [role="tablist"] [data-testid="stTab"] { flex: 0 0 auto; }
[data-testid="stMetricValue"] > div, [data-testid="stMetricLabel"] p { white-space: normal; overflow-wrap: anywhere; }
"""

#: Presenter mode (issue 14 item 5): body text 18 px and up, headings and metrics larger, for the back of a room.
_PRESENT_CSS = """
html, body, [data-testid="stAppViewContainer"] { font-size: 18px; }
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li,
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p,
[data-testid="stWidgetLabel"] p, [data-testid="stAlertContainer"] p,
[data-testid="stTab"] p, [data-testid="stTable"] td, [data-testid="stTable"] th,
[data-testid="stSidebar"] p, [data-testid="stExpander"] summary p { font-size: 18px !important; }
[data-testid="stSidebar"] [data-testid="stPageLink"] p { white-space: normal; }
h1 { font-size: 2.6rem !important; } h2 { font-size: 2.0rem !important; } h3 { font-size: 1.6rem !important; }
[data-testid="stMetricValue"], [data-testid="stMetricValue"] [data-testid="stMarkdownContainer"] p {
  font-size: 2.4rem !important; }
[data-testid="stMetricLabel"], [data-testid="stMetricLabel"] * { font-size: 18px !important; }
[data-testid="stMetricDelta"] { font-size: 18px !important; }
/* Issue 25: every label and value a presenter reads, not only paragraphs: widget values (inputs, selects, radio and
   toggle labels, segmented chips, slider thumbs), buttons, tables; labels and chips wrap instead of being cut. */
[data-testid="stMain"] input, [data-testid="stMain"] textarea, [data-baseweb="select"] div,
[data-testid="stRadio"] label p, [data-testid="stCheckbox"] label p, [data-testid="stButtonGroup"] button p,
[data-testid^="stBaseButton"] p, [data-testid="stSliderThumbValue"], [data-testid="stSliderTickBarMin"],
[data-testid="stSliderTickBarMax"], [data-testid="stMarkdownContainer"] td,
[data-testid="stMarkdownContainer"] th, [data-testid="stMarkdownContainer"] code { font-size: 18px !important; }
[data-testid="stWidgetLabel"], [data-testid="stWidgetLabel"] * { white-space: normal !important;
  text-overflow: clip !important; overflow: visible !important; }
[data-testid="stButtonGroup"] > div { flex-wrap: wrap; }
[data-testid="stButtonGroup"] button p { white-space: normal; }
/* The 18 px root made the main column's rem side padding 90 px each side: at 1280 px, beside the sidebar, the page
   kept 800 px of its 980. 2rem gives a grid zoomed by 1.3 room for about 700 px of columns (issue 25). */
[data-testid="stMainBlockContainer"] { padding-left: 2rem !important; padding-right: 2rem !important; }
/* A data frame is drawn on a canvas in 14 px type: zoom it so its cells read at 18 px. */
[data-testid="stElementContainer"]:has([data-testid="stDataFrame"]) { zoom: 1.3; width: calc(100% / 1.3) !important; }
"""


@contextlib.contextmanager
def methodology(label: str = "How this is computed") -> Iterator[None]:
    """Method and explanation text: ``with methodology(): st.markdown(...)``.

    An expander, open in the normal view and folded away in presenter mode, so a projected page shows the
    answer, not the derivation (issue 14 item 5).
    """
    with st.expander(label, expanded=not presenter_mode(), icon=":material/menu_book:"):
        yield


def _styles() -> None:
    css = _BASE_CSS + (_PRESENT_CSS if presenter_mode() else "")
    st.html(f"<style>{css}</style>")


def keep_uploads_in_memory() -> None:
    """Let the web server hold an upload in memory up to the upload limit, never in a temporary file (issue 26
    item 3). Idempotent.

    Streamlit's upload route parses the multipart body with Starlette, whose parser puts each file into a
    ``SpooledTemporaryFile`` that moves to an unnamed file on disk past ``MultiPartParser.spool_max_size``
    (1 MB). Streamlit has no option for it, so the class attribute is raised above the largest body Streamlit
    accepts (``server.maxUploadSize`` plus a megabyte of multipart framing). Memory is not the worse for it: the
    route reads the whole file into memory right after (``upload.read()``), so a file was held twice either way.
    """
    from starlette.formparsers import MultiPartParser

    limit = (int(st.get_option("server.maxUploadSize")) + 1) * 1024 * 1024
    if MultiPartParser.spool_max_size < limit:
        MultiPartParser.spool_max_size = limit


def page_setup(title: str, *, icon: str | None = None, uses_dataset: bool = True) -> None:
    """Call first on every page: page config, chart theme and the shared sidebar (menu, presenter mode, dataset).

    ``uses_dataset=False`` on a page that never reads the shared dataset: the sidebar then says the page works
    on its own data instead of offering a picker that would change nothing.
    """
    favicon = icon if icon and not icon.startswith(":material/") else FAVICON  # see FAVICON
    st.set_page_config(page_title=f"{title} · Privacy/utility explorer", page_icon=favicon, layout="wide")
    install_log_filter()
    keep_uploads_in_memory()  # before the first upload of this server: an upload needs a page run first
    start_background_warmup()  # once per server: fills JAX's compilation cache so the first MST run is quick
    sanitise_link()  # before the first widget reads the URL
    register_template()
    with st.sidebar:
        _navigation()
        st.toggle("Presenter mode", key=PRESENT_KEY, bind="query-params",
                  help="Larger text and charts for a projector; method notes folded away. Kept in the link.")
        if uses_dataset:
            dataset_picker(st.sidebar, page_id=title)
            st.caption(DATASET_DESCRIPTIONS[active_dataset()])
        else:
            st.caption("This page works on its own data (entered or uploaded on the page); the shared dataset "
                       "is not used here.")
        restore_uploader()
    _styles()


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
    """Call last on every page: one dismissible notice naming the link values the page did not use.

    Issues 14 (honest links) and 17. Cheap: it does nothing unless the link changed since the last check.
    """
    restore_notice()
    link_notice()
