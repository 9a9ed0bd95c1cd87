"""The product's pages for the attack tests: their link keys and their upload widgets, found by running them.

Nothing here is a hand-kept list of a page's controls: keys come from the page's source (``key="..."``) and
from the widgets a default run draws; upload widgets are found by opening, in a link, every tab and every
data-source option whose label mentions an upload, a CSV or a partially private view.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("app.py", *(f"pages/{p.name}" for p in sorted((ROOT / "pages").glob("*.py"))))
#: Where a data source or a view leads to an upload widget.
REVEAL = re.compile(r"upload|csv|partially|public information|citizens|assembly|quota|cluster|strat", re.I)
_KEY = re.compile(r"""key\s*=\s*["']([A-Za-z0-9_]+)["']""")
_TABS_KEY = re.compile(r"""(?:\.tabs|lazy_tabs)\([^)]*?key\s*=\s*["']([A-Za-z0-9_]+)["']""", re.S)


def run_page(page: str, params: dict | None = None, timeout: float = 120) -> AppTest:
    at = AppTest.from_file(str(ROOT / page), default_timeout=timeout)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    return at.run()


def _source(page: str) -> str:
    text = (ROOT / page).read_text()
    if "ui.views" in text:
        text += "".join(p.read_text() for p in sorted((ROOT / "ui" / "views").glob("*.py")))
    return text + (ROOT / "ui" / "common.py").read_text() + (ROOT / "ui" / "widgets.py").read_text()


def _widgets(at: AppTest):
    for kind in ("radio", "selectbox", "multiselect", "select_slider", "slider", "number_input", "text_input",
                 "checkbox", "toggle", "text_area", "date_input", "color_picker", "button", "file_uploader"):
        try:
            yield from at.get(kind)
        except Exception:  # an element kind this Streamlit does not have
            continue


@lru_cache(maxsize=None)
def link_keys(page: str) -> tuple[str, ...]:
    """Every key a link to ``page`` may name: widget keys in its source and in a default run."""
    keys = set(_KEY.findall(_source(page)))
    at = run_page(page)
    keys |= {w.key for w in _widgets(at) if getattr(w, "key", None)}
    return tuple(sorted(k for k in keys if not k.startswith("_")))


@lru_cache(maxsize=None)
def upload_widgets(page: str, max_runs: int = 40) -> dict[str, dict[str, str]]:
    """Upload widget key → link parameters that show it, found by a breadth-first walk over tabs and sources."""
    tab_keys = _TABS_KEY.findall(_source(page))
    found: dict[str, dict[str, str]] = {}
    frontier: list[dict[str, str]] = [{}]
    seen: set[tuple] = set()
    runs = 0
    while frontier and runs < max_runs:
        params = frontier.pop(0)
        sig = tuple(sorted(params.items()))
        if sig in seen:
            continue
        seen.add(sig)
        at = run_page(page, params)
        runs += 1
        for u in at.get("file_uploader"):
            found.setdefault(u.key, params)
        if len(params) >= 3:
            continue
        tab_labels = [t.label for t in at.tabs]
        for key in tab_keys:
            if key not in params:
                frontier += [{**params, key: label} for label in tab_labels if REVEAL.search(label)]
        for w in [*at.get("radio"), *at.get("selectbox")]:
            if w.key and w.key not in params:
                frontier += [{**params, w.key: str(o)} for o in w.options if REVEAL.search(str(o))]
    return found


#: Markdown that would fetch or link off the app: an unescaped "](" whose target has a scheme or "//" (an
#: image or link to another site; the pages' own links are relative), or an HTML image/script/link tag.
_INJECTED = re.compile(r"(?<!\\)\]\(\s*<?[^)\s]*(:|//)|(?<!\\)<\s*(img|script|iframe|a\s)", re.I)
_MARKDOWN_KINDS = ("markdown", "caption", "error", "warning", "info", "success", "toast", "title", "header",
                   "subheader", "exception")


def injected_markdown(at: AppTest) -> list[str]:
    """Rendered Markdown texts (messages, captions, widget labels, radio options) that carry a live link or
    image to another site, or an HTML tag."""
    texts: list[str] = []
    for kind in _MARKDOWN_KINDS:
        try:
            texts += [str(e.value) for e in at.get(kind)]
        except Exception:
            continue
    for w in _widgets(at):
        texts.append(str(getattr(w, "label", "") or ""))
        if w.type == "radio":
            texts += [str(o) for o in w.options]
    return [t[:200] for t in texts if _INJECTED.search(t)]
