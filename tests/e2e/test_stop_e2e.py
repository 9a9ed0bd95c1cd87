"""Streamlit's own Stop (top right) during a long run (issue 31 item 4): "36/60 runs, about 20 s left" stayed frozen
on the page and "stopped" was said only after the next click. Now the page reruns at once, draws no bar and says
how many runs were finished. (The Stop button under the bar is tested with AppTest: tests/ui/test_run_progress.py.
AppTest cannot press Streamlit's Stop while a run is under way, so this one needs the browser.)"""

from __future__ import annotations

import re
import time
from urllib.parse import quote

from tests.e2e.helpers import open_page, wait_not_running

DP = quote("ε-DP histogram → synthetic records (Laplace)")
SWEEP = f"coh_learner={quote('Decision tree')}&coh_release={DP}&coh_tab={quote('W1 vs ε')}"
BAR = "[data-testid='stMain'] [data-testid='stProgress']"


def test_streamlit_stop_during_a_sweep_clears_the_bar_and_says_stopped_at_once(page, app_url):
    open_page(page, f"{app_url}/coherence_explorer?{SWEEP}")
    page.get_by_role("button", name="Run ε sweep").click()
    page.wait_for_selector(f"{BAR}:has-text('/60 runs')", timeout=60_000)  # the first runs are done
    shown = int(re.search(r"(\d+)/60 runs", page.locator(BAR).inner_text()).group(1))
    page.get_by_test_id("stStatusWidget").get_by_role("button", name="Stop").click()
    t0 = time.monotonic()
    note = page.get_by_text("Stopped: the last ε sweep was stopped after", exact=False)
    note.wait_for(timeout=10_000)
    took = time.monotonic() - t0
    done, total = map(int, re.search(r"after (\d+) of (\d+) runs", note.inner_text()).groups())
    assert total == 60 and shown <= done < 60, (shown, done)
    wait_not_running(page)
    assert page.locator(BAR).count() == 0  # the frozen bar is gone
    assert page.locator("[data-testid='stMain'] button:visible", has_text="Stop").count() == 0
    assert took < 8, f"'stopped' took {took:.1f} s to appear"
    # nothing keeps rerunning afterwards (the watcher's timer ends with the rerun it asked for)
    states = []
    for _ in range(10):
        states.append(page.get_by_test_id("stApp").get_attribute("data-test-script-state"))
        time.sleep(0.2)
    assert set(states) == {"notRunning"}, states
