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
