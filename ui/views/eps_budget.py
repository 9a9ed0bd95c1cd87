"""Epsilon calculator, Tab 3: the budget planner (view: ``dpdash.epsilon.views.budget_view``).

Widgets, the statistics editor and rendering only; the plan's headline, verdict, table, bar and report come from
the one view.
"""

from __future__ import annotations

import dataclasses
import math

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dpdash.accounting.conversions import conversion_note
from dpdash.accounting import composition as acc
from dpdash.accounting import budget as bud
from dpdash.common.formatting import power_of_ten
from dpdash.epsilon import figures as ef
from dpdash.epsilon import views as evw
from dpdash.accounting import mechanisms as mech
from dpdash.epsilon import script as se
from dpdash.stratify import script_opendp as sopendp
from ui import eps_codecs as ec
from ui.common import methodology, presenter_mode
from ui.dossier import ReportTable, artefacts
from ui.show import cards, figure, fmt, report_summary, say_problem, verdict_box, where_the_data_lives
from ui.views.budget_compare import render_budget_comparison
from ui.views.eps_common import (CACHE, ENGINE_ERRORS, MECH_FMT, QUERY_FMT, SEED_PLAIN, bind, encode_table, ended,
                                 exports, pick, script_of, table_state)
from ui.widgets import delta_exponent, log_slider

OBJECTIVE_FMT = {"equal_ratio": "the same multiple of each target", "weighted_mse": "least weighted squared error"}
BUDGET_DEFAULT = evw.budget_default()
#: Mechanisms whose rows are pure ε-DP (their own δ is 0).
PURE = ("laplace", "discrete_laplace")

@st.cache_data(**CACHE)
def cached_plan(stats_: tuple, mode: str, rule: str, delta: float, reserve: float, joint, budget: float,
                objective: str):
    if mode == "accuracy_first":
        return bud.plan_accuracy_first(list(stats_), rule=rule, delta=delta, reserve_fraction=reserve,
                                       joint_confidence=joint)
    return bud.plan_budget_first(list(stats_), epsilon=budget, delta=delta, rule=rule, reserve_fraction=reserve,
                                 objective=objective)


def _hold_from_alloc() -> None:
    """PSI's "edit the error, re-split ε": an edited achieved ± becomes that statistic's hold ± (hold_at_half_width)."""
    edits = st.session_state.get("eps_b_alloc", {}).get("edited_rows", {})
    base = st.session_state["eps_b_rows_base"].copy()
    current = st.session_state.get("eps_b_rows_current", base)
    try:
        specs = ec.stats_from_frame(current)
    except ValueError:
        return
    for row, change in edits.items():
        if "achieved ±" in change and change["achieved ±"] and 0 <= int(row) < len(specs):
            try:
                held = bud.hold_at_half_width(specs[int(row)], float(change["achieved ±"]))
            except ENGINE_ERRORS:
                continue  # a non-positive or non-finite edit is ignored: the row keeps its target
            current = current.copy()
            current.loc[int(row), "hold ±"] = held.hold_half_width
            current.loc[int(row), "hold share"] = None
    st.session_state["eps_b_rows_base"] = current.reset_index(drop=True)
    for k in ("eps_b_editor", "eps_b_alloc"):
        st.session_state.pop(k, None)


#: Presenter mode zooms grids by 1.3 (18 px cells): at 1280 px the twelve columns needed 1,044 px of the page's 700
#: and scrolled sideways (issue 25), so it shows these; the others keep their values (the grid's column menu shows
#: them, and the normal view does). Same for the plan table.
PRESENTER_COLS = ["name", "query", "mechanism", "cells", "target ±", "confidence"]
PRESENTER_PLAN_COLS = ["name", "ε", "δ", "noise scale", "achieved ±", "target ±"]


def _editor(box) -> pd.DataFrame:
    present = presenter_mode()
    # other columns make another editor (a dynamic editor's identity includes them): it starts from the edits so far
    if st.session_state.get("eps__b_editor_present", present) != present and "eps_b_rows_current" in st.session_state:
        st.session_state["eps_b_rows_base"] = st.session_state["eps_b_rows_current"].reset_index(drop=True)
        st.session_state.pop("eps_b_editor", None)
    st.session_state["eps__b_editor_present"] = present
    base = table_state("eps_b_rows", BUDGET_DEFAULT)
    with box:
        st.markdown("**Statistics to release** (one row each; edit, add or delete rows)")
        edited = st.data_editor(
            base, key="eps_b_editor", num_rows="dynamic", width="stretch", placeholder="",  # blank, never "None"
            column_order=PRESENTER_COLS if present else None,
            column_config={
                "query": st.column_config.SelectboxColumn("query", options=list(QUERY_FMT), required=True,
                                                          format_func=lambda q: QUERY_FMT.get(q, q)),
                "mechanism": st.column_config.SelectboxColumn("mechanism", options=list(mech.MECHANISMS), required=True,
                                                              format_func=lambda m: MECH_FMT.get(m, m)),
                "confidence": st.column_config.NumberColumn("confidence", min_value=0.5, max_value=0.9999,
                                                            format="%.4g", width=None if present else "small"),
                "hold share": st.column_config.NumberColumn("hold share", min_value=0.0, max_value=0.99, width="small"),
                # narrow number columns; at 1280 px the last scroll into view (presenter mode shows six)
                **{c: st.column_config.NumberColumn(c, width="small") for c in ("L", "U", "n", "cells", "hold ±",
                                                                                 "weight")}})
        if present:
            st.caption("Presenter mode shows the main columns; L, U, n, hold ±, hold share and weight keep their "
                       "values, and the normal view shows them.")
    encode_table("eps_b_rows", edited, BUDGET_DEFAULT)
    st.session_state["eps_b_rows_current"] = edited
    return edited


@st.fragment
def tab_budget(outputs: bool = True) -> None:
    """Tab 3 (controls and the statistics editor always; the plan only when ``outputs``)."""
    st.subheader("Budget planner: how accurate can several statistics be under one budget?")
    top = st.container()
    with st.expander("Compare every composition rule and mechanism for k statistics", expanded=False):
        render_budget_comparison(key_prefix="eps_cmp_")
    with methodology():
        st.markdown("Accuracy first: the least privacy loss meeting every target. Budget first: the accuracy this "
                    "budget buys. Held statistics keep their ± while the rest is re-split (as in the Harvard PSI "
                    "budgeter); a reserve keeps part of the budget for later.")
    editor_box = st.container()  # the statistics table spans the page, so all its columns show at 1280 px
    c1, c2 = st.columns([2, 5])
    mode = pick("Mode", evw.MODE_WORDS, key="eps_b_mode", widget="radio", container=c1)
    rule = pick("Composition rule", {r: acc.RULE_LABELS.get(r, r) for r in bud.PLAN_RULES}, key="eps_b_rule",
                container=c1)
    if rule == "zcdp":
        c1.caption(conversion_note())  # which zCDP → (ε, δ) conversion the plan's ε used (issue 23)
    edited = _editor(editor_box)
    # δ plays no part in a plan of pure ε rows summed by the basic rule (issue 25): shown, but disabled
    pure = rule == "basic" and "mechanism" in edited and edited["mechanism"].dropna().isin(PURE).all()
    delta = delta_exponent(key="eps_b_delta", container=c1, disabled=bool(pure),
                           help="Not used: every row is pure ε-DP (Laplace) and the basic rule adds ε, so the plan "
                                "spends no δ." if pure else None)
    reserve = c1.slider("Reserve (%)", 0, 90, 0, key="eps_b_reserve", **bind()) / 100
    # controls that do not apply in this mode are not drawn (issue 12): joint confidence is an accuracy-first
    # option; the total ε and the objective exist only in budget-first, and weighted MSE only for additive rules
    joint, budget, objective = False, 1.0, "equal_ratio"
    if mode == "accuracy_first":
        joint = c1.checkbox("Joint confidence", key="eps_b_joint", **bind(),
                            help="Every statistic within its ± at the same time (not each on its own).")
    else:
        budget = log_slider("Total ε (budget first)", key="eps_b_eps", value=1.0, container=c1)
        if rule in bud.ADDITIVE_RULES:
            objective = pick("Split the budget to", OBJECTIVE_FMT, key="eps_b_obj", container=c1)
        else:
            c1.caption("Under this rule the budget is split so every statistic is the same multiple of its target "
                       "(the weighted-error split needs the basic or zCDP rule).")
    if not outputs:
        return
    hint = ("Expected per row: a unique name, query count/sum/mean/histogram, L < U, n for a mean, target ± > 0, "
            "and at most one of hold ± / hold share (hold share needs the basic or zCDP rule).")
    try:
        specs = tuple(ec.stats_from_frame(edited))  # messages are Markdown-safe (user text escaped)
    except ValueError as e:
        c2.error(f"{e}. {hint}")
        return
    try:
        jc = float(min(s.confidence for s in specs)) if joint and specs else None
        plan = cached_plan(specs, mode, rule, delta, reserve, jc, budget, objective)
    except ENGINE_ERRORS as e:  # the rows, rule and δ chosen cannot be planned: a state the user can change
        say_problem(ended(e), hint, container=c2, level="warning")
        return
    view = evw.budget_view(plan, statistics=[dataclasses.asdict(x) for x in specs], shares=bud.budget_shares(plan),
                           mode=mode, rule=rule, delta=delta, reserve=reserve, joint_confidence=jc, budget=budget,
                           objective=objective)
    verdict_box(view.verdicts, top)
    cards(view.headlines, top)
    alloc = view.tables["plan"]
    st.caption("Each row is that statistic released alone: ε and δ of its own noise (Laplace rows are pure ε, "
               "δ = 0), and ρ its zCDP. Edit **achieved ±** to hold a statistic at that error and re-split the rest.")
    st.data_editor(alloc, key="eps_b_alloc", width="stretch", hide_index=True, on_change=_hold_from_alloc,
                   column_order=([c.replace("δ", "ρ") if view.figures["unit"] == "ρ" else c
                                  for c in PRESENTER_PLAN_COLS] if presenter_mode() else None),
                   placeholder="—", disabled=[c for c in alloc.columns if c != "achieved ±"],
                   column_config={c: st.column_config.NumberColumn(c, format="%.4g") for c in
                                  ("ε", "ρ", "δ", "noise scale", "achieved ±", "target ±", "achieved / target")})
    exports("eps_b", table=alloc, name="budget_plan")
    shares, unit = view.figures["shares"], view.figures["unit"]
    figs = []
    with c2:
        st.markdown(f"**{view.figures['totals']}**")
        if shares is None:
            st.info("No budget chart: the plan has no finite total (see the message above).")
        else:
            figs = [("Each statistic's share of the budget", ef.make_budget_figure(shares))]
            figure(figs[0][1], key="eps_b_fig", filename="budget_shares.html",
                   caption=("Each statistic's share of the budget: the bars add up to the budget, in "
                            f"{unit}. " + ("Under this rule the total is a composition, not a sum: each bar is "
                                           "the composed total split in proportion to the statistic's own ε. "
                                           if shares.proportional else "") + "White: not spent; grey: reserve."),
                   alt=f"One stacked bar of length {unit} = {fmt(shares.budget)}: "
                       + ", ".join(f"{nm} {fmt(v)}" for nm, v in zip(shares.names, shares.values))
                       + (f", not spent {fmt(shares.unused)}" if shares.unused > 0 else "")
                       + (f", reserve {fmt(shares.reserve)}" if shares.reserve > 0 else "") + ".")
    artefacts(report_summary_of(view, figures=figs, script=script_of(se.budget_script, view)), key="eps_b_art")
    opendp = _opendp_script(specs, plan)
    if opendp:
        where_the_data_lives(opendp, key="eps_b", filename="budget_plan_opendp.py")


REPORT_SOURCES = ("Thms 2.1.4, 2.2.3–2.2.5", "Harvard PSI budgeter (hold, reserve)")
#: The report's budget bar: a row of its own, its legend below by row number, seven a line (at the page's 600 × 380 the
#: legend of 25 statistics was cut after 18)
REPORT_FIGURE_SIZE = (760, 230)


def report_summary_of(view, *, figures=(), script: str | None = None):
    """The budget planner's report (issue 34 item 5: a 25-statistic plan printed to 3 A4 pages, the README promises
    2): the totals and verdicts as sentences, every statistic as one row of a compact table (not a bold sentence each)
    and the budget bar at a size whose legend shows every statistic."""
    k = len(view.tables["plan"]) if "plan" in view.tables else 0
    figs = []
    for caption, fig in figures:
        # each statistic's segment and legend entry by its row number in the table (names of 50 characters in a
        # legend of 25 overlapped); "not spent" and "reserve" keep their words
        wide = go.Figure(fig)
        for i, tr in enumerate(wide.data[:k]):
            tr.update(name=str(i + 1), text=[str(i + 1)], textposition="inside", insidetextanchor="middle")
        rows = -(-len(wide.data) // 7)   # legend entries a line at this width
        wide.update_layout(height=None, uniformtext=dict(minsize=8, mode="hide"),
                           legend=dict(orientation="h", entrywidth=45, entrywidthmode="pixels", y=-0.75,
                                       yanchor="top", font=dict(size=11)),
                           margin=dict(t=40, b=80 + 20 * rows))
        figs.append((f"{caption} (each statistic by its row number in the table)", wide,
                     (REPORT_FIGURE_SIZE[0], REPORT_FIGURE_SIZE[1] + 20 * rows)))
    summary = report_summary(view, page="epsilon_calculator", title="Epsilon calculator",
                             sources=[SEED_PLAIN, *REPORT_SOURCES], figures=figs, script=script)
    plan_sections = [sec for sec in view.sections if sec.table == "plan"]
    if plan_sections and "plan" in view.tables:
        summary.verdicts = list(view.verdict_text) + [line for sec in view.sections if sec.table != "plan"
                                                      for line in sec.lines]
        summary.tables = [_plan_table(plan_sections[0].title, view.tables["plan"], view.figures.get("unit", "ε"))]
    return summary


def _plan_table(title: str, plan: pd.DataFrame, unit: str):
    """The plan as the report's compact table: numbers at the page's 4 significant figures."""
    def g(x) -> str:
        return "—" if x is None or (isinstance(x, float) and not math.isfinite(x)) else evw.num(float(x))

    cols = ["#", "statistic", "achieved ±", "target ±", "× target", unit, "δ", "held"]
    rows = []
    for i, r in enumerate(plan.to_dict("records"), 1):
        priv = r.get("ρ") if unit == "ρ" else r.get("ε")
        d = r.get("δ")
        rows.append([str(i), str(r["name"]), g(r["achieved ±"]), g(r["target ±"]), g(r["achieved / target"]), g(priv),
                     power_of_ten(d) if d else "0", r.get("held", "no")])
    return ReportTable(title, cols, rows, numeric=("#", "achieved ±", "target ±", "× target", unit, "δ"))


def _opendp_script(specs, plan) -> str | None:
    """The plan performed with OpenDP (issue 24 item 3): each statistic's column is named after the statistic
    (the script says to map it); None when a row has no finite budget (nothing to release)."""
    by_name = {a.name: a for a in plan.allocations}
    rows = []
    for s in specs:
        a = by_name.get(s.name)
        if a is None or not (math.isfinite(a.scale) and a.scale > 0 and math.isfinite(a.epsilon)):
            return None
        rows.append(dict(name=s.name, column=s.name, query=s.query, mechanism=s.mechanism, neighbour=s.neighbour,
                         lower=s.lower, upper=s.upper, n=s.n, epsilon=a.epsilon, scale=a.scale))
    try:
        return sopendp.budget_plan_script(rows=rows, data="your_data.csv", max_rows=10**8,
                                          categories={s.name: int(s.cells) for s in specs if s.query == "histogram"})
    except ValueError:
        return None
