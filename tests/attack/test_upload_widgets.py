"""Hostile files through every upload widget of every page (issue 17 deliver 6a), with AppTest.

The widgets are found by running the pages (``tests.attack.pages.upload_widgets``); each gets bombs (5 MB
here: the full 50 MB bombs go through the reader itself in ``test_hostile_files``), malformed files and
valid files with hostile names. Every bad file must end in an ``st.error``/``st.warning`` message, never an
exception; no file may put a live link, image or HTML tag on screen.
"""

from __future__ import annotations

import pytest

from tests.attack.corpus import INERT_TEXT, MALFORMED, bomb
from tests.attack.pages import PAGES, injected_markdown, run_page, upload_widgets

WIDGETS = [(page, key, params) for page in PAGES for key, params in upload_widgets(page).items()]
#: The sidebar's "Restore saved settings" uploader (ui.dossier) is the same code on every page: attacked once.
WIDGETS = [w for i, w in enumerate(WIDGETS)
           if w[1] != "restore_settings" or all(v[1] != "restore_settings" for v in WIDGETS[:i])]
#: The issue's classes: column bomb, line bomb, huge cell, UTF-16, binary, unclosed quote, ragged, non-finite.
BAD = {
    **{f"bomb:{name}": bomb(name, 5_000_000)[0] for name in ("column-bomb", "line-bomb", "huge-cell",
                                                               "utf16-column-bomb", "multiline-record")},
    **{name: MALFORMED[name][0] for name in ("binary", "duplicate-names", "blank-name", "unclosed-quote",
                                             "ragged-long", "ragged-short", "empty")},
}
#: Bad for most pages, valid where a page reads one column or text (``min_cols=1``, ``as_text=True``):
#: only "no exception, nothing injected" is required.
MAYBE = {name: MALFORMED[name][0] for name in ("one-column", "inf", "minus-inf", "overflow", "beyond-2**53")}


def test_every_upload_widget_in_the_source_is_found():
    import re
    from tests.attack.pages import ROOT

    source = "".join(p.read_text() for p in [*(ROOT / "pages").glob("*.py"), *(ROOT / "ui" / "views").glob("*.py")])
    declared = set(re.findall(r"""(?:uploaded_bytes|csv_uploader|upload_frame|file_uploader)\([^)]*?key\s*=\s*"""
                              r"""["']([A-Za-z0-9_]+)["']""", source, re.S))
    assert declared <= {key for _, key, _ in WIDGETS}, declared - {key for _, key, _ in WIDGETS}
    assert len(WIDGETS) >= 6


@pytest.mark.slow
@pytest.mark.parametrize("page, key, params", WIDGETS, ids=[f"{p.split('/')[-1][:-3]}:{k}" for p, k, _ in WIDGETS])
def test_hostile_files_get_a_message_not_an_exception(page, key, params):
    at = run_page(page, params)
    failures = []
    for name, data in {**BAD, **MAYBE, **INERT_TEXT}.items():
        next(u for u in at.get("file_uploader") if u.key == key).set_value((f"{name}.csv", data, "text/csv"))
        at.run()
        if at.exception:
            failures.append(f"{name}: exception {at.exception[0].value[:120]}")
            continue
        if name in BAD and not (at.error or at.warning):
            failures.append(f"{name}: no error or warning")
        if bad := injected_markdown(at):
            failures.append(f"{name}: injected {bad[:2]}")
    assert not failures, failures
