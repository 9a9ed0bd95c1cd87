"""AppTest of the home page: renders, lists the tools, and the shared dataset picker switches datasets."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def _app() -> AppTest:
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)


def test_home_renders_with_defaults():
    at = _app().run()
    assert not at.exception
    assert at.title[0].value == "Privacy/utility explorer"
    assert at.selectbox(key="dataset").value == "census"
    assert at.metric[0].value == "20,000"


def test_dataset_picker_switches_dataset():
    at = _app().run()
    at.selectbox(key="dataset").set_value("adult").run()
    assert not at.exception
    assert at.metric[0].value == "48,842"
    at.selectbox(key="dataset").set_value("acs12").run()
    assert at.metric[0].value == "2,000"


def test_dataset_restored_from_query_params():
    at = _app()
    at.query_params["dataset"] = "UCI Adult"
    at.run()
    assert not at.exception
    assert at.selectbox(key="dataset").value == "adult"


def test_link_values_used_or_named_in_one_notice():
    at = _app()
    at.query_params["dataset"] = "UCI Adult"  # the display name is still accepted (links made before tokens)
    at.run()
    assert not at.exception and at.metric[0].value == "48,842" and not at.toast
    bad = _app()
    bad.query_params["dataset"] = "adult; DROP TABLE"
    bad.query_params["[x](http://attacker.invalid)"] = "inf"
    bad.run()
    assert not bad.exception and bad.metric[0].value == "20,000"
    notice = " ".join(t.value for t in bad.toast)
    assert "**dataset** (not one of the options)" in notice
    assert "\\[x\\]\\(http" in notice and "(the value is not a finite number)" in notice
    bad.run()
    assert not bad.toast  # once per link, not on every rerun
