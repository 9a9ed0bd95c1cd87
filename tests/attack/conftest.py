"""The browser attack tests use the e2e layer's server and Chromium fixtures.

Like the other whole-page layers the attack tests are not traced for coverage (``tests/conftest.py`` ``UNTRACED``).
"""

from tests.e2e.conftest import app_url, browser, page  # noqa: F401  (pytest fixtures)
