"""Browser test of the home page: pick a dataset, reload the URL in a fresh context, see it restored."""

import re

from playwright.sync_api import expect

from tests.e2e.helpers import open_page, wait_idle


def _pick_dataset(page, title_fragment: str) -> None:
    page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").click()
    page.get_by_role("option", name=re.compile(re.escape(title_fragment))).click()
    wait_idle(page)


def test_home_renders_then_dataset_choice_is_in_url_and_restored(page, browser, app_url):
    open_page(page, app_url)
    # the home page as it opens (formerly its own test, on its own load of the same address)
    expect(page.get_by_role("heading", name="Privacy/utility explorer")).to_be_visible()
    expect(page.get_by_text("Epsilon calculator").first).to_be_visible()
    expect(page.get_by_text("20,000").first).to_be_visible()  # census rows metric
    _pick_dataset(page, "UCI Adult")
    page.wait_for_function("() => location.search.includes('dataset=adult')")
    expect(page.get_by_text("48,842").first).to_be_visible()
    url = page.url
    fresh = browser.new_context().new_page()
    try:
        open_page(fresh, url)
        expect(fresh.get_by_text("48,842").first).to_be_visible()
        assert "UCI Adult" in fresh.get_by_test_id("stSidebar").inner_text()
    finally:
        fresh.context.close()


def test_dataset_choice_survives_page_switch(page, app_url):
    open_page(page, app_url)
    _pick_dataset(page, "ACS 2012")
    # a page that reads the shared dataset (sampling designer and leximax picker work on their own data)
    page.get_by_test_id("stSidebar").get_by_role("link", name=re.compile("epsilon calculator", re.I)).click()
    wait_idle(page)
    page.wait_for_function("() => location.search.includes('dataset=acs12')")
    assert "2,000 real respondents" in page.get_by_test_id("stSidebar").inner_text()
    page.get_by_test_id("stSidebar").get_by_role("link", name=re.compile("^.*Home$")).click()  # back home
    wait_idle(page)
    expect(page.get_by_text("2,000").first).to_be_visible()


def test_menu_names_every_page(page, app_url):
    open_page(page, f"{app_url}/leximax_cohort_picker")
    sidebar = page.get_by_test_id("stSidebar")
    # drawn (the page-link component loads lazily: on a busy machine it can appear seconds after the run ends)
    expect(sidebar.get_by_role("link").filter(has_text="Stratified synthesis viewer")).to_be_visible(timeout=30_000)
    links = [t.strip() for t in sidebar.get_by_role("link").all_inner_texts()]
    names = ["Home", "Epsilon calculator", "Coherence explorer", "Sampling designer", "Leximax cohort picker",
             "Stratified synthesis viewer"]
    assert [n for n in names if any(t.endswith(n) for t in links)] == names, links
    assert page.get_by_test_id("stSidebarNav").count() == 0  # Streamlit's own menu (it says "app") is off
    sidebar.get_by_role("link", name=re.compile("Epsilon calculator$")).click()
    wait_idle(page)
    expect(page.get_by_role("heading", name="Epsilon calculator").first).to_be_visible()
    assert page.url.split("?")[0].endswith("/epsilon_calculator")
