"""Clean logs: user data never reaches the server's log, and one harmless library error is excused (issue 17).

Split out of ``ui.common`` (issue 30) so that the modules below page setup (``ui.exports``) can use it without an
import circle; ``ui.common`` re-exports it.
"""

from __future__ import annotations

import logging
import traceback


class ScrubUserData(logging.Filter):
    """Keep a logged exception's type and traceback frames, drop its message (issue 17, clean logs).

    Streamlit logs every uncaught exception with its message, and messages may quote an uploaded cell or a
    link value. Frames show our code, not data, so they stay; chained causes are kept the same way. Exception
    objects passed as log arguments become their type name; string and container arguments are withheld (a
    format argument may be a value; the format string itself is the developer's text).
    """

    WITHHELD = "<message withheld: it may quote user data>"

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = self.scrubbed_traceback(record.exc_info[1])
        if isinstance(record.msg, BaseException):
            record.msg = type(record.msg).__name__
        if record.args:
            args = record.args if isinstance(record.args, tuple) else (record.args,)
            record.args = tuple(self._scrub(a) for a in args)
        return True

    @classmethod
    def _scrub(cls, arg: object) -> object:
        if isinstance(arg, BaseException):
            return type(arg).__name__
        if isinstance(arg, (str, bytes, dict, list, tuple, set)):
            return f"<{type(arg).__name__} withheld>"
        return arg

    @classmethod
    def scrubbed_traceback(cls, exc: BaseException) -> str:
        """The traceback text Python would print, with every exception message replaced."""
        chain, seen = [], set()
        e: BaseException | None = exc
        while e is not None and id(e) not in seen:
            seen.add(id(e))
            chain.append(e)
            e = e.__cause__ if e.__cause__ is not None else (None if e.__suppress_context__ else e.__context__)
        parts = []
        for i, e in enumerate(reversed(chain)):
            if i:
                parts.append("\nThe above exception led to the following one:\n\n")
            parts.append("Traceback (most recent call last):\n")
            parts.extend(traceback.format_tb(e.__traceback__))
            parts.append(f"{type(e).__module__}.{type(e).__qualname__}: {cls.WITHHELD}\n")
        return "".join(parts).rstrip("\n")


class BrowserGoodbye(logging.Filter):
    """Drop choreographer's error record for Chromium's closing ``{bye}`` message (kaleido's figure browser).

    choreographer (1.4) reads Chromium's pipe in chunks split at NUL; when the browser's goodbye arrives in the
    same read as other bytes, it is decoded as JSON, fails, and is logged as an error with a traceback although
    nothing is lost: the browser is closing after the image was made. Only that exact text is excused; any other
    message that fails to decode is still logged.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        doc = getattr(getattr(exc, "__cause__", None), "doc", None)
        return not (isinstance(doc, str) and doc.strip() == "{bye}")


_SCRUB = ScrubUserData()
_BYE = BrowserGoodbye()
_SCRUBBED_LOGGERS: set[str] = set()


def excuse_browser_goodbye() -> None:
    """Put :class:`BrowserGoodbye` on choreographer's pipe logger (idempotent).

    Call it after choreographer is imported: its logger must be made by logistro (which gives it ``debug2``); a
    plain logger made earlier under that name would be returned to choreographer and break its first write.
    """
    from choreographer.channels import pipe

    if _BYE not in pipe._logger.filters:
        pipe._logger.addFilter(_BYE)


def install_log_filter() -> None:
    """Put :class:`ScrubUserData` on Streamlit's loggers (each has its own handler and does not propagate),
    on this app's logger, and on the root logger and its handlers. Idempotent and cheap: only loggers not yet seen
    are touched.
    """
    from streamlit import config
    from streamlit.logger import _loggers

    # rich's traceback printer (Streamlit's default when rich is importable) bypasses logging and its filters
    if config.get_option("logger.enableRich"):
        config.set_option("logger.enableRich", False)

    loggers = {name: logging.getLogger(name) for name in ("", "dpdash", "tornado.application", "tornado.general")}
    loggers.update(list(_loggers.items()))  # a copy: other sessions' threads may add loggers meanwhile
    for name, log in loggers.items():
        if name not in _SCRUBBED_LOGGERS:
            log.addFilter(_SCRUB)
            _SCRUBBED_LOGGERS.add(name)
    # Other libraries' records (kaleido, choreographer, tornado.access, …) reach the root logger's handlers without
    # passing the root logger's own filters, so those handlers scrub too, and so does Python's last-resort handler
    # (used when the root has none).
    for handler in [*logging.getLogger().handlers, logging.lastResort]:
        if handler is not None and _SCRUB not in handler.filters:
            handler.addFilter(_SCRUB)
