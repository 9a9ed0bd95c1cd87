"""The take-away artefacts (issue 15): report parts present and escaped, privacy statement numbers, settings round
trip including unknown and invalid keys, and the bounded reading of uploaded settings files.

Expected numbers are written out by hand from the formulas in the issue (e^ε/(1+e^ε) at a 50% prior; the
advantage (e^ε − 1 + 2δ)/(e^ε + 1)), not taken from the code under test.
"""

import datetime as dt
import json
import re

import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

from ui.dossier import (MAX_SETTINGS_BYTES, Headline, PageSummary, SettingsError, parse_settings, read_settings,
                        privacy_statement, report_html, settings_json, view_link)

EVIL = "<script>alert(1)</script> & \"quotes\""


def _summary(**kw):
    base = dict(page="epsilon_calculator", title="Epsilon calculator", question=f"How much noise? {EVIL}",
                params={"ε": "0.3", f"p {EVIL}": EVIL},
                headlines=[Headline("Noise scale", "3.33", "95% of draws within ± 10"), Headline(EVIL, EVIL, EVIL)],
                verdicts=["A 10% random sample turns ε = 1 into ε′ = 0.16.", EVIL],
                figures=[(f"Noise scale against ε {EVIL}", go.Figure(go.Scatter(x=[1, 2], y=[2, 1])))],
                sources=["seed 002, Theorem 3.5", EVIL], epsilon=0.3, delta=1e-6, seed=7,
                script="print('hi')")
    base.update(kw)
    return PageSummary(**base)


SVG = '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect/></svg>'


def test_report_has_every_part_and_escapes_all_text():
    when = dt.datetime(2026, 11, 24, 12, 30, tzinfo=dt.timezone.utc)
    doc = report_html(_summary(), link="http://h/epsilon_calculator?eps=0.3&x=<b>", when=when, svgs=[SVG],
                      version="v-test").decode()
    for part in ('id="question"', 'id="answer"', 'id="parameters"', 'id="figures"', 'id="privacy"',
                 'id="sources"', 'id="meta"'):
        assert part in doc
    assert "How much noise?" in doc and "Noise scale" in doc and "95% of draws within ± 10" in doc
    assert "ε′ = 0.16" in doc and "seed 002, Theorem 3.5" in doc and "v-test" in doc
    assert "2026-11-24 12:30 UTC" in doc and "Random seed: 7" in doc
    assert 'href="http://h/epsilon_calculator?eps=0.3&amp;x=&lt;b&gt;"' in doc
    assert "<script" not in doc.lower() and "&lt;script&gt;alert(1)&lt;/script&gt;" in doc
    assert "&quot;quotes&quot;" in doc
    # one inline SVG per figure, without its XML prolog; no plotly.js, no external resources
    assert doc.count("<svg ") == 1 and "<?xml" not in doc and "plotly" not in doc.lower()
    assert not re.search(r"""(src|href)=["']?(https?:)?//(?!h/)""", doc)


def test_privacy_statement_numbers():
    text = " ".join(privacy_statement(1.0, 0.0))
    # e / (1 + e) = 0.731 at ε = 1; advantage (e − 1)/(e + 1) = 0.462
    assert "73.1%" in text and "46.2%" in text and "δ" not in text
    text = " ".join(privacy_statement(0.3, 1e-6))
    # e^0.3 / (1 + e^0.3) = 0.5744; advantage (e^0.3 − 1 + 2e-6)/(e^0.3 + 1) = 0.1489
    assert "57.4%" in text and "14.9%" in text and "δ = 1e-06" in text
    assert "no privacy promise" in " ".join(privacy_statement(None))


def test_view_link_and_settings_round_trip():
    settings = {"eps_epsilon": "0.3", "eps_tab": "budget", "multi": ["a", "b"]}
    assert view_link("http://h:8501/", "epsilon_calculator", settings) == \
        "http://h:8501/epsilon_calculator?eps_epsilon=0.3&eps_tab=budget&multi=a&multi=b"
    assert view_link("http://h:8501", "app", {}) == "http://h:8501"
    data = settings_json("epsilon_calculator", settings, version="v1")
    assert json.loads(data) == {"page": "epsilon_calculator", "settings": settings, "version": "v1"}
    page, back = parse_settings(data)
    assert page == "epsilon_calculator"
    assert back == {"eps_epsilon": ["0.3"], "eps_tab": ["budget"], "multi": ["a", "b"]}


@pytest.mark.parametrize("data, why", [
    (b"x" * (MAX_SETTINGS_BYTES + 1), "larger than"),
    (b"\xff\xfe", "UTF-8"),
    (b"[" * 5000 + b"]" * 5000, "nested too deeply"),
    (b"{not json", "not valid JSON"),
    (b'{"page": "epsilon_calculator"}', "no \"settings\""),
    (b'{"page": "../../etc/passwd", "settings": {}}', "does not name a page"),
])
def test_bad_settings_files_are_refused_with_a_reason(data, why):
    with pytest.raises(SettingsError, match=re.escape(why)):
        parse_settings(data)


def test_nested_setting_values_are_left_out_with_a_plain_reason():
    page, back, why = read_settings(b'{"page": "app", "settings": {"k": {"a": 1}, "b": true, "n": 3, "z": null}}')
    assert page == "app" and back == {"b": ["true"], "n": ["3"]}
    assert "JSON object" in why["k"] and "control" not in why["k"] and "null" in why["z"]


def test_notepad_utf8_with_bom_settings_file_is_read():
    """Issue 31: Notepad's "UTF-8 with BOM" was refused as "not valid JSON"."""
    data = settings_json("coherence_explorer", {"coh_alpha": "0.5", "coh_groups": ["RAC1P"]}, version="v1")
    text = data.decode("utf-8").replace("\n", "\r\n")  # Notepad writes CRLF too
    page, back = parse_settings("\ufeff".encode("utf-8") + text.encode("utf-8"))
    assert page == "coherence_explorer" and back == {"coh_alpha": ["0.5"], "coh_groups": ["RAC1P"]}


PAGE = """
import streamlit as st
from ui.common import page_setup, page_end
from ui.widgets import log_slider, choice
page_setup("Restore test")
eps = log_slider("ε", key="eps", value=1.0)
mode = choice("Mode", {"a": "Alpha", "b": "Beta"}, key="mode")
st.write(f"OUT={eps!r},{mode}")
page_end()
"""


def _upload(at, payload: dict):
    at.sidebar.file_uploader(key="restore_settings").set_value(
        ("s.json", json.dumps(payload).encode(), "application/json")).run()
    assert not at.exception, [e.value for e in at.exception]


def test_uploaded_settings_restore_the_view_and_name_unknown_keys():
    at = AppTest.from_string(PAGE, default_timeout=30).run()
    assert not at.exception
    page = re.sub(r"\.py$", "", at._script_path.rsplit("/", 1)[-1])
    _upload(at, {"page": page, "settings": {"eps": "0.3", "mode": "b", "bogus": "1", "ctl": "a\x01"},
                 "version": "x"})
    out = next(m.value for m in at.markdown if m.value.startswith("OUT="))
    assert out == "OUT=0.3,b"
    notice = " ".join(t.value for t in at.toast)
    assert "**bogus** (not a setting" in notice and "**ctl** (the value contains control characters)" in notice


def test_settings_for_another_page_are_not_applied():
    at = AppTest.from_string(PAGE, default_timeout=30).run()
    _upload(at, {"page": "epsilon_calculator", "settings": {"eps": "0.3"}})
    assert next(m.value for m in at.markdown if m.value.startswith("OUT=")) == "OUT=1.0,a"
    assert any("another page" in w.value for w in at.sidebar.warning)
