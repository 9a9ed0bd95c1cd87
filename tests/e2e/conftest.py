"""Browser-test fixtures: a real `streamlit run app.py` server and Debian's Chromium driven by Playwright.

In CI (``CI`` set) a missing Chromium is an error, never a skip; locally the tests skip with a clear message.

The log gate (issue 22 item 3): every test that uses the server fails if, while it ran, the server logged an
uncaught app exception, a traceback, an error or a warning, or a page of the test shows Streamlit's error element.
A fragment rerun that crashes shows nothing to AppTest; here it turns the test red with the server's traceback.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic", "--disable-dev-shm-usage"]


#: Log lines name their level and logger, so the log gate can tell a warning (Streamlit's own format at level "info"
#: is only "<time> <message>").
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: ``python -m streamlit`` with the same format for records that reach the root logger (this app's own loggers):
#: without a handler Python prints a bare message, and a warning would not show as one.
SERVER_BOOT = ("import logging, sys; logging.basicConfig(level=logging.WARNING, format=%r); "
               "from streamlit.web.cli import main; sys.argv[0] = 'streamlit'; main(prog_name='streamlit')"
               % LOG_FORMAT)


def pytest_configure(config):
    config.addinivalue_line("markers", "allow_server_errors: the test provokes a server error on purpose; the log "
                                       "gate (below) does not check it")


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
    # The server's whole log is kept (the log gate reads it after every test); a failing run leaves it behind.
    log_path = Path(tempfile.gettempdir()) / f"dpdash-e2e-streamlit-{port}.log"
    log = open(log_path, "w")
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER_BOOT, "run", "app.py", "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port), "--server.fileWatcherType", "none",
         "--browser.gatherUsageStats", "false", "--logger.messageFormat", LOG_FORMAT],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
        # no background MST fit competing with the tests for the cores; no run shared across sessions, so concurrent
        # sessions really compute concurrently (tests/e2e/test_sessions.py; sharing is tested with AppTest)
        env={**os.environ, "DPDASH_WARMUP": "0", "DPDASH_SHARED_RUNS": "0"},
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
    _SHARED["app_log"] = log_path
    try:
        yield url
    finally:
        _SHARED.pop("app_url", None)
        _SHARED.pop("app_log", None)
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


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


# --- The log gate -----------------------------------------------------------------------------------------------

#: What a server log line must never say during a test: Streamlit's uncaught-exception line, a Python traceback,
#: a log record at WARNING level or above (Streamlit's format is "<date> <time> <LEVEL> <logger>: <message>"), or
#: a line printed by Python's warnings module ("file.py:12: FutureWarning: ...").
LOG_BAD = re.compile(r"Uncaught app execution|Traceback \(most recent call last\)|Exception in thread"
                     r"|^\S+ \S+ +(WARNING|ERROR|CRITICAL) |^\S+:\d+: \w*Warning: ", re.M)
#: Known-harmless lines, each with its reason. Keep this list tiny: a new entry needs a reason a reviewer accepts.
LOG_ALLOWED: tuple[tuple[re.Pattern, str], ...] = ()
#: Streamlit's error element (an uncaught exception with showErrorDetails = "none" shows this text in it).
ERROR_JS = """() => {
  const ex = document.querySelectorAll('[data-testid=stException]').length;
  const text = document.body ? document.body.innerText : '';
  return ex + (text.includes('This app has encountered an error') ? 1 : 0);
}"""
#: How long to let the server finish writing what the test's last interaction caused before reading its log.
LOG_SETTLE_S = 0.3


def bad_log_lines(text: str) -> list[str]:
    """The offending lines of a log excerpt (with a traceback's following lines), minus allowed ones."""
    out = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if LOG_BAD.search(line) and not any(p.search(line) for p, _ in LOG_ALLOWED):
            out.append("\n".join(lines[i:i + 40]))
    return out


def error_elements(pages) -> list[str]:
    """URLs of the open pages that show Streamlit's error element (pages already closed are skipped)."""
    found = []
    for pg in pages:
        try:
            if not pg.is_closed() and pg.evaluate(ERROR_JS):
                found.append(pg.url)
        except Exception:  # a page navigating or closing at this moment: its server errors are in the log
            continue
    return found


@pytest.fixture(autouse=True)
def log_gate(request):
    """Fail a server-using test on a bad server log line or a visible error element (module docstring).

    A test that provokes a crash on purpose opts out with ``@pytest.mark.allow_server_errors`` (none does now).
    """
    if "app_url" not in request.fixturenames or request.node.get_closest_marker("allow_server_errors"):
        yield
        return
    request.getfixturevalue("app_url")
    # Requested here, the browser outlives this fixture's teardown, so the pages are still open when we look.
    browser = request.getfixturevalue("browser") if "browser" in request.fixturenames else None
    if "page" in request.fixturenames:
        request.getfixturevalue("page")
    log_path: Path = _SHARED["app_log"]
    start = log_path.stat().st_size
    yield
    pages = [pg for ctx in (browser.contexts if browser is not None else []) for pg in ctx.pages]
    shown = error_elements(pages)
    time.sleep(LOG_SETTLE_S)
    with open(log_path, "rb") as f:
        f.seek(start)
        new = f.read().decode("utf-8", "replace")
    bad = bad_log_lines(new)
    problems = ([f"error element on {u}" for u in shown] +
                [f"server log ({log_path}):\n{b}" for b in bad[:5]])
    if problems:
        pytest.fail("log gate: " + "\n\n".join(problems), pytrace=False)
