""""Copy as code" for the coherence explorer: a short Python script that recomputes the repeated runs' headline
numbers (W1 per group over the first R runs, and the failure count at α) twice, with this project's engine and
independently with scikit-learn and ``scipy.stats.wasserstein_distance``, and prints both and their difference.

The independent half follows the experiment as the spec writes it (§4: drop unlabelled rows, sensitive value → −1,
categories → codes of sorted values, missing → smallest − 1; split with ``SeedSequence(seed, spawn_key=(r,))``;
the learner seeded by the split's next draw) without calling the engine, so a changed formula in either shows as
a difference. It covers the releases in the clear (whole lens, column subset, subsample); for the histogram
releases and the coarsened clear release only the engine's numbers are printed (no independent library draws
those synthetic records).

References
----------
Issue 15 item 2 (runnable code); seeds/000_f379639b976c7ffb.txt §4.2 Figure 1, Def. 5 (W1); specs/
coherence_explorer.md §4 (the algorithm) and §3.3 (β̂).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Mapping

from engine import coherence as co

__all__ = ["runs_script", "independent_supported", "SCRIPT_REPS"]

#: Runs the script recomputes by default (a small R keeps it quick; runs 0..R−1 equal the page's first R runs).
SCRIPT_REPS = 5


def independent_supported(config: co.ExperimentConfig) -> bool:
    """Whether the script's independent half covers this release (releases in the clear, not coarsened)."""
    rel = config.release
    return rel.kind in ("clear", "subsample") and not rel.binned


def _literal(v) -> str:
    """Python source for a config value: dataclasses of ``engine.coherence`` (non-default fields), tuples, ∞."""
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        parts = []
        for f in dataclasses.fields(v):
            val = getattr(v, f.name)
            default = f.default if f.default is not dataclasses.MISSING else (
                f.default_factory() if f.default_factory is not dataclasses.MISSING else dataclasses.MISSING)
            if default is not dataclasses.MISSING and val == default:
                continue
            parts.append(f"{f.name}={_literal(val)}")
        return f"co.{type(v).__name__}({', '.join(parts)})"
    if isinstance(v, tuple):
        inner = ", ".join(_literal(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if isinstance(v, float):
        if math.isinf(v):
            return "math.inf" if v > 0 else "-math.inf"
        return repr(v)
    return repr(v)


def _data_lines(data: Mapping[str, object]) -> list[str]:
    src = data.get("source")
    if src == "synthetic":
        return ["from engine.data import census_population",
                f"df = census_population({int(data['n'])}, rng={int(data['seed'])})  # generated, not real people"]
    if src == "shared":
        return ["from engine.data import load_dataset", f"df = load_dataset({str(data['name'])!r}).frame"]
    return ["from engine.data import read_uploaded_csv",
            "PATH = 'your_file.csv'  # the file you uploaded",
            "with open(PATH, 'rb') as fh:",
            "    df = read_uploaded_csv(fh.read()).frame"]


_INDEPENDENT = '''
# ---- 2. Independently: scikit-learn and scipy.stats.wasserstein_distance, following the paper's experiment
import numpy as np
import pandas as pd
from scipy.stats import wasserstein_distance


def encode(col):
    """Numbers as floats, other values as codes of their sorted distinct values, missing as (smallest - 1)."""
    if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
        x = col.to_numpy(dtype=float, na_value=np.nan, copy=True)
    else:
        levels = sorted(set(col.dropna().astype(str)))
        x = np.array([levels.index(str(v)) if pd.notna(v) else np.nan for v in col], dtype=float)
    x[np.isnan(x)] = np.nanmin(x) - 1.0
    return x


def member(frame, cond):
    """One condition: value is one of `values`, or low <= value < high; missing never matches."""
    col = frame[cond.column]
    if cond.values:
        if pd.api.types.is_numeric_dtype(col):
            return col.isin([float(v) for v in cond.values]).to_numpy()
        return (col.notna() & col.astype(str).isin([str(v) for v in cond.values])).to_numpy()
    lo = -np.inf if cond.low is None else cond.low
    hi = np.inf if cond.high is None else cond.high
    return (col.notna() & (col >= lo) & (col < hi)).to_numpy()


def learner(seed):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeClassifier
    kind = config.learner.kind
    if kind == "random_forest":
        return RandomForestClassifier(n_estimators=config.learner.n_estimators, random_state=seed, n_jobs=1)
    if kind == "decision_tree":
        return DecisionTreeClassifier(random_state=seed)
    if kind == "nearest_neighbor":
        return make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=1))
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))


d = df[df[config.label].notna()].reset_index(drop=True)
lab = d[config.label]
if pd.api.types.is_numeric_dtype(lab):
    sensitive = lab.to_numpy(dtype=float) == float(config.sensitive_value)
else:
    sensitive = (lab.astype(str) == str(config.sensitive_value)).to_numpy()
y = np.where(sensitive, -1, 1)
features = config.release.features or config.lens
X = np.column_stack([encode(d[c]) for c in features])
masks = {}
for g in config.groups:
    m = np.ones(len(d), dtype=bool)
    for cond in g.conditions:
        m &= member(d, cond)
    masks[g.name] = m
n, k = len(d), len(d) // 2
w1_independent = np.full((R, len(masks)), np.nan)
for r in range(R):
    rng = np.random.default_rng(np.random.SeedSequence(config.rng, spawn_key=(r,)))  # config.rng: an integer seed
    perm = rng.permutation(n)
    ia, ib = perm[:k], perm[k:2 * k]
    train = ia
    if config.release.kind == "subsample":
        train = ia[rng.choice(k, size=config.release.subsample_size, replace=False)]
    seed = int(rng.integers(2**31 - 1))
    if np.unique(y[train]).size == 1:  # one class in the release: the constant predictor
        pa, pb = np.full(k, float(y[train][0])), np.full(k, float(y[train][0]))
    else:
        model = learner(seed).fit(X[train], y[train])
        if config.learner.output == "hard":
            pa, pb = model.predict(X[ia]).astype(float), model.predict(X[ib]).astype(float)
        else:
            pos = list(model.classes_).index(1)
            pa = 2 * model.predict_proba(X[ia])[:, pos] - 1
            pb = 2 * model.predict_proba(X[ib])[:, pos] - 1
    for j, (name, m) in enumerate(masks.items()):
        if m.sum() >= 2 and m[ia].any() and m[ib].any():
            w1_independent[r, j] = wasserstein_distance(pa[m[ia]], pb[m[ib]])
mean_independent = np.nanmean(w1_independent, axis=0)
kept = np.array([m.sum() >= max(GAMMA, 2) for m in masks.values()])
worst_independent = np.nanmax(w1_independent[:, kept], axis=1)
failures_independent = int(np.sum(worst_independent > ALPHA))

for j, name in enumerate(names):
    print(f"independent mean W1 [{name}] = {mean_independent[j]:.12g}")
print(f"independent runs above alpha = {failures_independent}")
for j, name in enumerate(names):
    print(f"difference mean W1 [{name}] = {abs(mean_independent[j] - result_mean[j]):.3g}")
print(f"difference runs above alpha = {abs(failures_independent - failures)}")
'''


def runs_script(*, repo_root: str, data: Mapping[str, object], config: co.ExperimentConfig, alpha: float,
                gamma: float, repetitions: int = SCRIPT_REPS) -> str:
    """A runnable script recomputing the repeated runs' headline numbers for ``config`` (integer ``rng``) on the
    page's data.

    ``data``: ``{"source": "synthetic", "n": ..., "seed": ...}``, ``{"source": "shared", "name": ...}`` or
    ``{"source": "upload"}`` (the script then reads a path the user fills in). ``repetitions``: runs recomputed
    (at most the page's R); run r is the page's run r. Printed lines are ``name = value``: the engine's mean W1
    per group and count of runs above α, the same independently (clear releases), and their differences.
    """
    R = max(1, min(int(repetitions), int(config.repetitions)))
    lines = [
        '"""Coherence explorer: W1 per group over the first R runs, with our engine and independently."""',
        "import math",
        "import sys",
        "",
        f"sys.path.insert(0, {str(repo_root)!r})  # this project's repository",
        "",
        "from engine import coherence as co",
        *_data_lines(data),
        "",
        f"R = {R}  # runs recomputed (run r is the page's run r)",
        f"ALPHA = {float(alpha)!r}  # largest W1 tolerated",
        f"GAMMA = {float(gamma)!r}  # smallest group size kept",
        f"config = {_literal(dataclasses.replace(config, repetitions=R))}",
        "",
        "# ---- 1. With this project's engine",
        "result = co.run_experiment(df, config, n_jobs=1)",
        "names = result.group_names",
        "result_mean = [float(x) for x in __import__('numpy').nanmean(result.w1, axis=0)]",
        "failures = co.beta_hat(result, ALPHA, GAMMA).failures",
        "for name, value in zip(names, result_mean):",
        "    print(f\"engine mean W1 [{name}] = {value:.12g}\")",
        "print(f\"engine runs above alpha = {failures}\")",
    ]
    if independent_supported(config):
        lines.append(_INDEPENDENT.rstrip("\n"))
    else:
        lines += ["# No independent library draws this release's synthetic records: the engine's numbers only.",
                  "print('independent = not available for this release')"]
    return "\n".join(lines) + "\n"
