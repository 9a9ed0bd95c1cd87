"""Issue 25: a setting changed on a sampling-designer tab stays in the link and in the session while another tab
is open, and the tab shows it again when reopened.

Only the open tab draws its outputs (ui/tabs.py); a control Streamlit does not draw in a run loses its URL parameter
and its Session State value (AppTest shows that removal, though not the browser's writing a changed value). The
stratified tab's toggles and seed and the Cluster tab's Theorem 9 sliders sat among the outputs and were drawn only
while their tab was open, so a link copied on another tab lost them.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

PAGE = str(ROOT / "pages" / "sampling_designer.py")
SIMPLE, RANDOM, CLUSTER, STRATA = ("Simple random samples", "Random sample size", "Cluster sampling",
                                   "Stratified sampling & allocation")

#: (tab, widget kind, key, a value other than the default, how the link writes it)
CHANGES = [
    (STRATA, "toggle", "sd_outside", True, "true"),
    (STRATA, "toggle", "sd_logy", True, "true"),
    (STRATA, "number_input", "sd_draw_seed", 17, "17"),
    (STRATA, "number_input", "sd_mmin", 2, "2"),
    (CLUSTER, "slider", "sd_ec_share", 0.5, "0.5"),
    (CLUSTER, "slider", "sd_et", 4.0, "4.0"),
]


def _link(at: AppTest, key: str) -> str | None:
    value = dict(at.query_params).get(key)
    return value[-1] if isinstance(value, list) else value


def _open(at: AppTest, tab: str) -> AppTest:
    # through the URL: AppTest re-sends the tab widget's last value, which outranks a Session State write
    at.query_params["sd_tab"] = tab
    return at.run()


@pytest.mark.parametrize(("tab", "kind", "key", "value", "written"), CHANGES, ids=[c[2] for c in CHANGES])
def test_setting_changed_on_a_tab_stays_in_link_while_another_tab_is_open(tab, kind, key, value, written):
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["sd_tab"] = tab
    at.run()
    assert not at.exception
    # the browser writes a bound control's new value into the URL (AppTest does not): do it as the browser would
    at.query_params[key] = written
    getattr(at, kind)(key=key).set_value(value).run()
    assert not at.exception
    assert _link(at, key) == written
    other = RANDOM   # uses the global n
    _open(at, other)
    assert not at.exception
    # a global control moved on the other tab: the closed tab's setting must survive this run too
    at.text_input(key="sd_n").set_value("20000").run()
    assert not at.exception
    got = _link(at, key)
    assert got is not None, f"{key} left the link while {other!r} was open"
    assert (got == written) if kind == "toggle" else float(got) == float(written)
    assert at.session_state[key] == value
    _open(at, tab)
    assert not at.exception
    assert getattr(at, kind)(key=key).value == value


def test_a_copied_link_with_closed_tab_settings_restores_them():
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params.update({"sd_outside": "true", "sd_logy": "true", "sd_draw_seed": "17", "sd_et": "4.0"})
    at.run()   # opened on the Simple tab: the Stratified and Cluster tabs are closed
    assert not at.exception
    # every one of them is a setting the page uses: the link notice names none
    assert not " ".join(t.value for t in at.toast), [t.value for t in at.toast]
    for key in ("sd_outside", "sd_logy", "sd_draw_seed", "sd_et"):
        assert _link(at, key) is not None, key
    _open(at, STRATA)
    assert at.toggle(key="sd_outside").value is True and at.toggle(key="sd_logy").value is True
    assert at.number_input(key="sd_draw_seed").value == 17
    _open(at, CLUSTER)
    assert at.slider(key="sd_et").value == 4.0


def test_cluster_design_controls_stay_while_the_sizes_are_unusable():
    # a size list that does not parse gives no design: ℓ, r_w and the Theorem 9 sliders are greyed out, not
    # dropped, so the link keeps them and its notice does not call them unused
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params.update({"sd_tab": CLUSTER, "sd_size_src": "list", "sd_size_list": "3, x", "sd_ell": "4",
                            "sd_et": "4.0"})
    at.run()
    assert not at.exception
    assert any("Cluster sizes not understood" in w.value for w in at.warning)
    assert at.number_input(key="sd_ell").value == 4 and at.number_input(key="sd_ell").disabled
    assert at.slider(key="sd_et").value == 4.0 and at.slider(key="sd_et").disabled
    assert _link(at, "sd_ell") == "4" and _link(at, "sd_et") is not None
    assert not " ".join(t.value for t in at.toast), [t.value for t in at.toast]
