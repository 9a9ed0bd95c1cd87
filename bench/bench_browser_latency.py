"""Slider-to-redraw latency in a real browser, per page (target: p95 ≤ 300 ms on analytic pages).

Starts `streamlit run app.py` on a free port, opens each page in headless Debian Chromium, focuses one slider and
presses an arrow key N times (alternating right/left), and measures, inside the page, the time from the key press
until the script has finished its rerun *and* the Plotly charts' SVG paths have changed (the user sees the new
picture), plus the time until the new value leaves the browser.

Run: .venv/bin/python bench/bench_browser_latency.py [--moves 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, _free_port  # noqa: E402
from tests.e2e.helpers import open_page  # noqa: E402

# page path (with a link query where the control sits in a tab), slider (index on the page, or its label), what it is
CASES = [
    ("epsilon_calculator", 0, "Tab 1 ε slider"),
    ("sampling_designer", 0, "first slider of the sampling design"),
    ("leximax_cohort_picker", 0, "cohort size k"),
    ("stratified_synthesis_viewer", 0, "mean mode ε (sidebar)"),
    ("coherence_explorer?coh_tab=Theory", "Hypothetical ε (theory)", "Theory tab: hypothetical ε"),
]

SIGNATURE_JS = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  const state = app.getAttribute('data-test-script-state');
  // hashing every chart path is expensive: do it only once the script is idle, so the probe does not steal
  // main-thread time from the redraw it measures
  if (state !== 'notRunning') return [state, null];
  const paths = Array.from(document.querySelectorAll("[data-testid='stPlotlyChart'] svg path"));
  let h = 0;
  for (const p of paths) {
    const d = p.getAttribute('d') || '';
    for (let i = 0; i < d.length; i += 7) h = (h * 31 + d.charCodeAt(i)) | 0;
  }
  return [state, h + ':' + paths.length];
}"""


def _start_server() -> tuple[subprocess.Popen, str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.address",
         "127.0.0.1", "--server.port", str(port), "--server.fileWatcherType", "none"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "DPDASH_WARMUP": "0"},  # no background MST fit while we time redraws
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=1)
            return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("server did not start")


RUNNING_JS = ("() => document.querySelector(\"[data-testid='stApp']\")"
              ".getAttribute('data-test-script-state') === 'running'")

# Timestamps taken inside the page (performance.now()), so Playwright's own round trips do not count: the key
# press, each websocket send (the widget value leaving the browser), and the frame where the new picture is shown.
INSTRUMENT_JS = """
window.__sends = [];
const __send = WebSocket.prototype.send;
WebSocket.prototype.send = function (d) { window.__sends.push(performance.now()); return __send.call(this, d); };
document.addEventListener('keydown', () => { window.__key = performance.now(); }, true);
"""


def measure(page, url: str, slider: int | str, moves: int) -> tuple[list[float], list[float]]:
    """Per move: (key press → new picture shown, key press → value sent), in seconds."""
    page.add_init_script(INSTRUMENT_JS)
    open_page(page, url, timeout=120_000)
    if isinstance(slider, str):
        slider = page.locator("[data-testid='stSlider']", has_text=slider).locator("input[type='range']").first
    else:
        slider = page.locator("[data-testid='stSlider'] input[type='range']").nth(slider)
    slider.focus()
    total, sent = [], []
    for i in range(moves):
        before = page.evaluate(SIGNATURE_JS)[1]
        slider.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
        page.wait_for_function(
            f"""(before) => {{
                const s = ({SIGNATURE_JS})();
                if (s[1] !== null && s[1] !== before) {{ window.__done = performance.now(); return true; }}
                return false;
            }}""",
            arg=before, polling="raf", timeout=30_000,
        )
        key, first_send, done = page.evaluate(
            "() => [window.__key, window.__sends.find(t => t >= window.__key), window.__done]")
        total.append((done - key) / 1000)
        sent.append(((first_send if first_send is not None else done) - key) / 1000)
        page.wait_for_timeout(200)
    return total, sent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--moves", type=int, default=20)
    ap.add_argument("--pages", nargs="*", default=None, help="page paths to measure (default: all)")
    args = ap.parse_args()
    cases = [c for c in CASES if not args.pages or c[0].split("?")[0] in args.pages]
    from playwright.sync_api import sync_playwright

    proc, url = _start_server()
    rows = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            for path, idx, what in cases:
                page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
                try:
                    times, sent = measure(page, f"{url}/{path}", idx, args.moves)
                    rows.append((path, what, statistics.median(times), _p95(times), statistics.median(sent),
                                 _p95(sent)))
                except Exception as exc:  # report, keep measuring the other pages
                    rows.append((path, f"{what} — failed: {type(exc).__name__}", *[float("nan")] * 4))
                finally:
                    page.context.close()
            browser.close()
    finally:
        proc.terminate()
    print("| page | control moved | key press → new picture: median | p95 | key press → value sent: median |"
          "\n|---|---|---|---|---|")
    for path, what, med, p95, smed, _ in rows:
        print(f"| {path} | {what} | {med * 1000:.0f} ms | {p95 * 1000:.0f} ms | {smed * 1000:.0f} ms |")
    print(f"\n{args.moves} moves per page, arrow key on the slider, timed inside the page (performance.now()): from "
          "the key press to the animation frame in which the script has finished and the charts' SVG has changed. "
          "\"Value sent\" is the browser's share before the server starts the rerun.")


def _p95(xs: list[float]) -> float:
    return sorted(xs)[min(len(xs) - 1, int(0.95 * len(xs)))]  # empirical, no extrapolation


if __name__ == "__main__":
    main()
