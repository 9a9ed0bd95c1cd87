"""Clean logs (issue 17 deliver 5): logged errors keep type and frames, never the user's values."""

from __future__ import annotations

import io
import logging
from pathlib import Path

from streamlit.logger import get_logger

from tests.attack.pages import run_page
from ui.common import ScrubUserData, install_log_filter

SECRET = "SECRET-cell-value-42"


def _capture(name: str) -> tuple[logging.Logger, io.StringIO, logging.Handler]:
    log = get_logger(name)
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    log.addHandler(handler)
    return log, buf, handler


def _boom(value):
    try:
        int(value)
    except ValueError as exc:
        raise KeyError(f"no column {value}") from exc


def test_filter_keeps_type_and_frames_and_drops_messages():
    install_log_filter()
    install_log_filter()  # idempotent
    log, buf, handler = _capture("streamlit.error_util")
    try:
        try:
            _boom(SECRET)
        except KeyError as exc:
            log.error("Uncaught app execution", exc_info=exc)
            log.warning("value %s in %r", SECRET + " plus words", exc)
    finally:
        log.removeHandler(handler)
    out = buf.getvalue()
    assert SECRET not in out, out
    assert "Uncaught app execution" in out and "KeyError" in out and "ValueError" in out
    assert "_boom" in out and "Traceback (most recent call last)" in out
    assert ScrubUserData.WITHHELD in out
    assert sum(f is not None and isinstance(f, ScrubUserData) for f in log.filters) == 1


def test_a_page_crash_logs_no_link_value():
    log, buf, handler = _capture("streamlit.error_util")
    try:
        at = run_page("tests/attack/crash_page.py", {"secret": SECRET})
    finally:
        log.removeHandler(handler)
    assert at.exception  # the page did fail
    out = buf.getvalue()
    assert "RuntimeError" in out and "parse_cell" in out, out
    assert SECRET not in out, out


def test_other_libraries_records_are_scrubbed_at_the_root_handlers():
    """A record from a library's own logger (kaleido, choreographer, tornado.access) propagates to the root
    logger's handlers without passing the root logger's filters: the handlers scrub it."""
    root = logging.getLogger()
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
    root.addHandler(handler)
    try:
        install_log_filter()
        try:
            _boom(SECRET)
        except KeyError as exc:
            logging.getLogger("kaleido.some_child").error("render failed for %s", SECRET, exc_info=exc)
    finally:
        root.removeHandler(handler)
    out = buf.getvalue()
    assert "kaleido.some_child" in out and "KeyError" in out and "_boom" in out, out
    assert SECRET not in out, out


def test_only_chromiums_goodbye_is_excused_from_the_pipe_log():
    """choreographer logs Chromium's closing "{bye}" as an undecodable message (seen in CI stop 28's log gate):
    that record is dropped; any other undecodable message is still logged. The exceptions come from
    choreographer's own decoder."""
    from choreographer.channels import _wire
    from choreographer.channels._errors import JSONError

    from ui.common import excuse_browser_goodbye

    excuse_browser_goodbye()
    excuse_browser_goodbye()  # idempotent
    log = logging.getLogger("choreographer.channels.pipe")
    assert hasattr(log, "debug2")  # choreographer's own (logistro) logger, not a plain one made before it
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    log.addHandler(handler)
    try:
        for raw in ("{bye}\n", '{"id": 3, "res'):
            try:
                _wire.deserialize(raw)
            except JSONError:
                log.exception("JSONError decoding message. Ignoring")
    finally:
        log.removeHandler(handler)
    out = buf.getvalue()
    assert out.count("JSONError decoding message") == 1, out  # the truncated message, not the goodbye


def test_log_setup_before_choreographer_leaves_its_logger_working():
    """Regression: a filter put on ``logging.getLogger("choreographer.channels.pipe")`` before choreographer was
    imported made a plain logger under its name; choreographer then called ``_logger.debug2`` on it and every
    report export failed. A fresh interpreter sets the page's logging up first, as a server does."""
    import subprocess
    import sys
    code = ("from ui.common import install_log_filter, excuse_browser_goodbye; install_log_filter(); "
            "excuse_browser_goodbye(); from choreographer.channels import pipe; pipe._logger.debug2('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr[-2000:]
