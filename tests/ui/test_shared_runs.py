"""ui.shared_runs: identical long runs are computed once per server; uploads stay per session (issue 23 item 5)."""

from __future__ import annotations

import threading
import time

import pytest

from ui.shared_runs import SharedRuns, run_key


def test_a_second_session_gets_the_first_result_without_recomputing():
    cache, calls = SharedRuns(4), []
    key = run_key("mst", (1.0, 0), "hash-of-adult")
    first = cache.get(key, lambda: calls.append(1) or {"fit": 42})
    second = cache.get(key, lambda: calls.append(2) or {"fit": -1})
    assert first is second and second == {"fit": 42} and calls == [1] and cache.computed == 1


def test_a_session_that_arrives_mid_run_waits_for_it_instead_of_starting_a_copy():
    cache, calls = SharedRuns(4), []
    started = threading.Event()

    def slow():
        calls.append("run")
        started.set()
        time.sleep(0.3)
        return "result"

    out = {}
    t = threading.Thread(target=lambda: out.setdefault("a", cache.get("k", slow)))
    t.start()
    started.wait(5)
    out["b"] = cache.get("k", slow)
    t.join(5)
    assert out == {"a": "result", "b": "result"} and calls == ["run"]


def test_uploads_are_not_shared_across_sessions():
    cache = SharedRuns(4)
    a = cache.get(run_key("coherence", ("cfg",), "h", upload_session="s1"), lambda: "from s1")
    b = cache.get(run_key("coherence", ("cfg",), "h", upload_session="s2"), lambda: "from s2")
    assert (a, b) == ("from s1", "from s2") and cache.computed == 2


def test_the_cache_is_bounded_and_drops_the_least_recently_used():
    cache = SharedRuns(2)
    for k in "abc":
        cache.get(k, lambda k=k: k.upper())
    assert len(cache) == 2 and cache.peek("a") == (False, None) and cache.peek("c") == (True, "C")


def test_a_failed_run_is_not_cached_and_the_next_caller_retries():
    cache = SharedRuns(2)
    with pytest.raises(RuntimeError):
        cache.get("k", lambda: (_ for _ in ()).throw(RuntimeError("solver failed")))
    assert cache.get("k", lambda: "ok") == "ok"


def test_max_entries_must_be_positive():
    with pytest.raises(ValueError, match="max_entries"):
        SharedRuns(0)


def test_a_disabled_cache_computes_every_run():
    cache, calls = SharedRuns(4, enabled=False), []
    assert cache.get("k", lambda: calls.append(1) or "a") == "a"
    assert cache.get("k", lambda: calls.append(2) or "b") == "b"
    assert calls == [1, 2] and cache.peek("k") == (False, None)
