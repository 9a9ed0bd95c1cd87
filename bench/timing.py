"""Median wall time of a call, for the engine benchmarks (one definition; `make bench` runs each bench_*.py)."""

from __future__ import annotations

import statistics
import time


def timed(fn, reps: int = 5, *, warmup: bool = False) -> float:
    """Median wall-clock seconds of ``fn()`` over ``reps`` calls (after one untimed call when ``warmup``)."""
    if warmup:
        fn()  # imports and first-call costs stay out of the median
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)
