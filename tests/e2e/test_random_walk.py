"""A seeded random walk over every page in Chromium (issue 22 item 3): the browser as a test bed.

Each step picks one visible control of any kind (select, multiselect, radio, segmented control or pills, number
box, text box, text area, slider key, toggle or checkbox, data-editor cell, tab, expander, preset or run button,
file upload of a bundled data file) and moves it to a random value, waits for the run to end, then asserts: no
Streamlit error element, every metric shown finite, and nothing bad in the server log since the last step (the
log gate's rule, ``tests/e2e/conftest.py``; the gate checks the whole test once more at its end).

AppTest runs whole-script reruns only, so fragment reruns and the frontend's own state (a closed tab, a widget
that loses its value) are seen here and nowhere else.

Steps per page: ``DPDASH_WALK_STEPS`` (40 in ``make test``; ``make walk-long`` runs 300). Seed:
``DPDASH_WALK_SEED``, else a fresh random one, printed at the start and named in every failure, so
``make walk-long WALK_SEED=<seed>`` replays the same choices (the page's timing may still differ).
``DPDASH_WALK_DEBUG=1`` prints the HTML of each control the walk had to skip.
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.attack.pages import PAGES
from tests.e2e.conftest import _SHARED, ERROR_JS, ROOT, bad_log_lines
from tests.e2e.helpers import open_page, wait_idle

pytestmark = pytest.mark.slow

STEPS = int(os.environ.get("DPDASH_WALK_STEPS", "40"))
SEED = int(os.environ.get("DPDASH_WALK_SEED") or random.SystemRandom().randrange(1, 2**31))
#: A step's run may take this long (a run button starts real work: a simulation, a synthesizer fit).
STEP_TIMEOUT_MS = 180_000
#: A control that cannot be used within this time (covered, moved, detached by a rerun) is skipped.
ACTION_TIMEOUT_MS = 4_000
#: Bundled files for the upload widgets: a real table, a small one, and a file without a header row.
UPLOADS = (ROOT / "data" / "acs12" / "acs12.csv", ROOT / "data" / "deployments.csv",
           ROOT / "data" / "adult" / "adult.test")

#: Each kind of control: its selector (the element Streamlit draws around it) and how often the walk picks it.
KINDS = {
    "select": ("[data-testid=stSelectbox]", 6),
    "multiselect": ("[data-testid=stMultiSelect]", 3),
    "radio": ("[data-testid=stRadio]", 5),
    "segmented": ("[data-testid=stButtonGroup]", 5),
    "number": ("[data-testid=stNumberInput]", 6),
    "text": ("[data-testid=stTextInput]", 2),
    "textarea": ("[data-testid=stTextArea]", 1),
    "slider": ("[data-testid=stSlider]", 6),
    "toggle": ("[data-testid=stCheckbox], [data-testid=stToggle]", 4),
    "editor": ("[data-testid=stDataFrame]", 2),
    "tab": ("[data-testid=stTab]", 4),
    "expander": ("[data-testid=stExpander] summary", 1),
    "button": ("[data-testid=stButton]", 2),
    "upload": ("[data-testid=stFileUploader]", 1),
}
#: Buttons that start long work: pressed rarely, so 40 steps stay under two minutes on a busy machine.
RUN_BUTTON = re.compile(r"run|simulat|compute|fit|generat|draw|start|synthes|audit|train|sweep|evaluat", re.I)

#: Tags every visible control in the main area and the sidebar with data-walk-id; returns [id, kind, label].
_TAG_JS = """(kinds) => {
  document.querySelectorAll('[data-walk-id]').forEach(e => e.removeAttribute('data-walk-id'));
  const out = [];
  let n = 0;
  for (const [kind, sel] of kinds) {
    for (const e of document.querySelectorAll(sel)) {
      if (!e.closest('[data-testid=stMain], [data-testid=stSidebar]')) continue;
      const r = e.getBoundingClientRect();
      if (!e.checkVisibility({visibilityProperty: true}) || r.width < 2 || r.height < 2) continue;
      if (e.closest('[aria-disabled=true], [disabled]') || e.querySelector('input:disabled, button:disabled')) continue;
      if (kind === 'button' && !e.querySelector('button')) continue;
      const id = String(n++);
      e.setAttribute('data-walk-id', id);
      const label = (e.querySelector('[data-testid=stWidgetLabel]') || e).innerText.trim().split('\\n')[0];
      out.push([id, kind, label.slice(0, 60)]);
    }
  }
  return out;
}"""
#: Every metric's shown value.
_METRICS_JS = """() => [...document.querySelectorAll('[data-testid=stMetric]')]
  .filter(m => m.getClientRects().length)
  .map(m => [(m.querySelector('[data-testid=stMetricLabel]') || m).innerText.trim(),
             (m.querySelector('[data-testid=stMetricValue]') || m).innerText.trim()])"""
_NUMBER = re.compile(r"[-+−]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+−]?\.\d+(?:[eE][-+]?\d+)?")
_NOT_FINITE = re.compile(r"\b(nan|inf|infinity)\b", re.I)


def not_finite(value: str) -> bool:
    """Whether a shown metric value says NaN or infinity, or holds a number that is not finite.

    >>> not_finite("± 2.996"), not_finite("1.2e-7"), not_finite("nan"), not_finite("−inf"), not_finite("1e999")
    (False, False, True, True, True)
    """
    if _NOT_FINITE.search(value):
        return True
    for token in _NUMBER.findall(value):
        try:
            x = float(token.replace(",", "").replace("−", "-"))
        except ValueError:
            continue
        if not math.isfinite(x):
            return True
    return False


def _random_number(rng: random.Random, current: str) -> str:
    try:
        x = float(current)
    except ValueError:
        x = 1.0
    choices = [x * rng.choice([0.5, 0.9, 1.1, 2, 10, 0.1]), x + rng.choice([-1, 1]), 0, 1, -1, 1e-12, 1e12,
               rng.uniform(0, 1), rng.randint(1, 10_000), x]
    v = rng.choice(choices)
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else f"{v:.6g}"


TEXTS = ("a", "age", "sex == 'F'", "http://127.0.0.1:9/p", "**bold** [x](javascript:alert(1))", "", " ", "0.5",
         "1, 2, 3", "Ωmega 中文", "a" * 300, "x\ty")


def _act(page, rng: random.Random, ident: str, kind: str) -> str:
    """Do one random thing to the control tagged ``ident``; say what was done (for the replay log)."""
    el = page.locator(f"[data-walk-id='{ident}']").first
    el.scroll_into_view_if_needed(timeout=ACTION_TIMEOUT_MS)
    if kind in ("select", "multiselect"):
        if kind == "multiselect" and rng.random() < 0.3:
            el.locator("input").first.click()
            page.keyboard.press("Backspace")
            page.keyboard.press("Escape")
            return "removed the last choice"
        el.locator("input").first.click()
        options = page.locator("[role=option]")
        try:
            options.first.wait_for(state="visible", timeout=3_000)
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
            return "no options"
        n = options.count()
        i = rng.randrange(n)
        text = options.nth(i).inner_text().strip()
        options.nth(i).click()
        if kind == "multiselect":
            page.keyboard.press("Escape")
        return f"chose {text[:40]!r}"
    if kind == "radio":
        labels = el.locator("label")
        i = rng.randrange(labels.count())
        text = labels.nth(i).inner_text().strip()
        labels.nth(i).click()
        return f"chose {text[:40]!r}"
    if kind == "segmented":
        buttons = el.locator("button")
        i = rng.randrange(buttons.count())
        text = buttons.nth(i).inner_text().strip()
        buttons.nth(i).click()
        return f"clicked {text[:40]!r}"
    if kind == "number":
        box = el.locator("input").first
        if rng.random() < 0.25 and el.get_by_test_id("stNumberInputStepUp").count():
            which = rng.choice(["stNumberInputStepUp", "stNumberInputStepDown"])
            button = el.get_by_test_id(which).first
            if button.is_visible() and button.is_enabled():
                button.click()
                return which
        value = _random_number(rng, box.input_value())
        box.fill(value)
        box.press("Enter")
        return f"typed {value}"
    if kind in ("text", "textarea"):
        box = el.locator("textarea" if kind == "textarea" else "input").first
        value = rng.choice(TEXTS)
        box.fill(value)
        box.press("Control+Enter" if kind == "textarea" else "Enter")
        return f"typed {value[:40]!r}"
    if kind == "slider":
        thumbs = el.locator("input[type=range]")
        thumb = thumbs.nth(rng.randrange(max(thumbs.count(), 1)))
        key = rng.choice(["ArrowRight", "ArrowLeft", "PageUp", "PageDown", "Home", "End"])
        times = 1 if key in ("Home", "End") else rng.randint(1, 5)
        thumb.focus()
        for _ in range(times):
            thumb.press(key)
        return f"{key} × {times}"
    if kind == "toggle":
        el.locator("label").first.click()
        return "flipped"
    if kind == "editor":
        box = el.bounding_box()
        if not box:
            return "not on screen"
        # a cell of the first or second data row (the header is ~35 px, rows ~35 px), random column
        x = box["x"] + rng.uniform(0.1, 0.9) * box["width"]
        y = box["y"] + min(box["height"] - 5, rng.choice([52, 87]))
        page.mouse.click(x, y)
        value = rng.choice(["0", "1", "-1", "0.5", "1e9", "abc", "", "http://127.0.0.1:9/p"])
        page.keyboard.type(value) if value else page.keyboard.press("Delete")
        page.keyboard.press("Enter")
        page.keyboard.press("Escape")
        return f"cell at ({x - box['x']:.0f}, {y - box['y']:.0f}) ← {value!r}"
    if kind == "tab":
        el.click()
        return "opened"
    if kind == "expander":
        el.click()
        return "opened or closed"
    if kind == "button":
        el.locator("button").first.click()
        return "pressed"
    if kind == "upload":
        path = rng.choice(UPLOADS)
        el.locator("input[type=file]").first.set_input_files(str(path))
        return f"uploaded {path.name}"
    raise AssertionError(kind)


def _choose(rng: random.Random, controls: list[list[str]]) -> list[str]:
    weights = []
    for _, kind, label in controls:
        w = KINDS[kind][1]
        if kind == "button" and RUN_BUTTON.search(label):
            w = 0.3
        weights.append(w / max(1, sum(c[1] == kind for c in controls)))  # each kind as likely, whatever its count
    return rng.choices(controls, weights)[0]


def _read_log(offset: int) -> tuple[str, int]:
    path: Path = _SHARED["app_log"]
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read()
    return data.decode("utf-8", "replace"), offset + len(data)


def walk(page, url: str, path: str, steps: int, seed: int) -> None:
    """Run the walk on one page; fail with the seed, the step and the last actions on the first problem."""
    rng = random.Random(f"{seed}:{path}")
    history: list[str] = []
    offset = _SHARED["app_log"].stat().st_size
    open_page(page, f"{url}/{path}", timeout=120_000)

    def fail(what: str) -> None:
        recent = "\n  ".join(history[-12:])
        pytest.fail(f"random walk on /{path}, seed {seed} (replay: DPDASH_WALK_SEED={seed}), step {len(history)}: "
                    f"{what}\nlast actions:\n  {recent}", pytrace=False)

    if page.evaluate(ERROR_JS):
        text, offset = _read_log(offset)
        fail("the page shows an error element on opening\n" + "\n".join(bad_log_lines(text)[:2]))
    for step in range(steps):
        controls = page.evaluate(_TAG_JS, [[k, sel] for k, (sel, _) in KINDS.items()])
        if not controls:
            fail("no control on the page")
        ident, kind, label = _choose(rng, controls)
        t0 = time.monotonic()
        try:
            done = _act(page, rng, ident, kind)
        except (PlaywrightTimeout, PlaywrightError) as exc:  # the control moved or vanished mid-step: skip it
            why = [ln.strip() for ln in str(exc).splitlines() if "intercepts" in ln or "not visible" in ln
                   or "detached" in ln or "not enabled" in ln]
            done = f"skipped ({type(exc).__name__}: {(why or str(exc).splitlines())[-1][:160]})"
            page.keyboard.press("Escape")
            if os.environ.get("DPDASH_WALK_DEBUG"):  # what the skipped control looked like
                with contextlib.suppress(PlaywrightError):
                    html = page.locator(f"[data-walk-id='{ident}']").first.evaluate("e => e.outerHTML.slice(0, 3000)")
                    print(f"--- step {step + 1} {kind} {label!r}:\n{html}")
        history.append(f"{step + 1}. {kind} {label!r}: {done}")
        try:
            wait_idle(page, STEP_TIMEOUT_MS)
        except PlaywrightTimeout:
            fail(f"the page did not finish its run within {STEP_TIMEOUT_MS / 1000:.0f} s")
        history[-1] += f" [{time.monotonic() - t0:.1f} s]"
        if page.evaluate(ERROR_JS):
            text, offset = _read_log(offset)
            fail("the page shows an error element\n" + "\n".join(bad_log_lines(text)[:2]))
        text, offset = _read_log(offset)
        if bad := bad_log_lines(text):
            fail("the server logged:\n" + bad[0])
        if bad_metrics := [f"{lab}: {val}" for lab, val in page.evaluate(_METRICS_JS) if not_finite(val)]:
            fail(f"metrics not finite: {bad_metrics[:5]}")
    print(f"random walk /{path}: {steps} steps, seed {seed}\n  " + "\n  ".join(history))


def _path(page: str) -> str:
    return "" if page == "app.py" else page.split("/")[-1][:-3]


@pytest.mark.parametrize("script", PAGES, ids=[_path(p) or "home" for p in PAGES])
def test_random_walk(page, app_url, script):
    print(f"random walk seed {SEED} (replay: DPDASH_WALK_SEED={SEED}), {STEPS} steps per page")
    page.set_default_timeout(ACTION_TIMEOUT_MS)
    walk(page, app_url, _path(script), STEPS, SEED)
