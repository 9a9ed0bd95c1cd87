"""Playwright helpers for Streamlit pages (selectors as in Streamlit's own e2e suite)."""

from __future__ import annotations

APP_READY = "[data-testid='stApp'][data-test-connection-state='CONNECTED']"
SCRIPT_IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"


#: Any state but "notRunning" (the frontend's states: initial, running, rerunRequested, stopRequested, …).
SCRIPT_BUSY = "[data-testid='stApp']:not([data-test-script-state='notRunning'])"
#: How long a rerun may take to start after an interaction before we take it that none is coming.
RERUN_GRACE_MS = 300


def wait_idle(page, timeout: float = 30_000) -> None:
    """Wait until the app is connected and the script has finished its run.

    A rerun may start just after an interaction, so first wait up to ``RERUN_GRACE_MS`` for the script to leave
    "notRunning" (it usually does within a few tens of ms; the wait then ends at once), then for it to be idle.
    The old fixed 300 ms pause cost that much on every call, about 200 times per suite run.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.wait_for_selector(APP_READY, timeout=timeout)
    try:
        page.wait_for_selector(SCRIPT_BUSY, timeout=RERUN_GRACE_MS)
    except PlaywrightTimeout:
        pass  # no rerun began (or it ended before we looked): the page is idle now
    page.wait_for_selector(SCRIPT_IDLE, timeout=timeout)


def wait_not_running(page, timeout: float = 30_000) -> None:
    """Wait until the app is connected and no script runs, without ``wait_idle``'s grace for a rerun to begin (for
    moments that start none, such as a window resize)."""
    page.wait_for_selector(APP_READY, timeout=timeout)
    page.wait_for_selector(SCRIPT_IDLE, timeout=timeout)


def open_page(page, url: str, timeout: float = 60_000) -> None:
    """Open a URL and wait until the Streamlit script has finished running."""
    page.goto(url, wait_until="domcontentloaded", timeout=timeout)
    wait_idle(page, timeout)


def nudge(page, slider, url_part: str, key: str = "ArrowRight") -> None:
    """Press an arrow key on a slider's thumb, then wait until the URL contains ``url_part`` and the rerun ends."""
    slider.focus()
    slider.press(key)
    page.wait_for_function("(part) => location.search.includes(part)", arg=url_part)
    wait_idle(page)


#: What a keyed control shows (Streamlit gives each keyed widget the class ``st-key-<key>``): a slider's thumb
#: label, a checkbox's or toggle's state ("true"/"false"), a radio's chosen label, else its box's text.
_CONTROL_JS = """(e) => {
  const thumb = e.querySelector('[data-testid=stSliderThumbValue]');
  if (thumb) return thumb.textContent.trim();  // innerText is empty while it is scrolled away
  const radio = e.querySelector('input[type=radio]:checked');
  if (radio) return (radio.closest('label') || radio.parentElement).innerText.trim();
  const input = e.querySelector('input:not([type=hidden]):not([type=file]), textarea');
  if (input && input.type === 'checkbox') return String(input.checked);
  return input ? input.value : e.innerText.trim();
}"""


def control_value(page, key: str, timeout: float = 30_000) -> str:
    """The value the control with widget key ``key`` shows on screen (see ``_CONTROL_JS``)."""
    box = page.locator(f".st-key-{key}").first
    # a control may still be a loading skeleton after the run ends: wait for its input to arrive
    box.locator("input, textarea").first.wait_for(state="attached", timeout=timeout)
    return box.evaluate(_CONTROL_JS)


def wait_artefact(page, label: str, timeout: float = 60_000):
    """The first "Take this away" download button labelled ``label`` ("Report (HTML)", "Settings (JSON)").

    The artefacts sit at the end of the open tab and arrive a moment after the page's first idle (a fragment or
    lazy tab finishes later), so this waits for the button to be attached, then scrolls it into view.
    """
    button = page.get_by_test_id("stDownloadButton").filter(has_text=label).first
    button.wait_for(state="attached", timeout=timeout)
    button.scroll_into_view_if_needed()
    return button


def download(page, button, target, timeout: float = 120_000):
    """Click a download button, save the file to ``target`` (a Path) and wait for the app to be idle again."""
    with page.expect_download(timeout=timeout) as info:
        button.click()
    info.value.save_as(target)
    wait_idle(page)
    return target


def restore_settings(page, path) -> None:
    """Upload a settings file into the sidebar's "Restore saved settings" uploader (opening its expander first)."""
    sidebar = page.get_by_test_id("stSidebar")
    expander = sidebar.get_by_test_id("stExpander").filter(has_text="Restore saved settings").first
    if not expander.locator("details").first.evaluate("(d) => d.open"):
        expander.get_by_text("Restore saved settings").first.click()
    expander.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(path)


#: Resolves once the page's layout has stopped changing: web fonts loaded, every visible Plotly chart drawn, then the
#: size and place of every element container, plot area and skeleton unchanged for ``quiet`` ms (checked each 25 ms);
#: false after ``limit`` ms.
_SETTLED_JS = """async ([quiet, limit]) => {
  const t0 = performance.now();
  await Promise.race([document.fonts.ready, new Promise(r => setTimeout(r, limit))]);
  const sig = () => {
    const parts = [document.documentElement.scrollWidth, document.documentElement.scrollHeight,
                   window.innerWidth, window.innerHeight];
    for (const e of document.querySelectorAll(
        '[data-testid=stElementContainer], .js-plotly-plot .nsewdrag, [data-testid=stSkeleton]')) {
      const r = e.getBoundingClientRect();
      parts.push(Math.round(r.left), Math.round(r.top), Math.round(r.width), Math.round(r.height));
    }
    return parts.join(',');
  };
  const undrawn = () => [...document.querySelectorAll('[data-testid=stPlotlyChart]')]
    .some(c => c.getClientRects().length > 0 && !c.querySelector('.main-svg'));
  let last = sig(), since = performance.now();
  while (performance.now() - since < quiet || undrawn()) {
    if (performance.now() - t0 > limit) return false;
    await new Promise(r => setTimeout(r, 25));
    const now = sig();
    if (now !== last) { last = now; since = performance.now(); }
  }
  return true;
}"""


def wait_settled(page, quiet_ms: int = 200, limit_ms: int = 15_000) -> bool:
    """Wait until the page's layout is still (fonts loaded; no element, chart or skeleton moved for ``quiet_ms``).

    Replaces fixed pauses after a load, a tab click or a window resize ("charts and fonts settle"): it ends as soon
    as the page is still, and waits longer when the page is still drawing (a busy CI box), up to ``limit_ms``.
    Returns whether the page settled within the limit.
    """
    return page.evaluate(_SETTLED_JS, [quiet_ms, limit_ms])


# --- Nothing cut (issue 14 item 5; used by the normal-mode walk and the presenter-mode walk) ---------------

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

def overflow_when_drawn(page, timeout: float = 60_000) -> list[str]:
    """What :data:`OVERFLOW_JS` finds once the page is drawn: polls until no script runs, no skeleton is left and
    nothing is cut, up to ``timeout``; then returns what is still cut (empty when all is well).

    A page measured mid-load (a CI run once did: skeletons in the sidebar, the base CSS that wraps the tab bar not
    yet applied) shows its last tabs outside the bar for a moment; a layout that stays cut still fails.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    drawn = ("() => !!document.querySelector(%r) && !document.querySelector('[data-testid=stSkeleton]') "
             "&& (%s)().length === 0") % (SCRIPT_IDLE, OVERFLOW_JS.strip())
    try:
        page.wait_for_function(drawn, timeout=timeout, polling=250)
    except PlaywrightTimeout:
        pass  # reported below, as found now
    return page.evaluate(OVERFLOW_JS)


#: Presenter mode's promise, measured: body text and widget labels at least 18 px.
FONT_JS = """
() => {
  const px = (sel) => { const el = [...document.querySelectorAll(sel)].find(e => e.offsetParent !== null);
                        return el ? parseFloat(getComputedStyle(el).fontSize) : null; };
  return {body: px('[data-testid=stMarkdownContainer] p'), label: px('[data-testid=stWidgetLabel] p')};
}
"""
