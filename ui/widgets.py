"""URL-bound controls shared by the pages: a log-scale ε slider, a seed box and a δ exponent.

Every control has a stable ``key`` and ``bind="query-params"``, so a presenter's link restores the view.
"""

from __future__ import annotations

import math

from collections.abc import Mapping
from typing import Literal

import numpy as np
import streamlit as st


def log_grid(min_value: float, max_value: float, steps_per_decade: int = 20) -> list[float]:
    """Log-spaced values from min to max, rounded to 2 significant figures (0.5, 1, 2, 5 are on the grid).

    Steps are aligned to decades (10^(k/steps)), so the grid is the same whatever ``min_value``; the ends are
    included exactly. Short numbers read well on the slider and in URLs.
    """
    if not (0 < min_value < max_value):
        raise ValueError("need 0 < min_value < max_value")
    lo, hi = math.log10(min_value), math.log10(max_value)
    ks = np.arange(math.ceil(lo * steps_per_decade - 1e-9), math.floor(hi * steps_per_decade + 1e-9) + 1)
    vals = {float(f"{10 ** (k / steps_per_decade):.2g}") for k in ks}
    vals |= {float(min_value), float(max_value)}
    return sorted(v for v in vals if min_value <= v <= max_value)


def _nearest(grid: list[float], value: float) -> float:
    return min(grid, key=lambda g: abs(math.log(g) - math.log(value)))


def format_number(v: float) -> str:
    return f"{v:g}"


#: Significant figures a typed value keeps: ``format_number`` writes 6, so the link stores the value exactly.
EXACT_DIGITS = 6


def exact_value(text: object, min_value: float, max_value: float) -> float | None:
    """A typed or linked value as the control will hold it (6 significant figures), or None if unusable.

    Accepts numbers and number text ("0.3", "5e-7", " 3 "); refuses non-numbers, non-finite values and values
    outside ``[min_value, max_value]``.

    >>> exact_value("0.15", 1e-3, 20), exact_value("5e-7", 1e-12, 1e-3), exact_value("0.1234567", 0.1, 1)
    (0.15, 5e-07, 0.123457)
    >>> exact_value("25", 1e-3, 20) is None and exact_value("nan", 0, 1) is None and exact_value("x", 0, 1) is None
    True
    """
    if isinstance(text, bool) or text is None:
        return None
    try:
        v = float(str(text).strip()) if not isinstance(text, (int, float)) else float(text)
    except (ValueError, OverflowError):
        return None
    if not math.isfinite(v):
        return None
    v = float(f"{v:.{EXACT_DIGITS}g}")
    return v if min_value <= v <= max_value else None


_GROUPS = __import__("re").compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?([eE][+-]?\d+)?$")


def read_number(text: object, *, min_value: float, max_value: float, integer: bool = False,
                name: str = "the value") -> tuple[float | None, str | None]:
    """A number typed in a box, as the page will use it, or None and the reason in plain words (issue 34 item 4).

    A decimal comma is read as a decimal point ("0,5" → 0.5: browsers' number boxes turned it into 5); thousands
    separators are read when unambiguous ("10,000,000", "1,234.5", any in a whole-number box); a single comma
    before exactly three digits in a decimal box ("1,500") could be either, so it is refused with both readings.
    Values outside ``[min_value, max_value]``, not finite, or not whole where ``integer`` are refused with the
    accepted range. Non-integers keep 6 significant figures (as :func:`exact_value`).

    >>> read_number("0,5", min_value=1e-3, max_value=20)
    (0.5, None)
    >>> read_number("10,000", min_value=2, max_value=1e9, integer=True)
    (10000.0, None)
    >>> read_number("1,500", min_value=0, max_value=9)[0] is None
    True
    >>> read_number("0", min_value=1e-3, max_value=20)[1]
    'The value must be from 0.001 to 20; 0 is outside that range.'
    """
    lo_t, hi_t = ((f"{int(min_value):,}", f"{int(max_value):,}") if integer
                  else (format_number(min_value), format_number(max_value)))
    rng = f"from {lo_t} to {hi_t}"
    name = name[:1].upper() + name[1:]
    if isinstance(text, bool) or text is None:
        return None, f"Type a number {rng}."
    raw = str(text).strip().replace(" ", "").replace("\u202f", "").replace("\u00a0", "").replace("_", "")
    if not raw:
        return None, f"Type a number {rng}."
    t = raw
    if "," in t:
        if _GROUPS.match(t):
            if (not integer and t.count(",") == 1 and "." not in t and "e" not in t.lower()
                    and t.lstrip("+-").split(",")[0] != "0"):
                a, b = t.split(",")
                return None, (f"“{raw}” could mean {a}.{b} or {a}{b}: type it with a point for a decimal ({a}.{b}) "
                              f"or without the comma ({a}{b}).")
            t = t.replace(",", "")
        elif t.count(",") == 1 and "." not in t:
            t = t.replace(",", ".")  # a decimal comma
        else:
            return None, f"“{raw}” is not a number: use a point for decimals (0.5), {rng}."
    try:
        v = float(t)
    except (ValueError, OverflowError):
        return None, f"“{raw}” is not a number: type a number {rng} (e.g. 0.5 or 5e-7)."
    if not math.isfinite(v):
        return None, f"“{raw}” is not a finite number: type a number {rng}."
    if integer:
        if not v.is_integer():
            return None, f"{name} must be a whole number {rng}; {raw} is not whole."
    else:
        v = float(f"{v:.{EXACT_DIGITS}g}")
    if not min_value <= v <= max_value:
        return None, f"{name} must be {rng}; {raw} is outside that range."
    return (float(int(v)) if integer else v), None


def _link_value(key: str) -> str | None:
    """The raw value the link this session started from holds for ``key`` (last one if repeated), or None."""
    from ui.links import _store

    with _store() as qp:
        values = qp._initial_query_params.get(key)
    return values[-1] if values else None


def _set_link_value(key: str, text: str) -> None:
    """Rewrite the link's value for ``key`` the way the control writes it (so "0.30" or "1e-6" are found)."""
    from ui.links import _store

    with _store() as qp:
        if key in qp._initial_query_params:
            qp._initial_query_params[key] = [text]


def _held_value(key: str, min_value: float, max_value: float, to_value=lambda v: v) -> float | None:
    """The value the control for ``key`` holds before it is drawn: its session value, else the link's.

    ``to_value`` maps a session value to the box's scale (δ from an exponent); a link value in range is also
    rewritten in the link in the control's own spelling, so Streamlit's lookup finds it.
    """
    if key in st.session_state:
        try:
            return exact_value(to_value(float(st.session_state[key])), min_value, max_value)
        except (TypeError, ValueError, OverflowError):
            return None
    raw = _link_value(key)
    if raw is None:
        return None
    return exact_value(raw, min_value, max_value)


def _box_to_slider(key: str, box_key: str, min_value: float, max_value: float, from_value=lambda v: v,
                   used: float | None = None) -> None:
    """on_change of the number box: move the slider to the typed value (the slider's options gain it); a value the
    page cannot use is cleared from the box (it shows the value in use again) and the reason is kept for the page
    to show, naming the accepted range (issue 34 item 4: "0" stayed in the box while the page used the old ε)."""
    v, why = read_number(st.session_state.get(box_key), min_value=min_value, max_value=max_value)
    if v is None:
        st.session_state[f"{box_key}__why"] = (why + (f" The page still uses {format_number(used)}."
                                                      if used is not None else ""))
        st.session_state[box_key] = format_number(used) if used is not None else ""
        return
    st.session_state[key] = from_value(v)
    st.session_state[box_key] = format_number(v)  # what is shown is what is used ("0,5" reads 0.5)


def _exact_box(target, *, key: str, value: float, min_value: float, max_value: float, disabled: bool,
               from_value=lambda v: v) -> None:
    """The small box under a slider (key ``key + "__exact"``, not URL-bound: the slider holds the link).

    A text box, not a number box: the browser's number box read "0,5" as 5 and kept an out-of-range entry on
    screen while the page used the old value; here every entry goes through :func:`read_number`.
    """
    box_key = f"{key}__exact"
    held, _ = read_number(st.session_state.get(box_key), min_value=min_value, max_value=max_value)
    if held != value:
        st.session_state[box_key] = format_number(value)  # follow the slider (a drag, a link, a restored setting)
    target.text_input("Exact value", key=box_key, disabled=disabled, on_change=_box_to_slider,
                      args=(key, box_key, min_value, max_value, from_value, value),
                      placeholder=f"{format_number(min_value)} to {format_number(max_value)}")
    why = st.session_state.pop(f"{box_key}__why", None)
    if why:
        target.warning(why)


def _typed_changed(key: str, min_value: float, max_value: float, integer: bool, name: str) -> None:
    """on_change of :func:`typed_number`: keep a usable entry (written as the page reads it), else put the value in
    use back in the box and keep the reason for the page to show."""
    v, why = read_number(st.session_state.get(key), min_value=min_value, max_value=max_value, integer=integer,
                         name=name)
    used = st.session_state.get(f"{key}__used")
    if v is None:
        st.session_state[f"{key}__why"] = why + (f" The page still uses {_typed_text(used, integer)}."
                                                 if used is not None else "")
        st.session_state[key] = _typed_text(used, integer) if used is not None else ""
    else:
        st.session_state[key] = _typed_text(v, integer)


def _typed_text(v: float, integer: bool) -> str:
    return str(int(v)) if integer else format_number(v)


def typed_number(label: str, *, key: str, value: float, min_value: float, max_value: float, integer: bool = False,
                 name: str | None = None, help: str | None = None, container=None, disabled: bool = False) -> float:
    """A URL-bound box for a typed number whose shown value is the value the page uses (issue 34 item 4).

    Every entry goes through :func:`read_number`: "0,5" is 0.5 and "1,000,000" a million in a whole-number box;
    an entry the page cannot use (out of range, not a number) is cleared from the box, which shows the value in
    use again, with a warning naming the accepted range. A link value the box cannot use is reported in the link
    notice and the default is used. Returns the value in use.
    """
    from ui.links import report_ignored

    name = name or label
    target = container if container is not None else st
    if key not in st.session_state:
        raw = _link_value(key)
        if raw is not None:
            v, why = read_number(raw, min_value=min_value, max_value=max_value, integer=integer, name=name)
            if v is None:
                report_ignored(key, why)
                _set_link_value(key, _typed_text(value, integer))
            elif raw != _typed_text(v, integer):
                _set_link_value(key, _typed_text(v, integer))
    text = target.text_input(label, value=_typed_text(value, integer), key=key, disabled=disabled,
                             help=(f"{help} " if help else "") + "Type a number "
                             + read_number(None, min_value=min_value, max_value=max_value,
                                           integer=integer)[1].removeprefix("Type a number "),
                             on_change=_typed_changed, args=(key, min_value, max_value, integer, name),
                             bind="query-params")
    v, _ = read_number(text, min_value=min_value, max_value=max_value, integer=integer, name=name)
    if v is None:  # only a link or a restored setting can get here: the default is used
        v = float(value)
    st.session_state[f"{key}__used"] = v
    why = st.session_state.pop(f"{key}__why", None)
    if why:
        target.warning(why)
    return v


def _slider_columns(target):
    """Slider, then the box under it: pages put sliders in narrow columns, where a box beside the slider had
    no room for "1e-06"."""
    return target, target


def _with_box_help(help: str | None, min_value: float, max_value: float) -> str:
    """The slider's help plus how to type an exact value (the box itself has no room for a help icon)."""
    tail = (f"Type any value from {format_number(min_value)} to {format_number(max_value)} (e.g. 0.3 or 5e-7) "
            "in the box below it; the link keeps it exactly.")
    return f"{help} {tail}" if help else tail


def log_slider(label: str, *, key: str, min_value: float = 1e-3, max_value: float = 20.0, value: float = 1.0,
               steps_per_decade: int = 20, help: str | None = None, container=None, disabled: bool = False) -> float:
    """A log-scale slider (e.g. for ε), URL-bound, with a number box under it for any exact value in range.

    The slider moves on a 2-significant-figure grid; a value typed in the box (key ``key + "__exact"``) or
    given by a link (``?key=0.3``) joins the slider's options, so the URL parameter ``key`` stores it exactly
    (6 significant figures) and a link restores it. ``disabled`` greys both out where they do not apply (their
    value and link are kept). Issue 14 item 3.
    """
    grid = log_grid(min_value, max_value, steps_per_decade)
    default = float(value) if min_value <= value <= max_value else _nearest(grid, value)
    options = set(grid) | {default}
    held = _held_value(key, min_value, max_value)
    if held is not None:
        options.add(held)
        if key not in st.session_state and _link_value(key) != format_number(held):
            _set_link_value(key, format_number(held))
    target = container if container is not None else st
    c_slider, c_box = _slider_columns(target)
    out = float(c_slider.select_slider(label, options=sorted(options), value=default, key=key,
                                       format_func=format_number, help=_with_box_help(help, min_value, max_value),
                                       disabled=disabled, bind="query-params"))
    _exact_box(c_box, key=key, value=out, min_value=min_value, max_value=max_value, disabled=disabled)
    return out


def seed_input(*, key: str, value: int = 0, label: str = "Seed", help: str | None = None, container=None,
               disabled: bool = False) -> int:
    """A seed box (0 to 2**31 − 1), URL-bound: the same seed reproduces every random result on the page."""
    target = container if container is not None else st
    return int(target.number_input(label, min_value=0, max_value=2**31 - 1, value=int(value), step=1, key=key,
                                   help=help or "Same seed, same random draws: share the link to reproduce.",
                                   disabled=disabled, bind="query-params"))


def delta_from_exponent(x: float) -> float:
    """δ for a slider position: ``10**x`` exactly for whole decades, else 6 significant figures.

    >>> delta_from_exponent(-6) == 1e-6, delta_from_exponent(math.log10(5e-7))
    (True, 5e-07)
    """
    if float(x).is_integer():
        return 10.0 ** int(x)
    return float(f"{10.0 ** float(x):.{EXACT_DIGITS}g}")


def delta_exponent(*, key: str, value: int = -6, min_exp: int = -300, max_exp: int = -1,
                   label: str = "δ = 10^x, x =", help: str | None = None, container=None,
                   disabled: bool = False) -> float:
    """δ chosen by its exponent (URL-bound slider over x, δ = 10^x) plus a box under it to type any δ (e.g. 5e-7).

    The slider steps through whole decades; a typed δ moves it to x = log10(δ), which the URL parameter ``key``
    stores with full precision, so a link restores the typed δ exactly (6 significant figures). A link may also
    give δ itself (``?key=5e-7``). Returns δ. Issue 14 item 3.
    """
    lo, hi = 10.0 ** min_exp, 10.0 ** max_exp
    if key not in st.session_state:
        raw = _link_value(key)
        if raw is not None:
            try:
                x = float(raw)
            except ValueError:
                x = math.nan
            if math.isfinite(x) and x > 0:  # the link gives δ itself: store its exponent
                d = exact_value(x, lo, hi)
                if d is not None:
                    _set_link_value(key, repr(math.log10(d)))
    target = container if container is not None else st
    c_slider, c_box = _slider_columns(target)
    e = c_slider.slider(label, min_value=float(min_exp), max_value=float(max_exp), value=float(value), step=1.0,
                        key=key, format="%g",
                        help=_with_box_help(help or "δ is the small probability that the ε guarantee fails; 10⁻⁶ "
                                            "or smaller is usual.", lo, hi),
                        disabled=disabled, bind="query-params")
    delta = delta_from_exponent(e)
    _exact_box(c_box, key=key, value=delta, min_value=lo, max_value=hi, disabled=disabled,
               from_value=lambda d: math.log10(d))
    return delta


def token_for(raw: str, options: Mapping[str, str]) -> str | None:
    """The option token a link value names: the token itself or its display label (case and outer spaces
    ignored), or None if it names neither.

    >>> token_for("budget_first", {"budget_first": "Budget first", "k_first": "k first"})
    'budget_first'
    >>> token_for(" budget FIRST ", {"budget_first": "Budget first"}), token_for("x", {"a": "A"})
    ('budget_first', None)
    """
    if raw in options:
        return raw
    folded = raw.strip().casefold()
    for token, label in options.items():
        if folded in (str(token).casefold(), str(label).strip().casefold()):
            return token
    return None


_CHOICE_SEEN = "_choice_link_seen"  # the link value each choice() last read, so a new link is read once


def _new_link_values(key: str) -> list[str] | None:
    """Every value the link gives for ``key`` if this session has not read them yet, else None.

    A link is new on the first run and whenever the URL changes under the page (a page switch, restored
    settings); the values are remembered as read, and :func:`_write_token` remembers what the control wrote,
    so a rerun from the browser's URL is not taken for a new link. A control whose value was dropped (restored
    settings that hold the same value as the URL, a control not drawn in the last run) reads the link again.
    """
    from ui.links import _store

    with _store() as qp:
        values = qp._initial_query_params.get(key)
    if not values:
        return None
    seen = st.session_state.setdefault(_CHOICE_SEEN, {})
    mark = ",".join(values)
    if seen.get(key) == mark and key in st.session_state:
        return None
    seen[key] = mark
    return list(values)


def choice(label: str, options: Mapping[str, str], *, key: str, default: str | None = None,
           widget: Literal["selectbox", "radio", "segmented"] = "selectbox", container=None,
           help: str | None = None, disabled: bool = False, horizontal: bool = False) -> str:
    """A fixed-option control whose link parameter is a short stable token; returns the chosen token.

    ``options`` maps token → display label (``{"budget_first": "Budget first"}``). The URL parameter ``key``
    holds the token (nothing at the default); a link may give the token or the current display label, anything
    else is named in the page's link notice. Streamlit's own binding would write the display label, so the link
    is kept here by hand. In AppTest the options are the tokens: ``at.selectbox(key=...).set_value(token)``.
    Issue 14 item 4.
    """
    from ui.links import register_manual_param, report_ignored

    tokens = list(options)
    if not tokens:
        raise ValueError("choice() needs at least one option")
    default = default if default in options else tokens[0]
    register_manual_param(key)
    values = _new_link_values(key)
    if values is not None:
        token = token_for(values[-1], options)
        if token is None:
            report_ignored(key, "not one of the options")
        st.session_state[key] = token if token is not None else st.session_state.get(key, default)
    if st.session_state.get(key) not in options:  # not set yet, or options changed under a kept value
        st.session_state[key] = default
    target = container if container is not None else st
    fmt = options.__getitem__
    if widget == "selectbox":
        value = target.selectbox(label, tokens, key=key, format_func=fmt, help=help, disabled=disabled)
    elif widget == "radio":
        value = target.radio(label, tokens, key=key, format_func=fmt, help=help, disabled=disabled,
                             horizontal=horizontal)
    elif widget == "segmented":
        value = target.segmented_control(label, tokens, key=key, format_func=fmt, help=help, disabled=disabled,
                                         selection_mode="single", required=True)
    else:
        raise ValueError(f"unknown widget kind {widget!r}")
    value = value if value in options else default
    _write_token(key, None if value == default else value)
    return value


def tokens_from_link(values: list[str], options: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """The option tokens a multi-choice link names, in link order without repeats, and the items it does not know.

    Each link value is either one item (a token or a display label, as :func:`token_for` reads it; labels may
    contain commas) or a comma-separated list of items (what :func:`multi_choice` writes). Older links repeat
    the parameter once per item (Streamlit's own binding, which wrote display labels); both forms are read.
    Empty items are skipped, so an empty value is an empty selection.

    >>> opts = {"srswor": "SRS without replacement", "poisson": "Poisson sampling"}
    >>> tokens_from_link(["poisson,SRSWOR,poisson"], opts), tokens_from_link(["Poisson sampling", "x"], opts)
    ((['poisson', 'srswor'], []), (['poisson'], ['x']))
    """
    picked: list[str] = []
    unknown: list[str] = []
    for value in values:
        whole = token_for(value, options)
        items = [value] if whole is not None else value.split(",")
        for item in items:
            if not item.strip():
                continue
            token = whole if whole is not None else token_for(item, options)
            if token is None:
                if item.strip() not in unknown:
                    unknown.append(item.strip())
            elif token not in picked:
                picked.append(token)
    return picked, unknown


def unknown_items_reason(unknown: list[str], *, kept: bool) -> str:
    """The link notice's reason for a multi-choice parameter with items that are not options (quoted, escaped:
    they come from the link)."""
    from ui.text import md_quote

    names = ", ".join(md_quote(x, max_len=40) for x in unknown[:5])
    more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
    what = "is not an option" if len(unknown) == 1 else "are not options"
    rest = "the other items were used" if kept else "the default is used"
    return f"{names}{more} {what}; {rest}"


def multi_choice(label: str, options: Mapping[str, str], *, key: str, default: list[str] | None = None,
                 container=None, help: str | None = None, disabled: bool = False,
                 placeholder: str | None = None) -> list[str]:
    """A multiselect of fixed options whose link parameter is short stable tokens; returns the chosen tokens.

    ``options`` maps token → display label as for :func:`choice` (tokens may not contain commas);
    ``default`` is a list of tokens (None: every option). The URL parameter ``key`` holds the chosen tokens
    comma-separated in the order chosen (``?sd_methods=neyman,proportional``), an empty value for an empty
    choice, and nothing at the default. A link may give tokens or display labels, comma-separated or as
    repeated parameters (older links); items that are neither are named in the page's link notice and the
    known ones are kept (the default if none is known). In AppTest the options are the tokens:
    ``at.multiselect(key=...).set_value([token, ...])``. Issue 14 item 4.
    """
    from ui.links import register_manual_param, report_ignored

    tokens = list(options)
    if not tokens:
        raise ValueError("multi_choice() needs at least one option")
    if any("," in t for t in tokens):
        raise ValueError("multi_choice() tokens are written comma-separated: a token may not contain a comma")
    default = list(dict.fromkeys(t for t in (tokens if default is None else default) if t in options))
    register_manual_param(key)
    values = _new_link_values(key)
    if values is not None:
        picked, unknown = tokens_from_link(values, options)
        if unknown:
            report_ignored(key, unknown_items_reason(unknown, kept=bool(picked)))
        st.session_state[key] = picked if picked or not unknown else list(default)
    held = st.session_state.get(key)
    if not isinstance(held, list):  # not set yet
        st.session_state[key] = list(default)
    elif any(t not in options for t in held):  # options changed under a kept value
        st.session_state[key] = [t for t in held if t in options]
    target = container if container is not None else st
    value = target.multiselect(label, tokens, key=key, format_func=options.__getitem__, help=help,
                               disabled=disabled, placeholder=placeholder)
    value = list(dict.fromkeys(t for t in value if t in options))
    _write_token(key, None if value == default else ",".join(value))
    return value


def _write_token(key: str, token: str | None) -> None:
    """Put ``token`` in the URL under ``key`` (remove the parameter for None); no message if unchanged.

    Each rerun starts from the browser's URL, which holds what this function wrote: remembered as read, so
    :func:`choice` and :func:`multi_choice` do not take it for a new link. A parameter the link repeats is
    replaced by the one value.
    """
    st.session_state.setdefault(_CHOICE_SEEN, {})[key] = token
    qp = st.query_params
    if token is None:
        if key in qp:
            del qp[key]
    elif qp.get_all(key) != [token]:
        qp[key] = token
