"""Link codec for the coherence explorer's user-built groups (query parameter ``coh_built``).

Not from the seed: the page's URL state (spec §7, "a presenter's link restores the exact view"). A link comes
from a stranger (issue 17), so parsing is bounded before ``json.loads`` runs (length, bracket nesting) and after
(group, condition and value counts, string lengths, finite numbers, known columns), and it never raises: a
problem is returned as plain text for the page to escape and show.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Iterable, Sequence

from dpdash.coherence.core import Condition, GroupSpec
from dpdash.common.data import json_depth

__all__ = ["BuiltGroups", "groups_to_json", "parse_built_groups", "range_condition", "MAX_CHARS", "MAX_GROUPS",
           "MAX_CONDITIONS", "MAX_VALUES", "MAX_TEXT", "MAX_DEPTH"]

MAX_CHARS = 8_000        # the whole parameter
MAX_GROUPS = 20          # the page's own group limit
MAX_CONDITIONS = 10      # per group
MAX_VALUES = 200         # per "is one of" condition (the builder offers at most 200 values)
MAX_TEXT = 100           # characters in a group name, column name or value
MAX_DEPTH = 5            # list [ > group { > conditions [ > condition { > values [


@dataclass(frozen=True)
class BuiltGroups:
    """Result of reading ``coh_built``: the groups accepted and, if anything was refused, why (plain text)."""
    groups: tuple[GroupSpec, ...] = ()
    problem: str | None = None


class _Refused(Exception):
    """Internal: a reason to refuse the whole parameter."""


def groups_to_json(groups: Sequence[GroupSpec]) -> str:
    """Compact JSON of user-built groups (inverse of ``parse_built_groups``)."""
    out = []
    for g in groups:
        conds = []
        for c in g.conditions:
            conds.append({"column": c.column, "values": [str(v) for v in c.values]} if c.values
                         else {"column": c.column, "low": c.low, "high": c.high})
        out.append({"name": g.name, "conditions": conds})
    return json.dumps(out, separators=(",", ":"), ensure_ascii=False, allow_nan=False)



def _refuse_constant(name: str):
    raise _Refused(f"numbers must be finite (the link has {name})")


def _number(v, where: str) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _Refused(f"{where}: a range condition needs numbers low < high (one of them may be null)")
    try:
        x = float(v)
    except OverflowError:
        x = math.inf
    if not math.isfinite(x):
        raise _Refused(f"{where}: numbers must be finite")
    return x


def _text(v, what: str, where: str) -> str:
    if not isinstance(v, str) or not v.strip():
        raise _Refused(f"{where}: needs a non-empty {what}")
    if len(v) > MAX_TEXT:
        raise _Refused(f"{where}: the {what} is longer than {MAX_TEXT} characters")
    return v


def _condition(c, where: str) -> Condition:
    if not isinstance(c, dict) or not isinstance(c.get("column"), str):
        raise _Refused(f'{where}: each condition needs a "column"')
    column = _text(c["column"], "column name", where)
    has_range = "low" in c or "high" in c
    if "values" in c:
        if has_range:
            raise _Refused(f"{where}: a condition has either values or a range, not both")
        vals = c["values"]
        if not isinstance(vals, list) or not vals or not all(isinstance(v, str) for v in vals):
            raise _Refused(f'{where}: "values" must be a non-empty list of strings')
        if len(vals) > MAX_VALUES or any(len(v) > MAX_TEXT for v in vals):
            raise _Refused(f"{where}: at most {MAX_VALUES} values of at most {MAX_TEXT} characters each")
        return Condition(column, values=tuple(vals))
    lo, hi = _number(c.get("low"), where), _number(c.get("high"), where)
    if (lo is None and hi is None) or (lo is not None and hi is not None and lo >= hi):
        raise _Refused(f"{where}: a range condition needs numbers low < high (one of them may be null)")
    return Condition(column, low=lo, high=hi)


def _groups(raw) -> list[GroupSpec]:
    if not isinstance(raw, list) or len(raw) > MAX_GROUPS:
        raise _Refused(f"the group list must be a JSON list of at most {MAX_GROUPS} groups")
    out: list[GroupSpec] = []
    for i, g in enumerate(raw):
        where = f"group {i + 1}"
        if not isinstance(g, dict):
            raise _Refused(f'{where}: needs a non-empty "name"')
        name = g.get("name")
        if not isinstance(name, str) or not name.strip():
            raise _Refused(f'{where}: needs a non-empty "name"')
        _text(name, "name", where)
        conds = g.get("conditions", [])
        if not isinstance(conds, list) or not 1 <= len(conds) <= MAX_CONDITIONS:
            raise _Refused(f"{where}: needs 1 to {MAX_CONDITIONS} conditions")
        out.append(GroupSpec(name, tuple(_condition(c, where) for c in conds)))
    names = [g.name for g in out]
    if len(set(names)) != len(names):
        raise _Refused("the group list repeats a group name")
    return out


def parse_built_groups(text: object, *, columns: Iterable[str] | None = None) -> BuiltGroups:
    """Read the ``coh_built`` link value; never raises.

    Parameters
    ----------
    text : the raw query-parameter value (anything; only a ``str`` can be valid).
    columns : the data's column names; groups naming another column are dropped (with a note), since a link
        may be opened on other data. ``None`` skips that check.

    Returns
    -------
    BuiltGroups
        Everything refused → ``groups=()`` and the reason; unknown columns → the other groups and a note.
        ``problem`` is plain text that may quote the link: escape it before it reaches Markdown.
    """
    if not isinstance(text, str):
        return BuiltGroups((), "the group list must be JSON text")
    if len(text) > MAX_CHARS:
        return BuiltGroups((), f"the group list is {len(text):,} characters; at most {MAX_CHARS:,} are read")
    if json_depth(text, limit=MAX_DEPTH) > MAX_DEPTH:
        return BuiltGroups((), f"the group list is nested more than {MAX_DEPTH} levels deep")
    try:
        raw = json.loads(text, parse_constant=_refuse_constant)
        groups = _groups(raw)
    except _Refused as exc:
        return BuiltGroups((), str(exc))
    except json.JSONDecodeError as exc:
        return BuiltGroups((), f"the group list is not valid JSON ({exc.msg})")
    except (ValueError, RecursionError):  # an integer past Python's digit limit (the depth is checked above)
        return BuiltGroups((), "numbers must be finite and at most a few thousand digits long")
    if columns is None:
        return BuiltGroups(tuple(groups))
    known = set(columns)
    kept = [g for g in groups if all(c.column in known for c in g.conditions)]
    dropped = [g for g in groups if g not in kept]
    if not dropped:
        return BuiltGroups(tuple(kept))
    detail = "; ".join(f"{g.name} (needs {', '.join(sorted({c.column for c in g.conditions} - known))})"
                       for g in dropped)
    return BuiltGroups(tuple(kept), f"groups using columns these data do not have were left out: {detail}")


def range_condition(column: str, low_text: str, high_text: str) -> tuple[Condition | None, str | None]:
    """The group builder's "in range [low, high)" condition from two text boxes; never raises.

    Blank = unbounded on that side. Returns ``(None, None)`` when both are blank (nothing to add yet), and
    ``(None, reason)`` for anything but finite numbers with low < high (``float`` alone would accept "nan",
    "inf" and "1e309").
    """
    bounds = []
    for what, text in (("low", low_text), ("high", high_text)):
        t = (text or "").strip()
        if not t:
            bounds.append(None)
            continue
        if len(t) > 40:
            return None, f"{what} is not a number (at most 40 characters)"
        try:
            x = float(t)
        except ValueError:
            return None, f"{what} must be a number, or blank for no bound"
        if not math.isfinite(x):
            return None, f"{what} must be a finite number, or blank for no bound"
        bounds.append(x)
    lo, hi = bounds
    if lo is None and hi is None:
        return None, None
    if lo is not None and hi is not None and lo >= hi:
        return None, "low must be smaller than high (the range is [low, high))"
    return Condition(column, low=lo, high=hi), None
