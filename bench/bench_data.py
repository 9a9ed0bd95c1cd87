"""Benchmark of the data layer: generator throughput, bundled loaders and upload validation.

Run: .venv/bin/python bench/bench_data.py  (prints a markdown table; median of 5 runs).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpdash.common.data import census_population, load_adult, load_dataset, read_uploaded_csv  # noqa: E402


from timing import timed  # noqa: E402  (bench/ is the script's folder)


def main() -> None:
    csv_bytes = census_population(200_000, rng=1).to_csv(index=False).encode()
    rows = [
        ("census_population(100_000)", timed(lambda: census_population(100_000, rng=0)), "< 1 s"),
        ("load_dataset('adult') (48,842 rows)", timed(lambda: load_dataset("adult")), ""),
        ("load_adult() coded (45,222 rows)", timed(lambda: load_adult()), ""),
        (f"read_uploaded_csv 200,000 rows × 13 cols ({len(csv_bytes) / 1e6:.1f} MB)",
         timed(lambda: read_uploaded_csv(csv_bytes, max_bytes=50_000_000, max_rows=200_000, max_cols=100), 3), ""),
    ]
    print("| operation | median time | target |\n|---|---|---|")
    for name, t, target in rows:
        print(f"| {name} | {t * 1000:.0f} ms | {target} |")


if __name__ == "__main__":
    main()
