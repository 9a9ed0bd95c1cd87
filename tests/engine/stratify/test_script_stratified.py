"""dpdash.stratify.script: every "Copy as code" script of the stratified viewer runs on its own and reproduces
the page's numbers.

All scripts run once, in ONE fresh subprocess (``tests/script_runner.run_scripts``), each from its own clean
directory. Their ``engine.*`` lines must equal the numbers the page shows, recomputed here by the same engine calls
with the page's seed derivation; their ``independent.*`` lines must agree within the tolerance stated per test.
Values from outside the code: the pooled stratum's hand-computed mean (mean view), the closed form E|Lap(b)| = b,
the share of "≤50K" in the cleaned UCI Adult test file (11,360 of 15,060 rows, the dataset's documentation), a
brute-force count of every 2-way cell (synthetic view), and the guarantees the spec states at the defaults
(PP 2ε, constrained WEMs ε, WEM-naive ε/2; partially private view).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpdash.stratify import partial_release as release
from dpdash.stratify import script as SC
from dpdash.stratify import core as S
from dpdash.stratify import synth as Y
from dpdash.common.data import discrete_table_from_csv, load_adult, read_uploaded_csv
from tests.script_runner import run_scripts
from ui.views import ppd_jobs

ROOT = Path(__file__).resolve().parents[3]

MEAN = dict(sizes=[2, 3, 60, 935], mu=[1.5, -1.0, -0.5, 0.2], sigma=[1.0, 0.5, 1.0, 2.0], epsilon=1.0, R=3.0,
            gamma=0.05, reps=200, seed=4, min_frac=0.004, small_strata="pool", mode="paper",
            labels=["A", "B", "C", "D"])
MEAN_CLOSED = dict(MEAN, sizes=[400], mu=[0.0], sigma=[1e-6], labels=["G"], reps=2, min_frac=0.0)

# The synthetic view: Adult at the page's defaults; a small upload with a pooled group; MST on a small simulated
# table with few iterations (the page's script keeps MST's own 1,000).
SYNTH_COMMON = dict(epsilon=1.0, min_frac=0.001, small_strata="drop", classifier="logreg")
SYNTH = {
    "synth_adult": dict(SYNTH_COMMON, source="adult", synthesizer="independent", synthesizer_label="Independent",
                        seed=0),
    "synth_upload": dict(SYNTH_COMMON, source="upload", synthesizer="full_histogram",
                         synthesizer_label="Full histogram", seed=5, epsilon=2.0, min_frac=0.05, small_strata="pool",
                         classifier="forest", group_cols=["region"], label_col="smoker"),
    "synth_mst": dict(SYNTH_COMMON, source="categorical", n=1000, k=3, alpha=0.3, synthesizer="mst",
                      synthesizer_label="MST", seed=2, epsilon=0.5, synth_options={"iters": 50}),
}

# The partially private view: the defaults (PP only: the WEMs wait for their button), every method with an exact
# share and a calibrated PP, two other public sets (no order/prior; no state total) and the heaviest noise.
PP_COMMON = dict(t=23, month="Month 24", epsilon=1.0, sensitivity=2.0, kappa=2.0, alpha=1.0, reps=3, sweeps=30,
                 seed=0, public=(True, True, True, True, 0.0), pp_sensitivity=None, methods=["pp"],
                 guarantee_methods=list(release.METHODS))
PP = {
    "pp_default": PP_COMMON,
    "pp_all_methods": dict(PP_COMMON, t=5, month="Month 06", epsilon=0.3, sensitivity=1.5, kappa=1.0, alpha=0.1,
                           reps=2, sweeps=10, seed=7, public=(True, True, True, True, 0.25), pp_sensitivity=1.5,
                           methods=list(release.METHODS)),
    "pp_no_order": dict(PP_COMMON, t=10, month="Month 11", epsilon=2.0, seed=1, public=(True, False, True, False, 0.0),
                        pp_sensitivity=4.0, guarantee_methods=["pp", "wem_naive", "wem_congenial"]),
    "pp_no_total": dict(PP_COMMON, t=10, month="Month 11", epsilon=2.0, seed=1,
                        public=(False, True, False, False, 0.0), guarantee_methods=["pp"]),
    # the slider's extremes (ε = 0.1, Δ = 8) at a month of small counts: noise of sd ≈ 110 on counts ≈ 10 puts many
    # counties on every part of the cone (interior, edge, diagonal, apex; checked when the case was chosen)
    "pp_heavy_noise": dict(PP_COMMON, t=2, month="Month 03", epsilon=0.1, sensitivity=8.0, seed=3,
                           public=(True, True, True, True, 0.1), guarantee_methods=["pp"]),
}


def _upload_csv(path: Path) -> Path:
    """A small county-health table: region (the groups, one of them small), three coded columns and a label."""
    rng = np.random.default_rng(11)
    n = 600
    region = rng.choice(["North", "South", "East", "West island"], n, p=[0.45, 0.35, 0.17, 0.03])
    age = rng.integers(0, 4, n)
    smoker = (rng.random(n) < 0.2 + 0.1 * (age > 1)).astype(int)
    frame = pd.DataFrame({"region": region, "age_band": age, "activity": rng.integers(0, 3, n), "smoker": smoker})
    frame.to_csv(path, index=False)
    return path


def _parse(stdout: str) -> dict[str, str]:
    out = {}
    for line in stdout.splitlines():
        if " = " in line and not line.startswith("#"):
            key, value = line.split(" = ", 1)
            out[key.strip()] = value.split("#")[0].strip()
    return out


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> dict[str, dict[str, str]]:
    """Every case's script, built as the page builds it and run once, all in one subprocess."""
    work = tmp_path_factory.mktemp("stratified_scripts")
    csv = _upload_csv(work / "county_health.csv")
    scripts = {"mean": SC.mean_script(**MEAN),
               "mean_closed": SC.mean_script(**MEAN_CLOSED)}
    for name, case in SYNTH.items():
        extra = dict(csv_path=str(csv)) if case["source"] == "upload" else {}
        scripts[name] = SC.synth_script(**case, **extra)
    for name, case in PP.items():
        scripts[name] = SC.partial_release_script(**case)
    out = {name: _parse(stdout) for name, stdout in run_scripts(scripts, work).items()}
    out["_csv"] = {"path": str(csv)}
    return out


# ---------------------------------------------------------------------------------------------------- mean view
def test_mean_script_reproduces_the_page_and_the_formulas_agree(out):
    vals = out["mean"]
    assert vals["seed"] == "4"
    # The page's numbers: the same engine call with the page's seed derivation ([seed, 3]).
    df = S.run_mean_experiment(sizes=np.array(MEAN["sizes"]), mu=np.array(MEAN["mu"]), sigma=np.array(MEAN["sigma"]),
                               epsilons=(1.0,), R=3.0, gamma=0.05, reps=200, rng=np.random.default_rng([4, 3]),
                               min_frac=0.004, small_strata="pool")
    g = df[df["level"] == "group"]
    for i, name in enumerate(MEAN["labels"]):
        for method, word in (("stratified", "per_group"), ("naive", "global")):
            err = g[(g["group"] == i) & (g["method"] == method)]["abs_err"].to_numpy()
            assert float(vals[f"engine.group_error.{word}[{name}]"]) == pytest.approx(err.mean(), rel=1e-5)
            # independent: the expected error from the formulas, within 4.5 standard errors of the 200 repetitions
            se = err.std(ddof=1) / np.sqrt(err.size)
            assert abs(float(vals[f"independent.group_error.{word}[{name}]"]) - err.mean()) < 4.5 * se
    pop = df[df["level"] == "population"].groupby("method")["abs_err"].mean()
    assert float(vals["engine.population_error.global"]) == pytest.approx(pop["naive"], rel=1e-5)
    assert float(vals["engine.population_error.per_group"]) == pytest.approx(pop["stratified"], rel=1e-5)
    # A and B (2 and 3 records ≤ 0.004·1000) are pooled: the pooled stratum's mean is (2·1.5 + 3·(−1))/5 = 0, so
    # A's shift is −1.5 and its stratified error is at least ~1.5: worse than the global release.
    assert float(vals["independent.group_error.per_group[A]"]) > 1.4
    assert vals["engine.groups_helped"] == vals["independent.groups_helped"]
    assert vals["difference.groups_helped"] == "0"


def test_mean_script_privacy_only_closed_form(out):
    """With σ tiny and one group, the expected stratified error is E|Lap(b)| = b = 2C(m)/(mε) (closed form)."""
    b = 2 * (3.0 + np.sqrt(np.log(400 / 0.05))) / 400
    assert float(out["mean_closed"]["independent.group_error.per_group[G]"]) == pytest.approx(b, rel=1e-4)


# ---------------------------------------------------------------------------------------------- synthetic view
def _synth_engine(name: str, csv: str) -> tuple[Y.DiscreteTable, dict[str, Y.SynthRun]]:
    """The page's computation for a case: its table, its seeded split and both fits (``c_synth_run`` / ``run_pair``)."""
    case = SYNTH[name]
    if case["source"] == "adult":
        table = load_adult()
    elif case["source"] == "categorical":
        table = Y.make_categorical_population(case["n"], case["k"], case["alpha"],
                                              rng=np.random.default_rng([case["seed"], 2]))
    else:
        frame = read_uploaded_csv(Path(csv).read_bytes(), max_bytes=10_000_000, max_rows=200_000, max_cols=30).frame
        table = discrete_table_from_csv(frame, group_cols=case["group_cols"], label_col=case["label_col"])
    train, test = Y.train_test_split_table(table, rng=case["seed"])
    runs = {v: Y.fit_and_evaluate(train, test, domain=table.domain, synthesizer=case["synthesizer"],
                                  epsilon=case["epsilon"], variant=v, group_cols=list(table.group_cols),
                                  label_col=table.label_col, rng=case["seed"], min_frac=case["min_frac"],
                                  small_strata=case["small_strata"], classifier=case["classifier"],
                                  synth_options=case.get("synth_options"))
            for v in ("vanilla", "stratified")}
    return table, runs


@pytest.mark.parametrize("name", list(SYNTH))
def test_synth_script_engine_lines_are_the_pages_numbers_and_the_recomputation_agrees(out, name):
    vals = out[name]
    assert vals["seed"] == str(SYNTH[name]["seed"])
    table, runs = _synth_engine(name, out["_csv"]["path"])
    for variant, word in (("vanilla", "one_model"), ("stratified", "one_model_per_group")):
        m = runs[variant].metrics
        page = {"workload_error": m.workload_global, "parity_error": m.parity.total,
                "largest_relative_error": m.parity.max_disparity, "accuracy": m.accuracy,
                "positive_rate_ratio": m.dpr, "missed_positive_gap": m.fnr_difference}
        for metric, value in page.items():
            got = float(vals[f"engine.{metric}.{word}"])
            assert (math.isnan(got) and math.isnan(value)) or got == pytest.approx(value, rel=1e-9, abs=1e-12)
        for label, value in zip(m.workload_per_group["group"], m.workload_per_group["error"]):
            decoded = " × ".join(str(table.labels[c][int(v)]) if c in table.labels else v
                                 for c, v in zip(table.group_cols, label.split(" × ")))
            assert float(vals[f"engine.group_workload_error.{word}[{decoded}]"]) == pytest.approx(value, rel=1e-9)
    strata = runs["stratified"].strata
    assert int(vals["engine.models_fitted_per_group"]) == int(strata["kept"].sum()) + int(strata["pooled"].any())
    # Independent recomputation from the same synthetic tables: the same numbers up to float summation order
    # (the classifiers are fitted anew on the same one-hot features: identical predictions).
    differences = {k: float(v) for k, v in vals.items() if k.startswith("difference.")}
    assert len(differences) >= 20
    assert all(v < 1e-9 for v in differences.values() if not math.isnan(v)), differences
    for key in vals:
        if key.startswith("engine."):
            twin = "independent." + key.removeprefix("engine.")
            assert twin in vals
            a, b = float(vals[key]), float(vals[twin])
            assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-9, abs=1e-12), key


def test_synth_script_on_adult_matches_the_documented_test_file(out):
    # UCI Adult's cleaned test file has 15,060 rows, 11,360 of them "≤50K": always guessing it scores 0.75432.
    vals = out["synth_adult"]
    assert float(vals["independent.accuracy.always_commonest_label"]) == pytest.approx(11360 / 15060, abs=1e-9)
    # sex × race: 2 × 5 groups, each above 0.1% of the 30,162 training rows, so 10 models in the per-group fit
    assert vals["independent.models_fitted_per_group"] == "10"


def test_synth_script_workload_error_by_brute_force_and_the_pooled_upload(out):
    # The MST case's workload error, counted cell by cell here (every 2-way table of every column pair).
    table, runs = _synth_engine("synth_mst", "")
    train, _ = Y.train_test_split_table(table, rng=SYNTH["synth_mst"]["seed"])
    syn = runs["stratified"].synthetic
    cols = list(table.domain)
    dists = []
    for a, b in itertools.combinations(cols, 2):
        real, fake = Counter(zip(train[a], train[b])), Counter(zip(syn[a], syn[b]))
        dists.append(sum(abs(real[c] / len(train) - fake[c] / len(syn)) for c in set(real) | set(fake)))
    assert float(out["synth_mst"]["independent.workload_error.one_model_per_group"]) == pytest.approx(
        sum(dists) / len(dists), rel=1e-9)
    # The upload: "West island" (~3% of the rows, under the 5% threshold) is pooled: 3 own models + 1 pooled.
    vals = out["synth_upload"]
    assert vals["engine.models_fitted_per_group"] == vals["independent.models_fitted_per_group"] == "4"
    assert "engine.group_workload_error.one_model[West island]" not in vals
    assert "engine.group_workload_error.one_model[North]" in vals


# ----------------------------------------------------------------------------------- partially private view
def _pp_engine(name: str) -> pd.DataFrame:
    """The view's loss table for a case: one cached unit per method, as ``_run_unit`` calls the engine."""
    case = PP[name]
    panel = release.synth_pa_like()
    frames = [release.run_partially_private_release(
        panel, case["t"], epsilons=[case["epsilon"]], methods=[m], alphas=[ppd_jobs.method_alpha(m, case["alpha"])],
        sensitivity=case["sensitivity"], kappa=case["kappa"], reps=case["reps"],
        public=release.PublicInfo(*case["public"]), sweeps=case["sweeps"], pp_sensitivity=case["pp_sensitivity"],
        rng=case["seed"]) for m in case["methods"]]
    return ppd_jobs.loss_summary(pd.concat(frames, ignore_index=True))


@pytest.mark.parametrize("name", list(PP))
def test_partial_release_script_reproduces_the_views_losses_and_guarantees(out, name):
    vals, case = out[name], PP[name]
    assert vals["seed"] == str(case["seed"])
    loss = _pp_engine(name).set_index("method")["mean total ℓ₂ loss"]
    for m in case["methods"]:
        page = loss[release.METHOD_LABELS[m]]
        assert float(vals[f"engine.mean_total_l2_loss.{m}"]) == pytest.approx(page, rel=1e-9)
        # PP draws re-derived from the seed by the spec's stages 1–2, WEM draws re-scored: the same losses
        assert float(vals[f"independent.mean_total_l2_loss.{m}"]) == pytest.approx(page, rel=1e-9)
        assert float(vals[f"difference.largest_draw_loss.{m}"]) < 1e-9
    gt = release.guarantee_table(epsilon=case["epsilon"], sensitivity=case["sensitivity"], kappa=case["kappa"],
                                 pp_sensitivity=case["pp_sensitivity"]).set_index("method")["guaranteed epsilon"]
    for m in case["guarantee_methods"]:
        assert float(vals[f"engine.guaranteed_epsilon.{m}"]) == pytest.approx(gt[release.METHOD_LABELS[m]])
        assert float(vals[f"independent.guaranteed_epsilon.{m}"]) == pytest.approx(gt[release.METHOD_LABELS[m]])
    assert {k.rsplit(".", 1)[1] for k in vals if k.startswith("engine.guaranteed")} == set(case["guarantee_methods"])


def test_partial_release_defaults_state_the_specs_guarantees(out):
    # Spec §2.7: "At the defaults (Δ = κ = 2) PP carries 2ε while the constrained WEMs carry ε"; WEM-naive 2ε/(κΔ).
    vals = out["pp_default"]
    expected = {"pp": 2.0, "wem_naive": 0.5, "wem_congenial": 1.0, "wem_prior": 1.0}
    assert {m: float(vals[f"independent.guaranteed_epsilon.{m}"]) for m in expected} == expected
    assert {m: float(vals[f"engine.guaranteed_epsilon.{m}"]) for m in expected} == expected
    # Calibrated PP (Δ_PP = κΔ = 1.5 at κ = 1, Δ = 1.5, ε = 0.3): 4ε/Δ_PP = 0.8, the constrained WEMs' 4ε/(κΔ).
    assert float(out["pp_all_methods"]["independent.guaranteed_epsilon.pp"]) == pytest.approx(0.8)
    assert float(out["pp_all_methods"]["independent.guaranteed_epsilon.wem_prior"]) == pytest.approx(0.8)


@pytest.mark.parametrize("change, message", [
    (dict(classifier="svm"), "classifier must be one of"),
    (dict(source="categorical"), "needs n, k and alpha"),
    (dict(source="upload"), "needs csv_path and group_cols"),
    (dict(source="census"), "source must be"),
])
def test_synth_script_refuses_settings_it_cannot_write(change, message):
    """A script the page could not have computed is refused by name, never written with a silent default."""
    kw = dict(source="adult", synthesizer="mst", synthesizer_label="MST", epsilon=1.0, seed=0, min_frac=0.001,
              small_strata="drop", classifier="logreg")
    with pytest.raises(ValueError, match=message):
        SC.synth_script(**{**kw, **change})


def test_partial_release_script_needs_all_five_public_facts():
    kw = dict(t=3, month="Month 4", epsilon=1.0, sensitivity=2.0, kappa=2.0, alpha=1.0, reps=1, sweeps=10, seed=0,
              pp_sensitivity=None, methods=["pp"], guarantee_methods=["pp"])
    with pytest.raises(ValueError, match="public must have 5 entries"):
        SC.partial_release_script(public=(True, True, True, True), **kw)
    src = SC.partial_release_script(public=(True, True, True, True, 0.0), csv_path="counties.csv", **kw)
    assert "counties.csv" in src and "read_county_csv" in src  # an upload is read from the file the user keeps
