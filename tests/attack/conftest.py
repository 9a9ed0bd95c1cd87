"""The browser attack tests use the e2e layer's server and Chromium fixtures.

The hostile-link runs (25 whole-page AppTest runs per page) are not traced for coverage (pytest-cov's ``no_cover``):
they test the pages' link handling, and the engine's coverage floor is met by the engine and page tests.
"""

import pytest

from tests.e2e.conftest import app_url, browser, page  # noqa: F401  (pytest fixtures)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if str(item.fspath).endswith("tests/attack/test_hostile_links.py"):
            item.add_marker(pytest.mark.no_cover)
