"""What a user takes away from a page (issue 15): a one-page report, restorable settings and runnable code.

``artefacts(summary, key=...)`` draws three things at the end of a tab that shows results:

- **Report (HTML)**: one self-contained file (no scripts, no network) holding the question, the parameters,
  the headline numbers with their confidence, the verdicts, the figures as static SVG (kaleido + Debian
  Chromium), a plain privacy statement for the chosen ε and δ, the sources, the product version, a timestamp
  and the link that reopens the view. Its print stylesheet keeps it within two A4 pages.
- **Settings (JSON)**: ``{"page": ..., "settings": {URL parameters}, "version": ...}``; upload it in the sidebar
  of any page ("Restore saved settings", drawn by ``ui.common.page_setup``) to reopen the view.
- **Copy as code**: the tab's script (``engine/script_<page>.py``) in ``st.code`` (with its copy button) and as a
  ``.py`` download.

Every file is built only when its button is clicked. The pure parts (:func:`report_html`,
:func:`settings_json`, :func:`parse_settings`, :func:`privacy_statement`) are tested in ``tests/ui/test_dossier.py``.
"""

from __future__ import annotations

import datetime as _dt
import functools
import html
import json
import math
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from dpdash.common.data import json_depth
from dpdash.epsilon.risk import advantage_bound, posterior_bound

#: Shown when git is not available (an installed copy): bump with each release.
VERSION = "2026.11-session5"
#: Largest settings file accepted (bytes), checked before parsing; a real one is well under 10 kB.
MAX_SETTINGS_BYTES = 64_000
#: Deepest JSON nesting accepted in a settings file (``{"settings": {"k": ["v"]}}`` is 3).
MAX_SETTINGS_DEPTH = 4
RESTORE_KEY = "restore_settings"
_APPLIED = "_restore_applied"
_ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Headline:
    """One headline number as the page shows it: ``value`` already formatted, confidence in value or note."""

    label: str
    value: str
    note: str = ""


@dataclass
class ReportTable:
    """A table of the report, already as text: a caption, column names and rows of cells (issue 34 item 5: a
    25-statistic plan printed as 25 bold sentences ran to 3 A4 pages; as a compact table it fits in 2)."""

    caption: str
    columns: list[str]
    rows: list[list[str]]
    #: columns whose cells are numbers (right-aligned, never wrapped)
    numeric: tuple[str, ...] = ()


@dataclass
class PageSummary:
    """Everything the report, the settings file and the code export need from one tab (see brief_api item 5)."""

    page: str
    title: str
    question: str
    params: dict[str, str]
    headlines: list[Headline]
    verdicts: list[str]
    figures: list[tuple[str, Any]] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    epsilon: float | None = None
    delta: float | None = None
    seed: int | None = None
    script: str | None = None
    tables: list[ReportTable] = field(default_factory=list)


@functools.lru_cache(maxsize=1)
def product_version() -> str:
    """``git describe`` of the running code (tag or commit, "-dirty" if edited), else :data:`VERSION`."""
    try:
        out = subprocess.run(["git", "describe", "--tags", "--always", "--dirty"], cwd=_ROOT, capture_output=True,
                             text=True, timeout=5, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return VERSION
    return f"{VERSION} ({out})" if out else VERSION


# --------------------------------------------------------------------------- pure parts
def _fmt(x: float) -> str:
    return f"{x:.3g}"


def privacy_statement(epsilon: float | None, delta: float | None = None) -> list[str]:
    """Plain sentences on what (ε, δ) bounds for one person, with the posterior example.

    The numbers come from ``dpdash.epsilon.risk``: the posterior bound expit(logit p + ε) (Rogers 2017 Def. 2.1.1 via
    Bayes' rule; ``posterior_bound``) at a 50 % prior, which is e^ε/(1 + e^ε), and the membership-advantage bound
    (``advantage_bound``).
    """
    if epsilon is None or not math.isfinite(epsilon) or epsilon < 0:
        return ["This view does not fix a privacy-loss parameter ε, so it makes no privacy promise by itself."]
    d = float(delta or 0.0)
    up = posterior_bound(0.5, epsilon=epsilon).upper
    adv = advantage_bound(epsilon=epsilon, delta=d)
    out = [
        f"With ε = {_fmt(epsilon)}, what is published changes by at most a factor e^ε = {_fmt(math.exp(epsilon))} "
        "whether or not any one person's data is included.",
        f"Example: someone who was 50% sure that a given person is in the data can be at most {up:.1%} sure after "
        "seeing the release, whatever else they know.",
        f"No test can tell whether a person is in the data much better than chance: its hit rate minus its "
        f"false-alarm rate is at most {adv:.1%}.",
    ]
    if d > 0:
        out.append(f"δ = {d:.3g} is the small probability that these bounds fail; keep it well below 1 divided by "
                   "the number of people in the data.")
    return out


def view_link(base_url: str, page: str, settings: Mapping[str, str | list[str]]) -> str:
    """The address that reopens a view: the app's base URL, the page's path and its settings as the query."""
    base = base_url.rstrip("/")
    path = "" if page in ("", "app", "home") else f"/{page}"
    query = urlencode([(k, v) for k, vs in settings.items() for v in ([vs] if isinstance(vs, str) else vs)])
    return f"{base}{path}" + (f"?{query}" if query else "")


def settings_json(page: str, settings: Mapping[str, str | list[str]], *, version: str | None = None) -> bytes:
    """The restorable settings file of a view (UTF-8 JSON)."""
    body = {"page": page, "settings": {str(k): (v if isinstance(v, str) else list(v)) for k, v in settings.items()},
            "version": version or product_version()}
    return json.dumps(body, indent=2, ensure_ascii=False).encode("utf-8")


class SettingsError(ValueError):
    """A settings file that cannot be read (the message is for the user, plain words)."""


def parse_settings(data: bytes) -> tuple[str, dict[str, list[str]]]:
    """Read a settings file: (page, {parameter: values}); values that no setting can hold are left out (see
    :func:`read_settings`, which also says why)."""
    page, out, _ = read_settings(data)
    return page, out


#: Why a settings value was left out, in the words the restore notice shows.
NOT_A_VALUE = "the file gives it a group of named values (a JSON object); expected a number, a word or a list of them"


def read_settings(data: bytes) -> tuple[str, dict[str, list[str]], dict[str, str]]:
    """Read a settings file: (page, {parameter: values}, {parameter: why it was left out}). Bounded before parsing
    (size, then JSON depth).

    Raises :class:`SettingsError` for a file that is not one of ours; individual parameters are checked later,
    by the same rules as a link (``ui.links.sanitise_params``). A byte-order mark (Notepad's "UTF-8 with BOM") is
    read past; a value that is a JSON object is left out with a plain reason (issue 31: it was called "control
    characters").
    """
    if len(data) > MAX_SETTINGS_BYTES:
        raise SettingsError(f"the file is larger than {MAX_SETTINGS_BYTES // 1000} kB; a settings file is much "
                            "smaller")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SettingsError("the file is not UTF-8 text") from None
    if json_depth(text, limit=MAX_SETTINGS_DEPTH) > MAX_SETTINGS_DEPTH:
        raise SettingsError("the file is nested too deeply to be a settings file")
    try:
        body = json.loads(text)
    except ValueError:
        raise SettingsError("the file is not valid JSON") from None
    if not isinstance(body, dict) or not isinstance(body.get("settings"), dict):
        raise SettingsError("the file has no \"settings\" section; use a file saved with Settings (JSON)")
    page = body.get("page")
    if not isinstance(page, str) or not re.fullmatch(r"[A-Za-z0-9_]{1,64}", page):
        raise SettingsError("the file does not name a page of this tool")
    out: dict[str, list[str]] = {}
    problems: dict[str, str] = {}
    for k, v in body["settings"].items():
        vals = [v] if isinstance(v, (str, int, float, bool)) else v
        if not isinstance(vals, list) or not all(isinstance(x, (str, int, float, bool)) for x in vals):
            problems[str(k)] = NOT_A_VALUE if isinstance(v, dict) or (isinstance(v, list) and any(
                isinstance(x, dict) for x in v)) else "the file gives it no value (null) or a nested list; expected " \
                "a number, a word or a list of them"
            continue
        out[str(k)] = [str(x).lower() if isinstance(x, bool) else str(x) for x in vals]
    return page, out, problems


_REPORT_CSS = """
@page { size: A4; margin: 12mm; }
* { box-sizing: border-box; }
body { font-family: "Source Sans Pro", "DejaVu Sans", Arial, sans-serif; font-size: 10.5pt; line-height: 1.35;
       color: #1a1a1a; max-width: 190mm; margin: 0 auto; padding: 6mm; }
h1 { font-size: 17pt; margin: 0 0 2pt; } h2 { font-size: 12pt; margin: 9pt 0 3pt; color: #0072B2; }
.question { font-size: 12pt; margin: 2pt 0 6pt; }
table { border-collapse: collapse; width: 100%; } td, th { padding: 2pt 5pt; border-bottom: 1px solid #ddd;
  text-align: left; vertical-align: top; }
.headlines td.v { font-weight: 600; white-space: nowrap; }
.verdict { font-weight: 600; margin: 2pt 0; }
.figs { display: flex; flex-wrap: wrap; gap: 4mm; }
figure { margin: 0; flex: 1 1 85mm; max-width: 100%; break-inside: avoid; }
figure svg, figure img { width: 100%; height: auto; max-height: 62mm; }
figcaption { font-size: 8.5pt; color: #444; }
.meta, .sources { font-size: 8.5pt; color: #444; } .meta a { word-break: break-all; }
ul { margin: 2pt 0; padding-left: 14pt; }
@media print { body { padding: 0; } h2 { break-after: avoid; } }
"""


#: Added only to reports that have a compact table or a figure of its own size (the others stay byte for byte)
_COMPACT_CSS = """
figure.wide { flex: 1 1 100%; } figure.wide svg { max-height: 92mm; }
table.compact { font-size: 8pt; line-height: 1.2; margin-top: 3pt; }
table.compact td, table.compact th { padding: 0.5pt 4pt; } table.compact th { border-bottom: 1px solid #999; }
table.compact td.n, table.compact th.n { text-align: right; white-space: nowrap; }
table.compact caption { text-align: left; font-size: 8.5pt; color: #444; caption-side: top; }
table.compact tr { break-inside: avoid; }
"""


def _strip_svg_prolog(svg: str) -> str:
    """An SVG document made fit for inline use: no XML declaration or doctype."""
    svg = re.sub(r"^\s*<\?xml[^>]*>\s*", "", svg)
    return re.sub(r"^\s*<!DOCTYPE[^>]*>\s*", "", svg)


def report_html(summary: PageSummary, *, link: str, when: _dt.datetime | None = None,
                svgs: list[str] | None = None, version: str | None = None) -> bytes:
    """The self-contained report (UTF-8 HTML): no scripts, no external resources; every text escaped.

    ``svgs``: the figures as SVG text, in ``summary.figures`` order (rendered by the caller, see
    :func:`build_report`); the SVG comes from kaleido (Plotly's own renderer), not from user text.
    """
    e = html.escape
    when = when or _dt.datetime.now(_dt.timezone.utc)
    rows = "".join(f"<tr><th>{e(k)}</th><td>{e(str(v))}</td></tr>" for k, v in summary.params.items())
    heads = "".join(f"<tr><td>{e(h.label)}</td><td class=\"v\">{e(h.value)}</td><td>{e(h.note)}</td></tr>"
                    for h in summary.headlines)
    verdicts = "".join(f"<p class=\"verdict\">{e(v)}</p>" for v in summary.verdicts)
    figs = ""
    for i, item in enumerate(summary.figures):
        caption = item[0]
        svg = _strip_svg_prolog(svgs[i]) if svgs and i < len(svgs) else ""
        label = e(caption)
        if svg:
            svg = svg.replace("<svg ", f"<svg role=\"img\" aria-label=\"{label}\" ", 1)
        wide = " class=\"wide\"" if len(item) > 2 else ""   # drawn at its own size: a row of its own
        figs += f"<figure{wide}>{svg}<figcaption>{label}</figcaption></figure>"
    tables = ""
    for t in summary.tables:
        cls = {c: ' class="n"' if c in t.numeric else "" for c in t.columns}
        head = "".join(f"<th{cls[c]}>{e(c)}</th>" for c in t.columns)
        body = "".join("<tr>" + "".join(f"<td{cls[c]}>{e(str(v))}</td>" for c, v in zip(t.columns, r)) + "</tr>"
                       for r in t.rows)
        tables += (f"<table class=\"compact\"><caption>{e(t.caption)}</caption><thead><tr>{head}</tr></thead>"
                   f"<tbody>{body}</tbody></table>")
    extra_css = _COMPACT_CSS if tables or "<figure class=" in figs else ""
    privacy = "".join(f"<li>{e(s)}</li>" for s in privacy_statement(summary.epsilon, summary.delta))
    sources = "".join(f"<li>{e(s)}</li>" for s in summary.sources) or "<li>—</li>"
    seed = f"<li>Random seed: {e(str(summary.seed))} (the same seed reproduces every random result)</li>" \
        if summary.seed is not None else ""
    doc = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>{e(summary.title)} — report</title>
<style>{_REPORT_CSS}{extra_css}</style></head>
<body>
<header><h1>{e(summary.title)}</h1><p class="question" id="question">{e(summary.question)}</p></header>
<section id="answer"><h2>Answer</h2>{verdicts}
<table class="headlines">{heads}</table>{tables}</section>
<section id="parameters"><h2>Parameters</h2><table>{rows}</table></section>
<section id="figures"><h2>Figures</h2><div class="figs">{figs}</div></section>
<section id="privacy"><h2>What this means for privacy</h2><ul>{privacy}</ul></section>
<section id="sources" class="sources"><h2>Sources</h2><ul>{sources}</ul></section>
<footer class="meta" id="meta"><h2>About this report</h2><ul>
<li>Product version: {e(version or product_version())}</li>
<li>Made: {e(when.strftime("%Y-%m-%d %H:%M UTC"))}</li>{seed}
<li>Reopen this view: <a href="{e(link, quote=True)}">{e(link)}</a></li></ul></footer>
</body></html>
"""
    return doc.encode("utf-8")


def build_report(summary: PageSummary, *, link: str) -> bytes:
    """Render the figures to SVG (one Chromium session) and assemble the report."""
    from ui.exports import figure_images

    # drawn at about the size they print (two per row on A4), so their text stays readable on paper; a figure given
    # as (caption, figure, (width, height)) is drawn at that size and printed on a row of its own
    plain = [item[1] for item in summary.figures if len(item) < 3]
    out = iter(b.decode("utf-8") for b in figure_images(plain, "svg", width=600, height=380)) if plain else iter(())
    svgs = []
    for item in summary.figures:
        if len(item) < 3:
            svgs.append(next(out))
        else:
            w, h = item[2]
            svgs.append(figure_images([item[1]], "svg", width=int(w), height=int(h))[0].decode("utf-8"))
    return report_html(summary, link=link, svgs=svgs)


# --------------------------------------------------------------------------- Streamlit side
def current_settings() -> dict[str, str | list[str]]:
    """The view's settings as the URL holds them now (Streamlit's own embed parameters left out)."""
    qp = st.query_params
    out: dict[str, str | list[str]] = {}
    for k in qp:
        if k in ("embed", "embed_options"):
            continue
        vals = qp.get_all(k)
        out[k] = vals[0] if len(vals) == 1 else vals
    return out


def _base_url() -> str:
    """Scheme, host and app root of the address the user opened (``st.context.url``), else a local default."""
    try:
        url = st.context.url or ""
    except Exception:  # noqa: BLE001 - no browser context (AppTest)
        url = ""
    if not url:
        return "http://localhost:8501"
    url = url.split("?", 1)[0].split("#", 1)[0]
    m = re.match(r"^(https?://[^/]+)(/.*)?$", url)
    if not m:
        return "http://localhost:8501"
    path = m.group(2) or "/"
    # the app root: strip the page's own path segment (pages are served at /<page name>)
    root = path.rsplit("/", 1)[0] if path.count("/") >= 1 and not path.endswith("/") else path.rstrip("/")
    return m.group(1) + root


def artefacts(summary: PageSummary, *, key: str) -> None:
    """Report (HTML), Settings (JSON) and Copy as code for the open tab; every file is built only when clicked.

    Call once at the end of each tab body that shows results; ``key`` must be unique on the page.
    """
    settings = current_settings()
    link = view_link(_base_url(), summary.page, settings)
    st.markdown("**Take this away**")
    with st.container(horizontal=True, gap="small"):
        st.download_button("Report (HTML)", lambda: build_report(summary, link=link),
                           file_name=f"{summary.page}_report.html", mime="text/html", key=f"{key}_report",
                           on_click="ignore", icon=":material/description:",
                           help="One page to share or print: question, answer, figures, privacy statement, sources "
                                "and the link back to this view. Built when you click (a few seconds).")
        st.download_button("Settings (JSON)", lambda: settings_json(summary.page, settings),
                           file_name=f"{summary.page}_settings.json", mime="application/json",
                           key=f"{key}_settings", on_click="ignore", icon=":material/tune:",
                           help="Upload it later under 'Restore saved settings' in the sidebar to reopen this view.")
        if summary.script:
            script = summary.script
            st.download_button("Script (.py)", lambda: script.encode("utf-8"), file_name=f"{summary.page}_{key}.py",
                               mime="text/x-python", key=f"{key}_script", on_click="ignore", icon=":material/code:",
                               help="A Python script that recomputes these numbers with this project's engine and, "
                                    "where one exists, an independent library.")
    if summary.script:
        with st.expander("Copy as code", icon=":material/code:"):
            st.code(summary.script, language="python")


def _page_stem() -> str:
    """The running page's file stem ("epsilon_calculator"; "app" for the home page)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    try:
        # the pinned Streamlit (1.67) keeps the running page's path in its pages table under the page's hash
        page = ctx.pages_manager.get_pages().get(ctx.page_script_hash, {}) if ctx is not None else {}
        path = page.get("script_path") if page else None
    except Exception:  # noqa: BLE001 - internal API moved: fall back to the main script
        path = None
    if not path and ctx is not None:
        path = getattr(ctx, "main_script_path", None)
    return Path(str(path)).stem if path else "app"


def restore_uploader() -> None:
    """Sidebar uploader "Restore saved settings": reopen a view from its settings file (drawn by page_setup).

    The file is read in memory (never written), bounded before parsing; a file for another page says so and
    links there; otherwise the link is replaced by the file's settings and the page reruns from it, so every
    value passes the same checks as a link and each unknown or invalid one is named in the link notice.
    """
    from ui.links import Ignored, notice_text, sanitise_params
    from ui.text import md_escape

    with st.expander("Restore saved settings", icon=":material/upload_file:"):
        # no type=[...]: Streamlit raises on a file name outside the list (a client can send any name); the
        # content is checked here instead, whatever the name
        up = st.file_uploader("Settings file (JSON)", key=RESTORE_KEY, max_upload_size=1,
                              help="A Settings (JSON) file saved from any page of this tool reopens that view.")
    if up is None:
        st.session_state.pop(_APPLIED, None)
        return
    data = up.getvalue()
    stamp = (up.file_id, len(data))
    if st.session_state.get(_APPLIED) == stamp:
        st.caption("Settings restored from the file. Remove it to upload another.")
        return
    try:
        page, settings, problems = read_settings(data)
    except SettingsError as exc:
        st.error(f"This file cannot be restored: {exc}.")
        return
    here = _page_stem()
    if page != here:
        target = "app.py" if page in ("app", "home") else f"pages/{page}.py"
        if not (_ROOT / target).is_file():
            st.error(f"This file is for a page this tool does not have ({md_escape(page, max_len=40)}).")
            return
        st.warning("These settings are for another page.")
        if st.button(f"Open {page.replace('_', ' ')} with these settings", key=f"{RESTORE_KEY}_go"):
            kept, _ = sanitise_params(settings)
            st.session_state[_APPLIED] = stamp
            st.switch_page(target, query_params={k: v if len(v) > 1 else v[0] for k, v in kept.items()})
        return
    kept, dropped = sanitise_params(settings)
    dropped += [Ignored(name, why) for name, why in problems.items()]
    st.session_state[_APPLIED] = stamp
    if dropped:
        st.session_state["_restore_dropped"] = notice_text(dropped)
    _apply(kept)


def _apply(settings: dict[str, list[str]]) -> None:
    """Make ``settings`` the page's link and rerun from it, as if the user had opened that link."""
    from ui.links import _SIGNATURE, _store

    with _store() as qp:
        old = [k for k in qp._query_params if k.lower() not in ("embed", "embed_options")]
        for k in old:
            qp._query_params.pop(k, None)
        qp._initial_query_params = {k: list(v) for k, v in settings.items()}
        for k, v in settings.items():
            qp.set_with_no_forward_msg(k, v if len(v) > 1 else v[0])
        qp._send_query_param_msg()
    for k in {*old, *settings}:
        for name in (k, f"{k}__exact"):
            if name in st.session_state:
                del st.session_state[name]
    st.session_state.pop(_SIGNATURE, None)  # the link notice checks the restored settings like a new link
    st.rerun()


def restore_notice() -> None:
    """After a restore: name the settings the file held that no link may carry (shown once)."""
    text = st.session_state.pop("_restore_dropped", None)
    if text:
        st.toast(text, icon=":material/link_off:", duration="infinite")
