"""Sortition Foundation file formats: read the Strat App / ``sortition-algorithms`` quota and pool files as they are,
and write the lottery, the chances and a drawn panel back in the same formats.

- **Quotas** ("categories" / "features" file): one row per value of a quota feature. New header
  ``feature,value,min,max`` or old header ``category,name,min,max`` (``sortition-algorithms`` also accepts
  ``category value``, ``category_value`` and ``category-value`` for the value column), optionally followed by
  ``min_flex,max_flex`` (how far the app may relax each quota). Other columns are ignored, as the library ignores
  them. :func:`read_quotas` keeps the header style, the flex columns and the row order; :func:`write_quotas`
  writes them back unchanged.
- **Pool** ("respondents" / "people" file): one row per volunteer, an id column, one column per quota feature and
  any other columns (contact details, …), all kept. The library matches a person's value to the quota values
  ignoring case (and column names ignoring case); here that match is opt-in (:func:`match_pool`) and reports once
  which values and columns were merged.
- **Drawn panel**: the library's "selected" and "remaining" tables, i.e. pool rows in the pool's own columns
  (:func:`panel_tables`). **Chances**: the pool file with one more column, ``chance of a seat``
  (:func:`chances_table`). **Lottery**: the library's multiple-selection table (``Assembly 0``, ``Assembly 1``, …,
  one column of member ids per panel; the final panel is one of them drawn uniformly), here with N panels whose
  frequencies round the lottery's panel probabilities (:func:`lottery_table`, read back by :func:`read_lottery`).

Pure functions on pandas frames (no files, no Streamlit). Sources: ``sortition-algorithms`` 0.12.15
(``features.py``: header names and flex columns; ``people.py``: case-insensitive matching; ``core.py``:
``selected_remaining_tables`` and ``multi_selection_to_table``), and the Strat App's public test fixtures
(``tests/data/sortition_foundation``, provenance in ``data/DATA.md``). The lottery itself is Flanigan et al.,
*Fair algorithms for selecting citizens' assemblies*, Nature 596 (2021), computed by ``dpdash.sortition.core``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from dpdash.sortition import core as lx

__all__ = ["QuotaFile", "read_quotas", "write_quotas", "add_quota_rows", "id_problems", "MAX_BOUND",
            "PoolMatch", "match_pool", "case_mismatches",
           "chances_table", "panel_tables", "lottery_table", "read_lottery", "lottery_panels", "CHANCE_COLUMN"]

#: Header names, as ``sortition-algorithms`` reads them: (feature column, value column) by style.
NEW, OLD = ("feature", "value"), ("category", "name")
VALUE_ALIASES = ("value", "name", "category value", "category_value", "category-value")
FLEX = ("min_flex", "max_flex")
CHANCE_COLUMN = "chance of a seat"
#: Most panels a lottery table may list (columns of the file).
MAX_SELECTIONS = 10_000


#: Largest quota bound kept as written. Larger maxima (1e20, 1e300: "no limit" in some Strat App files) mean no
#: limit on a panel of at most this many seats and are clamped to it, so every bound fits a 64-bit integer column
#: (the quota editor's pyarrow table overflowed on 1e20). Larger minima can never be met: refused.
MAX_BOUND = 1_000_000


def _blank(v) -> bool:
    """An empty cell: NaN/None (the reader's missing-value codes) or only spaces. "N", "NA", "None" are values."""
    try:
        if pd.isna(v):
            return True
    except (TypeError, ValueError):
        return False
    return str(v).strip() == ""


def _int_cell(v, what: str) -> int:
    s = str(v).strip()
    if _blank(v):
        raise ValueError(f"{what} is empty; a whole number is expected.")
    try:
        f = float(s)
    except ValueError:
        raise ValueError(f"{what} is '{s[:40]}', not a whole number.") from None
    if not math.isfinite(f) or not f.is_integer():
        raise ValueError(f"{what} is {s[:40]}, not a whole number.")
    return int(f)


@dataclass(frozen=True)
class QuotaFile:
    """A quota file as read: ``table`` has columns feature, value, min, max and, if the file had them, min_flex,
    max_flex (file order of rows); ``header`` is the file's own names for those columns, in the same order."""

    table: pd.DataFrame
    header: tuple[str, ...]
    style: str                      # "new" (feature,value,…), "old" (category,name,…) or "replication"
    notes: tuple[str, ...] = ()     # what was changed while reading (maxima clamped to MAX_BOUND), in words

    @property
    def has_flex(self) -> bool:
        return "min_flex" in self.table.columns

    def quotas(self) -> list[lx.Quota]:
        """The quotas for the engine (bounds and duplicates checked by ``dpdash.sortition.core.quotas_from_frame``)."""
        return lx.quotas_from_frame(self.table[["feature", "value", "min", "max"]])


def read_quotas(df: pd.DataFrame) -> QuotaFile:
    """A Strat App / ``sortition-algorithms`` quota file (new or old header, flex columns optional) or this
    product's own ``feature,value,min,max`` / replication ``category,feature,min,max`` table.

    Header names are compared stripped and lower-cased; other columns are ignored, as the library does. Flex bounds
    are checked as the library checks them: 0 ≤ min_flex ≤ min and max_flex ≥ max.

    >>> qf = read_quotas(pd.DataFrame({"category": ["g"], "name": ["F"], "min": ["1"], "max": ["2"],
    ...                                "min_flex": ["0"], "max_flex": ["3"]}))
    >>> qf.style, qf.header
    ('old', ('category', 'name', 'min', 'max', 'min_flex', 'max_flex'))
    >>> list(qf.table.columns)
    ['feature', 'value', 'min', 'max', 'min_flex', 'max_flex']
    """
    cols = {str(c).strip().lower(): c for c in df.columns}
    if "min" not in cols or "max" not in cols:
        raise ValueError("The quotas file needs the columns feature, value, min, max (or the Strat App's category, "
                         f"name, min, max); found {', '.join(map(str, df.columns))}.")
    if "feature" in cols and "value" in cols:
        style, fcol, vcol = "new", cols["feature"], cols["value"]
    elif "category" in cols and "feature" in cols and not any(a in cols for a in VALUE_ALIASES):
        style, fcol, vcol = "replication", cols["category"], cols["feature"]
    elif "category" in cols and any(a in cols for a in VALUE_ALIASES[1:]):
        style, fcol = "old", cols["category"]
        vcol = cols[next(a for a in VALUE_ALIASES[1:] if a in cols)]
    elif "feature" in cols and any(a in cols for a in VALUE_ALIASES[1:]):
        style, fcol = "new", cols["feature"]
        vcol = cols[next(a for a in VALUE_ALIASES[1:] if a in cols)]
    else:
        raise ValueError("The quotas file needs the columns feature, value, min, max (or the Strat App's category, "
                         f"name, min, max); found {', '.join(map(str, df.columns))}.")
    flex = [c for c in FLEX if c in cols]
    if len(flex) == 1:
        raise ValueError(f"The quotas file has {flex[0]} but not {FLEX[1 - FLEX.index(flex[0])]}: give both flex "
                         "columns or neither.")
    names = [fcol, vcol, cols["min"], cols["max"]] + [cols[c] for c in flex]
    rows, clamped = [], []

    def bound(cell, what: str, i: int, *, upper: bool) -> int:
        b = _int_cell(cell, what)
        if b > MAX_BOUND:
            if not upper:
                raise ValueError(f"{what} is {b:.3g}; no panel has more than {MAX_BOUND:,} seats. Give a minimum "
                                 "of at most the panel size.")
            clamped.append(i)
            return MAX_BOUND
        return b

    for i, rec in enumerate(df[names].itertuples(index=False), start=2):      # row 1 is the header
        if _blank(rec[0]):
            continue                                    # blank lines at the end of a spreadsheet export
        f = str(rec[0]).strip()
        if _blank(rec[1]):
            raise ValueError(f"Row {i} ({f}): the value is empty.")
        v = str(rec[1]).strip()
        lo = bound(rec[2], f"Row {i} ({f}={v}): min", i, upper=False)
        hi = bound(rec[3], f"Row {i} ({f}={v}): max", i, upper=True)
        row = {"feature": f, "value": v, "min": lo, "max": hi}
        if flex:
            lf = bound(rec[4], f"Row {i} ({f}={v}): min_flex", i, upper=False)
            hf = bound(rec[5], f"Row {i} ({f}={v}): max_flex", i, upper=True)
            if not 0 <= lf <= lo:
                raise ValueError(f"Row {i} ({f}={v}): min_flex ({lf}) must be between 0 and min ({lo}).")
            if hf < hi:
                raise ValueError(f"Row {i} ({f}={v}): max_flex ({hf}) must be at least max ({hi}).")
            row.update(min_flex=lf, max_flex=hf)
        rows.append(row)
    if not rows:
        raise ValueError("The quotas file has no rows.")
    table = pd.DataFrame(rows)
    notes = ()
    if clamped:
        rows_txt = ", ".join(map(str, sorted(set(clamped))[:10])) + (", …" if len(set(clamped)) > 10 else "")
        notes = (f"Maxima above {MAX_BOUND:,} (row{'s' if len(set(clamped)) > 1 else ''} {rows_txt}) mean no limit "
                 f"on any panel: read as {MAX_BOUND:,} (and written back so).",)
    qf = QuotaFile(table=table, header=tuple(str(c).strip() for c in names), style=style, notes=notes)
    qf.quotas()                                         # bounds and duplicates: refuse now, with the engine's words
    return qf


def add_quota_rows(qf: QuotaFile, quotas: Sequence[lx.Quota]) -> QuotaFile:
    """``qf`` with a row for every quota it lacks (e.g. the free "(blank)" rows of
    :func:`dpdash.sortition.core.resolve_blanks`), each after its feature's last row; flex columns, if any, are
    set to 0 and the row's max (no relaxation)."""
    have = {(f, v) for f, v in zip(qf.table["feature"], qf.table["value"])}
    rows = qf.table.to_dict("records")
    for q in quotas:
        if (q.feature, q.value) in have:
            continue
        row = {"feature": q.feature, "value": q.value, "min": int(q.min), "max": int(q.max)}
        if qf.has_flex:
            row.update(min_flex=0, max_flex=int(q.max))
        last = max((i for i, r in enumerate(rows) if r["feature"] == q.feature), default=len(rows) - 1)
        rows.insert(last + 1, row)
    return QuotaFile(table=pd.DataFrame(rows, columns=qf.table.columns), header=qf.header, style=qf.style,
                     notes=qf.notes)


def id_problems(pool: pd.DataFrame, id_col: str, *, shown: int = 5) -> str | None:
    """Why ``id_col`` cannot identify respondents (blank or repeated ids, with their file rows), or None.

    Rows are file rows: the header is row 1. sortition-algorithms refuses a repeated id the same way.
    """
    if id_col not in pool.columns:
        return f"The respondents file has no column {id_col!r}."
    ids = pool[id_col]
    blank = ids.isna().to_numpy() | (ids.astype(str).str.strip() == "").to_numpy()
    if blank.any():
        rows = (np.flatnonzero(blank) + 2).tolist()
        return (f"{len(rows):,} respondent(s) have no id in {id_col}: rows "
                + ", ".join(map(str, rows[:shown])) + (", …" if len(rows) > shown else "") + ".")
    s = ids.astype(str).str.strip()
    dup = s[s.duplicated(keep=False)]
    if len(dup):
        first = dup.iloc[0]
        rows = (np.flatnonzero((s == first).to_numpy()) + 2).tolist()
        n = int(s.duplicated().sum())
        return (f"{id_col} repeats ids: '{first}' is on rows " + ", ".join(map(str, rows[:shown]))
                + f" ({n:,} repeated id{'s' if n > 1 else ''} in all). Each respondent needs a unique id.")
    return None


def write_quotas(qf: QuotaFile, table: pd.DataFrame | None = None) -> str:
    """The quota file as CSV text with the header it was read with (``table``: edited bounds, same rows)."""
    t = (qf.table if table is None else table)[list(qf.table.columns)].copy()
    t.columns = list(qf.header)
    return t.to_csv(index=False, lineterminator="\n")


@dataclass(frozen=True)
class PoolMatch:
    """A pool matched to quota values: ``pool`` with values (and column names) spelled as the quotas spell them;
    ``merged``: (feature, pool spelling, quota spelling, people); ``renamed``: (pool column, quota feature)."""

    pool: pd.DataFrame
    merged: tuple[tuple[str, str, str, int], ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()

    def message(self) -> str | None:
        """One sentence naming every merge, or None when nothing was merged."""
        if not self.merged and not self.renamed:
            return None
        parts = [f"column '{a}' read as '{b}'" for a, b in self.renamed]
        parts += [f"'{p}' → '{q}' ({f}, {n:,} {'person' if n == 1 else 'people'})" for f, p, q, n in self.merged]
        return ("Matched ignoring upper/lower case, as sortition-algorithms does: " + "; ".join(parts) + ".")


def _quota_values(quotas) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for q in quotas:
        out.setdefault(q.feature, []).append(q.value)
    return out


def case_mismatches(pool: pd.DataFrame, quotas: Sequence[lx.Quota]) -> PoolMatch:
    """What :func:`match_pool` would merge, without changing anything (to offer the match in one message)."""
    return match_pool(pool, quotas, ignore_case=True)


def match_pool(pool: pd.DataFrame, quotas: Sequence[lx.Quota], *, ignore_case: bool) -> PoolMatch:
    """The pool with every quota feature's values stripped and, if ``ignore_case``, spelled as the quotas spell them.

    A pool column whose name equals a quota feature ignoring case is renamed to the feature; a pool value that
    equals exactly one quota value of its feature ignoring case takes the quota's spelling. Values matching no quota
    value are left as they are (the engine's quota check names them). Two quota values of one feature that differ
    only by case make the match ambiguous: refused with both spellings named.
    """
    out = pool.copy()
    values = _quota_values(quotas)
    renamed = []
    if ignore_case:
        lower = {str(c).lower(): c for c in out.columns}
        for f in values:
            if f not in out.columns and f.lower() in lower:
                renamed.append((str(lower[f.lower()]), f))
        out = out.rename(columns={a: b for a, b in renamed})
    merged = []
    for f, vals in values.items():
        if f not in out.columns:
            continue
        col = out[f].astype(str).str.strip()
        if ignore_case:
            by_lower: dict[str, list[str]] = {}
            for v in vals:
                by_lower.setdefault(v.lower(), []).append(v)
            clash = [vs for vs in by_lower.values() if len(vs) > 1]
            if clash:
                raise ValueError(f"The quotas for '{f}' have values that differ only by case ("
                                 + ", ".join("/".join(vs) for vs in clash) + "); matching ignoring case is "
                                 "ambiguous. Give each value one spelling.")
            exact = set(vals)
            for pv, n in col.value_counts(sort=False).items():
                if pv not in exact and pv.lower() in by_lower:
                    merged.append((f, pv, by_lower[pv.lower()][0], int(n)))
            mapping = {p: q for _f, p, q, _n in merged if _f == f}
            col = col.map(lambda v: mapping.get(v, v))
        out[f] = col
    merged.sort(key=lambda t: (list(values).index(t[0]), t[1]))
    return PoolMatch(pool=out, merged=tuple(merged), renamed=tuple(renamed))


def chances_table(pool: pd.DataFrame, id_col: str, person_ids: Sequence[str], probabilities) -> pd.DataFrame:
    """The pool as read (its columns and row order) with one more column, ``chance of a seat``."""
    chance = dict(zip(map(str, person_ids), np.asarray(probabilities, dtype=float)))
    out = pool.copy()
    ids = out[id_col].astype(str).str.strip()
    missing = [i for i in ids if i not in chance]
    if missing:
        raise ValueError(f"No chance for {len(missing)} person(s) of the pool, e.g. '{missing[0]}'.")
    out[CHANCE_COLUMN] = [chance[i] for i in ids]
    return out


def panel_tables(pool: pd.DataFrame, id_col: str, members: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The drawn panel as the library writes it: (selected, remaining) pool rows in the pool's own columns.

    Selected rows follow the pool's order. Unknown ids are refused (a panel from another pool).
    """
    ids = pool[id_col].astype(str).str.strip()
    want = {str(m).strip() for m in members}
    unknown = sorted(want - set(ids))
    if unknown:
        raise ValueError(f"{len(unknown)} member(s) are not in this pool, e.g. '{unknown[0]}'.")
    chosen = ids.isin(want).to_numpy()
    return pool[chosen].reset_index(drop=True), pool[~chosen].reset_index(drop=True)


def _round_counts(p: np.ndarray, n: int) -> np.ndarray:
    """Whole counts summing to ``n`` closest to n·p (largest remainders)."""
    raw = n * p / p.sum()
    base = np.floor(raw).astype(int)
    rest = n - int(base.sum())
    order = np.argsort(-(raw - base), kind="stable")
    base[order[:rest]] += 1
    return base


def lottery_panels(dist: lx.PanelDistribution, *, n_selections: int = 1_000) -> list[tuple[str, ...]]:
    """N panels of person ids whose uniform mixture approximates the lottery ``dist``.

    Panel probabilities are rounded to multiples of 1/N (largest remainders); within each type the members are
    taken in turn across the copies, so people of one type appear equally often (±1). A person's frequency differs
    from their chance by at most (Σ_P |N·q_P − n_P| · c_{P,t} / N_t + 1) / N.
    """
    if not 1 <= int(n_selections) <= MAX_SELECTIONS:
        raise ValueError(f"n_selections must be between 1 and {MAX_SELECTIONS:,}.")
    q = np.clip(np.asarray(dist.panel_probabilities, dtype=float), 0.0, None)
    counts = _round_counts(q, int(n_selections))
    ids = np.asarray(dist.person_ids, dtype=object)
    members = [list(ids[dist.type_index == t]) for t in range(dist.panels.shape[1])]
    pointer = [0] * len(members)
    out = []
    for P, copies in zip(dist.panels, counts):
        for _ in range(int(copies)):
            panel = []
            for t, c in enumerate(P):
                c = int(round(c))
                size = len(members[t])
                panel += [members[t][(pointer[t] + j) % size] for j in range(c)]
                pointer[t] = (pointer[t] + c) % size if size else 0
            out.append(tuple(panel))
    return out


def lottery_table(panels: Sequence[Sequence[str]]) -> pd.DataFrame:
    """The library's multiple-selection table: one column ``Assembly i`` per panel, its member ids below."""
    if not panels:
        raise ValueError("No panels to write.")
    k = max(len(p) for p in panels)
    cols = {f"Assembly {i}": list(p) + [""] * (k - len(p)) for i, p in enumerate(panels)}
    return pd.DataFrame(cols)


def read_lottery(df: pd.DataFrame) -> list[tuple[str, ...]]:
    """Panels from a multiple-selection table (``Assembly 0``, … columns; blank cells ignored)."""
    cols = [c for c in df.columns if str(c).strip().lower().startswith("assembly")]
    if not cols:
        raise ValueError("A lottery table needs columns named Assembly 0, Assembly 1, …; found "
                         + ", ".join(map(str, df.columns[:8])) + ".")
    out = []
    for c in cols:
        vals = [str(v).strip() for v in df[c].tolist()]
        out.append(tuple(v for v in vals if v and v.lower() != "nan"))
    return out


def lottery_chances(panels: Sequence[Sequence[str]], person_ids: Sequence[str]) -> np.ndarray:
    """Each person's share of the panels that include them (drawing one panel uniformly from the table)."""
    idx = {str(p): i for i, p in enumerate(person_ids)}
    counts = np.zeros(len(idx))
    for panel in panels:
        for m in panel:
            counts[idx[str(m)]] += 1
    return counts / max(len(panels), 1)
