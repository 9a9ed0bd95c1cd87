"""Link codecs and row readers of the Epsilon calculator's two editable tables (issue 17, bounded parsing).

The composition list (``eps_comp_rows``) and the budget statistics (``eps_b_rows``) travel in the link as JSON
``{"cols": [...], "rows": [[...], ...]}``. A link is written by a stranger, so decoding is bounded before any
parsing (length, nesting depth), accepts only finite numbers, short text and the expected columns, and never
raises: it returns a table or a message. The row readers turn a table into engine rows and raise only
``ValueError``, whose message names the row and quotes user text escaped for Markdown (``ui.text.md_quote``).
No streamlit here, so all of it is unit-tested (tests/test_eps_codecs.py).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from engine.data import json_depth
from engine import accounting as acc
from engine import budget as bud
from ui.links import MAX_VALUE_CHARS
from ui.text import md_escape, md_quote

#: Longest link value read or written (characters): the link sanitiser's bound (ui.links drops longer values).
MAX_LINK_CHARS = MAX_VALUE_CHARS
#: Deepest JSON nesting accepted: object → rows list → row list.
MAX_DEPTH = 3
MAX_ROWS = 50
MAX_CELL_CHARS = 200
#: Largest repeat count of one composition row (the "one mechanism" mode stops at 10,000 releases).
MAX_COUNT = 100_000
MAX_SENSITIVITY = 10**6
MAX_RECORDS = 10**9
MAX_CELLS = 10**6


@dataclass(frozen=True)
class DecodedTable:
    """A decoded link table: ``frame`` (or None) and ``problem``, a Markdown-safe message (or None)."""

    frame: pd.DataFrame | None
    problem: str | None


def _reject_constant(name: str):
    raise ValueError(f"non-finite number {name}")


def _cell_ok(v) -> bool:
    if v is None:
        return True
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return abs(v) <= 10**15
    if isinstance(v, float):
        return math.isfinite(v)
    return isinstance(v, str) and len(v) <= MAX_CELL_CHARS


def decode_table(raw: str | None, columns: Sequence[str], *, max_rows: int = MAX_ROWS) -> DecodedTable:
    """The table a link carries, or the reason it cannot be used; never raises.

    ``raw`` is the query-parameter value; ``columns`` are the expected column names (any order in the link,
    returned in this order). Empty or missing means "no table in the link": ``DecodedTable(None, None)``.
    """
    if raw is None or raw == "":
        return DecodedTable(None, None)
    try:
        text = str(raw)
        if len(text) > MAX_LINK_CHARS:
            return DecodedTable(None, f"it is too long ({len(text):,} characters; at most {MAX_LINK_CHARS:,})")
        if json_depth(text, limit=MAX_DEPTH) > MAX_DEPTH:
            return DecodedTable(None, f"it is nested too deeply (at most {MAX_DEPTH} levels of brackets)")
        try:
            rec = json.loads(text, parse_constant=_reject_constant)
        except ValueError as e:
            if "non-finite" in str(e):
                return DecodedTable(None, "it holds a number that is not finite (NaN or infinity)")
            return DecodedTable(None, "it is not valid JSON")
        if not isinstance(rec, dict) or not isinstance(rec.get("cols"), list) or not isinstance(rec.get("rows"), list):
            return DecodedTable(None, 'it is not of the form {"cols": [...], "rows": [[...], ...]}')
        cols, rows = rec["cols"], rec["rows"]
        if not all(isinstance(c, str) for c in cols) or len(cols) != len(set(cols)) or set(cols) != set(columns):
            return DecodedTable(None, f"its columns are not the expected ones ({', '.join(columns)})")
        if not 0 < len(rows) <= max_rows:
            return DecodedTable(None, f"it has {len(rows)} rows; 1 to {max_rows} are allowed")
        for row in rows:
            if not isinstance(row, list) or len(row) != len(cols):
                return DecodedTable(None, f"a row does not have {len(cols)} cells")
            for v in row:
                if isinstance(v, float) and not math.isfinite(v):
                    return DecodedTable(None, "it holds a number that is not finite (NaN or infinity)")
                if isinstance(v, str) and len(v) > MAX_CELL_CHARS:
                    return DecodedTable(None, f"a cell is too long (at most {MAX_CELL_CHARS} characters)")
                if not _cell_ok(v):
                    return DecodedTable(None, "a cell is neither a finite number, text nor empty")
        frame = pd.DataFrame(rows, columns=cols)[list(columns)].reset_index(drop=True)
        return DecodedTable(frame, None)
    except (ValueError, TypeError, KeyError, RecursionError, OverflowError, MemoryError):
        return DecodedTable(None, "it could not be read")


def _jsonable(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    try:
        if pd.isna(v):
            return None
    except (TypeError, ValueError):
        pass
    if isinstance(v, (int, float)) or hasattr(v, "item"):
        x = v.item() if hasattr(v, "item") else v
        if isinstance(x, float) and not math.isfinite(x):
            return None
        if isinstance(x, float) and x.is_integer() and abs(x) < 2**53:
            return x
        return x
    return str(v)


def encode_table(df: pd.DataFrame) -> str:
    """The link value of a table (compact JSON; empty and non-finite cells become null)."""
    rows = [[_jsonable(v) for v in row] for row in df.itertuples(index=False, name=None)]
    return json.dumps({"cols": [str(c) for c in df.columns], "rows": rows}, separators=(",", ":"),
                      ensure_ascii=False)


# --------------------------------------------------------------------------- row readers
def _blank(v) -> bool:
    if v is None:
        return True
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


class _RowError(ValueError):
    """A row problem whose message is Markdown-safe by construction (user text only through md_quote)."""


def _float(v, name: str, *, default: float | None = None) -> float:
    if _blank(v):
        if default is None:
            raise _RowError(f"{name} is empty")
        return default
    try:
        x = float(v)
    except (TypeError, ValueError, OverflowError):
        raise _RowError(f"{name} must be a number, got {md_quote(v, max_len=40)}") from None
    if not math.isfinite(x):
        raise _RowError(f"{name} must be a finite number")
    return x


def _int(v, name: str, *, lo: int, hi: int, default: int | None = None) -> int:
    x = _float(v, name, default=None if default is None else float(default))
    if not (lo <= x <= hi) or x != round(x):
        raise _RowError(f"{name} must be a whole number from {lo:,} to {hi:,}")
    return int(round(x))


def _message(e: Exception) -> str:
    if isinstance(e, _RowError):
        return str(e)
    return md_escape(str(e), max_len=300) if isinstance(e, ValueError) else "a value could not be read"


def mechanisms_from_frame(df: pd.DataFrame) -> list[acc.Mechanism]:
    """Composition rows → ``accounting.Mechanism`` list; ``ValueError`` names the row and what it needs."""
    out = []
    for i, r in enumerate(df.to_dict("records")):
        kind = "" if _blank(r.get("kind")) else str(r.get("kind")).strip()
        try:
            cnt = _int(r.get("count"), "count", lo=1, hi=MAX_COUNT, default=1)
            if kind in ("laplace", "pure_dp"):
                ctor = acc.laplace if kind == "laplace" else acc.pure_dp
                out.append(ctor(_float(r.get("epsilon"), "epsilon"), count=cnt))
            elif kind == "approx_dp":
                out.append(acc.approx_dp(_float(r.get("epsilon"), "epsilon"),
                                         _float(r.get("delta"), "delta", default=0.0), count=cnt))
            elif kind == "gaussian":
                out.append(acc.gaussian(_float(r.get("multiplier"), "multiplier"), count=cnt))
            elif kind == "discrete_laplace":
                sens = _int(r.get("sensitivity"), "sensitivity", lo=1, hi=MAX_SENSITIVITY, default=1)
                out.append(acc.discrete_laplace(_float(r.get("scale"), "scale"), sens, count=cnt))
            elif kind == "discrete_gaussian":
                sens = _int(r.get("sensitivity"), "sensitivity", lo=1, hi=MAX_SENSITIVITY, default=1)
                out.append(acc.discrete_gaussian(_float(r.get("sigma"), "sigma"), sens, count=cnt))
            elif kind == "zcdp":
                out.append(acc.zcdp(_float(r.get("rho"), "rho"), count=cnt))
            else:
                raise _RowError(f"unknown kind {md_quote(kind, max_len=40)}; use one of {', '.join(acc.KINDS)}")
        except (ValueError, TypeError, OverflowError) as e:
            raise ValueError(f"row {i + 1} ({md_quote(kind, max_len=40) if kind else 'no kind'}): "
                             f"{_message(e)}") from None
    if not out:
        raise ValueError("the list is empty: add at least one row")
    return out


def stats_from_frame(df: pd.DataFrame) -> list[bud.StatisticSpec]:
    """Budget rows → ``budget.StatisticSpec`` list; ``ValueError`` names the row and what it needs."""
    out = []
    for i, r in enumerate(df.to_dict("records")):
        try:
            n = None if _blank(r.get("n")) else _int(r.get("n"), "n", lo=1, hi=MAX_RECORDS)
            hold = None if _blank(r.get("hold ±")) else _float(r.get("hold ±"), "hold ±")
            share = None if _blank(r.get("hold share")) else _float(r.get("hold share"), "hold share")
            out.append(bud.StatisticSpec(
                name="" if _blank(r.get("name")) else str(r.get("name")), query=str(r.get("query")),
                target_half_width=_float(r.get("target ±"), "target ±"),
                confidence=_float(r.get("confidence"), "confidence", default=0.95), mechanism=str(r.get("mechanism")),
                lower=_float(r.get("L"), "L", default=0.0), upper=_float(r.get("U"), "U", default=1.0), n=n,
                cells=_int(r.get("cells"), "cells", lo=1, hi=MAX_CELLS, default=1), hold_half_width=hold,
                hold_share=share, weight=_float(r.get("weight"), "weight", default=1.0)))
        except (ValueError, TypeError, OverflowError) as e:
            raise ValueError(f"row {i + 1}: {_message(e)}") from None
    return out
