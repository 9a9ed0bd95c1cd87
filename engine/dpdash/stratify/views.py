"""What each results tab of the stratified synthesis viewer shows, built once per input (issue 22: one view per tab).

Pure functions, no Streamlit: the page renders what they return (``ui.show``). Also the upload defaults the views
start from (issue 25: group columns default to categorical columns; one binning rule everywhere).

References
----------
``004_c5ca305e20a1adba.txt`` (Rosenblatt, Stoyanovich & Musco, arXiv 2312.11712): Eq. 2–4 and Prop. 8 (the
per-group release, L109–138), Theorem 10 (L150–166), Definition 11 (parity, L183–193), Definition 13 (workload
error, L511–523). Spec ``stratified_synthesis_viewer.md`` §6 item 5 (uploads), §7 (the tabs).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from dpdash.accounting import composition as accounting
from dpdash.stratify import core as S
from dpdash.stratify import verdicts as V
from dpdash.common.data import code_column, is_row_label_column
from dpdash.common.formatting import number, percent
from dpdash.common.view import Headline, Sentence, TabView, frozen_map

#: Uploads: a column with at most this many distinct values is categorical; other numeric columns are binned.
MAX_LEVELS = 50
#: Uploads: the number of equal-width bins of a numeric column with more than :data:`MAX_LEVELS` values.
BINS = 5
#: A suggested group column has at most this many levels (the viewer allows at most 100 strata).
GROUP_LEVELS = 20


def _levels(s: pd.Series) -> int:
    return int(s.dropna().nunique())


def is_categorical(s: pd.Series, *, max_levels: int = MAX_LEVELS) -> bool:
    """True for a column the uploads' rule keeps as categories (≤ ``max_levels`` distinct values)."""
    return 2 <= _levels(s) <= max_levels


def suggest_group_columns(frame: pd.DataFrame, *, preferred: Sequence[str] = (), exclude: Sequence[str] = (),
                          max_groups: int = 1) -> list[str]:
    """Default group columns of a table: categorical columns, never the averaged column (issue 25).

    ``preferred`` (a bundled dataset's suggested groups) come first when categorical. Otherwise the first
    categorical columns of at most :data:`GROUP_LEVELS` levels, text before numbers and complete columns (no
    missing value, so no row is left out for its group) before incomplete ones, in file order. acs12 gives
    ``race`` (not ``income``, 266 values, whose 234 "groups" hold one income value each).
    """
    ok = [c for c in frame.columns if c not in exclude and is_categorical(frame[c])]
    pref = [c for c in preferred if c in ok]
    if pref:
        return pref[:2]

    def rank(c):
        s = frame[c]
        return (_levels(s) > GROUP_LEVELS, pd.api.types.is_numeric_dtype(s), bool(s.isna().any()))
    return sorted(ok, key=lambda c: (rank(c), list(frame.columns).index(c)))[:max_groups]


def numeric_columns(frame: pd.DataFrame) -> list[str]:
    """Columns the mean view can average: numeric with at least two distinct values, and not row numbers (1…n in
    order, or a ``rownames``-like column with a distinct value per row: issue 31, R's ``write.csv`` rownames were
    averaged)."""
    return [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c]) and _levels(frame[c]) >= 2
            and not is_row_label_column(frame, c)]


def suggest_value_column(frame: pd.DataFrame, *, exclude: Sequence[str] = (),
                         prefer: Sequence[str] = ()) -> str | None:
    """The column to average by default: the first of ``prefer`` that can be averaged (a shared dataset's columns
    with public design constants), else the numeric column (not a group) with the most distinct values."""
    cols = [c for c in numeric_columns(frame) if c not in exclude]
    if not cols:
        return None
    for c in prefer:
        if c in cols:
            return c
    return max(cols, key=lambda c: (_levels(frame[c]), -list(frame.columns).index(c)))


def group_codes(frame: pd.DataFrame, groups: Sequence[str], *, bins: int = BINS,
                max_levels: int = MAX_LEVELS) -> tuple[np.ndarray, list[str]]:
    """Each row's stratum (codes 0..K−1) and the strata's labels, by the one rule every view uses.

    Each group column is coded by ``dpdash.common.data.code_column`` (a numeric column with more than ``max_levels``
    values is cut into ``bins`` equal-width bins, as in the synthetic-data view); strata are the combinations
    that occur, labelled "a × b", in the order of the columns' codes.
    """
    if not groups:
        raise ValueError("at least one group column is needed")
    parts = [code_column(frame[g], bins=bins, max_levels=max_levels) for g in groups]
    key = np.zeros(len(frame), dtype=np.int64)
    for codes, labels in parts:
        key = key * len(labels) + codes
    uniq, inv = np.unique(key, return_inverse=True)
    names = []
    for u in uniq:
        digits = []
        for codes, labels in reversed(parts):
            digits.append(labels[int(u % len(labels))])
            u //= len(labels)
        names.append(" × ".join(reversed(digits)))
    return inv.astype(int), names


def opendp_group_keys(frame: pd.DataFrame, groups: Sequence[str], *, bins: int = BINS,
                      max_levels: int = MAX_LEVELS) -> dict[str, dict]:
    """How the OpenDP script names each row's group as :func:`group_codes` does (``dpdash.common.data.code_column``).

    Per group column: ``{"kind": "text"}`` (a text column: its value), ``{"kind": "levels", ...}`` (a numeric
    column of at most ``max_levels`` values: the page's labels of its sorted values), ``{"kind": "bins", ...}``
    (more values: ``bins`` equal-width bins between min and max, left-closed). Read by
    ``dpdash.stratify.script_opendp.stratified_means_script``.
    """
    out = {}
    for g in groups:
        present = frame[g].dropna()
        levels = present.unique()
        numeric = pd.api.types.is_numeric_dtype(present)
        if len(levels) <= max_levels and numeric:
            values = sorted(levels.tolist())
            out[str(g)] = {"kind": "levels", "values": [float(v) for v in values], "labels": [str(v) for v in values]}
        elif len(levels) <= max_levels:
            out[str(g)] = {"kind": "text"}
        else:
            _, labels = code_column(frame[g], bins=bins, max_levels=max_levels)
            edges = np.linspace(float(present.min()), float(present.max()), bins + 1)
            out[str(g)] = {"kind": "bins", "edges": [float(e) for e in edges], "labels": list(labels)[:bins]}
    return out


def opendp_script_params(source: dict | None, *, sizes, labels: Sequence[str], epsilon: float, R: float,
                         gamma: float, mode: str, min_frac: float, small_strata: str, estimator: str,
                         weights_mode: str = "exact") -> dict | None:
    """The keyword arguments of ``dpdash.stratify.script_opendp.stratified_means_script`` for what the mean view
    releases.

    ``source``: where the rows live and how to read them (``data``, ``groups``, ``value``, ``center``, ``scale``,
    ``group_keys``, ``note`` for the reader), from the page's inputs. None (no script) for Coinpress (zCDP, not
    the Laplace release the script performs) and for estimated weights (a noisy or holdout weight changes the
    release).
    """
    if source is None or estimator != "laplace" or weights_mode != "exact":
        return None
    return dict(data=str(source["data"]), groups=list(source["groups"]), value=str(source["value"]),
                center=float(source.get("center", 0.0)), scale=float(source.get("scale", 1.0)),
                group_keys=source.get("group_keys"), epsilon=float(epsilon), R=float(R), gamma=float(gamma),
                mode=str(mode), min_frac=float(min_frac), small_strata=str(small_strata),
                sizes=[int(v) for v in np.asarray(sizes).ravel()], labels=[str(v) for v in labels],
                note=str(source.get("note", "")))


# =========================================================================== tab views (issue 22)
QUESTION_MEAN = ("Does releasing each group's mean on its own (full ε each) make the group means more accurate than "
                 "one global release, and what does the population mean pay?")
QUESTION_SYNTH = ("Does fitting one synthesizer per group (full ε each) give each group a more faithful synthetic "
                  "table than one model of the whole table?")


#: Where each simulation control applies (the page greys it out elsewhere): the Mixture draws k sizes from
#: Dirichlet(α) for n records, the ACS preset scales the paper's Table 3 to n, the categorical table has n, k, α.
_APPLIES = {"alpha": ("Mixture", "Categorical"), "k": ("Mixture", "Categorical"),
            "n": ("Mixture", "ACS preset", "Categorical"), "tau": ("Mixture", "ACS preset"),
            "sigma_mode": ("Mixture", "ACS preset"), "weights": ("Mixture", "ACS preset")}


def mean_parameters(settings: dict, *, source: str, data_name: str, data: dict | None = None) -> dict:
    """The Mean view's parameters file: exactly the analysis shown (issue 31 item 5), so it reads back as that.

    ``settings`` holds the page's control values by name (epsilon, epsilons, reps, seed, min_frac, small_strata,
    estimator, R, gamma, clip_mode, alpha, k, n, tau, sigma_mode, weights, holdout, epsilon_weights,
    parity_normalized); only those that shape this view are kept: γ and the clipping width with the Laplace
    estimator, α, k, n, τ, the spread and the group weights with the simulated sources they belong to (the
    holdout share with "from a public share", the extra ε with "noisy"). ``data`` (the view's data: ``value``,
    ``groups``, ``center``, ``scale``, ``data`` file name) is recorded for a table source, whose value column, groups,
    centre and scale make the analysis.

    >>> p = mean_parameters(dict(epsilon=1.0, alpha=0.3, k=9, n=100, estimator="laplace", gamma=0.05,
    ...                          clip_mode="paper"), source="Upload", data_name="Your upload",
    ...                     data=dict(value="wage", groups=["race"], center=100.0, scale=40.0, data="w.csv"))
    >>> [k for k in ("alpha", "k", "n", "value_column", "group_columns", "center", "scale") if k in p]
    ['value_column', 'group_columns', 'center', 'scale']
    """
    keep = ("epsilon", "epsilons", "reps", "seed", "min_frac", "small_strata", "estimator", "R", "parity_normalized",
            "paper")
    out = {"mode": "mean", "source": data_name}
    out.update({k: settings[k] for k in keep if k in settings})
    if settings.get("estimator", "laplace") == "laplace":
        out.update({k: settings[k] for k in ("gamma", "clip_mode") if k in settings})
    out.update({k: settings[k] for k, where in _APPLIES.items() if source in where and k in settings})
    if source in _APPLIES["weights"]:
        if settings.get("weights") == "holdout" and "holdout" in settings:
            out["holdout"] = settings["holdout"]
        if settings.get("weights") == "noisy" and "epsilon_weights" in settings:
            out["epsilon_weights"] = settings["epsilon_weights"]
    if data and data.get("value") is not None:
        out.update(value_column=data["value"], group_columns=list(data.get("groups", [])),
                   center=data.get("center"), scale=data.get("scale"), data_file=data.get("data"))
    return out


def read_mean_parameters(text: str | bytes) -> dict:
    """A parameters file of :func:`mean_parameters` read back (JSON), refused in plain words if it is not one."""
    import json

    try:
        body = json.loads(text.decode("utf-8-sig") if isinstance(text, bytes) else text)
    except (ValueError, UnicodeDecodeError):
        raise ValueError("the file is not a parameters file (not JSON)") from None
    if not isinstance(body, dict) or body.get("mode") != "mean":
        raise ValueError("the file is not a Mean view parameters file (no \"mode\": \"mean\")")
    return body


def population_errors(df: pd.DataFrame, epsilon: float) -> tuple[float, float]:
    """Mean |error| of the population estimate over the repetitions at ``epsilon``: (global, per-group release).

    The global release is ``naive`` (Laplace) or ``coinpress``; the per-group one ``stratified`` or
    ``strat_coinpress`` (NaN when the run has none).
    """
    d = df[(df["level"] == "population") & np.isclose(df["epsilon"].to_numpy(float), epsilon)]
    m = d.groupby("method")["abs_err"].mean().to_dict()
    glob = next((float(m[k]) for k in V.GLOBAL_METHODS if k in m), float("nan"))
    strat = next((float(m[k]) for k in V.STRATIFIED_METHODS if k in m), float("nan"))
    return glob, strat


def rows_used_view(frame: pd.DataFrame, *, value: str, groups: Sequence[str], what: str = "Your upload",
                   why: str = "the analysis uses") -> TabView:
    """The Mean view's rows: which rows of a table it averages and, for every row left out, why (issue 31 item 2).

    The one place the count is computed: the tab's sentence, its "Rows left out" table and the rows the release
    uses all read this view (the page had computed the count itself, beside a second count from the synthesis
    coding). A row is left out only when it has no value in ``value`` or in a group column (issue 26 item 4);
    other columns' blanks do not matter.

    - ``verdicts``: one sentence, "<what>: 1,623 rows, 5 groups. 377 of 2,000 rows left out: no value in
      income, a column the analysis uses." (or "All 2,000 rows used: …");
    - ``headlines``: rows in the file, rows used, rows left out (raw counts);
    - ``tables``: ``rows`` (one line per row of the file: ``row``, 1 = the first data row; ``kept``; ``reason``,
      empty when kept, else "no value in income" or "no value in income, race"), ``left_out`` (one line per
      reason: ``reason``, ``rows``, largest first), ``by_column`` (the needed columns with a blank: ``column``,
      ``rows`` without a value; a row missing two columns counts in both), ``kept`` (the rows used, index reset);
    - ``figures``: ``codes`` and ``labels``, the kept rows' strata (:func:`group_codes`).

    >>> f = pd.DataFrame({"v": [1.0, None, 3.0, None], "g": ["a", "b", None, "a"]})
    >>> rv = rows_used_view(f, value="v", groups=["g"])
    >>> rv.verdicts[0].text
    'Your upload: 1 row, 1 group. 3 of 4 rows left out: no value in v (2), g (1), columns the analysis uses.'
    >>> rv.tables["rows"]["reason"].tolist()
    ['', 'no value in v', 'no value in g', 'no value in v']
    """
    cols = list(dict.fromkeys([value, *groups]))
    miss = frame[cols].isna().to_numpy()
    bad = miss.any(axis=1)
    # each row's reason by its pattern of blanks (at most 2^3 patterns), not row by row
    pattern = (miss.astype(np.int64) << np.arange(len(cols))).sum(axis=1)
    words = {int(p): "no value in " + ", ".join(c for i, c in enumerate(cols) if p >> i & 1)
             for p in np.unique(pattern[bad])}
    reason = np.full(len(frame), "", dtype=object)
    for p, text in words.items():
        reason[pattern == p] = text
    rows = pd.DataFrame({"row": np.arange(1, len(frame) + 1), "kept": ~bad, "reason": reason})
    left = rows.loc[~rows["kept"], "reason"].value_counts().rename_axis("reason").reset_index(name="rows")
    by_col = pd.DataFrame({"column": cols, "rows": miss.sum(axis=0).astype(int)})
    by_col = by_col[by_col["rows"] > 0].reset_index(drop=True)
    kept = frame.loc[~bad].reset_index(drop=True)
    n, n_bad = len(frame), int(bad.sum())
    n_kept = n - n_bad
    codes, labels = group_codes(kept, groups) if n_kept else (np.zeros(0, dtype=int), [])
    if n_bad == 0:
        left_words = f"All {n:,} rows used: none misses a value in a column {why}."
    else:
        where = (f"no value in {by_col['column'][0]}, a column {why}" if len(by_col) == 1 else
                 "no value in " + ", ".join(f"{c} ({m:,})" for c, m in by_col.itertuples(index=False))
                 + f", columns {why}")
        left_words = f"{n_bad:,} of {n:,} row{'s' if n != 1 else ''} left out: {where}."
    k = len(labels)
    text = f"{what}: {n_kept:,} row{'s' if n_kept != 1 else ''}, {k} group{'s' if k != 1 else ''}. {left_words}"
    heads = (Headline("Rows in the file", f"{n:,}", raw=float(n)),
             Headline("Rows used", f"{n_kept:,}", raw=float(n_kept)),
             Headline("Rows left out", f"{n_bad:,}", raw=float(n_bad)))
    return TabView(headlines=heads, verdicts=(Sentence(text),),
                   tables=frozen_map({"rows": rows, "left_out": left, "by_column": by_col, "kept": kept}),
                   figures=frozen_map({"codes": codes, "labels": labels}))


def mean_error_view(df: pd.DataFrame, *, epsilon: float, labels: Sequence[str], status: Sequence[str], sizes,
                    reps: int, seed: int, params: dict | None = None, clipped: tuple[int, int] | None = None,
                    raw=None, script: dict | None = None, opendp: dict | None = None) -> TabView:
    """The mean view's lead and its "Error per group" tab.

    Verdicts: how many groups the per-group release helped (tone by :func:`~dpdash.stratify.verdicts.count_tone`),
    the population's price (tone by the ratio), then the guidance warnings (many groups, a pooled stratum of one,
    clipped values). Headlines restate the same counts and errors with the sentences' rounding. Tables: the
    per-group comparison. Figures: the long run table. Script: ``recompute`` (keyword arguments of
    ``dpdash.stratify.script.mean_script``, "Copy as code") and ``opendp`` (of
    ``dpdash.stratify.script_opendp.stratified_means_script``, :func:`opendp_script_params`), each None when not
    offered.
    Source: seed 004 Eq. 2–4, Prop. 8.
    """
    sizes = np.asarray(sizes)
    comp = V.group_error_comparison(df, epsilon=epsilon, labels=list(labels), status=list(status))
    glob, strat = population_errors(df, epsilon)
    sentences = list(V.mean_verdict_sentences(comp, epsilon=epsilon, pop_global=glob, pop_stratified=strat,
                                              reps=reps))
    nz = sizes > 0
    guidance = [V.many_groups_guidance(int(nz.sum()), int(sizes.sum())), V.pooled_guidance(labels, sizes, status)]
    if clipped is not None:
        r = None if raw is None else np.asarray(raw, dtype=float)
        guidance.append(V.clipping_guidance(
            *clipped, upload=r is not None, low=None if r is None else float(np.min(r)),
            high=None if r is None else float(np.max(r)), median=None if r is None else float(np.median(r))))
    sentences += [Sentence(g, "warning") for g in guidance if g]
    helped, compared = V._helped_counts(comp["mean error, one global release"], comp["mean error, per-group release"])
    reps_note = f"mean over {reps:,} repetition{'s' if reps != 1 else ''}"
    headlines = (
        Headline("Groups helped", f"{helped} of {compared}", raw=float(helped)),
        Headline("Population error, one global release", number(glob), raw=glob, note=reps_note),
        Headline("Population error, per group", number(strat), raw=strat, note=reps_note),
    )
    return TabView(headlines=headlines, verdicts=tuple(sentences), tables=frozen_map({"comparison": comp}),
                   figures=frozen_map({"runs": df}), question=QUESTION_MEAN, params=frozen_map(params),
                   script=frozen_map({"recompute": script, "opendp": opendp}), epsilon=epsilon, seed=seed)


def population_view(df: pd.DataFrame, *, epsilon: float, reps: int, seed: int, analytic=None,
                    estimator: str = "laplace", extra_epsilon: float | None = None) -> TabView:
    """The "Population" tab: the population sentence of the verdict and the cards beside the box plot.

    Cards: the closed-form ratio of the privacy noise's RMSE, per group over global (Laplace only; spec §2.4,
    √(8ΣC_i²)/(nε) over √8·C(n)/(nε)); the budget each method spends (Coinpress: ρ = ε²/2 and its (ε, δ = 10⁻⁶)
    reading ρ + 2√(ρ log 1/δ), erratum E10).
    """
    glob, strat = population_errors(df, epsilon)
    sentence = Sentence(V.population_text(glob, strat), V.ratio_tone(glob, strat))
    heads = []
    if analytic is not None and estimator == "laplace":
        r = analytic.pop_strat_rmse / analytic.pop_naive_rmse
        heads.append(Headline("Typical noise, per group ÷ one global release", number(r, 3), raw=r,
                              note="Closed form over the strata released; a pooled stratum counts once."))
    if estimator == "coinpress":
        rho = accounting.pure_to_zcdp(epsilon)
        e = accounting.zcdp_to_dp(rho, 1e-6, method="standard")
        heads += [Headline("Budget (each method)", f"ρ = {number(rho, 3)}", raw=rho, note="ρ-zCDP, not pure ε-DP"),
                  Headline("As (ε, δ = 10⁻⁶)-DP", number(e, 3), raw=e)]
    else:
        extra = f" + ε_w = {extra_epsilon:g}" if extra_epsilon is not None else ""
        heads += [Headline("Budget, per group", f"ε = {epsilon:g}{extra}", raw=epsilon,
                           note="Each group gets the full ε; disjoint groups compose in parallel."),
                  Headline("Budget, split", f"ε/2 + ε/2 = {epsilon:g}{extra}", raw=epsilon)]
    return TabView(headlines=tuple(heads), verdicts=(sentence,), figures=frozen_map({"runs": df}),
                   question=QUESTION_MEAN, epsilon=epsilon, seed=seed)


def sizes_view(sizes, labels: Sequence[str], status: Sequence[str], *, alpha: float | None, min_frac: float,
               seed: int) -> TabView:
    """The "Group sizes" tab: Theorem 10's cards and sentence for these sizes (seed 004 L150–170, App. E).

    ``alpha``: the Dirichlet α that drew the sizes (simulated mixture) or None for fixed sizes, where the fitted
    α̂ (spec §2.7) is used. The sentence and the cards share their rounding (issue 22: a card said 0.4123 where
    the sentence said 41%).
    """
    sizes = np.asarray(sizes)
    nz = sizes > 0
    kk, ntot = int(nz.sum()), int(sizes.sum())
    shares = sizes[nz] / ntot
    alpha_hat = S.fit_symmetric_dirichlet_alpha(shares) if kk >= 2 else float("nan")
    table = pd.DataFrame({"group": list(labels), "records": sizes, "status": list(status)})
    threshold = f"threshold {min_frac:g}·n = {min_frac * ntot:,.0f} records"
    if not (kk >= 2 and ntot > kk):
        return TabView(verdicts=(Sentence(V.sizes_verdict(k=kk, n=ntot, gap=float("nan"), alpha_hat=alpha_hat)),),
                       tables=frozen_map({"sizes": table}), figures=frozen_map({"threshold": threshold}), seed=seed)
    b = S.logsum_bounds(kk, ntot)
    a_used = alpha if alpha is not None else alpha_hat
    E = S.theorem10_expectation(kk, a_used, ntot) if math.isfinite(a_used) else float("nan")
    gap = S.gap_share(kk, a_used, ntot) if math.isfinite(a_used) else float("nan")
    realized = S.realized_logsum(sizes[nz])
    a_text = "unbounded (equal sizes)" if alpha_hat == math.inf else number(alpha_hat, 3)
    heads = (Headline("Fitted imbalance α̂", a_text, raw=alpha_hat),
             # four figures: the log-sums sit close together (53.47 against a worst case of 53.93)
             Headline("Σ log(group size), these sizes", number(realized, 4), raw=realized),
             Headline("Expected Σ log (Theorem 10)", number(E, 4), raw=E),
             Headline("Worst case (equal sizes)", number(b.worst, 4), raw=b.worst),
             Headline("Best case (one big group)", number(b.best, 4), raw=b.best),
             Headline("Share of the way to the best case", percent(gap), raw=gap))
    return TabView(headlines=heads,
                   verdicts=(Sentence(V.sizes_verdict(k=kk, n=ntot, gap=gap, alpha_hat=alpha_hat, alpha=alpha)),),
                   tables=frozen_map({"sizes": table}),
                   figures=frozen_map({"k": kk, "n": ntot, "alpha": a_used, "alpha_hat": alpha_hat,
                                       "realized": realized, "threshold": threshold}), seed=seed)


def sweep_view(df: pd.DataFrame, *, paper_grid: bool, seed: int) -> TabView:
    """The "Error against ε" tab: over the paper's ε grid, the population error and the worst group's error of the
    global and the per-group release (mean over repetitions), and a sentence reading their ends."""
    if not paper_grid:
        return TabView(verdicts=(Sentence("Turn on the paper's ε grid above to sweep ε over the paper's values "
                                          "(0.01 … 5)."),), seed=seed)
    g = df[df["level"] == "group"].groupby(["method", "epsilon", "group"])["abs_err"].mean()
    worst = g.groupby(["method", "epsilon"]).max().unstack("method")
    eps = worst.index.to_numpy(float)
    cols = [c for c in (*V.GLOBAL_METHODS, *V.STRATIFIED_METHODS) if c in worst.columns]
    glob, strat = cols[0], cols[-1]
    text = (f"From ε = {eps[0]:g} to ε = {eps[-1]:g}, the worst group's error with one global release goes from "
            f"{number(worst[glob].iloc[0])} to {number(worst[glob].iloc[-1])} (its bias does not shrink with ε); "
            f"with the per-group release from {number(worst[strat].iloc[0])} to {number(worst[strat].iloc[-1])}.")
    table = worst.reset_index().rename(columns={c: f"worst group error, {c}" for c in worst.columns})
    return TabView(verdicts=(Sentence(text),), tables=frozen_map({"worst": table}), figures=frozen_map({"runs": df}),
                   seed=seed)


def parity_view(df: pd.DataFrame, *, epsilon: float, group_mask, normalized: bool, reps: int,
                seed: int) -> TabView:
    """The "Parity" tab: Definition 11 per method (cards) and the verdict that reads them (issue 25)."""
    phi = S.mean_parity_by_method(df, epsilon=epsilon, group_mask=group_mask, normalized=normalized)
    heads = tuple(Headline(f"Parity error, {METHODS_TEXT.get(m, m)}", number(v), raw=v) for m, v in phi.items())
    return TabView(headlines=heads, verdicts=(V.parity_verdict(phi, epsilon=epsilon, normalized=normalized,
                                                               reps=reps),), epsilon=epsilon, seed=seed)


METHODS_TEXT = {"naive": "Naive", "stratified": "Stratified", "split": "Split budget", "coinpress": "Coinpress",
                "strat_coinpress": "StratCoinpress"}


def synth_view(vanilla, stratified, *, epsilon: float, synthesizer: str, decode, seed: int,
               delta: float | None = None, params: dict | None = None, script: dict | None = None) -> TabView:
    """The "Synthetic data" tab: one model against one model per group (seed 004 L216–238, Defs. 11 and 13).

    ``vanilla``/``stratified``: ``dpdash.stratify.synth.SynthRun`` of each variant; ``decode(code_label) -> str``
    turns a
    stratum's code label into words. Verdicts from :func:`~dpdash.stratify.verdicts.synth_verdict_sentences`;
    headlines share the sentences' rounding (accuracies as percentages); tables: the measures, the per-group
    errors, the strata.
    """
    mv, ms = vanilla.metrics, stratified.metrics
    gtab = mv.workload_per_group[["group", "size", "error", "fallback"]].merge(
        ms.workload_per_group[["group", "error", "fallback"]], on="group", suffixes=("_vanilla", "_stratified"))
    gtab["parity_vanilla"] = gtab["group"].map(mv.parity.per_group)
    gtab["parity_stratified"] = gtab["group"].map(ms.parity.per_group)
    gtab["group"] = [decode(g) for g in gtab["group"]]
    sentences = V.synth_verdict_sentences(gtab, epsilon=epsilon, synthesizer=synthesizer,
                                          accuracy_vanilla=mv.accuracy, accuracy_stratified=ms.accuracy,
                                          majority=mv.majority_baseline)
    strata = stratified.strata
    n_models = int(strata["kept"].sum()) + int(strata["pooled"].any()) if strata is not None else 0
    summary = pd.DataFrame([
        ("Workload error (2-way tables)", mv.workload_global, ms.workload_global, "lower"),
        ("Parity error (Definition 11)", mv.parity.total, ms.parity.total, "lower"),
        ("Largest relative error of a group's column mean", mv.parity.max_disparity, ms.parity.max_disparity,
         "lower"),
        ("Classifier accuracy on real test rows", mv.accuracy, ms.accuracy, "higher"),
        ("Positive-prediction rate, lowest group ÷ highest", mv.dpr, ms.dpr, "closer to 1"),
        ("Missed positives (false-negative rate), highest group − lowest", mv.fnr_difference, ms.fnr_difference,
         "lower"),
    ], columns=["measure", "one model", "one model per group", "better when"])
    people = gtab.rename(columns={
        "size": "records", "error_vanilla": "workload error, one model",
        "error_stratified": "workload error, one model per group",
        "fallback_vanilla": "missing from the one-model sample", "fallback_stratified":
        "missing from the per-group sample", "parity_vanilla": "parity term, one model",
        "parity_stratified": "parity term, one model per group"})

    def pct(v):
        return percent(v) if v is not None and math.isfinite(v) else "n/a"
    heads = (Headline("Workload error, one model", number(mv.workload_global, 3), raw=mv.workload_global),
             Headline("Workload error, one model per group", number(ms.workload_global, 3), raw=ms.workload_global),
             Headline("Accuracy, one model", pct(mv.accuracy), raw=mv.accuracy, note="real held-out rows"),
             Headline("Accuracy, one model per group", pct(ms.accuracy), raw=ms.accuracy, note="real held-out rows"),
             Headline("Accuracy of always guessing the commonest label", pct(mv.majority_baseline),
                      raw=mv.majority_baseline),
             Headline("Accuracy when trained on real data", pct(mv.real_baseline), raw=mv.real_baseline),
             Headline("Models fitted per group", f"{n_models}", raw=float(n_models),
                      note="Each receives the full ε (parallel composition)."))
    missing = sorted(set(mv.parity.fallback_groups) | set(ms.parity.fallback_groups), key=str)
    return TabView(headlines=heads, verdicts=sentences,
                   tables=frozen_map({"summary": summary, "per_group": people, "strata": strata}),
                   figures=frozen_map({"vanilla": mv, "stratified": ms, "missing": tuple(decode(g) for g in missing),
                                       "n_models": n_models}),
                   question=QUESTION_SYNTH, params=frozen_map(params), script=frozen_map(script), epsilon=epsilon,
                   delta=delta, seed=seed)


QUESTION_PARTIAL = ("With public state totals and last month's counts, which release of county case and death counts "
                    "is closest to the truth, and what does each guarantee?")


def partial_release_view(loss: pd.DataFrame | None, guarantees: pd.DataFrame, *, epsilon: float, month: str,
                         seed: int, params: dict | None = None) -> TabView:
    """The "Partially private release" tab: which release is closest to the truth, and what each guarantees.

    ``loss``: ``ui.views.ppd_jobs.loss_summary`` (method, mean total ℓ₂ loss, sd, draws) or None before any run;
    ``guarantees``: ``dpdash.stratify.partial_release.guarantee_table`` rows of the methods shown. Cards and sentences
    share one rounding (the report's cards had shown 4 significant figures beside the sentence's 2). Unequal
    guarantees are a warning: errors compare fairly only at equal ε. Source: seed 001_cddb039cfb564267.txt §5.
    """
    verdicts = []
    heads = []
    if loss is not None:
        verdicts.append(Sentence(V.release_verdict(loss, epsilon=epsilon, month=month)))
        for _, row in loss.iterrows():
            v = float(row["mean total ℓ₂ loss"])
            heads.append(Headline(f"Mean total error, {row['method']}", number(v), raw=v,
                                  note=f"{int(row['draws'])} draws, ℓ₂ over all counties"))
    g = V.guarantee_verdict(guarantees)
    if g:
        verdicts.append(Sentence(g, "neutral" if g.startswith("Every method") else "warning"))
    if "guaranteed epsilon" in guarantees:
        for _, row in guarantees.iterrows():
            v = float(row["guaranteed epsilon"])
            heads.append(Headline(f"Guaranteed ε, {row['method']}", number(v), raw=v, note="one person's record"))
    return TabView(headlines=tuple(heads), verdicts=tuple(verdicts),
                   tables=frozen_map({"loss": loss, "guarantees": guarantees}), question=QUESTION_PARTIAL,
                   params=frozen_map(params), epsilon=epsilon, seed=seed)
