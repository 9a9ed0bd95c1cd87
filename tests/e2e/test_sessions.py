"""Browser tests that sessions are isolated: one session's interrupted or closed run never breaks another's.

Source: issue 26 item 3 ("Sessions are isolated"). Before the fix, two sessions ran the coherence experiment on one
server, one changed a control or closed its tab mid-run, and 4–7 s later the other failed with "This app has
encountered an error" (``ShutdownExecutorError``: joblib's shared reusable loky executor, shut down when one
caller's run was interrupted); with 20 concurrent heavy sessions 12 crashed at once. ``dpdash/common/parallel.py`` now
gives each run its own pool (engine-level test: tests/engine/common/test_parallel.py); these tests are the
browser-level proof.

Each session is its own browser context (its own cookies, so its own Streamlit session on the server). The log
gate of tests/e2e/conftest.py checks the server log and every open page for the error element after each test.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.e2e.helpers import open_page, wait_idle

ROOT = Path(__file__).resolve().parents[2]

#: The coherence explorer's "Repeated runs" tab on the bundled synthetic census: random forest (the paper's
#: learner, 50 trees) on 5,000 people, R = 100 (the slider's top); 2,000 people or R = 40 ended
#: before the interruptions on an idle 2-core box: long enough
#: to interrupt mid-run, short enough to run three times.
REPS = int(os.environ.get("DPDASH_E2E_SESSION_REPS", "100"))
RUN_LINK = ("coherence_explorer?coh_n=5000&coh_seed=11&coh_tab=" + quote("Repeated runs") + f"&coh_reps={REPS}")
RUN_BUTTON = "Run experiment"
#: The card that appears when the run has finished (dpdash.coherence.views.runs_view).
DONE_CARD = "Runs failing at α"
#: The one card that legitimately differs between two runs of the same settings: the wall time.
TIME_CARD = "Run time"
#: Generous: the CI box has 2 cores shared with another test worker, and the sessions here share them too.
RUN_TIMEOUT_MS = 420_000
ERROR_TEXT = "This app has encountered an error"


def _new_session(browser):
    """A fresh browser context (a new Streamlit session on the server) and its page."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    pg.set_default_timeout(60_000)
    return ctx, pg


def _no_error(pg) -> None:
    shown = pg.get_by_test_id("stException")
    assert shown.count() == 0, shown.all_inner_texts()
    assert ERROR_TEXT not in pg.locator("body").inner_text(), pg.url
    errors = pg.get_by_test_id("stAlertContentError")
    assert errors.count() == 0, errors.all_inner_texts()


def _open(pg, app_url: str) -> None:
    open_page(pg, f"{app_url}/{RUN_LINK}", timeout=RUN_TIMEOUT_MS)
    _no_error(pg)


def _press_run(pg) -> None:
    pg.get_by_role("button", name=RUN_BUTTON).click()


def _wait_running(pg, name: str) -> None:
    """Until the run's progress bar shows a repetition done (its worker pool up and busy), or the run has ended."""
    try:
        pg.wait_for_function(
            "(card) => { const b = document.querySelector('[data-testid=stProgress] [role=progressbar]');"
            " if (b && Number(b.getAttribute('aria-valuenow')) > 0) return true;"
            " return Array.from(document.querySelectorAll('[data-testid=stMetricLabel]'))"
            ".some(e => e.innerText.includes(card)); }", arg=DONE_CARD, timeout=RUN_TIMEOUT_MS)
    except Exception as exc:
        _no_error(pg)
        raise AssertionError(f"session {name}: its run neither progressed nor ended") from exc
    _no_error(pg)


RESULT_OR_ERROR_JS = """(card) => {
  if (document.querySelector('[data-testid=stException]')) return true;
  if (document.body.innerText.includes('This app has encountered an error')) return true;
  return Array.from(document.querySelectorAll('[data-testid=stMetricLabel]')).some(e => e.innerText.includes(card));
}"""


def _result(pg) -> dict[str, str]:
    """The run's headline numbers: every card but the wall time, and the verdict sentence."""
    # the cards, or an error element (then fail at once with what it says, not after the whole timeout)
    pg.wait_for_function(RESULT_OR_ERROR_JS, arg=DONE_CARD, timeout=RUN_TIMEOUT_MS)
    _no_error(pg)
    wait_idle(pg, timeout=RUN_TIMEOUT_MS)
    panel = pg.get_by_role("tabpanel", name="Repeated runs")
    labels = [t.strip() for t in panel.get_by_test_id("stMetricLabel").all_inner_texts()]
    values = [t.strip() for t in panel.get_by_test_id("stMetricValue").all_inner_texts()]
    out = {k: v for k, v in zip(labels, values) if k != TIME_CARD}
    # the verdict names the failure count, the interval, the most affected group and its mean W1 against chance
    out["verdict"] = panel.get_by_test_id("stAlert").first.inner_text().strip()
    return out


#: The result of the run in a session alone, computed once by whichever test needs it first.
_ALONE: dict[str, dict[str, str]] = {}


def _alone(browser, app_url: str) -> dict[str, str]:
    if "result" not in _ALONE:
        ctx, pg = _new_session(browser)
        try:
            _open(pg, app_url)
            _press_run(pg)
            t0 = time.perf_counter()
            _ALONE["result"] = _result(pg)
            _ALONE["seconds"] = f"{time.perf_counter() - t0:.1f}"
            _no_error(pg)
        finally:
            ctx.close()
    res = _ALONE["result"]
    # the run's own numbers, not an empty page: R runs counted, a verdict sentence with a mean W1
    assert res[DONE_CARD].endswith(f"/{REPS}") and "mean W1" in res["verdict"], res
    return res


def test_interrupting_sessions_leaves_the_others_run_intact(browser, app_url):
    """Sessions A, C and B run the same experiment at once; mid-run A moves α (the rerun stops A's script and
    closes its run) and C closes its page (the server ends C's session). B must finish with no error element and
    the same numbers as the same run in a session alone (same data, seed and settings; only the wall time may
    differ). Both interruptions share one run of B: each run costs tens of seconds on the 2-core box."""
    alone = _alone(browser, app_url)
    (ctx_a, a), (ctx_b, b), (ctx_c, c) = (_new_session(browser) for _ in range(3))
    try:
        for pg in (a, b, c):
            _open(pg, app_url)
        for pg in (a, b, c):  # the three runs start together, once every page is drawn
            _press_run(pg)
        for pg, name in ((a, "A"), (b, "B"), (c, "C")):
            _wait_running(pg, name)
        # B must still be running, else the interruptions below would prove nothing
        assert b.get_by_test_id("stProgress").count() == 1, "B finished before the interruptions"
        thumb = a.get_by_test_id("stSlider").filter(has_text="α (largest W1").get_by_role("slider")
        thumb.focus()
        thumb.press("ArrowRight")
        ctx_c.close()
        # B must still be running after both interruptions, else this proves nothing
        assert b.get_by_test_id("stProgress").count() == 1, "B finished before the others were interrupted"
        a.wait_for_function("() => location.search.includes('coh_alpha=')")
        wait_idle(a, timeout=RUN_TIMEOUT_MS)
        _no_error(a)  # the interrupted session itself shows no error either, and no result
        assert a.get_by_test_id("stMetricLabel").filter(has_text=DONE_CARD).count() == 0
        together = _result(b)
        _no_error(b)
        assert together == alone
    finally:
        for ctx in (ctx_a, ctx_b, ctx_c):
            try:
                ctx.close()
            except Exception:  # C is already closed by the test
                pass


# --- Many concurrent heavy sessions -----------------------------------------------------------------------------

#: How many sessions at once. Issue 26 asks for 20; the default is 8 (two of each kind) because on the 2-core CI box,
#: shared with a second test worker, 20 sessions did not even finish *loading* their pages within 170 s (measured
#: 2026-11-28 with the box's load average at 24: page loads are CPU-bound, each draws a preview or a pool), so 20
#: cannot meet the issue's ~3 minute budget there. Raise it with ``DPDASH_E2E_SESSIONS=20`` on a larger machine (the
#: deadline grows with it, or set ``DPDASH_E2E_SESSIONS_DEADLINE`` in seconds).
N_SESSIONS = int(os.environ.get("DPDASH_E2E_SESSIONS", "8"))
#: The whole test must end within this: 50 s plus 25 s a session (250 s at the default 8 sessions). 15 s a session
#: (170 s) left two MST fits short in a full run on 2026-12-02: pool workers now run at niceness +10 (issue 35, so a
#: heavy run never starves other sessions' pages), and the second test worker's processes come first; alone it
#: took 122 s.
MANY_DEADLINE_S = float(os.environ.get("DPDASH_E2E_SESSIONS_DEADLINE", str(50 + 25 * N_SESSIONS)))

#: Heavy work of each kind: the page link, how to start it, and the text that shows it finished.
KINDS = {
    "coherence run": dict(
        link="coherence_explorer?coh_n=2000&coh_learner=" + quote("Decision tree") + "&coh_tab="
             + quote("Repeated runs") + "&coh_reps=20&coh_seed={i}",
        done="[data-testid=stMetricLabel]", done_text=DONE_CARD),
    "stratified MST": dict(
        link="stratified_synthesis_viewer?sv_mode=synthetic&sv_source=categorical&sv_synth=mst&sv_n=2000"
             "&sv_seed={i}",
        done="[data-testid=stAlert]", done_text="one model per group (MST)"),  # the fit's verdict
    "leximax quota": dict(
        link="leximax_cohort_picker?lx_tab=" + quote("Citizens' assembly (quotas)")
             + "&lx_q_source=volunteers&lx_q_time=10&lx_q_seed={i}",
        done="[data-testid=stMetricLabel]", done_text="Equal share k/n"),
    "coherence upload": dict(
        link="coherence_explorer?coh_source=upload&coh_learner=" + quote("Decision tree"),
        # the one-line data summary drawn once the file is read (the "Uploaded file:" caption sits inside that
        # folded expander, which the frontend does not draw: waiting for it held this test to its deadline)
        done="[data-testid=stExpander] summary", done_text="Data and groups:"),
}
BUTTONS = {"coherence run": RUN_BUTTON, "stratified MST": "Run MST", "leximax quota": "Compute leximin"}
UPLOAD_FILE = ROOT / "data" / "acs12" / "acs12.csv"

DONE_JS = """([sel, text]) => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  // textContent: the marker may sit in a folded expander, where innerText is empty
  return Array.from(document.querySelectorAll(sel)).some(e => e.textContent.includes(text));
}"""
#: A session that did not finish must at least say why, in a message box, with its script idle.
MESSAGE_JS = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return null;
  const boxes = Array.from(document.querySelectorAll(
      '[data-testid=stAlertContentWarning], [data-testid=stAlertContentInfo], [data-testid=stAlertContentError]'));
  return boxes.length ? boxes.map(b => b.innerText.trim()).join(' | ').slice(0, 300) : null;
}"""


@pytest.mark.slow
def test_many_concurrent_heavy_sessions_all_finish_or_say_why(browser, app_url):
    """N concurrent sessions (default 8, ``DPDASH_E2E_SESSIONS``; N_SESSIONS says why not 20) each finish their heavy
    work or say why. A quarter each: a coherence run, an MST fit in the stratified viewer, a quota leximin on the
    bundled volunteer pool, a coherence upload of the bundled ACS 2012 sample (2,000 rows). No error element; the
    log gate checks the server log. Before issue 26's fix 12 of 20 such sessions crashed at the same instant."""
    t_start = time.perf_counter()
    deadline = t_start + MANY_DEADLINE_S
    kinds = list(KINDS)
    sessions = []
    try:
        for i in range(N_SESSIONS):
            kind = kinds[i % len(kinds)]
            ctx, pg = _new_session(browser)
            sessions.append((kind, ctx, pg))
            # no waiting here: every page loads at once
            pg.goto(f"{app_url}/{KINDS[kind]['link'].format(i=i + 1)}", wait_until="commit")
        outcomes: list[tuple[int, str, str]] = []
        loaded = []
        for n, (kind, _, pg) in enumerate(sessions):  # every page drawn, then its heavy work started at once
            try:
                wait_idle(pg, timeout=max(1_000, (deadline - time.perf_counter()) * 1000))
            except Exception:
                outcomes.append((n, kind, "NEITHER finished NOR said why: the page did not finish loading"))
                continue
            loaded.append(n)
        t_loaded = time.perf_counter()
        for n in loaded:
            kind, _, pg = sessions[n]
            if kind == "coherence upload":
                pg.locator(".st-key-coh_upload input[type=file]").set_input_files(str(UPLOAD_FILE))
            else:
                pg.get_by_role("button", name=BUTTONS[kind]).click()
        for n in loaded:
            kind, _, pg = sessions[n]
            spec = KINDS[kind]
            left_ms = max(1_000, (deadline - time.perf_counter()) * 1000)
            try:
                pg.wait_for_function(DONE_JS, arg=[spec["done"], spec["done_text"]], timeout=left_ms)
                outcomes.append((n, kind, "finished"))
            except Exception:
                said = pg.evaluate(MESSAGE_JS)
                outcomes.append((n, kind, f"said: {said}" if said else "NEITHER finished NOR said why"))
        shown_errors = [(n, kind) for n, (kind, _, pg) in enumerate(sessions)
                        if pg.get_by_test_id("stException").count() or ERROR_TEXT in pg.locator("body").inner_text()]
        print(f"\n{N_SESSIONS} sessions: pages loaded in {t_loaded - t_start:.0f} s, all done in "
              f"{time.perf_counter() - t_start:.0f} s:",
              *(f"  #{n} {kind}: {what}" for n, kind, what in outcomes), sep="\n")
        assert not shown_errors, f"error element in sessions {shown_errors}"
        silent = [o for o in outcomes if o[2].startswith("NEITHER")]
        assert not silent, silent
        # The sessions were heavy for real: most finished their work, not only said they could not.
        assert sum(o[2] == "finished" for o in outcomes) >= N_SESSIONS // 2, outcomes
    finally:
        for _, ctx, _ in sessions:
            ctx.close()
