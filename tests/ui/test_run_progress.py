"""Stop during a long run (issue 31 item 4): the progress line ("36/60 runs, about 20 s left") stayed frozen on the
page and "stopped" was said only on the next click. ``ui.progress`` draws a Stop button under the bar; its click
interrupts the run, and the page run it starts draws no bar and says at once how many runs were finished.

AppTest cannot press Streamlit's own Stop (top right) during a run; tests/e2e/test_stop_e2e.py does, in a browser.
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page():
    import streamlit as st
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException

    from ui.views import coherence_common as cc

    note = cc.stopped_note("sweep")
    if note:
        st.info(note)
    if st.button("Run ε sweep", key="run"):
        bar, step = cc.progress_bar("Sweeping ε…", kind="sweep", total=60)
        if st.session_state.get("stop_after") == 0:
            raise StopException()  # stopped while the first runs were still under way
        for done in range(1, 61):
            step(done, 60)
            if done == st.session_state.get("stop_after"):
                # what Streamlit raises at the bar's next redraw once the Stop under the bar is clicked
                raise StopException()
        bar.empty()
        cc.run_ended()
        st.success("60 runs done")


def _texts(at) -> list[str]:
    return [e.value for kind in ("info", "success", "markdown") for e in at.get(kind)]


def _stop_buttons(at) -> list:
    return [b for b in at.button if b.label == "Stop"]


def test_stop_under_the_bar_clears_the_progress_and_says_stopped_with_the_runs_finished():
    at = AppTest.from_function(_page, default_timeout=30).run()
    at.session_state["stop_after"] = 36
    at.button(key="run").click().run()
    # the interrupted run: its bar stands at 36/60 with the Stop button under it, and nothing says stopped yet
    assert [p.proto.value for p in at.get("progress")] == [60]  # 36/60 as a percentage
    assert "36/60 runs" in at.get("progress")[0].proto.text
    assert len(_stop_buttons(at)) == 1 and not any("Stopped" in t for t in _texts(at))

    _stop_buttons(at)[0].click().run()  # the click's own page run, which Streamlit starts at once
    said = [t for t in _texts(at) if "Stopped" in t]
    assert said == ["Stopped: the last ε sweep was stopped after 36 of 60 runs, so it has no result. Press **Run "
                    "ε sweep** to start it again."], _texts(at)
    assert not at.get("progress") and not _stop_buttons(at)

    at.run()  # said once
    assert not any("Stopped" in t for t in _texts(at)) and not at.get("progress")


def test_a_stop_before_the_first_run_finished_says_none_of_them_was():
    at = AppTest.from_function(_page, default_timeout=30).run()
    at.session_state["stop_after"] = 0
    at.button(key="run").click().run()
    _stop_buttons(at)[0].click().run()
    assert any("was stopped after 0 of 60 runs" in t for t in _texts(at)), _texts(at)
    assert not at.get("progress")


def test_a_finished_run_leaves_no_bar_no_stop_button_and_is_not_called_stopped():
    at = AppTest.from_function(_page, default_timeout=30).run()
    at.button(key="run").click().run()
    assert "60 runs done" in _texts(at)
    assert not at.get("progress") and not _stop_buttons(at)
    at.run()
    assert not any("Stopped" in t for t in _texts(at))


def _two_kinds():
    import streamlit as st
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException

    from ui import progress

    for kind in ("synth", "synth_sweep"):
        if note := progress.stopped(kind):
            st.info(f"{kind} stopped at {note['fraction']:.0%} ({note['text']})")
    if st.session_state.pop("go", False):
        bar = progress.RunProgress("Starting", kind="synth_sweep", key="stop")
        bar.progress(0.25, text="ε = 0.1: 3 of 12 fits done")
        raise StopException()


def test_a_stopped_run_is_said_by_its_own_kind_with_how_far_it_got():
    at = AppTest.from_function(_two_kinds, default_timeout=30).run()
    at.session_state["go"] = True
    at.run()
    at.button(key="stop").click().run()
    assert [i.value for i in at.info] == ["synth_sweep stopped at 25% (ε = 0.1: 3 of 12 fits done)"]
    at.run()
    assert not at.info


def _crash_then_look():
    import streamlit as st

    from ui import progress

    st.markdown(f"crashed: {progress._last_run_crashed()}")
    if st.session_state.pop("boom", False):
        raise RuntimeError("an error inside the run")


def test_the_watcher_tells_a_crash_from_a_stop():
    """The watcher reruns the page after a Stop, but not after an uncaught error, which it would hide."""
    at = AppTest.from_function(_crash_then_look, default_timeout=30).run()
    at.run()
    assert [m.value for m in at.markdown] == ["crashed: False"]
    at.session_state["boom"] = True
    at.run()
    assert at.exception
    at.run()
    assert [m.value for m in at.markdown] == ["crashed: True"]
    at.run()
    assert [m.value for m in at.markdown] == ["crashed: False"]
