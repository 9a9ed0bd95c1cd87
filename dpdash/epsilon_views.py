"""Tab views of the epsilon calculator: one pure function per results tab builds everything the tab shows.

Each ``*_view`` takes the tab's control values and the engine results it needs and returns a frozen
:class:`dpdash.view.TabView` (headlines already formatted, verdict sentences with their tone, tables, figure
inputs, the report's question/parameters/sections and the "Copy as code" keyword arguments). The page's card,
chart, verdict box, CSV, report and script all read that one view, so no sentence can restate a number
differently from the card or table beside it (issue 22).

References
----------
Rogers 2017, *Leveraging Privacy in Data Analysis* (seed 002_802572da4c9a19ad.txt): Ch. 2 (noise, composition),
Ch. 3 (DP vs data splitting, Thms 3.2.2, 3.3.1, 3.4.1), Ch. 5 (filters and odometers), Ch. 6–7 (private χ² tests),
Ch. 1/4 (max-information). Budget plans: ``dpdash.budget`` (Harvard PSI budgeter's hold and reserve).
"""

from __future__ import annotations

import math

from typing import Mapping, Sequence

import pandas as pd

from dpdash import epsilon_figures as ef
from dpdash import epsilon_verdicts as ev
from dpdash.formatting import given, power_of_ten
from dpdash.view import Headline, ReportSection, Sentence, TabView, frozen_map

num = ev.sig4  # one definition, shared with the verdicts


def _view(**kw) -> TabView:
    """A TabView with its mappings frozen."""
    for k in ("tables", "figures", "params", "script"):
        if k in kw:
            kw[k] = frozen_map(kw[k])
    return TabView(**kw)


# --------------------------------------------------------------------------- Tab 6: DP vs data splitting
NOISE_WORDS = {"gaussian": "Gaussian", "laplace": "Laplace"}


def widths_view(widths: pd.DataFrame, *, n: int, beta: float, noise: str) -> TabView:
    """DP vs data splitting: the crossover made once (``ev.width_crossover``) and read by the headline, the verdict,
    the figure's dotted line and the report (issue 22: the report said "not for k ≤ 10,000" beside a verdict
    "from k = 3,162", its headline computed from one method pair).

    ``widths``: ``dpdash.mechanisms.adaptive_width_grid`` as a frame (method, k, tau, parameter, noise_std, capped).
    Source: Rogers 2017 Ch. 3 (Thms 3.2.2, 3.3.1 with the App. A.2 constants, 3.4.1; §3.5).
    """
    x = ev.width_crossover(widths)
    text = ev.widths_verdict(widths, n=int(n), crossover=x)
    if x.first is None:
        heads = (Headline("DP beats splitting from k", f"not for k ≤ {x.kmax:,}", raw=None),)
        verdicts = (Sentence(text, "neutral"),)
        annotation = None
    else:
        k0 = x.first
        dm, sm = ef.WIDTH_LABELS[x.dp_method[k0]], ef.WIDTH_LABELS[x.split_method[k0]]
        heads = (Headline("DP beats splitting from k", f"{k0:,}", raw=float(k0)),
                 Headline(f"Error at k = {k0:,}, best DP", f"±{num(x.dp[k0])}", raw=float(x.dp[k0]), note=dm),
                 Headline(f"Error at k = {k0:,}, best split", f"±{num(x.split[k0])}", raw=float(x.split[k0]),
                          note=sm))
        verdicts = (Sentence(text, "good"),)
        annotation = f"DP ({dm.removeprefix('DP: ')}) beats splitting from k = {k0:,}"
    people = ef.widths_table_for_people(widths)
    where = (f"At k = {x.first:,} the best DP method is {ef.WIDTH_LABELS[x.dp_method[x.first]]} "
             f"(±{num(x.dp[x.first])}) and the best split is {ef.WIDTH_LABELS[x.split_method[x.first]]} "
             f"(±{num(x.split[x.first])})." if x.first is not None else
             f"At every k up to {x.kmax:,} a split is at least as accurate as every DP method.")
    return _view(
        headlines=heads, verdicts=verdicts, tables={"widths": people},
        figures={"widths": widths, "annotate_k": x.first, "annotation": annotation},
        question="When does DP answer adaptive queries better than splitting the data?",
        params={"records n": f"{int(n):,}", "failure probability β": f"{beta:g}",
                "DP noise": NOISE_WORDS.get(noise, noise)},
        sections=(ReportSection("Crossover", (where,), table="widths"),),
        script={"n": int(n), "beta": float(beta), "noise": noise})


# --------------------------------------------------------------------------- Tab 3: budget planner
MODE_WORDS = {"accuracy_first": "Accuracy first", "budget_first": "Budget first"}


def budget_table(plan) -> pd.DataFrame:
    """The plan's rows as the tab shows and downloads them (every statistic, full precision)."""
    return pd.DataFrame([{"name": a.name, "ε": a.epsilon, "ρ": a.rho, "δ": a.delta, "noise scale": a.scale,
                          "achieved ±": a.half_width, "target ±": a.target_half_width,
                          "achieved / target": a.ratio, "held": "yes" if a.held else "no"}
                         for a in plan.allocations],
                        columns=["name", "ε", "ρ", "δ", "noise scale", "achieved ±", "target ±", "achieved / target",
                                 "held"])


def budget_view(plan, *, statistics: Sequence[Mapping], shares, mode: str, rule: str, delta: float, reserve: float,
                joint_confidence: float | None, budget: float, objective: str) -> TabView:
    """Budget planner: the plan's headline, verdict, table, bar and report from one ``dpdash.budget.BudgetPlan``.

    ``statistics``: the rows as ``StatisticSpec`` field dicts (the script's input); ``shares``:
    ``dpdash.budget.budget_shares(plan)`` (None when the plan has no finite total). The report lists every
    statistic (issue 22: it listed 8 of 25 and no mean); headlines and verdict read at the table's precision and a
    budget-first headline names what the reserve keeps back (issue 22); a pure ε plan names no δ (issue 25).
    Source: Rogers 2017 Thms 2.1.4, 2.2.3–2.2.5; the Harvard PSI budgeter (hold, reserve).
    """
    unit = "ρ" if plan.currency == "rho" else "ε"
    d = ev.plan_delta(plan)
    spent = plan.rho if unit == "ρ" and plan.rho is not None else plan.epsilon
    table = budget_table(plan)
    if not plan.feasible:
        verdicts = (Sentence("This plan cannot be met.", "warning"), Sentence(ev.budget_verdict(plan), "warning"))
    else:
        worst = max(plan.allocations, key=lambda a: a.ratio) if plan.allocations else None
        missed = plan.mode == "budget_first" and worst is not None and worst.ratio > 1.0005
        verdicts = (Sentence(ev.budget_verdict(plan), "warning" if missed else "good"),)
    heads: list[Headline] = []
    if mode == "budget_first":
        heads.append(Headline(f"Budget {unit}", given(plan.budget), raw=float(plan.budget)))
        if plan.reserved > 0:
            heads.append(Headline(f"Reserve ({reserve * 100:g}%)", num(plan.reserved), raw=float(plan.reserved)))
        heads.append(Headline(f"Spent {unit}", num(spent), raw=float(spent)))
    else:
        heads.append(Headline(f"Total {unit}", num(spent), raw=float(spent)))
        if plan.reserved > 0:
            heads.append(Headline(f"Budget with the {reserve * 100:g}% reserve", num(plan.budget),
                                  raw=float(plan.budget)))
    if unit == "ρ" and math.isfinite(plan.epsilon):
        heads.append(Headline("Total ε", num(plan.epsilon), raw=float(plan.epsilon)))
    heads.append(Headline("δ", power_of_ten(d) if d > 0 else "0 (pure ε-DP)", raw=d))
    if plan.feasible and plan.allocations:
        w = max(plan.allocations, key=lambda a: a.ratio)
        heads.append(Headline("Furthest from its target", f"{num(w.ratio)}×", raw=float(w.ratio), note=w.name))
    totals = (f"Total ε = {num(plan.epsilon)}" + (f" at δ = {power_of_ten(d)}" if d > 0 else " (pure ε-DP, δ = 0)")
              + (f"; ρ = {num(plan.rho)}" if plan.rho else "")
              + f" under the {ef.RULE_PLAIN.get(rule, rule)} rule; budget {unit} = {num(plan.budget)}, reserve = "
              + f"{num(plan.reserved)}.")
    rows = tuple(f"{a.name}: ±{num(a.half_width)} (target ±{num(a.target_half_width)}, {num(a.ratio)}× it), "
                 f"ε = {num(a.epsilon)}" + (f", δ = {power_of_ten(a.delta)}" if a.delta > 0 else "")
                 + (", held" if a.held else "") for a in plan.allocations)
    return _view(
        headlines=tuple(heads), verdicts=verdicts, tables={"plan": table},
        figures={"shares": shares, "unit": unit, "totals": totals},
        question="How accurate can these statistics be under one privacy budget?",
        params={"mode": MODE_WORDS[mode], "composition rule": ef.RULE_PLAIN.get(rule, rule),
                "δ": power_of_ten(delta) if d > 0 else "not used (pure ε-DP plan)", "reserve": f"{reserve * 100:g}%",
                **({"total ε": given(budget)} if mode == "budget_first" else {}),
                "statistics": f"{len(plan.allocations):,}"},
        sections=(ReportSection("Totals", (totals,)),
                  ReportSection(f"Every statistic ({len(plan.allocations):,})", rows, table="plan")),
        script={"statistics": [dict(s) for s in statistics], "mode": mode, "rule": rule, "delta": float(delta),
                "reserve": float(reserve), "joint_confidence": joint_confidence, "budget": float(budget),
                "objective": objective},
        epsilon=plan.epsilon if math.isfinite(plan.epsilon) else None, delta=d)
