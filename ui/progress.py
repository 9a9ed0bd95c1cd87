"""A long run's progress bar and its Stop, shared by the pages' runs behind a button (issue 31 item 4).

Stop pressed during a run used to leave "36/60 runs, about 20 s left" frozen on the page until the next click:
Streamlit ends a stopped script at its next redraw, after which that run can draw nothing. So the run is noted in
the session (its kind, the runs done) and the page learns of the stop in a new run, at once, either way:

- the **Stop** button drawn under the bar: a click interrupts the run and reruns the page, which finds the run
  noted but never ended;
- Streamlit's own Stop (top right): a small watcher fragment drawn with the bar ticks every
  :data:`WATCH_SECONDS`. A fragment's tick waits for the page's run to end, so a tick that still finds the run
  noted means it was stopped; the watcher then reruns the page.

Either way the rerun draws no bar, and the tab says "Stopped … after 36 of 60 runs" (:func:`stopped`) in its
place. A run that ends calls :func:`run_ended`: the note goes and the watcher's timer is cancelled. A run ended by
an uncaught error is not taken for a stop: the watcher then drops the note without rerunning, so the error stays.

Streamlit can end a stopped run only at its next redraw: a Stop while the first runs are still starting (worker
processes) takes effect when the bar next moves.
"""

from __future__ import annotations

import secrets

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

#: The run under way: {kind, done, total, fraction, text, token, watching, fragment}; left behind when the run is
#: stopped.
RUNNING = "_run_under_way"
#: How often the watcher looks for a run stopped by Streamlit's own Stop (seconds).
WATCH_SECONDS = 1.0


def _cancel_timer(fragment_id: str | None) -> None:
    """Tell the browser to stop rerunning the watcher (Streamlit cancels a fragment's timer only at the next full
    run of the page, so a finished run's watcher would otherwise tick, and rerun, every second until then)."""
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None or not fragment_id:
        return
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = ForwardMsg()
    msg.stop_auto_rerun.fragment_ids.append(fragment_id)
    ctx.enqueue(msg)


def _fragment_id() -> str | None:
    """The id of the fragment running now (None outside one, or if this Streamlit does not say)."""
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

        return ThreadState.get().fragment_id
    except Exception:  # noqa: BLE001 - an internal of Streamlit: without it the tick below cancels the timer
        ctx = get_script_run_ctx(suppress_warning=True)
        ids = getattr(ctx, "fragment_ids_this_run", None) if ctx is not None else None
        return ids[0] if ids else None


@st.fragment(run_every=WATCH_SECONDS)
def _watch() -> None:
    """Drawn with the bar. Its first call (inside the run) only notes its id; a later call is a tick, which runs
    only once the page's run has ended: if the run is still noted, it never ended, so it was stopped."""
    here = _fragment_id()
    r = st.session_state.get(RUNNING)
    if r is not None and not r.get("watching"):
        r["watching"], r["fragment"] = True, here
        return
    if r is None or r.get("fragment") not in (None, here):
        _cancel_timer(here)  # the run ended (or another run began): nothing to watch
        return
    if _last_run_crashed():
        # an uncaught error ended the run, not a Stop: no "Stopped" note, and no rerun that would hide the error
        run_ended()
        return
    st.rerun(scope="app")  # the page says "stopped" and draws no bar


def _last_run_crashed() -> bool:
    """Whether the page's last run ended with an uncaught error (Streamlit notes it in the session after every
    run; a stopped run counts as one without errors)."""
    try:
        from streamlit.runtime.state import SCRIPT_RUN_WITHOUT_ERRORS_KEY

        return st.session_state.get(SCRIPT_RUN_WITHOUT_ERRORS_KEY, True) is False
    except Exception:  # noqa: BLE001 - an internal of Streamlit: without it a crash is taken for a Stop
        return False


class RunProgress:
    """One run's progress bar with a Stop button under it, in one slot (:meth:`empty` removes both).

    ``kind`` names the run for :func:`stopped` ("sweep", "synth", …); ``key`` is the Stop button's widget key;
    ``total``, the runs to do when known (a stop before the first one is then "after 0 of 60 runs").
    Draw it outside a fragment: a click in a fragment reruns only the fragment, which waits for the run to end.
    """

    def __init__(self, text: str, *, kind: str, key: str, total: int | None = None, container=None):
        self.kind = kind
        self._token = secrets.token_hex(8)
        st.session_state[RUNNING] = {"kind": kind, "done": 0, "total": total, "fraction": 0.0, "text": "",
                                     "token": self._token}
        where = container or st.container()
        self._slot = where.empty()
        box = self._slot.container()
        self._bar = box.progress(0.0, text=text)
        box.button("Stop", key=key, icon=":material/stop_circle:",
                   help="Stop this run now. What it has computed so far is discarded.")
        # beside the slot, not in it: a tick queued during the run lands after :meth:`empty` turned the slot into
        # an empty element, and a fragment drawn inside it would then write below an element (the browser's page
        # breaks: "'setIn' cannot be called on an ElementNode")
        with where:
            _watch()

    def _note(self, **changes) -> None:
        r = st.session_state.get(RUNNING)
        if r is not None and r.get("token") == self._token:  # not a run that a newer page run already said stopped
            r.update(changes)

    def progress(self, value: float, text: str | None = None) -> None:
        """Move the bar (as ``st.progress``); a stopped run ends here."""
        value = min(max(float(value), 0.0), 1.0)
        self._bar.progress(value, text=text)
        self._note(fraction=value, text=text or "")

    def step(self, done: int, total: int, text: str | None = None) -> None:
        """``done`` of ``total`` runs finished: move the bar, then note the count (the bar's redraw is where a
        stopped run ends, so the note holds the runs finished as last shown)."""
        fraction = min(max(done / total, 0.0), 1.0) if total else 0.0
        self._bar.progress(fraction, text=text)
        self._note(done=int(done), total=int(total), fraction=fraction, text=text or "")

    def empty(self) -> None:
        """Remove the bar and its Stop button."""
        self._slot.empty()


def run_ended() -> None:
    """The run came to its end (a result or a message): nothing was stopped, and the watcher stops ticking."""
    r = st.session_state.pop(RUNNING, None)
    if r is not None:
        _cancel_timer(r.get("fragment"))


def stopped(kind: str) -> dict | None:
    """Once, after a run of ``kind`` that never ended: its note ({done, total, fraction, text} as its bar last
    showed them), else None."""
    r = st.session_state.get(RUNNING)
    if not r or r.get("kind") != kind:
        return None
    st.session_state.pop(RUNNING, None)
    return {k: r.get(k) for k in ("done", "total", "fraction", "text")}


def runs_words(note: dict) -> str:
    """" after 36 of 60 runs" from a note of :func:`stopped` ("" when no run had been counted yet)."""
    total = note.get("total")
    return f" after {note['done']:,} of {total:,} runs" if total else ""
