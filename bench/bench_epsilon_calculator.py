"""Bench for the Epsilon calculator: engine-side redraw latency of each live tab, and the heavy computations.

Run: .venv/bin/python bench/bench_epsilon_calculator.py  (prints a markdown table; median of repeats, seconds).
Limits from spec epsilon_calculator.md §7: live redraw ≤ 0.3 s on a 2-vCPU machine; PLD of 1,000 mechanisms in
≤ 20 distinct rows at resolution 1e-4 ≤ 1 s; Tab 2 PLD curve ≤ 2 s; exact KOV ≤ 1 s; Tab 6 ≤ 1 s.
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpdash.accounting import composition as acc  # noqa: E402
from dpdash.accounting import budget as bud  # noqa: E402
from dpdash.accounting import maxinfo as mi  # noqa: E402
from dpdash.accounting import mechanisms as mech  # noqa: E402
from dpdash.epsilon import private_tests as pt  # noqa: E402
from dpdash.epsilon import risk  # noqa: E402


from timing import timed as _timed  # noqa: E402  (bench/ is the script's folder)


def timed(fn, repeats: int = 5) -> float:
    return _timed(fn, repeats, warmup=True)


def tab1():
    c = mech.calibrate("laplace", sensitivity=1, epsilon=0.7, confidence=0.95)
    mech.calibrate("gaussian", sensitivity=1, epsilon=0.7, delta=1e-6)
    return c


def tab1_curves():
    for m in mech.MECHANISMS:
        for e in np.geomspace(1e-3, 20, 36):
            mech.calibrate(m, sensitivity=1, epsilon=float(e), **({"delta": 1e-6} if "gaussian" in m else {}))


RULES_NO_PLD = tuple(r for r in acc.ALL_RULES if r != "pld")


def tab2_analytic():
    acc.composition_curve([acc.laplace(0.1, count=1000)], delta=1e-6, ks=acc.default_ks(1000, 50), rules=RULES_NO_PLD)


def tab2_pld_curve():
    acc.composition_curve([acc.laplace(0.1, count=1000)], delta=1e-6, ks=acc.default_ks(1000, 50), rules=("pld",))


def pld_1000():
    rows = [acc.laplace(0.01 * (i + 1), count=50) for i in range(10)] + \
           [acc.gaussian(5.0 + i, count=50) for i in range(10)]
    assert sum(m.count for m in rows) == 1000
    return acc.compose(rows, delta=1e-6, rule="pld", pld_resolution=1e-4)


def kov_exact():
    return acc.kov_optimal_composition([0.5] * 1000, delta=1e-6)


STATS20 = [bud.StatisticSpec(f"s{i}", ["count", "sum", "mean", "histogram"][i % 4], 10.0 + i, lower=0, upper=100,
                             n=1000 if i % 4 == 2 else None, cells=5 if i % 4 == 3 else 1) for i in range(20)]


def tab3():
    bud.plan_accuracy_first(STATS20, rule="basic", delta=1e-6)
    bud.plan_budget_first(STATS20, epsilon=1.0, rule="basic")


def tab3_kov():
    bud.plan_budget_first(STATS20, epsilon=1.0, rule="kov_optimal")


def tab4():
    seq = [0.01] * 2000
    acc.adaptive_trace(seq, epsilon_g=1.0, delta_g=1e-6, n=10_000)
    for r in ("basic", "advanced", "zcdp"):
        acc.filter_trace(seq, epsilon_g=1.0, delta_g=1e-6, rule=r)


def tab5():
    fpr = np.linspace(0, 1, 401)
    risk.posterior_table(epsilon=1.0)
    risk.tradeoff_fnr(fpr, epsilon=1.0, delta=1e-6)
    risk.tradeoff_laplace(fpr, epsilon=1.0)
    [risk.advantage_bound(epsilon=float(e)) for e in np.geomspace(1e-3, 20, 200)]


def tab6():
    n, beta = 6400, 0.05
    for m in mech.ADAPTIVE_METHODS:
        for k in np.unique(np.round(np.geomspace(1, n, 25)).astype(int)):
            mech.adaptive_width(m, n=n, k=int(k), beta=beta, noise="gaussian")


def tab7_cv():
    pt.gof_critical_values(np.full(100, 0.01), n=1000, rho=0.00125)


def tab7_cv_nonuniform():
    p = np.random.default_rng(0).dirichlet(np.full(100, 3.0))
    pt.gof_critical_values(p, n=1000, rho=0.00125)


def tab7_live():
    p = np.array([0.5, 1 / 6, 1 / 6, 1 / 6])
    dl = 0.01 * np.array([1, -1 / 3, -1 / 3, -1 / 3])
    for x in np.geomspace(1e2, 1e7, 26):
        pt.naive_type_one_error(p, n=float(x), rho=0.00125)
        for t in ("projected", "nonprojected", "classical_nonprivate"):
            pt.asymptotic_power(p, dl, n=float(x), rho=0.00125, test=t)


def tab7_simulate():
    p = np.array([0.5, 1 / 6, 1 / 6, 1 / 6])
    pt.simulate_gof(p, p, n=10_000, alpha=0.05, noise="gaussian", rho=0.00125, trials=1000, m=59,
                    rng=np.random.default_rng(0))


def tab8():
    mi.pvalue_correction_pure_dp(0.05, epsilon=0.01, n=10_000)
    for t in np.geomspace(1e-3, 10, 300):
        mi.pvalue_correction_mutual_info(0.05, t_bits=float(t))
        mi.pvalue_correction_russo_zou(0.05, t_bits=float(t))
    mi.max_epsilon_for_correction(0.05, gamma=0.01, n=10_000)


CASES = [
    ("Tab 1 cards (calibrate)", tab1, 0.3),
    ("Tab 1 half-width curves (4 mechanisms × 36 ε; cached per δ/confidence)", tab1_curves, 0.3),
    ("Tab 2 analytic curves (k ≤ 1,000, 50 points, 7 rules)", tab2_analytic, 0.3),
    ("Tab 2 PLD curve (12 points, resolution 1e-3)", tab2_pld_curve, 2.0),
    ("PLD of 1,000 mechanisms in 20 distinct rows (1e-4)", pld_1000, 1.0),
    ("Exact KOV, 1,000 × ε₀ = 0.5", kov_exact, 1.0),
    ("Tab 3 plans, 20 statistics (basic)", tab3, 0.3),
    ("Tab 3 budget-first, 20 statistics (kov_optimal)", tab3_kov, None),
    ("Tab 4 filters and odometers, 2,000 requests", tab4, 0.3),
    ("Tab 5 risk curves", tab5, 0.3),
    ("Tab 6 widths, 6 methods × 25 k", tab6, 1.0),
    ("Tab 7 critical values, d = 100 uniform", tab7_cv, 0.3),
    ("Tab 7 critical values, d = 100 non-uniform (Imhof)", tab7_cv_nonuniform, 0.3),
    ("Tab 7 live curves (size and power, 26 n)", tab7_live, 0.3),
    ("Tab 7 Simulate (1,000 trials, one cell; behind a button)", tab7_simulate, None),
    ("Tab 8 max-information", tab8, 0.3),
]


def main() -> None:
    print(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}; median of 5 runs after a warm-up.\n")
    print("| computation | median (s) | limit (s) | within |")
    print("|---|---:|---:|:---:|")
    for name, fn, limit in CASES:
        t = timed(fn, repeats=3 if limit is None or limit > 0.5 else 5)
        ok = "—" if limit is None else ("yes" if t <= limit else "NO")
        print(f"| {name} | {t:.4f} | {'—' if limit is None else f'{limit:g}'} | {ok} |")


if __name__ == "__main__":
    main()
