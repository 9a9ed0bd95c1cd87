"""The browser attack tests use the e2e layer's server and Chromium fixtures, and its log gate (an autouse
fixture: a browser attack test fails if the server logged a traceback, an error or a warning while it ran, or a
page shows Streamlit's error element; AppTest-only tests do not use the server and are not affected).

Like the other whole-page layers the attack tests are not traced for coverage (``tests/conftest.py`` ``UNTRACED``).
"""

from tests.e2e.conftest import app_url, browser, log_gate, page  # noqa: F401  (pytest fixtures)
