"""What every epsilon-calculator tab module shares: the control defaults, option words, link-bound tables, the
table display and the report/script of a tab view (``ui.views.eps_*``; the page holds only the header and tabs).

Widgets, layout and calls only: numbers and sentences come from ``dpdash.epsilon.views``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd
import streamlit as st

from dpdash.accounting import composition as acc
from dpdash.common.view import TabView
from ui import eps_codecs as ec
from ui.show import table as results_table
from ui.exports import download_csv
from ui.show import take_away
from ui.widgets import choice

SEED = "Rogers 2017, *Leveraging Privacy in Data Analysis* (seed 002_802572da4c9a19ad.txt)"
SEED_PLAIN = SEED.replace("*", "")
CACHE = dict(max_entries=256, show_spinner=False)
MECH_FMT = {"laplace": "Laplace", "gaussian": "Gaussian", "discrete_laplace": "Discrete Laplace",
            "discrete_gaussian": "Discrete Gaussian"}
QUERY_FMT = {"count": "Count", "sum": "Sum", "mean": "Mean", "histogram": "Histogram"}

#: What a compute section catches from the engine: its documented ValueError, and arithmetic edges it reports.
ENGINE_ERRORS = (ValueError, ArithmeticError)


def bind(**kw) -> dict:
    return dict(bind="query-params", **kw)


def pick(label: str, options: dict[str, str], *, key: str, widget: str = "selectbox", container=None,
         help: str | None = None, horizontal: bool = False, disabled: bool = False) -> str:
    """A control with fixed options (token → label): ``ui.widgets.choice`` (short tokens in the link, display
    labels accepted), its default the page's own (``DEFAULTS``)."""
    return choice(label, options, key=key, widget=widget, container=container, help=help, horizontal=horizontal,
                  disabled=disabled, default=DEFAULTS.get(key))


#: Default value of every URL-bound control (bound widgets cannot be cleared from the URL, only reset).
DEFAULTS: dict[str, object] = {
    "eps_epsilon": 1.0, "eps_n1_query": "count", "eps_n1_neigh": "replace", "eps_n1_usecol": False,
    "eps_n1_lower": 0.0, "eps_n1_upper": 100.0, "eps_n1_n": 1000, "eps_n1_mech": "laplace", "eps_n1_rule": "analytic",
    "eps_n1_fix": "privacy", "eps_n1_delta": -6, "eps_n1_rho": 0.1, "eps_n1_conf": 95.0, "eps_n1_scale": 1.0,
    "eps_n1_hw": 3.0,
    "eps_comp_mode": "one", "eps_comp_kind": "laplace", "eps_comp_eps": 0.1, "eps_comp_mult": 10.0,
    "eps_comp_kmax": 1000, "eps_comp_delta": -6, "eps_comp_log": True,
    **{f"eps_comp_r_{r}": r != "advanced_drv" for r in acc.ALL_RULES},
    "eps_b_mode": "accuracy_first", "eps_b_rule": "basic", "eps_b_delta": -6, "eps_b_reserve": 0, "eps_b_joint": False,
    "eps_b_eps": 1.0, "eps_b_obj": "equal_ratio",
    "eps_a_seq": "constant", "eps_a_const": 0.01, "eps_a_g0": 0.1, "eps_a_ratio": 0.99, "eps_a_lo": 0.001,
    "eps_a_hi": 0.02, "eps_a_seed": 0, "eps_a_r": 50, "eps_a_s": 10.0, "eps_a_paste": "0.1, 0.1, 0.05, 0.2",
    "eps_a_count": 2000, "eps_a_epsg": 1.0, "eps_a_delta": -6, "eps_a_n": 10_000, "eps_a_rule": "basic",
    "eps_r_eps": 1.0, "eps_r_hasdelta": False, "eps_r_delta": -6, "eps_r_prior": 10, "eps_r_shape": "generic",
    "eps_r_mu": 1.0, "eps_r_pld": False,
    "eps_w_n": 6400, "eps_w_beta": 0.05, "eps_w_noise": "gaussian",
    "eps_t_test": "gof", "eps_t_d": 4, "eps_t_p0mode": "uniform", "eps_t_p0": "0.5, 1/6, 1/6, 1/6", "eps_t_shift": "",
    "eps_t_n": 10_000.0, "eps_t_priv": "rho", "eps_t_rho": 0.00125, "eps_t_eps": 1.0, "eps_t_alpha": 0.05,
    "eps_t_trials": 1000, "eps_t_seed": 0, "eps_t_r": 2, "eps_t_c": 2, "eps_t_pi1": "2/3, 1/3", "eps_t_pi2": "1/2, 1/2",
    "eps_t_ishift": "", "eps_t_sweep": "n", "eps_t_points": 3,
    "eps_m_alpha": 0.05, "eps_m_eps": 0.01, "eps_m_n": 10_000, "eps_m_opt": True, "eps_m_beta": 0.01,
    "eps_m_gamma": 0.01, "eps_m_range": 2**20, "eps_m_cn": 27254, "eps_m_ca": 1.0, "eps_m_cb": 0.05,
    "eps_m_cg": 2, "eps_m_cgam": 1521, "eps_m_ck": "pure",
}


def reset_defaults() -> None:
    """Put every eps_ control back to its default (bound widgets then drop out of the URL) and forget tables."""
    for k in [k for k in st.session_state.keys() if str(k).startswith("eps_") and k not in DEFAULTS and k != "eps_tab"]:
        del st.session_state[k]
    for k, v in DEFAULTS.items():
        st.session_state[k] = v
    for k in ("eps_comp_rows", "eps_b_rows"):  # the only unbound (table) parameters
        if k in st.query_params:
            del st.query_params[k]


# =========================================================================== URL-encoded tables
def table_state(key: str, default: pd.DataFrame) -> pd.DataFrame:
    """Base frame for a data editor: from the URL (``key`` query parameter, bounded JSON) or the default."""
    base_key = f"{key}_base"
    if base_key not in st.session_state:
        decoded = ec.decode_table(st.query_params.get(key), list(default.columns))
        if decoded.problem:
            st.warning(f"The link's table could not be used ({decoded.problem}); showing the default table.")
        df = decoded.frame if decoded.frame is not None else default
        st.session_state[base_key] = df.reset_index(drop=True)
    return st.session_state[base_key]


def encode_table(key: str, df: pd.DataFrame, default: pd.DataFrame | None = None) -> None:
    """Mirror an edited table in the link; the default table stays out of it (issue 25: the budget planner wrote
    its default table into every link), and a table too long for a link is left out of it, and the page says so."""
    payload = ec.encode_table(df)
    if default is not None and payload == ec.encode_table(default.reset_index(drop=True)):
        if key in st.query_params:
            del st.query_params[key]
        return
    if len(payload) > ec.MAX_LINK_CHARS:
        if key in st.query_params:
            del st.query_params[key]
        st.caption(f"This table is too long to travel in the link ({len(payload):,} characters; at most "
                   f"{ec.MAX_LINK_CHARS:,}): share the parameters file (JSON download) instead.")
        return
    if st.query_params.get(key) != payload:
        st.query_params[key] = payload


def show_table(df: pd.DataFrame, formats: dict | None = None, **kw) -> None:
    """``st.dataframe`` with numbers formatted and missing values shown as "—" (Streamlit would print "None"
    whatever the Styler says, so a column with gaps is shown as text; the CSV keeps the numbers)."""
    formats = formats or {}
    shown = df.copy()
    for c in shown.columns:
        missing = shown[c].isna()
        if missing.any():
            f = formats.get(c, "{}")
            shown[c] = [("—" if m else (f.format(v) if isinstance(f, str) else f(v)))
                        for v, m in zip(shown[c], missing)]
    numeric = {c: f for c, f in formats.items() if c in shown and not shown[c].isna().any()
               and pd.api.types.is_numeric_dtype(shown[c])}
    results_table(shown.style.format(numeric), hide_index=True, width="stretch", **kw)


def exports(prefix: str, *, table: pd.DataFrame | None, name: str, what: str = "table") -> None:
    """The tab's table as CSV, drawn where it is called: right under the table it downloads, its label naming it
    where a tab has more than one (issue 25: two "Download table (CSV)" buttons far from their tables). Its
    parameters leave through "Settings (JSON)" under "Take this away", which the sidebar can restore."""
    if table is not None:
        download_csv(table, filename=f"{name}.csv", key=f"{prefix}_csv", label=f"Download {what} (CSV)")


def script_of(builder: Callable[..., str], view: TabView) -> str:
    """The tab's "Copy as code" script from the view's keyword arguments."""
    return builder(**view.script)


def report(view: TabView, key: str, *, sources: Sequence[str] = (), figures: Sequence = (),
           script: str | None = None) -> None:
    """Report, Settings and Copy as code of the open tab, all from its view (``ui.show.take_away``)."""
    take_away(view, key=key, page="epsilon_calculator", title="Epsilon calculator", sources=[SEED_PLAIN, *sources],
              figures=figures, script=script)


def ended(err: Exception | str) -> str:
    """An engine message as a sentence (one full stop), so a hint after it reads as the next sentence: "…; got -1.
    Expected per row: …" (it read "got -1 Expected per row")."""
    text = str(err).strip()
    return text if text.endswith((".", "!", "?")) else text + "."
