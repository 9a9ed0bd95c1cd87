"""Honest links: check every URL parameter before any widget reads it, and say which ones were not used.

Issues 17 (deliver 2) and 14 (item 4). A shared link is input from a stranger. ``sanitise_link()`` runs in
``ui.common.page_setup``, before the first widget: it drops values no control should ever see — control
characters, over-long values, JSON nested deeper than :data:`MAX_JSON_DEPTH` (the pages' table codecs recurse),
non-finite numbers (``inf`` in an integer box raises OverflowError inside Streamlit) — from the URL *and* from
the snapshot Streamlit seeds widgets from. ``link_notice()`` runs in ``ui.common.page_end``: it compares what
the link asked for with what the page used and shows one dismissible notice naming each ignored parameter and
why. Streamlit itself silently removes a bound value it rejects (out of range, unknown option) and uses the
default; a value equal to the default is also removed from the URL, but that one *was* used, so the notice
re-parses the removed value with the widget's own deserializer to tell the two apart.

The checks (:func:`check_value`, :func:`sanitise_params`) are pure functions; the two Streamlit entry points
use the pinned Streamlit's query-parameter store (``QueryParams._initial_query_params`` is what widgets are
seeded from; deleting from ``st.query_params`` alone would not stop the seeding).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from dpdash.common.data import json_depth as _json_depth
from ui.text import md_escape

#: Longest accepted value of one parameter (a table parameter of 40 rows fits easily).
MAX_VALUE_CHARS = 4000
#: Longest accepted parameter name, and the most parameters one link may carry.
MAX_NAME_CHARS = 64
MAX_PARAMS = 200
#: Deepest accepted nesting of JSON-like brackets: the pages' tables are lists of rows (depth 2).
MAX_JSON_DEPTH = 8

#: Parameters that pages read themselves (not widgets), and Streamlit's own: never "not a setting".
PAGE_READ_PARAMS = frozenset({"eps_comp_rows", "eps_b_rows", "coh_built", "embed", "embed_options"})

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
_FLOAT_LIKE = re.compile(r"^\s*[+-]?(inf(inity)?|nan|(\d+\.?\d*|\.\d+)(e[+-]?\d+)?)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Ignored:
    """One link parameter the page did not use, and why (plain words, shown to the user)."""

    name: str
    reason: str


def json_depth(text: str) -> int:
    """Deepest ``[``/``{`` nesting outside JSON strings, counted up to one past ``MAX_JSON_DEPTH``."""
    return _json_depth(text, limit=MAX_JSON_DEPTH)


def check_value(value: str) -> str | None:
    """Why one parameter value must not reach a widget or a codec, or None if it may."""
    if len(value) > MAX_VALUE_CHARS:
        return f"the value is longer than {MAX_VALUE_CHARS:,} characters"
    if _CONTROL.search(value):
        return "the value contains control characters"
    if _FLOAT_LIKE.match(value):
        try:
            number = float(value)
        except (ValueError, OverflowError):
            number = math.inf
        if not math.isfinite(number):
            return "the value is not a finite number"
    if ("[" in value or "{" in value) and json_depth(value) > MAX_JSON_DEPTH:
        return f"the value is nested more than {MAX_JSON_DEPTH} levels deep"
    return None


def sanitise_params(params: Mapping[str, str | list[str]]) -> tuple[dict[str, list[str]], list[Ignored]]:
    """Split link parameters into those a page may read and those it must not (with the reason).

    Every value of a repeated parameter is checked; one bad value drops the parameter.
    """
    kept: dict[str, list[str]] = {}
    dropped: list[Ignored] = []
    for i, (name, raw) in enumerate(params.items()):
        values = [raw] if isinstance(raw, str) else list(raw)
        if i >= MAX_PARAMS:
            dropped.append(Ignored(name, f"the link has more than {MAX_PARAMS} parameters"))
            continue
        if len(name) > MAX_NAME_CHARS or _CONTROL.search(name):
            dropped.append(Ignored(name, "the parameter name is not one this page uses"))
            continue
        reasons = [r for r in map(check_value, values) if r]
        if reasons:
            dropped.append(Ignored(name, reasons[0]))
        else:
            kept[name] = values
    return kept, dropped


def notice_text(ignored: list[Ignored]) -> str:
    """The notice's Markdown: every name escaped (names come from the link)."""
    items = "; ".join(f"**{md_escape(i.name, max_len=40)}** ({i.reason})" for i in ignored[:12])
    more = f"; and {len(ignored) - 12} more" if len(ignored) > 12 else ""
    return (f"Some settings in this link were not used: {items}{more}. "
            "The page uses its defaults there and applies the rest of the link.")


# --------------------------------------------------------------------------- Streamlit side
_PENDING = "_links_pending"      # snapshot of the link, taken in page_setup, checked in page_end
_SIGNATURE = "_links_signature"  # the link last checked: page_end is a no-op until it changes
_EXTRA = "_links_extra"          # reasons pages add with report_ignored()
_MANUAL = "_links_manual"        # parameters kept by hand this run (ui.widgets.choice): they are settings


def _store():
    from streamlit.runtime.state.session_state_proxy import get_session_state

    return get_session_state().query_params()


def sanitise_link() -> None:
    """Drop unsafe link values before any widget reads them; remember the link for :func:`link_notice`.

    Call once per run, before the first widget (``ui.common.page_setup`` does). Cheap: one pass over the
    parameters; the snapshot is taken only when the link differs from the one last checked.
    """
    import streamlit as st
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    with _store() as qp:
        initial = dict(qp._initial_query_params)
        current = dict(qp._query_params)
        _, dropped_initial = sanitise_params(initial)
        _, dropped_current = sanitise_params(current)
        for item in dropped_initial:
            qp._initial_query_params.pop(item.name, None)
        for item in dropped_current:
            qp.remove_param(item.name)  # also tells the browser to drop it from the address bar
    st.session_state[_MANUAL] = set()
    ctx = get_script_run_ctx()
    page = getattr(ctx, "page_script_hash", "") if ctx is not None else ""
    signature = (page, tuple(sorted((k, tuple(v) if isinstance(v, list) else (v,)) for k, v in initial.items())))
    if st.session_state.get(_SIGNATURE) == signature:
        return
    st.session_state[_SIGNATURE] = signature
    kept, _ = sanitise_params(initial)
    by_name = {i.name: i for i in [*dropped_initial, *dropped_current]}
    st.session_state[_PENDING] = {"kept": kept, "dropped": list(by_name.values())}
    st.session_state[_EXTRA] = []


def report_ignored(name: str, reason: str) -> None:
    """For pages that parse a parameter themselves: add it to this link's notice (e.g. a table that fails)."""
    import streamlit as st

    if _PENDING in st.session_state:
        st.session_state.setdefault(_EXTRA, []).append(Ignored(name, reason))


def accept_plain_number(key: str, options, format_func) -> None:
    """Let a link give a number option without its thousands separators ("2000" for the label "2,000").

    A bound ``select_slider`` with ``format_func`` reads and writes its link as the formatted label, so a hand-typed
    or older link with plain digits was refused. Call before the widget: a plain-digit value equal to one option is
    rewritten to that option's label; anything else is left for the widget (and the link notice) to judge.
    """
    with _store() as qp:
        for table in (qp._initial_query_params, qp._query_params):  # the widget seeds from the first
            raw = table.get(key)
            raw = raw if isinstance(raw, list) else [raw] if raw is not None else []
            if len(raw) != 1:
                continue
            text = str(raw[0]).replace(",", "").replace("_", "").strip()
            if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", text or "x"):
                continue
            match = [o for o in options if float(o) == float(text)]
            if match:
                table[key] = [format_func(match[0])] if table is qp._initial_query_params else \
                    format_func(match[0])


def register_manual_param(name: str) -> None:
    """Mark ``name`` as a setting this run keeps in the URL by hand (not through a bound widget), so the link
    check does not call it "not a setting"; the code that reads it reports a bad value with report_ignored()."""
    import streamlit as st

    st.session_state.setdefault(_MANUAL, set()).add(name)


def _same_url_value(a: str, b: str) -> bool:
    if a == b or a.lower() == b.lower() in ("true", "false"):
        return True
    try:
        return float(_plain_digits(a)) == float(_plain_digits(b))
    except ValueError:
        return False


def _plain_digits(text: str) -> str:
    """'2,000' and '2_000' as '2000' (a number the widget shows with separators); any other text unchanged."""
    return text.replace(",", "").replace("_", "") if _SEPARATED.fullmatch(text.strip()) else text


_SEPARATED = re.compile(r"[0-9]{1,3}([,_][0-9]{3})+(\.[0-9]+)?")


def _same_values(a: list[str], b: list[str]) -> bool:
    """Two lists of URL values that say the same ("0.30" and "0.3", "1e-6" and "1e-06")."""
    return len(a) == len(b) and all(map(_same_url_value, a, b))


def _asked_for_default(metadata, raw: list[str]) -> bool:
    """Did the link ask for the widget's default (so Streamlit's removing it from the URL lost nothing)?

    Streamlit removes a value equal to the default and also one its deserializer rejects (which then falls
    back to the default), so the link's text is compared with the default written the way Streamlit writes it.
    """
    from streamlit.runtime.state.query_params import _coerce_value_for_query_url

    try:
        default = _coerce_value_for_query_url(metadata.serializer(metadata.deserializer(None)), metadata.value_type)
    except Exception:  # an unexpected widget kind: do not claim the value was used
        return False
    if metadata.value_type.endswith("_array_value"):
        want = [str(v) for v in (default if isinstance(default, list) else [default])]
        got = [v for v in raw if v != ""]
        return len(want) == len(got) and all(map(_same_url_value, got, want))
    return bool(raw) and _same_url_value(raw[-1], str(default))


def unused_params() -> list[Ignored]:
    """Parameters of the link this run started from that the page did not use (empty if already checked)."""
    import streamlit as st
    from streamlit.runtime.state.session_state_proxy import get_session_state

    pending = st.session_state.get(_PENDING)
    if pending is None:
        return []
    ignored = list(pending["dropped"]) + list(st.session_state.get(_EXTRA, []))
    state = get_session_state()._state
    manual = st.session_state.get(_MANUAL, set())
    with _store() as qp:
        for name, raw in pending["kept"].items():
            if name in PAGE_READ_PARAMS or name in manual or any(i.name == name for i in ignored):
                continue
            binding = qp.get_binding_for_param(name)
            if binding is None:
                ignored.append(Ignored(name, "not a setting of this page, or not used in this view"))
                continue
            if qp.has_param(name):
                now = qp._query_params[name]
                now = now if isinstance(now, list) else [now]
                if not _same_values(now, raw) and not (len(raw) > 1 and _same_values(now, raw[-1:])):
                    shown = ", ".join(now)
                    ignored.append(Ignored(name, f"partly accepted; {md_escape(shown, max_len=40)} was used"))
                continue
            metadata = state.get_widget_metadata(binding.widget_id)
            if metadata is None or not _asked_for_default(metadata, raw):
                ignored.append(Ignored(name, "out of range or not an option"))
    return ignored


def link_notice() -> None:
    """Show one dismissible notice naming the link parameters that were not used (once per link)."""
    import streamlit as st

    if _PENDING not in st.session_state:
        return
    try:
        ignored = unused_params()
    finally:
        st.session_state.pop(_PENDING, None)
        st.session_state.pop(_EXTRA, None)
    if ignored:
        st.toast(notice_text(ignored), icon=":material/link_off:", duration="infinite")
