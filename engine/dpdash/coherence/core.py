"""The demographic-coherence experiment (DemCoh): split, release, learn, compare predictions.

Source: "Enforcing Demographic Coherence" (``seeds/000_f379639b976c7ffb.txt``): §3.2-3.3 (random
half-split, accuracy-free comparison, subgroups, lens), §4 (restriction, lens, confidence-rated
predictor), §4.1-4.4 (Definitions 2-5, Figure 1, Eq. (3)), §5 (clear release + random forest,
Figures 2-3), §7 (Theorem 9). Contract: ``specs/coherence_explorer.md`` §3-§5.2, §9.

The learner never sees accuracy: only the distributions of its predictions on the released half
``X_a`` and the held-out half ``X_b`` are compared, group by group, with the Wasserstein-1 distance.
Per-run values are stored for every configured group; the size rule γ, α and the collection 𝒞* are
applied afterwards, so changing them never re-runs anything.
"""

from __future__ import annotations

import functools
import math
import numbers
import time
from dataclasses import dataclass, field
from typing import Callable, Literal, Mapping, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from dpdash.common import ledger
from dpdash.accounting import maxinfo
from dpdash.common.parallel import child_seed, imap_unordered
from dpdash.common.validation import as_generator, check_int_in_range

__all__ = [
    "Condition",
    "GroupSpec",
    "ReleaseSpec",
    "LearnerSpec",
    "ExperimentConfig",
    "PreparedData",
    "TrialResult",
    "ExperimentResult",
    "BetaEstimate",
    "SingleColumnResult",
    "w1",
    "w1_binary",
    "half_split",
    "histogram_release",
    "prob_two_members_separated",
    "expected_floor_binary",
    "group_masks",
    "prepare",
    "fit_predictor",
    "run_trial",
    "run_experiment",
    "beta_hat",
    "beta_curve",
    "clopper_pearson",
    "summarize",
    "noise_floor",
    "run_epsilon_sweep",
    "single_column_experiment",
    "single_column_w1",
    "gaussian_histogram_sigma",
    "sweep_for_export",
    "dp_domain_size",
]

#: Largest number of histogram cells (label factor included) for the DP releases.
MAX_DP_CELLS = 2_000_000
#: Columns with at most this many distinct values get one level per value when binned.
MAX_LEVELS = 20
MAX_LENS = 30
MIN_LABELLED_ROWS = 20
#: Largest feature magnitude the learners take (float32 trees; squares in the scalers stay finite).
MAX_ABS_FEATURE = 1e30
#: Spawn key used by ``noise_floor`` (repetitions use 0..999).
_FLOOR_SPAWN_KEY = 1_000_003
_TOL = 1e-9

ReleaseKind = Literal["clear", "dp_histogram", "gaussian_histogram", "subsample"]
LearnerKind = Literal["random_forest", "decision_tree", "nearest_neighbor", "logistic"]
RELEASE_KINDS = ("clear", "dp_histogram", "gaussian_histogram", "subsample")
HISTOGRAM_KINDS = ("dp_histogram", "gaussian_histogram")
LEARNER_KINDS = ("random_forest", "decision_tree", "nearest_neighbor", "logistic")
#: Learners that compute in float32 and predict row by row (see ``_LearnerInputs``).
TREE_KINDS = ("random_forest", "decision_tree")
OUTPUTS = ("hard", "soft")


# =============================================================================== specs
@dataclass(frozen=True)
class Condition:
    """One predicate on a column: ``value in values`` or ``low <= value < high``; missing never matches."""

    column: str
    values: tuple = ()
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class GroupSpec:
    """A subgroup: the AND of its conditions; no condition = everyone."""

    name: str
    conditions: tuple[Condition, ...] = ()


@dataclass(frozen=True)
class ReleaseSpec:
    """What the curator publishes from the released half ``X_a``.

    ``clear``: ``X_a`` itself (seed §5); ``dp_histogram``: ε-DP Laplace histogram over the binned
    features × label, sampled into n/2 synthetic records; ``gaussian_histogram``: the same with
    (ε, δ)-DP Gaussian noise; ``subsample``: ``subsample_size`` records of ``X_a`` in the clear.
    ``features`` (⊆ lens) restricts the released columns ("column subset"); None = whole lens.
    """

    kind: ReleaseKind = "clear"
    epsilon: float = 1.0
    subsample_size: int = 500
    binned: bool = False
    features: tuple[str, ...] | None = None
    bins: int = 10
    delta: float = 1e-6


@dataclass(frozen=True)
class LearnerSpec:
    """A scikit-learn learner and the kind of confidence output in [-1, 1]."""

    kind: LearnerKind = "random_forest"
    output: Literal["hard", "soft"] = "hard"
    n_estimators: int = 50


@dataclass(frozen=True)
class ExperimentConfig:
    """Everything that defines one DemCoh experiment (hashable: used as a cache key).

    ``rng``: an integer seed ≥ 0, a ``numpy.random.SeedSequence`` or a ``Generator`` (its ``SeedSequence``; its
    state is not used). Repetition r draws from child r of that sequence (``dpdash.common.parallel.child_seed``), so a
    run is reproducible and identical on any backend; ``None`` (fresh entropy) is refused for that reason.
    """

    label: str
    sensitive_value: object
    lens: tuple[str, ...]
    groups: tuple[GroupSpec, ...]
    release: ReleaseSpec = field(default_factory=ReleaseSpec)
    learner: LearnerSpec = field(default_factory=LearnerSpec)
    repetitions: int = 20
    rng: int | np.random.SeedSequence | np.random.Generator = 0


@dataclass(frozen=True, eq=False)
class PreparedData:
    """The dataset in the learner's encodings (spec §4 ``prepare``).

    ``raw``: lens columns as floats (categories → codes, missing → min − 1); ``binned``: released
    features as level codes (or None when the release does not need them); ``feature_idx``: the
    released features' columns in ``raw``.
    """

    n: int
    n_dropped: int
    y: np.ndarray
    raw: np.ndarray
    binned: np.ndarray | None
    binned_levels: tuple[int, ...] | None
    masks: dict[str, np.ndarray]
    group_sizes: dict[str, int]
    lens: tuple[str, ...] = ()
    features: tuple[str, ...] = ()
    feature_idx: tuple[int, ...] = ()
    bin_labels: tuple[tuple[str, ...], ...] | None = None
    #: Learner inputs per (release encoding, learner family), filled by ``prepare`` and travelling with the data
    #: to worker processes, so no repetition converts or de-duplicates the matrix again.
    inputs: dict = field(default_factory=dict, repr=False)


@dataclass(frozen=True, eq=False)
class TrialResult:
    """One repetition: W1 per configured group (NaN where undefined), half sizes, share of h < 0."""

    rep: int
    w1: np.ndarray
    half_sizes: np.ndarray
    frac_negative: np.ndarray
    idx_a: np.ndarray | None = None
    idx_b: np.ndarray | None = None
    predictions_a: np.ndarray | None = None
    predictions_b: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class ExperimentResult:
    """All repetitions of an experiment; γ/α/𝒞* are applied afterwards."""

    config: ExperimentConfig
    group_names: tuple[str, ...]
    group_sizes: tuple[int, ...]
    n: int
    n_dropped: int
    w1: np.ndarray
    half_sizes: np.ndarray
    frac_negative: np.ndarray
    first_trial: TrialResult
    elapsed_s: float

    def in_collection(self, gamma: float = 0.0) -> tuple[bool, ...]:
        """Which groups are in 𝒞*: ``|C ∩ X| >= max(gamma, 2)`` (Def. 3)."""
        g = _gamma_arg(gamma)
        return tuple(bool(s >= max(g, 2)) for s in self.group_sizes)

    def max_w1(self, gamma: float = 0.0) -> np.ndarray:
        """``M_r = max_{C ∈ 𝒞*} W1_{r,C}`` per run (NaN-ignoring; NaN if no group is defined)."""
        keep = np.array(self.in_collection(gamma), dtype=bool)
        if not keep.any():
            return np.full(self.w1.shape[0], np.nan)
        sub = self.w1[:, keep]
        out = np.full(sub.shape[0], np.nan)
        ok = ~np.all(np.isnan(sub), axis=1)
        out[ok] = np.nanmax(sub[ok], axis=1)
        return out

    def w1_table(self) -> pd.DataFrame:
        """Per-run W1 matrix as a long-format frame (rep, group, size, w1, half sizes, shares)."""
        rows = []
        for r in range(self.w1.shape[0]):
            for j, name in enumerate(self.group_names):
                rows.append(
                    (r, name, self.group_sizes[j], self.w1[r, j], int(self.half_sizes[r, j, 0]),
                     int(self.half_sizes[r, j, 1]), self.frac_negative[r, j, 0], self.frac_negative[r, j, 1])
                )
        return pd.DataFrame(
            rows,
            columns=["rep", "group", "size", "w1", "size_a", "size_b", "frac_negative_a", "frac_negative_b"],
        )


@dataclass(frozen=True)
class BetaEstimate:
    """β̂(α) = failures/runs with its two-sided Clopper–Pearson interval."""

    alpha: float
    beta_hat: float
    lower: float
    upper: float
    failures: int
    runs: int


@dataclass(frozen=True, eq=False)
class SingleColumnResult:
    """Section 7 demo: per-split W1 of a predictor seeing one bit, with the paper's bound."""

    group_names: tuple[str, ...]
    group_sizes: tuple[int, ...]
    w1: np.ndarray
    bound: np.ndarray
    exceed_fraction: np.ndarray


# =============================================================================== validation helpers
def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _gamma_arg(gamma) -> float:
    if not _is_number(gamma) or math.isnan(float(gamma)) or float(gamma) < 0:
        raise ValueError(f"gamma must be a number >= 0, got {gamma!r}")
    return float(gamma)


def _check_alpha(alpha) -> float:
    if not _is_number(alpha) or not 0 <= float(alpha) <= 2:
        raise ValueError(f"alpha must be in [0, 2], got {alpha!r}")
    return float(alpha)



def _validate_config(config: ExperimentConfig) -> None:
    rel, lea = config.release, config.learner
    if rel.kind not in RELEASE_KINDS:
        raise ValueError(f"release kind must be one of {RELEASE_KINDS}, got {rel.kind!r}")
    if lea.kind not in LEARNER_KINDS:
        raise ValueError(f"learner kind must be one of {LEARNER_KINDS}, got {lea.kind!r}")
    if lea.output not in OUTPUTS:
        raise ValueError(f"learner output must be 'hard' or 'soft', got {lea.output!r}")
    check_int_in_range(lea.n_estimators, name="n_estimators", lo=1, hi=500)
    check_int_in_range(config.repetitions, name="repetitions", lo=1, hi=1000)
    check_int_in_range(rel.bins, name="bins", lo=2, hi=50)
    eps = rel.epsilon
    if not _is_number(eps) or math.isnan(float(eps)) or float(eps) <= 0:
        raise ValueError(f"epsilon must be > 0 (math.inf = no noise), got {eps!r}")
    if rel.kind == "gaussian_histogram":
        if not _is_number(rel.delta) or not 0 < float(rel.delta) < 1:
            raise ValueError(f"delta must be in (0, 1), got {rel.delta!r}")
    if config.rng is None:
        raise ValueError("rng must be an integer seed ≥ 0, a numpy SeedSequence or a numpy Generator (not None: "
                         "an experiment must be reproducible)")
    as_generator(config.rng)  # the shared domain and message for anything else


# =============================================================================== W1 and split maths
def _as_predictions(name: str, x: ArrayLike) -> np.ndarray:
    a = np.asarray(x, dtype=float).ravel()
    if a.size == 0:
        raise ValueError(f"{name} is empty; W1 needs at least one prediction per sample")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains a non-finite value; predictions must lie in [-1, 1]")
    if a.min() < -1 - _TOL or a.max() > 1 + _TOL:
        raise ValueError(
            f"{name} has values outside [-1, 1] (min {a.min():g}, max {a.max():g}); predictions must lie in [-1, 1]"
        )
    return a


def _w1_fast(u: np.ndarray, v: np.ndarray) -> float:
    """∫|F_u − F_v| for two non-empty samples (no validation)."""
    u = np.sort(u)
    v = np.sort(v)
    allv = np.concatenate([u, v])
    allv.sort()
    deltas = np.diff(allv)
    if deltas.size == 0:
        return 0.0
    fu = np.searchsorted(u, allv[:-1], side="right") / u.size
    fv = np.searchsorted(v, allv[:-1], side="right") / v.size
    return float(np.sum(np.abs(fu - fv) * deltas))


def w1(u: ArrayLike, v: ArrayLike) -> float:
    """Wasserstein-1 distance between the empirical distributions of two prediction samples.

    ``W1(μ, ν) = ∫_{−1}^{1} |F_μ(t) − F_ν(t)| dt`` ∈ [0, 2]; samples may have any sizes.

    Parameters
    ----------
    u, v : array_like
        Non-empty predictions in [−1, 1] (tolerance 1e−9).

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, Definition 5, Eq. (3).

    Examples
    --------
    >>> w1([-1, -1, 1, 1], [-1, 1, 1, 1])
    0.5
    """
    return _w1_fast(_as_predictions("u", u), _as_predictions("v", v))


def w1_binary(frac_neg_a: float, frac_neg_b: float) -> float:
    """W1 of two ±1 prediction samples from their shares of −1: ``2·|p_a − p_b|``.

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, §6.3 (moving 10% of mass from −1 to +1 gives 0.2).
    """
    for name, f in (("frac_neg_a", frac_neg_a), ("frac_neg_b", frac_neg_b)):
        if not _is_number(f) or not 0 <= float(f) <= 1:
            raise ValueError(f"{name} must be a fraction in [0, 1], got {f!r}")
    return 2.0 * abs(float(frac_neg_a) - float(frac_neg_b))


def half_split(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Uniform split into ``X_a`` (n//2 indices) and ``X_b`` (the next n//2; odd n leaves one out).

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, Figure 1 (DemCoh experiment).
    """
    n = check_int_in_range(n, name="n", lo=2, hi=10**9)
    perm = rng.permutation(n)
    k = n // 2
    return perm[:k], perm[k : 2 * k]


def prob_two_members_separated(n: int) -> float:
    """Probability that two fixed records land in different halves: ``2k²/(n(n−1))``, k = ⌊n/2⌋.

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, §4.2. Erratum: the seed says 1/2; for even n it is n/(2(n−1))
    (spec §3.3).
    """
    n = check_int_in_range(n, name="n", lo=2, hi=10**12)
    k = n // 2
    return 2.0 * k * k / (n * (n - 1.0))


def expected_floor_binary(q: float, m: int) -> float:
    """Expected W1 of a split-independent ±1 predictor on a group of m: ``4·sqrt(q(1−q)/m)·sqrt(2/π)``.

    ``p_a − p_b`` has s.d. ``2·sqrt(q(1−q)/m)``; the mean of its absolute value times 2 is this.

    References
    ----------
    specs/coherence_explorer.md §3.3 (split-noise floor; the seed never estimates it).
    """
    if not _is_number(q) or not 0 <= float(q) <= 1:
        raise ValueError(f"q must be in [0, 1], got {q!r}")
    if not _is_number(m) or float(m) < 2:
        raise ValueError(f"m must be >= 2, got {m!r}")
    q = float(q)
    return 4.0 * math.sqrt(q * (1 - q) / float(m)) * math.sqrt(2.0 / math.pi)


# =============================================================================== groups
def _condition_mask(df: pd.DataFrame, c: Condition) -> np.ndarray:
    if c.column not in df.columns:
        raise ValueError(f"condition column {c.column!r} is not in the data (columns: {list(df.columns)})")
    has_values = len(c.values) > 0
    has_range = c.low is not None or c.high is not None
    if has_values == has_range:
        raise ValueError(
            f"condition on {c.column!r} needs either values or a range [low, high), not both or neither"
        )
    col = df[c.column]
    present = col.notna().to_numpy()
    numeric = pd.api.types.is_numeric_dtype(col)
    if has_range:
        if not numeric:
            raise ValueError(f"range condition on {c.column!r} needs a numeric column")
        lo = -math.inf if c.low is None else float(c.low)
        hi = math.inf if c.high is None else float(c.high)
        if lo >= hi:
            raise ValueError(f"condition on {c.column!r}: low must be < high, got [{c.low}, {c.high})")
        x = col.to_numpy(dtype=float, na_value=np.nan)
        with np.errstate(invalid="ignore"):
            return present & (x >= lo) & (x < hi)
    if numeric:
        vals = []
        for v in c.values:
            try:
                vals.append(float(v))
            except (TypeError, ValueError):
                pass
        x = col.to_numpy(dtype=float, na_value=np.nan)
        return present & np.isin(x, np.array(vals, dtype=float))
    vals = {str(v) for v in c.values}
    return present & col.astype(str).isin(vals).to_numpy()


def group_masks(df: pd.DataFrame, groups: Sequence[GroupSpec]) -> dict[str, np.ndarray]:
    """Boolean membership mask of each group on the full records (all columns, label included).

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, §4 (restriction ``X|_C = X ∩ C``), §5 (groups may use the label).
    """
    out: dict[str, np.ndarray] = {}
    for g in groups:
        if not isinstance(g.name, str) or not g.name.strip():
            raise ValueError(f"group names must be non-empty strings, got {g.name!r}")
        if g.name in out:
            raise ValueError(f"duplicate group name {g.name!r}")
        mask = np.ones(len(df), dtype=bool)
        for c in g.conditions:
            mask &= _condition_mask(df, c)
        out[g.name] = mask
    return out


# =============================================================================== prepare
def _codes_raw(col: pd.Series) -> np.ndarray:
    """Numeric → float; other → codes of sorted distinct values; missing → (smallest value) − 1."""
    if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
        x = col.to_numpy(dtype=float, na_value=np.nan, copy=True)
    else:
        present = col.notna().to_numpy()
        strs = col[present].astype(str).to_numpy(dtype=object)
        levels = np.array(sorted(set(strs)), dtype=object)
        x = np.full(len(col), np.nan)
        x[present] = np.searchsorted(levels, strs)
    miss = np.isnan(x)
    if miss.any():
        x[miss] = np.nanmin(x) - 1.0
    return x


def _binned_column(col: pd.Series, name: str, bins: int) -> tuple[np.ndarray, tuple[str, ...]]:
    """Level codes 0..L−1 and human labels of one released feature (spec §4 ``binned B``)."""
    present = col.notna().to_numpy()
    numeric = pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)
    codes = np.zeros(len(col), dtype=np.int64)
    if numeric:
        x = col.to_numpy(dtype=float, na_value=np.nan)
        distinct = np.unique(x[present])
        if distinct.size <= MAX_LEVELS:
            codes[present] = np.searchsorted(distinct, x[present])
            labels = tuple(f"{v:g}" for v in distinct)
        else:
            lo, hi = float(distinct[0]), float(distinct[-1])
            edges = np.linspace(lo, hi, bins + 1)
            # Last bin closed: values equal to max fall in bin bins−1.
            c = np.clip(np.searchsorted(edges, x[present], side="right") - 1, 0, bins - 1)
            codes[present] = c
            labels = tuple(
                f"[{edges[i]:g}, {edges[i + 1]:g}{']' if i == bins - 1 else ')'}" for i in range(bins)
            )
    else:
        strs = col[present].astype(str).to_numpy(dtype=object)
        distinct = sorted(set(strs))
        if len(distinct) > MAX_LEVELS:
            raise ValueError(
                f"released feature {name!r} is not numeric and has {len(distinct)} distinct values; "
                f"at most {MAX_LEVELS} are allowed for a binned/DP release"
            )
        codes[present] = np.searchsorted(np.array(distinct, dtype=object), strs)
        labels = tuple(distinct)
    if not present.all():
        codes[~present] = len(labels)
        labels = labels + ("missing",)
    return codes, labels


def dp_domain_size(levels: Sequence[int]) -> int:
    """Number of histogram cells: product of feature levels × 2 label values."""
    size = 2
    for lv in levels:
        size *= int(lv)
    return size


def _needs_binned(rel: ReleaseSpec) -> bool:
    return rel.kind in HISTOGRAM_KINDS or rel.binned


def prepare(df: pd.DataFrame, config: ExperimentConfig) -> PreparedData:
    """Validate the configuration against the data and encode it (spec §4 ``prepare``).

    Drops rows with a missing label (counted), codes the label (sensitive value → −1, others → +1),
    builds the raw lens matrix, the binned released features when the release needs them, and the
    group masks on full records.

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, §4, §5. Erratum: the seed's script kept rows with a missing label
    as a class −10, outside [−1, 1]; they are dropped here and counted (spec E12). Erratum: §5 codes
    the sensitive value −1 (§3.3 says positive = "attribute likely true"); §5 is followed (spec E15).
    """
    _validate_config(config)
    if not isinstance(df, pd.DataFrame):
        raise ValueError("df must be a pandas DataFrame")
    label = config.label
    if label not in df.columns:
        raise ValueError(f"label column {label!r} is not in the data (columns: {list(df.columns)})")
    lens = tuple(config.lens)
    if not lens:
        raise ValueError("lens is empty; choose at least one feature the predictor sees")
    if len(lens) > MAX_LENS:
        raise ValueError(f"lens has {len(lens)} columns; at most {MAX_LENS} are allowed")
    if len(set(lens)) != len(lens):
        raise ValueError("lens has duplicate columns")
    missing = [c for c in lens if c not in df.columns]
    if missing:
        raise ValueError(f"lens column(s) {missing} are not in the data")
    if label in lens:
        raise ValueError(f"the label {label!r} cannot be in the lens (the predictor must not see it)")
    rel = config.release
    features = lens if rel.features is None else tuple(rel.features)
    if not features:
        raise ValueError("release features are empty; choose at least one released feature")
    bad = [c for c in features if c not in lens]
    if bad:
        raise ValueError(f"release features {bad} are not in the lens {list(lens)}")

    lab = df[label]
    keep = lab.notna().to_numpy()
    n_dropped = int((~keep).sum())
    data = df.loc[keep].reset_index(drop=True)
    lab = data[label]
    if len(data) < MIN_LABELLED_ROWS:
        raise ValueError(f"only {len(data)} rows have a label; at least {MIN_LABELLED_ROWS} are needed")
    sv = config.sensitive_value
    if pd.api.types.is_numeric_dtype(lab):
        try:
            svf = float(sv)
        except (TypeError, ValueError):
            raise ValueError(f"sensitive value {sv!r} is not a value of the numeric label {label!r}") from None
        is_sens = lab.to_numpy(dtype=float) == svf
    else:
        is_sens = (lab.astype(str) == str(sv)).to_numpy()
    if not is_sens.any():
        raise ValueError(f"sensitive value {sv!r} does not occur in label {label!r}")
    if is_sens.all():
        raise ValueError(f"label {label!r} has only one value left ({sv!r}); two classes are needed")
    y = np.where(is_sens, -1, 1).astype(np.int8)
    n = len(data)

    raw_cols = []
    for c in lens:
        if data[c].isna().all():
            raise ValueError(f"lens column {c!r} is entirely missing")
        raw_cols.append(_codes_raw(data[c]))
        big = float(np.max(np.abs(raw_cols[-1])))
        if big > MAX_ABS_FEATURE:
            # scikit-learn's trees cast to float32 (max ≈ 3.4e38) and the scalers square values: refuse
            # here with the column's name rather than fail inside the learner.
            raise ValueError(f"lens column {c!r} has values up to {big:.3g} in size; the learners need "
                             f"|value| ≤ {MAX_ABS_FEATURE:.0e}: rescale the column (e.g. to thousands)")
    raw = np.column_stack(raw_cols).astype(float)
    feature_idx = tuple(lens.index(c) for c in features)

    binned = levels = labels = None
    if _needs_binned(rel):
        cols, labs = [], []
        for c in features:
            codes, lb = _binned_column(data[c], c, rel.bins)
            cols.append(codes)
            labs.append(lb)
        binned = np.column_stack(cols).astype(np.int64)
        levels = tuple(len(lb) for lb in labs)
        labels = tuple(labs)
        if rel.kind in HISTOGRAM_KINDS:
            size = dp_domain_size(levels)
            if size > MAX_DP_CELLS:
                raise ValueError(
                    f"the DP histogram would have {size:,} cells (features × label); at most "
                    f"{MAX_DP_CELLS:,} are allowed. Use fewer released features or fewer bins."
                )

    if rel.kind == "subsample":
        check_int_in_range(rel.subsample_size, name="subsample_size", lo=1, hi=n // 2)

    masks = group_masks(data, config.groups)
    sizes = {k: int(v.sum()) for k, v in masks.items()}
    if not any(s >= 2 for s in sizes.values()):
        raise ValueError("no group has at least 2 members; W1 needs members in both halves")
    prepared = PreparedData(
        n=n, n_dropped=n_dropped, y=y, raw=raw, binned=binned, binned_levels=levels, masks=masks,
        group_sizes=sizes, lens=lens, features=features, feature_idx=feature_idx, bin_labels=labels,
    )
    _learner_inputs(prepared, rel, config.learner)
    return prepared


# =============================================================================== learners
def _constant(value: float) -> Callable[[np.ndarray], np.ndarray]:
    def h(X: np.ndarray) -> np.ndarray:
        return np.full(len(X), value, dtype=float)

    return h


class _Forest:
    """scikit-learn's ``RandomForestClassifier(n_estimators, random_state=seed)`` with its defaults, built lean.

    The same trees, draw for draw: the forest's ``RandomState(seed)`` gives each tree a seed ``s``; the tree's
    bootstrap is ``RandomState(s).randint(0, n, n)`` passed as counts, and its splitter (Gini, best split,
    √d features, leaves of one record, unlimited depth) draws from a fresh ``RandomState(s)``. Probabilities
    are the trees' leaf fractions summed in tree order and divided by the number of trees, as the forest
    does. Only the per-tree Python work (cloning, parameter and target checks, about a sixth of a
    repetition with 50 trees) is skipped. ``tests/engine/coherence/test_coherence.py`` checks it against the real class.

    Source: scikit-learn 1.9 ``ensemble/_forest.py`` (``fit``, ``_parallel_build_trees``,
    ``_generate_sample_indices``, ``predict_proba``) and ``tree/_classes.py`` (``_fit``); pinned in
    requirements.txt.
    """

    def __init__(self, n_estimators: int, seed: int):
        self.n_estimators = int(n_estimators)
        self.seed = int(seed)

    def fit(self, X: np.ndarray, y: np.ndarray) -> "_Forest":
        from sklearn.tree._criterion import Gini
        from sklearn.tree._splitter import BestSplitter
        from sklearn.tree._tree import DepthFirstTreeBuilder, Tree

        int_max = np.iinfo(np.int32).max
        self.classes_, codes = np.unique(y, return_inverse=True)
        Y = np.ascontiguousarray(codes.reshape(-1, 1), dtype=np.float64)
        n, d = X.shape
        n_classes = np.array([self.classes_.size], dtype=np.intp)
        max_features = max(1, int(np.sqrt(d)))
        forest_rs = np.random.RandomState(self.seed)
        self.trees_ = []
        for _ in range(self.n_estimators):
            s = forest_rs.randint(int_max)
            boot = np.random.RandomState(s).randint(0, n, n).astype(np.int32)
            weight = np.bincount(boot, minlength=n).astype(np.float64)
            splitter = BestSplitter(Gini(1, n_classes), max_features, 1, 0.0, np.random.RandomState(s), None)
            tree = Tree(d, n_classes, 1)
            DepthFirstTreeBuilder(splitter, 2, 1, 0.0, int_max, 0.0).build(tree, X, Y, weight, None)
            self.trees_.append(tree)
        return self

    def predict_proba(self, Z: np.ndarray) -> np.ndarray:
        k = self.classes_.size
        out = np.zeros((Z.shape[0], k))
        for tree in self.trees_:
            out += tree.predict(Z)[:, :k]
        out /= len(self.trees_)
        return out

    def predict(self, Z: np.ndarray) -> np.ndarray:
        return self.classes_.take(np.argmax(self.predict_proba(Z), axis=1), axis=0)


def _make_estimator(spec: LearnerSpec, seed: int):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    if spec.kind == "random_forest":
        return RandomForestClassifier(n_estimators=int(spec.n_estimators), random_state=seed, n_jobs=1)
    if spec.kind == "decision_tree":
        return DecisionTreeClassifier(random_state=seed)
    if spec.kind == "nearest_neighbor":
        return make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=1, n_jobs=1))
    if spec.kind == "logistic":
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    raise ValueError(f"learner kind must be one of {LEARNER_KINDS}, got {spec.kind!r}")


def fit_predictor(spec: LearnerSpec, X: np.ndarray, y: np.ndarray, rng=None) -> Callable[[np.ndarray], np.ndarray]:
    """Train a confidence-rated predictor ``h: records → [−1, 1]`` on a release.

    Hard output: predicted class in {−1, +1}; soft output: ``2·P(y = +1 | x) − 1``. A report with one
    class gives the constant predictor of that class. ``rng`` (anything ``dpdash.common.validation.as_generator``
    takes) gives the learner's ``random_state``: its next draw below 2³¹ − 1; a Generator's stream advances.

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, §4 (confidence-rated predictor), §5 (random forest, 50 trees).
    """
    if spec.kind not in LEARNER_KINDS:
        raise ValueError(f"learner kind must be one of {LEARNER_KINDS}, got {spec.kind!r}")
    if spec.output not in OUTPUTS:
        raise ValueError(f"learner output must be 'hard' or 'soft', got {spec.output!r}")
    check_int_in_range(spec.n_estimators, name="n_estimators", lo=1, hi=500)
    seed = int(as_generator(rng).integers(2**31 - 1))
    y = np.asarray(y)
    classes = np.unique(y)
    if classes.size == 1:
        return _constant(float(np.sign(classes[0]) or 1.0))
    # Trees work in float32 (scikit-learn casts every call); casting here once, C-ordered, skips its copies.
    dtype = np.float32 if spec.kind in TREE_KINDS else float
    X = np.asarray(X, dtype=dtype, order="C")
    if spec.kind == "random_forest" and np.isfinite(X).all():
        est = _Forest(spec.n_estimators, int(seed))
    else:
        est = _make_estimator(spec, int(seed))
    est.fit(X, y)
    if spec.output == "hard":
        def h(Z: np.ndarray) -> np.ndarray:
            return np.clip(est.predict(np.asarray(Z, dtype=dtype, order="C")).astype(float), -1.0, 1.0)
    else:
        pos = int(np.flatnonzero(est.classes_ == 1)[0])

        def h(Z: np.ndarray) -> np.ndarray:
            p = est.predict_proba(np.asarray(Z, dtype=dtype, order="C"))[:, pos]
            return np.clip(2.0 * p - 1.0, -1.0, 1.0)
    return h


# =============================================================================== releases
@functools.lru_cache(maxsize=64)
def gaussian_histogram_sigma(*, epsilon: float, delta: float) -> float:
    """Noise s.d. of the (ε, δ)-DP Gaussian histogram: L2 sensitivity √2 (one record replaced).

    Calibrated with dp-accounting's analytic Gaussian (``get_smallest_gaussian_noise``).
    """
    from dp_accounting.pld import accountant, common

    return float(
        accountant.get_smallest_gaussian_noise(
            common.DifferentialPrivacyParameters(float(epsilon), float(delta)), 1, sensitivity=math.sqrt(2.0)
        )
    )


def histogram_release(
    prepared: PreparedData, rel: ReleaseSpec, idx_a: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Noisy histogram of X_a over binned features × label, sampled into n//2 synthetic records.

    ε-DP under substitution neighbours with Laplace(2/ε) per cell (spec E16); order-invariant, so
    Theorem 7 applies. Gaussian variant: N(0, σ²) with σ for L2 sensitivity √2.
    """
    levels = tuple(prepared.binned_levels) + (2,)
    label01 = (prepared.y[idx_a] > 0).astype(np.int64)
    cells = np.ravel_multi_index(tuple(prepared.binned[idx_a].T) + (label01,), levels)
    size = int(np.prod(levels, dtype=np.int64))
    counts = np.bincount(cells, minlength=size).astype(float)
    eps = float(rel.epsilon)
    if math.isfinite(eps):
        if rel.kind == "dp_histogram":
            b = 2.0 / eps
            counts += rng.laplace(0.0, b, size)
            # substitution neighbours: L1 sensitivity 2 (spec E16)
            ledger.record("histogram", epsilon=2.0 / b, mechanism="laplace", scale=b, sensitivity=2.0)
        else:
            sd = gaussian_histogram_sigma(epsilon=eps, delta=rel.delta)
            counts += rng.normal(0.0, sd, size)
            ledger.record("histogram", epsilon=eps, delta=rel.delta, rho=1.0 / sd**2, mechanism="gaussian",
                          scale=sd, sensitivity=math.sqrt(2.0))
    else:
        ledger.record("histogram without noise (ε = ∞)", epsilon=math.inf)
    np.clip(counts, 0.0, None, out=counts)
    total = counts.sum()
    probs = counts / total if total > 0 else np.full(size, 1.0 / size)
    k = prepared.n // 2
    draws = rng.choice(size, size=k, p=probs)
    decoded = np.unravel_index(draws, levels)
    X = np.column_stack(decoded[:-1]).astype(float)
    y = np.where(decoded[-1] == 1, 1, -1).astype(np.int8)
    return X, y


def _encoding(prepared: PreparedData, rel: ReleaseSpec) -> np.ndarray:
    """Released features in the learner's encoding (binned codes or raw values)."""
    if _needs_binned(rel):
        return prepared.binned.astype(float)
    return prepared.raw[:, list(prepared.feature_idx)]


@dataclass(frozen=True, eq=False)
class _LearnerInputs:
    """The encoded records as a learner takes them, and their distinct rows for prediction.

    Trees compute in float32 (scikit-learn casts every fit and predict), so their matrix is cast once, C-ordered;
    a tree's prediction depends only on the row, so it is computed once per distinct row (``unique``) and
    spread back with ``inverse``. Other learners keep float64 and predict the halves as given (their numbers may
    depend on the batch through BLAS blocking).
    """

    X: np.ndarray
    unique: np.ndarray | None
    inverse: np.ndarray | None


def _learner_inputs(prepared: PreparedData, rel: ReleaseSpec, learner: LearnerSpec) -> _LearnerInputs:
    tree = learner.kind in TREE_KINDS
    key = (_needs_binned(rel), tree)
    got = prepared.inputs.get(key)
    if got is None:
        enc = _encoding(prepared, rel)
        if tree:
            X = np.ascontiguousarray(enc, dtype=np.float32)
            uniq, inv = np.unique(X, axis=0, return_inverse=True)
            got = _LearnerInputs(X, np.ascontiguousarray(uniq), inv.reshape(-1))
        else:
            got = _LearnerInputs(np.ascontiguousarray(enc, dtype=float), None, None)
        prepared.inputs[key] = got
    return got


def _trial_rng(rng, rep: int) -> np.random.Generator:
    return np.random.default_rng(child_seed(rng, rep))


def _group_stats(prepared: PreparedData, names, idx_a, idx_b, p_a, p_b):
    G = len(names)
    w = np.full(G, np.nan)
    sizes = np.zeros((G, 2), dtype=np.int64)
    neg = np.full((G, 2), np.nan)
    for j, name in enumerate(names):
        mask = prepared.masks[name]
        ca, cb = mask[idx_a], mask[idx_b]
        sizes[j] = (int(ca.sum()), int(cb.sum()))
        if sizes[j, 0]:
            neg[j, 0] = float(np.mean(p_a[ca] < 0))
        if sizes[j, 1]:
            neg[j, 1] = float(np.mean(p_b[cb] < 0))
        if prepared.group_sizes[name] >= 2 and sizes[j, 0] and sizes[j, 1]:
            w[j] = _w1_fast(p_a[ca], p_b[cb])
    return w, sizes, neg


def run_trial(
    prepared: PreparedData, config: ExperimentConfig, rep: int, keep_predictions: bool = False
) -> TrialResult:
    """One DemCoh repetition (Figure 1): split, release ``X_a``, learn, compare on both halves.

    The repetition's generator is child ``rep`` of ``config.rng`` (for an integer seed s,
    ``SeedSequence(s, spawn_key=(rep,))``, i.e. ``SeedSequence(s).spawn(R)[rep]``), so any repetition can be rerun
    alone.

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, §4.2 Figure 1, Definition 2 (restrict, then apply the lens).
    """
    rel = config.release
    rng = _trial_rng(config.rng, rep)
    idx_a, idx_b = half_split(prepared.n, rng)
    inp = _learner_inputs(prepared, rel, config.learner)
    enc = inp.X
    if rel.kind in HISTOGRAM_KINDS:
        X_tr, y_tr = histogram_release(prepared, rel, idx_a, rng)
    elif rel.kind == "subsample":
        pick = idx_a[rng.choice(idx_a.size, size=int(rel.subsample_size), replace=False)]
        X_tr, y_tr = enc[pick], prepared.y[pick]
        ledger.record("subsample in the clear (not DP)", epsilon=math.inf)
    else:
        X_tr, y_tr = enc[idx_a], prepared.y[idx_a]
        ledger.record("records in the clear (not DP)", epsilon=math.inf)
    h = fit_predictor(config.learner, X_tr, y_tr, rng)
    if inp.unique is not None:
        p_all = np.clip(h(inp.unique), -1.0, 1.0)[inp.inverse]
        p_a, p_b = p_all[idx_a], p_all[idx_b]
    else:
        p_a = np.clip(h(enc[idx_a]), -1.0, 1.0)
        p_b = np.clip(h(enc[idx_b]), -1.0, 1.0)
    names = tuple(g.name for g in config.groups)
    w, sizes, neg = _group_stats(prepared, names, idx_a, idx_b, p_a, p_b)
    if keep_predictions:
        return TrialResult(rep, w, sizes, neg, idx_a, idx_b, p_a, p_b)
    return TrialResult(rep, w, sizes, neg)


def _run_one(prepared, config, rep):
    return run_trial(prepared, config, rep, keep_predictions=(rep == 0))


def run_experiment(
    df: pd.DataFrame,
    config: ExperimentConfig,
    *,
    n_jobs: int = -1,
    progress: Callable[[int, int], None] | None = None,
) -> ExperimentResult:
    """Run ``config.repetitions`` DemCoh repetitions in parallel (``dpdash.common.parallel``) and collect W1s.

    Results are consumed as they finish; ``progress(done, total)`` is called in the calling thread
    after each. The same ``df`` and ``config`` give an identical result for any ``n_jobs``.

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, §4.2 Figure 1, §5 (100 repetitions, Figure 2).
    """
    t0 = time.perf_counter()
    prepared = prepare(df, config)
    R = int(config.repetitions)
    names = tuple(g.name for g in config.groups)
    trials: list[TrialResult] = []
    gen = imap_unordered(_run_one, [(prepared, config, r) for r in range(R)], n_jobs=n_jobs)
    for i, (_, tr) in enumerate(gen, 1):
        trials.append(tr)
        if progress is not None:
            progress(i, R)
    trials.sort(key=lambda t: t.rep)
    return ExperimentResult(
        config=config,
        group_names=names,
        group_sizes=tuple(prepared.group_sizes[nm] for nm in names),
        n=prepared.n,
        n_dropped=prepared.n_dropped,
        w1=np.vstack([t.w1 for t in trials]),
        half_sizes=np.stack([t.half_sizes for t in trials]),
        frac_negative=np.stack([t.frac_negative for t in trials]),
        first_trial=trials[0],
        elapsed_s=time.perf_counter() - t0,
    )


# =============================================================================== failure rate
def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Two-sided Clopper–Pearson interval for k successes in n trials."""
    if not _is_number(confidence) or not 0 < float(confidence) < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    c = float(confidence)
    lower = 0.0 if k == 0 else float(stats.beta.ppf((1 - c) / 2, k, n - k + 1))
    upper = 1.0 if k == n else float(stats.beta.ppf((1 + c) / 2, k + 1, n - k))
    return lower, upper


def beta_hat(result: ExperimentResult, alpha: float, gamma: float = 0.0, confidence: float = 0.95) -> BetaEstimate:
    """Estimated failure rate β̂(α) = #{r : M_r > α}/#{r : M_r defined} with a Clopper–Pearson interval.

    β̂ describes one learner on one dataset: a lower bound on the worst case of Definition 4.

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, Definitions 3-4 (the seed never estimates β; spec §3.3).
    """
    a = _check_alpha(alpha)
    if not _is_number(confidence) or not 0 < float(confidence) < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    m = result.max_w1(gamma)
    defined = m[~np.isnan(m)]
    if defined.size == 0:
        raise ValueError("no defined run: no group in the collection has members in both halves")
    k = int(np.sum(defined > a))
    R = int(defined.size)
    lo, hi = clopper_pearson(k, R, confidence)
    return BetaEstimate(a, k / R, lo, hi, k, R)


def beta_curve(result: ExperimentResult, alphas: np.ndarray, gamma: float = 0.0) -> np.ndarray:
    """β̂(α) for each α of an array (the step curve of the failure-rate plot)."""
    al = np.asarray(alphas, dtype=float)
    if al.size and (np.any(~np.isfinite(al)) or al.min() < 0 or al.max() > 2):
        raise ValueError("alpha values must be in [0, 2]")
    m = result.max_w1(gamma)
    defined = np.sort(m[~np.isnan(m)])
    if defined.size == 0:
        raise ValueError("no defined run: no group in the collection has members in both halves")
    above = defined.size - np.searchsorted(defined, al, side="right")
    return above / defined.size


def summarize(result: ExperimentResult, gamma: float = 0.0) -> pd.DataFrame:
    """Per-group summary of the W1 over runs (and whether the group is in 𝒞* at this γ)."""
    inc = result.in_collection(gamma)
    rows = []
    for j, name in enumerate(result.group_names):
        col = result.w1[:, j]
        ok = col[~np.isnan(col)]
        rows.append(
            {
                "group": name,
                "size": result.group_sizes[j],
                "in_collection": inc[j],
                "mean_w1": float(ok.mean()) if ok.size else np.nan,
                "sd_w1": float(ok.std(ddof=1)) if ok.size > 1 else np.nan,
                "q95_w1": float(np.quantile(ok, 0.95)) if ok.size else np.nan,
                "max_w1": float(ok.max()) if ok.size else np.nan,
                "frac_negative_a": float(np.nanmean(result.frac_negative[:, j, 0]))
                if np.any(~np.isnan(result.frac_negative[:, j, 0])) else np.nan,
                "frac_negative_b": float(np.nanmean(result.frac_negative[:, j, 1]))
                if np.any(~np.isnan(result.frac_negative[:, j, 1])) else np.nan,
                "undefined_runs": int(np.isnan(col).sum()),
            }
        )
    return pd.DataFrame(rows)


# =============================================================================== noise floor, sweep
def noise_floor(df: pd.DataFrame, config: ExperimentConfig, reps: int = 200) -> dict[str, np.ndarray]:
    """W1 of a split-independent predictor: the floor that random splitting alone produces.

    The learner is fit once on the whole prepared data in the clear (release encoding), then
    ``reps`` fresh splits are drawn (a spawn key no repetition uses) and W1 is computed per group.
    """
    reps = check_int_in_range(reps, name="reps", lo=1, hi=100_000)
    prepared = prepare(df, config)
    rng = _trial_rng(config.rng, _FLOOR_SPAWN_KEY)
    inp = _learner_inputs(prepared, config.release, config.learner)
    h = fit_predictor(config.learner, inp.X, prepared.y, rng)
    p = np.clip(h(inp.X), -1.0, 1.0) if inp.unique is None else np.clip(h(inp.unique), -1.0, 1.0)[inp.inverse]
    names = tuple(g.name for g in config.groups)
    out = {nm: np.full(reps, np.nan) for nm in names}
    binary = bool(np.all(np.isin(p, (-1.0, 1.0))))
    k = prepared.n // 2
    for r in range(reps):
        perm = rng.permutation(prepared.n)
        in_a = np.zeros(prepared.n, dtype=bool)
        in_a[perm[:k]] = True
        in_b = np.zeros(prepared.n, dtype=bool)
        in_b[perm[k : 2 * k]] = True
        for nm in names:
            mask = prepared.masks[nm]
            if prepared.group_sizes[nm] < 2:
                continue
            ma, mb = mask & in_a, mask & in_b
            sa, sb = int(ma.sum()), int(mb.sum())
            if not sa or not sb:
                continue
            if binary:
                out[nm][r] = 2.0 * abs(np.sum(p[ma] < 0) / sa - np.sum(p[mb] < 0) / sb)
            else:
                out[nm][r] = _w1_fast(p[ma], p[mb])
    return out


def _sweep_one(prepared, config, rep):
    tr = run_trial(prepared, config, rep)
    return config.release.epsilon, rep, tr.w1


def sweep_for_export(sweep: pd.DataFrame) -> pd.DataFrame:
    """The ε-sweep table as written to CSV: ε = ∞ (exact histogram) becomes an empty ε cell plus ``dp = no``.

    Not from the seed: a CSV must read back with pandas' defaults and with this product's bounded reader, which
    refuses non-finite numbers; the ``dp`` column keeps the meaning that an exact histogram is not DP.
    """
    out = sweep.copy()
    finite = np.isfinite(out["epsilon"].to_numpy(dtype=float))
    out["epsilon"] = out["epsilon"].where(finite)
    out.insert(1, "dp", np.where(finite, "yes", "no (exact histogram, ε = ∞)"))
    return out


def run_epsilon_sweep(
    df: pd.DataFrame,
    config: ExperimentConfig,
    epsilons: Sequence[float],
    *,
    n_jobs: int = -1,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """Mean and q05–q95 of W1 per group for each ε of a DP histogram release.

    Every ε uses the same repetition seeds (common random numbers), so differences between ε are
    not split noise. ``config.repetitions`` repetitions per ε.

    Returns
    -------
    pandas.DataFrame
        Columns epsilon, group, size, mean_w1, q05_w1, q95_w1.
    """
    if config.release.kind not in HISTOGRAM_KINDS:
        raise ValueError(f"the ε sweep needs a DP histogram release, got release kind {config.release.kind!r}")
    eps_list = [float(e) for e in epsilons]
    if not eps_list:
        raise ValueError("epsilons is empty")
    for e in eps_list:
        if math.isnan(e) or e <= 0:
            raise ValueError(f"epsilon must be > 0 (math.inf = no noise), got {e!r}")
    prepared = prepare(df, config)
    R = int(config.repetitions)
    cfgs = {e: _with_epsilon(config, e) for e in eps_list}
    tasks = [(cfgs[e], r) for e in eps_list for r in range(R)]
    total = len(tasks)
    gen = imap_unordered(_sweep_one, [(prepared, c, r) for c, r in tasks], n_jobs=n_jobs)
    acc: dict[float, dict[int, np.ndarray]] = {e: {} for e in eps_list}
    for i, (_, (e, r, w)) in enumerate(gen, 1):
        acc[e][r] = w
        if progress is not None:
            progress(i, total)
    names = [g.name for g in config.groups]
    rows = []
    for e in eps_list:
        mat = np.vstack([acc[e][r] for r in range(R)])
        for j, nm in enumerate(names):
            col = mat[:, j]
            ok = col[~np.isnan(col)]
            rows.append(
                {
                    "epsilon": e,
                    "group": nm,
                    "size": prepared.group_sizes[nm],
                    "mean_w1": float(ok.mean()) if ok.size else np.nan,
                    "q05_w1": float(np.quantile(ok, 0.05)) if ok.size else np.nan,
                    "q95_w1": float(np.quantile(ok, 0.95)) if ok.size else np.nan,
                }
            )
    return pd.DataFrame(rows)


def _with_epsilon(config: ExperimentConfig, eps: float) -> ExperimentConfig:
    from dataclasses import replace

    return replace(config, release=replace(config.release, epsilon=eps))


# =============================================================================== Section 7
def single_column_w1(
    bits: ArrayLike, mask: ArrayLike, idx_a: ArrayLike, idx_b: ArrayLike, *, h0: float = -1.0, h1: float = 1.0
) -> float:
    """Exact W1 of a predictor that sees one bit, for one group and one split.

    ``|h1 − h0|·|N_a/|X_a∩C| − N_b/|X_b∩C||`` with ``N`` the ones among C's members in each half.

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, §7 proof of Theorem 9 (spec E10: exact half-group sizes).
    """
    b = np.asarray(bits).astype(bool)
    m = np.asarray(mask).astype(bool)
    ia, ib = np.asarray(idx_a), np.asarray(idx_b)
    sa, sb = int(m[ia].sum()), int(m[ib].sum())
    if not sa or not sb:
        return math.nan
    na, nb = int((m & b)[ia].sum()), int((m & b)[ib].sum())
    return abs(float(h1) - float(h0)) * abs(na / sa - nb / sb)


def single_column_experiment(
    bits: np.ndarray,
    groups: Mapping[str, np.ndarray],
    *,
    reps: int = 1000,
    rng=0,
    h0: float = -1.0,
    h1: float = 1.0,
    beta: float = 0.05,
    curator: Literal["column", "count"] = "column",
) -> SingleColumnResult:
    """Section 7 curator: one binary column released in the clear; exact W1 over random splits.

    A predictor seeing only that bit gives ``h1`` to ones and ``h0`` to zeros, so per group
    ``W1 = |h1 − h0|·|N_a/|X_a∩C| − N_b/|X_b∩C||`` exactly (``N`` = ones among C's members in a
    half). ``bound`` is Theorem 9's ``4·sqrt(n·ln(|𝒞|/β))/|C ∩ X|`` as printed; ``exceed_fraction`` is
    the share of splits where W1 exceeds it (Theorem 9: at most β for all groups together).

    ``curator="count"`` is Theorem 11's curator, which publishes only the number of ones in ``X_a``
    (lens = every column). The demonstrated learner reacts to the report by swapping its two scores when
    ``X_a`` holds more than half of the ones; ``|h1 − h0|`` is unchanged, so the W1 values equal the
    column curator's, while the bound is Theorem 11's much weaker ``112·sqrt(n·ln(10n|𝒞|/β′))/|C ∩ X|``
    (asymptotic: "sufficiently large n", spec E11). ``rng`` draws the splits (anything
    ``dpdash.common.validation.as_generator`` takes).

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, §7 Theorems 9 and 11. Erratum: the proof's
    ``|h(1)−h(0)|·|N_a−N_b|/|C∩X|`` ignores the random half-group sizes; the exact formula is used
    and the final bound is shown as printed (spec E10).
    """
    b = np.asarray(bits)
    if b.ndim != 1 or b.size < 2:
        raise ValueError("bits must be a 1-D array with at least 2 entries")
    if not np.all(np.isin(b, (0, 1, True, False))):
        raise ValueError("bits must be binary (0/1 or False/True)")
    b = b.astype(bool)
    n = b.size
    reps = check_int_in_range(reps, name="reps", lo=1, hi=1_000_000)
    for name, v in (("h0", h0), ("h1", h1)):
        if not _is_number(v) or not -1 <= float(v) <= 1:
            raise ValueError(f"{name} must be in [-1, 1], got {v!r}")
    if not _is_number(beta) or not 0 < float(beta) <= 1:
        raise ValueError(f"beta must be in (0, 1], got {beta!r}")
    if curator not in ("column", "count"):
        raise ValueError(f"curator must be 'column' or 'count', got {curator!r}")
    names = tuple(groups)
    if not names:
        raise ValueError("groups is empty")
    masks = []
    for nm in names:
        m = np.asarray(groups[nm])
        if m.shape != (n,):
            raise ValueError(f"mask of group {nm!r} has shape {m.shape}; expected ({n},) like bits")
        masks.append(m.astype(bool))
    M = np.vstack(masks)  # (G, n)
    sizes = M.sum(axis=1)
    G = len(names)
    scale = abs(float(h1) - float(h0))
    rng = as_generator(rng)
    k = n // 2
    w = np.full((reps, G), np.nan)
    # Counts per half as matrix products with 0/1 half indicators (exact in float64 for n < 2**53).
    A = np.vstack([M, M & b]).astype(np.float64)  # (2G, n): members, members with bit 1
    half = np.zeros((2, n))
    for r in range(reps):
        perm = rng.permutation(n)
        half[:] = 0.0
        half[0, perm[:k]] = 1.0
        half[1, perm[k : 2 * k]] = 1.0
        c = A @ half.T  # (2G, 2)
        sa, sb, na, nb = c[:G, 0], c[:G, 1], c[G:, 0], c[G:, 1]
        ok = (sa > 0) & (sb > 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            w[r, ok] = scale * np.abs(na[ok] / sa[ok] - nb[ok] / sb[ok])
    if curator == "column":
        bound = np.array(
            [maxinfo.w1_bound_single_column(n, float(beta), G, s) if s > 0 else np.inf for s in sizes]
        )
    else:
        # Theorem 11: γ·α = 112·sqrt(n·ln(10n|𝒞|/β′)) members, i.e. W1 ≤ that / |C ∩ X|.
        scale11 = maxinfo.gamma_count(n, 1.0, float(beta), G)
        bound = np.array([scale11 / s if s > 0 else np.inf for s in sizes])
    exceed = np.array([np.mean(w[~np.isnan(w[:, j]), j] > bound[j]) if np.any(~np.isnan(w[:, j])) else np.nan
                       for j in range(G)])
    return SingleColumnResult(names, tuple(int(s) for s in sizes), w, bound, exceed)
