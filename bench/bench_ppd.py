"""Benchmark of dpdash/accounting/public_info.py and dpdash/stratify/partial_release.py against the performance
targets of
shared/specs/partially_private.md §8.

Run: ``.venv/bin/python bench/bench_ppd.py`` (prints a markdown table; save it to bench/results/ppd.md).
Times are wall-clock seconds, the best of a few repeats for short items and one run for long ones.
``--jobs N`` instead times only the viewer's three WEM buttons as the page runs them (all chains of a button in
one ``run_release_units`` call over N worker processes); run it with ``--jobs 1`` and ``--jobs 2`` to compare.
"""

from __future__ import annotations

import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpdash.stratify import partial_release  # noqa: E402
from dpdash.accounting import public_info  # noqa: E402
from dpdash.epsilon import public_info_figures  # noqa: E402


def best(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def page_buttons(n_jobs: int) -> None:
    """The viewer's "Run at this ε", "Run ε sweep" and "Run α sweep" at the defaults, through run_release_units."""
    P = partial_release.synth_pa_like()
    t, wem = P.T - 1, ["wem_naive", "wem_congenial", "wem_prior"]
    nan = math.nan
    buttons = {
        "Run at this ε (3 WEM × 3 draws + 3 WEM × 23 months × 1 draw)":
            [(t, 1.0, m, 1.0 if m == "wem_prior" else nan, 3) for m in wem]
            + [(tt, 1.0, m, 1.0 if m == "wem_prior" else nan, 1) for m in wem for tt in range(1, P.T)],
        "Run ε sweep (4 ε × PP + 3 WEM × 3 draws)":
            [(t, e, m, 1.0 if m == "wem_prior" else nan, 3) for e in (0.5, 1.0, 2.0, 5.0) for m in ["pp"] + wem],
        "Run α sweep (5 α WEM-prior + 2 baselines, × 3 draws)":
            [(t, 1.0, "wem_prior", a, 3) for a in (1e-3, 1e-2, 0.1, 1.0, 10.0)]
            + [(t, 1.0, m, nan, 3) for m in ("wem_naive", "wem_congenial")],
    }
    print(f"| button (n_jobs = {n_jobs}) | measured (s) | mean total ℓ₂ (identical for any n_jobs) |\n|---|---|---|")
    t0 = time.perf_counter()
    partial_release.run_release_units(P, [(1, 1.0, "pp", nan, 2)], rng=0, n_jobs=n_jobs)  # starts the worker pool
    print(f"| worker pool start-up (the page's first WEM run only; loky reuses workers for 300 s) "
          f"| {time.perf_counter() - t0:.1f} | |")
    for name, units in buttons.items():
        t0 = time.perf_counter()
        frames = partial_release.run_release_units(P, units, rng=0, n_jobs=n_jobs)
        sec = time.perf_counter() - t0
        loss = float(np.mean([f["total_l2"].mean() for f in frames]))
        print(f"| {name} | {sec:.1f} | {loss:.6f} |")


def main() -> None:
    if "--jobs" in sys.argv:
        page_buttons(int(sys.argv[sys.argv.index("--jobs") + 1]))
        return
    P = partial_release.synth_pa_like()
    z = np.linspace(0, 1, 11)
    rows: list[tuple[str, str, float]] = []

    def tab_a():
        public_info.eps_star_invariant(1.0, 100)
        public_info.delta_z_binom(500, 0.2, 0.4)
        public_info.realized_epsilon_trunc_em(1000, epsilon=1.0, kappa=2)
        public_info_figures.make_invariant_ratio_figure(100, current=1.0)
        public_info_figures.make_em_audit_figure(20, current=1.0)

    rows.append(("Tab A interaction (engine + figures of sections 1, 2, 5, uncached)", "< 0.5 s", best(tab_a)))
    rows.append(("Δ_z heatmap 11×11 at n = 500", "< 1 s", best(lambda: public_info.delta_z_table(500, z, z))))
    rows.append(("`lemma7_toy`, continuous, n = 50", "< 1 s",
                 best(lambda: public_info.lemma7_toy(50, epsilon=0.5, noise="laplace", post="round_clamp"))))
    rows.append(("Exact Algorithm 1 (9,870 compositions: J = 3, s = 139)", "< 0.2 s",
                 best(lambda: partial_release.posterior_exact_counts([50, 40, 49], 139, [3, 3, 2], epsilon=1,
                                                                     sensitivity=2))))
    rows.append(("Rejection sampler, 200,000 proposals", "< 2 s",
                 best(lambda: partial_release.posterior_rejection_counts([6, 1, 4], 10, [3, 3, 2], epsilon=1,
                                                                         sensitivity=2, n_proposals=200_000, rng=0))))
    rows.append(("PP, one month, J = 67, 3 reps", "< 0.1 s",
                 best(lambda: partial_release.run_partially_private_release(P, 23, epsilons=[1], methods=["pp"], reps=3,
                                                                rng=0))))
    rows.append(("`contraction_frequencies`, 6 ε × 23 months × 20 reps", "< 3 s",
                 best(lambda: partial_release.contraction_frequencies(P, epsilons=[0.1, 0.25, 0.5, 1, 2, 5], reps=20,
                                                                      rng=0),
                      repeat=1)))
    for base in ("naive", "congenial", "prior"):
        rows.append((f"One WEM chain ({base}), J = 67, 30 sweeps", "< 3 s",
                     best(lambda b=base: partial_release.release_month(P, 23, method=f"wem_{b}", epsilon=1, rng=0),
                          repeat=2)))
    wem = ["wem_naive", "wem_congenial", "wem_prior"]
    t0 = time.perf_counter()
    partial_release.run_partially_private_release(P, 23, epsilons=[1], methods=wem, reps=3, rng=0)
    t_run = time.perf_counter() - t0
    rows.append(("Default Run: 3 WEM methods × 3 reps at one ε", "< 30 s", t_run))
    t0 = time.perf_counter()
    for t in range(1, P.T):
        partial_release.run_partially_private_release(P, t, epsilons=[1], methods=wem, reps=1, rng=0)
    rows.append(("… plus the page's series plot: 3 WEM × 23 months × 1 draw", "(part of Run)",
                 time.perf_counter() - t0))
    t0 = time.perf_counter()
    partial_release.run_partially_private_release(P, 23, epsilons=[0.5, 1, 2, 5], methods=["pp"] + wem, reps=3, rng=0)
    rows.append(("ε sweep (4 ε × 4 methods × 3 reps)", "< 2 min", time.perf_counter() - t0))
    t0 = time.perf_counter()
    partial_release.run_partially_private_release(P, 23, epsilons=[1], methods=["wem_prior"],
                                                  alphas=[1e-3, 1e-2, 0.1, 1, 10], reps=3, rng=0)
    partial_release.run_partially_private_release(P, 23, epsilons=[1], methods=["wem_naive", "wem_congenial"], reps=3,
                                                  rng=0)
    rows.append(("α sweep (5 α WEM-prior + 2 baselines, × 3 reps)", "< 1 min", time.perf_counter() - t0))

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan
    print("## dpdash/accounting/public_info.py + dpdash/stratify/partial_release.py benchmark\n\n"
          f"Python {platform.python_version()}, {os.cpu_count()} cores, "
          f"1-min load average at the end {load:.1f} (timings are inflated when the machine is shared).\n")
    print("| item | target (spec §8) | measured (s) |")
    print("|---|---|---|")
    for name, target, sec in rows:
        print(f"| {name} | {target} | {sec:.3f} |")


if __name__ == "__main__":
    main()
