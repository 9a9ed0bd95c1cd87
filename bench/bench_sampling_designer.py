"""Engine time behind each plot of the sampling designer, at default and maximum settings.

Run: ``.venv/bin/python bench/bench_sampling_designer.py`` (prints a markdown table; save it to
``bench/results/sampling_designer.md``). Redraw budget: 300 ms per slider change (spec §8); frame summary ≤ 3 s.
Times are engine + figure construction (no Streamlit, cold cache), median and max of several repeats.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import sampling as sp  # noqa: E402
from engine import sampling_figures as sf  # noqa: E402

REPEATS = 5


def timed(fn, repeats: int = REPEATS) -> tuple[float, float, float]:
    """Median and max wall time and median CPU time (ms); CPU time shows the cost without other load."""
    fn()  # warm-up (imports, allocation)
    wall, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return statistics.median(wall), max(wall), statistics.median(cpu)


def p1(eps, n):
    df = sf.rate_curve_table(epsilon=eps, n=n)
    sp.amplify_srswor(epsilon=eps, m=max(1, n // 100), n=n)
    sp.calibrate_srswor(epsilon_target=1.0, rate=0.01)
    sf.make_rate_figure(df, epsilon=eps, schemes=["SRSWOR", "Poisson", "SRSWR"], current_rate=0.01,
                        cluster_band=(0.1, 0.5, 0.6))


def tab2(eps, n, sd):
    pmf = sp.size_pmf_mixture(sp.size_pmf_truncnorm(n, mean=n / 2, sd=sd), p_full=1e-10)
    b = sp.amplify_random_size(pmf, epsilon=eps)
    sp.calibrate_random_size(pmf, epsilon_target=eps / 2)
    sf.make_pmf_figure(sf.size_pmf_table(pmf, epsilon=eps), tilted_mean=b.tilted_mean)


def p2(eps, n):
    sf.make_sigma_figure(sf.sigma_curve_table(n=n, mean=n / 2, epsilon=eps), epsilon=eps, current_sd=n / 100)


def p4(eps, r, pairs):
    lo = int(np.ceil(1 / r))
    df = sf.sawtooth_table(epsilon=eps, rate=r, n_min=lo, n_max=lo + pairs - 1)
    a = sp.amplify_randomized_rounding(epsilon=eps, rate=r)
    sp.calibrate_randomized_rounding(epsilon_target=1.0, rate=r)
    sf.make_sawtooth_figure(df, epsilon=eps, theorem6=a.epsilon_population, worst_channel=0.1)


def p5(k, ell):
    sf.make_cluster_heatmap(sf.cluster_heatmap_table(n_clusters=k, n_drawn=ell), current_size=20, current_epsilon=1)


def p6(sizes, ell):
    b = sp.cluster_bounds(sizes, epsilon=1.0, n_drawn=ell)
    sp.two_stage_cluster_upper(sizes, epsilon=1.0, n_drawn=ell, within_rate=0.1)
    sp.calibrate_cluster(sizes, epsilon_target=0.5, n_drawn=ell, within_rate=0.1)
    sf.make_cluster_bars_figure(sf.cluster_bars_table(sizes, b), epsilon=1.0, naive=b.naive_srs)


def p78(N, S, m):
    df = sf.allocation_table(N, S, m=m, value_max=1000.0, epsilon=1.0, names=[str(i) for i in range(len(N))])
    sf.make_allocation_figure(df)
    sf.make_variance_figure(df)
    sp.proportional_allocation(N, rate=m / N.sum(), epsilon=1.0)


def p9(N, mean, S, m, bounds):
    s = sp.neyman_worst_shift(N, mean, S, m=m, bounds=bounds)
    sf.make_shift_figure(sf.shift_table(s, [str(i) for i in range(len(N))]))


def main() -> None:
    rng = np.random.default_rng(0)
    N200 = rng.integers(500, 5000, 200).astype(float)
    S200 = rng.uniform(1, 200, 200)
    sizes_max = np.floor(rng.lognormal(np.log(20), 1.0, 100_000) + 0.5)
    frame = pd.DataFrame({"stratum": rng.integers(0, 200, 2_000_000), "cluster": rng.integers(0, 100_000, 2_000_000),
                          "value": rng.normal(size=2_000_000)})
    rows = [
        ("P1 ε′ vs rate + SRS cards", "ε=1, n=10⁴", lambda: p1(1.0, 10_000), "ε=10, n=10⁹", lambda: p1(10.0, 10**9)),
        ("Tab 2 cards + P3 size law", "n=10⁴, σ=100", lambda: tab2(1.0, 10_000, 100.0),
         "n=10⁶, σ=10⁵", lambda: tab2(0.01, 10**6, 1e5)),
        ("P2 bounds vs σ (40 points)", "n=10⁴", lambda: p2(1.0, 10_000), "n=10⁶", lambda: p2(0.01, 10**6)),
        ("P4 rounding sawtooth", "200 pairs", lambda: p4(1.0, 0.05, 200), "2,000 pairs", lambda: p4(1.0, 0.001, 2000)),
        ("P5 cluster heatmap 60×60", "k=100, ℓ=10", lambda: p5(100, 10), "k=10⁵, ℓ=5·10⁴", lambda: p5(100_000, 50_000)),
        ("P6 cluster bounds + calibration", "100 clusters", lambda: p6(np.full(100, 20.0), 10),
         "10⁵ clusters", lambda: p6(sizes_max, 1000)),
        ("P7/P8 allocations (3 methods)", "SP18, m=120",
         lambda: p78(np.array([3000., 1000, 250]), np.array([2., 12, 150]), 120),
         "200 strata, m=10⁵", lambda: p78(N200, S200, 100_000)),
        ("P9 Neyman worst shift (201-pt grid)", "SP18",
         lambda: p9(np.array([3000., 1000, 250]), np.array([4., 25, 400]), np.array([2., 12, 150]), 120,
                    [(0, 10), (10, 100), (100, 2000)]),
         "200 strata", lambda: p9(N200, S200 * 2, S200, 100_000, [(0.0, 1000.0)] * 200)),
        ("Frame summary (upload)", "10⁴ rows",
         lambda: sp.summarize_frame(frame.iloc[:10_000], stratum_col="stratum", cluster_col="cluster",
                                    value_col="value"),
         "2·10⁶ rows",
         lambda: sp.summarize_frame(frame, stratum_col="stratum", cluster_col="cluster", value_col="value")),
    ]
    print(f"# Sampling designer — engine benchmark\n\nPython {platform.python_version()}, numpy {np.__version__}, "
          f"{platform.machine()}; median / max of {REPEATS} runs after one warm-up, milliseconds. Budget: 300 ms per "
          "redraw (frame summary: 3,000 ms, once per upload, then cached).\n")
    print("| Plot / computation | default setting | wall median | wall max | CPU median | max setting | wall median "
          "| wall max | CPU median | CPU within budget |")
    print("|---|---|---:|---:|---:|---|---:|---:|---:|---|")
    for name, d_lab, d_fn, m_lab, m_fn in rows:
        dm, dx, dc = timed(d_fn)
        reps = 2 if "Frame" in name else REPEATS
        mm, mx, mc = timed(m_fn, reps)
        budget = 3000 if "Frame" in name else 300
        ok = "yes" if max(dc, mc) <= budget else "NO"
        print(f"| {name} | {d_lab} | {dm:.1f} | {dx:.1f} | {dc:.1f} | {m_lab} | {mm:.1f} | {mx:.1f} | {mc:.1f} "
              f"| {ok} |")
    print(f"\nLoad average while measuring: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores "
          "(wall times are inflated by other processes; CPU time is this process alone).")


if __name__ == "__main__":
    main()
