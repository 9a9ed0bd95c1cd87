"""Every numeric link key of every page, at the float limits (issue 31: ``/coherence_explorer?coh_alpha=5e-324``
ended in ZeroDivisionError in ``formatting.power_of_ten``; issue 26's fix reached 1e-160).

Table-driven: the keys are found by running each page and each of its tabs (``tests.attack.pages``), keeping the
widgets whose value is a number (sliders, number boxes, select sliders). For every view and every value of
:data:`LIMITS` one link sets all that view's numeric keys to the value; a run that raises is then retried key by key,
so a failure names the key and the value. No link may raise.
"""

from __future__ import annotations

from functools import lru_cache

import pytest

from tests.attack.pages import PAGES, _TABS_KEY, _source, run_page

#: The smallest subnormal, a subnormal, negative zero, and the largest decade of a double.
LIMITS = ("5e-324", "1e-310", "-0.0", "1e308")
_NUMERIC_KINDS = ("slider", "number_input", "select_slider")


def _numeric_keys(at) -> set[str]:
    keys = set()
    for kind in _NUMERIC_KINDS:
        for w in at.get(kind):
            values = w.value if isinstance(w.value, (list, tuple)) else [w.value]
            if w.key and not w.key.startswith("_") and values and all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
                keys.add(w.key)
    return keys


@lru_cache(maxsize=None)
def numeric_views(page: str) -> tuple[tuple[tuple[tuple[str, str], ...], tuple[str, ...]], ...]:
    """(link that opens a view, the numeric keys drawn there) for the default view and every tab."""
    at = run_page(page)
    views = {(): _numeric_keys(at)}
    labels = [t.label for t in at.tabs]
    for key in dict.fromkeys(_TABS_KEY.findall(_source(page))):
        for label in labels:
            tab = run_page(page, {key: label})
            if not tab.exception:
                views[((key, label),)] = _numeric_keys(tab)
    seen: set[str] = set()
    out = []
    for link, keys in views.items():
        new = sorted(keys - seen) if link else sorted(keys)
        seen |= keys
        if new:
            out.append((link, tuple(new)))
    return tuple(out)


def _raises(page: str, link: dict) -> str | None:
    at = run_page(page, link)
    return at.exception[0].value[:300] if at.exception else None


@pytest.mark.slow
@pytest.mark.parametrize("value", LIMITS)
@pytest.mark.parametrize("page", PAGES, ids=[p.split("/")[-1][:-3] for p in PAGES])
def test_numeric_keys_at_float_limits_never_raise(page, value):
    failures = []
    for view, keys in numeric_views(page):
        link = {**dict(view), **{k: value for k in keys}}
        if _raises(page, link) is None:
            continue
        for k in keys:  # name the key (and keep the others at their defaults)
            if (err := _raises(page, {**dict(view), k: value})) is not None:
                failures.append(f"{page}?{'&'.join(f'{a}={b}' for a, b in view)}&{k}={value}: {err}")
        if not failures:
            failures.append(f"{page} {link}: raises only with all keys together")
    assert not failures, "\n".join(failures)


def test_the_reported_link_does_not_raise():
    """The issue's link, on its own (fast, not marked slow)."""
    assert _raises("pages/coherence_explorer.py", {"coh_alpha": "5e-324"}) is None
