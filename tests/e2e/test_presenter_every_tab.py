"""Presenter mode on every tab of every page, at 1280×800 and 1920×1080: type that is really large, nothing cut.

Issue 25 ("Ready for the meeting room"). For each tab (clicked in the browser) and both screen sizes, a script in
the page lists:

- **small type**: visible text below 18 px in widget labels, their values (inputs, selects, radios, toggles,
  segmented controls), metric labels, tables (``st.table`` cells; an ``st.dataframe`` grid is a canvas, so its
  zoom must bring its 14 px cells to 18 px), alerts, captions, expander titles, tabs and buttons;
- **cut text**: an element drawn with an ellipsis (``text-overflow: ellipsis``) or whose text is wider than its
  clipped box;
- **tables that scroll sideways**: an ``st.table``, ``st.dataframe`` or ``st.data_editor`` whose columns need a
  horizontal scroll. Data editors are held to this too (issue 25: they were exempt, and the strata and budget
  editors scrolled at 1280 px); presenter mode shows their main columns. The one exception is a raw-data preview
  (a container keyed ``*_preview``, the home page's first 20 rows of the chosen dataset): it shows a file's columns
  as they are, every one of them, and a dataset may have more columns than any screen holds at 18 px, so it
  scrolls sideways rather than hide columns;
- **charts too narrow to read**: a Plotly plot area under 240 px wide or 80 px high;
- **overflow** (issue 14 item 5, formerly the presenter half of test_presenter_overflow.py, which checked the
  epsilon calculator's first tab only): a metric value or label, tab name or heading wider than its own box, a tab
  drawn outside its tab bar; and **font**: the first visible body paragraph and widget label anywhere on the page,
  the sidebar included, at 18 px or more.

Each check runs once the page is still (``wait_settled``: fonts loaded, every visible chart drawn, no element
moving), not after fixed pauses.

Screenshots go to a temporary folder (printed), one per tab and size, to look at.
"""

from __future__ import annotations

import pytest

from tests.e2e.helpers import (FONT_JS, open_page, overflow_when_drawn, wait_idle, wait_not_running,
                               wait_settled)

PAGES = ["", "epsilon_calculator", "coherence_explorer", "sampling_designer", "leximax_cohort_picker",
         "stratified_synthesis_viewer"]
SIZES = [(1280, 800), (1920, 1080)]
MIN_PX = 18.0
#: A plot area narrower (or lower) than this cannot be read from the back of a room; one-row strips are 100 px high.
MIN_PLOT_W, MIN_PLOT_H = 240, 80

CHECK_JS = """
([minPx, minW, minH]) => {
  const visible = (el) => el.offsetParent !== null && el.getClientRects().length > 0
                          && getComputedStyle(el).visibility !== 'hidden';
  const inSidebar = (el) => el.closest('[data-testid=stSidebar]') !== null;
  const label = (el) => ((el.getAttribute('data-testid') || el.tagName) + ': '
                         + (el.innerText || el.value || '').trim().replace(/\\s+/g, ' ').slice(0, 50));
  const out = {small: [], cut: [], scroll: [], chart: []};
  const textSel = [
    '[data-testid=stWidgetLabel] p', '[data-testid=stMetricLabel] p', '[data-testid=stMetricLabel] div',
    '[data-testid=stMarkdownContainer] p', '[data-testid=stMarkdownContainer] li',
    '[data-testid=stCaptionContainer]', '[data-testid=stAlertContainer] p', '[data-testid=stTab] p',
    '[data-testid=stExpander] summary p', '[data-testid=stTable] td', '[data-testid=stTable] th',
    'input[type=text]', 'input[type=number]', 'textarea', '[data-baseweb=select] [value]',
    '[data-baseweb=select] div[class*=singleValue]', '[data-testid=stRadio] label p',
    '[data-testid=stCheckbox] label p', '[data-testid=stButtonGroup] button p',
    '[data-testid=stBaseButton-secondary] p',
    '[data-testid=stDownloadButton] button p', '[data-testid=stSliderThumbValue]'].join(', ');
  for (const el of document.querySelectorAll(textSel)) {
    if (!visible(el) || inSidebar(el)) continue;
    const text = (el.innerText || el.value || '').trim();
    if (!text) continue;
    const px = parseFloat(getComputedStyle(el).fontSize);
    if (px < minPx - 0.01) out.small.push(`${px}px ${label(el)}`);
  }
  for (const grid of document.querySelectorAll('[data-testid=stDataFrame]')) {
    if (!visible(grid) || inSidebar(grid)) continue;
    const zoom = grid.currentCSSZoom || parseFloat(getComputedStyle(grid).zoom || '1');  // effective zoom
    if (14 * zoom < minPx - 0.01) out.small.push(`dataframe cells at ${(14 * zoom).toFixed(1)}px`);
  }
  for (const el of document.querySelectorAll('[data-testid=stMain] *')) {
    if (!visible(el) || el.children.length > 0) continue;
    const cs = getComputedStyle(el);
    const text = (el.innerText || '').trim();
    if (!text) continue;
    if (cs.textOverflow === 'ellipsis' && el.scrollWidth > el.clientWidth + 1) out.cut.push('ellipsis ' + label(el));
    else if ((cs.overflow === 'hidden' || cs.overflowX === 'hidden') && el.scrollWidth > el.clientWidth + 2
             && el.clientWidth > 0) out.cut.push('clipped ' + label(el));
  }
  for (const t of document.querySelectorAll('[data-testid=stTable], [data-testid=stDataFrame] .dvn-scroller')) {
    // a raw-data preview shows every column of a file as it is; a wide file must scroll (see the docstring)
    if (!visible(t) || t.closest('[class*="_preview"]')) continue;
    if (t.scrollWidth > t.clientWidth + 2) out.scroll.push(label(t.closest('[data-testid]') || t));
  }
  for (const p of document.querySelectorAll('.js-plotly-plot .nsewdrag')) {
    if (!visible(p.closest('.js-plotly-plot'))) continue;
    const r = p.getBoundingClientRect();
    if (r.width < minW || r.height < minH) {
      const fig = p.closest('.js-plotly-plot');
      const title = fig.querySelector('.gtitle');
      out.chart.push(`${Math.round(r.width)}x${Math.round(r.height)} ${title ? title.textContent.slice(0, 50) : ''}`);
    }
  }
  for (const k of Object.keys(out)) out[k] = [...new Set(out[k])].slice(0, 12);
  return out;
}
"""


def _tabs(page) -> list:
    return page.locator("[data-testid=stMain] [data-testid=stTabs] [role=tablist]").first.locator(
        "[data-testid=stTab]").all()


@pytest.mark.slow
@pytest.mark.parametrize("path", PAGES, ids=[p or "home" for p in PAGES])
def test_presenter_mode_on_every_tab(page, app_url, tmp_path_factory, path):
    shots = tmp_path_factory.getbasetemp() / "presenter_every_tab"
    shots.mkdir(exist_ok=True)
    page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
    open_page(page, f"{app_url}/{path}?present=true", timeout=120_000)
    wait_settled(page)
    n_tabs = max(1, len(_tabs(page)))
    problems = {}
    for i in range(n_tabs):
        tabs = _tabs(page)
        name = "page"
        if tabs:
            tab = tabs[i]
            name = tab.inner_text().strip()
            # the page was just resized back: let it reflow first, and give the click the same 120 s as every other
            # wait here (a CI run timed out at Playwright's 30 s waiting for this tab to be visible and stable)
            wait_not_running(page, timeout=120_000)
            wait_settled(page)
            tab.click(timeout=120_000)
            wait_idle(page, timeout=120_000)
            wait_settled(page)
        for w, h in SIZES:
            page.set_viewport_size({"width": w, "height": h})
            # Streamlit does not rerun on a resize; the charts and columns reflow (as long as the load's own wait:
            # on the shared CI box the other worker can starve this server for tens of seconds)
            wait_not_running(page, timeout=120_000)
            wait_settled(page)
            # metric values and labels, tabs and headings whose own box cuts them; tabs drawn outside their bar
            # (first: it waits until the page is drawn, so the checks below measure the drawn page too)
            overflow = overflow_when_drawn(page)
            shot = shots / f"{path or 'home'}_{i}_{w}x{h}.png"
            page.screenshot(path=str(shot), full_page=True)
            print(shot)
            found = page.evaluate(CHECK_JS, [MIN_PX, MIN_PLOT_W, MIN_PLOT_H])
            found["overflow"] = overflow
            # presenter mode's promise anywhere on the page, the sidebar included: body text and labels >= 18 px
            fonts = page.evaluate(FONT_JS)
            found["font"] = [f"{k} {v}px" for k, v in fonts.items() if v is not None and v < MIN_PX]
            found = {k: v for k, v in found.items() if v}
            if found:
                problems[f"{name} @ {w}x{h}"] = found
        page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
    assert not problems, f"{path or 'home'} in presenter mode: {problems}"
