"""No request leaves the app's own server, and text from links and cells never becomes a link (issue 26 item 5).

On the same page loads: nothing is cut in normal mode at 1280×800 and 1920×1080 (issue 14 item 5).

A privacy tool should not tell a third party who opens which page, and offline it must still draw: every page,
every tab of it, in Chromium, with every request the browser makes recorded (Playwright ``page.on("request")``).
Streamlit's frontend turns a ":material/…" page icon into a favicon fetched from fonts.gstatic.com; the pages use
the bundled ui/assets/favicon.svg instead (``ui.common.FAVICON``).

remark-gfm, Streamlit's Markdown renderer, makes literal URLs, "www." names and e-mail addresses into
``<a target=_blank>`` links even when escaped; a link parameter's name is shown in the unused-link notice and a
budget-planner row's name in its sentences, so both carry such text here and no ``<a>`` may point at it.
"""

from __future__ import annotations

import json
from urllib.parse import urlencode, urlsplit

import pytest
from playwright.sync_api import expect

from tests.attack.pages import PAGES
from tests.e2e.helpers import open_page, overflow_when_drawn, wait_idle, wait_not_running, wait_settled

pytestmark = pytest.mark.slow
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


def _path(page: str) -> str:
    return "" if page == "app.py" else page.split("/")[-1][:-3]


#: The two screen sizes at which nothing may be cut (issue 14 item 5: a laptop and a projector).
SIZES = [(1280, 800), (1920, 1080)]


@pytest.mark.parametrize("script", PAGES, ids=[_path(p) or "home" for p in PAGES])
def test_no_request_leaves_the_server_and_nothing_is_cut(page, app_url, script, tmp_path_factory):
    """Every tab of the page in normal mode, with every request recorded; on the first tab, at 1280×800 and
    1920×1080, no metric value or label, tab name or heading is cut and every tab lies inside its bar (issue 14
    item 5, formerly tests/e2e/test_presenter_overflow.py's normal-mode cases, which loaded each page once more).
    Presenter mode is checked on every tab at both sizes by tests/e2e/test_presenter_every_tab.py."""
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if urlsplit(r.url).hostname not in LOCAL_HOSTS
            and not r.url.startswith(("data:", "blob:")) else None)
    shots = tmp_path_factory.getbasetemp() / "presenter_shots"
    shots.mkdir(exist_ok=True)
    viewport = page.viewport_size
    page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
    open_page(page, f"{app_url}/{_path(script)}", timeout=120_000)
    cut = {}
    for w, h in SIZES:
        page.set_viewport_size({"width": w, "height": h})
        # no rerun on a resize; as long as the load's own wait: on the shared 2-core CI box the other test worker
        # can starve this server for tens of seconds
        wait_not_running(page, timeout=120_000)
        wait_settled(page)  # charts and fonts settle
        bad = overflow_when_drawn(page)
        shot = shots / f"{_path(script) or 'home'}_normal_{w}x{h}.png"
        page.screenshot(path=str(shot))
        print(shot)
        if bad:
            cut[f"{w}x{h}"] = bad
    assert not cut, f"{_path(script) or 'home'} (normal mode): {cut}"
    page.set_viewport_size(viewport)
    tabs = page.get_by_test_id("stMain").get_by_role("tab")
    for i in range(tabs.count()):  # every tab draws its own charts, tables and icons
        tabs.nth(i).click()
        wait_idle(page, 120_000)
    page.wait_for_timeout(500)  # late requests (favicon, fonts) of the last tab
    assert not outside, sorted(set(outside))[:10]
    favicon = page.evaluate("document.querySelector(\"link[rel='shortcut icon']\")?.href || ''")
    assert favicon.startswith("data:image/svg+xml") or urlsplit(favicon).hostname in LOCAL_HOSTS, favicon[:120]


#: Literal URLs, a "www." name and an e-mail address: each is an autolink literal for GitHub-flavoured Markdown;
#: and Plotly's own pseudo-HTML link, which a figure's legend or labels would draw as an SVG <a>.
AUTOLINK_TEXT = ("http://127.0.0.1:9/p", "www.example.org", "someone@example.org",
                 '<a href="http://127.0.0.1:9/q">plotly</a>')


def _links_to_the_text(page) -> list[str]:
    """Every <a> (HTML, or SVG as in Plotly's figures) whose target or text names the hostile text."""
    return page.evaluate("""(needles) => [...document.querySelectorAll('a')]
        .map(a => (a.getAttribute('href') || a.getAttribute('xlink:href') || '') + ' | ' + a.textContent)
        .filter(s => needles.some(n => s.includes(n)) || s.includes('mailto:'))""",
                         ["127.0.0.1:9", "example.org", "someone"])


def test_link_parameter_names_are_not_links(page, app_url):
    open_page(page, f"{app_url}/epsilon_calculator?" + urlencode({t: "1" for t in AUTOLINK_TEXT}))
    # the notice (a toast, redrawn by each rerun) names every parameter; the word joiners are invisible
    shown = page.wait_for_function("""() => {
        const t = [...document.querySelectorAll('[data-testid=stToast]')].map(e => e.textContent).join(' ');
        return t.includes('were not used') && t.replaceAll('\\u2060', '').includes('127.0.0.1:9/p') && t;
    }""", timeout=60_000).json_value().replace("\u2060", "")
    assert all(t in shown for t in AUTOLINK_TEXT[:3]), shown  # the notice cuts names at 40 characters
    assert not _links_to_the_text(page)


def test_budget_row_names_are_not_links(page, app_url):
    rows = {"cols": ["name", "query", "mechanism", "L", "U", "n", "cells", "target ±", "confidence", "hold ±",
                     "hold share", "weight"],
            "rows": [[t, "count", "laplace", 0, 1, None, 1, 20.0, 0.95, None, None, 1.0] for t in AUTOLINK_TEXT]}
    open_page(page, f"{app_url}/epsilon_calculator?" + urlencode({"eps_tab": "Budget planner",
                                                                    "eps_b_rows": json.dumps(rows)}))
    page.get_by_text("Total ε").first.wait_for(state="visible", timeout=60_000)
    # The budget figure (its legend names the rows) draws after the run; on a busy box Plotly may take seconds
    # after the script ends (a full CI run once found no chart after wait_settled's 15 s), so it is awaited.
    expect(page.get_by_test_id("stPlotlyChart").locator(".main-svg").first,
           "the budget figure is not drawn").to_be_attached(timeout=90_000)
    wait_settled(page)
    body = page.evaluate("document.body.textContent").replace("\u2060", "")  # with SVG text (the figure's)
    assert "127.0.0.1:9/p" in body, "the row names should be shown somewhere in text"
    assert not _links_to_the_text(page)
