"""Change one constant in one formula at a time and check that the test suite notices (issue 13, "tests that
catch a changed formula").

Each mutation edits a copy of the committed repository (``git archive HEAD`` into a temporary folder, never the
working tree), runs the test files that cover the module, and records whether at least one test failed
("caught"). A mutation that leaves every test green is a hole in the suite.

    .venv/bin/python bench/mutations.py            # all mutations; writes bench/results/mutations.md
    .venv/bin/python bench/mutations.py -k risk    # those whose module contains "risk"
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutation:
    module: str
    what: str
    old: str
    new: str
    tests: tuple[str, ...]


MUTATIONS = (
    Mutation("accounting", "advanced composition (Dwork–Rothblum–Vadhan): √(2k ln 1/δ′) → √(3k ln 1/δ′)",
             "val = e0 * math.sqrt(2.0 * k * -math.log(dp)) + k * e0 * _expm1(e0)",
             "val = e0 * math.sqrt(3.0 * k * -math.log(dp)) + k * e0 * _expm1(e0)", ("tests/test_accounting.py",)),
    Mutation("accounting", "Kairouz–Oh–Viswanath third bound: √(2k ln 1/δ̃) → √(2.5k ln 1/δ̃)",
             "b3 = base + e0 * math.sqrt(2.0 * k * -math.log(dt))",
             "b3 = base + e0 * math.sqrt(2.5 * k * -math.log(dt))", ("tests/test_accounting.py",)),
    Mutation("accounting", "advanced privacy filter constant (eq. 5.12): c = 28.04 → 28.0",
             "FILTER_CONSTANT = 28.04", "FILTER_CONSTANT = 28.0",
             ("tests/test_accounting.py", "tests/test_script_epsilon.py")),
    Mutation("conversions", "zCDP → (ε, δ): ρ + 2√(ρ ln 1/δ) → ρ + 2.1√(ρ ln 1/δ)",
             "return xi + r + 2.0 * math.sqrt(r * -math.log(d))",
             "return xi + r + 2.1 * math.sqrt(r * -math.log(d))",
             ("tests/test_conversions.py", "tests/test_accounting.py")),
    Mutation("mechanisms", "classic Gaussian σ: ln(1.25/δ) → ln(1.3/δ)",
             "return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta))",
             "return sensitivity * math.sqrt(2.0 * math.log(1.3 / delta))", ("tests/test_mechanisms.py",)),
    Mutation("mechanisms", "Laplace half-width: b ln(1/β) → b ln(1.1/β)",
             "return b * math.log(1.0 / beta)", "return b * math.log(1.1 / beta)", ("tests/test_mechanisms.py",)),
    Mutation("mechanisms", "histogram L2 sensitivity under replacement: √2 → √3",
             "return Sensitivity(2.0, math.sqrt(2.0), query, neighbour)",
             "return Sensitivity(2.0, math.sqrt(3.0), query, neighbour)", ("tests/test_mechanisms.py",)),
    Mutation("sampling", "amplification by sampling: log1p(q·expm1(ε)) → log1p(1.01·q·expm1(ε))",
             "a = np.log1p(q * np.expm1(np.where(small, e, 0.0)))",
             "a = np.log1p(1.01 * q * np.expm1(np.where(small, e, 0.0)))", ("tests/test_sampling.py",)),
    Mutation("sampling", "cluster sampling bound (Theorem 3): e^{−ε_T}(1 − q) → e^{−ε_T}(1.02 − q)",
             "return float(np.log1p(np.expm1(ec) * q / (q + np.exp(-et) * (1 - q))))",
             "return float(np.log1p(np.expm1(ec) * q / (q + np.exp(-et) * (1.02 - q))))", ("tests/test_sampling.py",)),
    Mutation("risk", "posterior upper bound: expit(logit p + ε) → expit(logit p + 1.01ε)",
             "max(p, float(special.expit(lp + e)))", "max(p, float(special.expit(lp + 1.01 * e)))",
             ("tests/test_risk.py",)),
    Mutation("risk", "hypothesis-testing bound: e^{−ε}(1 − δ − α) → e^{−0.99ε}(1 − δ − α)",
             "t2 = math.exp(-e) * (1.0 - d - a)", "t2 = math.exp(-0.99 * e) * (1.0 - d - a)", ("tests/test_risk.py",)),
    Mutation("coherence", "sign-test statistic: 2|p̂_a − p̂_b| → 1.9|p̂_a − p̂_b|",
             "return 2.0 * abs(float(frac_neg_a) - float(frac_neg_b))",
             "return 1.9 * abs(float(frac_neg_a) - float(frac_neg_b))", ("tests/test_coherence.py",)),
    Mutation("coherence", "pair-collision bound: 2k²/(n(n − 1)) → 2k²/n²",
             "return 2.0 * k * k / (n * (n - 1.0))", "return 2.0 * k * k / (n * n)", ("tests/test_coherence.py",)),
    Mutation("stratify", "global Laplace mean noise: 2C/(nε) → 3C/(nε)",
             "b_naive = 2 * Cn / (n * eps)", "b_naive = 3 * Cn / (n * eps)", ("tests/test_stratify.py",)),
    Mutation("stratify", "naive RMSE: √8·C/(nε) → √7·C/(nε)",
             "naive_rmse = math.sqrt(8) * Cn / (n * eps)", "naive_rmse = math.sqrt(7) * Cn / (n * eps)",
             ("tests/test_stratify.py",)),
    Mutation("leximax", "Lemma 15 Hoeffding tail: exp(−2δ²/n) → exp(−1.9δ²/n)",
             "return float(math.exp(-2.0 * delta * delta / n))", "return float(math.exp(-1.9 * delta * delta / n))",
             ("tests/test_leximax.py",)),
    Mutation("leximax", "fixed level of the l-th LP: C_l = C_(l−1) + γ_l − α_l → C_(l−1) + γ_l − α_l/2",
             "C[l - 1] = (C[l - 2] if l >= 2 else 0.0) + g - a[l - 1]",
             "C[l - 1] = (C[l - 2] if l >= 2 else 0.0) + g - 0.5 * a[l - 1]", ("tests/test_leximax.py",)),
    Mutation("partial_release", "WEM-congenial guarantee for the readout neighbour: 4ε/(κΔ) → 3ε/(κΔ)",
             'if method in ("wem_congenial", "wem_prior"):\n        return 4 * eps / (kap * sens)',
             'if method in ("wem_congenial", "wem_prior"):\n        return 3 * eps / (kap * sens)',
             ("tests/test_partial_release.py", "tests/test_ppd.py")),
    Mutation("public_info", "Example 3 numerator: 2 − r − e^{−ε(N−1)} → 2.01 − r − e^{−ε(N−1)}",
             "num = 2 - r - math.exp(-eps * (N - 1))", "num = 2.01 - r - math.exp(-eps * (N - 1))",
             ("tests/test_public_info.py", "tests/test_ppd.py")),
    Mutation("private_tests", "chi-square mixture half-degrees: 0.5m → 0.55m",
             "km = 0.5 * m", "km = 0.55 * m", ("tests/test_private_tests.py",)),
)


def run(mutation: Mutation, tmp: Path) -> tuple[bool, float, str]:
    path = tmp / "dpdash" / f"{mutation.module}.py"
    original = path.read_text()
    if original.count(mutation.old) != 1:
        return False, 0.0, "mutation site not found (the formula moved): update this list"
    path.write_text(original.replace(mutation.old, mutation.new))
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                               "-p", "no:randomly", *mutation.tests], cwd=tmp, capture_output=True, text=True,
                              timeout=900)
        caught = proc.returncode != 0
        failed = [ln for ln in proc.stdout.splitlines() if ln.startswith("FAILED")]
        detail = failed[0].removeprefix("FAILED ")[:110] if failed else proc.stdout.strip().splitlines()[-1][:110]
    finally:
        path.write_text(original)
    return caught, time.perf_counter() - t0, detail


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-k", default="", help="only modules containing this text")
    args = ap.parse_args()
    chosen = [m for m in MUTATIONS if args.k in m.module]
    with tempfile.TemporaryDirectory(prefix="dpdash-mutants-") as d:
        tmp = Path(d)
        archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
        rows = []
        for m in chosen:
            caught, secs, detail = run(m, tmp)
            print(f"{'caught' if caught else 'MISSED'} {m.module}: {m.what} ({secs:.0f} s) {detail}", flush=True)
            rows.append((m, caught, detail))
    lines = ["## Mutations: one constant changed in one formula, one at a time", "",
             f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, `.venv/bin/python bench/mutations.py`. "
             "Each row edits a copy of dpdash/, runs the listed test files and says whether a test failed.", "",
             "| module | mutation | caught | first failing test |", "|---|---|---|---|"]
    for m, caught, detail in rows:
        lines.append(f"| {m.module} | {m.what} | {'yes' if caught else '**no**'} | `{detail}` |")
    lines += ["", f"Caught {sum(c for _, c, _ in rows)} of {len(rows)}."]
    if not args.k:
        (ROOT / "bench" / "results" / "mutations.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
