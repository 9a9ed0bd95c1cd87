"""Seeded random walks over a page's controls with AppTest (issue 12, product test layer).

A walk opens a page in a fresh session (optionally through a link's query parameters, e.g. a tab), then moves
random controls to random values — ends of their ranges included, where the corner cases live — and after every
move checks the page's health and calls the page's oracle. The oracle recomputes the page's headline numbers from
the *visible control values* with an independent formula or library; it never calls the page's own code path.

Usage (one test file per page in tests/product/)::

    result = walk(PAGE, seed=s, steps=20, start_params={"sd_tab": "Random sample size"}, oracle=my_oracle)

``result.states`` counts the states checked (the suite asserts ≥ 300 per page across its walks).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np
from streamlit.testing.v1 import AppTest

from ui.common import PRESENT_KEY

#: Widget kinds the walk moves. Buttons are pressed only when a page's walk lists their keys in ``buttons``.
KINDS = ("slider", "select_slider", "number_input", "selectbox", "radio", "checkbox", "toggle", "multiselect")

_NUM = re.compile(r"[-+]?(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


class WalkFailure(AssertionError):
    """A state in which the page broke; the message names the seed, the step and the moves that led there."""


@dataclass
class WalkResult:
    states: int = 0
    moves: list[str] = field(default_factory=list)


def metric_number(text: str) -> float | None:
    """The first number in a metric's displayed value ('0.924', '8,845', '1.2e-05', '12 %'), or None."""
    m = _NUM.search(str(text).replace("−", "-"))
    if not m:
        return None
    return float(m.group(0).replace(",", ""))


def metrics(at: AppTest) -> dict[str, str]:
    """Every metric card on screen: label → displayed value. Labels are read as shown: the cards Markdown-escape
    them (ui.text.md_escape: backslashes before specials, a word joiner before autolink triggers)."""
    return {re.sub(r"\\(.)", r"\1", m.label).replace("\u2060", ""): m.value for m in at.metric}


def widget_values(at: AppTest) -> dict[str, object]:
    """Every keyed control's current value, as the page sees it (its key → value)."""
    out = {}
    for kind in KINDS:
        for w in getattr(at, kind):
            if w.key:
                out[w.key] = w.value
    return out


def _log_uniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    if lo > 0:
        return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))
    return float(rng.uniform(lo, hi))


def _numeric_choice(rng: np.random.Generator, lo, hi, step, is_int: bool):
    """A random value in [lo, hi]: one of the ends 30% of the time, otherwise spread over the range."""
    lo = -1e6 if lo is None or not math.isfinite(lo) else lo
    hi = 1e6 if hi is None or not math.isfinite(hi) else hi
    r = rng.random()
    if r < 0.15:
        v = lo
    elif r < 0.30:
        v = hi
    elif r < 0.65:
        v = _log_uniform(rng, lo, hi)
    else:
        v = float(rng.uniform(lo, hi))
    if is_int:
        return int(min(hi, max(lo, round(v))))
    if step:
        v = lo + round((v - lo) / step) * step
    return float(min(hi, max(lo, v)))


def _raw_option(formatted: str, current):
    """AppTest lists a select-slider's options as displayed text; numeric sliders need the number back."""
    sample = current[0] if isinstance(current, (list, tuple)) and current else current
    if isinstance(sample, (int, float)) and not isinstance(sample, bool):
        try:
            v = float(str(formatted).replace(",", ""))
        except ValueError:
            return formatted
        return int(v) if isinstance(sample, int) and v.is_integer() else v
    return formatted


def _labels_are_values(w, labels: list[str]) -> None:
    """Let ``w`` be set by its displayed labels.

    AppTest lists a select widget's options as displayed text and serialises a set value through the page's
    format function again; where that function maps codes to labels (``LABELS.get``) a label would come back as
    None. The frontend sends the label itself, so the walk tells AppTest that labels are already formatted.
    """
    try:
        fmt = w.format_func
    except Exception:  # noqa: BLE001 - no format function stored: identity
        return
    if any(_safe(fmt, x) != x for x in labels):
        from streamlit.runtime.state.common import TESTING_KEY

        w.root.session_state[TESTING_KEY][w.id] = str


def _safe(fmt, x):
    try:
        return str(fmt(x))
    except Exception:  # noqa: BLE001 - a format function that only knows codes
        return None


def random_move(w, kind: str, rng: np.random.Generator) -> str | None:
    """Set ``w`` to a random valid value; returns a description of the move, or None if nothing to move."""
    if kind in ("checkbox", "toggle"):
        new = not bool(w.value)
        w.set_value(new)
        return f"{w.key}={new}"
    if kind in ("selectbox", "radio"):
        opts = list(w.options)
        if len(opts) < 2:
            return None
        i = int(rng.integers(len(opts)))
        _labels_are_values(w, opts)
        w.set_value(opts[i])
        return f"{w.key}=#{i}({opts[i]!r})"
    if kind == "multiselect":
        opts = list(w.options)
        if not opts:
            return None
        # a person cannot pick more than the widget's max_selections (0: no limit); AppTest would raise on it
        most = int(getattr(w.proto, "max_selections", 0) or 0) or len(opts)
        k = int(rng.integers(0, min(most, len(opts)) + 1))
        chosen = [opts[j] for j in sorted(rng.choice(len(opts), size=k, replace=False))]
        _labels_are_values(w, opts)
        w.set_value(chosen)
        return f"{w.key}={chosen!r}"
    if kind == "select_slider":
        opts = [_raw_option(o, w.value) for o in w.options]
        if len(opts) < 2:
            return None
        if isinstance(w.value, (list, tuple)):
            a, b = sorted(rng.choice(len(opts), size=2, replace=True))
            w.set_range(opts[a], opts[b])
            return f"{w.key}=({opts[a]},{opts[b]})"
        r = rng.random()
        i = 0 if r < 0.15 else len(opts) - 1 if r < 0.3 else int(rng.integers(len(opts)))
        w.set_value(opts[i])
        return f"{w.key}={opts[i]}"
    if kind in ("slider", "number_input"):
        value = w.value
        if isinstance(value, (list, tuple)):
            is_int = all(isinstance(x, int) for x in value)
            a = _numeric_choice(rng, w.min, w.max, w.step, is_int)
            b = _numeric_choice(rng, w.min, w.max, w.step, is_int)
            w.set_range(min(a, b), max(a, b))
            return f"{w.key}=({min(a, b)},{max(a, b)})"
        if value is None or not isinstance(value, (int, float)):
            return None
        is_int = isinstance(value, int) and not isinstance(value, bool)
        v = _numeric_choice(rng, w.min, w.max, w.step, is_int)
        w.set_value(v)
        return f"{w.key}={v!r}"
    return None


def check_health(at: AppTest, *, allowed_errors: Iterable[str] = (), where: str = "") -> None:
    """No exception, no error box (except messages matching ``allowed_errors``), every metric value finite."""
    if at.exception:
        raise WalkFailure(f"{where}: exception {[e.value for e in at.exception]}")
    pats = [re.compile(p) for p in allowed_errors]
    bad = [e.value for e in at.error if not any(p.search(e.value) for p in pats)]
    if bad:
        raise WalkFailure(f"{where}: error shown {bad}")
    for label, value in metrics(at).items():
        text = str(value).lower()
        if any(t in text for t in ("nan", "inf", "∞")) and "∞" not in label:
            raise WalkFailure(f"{where}: metric {label!r} shows {value!r}")


def walk(page: str, *, seed: int, steps: int, oracle: Callable[[AppTest], None] | None = None,
         start_params: dict[str, str] | None = None, skip_keys: Iterable[str] = (),
         only_keys: Iterable[str] | None = None, allowed_errors: Iterable[str] = (), timeout: float = 60,
         on_start: Callable[[AppTest], None] | None = None,
         key_prefixes: Iterable[str] | None = None) -> WalkResult:
    """Run one seeded random walk of ``steps`` moves on ``page``; raise :class:`WalkFailure` on a broken state.

    ``skip_keys`` are never moved (e.g. file uploaders, long-run buttons); ``only_keys``, when given, limits the
    walk to those controls; ``key_prefixes``, when given, limits it to keys starting with one of them (e.g. one
    tab's controls). ``on_start`` may prepare the session (an upload, a button) before the first check.
    """
    rng = np.random.default_rng(seed)
    skip = set(skip_keys)
    if oracle is not None:
        # Presenter mode draws results tables as wrapped HTML text (ui.show.table) where the oracles read the grids'
        # numbers; it is walked without an oracle here and checked in the browser (tests/e2e/test_presenter_*).
        skip.add(PRESENT_KEY)
    only = set(only_keys) if only_keys is not None else None
    prefixes = tuple(key_prefixes) if key_prefixes is not None else None
    at = AppTest.from_file(page, default_timeout=timeout)
    for k, v in (start_params or {}).items():
        at.query_params[k] = v
    at.run()
    if on_start is not None:
        on_start(at)
    result = WalkResult()
    history: list[str] = [f"start {start_params or {}}"]

    def _check(where: str) -> None:
        try:
            check_health(at, allowed_errors=allowed_errors, where=where)
            if oracle is not None:
                oracle(at)
        except AssertionError as exc:
            raise WalkFailure(f"seed={seed} {where}\nmoves: {history}\n{exc}") from exc
        result.states += 1

    _check("start")
    for step in range(steps):
        candidates = [(kind, w) for kind in KINDS for w in getattr(at, kind)
                      if w.key and w.key not in skip and (only is None or w.key in only) and not w.disabled
                      and (prefixes is None or w.key.startswith(prefixes))]
        if not candidates:
            break
        kind, w = candidates[int(rng.integers(len(candidates)))]
        move = random_move(w, kind, rng)
        if move is None:
            continue
        history.append(move)
        at.run()
        _check(f"step {step}")
    result.moves = history
    return result


class capture_downloads:
    """Context manager that records every deferred download a page registers (``st.download_button`` with a
    callable), so a test can build the bytes a user would get: ``with capture_downloads() as dl: at.run()``,
    then ``dl.files()`` → {file_name: bytes} for the buttons of the latest run."""

    def __enter__(self):
        from streamlit.runtime.media_file_manager import MediaFileManager

        self._cls = MediaFileManager
        self._orig = MediaFileManager.add_deferred
        self.entries: dict[str, Callable[[], object]] = {}
        entries, orig = self.entries, self._orig

        def add_deferred(mgr, data_callable, mimetype, coordinates, file_name=None, **kw):
            entries[str(file_name)] = data_callable
            return orig(mgr, data_callable, mimetype, coordinates, file_name=file_name, **kw)

        MediaFileManager.add_deferred = add_deferred
        return self

    def __exit__(self, *exc):
        self._cls.add_deferred = self._orig
        return False

    def clear(self) -> None:
        self.entries.clear()

    def files(self, suffix: str = "") -> dict[str, bytes]:
        out = {}
        for name, fn in self.entries.items():
            if name.endswith(suffix):
                data = fn()
                out[name] = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        return out
