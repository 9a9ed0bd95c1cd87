"""Benchmark: the coherence paper's Section 5 experiment on one core, two local processes, a 2-worker Dask
LocalCluster, and the authors' published script, on the same machine in one run (issue 16).

Setting (seed 000 §5): the NIST ACS excerpt ``national2019.csv`` (path in ``ACS_NATIONAL2019_CSV``), the
8-feature lens, label DREM, groups Everyone and DREM = 1, release in the clear, random forest with 50 trees,
R repetitions. Our three backends must give identical W1 matrices (every repetition seeds itself from
``SeedSequence(seed)`` with spawn key r); the authors' script draws unseeded splits, so only its averages are
compared. Its file is read from ``../shared/reference/coherence_paper/`` and run from a temporary copy with the
changes its README lists (data path, ``drop(axis=1)``, unused ``import torch``, a stub for matplotlib) and
``numiter`` set to R; the copy is deleted afterwards and never enters the repository.

    nice -n 10 .venv/bin/python bench/bench_coherence_dask.py --reps 100

Prints a markdown table and writes it to ``bench/results/coherence_dask_R<R>.md`` with a JSON sidecar.
``--cpu-per-rep K`` instead prints the CPU seconds of one repetition in this process (mean of K).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from joblib import parallel_config  # noqa: E402

from dpdash.coherence import core as co  # noqa: E402
from dpdash.common.data import read_uploaded_csv  # noqa: E402

LENS = ("AGEP", "DENSITY", "INDP_CAT", "INDP", "SEX", "EDU", "HISP", "RAC1P")
GROUPS = (co.GroupSpec("Everyone"), co.GroupSpec("DREM = 1", (co.Condition("DREM", values=(1,)),)))
REFERENCE = ROOT.parent / "shared" / "reference" / "coherence_paper" / "SubmissionCode.py"
RESULTS = ROOT / "bench" / "results"


def _descendant_cpu() -> float:
    """CPU seconds (user + system) used so far by live descendants of this process (pool workers)."""
    total = 0.0
    for p in psutil.Process().children(recursive=True):
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def _measure(fn):
    """Wall seconds, CPU seconds (this process + live descendants + reaped children) and fn's result."""
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    c0, d0, t0 = time.process_time(), _descendant_cpu(), time.perf_counter()
    out = fn()
    wall = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    reaped = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    cpu = (time.process_time() - c0) + max(0.0, _descendant_cpu() - d0) + reaped
    return wall, cpu, out


def _authors_script(csv: Path, reps: int, workdir: Path) -> Path:
    """A temporary copy of the authors' script with the README's four changes and numiter = reps."""
    src = REFERENCE.read_text(encoding="utf-8")
    edits = [
        ("'insert address here'", repr(str(csv))),
        ("drop(columns=['DREM'], axis=1)", "drop(columns=['DREM'])"),
        ("import torch\n", ""),
        ("import matplotlib.pyplot as plt\n",
         "class _NoPlot:\n    def __getattr__(self, name):\n        return lambda *a, **k: None\n\n\n"
         "plt = _NoPlot()\n"),
        ("numiter=100", f"numiter={int(reps)}"),
    ]
    for old, new in edits:
        if old not in src:
            raise SystemExit(f"the authors' script changed: {old!r} not found")
        src = src.replace(old, new)
    path = workdir / "SubmissionCode_bench.py"
    path.write_text(src, encoding="utf-8")
    return path


def _run_authors(script: Path) -> dict:
    proc = subprocess.run([sys.executable, str(script)], cwd=script.parent, capture_output=True, text=True,
                          timeout=4 * 3600)
    if proc.returncode != 0:
        raise SystemExit(f"the authors' script failed:\n{proc.stderr[-2000:]}")
    nums = [float(x) for x in re.findall(r"is\s+(-?[0-9.]+(?:e-?\d+)?)", proc.stdout)]
    return {"mean_w1_drem": nums[0] if nums else float("nan"),
            "mean_w1_everyone": nums[1] if len(nums) > 1 else float("nan")}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--skip-authors", action="store_true", help="time our backends only")
    ap.add_argument("--cpu-per-rep", type=int, default=0, metavar="K",
                    help="only time K single repetitions in this process by CPU time (robust on a loaded machine)")
    args = ap.parse_args()
    csv = Path(os.environ.get("ACS_NATIONAL2019_CSV", ROOT.parent / "shared" / "data" / "national2019.csv"))
    if not csv.is_file():
        raise SystemExit("set ACS_NATIONAL2019_CSV to the NIST ACS excerpt national2019.csv")
    R = int(args.reps)
    df = read_uploaded_csv(csv.read_bytes()).frame
    if args.cpu_per_rep:
        cfg = co.ExperimentConfig("DREM", 1, LENS, GROUPS, repetitions=args.cpu_per_rep + 1, rng=0)
        prepared = co.prepare(df, cfg)
        co.run_trial(prepared, cfg, 0)  # imports and first-call costs out of the timing
        c0 = time.process_time()
        for r in range(1, args.cpu_per_rep + 1):
            co.run_trial(prepared, cfg, r)
        print(f"CPU per repetition: {(time.process_time() - c0) / args.cpu_per_rep:.3f} s "
              f"(mean of {args.cpu_per_rep}, repetitions 1..{args.cpu_per_rep}, load {os.getloadavg()[0]:.1f})")
        return
    cfg = co.ExperimentConfig("DREM", 1, LENS, GROUPS, co.ReleaseSpec(), co.LearnerSpec(), repetitions=R, rng=0)
    warm = co.ExperimentConfig("DREM", 1, LENS, GROUPS, learner=co.LearnerSpec(n_estimators=2), repetitions=4)
    rows, w1 = [], {}

    def record(name, wall, cpu, load):
        rows.append({"run": name, "wall_s": wall, "cpu_s": cpu, "cores": cpu / wall, "load_1min": load})

    if not args.skip_authors:
        with tempfile.TemporaryDirectory() as tmp:
            script = _authors_script(csv, R, Path(tmp))
            load = os.getloadavg()[0]
            wall, cpu, authors = _measure(lambda: _run_authors(script))
        record("authors' script (SubmissionCode.py, 1 process)", wall, cpu, load)
    else:
        authors = None

    load = os.getloadavg()[0]
    wall, cpu, res = _measure(lambda: co.run_experiment(df, cfg, n_jobs=1))
    record("ours, n_jobs=1 (in process)", wall, cpu, load)
    w1["n_jobs=1"] = res

    co.run_experiment(df, warm, n_jobs=2)  # start the local worker processes before timing
    load = os.getloadavg()[0]
    wall, cpu, res = _measure(lambda: co.run_experiment(df, cfg, n_jobs=2))
    record("ours, local processes (n_jobs=2)", wall, cpu, load)
    w1["local 2 processes"] = res
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor().shutdown(wait=True)

    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as lc, Client(lc) as client:
        client.wait_for_workers(2, timeout=120)
        with parallel_config(backend="dask", client=client):
            co.run_experiment(df, warm, n_jobs=2)  # workers import the engine before timing
            load = os.getloadavg()[0]
            wall, cpu, res = _measure(lambda: co.run_experiment(df, cfg, n_jobs=2))
        record("ours, Dask LocalCluster (2 workers × 1 thread)", wall, cpu, load)
        w1["LocalCluster 2 workers"] = res

    ref = w1["n_jobs=1"].w1
    identical = all(np.array_equal(r.w1, ref, equal_nan=True) for r in w1.values())
    t_seq = rows[-3]["wall_s"]
    t_loc = rows[-2]["wall_s"]
    t_dask = rows[-1]["wall_s"]
    means = {nm: float(np.nanmean(ref[:, j])) for j, nm in enumerate(w1["n_jobs=1"].group_names)}

    lines = [f"## Section 5 on the paper's data: R = {R}", "",
             f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; {platform.machine()}, {os.cpu_count()} cores "
             f"(shared); Python {platform.python_version()}; data {csv.name}: {len(df):,} rows, "
             f"{w1['n_jobs=1'].n:,} labelled; clear release, random forest 50 trees, seed 0.", "",
             "| run | wall (s) | CPU (s) | cores obtained | 1-min load before |", "|---|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['run']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['cores']:.2f} | "
                     f"{r['load_1min']:.1f} |")
    lines += ["", "| ratio | value |", "|---|---:|"]
    if authors is not None:
        t_auth = rows[0]["wall_s"]
        lines += [f"| authors' script ÷ ours on 2 local processes (target ≥ 2.5) | {t_auth / t_loc:.2f}× |",
                  f"| authors' script ÷ ours on 1 core | {t_auth / t_seq:.2f}× |",
                  f"| authors' script ÷ ours on the LocalCluster | {t_auth / t_dask:.2f}× |"]
    lines += [f"| ours: 1 core ÷ 2 local processes | {t_seq / t_loc:.2f}× |",
              f"| ours: 1 core ÷ LocalCluster | {t_seq / t_dask:.2f}× |",
              "", f"W1 matrices identical across n_jobs=1, 2 local processes and the LocalCluster: "
              f"**{'yes' if identical else 'NO'}** ({ref.shape[0]} × {ref.shape[1]}).",
              "Mean W1 (ours, n_jobs=1): " + ", ".join(f"{k} {v:.3f}" for k, v in means.items())
              + (f"; authors' script: DREM = 1 {authors['mean_w1_drem']:.3f}, everyone "
                 f"{authors['mean_w1_everyone']:.3f} (unseeded splits)." if authors else ".")]
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"coherence_dask_R{R}.md").write_text(text, encoding="utf-8")
    (RESULTS / f"coherence_dask_R{R}.json").write_text(json.dumps(
        {"reps": R, "rows": rows, "identical_w1": identical, "mean_w1": means, "authors": authors}, indent=1),
        encoding="utf-8")
    if not identical:
        raise SystemExit("W1 matrices differ between backends")


if __name__ == "__main__":
    main()
