"""Change one constant in one formula at a time and check that the test suite notices (issue 13, "tests that
catch a changed formula").

Each mutation edits a copy of the committed repository (``git archive HEAD`` into a temporary folder, never the
working tree), runs the test files that cover the module, and records whether at least one test failed
("caught"). A mutation that leaves every test green is a hole in the suite.

    .venv/bin/python bench/mutations.py            # all mutations; writes bench/results/mutations.md
    .venv/bin/python bench/mutations.py -k risk    # those whose module contains "risk"
    .venv/bin/python bench/mutations.py --tests tests/privacy   # the release-noise rows (issue 26); rewrites
                                                                # only their section of mutations.md
    .venv/bin/python bench/mutations.py --views   # the tab views' rows (issue 22); rewrites only their section
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


#: The flat module names the lists below were written with, and where each module lives now (issue 30's wings).
_WINGS = {
    "coherence": "coherence/core",
    "partial_release": "stratify/partial_release",
    "private_tests": "epsilon/private_tests",
    "public_info": "accounting/public_info",
    "stratify": "stratify/core",
    "synth": "stratify/synth",
    "epsilon_views": "epsilon/views",
    "leximax_views": "sortition/views",
    "sampling_views": "sampling/views",
    "stratify_views": "stratify/views",
    "coherence_views": "coherence/views",
    "public_info_views": "epsilon/public_info_views",
}
#: The test file of each flat module name used in the views list below.
_TESTS = {
    "epsilon_views": "tests/engine/epsilon/test_epsilon_views.py",
    "leximax_views": "tests/engine/sortition/test_leximax_views.py",
    "sampling_views": "tests/engine/sampling/test_sampling_views.py",
    "stratify_views": "tests/engine/stratify/test_stratify_views.py",
    "coherence_views": "tests/engine/coherence/test_coherence_views.py",
    "public_info_views": "tests/engine/epsilon/test_public_info_views.py",
}

MUTATIONS = (
    Mutation("accounting/composition", "advanced composition (Dwork–Rothblum–Vadhan): √(2k ln 1/δ′) → √(3k ln 1/δ′)",
             "val = e0 * math.sqrt(2.0 * k * -math.log(dp)) + k * e0 * _expm1(e0)",
             "val = e0 * math.sqrt(3.0 * k * -math.log(dp)) + k * e0 * _expm1(e0)",
             ("tests/engine/accounting/test_accounting.py",)),
    Mutation("accounting/composition", "Kairouz–Oh–Viswanath third bound: √(2k ln 1/δ̃) → √(2.5k ln 1/δ̃)",
             "b3 = base + e0 * math.sqrt(2.0 * k * -math.log(dt))",
             "b3 = base + e0 * math.sqrt(2.5 * k * -math.log(dt))", ("tests/engine/accounting/test_accounting.py",)),
    Mutation("accounting/composition", "advanced privacy filter constant (eq. 5.12): c = 28.04 → 28.0",
             "FILTER_CONSTANT = 28.04", "FILTER_CONSTANT = 28.0",
             ("tests/engine/accounting/test_accounting.py", "tests/engine/epsilon/test_script_epsilon.py")),
    Mutation("accounting/conversions", "zCDP → (ε, δ): ρ + 2√(ρ ln 1/δ) → ρ + 2.1√(ρ ln 1/δ)",
             "return xi + r + 2.0 * math.sqrt(r * -math.log(d))",
             "return xi + r + 2.1 * math.sqrt(r * -math.log(d))",
             ("tests/engine/accounting/test_conversions.py", "tests/engine/accounting/test_accounting.py")),
    Mutation("accounting/mechanisms", "classic Gaussian σ: ln(1.25/δ) → ln(1.3/δ)",
             "return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta))",
             "return sensitivity * math.sqrt(2.0 * math.log(1.3 / delta))",
             ("tests/engine/accounting/test_mechanisms.py",)),
    Mutation("accounting/mechanisms", "Laplace half-width: b ln(1/β) → b ln(1.1/β)",
             "return b * math.log(1.0 / beta)", "return b * math.log(1.1 / beta)",
             ("tests/engine/accounting/test_mechanisms.py",)),
    Mutation("accounting/mechanisms", "histogram L2 sensitivity under replacement: √2 → √3",
             "return Sensitivity(2.0, math.sqrt(2.0), query, neighbour)",
             "return Sensitivity(2.0, math.sqrt(3.0), query, neighbour)",
             ("tests/engine/accounting/test_mechanisms.py",)),
    Mutation("sampling/core", "amplification by sampling: log1p(q·expm1(ε)) → log1p(1.01·q·expm1(ε))",
             "a = np.log1p(q * np.expm1(np.where(small, e, 0.0)))",
             "a = np.log1p(1.01 * q * np.expm1(np.where(small, e, 0.0)))", ("tests/engine/sampling/test_sampling.py",)),
    Mutation("sampling/core", "cluster sampling bound (Theorem 3): e^{−ε_T}(1 − q) → e^{−ε_T}(1.02 − q)",
             "return float(np.log1p(np.expm1(ec) * q / (q + np.exp(-et) * (1 - q))))",
             "return float(np.log1p(np.expm1(ec) * q / (q + np.exp(-et) * (1.02 - q))))",
             ("tests/engine/sampling/test_sampling.py",)),
    Mutation("epsilon/risk", "posterior upper bound: expit(logit p + ε) → expit(logit p + 1.01ε)",
             "max(p, float(special.expit(lp + e)))", "max(p, float(special.expit(lp + 1.01 * e)))",
             ("tests/engine/epsilon/test_risk.py",)),
    Mutation("epsilon/risk", "hypothesis-testing bound: e^{−ε}(1 − δ − α) → e^{−0.99ε}(1 − δ − α)",
             "t2 = math.exp(-e) * (1.0 - d - a)", "t2 = math.exp(-0.99 * e) * (1.0 - d - a)",
             ("tests/engine/epsilon/test_risk.py",)),
    Mutation("coherence/core", "sign-test statistic: 2|p̂_a − p̂_b| → 1.9|p̂_a − p̂_b|",
             "return 2.0 * abs(float(frac_neg_a) - float(frac_neg_b))",
             "return 1.9 * abs(float(frac_neg_a) - float(frac_neg_b))", ("tests/engine/coherence/test_coherence.py",)),
    Mutation("coherence/core", "pair-collision bound: 2k²/(n(n − 1)) → 2k²/n²",
             "return 2.0 * k * k / (n * (n - 1.0))", "return 2.0 * k * k / (n * n)",
             ("tests/engine/coherence/test_coherence.py",)),
    Mutation("stratify/core", "global Laplace mean noise: 2C/(nε) → 3C/(nε)",
             "b_naive = 2 * Cn / (n * eps)", "b_naive = 3 * Cn / (n * eps)",
             ("tests/engine/stratify/test_stratify.py",)),
    Mutation("stratify/core", "naive RMSE: √8·C/(nε) → √7·C/(nε)",
             "naive_rmse = math.sqrt(8) * Cn / (n * eps)", "naive_rmse = math.sqrt(7) * Cn / (n * eps)",
             ("tests/engine/stratify/test_stratify.py",)),
    Mutation("sortition/core", "Lemma 15 Hoeffding tail: exp(−2δ²/n) → exp(−1.9δ²/n)",
             "return float(math.exp(-2.0 * delta * delta / n))", "return float(math.exp(-1.9 * delta * delta / n))",
             ("tests/engine/sortition/test_leximax.py",)),
    Mutation("sortition/core", "fixed level of the l-th LP: C_l = C_(l−1) + γ_l − α_l → C_(l−1) + γ_l − α_l/2",
             "C[l - 1] = (C[l - 2] if l >= 2 else 0.0) + g - a[l - 1]",
             "C[l - 1] = (C[l - 2] if l >= 2 else 0.0) + g - 0.5 * a[l - 1]",
             ("tests/engine/sortition/test_leximax.py",)),
    Mutation("stratify/partial_release", "WEM-congenial guarantee for the readout neighbour: 4ε/(κΔ) → 3ε/(κΔ)",
             'if method in ("wem_congenial", "wem_prior"):\n        return 4 * eps / (kap * sens)',
             'if method in ("wem_congenial", "wem_prior"):\n        return 3 * eps / (kap * sens)',
             ("tests/engine/stratify/test_partial_release.py", "tests/engine/stratify/test_ppd.py")),
    Mutation("accounting/public_info", "Example 3 numerator: 2 − r − e^{−ε(N−1)} → 2.01 − r − e^{−ε(N−1)}",
             "num = 2 - r - math.exp(-eps * (N - 1))", "num = 2.01 - r - math.exp(-eps * (N - 1))",
             ("tests/engine/accounting/test_public_info.py", "tests/engine/stratify/test_ppd.py")),
    Mutation("epsilon/private_tests", "chi-square mixture half-degrees: 0.5m → 0.55m",
             "km = 0.5 * m", "km = 0.55 * m", ("tests/engine/epsilon/test_private_tests.py",)),
    # Issue 26 item 1: halve one release's noise or change one step's budget share; the privacy audit layer
    # (tests/privacy: noise checks, budget ledger, empirical audits) must go red.
    *(Mutation(_WINGS[mod], what, old, new, ("tests/privacy",)) for mod, what, old, new in (
        ("synth", "independent Laplace: Lap(d/ε) → Lap(d/(2ε)) per column",
         "b = d / self.epsilon", "b = d / self.epsilon / 2"),
        ("synth", "independent Laplace: composition over the d columns dropped, Lap(d/ε) → Lap(1/ε)",
         "b = d / self.epsilon", "b = 1 / self.epsilon"),
        ("synth", "independent Laplace: noise drawn at half the scale the ledger records",
         "h += r.laplace(0.0, b, h.size)", "h += r.laplace(0.0, b / 2, h.size)"),
        ("synth", "full histogram: Lap(1/ε) → Lap(1/(2ε))", "b = 1.0 / self.epsilon", "b = 0.5 / self.epsilon"),
        ("synth", "MWEM measurement: Lap(2T/ε) → Lap(T/ε)", "b = 2 * T / self.epsilon", "b = T / self.epsilon"),
        ("synth", "MWEM selection share: ε/(2T) → ε/T per round",
         "eps_round = self.epsilon / (2 * T)", "eps_round = self.epsilon / T"),
        ("synth", "exponential mechanism: exp(ε·s/(2Δ)) → exp(ε·s/Δ)",
         "logits = 0.5 * eps / sensitivity", "logits = 1.0 * eps / sensitivity"),
        ("synth", "MST: σ = √(3/(2ρ)) → √(3/(8ρ)) (half)",
         "sigma = math.sqrt(3.0 / (2.0 * rho))", "sigma = math.sqrt(3.0 / (8.0 * rho))"),
        ("synth", "MST one-way marginals: composition over d dropped, σ√d → σ",
         "s1 = sigma * math.sqrt(d)", "s1 = sigma"),
        ("synth", "MST tree selection: one step takes the stage's whole share, √(8(ρ/3)/(d−1)) → √(8ρ/3)",
         "eps_sel = math.sqrt(8 * (rho / 3) / (d - 1))", "eps_sel = math.sqrt(8 * (rho / 3))"),
        ("synth", "AIM: σ = √(T/(1.8ρ)) → √(T/(7.2ρ)) (half)",
         "sigma = math.sqrt(T / (1.8 * rho))", "sigma = math.sqrt(T / (7.2 * rho))"),
        ("synth", "AIM selection share: √(0.8ρ/T) → √(3.2ρ/T)",
         "eps_sel = math.sqrt(0.8 * rho / T)", "eps_sel = math.sqrt(3.2 * rho / T)"),
        ("synth", "MST/AIM budget conversion: ρ for 10δ instead of δ",
         "if _cdp_delta(rho, eps) <= delta:", "if _cdp_delta(rho, eps) <= 10 * delta:"),
        ("synth", "stratified variant: each stratum fitted at 2ε",
         "StratifiedSynthesizer(partial(make_synthesizer, synthesizer, epsilon=epsilon,",
         "StratifiedSynthesizer(partial(make_synthesizer, synthesizer, epsilon=2 * epsilon,"),
        ("coherence", "Laplace histogram: Lap(2/ε) → Lap(1/ε) (substitution read as add/remove)",
         "b = 2.0 / eps", "b = 1.0 / eps"),
        ("coherence", "Gaussian histogram: N(0, σ²) → N(0, (σ/2)²)",
         "counts += rng.normal(0.0, sd, size)", "counts += rng.normal(0.0, sd / 2, size)"),
        ("stratify", "clipped Laplace mean: 2C/(mε) → C/(mε)", "b = 2.0 * c / (m * eps)", "b = c / (m * eps)"),
        ("stratify", "stratified means: 2C/(m_i ε) → C/(m_i ε)",
         "b = 2.0 * C / (lay.strata_sizes * eps)", "b = C / (lay.strata_sizes * eps)"),
        ("stratify", "split release: global mean at ε instead of ε/2",
         "pop = laplace_mean(x, R=R, gamma=gamma, epsilon=eps / 2,",
         "pop = laplace_mean(x, R=R, gamma=gamma, epsilon=eps,"),
        ("stratify", "split release: stratum means at ε instead of ε/2",
         "epsilon=eps / 2, rng=r, k=k", "epsilon=eps, rng=r, k=k"),
        ("stratify", "experiment runner, naive mean: 2C/(nε) → C/(nε)",
         "b = 2 * Cn / (n * eps)\n", "b = Cn / (n * eps)\n"),
        ("stratify", "experiment runner, split strata: ε/2 → ε",
         "b = 2 * C / (lay.strata_sizes * eps / 2)", "b = 2 * C / (lay.strata_sizes * eps)"),
        ("stratify", "Coinpress step: N(0, Δ²/(2ρ)) → N(0, Δ²/(8ρ))",
         "    sd = delta / math.sqrt(2 * rho)\n    half", "    sd = delta / math.sqrt(8 * rho)\n    half"),
        ("stratify", "StratCoinpress steps: N(0, Δ²/(2ρ)) → N(0, Δ²/(8ρ))",
         "        sd = delta / math.sqrt(2 * rho)\n        _record",
         "        sd = delta / math.sqrt(8 * rho)\n        _record"),
        ("stratify", "Coinpress schedule: (ρ/4, 3ρ/4) → (ρ/2, 3ρ/4)",
         '"rhos": (rho / 4, 3 * rho / 4)', '"rhos": (rho / 2, 3 * rho / 4)'),
        ("private_tests", "Gaussian noise: N(0, 1/ρ) → N(0, 1/(4ρ))",
         "g.normal(0.0, 1.0 / math.sqrt(r), shape)", "g.normal(0.0, 0.5 / math.sqrt(r), shape)"),
        ("private_tests", "Laplace noise: Lap(2/ε) → Lap(1/ε)",
         "g.laplace(0.0, 2.0 / e, shape)", "g.laplace(0.0, 1.0 / e, shape)"),
        ("partial_release", "PP cases: discrete Laplace at 2ε (half the noise)",
         "yc = xc + dlap_sample(epsilon=eps,", "yc = xc + dlap_sample(epsilon=2 * eps,"),
        ("partial_release", "WEM rate: a = ε/(κΔ) → 2ε/(κΔ)", "a = eps / (kap * sens)", "a = 2 * eps / (kap * sens)"),
        ("public_info", "discrete Laplace ratio: e^{−ε/Δ} → e^{−2ε/Δ}",
         "return math.exp(-check_epsilon(epsilon) / check_positive",
         "return math.exp(-2 * check_epsilon(epsilon) / check_positive"),
        ("public_info", "Example 1 mechanism rate: nε/(κΔ) → 2nε/(κΔ)",
         "return n * epsilon / (kappa * sensitivity)", "return 2 * n * epsilon / (kappa * sensitivity)"),
        ("public_info", "K-norm radius: Gamma(d, s) → Gamma(d, s/2)",
         "radius = rng.gamma(shape=int(d), scale=scale, size=size)",
         "radius = rng.gamma(shape=int(d), scale=scale / 2, size=size)"),
    )),
    # Issue 22: the tab views are engine code. Each row changes what a reader sees (a headline number, a threshold
    # that sets a sentence's tone, a count in a card) and the view's own tests must go red.
    *(Mutation(_WINGS[mod], what, old, new, (_TESTS[mod],)) for mod, what, old, new in (
        ("epsilon_views", "budget plan: a statistic more than 0.05% off its target is a warning → only beyond 5% "
         "(1.044× its target read as good news)",
         "worst.ratio > 1.0005", "worst.ratio > 1.05"),
        ("epsilon_views", "private χ² tests: false alarms above 1.5α are a warning → only above 10α",
         "naive_size > 1.5 * alpha", "naive_size > 10 * alpha"),
        ("leximax_views", "quota tab headline: equal share k/n → (k + 1)/n",
         "equal = k / n", "equal = (k + 1) / n"),
        ("leximax_views", "single draws: share of draws at the lowest value, ≤ lowest → < lowest",
         "(U <= lowest + lv.VALUE_TOL).mean(axis=0)", "(U < lowest).mean(axis=0)"),
        ("sampling_views", "cluster tab: the design's guarantee ignores the within-cluster rate (single-stage "
         "bound beside the two-stage card)",
         "design = two if rw < 1 else b.worst_upper", "design = b.worst_upper"),
        ("sampling_views", "stratified tab: a census is m ≥ N → m > N (m = N no longer read as a census)",
         "census = m >= total", "census = m > total"),
        ("stratify_views", "population card: noise ratio per group ÷ global → global ÷ per group",
         "r = analytic.pop_strat_rmse / analytic.pop_naive_rmse",
         "r = analytic.pop_naive_rmse / analytic.pop_strat_rmse"),
        ("stratify_views", "partial release: tone of the guarantee sentence flipped (unequal guarantees neutral, "
         "equal ones a warning)",
         '"neutral" if g.startswith("Every method") else "warning"',
         '"warning" if g.startswith("Every method") else "neutral"'),
        ("coherence_views", "single split: a kept group counts as above α only beyond 2α",
         "above = [j for j in kept if w[j] > alpha]", "above = [j for j in kept if w[j] > 2 * alpha]"),
        ("coherence_views", "Section 7 tone: good while at most β·R splits exceed the bound → at most R/2",
         "exceeded <= beta * reps", "exceeded <= 0.5 * reps"),
        ("public_info_views", "public information: the adversary's band at the effective ε drawn at the nominal ε",
         "posterior_bound(prior, epsilon=eps), posterior_bound(prior, epsilon=eff)",
         "posterior_bound(prior, epsilon=eps), posterior_bound(prior, epsilon=eps)"),
        ("epsilon_views", "comparison panel: whole-number noise computed up to Δ = 10⁶ → below 10⁶",
         "if discrete and sensitivity > DISCRETE_MAX_SENSITIVITY:",
         "if discrete and sensitivity >= DISCRETE_MAX_SENSITIVITY:"),
    )),
)

VIEWS_HEADER = ("## Mutations in the tab views (issue 22): a headline number, a threshold or a sentence's tone "
                "changed")


def run(mutation: Mutation, tmp: Path) -> tuple[bool, float, str]:
    path = tmp / "engine" / "dpdash" / f"{mutation.module}.py"
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


def _replace_rows(out: Path, header: str, rows) -> None:
    """Rewrite the rows of ``rows``' mutations inside the section starting with ``header``; recount its total."""
    text = out.read_text()
    start = text.index(header)
    end = text.find("\n## ", start + 1)
    end = len(text) if end < 0 else end
    section = text[start:end].splitlines()
    for m, caught, detail in rows:
        prefix = f"| {m.module} | {m.what} |"
        section = [f"{prefix} {'yes' if caught else '**no**'} | `{detail}` |" if ln.startswith(prefix) else ln
                   for ln in section]
    table = [ln for ln in section if ln.startswith("| ") and not ln.startswith("| module")]
    n_yes = sum(ln.split(" | ")[2] == "yes" for ln in table)
    section = [f"Caught {n_yes} of {len(table)}." if ln.startswith("Caught ") else ln for ln in section]
    stamp = f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC"
    if rows:
        section[4:4] = [f"Rows re-run {stamp}: {'; '.join(m.what for m, _, _ in rows)}.", ""]
    rest = text[end:]
    out.write_text(text[:start] + "\n".join(section) + ("\n\n" + rest.lstrip("\n") if rest.strip() else "\n"))


def _write_section(out: Path, header: str, lines: list[str]) -> None:
    """Replace the section starting with ``header`` by ``lines`` (or append it); other sections stay as they were."""
    text = out.read_text() if out.exists() else ""
    start = text.find(header)
    if start < 0:
        out.write_text((text.rstrip() + "\n\n" if text.strip() else "") + "\n".join(lines) + "\n")
        return
    end = text.find("\n## ", start + 1)
    rest = "" if end < 0 else text[end:].lstrip("\n")
    out.write_text(text[:start] + "\n".join(lines) + "\n" + ("\n" + rest if rest else ""))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-k", default="", help="only modules containing this text")
    ap.add_argument("--tests", default="", help="only mutations checked by exactly these test paths (one path)")
    ap.add_argument("--what", default="", help="with --tests: only mutations whose description contains this; "
                                               "their rows are replaced in that section of mutations.md")
    ap.add_argument("--views", action="store_true", help="only the tab views' rows (issue 22); rewrites only "
                                                                "their section (with --what: only those rows)")
    args = ap.parse_args()
    chosen = [m for m in MUTATIONS if args.k in m.module and (not args.tests or m.tests == (args.tests,))
              and args.what in m.what and (not args.views or m.module.endswith("views"))]
    with tempfile.TemporaryDirectory(prefix="dpdash-mutants-") as d:
        tmp = Path(d)
        archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
        # the package dpdash lives in engine/dpdash/; a dpdash link in the copy's root comes first on sys.path, so the
        # tests import the mutated copy, not the checkout the editable install points at
        (tmp / "dpdash").symlink_to(tmp / "engine" / "dpdash", target_is_directory=True)
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
    out = ROOT / "bench" / "results" / "mutations.md"
    if args.views and not args.k:
        lines[0] = VIEWS_HEADER
        lines[2] = lines[2].replace("mutations.py`", "mutations.py --views`")
        if args.what and out.exists() and VIEWS_HEADER in out.read_text():
            _replace_rows(out, VIEWS_HEADER, rows)
        else:
            _write_section(out, VIEWS_HEADER, lines)
    elif args.tests and args.what and not args.k and out.exists():
        _replace_rows(out, f"## Mutations checked by {args.tests}:", rows)
    elif args.tests and not args.k:
        # one section per test path; other sections of the file stay as they were
        lines[0] = f"## Mutations checked by {args.tests}: one release's noise or budget share changed"
        _write_section(out, lines[0], lines)
    elif not args.k:
        out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
