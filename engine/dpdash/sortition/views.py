"""Tab views of the leximax cohort picker: everything each results tab shows, built once from the engine's results.

One pure function per results tab (issue 22 item 1): :func:`cohort_view` (the chances and what each group can
expect), :func:`simulation_view` (what single draws give each group; part of the cohort tab, combined into its
report with :func:`combine`), :func:`finite_view` (the finite-set explorer) and :func:`quota_view` /
:func:`quota_infeasible_view` (citizens' assembly). The page's cards, verdict boxes, charts' inputs and alt texts,
CSV tables, report and "Copy as code" parameters all read the returned :class:`dpdash.common.view.TabView`, so no
sentence can restate a number differently from the card or table it describes.

References
----------
[b] = ``003_4b386133f61617e9.txt``: Henzinger, Peale, Reingold, Shen, *Leximax Approximations and Representative
Cohort Selection*, FORC 2022 — §4.1 (expected group utility y = Vᵀx, Lemma 15), Algorithm 1–2, Defs 2–12;
Flanigan et al., *Fair algorithms for selecting citizens' assemblies*, Nature 596 (2021) for the quota tab.
Issue 22 (LX1, k = 3: "in 5% of draws less than 0.9" read a quantile as a share; fixed in
:func:`dpdash.sortition.verdicts.draw_verdict`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

import numpy as np
import pandas as pd

from dpdash.sortition import core as lx
from dpdash.sortition import verdicts as lv
from dpdash.sortition import files as sf
from dpdash.common.formatting import number, percent
from dpdash.common.view import Headline, ReportSection, Sentence, TabView, frozen_map

__all__ = ["cohort_view", "simulation_view", "combine", "finite_view", "quota_view", "quota_infeasible_view",
           "set_words", "partial_sentence", "draw_view"]

COHORT_QUESTION = ("Which chances of selection serve every group as well as possible, worst-off first, and what "
                   "does that give each group?")
FINITE_QUESTION = "Which solutions are leximax, and which are good enough up to a slack ε ([b] §3)?"
QUOTA_QUESTION = ("Which lottery over quota-meeting panels gives every volunteer a chance as equal as the quotas "
                  "allow?")


def _warn(texts) -> tuple[Sentence, ...]:
    return tuple(Sentence(t, "warning") for t in texts if t)


# ---------------------------------------------------------------------------------------------------------------
# Tab A: cohort (paper)
# ---------------------------------------------------------------------------------------------------------------

def cohort_view(pool: lx.Pool, *, k: int, exact: lx.LeximaxResult, approx: lx.LeximaxResult | None = None,
                what: str = "leximax", utilitarian_x=None, maxmin_x=None, integer: lx.IntegerLeximax | None = None,
                n_cohorts: int | None = None, params: dict | None = None, solver: str = "",
                values_code: str | None = None) -> TabView:
    """The cohort tab: cards, verdict and warnings, group and chance tables, chart inputs, report and script.

    ``approx`` is the slack solution when a slack rule is chosen (it is then what the tab shows); ``what`` names
    the chances in sentences. ``utilitarian_x`` / ``maxmin_x`` are the baselines' marginals ([b] §4.2, ours),
    ``integer`` the best single cohort by brute force (None: skipped, ``n_cohorts`` says how many there are).
    """
    V = np.asarray(pool.values, dtype=float)
    n, m = V.shape
    res = approx if approx is not None else exact
    x, y = np.asarray(res.x, dtype=float), np.asarray(res.y, dtype=float)
    facts = lv.cohort_facts(V, x, k=k, group_names=pool.group_names)
    uniform_y = V.T @ np.full(n, k / n)
    util_y = V.T @ np.asarray(utilitarian_x, dtype=float) if utilitarian_x is not None else None
    worst = lv.utility_text(facts.worst_utility)
    uniform_worst = lv.utility_text(facts.uniform_worst_utility)
    headlines = (
        Headline("Worst-off group can expect", worst, raw=facts.worst_utility, note="expected utility"),
        Headline("Smallest chance", percent(facts.min_chance), raw=facts.min_chance),
        Headline("Largest chance", percent(facts.max_chance), raw=facts.max_chance),
        Headline("Uniform selection, worst-off group", uniform_worst, raw=facts.uniform_worst_utility,
                 note=f"every candidate at k/n; {facts.uniform_worst_group}"),
        Headline("Check (paper's Algorithm 2)", "✓ verified" if res.verified else "✗ failed",
                 note="Recomputes every level's guarantee from the chances; the paper's separation oracle."),
    )
    warns = [lv.zero_chance_warning(pool.ids, x),
             lv.over_represented_warning(lv.over_represented(V, x, k=k, group_names=pool.group_names))]
    slack = float(np.max(res.alpha[:-1], initial=0.0))
    if approx is not None and slack >= float(exact.y.min()) > 0:
        warns.append(f"The slack ({lv.utility_text(slack)}) is at least the worst-off group's exact leximax utility "
                     f"({lv.utility_text(float(exact.y.min()))}), so the guarantee for the worst-off group is "
                     "empty. Choose a smaller slack.")
    unserved = [g for g, col in zip(pool.group_names, V.T) if not col.any()]
    verdicts = tuple(Sentence(s, "good") for s in lv.cohort_verdicts(facts, what=what)) + _warn(warns)

    chances = pd.DataFrame({"candidate": list(pool.ids), "chance of selection": x})
    groups = pd.DataFrame({"group": list(pool.group_names), "expected utility": y, "uniform selection": uniform_y})
    if util_y is not None:
        groups["largest total"] = util_y
    levels = pd.DataFrame({"level": np.arange(1, m + 1), "gain at this level": res.gammas,
                           "guaranteed total of the worst-off groups": res.cumulative, "slack": res.alpha})
    series = {f"{what} chances": y, "uniform (k/n each)": uniform_y}
    profiles = {"leximax": np.asarray(exact.y, dtype=float)}
    if approx is not None:
        profiles[what] = y
    if integer is not None:
        profiles["best single cohort (no lottery)"] = np.asarray(integer.utilities, dtype=float)
    if util_y is not None:
        series["largest total"] = util_y
        profiles["largest total"] = util_y
    if maxmin_x is not None:
        profiles["first level only (maximin)"] = V.T @ np.asarray(maxmin_x, dtype=float)
    profiles["uniform (k/n each)"] = uniform_y
    skipped = ("" if integer is not None or n_cohorts is None else
               f" Best single cohort skipped: finding it is NP-hard ([b] Lemma 20) and there are {n_cohorts:,} "
               "cohorts.")
    figures = {
        "series": series, "profiles": profiles, "ids": tuple(pool.ids), "x": x, "k": int(k),
        "groups_alt": (f"Bar chart of each of the {m} groups' expected utility under {what} chances, uniform "
                       f"selection and the largest-total choice; the worst-off group gets {worst} ({what}) and "
                       f"{uniform_worst} (uniform)."),
        "groups_caption": ("Expected utility of each group: with these chances, with every candidate at the same "
                           "chance k/n, and with the choice that maximises the total (which can leave a group with "
                           "little)."),
        "profiles_alt": (f"Line chart of the groups' expected utilities sorted from worst off, for {len(profiles)} "
                         f"ways of choosing; leximax starts highest at {lv.utility_text(float(exact.y.min()))}."),
        "profiles_caption": ("Each line lists the groups' expected utilities from worst to best off. Leximax is "
                             "highest at the left end; the largest-total choice can leave the worst-off group "
                             "lower; the best single cohort is one fixed choice, not a lottery." + skipped),
        "chances_alt": (f"Bar chart of each candidate's chance of selection, largest first: from "
                        f"{percent(facts.max_chance)} down to {percent(facts.min_chance)}; {facts.n_zero} of {n} "
                        f"at zero; the chances add up to k = {k}."),
        "chances_caption": f"Chance of selection of each candidate; the chances add up to k = {k}.",
    }
    solve_line = (f"The chances add up to {x.sum():.6g} (k = {k}); {res.lp_solves} linear programs solved in "
                  f"{res.seconds:.2f} s" + (f" with {solver}." if solver else "."))
    sections = [ReportSection("How the chances were computed", (solve_line,), table="levels")]
    if unserved:
        sections.insert(0, ReportSection("Groups nobody serves", (
            f"{len(unserved)} group(s) have value 0 for every candidate, so no cohort can serve them: "
            + ", ".join(unserved[:10]) + ". Their expected utility is 0 whatever the choice; leximax then serves "
            "the other groups.",)))
    script = {"k": int(k), "values_code": values_code, "values": V if values_code is None else None,
              "alpha": None if approx is None else [float(a) for a in res.alpha]}
    return TabView(headlines=headlines, verdicts=verdicts,
                   tables=frozen_map({"chances": chances, "groups": groups, "levels": levels}),
                   figures=frozen_map(figures), question=COHORT_QUESTION, params=frozen_map(params or {}),
                   sections=tuple(sections), script=frozen_map(script))


def simulation_view(pool: lx.Pool, mc, *, k: int, x, expected_min: float, n_draws: int, seed: int,
                    sampler: str, delta: float) -> TabView:
    """What single draws give each group: the sentence, the per-group table and the chart's inputs.

    Shares of draws are counted in the draws (never read off a quantile, issue 22); Lemma 15's bounds
    ([b] §4.1.2) come from the engine's :class:`dpdash.sortition.core.MonteCarloSummary`.
    """
    U = np.asarray(mc.utilities, dtype=float)
    worst = U.min(axis=1)
    text = lv.draw_verdict(worst, expected_min=expected_min, n_draws=int(n_draws), scheme=sampler, seed=int(seed))
    lines = [text]
    if sampler == "independent":
        pmf = lx.poisson_binomial_pmf(x)
        lo, hi = lx.size_interval(x, coverage=0.95)
        # the range's own share of draws, summed from the exact size distribution (not the 95% it aims at)
        lines.append(f"Independent coins give exactly {k} members in {percent(float(pmf[k]))} of draws; "
                     f"{percent(float(pmf[lo:hi + 1].sum()))} of draws have {lo} to {hi} members.")
    lowest = U.min(axis=0)
    table = pd.DataFrame({
        "group": list(pool.group_names), "expected": mc.expected, "average in the draws": mc.mean,
        "standard deviation": mc.sd, "lowest in the draws": lowest,
        "share of draws at the lowest": (U <= lowest + lv.VALUE_TOL).mean(axis=0),
        "5th percentile": mc.q05, "share of draws at or below the 5th percentile":
            (U <= np.asarray(mc.q05) + lv.VALUE_TOL).mean(axis=0),
        "share of draws more than δ below": mc.empirical_tail,
        "bound, paper (Lemma 15)": mc.hoeffding_paper, "bound, refined": mc.hoeffding_refined})
    how = {"dependent": "exactly k members each, by dependent rounding",
           "independent": "an independent coin per candidate, k members on average"}.get(sampler, sampler)
    method = (f"{n_draws:,} cohorts are drawn with the chances above ({how}), seed {seed}. [b] Lemma 15 bounds "
              f"the chance that a group falls more than δ = {number(delta, 3)} below its expectation by exp(−2δ²/n) = "
              f"{number(float(mc.hoeffding_paper), 3)}; the refined bound over the undecided candidates is at most "
              f"{number(float(np.max(mc.hoeffding_refined)), 3)}. For an arbitrary lottery over cohorts with the "
              "same expectations only a reverse-Markov bound is available (our reading of [b]'s '1/3', erratum L9).")
    figures = {"utilities": U, "expected": np.asarray(mc.expected, dtype=float), "delta": float(delta),
               "group_names": tuple(pool.group_names),
               "alt": (f"Step lines, one per worst-off group, of the share of {n_draws:,} simulated draws at or "
                       f"below each utility; dotted lines mark each group's expectation, the dashed line expected "
                       f"minus δ = {number(delta, 3)}."),
               "caption": ("For each group (worst-off first), the share of draws in which it got at most a given "
                           "utility. Dotted: its expected utility; dashed: expected − δ.")}
    return TabView(verdicts=tuple(Sentence(s, "neutral") for s in lines), tables=frozen_map({"simulation": table}),
                   figures=frozen_map(figures), sections=(ReportSection("Single draws", (method,),
                                                                        table="simulation"),),
                   seed=int(seed))


def combine(first: TabView, *more: TabView | None) -> TabView:
    """One report for a tab shown in parts: ``first``'s cards, question and script, everyone's sentences."""
    verdicts, tables, sections, seed = list(first.verdicts), dict(first.tables), list(first.sections), first.seed
    for v in more:
        if v is None:
            continue
        verdicts += list(v.verdicts)
        tables.update(v.tables)
        sections += list(v.sections)
        seed = v.seed if v.seed is not None else seed
    return TabView(headlines=first.headlines, verdicts=tuple(verdicts), tables=frozen_map(tables),
                   figures=first.figures, question=first.question, params=first.params, sections=tuple(sections),
                   script=first.script, epsilon=first.epsilon, delta=first.delta, seed=seed)


# ---------------------------------------------------------------------------------------------------------------
# Tab B: finite-set explorer
# ---------------------------------------------------------------------------------------------------------------

def set_words(members) -> str:
    """"S1 S3" for {0, 2}; "none" for the empty set (the membership headlines)."""
    return " ".join(f"S{s + 1}" for s in sorted(members)) or "none"


def finite_view(U, *, epsilon, example: str = "") -> TabView:
    """The finite-set explorer: membership table, chain, verdict, scatter inputs and the three set headlines.

    ``epsilon`` is the slack (a float is read through its decimal text, so 0.01 is exactly 1/100 with fractions).
    Sets: leximax (Defs 2–3), ε-tradeoff = ε-recursive (Def 7, Thm 11), ε-significant (Def 12).
    """
    e = epsilon if isinstance(epsilon, Fraction) else Fraction(str(epsilon))
    sets = {"leximax": lx.leximax_set(U), "tradeoff": lx.recursive_set(U, epsilon=e),
            "significant": lx.significant_set(U, epsilon=e)}
    text = lv.finite_verdict(sets, epsilon=float(e))
    chain = lx.recursive_chain(U, alpha=[e] * len(U[0]))
    chain_text = " ⊇ ".join("{" + ", ".join(f"S{s + 1}" for s in sorted(c)) + "}" for c in chain)
    headlines = (Headline("Leximax", set_words(sets["leximax"]), note="Defs 2–3"),
                 Headline("ε-tradeoff", set_words(sets["tradeoff"]), note="Def 7"),
                 Headline("ε-significant", set_words(sets["significant"]), note="Def 12"))
    figures = {"U": U, "sets": {"leximax": sets["leximax"], "ε-tradeoff = ε-recursive": sets["tradeoff"],
                                "ε-significant": sets["significant"]},
               "alt": (f"Scatter of the {len(U)} solutions by their utility for the first two groups; rings mark the "
                       "leximax, ε-tradeoff and ε-significant solutions. " + text),
               "caption": ("Each dot is a solution; rings mark membership ([b] Figs. 2–5). Only the first two groups "
                           "are drawn.")}
    eps_text = f"{float(e):g}"
    return TabView(headlines=headlines, verdicts=(Sentence(text, "neutral"),),
                   tables=frozen_map({"membership": lx.membership_table(U, epsilon=e)}),
                   figures=frozen_map(figures), question=FINITE_QUESTION,
                   params=frozen_map({"example": example, "slack ε": eps_text, "solutions": str(len(U)),
                                      "groups": str(len(U[0]))}),
                   sections=(ReportSection("Chain with slack ε at every level ([b] Def 12)", (chain_text,)),),
                   script=frozen_map({"rows": [[str(v) for v in r] for r in U], "epsilon": str(e)}))


# ---------------------------------------------------------------------------------------------------------------
# Tab C: citizens' assembly (quotas)
# ---------------------------------------------------------------------------------------------------------------

def quota_infeasible_view(report: lx.QuotaReport) -> TabView:
    """Quotas that no panel meets: the problems, the smallest change that fixes them and its table."""
    lines = tuple(lx.relaxation_sentences(report))
    verdict = Sentence("The quotas cannot all be met, so no panel of this size exists. " + " ".join(report.problems),
                       "warning")
    sections = ()
    if lines:
        sections = (ReportSection(f"Smallest change that makes them feasible ({report.seats_changed} seat bound(s) "
                                  "changed; other minimal changes may exist)", lines, table="relaxation"),)
    tables = {"relaxation": report.relaxation} if report.relaxation is not None else {}
    return TabView(verdicts=(verdict,), tables=frozen_map(tables), sections=sections, question=QUOTA_QUESTION)


def _quota_table(pool: pd.DataFrame, quotas: Sequence[lx.Quota], dist: lx.PanelDistribution,
                 id_col: str) -> pd.DataFrame:
    """The quotas as the report prints them (issue 34): bounds, people in the pool and the lottery's expected seats
    (the sum of the chances of the people with that value)."""
    chance = dict(zip(map(str, dist.person_ids), np.asarray(dist.probabilities, dtype=float)))
    p = pool[id_col].astype(str).str.strip().map(chance).fillna(0.0).to_numpy(dtype=float)
    rows = []
    for q in quotas:
        has = (pool[q.feature].astype(str).str.strip() == q.value).to_numpy()
        rows.append({"feature": q.feature, "value": q.value, "min": q.min, "max": q.max, "in pool": int(has.sum()),
                     "expected seats": float(p[has].sum())})
    return pd.DataFrame(rows)


def draw_view(log: Sequence[dict], *, lottery_id: str, selected: pd.DataFrame | None = None,
              check: pd.DataFrame | None = None) -> TabView:
    """What was drawn (issue 31: the report includes the panel, the draw log and the seed): the last panel drawn
    from this lottery with its quota check, and every draw of the session with its seed, time and members."""
    mine = [r for r in log if r.get("lottery") == lottery_id]
    tables: dict = {}
    sections = []
    if mine and selected is not None:
        last = mine[-1]
        tables["drawn panel"] = selected
        sections.append(ReportSection("Drawn panel", (
            f"{len(mine)} panel(s) drawn from this lottery; the last, shown here, with seed {last['seed']} at "
            f"{last['time (UTC)']} UTC: {len(str(last['members']).split())} members. The draw is reproducible: "
            f"draw_panel(lottery, rng={last['seed']}).",), table="drawn panel"))
        if check is not None:
            tables["drawn panel quotas"] = check
            sections.append(ReportSection("Quotas on the drawn panel", (), table="drawn panel quotas"))
    else:
        sections.append(ReportSection("Drawn panel", ("No panel has been drawn from this lottery yet.",)))
    if log:
        tables["draw log"] = pd.DataFrame(list(log))
        sections.append(ReportSection("Draw log", (f"{len(log)} draw(s) in this session, each with its seed; "
                                                   "the lottery column names the lottery drawn from.",),
                                      table="draw log"))
    return TabView(tables=frozen_map(tables), sections=tuple(sections))


def _baseline_note(info) -> str:
    """Why the uniform comparison is not shown: too few accepted samples, with the counts (issue 34)."""
    if info is None:
        return ("Comparison unavailable: quota-meeting panels are too rare for rejection sampling (fewer than 1 in "
                "10,000 random panels meet the quotas).")
    return (f"Comparison unavailable: too few accepted samples. Only {info.accepted:,} of {info.draws:,} random "
            f"panels ({percent(info.acceptance)}) met the quotas; at least {lx.MIN_ACCEPTED:,} are needed before "
            "the share of volunteers below the leximin minimum is stated (with fewer, another seed gives another "
            "answer).")


def _compare_caption(baseline, minimum: float) -> str:
    """The leximin-vs-uniform caption, with the share it names counted (it was a fixed claim, true or not)."""
    below = float((np.asarray(baseline, dtype=float) < minimum - 1e-9).mean())
    head = "Uniform over quota-meeting panels (estimated by rejection sampling) "
    if below == 0:
        return head + f"leaves nobody below the leximin minimum, {percent(minimum)}, on this pool."
    return head + f"leaves {percent(below)} of people below the leximin minimum, {percent(minimum)}."


def quota_view(pool: pd.DataFrame, quotas: Sequence[lx.Quota], dist: lx.PanelDistribution, *, k: int, seed: int,
               baseline=None, id_col: str = "person_id", source: str = "", colour: str | None = None,
               pool_code: str | None = None, pool_file: pd.DataFrame | None = None,
               n_selections: int = 1_000) -> TabView:
    """The quota tab: leximin chances against k/n and the uniform baseline, cards, tables, chart inputs, report.

    Every chance on the cards, in the verdict and in the report is written with one formatter (``percent``);
    tables keep full precision. ``pool`` holds the id and the quota features (what the engine and the script
    see); ``pool_file`` is the respondents file as read (all its columns), which the chances table extends in the
    Sortition Foundation's format. The lottery table lists ``n_selections`` panels in the format of
    ``sortition-algorithms``' multiple selections (:mod:`dpdash.sortition.files`). Source: Flanigan et al.
    (2021); metrics as in the product spec §6.
    """
    n = len(pool)
    met = lx.selection_metrics(dist, k=k)
    feats = list(dict.fromkeys(q.feature for q in quotas))
    info = baseline if isinstance(baseline, lx.UniformBaseline) else None
    if info is not None:
        baseline = info.probabilities
    interval = sample = None
    if info is not None and baseline is not None:
        _share, lo_, hi_ = info.share_below(met.minimum, rng=seed)
        interval, sample = (lo_, hi_), (info.accepted, info.draws)
    verdicts = [Sentence(f"The quotas can be met: panels of {k} out of {n:,} people exist.", "good")]
    verdicts += [Sentence(s, "good") for s in lv.panel_verdicts(dist.probabilities, k=k, baseline=baseline,
                                                                 never=dist.never_selectable, interval=interval,
                                                                 sample=sample)]
    warns = []
    if dist.never_selectable:
        n0 = len(dist.never_selectable)
        warns.append(f"{n0} {'person' if n0 == 1 else 'people'} can never be selected under these quotas: "
                     + ", ".join(dist.never_selectable[:20]) + (" …" if n0 > 20 else "")
                     + ". Loosen the quotas of the categories they belong to if everyone must have a chance.")
        verdicts[1] = Sentence(verdicts[1].text, "warning")
    if not dist.complete:
        warns.append(partial_sentence(dist))
    equal = k / n
    if dist.complete:
        smallest = Headline("Smallest chance", percent(met.minimum), raw=met.minimum)
    else:
        # a stopped run shows what it has proved: a lower bound (this lottery) and, if known, an upper bound
        upper = (f"; at most {percent(dist.upper_min)} (relaxation)" if np.isfinite(dist.upper_min) else "")
        smallest = Headline("Smallest chance", f"≥ {percent(met.minimum)}" if met.minimum > 0 else "not proven yet",
                            raw=met.minimum, note="Partial run: proven lower bound" + upper + ".")
    headlines = (smallest,
                 Headline("Equal share k/n", percent(equal), raw=equal),
                 Headline("Largest chance", percent(met.maximum), raw=met.maximum),
                 Headline("Inequality (Gini)", lv.utility_text(met.gini), raw=met.gini,
                          note="0 when everyone has the same chance."),
                 Headline("Panels in lottery", f"{met.n_panels:,}", raw=float(met.n_panels)))
    detail = (f"Geometric mean {percent(met.geometric_mean)}; {percent(met.share_below_equal)} of people below k/n; "
              f"{met.n_zero} with zero chance; {len(dist.levels)} levels; {dist.lp_solves} linear and "
              f"{dist.ilp_solves} integer programs, {dist.seconds:.1f} s of computation (CPU); "
              f"residual {dist.residual:.1e}; seed {seed} "
              "(initial panels).")
    probs = sf.chances_table(pool if pool_file is None else pool_file, id_col, dist.person_ids, dist.probabilities)
    lottery = pd.DataFrame(dist.panels, columns=[" | ".join(map(str, r)) for r in
                                                 dist.type_table[feats].itertuples(index=False)])
    lottery.insert(0, "probability of this panel", dist.panel_probabilities)
    colour = colour if colour in feats else feats[0]
    figures = {
        "probabilities": dist.probabilities, "colour_values": pool[colour].astype(str).to_numpy(),
        "colour": colour, "k": int(k), "baseline": baseline,
        "people_alt": (f"Dots for the {n:,} volunteers' chances of a seat sorted from smallest, coloured by {colour}; "
                       f"smallest {percent(met.minimum)}, largest {percent(met.maximum)}, dashed line at the equal "
                       f"chance {percent(equal)}."),
        "people_caption": ("Everyone's chance is as equal as the quotas allow: the smallest chance is as large as "
                           "possible, then the next smallest, and so on. The dashed line is the equal chance k/n."),
        "compare_alt": None if baseline is None else (
            f"Two step lines of everyone's chance sorted from smallest: leximin starts at {percent(met.minimum)}, "
            f"uniform over quota-meeting panels at {percent(float(np.min(baseline)))}."),
        "compare_caption": None if baseline is None else _compare_caption(baseline, met.minimum),
        "baseline_note": None if baseline is not None else _baseline_note(info),
    }
    qt = [(q.feature, q.value, q.min, q.max) for q in quotas]
    tables = {"chances": probs, "types": dist.type_table, "lottery": lottery,
              "quotas": _quota_table(pool, quotas, dist, id_col)}
    if len(dist.panels):                # an empty lottery (stopped before its first panel) has no file to write
        tables["lottery_file"] = sf.lottery_table(sf.lottery_panels(dist, n_selections=n_selections))
    script = {"k": int(k), "quotas": qt, "seed": int(seed), "pool_code": pool_code,
              "pool_records": None if pool_code else pool.to_dict("records"), "id_col": id_col, "n_people": n}
    return TabView(headlines=headlines, verdicts=tuple(verdicts) + _warn(warns),
                   tables=frozen_map(tables),
                   figures=frozen_map(figures), question=QUOTA_QUESTION,
                   params=frozen_map({"pool and quotas": source, "people": f"{n:,}", "panel size k": str(k),
                                      "quotas": str(len(quotas)), "seed": str(int(seed))}),
                   sections=(ReportSection("Lottery", (detail,)),
                             ReportSection("Quotas", (f"{len(quotas)} quotas on {len(feats)} features; the lottery's "
                                                      "expected seats per value, recomputed from everyone's chance, "
                                                      "lie within every quota.",), table="quotas")),
                   script=frozen_map(script), seed=int(seed))


_STOPS = {"cpu": "Stopped at the computation limit ({seconds:.1f} s of CPU time)",
          "work": "Stopped: one solver call reached its work limit (iterations or search nodes)",
          "memory": "Stopped at the memory budget (the most panels a run may hold)"}


def partial_sentence(dist: lx.PanelDistribution) -> str:
    """Why a leximin run stopped and what it has proved (issue 35): the smallest chance its lottery guarantees (a
    lower bound on the leximin's, never a bare 0) and the relaxation's upper bound when known."""
    head = _STOPS.get(dist.stopped, "Stopped at the limit").format(seconds=dist.seconds)
    if not dist.levels:
        head += (" before any chance was settled: these chances come from a lottery over the panels found so far, "
                 "not from the leximin (partial result).")
    else:
        head += (": the lowest chances are exact; the others come from the best lottery found so far and may still "
                 "change (partial result).")
    gmin = dist.guaranteed_min
    upper = float(dist.upper_min)
    if gmin > 0:
        proved = (f" Proven so far: this lottery gives everyone at least {percent(gmin)}, so the leximin's smallest "
                  "chance is at least that")
    else:
        n0 = int((np.asarray(dist.probabilities) <= 1e-12).sum())
        proved = (f" Proven so far: nothing above zero for the smallest chance; the lottery found so far still leaves "
                  f"{n0:,} {'person' if n0 == 1 else 'people'} without a chance")
    if np.isfinite(upper):
        proved += f"; no lottery can give everyone more than {percent(upper)} (the relaxed problem's bound)"
    return head + proved + ". Raise the limit to continue; the same limit gives the same result on a busy server."


def noise_view(U, N, *, epsilon, delta: Fraction | None = None) -> TabView:
    """The finite-set explorer's noise check: solutions found on noisy utilities N, checked against the true U.

    Source: S3 Lemmas 18–19 (Lemma 19 as corrected, erratum L1). ``delta`` is the noise bound the lemmas assume;
    None takes the largest entrywise difference |U − N| (exact fractions). A δ below that difference is a choice the
    user can correct: a warning naming the smallest valid δ, and no tables. Lemma 18 needs ε ≥ 2δ.
    """
    e = epsilon if isinstance(epsilon, Fraction) else Fraction(str(epsilon))
    dmax = max((abs(a - b) for ra, rb in zip(U, N) for a, b in zip(ra, rb)), default=Fraction(0))
    d = dmax if delta is None else Fraction(delta)
    notes = [Sentence(f"δ = {float(d):.6g} (largest difference between the two matrices: {float(dmax):.6g}).")]
    if d < dmax:
        warn = Sentence(f"The noisy utilities differ from the true ones by up to {float(dmax):.6g}, more than "
                        f"δ = {float(d):.6g}: Lemmas 18–19 assume noise within δ. Raise δ to at least "
                        f"{float(dmax):.6g} or tick “δ = the largest difference between the matrices”.", "warning")
        return TabView(verdicts=(warn,), figures=frozen_map({"notes": tuple(notes), "delta": d, "dmax": dmax}))
    tables = {"lemma19": lx.lemma19_check(U, N, epsilon=e, delta=d)}
    notes.append(Sentence("Corrected Lemma 19 (erratum L1): every ε-significant solution on the noisy utilities is "
                          "(ε−2δ, ε+2δ)-significant recursive on the true ones: the last column must read true on "
                          "every row."))
    if e >= 2 * d:
        tables["lemma18"] = lx.lemma18_check(U, N, epsilon=e, delta=d)
        notes.append(Sentence("Lemma 18: (ε−2δ, 2δ)-significant-tradeoff on noisy ⇒ ε-tradeoff on true."))
    else:
        notes.append(Sentence(f"Lemma 18 needs ε ≥ 2δ (here ε = {float(e):g}, 2δ = {2 * float(d):.6g}): not shown."))
    return TabView(tables=frozen_map(tables), figures=frozen_map({"notes": tuple(notes), "delta": d, "dmax": dmax}))
