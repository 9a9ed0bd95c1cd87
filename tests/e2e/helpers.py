"""Playwright helpers for Streamlit pages (selectors as in Streamlit's own e2e suite)."""

from __future__ import annotations

APP_READY = "[data-testid='stApp'][data-test-connection-state='CONNECTED']"
SCRIPT_IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"


def wait_idle(page, timeout: float = 30_000) -> None:
    """Wait until the app is connected and the script has finished its run."""
    page.wait_for_selector(APP_READY, timeout=timeout)
    # A rerun may start just after an interaction: give it a moment to flip to "running" first.
    page.wait_for_timeout(300)
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
