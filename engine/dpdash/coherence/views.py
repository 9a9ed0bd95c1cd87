"""The coherence explorer's tab views: everything one results tab shows, built once from the tab's inputs.

One pure function per results tab — :func:`preview_view` (single split), :func:`runs_view` (repeated runs),
:func:`sweep_view` (W1 vs ε), :func:`theory_view` and :func:`section7_view` — returns a frozen
:class:`dpdash.common.view.TabView`: the cards, the verdict sentences with their tone, the tables (shown and
downloaded),
the inputs of the figure builders (``dpdash.coherence.figures``; ``figures[name]`` are the builder's keyword
arguments), the report's question, parameters and sections, and the "Copy as code" builder with its arguments
(``script["builder"]`` names the ``dpdash.coherence.script`` function). The card, the chart, the sentence, the CSV,
the report and the script all read the view, so none can restate a number differently from another (issue 22).

Numbers are written by one set of readers (``dpdash.coherence.verdicts``): W1 with two decimals (more near α), α as
set, sizes to reach rounded up, a largest certified ε rounded down, a smallest certified α rounded up.

References
----------
seeds/000_f379639b976c7ffb.txt (Enforcing Demographic Coherence): §4.2 Figure 1, Def. 3–5, §5, Theorem 7 (Eq. 12,
erratum E1), Theorems 8, 9 and 11; specs/coherence_explorer.md §3.3 (failure-rate estimate, split-noise floor),
§7.3–§7.5; issue 22 (tab views).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from dpdash.coherence import core as co
from dpdash.coherence import tabs as ct
from dpdash.coherence import verdicts as cv
from dpdash.accounting import maxinfo as mi
from dpdash.common.view import Headline, ReportSection, Sentence, TabView, frozen_map

__all__ = ["PAGE", "TITLE", "SOURCES", "TABLE1_ROWS", "settings_words", "preview_view", "runs_view", "sweep_view",
           "theory_view", "section7_intro", "section7_view"]

PAGE, TITLE = "coherence_explorer", "Coherence explorer"
SOURCES = ("seeds/000_f379639b976c7ffb.txt (Enforcing Demographic Coherence): §4.2 Figure 1, Def. 3–5, §5, "
           "Theorem 7 (Eq. 12, erratum E1), Theorems 9 and 11",
           "specs/coherence_explorer.md §3.3 (failure-rate estimate, split-noise floor)")
#: Table 1 of the seed (§6.3): (α, ε printed); n = 5·10⁶, β = e⁻³⁰, |𝒞| = 100, γ = 0.05n. Only ε is copied.
TABLE1_ROWS = ((0.1, 0.003), (0.2, 0.01), (0.3, 0.02), (0.4, 0.025), (0.8, 0.056), (0.9, 0.065), (1.3, 0.09),
               (1.4, 0.1))
STALE = "Settings changed — press Run to update. The results below are for the previous settings."


def settings_words(*, data: str, label: str, sensitive: str, lens: Sequence[str], release: str, learner: str,
                   alpha: float, gamma: float, seed: int) -> dict[str, str]:
    """The report's settings in words (the same for every tab)."""
    return {"Data": data, "Label (sensitive value)": f"{label} ({sensitive})", "Lens": ", ".join(lens),
            "Release": release, "Learner": learner, "α (largest W1 tolerated)": cv.alpha_text(alpha),
            "γ (smallest group kept)": cv.members_text(gamma), "Seed": str(seed)}


def _privacy(release: co.ReleaseSpec) -> tuple[float | None, float | None]:
    """(ε, δ) of a release for the report: the DP histograms only (an exact histogram's ε = ∞ is no statement)."""
    if release.kind not in co.HISTOGRAM_KINDS or not math.isfinite(release.epsilon):
        return None, None
    return float(release.epsilon), (float(release.delta) if release.kind == "gaussian_histogram" else None)


# ----------------------------------------------------------------------------------------- single split
def preview_view(*, trial: co.TrialResult, names: Sequence[str], sizes: Sequence[int],
                 in_collection: Sequence[bool], alpha: float, output: str, release: co.ReleaseSpec, seed: int,
                 elapsed_s: float, params: Mapping[str, str], script: Mapping[str, Any]) -> TabView:
    """The single split (repetition 0): W1 per group against α, the most-affected kept group's shares flagged."""
    w = np.asarray(trial.w1, dtype=float)
    kept = [j for j, ok in enumerate(in_collection) if ok and math.isfinite(w[j])]
    above = [j for j in kept if w[j] > alpha]
    verdict = cv.preview_verdict(names=names, sizes=sizes, w1=w, frac_negative=trial.frac_negative,
                                 in_collection=in_collection, alpha=alpha, output=output)
    heads: list[Headline] = []
    if kept:
        worst = max(kept, key=lambda j: w[j])
        heads = [Headline("Largest W1 of a kept group", cv.w1_text(w[worst], alpha), raw=float(w[worst]),
                          note=f"{names[worst]}, {sizes[worst]:,} members"),
                 Headline("Kept groups above α", f"{len(above)} of {len(kept)}", raw=float(len(above)),
                          note=f"α = {cv.alpha_text(alpha)}")]
    per_group = tuple(f"W1, {nm}: {cv.w1_text(w[j], alpha)} ({sizes[j]:,} members"
                      + ("" if in_collection[j] else ", left out: fewer than γ members") + ")"
                      for j, nm in enumerate(names))
    eps, delta = _privacy(release)
    return TabView(
        headlines=tuple(heads),
        verdicts=(Sentence(verdict, "warning" if above else "neutral"),),
        figures=frozen_map({"groups": dict(names=list(names), sizes=list(sizes), w1=w,
                                           in_collection=list(in_collection), alpha=alpha)}),
        question="Does a predictor trained on this release treat the released people differently from similar "
                 "held-out people, on one random split?",
        params=frozen_map(params),
        sections=(ReportSection("W1 per group (one split)", per_group),
                  ReportSection("Run", (f"One random split: repetition 0 of a run with seed {seed}, computed in "
                                        f"{elapsed_s:.2f} s.",))),
        script=frozen_map(dict(script, builder="runs_script", repetitions=1)), epsilon=eps, delta=delta,
        seed=int(seed))


# ----------------------------------------------------------------------------------------- repeated runs
def runs_view(*, result: co.ExperimentResult, floor: Mapping[str, np.ndarray] | None, alpha: float, gamma: float,
              beta: float, where: str, stale: bool, params: Mapping[str, str],
              script: Mapping[str, Any] | None) -> TabView:
    """R repetitions: the failure rate β̂(α) with its Clopper–Pearson interval (spec §3.3), the most-affected
    group against random splitting alone, per-group summary, the per-run W1 table."""
    pre = (Sentence(STALE, "warning"),) if stale else ()
    eps, delta = _privacy(result.config.release)
    base = dict(question="How often does a predictor trained on this release treat a group's released members "
                         "differently from held-out ones, over R random splits?", params=frozen_map(params),
                epsilon=eps, delta=delta, seed=int(result.config.rng))
    if not any(result.in_collection(gamma)):
        return TabView(verdicts=pre + (Sentence("No group of the stored result has γ or more members: lower γ.",
                                                "warning"),), **base)
    try:
        est = co.beta_hat(result, alpha, gamma)
    except ValueError as exc:
        est, problem = None, str(exc)
    summ = co.summarize(result, gamma)
    people = cv.summary_for_people(summ, floor)
    g7 = None
    if result.config.release.kind == "dp_histogram" and math.isfinite(result.config.release.epsilon):
        g7 = mi.gamma_pure(result.config.release.epsilon, result.n, max(alpha, ct.ALPHA_FLOOR), beta,
                           max(1, sum(result.in_collection(gamma)))).gamma
    heads = []
    if est is not None:
        heads += [Headline("Runs failing at α", f"{est.failures}/{est.runs}", raw=est.beta_hat,
                           note="Runs in which at least one kept group had W1 above α: the estimated failure rate."),
                  Headline("95% interval", cv.interval_text(est.lower, est.upper), raw=est.upper,
                           note="Clopper–Pearson interval for the failure rate, from R runs.")]
        verdicts = pre + (Sentence(cv.runs_verdict(result, alpha=alpha, gamma=gamma, estimate=est, floor=floor),
                                   "warning" if est.failures > 0 else "neutral"),)
    else:
        verdicts = pre + (Sentence(problem, "warning"),)
    heads.append(Headline("Run time", f"{result.elapsed_s:.1f} s", raw=result.elapsed_s,
                          note=f"Seed {result.config.rng}, on {where}"))
    lines = tuple(f"Mean W1, {r['group']}: {cv.w1_text(r['mean W1 over runs'])} ({r['members']:,} members, chance "
                  f"alone {cv.w1_text(r['W1 from chance alone (mean)'])})" for _, r in people.iterrows())
    R = result.w1.shape[0]
    return TabView(
        headlines=tuple(heads), verdicts=verdicts,
        tables=frozen_map({"summary": people, "runs": cv.runs_for_people(result.w1_table())}),
        figures=frozen_map({
            "sorted": dict(result=result, gamma=gamma, alpha=alpha, estimate=est),
            "failure": dict(result=result, gamma=gamma, alpha=alpha, beta_theory=beta),
            "size": dict(summary=summ, gamma=gamma, gamma_theorem7=g7)}),
        sections=(ReportSection("Per group", lines, table="summary"),
                  ReportSection("Runs", (f"{R} repetitions, seed {result.config.rng}; run r uses its own random "
                                         "stream (SeedSequence(seed).spawn(R)[r]), so any run can be reproduced "
                                         f"alone. Failure rates below about 1/R = {1 / R:.2f} cannot be "
                                         "resolved.",))),
        script=frozen_map(dict(script, builder="runs_script")) if script is not None else frozen_map(), **base)


# ----------------------------------------------------------------------------------------- ε sweep
def sweep_view(*, sweep: pd.DataFrame, floor: Mapping[str, np.ndarray] | None, alpha: float,
               clear_means: Mapping[str, float] | None, release: co.ReleaseSpec, stale: bool, seed: int,
               params: Mapping[str, str], script: Mapping[str, Any] | None) -> TabView:
    """Mean W1 per group at each ε of the DP histogram (ε = ∞: exact, not DP), against α and random splitting."""
    text = cv.sweep_verdict(sweep, alpha=alpha, floor=floor)
    finite = sweep[np.isfinite(sweep["epsilon"].to_numpy(dtype=float))]
    bad = bool((finite["mean_w1"] > alpha).any())
    verdicts = ((Sentence("Settings changed — press Run ε sweep to update.", "warning"),) if stale else ()) + (
        Sentence(text, "warning" if bad else "good" if len(finite) else "neutral"),)
    lines = tuple(f"Mean W1 at ε = {'∞' if math.isinf(r.epsilon) else f'{r.epsilon:g}'}, {r.group}: "
                  f"{cv.w1_text(r.mean_w1)}" for r in sweep.itertuples())
    _, delta = _privacy(release)
    return TabView(
        verdicts=verdicts,
        tables=frozen_map({"sweep": cv.sweep_for_people(co.sweep_for_export(sweep))}),
        figures=frozen_map({"sweep": dict(sweep=sweep, clear_means=clear_means, floor=floor)}),
        question="How does the difference between released and held-out members shrink as the DP release adds "
                 "more noise (smaller ε)?",
        params=frozen_map(params), sections=(ReportSection("Mean W1 per ε and group", lines, table="sweep"),),
        script=frozen_map(dict(script, builder="sweep_script")) if script is not None else frozen_map(),
        delta=delta, seed=int(seed))


# ----------------------------------------------------------------------------------------- theory
def _table1() -> pd.DataFrame:
    n, b, g = 5e6, math.exp(-30), 100
    rows = [{"α": a, "ε printed in the paper": e, "γ required at that ε": mi.gamma_pure(e, n, a, b, g).gamma,
             "γ target 0.05n": 0.05 * n, "largest ε (Thm 7)": mi.eps_max(n, a, b, g, 0.05 * n),
             "largest ε (Thm 8)": mi.eps_max(n, a, b, g, 0.05 * n, kind="approx")} for a, e in TABLE1_ROWS]
    return pd.DataFrame(rows)


def theory_view(*, epsilon: float, release_kind: str, release_epsilon: float, delta: float, n: int, alpha: float,
                beta: float, group_sizes: Mapping[str, int], gamma: float, show_table1: bool,
                params: Mapping[str, str], script: Mapping[str, Any]) -> TabView:
    """Theorems 7, 8 and 9 for the page's data at ``epsilon`` (the release's, or a hypothetical one): γ required,
    the groups meeting it, the largest ε certifying the smallest kept group, the smallest α per group."""
    th = ct.theory_numbers(epsilon=epsilon, n=n, alpha=alpha, beta=beta, group_sizes=group_sizes, gamma=gamma)
    sc = th.thm7
    dp_release = release_kind in co.HISTOGRAM_KINDS and math.isfinite(release_epsilon)
    a = cv.alpha_text(th.alpha)
    text = cv.theory_verdict(
        gamma_required=sc.gamma, n=n, epsilon=epsilon, meets=th.meets, kept=len(th.kept),
        dp_release=dp_release and release_kind == "dp_histogram", alpha=th.alpha,
        smallest=(th.smallest, group_sizes[th.smallest]) if th.smallest is not None else None,
        eps_for_smallest=th.eps_pure)
    tone = "warning" if sc.vacuous else "good" if th.kept and th.meets == len(th.kept) else "neutral"
    verdicts = [Sentence(text, tone)]
    if sc.vacuous:
        verdicts.append(Sentence("Vacuous guarantee: lower ε or raise α to get one.", "warning"))
    heads = (Headline("Theorem 7: γ required", cv.members_text(sc.gamma), raw=sc.gamma,
                      note=f"Members a group needs at ε = {epsilon:g}, α = {a}. Binding term: "
                           f"{mi.TERM_LABELS[sc.binding_term]}"),
             Headline("Groups that meet it", f"{th.meets} of {len(th.kept)}", raw=float(th.meets)),
             Headline("Theorem 8: γ for (ε, δ)-DP", cv.members_text(th.thm8_gamma) if math.isfinite(th.thm8_gamma)
                      else "—", raw=th.thm8_gamma,
                      note=(f"Needs δ ≤ {mi.delta_max_approx(epsilon, n, beta, th.n_groups):.3g}"
                            if math.isfinite(th.thm8_gamma) else "Theorem 8 needs ε ≤ 0.5.")),
             Headline("Theorem 9: γ (one yes/no column)", cv.members_text(th.thm9_gamma), raw=th.thm9_gamma))
    reading = [f"ε = {epsilon:g}, n = {n:,}, kept groups |𝒞*| = {th.n_groups}, α = {a}, β = {beta:.3g}. Theorem "
               f"7's γ is set by the term {mi.TERM_LABELS[sc.binding_term]}"
               + (" (the max-information part ζ dominates)." if sc.binding_term in (0, 2) else
                  " (it does not depend on ε: even ε → 0 needs this many members).")
               + (f" The theorems need α ≥ {ct.ALPHA_FLOOR}: at α = {cv.alpha_text(alpha)} they are shown at "
                  f"α = {ct.ALPHA_FLOOR}." if alpha < ct.ALPHA_FLOOR else "")]
    if th.smallest is not None:
        m_s = group_sizes[th.smallest]
        reading.append(
            f"Largest ε certified for the smallest kept group ({th.smallest}, {m_s:,} members) at α = {a}: "
            + (f"pure ε ≤ {cv.eps_max_text(th.eps_pure)} (Theorem 7)" if math.isfinite(th.eps_pure)
               else "no pure ε (infeasible)") + "; "
            + (f"approximate ε ≤ {cv.eps_max_text(th.eps_approx)} with δ ≤ {th.delta_for_approx:.3g} (Theorem 8)"
               if math.isfinite(th.eps_approx) else "no approximate ε (infeasible)")
            + ". Without order invariance, double ε in γ and halve δ (footnote 15).")
        if release_kind == "gaussian_histogram" and math.isfinite(release_epsilon):
            if release_epsilon <= mi.APPROX_EPSILON_MAX:
                dmx = mi.delta_max_approx(release_epsilon, n, beta, th.n_groups)
                reading.append(f"Theorem 8 needs δ ≤ {dmx:.3g}; this release uses δ = {delta:.0e}"
                               + (" — the theorem does not apply." if delta > dmx else "."))
            else:
                reading.append("Theorem 8 needs ε ≤ 0.5; it does not apply to this release.")
    tables: dict[str, Any] = {"alpha_min": pd.DataFrame({
        "group": list(th.kept), "members": list(th.sizes),
        "smallest α certified (Thm 7)": [cv.alpha_min_text(x) for x in th.alpha_min]})}
    sections = [ReportSection("Reading", tuple(reading), table="alpha_min")]
    if show_table1:
        t1 = _table1()
        ok = int((t1["γ required at that ε"] <= t1["γ target 0.05n"]).sum())
        tables["table1"] = t1
        sections.append(ReportSection("Paper's Table 1", (
            f"Only the printed ε are copied from the paper; everything else is computed here. {ok} of {len(t1)} "
            "printed ε need at most 0.05n members, i.e. satisfy Theorem 7 (with the corrected Eq. 12, erratum "
            "E1).",), table="table1"))
    return TabView(
        headlines=heads, verdicts=tuple(verdicts), tables=frozen_map(tables),
        figures=frozen_map({"theory": dict(n=n, alpha=th.alpha, beta=beta, n_groups=th.n_groups, epsilon=epsilon,
                                           group_sizes={g: group_sizes[g] for g in th.kept}),
                            "terms": dict(sc=sc)}),
        question="Which groups does a theorem protect at this ε, and what ε would protect the smallest one?",
        params=frozen_map(params), sections=tuple(sections),
        script=frozen_map(dict(script, builder="theory_script", epsilon=epsilon, alpha=alpha, beta=beta,
                               gamma=gamma)),
        epsilon=epsilon if dp_release else None)  # a hypothetical ε is no privacy statement about this release


# ----------------------------------------------------------------------------------------- Section 7
def section7_intro(*, n: int, alpha: float, beta: float, n_groups: int) -> str:
    """The Section 7 explanation with Theorem 11's γ for the count (asymptotic)."""
    g11 = mi.gamma_count(n, max(alpha, ct.ALPHA_FLOOR), beta, n_groups)
    return ("One yes/no column released in the clear is not DP, yet provably coherent: a predictor seeing only that "
            "column gives one score to 'yes' and one to 'no', and splitting puts nearly equal shares of each in both "
            "halves (Theorem 9). Publishing only the *count* of ones is also coherent, for any lens, but needs far "
            f"larger groups (Theorem 11: γ = {cv.members_text(g11)}, an asymptotic bound).")


def section7_view(*, res: co.SingleColumnResult, column: str, curator: str, alpha: float, beta: float, n: int,
                  n_groups: int, seed: int, params: Mapping[str, str], script: Mapping[str, Any]) -> TabView:
    """Section 7: one yes/no column (or only its count) published; W1 of the one-bit predictor over the splits
    against the paper's bound (Theorem 9, or Theorem 11 for the count)."""
    w = np.asarray(res.w1, dtype=float)
    reps = w.shape[0]
    with np.errstate(invalid="ignore"):
        exceeded = int(np.any(w > np.asarray(res.bound)[None, :], axis=1).sum())
    text = cv.section7_verdict(res, column=column, curator=curator)
    heads = tuple(Headline(f"Largest W1, {nm}", cv.w1_text(np.nanmax(w[:, j]) if np.any(~np.isnan(w[:, j]))
                                                           else math.nan),
                           note=f"bound {cv.w1_text(res.bound[j]) if math.isfinite(res.bound[j]) else 'none'}")
                  for j, nm in enumerate(res.group_names))
    a = max(alpha, ct.ALPHA_FLOOR)
    shares = ", ".join(f"{nm} {x:.3f}" for nm, x in zip(res.group_names, res.exceed_fraction))
    notes = [f"Theorem 9 at α = {cv.alpha_text(a)}: γ = {cv.members_text(mi.gamma_single_column(n, a, beta, n_groups))}"
             f" members. Share of splits above the bound: {shares} (seed {seed})."]
    if curator == "count":
        notes.insert(0, "The learner sees only how many ones the released half holds and swaps its two scores when "
                        "that is more than half: the distances are the same as for the column, but Theorem 11's "
                        "bound (for a predictor seeing every column) is far weaker, often above 2.")
    return TabView(
        headlines=heads, verdicts=(Sentence(text, "good" if exceeded <= beta * reps else "warning"),),
        figures=frozen_map({"s7": dict(res=res, title=None if curator == "column" else
                                       "Only the count of ones published: W1 over random splits (bar = Theorem 11 "
                                       "bound)")}),
        question="Does publishing one yes/no column in the clear keep every group coherent?",
        params=frozen_map(params), sections=(ReportSection("Reading", tuple(notes)),),
        script=frozen_map(dict(script, builder="section7_script")), seed=int(seed))
