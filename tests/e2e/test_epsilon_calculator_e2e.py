"""Browser test of the Epsilon calculator: move ε, the accuracy number and chart change; a deep link restores
the budget table."""

import json
from urllib.parse import quote

from playwright.sync_api import expect

from tests.e2e.helpers import nudge, open_page, wait_idle


def _metric(page, label: str) -> str:
    m = page.get_by_test_id("stMetric").filter(has_text=label).first
    return m.get_by_test_id("stMetricValue").inner_text()


def _chart_state(page) -> str:
    return page.get_by_test_id("stPlotlyChart").first.locator("svg.main-svg").first.inner_html()


def test_deep_link_restores_budget_table(page, app_url):
    rows = {"cols": ["name", "query", "mechanism", "L", "U", "n", "cells", "target ±", "confidence", "hold ±",
                     "hold share", "weight"],
            "rows": [["visits", "count", "laplace", 0, 1, None, 1, 20.0, 0.95, None, None, 1.0]]}
    url = f"{app_url}/epsilon_calculator?eps_tab={quote('Budget planner')}&eps_b_rows={quote(json.dumps(rows))}"
    open_page(page, url)
    # ln(20)/20 = 0.1498: the plan is computed from the linked one-row table, not the default three rows
    page.get_by_text("Total ε = 0.1498").first.wait_for(state="visible", timeout=30_000)
    assert "eps_b_rows=" in page.url


def test_private_tests_simulation_grid_over_privacy(page, app_url):
    # independence, 400 trials × 3 ρ values × {size, power}: enough work that the page uses both joblib workers
    url = (f"{app_url}/epsilon_calculator?eps_tab={quote('Private tests')}&eps_t_test={quote('Independence (r × c)')}"
           f"&eps_t_sweep={quote('privacy (ρ or ε)')}&eps_t_seed=7&eps_t_trials=400")
    open_page(page, url)
    page.get_by_role("button", name="Simulate").click()
    page.get_by_text("Monte Carlo size and power").first.wait_for(state="visible", timeout=180_000)
    wait_idle(page, timeout=180_000)
    expect(page.get_by_text("Seed 7;").first).to_be_visible()
    expect(page.get_by_text("Run on 2 local worker processes").first).to_be_visible()
    labels = page.get_by_test_id("stDownloadButton").all_inner_texts()
    assert any("CSV" in x for x in labels)
    assert page.get_by_test_id("stException").count() == 0


def test_independence_mode_rxc_from_link(page, app_url):
    url = (f"{app_url}/epsilon_calculator?eps_tab={quote('Private tests')}&eps_t_test={quote('Independence (r × c)')}"
           f"&eps_t_r=3&eps_t_pi1={quote('0.2, 0.3, 0.5')}")
    open_page(page, url)
    page.get_by_text("3 × 2 table").first.wait_for(state="visible", timeout=30_000)
    assert "eps_t_r=3" in page.url


def test_closed_tab_settings_stay_in_link_and_open_tab_draws(page, app_url):
    # Closed tabs draw their controls but not their outputs; their link values must survive moves elsewhere
    open_page(page, f"{app_url}/epsilon_calculator?eps_t_d=10")
    expect(page.get_by_test_id("stPlotlyChart")).to_have_count(2, timeout=30_000)  # Tab 1's two charts only
    # the ε slider by its key: "the first slider on the page" was once Tab 1's confidence slider (a run with
    # another walk seed moved eps_n1_conf and waited 30 s for eps_epsilon)
    nudge(page, page.locator(".st-key-eps_epsilon input[type='range']"), "eps_epsilon=")
    assert "eps_t_d=10" in page.url
    page.get_by_role("tab", name="Private tests").click()
    page.wait_for_function("() => location.search.includes('eps_tab=')")
    wait_idle(page)
    # now Tab 7 draws (size and two power curves) and Tab 1 does not; the table values are checked in AppTest
    expect(page.get_by_text("Critical values").first).to_be_visible()
    expect(page.get_by_test_id("stPlotlyChart")).to_have_count(3, timeout=30_000)
    assert page.locator("[data-testid='stSlider']").filter(has_text="Categories d").first.inner_text().count("10")
    assert "eps_t_d=10" in page.url and "eps_epsilon=" in page.url
    assert page.get_by_test_id("stException").count() == 0
    # a setting changed on another tab stays in the link a presenter would copy once that tab is closed (formerly its
    # own test, which loaded the default page once more for it)
    nudge(page, page.get_by_test_id("stSlider").filter(has_text="Categories d").locator("input[type='range']"),
          "eps_t_d=9", key="ArrowLeft")
    page.get_by_role("tab", name="Noise & accuracy").click()
    wait_idle(page)
    eps_before = page.evaluate("() => new URLSearchParams(location.search).get('eps_epsilon')")
    nudge(page, page.locator("[data-testid='stSlider'] input[type='range']").first, "eps_epsilon=")
    # (ε is in the link already: wait for its new value, so the rerun of this move has ended)
    page.wait_for_function("(v) => new URLSearchParams(location.search).get('eps_epsilon') !== v", arg=eps_before)
    wait_idle(page)
    assert "eps_t_d=9" in page.url


def test_injection_link_fetches_nothing(page, app_url):
    # issue 17: a budget row named as a Markdown image used to be echoed into an error message, and the
    # viewer's browser fetched the attacker's URL. No request may leave for that host.
    evil_host = "evil.invalid"
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    rows = {"cols": ["name", "query", "mechanism", "L", "U", "n", "cells", "target ±", "confidence", "hold ±",
                     "hold share", "weight"],
            "rows": [[f"![x](http://{evil_host}/p.png)", "count", "laplace", 0, 1, None, 1, -1.0, 0.95, None, None,
                      1.0]]}
    open_page(page, f"{app_url}/epsilon_calculator?eps_tab={quote('Budget planner')}"
                    f"&eps_b_rows={quote(json.dumps(rows))}")
    page.get_by_text("target half-width must be").first.wait_for(state="visible", timeout=30_000)
    assert page.locator(f"img[src*='{evil_host}']").count() == 0
    from urllib.parse import urlparse
    assert not [u for u in requests if urlparse(u).hostname == evil_host]
    # shown as typed; md_escape puts an invisible word joiner after "http:" so no autolink forms (issue 26)
    shown = [t.replace("\u2060", "") for t in page.get_by_test_id("stAlert").all_inner_texts()]
    assert any("![x](http://evil.invalid/p.png)" in t for t in shown), shown


# --------------------------------------------------------------------------- issue 22: the Tab 1 crash
#: Tab 1's downloads, keyed as the page keys them: the table CSV, both figures' HTML, the report and settings.
TAB1_DOWNLOADS = ("eps_n1_csv", "eps_n1_fig_hw_html", "eps_n1_fig_noise_html")


def _tab1_intact(page, what: str) -> None:
    """After a change: no error element, the verdict, both charts and the downloads are there."""
    wait_idle(page)
    page.wait_for_timeout(300)  # a fragment's rerun may finish a moment after the script goes idle
    wait_idle(page)
    errors = page.get_by_test_id("stException").count() + page.get_by_text("This app has encountered an error").count()
    assert errors == 0, f"an error element after changing {what}"
    expect(page.get_by_test_id("stAlert").filter(has_text="of its true value").first).to_be_visible()
    expect(page.get_by_test_id("stPlotlyChart")).to_have_count(2)
    for key in TAB1_DOWNLOADS:
        expect(page.locator(f".st-key-{key}").get_by_test_id("stDownloadButton")).to_have_count(1)
    expect(page.get_by_test_id("stDownloadButton").filter(has_text="Report (HTML)")).to_have_count(1)


def _select(page, key: str, option: str) -> None:
    page.locator(f".st-key-{key}").get_by_test_id("stSelectbox").click()
    page.get_by_role("option", name=option, exact=True).click()


def _type(page, key: str, value: str) -> None:
    box = page.locator(f".st-key-{key} input").first
    box.fill(value)
    box.press("Enter")


def _move_epsilon_redraws_and_updates_url(page) -> None:
    """Move ε one step on the default page: the accuracy number, the chart and the address change (formerly its
    own test, which loaded the same default page once more)."""
    assert _metric(page, "± half-width") == "2.996"
    chart_before = _chart_state(page)
    # Streamlit 1.67 sliders are react-aria: the focusable thumb is a visually hidden range input
    thumb = page.locator("[data-testid='stSlider'] input[type='range']").first
    thumb.focus()
    thumb.press("ArrowRight")
    page.wait_for_function("() => location.search.includes('eps_epsilon=')")
    wait_idle(page)
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=stMetric]')].some(m => m.innerText.includes('half-width')"
        " && !m.innerText.includes('2.996'))")
    assert _metric(page, "± half-width") != "2.996"
    assert _chart_state(page) != chart_before


def test_every_tab1_control_keeps_the_verdict_charts_and_downloads(page, app_url):
    """Issue 22: changing any Tab 1 control reran the nested fragment, whose verdict wrote into the outer
    fragment's placeholder: StreamlitInvalidLayoutContextError and two "This app has encountered an error" boxes.
    First, on the default page: moving ε redraws the accuracy number and the chart and enters the address."""
    open_page(page, f"{app_url}/epsilon_calculator")
    _tab1_intact(page, "nothing (first load)")
    _move_epsilon_redraws_and_updates_url(page)
    _tab1_intact(page, "ε (to 1.1)")
    thumb = page.locator(".st-key-eps_epsilon input[type='range']").first
    thumb.focus()
    thumb.press("ArrowLeft")  # back at the default ε = 1: the rest starts from the default, as before
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=stMetric]')].some(m => m.innerText.includes('half-width')"
        " && m.innerText.includes('2.996'))")
    wait_idle(page)
    _tab1_intact(page, "ε (back to 1)")
    _select(page, "eps_n1_mech", "Gaussian")
    _tab1_intact(page, "Mechanism")
    page.locator(".st-key-eps_n1_neigh").get_by_text("Add/remove one record").click()
    _tab1_intact(page, "Neighbouring datasets differ by")
    _select(page, "eps_n1_query", "Sum")
    _tab1_intact(page, "Query")
    page.locator(".st-key-eps_n1_neigh").get_by_text("Replace one record").click()
    _tab1_intact(page, "Neighbouring datasets differ by (back)")
    _select(page, "eps_n1_query", "Mean")  # a mean under add/remove has no bounded sensitivity: replace first
    _tab1_intact(page, "Query (Mean)")
    page.locator(".st-key-eps_n1_fix").get_by_text("Accuracy (±)").click()
    _tab1_intact(page, "You set")
    _type(page, "eps_n1_lower", "10")
    _tab1_intact(page, "L")
    _type(page, "eps_n1_upper", "250")
    _tab1_intact(page, "U")
    _type(page, "eps_n1_n", "5000")
    _tab1_intact(page, "n")
    page.wait_for_function("() => location.search.includes('eps_n1_n=5000')")
    page.locator(".st-key-eps_n1_usecol").get_by_text("Use a column of the shared dataset").click()
    _tab1_intact(page, "Use a column of the shared dataset")
    expect(page.get_by_text("the column's range and non-missing records").first).to_be_visible()
    # and the privacy sliders (the nested fragment's own reruns) still work after all that
    page.locator(".st-key-eps_n1_fix").get_by_text("Privacy").first.click()
    _tab1_intact(page, "You set (back to Privacy)")
    nudge(page, page.locator(".st-key-eps_epsilon input[type='range']").first, "eps_epsilon=")
    _tab1_intact(page, "ε")


def test_public_information_sections_redraw_their_verdicts(page, app_url):
    """Each section of the Public information tab is a nested fragment: moving its control reruns it alone, and
    its verdict must be drawn in a container of its own (the random walk found StreamlitInvalidLayoutContextError
    when it drew into the outer fragment's placeholder)."""
    open_page(page, f"{app_url}/epsilon_calculator?eps_tab={quote('Public information')}", timeout=120_000)
    first = page.get_by_test_id("stAlert").filter(has_text="lies in 0…").first
    first.wait_for(timeout=60_000)
    before = first.inner_text()
    nudge(page, page.locator(".st-key-pi_N input[type=range]").first, "pi_N=")
    nudge(page, page.locator(".st-key-pi_z0 input[type=range]").first, "pi_z0=")
    assert page.get_by_test_id("stException").count() == 0
    assert "encountered an error" not in page.inner_text("body")
    after = page.get_by_test_id("stAlert").filter(has_text="lies in 0…").first.inner_text()
    assert after != before  # the section redrew its own verdict for the new N
