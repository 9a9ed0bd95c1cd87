"""Mutation testing with mutmut 3 (issue 36 item 1), one module at a time against that module's own tests.

``make mutate`` runs this (it is not part of ``make test``: a module takes minutes to hours). For each module in
:data:`MODULES` it builds a scratch copy under ``$MUTATE_DIR`` (default /tmp/dpdash-mutate/<module>) in which the
engine package sits at the top level (``dpdash/``, so mutmut's module names match the imported ones; the editable
install is shadowed because mutmut puts its ``mutants/`` copy first on ``sys.path``), writes a ``setup.cfg``
whose ``[mutmut]`` section mutates only that file, runs ``mutmut run`` with the module's tests, and counts the
outcome of every mutant from mutmut's ``.meta`` files. The table goes to bench/results/mutation.md (merged with
the rows of modules not run this time).

Usage: ``python bench/mutation_run.py [module ...]`` (names as in MODULES' keys; default: all), ``--children N``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "mutation.md"

#: module file (relative to the repo) → the tests that own it (relative to the repo)
MODULES: dict[str, tuple[str, list[str]]] = {
    "conversions": ("engine/dpdash/accounting/conversions.py",
                    ["tests/engine/accounting/test_conversions.py", "tests/privacy/test_outward_rounding.py"]),
    "mechanisms": ("engine/dpdash/accounting/mechanisms.py",
                   ["tests/engine/accounting/test_mechanisms.py", "tests/engine/accounting/test_mechanisms_edges.py"]),
    "composition": ("engine/dpdash/accounting/composition.py",
                    ["tests/engine/accounting/test_accounting.py", "tests/engine/accounting/test_accounting_trace.py",
                     "tests/privacy/test_filters_odometers.py"]),
    "budget": ("engine/dpdash/accounting/budget.py",
               ["tests/engine/accounting/test_budget.py", "tests/privacy/test_planner_rows.py"]),
    "ledger": ("engine/dpdash/common/ledger.py", ["tests/privacy/test_ledger.py"]),
    "stratify_core": ("engine/dpdash/stratify/core.py", ["tests/engine/stratify", "tests/privacy/test_noise.py"]),
    "partial_release": ("engine/dpdash/stratify/partial_release.py",
                        ["tests/engine/stratify/test_ppd.py", "tests/privacy/test_noise.py"]),
    "synth": ("engine/dpdash/stratify/synth.py", ["tests/engine/stratify", "tests/privacy/test_noise.py"]),
    "coherence_core": ("engine/dpdash/coherence/core.py", ["tests/engine/coherence", "tests/privacy/test_noise.py"]),
    "private_tests": ("engine/dpdash/epsilon/private_tests.py", ["tests/engine/epsilon/test_private_tests.py"]),
    "eps_codecs": ("ui/eps_codecs.py", ["tests/ui/test_eps_codecs.py", "tests/ui/test_codec_roundtrip.py"]),
}

#: mutmut's exit code of a mutant run → outcome (mutmut 3.8 ``mutmut.stats.status_by_exit_code``)
OUTCOME = {1: "killed", 3: "killed", -24: "timeout", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped",
           35: "suspicious", 36: "timeout", 37: "killed", 24: "timeout", 152: "timeout", 255: "timeout",
           -11: "segfault", -9: "segfault"}


def _scratch(name: str, module: str, tests: list[str]) -> Path:
    base = Path(os.environ.get("MUTATE_DIR", "/tmp/dpdash-mutate")) / name
    if base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True)
    shutil.copytree(ROOT / "engine" / "dpdash", base / "dpdash", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    os.remove(base / "dpdash" / "bundled")
    os.symlink(ROOT / "data", base / "dpdash" / "bundled")
    for d in ("ui", "tests"):
        shutil.copytree(ROOT / d, base / d, ignore=shutil.ignore_patterns("__pycache__", "e2e"))
    shutil.copy(ROOT / "pytest.ini", base / "pytest.ini")
    os.symlink(ROOT / "data", base / "data")
    target = module.removeprefix("engine/")
    top = target.split("/")[0]
    cfg = ["[mutmut]", f"source_paths={top}/", f"only_mutate={target}",
           "pytest_add_cli_args=", "    -p", "    no:cacheprovider", "    -n", "    0",
           "pytest_add_cli_args_test_selection=", *[f"    {t}" for t in tests], ""]
    (base / "setup.cfg").write_text("\n".join(cfg))
    return base


def _count(base: Path, module: str) -> dict[str, int]:
    target = module.removeprefix("engine/")
    meta = base / "mutants" / (target + ".meta")
    counts: dict[str, int] = {}
    data = json.loads(meta.read_text())
    for code in data.get("exit_code_by_key", {}).values():
        outcome = "not checked" if code is None else OUTCOME.get(code, f"exit {code}")
        counts[outcome] = counts.get(outcome, 0) + 1
    return counts


def _survivors(base: Path) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "mutmut", "results"], cwd=base, capture_output=True, text=True)
    return [line.strip().split(":")[0] for line in out.stdout.splitlines() if "survived" in line]


def run(name: str, children: int) -> tuple[dict[str, int], list[str]]:
    module, tests = MODULES[name]
    base = _scratch(name, module, tests)
    env = {**os.environ, "DPDASH_WARMUP": "0", "PYTHONPATH": ""}
    subprocess.run([sys.executable, "-c", "import sys; from mutmut.__main__ import cli; sys.exit(cli())", "run",
                    "--max-children", str(children)], cwd=base, env=env, check=False)
    return _count(base, module), _survivors(base)


def write_report(rows: dict[str, tuple[dict[str, int], list[str]]]) -> None:
    lines = RESULTS.read_text().splitlines() if RESULTS.exists() else []
    keep = [ln for ln in lines if ln.startswith("| ") and not ln.startswith("| module") and
            not ln.startswith("| ---") and ln.split("|")[1].strip() not in rows]
    out = ["| module | mutants | killed | survived | other |", "| --- | --- | --- | --- | --- |", *keep]
    for name, (c, _) in rows.items():
        total = sum(c.values())
        other = ", ".join(f"{k} {v}" for k, v in sorted(c.items()) if k not in ("killed", "survived")) or "-"
        out.append(f"| {name} | {total} | {c.get('killed', 0)} | {c.get('survived', 0)} | {other} |")
    head = [ln for ln in lines if not ln.startswith("| ")][:1] or ["# Mutation testing (mutmut; `make mutate`)"]
    RESULTS.write_text("\n".join(head + ["", *out, ""]))
    print("\n".join(out))
    for name, (_, surv) in rows.items():
        print(f"\nsurvivors of {name}:", *surv, sep="\n  ")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="*", default=list(MODULES))
    ap.add_argument("--children", type=int, default=2)
    a = ap.parse_args()
    rows = {name: run(name, a.children) for name in a.modules}
    write_report(rows)


if __name__ == "__main__":
    main()
