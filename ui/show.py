"""Render a tab view: the one set of page helpers (numbers, verdict box, cards, figure wrapper, session cache, errors).

Pages build a :class:`dpdash.common.view.TabView` with an engine function and hand it here; nothing in this module
computes a number or writes a sentence. Replaces the per-page ``fmt``, ``verdict``, ``figure`` and ``say_problem``
copies (issue 22 item 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import streamlit as st

from dpdash.common.view import Headline, Sentence, TabView
from ui.charts import show_figure
from ui.text import md_escape

#: Box and icon for each tone (verdict boxes in every page look the same).
_BOX = {"good": ("success", ":material/task_alt:"), "neutral": ("info", ":material/info:"),
        "warning": ("warning", ":material/warning:")}


def fmt(v: Any) -> str:
    """4 significant figures for a raw number in a table or tooltip; ∞, n/a and whole numbers spelled out.

    Views format their headline numbers themselves (``dpdash.common.formatting``); this is for the few raw values a page
    shows beside a control.
    """
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float) and math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    return f"{v:.4g}"


def verdict_box(sentences: Iterable[Sentence], container: Any = None) -> None:
    """The tab's answer first: consecutive sentences of one tone share a box, escaped for Markdown.

    Draws straight into ``container`` (or the current block): never through ``slot.container()`` of an element
    made outside the running fragment, which Streamlit refuses on a fragment rerun (issue 22, the Tab 1 crash).
    """
    target = container if container is not None else st
    groups: list[tuple[str, list[str]]] = []
    for s in sentences:
        if groups and groups[-1][0] == s.tone:
            groups[-1][1].append(s.text)
        else:
            groups.append((s.tone, [s.text]))
    for tone, texts in groups:
        box, icon = _BOX[tone]
        getattr(target, box)(md_escape(" ".join(texts), max_len=2400), icon=icon)


def cards(headlines: Sequence[Headline], container: Any = None, *, columns: int | None = None) -> None:
    """The headline numbers as metric cards, at most ``columns`` a row (default: all in one row, up to 4)."""
    if not headlines:
        return
    target = container if container is not None else st
    per_row = columns or min(len(headlines), 4)
    for start in range(0, len(headlines), per_row):
        cols = target.columns(per_row)
        for col, h in zip(cols, headlines[start:start + per_row]):
            tip = f"Full value: {h.raw!r}." if h.raw is not None else None
            if h.note:
                tip = f"{tip} {h.note}" if tip else h.note
            col.metric(md_escape(h.label, max_len=120), h.value, help=tip)


def figure(fig, *, key: str, filename: str, alt: str, caption: str | None = None) -> None:
    """A chart with alt text, its plain reading and its downloads (``ui.charts.show_figure``)."""
    show_figure(fig, key=key, filename=filename, caption=caption, alt=alt)


def say_problem(err: Exception | str, hint: str = "", *, container: Any = None, level: str = "error") -> None:
    """An engine refusal as a message (its text may quote a link's or a cell's text, so it is escaped)."""
    target = container if container is not None else st
    text = md_escape(str(err) or type(err).__name__, max_len=400)
    getattr(target, level)(text + (f" {md_escape(hint, max_len=400)}" if hint else ""))


def session_memo(name: str, key: Any, compute: Callable[[], Any], *, max_entries: int = 8) -> Any:
    """``compute()`` once per ``key`` in this session, kept in session state (bounded, oldest dropped first).

    For runs that drive a progress bar: a ``st.cache_data`` function must not drive a bar made outside it, or
    replaying the cache fails, so such results live in session state.
    """
    store = st.session_state.setdefault(f"_memo_{name}", {})
    if key in store:
        return store[key]
    value = compute()
    while len(store) >= max_entries:
        store.pop(next(iter(store)))
    store[key] = value
    return value


def report_summary(view: TabView, *, page: str, title: str, sources: Sequence[str] = (), figures: Sequence = (),
                   script: str | None = None):
    """The view as the report/settings/script bundle ``ui.dossier.artefacts`` takes."""
    from ui.dossier import Headline as DHeadline, PageSummary

    verdicts = list(view.verdict_text) + [line for sec in view.sections for line in sec.lines]
    return PageSummary(page=page, title=title, question=view.question, params=dict(view.params),
                       headlines=[DHeadline(h.label, h.value, h.note) for h in view.headlines], verdicts=verdicts,
                       figures=list(figures), sources=list(sources), epsilon=view.epsilon, delta=view.delta,
                       seed=view.seed, script=script)


def take_away(view: TabView, *, key: str, page: str, title: str, sources: Sequence[str] = (),
              figures: Sequence = (), script: str | None = None) -> None:
    """Report, Settings and Copy as code for the open tab, all from ``view``."""
    from ui.dossier import artefacts

    artefacts(report_summary(view, page=page, title=title, sources=sources, figures=figures, script=script), key=key)


def _cell(v: Any, spec: str | None) -> str:
    """One table cell as text: a column's printf format where it has one ("%.3g", "%d"), else :func:`fmt`."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if spec and spec.startswith("%") and isinstance(v, (int, float)) and not isinstance(v, bool):
        try:
            return spec % v
        except (TypeError, ValueError):
            return fmt(v)
    return fmt(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)


def presenter_frame(df, column_config: dict | None = None, *, hide_index: bool = True):
    """``df`` as text for an HTML table: column labels and printf formats taken from ``column_config``.

    >>> import pandas as pd, streamlit as st
    >>> presenter_frame(pd.DataFrame({"x": [0.123456]}), {"x": st.column_config.NumberColumn("ε", format="%.2f")})
          ε
    0  0.12
    """
    import pandas as pd

    cfg = column_config or {}
    out = {}
    for col in df.columns:
        c = cfg.get(col)
        if c is None and col in cfg:  # a column hidden with None
            continue
        label = c if isinstance(c, str) else (c or {}).get("label") or str(col)
        spec = ((c or {}).get("type_config") or {}).get("format") if isinstance(c, dict) else None
        out[label] = [_cell(v, spec) for v in df[col].tolist()]
    frame = pd.DataFrame(out)
    if not hide_index:
        frame.index = df.index
    return frame


def table(data, *, column_config: dict | None = None, hide_index: bool | None = True, key: str | None = None,
          **kwargs: Any) -> None:
    """A results table: an interactive grid normally; in presenter mode an HTML table whose cells wrap at 18 px,
    so a projected table needs no sideways scroll (issue 25). ``data`` is a frame or a pandas Styler (its formats
    are kept in both modes); downloads keep full precision (``ui.exports``)."""
    from ui.presenter import presenter_mode

    if presenter_mode():
        shown = presenter_frame(data, column_config, hide_index=bool(hide_index)) if column_config else data
        st.table(shown, hide_index=hide_index)
        return
    st.dataframe(data, column_config=column_config, hide_index=hide_index, key=key, **kwargs)


def where_the_data_lives(script: str, *, key: str, filename: str) -> None:
    """The tab's OpenDP script, which performs the release on data too big to upload
    (``dpdash.stratify.script_opendp``).
    """
    with st.expander("Run it where the data lives (OpenDP)", icon=":material/database:"):
        st.caption("Performs this release with OpenDP on a Polars LazyFrame: point DATA at your file (CSV or "
                   "Parquet); it prints OpenDP's noise scale beside this page's for every statistic, then releases. "
                   "README, 'Run it where the data lives', says how to run it on a database or a cluster.")
        st.code(script, language="python")
        st.download_button("OpenDP script (.py)", script.encode("utf-8"), file_name=filename,
                           mime="text/x-python", key=f"{key}_opendp", on_click="ignore", icon=":material/code:")
