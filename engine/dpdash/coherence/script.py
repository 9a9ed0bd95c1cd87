""""Copy as code" for the coherence explorer: short Python scripts that recompute a tab's headline numbers twice,
with this project's engine and independently, and print both and their difference.

- **Repeated runs** (and the preview, R = 1): mean W1 per group over the first R runs and the failure count at α;
  independently with scikit-learn and ``scipy.stats.wasserstein_distance``, following the experiment as the spec
  writes it (§4: drop unlabelled rows, sensitive value → −1, categories → codes of sorted values, missing →
  smallest − 1; split with ``SeedSequence(seed, spawn_key=(r,))``; the learner seeded by the split's next draw).
  It covers the releases in the clear (whole lens, column subset, subsample); for the histogram releases and the
  coarsened clear release only the engine's numbers are printed.
- **W1 vs ε**: mean W1 per group at each ε over a stated, reduced number of runs; independently with the
  histogram release written out from spec §4 (binning, Laplace 2/ε or Gaussian noise, clipping, n/2 draws), the
  Gaussian σ calibrated with scipy (the engine uses dp-accounting), scikit-learn and scipy's W1.
- **Theory**: Theorems 7, 8 and 9 (γ, the groups meeting it, the largest ε for the smallest group, the smallest α
  per group); independently from the seed's formulas with the spec's errata, solved with scipy's ``brentq``.
- **Section 7**: the one-bit predictor's largest W1 per group over the page's 1,000 splits, the paper's bound and
  the splits above it; independently in numpy with scipy's W1 and the bounds written out.

No independent half calls the engine, so a changed formula in either shows as a difference.

References
----------
Issue 15 item 2 (runnable code); seeds/000_f379639b976c7ffb.txt §4.2 Figure 1, Def. 5 (W1), Theorems 3, 7–9, 11;
specs/coherence_explorer.md §4 (the algorithm), §3.3 (β̂), §3.5–3.6 (theorems, errata). Balle and Wang (2018),
"Improving the Gaussian mechanism", Theorem 8 (analytic Gaussian calibration).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Mapping

from dpdash.coherence import core as co
from dpdash.coherence.tabs import FLOOR_REPS
from dpdash.common.script import made_with, version_check

__all__ = ["runs_script", "sweep_script", "theory_script", "section7_script", "independent_supported", "SCRIPT_REPS",
           "SCRIPT_SWEEP_REPS"]

#: Runs the script recomputes by default (a small R keeps it quick; runs 0..R−1 equal the page's first R runs).
SCRIPT_REPS = 5


def independent_supported(config: co.ExperimentConfig) -> bool:
    """Whether the script's independent half covers this release (releases in the clear, not coarsened)."""
    rel = config.release
    return rel.kind in ("clear", "subsample") and not rel.binned


def _literal(v) -> str:
    """Python source for a config value: dataclasses of ``dpdash.coherence.core`` (non-default fields), tuples, ∞."""
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
        return ["from dpdash.common.data import census_population",
                f"df = census_population({int(data['n'])}, rng={int(data['seed'])})  # generated, not real people"]
    if src == "shared":
        return ["from dpdash.common.data import load_dataset", f"df = load_dataset({str(data['name'])!r}).frame"]
    # the page's "Read NA, N and None as missing" choice travels with the data (issue 31): the script must read the
    # file as the page did
    codes = tuple(str(c) for c in data.get("missing_codes", ("",)))
    call = ("read_uploaded_csv(fh.read())" if codes == ("",)
            else f"read_uploaded_csv(fh.read(), missing_codes={codes!r})")
    return ["from dpdash.common.data import read_uploaded_csv",
            f"PATH = {str(data.get('path') or 'your_file.csv')!r}  # the file you uploaded",
            "with open(PATH, 'rb') as fh:",
            f"    df = {call}.frame"]


_IMPORTS = '''
import numpy as np
import pandas as pd
from scipy.stats import wasserstein_distance
'''

_ENCODE = '''

def encode(col):
    """Numbers as floats, other values as codes of their sorted distinct values, missing as (smallest - 1)."""
    if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
        x = col.to_numpy(dtype=float, na_value=np.nan, copy=True)
    else:
        levels = sorted(set(col.dropna().astype(str)))
        x = np.array([levels.index(str(v)) if pd.notna(v) else np.nan for v in col], dtype=float)
    x[np.isnan(x)] = np.nanmin(x) - 1.0
    return x
'''

_MEMBER = '''

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


def masks_of(frame, groups):
    """Each group's members: every condition holds."""
    out = {}
    for g in groups:
        m = np.ones(len(frame), dtype=bool)
        for cond in g.conditions:
            m &= member(frame, cond)
        out[g.name] = m
    return out
'''

_LEARNER = '''

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
'''

_LABELLED = '''

d = df[df[config.label].notna()].reset_index(drop=True)  # rows without a label are dropped (spec E12)
lab = d[config.label]
if pd.api.types.is_numeric_dtype(lab):
    sensitive = lab.to_numpy(dtype=float) == float(config.sensitive_value)
else:
    sensitive = (lab.astype(str) == str(config.sensitive_value)).to_numpy()
y = np.where(sensitive, -1, 1)  # the sensitive value is coded -1 (seed Section 5)
masks = masks_of(d, config.groups)
'''

_INDEPENDENT = ('\n# ---- 2. Independently: scikit-learn and scipy.stats.wasserstein_distance, following the paper\'s '
                'experiment' + _IMPORTS + _ENCODE + _MEMBER + _LEARNER + _LABELLED + '''

features = config.release.features or config.lens
X = np.column_stack([encode(d[c]) for c in features])
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
''')


def runs_script(*, data: Mapping[str, object], config: co.ExperimentConfig, alpha: float,
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
        '"""Coherence explorer: W1 per group over the first R runs, with our engine and independently.',
        "", made_with(), '"""',
        "import math",
        "",
        *version_check().splitlines(),
        "",
        "from dpdash.coherence import core as co",
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


def _header(title: str, *, data: Mapping[str, object]) -> list[str]:
    return [f'"""{title}\n\n{made_with()}\n"""', "import math", "", *version_check().splitlines(), "",
            "from dpdash.coherence import core as co", *_data_lines(data), ""]


# ----------------------------------------------------------------------------------------------- W1 vs ε
#: Runs per ε the sweep script recomputes by default (the page averages up to 10 at each of six ε).
SCRIPT_SWEEP_REPS = 2

_SWEEP_INDEPENDENT = ('\n# ---- 2. Independently: the histogram release written out (spec section 4), scikit-learn and '
                      'scipy' + _IMPORTS + _MEMBER + _LEARNER + _LABELLED + '''

from scipy.optimize import brentq
from scipy.stats import norm


def levels_of(col):
    """Spec section 4: at most 20 distinct values -> one level each (sorted); more (numeric) -> `bins` equal-width
    bins over [min, max], the last one closed; missing -> one more level."""
    present = col.notna().to_numpy()
    codes = np.zeros(len(col), dtype=int)
    if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
        x = col.to_numpy(dtype=float, na_value=np.nan)[present]
        distinct = np.unique(x)
        if distinct.size <= 20:
            codes[present], count = np.searchsorted(distinct, x), distinct.size
        else:
            edges = np.linspace(distinct[0], distinct[-1], config.release.bins + 1)
            codes[present] = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, config.release.bins - 1)
            count = config.release.bins
    else:
        distinct = sorted(set(col[present].astype(str)))
        codes[present], count = [distinct.index(v) for v in col[present].astype(str)], len(distinct)
    if not present.all():
        codes[~present], count = count, count + 1
    return codes, count


def gaussian_sigma(eps, delta, sensitivity=math.sqrt(2)):
    """Analytic Gaussian mechanism (Balle and Wang 2018, Theorem 8): the sigma whose delta(eps) is `delta`."""
    def excess(s):
        a, b = sensitivity / (2 * s), eps * s / sensitivity
        return norm.cdf(a - b) - math.exp(eps) * norm.cdf(-a - b) - delta
    return brentq(excess, 1e-6, 1e6, xtol=1e-14, rtol=1e-15)


# one record replaced changes two cells: Laplace scale 2/eps (L1 sensitivity 2), Gaussian for L2 sensitivity sqrt 2
laplace = config.release.kind == "dp_histogram"
sigma = {} if laplace else {e: gaussian_sigma(e, config.release.delta) for e in EPSILONS if math.isfinite(e)}
for e, s in sigma.items():
    print(f"independent noise sigma [eps={e:g}] = {s:.12g}")
    print(f"difference noise sigma [eps={e:g}] = {abs(s - engine_sigma[e]):.3g}")
pairs = [levels_of(d[c]) for c in (config.release.features or config.lens)]
B = np.column_stack([codes for codes, _ in pairs])
levels = tuple(count for _, count in pairs) + (2,)  # the released features and the label
size = int(np.prod(levels))
n, k = len(d), len(d) // 2
w1_independent = {}
for e in EPSILONS:
    w = np.full((R, len(masks)), np.nan)
    for r in range(R):
        # run r draws from SeedSequence(seed, spawn_key=(r,)) at every eps: the same splits for every eps
        rng = np.random.default_rng(np.random.SeedSequence(config.rng, spawn_key=(r,)))
        perm = rng.permutation(n)
        ia, ib = perm[:k], perm[k:2 * k]
        cells = np.ravel_multi_index(tuple(B[ia].T) + ((y[ia] > 0).astype(int),), levels)
        counts = np.bincount(cells, minlength=size).astype(float)
        if math.isfinite(e):
            counts += rng.laplace(0.0, 2.0 / e, size) if laplace else rng.normal(0.0, sigma[e], size)
        counts = np.clip(counts, 0.0, None)  # negative counts become 0
        probs = counts / counts.sum() if counts.sum() > 0 else np.full(size, 1.0 / size)
        drawn = np.unravel_index(rng.choice(size, size=k, p=probs), levels)  # n/2 synthetic records
        Xs, ys = np.column_stack(drawn[:-1]).astype(float), np.where(drawn[-1] == 1, 1, -1)
        seed = int(rng.integers(2**31 - 1))
        if np.unique(ys).size == 1:  # one class in the release: the constant predictor
            pa, pb = np.full(k, float(ys[0])), np.full(k, float(ys[0]))
        else:
            model = learner(seed).fit(Xs, ys)
            if config.learner.output == "hard":
                pa, pb = model.predict(B[ia].astype(float)), model.predict(B[ib].astype(float))
            else:
                pos = list(model.classes_).index(1)
                pa = 2 * model.predict_proba(B[ia].astype(float))[:, pos] - 1
                pb = 2 * model.predict_proba(B[ib].astype(float))[:, pos] - 1
        for j, m in enumerate(masks.values()):
            if m.sum() >= 2 and m[ia].any() and m[ib].any():
                w[r, j] = wasserstein_distance(pa[m[ia]], pb[m[ib]])
    w1_independent[e] = np.nanmean(w, axis=0)

# chance alone: one predictor fitted on every record in the clear (released features, binned), so it cannot know
# the split; its W1 over fresh splits drawn from SeedSequence(seed, spawn_key=(1000003,)), a key no run uses
rng = np.random.default_rng(np.random.SeedSequence(config.rng, spawn_key=(1_000_003,)))
model = learner(int(rng.integers(2**31 - 1))).fit(B.astype(float), y)
if config.learner.output == "hard":
    p = model.predict(B.astype(float)).astype(float)
else:
    p = 2 * model.predict_proba(B.astype(float))[:, list(model.classes_).index(1)] - 1
chance = np.full((FLOOR_REPS, len(masks)), np.nan)
for r in range(FLOOR_REPS):
    perm = rng.permutation(n)
    ia, ib = perm[:k], perm[k:2 * k]
    for j, m in enumerate(masks.values()):
        if m.sum() >= 2 and m[ia].any() and m[ib].any():
            chance[r, j] = wasserstein_distance(p[ia][m[ia]], p[ib][m[ib]])

for e in EPSILONS:
    for j, name in enumerate(masks):
        print(f"independent mean W1 [eps={e:g}, {name}] = {w1_independent[e][j]:.12g}")
for j, name in enumerate(masks):
    print(f"independent chance alone [{name}] = {np.nanmean(chance[:, j]):.12g}")
    print(f"difference chance alone [{name}] = {abs(np.nanmean(chance[:, j]) - engine_floor[name]):.3g}")
for e in EPSILONS:
    for j, name in enumerate(masks):
        print(f"difference mean W1 [eps={e:g}, {name}] = {abs(w1_independent[e][j] - engine_mean[e, name]):.3g}")
''')


def sweep_script(*, data: Mapping[str, object], config: co.ExperimentConfig,
                 epsilons: tuple[float, ...], repetitions: int = SCRIPT_SWEEP_REPS,
                 floor_reps: int = FLOOR_REPS) -> str:
    """A runnable script recomputing the "W1 vs ε" tab's mean W1 per group at each ε (a DP histogram ``config``
    with an integer ``rng``), over the first ``repetitions`` runs per ε (at most the tab's).

    Printed lines: ``engine mean W1 [eps=…, group]`` and ``engine chance alone [group]`` (the verdict's mean W1
    from random splitting alone over ``floor_reps`` splits, spec §3.3), the same recomputed independently (the
    histogram, noise, sampling and splits written out from spec §4, scikit-learn learners, scipy's
    ``wasserstein_distance``; for the Gaussian release the noise σ calibrated with scipy instead of dp-accounting)
    and the differences.
    """
    R = max(1, min(int(repetitions), int(config.repetitions)))
    eps_src = "(" + ", ".join(_literal(float(e)) for e in epsilons) + ("," if len(epsilons) == 1 else "") + ")"
    lines = [
        *_header("Coherence explorer, W1 vs epsilon: mean W1 per group at each epsilon, twice.",
                 data=data),
        "# Runs 0..R-1 are the page's first R runs at every epsilon; the page averaged "
        f"{int(config.repetitions)}: set R = {int(config.repetitions)} for its means exactly.",
        f"R = {R}  # runs per epsilon recomputed here, to stay quick",
        f"EPSILONS = {eps_src}  # math.inf: the exact histogram, no noise (not DP)",
        f"config = {_literal(dataclasses.replace(config, repetitions=R))}",
        "",
        f"FLOOR_REPS = {int(floor_reps)}  # splits for the chance level, as on the page",
        "",
        "# ---- 1. With this project's engine",
        "import numpy as np",
        "",
        "sweep = co.run_epsilon_sweep(df, config, EPSILONS, n_jobs=1)",
        "engine_mean = {(row.epsilon, row.group): row.mean_w1 for row in sweep.itertuples()}",
        "for (e, name), value in engine_mean.items():",
        "    print(f\"engine mean W1 [eps={e:g}, {name}] = {value:.12g}\")",
        "engine_sigma = {}",
        "if config.release.kind == 'gaussian_histogram':  # noise sigma calibrated with dp-accounting",
        "    engine_sigma = {e: co.gaussian_histogram_sigma(epsilon=e, delta=config.release.delta)",
        "                    for e in EPSILONS if math.isfinite(e)}",
        "for e, value in engine_sigma.items():",
        "    print(f\"engine noise sigma [eps={e:g}] = {value:.12g}\")",
        "# the verdict's 'random splitting alone': a predictor fitted on everyone, over FLOOR_REPS fresh splits",
        "floor = co.noise_floor(df, config, reps=FLOOR_REPS)",
        "engine_floor = {name: float(np.nanmean(v)) for name, v in floor.items()}",
        "for name, value in engine_floor.items():",
        "    print(f\"engine chance alone [{name}] = {value:.12g}\")",
    ]
    if config.release.kind in co.HISTOGRAM_KINDS:
        lines.append(_SWEEP_INDEPENDENT.rstrip("\n"))
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------------- theory
_THEORY_INDEPENDENT = ('\n# ---- 2. Independently: the theorems written out from the paper (with the spec\'s errata) '
                       'and solved with scipy' + _IMPORTS + _MEMBER + '''
from scipy.optimize import brentq

d = df[df[config.label].notna()]  # rows without a label are dropped (spec E12)
n = len(d)
size_of = {name: int(m.sum()) for name, m in masks_of(d, config.groups).items()}
kept = [name for name, s in size_of.items() if s >= max(GAMMA, 2)]  # groups of at least gamma members (Def. 3)
G = max(1, len(kept))
a = max(ALPHA, 0.01)  # the theorems need alpha > 0


def eq2(zeta, L, alpha):
    """Theorem 3, Eq. (2): the largest of five terms."""
    return max(33.2 * (zeta + L) / alpha**2, 144 * math.log(6 / alpha) / alpha**2, 16.6 * (zeta + L),
               10.6 / alpha, 80.0)


def gamma7(eps, alpha):
    """Theorem 7 (pure eps-DP), Eq. (12) as corrected (erratum E1): zeta = eps^2 n/4 + (eps/2) sqrt(n ln(4|C|/beta))."""
    zeta = eps**2 * n / 4 + eps / 2 * math.sqrt(n * math.log(4 * G / BETA))
    return eq2(zeta, math.log(16 * G / BETA), alpha)


def gamma8(eps, alpha):
    """Theorem 8 ((eps, delta)-DP, eps <= 1/2), Eq. (13) as stated (erratum E5)."""
    zeta = 133 * eps**2 * n + 12 * eps * math.sqrt(n * math.log(4 * G / BETA))
    return eq2(zeta, math.log(32 * G / BETA), alpha)


def largest_eps(gamma_of, target):
    """The eps at which gamma_of(eps, a) reaches `target`, by root finding (NaN: even eps -> 0 needs more)."""
    if gamma_of(0.0, a) >= target:
        return math.nan
    hi = 1.0
    while gamma_of(hi, a) <= target:
        hi *= 2
    return brentq(lambda e: gamma_of(e, a) - target, 0.0, hi, xtol=1e-15, rtol=1e-13)


def smallest_alpha(m):
    """The alpha at which Theorem 7 needs exactly m members, by root finding (NaN: even alpha = 2 needs more)."""
    if gamma7(EPSILON, 2.0) > m:
        return math.nan
    return brentq(lambda al: gamma7(EPSILON, al) - m, 1e-6, 2.0, xtol=1e-13, rtol=1e-13)


independent = {"Theorem 7 gamma required": gamma7(EPSILON, a)}
independent["groups meeting it"] = sum(size_of[g] >= independent["Theorem 7 gamma required"] for g in kept)
smallest = min(kept, key=size_of.get, default=None)
if smallest is not None:
    independent["largest pure eps for the smallest group"] = largest_eps(gamma7, min(size_of[smallest], n))
    independent["largest approximate eps for the smallest group"] = largest_eps(gamma8, min(size_of[smallest], n))
if EPSILON <= 0.5:
    independent["Theorem 8 gamma"] = gamma8(EPSILON, a)
independent["Theorem 9 gamma"] = 4 * math.sqrt(n * math.log(G / BETA)) / a  # natural log (erratum E9)
for g in kept:
    independent[f"smallest alpha certified [{g}]"] = smallest_alpha(size_of[g])

for name, value in independent.items():
    print(f"independent {name} = {value:.12g}")
for name, value in independent.items():  # NaN on both sides: neither certifies anything, no difference
    gap = 0.0 if math.isnan(value) and math.isnan(engine[name]) else abs(value - engine[name])
    print(f"difference {name} = {gap:.3g}")
''')


def theory_script(*, data: Mapping[str, object], config: co.ExperimentConfig, epsilon: float,
                  alpha: float, beta: float, gamma: float) -> str:
    """A runnable script recomputing the theory tab's numbers (Theorem 7's γ, the groups meeting it, the largest ε
    certifying the smallest kept group, Theorem 8's and 9's γ, the smallest α certified per group) with the engine
    (``dpdash.coherence.tabs.theory_numbers`` on the page's data) and independently: the theorems' formulas
    written out from the seed with the spec's errata, solved by root finding (scipy ``brentq``) where the engine
    uses a closed form or bisection. ``epsilon``: the release's ε, or the tab's hypothetical ε.
    """
    lines = [
        *_header("Coherence explorer, theory: what Theorems 7, 8 and 9 certify here, twice.",
                 data=data),
        f"EPSILON = {_literal(float(epsilon))}  # the release's epsilon, or the tab's hypothetical one",
        f"ALPHA = {float(alpha)!r}  # largest W1 tolerated",
        f"BETA = {float(beta)!r}  # allowed failure probability",
        f"GAMMA = {float(gamma)!r}  # smallest group size kept",
        f"config = {_literal(dataclasses.replace(config, repetitions=1))}",
        "",
        "# ---- 1. With this project's engine",
        "from dpdash.coherence.tabs import theory_numbers",
        "",
        "prepared = co.prepare(df, config)  # labelled rows and group sizes, as the page counts them",
        "th = theory_numbers(epsilon=EPSILON, n=prepared.n, alpha=ALPHA, beta=BETA, "
        "group_sizes=prepared.group_sizes, gamma=GAMMA)",
        "engine = {'Theorem 7 gamma required': th.thm7.gamma, 'groups meeting it': th.meets}",
        "if th.smallest is not None:",
        "    engine['largest pure eps for the smallest group'] = th.eps_pure",
        "    engine['largest approximate eps for the smallest group'] = th.eps_approx",
        "if EPSILON <= 0.5:",
        "    engine['Theorem 8 gamma'] = th.thm8_gamma",
        "engine['Theorem 9 gamma'] = th.thm9_gamma",
        "for g, value in zip(th.kept, th.alpha_min):",
        "    engine[f'smallest alpha certified [{g}]'] = value",
        "for name, value in engine.items():",
        "    print(f\"engine {name} = {value:.12g}\")",
        _THEORY_INDEPENDENT.rstrip("\n"),
    ]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------------- Section 7
_S7_INDEPENDENT = ('\n# ---- 2. Independently: the one-bit predictor over the same splits, W1 with '
                   'scipy.stats.wasserstein_distance' + _IMPORTS + _MEMBER + '''

d = df[df[LABEL].notna()].reset_index(drop=True)  # rows without a label are dropped (spec E12)
col = d[COLUMN]
if pd.api.types.is_numeric_dtype(col):
    bits = col.to_numpy(dtype=float, na_value=np.nan) == float(ONE)
else:
    bits = (col.astype(str) == ONE).to_numpy()
masks = {name: m for name, m in masks_of(d, GROUPS).items() if m.sum() >= 2}
n, k, G = len(d), len(d) // 2, len(masks)
h = np.where(bits, 1.0, -1.0)  # the predictor that sees only the bit: +1 for a one, -1 for a zero
rng = np.random.default_rng(SEED)
w = np.full((REPS, G), np.nan)
for r in range(REPS):
    perm = rng.permutation(n)
    ia, ib = perm[:k], perm[k:2 * k]
    # the count curator's learner swaps its two scores when the released half holds most ones (same W1)
    hr = -h if CURATOR == "count" and bits[ia].sum() > bits.sum() / 2 else h
    for j, m in enumerate(masks.values()):
        if m[ia].any() and m[ib].any():
            w[r, j] = wasserstein_distance(hr[ia][m[ia]], hr[ib][m[ib]])
sizes = np.array([m.sum() for m in masks.values()])
if CURATOR == "column":  # Theorem 9 (natural log, erratum E9)
    bound_independent = 4 * np.sqrt(n * math.log(G / BETA)) / sizes
else:  # Theorem 11 (asymptotic, erratum E11)
    bound_independent = 112 * np.sqrt(n * math.log(10 * n * G / BETA)) / sizes
with np.errstate(invalid="ignore"):
    above_independent = int(np.any(w > bound_independent, axis=1).sum())
largest_independent = np.nanmax(w, axis=0)

for j, name in enumerate(masks):
    print(f"independent largest W1 [{name}] = {largest_independent[j]:.12g}")
    print(f"independent bound [{name}] = {bound_independent[j]:.12g}")
print(f"independent splits above the bound = {above_independent}")
for j, name in enumerate(masks):
    print(f"difference largest W1 [{name}] = {abs(largest_independent[j] - largest[j]):.3g}")
    print(f"difference bound [{name}] = {abs(bound_independent[j] - res.bound[j]):.3g}")
print(f"difference splits above the bound = {abs(above_independent - above)}")
''')


def section7_script(*, data: Mapping[str, object], label: str, column: str, one_value: str,
                    groups, seed: int, beta: float, curator: str, reps: int = 1000) -> str:
    """A runnable script recomputing the Section 7 tab's numbers (largest W1 per group over the splits, the
    paper's bound, the splits above it) with the engine (``dpdash.coherence.tabs.section7_result``) and
    independently (the same splits drawn in numpy, W1 with scipy's ``wasserstein_distance``, the bounds of
    Theorems 9 and 11 written out). All ``reps`` splits are recomputed: they take seconds.
    """
    lines = [
        *_header("Coherence explorer, Section 7: one yes/no column released in the clear, twice.",
                 data=data),
        "import numpy as np",
        "",
        f"LABEL = {label!r}  # rows without a label are left out",
        f"COLUMN, ONE = {column!r}, {str(one_value)!r}  # the released yes/no column and its 'yes' value",
        f"GROUPS = {_literal(tuple(groups))}  # the kept groups",
        f"SEED = {int(seed)}",
        f"BETA = {float(beta)!r}  # allowed failure probability",
        f"CURATOR = {curator!r}  # 'column' (Theorem 9) or 'count': only its count of ones (Theorem 11)",
        f"REPS = {int(reps)}  # random splits, as on the page",
        "",
        "# ---- 1. With this project's engine",
        "from dpdash.coherence.tabs import section7_result",
        "",
        "res = section7_result(df, label=LABEL, column=COLUMN, one_value=ONE, groups=GROUPS, rng=SEED, beta=BETA,",
        "                      curator=CURATOR, reps=REPS)",
        "largest = np.nanmax(res.w1, axis=0)",
        "with np.errstate(invalid='ignore'):",
        "    above = int(np.any(res.w1 > res.bound[None, :], axis=1).sum())",
        "for j, name in enumerate(res.group_names):",
        "    print(f\"engine largest W1 [{name}] = {largest[j]:.12g}\")",
        "    print(f\"engine bound [{name}] = {res.bound[j]:.12g}\")",
        "print(f\"engine splits above the bound = {above}\")",
        _S7_INDEPENDENT.rstrip("\n"),
    ]
    return "\n".join(lines) + "\n"
