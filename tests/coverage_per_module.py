"""Fail when any engine module's branch coverage is below the floor (issue 13: "every engine module passes the
coverage floor"; pytest-cov's --cov-fail-under checks only the total).

Run by `make test` after the suite, on the coverage data the suite wrote:

    .venv/bin/python tests/coverage_per_module.py --data .venv/.coverage --floor 90
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path


def module_percentages(report: dict) -> dict[str, float]:
    """Per-file branch-aware percentages from ``coverage json`` output, for files under engine/ (the package dpdash).

    >>> module_percentages({"files": {"engine/a.py": {"summary": {"percent_covered": 91.5}},
    ...                               "ui/b.py": {"summary": {"percent_covered": 10.0}}}})
    {'engine/a.py': 91.5}
    """
    return {name: float(f["summary"]["percent_covered"]) for name, f in report["files"].items()
            if name.replace("\\", "/").startswith("engine/")}


def below(percentages: dict[str, float], floor: float) -> dict[str, float]:
    """The modules under the floor (coverage rounds to whole percent in its own report; so do we).

    >>> below({"engine/a.py": 89.4, "engine/b.py": 89.6, "engine/c.py": 95.0}, 90)
    {'engine/a.py': 89.4}
    """
    return {m: p for m, p in sorted(percentages.items()) if round(p) < floor}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=".coverage")
    ap.add_argument("--floor", type=float, default=90.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "coverage.json"
        subprocess.run([sys.executable, "-m", "coverage", "json", "-q", f"--data-file={args.data}", "-o", str(out)],
                       check=True)
        report = json.loads(out.read_text())
    pct = module_percentages(report)
    bad = below(pct, args.floor)
    print(f"Per-module branch coverage of engine/ (dpdash): {len(pct)} modules, lowest "
          f"{min(pct.values()):.1f}% ({min(pct, key=pct.get)}); floor {args.floor:g}%")
    for m, p in bad.items():
        print(f"  below the floor: {m} {p:.1f}%")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
