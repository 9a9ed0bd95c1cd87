"""Long runs computed once per server: a bounded cache shared by every session, keyed by the settings and data hash.

An MST/AIM fit or a coherence experiment takes 20–35 s. When a second browser session (a colleague following a
presentation) asks for the same settings on the same bundled data, it gets the first session's result at once;
if the first run is still going, the second waits for it instead of starting a second copy (issue 23 item 5).

Uploads stay per session: a key built from an upload carries the session's id (:func:`run_key`), so one person's
file never answers another person's request. Results are read-only objects shared by reference; callers must not
mutate them. Streamlit-free, so it is tested as plain Python.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

#: Results kept (least recently used dropped first): a few fits of a few MB each.
MAX_ENTRIES = 16
#: How long a session waits for another session's identical run before computing it itself (seconds).
WAIT_SECONDS = 600.0


class SharedRuns:
    """A thread-safe, bounded LRU of finished runs, with in-flight de-duplication.

    ``enabled=False`` (the server started with ``DPDASH_SHARED_RUNS=0``) computes every run in its own session:
    the browser tests' server uses it so that concurrent sessions really run concurrently.
    """

    def __init__(self, max_entries: int = MAX_ENTRIES, *, enabled: bool = True) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries}")
        self.max_entries = max_entries
        self.enabled = enabled
        self._lock = threading.Lock()
        self._done: OrderedDict[Hashable, Any] = OrderedDict()
        self._running: dict[Hashable, threading.Event] = {}
        self.computed = 0  # how many runs this cache actually computed (for tests and the bench)

    def __len__(self) -> int:
        with self._lock:
            return len(self._done)

    def peek(self, key: Hashable) -> tuple[bool, Any]:
        """``(True, result)`` if ``key`` is finished, else ``(False, None)``; never computes."""
        if not self.enabled:
            return False, None
        with self._lock:
            if key in self._done:
                self._done.move_to_end(key)
                return True, self._done[key]
        return False, None

    def get(self, key: Hashable, compute: Callable[[], Any], *, wait_seconds: float = WAIT_SECONDS) -> Any:
        """The result for ``key``: cached, awaited from a run under way, or ``compute()``d here (then cached).

        A run that raises is not cached (the next caller tries again); a waiting caller whose owner failed, or
        that waited ``wait_seconds`` in vain, computes the result itself.
        """
        if not self.enabled:
            return compute()
        with self._lock:
            if key in self._done:
                self._done.move_to_end(key)
                return self._done[key]
            event = self._running.get(key)
            owner = event is None
            if owner:
                event = self._running[key] = threading.Event()
        if not owner:
            event.wait(wait_seconds)
            found, value = self.peek(key)
            if found:
                return value
            return compute()
        try:
            value = compute()
            with self._lock:
                self.computed += 1
                self._done[key] = value
                self._done.move_to_end(key)
                while len(self._done) > self.max_entries:
                    self._done.popitem(last=False)
            return value
        finally:
            with self._lock:
                self._running.pop(key, None)
            event.set()

    def clear(self) -> None:
        with self._lock:
            self._done.clear()


def run_key(kind: str, settings: Hashable, data_hash: str, *, upload_session: str | None = None) -> tuple:
    """The cache key of a run: what it is, every setting that decides it, the data's hash, and for an upload the
    id of the session that uploaded it (so uploads are never shared across sessions).

    >>> run_key("mst", (1.0, 0), "abc")
    ('mst', (1.0, 0), 'abc', None)
    >>> run_key("mst", (1.0, 0), "abc", upload_session="s1")[-1]
    's1'
    """
    return (kind, settings, data_hash, upload_session)


#: The server's one shared cache (a module global lives as long as the server process).
RUNS = SharedRuns(enabled=os.environ.get("DPDASH_SHARED_RUNS", "1") != "0")


def session_id() -> str:
    """The running Streamlit session's id ("" outside a session, e.g. in plain tests)."""
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx
    except ImportError:  # pragma: no cover - streamlit is a dependency of the app
        return ""
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else ""


def shared_or_session(kind: str, settings: Hashable, data_key: str, *, uploaded: bool) -> tuple:
    """:func:`run_key` for bundled data (shared by every session) or an upload (this session only)."""
    return run_key(kind, settings, data_key, upload_session=session_id() if uploaded else None)
