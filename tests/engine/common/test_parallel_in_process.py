"""The worker-side parts of dpdash.common.parallel, run in this process (issue 35 items 2 and 4).

In the suite these functions run inside loky's worker processes, which coverage does not follow; here each is called
directly, with the process-wide effects (niceness, exit, the watcher thread) replaced by recorders, so what they do is
checked and a change to them can turn a test red.
"""

from __future__ import annotations

import os
import threading
import time

import pytest

import dpdash
from dpdash.common import parallel


class _Exited(Exception):
    pass


def test_relayed_runs_the_task_and_writes_its_progress_and_cpu(tmp_path):
    path = str(tmp_path / "relay")
    seen = []

    def task(a, *, b, progress):
        for i in range(3):
            progress(i, a + b)
            seen.append(i)
        time.sleep(0.06)  # several heartbeats at poll_s = 0.01
        return a * b

    value, cpu = parallel._relayed(task, path, 0.01, True, (3,), {"b": 4})
    assert value == 12 and cpu >= 0.0 and seen == [0, 1, 2]
    seq, cpu_so_far, last = parallel._relay_read(path)
    assert seq == 3 and last == (2, 7) and cpu_so_far >= 0.0
    # without progress the task gets no progress keyword; the relay file still gets heartbeats
    value, _ = parallel._relayed(lambda x: x + 1, str(tmp_path / "r2"), 0.01, False, (1,), {})
    assert value == 2


def test_relay_read_of_a_missing_or_broken_file_is_none(tmp_path):
    assert parallel._relay_read(str(tmp_path / "absent")) is None
    (tmp_path / "broken").write_bytes(b"not a pickle")
    assert parallel._relay_read(str(tmp_path / "broken")) is None


def test_worker_init_lowers_priority_by_the_value_passed_and_watches_the_parent(monkeypatch):
    niced = []
    monkeypatch.setattr(parallel.os, "nice", lambda inc: niced.append(inc) or 0)
    monkeypatch.setattr(parallel, "_DEDICATED", False)
    monkeypatch.setattr(parallel, "_WATCHER", None)
    started = []
    monkeypatch.setattr(parallel, "_watch", lambda ppid, poll_s: started.append((ppid, poll_s)))
    parallel._worker_init(os.getppid(), 7)
    assert niced == [7] and parallel._DEDICATED is True
    parallel._WATCHER.join(timeout=5)
    assert started == [(os.getppid(), parallel.PARENT_POLL_S)]
    niced.clear()
    parallel._worker_init(os.getppid(), 0)  # 0: stay at the starter's priority, no call
    assert niced == []


def test_watch_parent_has_nothing_to_watch_under_pid_1_and_exits_when_the_parent_is_gone(monkeypatch):
    assert parallel.watch_parent(parent=1) is None

    def fake_exit(code):
        raise _Exited(code)

    monkeypatch.setattr(parallel.os, "_exit", fake_exit)
    with pytest.raises(_Exited):  # the parent named is not this process's parent: it died while we started
        parallel.watch_parent(parent=os.getppid() + 10_000)
    with pytest.raises(_Exited):  # the loop: the parent id changes, the process exits at the next look
        parallel._watch(os.getppid() + 10_000, 0.001)


def test_kill_live_pools_ends_every_pool_even_a_broken_one(monkeypatch):
    ended = []

    class Pool:
        def __init__(self, broken):
            self.broken = broken

        def shutdown(self, wait, kill_workers):
            ended.append((self.broken, wait, kill_workers))
            if self.broken:
                raise RuntimeError("already closed")

    pools = {Pool(True), Pool(False)}
    monkeypatch.setattr(parallel, "_LIVE_POOLS", set(pools))
    monkeypatch.setattr(parallel, "_LIVE_LOCK", threading.Lock())
    parallel._kill_live_pools()
    assert sorted(ended) == [(False, False, True), (True, False, True)]
    assert parallel._LIVE_POOLS == set()


def test_the_package_loads_a_wing_on_first_use_and_names_only_its_wings():
    import importlib

    assert dpdash.__getattr__("epsilon") is importlib.import_module("dpdash.epsilon")
    with pytest.raises(AttributeError, match="no attribute 'nowing'"):
        dpdash.__getattr__("nowing")
    assert set(dpdash.WINGS) <= set(dir(dpdash))
