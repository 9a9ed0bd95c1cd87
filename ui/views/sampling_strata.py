"""Sampling designer, Tab 5: stratified sampling and allocation (§6, Theorem 11).

Controls and layout only; everything shown comes from :func:`dpdash.sampling.views.strata_view`.
"""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from dpdash.sampling import core as sp
from dpdash.sampling import figures as sf
from dpdash.sampling import views as vw
from dpdash.sampling import script as ss
from ui import show
from ui.common import methodology, presenter_mode
from ui.text import md_escape
from ui.views import sampling_common as sc
from ui.widgets import choice, multi_choice, seed_input

MAX_STRATA = 200
LABEL = sp.STRATA_COLUMN_LABELS   # the strata editor's headers
PRESET_NAMES = {"business": "Synthetic business frame", "allocation": "Allocation example"}
PRESETS = {
    "business": pd.DataFrame({
        "stratum": ["small", "medium", "large"], "N_h": [3000, 1000, 250], "S_h": [2.0, 12.0, 150.0],
        "mean_h": [4.0, 25.0, 400.0], "lo_h": [0.0, 10.0, 100.0], "hi_h": [10.0, 100.0, 2000.0],
        "eps_h": [""] * 3}),
    "allocation": pd.DataFrame({
        "stratum": ["A", "B", "C", "D"], "N_h": [4000, 1500, 400, 100], "S_h": [8.0, 30.0, 150.0, 800.0],
        "mean_h": [20.0, 100.0, 600.0, 2500.0], "lo_h": [0.0] * 4, "hi_h": [5000.0] * 4,
        "eps_h": [""] * 4}),
}
PRESET_M = {"business": 120, "allocation": 300}
#: Allocation methods: link token (the engine's name) → label (older links wrote the label, so it stays); the chips
#: get a wider column (they were cut, "Neyma…", at 1280 px in presenter mode, issue 25).
METHODS = {"neyman": "Neyman (take-all)", "proportional": "proportional", "privacy_aware": "privacy-aware (derived)"}
KEYS = {"sd_preset", "sd_alloc_m", "sd_U", "sd_mmin", "sd_methods", "sd_logy", "sd_outside", "sd_draw_seed"}
STRATA_SOURCE = "sd__strata_source"   # not a widget key: the strata table's source in the last run
DRAW_STATE = "sd__draw_result"   # not a widget key: the last randomised draw (seed, m, N_h, sizes)


# a view is frozen and read-only; it holds read-only mappings, which cache_data cannot pickle
@st.cache_resource(max_entries=64, show_spinner=False, scope="session")
def c_view(eps: float, target: float, strata_key: tuple, _strata: dict, m: int, U: float, m_min: int,
           methods: tuple, within: bool, words: str, draw: tuple | None):
    return vw.strata_view(epsilon=eps, target=target, strata=_strata, m=m, value_max=U, m_min=m_min,
                          methods=methods, within_bounds=within, strata_words=words, draw=draw)


#: Presenter mode shows the design's columns only: the grid is zoomed by 1.3 there (its 14 px cells read at 18 px)
#: and at 1280 px all seven headers needed about 850 px of the 700 the page has, so the grid scrolled sideways and
#: cut headers (issue 25). The value columns (mean and range, read by the sensitivity panel) keep their values; the
#: grid's column menu shows them, and so does the normal view.
PRESENTER_COLUMNS = ("stratum", "N_h", "S_h", "eps_h")
EDITS = "sd__strata_edits"   # not a widget key: {strata source: (presenter mode, the table it started from, edits)}


def _editor(base: pd.DataFrame, base_name: str) -> pd.DataFrame:
    """The strata editor. Its identity (a dynamic editor's includes its column order) differs between the normal
    view and presenter mode, so each mode has its own key and starts from the other mode's last edits: switching
    presenter mode keeps what was typed."""
    present = presenter_mode()
    mode, start, last = st.session_state.get(EDITS, {}).get(base_name, (present, base, base))
    if mode != present:
        start = last
    edited = st.data_editor(
        start, key=f"sd_strata_{hashlib.sha1(base_name.encode()).hexdigest()[:8]}{'_present' if present else ''}",
        num_rows="dynamic", width="stretch", hide_index=True, column_order=PRESENTER_COLUMNS if present else None,
        # an empty cell (a row just added, a value not given) reads blank, never "None" (issue 14 item 2)
        placeholder="", alt="Strata table: one row per stratum with its size, spread, mean, value range and ε",
        # headers from the engine, so strata_from_table's messages name the columns the user sees
        column_config={
            "stratum": st.column_config.TextColumn(LABEL["stratum"]),
            "N_h": st.column_config.NumberColumn(LABEL["N_h"], min_value=1, step=1, help="Stratum size (public)."),
            "S_h": st.column_config.NumberColumn(LABEL["S_h"], min_value=0.0,
                                                 help="Design standard deviation of the value in the stratum."),
            "mean_h": st.column_config.NumberColumn(LABEL["mean_h"], help="Stratum mean (sensitivity panel)."),
            "lo_h": st.column_config.NumberColumn(LABEL["lo_h"], help="Smallest possible value in the stratum."),
            "hi_h": st.column_config.NumberColumn(LABEL["hi_h"], help="Largest possible value in the stratum."),
            # text, so a blank cell is the global ε and a typed one is checked by strata_from_table
            "eps_h": st.column_config.TextColumn(LABEL["eps_h"], default="",
                                                 help="Blank = the global ε; or a number ≥ 0 for this stratum."),
        })
    st.session_state[EDITS] = {base_name: (present, start, edited)}   # the current source only: bounded
    if present:
        st.caption("Presenter mode shows the design columns; the mean and value range of each stratum (used by "
                   "the sensitivity panel) are kept, and the normal view shows them.")
    return edited


def table(df) -> None:
    """A result table that wraps instead of scrolling: a static table up to 40 rows (the canvas grid cut its last
    columns at 1280 px in presenter mode, issue 25); beyond, ``ui.show.table`` (static in presenter mode too)."""
    rows = len(df.data) if hasattr(df, "data") else len(df)
    if rows <= 40:
        st.table(df)
    else:
        show.table(df, hide_index=None, width="stretch")


def _draw(N: tuple, m: int, eps: float, seed: int) -> None:
    sizes = sp.proportional_allocation(N, rate=m / sum(N), epsilon=eps, rng=seed).draw
    st.session_state[DRAW_STATE] = (seed, m, N, tuple(int(x) for x in sizes))


@st.fragment
@sc.guarded
def tab_strata(eps: float, target: float, frame: sp.FrameSummary | None, frame_id: str | None,
               outputs: bool = True) -> None:
    """Tab 5 (table and every control always; cards, allocations and plots only when ``outputs``).

    Every control is drawn in every run, in the same place whether the tab is open or not: a control Streamlit
    does not draw loses its link parameter and its value, so the toggles and the seed placed among the outputs
    left a link copied on another tab (issue 25). The outputs go into containers made before those controls.
    """
    st.subheader("Stratified sampling: how many to sample per stratum (§6)")
    slot = st.container()
    use_frame = frame is not None and frame.strata is not None
    # disabled, not hidden, while a frame fills the table: it keeps its value and its link for when the frame goes
    preset = choice("Preset", PRESET_NAMES, key="sd_preset", disabled=use_frame,
                    help="The uploaded frame fills the strata table." if use_frame else None)
    if use_frame:
        base_name, base = f"frame-{frame_id}", vw.frame_to_editor(frame)
        st.caption("The strata table was filled from your uploaded frame.")
        default_m = min(120, int(base["N_h"].sum()))
    else:
        base_name, base = PRESET_NAMES[preset], PRESETS[preset]
        default_m = PRESET_M[preset]
    # m and U default from the strata: when the source changes (preset, frame), they follow it; a link's values
    # are kept on the first run (no previous source yet)
    prev = st.session_state.get(STRATA_SOURCE)
    if prev is not None and prev != base_name:
        st.session_state["sd_alloc_m"] = default_m
        st.session_state["sd_U"] = 0.0
    st.session_state[STRATA_SOURCE] = base_name
    # the same place in both modes (a narrower column in presenter mode made the grid scroll sideways at 1280 px)
    edited = _editor(base, base_name)
    table_problem = st.container()
    strata = None
    if outputs:
        try:
            strata = sp.strata_from_table(pd.DataFrame(edited), epsilon=eps, max_strata=MAX_STRATA)
        except ValueError as exc:
            table_problem.warning(f"The strata table cannot be used: {md_escape(exc, max_len=300)}")
    c1, c2, c3 = st.columns(3)
    # a default only where the state holds none (passing both makes Streamlit warn)
    m = int(c1.number_input("Total sample size m", min_value=1, max_value=10**7, step=1, key="sd_alloc_m",
                            bind="query-params",
                            **({} if "sd_alloc_m" in st.session_state else {"value": default_m})))
    if strata is not None and m > int(strata["N_h"].sum()):
        total_N = int(strata["N_h"].sum())
        c1.warning(f"m exceeds the population ({total_N:,}); using m = {total_N:,}.")
        m = total_N
    U_in = float(c2.number_input("Value bound U (0 = largest in table)", min_value=0.0, max_value=1e12,
                                 key="sd_U", bind="query-params",
                                 **({} if "sd_U" in st.session_state else {"value": 0.0}),
                                 help="Values are clipped to [0, U] before the private mean; 0 uses the largest "
                                      "value in the strata table."))
    m_min = int(c3.number_input("Minimum per stratum", min_value=1, max_value=10, value=1, step=1, key="sd_mmin",
                                bind="query-params"))
    # a row of its own: beside the number boxes the chips were cut ("Neyma…") at 1280 px in presenter mode
    methods = tuple(multi_choice("Allocation methods", METHODS, key="sd_methods"))
    problem = vw.strata_feasible(strata["N_h"], m=m, m_min=m_min) if strata is not None else None
    if problem:
        st.warning(problem)
    # greyed out while the open tab has nothing for them to change (their value and link are kept)
    idle = outputs and (strata is None or bool(problem))
    outside = st.toggle("Sensitivity: allow the added value outside its stratum's bounds", value=False,
                        key="sd_outside", bind="query-params", disabled=idle)
    cc = st.columns([1, 2])
    cards = cc[0].container()
    seed = seed_input(key="sd_draw_seed", value=0, label="Seed for a random draw", container=cc[0],
                      disabled=idle)
    draw_slot = cc[0].container()
    allocations = st.container()   # heading, assumptions, tables and the allocation chart, above the Log scale
    log_y = st.toggle("Log scale", value=False, key="sd_logy", bind="query-params", disabled=idle or not methods,
                      help="Log scale for the variance chart." if methods else "Choose an allocation method.")
    rest = st.container()
    if not outputs or idle:
        return
    N = strata["N_h"]
    U = U_in if U_in > 0 else float(max(strata["hi_h"].max(), 1e-9))
    if U_in <= 0:   # the value in use, beside the control that reads 0
        c2.caption(f"Using U = {vw.g4(U)}, the largest value in the table.")
    got = st.session_state.get(DRAW_STATE)
    draw = (got[0], got[3]) if got and got[1] == m and got[2] == tuple(N) else None
    words = "uploaded frame" if use_frame else base_name
    key = (tuple(N), tuple(strata["S_h"]), tuple(strata["mean_h"]), tuple(strata["lo_h"]), tuple(strata["hi_h"]),
           tuple(strata["eps_h"]), tuple(strata["names"]))
    view = c_view(eps, target, key, strata, m, U, m_min, methods, not outside, words, draw)
    with slot:
        show.verdict_box(view.verdicts)
    with cards:
        sc.groups(view, which=(0,))
    with draw_slot:
        # the callback stores the draw before the rerun the click causes, so the view shows it at once
        st.button("Draw an allocation", key="sd_draw", on_click=_draw, args=(tuple(N), m, eps, seed),
                  help="Draw one randomised-rounding allocation with this seed (Theorem 11's design).")
        if view.figures["draw"]:
            st.markdown(view.figures["draw"])
    with cc[1]:
        sc.calibration(view)
    shown: list = []
    with allocations:
        _allocations(view, methods, shown)
    if methods:
        with rest:
            spec = view.figures["variance"]
            sc.chart(sf.make_variance_figure(view.tables["allocation"], log_y=log_y), spec, key="sd_fig_var",
                     filename="allocation_variance", shown=shown)
    with rest:
        _sensitivity(view, shown)


def _allocations(view, methods: tuple, shown: list) -> None:
    """The allocation comparison down to its first chart (the variance chart follows the Log scale toggle)."""
    st.markdown("#### Allocations and the error of the private stratified mean " + sc.BADGE["derived"])
    with methodology("Assumptions of the allocation comparison"):
        st.markdown(
            "The privacy-aware allocation is **our formulation** of the paper's open question (§6.1, Eqs. (3)–(5); "
            "Erratum E13). Assumptions: stratum sizes N_h are public; the design SDs S_h come from historic data, "
            "not from the population sampled (otherwise the design is data-dependent — see the sensitivity panel); "
            "the allocation is fixed in advance; values are clipped to [0, U]. Each stratum releases its mean plus "
            "Laplace noise of scale U/(m_h·λ_h), where λ_h = log(1 + (N_h/m_h)·(e^ε_h − 1)) is the per-record ε "
            "that Theorem 2 allows inside the stratum. This protects a record's value within its stratum; it is "
            "weaker than the paper's stratified DP (Definition 10), which also hides which stratum a person is in.")
    if methods:
        # stacked, full width: side by side the tables' last columns were cut at 1280 px (issue 25)
        table(view.tables["allocation_wide"])
        table(view.tables["totals"].style.format("{:.4g}"))
        spec = view.figures["allocation"]
        sc.chart(sf.make_allocation_figure(spec["table"]), spec, key="sd_fig_alloc", filename="allocation_sizes",
                 shown=shown)


def _sensitivity(view, shown: list) -> None:
    """The Neyman sensitivity panel, the paper's CBP example and the tab's take-away."""
    st.markdown("#### How sensitive is Neyman allocation to one person? " + sc.BADGE["derived"])
    sc.errors(view)
    sc.groups(view, which=(1,), per_row=4)
    spec = view.figures["shift"]
    st.caption(md_escape(spec["worst"], max_len=400))
    sc.chart(sf.make_shift_figure(spec["table"]), spec, key="sd_fig_shift", filename="neyman_sensitivity",
             shown=shown)
    with st.expander("The paper's County Business Patterns example (§6.2)"):
        spec = view.figures["cbp"]
        st.markdown(md_escape(spec["text"], max_len=600))
        table(spec["table"].set_index("stratum"))
        sc.chart(sf.make_cbp_figure(spec["table"]), spec, key="sd_fig_cbp", filename="cbp_example", shown=shown,
                 delta="change")
    sc.take_away(view, tab="strata", shown=shown,
                 script=ss.stratified_script(**view.script))
