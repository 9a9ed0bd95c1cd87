"""Server-side time of one redraw of each sampling designer tab, at the default and the largest settings.

Run: ``.venv/bin/python bench/bench_sampling_designer.py`` (prints a markdown table; save it to
``bench/results/sampling_designer.md``). Redraw budget: 300 ms per slider change (spec §8); frame summary ≤ 3 s.
Each row makes the calls the page makes for that tab today (engine results, figures, CSV headers, verdict sentences,
the "Copy as code" script), cold (no cache), without Streamlit's rendering; median and max of several repeats.
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

from dpdash.sampling import core as sp  # noqa: E402
from dpdash.sampling import census as cs  # noqa: E402
from dpdash.sampling import figures as sf  # noqa: E402
from dpdash.sampling import views as vw  # noqa: E402
from dpdash.sampling import verdicts as sv  # noqa: E402
from dpdash.sampling import script as ss  # noqa: E402

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


# Each function below makes the engine, figure, verdict and script calls one redraw of that tab makes on the
# page (pages/sampling_designer.py), in the same order, with no cache (the page caches several of them: a cold
# call is what a new setting costs). Streamlit's own rendering is not included (bench_browser_latency measures it).

def tab_simple(eps, n, m=None):
    m = m or max(1, n // 100)
    q = m / n
    cards = [sp.amplify_srswor(epsilon=eps, m=m, n=n, delta=1e-6), sp.amplify_poisson(epsilon=eps, rate=q, delta=1e-6),
             sp.amplify_srswr(epsilon=eps, m=m, n=n)]
    cal = sp.calibrate_srswor(epsilon_target=1.0, rate=q)
    sp.amplify_poisson(epsilon=cal.epsilon_sample_paper_approx, rate=q)
    sp.lemma16_bound(epsilon=eps, m=m, m_prime=min(m + 1, n + 1), n=n)
    df = sf.rate_curve_table(epsilon=eps, n=n)
    band = sp.cluster_bounds(np.full(100, 20.0), epsilon=eps, n_drawn=10)        # the Cluster tab's overlay
    sf.make_rate_figure(df, epsilon=eps, schemes=["SRSWOR", "Poisson", "SRSWR"], current_rate=q,
                        cluster_band=(band.rate_clusters, band.worst_lower, band.worst_upper))
    sf.for_people(df)
    sv.simple_verdict(epsilon=eps, epsilon_population=cards[0].epsilon_population, rate=q, scheme="srswor", m=m, n=n,
                      shortcut=cards[0].epsilon_paper_approx)
    ss.simple_script(epsilon=eps, n=n, m=m, rate=q)


def tab_random(eps, n, sd, family="mixture"):
    law = sp.size_law_from_controls(n, family=family, mean=n / 2, sd=sd, low=0, high=n, base="gaussian",
                                    p_full=1e-10)
    view = sf.random_size_view(law, epsilon=eps, epsilon_target=eps / 2, mean=n / 2,
                               current_sd=sd if family == "gaussian" else None)
    b = view.bounds
    sf.make_sigma_figure(view.sigma_table, epsilon=eps, current_sd=sd)
    sf.make_pmf_figure(view.pmf_table, tilted_mean=b.tilted_mean)
    sv.random_size_verdict(epsilon=eps, n=n, mean_size=b.mean_size, tilted_mean=b.tilted_mean, lower=b.epsilon_lower,
                           upper=b.epsilon_upper)
    ss.random_size_script(epsilon=eps, n=n, family=family, mean=n / 2, sd=sd, low=0, high=n,
                          base="gaussian", p_full=1e-10)


def tab_rounding(eps, r, pairs):
    amp = sp.amplify_randomized_rounding(epsilon=eps, rate=r)
    rstar = sp.randomized_rounding_crossover(epsilon=eps)
    cal = sp.calibrate_randomized_rounding(epsilon_target=1.0, rate=r)
    sp.amplify_randomized_rounding(epsilon=cal.epsilon_sample_paper_approx, rate=r)
    for meth in ("deterministic", "randomized"):
        sp.size_channel_loss(sp.rounding_size_pmf(14, rate=r, method=meth),
                             sp.rounding_size_pmf(15, rate=r, method=meth), epsilon=eps)
    sp.degradation_loss([2, -3, 5], epsilon=eps)
    lo = int(np.ceil(1 / r))
    df = sf.sawtooth_table(epsilon=eps, rate=r, n_min=lo, n_max=lo + pairs - 1)
    worst = sp.amplify_poisson(epsilon=eps, rate=r).epsilon_population
    sf.make_sawtooth_figure(df, epsilon=eps, theorem6=amp.epsilon_population, worst_channel=worst)
    sv.rounding_verdict(epsilon=eps, rate=r, epsilon_population=amp.epsilon_population, crossover=rstar)
    ss.rounding_script(epsilon=eps, rate=r, pair_n=14)


def tab_cluster(sizes, ell, eps=1.0, rw=0.1):
    k = len(sizes)
    b = sp.cluster_bounds(sizes, epsilon=eps, n_drawn=ell)
    two = sp.two_stage_cluster_upper(sizes, epsilon=eps, n_drawn=ell, within_rate=rw)
    sp.calibrate_cluster(sizes, epsilon_target=0.5, n_drawn=ell, within_rate=rw)
    sp.cluster_test_bound(epsilon_conditional=eps, epsilon_test=2.0, n_clusters=k, n_drawn=ell)
    sf.make_cluster_heatmap(sf.cluster_heatmap_table(n_clusters=k, n_drawn=ell), current_size=20,
                            current_epsilon=eps)
    sf.make_cluster_bars_figure(sf.cluster_bars_table(sizes, b), epsilon=eps, naive=b.naive_srs)
    sv.cluster_verdict(epsilon=eps, n_drawn=ell, n_clusters=k, worst_lower=b.worst_lower, worst_upper=b.worst_upper,
                       naive_srs=b.naive_srs)
    ss.cluster_script(epsilon=eps, sizes=sizes, n_drawn=ell, within_rate=rw)
    return two


def tab_strata(N, mean, S, m, bounds):
    eps = 1.0
    names = [str(i) for i in range(len(N))]
    r = m / N.sum()
    pa = sp.proportional_allocation(N, rate=r, epsilon=eps)
    cal = sp.calibrate_randomized_rounding(epsilon_target=1.0, rate=r)
    sp.amplify_randomized_rounding(epsilon=cal.epsilon_sample_paper_approx, rate=r)
    df = sf.allocation_table(N, S, m=m, value_max=1000.0, epsilon=np.full(len(N), eps), names=names)
    tot = sf.allocation_totals(df)
    sf.make_allocation_figure(df)
    sf.make_variance_figure(df)
    sv.allocation_verdict({k: float(v) for k, v in tot["total"].items()})
    shift = sp.neyman_worst_shift(N, mean, S, m=m, bounds=bounds)
    deg = sp.degradation_loss(shift.delta_rounded, epsilon=eps)
    sf.make_shift_figure(sf.shift_table(shift, names))
    sf.make_cbp_figure(sf.cbp_table(sp.cbp_example()))
    sv.stratified_verdict(epsilon=eps, m=m, population=int(N.sum()),
                          epsilon_population=pa.amplification.epsilon_population, covered=pa.theorem11_applies,
                          shift_total=int(shift.l1_rounded), shift_loss=deg.loss_all_counts)
    ss.stratified_script(epsilon=eps, N_h=N, S_h=S, epsilon_h=np.full(len(N), eps), m=m,
                         value_max=1000.0, methods=("neyman", "proportional", "privacy_aware"))


def engine_census(kw):
    """The engine calls of the random-size tab's cards at n = 10⁹: Theorem 3's bounds and the calibration."""
    law = cs.census_size_law(10**9, family="gaussian", low=0, high=0, **kw)
    cs.amplify(law, epsilon=1.0)
    cs.calibrate(law, epsilon_target=1.0)


def main() -> None:
    rng = np.random.default_rng(0)
    N200 = rng.integers(500, 5000, 200).astype(float)
    S200 = rng.uniform(1, 200, 200)
    sizes_max = np.floor(rng.lognormal(np.log(20), 1.0, 100_000) + 0.5)
    frame = pd.DataFrame({"stratum": rng.integers(0, 200, 2_000_000), "cluster": rng.integers(0, 100_000, 2_000_000),
                          "value": rng.normal(size=2_000_000)})
    rows = [
        ("Simple random samples", "ε=1, n=10⁴ (default)", lambda: tab_simple(1.0, 10_000),
         "ε=10, n=10⁹", lambda: tab_simple(10.0, 10**9)),
        ("Random sample size", "n=10⁴, σ=100 (default)", lambda: tab_random(1.0, 10_000, 100.0, "gaussian"),
         "n=10⁶, σ=10⁵, mixture", lambda: tab_random(0.01, 10**6, 1e5)),
        # census sizes (issue 23 item 4): the whole tab view (cards, calibration, σ-curve of 40 laws, size-law table)
        ("Random sample size, n=10⁹", "Gaussian 5,000 ± 100",
         lambda: vw.random_view(epsilon=1.0, n=10**9, target=1.0, family="gaussian", base="gaussian", mean=5000.0,
                                sd=100.0, low=0, high=0, p_full=1e-10),
         "mixture, n/2 ± 10⁷",
         lambda: vw.random_view(epsilon=1.0, n=10**9, target=1.0, family="mixture", base="gaussian", mean=5e8,
                                sd=1e7, low=0, high=0, p_full=1e-10)),
        ("Theorem 3 bounds + calibration, n=10⁹", "Gaussian n/2 ± 2·10⁴",
         lambda: engine_census(dict(mean=5e8, sd=2e4)), "Gaussian n/2 ± 10⁸", lambda: engine_census(dict(mean=5e8,
                                                                                                      sd=1e8))),
        ("Rounding", "r=0.05, 200 pairs (default)", lambda: tab_rounding(1.0, 0.05, 200),
         "r=0.001, 2,000 pairs", lambda: tab_rounding(1.0, 0.001, 2000)),
        ("Cluster sampling", "100 clusters (default)", lambda: tab_cluster(np.full(100, 20.0), 10),
         "10⁵ lognormal clusters", lambda: tab_cluster(sizes_max, 1000)),
        ("Stratified sampling", "SP18, m=120 (default)",
         lambda: tab_strata(np.array([3000., 1000, 250]), np.array([4., 25, 400]), np.array([2., 12, 150]), 120,
                            [(0, 10), (10, 100), (100, 2000)]),
         "200 strata, m=10⁵", lambda: tab_strata(N200, S200 * 2, S200, 100_000, [(0.0, 1000.0)] * 200)),
        ("Frame summary (upload)", "10⁴ rows",
         lambda: sp.summarize_frame(frame.iloc[:10_000], stratum_col="stratum", cluster_col="cluster",
                                    value_col="value"),
         "2·10⁶ rows",
         lambda: sp.summarize_frame(frame, stratum_col="stratum", cluster_col="cluster", value_col="value")),
    ]
    print("# Sampling designer — server-side redraw benchmark\n\n"
          f"Python {platform.python_version()}, numpy {np.__version__}, "
          f"{platform.machine()}; median / max of {REPEATS} runs after one warm-up, milliseconds. Budget: 300 ms per "
          "redraw (frame summary: 3,000 ms, once per upload, then cached).\n")
    print("| Tab (one redraw) | default setting | wall median | wall max | CPU median | max setting | wall median "
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
