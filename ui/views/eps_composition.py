"""Epsilon calculator, Tab 2: composition (view: ``dpdash.epsilon.views.composition_view``).

Widgets, the list editor and rendering only. ``comp_mechanisms`` is shared with Tab 5 (its PLD profile).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpdash.accounting.conversions import conversion_note
from dpdash.accounting import composition as acc
from dpdash.epsilon import figures as ef
from dpdash.epsilon import verdicts as ev
from dpdash.epsilon import views as evw
from dpdash.epsilon import script as se
from ui import eps_codecs as ec
from ui.common import methodology
from ui.show import figure, say_problem, session_memo, verdict_box
from ui.text import md_escape
from ui.views.eps_common import (ended, CACHE, ENGINE_ERRORS, bind, encode_table, exports, pick, report, script_of,
                                 show_table, table_state)
from ui.widgets import delta_exponent, log_slider

PLD_BUTTON_LIMIT = 1000
COMP_DEFAULT = pd.DataFrame({
    "kind": ["laplace", "gaussian"], "epsilon": [0.2, None], "delta": [0.0, 0.0], "multiplier": [None, 10.0],
    "sigma": [None, None], "scale": [None, None], "sensitivity": [1, 1], "rho": [None, None], "count": [30, 20]})


# No UI inside a cached function (issue 12): the long PLD runs with a progress bar use ``session_memo`` instead
@st.cache_data(**CACHE)
def cached_curve(mechs: tuple, delta: float, ks: tuple, rules: tuple, with_pld: bool) -> pd.DataFrame:
    rs = tuple(r for r in rules if r != "pld" or with_pld)
    return acc.composition_curve(list(mechs), delta=delta, ks=list(ks), rules=rs, pld_points=12)


@st.cache_data(**CACHE)
def cached_table(mechs: tuple, delta: float, rules: tuple) -> pd.DataFrame:
    return acc.composition_table(list(mechs), delta=delta, rules=rules)


def comp_mechanisms() -> tuple[list[acc.Mechanism], str]:
    """The Composition tab's releases as ``accounting.Mechanism`` values (from session state: Tab 5 reads it too)."""
    mode = st.session_state.get("eps_comp_mode", "one")
    if mode == "one":
        kind = st.session_state.get("eps_comp_kind", "laplace")
        kmax = int(st.session_state.get("eps_comp_kmax", 1000))
        if kind == "gaussian":
            return [acc.gaussian(float(st.session_state.get("eps_comp_mult", 10.0)), count=kmax)], mode
        return [acc.laplace(float(st.session_state.get("eps_comp_eps", 0.1)), count=kmax)], mode
    return ec.mechanisms_from_frame(st.session_state.get("eps_comp_rows_current", COMP_DEFAULT)), mode


def _results(c2, ms, delta, ks, rules, trules, with_pld: bool, big_pld: bool):
    """Tab 2's curve and table (PLD of a long list behind its button, with a progress bar)."""
    with c2:
        if big_pld and with_pld:
            # the curve's 12 PLD points (resolution 1e-3) take about a seventh of the table's one at 1e-4
            bar = st.progress(0.0, text="Composing PLD…")
            curve, table = session_memo("eps_pld", (tuple(ms), delta, ks, rules, trules), lambda: (
                acc.composition_curve(list(ms), delta=delta, ks=list(ks), rules=rules, pld_points=12,
                                      progress=lambda f: bar.progress(0.15 * f, text=f"PLD curve (12 values of k)… "
                                                                                    f"{0.15 * f:.0%}")),
                acc.composition_table(list(ms), delta=delta, rules=trules,
                                      progress=lambda f: bar.progress(0.15 + 0.85 * f, text=f"PLD table (resolution "
                                                                      f"1e-4)… {0.15 + 0.85 * f:.0%}"))))
            bar.empty()
        else:
            with st.spinner("Composing…"):
                curve = cached_curve(tuple(ms), delta, ks, rules, with_pld)
                table = cached_table(tuple(ms), delta, trules)
    return curve, table


def _editor(c2) -> None:
    base = table_state("eps_comp_rows", COMP_DEFAULT)
    edited = c2.data_editor(
        base, key="eps_comp_editor", num_rows="dynamic", width="stretch", placeholder="",  # blank, never "None"
        column_config={"kind": st.column_config.SelectboxColumn("mechanism", options=list(acc.KINDS), required=True,
                                                                format_func=lambda k: ev.MECH_WORDS.get(k, k)),
                       "epsilon": st.column_config.NumberColumn("ε"), "delta": st.column_config.NumberColumn("δ"),
                       "multiplier": st.column_config.NumberColumn("σ/Δ (Gaussian)"),
                       "sigma": st.column_config.NumberColumn("σ (discrete Gaussian)"),
                       "scale": st.column_config.NumberColumn("scale (discrete Laplace)"),
                       "rho": st.column_config.NumberColumn("ρ (zCDP)"),
                       "count": st.column_config.NumberColumn("releases", min_value=1, step=1)})
    encode_table("eps_comp_rows", edited, COMP_DEFAULT)
    st.session_state["eps_comp_rows_current"] = edited


@st.fragment
def tab_composition(outputs: bool = True) -> None:
    """Tab 2 (controls and the list editor always; curves and table only when ``outputs``)."""
    st.subheader("Composition: total privacy loss after many releases")
    top = st.container()
    with methodology():
        st.markdown(f"zCDP line: {conversion_note()}")
        st.markdown("All curves are valid upper bounds. PLD is the tightest numerical bound. Optimal composition is "
                    "the best possible given only each mechanism's (ε, δ). Basic: Thm 2.1.4; advanced: Thm 2.1.5; "
                    "optimal: Kairouz–Oh–Viswanath 2015 / Murtagh–Vadhan 2016; zCDP: Thms 2.2.3–2.2.5; RDP: Mironov "
                    "2017; PLD: Google's dp-accounting. Each Gaussian-type mechanism is charged δ/(2K) of the target "
                    "δ under the (ε, δ) rules, K being their number.")
    c1, c2 = st.columns([2, 5])
    mode = pick("Mode", {"one": "One mechanism, repeated", "list": "A list"}, key="eps_comp_mode", widget="radio",
                container=c1, horizontal=True)
    if mode == "one":
        kind = pick("Mechanism", {"laplace": "Laplace", "gaussian": "Gaussian"}, key="eps_comp_kind", container=c1)
        if kind == "laplace":
            log_slider("ε per release", key="eps_comp_eps", value=0.1, container=c1)
        else:
            c1.number_input("Noise multiplier σ/Δ₂", min_value=0.05, max_value=1e4, value=10.0, key="eps_comp_mult",
                            **bind(), help="Noise standard deviation divided by the sensitivity: larger is more "
                                           "private.")
        c1.number_input("Number of releases k", min_value=1, max_value=10_000, value=1000, step=1,
                        key="eps_comp_kmax", **bind(), help="The chart runs from 1 to k; the table is at k.")
    else:
        _editor(c2)
    delta = delta_exponent(key="eps_comp_delta", container=c1)
    c1.markdown("Rules to compare")  # one column: the labels stay whole in the narrow control column
    rules = tuple(r for r in acc.ALL_RULES
                  if c1.checkbox(acc.RULE_LABELS[r], value=r != "advanced_drv", key=f"eps_comp_r_{r}", **bind()))
    log_axes = c1.checkbox("Log axes", value=True, key="eps_comp_log", **bind())
    if not outputs:
        return
    try:
        ms, _ = comp_mechanisms()
    except ValueError as e:
        c2.error(f"{e}. Each row needs the parameters of its mechanism: Laplace and pure ε-DP → ε; (ε, δ)-DP → ε "
                 "and δ; Gaussian → σ/Δ; discrete Laplace → scale and a whole-number sensitivity; discrete "
                 "Gaussian → σ and a whole-number sensitivity; zCDP → ρ.")
        return
    total = sum(m.count for m in ms)
    ks = tuple(acc.default_ks(total, 50).tolist())
    big_pld = "pld" in rules and total > PLD_BUTTON_LIMIT
    with_pld = "pld" in rules
    if big_pld:
        # the button approves PLD for this list and δ only; any change asks again (spec §6: behind a button)
        pld_key = (tuple(ms), delta)
        if c2.button("Compute PLD (more than 1,000 mechanisms)", key="eps_comp_pldbtn"):
            st.session_state["eps_comp_pld_ok"] = pld_key
        with_pld = st.session_state.get("eps_comp_pld_ok") == pld_key
        if not with_pld:
            c2.info("PLD for more than 1,000 mechanisms runs only when you press the button above.")
    trules = tuple(r for r in rules if r != "pld" or with_pld)
    try:
        curve, table = _results(c2, ms, delta, ks, rules, trules, with_pld, big_pld)
    except ENGINE_ERRORS as e:
        say_problem(ended(e), "Change the list or δ.", container=c2)
        return
    view = evw.composition_view(curve, table, mechanisms=ms, delta=delta, rules=trules, log_axes=log_axes)
    verdict_box(view.verdicts, top)
    fig = ef.make_composition_figure(curve, log_axes=log_axes, delta=delta)
    with c2:
        figure(fig, key="eps_comp_fig", filename="composition.html", alt=view.figures["alt"],
               caption="Each line: total ε at δ after k releases under one rule. Grey band: the best valid bound.")
    people = view.tables["composition"]
    valid = people["valid here"] == "yes"  # invalid rules are named below the table, with the reason
    show_table(people[valid].drop(columns=["valid here", "why not valid"]),
               {"total ε": "{:.4g}", "δ": ev.power_of_ten, "share of the basic sum": "{:.4g}"})
    if (~valid).any():
        st.caption("Not valid here: " + "; ".join(f"{r} ({md_escape(n, max_len=120)})" for r, n in
                                                  zip(people.loc[~valid, "rule"], people.loc[~valid, "why not valid"])))
    exports("eps_comp", table=people, name="composition")
    report(view, "eps_comp_art", figures=[("Total ε against the number of releases", fig)],
           sources=["Thms 2.1.4, 2.1.5, 2.2.3–2.2.5", "Kairouz, Oh & Viswanath 2015; Murtagh & Vadhan 2016",
                    "Mironov 2017 (Rényi DP)", "Google dp-accounting (PLD)"],
           script=script_of(se.composition_script, view))
