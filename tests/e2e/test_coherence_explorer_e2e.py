"""Browser test of the coherence explorer: moving ε redraws the preview chart and enters the URL; a deep
link restores the view; the verdict comes first and the page fits 1280 × 800."""

from __future__ import annotations

from urllib.parse import quote

from playwright.sync_api import expect

from tests.e2e.helpers import open_page, wait_idle

DP = quote("ε-DP histogram → synthetic records (Laplace)")
FAST = "coh_n=2000&coh_learner=" + quote("Decision tree")


def _chart_text(page, i: int = 0) -> str:
    chart = page.get_by_test_id("stPlotlyChart").nth(i)
    chart.locator(".main-svg").first.wait_for()
    return chart.inner_html()


def test_moving_epsilon_redraws_and_enters_url(page, app_url):
    open_page(page, f"{app_url}/coherence_explorer?{FAST}&coh_release={DP}")
    before = _chart_text(page, 0)
    thumb = page.get_by_test_id("stSlider").filter(has_text="ε (privacy loss").get_by_role("slider")
    thumb.focus()
    thumb.press("ArrowRight")
    page.wait_for_function("() => location.search.includes('coh_eps=')")
    wait_idle(page)
    assert "coh_eps=1.3" in page.url  # one step up the log grid from the default ε = 1
    page.wait_for_function(
        "(b) => document.querySelector(\"[data-testid='stPlotlyChart']\").innerHTML !== b", arg=before
    )
    assert _chart_text(page, 0) != before


def test_deep_link_restores_view(page, app_url):
    open_page(page, f"{app_url}/coherence_explorer?{FAST}&coh_release={DP}&coh_eps=0.1&coh_alpha=0.55")
    eps = page.get_by_test_id("stSlider").filter(has_text="ε (privacy loss").get_by_role("slider")
    assert eps.get_attribute("aria-valuetext") == "0.1" or "0.1" in eps.inner_text()
    alpha = page.get_by_test_id("stSlider").filter(has_text="α (largest W1").get_by_role("slider")
    assert float(alpha.get_attribute("aria-valuetext")) == 0.55
    assert "synthetic records" in page.get_by_test_id("stSidebar").inner_text()


def test_deep_link_restores_built_groups(page, app_url):
    built = quote('[{"name":"Older women","conditions":[{"column":"SEX","values":["2"]},'
                  '{"column":"AGEP","low":65,"high":null}]}]')
    open_page(page, f"{app_url}/coherence_explorer?{FAST}&coh_built={built}")
    # the group table sits in the folded "Data and groups" section; its summary counts the restored group
    summary = page.get_by_text("Data and groups:", exact=False).first
    assert "3 groups" in summary.inner_text() or "of 3 groups" in summary.inner_text()
    summary.click()
    table = page.get_by_test_id("stDataFrame").first
    table.wait_for()
    # the group table is a canvas grid: read the group names through its accessible cells
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll(\"[data-testid='stDataFrame'] [role='gridcell']\"))"
        ".some(c => c.textContent.includes('Older women'))", timeout=30_000)


def test_group_link_is_rewritten_as_short_tokens(page, app_url):
    """Issue 14 item 4: an older link (one parameter per group, display labels) restores the groups, and the
    address bar then holds the short tokens."""
    women = quote("Women (SEX = 2)")
    open_page(page, f"{app_url}/coherence_explorer?{FAST}&coh_groups=Everyone&coh_groups={women}")
    page.wait_for_function("() => /[?&]coh_groups=everyone(,|%2C)women(&|$)/.test(location.search)")
    wait_idle(page)
    groups = page.get_by_test_id("stSidebar").get_by_test_id("stMultiSelect").filter(has_text="Groups").first
    assert "Women (SEX = 2)" in groups.inner_text() and "Has the sensitive attribute" not in groups.inner_text()
    assert page.get_by_test_id("stToast").count() == 0   # every item was understood: no link notice
    assert page.get_by_test_id("stException").count() == 0


def test_switching_the_data_source_keeps_a_lens(page, app_url):
    """Issue 12: synthetic → shared UCI Adult → synthetic used to stop at "Choose at least one lens feature".
    First, at 1280 × 800 on the same load (formerly its own test): the verdict comes first and every tab fits."""
    page.set_viewport_size({"width": 1280, "height": 800})
    open_page(page, f"{app_url}/coherence_explorer?{FAST}")
    panel = page.get_by_role("tabpanel").first
    first_alert = panel.get_by_test_id("stAlert").first
    first_alert.wait_for()
    assert "exposes them" in first_alert.inner_text()
    for name in ("Single split (preview)", "Repeated runs", "W1 vs ε", "Theory", "Section 7"):
        tab = page.get_by_role("tab", name=name)
        box = tab.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 1280, name
    assert page.get_by_test_id("stException").count() == 0
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Shared dataset (sidebar picker)").click()
    page.wait_for_function("() => location.search.includes('coh_source=')")
    wait_idle(page)
    picker = sidebar.get_by_test_id("stSelectbox").filter(has_text="Shared dataset").first
    picker.click()
    page.get_by_role("option", name="UCI Adult").click()
    page.wait_for_function("() => location.search.includes('dataset=')", timeout=60_000)
    wait_idle(page, timeout=90_000)
    body = page.get_by_test_id("stMain").inner_text()
    assert "Choose at least one lens feature" not in body
    lens = sidebar.get_by_test_id("stMultiSelect").filter(has_text="Lens").first
    assert "age" in lens.inner_text()
    sidebar.get_by_text("Synthetic population (generator)").click()
    wait_idle(page, timeout=60_000)
    assert "Choose at least one lens feature" not in page.get_by_test_id("stMain").inner_text()
    assert "AGEP" in sidebar.get_by_test_id("stMultiSelect").filter(has_text="Lens").first.inner_text()
    assert page.get_by_test_id("stException").count() == 0


def test_fragment_controls_keep_the_verdict_and_charts(page, app_url):
    """Issue 22 (the Tab 1 crash class): the theory panel and the prediction view are fragments; moving their own
    controls reruns only the fragment, which must redraw its verdict and charts with no error element. Also: a link
    opens the tab it names, and a click on another tab enters the address."""
    open_page(page, f"{app_url}/coherence_explorer?{FAST}&coh_tab=Theory")
    # the link opens the tab it names (formerly its own test, on its own load of this same link)
    expect(page.get_by_role("tab", name="Theory")).to_have_attribute("aria-selected", "true")
    panel = page.get_by_role("tabpanel").first
    panel.get_by_test_id("stAlert").first.wait_for()
    hyp = page.get_by_test_id("stSlider").filter(has_text="Hypothetical ε").get_by_role("slider")
    for _ in range(2):
        # wait for this press's value in the address: the second press found the first one's there already and
        # counted the charts mid-redraw (0 of 2, once in a full run)
        before = page.evaluate("() => new URLSearchParams(location.search).get('coh_hyp_eps')")
        hyp.focus()
        hyp.press("ArrowRight")
        page.wait_for_function("(b) => new URLSearchParams(location.search).get('coh_hyp_eps') !== b", arg=before)
        wait_idle(page)
        expect(panel.get_by_test_id("stAlert").first).to_contain_text("Theorem 7")
        expect(panel.get_by_test_id("stPlotlyChart")).to_have_count(2, timeout=30_000)
        assert page.get_by_test_id("stException").count() == 0
    # a click on a tab enters the address, with no error element
    page.get_by_role("tab", name="W1 vs ε").click()
    page.wait_for_function("() => location.search.includes('coh_tab=W1')")
    wait_idle(page)
    assert page.get_by_test_id("stException").count() == 0
    page.get_by_role("tab", name="Single split (preview)").click()
    wait_idle(page, timeout=60_000)
    preview = page.get_by_role("tabpanel").first
    preview.get_by_text("Distribution functions").click()
    page.wait_for_function("() => location.search.includes('coh_ecdf=')")
    wait_idle(page)
    expect(preview.get_by_test_id("stAlert").first).to_contain_text("exposes them")
    expect(preview.get_by_test_id("stPlotlyChart")).to_have_count(2, timeout=30_000)
    assert page.get_by_test_id("stException").count() == 0
