"""The downloaded report opens offline and prints to at most two A4 pages (issue 15 item 1).

The report is downloaded from a served page (the first page whose open tab offers "Report (HTML)"), saved, opened
from disk in a browser context with the network off, checked for its parts, and printed to PDF by Chromium; the
PDF's pages are counted by their ``/Type /Page`` objects. A second check builds a report with many parameters and
two figures through the same code, so the two-page limit is tested with a full report too.
"""

from __future__ import annotations

import re

import plotly.graph_objects as go
import pytest

from tests.e2e.helpers import open_page, wait_idle

PAGES = ["epsilon_calculator", "sampling_designer", "coherence_explorer", "leximax_cohort_picker",
         "stratified_synthesis_viewer"]
PARTS = ("question", "answer", "parameters", "figures", "privacy", "sources", "meta")


def pdf_pages(pdf: bytes) -> int:
    """Pages of a PDF: Chromium writes one ``/Type /Page`` object per page (``/Type /Pages`` is the tree)."""
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf))


def _check_offline(browser, html_path) -> bytes:
    context = browser.new_context(offline=True, java_script_enabled=False)
    requests = []
    try:
        pg = context.new_page()
        pg.on("request", lambda r: requests.append(r.url))
        pg.goto(html_path.as_uri())
        for part in PARTS:
            assert pg.locator(f"#{part}").count() == 1, part
        assert "e^ε" in pg.locator("#privacy").inner_text() or "ε" in pg.locator("#privacy").inner_text()
        assert pg.locator("#meta a").count() == 1
        assert [u for u in requests if not u.startswith("file:")] == []  # nothing fetched from a network
        return pg.pdf(format="A4", print_background=True)
    finally:
        context.close()


@pytest.mark.slow
def test_served_report_opens_offline_and_prints_to_two_pages(page, browser, app_url, tmp_path):
    button = None
    for path in PAGES:
        open_page(page, f"{app_url}/{path}", timeout=120_000)
        candidates = page.get_by_test_id("stDownloadButton").filter(has_text="Report (HTML)")
        if candidates.count():
            button = candidates.first
            break
    if button is None:
        pytest.fail("no page offers a Report (HTML) download yet (ui.dossier.artefacts not called)")
    with page.expect_download(timeout=120_000) as info:
        button.click()
    target = tmp_path / "report.html"
    info.value.save_as(target)
    wait_idle(page)
    html = target.read_text(encoding="utf-8")
    assert "<script" not in html.lower() and "<svg" in html or "id=\"figures\"" in html
    pdf = _check_offline(browser, target)
    assert pdf.startswith(b"%PDF") and 1 <= pdf_pages(pdf) <= 2, pdf_pages(pdf)


def test_full_report_prints_to_two_pages(browser, tmp_path):
    from ui.dossier import Headline, PageSummary, build_report

    figs = [(f"Figure {i}: noise scale against ε", go.Figure(go.Scatter(x=list(range(50)), y=[v * v for v in
                                                                                              range(50)]),
                                                             layout=dict(title=f"Figure {i}")))
            for i in range(2)]
    summary = PageSummary(
        page="epsilon_calculator", title="Epsilon calculator",
        question="I publish 10 counts from one dataset with total ε = 1: how accurate is each?",
        params={f"Parameter {i}": f"value {i}" for i in range(12)},
        headlines=[Headline(f"Headline {i}", f"{i}.23 ± 0.4", "95% confidence") for i in range(6)],
        verdicts=["Each count is within ± 12 of the truth 95% of the time.",
                  "Splitting the budget evenly loses 8% accuracy against the best plan."],
        figures=figs, sources=["seed 002, Theorem 3.5 (erratum: δ′ term)", "spec epsilon_calculator.md §4.5"],
        epsilon=1.0, delta=1e-6, seed=3, script="print(1)")
    target = tmp_path / "full.html"
    target.write_bytes(build_report(summary, link="http://127.0.0.1:8501/epsilon_calculator?eps_epsilon=1"))
    assert target.read_text().count("<svg") >= 2
    pdf = _check_offline(browser, target)
    assert 1 <= pdf_pages(pdf) <= 2, pdf_pages(pdf)
