"""Presenter mode on a projector-sized and a laptop-sized screen (issue 14 item 5): nothing is cut.

Every page, presenter mode off and on, at 1280×800 and 1920×1080: a screenshot goes to a temporary folder (the
path is printed, to look at), and a script in the page lists each element whose content overflows it — metric
values and labels, tab names, headings — and each tab of a tab bar drawn outside the bar. Both lists must be
empty. One server and one browser for all (tests/e2e/conftest.py); one page load per page and mode, the two
screen sizes by resizing the window (Streamlit does not rerun on a resize).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e.helpers import open_page, wait_idle

PAGES = ["", "epsilon_calculator", "coherence_explorer", "sampling_designer", "leximax_cohort_picker",
         "stratified_synthesis_viewer"]
SIZES = [(1280, 800), (1920, 1080)]

#: Elements whose text must never be cut (their own box or their first child's), and tab bars whose every tab
#: must lie inside the bar. Hidden elements (closed tabs, folded expanders) do not count.
OVERFLOW_JS = """
() => {
  const visible = (el) => el.offsetParent !== null && el.getClientRects().length > 0;
  const name = (el) => (el.getAttribute('data-testid') || el.getAttribute('data-baseweb') || el.tagName)
                       + ': ' + (el.innerText || '').trim().slice(0, 60);
  const bad = [];
  const sel = '[data-testid=stMetricValue], [data-testid=stMetricLabel], [data-testid=stTab], '
            + '[data-testid=stHeading] h1, [data-testid=stHeading] h2, [data-testid=stHeading] h3, '
            + '[data-testid=stMarkdownContainer] h4';
  for (const el of document.querySelectorAll(sel)) {
    if (!visible(el)) continue;
    for (const box of [el, el.firstElementChild]) {
      if (box && box.clientWidth > 0 && box.scrollWidth > box.clientWidth + 1) { bad.push('cut ' + name(el)); break; }
    }
  }
  for (const list of document.querySelectorAll('[data-testid=stTabs] [role=tablist]')) {
    if (!visible(list)) continue;
    const r = list.getBoundingClientRect();
    for (const t of list.querySelectorAll('[data-testid=stTab]')) {
      const b = t.getBoundingClientRect();
      if (b.width === 0 || b.left < r.left - 1 || b.right > r.right + 1 || b.right > window.innerWidth)
        bad.push('tab outside its bar ' + name(t));
    }
  }
  return bad;
}
"""

#: Presenter mode's promise, measured: body text and widget labels at least 18 px.
FONT_JS = """
() => {
  const px = (sel) => { const el = [...document.querySelectorAll(sel)].find(e => e.offsetParent !== null);
                        return el ? parseFloat(getComputedStyle(el).fontSize) : null; };
  return {body: px('[data-testid=stMarkdownContainer] p'), label: px('[data-testid=stWidgetLabel] p')};
}
"""


# Presenter mode on is the subject of tests/e2e/test_presenter_every_tab.py, which opens every tab of every page at
# both sizes and fails on any clipped or ellipsised leaf element and on type under 18 px: a superset of this test's
# presenter half, except the tab-bar check, kept here with presenter mode on for the page with the most tabs.
CASES = [(p, False) for p in PAGES] + [("epsilon_calculator", True)]


@pytest.mark.slow
@pytest.mark.parametrize(("path", "present"), CASES,
                         ids=[f"{p or 'home'}-{'presenter' if on else 'normal'}" for p, on in CASES])
def test_nothing_overflows(page, app_url, tmp_path_factory, path, present):
    shots = tmp_path_factory.getbasetemp() / "presenter_shots"
    shots.mkdir(exist_ok=True)
    page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
    open_page(page, f"{app_url}/{path}" + ("?present=true" if present else ""), timeout=120_000)
    page.wait_for_timeout(800)  # charts and fonts settle
    problems = {}
    for w, h in SIZES:
        page.set_viewport_size({"width": w, "height": h})
        page.wait_for_timeout(600)
        # as long as the page load's own wait: on the shared 2-core CI box the other test worker can starve this
        # server for tens of seconds (seen: 30 s passed without the app reporting itself connected and idle)
        wait_idle(page, timeout=120_000)
        shot = shots / f"{path or 'home'}_{'presenter' if present else 'normal'}_{w}x{h}.png"
        page.screenshot(path=str(shot))
        print(shot)
        bad = page.evaluate(OVERFLOW_JS)
        if bad:
            problems[f"{w}x{h}"] = bad
        if present:
            # the larger type arrives with the page's run; under load it can land after the pauses above
            try:
                page.wait_for_function(f"() => {{ const f = ({FONT_JS.strip()})(); "
                                       "return Object.values(f).every(v => v === null || v >= 18); }",
                                       timeout=20_000)
            except PlaywrightTimeout:
                pass  # the assertion below names the sizes found
            sizes = page.evaluate(FONT_JS)
            assert all(v is None or v >= 18 for v in sizes.values()), (path, w, sizes)
    assert not problems, f"{path or 'home'} ({'presenter' if present else 'normal'}): {problems}"
