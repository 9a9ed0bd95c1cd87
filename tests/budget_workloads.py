"""The 25-statistic plan that issue 23's planner target is measured on: one definition for the engine test that
holds the budget (tests/engine/accounting/test_budget.py) and the benchmark that reports it (bench/bench_targets.py)."""

from __future__ import annotations

from dpdash.accounting import budget as B


def stats25() -> list[B.StatisticSpec]:
    """25 statistics cycling through count, mean, histogram (10 cells) and sum, alternately Laplace and Gaussian,
    with targets growing 10% per row."""
    out = []
    for i in range(25):
        q = ["count", "mean", "histogram", "sum"][i % 4]
        out.append(B.StatisticSpec(f"s{i}", q, target_half_width=[50, 500, 100, 2000][i % 4] * (1 + 0.1 * i),
                                   mechanism="laplace" if i % 2 == 0 else "gaussian", lower=0,
                                   upper=[1, 200000, 1, 1000][i % 4], n=10000 if q == "mean" else None,
                                   cells=10 if q == "histogram" else 1))
    return out
