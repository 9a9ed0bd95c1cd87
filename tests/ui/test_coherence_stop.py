"""Stop during a coherence run (issue 31): the progress text "36/60 runs, about 20 s left" stayed frozen on the
page. Streamlit's Stop ends the script at the bar's next redraw; the next run says the run was stopped, once."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page():
    import streamlit as st
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException

    from ui.views import coherence_common as cc

    note = cc.stopped_note("sweep")
    st.markdown(note or "no note")
    if st.session_state.get("press_stop"):
        st.session_state["press_stop"] = False
        bar, step = cc.progress_bar("Sweeping ε…", kind="sweep")
        step(36, 60)
        raise StopException()  # what Streamlit raises at the next redraw after the user presses Stop
    if st.session_state.get("finish"):
        st.session_state["finish"] = False
        bar, step = cc.progress_bar("Sweeping ε…", kind="sweep")
        step(60, 60)
        bar.empty()
        cc.run_ended()


def test_a_stopped_run_is_said_stopped_once_and_a_finished_one_not():
    at = AppTest.from_function(_page, default_timeout=30)
    at.session_state["press_stop"] = True
    at.run()
    at.run()
    said = [m.value for m in at.markdown]
    assert any("Stopped" in m and "after 36 of 60 runs" in m and "Run ε sweep" in m for m in said), said
    at.run()
    assert [m.value for m in at.markdown] == ["no note"]  # once
    at.session_state["finish"] = True
    at.run()
    at.run()
    assert [m.value for m in at.markdown] == ["no note"]  # a run that ended is not called stopped
