"""Benchmark of the coherence explorer's engine (specs/coherence_explorer.md §8).

Runs the paper's Section 5 setting on the synthetic population (n ≈ 27k, clear release, 50-tree random
forest, hard output, 8-feature lens, groups Everyone and DREM = 1, R = 100) with joblib on 2 cores and
sequentially, checks that both give the same W1 matrix, and times the smaller operations the page uses.

    .venv/bin/python bench/bench_coherence_explorer.py [--reps 100] [--n 27254]

Prints a markdown table (save it to bench/results/coherence_explorer.md).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpdash.coherence import core as co  # noqa: E402
from dpdash.accounting import maxinfo as mi  # noqa: E402
from dpdash.common.data import census_population  # noqa: E402

LENS = ("AGEP", "DENSITY", "INDP_CAT", "INDP", "SEX", "EDU", "HISP", "RAC1P")
GROUPS = (co.GroupSpec("Everyone"), co.GroupSpec("DREM = 1", (co.Condition("DREM", values=(1,)),)))


def _time(fn, repeat: int = 1):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def _worker_cpu() -> float:
    """CPU seconds (user + system) used so far by this process's children: joblib's loky workers (Linux)."""
    tick = os.sysconf("SC_CLK_TCK")
    me = os.getpid()
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == me:
                total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            pass
    return total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--n", type=int, default=27_254)
    args = ap.parse_args()

    df = census_population(args.n, rng=0)
    cfg = co.ExperimentConfig("DREM", 1, LENS, GROUPS, repetitions=args.reps, rng=0)
    prepared = co.prepare(df, cfg)

    # Warm the loky pool once so the parallel timing measures the work, not process start-up.
    co.run_experiment(df, co.ExperimentConfig("DREM", 1, LENS, GROUPS, repetitions=2,
                                              learner=co.LearnerSpec(n_estimators=2)), n_jobs=2)
    load_par = _load()
    cpu0 = _worker_cpu()
    t_par, r_par = _time(lambda: co.run_experiment(df, cfg, n_jobs=2))
    cores_par = (_worker_cpu() - cpu0) / t_par
    load_seq = _load()
    c0 = time.process_time()
    t_seq, r_seq = _time(lambda: co.run_experiment(df, cfg, n_jobs=1))
    cores_seq = (time.process_time() - c0) / t_seq
    same = np.array_equal(r_par.w1, r_seq.w1, equal_nan=True)

    t_trial, _ = _time(lambda: co.run_trial(prepared, cfg, 0), repeat=3)
    df20 = census_population(20_000, rng=0)
    cfg20 = co.ExperimentConfig("DREM", 1, LENS, GROUPS, repetitions=20, rng=0)
    t_prev, _ = _time(lambda: co.run_trial(co.prepare(df20, cfg20), cfg20, 0, keep_predictions=True), repeat=3)
    t_r20, _ = _time(lambda: co.run_experiment(df20, cfg20, n_jobs=2))
    t_floor, _ = _time(lambda: co.noise_floor(df20, cfg20, reps=200))
    bits = (df20["SEX"] == 2).to_numpy()
    masks = {"Everyone": np.ones(len(df20), bool), "Black": (df20["RAC1P"] == 2).to_numpy(),
             "65+": (df20["AGEP"] >= 65).to_numpy(), "Hispanic": (df20["HISP"] >= 1).to_numpy()}
    t_s7, _ = _time(lambda: co.single_column_experiment(bits, masks, reps=1000), repeat=2)
    t_g, _ = _time(lambda: [mi.gamma_pure(0.01, 1e6, 0.5, 1e-6, 10) for _ in range(1000)], repeat=3)
    t_curve, _ = _time(lambda: mi.gamma_curve(np.logspace(-5, 1, 200), 1e6, 0.5, 1e-6, 10), repeat=5)
    t_amin, _ = _time(lambda: mi.alpha_min(0.05, 27254, 0.05, 2, 1521), repeat=5)

    mean = np.nanmean(r_par.w1, axis=0)
    print("## Coherence explorer benchmark\n")
    print(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; Python "
          f"{platform.python_version()}. 1-minute load average before the parallel run {load_par:.1f}, before the "
          f"sequential run {load_seq:.1f} (a shared machine inflates every timing).\n")
    print(f"Paper setting (seed §5): n = {prepared.n:,} labelled rows of census_population({args.n}, rng=0), "
          f"clear release, random forest 50 trees (hard), R = {args.reps}.\n")
    print("| measurement | value | target (spec §8) |")
    print("|---|---:|---|")
    print(f"| run_experiment, n_jobs=1 (sequential) | {t_seq:.1f} s | — |")
    print(f"| run_experiment, n_jobs=2 (joblib/loky) | {t_par:.1f} s | ≤ 60 s |")
    print(f"| speed-up | {t_seq / t_par:.2f}× (parallel/sequential = {t_par / t_seq:.2f}) | ≥ 1.8× (≤ 0.65) |")
    print(f"| cores obtained (CPU-s / wall-s): sequential / parallel | {cores_seq:.2f} / {cores_par:.2f} | 1 / ≈ 2 |")
    print(f"| identical W1 matrices (n_jobs=1 vs 2) | {'yes' if same else 'NO'} | yes |")
    print(f"| mean W1: Everyone / DREM = 1 | {mean[0]:.3f} / {mean[1]:.3f} | paper ≈ 0.1 / ≈ 1.9 |")
    print(f"| one repetition at n ≈ 27k (1 core) | {t_trial:.2f} s | — |")
    print(f"| preview at n = 20,000 (prepare + repetition 0) | {t_prev:.2f} s | < 2 s page render |")
    print(f"| run_experiment R = 20, n = 20,000, 2 cores | {t_r20:.1f} s | ≤ 15 s |")
    print(f"| noise_floor, 200 splits, n = 20,000 | {t_floor:.2f} s | < 3 s |")
    print(f"| single_column_experiment, 1,000 splits, 4 groups | {t_s7:.2f} s | < 1.5 s |")
    print(f"| gamma_pure (per call) | {t_g / 1000 * 1e6:.1f} µs | < 1 ms |")
    print(f"| gamma_curve, 200 points | {t_curve * 1e3:.2f} ms | < 20 ms |")
    print(f"| alpha_min | {t_amin * 1e3:.2f} ms | < 5 ms |")


if __name__ == "__main__":
    main()
