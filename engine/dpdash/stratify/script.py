""""Copy as code" scripts of the stratified synthesis viewer: short Python programs that recompute a view's numbers.

Each ``<view>_script(**params) -> str`` returns a script that (1) recomputes the view's headline numbers with this
project's engine, exactly as the page does (same data, seed and calls), and (2) recomputes them independently,
then prints ``engine.<name> = v``, ``independent.<name> = v`` and ``difference.<name> = v`` lines (and the seed).
The script imports the installed engine (``import dpdash``) and names the version that made it.

- :func:`mean_script`: expected errors from the direct Laplace/Gaussian formulas (numpy/scipy).
- :func:`synth_script`: the synthesizer is fitted by the engine (MST/AIM fits are the expensive part); every
  metric is recomputed from the synthetic tables with pandas, numpy and scikit-learn.
- :func:`partial_release_script`: guarantees from their formulas; every PP draw re-derived from its seed with
  the spec's projection (scipy ``brentq``) and rounding (scipy ``milp``); every draw's loss re-scored.

References
----------
Issue 15 item 2 (runnable code). Seed ``004_c5ca305e20a1adba.txt`` (Rosenblatt, Stoyanovich & Musco): the clipped
Laplace mean p̂ = mean(clip(x, −C, C)) + Lap(2C(m)/(mε)), C(m) = R + √log(m/γ) (L111–125, errata E1–E2), the
stratified release (Eq. 3–4), the naive convention (L211), Def. 11 (parity, erratum E7: a sum with ω = 1/k),
Defs. 13–14 (workload error); spec ``stratified_synthesis_viewer.md`` §2.4, §4. Seed ``001_cddb039cfb564267.txt``
(Seeman, Slavković & Reimherr) §5 with spec ``partially_private.md`` §2.7 (PP stages 1–2, erratum E8; the
guarantee readout, erratum E1).
"""

from __future__ import annotations

from typing import Sequence

from dpdash.common.script import made_with, version_check

_MEAN_TEMPLATE = '''"""Stratified synthesis viewer, mean estimation: one global DP mean vs one DP mean per group.

Recomputes the page's numbers with the project's engine (same seed), then the expected errors from the direct
formulas (numpy/scipy, no project code): a group's released value is its stratum's mean plus N(0, v) sampling
noise plus Laplace(b) privacy noise, b = 2*C(m)/(m*eps), C(m) = R + sqrt(log(m/gamma)) (paper mode) or
R + sqrt(2*log(2*m/gamma)) (rigorous). Clipping is ignored by the formulas (it bites only values beyond C).
Engine numbers are means over {reps} repetitions, so they differ from the expectations by Monte Carlo noise:
each difference is also printed in standard errors.
{made_with}
"""
{version_check}
import numpy as np
from scipy import special

from dpdash.stratify import core as S

sizes = np.array({sizes!r})
mu = np.array({mu!r})
sigma = np.array({sigma!r})
labels = {labels!r}
epsilon, epsilons = {epsilon!r}, {epsilons!r}
R, gamma, mode = {R!r}, {gamma!r}, {mode!r}
reps, seed = {reps!r}, {seed!r}
min_frac, small_strata = {min_frac!r}, {small_strata!r}
print(f"seed = {{seed}}")

# 1. The engine, exactly as the page calls it.
df = S.run_mean_experiment(sizes=sizes, mu=mu, sigma=sigma, epsilons=epsilons, R=R, gamma=gamma, reps=reps,
                           rng=np.random.default_rng([seed, 3]), methods=("naive", "stratified", "split"),
                           min_frac=min_frac, small_strata=small_strata, mode=mode)
at = df[np.isclose(df["epsilon"], epsilon)]
grp = at[at["level"] == "group"].groupby(["method", "group"])["abs_err"]
eng_mean, eng_se = grp.mean(), grp.std() / np.sqrt(grp.count())
pop = at[at["level"] == "population"].groupby("method")["abs_err"]

# 2. Independently: expected |error| from the formulas.
def C(m):
    return R + np.sqrt(np.log(m / gamma)) if mode == "paper" else R + np.sqrt(2 * np.log(2 * m / gamma))

def expected_abs(d, s, b):
    """E|d + N(0, s^2) + Laplace(b)| by the trapezoid rule over the Laplace density."""
    lap = np.linspace(-60 * b, 60 * b, 400_001)
    c = d + lap
    folded = s * np.sqrt(2 / np.pi) * np.exp(-c**2 / (2 * s**2)) + c * special.erf(c / (s * np.sqrt(2)))
    return float(np.trapezoid(folded * np.exp(-np.abs(lap) / b) / (2 * b), lap))

n = sizes.sum()
mu_pop = float(np.sum(sizes * mu) / n)
small = (sizes <= min_frac * n) & (sizes > 0)
pooled = small if small_strata == "pool" else np.zeros_like(small)
released = (sizes > 0) & (~small | pooled)
m_pool = sizes[pooled].sum()
mu_pool = float(np.sum(sizes[pooled] * mu[pooled]) / m_pool) if m_pool else np.nan
v_pool = float(np.sum(sizes[pooled] * sigma[pooled]**2) / m_pool**2) if m_pool else np.nan
b_global = 2 * C(n) / (n * epsilon)
s_global = np.sqrt(np.sum(sizes * sigma**2)) / n

helped_engine = helped_formula = compared = 0
for i, name in enumerate(labels):
    if not released[i]:
        print(f"# {{name}}: not released (dropped as too small)")
        continue
    if pooled[i]:
        shift, s, m = mu_pool - mu[i], np.sqrt(v_pool), m_pool
    else:
        shift, s, m = 0.0, sigma[i] / np.sqrt(sizes[i]), sizes[i]
    f_strat = expected_abs(shift, s, 2 * C(m) / (m * epsilon))
    f_glob = expected_abs(mu_pop - mu[i], s_global, b_global)
    for method, word, f in (("stratified", "per_group", f_strat), ("naive", "global", f_glob)):
        e, se = eng_mean[(method, i)], eng_se[(method, i)]
        print(f"engine.group_error.{{word}}[{{name}}] = {{e:.6g}}")
        print(f"independent.group_error.{{word}}[{{name}}] = {{f:.6g}}   # expected |error| from the formulas")
        print(f"difference.group_error.{{word}}[{{name}}] = {{e - f:.3g}}   "
              f"# {{(e - f) / se if se > 0 else 0:.2f}} standard errors of the engine's mean")
    compared += 1
    helped_engine += eng_mean[("stratified", i)] < eng_mean[("naive", i)]
    helped_formula += f_strat < f_glob
print(f"engine.groups_helped = {{helped_engine}}   # of {{compared}} groups released")
print(f"independent.groups_helped = {{helped_formula}}   # by the expected errors")
print(f"difference.groups_helped = {{helped_engine - helped_formula}}")
print(f"engine.population_error.global = {{pop.mean()['naive']:.6g}}")
print(f"engine.population_error.per_group = {{pop.mean()['stratified']:.6g}}")
'''


def mean_script(*, sizes: Sequence[int], mu: Sequence[float], sigma: Sequence[float], epsilon: float,
                R: float, gamma: float, reps: int, seed: int, min_frac: float, small_strata: str, mode: str,
                labels: Sequence[str], epsilons: Sequence[float] | None = None) -> str:
    """The mean-estimation view's script for a simulated mixture (Laplace estimator, exact public weights).

    ``epsilons`` is the ε grid the page ran (the noise stream depends on it); default ``(epsilon,)``.

    >>> src = mean_script(sizes=[5, 95], mu=[0.0, 1.0], sigma=[1.0, 1.0], epsilon=1.0, R=3.0, gamma=0.05, reps=2,
    ...                   seed=0, min_frac=0.0, small_strata="pool", mode="paper", labels=["A", "B"])
    >>> compile(src, "script", "exec") is not None
    True
    """
    return _MEAN_TEMPLATE.format(
        version_check=version_check(), made_with=made_with(),
        sizes=[int(v) for v in sizes], mu=[float(v) for v in mu],
        sigma=[float(v) for v in sigma], labels=[str(v) for v in labels], epsilon=float(epsilon),
        epsilons=tuple(float(e) for e in (epsilons if epsilons is not None else (epsilon,))), R=float(R),
        gamma=float(gamma), mode=str(mode), reps=int(reps), seed=int(seed), min_frac=float(min_frac),
        small_strata=str(small_strata))


_SYNTH_TEMPLATE = '''"""Stratified synthesis viewer, synthetic data: one model of the table vs one model per group.

1. The engine fits the {synth_label} synthesizer twice at epsilon = {epsilon!r}, exactly as the page does (same
   data, train/test split, seed and calls): one model of the whole table, and one model per group, each at the
   full epsilon (the groups do not overlap). Fitting is the slow part, so it is done once, by the engine.
2. Every number on the page is then recomputed from the two synthetic tables with pandas, numpy and scikit-learn
   alone (no project code): the workload error (mean L1 distance between the real and the synthetic 2-way
   tables, Defs. 13-14), each group's workload error on its own rows, the parity error (Def. 11 on column means
   of 1-based codes, omega = 1/k, a sum), and a classifier trained on the synthetic rows and tested on real
   held-out rows (accuracy, lowest / highest positive-prediction rate across groups, largest - smallest share of
   missed positives).
Source: Rosenblatt, Stoyanovich & Musco (arXiv 2312.11712), Stratified Data Synthesis.
{made_with}
"""
import itertools
{version_check}
import numpy as np
import pandas as pd
from sklearn.{clf_module} import {clf_class}

from dpdash.stratify import synth as Y
{load_import}

seed = {seed!r}
print(f"seed = {{seed}}")
{load_code}
train, test = Y.train_test_split_table(table, rng=seed)
groups, label, domain = list(table.group_cols), table.label_col, dict(table.domain)
cols = list(domain)
values = [c for c in cols if c not in groups]
min_frac = {min_frac!r}

# 1. The engine, as the page calls it.
runs = Y.fit_and_evaluate_variants(train, test, domain=domain, synthesizer={synth!r}, epsilon={epsilon!r},
                                   group_cols=groups, label_col=label, rng=seed, min_frac=min_frac,
                                   small_strata={small!r}, classifier={classifier!r}{options})


# 2. Independently, from the synthetic tables.
def workload(real, synth, columns):
    """Mean over every 2-way table (1-way for one column) of the L1 distance between real and synthetic shares."""
    dist = []
    for pair in itertools.combinations(columns, min(2, len(columns))):
        real_share = real.groupby(list(pair)).size() / len(real)
        synth_share = synth.groupby(list(pair)).size() / len(synth)
        dist.append(real_share.sub(synth_share, fill_value=0).abs().sum())
    return float(np.mean(dist))


def by_group(df):
    return {{(k if isinstance(k, tuple) else (k,)): rows for k, rows in df.groupby(groups)}}


real_groups = by_group(train)
evaluated = [key for key, rows in real_groups.items() if len(rows) > min_frac * len(train)]  # groups on the page


def name(key):
    return " × ".join(str(table.labels[c][v]) if c in table.labels else str(v) for c, v in zip(groups, key))


def parity(synth):
    """Def. 11: omega * sum |relative error of the column means| overall, plus the same sum for every group."""
    def rel(real, fake):
        t, e = real[values].to_numpy(float).mean(axis=0) + 1, fake[values].to_numpy(float).mean(axis=0) + 1
        return np.abs((t - e) / t)
    fake_groups = by_group(synth)
    cells = [rel(real_groups[k], fake_groups.get(k, synth)) for k in evaluated]  # a missing group: whole table
    return rel(train, synth).sum() / len(evaluated) + sum(c.sum() for c in cells), float(np.max(cells))


features = [c for c in cols if c != label]


def one_hot(df):
    return pd.get_dummies(pd.DataFrame({{c: pd.Categorical(df[c], categories=range(domain[c])) for c in features}}),
                          dtype=float).to_numpy()


def predict(fit_rows):
    """{clf_words}: fitted to ``fit_rows``, then predicting the test rows."""
    y = fit_rows[label].to_numpy()
    if np.unique(y).size < 2:
        return np.full(len(test), y[0] if y.size else 0)
    model = {clf_call}
    return model.fit(one_hot(fit_rows), y).predict(one_hot(test))


def show(key, engine_value, independent_value):
    print(f"engine.{{key}} = {{engine_value:.10g}}")
    print(f"independent.{{key}} = {{independent_value:.10g}}")
    print(f"difference.{{key}} = {{abs(engine_value - independent_value):.3e}}")


strata = runs["stratified"].strata
models = int(strata["kept"].sum()) + int(strata["pooled"].any())
small = [k for k, rows in real_groups.items() if len(rows) <= min_frac * len(train)]
show("models_fitted_per_group", models, len(evaluated) + int({small!r} == "pool" and len(small) > 0))
has_label = label is not None
if has_label:
    y_test = test[label].to_numpy()
    commonest = train[label].mode().iloc[0]
    baselines = runs["vanilla"].metrics
    show("accuracy.always_commonest_label", baselines.majority_baseline, np.mean(y_test == commonest))
    show("accuracy.trained_on_real_data", baselines.real_baseline, np.mean(predict(train) == y_test))
for variant, word in (("vanilla", "one_model"), ("stratified", "one_model_per_group")):
    synth, m = runs[variant].synthetic, runs[variant].metrics
    show(f"workload_error.{{word}}", m.workload_global, workload(train, synth, cols))
    total, largest = parity(synth)
    show(f"parity_error.{{word}}", m.parity.total, total)
    show(f"largest_relative_error.{{word}}", m.parity.max_disparity, largest)
    if has_label:
        pred = predict(synth)
        test_groups = [test[g] for g in groups]
        rate = pd.Series(pred == 1).groupby(test_groups).mean()
        missed = pd.Series(pred == 0)[y_test == 1].groupby([g[y_test == 1] for g in test_groups]).mean()
        show(f"accuracy.{{word}}", m.accuracy, np.mean(pred == y_test))
        show(f"positive_rate_ratio.{{word}}", m.dpr, rate.min() / rate.max() if rate.max() > 0 else np.nan)
        show(f"missed_positive_gap.{{word}}", m.fnr_difference, missed.max() - missed.min())
    fake_groups = by_group(synth)
    engine_groups = dict(zip(m.workload_per_group["group"], m.workload_per_group["error"]))  # keyed "code × code"
    for key in evaluated:
        show(f"group_workload_error.{{word}}[{{name(key)}}]", engine_groups[" × ".join(map(str, key))],
             workload(real_groups[key], fake_groups.get(key, synth), values))
'''

_CLASSIFIERS = {
    "logreg": ("linear_model", "LogisticRegression", "LogisticRegression(max_iter=1000)",
               "Logistic regression, one-hot features"),
    "forest": ("ensemble", "RandomForestClassifier",
               "RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=2)",
               "Seeded random forest (100 trees), one-hot features"),
}


def synth_script(*, source: str, synthesizer: str, synthesizer_label: str, epsilon: float, seed: int,
                 min_frac: float, small_strata: str, classifier: str, n: int | None = None,
                 k: int | None = None, alpha: float | None = None, csv_path: str | None = None,
                 group_cols: Sequence[str] = (), label_col: str | None = None,
                 synth_options: dict | None = None, missing_codes: Sequence[str] = ("",)) -> str:
    """The synthetic-data view's script: the engine's fit, then every metric recomputed with pandas/scikit-learn.

    ``source``: ``"adult"`` (UCI Adult, ``dpdash.common.data.load_adult``), ``"categorical"`` (the simulated table of
    ``n`` rows, ``k`` groups, Dirichlet ``alpha``, drawn from ``default_rng([seed, 2])`` as the page does) or
    ``"upload"`` (the CSV at ``csv_path``, coded with ``group_cols`` and ``label_col`` as the page codes it).
    ``synth_options`` are passed to the synthesizer (e.g. fewer MST iterations in a test); the page passes none.

    >>> src = synth_script(source="adult", synthesizer="mst", synthesizer_label="MST", epsilon=1.0, seed=0,
    ...                    min_frac=0.001, small_strata="drop", classifier="logreg")
    >>> compile(src, "script", "exec") is not None and "seed = 0" in src
    True
    """
    if classifier not in _CLASSIFIERS:
        raise ValueError(f"classifier must be one of {sorted(_CLASSIFIERS)}, got {classifier!r}")
    if source == "adult":
        load_import, load_code = "from dpdash.common.data import load_adult", "table = load_adult()  # UCI Adult, coded"
    elif source == "categorical":
        if n is None or k is None or alpha is None:
            raise ValueError("the categorical source needs n, k and alpha")
        load_import = ""
        load_code = (f"table = Y.make_categorical_population({int(n)!r}, {int(k)!r}, {float(alpha)!r}, "
                     "rng=np.random.default_rng([seed, 2]))")
    elif source == "upload":
        if not csv_path or not group_cols:
            raise ValueError("the upload source needs csv_path and group_cols")
        load_import = "from dpdash.common.data import discrete_table_from_csv, read_uploaded_csv"
        # the page's "Read NA, N and None as missing" choice (issue 31): the script reads the file as the page did
        wanted = tuple(str(c) for c in missing_codes)
        codes = "" if wanted == ("",) else f", missing_codes={wanted!r}"
        load_code = (f"CSV = {str(csv_path)!r}  # your uploaded file (put it next to this script)\n"
                     "with open(CSV, \"rb\") as fh:\n"
                     "    frame = read_uploaded_csv(fh.read(), max_bytes=10_000_000, max_rows=200_000, "
                     f"max_cols=30{codes}).frame\n"
                     f"table = discrete_table_from_csv(frame, group_cols={[str(g) for g in group_cols]!r}, "
                     f"label_col={None if label_col is None else str(label_col)!r})")
    else:
        raise ValueError(f"source must be 'adult', 'categorical' or 'upload', got {source!r}")
    module, cls, call, words = _CLASSIFIERS[classifier]
    options = f",\n                                   synth_options={dict(synth_options)!r}" if synth_options else ""
    return _SYNTH_TEMPLATE.format(
        version_check=version_check(), made_with=made_with(),
        synth_label=str(synthesizer_label), epsilon=float(epsilon), seed=int(seed),
        load_import=load_import, load_code=load_code, synth=str(synthesizer), min_frac=float(min_frac),
        small=str(small_strata), classifier=str(classifier), options=options, clf_module=module, clf_class=cls,
        clf_call=call, clf_words=words)


_PP_TEMPLATE = '''"""Stratified synthesis viewer, partially private release of county case and death counts.

1. The engine releases {month} {reps} times by each method the page shows (same data, seed and calls) and gives
   each method's mean total L2 loss (over all counties' cases and deaths) and its guaranteed epsilon.
2. Independently, with numpy and scipy only (Seeman, Slavkovic & Reimherr 2022, section 5, as the spec fixes it):
   the guarantees from their formulas; every draw's loss re-scored from the released counts; and every PP draw
   re-derived from scratch: the same discrete Laplace noise (drawn from the draw's seed as G1 - G2 with
   G ~ Geometric(1 - r), r = exp(-epsilon / Delta_PP)), the least-squares projection onto the public constraints
   (stage 1, the multiplier of the state total found with scipy's brentq) and the rounding to whole counts
   (stage 2, scipy's milp). WEM draws come from a Gibbs sampler (MCMC): they are re-scored, not re-drawn.
{made_with}
"""
import math
{version_check}
import numpy as np
from scipy import optimize

from dpdash.stratify import partial_release as release

seed = {seed!r}
print(f"seed = {{seed}}")
{load_code}
t = {t!r}  # month index: {month}
epsilon, sensitivity, kappa, alpha = {epsilon!r}, {sensitivity!r}, {kappa!r}, {alpha!r}
pp_sensitivity = {pp_sensitivity!r}  # Delta_PP when "Calibrate PP" is ticked (kappa * Delta), else None
reps, sweeps = {reps!r}, {sweeps!r}
state_total, order, nonneg, prior, exact_share = {public!r}
methods = {methods!r}  # the methods whose losses the page shows
guaranteed = {guarantee_methods!r}  # the rows of its guarantee table

# 1. The engine, as the page calls it (one call per method: every draw has its own seed).
public = release.PublicInfo(state_total, order, nonneg, prior, exact_share)
frames = {{m: release.run_partially_private_release(
    panel, t, epsilons=[epsilon], methods=[m], alphas=[alpha], sensitivity=sensitivity, kappa=kappa, reps=reps,
    public=public, sweeps=sweeps, pp_sensitivity=pp_sensitivity, rng=seed) for m in methods}}


# 2. Independently.
def guarantee(method):
    """Spec 2.7: one person changes county and/or death status, state total fixed (|dX|_1 <= 4, |dX|_2 <= 2)."""
    if method == "pp":
        return 4 * epsilon / (pp_sensitivity or sensitivity)
    if method == "wem_naive":
        return 2 * epsilon / (kappa * sensitivity)
    return 4 * epsilon / (kappa * sensitivity)  # congenial and prior: the normaliser can double the loss


def project(u, v):
    """Nearest allowed (cases, deaths) of each county to (u, v), and d(cases)/du (1, 1/2 or 0)."""
    if order and nonneg:  # the cone c >= d >= 0
        keep = (u >= v) & (u >= 0)  # interior, or edge (deaths set to 0)
        diag = (v > u) & (u + v >= 0)  # deaths = cases = (u + v) / 2
        c = np.where(keep, u, np.where(diag, (u + v) / 2, 0.0))
        return c, np.where(keep, np.maximum(v, 0.0), c), np.where(keep, 1.0, np.where(diag, 0.5, 0.0))
    if nonneg:
        return np.maximum(u, 0.0), np.maximum(v, 0.0), (u > 0).astype(float)
    if order:
        diag = v > u
        c = np.where(diag, (u + v) / 2, u)
        return c, np.where(diag, c, v), np.where(diag, 0.5, 1.0)
    return u, v, np.ones_like(u)


def pp_release(rep, xc, xd, s):
    """One PP draw of the private counties: noise, stage 1 (projection) and stage 2 (rounding)."""
    # The engine seeds each draw by (root, month, draw, epsilon, method 0 = PP, no alpha).
    root = int(np.random.default_rng(seed).integers(2**62))
    rng = np.random.default_rng(np.random.SeedSequence([root, t, rep, round(epsilon * 1e6), 0, 0]))
    r = math.exp(-epsilon / (pp_sensitivity or sensitivity))
    yc = xc + rng.geometric(1 - r, xc.size) - rng.geometric(1 - r, xc.size)
    yd = xd + rng.geometric(1 - r, xd.size) - rng.geometric(1 - r, xd.size)
    lam = 0.0
    if state_total:  # Lagrange multiplier of sum(cases) = s: the total is non-increasing in lam
        def gap(lam):
            return project(yc - lam, yd)[0].sum() - s
        lo = hi = 1.0 + np.abs(yc).max() + np.abs(yd).max() + abs(s)
        lo = -lo
        while gap(lo) < 0:
            lo *= 2
        while gap(hi) > 0:
            hi *= 2
        lam = optimize.brentq(gap, lo, hi, xtol=1e-13)
        slope = project(yc - lam, yd)[2].sum()
        lam += gap(lam) / slope if slope > 0 else 0.0  # exact on the linear piece brentq landed on
    c, d, _ = project(yc - lam, yd)
    c, d = (np.where(np.abs(x - np.rint(x)) < 1e-9, np.rint(x), x) for x in (c, d))
    fc, fd = np.floor(c), np.floor(d)
    cost = np.concatenate([1 - 2 * (c - fc), 1 - 2 * (d - fd)])  # |floor + b - x| = frac + b (1 - 2 frac)
    J, rows, lo_b, hi_b = c.size, [], [], []
    if state_total:
        rows.append(np.concatenate([np.ones(J), np.zeros(J)]))
        lo_b.append(s - fc.sum())
        hi_b.append(s - fc.sum())
    if order:
        rows.extend(np.hstack([np.eye(J), -np.eye(J)]))
        lo_b.extend(fd - fc)
        hi_b.extend(np.full(J, np.inf))
    if rows:
        b = np.rint(optimize.milp(cost, constraints=optimize.LinearConstraint(np.vstack(rows), lo_b, hi_b),
                                  integrality=np.ones(2 * J), bounds=optimize.Bounds(0, 1)).x)
    else:
        b = (cost < 0).astype(float)
    return fc + b[:J], fd + b[J:]


xc, xd = panel.cases[:, t].astype(float), panel.deaths[:, t].astype(float)
exact = np.zeros(panel.J, bool)  # the most populous share of counties is published exactly
exact[np.argsort(-panel.population, kind="stable")[:math.floor(exact_share * panel.J + 1e-9)]] = True
for m in guaranteed:
    value = release.method_guarantee(m, epsilon=epsilon, sensitivity=sensitivity, kappa=kappa,
                                     pp_sensitivity=pp_sensitivity)
    print(f"engine.guaranteed_epsilon.{{m}} = {{value:.10g}}")
    print(f"independent.guaranteed_epsilon.{{m}} = {{guarantee(m):.10g}}")
    print(f"difference.guaranteed_epsilon.{{m}} = {{abs(value - guarantee(m)):.3e}}")
for m, df in frames.items():
    engine_loss, rescored, rederived = [], [], []
    for rep, draw in df.groupby("rep"):
        cases, deaths = draw["cases"].to_numpy(float), draw["deaths"].to_numpy(float)
        engine_loss.append(draw["total_l2"].iloc[0])
        rescored.append(math.sqrt(np.sum((cases - xc) ** 2) + np.sum((deaths - xd) ** 2)))
        if m == "pp":
            out_c, out_d = xc.copy(), xd.copy()
            out_c[~exact], out_d[~exact] = pp_release(rep, xc[~exact], xd[~exact], xc.sum() - xc[exact].sum())
            rederived.append(math.sqrt(np.sum((out_c - xc) ** 2) + np.sum((out_d - xd) ** 2)))
    independent = rederived if m == "pp" else rescored
    how = "re-derived from the seed" if m == "pp" else "re-scored from the released counts"
    print(f"engine.mean_total_l2_loss.{{m}} = {{np.mean(engine_loss):.10g}}")
    print(f"independent.mean_total_l2_loss.{{m}} = {{np.mean(independent):.10g}}   # {{how}}")
    print(f"difference.mean_total_l2_loss.{{m}} = {{abs(np.mean(engine_loss) - np.mean(independent)):.3e}}")
    print(f"difference.largest_draw_loss.{{m}} = {{np.max(np.abs(np.subtract(engine_loss, independent))):.3e}}")
'''


def partial_release_script(*, t: int, month: str, epsilon: float, sensitivity: float, kappa: float, alpha: float,
                           reps: int, sweeps: int, seed: int, public: Sequence, pp_sensitivity: float | None,
                           methods: Sequence[str], guarantee_methods: Sequence[str],
                           csv_path: str | None = None) -> str:
    """The partially private view's script: engine releases, then the guarantees and losses recomputed.

    ``public`` = (state total, cases ≥ deaths, non-negative, previous month as prior, exact share) as
    ``ui.views.ppd_jobs.public_tuple`` gives it; ``methods`` are the methods whose losses the page shows (PP, and
    the WEMs once run), ``guarantee_methods`` those of its guarantee table. ``csv_path``: the uploaded county CSV
    (None: the synthetic PA-like panel).

    >>> src = partial_release_script(t=23, month="Month 24", epsilon=1.0, sensitivity=2.0, kappa=2.0, alpha=1.0,
    ...                              reps=3, sweeps=30, seed=0, public=(True, True, True, True, 0.0),
    ...                              pp_sensitivity=None, methods=["pp"], guarantee_methods=["pp"])
    >>> compile(src, "script", "exec") is not None and "seed = 0" in src
    True
    """
    if csv_path is None:
        load_code = "panel = release.synth_pa_like()  # synthetic PA-like county data (not real)"
    else:
        load_code = (f"CSV = {str(csv_path)!r}  # your uploaded county file (put it next to this script)\n"
                     "with open(CSV, \"rb\") as fh:\n"
                     "    panel = release.read_county_csv(fh.read())")
    pub = tuple(public)
    if len(pub) != 5:
        raise ValueError(f"public must have 5 entries, got {len(pub)}")
    return _PP_TEMPLATE.format(
        version_check=version_check(), made_with=made_with(),
        seed=int(seed), load_code=load_code, t=int(t), month=str(month),
        epsilon=float(epsilon), sensitivity=float(sensitivity), kappa=float(kappa), alpha=float(alpha),
        pp_sensitivity=None if pp_sensitivity is None else float(pp_sensitivity), reps=int(reps),
        sweeps=int(sweeps), public=(bool(pub[0]), bool(pub[1]), bool(pub[2]), bool(pub[3]), float(pub[4])),
        methods=[str(m) for m in methods], guarantee_methods=[str(m) for m in guarantee_methods])
