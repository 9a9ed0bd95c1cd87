"""Tab views of the epsilon calculator: one pure function per results tab builds everything the tab shows.

Each ``*_view`` takes the tab's control values and the engine results it needs and returns a frozen
:class:`dpdash.common.view.TabView` (headlines already formatted, verdict sentences with their tone, tables, figure
inputs, the report's question/parameters/sections and the "Copy as code" keyword arguments). The page's card,
chart, verdict box, CSV, report and script all read that one view, so no sentence can restate a number
differently from the card or table beside it (issue 22).

References
----------
Rogers 2017, *Leveraging Privacy in Data Analysis* (seed 002_802572da4c9a19ad.txt): Ch. 2 (noise, composition),
Ch. 3 (DP vs data splitting, Thms 3.2.2, 3.3.1, 3.4.1), Ch. 5 (filters and odometers), Ch. 6–7 (private χ² tests),
Ch. 1/4 (max-information). Budget plans: ``dpdash.accounting.budget`` (Harvard PSI budgeter's hold and reserve).
"""

from __future__ import annotations

import math

from typing import Mapping, Sequence

import pandas as pd

from dpdash.epsilon import budget_compare as bc
from dpdash.epsilon import figures as ef
from dpdash.epsilon import verdicts as ev
from dpdash.common.formatting import given, power_of_ten
from dpdash.accounting import tones
from dpdash.common.view import Headline, ReportSection, Sentence, TabView, frozen_map, with_stakes

num = ev.sig4  # one definition, shared with the verdicts


def _view(**kw) -> TabView:
    """A TabView with its mappings frozen."""
    for k in ("tables", "figures", "params", "script"):
        if k in kw:
            kw[k] = frozen_map(kw[k])
    return TabView(**kw)


def _unsaid(call: tones.ToneCall, *, said_epsilon: bool) -> tones.ToneCall:
    """``call`` without its ε reason when the tab's own guidance already says ε is extreme (the tone stays)."""
    if not said_epsilon:
        return call
    return tones.ToneCall(call.tone, tuple(r for r in call.reasons if not r.startswith(("ε", "The total ε"))))


# --------------------------------------------------------------------------- Tab 6: DP vs data splitting
NOISE_WORDS = {"gaussian": "Gaussian", "laplace": "Laplace"}


def widths_view(widths: pd.DataFrame, *, n: int, beta: float, noise: str,
                crossover: ev.WidthCrossover | None = None) -> TabView:
    """DP vs data splitting: the crossover made once (``ev.width_crossover``) and read by the headline, the verdict,
    the figure's dotted line and the report (issue 22: the report said "not for k ≤ 10,000" beside a verdict
    "from k = 3,162", its headline computed from one method pair).

    ``widths``: ``dpdash.accounting.mechanisms.adaptive_width_grid`` as a frame (method, k, tau, parameter, noise_std,
    capped); ``crossover``: ``ev.solve_width_crossover`` of the same inputs when the caller cached it (the k stated
    is solved on the integers, never a grid point: issue 34).
    Source: Rogers 2017 Ch. 3 (Thms 3.2.2, 3.3.1 with the App. A.2 constants, 3.4.1; §3.5).
    """
    x = crossover if crossover is not None else ev.solve_width_crossover(widths, n=int(n), beta=float(beta),
                                                                          noise=noise)
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
#: Columns of the planner's statistics table (the editor, the link's table and ``ui.eps_codecs.stats_from_frame``)
BUDGET_COLS = ("name", "query", "mechanism", "L", "U", "n", "cells", "target ±", "confidence", "hold ±",
               "hold share", "weight")
#: The planner's default statistics: a count, a mean income of 10,000 people in [0, 200,000], a 10-cell histogram
BUDGET_DEFAULT_ROWS = (
    ("count", "count", "laplace", 0.0, 1.0, None, 1, 50.0, 0.95, None, None, 1.0),
    ("mean income", "mean", "laplace", 0.0, 200_000.0, 10_000, 1, 500.0, 0.95, None, None, 1.0),
    ("histogram", "histogram", "laplace", 0.0, 1.0, None, 10, 100.0, 0.95, None, None, 1.0),
)


def budget_default() -> pd.DataFrame:
    """The planner's default statistics table (a new frame each call: editors and tests may change theirs)."""
    return pd.DataFrame([list(r) for r in BUDGET_DEFAULT_ROWS], columns=list(BUDGET_COLS))


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
    """Budget planner: the plan's headline, verdict, table, bar and report from one
    ``dpdash.accounting.budget.BudgetPlan``.

    ``statistics``: the rows as ``StatisticSpec`` field dicts (the script's input); ``shares``:
    ``dpdash.accounting.budget.budget_shares(plan)`` (None when the plan has no finite total). The report lists every
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
        verdicts = with_stakes((Sentence(ev.budget_verdict(plan), "warning" if missed else "good"),),
                               tones.privacy_tone(epsilon=plan.epsilon if math.isfinite(plan.epsilon) else None,
                                                  delta=d, name="the total ε"))
    gauss = [a for a, s in zip(plan.allocations, statistics)
             if s.get("mechanism") in ("gaussian", "discrete_gaussian")]
    if rule == "basic" and gauss and plan.feasible and d > 0:
        used = sum(a.delta for a in gauss)
        # the basic sum adds the δᵢ and the planner shares all of δ among the Gaussian statistics
        # (budget.basic_share); should a plan ever leave part of it unused, the page says so (issue 34 item 3)
        if used < 0.999 * delta:
            verdicts += (Sentence(
                f"The plan spends δ = {power_of_ten(used)} of the {power_of_ten(delta)} you allowed on its "
                f"{len(gauss):,} Gaussian statistics. Their ± would be a little narrower with all of δ; the total "
                "stays within your δ.", "neutral"),)
    heads: list[Headline] = []
    if mode == "budget_first":
        if unit == "ρ":  # the ε the user typed, and the ρ it converts to at δ (issue 34: only ρ was shown)
            heads.append(Headline("Budget ε", given(budget), raw=float(budget),
                                  note=f"at δ = {power_of_ten(delta)}"))
        heads.append(Headline(f"Budget {unit}", given(plan.budget) if unit == "ε" else num(plan.budget),
                              raw=float(plan.budget), note="the ε above as zCDP" if unit == "ρ" else ""))
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
    if mode == "budget_first" and plan.feasible and plan.allocations:  # accuracy first meets every target
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


# --------------------------------------------------------------------------- Tab 3: the comparison panel
#: Largest sensitivity for which the whole-number rows are computed (bounded work: their sums run over ~Δ/ε terms;
#: 10⁷ took 30 s, 10⁹ ran out of memory)
DISCRETE_MAX_SENSITIVITY = 1e6


def comparison_mechanisms(discrete: bool, sensitivity: float) -> tuple[tuple[str, ...], Sentence | None]:
    """The noises the comparison computes, and why whole-number noise was left out if it was asked for."""
    if discrete and sensitivity > DISCRETE_MAX_SENSITIVITY:
        return bc.DEFAULT_MECHANISMS, Sentence(
            f"Whole-number noise is computed for a sensitivity up to {DISCRETE_MAX_SENSITIVITY:,.0f}; at "
            f"{num(sensitivity)} it behaves like the continuous noise rounded, so only the continuous rows are "
            "shown.", "neutral")
    return (bc.MECHANISMS if discrete else bc.DEFAULT_MECHANISMS), None


def budget_compare_view(rows: Sequence, *, note: Sentence | None = None) -> TabView:
    """The comparison panel: k statistics under one total (ε, δ), every composition rule × noise
    (``dpdash.epsilon.budget_compare.budget_table`` rows). The verdict, cards, table, bar chart and alt text read the
    same
    rows at the table's precision; rows cut short by the time limit are named in a warning.

    Source: Rogers 2017 Thms 2.1.4/2.1.5; Kairouz–Oh–Viswanath 2015; Bun–Steinke 2016; Mironov 2017; dp-accounting.
    """
    rows = list(rows)
    best = bc.best_row(rows)
    verdicts = [note] if note is not None else []
    verdicts.append(Sentence(bc.budget_verdict(rows), "good" if best is not None else "warning"))
    if rows:
        verdicts = list(with_stakes(verdicts, tones.privacy_tone(epsilon=rows[0].epsilon_total,
                                                                 delta=rows[0].delta_total, name="the total ε")))
    late = [r for r in rows if not r.valid and "time limit" in r.note]
    if late:
        verdicts.append(Sentence(f"{len(late)} of {len(rows)} rows stopped at the time limit of "
                                 f"{bc.TABLE_SECONDS:g} s and show no answer: "
                                 + ", ".join(f"{bc.RULE_PLAIN[r.rule].lower()} with {bc.MECH_PLAIN[r.mechanism]} "
                                             "noise" for r in late[:4]) + ("…" if len(late) > 4 else "") + ".",
                                 "warning"))
    heads: list[Headline] = []
    k = rows[0].k if rows else 0
    if best is not None:
        heads.append(Headline("Best ± per statistic", f"±{num(best.half_width)}", raw=float(best.half_width),
                              note=f"{bc.MECH_PLAIN[best.mechanism]} noise, {bc.RULE_PLAIN[best.rule].lower()}."))
        basic = next((r for r in rows if r.valid and r.rule == "basic" and r.mechanism == "laplace"), None)
        if basic is not None:
            heads.append(Headline("Equal split, Laplace", f"±{num(basic.half_width)}", raw=float(basic.half_width),
                                  note="Each statistic gets ε/k (basic composition)."))
    people = bc.rows_for_people(rows)
    conf = f"{100 * rows[0].confidence:g}%" if rows else "95%"
    return _view(
        headlines=tuple(heads), verdicts=tuple(verdicts), tables={"rows": people},
        figures={"rows": tuple(rows), "alt": bc.budget_figure_alt(rows), "k": k},
        question="How accurate can each of k statistics be under one total privacy budget?",
        params={"statistics k": f"{k:,}", "total ε": given(rows[0].epsilon_total) if rows else "",
                "total δ": power_of_ten(rows[0].delta_total) if rows and rows[0].delta_total > 0 else "0",
                "confidence of the ±": conf,
                "noises": ", ".join(dict.fromkeys(bc.MECH_PLAIN[r.mechanism] for r in rows))},
        epsilon=rows[0].epsilon_total if rows else None, delta=rows[0].delta_total if rows else None)


def budget_totals_view(totals: pd.DataFrame) -> TabView:
    """The other direction: the total ε of k releases of a given ε each, under every rule
    (``dpdash.epsilon.budget_compare.total_from_per_release``); verdict and cards at the table's precision."""
    heads: list[Headline] = []
    if not totals.empty:
        best = totals.loc[totals["Total ε"].idxmin()]
        heads.append(Headline("Smallest total ε", num(float(best["Total ε"])), raw=float(best["Total ε"]),
                              note=str(best["Composition rule"])))
        basic = totals[totals["Composition rule"] == bc.RULE_PLAIN["basic"]]
        if not basic.empty:
            heads.append(Headline("Adding up", num(float(basic["Total ε"].iloc[0])),
                                  raw=float(basic["Total ε"].iloc[0])))
    return _view(headlines=tuple(heads),
                 verdicts=(Sentence(bc.totals_verdict(totals), "warning"),) if totals.empty else with_stakes(
                     (Sentence(bc.totals_verdict(totals), "good"),),
                     tones.epsilon_tone(float(totals["Total ε"].min()), name="the smallest total ε")),
                 tables={"totals": totals})


# --------------------------------------------------------------------------- shared words
MECH_FMT = {"laplace": "Laplace", "gaussian": "Gaussian", "discrete_laplace": "Discrete Laplace",
            "discrete_gaussian": "Discrete Gaussian"}
QUERY_FMT = {"count": "Count", "sum": "Sum", "mean": "Mean", "histogram": "Histogram"}
NEIGH_FMT = {"replace": "Replace one record", "add_remove": "Add/remove one record"}
GAUSS_RULE_FMT = {"analytic": "Exact (analytic)", "classic": "Classic (ε < 1 only)", "zcdp": "zCDP (set ρ)"}
FIX_FMT = {"privacy": "Privacy", "scale": "Noise scale", "accuracy": "Accuracy (±)"}
#: Queries whose sensitivity does not depend on the clipping bounds or n (a record changes a count by 1).
COUNT_LIKE = ("count", "histogram")
#: The calculator's range: beyond ε = 10⁴ (or ∞, a deterministic release) there is no useful privacy.
EPSILON_MAX = 1e4


def exact(x: float | int | None) -> str:
    """A value the user typed or a dataset gave, in full (up to 10 significant figures): "1,718.5", never "1718"
    (issue 25: the report read U = 1718 for 1718.5)."""
    if x is None:
        return "n/a"
    x = float(x)
    if x.is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    return f"{x:,.10g}"


# --------------------------------------------------------------------------- Tab 1: noise and accuracy
def noise_view(cal, *, query: str, neighbour: str, lower: float | None, upper: float | None, n: int | None,
               mechanism: str, rule: str, fix: str, fixed: Mapping[str, float], confidence_pct: float,
               delta: float, l1: float, l2: float, mechanisms: Sequence[str], by_rho: bool) -> TabView:
    """Noise & accuracy: cards, verdict, guidance, table, chart inputs and report of one calibration.

    ``cal``: ``dpdash.accounting.mechanisms.calibrate``'s result; ``fixed``: the value the user set ({"epsilon": 1.0}
    …);
    ``lower``, ``upper``, ``n``: None for a count or histogram (they play no part). Source: Rogers 2017 Thm 2.1.2
    (Laplace), Thm 2.2.2 (Gaussian, zCDP); Balle–Wang 2018; Canonne–Kamath–Steinke 2020.
    """
    gauss = "gaussian" in mechanism
    conf = confidence_pct / 100
    eps_shown = num(cal.epsilon) if cal.epsilon <= EPSILON_MAX else "more than 10,000"
    text = ev.noise_verdict(mechanism=mechanism, query=query, half_width=cal.half_width, confidence=conf, fix=fix,
                            epsilon=cal.epsilon, delta=delta, rho=cal.rho, scale=cal.scale, by_rho=by_rho)
    warn = ev.noise_guidance(query=query, half_width=cal.half_width, lower=lower if lower is not None else 0.0,
                             upper=upper if upper is not None else 0.0, n=n, epsilon=cal.epsilon)
    verdicts = with_stakes((Sentence(text, "good"),) + ((Sentence(warn, "warning"),) if warn else ()),
                           tones.privacy_tone(epsilon=cal.epsilon, delta=delta if gauss else 0.0,
                                              n=n if query not in COUNT_LIKE else None))
    heads = (Headline("Noise scale", num(cal.scale), raw=float(cal.scale),
                      note="b for Laplace, σ for Gaussian, t for discrete Laplace"),
             Headline("Noise std", num(cal.std), raw=float(cal.std)),
             Headline("± half-width", num(cal.half_width), raw=float(cal.half_width),
                      note=f"in query units, at {confidence_pct:.4g}% confidence"),
             Headline("ε" + (f" (δ = {power_of_ten(delta)})" if gauss else ""), eps_shown, raw=float(cal.epsilon)),
             Headline("ρ (zCDP)", num(cal.rho), raw=float(cal.rho)))
    computed = None
    if fix != "privacy":
        what = "noise scale" if fix == "scale" else "half-width"
        computed = (f"ρ = {num(cal.rho)}" if by_rho else f"ε = {eps_shown}") + f" computed from the fixed {what}"
    words = {"epsilon": "ε", "rho": "ρ (zCDP)", "scale": "noise scale", "half_width": "± half-width"}
    params = {"query": QUERY_FMT[query], "neighbouring datasets": NEIGH_FMT[neighbour]}
    if query not in COUNT_LIKE:
        params.update({"lower bound L": exact(lower), "upper bound U": exact(upper), "records n": exact(n)})
    params.update({"mechanism": MECH_FMT[mechanism], "you set": FIX_FMT[fix],
                   **({"calibration": GAUSS_RULE_FMT[rule], "δ": power_of_ten(delta)} if gauss else {}),
                   **{words[k]: given(v) for k, v in fixed.items()}, "confidence": f"{confidence_pct:.4g}%"})
    mech_list = ", ".join(MECH_FMT[m] for m in mechanisms)
    return _view(
        headlines=heads, verdicts=verdicts, tables={"calibration": ef.calibration_table(cal)},
        figures={"computed": computed, "sensitivity": f"Sensitivity (how much one person can change the answer): "
                                                      f"Δ₁ = {num(l1)}, Δ₂ = {num(l2)}.",
                 "alt_halfwidth": f"Line chart, log scales: half-width at {confidence_pct:.4g}% confidence against ε "
                                  f"from 0.001 to 20 for {mech_list}; every curve falls as ε grows. A diamond marks "
                                  f"the current setting, ε = {eps_shown}, ±{num(cal.half_width)}.",
                 "alt_noise": f"{MECH_FMT[mechanism]} noise distribution centred on 0 with scale {num(cal.scale)}; "
                              f"the shaded interval from −{num(cal.half_width)} to +{num(cal.half_width)} holds "
                              f"{confidence_pct:.4g}% of the draws."},
        question="How far from the truth is a released number at this privacy level?", params=params,
        script={"mechanism": mechanism, "sensitivity": float(l2 if gauss else l1), "fix": fix, "delta": float(delta),
                "confidence": conf, "gaussian_rule": rule, **{k: float(v) for k, v in fixed.items()}},
        epsilon=float(cal.epsilon) if cal.epsilon <= EPSILON_MAX else None, delta=float(delta) or None)


# --------------------------------------------------------------------------- Tab 2: composition
def composition_view(curve: pd.DataFrame, table: pd.DataFrame, *, mechanisms: Sequence, delta: float,
                     rules: Sequence[str], log_axes: bool) -> TabView:
    """Composition: total ε at δ under each selected rule, the tightest named in the verdict and the cards.

    ``curve``/``table``: ``dpdash.accounting.composition.composition_curve``/``composition_table``; ``mechanisms``:
    ``dpdash.accounting.composition.Mechanism`` values. Source: Rogers 2017 Thms 2.1.4, 2.1.5, 2.2.3–2.2.5;
    Kairouz–Oh–Viswanath
    2015; Murtagh–Vadhan 2016; Mironov 2017; dp-accounting (PLD).
    """
    ms = list(mechanisms)
    total = sum(m.count for m in ms)
    releases = ev.describe_releases([m.kind for m in ms], [m.count for m in ms],
                                    [m.epsilon if m.kind in ("laplace", "pure_dp") else None for m in ms],
                                    [m.noise_multiplier if m.kind == "gaussian" else None for m in ms])
    guide = ev.total_guidance(table)
    ok = table[table["valid"] & table["epsilon"].map(math.isfinite)] if len(table) else table
    if not list(rules):  # every rule unticked: nothing was computed, and the page must not look like good news
        verdicts = (Sentence("No composition rule is ticked, so no total ε is computed: tick at least one rule.",
                             "warning"),)
    elif ok.empty:
        verdicts = (Sentence(ev.composition_verdict(table, releases=releases, delta=delta), "warning"),)
    else:  # the guarantee is the tightest valid bound
        verdicts = with_stakes((Sentence(ev.composition_verdict(table, releases=releases, delta=delta), "good"),)
                               + ((Sentence(guide, "warning"),) if guide else ()),
                               _unsaid(tones.privacy_tone(epsilon=float(ok["epsilon"].min()), delta=delta,
                                                          name="the total ε"), said_epsilon=bool(guide)))
    heads = tuple(Headline(ef.RULE_PLAIN.get(r, r), num(e) if v else "not valid here", raw=float(e) if v else None)
                  for r, e, v in zip(table["rule"], table["epsilon"], table["valid"]))
    people = ef.composition_table_for_people(table, k=total)
    best = ef.best_valid_envelope(curve)
    reach = (f"the best valid bound reaches ε = {num(float(best['epsilon'].iloc[-1]))} at k = "
             f"{int(best['k'].iloc[-1]):,}." if len(best) else "no rule is valid here.")
    return _view(
        headlines=heads, verdicts=verdicts, tables={"composition": people},
        figures={"curve": curve, "log_axes": log_axes, "delta": delta,
                 "alt": f"Line chart{', log scales' if log_axes else ''}: total ε against the number of releases k "
                        f"from 1 to {total:,}, one line per rule ({', '.join(ef.RULE_PLAIN[r] for r in rules)}); "
                        + reach},
        question="What is the total privacy loss after these releases?",
        params={"releases": releases, "δ": power_of_ten(delta), "rules": ", ".join(ef.RULE_PLAIN[r] for r in rules)},
        script={"mechanisms": [{k: v for k, v in m.__dict__.items() if v is not None} for m in ms],
                "delta": float(delta), "rules": tuple(rules)},
        delta=float(delta))


# --------------------------------------------------------------------------- Tab 4: adaptive analysis
FILTER_FMT = {"basic": "basic", "advanced": "advanced", "zcdp": "zCDP"}
SEQ_FMT = {"constant": "the same for every request", "geometric": "shrinking geometrically",
           "uniform": "random between two values", "spikes": "constant with regular spikes", "pasted": "a list I paste"}


def adaptive_view(trace: pd.DataFrame, halts: Mapping, *, epsilons: Sequence[float], kind: str, epsilon_g: float,
                  delta_g: float, n: int, rule: str, seed: int | None, values: Mapping,
                  labels: Mapping[str, str]) -> TabView:
    """Adaptive analysis: requests each filter answers, the odometers' final bounds, the figure and report.

    ``trace``: ``dpdash.accounting.composition.adaptive_trace`` (rule, round, bound); ``halts``: rule → ``filter_trace``
    result; ``labels``: ``accounting.ADAPTIVE_LABELS``. Source: Rogers 2017 Thm 5.3.7, Thm 5.5.1 (eq. 5.12),
    Lemma 5.6.4, Thms 5.6.1, 5.6.5, 5.7.5–5.7.6.
    """
    k = len(epsilons)
    answered = {r: int(sum(halts[r].decisions)) for r in ("basic", "advanced", "zcdp")}
    final = trace.groupby("rule")["bound"].last()
    table = pd.DataFrame({
        "quantity": [f"requests allowed by the {FILTER_FMT[r]} filter" for r in answered]
                    + [labels[r] + " after all requests" for r in labels],
        "value": [float(a) for a in answered.values()] + [float(final[r]) for r in labels]})
    heads = tuple(Headline(f"Requests answered by the {FILTER_FMT[r]} filter", f"{a:,} of {k:,}", raw=float(a))
                  for r, a in answered.items())
    text = ev.adaptive_verdict(answered=answered, requests=k, epsilon_g=epsilon_g, rule=rule)
    halted = {r: h.halt_round for r, h in halts.items()}
    return _view(
        headlines=heads, verdicts=with_stakes((Sentence(text, "good" if answered[rule] == k else "neutral"),),
                                              tones.privacy_tone(epsilon=epsilon_g, delta=delta_g, n=n,
                                                                 name="the budget ε_g")),
        tables={"adaptive": table},
        figures={"trace": trace, "halts": halted, "epsilon_g": epsilon_g,
                 "alt": f"Line chart: privacy-loss bound against request number 1 to {k:,}, one line per filter or "
                        f"odometer, with the budget ε_g = {given(epsilon_g)} as a horizontal line; the filters stop "
                        "at " + ", ".join(f"{r} request {h:,}" if h else f"{r} never" for r, h in halted.items())
                        + "."},
        question="How many unplanned requests fit in a privacy budget?",
        params={"requests": f"{k:,} ({SEQ_FMT[kind]})", "budget ε_g": given(epsilon_g),
                "δ_g": power_of_ten(delta_g), "records n": f"{int(n):,}"},
        script={"kind": kind, "epsilon_g": float(epsilon_g), "delta_g": float(delta_g), "n": int(n),
                "values": dict(values), "epsilons": list(epsilons) if kind == "pasted" else None},
        epsilon=float(epsilon_g), delta=float(delta_g), seed=seed)


# --------------------------------------------------------------------------- Tab 5: ε as risk
def risk_view(*, epsilon: float, delta: float, prior: float, shape: str, mu: float | None,
              profile: pd.DataFrame | None = None, profile_problem: str | None = None) -> TabView:
    """ε as risk: worst-case posterior, membership advantage, trade-off curves and the posterior table.

    ``profile``: the Composition tab's PLD profile (columns epsilon, delta) when its list is added. Source: Rogers
    2017 Def. 2.1.1 (posterior bound); Kairouz–Oh–Viswanath 2015; Dong–Roth–Su 2022 (trade-off functions).
    """
    import numpy as np

    from dpdash.epsilon import risk

    b = risk.posterior_bound(prior, epsilon=epsilon)
    adv = risk.advantage_bound(epsilon=epsilon, delta=delta)
    verdicts = list(with_stakes((Sentence(ev.risk_verdict(prior=prior, epsilon=epsilon, lower=b.lower, upper=b.upper,
                                                          advantage=adv, delta=delta), "good"),),
                                tones.privacy_tone(epsilon=epsilon, delta=delta)))
    if delta > 0:
        verdicts.append(Sentence(f"With δ = {power_of_ten(delta)} > 0 there is no uniform posterior bound: with "
                                 "probability up to δ the release can reveal more. The range above holds outside "
                                 "that event.", "warning"))
    if profile_problem:
        verdicts.append(Sentence(f"The Composition tab's list cannot be used: {profile_problem}", "warning"))
    fpr = np.linspace(0, 1, 401)
    any_label = f"any mechanism with ε = {given(epsilon)}" + (f", δ = {power_of_ten(delta)}" if delta else "")
    curves = {any_label: risk.tradeoff_fnr(fpr, epsilon=epsilon, delta=delta)}
    if shape == "gaussian" and mu is not None:
        curves[f"Gaussian μ = {given(mu)}"] = risk.tradeoff_gaussian(fpr, mu=mu)
    if shape == "laplace":
        curves[f"Laplace ε = {given(epsilon)}"] = risk.tradeoff_laplace(fpr, epsilon=epsilon)
    if profile is not None and len(profile):
        curves = {"Composition tab (PLD profile)": risk.tradeoff_from_profile(
            fpr, epsilons=profile["epsilon"].to_numpy(), deltas=profile["delta"].to_numpy()), **curves}
    eg = np.geomspace(1e-3, 20, 200)
    adv_curves = {"any (ε, δ) mechanism": np.array([risk.advantage_bound(epsilon=float(e), delta=delta) for e in eg]),
                  "Laplace": np.array([risk.laplace_advantage(epsilon=float(e)) for e in eg])}
    fnr5 = float(risk.tradeoff_fnr(np.array([0.05]), epsilon=epsilon, delta=delta)[0])
    posterior = f"{b.lower:.1%} – {b.upper:.1%}"
    return _view(
        headlines=(Headline("Worst-case posterior belief", posterior, note=f"from a prior of {prior:.0%}"),
                   Headline("Largest membership advantage", num(adv), raw=float(adv))),
        verdicts=tuple(verdicts),
        tables={"posterior": ef.posterior_table_for_people(risk.posterior_table(epsilon=epsilon))},
        figures={"fpr": fpr, "curves": curves, "eps_grid": eg, "advantage": adv_curves,
                 "alt_tradeoff": f"Trade-off chart: least false-negative rate against false-positive rate from 0 to "
                                 f"1 for {', '.join(curves)}; the shaded area below the first curve is impossible for "
                                 "any attack, and the dashed diagonal is guessing. At a 5% false-positive rate the "
                                 f"false-negative rate is at least {fnr5:.0%}.",
                 "caption_advantage": "Largest true-positive minus false-positive rate of any membership attack; at "
                                      f"ε = {given(epsilon)}: {num(adv)}.",
                 "alt_advantage": f"Line chart: largest membership advantage against ε from 0.001 to 20 (log scale), "
                                  f"for any mechanism and for Laplace; both rise from 0 towards 1. At ε = "
                                  f"{given(epsilon)} it is {num(adv)}."},
        question="What can an attacker learn about one person from this release?",
        params={"ε": given(epsilon), "δ": power_of_ten(delta), "attacker's prior belief": f"{prior:.0%}"},
        script={"epsilon": float(epsilon), "delta": float(delta), "prior": float(prior)},
        epsilon=float(epsilon), delta=float(delta) or None)


# --------------------------------------------------------------------------- Tab 7: private tests
def tests_view(*, test: str, n: float, privacy_words: str, alpha: float, table: pd.DataFrame, naive_size: float,
               power: float | None, script: Mapping, params: Mapping[str, str], seed: int) -> TabView:
    """Private χ² tests: critical values, the classical test's false-alarm rate and (GOF) the projected test's power.

    ``table``: test → critical value (``dpdash.epsilon.private_tests.gof_critical_values``/``indep_critical_values`` in
    words). Source: Rogers 2017 Thm 6.1.7, Lemma 6.2.3, Thms 7.2.3, 7.2.6; Algs 8, 11, 13, 15, 16.
    """
    text = ev.private_tests_verdict(n=n, privacy=privacy_words, alpha=alpha, naive_size=naive_size, power=power)
    heads = [Headline("Classical test's false alarms", percent_of(naive_size), raw=float(naive_size),
                      note=f"asked for α = {alpha:g}")]
    if power is not None:
        heads.append(Headline("Power of the projected test", percent_of(power), raw=float(power)))
    heads += [Headline(str(t), num(v), raw=float(v)) for t, v in zip(table["test"], table["critical value"])]
    return _view(
        headlines=tuple(heads), verdicts=(Sentence(text, "warning" if naive_size > 1.5 * alpha else "good"),),
        tables={"critical values": table}, figures={"naive_size": naive_size},
        question="Do χ² tests on noisy counts keep their error rate?", params=dict(params),
        script=dict(script), seed=int(seed))


def percent_of(p: float) -> str:
    """A probability as the verdicts write it (2 significant figures, "31%")."""
    from dpdash.common.formatting import percent

    return percent(p)


# --------------------------------------------------------------------------- Tab 8: max-information
def maxinfo_view(*, alpha: float, epsilon: float, n: int, beta: float | None, target_gamma: float,
                 outcomes: int) -> TabView:
    """Max-information: corrected p-value threshold γ, max-information bounds, the γ-vs-t curves, the inverse (largest
    ε for a target γ) and the description-length bound, all computed here once.

    ``beta`` None: the β giving the largest γ is chosen. Source: Rogers 2017 Thms 1.4.4, 1.5.1, 1.5.2, 4.4.1;
    Cor. 4.6.3; Thm 4.6.4.
    """
    import numpy as np

    from dpdash.accounting import maxinfo as mi

    if beta is None:
        corr = mi.pvalue_correction_pure_dp(alpha, epsilon=epsilon, n=n)
        gamma, beta_star, bits = corr.gamma, corr.beta_star, corr.m_bits
    else:
        bits = mi.maxinfo_pure_dp(epsilon=epsilon, n=n, beta=beta).product_bits
        gamma, beta_star = mi.pvalue_correction(alpha, beta=beta, m_bits=bits), beta
    bound = mi.maxinfo_pure_dp(epsilon=epsilon, n=n, beta=beta_star if beta_star else alpha / 2)
    t = np.geomspace(1e-3, 10, 300)
    g_mi = np.array([mi.pvalue_correction_mutual_info(alpha, t_bits=float(x)) for x in t])
    g_rz = np.array([mi.pvalue_correction_russo_zou(alpha, t_bits=float(x)) for x in t])
    cross = mi.correction_crossover(alpha, t_lo=float(t[0]), t_hi=float(t[-1]))  # solved: the grid only draws
    try:
        inverse = (f"Largest ε whose corrected threshold is ≥ {given(target_gamma)}: "
                   f"{num(mi.max_epsilon_for_correction(alpha, gamma=target_gamma, n=n))}")
        inverse_tone = "neutral"
    except (ValueError, ArithmeticError) as e:
        inverse, inverse_tone = str(e), "warning"
    desc = mi.maxinfo_description_length(outcomes, beta=0.05)
    table = pd.DataFrame({"information leaked t (bits)": t, "threshold γ, mutual-information bound (Cor. 4.6.3)": g_mi,
                          "threshold γ, Russo–Zou bound (Thm 4.6.4)": g_rz})
    return _view(
        headlines=(Headline("Max-information (general)", f"{num(bound.general_bits)} bits",
                            raw=float(bound.general_bits)),
                   Headline("Max-information (product data)", f"{num(bound.product_bits)} bits",
                            raw=float(bound.product_bits)),
                   Headline("Corrected threshold γ(α)", num(gamma), raw=float(gamma)),
                   Headline("β used", num(beta_star), raw=float(beta_star))),
        verdicts=with_stakes((Sentence(ev.maxinfo_verdict(alpha=alpha, gamma=gamma, epsilon=epsilon, n=n, bits=bits),
                                       "good"),), tones.epsilon_tone(epsilon, name="ε of the selection step")),
        tables={"gamma": table},
        figures={"t": t, "g_mi": g_mi, "g_rz": g_rz, "crossover": cross, "inverse": inverse,
                 "inverse_tone": inverse_tone,
                 "description": f"log₂(|Y|/β) = {num(desc)} bits for |Y| = {outcomes:,} at β = 0.05 (Thm 1.5.1).",
                 "alt": "Line chart, log scales: the corrected threshold γ against the information leaked t from "
                        "0.001 to 10 bits, for the mutual-information bound (Cor. 4.6.3) and the Russo–Zou bound "
                        "(Thm 4.6.4); both fall as t grows"
                        + (f", and they cross at t = {num(cross)} bits." if cross else ".")},
        question="Which p-value threshold stays honest after a data-dependent choice?",
        params={"α": f"{alpha:g}", "ε of the selection step": given(epsilon), "records n": f"{int(n):,}",
                "β": "chosen for the largest γ" if beta is None else f"{beta:g}"},
        sections=(ReportSection("Inverse and description length", (inverse, f"log₂(|Y|/β) = {num(desc)} bits for "
                                                                            f"|Y| = {outcomes:,} at β = 0.05.")),),
        script={"alpha": float(alpha), "epsilon": float(epsilon), "n": float(n), "beta": beta},
        epsilon=float(epsilon))


# --------------------------------------------------------------------------- ε as risk: risk → ε
def risk_inverse_view(measure: str, *, target: float, delta: float = 0.0, prior: float | None = None,
                      fpr: float | None = None) -> TabView:
    """The "ε as risk" tab's inverse panel: the largest ε that keeps a chosen risk at or below a target.

    Source: ``dpdash.epsilon.risk.epsilon_for_risk`` (posterior: Bayes with the ε-DP likelihood-ratio bound; advantage
    and
    true-positive rate: the hypothesis-testing region of Kairouz, Oh & Viswanath 2015, Dong, Roth & Su 2022). The
    card, the sentence and the check caption read one string, cut (never rounded up) to 4 figures, and the check
    is computed at that shown ε, so "use ε ≤ x" keeps its promise at x. Raises ValueError on impossible inputs.
    """
    from dpdash.epsilon import risk
    from dpdash.common.formatting import number, number_down

    res = risk.epsilon_for_risk(measure, target=target, delta=delta, prior=prior, fpr=fpr)
    tone = "warning" if math.isnan(res.epsilon) else "neutral"
    heads: tuple[Headline, ...] = ()
    check = ""
    if res.reachable and math.isfinite(res.epsilon):
        shown = number_down(res.epsilon)
        at_shown = float(shown.replace(",", ""))
        back = risk.risk_at_epsilon(measure, epsilon=at_shown, delta=delta, prior=prior, fpr=fpr)
        heads = (Headline("Largest ε", shown, raw=res.epsilon),)
        mu = (risk.mu_for_advantage(target) if measure == "advantage"
              else risk.mu_for_power(target, fpr=fpr) if measure == "power" else math.nan)
        if math.isfinite(mu) and mu > 0:
            heads += (Headline("Gaussian noise needed: σ at least", f"{number(1.0 / mu, 3)} × sensitivity",
                               raw=1.0 / mu,
                               note="The Gaussian mechanism's own trade-off curve (Dong, Roth & Su 2022) is tighter "
                                    "than the (ε, δ) bound: this is the smallest noise that keeps the same promise."),)
        check = f"Check: at ε = {shown} the risk is {number(back, 4)} (target {target:g})."
    return TabView(headlines=heads, verdicts=(Sentence(risk.risk_inverse_verdict(res), tone),),
                   figures=frozen_map({"result": res, "check": check}), epsilon=res.epsilon,
                   delta=delta or None)
