"""Slider-to-redraw latency in a real browser, per page (target: p95 ≤ 300 ms on analytic pages).

Starts `streamlit run app.py` on a free port, opens each page in headless Debian Chromium, focuses one slider and
presses an arrow key N times (alternating right/left), and measures the time from the key press until the script
has finished its rerun *and* the Plotly charts' SVG paths have changed (i.e. the user sees the new picture).

Run: .venv/bin/python bench/bench_browser_latency.py [--moves 20]
"""

from __future__ import annotations

import argparse
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

# page path, slider index on the page (which control to move), what it is
CASES = [
    ("epsilon_calculator", 0, "Tab 1 ε slider"),
    ("sampling_designer", 0, "first slider of the sampling design"),
    ("leximax_cohort_picker", 0, "cohort size k"),
    ("stratified_synthesis_viewer", 0, "mean mode ε (sidebar)"),
]

SIGNATURE_JS = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  const paths = Array.from(document.querySelectorAll("[data-testid='stPlotlyChart'] svg path"));
  let h = 0;
  for (const p of paths) { const d = p.getAttribute('d') || ''; for (let i = 0; i < d.length; i += 7) h = (h * 31 + d.charCodeAt(i)) | 0; }
  return [app.getAttribute('data-test-script-state'), h + ':' + paths.length];
}"""


def _start_server() -> tuple[subprocess.Popen, str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.address",
         "127.0.0.1", "--server.port", str(port), "--server.fileWatcherType", "none"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
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


def measure(page, url: str, slider_index: int, moves: int) -> tuple[list[float], list[float]]:
    open_page(page, url, timeout=120_000)
    slider = page.locator("[data-testid='stSlider'] input[type='range']").nth(slider_index)
    slider.focus()
    out, after_debounce = [], []
    for i in range(moves):
        before = page.evaluate(SIGNATURE_JS)[1]
        t0 = time.perf_counter()
        slider.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
        # Streamlit's slider waits ~200 ms (its debounce) before it sends the value and the rerun starts.
        page.wait_for_function(RUNNING_JS, polling="raf", timeout=30_000)
        t_run = time.perf_counter()
        page.wait_for_function(
            f"(before) => {{ const s = ({SIGNATURE_JS})(); return s[0] === 'notRunning' && s[1] !== before; }}",
            arg=before, polling="raf", timeout=30_000,
        )
        t_end = time.perf_counter()
        out.append(t_end - t0)
        after_debounce.append(t_end - t_run)
        time.sleep(0.2)
    return out, after_debounce


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--moves", type=int, default=20)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    proc, url = _start_server()
    rows = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            for path, idx, what in CASES:
                page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
                try:
                    times, compute = measure(page, f"{url}/{path}", idx, args.moves)
                    rows.append((path, what, statistics.median(times), _p95(times), statistics.median(compute),
                                 _p95(compute)))
                except Exception as exc:  # report, keep measuring the other pages
                    rows.append((path, f"{what} — failed: {type(exc).__name__}", *[float("nan")] * 4))
                finally:
                    page.context.close()
            browser.close()
    finally:
        proc.terminate()
    print(f"| page | control moved | key press → redrawn: median | p95 | rerun start → redrawn: median | p95 |"
          f"\n|---|---|---|---|---|---|")
    for path, what, med, p95, cmed, cp95 in rows:
        print(f"| {path} | {what} | {med * 1000:.0f} ms | {p95 * 1000:.0f} ms | {cmed * 1000:.0f} ms "
              f"| {cp95 * 1000:.0f} ms |")
    print(f"\n{args.moves} moves per page. The first pair includes Streamlit's own slider debounce (~200 ms before the "
          "value is sent); the second pair is the app's share: script rerun, transfer and Plotly repaint.")


def _p95(xs: list[float]) -> float:
    return sorted(xs)[min(len(xs) - 1, int(0.95 * len(xs)))]  # empirical, no extrapolation


if __name__ == "__main__":
    main()
