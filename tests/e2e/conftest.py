"""Browser-test fixtures: a real `streamlit run app.py` server and Debian's Chromium driven by Playwright.

In CI (``CI`` set) a missing Chromium is an error, never a skip; locally the tests skip with a clear message.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic", "--disable-dev-shm-usage"]


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: Session resources shared by the e2e and attack layers' fixture definitions within one pytest worker.
_SHARED: dict[str, object] = {}


@pytest.fixture(scope="session")
def app_url():
    if "app_url" in _SHARED:
        yield _SHARED["app_url"]
        return
    port = _free_port()
    log = open(ROOT / ".pytest_cache" / f"streamlit-{port}.log", "w") if (ROOT / ".pytest_cache").exists() \
        else subprocess.DEVNULL
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port), "--server.fileWatcherType", "none",
         "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, "DPDASH_WARMUP": "0"},  # no background MST fit competing with the tests for the cores
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        pytest.fail("streamlit server did not become healthy within 60 s")
    _SHARED["app_url"] = url
    try:
        yield url
    finally:
        _SHARED.pop("app_url", None)
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="session")
def browser():
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        if os.environ.get("CI"):
            pytest.fail(f"Chromium not found at {CHROMIUM}: .ci/run must install it (apt-get install -y chromium)")
        pytest.skip(f"Chromium not found at {CHROMIUM}; install it with `apt-get install -y chromium` to run "
                    "browser tests")
    if "browser" in _SHARED:
        # tests/attack imports these fixtures into its own conftest, so pytest may set this session fixture up
        # twice in one worker; a second sync_playwright() in the same thread would raise, so share the first.
        yield _SHARED["browser"]
        return
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        _SHARED["browser"] = b
        try:
            yield b
        finally:
            _SHARED.pop("browser", None)
            b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    yield pg
    context.close()
