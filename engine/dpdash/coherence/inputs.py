"""The coherence explorer's data defaults and run-time estimates: which column is the label, which columns the
default lens leaves out, why a label column cannot serve, and how long a run will take on this server.

Pure functions of a frame (or of measured times), so the page, its tests and a script agree on them.

References
----------
specs/coherence_explorer.md §6 (upload: label with 2–20 distinct values, lens = every other column, ≤ 30) and
§7.2 (uploads show an estimate, confirmation above 5 minutes); issue 25 (a column named ``label`` is the label,
a constant label is refused with what is expected, sampling weights and file markers stay out of the default
lens, run-time estimates honest on a busy server and shown for the ε sweep).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpdash.common.data import is_row_label_column

__all__ = ["LABEL_NAMES", "MIN_LABEL_LEVELS", "MAX_LABEL_LEVELS", "MAX_LENS", "label_candidates",
           "default_label", "label_problem", "non_feature_reason", "default_lens", "Estimate", "run_estimate",
           "time_words", "time_left_words", "calibration", "MODEL_BUDGET_BYTES", "ModelFootprint", "probe_tree",
           "footprint_problem", "level_counts"]

#: Column names (case-insensitive) that say "this is the label" (issue 25: `label` with yes/no/maybe).
LABEL_NAMES = ("label", "target", "outcome", "class", "y")
MIN_LABEL_LEVELS, MAX_LABEL_LEVELS = 2, 20
#: Most lens columns (spec §6).
MAX_LENS = 30
#: Sampling weights by name: Adult's fnlwgt, ACS person weights (PWGTP, PWGTP1…80), CPS/IPUMS WTFINL, PERWT…
#: A bare "weight" may be a person's body weight, so only survey-weight names are matched.
_WEIGHT = re.compile(r"wgt|^(wtfinl|perwt|hhwt|wt)$|(sampl\w*|survey|final|person|household|design|base|hh)_?"
                     r"weights?|weights?_?(final|survey|sampl\w*)", re.IGNORECASE)
#: File or partition markers by name (Adult's `split`: which file a row came from).
_MARKER_NAMES = {"split", "fold", "partition", "subset", "file", "filename", "source_file", "dataset", "set",
                 "sample", "train_test"}
_MARKER_VALUES = {"train", "test", "training", "testing", "valid", "validation", "val", "dev", "holdout"}


def label_candidates(df: pd.DataFrame) -> list[str]:
    """Columns that can be the label: 2 to 20 distinct non-missing values (spec §6)."""
    return [c for c in df.columns if MIN_LABEL_LEVELS <= df[c].nunique(dropna=True) <= MAX_LABEL_LEVELS]


def _named_label(columns: Sequence[str]) -> str | None:
    by_name = {str(c).strip().casefold(): c for c in columns}
    return next((by_name[n] for n in LABEL_NAMES if n in by_name), None)


def default_label(df: pd.DataFrame, *, suggested: str | None = None) -> str | None:
    """The label a page starts from: DREM (the paper's), then a column named like a label (``label``, ``target``,
    ``outcome``, ``class``, ``y``), then the dataset's own suggestion, then the first candidate; None if none.

    >>> default_label(pd.DataFrame({"sex": [1, 2] * 3, "label": ["yes", "no", "maybe"] * 2}), suggested="sex")
    'label'
    """
    cands = label_candidates(df)
    if "DREM" in cands:
        return "DREM"
    named = _named_label(cands)
    if named is not None:
        return named
    if suggested in cands:
        return suggested
    return cands[0] if cands else None


def label_problem(df: pd.DataFrame, column: str) -> str | None:
    """Why ``column`` cannot be the label (plain words, with what is expected), or None if it can."""
    s = df[column]
    k = int(s.nunique(dropna=True))
    if MIN_LABEL_LEVELS <= k <= MAX_LABEL_LEVELS:
        return None
    if k == 0:
        return (f"The column {column!r} has no values, so it cannot be the label: a label needs "
                f"{MIN_LABEL_LEVELS} to {MAX_LABEL_LEVELS} different values, for example yes/no.")
    if k == 1:
        only = s.dropna().iloc[0]
        return (f"The column {column!r} has the same value ({str(only)[:40]!r}) in all {int(s.notna().sum()):,} "
                "rows that have one, so it cannot be the label: a predictor has nothing to tell apart. A label "
                f"needs {MIN_LABEL_LEVELS} to {MAX_LABEL_LEVELS} different values, for example yes/no.")
    return (f"The column {column!r} has {k:,} different values, so it cannot be the label: a label needs "
            f"{MIN_LABEL_LEVELS} to {MAX_LABEL_LEVELS} different values (for example yes/no). Group a numeric "
            "column into a few ranges first.")


def non_feature_reason(df: pd.DataFrame, column: str) -> str | None:
    """Why ``column`` is left out of the default lens, or None: a sampling weight (``fnlwgt``), a marker of the
    file a row came from (``split`` = train/test) or a row identifier (a distinct value on every row). None of
    these describes a person, and an identifier lets a predictor recognise the released rows themselves."""
    name = str(column).strip()
    if _WEIGHT.search(name):
        return "a sampling weight"
    s = df[column]
    values = s.dropna()
    if name.casefold() in _MARKER_NAMES:
        return "marks the file or part a row came from"
    if values.size and not pd.api.types.is_numeric_dtype(s):
        distinct = {str(v).strip().casefold() for v in values.unique()[:10]}
        if len(distinct) <= 3 and distinct <= _MARKER_VALUES:
            return "marks the file or part a row came from"
    if len(df) >= 2 and is_row_label_column(df, column):
        return "row numbers (a row label, not a property of anyone)"
    if len(df) >= 20 and values.size == len(df) and s.nunique() == len(df) and (
            not pd.api.types.is_float_dtype(s) or bool((values % 1 == 0).all())) and (
            name.casefold() in ("id", "row", "index", "rowid", "row_id") or name.casefold().endswith("id")
            or not pd.api.types.is_numeric_dtype(s)):
        return "a row identifier (a different value on every row)"
    return None


def default_lens(df: pd.DataFrame, label: str, *, preferred: Sequence[str] = ()) -> tuple[list[str], dict[str, str]]:
    """The default lens and the columns it leaves out with the reason: ``preferred`` columns present in the data
    (the paper's 8 on census-like data), else every other column that describes a person, at most 30.

    >>> ages = [30 + i % 7 for i in range(30)]  # (a column holding 0…n−1 would be read as row numbers)
    >>> lens, left = default_lens(pd.DataFrame({"age": ages, "fnlwgt": range(30), "y": [0, 1] * 15}), "y")
    >>> lens, left
    (['age'], {'fnlwgt': 'a sampling weight'})
    """
    others = [c for c in df.columns if c != label]
    if preferred and all(c in others for c in preferred):
        return list(preferred), {}
    left = {c: r for c in others if (r := non_feature_reason(df, c)) is not None}
    lens = [c for c in others if c not in left]
    return lens[:MAX_LENS], left


# ----------------------------------------------------------------------------------------- run-time estimate
@dataclass(frozen=True)
class Estimate:
    """How long ``runs`` repetitions will take: ``seconds`` expected, ``workers`` in parallel, the server's
    ``load`` (other runnable jobs, from the 1-minute load average) and the ``share`` of a core each worker gets."""

    seconds: float
    per_run_s: float
    runs: int
    workers: int
    load: float
    share: float

    @property
    def busy(self) -> bool:
        return self.share < 0.999


#: Wall time of a parallel run over the single-run time × runs / workers on an idle 2-core machine: joblib's
#: start-up, pickling and the last, unbalanced batch (spec §8 allows 0.65 × the serial time for 2 workers).
PARALLEL_OVERHEAD = 1.3


def run_estimate(*, per_run_s: float, runs: int, workers: int, cores: int, load: float = 0.0) -> Estimate:
    """Expected wall time of ``runs`` repetitions that each take ``per_run_s`` alone on one core.

    The repetitions share ``min(workers, runs)`` workers; when the server is busy (``load`` other runnable jobs
    on ``cores`` cores), every runnable job gets ``cores / (load + workers)`` of a core (a fair scheduler), so the
    run slows down by that share (issue 25: an idle-machine estimate was 5× optimistic on a busy server).
    """
    if not (per_run_s >= 0 and math.isfinite(per_run_s)):
        raise ValueError(f"per_run_s must be a finite time ≥ 0, got {per_run_s!r}")
    if runs < 1 or workers < 1 or cores < 1:
        raise ValueError(f"runs, workers and cores must be ≥ 1, got {runs}, {workers}, {cores}")
    load = max(0.0, float(load)) if math.isfinite(load) else 0.0
    w = min(int(workers), int(runs))
    share = min(1.0, cores / (load + w))
    batches = math.ceil(runs / w)
    overhead = PARALLEL_OVERHEAD if w > 1 else 1.0
    return Estimate(seconds=per_run_s * batches * overhead / share, per_run_s=float(per_run_s), runs=int(runs),
                    workers=w, load=load, share=share)


def calibration(ratio_before: float | None, *, predicted_s: float, actual_s: float) -> float:
    """The server's correction to the cost model after a run: the ratio of the time a run took to the time the model
    predicted for it (start-up of the worker processes, a busier machine than the load average says), averaged with
    the ratio before (half weight each) and kept within [0.5, 100].

    >>> calibration(None, predicted_s=3.0, actual_s=75.0), calibration(25.0, predicted_s=10.0, actual_s=50.0)
    (25.0, 15.0)
    """
    if not (predicted_s > 0 and actual_s >= 0 and math.isfinite(actual_s)):
        return ratio_before if ratio_before is not None else 1.0
    r = actual_s / predicted_s
    if ratio_before is not None and math.isfinite(ratio_before):
        r = 0.5 * (r + ratio_before)
    return min(100.0, max(0.5, r))


def time_words(seconds: float) -> str:
    """A duration for reading: "under a second", "about 40 s", "about 3 min", "about 1.5 h".

    >>> time_words(0.3), time_words(38.2), time_words(185), time_words(5400)
    ('under a second', 'about 40 s', 'about 3 min', 'about 1.5 h')
    """
    if seconds < 1:
        return "under a second"
    if seconds < 60:
        return f"about {max(1, round(seconds, -1) if seconds >= 10 else round(seconds)):.0f} s"
    if seconds < 3600:
        return f"about {seconds / 60:.0f} min" if seconds >= 90 else f"about {seconds / 60:.1f} min"
    return f"about {seconds / 3600:.1f} h"


def time_left_words(done: int, total: int, elapsed_s: float) -> str:
    """The progress bar's text, calibrated on the runs finished so far (the first run's time on this server,
    under its present load): "3/20 runs, about 40 s left"."""
    if done <= 0 or done >= total:
        return f"{done}/{total} runs"
    left = elapsed_s / done * (total - done)
    return f"{done}/{total} runs, {time_words(left)} left"


# ----------------------------------------------------------------------------------------- memory of a run
#: Most memory the fitted models of one run may hold at once (issue 26: a 3.6 MB upload added 405 MB).
MODEL_BUDGET_BYTES = 512 * 2**20


@dataclass(frozen=True)
class ModelFootprint:
    """What the learner of one repetition will hold, measured on one tree grown as the learner grows its trees:
    ``nodes`` per tree, ``bytes_per_tree`` (node records and class counts, at the tree's allocated capacity),
    ``trees`` per model and ``workers`` fitting models at the same time."""

    nodes: int
    bytes_per_tree: float
    trees: int
    workers: int

    @property
    def peak_bytes(self) -> float:
        return self.bytes_per_tree * self.trees * self.workers


def probe_tree(raw: np.ndarray, y: np.ndarray, *, learner: str, trees: int, workers: int,
               seed: int = 0) -> ModelFootprint | None:
    """Grow one tree on a half of the data the way ``learner`` grows each of its trees (the forest: a bootstrap
    sample, √d features per split; the single tree: all features), before any model of the run is built, and
    scale its size to the run. None for learners that keep no trees (nearest neighbour, logistic regression keep
    the data or a few coefficients, bounded by the data).

    The forest's trees are grown to pure leaves, so their size depends on how many distinct records the lens
    sees, not on the file's size in bytes: one probe tree measures it (spec §4 learners: scikit-learn defaults).
    """
    if learner not in ("random_forest", "decision_tree"):
        return None
    from sklearn.tree import DecisionTreeClassifier

    rs = np.random.RandomState(seed)
    n = raw.shape[0]
    half = rs.permutation(n)[: n // 2]
    X = np.asarray(raw[half], dtype=np.float32)
    yy = np.asarray(y)[half]
    if learner == "random_forest":
        boot = rs.randint(0, X.shape[0], X.shape[0])
        X, yy = X[boot], yy[boot]
    if np.unique(yy).size < 2:
        return ModelFootprint(nodes=1, bytes_per_tree=0.0, trees=int(trees), workers=int(workers))
    tree = DecisionTreeClassifier(max_features="sqrt" if learner == "random_forest" else None,
                                  random_state=seed).fit(X, yy).tree_
    nodes = int(tree.node_count)
    per_node = (tree.__getstate__()["nodes"].itemsize + tree.value[0].nbytes)
    cap = int(getattr(tree, "capacity", nodes) or nodes)
    return ModelFootprint(nodes=nodes, bytes_per_tree=float(per_node * max(cap, nodes)),
                          trees=int(trees) if learner == "random_forest" else 1, workers=int(workers))


def _mb(b: float) -> str:
    return f"{b / 2**20:,.0f} MB"


def footprint_problem(fp: ModelFootprint | None, *, many_levels: dict[str, int], rows: int,
                      budget: float | None = None) -> str | None:
    """A refusal, in words, when the run's models would hold more than ``budget`` bytes at once: what it would
    take, why (the columns with many values), and what to change. None when it fits."""
    budget = MODEL_BUDGET_BYTES if budget is None else budget
    if fp is None or fp.peak_bytes <= budget:
        return None
    fit_trees = int(budget // max(fp.bytes_per_tree * fp.workers, 1.0))
    what = (f"a {fp.trees}-tree random forest" if fp.trees > 1 else "a decision tree")
    cols = ", ".join(f"{c} ({k:,} values)" for c, k in sorted(many_levels.items(), key=lambda kv: -kv[1])[:4])
    s = (f"This run would need about {_mb(fp.peak_bytes)} of memory at once, more than the {_mb(budget)} this "
         f"server allows per run: {what} grown on half of these {rows:,} rows has about {fp.nodes:,} branches "
         f"per tree ({_mb(fp.bytes_per_tree)} a tree), and {fp.workers} are fitted at the same time.")
    if cols:
        s += f" The trees grow this large because the lens has columns with many different values: {cols}."
    fixes = []
    if fp.trees > 1 and fit_trees >= 1:
        fixes.append(f"use at most {fit_trees} trees (Advanced)")
    fixes.append("leave the many-valued columns out of the lens, or group them into a few ranges")
    fixes.append("choose logistic regression or 1-nearest neighbour")
    return s + " To run it, " + "; or ".join(fixes) + "."


def level_counts(df: pd.DataFrame, columns: Sequence[str]) -> dict[str, int]:
    """Distinct non-missing values of each column, counted before anything is encoded or expanded."""
    return {c: int(df[c].nunique(dropna=True)) for c in columns}
