"""While one session computes, another session's analytic control never stalls (issue 35 item 2).

One browser session starts the coherence explorer's heaviest kind of run (random forest, R = 100, on
:data:`HEAVY_N` generated people: its repetitions run in worker processes on both cores); a second session moves the
epsilon calculator's ε slider. Every move must be redrawn (the script has finished and the charts' SVG has changed)
within :data:`STALL_S` seconds and the second session's connection must stay up.

A move only counts as measured *beside* the heavy run when the heavy session's progress bar showed repetitions
running (below 100 %) both before the key was pressed and after the redraw. The slider is moved until
:data:`MOVES` moves were measured that way; if the heavy run ends first (a fast or idle machine: at 5,000 people
R = 100 took about 12 s on an idle 2-core box, less than opening the second page and moving the slider five times,
so the old test's guard fired), the heavy session starts another run with the next seed, at most
:data:`HEAVY_RUNS` runs. The run size comes from CPU seconds per repetition measured on the reference box (random
forest, 50 trees: 0.24 s at 5,000 people, 0.39 s at 20,000, 1.06 s at 50,000): at 20,000 people (the page's
default) R = 100 is about 40 CPU seconds, so about 20 s on an idle 2-core box and much longer on a busy one, while
the moves take about 5 s on an idle box; the epsilon calculator is opened before the heavy run starts, so the whole
run is left for the moves. A larger population makes the page itself slow to open on a busy box (30,000 people: 30 s
to open and 42 s to the first repetition at load 30), which the suite's time cannot afford.

The suite runs with ``pytest -n 2`` on 2 cores, so another test worker may be computing too. The bound asserted here
is the issue's stall bound (5 s a move). The issue's p95 ≤ 1 s with three heavy sessions is a benchmark target,
not asserted here: on the 2-core box at 1-minute load 6–30 (a full suite running beside), the moves made beside
one heavy run took 0.97–3.64 s (medians 1.5–2.3 s over five runs of this test, 2026-12-02), so the 5 s bound
holds with a margin of 1.4× at the worst move seen, and a p95 bound of 1 s would fail on this box for load the
test does not control. The test prints the latencies; bench/bench_office.py and the README have p50/p95 with three
heavy sessions.
"""

from __future__ import annotations

import os
import statistics
import time
from urllib.parse import quote

from tests.e2e.helpers import open_page
from tests.e2e.test_sessions import RUN_BUTTON, _no_error, _wait_running

#: The issue's bound for a stalled control.
STALL_S = 5.0
#: Moves that must be measured beside a running heavy run.
MOVES = 5
#: Moves at most (a move that is not beside the heavy run is still held to STALL_S).
MAX_MOVES = 20
#: Heavy runs at most (a run that ends before MOVES moves were measured beside it is followed by another).
HEAVY_RUNS = 3
#: People in the heavy run (see the module docstring for the sizing; the variable is for trying the restarts).
HEAVY_N = int(os.environ.get("DPDASH_E2E_OFFICE_N", "20000"))
HEAVY_SEED = 11
#: Repetitions of the heavy run (the slider's top; the variable is for trying the restarts).
HEAVY_REPS = int(os.environ.get("DPDASH_E2E_OFFICE_REPS", "100"))
#: Pause between moves: a person reading the redrawn chart.
PAUSE_MS = 300


def heavy_link(seed: int) -> str:
    return (f"coherence_explorer?coh_n={HEAVY_N}&coh_seed={seed}&coh_tab=" + quote("Repeated runs")
            + f"&coh_reps={HEAVY_REPS}")


CHANGED_JS = """(before) => {
  const app = document.querySelector("[data-testid='stApp']");
  if (app.getAttribute('data-test-connection-state') !== 'CONNECTED') return false;
  if (app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  const paths = Array.from(document.querySelectorAll("[data-testid='stPlotlyChart'] svg path"));
  let h = 0;
  for (const p of paths) {
    const d = p.getAttribute('d') || '';
    for (let i = 0; i < d.length; i += 7) h = (h * 31 + d.charCodeAt(i)) | 0;
  }
  const sig = h + ':' + paths.length;
  return before === null ? sig : (sig !== before ? sig : false);
}"""

#: The heavy session is computing repetitions: its run's progress bar is there and below 100 % (at 100 % the page
#: computes the split-noise floor, then the bar goes).
BUSY_JS = """() => {
  const b = document.querySelector('[data-testid=stProgress] [role=progressbar]');
  return !!b && Number(b.getAttribute('aria-valuenow')) < 100;
}"""


def _start_heavy(heavy, app_url: str, seed: int) -> None:
    open_page(heavy, f"{app_url}/{heavy_link(seed)}", timeout=420_000)
    _no_error(heavy)
    heavy.get_by_role("button", name=RUN_BUTTON).click()
    _wait_running(heavy, f"heavy (seed {seed})")


def test_a_control_never_stalls_while_another_session_computes(browser, app_url):
    heavy_ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        # the page to move first (its first load is not what is measured), then the heavy run
        pg = ctx.new_page()
        pg.set_default_timeout(120_000)
        open_page(pg, f"{app_url}/epsilon_calculator", timeout=120_000)
        slider = pg.locator(".st-key-eps_epsilon input[type='range']")
        heavy = heavy_ctx.new_page()
        heavy.set_default_timeout(420_000)
        _start_heavy(heavy, app_url, HEAVY_SEED)
        runs = 1
        beside: list[float] = []   # redraw times of the moves made while the heavy run was computing
        other: list[float] = []    # the rest (the heavy run between repetitions, finishing or restarting)
        for i in range(MAX_MOVES):
            if len(beside) >= MOVES:
                break
            if not heavy.evaluate(BUSY_JS):
                if runs >= HEAVY_RUNS:
                    break
                _no_error(heavy)
                runs += 1
                _start_heavy(heavy, app_url, HEAVY_SEED + runs - 1)
            slider.focus()
            before = pg.evaluate(f"({CHANGED_JS})(null)")
            assert before, "the epsilon calculator is not idle and connected before the move"
            busy_before = heavy.evaluate(BUSY_JS)
            t0 = time.monotonic()
            slider.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
            try:
                pg.wait_for_function(CHANGED_JS, arg=before, polling="raf", timeout=STALL_S * 1000)
            except Exception as exc:
                state = pg.evaluate("() => [location.search, document.querySelector(\"[data-testid='stApp']\")"
                                    ".getAttribute('data-test-script-state')]")
                raise AssertionError(f"move {i + 1}: not redrawn within {STALL_S:g} s while another session "
                                     f"computes (earlier moves beside the heavy run: "
                                     f"{[f'{t:.2f}' for t in beside]} s; link and script state now: {state})") from exc
            took = time.monotonic() - t0
            (beside if busy_before and heavy.evaluate(BUSY_JS) else other).append(took)
            pg.wait_for_timeout(PAUSE_MS)
        _no_error(pg)
        _no_error(heavy)
        print(f"ε slider redraws beside a heavy run ({runs} run(s) of {HEAVY_N:,} people): "
              f"{', '.join(f'{t:.2f}' for t in beside)} s (median {statistics.median(beside or [0]):.2f} s); "
              f"other moves: {', '.join(f'{t:.2f}' for t in other) or 'none'}")
        # else nothing was measured beside a running heavy run (the old test's guard, now reached only if
        # HEAVY_RUNS runs in a row ended before the moves did)
        assert len(beside) >= MOVES, (f"only {len(beside)} of {MOVES} moves were made while a heavy run computed "
                                      f"({runs} heavy run(s) of {HEAVY_N:,} people ended first; other moves: "
                                      f"{[f'{t:.2f}' for t in other]} s)")
        assert max(beside) <= STALL_S
    finally:
        ctx.close()
        heavy_ctx.close()
