"""One server for a whole office (issue 35 items 2 and 3): latency beside heavy sessions, and memory per session,
per upload MB and per heavy run.

Starts one `streamlit run app.py` on a free 127.0.0.1 port (its own process group; no warm-up, no run sharing, so
concurrent sessions really compute) and headless Debian Chromium, then:

1. memory at rest: the server's RSS before and after opening ``--idle`` sessions on the epsilon calculator;
2. latency alone: the epsilon calculator's ε slider, ``--moves`` arrow-key presses, each timed inside the page from
   the key press to the frame where the script has finished and the charts have changed
   (``bench_browser_latency.measure``);
3. latency under load: the same while ``--heavy`` other sessions run the coherence explorer's repeated runs (5,000
   people, R = 100, random forest: the heaviest run a link can start there), with the RSS of the server and of all
   its worker processes sampled every 0.5 s (peak per heavy run);
4. memory per upload: a generated CSV (``--upload-mb``) uploaded to the coherence explorer; RSS after the page has
   drawn it, and again after the session is closed and Streamlit's disconnected-session TTL (120 s) has passed.

Everything it starts is stopped in ``finally`` (server group, browser). Bounded: every wait has a timeout.

Run: .venv/bin/python bench/bench_office.py [--moves 15] [--heavy 3] [--idle 4] [--upload-mb 4]
"""

from __future__ import annotations

import argparse
import io
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_browser_latency import _p95, measure  # noqa: E402
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, _free_port  # noqa: E402
from tests.e2e.helpers import open_page, wait_idle  # noqa: E402
from tests.e2e.test_sessions import RUN_BUTTON, RUN_LINK  # noqa: E402

MB = 1024 * 1024
#: Streamlit keeps a closed tab's session this long (server.disconnectedSessionTTL, default) before it is dropped.
SESSION_TTL_S = 120


def start_server() -> tuple[subprocess.Popen, str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.address",
         "127.0.0.1", "--server.port", str(port), "--server.fileWatcherType", "none"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        env={**os.environ, "DPDASH_WARMUP": "0", "DPDASH_SHARED_RUNS": "0"})
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=1)
            return proc, url
        except OSError:
            time.sleep(0.3)
    stop_server(proc)
    raise RuntimeError("server did not start")


def stop_server(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    except ProcessLookupError:
        pass


def rss(pid: int) -> tuple[float, float]:
    """(server RSS, server + every descendant RSS) in MB."""
    p = psutil.Process(pid)
    own = p.memory_info().rss
    kids = 0
    for k in p.children(recursive=True):
        try:
            kids += k.memory_info().rss
        except psutil.Error:
            pass
    return own / MB, (own + kids) / MB


class Sampler:
    """Peak RSS (server, server + workers) sampled every 0.5 s in a thread."""

    def __init__(self, pid: int):
        self.pid, self.peak, self.stop = pid, (0.0, 0.0), threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                own, total = rss(self.pid)
                self.peak = (max(self.peak[0], own), max(self.peak[1], total))
            except psutil.Error:
                pass
            self.stop.wait(0.5)

    def done(self) -> tuple[float, float]:
        self.stop.set()
        self.thread.join(5)
        return self.peak


def upload_csv(mb: float, seed: int = 0, levels: int = 0) -> bytes:
    """A respondents-like CSV of about ``mb`` MB: a yes/no label, numeric and categorical columns, and with
    ``levels`` a text column with that many distinct values (the issue's costly case)."""
    rng = np.random.default_rng(seed)
    n = int(mb * MB / (17 + (8 if levels else 0)))  # bytes a row, measured
    cols = {"label": rng.integers(0, 2, n), "age": rng.integers(18, 90, n),
            "region": rng.choice([f"r{i}" for i in range(12)], n), "income": rng.integers(0, 200, n) * 500,
            "sex": rng.choice(["f", "m"], n), "edu": rng.integers(1, 9, n)}
    if levels:
        cols["place"] = rng.choice([f"p{i:05d}" for i in range(levels)], n)
    df = pd.DataFrame(cols)
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    return buf.getvalue().encode()


def start_heavy(browser, url: str, n: int) -> list:
    contexts = []
    for _ in range(n):
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        pg = ctx.new_page()
        pg.set_default_timeout(180_000)
        open_page(pg, f"{url}/{RUN_LINK}", timeout=180_000)
        pg.get_by_role("button", name=RUN_BUTTON).click()
        contexts.append((ctx, pg))
    for _, pg in contexts:  # each run has its pool up and a repetition done
        pg.wait_for_function("() => { const b = document.querySelector('[data-testid=stProgress] [role=progressbar]');"
                             " return b && Number(b.getAttribute('aria-valuenow')) > 0; }", timeout=420_000)
    return contexts


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--moves", type=int, default=15)
    ap.add_argument("--heavy", type=int, default=3)
    ap.add_argument("--idle", type=int, default=4)
    ap.add_argument("--upload-mb", type=float, default=4.0)
    ap.add_argument("--skip-upload", action="store_true")
    ap.add_argument("--only-upload", action="store_true", help="measure the upload alone (skip 1-3)")
    ap.add_argument("--upload-levels", type=int, default=0, help="add a text column with this many values")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    def _stop(signum, frame):  # a `timeout` or `kill` still runs the finally blocks that stop the server
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, _stop)
    proc, url = start_server()
    out: dict[str, object] = {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            try:
                if args.only_upload:
                    open_page(browser.new_context().new_page(), f"{url}/coherence_explorer", timeout=180_000)
                else:
                    measure_sessions(browser, url, proc, args, out)
                # 4. memory per upload MB
                if not args.skip_upload:
                    data = upload_csv(args.upload_mb, levels=args.upload_levels)
                    time.sleep(5)
                    b = rss(proc.pid)
                    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
                    up = ctx.new_page()
                    up.set_default_timeout(180_000)
                    open_page(up, f"{url}/coherence_explorer?coh_source=upload", timeout=180_000)
                    # the page's data uploader (the sidebar's first uploader restores saved settings)
                    up.get_by_test_id("stFileUploader").filter(has_text="CSV file (one row per person").get_by_test_id(
                        "stFileUploaderDropzoneInput").set_input_files(
                        {"name": "people.csv", "mimeType": "text/csv", "buffer": data})
                    # the upload travels, then the page reruns: until its "upload a CSV" prompt has gone
                    up.wait_for_function("() => !document.body.innerText.includes("
                                         "'Upload a CSV with one row per person')", timeout=180_000)
                    wait_idle(up, 180_000)
                    time.sleep(3)
                    a = rss(proc.pid)
                    out["upload accepted"] = "yes (the page's upload prompt gave way)"
                    ctx.close()
                    time.sleep(SESSION_TTL_S + 20)
                    c = rss(proc.pid)
                    size = len(data) / MB
                    out["upload size (MB)"] = size
                    out["per upload MB, held (MB)"] = (a[0] - b[0]) / size
                    out["per upload MB, after the session ended (MB)"] = (c[0] - b[0]) / size
                out["server at the end (MB)"] = rss(proc.pid)[0]
            finally:
                browser.close()
    finally:
        stop_server(proc)
    for key in ("alone", "loaded"):
        if key not in out:
            continue
        xs = out.pop(key)
        print(f"ε slider, {'alone' if key == 'alone' else f'beside {args.heavy} heavy runs'}: "
              f"p50 {statistics.median(xs) * 1000:.0f} ms, p95 {_p95(xs) * 1000:.0f} ms, max {max(xs) * 1000:.0f} ms "
              f"({len(xs)} moves)")
    for k, v in out.items():
        print(f"{k}: {v:.1f}" if isinstance(v, float) else f"{k}: {v}")
    print(f"host: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")


def measure_sessions(browser, url: str, proc, args, out: dict) -> None:
    """Parts 1-3: memory at rest, latency alone, latency and memory beside heavy sessions."""
    # 1. memory at rest
    ctx0 = browser.new_context(viewport={"width": 1400, "height": 1000})
    open_page(ctx0.new_page(), f"{url}/epsilon_calculator", timeout=180_000)  # imports, caches warm
    time.sleep(3)
    base = rss(proc.pid)
    idle = []
    for _ in range(args.idle):
        c = browser.new_context(viewport={"width": 1400, "height": 1000})
        open_page(c.new_page(), f"{url}/epsilon_calculator", timeout=180_000)
        idle.append(c)
    time.sleep(3)
    rest = rss(proc.pid)
    out["fresh server + 1 session (MB)"] = base[0]
    out["per idle session (MB)"] = (rest[0] - base[0]) / args.idle
    for c in idle:
        c.close()
    ctx0.close()

    # 2. latency alone
    pg = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    alone, _ = measure(pg, f"{url}/epsilon_calculator", 0, args.moves)
    pg.context.close()
    out["alone"] = alone

    # 3. latency beside heavy sessions, and memory per heavy run
    before = rss(proc.pid)
    sampler = Sampler(proc.pid)
    heavy = start_heavy(browser, url, args.heavy)
    pg = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    loaded, _ = measure(pg, f"{url}/epsilon_calculator", 0, args.moves)
    still = sum(1 for _, h in heavy if h.get_by_test_id("stProgress").count() > 0)
    peak = sampler.done()
    pg.context.close()
    for ctx, _ in heavy:
        ctx.close()
    out["loaded"] = loaded
    out["heavy runs still going at the end"] = still
    out["per heavy run, server (MB)"] = (peak[0] - before[0]) / args.heavy
    out["per heavy run, server + workers (MB)"] = (peak[1] - before[1]) / args.heavy



if __name__ == "__main__":
    main()
