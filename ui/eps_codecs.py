"""Link codecs and row readers of the Epsilon calculator's two editable tables (issue 17, bounded parsing).

The composition list (``eps_comp_rows``) and the budget statistics (``eps_b_rows``) travel in the link as JSON
``{"cols": [...], "rows": [[...], ...]}``. A link is written by a stranger, so decoding is bounded before any
parsing (length, nesting depth), accepts only finite numbers, short text and the expected columns, and never
raises: it returns a table or a message. The row readers turn a table into engine rows and raise only
``ValueError``, whose message names the row and quotes user text escaped for Markdown (``ui.text.md_quote``).
No streamlit here, so all of it is unit-tested (tests/ui/test_eps_codecs.py).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from dpdash.common.data import json_depth
from dpdash.accounting import composition as acc
from dpdash.accounting import budget as bud
from dpdash.epsilon import private_tests as pt
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


# =========================================================================== typed inputs of Tabs 4 and 7 (issue 13)
#: Most values a pasted εᵢ list may hold, and its longest text (characters), checked before splitting.
MAX_PASTED = 100_000
MAX_PASTED_CHARS = 2_000_000


def epsilon_sequence(kind: str, values: Mapping) -> list[float]:
    """Tab 4's εᵢ sequence from its controls' values (``values`` maps the ``eps_a_*`` keys; missing → default).

    constant: ``eps_a_count`` copies of ``eps_a_const``; geometric: ``eps_a_g0``·ratioⁱ (terms below 1e-300 are
    charged 1e-300, a larger εᵢ being still a valid bound); uniform: seeded draws between ``eps_a_lo`` and
    ``eps_a_hi``; spikes: every ``eps_a_r``-th request multiplied by ``eps_a_s``; pasted: numbers separated by
    commas, semicolons or new lines (ValueError with a readable message otherwise).

    >>> epsilon_sequence("spikes", {"eps_a_const": 0.5, "eps_a_r": 2, "eps_a_s": 4.0, "eps_a_count": 4})
    [0.5, 2.0, 0.5, 2.0]
    >>> epsilon_sequence("pasted", {"eps_a_paste": "0.1; 0.2\\n0.3"})
    [0.1, 0.2, 0.3]
    """
    g = values.get
    count = int(g("eps_a_count", 2000))
    if kind == "constant":
        return [float(g("eps_a_const", 0.01))] * count
    if kind == "geometric":
        e0, r = float(g("eps_a_g0", 0.1)), float(g("eps_a_ratio", 0.99))
        return [max(e0 * r**i, 1e-300) for i in range(count)]
    if kind == "uniform":
        rng = np.random.default_rng(int(g("eps_a_seed", 0)))
        a, b = float(g("eps_a_lo", 0.001)), float(g("eps_a_hi", 0.02))
        return list(rng.uniform(min(a, b), max(a, b), count))
    if kind == "spikes":
        base, r, s = float(g("eps_a_const", 0.01)), int(g("eps_a_r", 50)), float(g("eps_a_s", 10.0))
        return [base * s if (i + 1) % r == 0 else base for i in range(count)]
    if kind != "pasted":
        raise ValueError(f"unknown sequence kind {kind!r}")
    text = str(g("eps_a_paste", ""))
    if len(text) > MAX_PASTED_CHARS:
        raise ValueError(f"the pasted list is too long: at most {MAX_PASTED:,} values")
    vals = [v for v in text.replace(";", ",").replace("\n", ",").split(",") if v.strip()]
    try:
        out = [float(v) for v in vals]
    except ValueError:
        raise ValueError("the pasted list must contain numbers separated by commas or new lines") from None
    if not out or any(not (math.isfinite(v) and v > 0) for v in out) or len(out) > MAX_PASTED:
        raise ValueError(f"the pasted list needs 1 to {MAX_PASTED:,} values, each > 0")
    return out


def count_items(text: str) -> int:
    """How many comma- or semicolon-separated items a typed vector holds (blank items ignored)."""
    return len([p for p in str(text).replace(";", ",").split(",") if p.strip()])


def parse_vector(text: str, d: int, name: str) -> np.ndarray:
    """``d`` numbers separated by commas; a/b fractions allowed (no eval). ValueError names ``name`` and quotes
    the text escaped for Markdown.

    >>> parse_vector("0.5, 1/6, 1/6, 1/6", 4, "p").round(4).tolist()
    [0.5, 0.1667, 0.1667, 0.1667]
    """
    parts = [p.strip() for p in str(text).replace(";", ",").split(",") if p.strip()]
    vals = []
    for p in parts:
        try:
            num, _, den = p.partition("/")
            vals.append(float(num) / float(den) if den else float(num))
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"{name}: cannot read {md_quote(p, max_len=40)}; write numbers (fractions like 1/6 are "
                             "fine) separated by commas") from None
    arr = np.array(vals)
    if len(arr) != d or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: expected {d} numbers separated by commas, got {len(parts)}")
    return arr


def indep_setting(r: int, c: int, pi1_text: str, pi2_text: str, shift_text: str):
    """Null table π⁽¹⁾π⁽²⁾ᵀ and alternative null + Δ from the typed marginals and shift (ValueError with a
    readable message); a blank shift is ``private_tests.default_indep_shift``. Returns (π⁽¹⁾, π⁽²⁾, null, alt)."""
    pi1 = parse_vector(pi1_text, r, "π⁽¹⁾ (rows)")
    pi2 = parse_vector(pi2_text, c, "π⁽²⁾ (columns)")
    for name, v in (("π⁽¹⁾", pi1), ("π⁽²⁾", pi2)):
        if np.any(v <= 0) or abs(v.sum() - 1) > 1e-9:
            raise ValueError(f"{name} must be positive and sum to 1, got sum {v.sum():.6g}")
    if shift_text.strip():
        shift = parse_vector(shift_text, r * c, "shift Δ (r·c numbers, row by row)").reshape(r, c)
    else:
        shift = pt.default_indep_shift(r, c)
    if abs(shift.sum()) > 1e-9:
        raise ValueError(f"shift Δ must sum to 0, got {shift.sum():.3g}")
    null = np.outer(pi1, pi2)
    alt = null + shift
    if np.any(alt <= 0):
        raise ValueError("the alternative π⁽¹⁾π⁽²⁾ᵀ + Δ has a cell ≤ 0: make the shift smaller")
    return pi1, pi2, null, alt


def sweep_values(center: float, lo: float, hi: float, points: int, *, integer: bool) -> tuple:
    """``points`` log-spaced values from center/10 to 10·center, clipped to [lo, hi] (3 sig. figs or integers).

    >>> sweep_values(1000, 100, 1e7, 3, integer=True)
    (100, 1000, 10000)
    """
    vals = np.geomspace(center / 10, center * 10, points) if points > 1 else np.array([center])
    vals = np.clip(vals, lo, hi)
    if integer:
        return tuple(sorted({int(round(v)) for v in vals}))
    return tuple(sorted({float(f"{v:.3g}") for v in vals}))


def indep_demo(alt: np.ndarray, *, n: int, noise: str, privacy: float, alpha: float, seed: int):
    """One seeded noisy table drawn from the alternative, its 2MLE projection and both private independence
    tests' results (AsymptIndep, projected GenChiTest): ([T] Algs 11, 13, 15). ``privacy`` is ρ for Gaussian
    noise, ε for Laplace."""
    priv = {"rho": privacy} if noise == "gaussian" else {"epsilon": privacy}
    rho_eff = pt.noise_rho(noise, **priv)
    gamma = pt.default_gamma(noise)
    tab = pt.noisy_table(np.asarray(alt), n=n, noise=noise, rng=np.random.default_rng(seed), **priv)
    proj = pt.project_counts(tab, n=n, gamma=gamma)
    res = [pt.independence_test(tab, n=n, rho=rho_eff, alpha=alpha, test=t, gamma=gamma)
           for t in ("asympt_indep", "projected")]
    return tab, proj, res
