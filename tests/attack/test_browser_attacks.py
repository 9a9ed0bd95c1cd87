"""Browser attacks (issue 17 deliver 6c, 6d): an injection link sends no request off the app; eight
concurrent sessions with different uploads and settings each see only their own.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from tests.attack.corpus import INJECTIONS
from tests.attack.pages import PAGES, link_keys
from tests.e2e.helpers import open_page, wait_idle

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


class _Trap(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self):  # noqa: N802 (http.server API)
        _Trap.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def _injection_link(page: str, trap: str) -> str:
    """Query string naming a dozen of the page's keys (and a few made-up names) with injection payloads."""
    payloads = [p.replace("http://attacker.invalid", trap) for p in INJECTIONS]
    payloads += [f"![x]({trap}/img-{i}.png)" for i in range(3)]
    keys = [k for k in link_keys(page) if not k.endswith(("_upload", "_csv", "_frame"))][:12]
    params = {k: payloads[i % len(payloads)] for i, k in enumerate(keys)}
    params[f"![n]({trap}/name.png)"] = "1"
    params["eps_b_rows"] = json.dumps({"cols": ["name", "epsilon"], "rows": [[f"![r]({trap}/row.png)", 1]]})
    from urllib.parse import urlencode

    return urlencode(params)


def test_injection_links_send_no_request_off_the_app(browser, app_url):
    server = HTTPServer(("127.0.0.1", 0), _Trap)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    trap = f"http://127.0.0.1:{server.server_address[1]}"
    outside: list[str] = []
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        pg = context.new_page()
        pg.set_default_timeout(60_000)
        pg.on("request", lambda r: outside.append(r.url) if not r.url.startswith(app_url) else None)
        for page in PAGES:
            path = "" if page == "app.py" else page.split("/")[-1][:-3]
            open_page(pg, f"{app_url}/{path}?{_injection_link(page, trap)}")
            pg.wait_for_timeout(500)
            assert not pg.get_by_test_id("stException").count(), page
    finally:
        context.close()
        server.shutdown()
    assert not _Trap.hits, _Trap.hits
    assert not [u for u in outside if trap in u or "attacker" in u], outside
    # No other host either: the tab icon is bundled (issue 26 item 5; it came from fonts.gstatic.com).
    assert not {re.sub(r"^https?://([^/]+).*", r"\1", u) for u in outside if u.startswith("http")}, outside


SESSIONS = 8


def _frame(i: int) -> bytes:
    """A sampling frame with 100 + i units in 3 strata: the success message names the unit count."""
    rows = "\n".join(f"S{j % 3},{j % 7},{j}" for j in range(100 + i))
    return f"stratum,cluster,value\n{rows}\n".encode()


def test_concurrent_sessions_are_isolated(browser, app_url):
    eps = ["0.1", "0.2", "0.5", "10", "2", "5", "0.05", "0.02"]  # not the default 1: defaults leave the URL
    contexts, pages = [], []
    try:
        for i in range(SESSIONS):  # all eight load at once: navigation is not awaited
            ctx = browser.new_context(viewport={"width": 1280, "height": 800})
            pg = ctx.new_page()
            pg.set_default_timeout(90_000)
            pg.goto(f"{app_url}/sampling_designer?sd_eps={eps[i]}&sd_col_stratum=stratum", wait_until="commit")
            contexts.append(ctx)
            pages.append(pg)
        for pg in pages:
            wait_idle(pg, 90_000)
            pg.get_by_text("Upload a sampling frame").first.click()
        for i, pg in enumerate(pages):  # uploads start one after another, while the others still run
            pg.get_by_test_id("stMain").get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(
                files=[{"name": f"frame{i}.csv", "mimeType": "text/csv", "buffer": _frame(i)}])
        for i, pg in enumerate(pages):
            wait_idle(pg, 90_000)
            pg.wait_for_selector(f"text=Frame read: {100 + i:,} units", timeout=90_000)
        for i, pg in enumerate(pages):
            text = pg.inner_text("body")
            seen = set(re.findall(r"Frame read: (\d+) units", text))
            assert seen == {str(100 + i)}, (i, seen)
            assert f"sd_eps={eps[i]}" in pg.evaluate("location.search"), (i, pg.url)
            assert not pg.get_by_test_id("stException").count(), i
            assert f"frame{i}.csv" in text and not any(f"frame{j}.csv" in text for j in range(SESSIONS) if j != i)
    finally:
        for ctx in contexts:
            ctx.close()
