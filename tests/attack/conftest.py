"""The browser attack tests use the e2e layer's server and Chromium fixtures."""

from tests.e2e.conftest import app_url, browser, page  # noqa: F401  (pytest fixtures)
