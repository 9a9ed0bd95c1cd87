"""Saved settings restore the exact view, on every page (issue 15 item 3).

Each page is opened from a link that sets three controls away from their defaults; its "Settings (JSON)" file is
downloaded, the page is opened fresh at its default address in a new browser context, and the file is uploaded in
the sidebar's "Restore saved settings" uploader. The controls on screen and the address must then show the linked
values. Two more checks: a file uploaded on another page says which page it is for and opens it there with its
values; an edited file with an unknown key and an invalid value names both, and the other values are restored.

The expected values are the ones typed into the link, compared with what the browser shows (thumb labels and
boxes), not with anything the code under test computes.
"""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from tests.e2e.helpers import control_value, download, open_page, restore_settings, wait_artefact, wait_idle

#: Three controls per page, each away from its default and shown on the page's first tab (slider thumbs and
#: number boxes), with the value the link sets.
CASES: dict[str, dict[str, str]] = {
    "epsilon_calculator": {"eps_epsilon": "0.5", "eps_n1_conf": "90"},  # (n is not drawn for a count, issue 25)
    "sampling_designer": {"sd_eps": "0.5", "sd_n": "20000", "sd_m": "250"},
    "coherence_explorer": {"coh_eps": "0.5", "coh_reps": "10", "coh_seed": "3"},
    "leximax_cohort_picker": {"lx_k": "4", "lx_delta": "0.2", "lx_seed": "5"},
    "stratified_synthesis_viewer": {"sv_eps": "2", "sv_k": "5", "sv_seed": "4"},
}
VIEWPORT = {"width": 1400, "height": 1000}
SIDEBAR = "stSidebar"


def same(shown: str, want: str) -> bool:
    """Two renderings of one setting ("90.00" and "90", "20,000" and "20000")."""
    a, b = shown.replace(",", "").strip(), want.strip()
    try:
        return float(a) == float(b)
    except ValueError:
        return a == b


def url_settings(page) -> dict[str, str]:
    """The address's query parameters (last value of each)."""
    return {k: v[-1] for k, v in parse_qs(urlparse(page.url).query).items()}


def assert_view(page, settings: dict[str, str]) -> None:
    """The controls on screen and the address both show ``settings``."""
    shown = {key: control_value(page, key) for key in settings}
    assert all(same(shown[k], v) for k, v in settings.items()), (shown, settings)
    in_url = url_settings(page)
    assert all(k in in_url and same(in_url[k], v) for k, v in settings.items()), (page.url, settings)


def new_page(browser):
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    return context, pg


@pytest.fixture(scope="module")
def saved(browser, app_url, tmp_path_factory):
    """``saved(name)``: the settings file of ``CASES[name]``'s view, downloaded on first use (one shared context)."""
    folder = tmp_path_factory.mktemp("settings")
    context, pg = new_page(browser)
    files: dict[str, object] = {}

    def get(name: str):
        if name not in files:
            open_page(pg, f"{app_url}/{name}?{urlencode(CASES[name])}", timeout=120_000)
            assert_view(pg, CASES[name])  # the link itself took effect
            files[name] = download(pg, wait_artefact(pg, "Settings (JSON)"), folder / f"{name}_settings.json")
        return files[name]

    yield get
    context.close()


def upload_and_wait(page, path, keys) -> None:
    """Restore from ``path`` and wait until the address carries every one of ``keys`` and the rerun ended."""
    restore_settings(page, path)
    page.wait_for_function(
        "(keys) => keys.every(k => new URLSearchParams(location.search).has(k)) || "
        "document.querySelector('[data-testid=stSidebar]').innerText.includes('for another page')",
        arg=list(keys), timeout=30_000)
    sidebar = page.get_by_test_id(SIDEBAR)
    assert sidebar.get_by_text("for another page").count() == 0, \
        f"the sidebar says the file is for another page, but it names this one ({page.url})"
    wait_idle(page)


@pytest.mark.parametrize("name", list(CASES), ids=list(CASES))
def test_settings_file_restores_the_view(name, saved, browser, app_url):
    path = saved(name)
    body = json.loads(path.read_text(encoding="utf-8"))
    assert body["page"] == name
    assert set(body["settings"]) == set(CASES[name])
    assert all(same(str(body["settings"][k]), v) for k, v in CASES[name].items()), body["settings"]

    context, pg = new_page(browser)
    try:
        open_page(pg, f"{app_url}/{name}", timeout=120_000)
        wait_artefact(pg, "Settings (JSON)")  # the whole page has drawn before the upload
        before = {k: control_value(pg, k) for k in CASES[name]}
        assert not any(same(before[k], v) for k, v in CASES[name].items()), before  # the defaults differ
        upload_and_wait(pg, path, CASES[name])
        assert_view(pg, CASES[name])
        sidebar = pg.get_by_test_id(SIDEBAR)
        sidebar.get_by_text("Settings restored from the file").wait_for(state="visible")
        assert pg.get_by_test_id("stToast").count() == 0  # every value was used: no notice
        assert pg.get_by_test_id("stException").count() == 0
    finally:
        context.close()


def test_settings_file_for_another_page_opens_that_page(saved, browser, app_url):
    path = saved("epsilon_calculator")
    context, pg = new_page(browser)
    try:
        open_page(pg, f"{app_url}/sampling_designer", timeout=120_000)
        wait_artefact(pg, "Settings (JSON)")
        restore_settings(pg, path)
        sidebar = pg.get_by_test_id(SIDEBAR)
        sidebar.get_by_text("These settings are for another page.").wait_for(state="visible")
        go = sidebar.get_by_role("button", name="Open epsilon calculator with these settings")
        go.wait_for(state="visible")
        # nothing on this page changed: its address has no settings and its controls keep their defaults
        wait_idle(pg)
        assert urlparse(pg.url).path.endswith("/sampling_designer") and url_settings(pg) == {}, pg.url
        assert same(control_value(pg, "sd_eps"), "1") and same(control_value(pg, "sd_n"), "10000")
        go.click()
        pg.wait_for_url("**/epsilon_calculator?*", timeout=60_000)
        wait_idle(pg, timeout=60_000)
        wait_artefact(pg, "Settings (JSON)")
        assert_view(pg, CASES["epsilon_calculator"])
        assert pg.get_by_test_id("stException").count() == 0
    finally:
        context.close()


def test_unknown_key_and_invalid_value_are_named_and_the_rest_restored(saved, browser, app_url, tmp_path):
    body = json.loads(saved("sampling_designer").read_text(encoding="utf-8"))
    body["settings"]["sd_colour"] = "blue"  # no such control
    body["settings"]["sd_m"] = "0"  # the sample size box starts at 1
    edited = tmp_path / "edited_settings.json"
    edited.write_text(json.dumps(body), encoding="utf-8")
    kept = {k: CASES["sampling_designer"][k] for k in ("sd_eps", "sd_n")}

    context, pg = new_page(browser)
    try:
        open_page(pg, f"{app_url}/sampling_designer", timeout=120_000)
        wait_artefact(pg, "Settings (JSON)")
        upload_and_wait(pg, edited, kept)
        notices = pg.get_by_test_id("stToast")
        notices.first.wait_for(state="visible")
        # the notice names each parameter in bold, with its reason: exactly the two edited ones
        named = set(notices.locator("strong").all_inner_texts())
        assert named == {"sd_colour", "sd_m"}, (named, notices.all_inner_texts())
        assert_view(pg, kept)
        assert same(control_value(pg, "sd_m"), "100")  # the invalid value left the default in place
        assert "sd_m" not in url_settings(pg), pg.url
        assert pg.get_by_test_id("stException").count() == 0
    finally:
        context.close()
