""""Copy as code" scripts of the stratified synthesis viewer: short Python programs that recompute a view's numbers.

Each ``<view>_script(**params) -> str`` returns a script that (1) recomputes the view's headline numbers with this
project's engine, exactly as the page does (same seed, same calls), and (2) recomputes them independently from the
direct Laplace/Gaussian formulas with numpy and scipy, then prints ``name = value`` lines for both and their
difference. The script starts with ``sys.path.insert(0, repo_root)`` so it runs from any directory.

References
----------
Issue 15 item 2 (runnable code). Seed ``004_c5ca305e20a1adba.txt`` (Rosenblatt, Stoyanovich & Musco): the clipped
Laplace mean p̂ = mean(clip(x, −C, C)) + Lap(2C(m)/(mε)), C(m) = R + √log(m/γ) (L111–125, errata E1–E2), the
stratified release (Eq. 3–4) and the naive convention (L211); spec §2.4 for the expected errors.
"""

from __future__ import annotations

from typing import Sequence

_MEAN_TEMPLATE = '''"""Stratified synthesis viewer, mean estimation: one global DP mean vs one DP mean per group.

Recomputes the page's numbers with the project's engine (same seed), then the expected errors from the direct
formulas (numpy/scipy, no project code): a group's released value is its stratum's mean plus N(0, v) sampling
noise plus Laplace(b) privacy noise, b = 2*C(m)/(m*eps), C(m) = R + sqrt(log(m/gamma)) (paper mode) or
R + sqrt(2*log(2*m/gamma)) (rigorous). Clipping is ignored by the formulas (it bites only values beyond C).
Engine numbers are means over {reps} repetitions, so they differ from the expectations by Monte Carlo noise:
each difference is also printed in standard errors.
"""
import sys
sys.path.insert(0, {repo_root!r})

import numpy as np
from scipy import special

from engine import stratify as S

sizes = np.array({sizes!r})
mu = np.array({mu!r})
sigma = np.array({sigma!r})
labels = {labels!r}
epsilon, epsilons = {epsilon!r}, {epsilons!r}
R, gamma, mode = {R!r}, {gamma!r}, {mode!r}
reps, seed = {reps!r}, {seed!r}
min_frac, small_strata = {min_frac!r}, {small_strata!r}

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
    l = np.linspace(-60 * b, 60 * b, 400_001)
    c = d + l
    folded = s * np.sqrt(2 / np.pi) * np.exp(-c**2 / (2 * s**2)) + c * special.erf(c / (s * np.sqrt(2)))
    return float(np.trapezoid(folded * np.exp(-np.abs(l) / b) / (2 * b), l))

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
        print(f"{{name}}: not released (dropped as too small)")
        continue
    if pooled[i]:
        shift, s, m = mu_pool - mu[i], np.sqrt(v_pool), m_pool
    else:
        shift, s, m = 0.0, sigma[i] / np.sqrt(sizes[i]), sizes[i]
    f_strat = expected_abs(shift, s, 2 * C(m) / (m * epsilon))
    f_glob = expected_abs(mu_pop - mu[i], s_global, b_global)
    for method, f in (("stratified", f_strat), ("naive", f_glob)):
        e, se = eng_mean[(method, i)], eng_se[(method, i)]
        print(f"{{name}} {{method}} engine = {{e:.6g}}")
        print(f"{{name}} {{method}} formula = {{f:.6g}}")
        print(f"{{name}} {{method}} difference = {{e - f:.3g}} ({{(e - f) / se if se > 0 else 0:.2f}} standard errors)")
    compared += 1
    helped_engine += eng_mean[("stratified", i)] < eng_mean[("naive", i)]
    helped_formula += f_strat < f_glob
print(f"groups helped engine = {{helped_engine}} of {{compared}}")
print(f"groups helped formula = {{helped_formula}} of {{compared}}")
print(f"population naive engine = {{pop.mean()['naive']:.6g}}")
print(f"population stratified engine = {{pop.mean()['stratified']:.6g}}")
'''


def mean_script(*, sizes: Sequence[int], mu: Sequence[float], sigma: Sequence[float], epsilon: float,
                R: float, gamma: float, reps: int, seed: int, min_frac: float, small_strata: str, mode: str,
                labels: Sequence[str], repo_root: str, epsilons: Sequence[float] | None = None) -> str:
    """The mean-estimation view's script for a simulated mixture (Laplace estimator, exact public weights).

    ``epsilons`` is the ε grid the page ran (the noise stream depends on it); default ``(epsilon,)``.

    >>> src = mean_script(sizes=[5, 95], mu=[0.0, 1.0], sigma=[1.0, 1.0], epsilon=1.0, R=3.0, gamma=0.05, reps=2,
    ...                   seed=0, min_frac=0.0, small_strata="pool", mode="paper", labels=["A", "B"], repo_root=".")
    >>> compile(src, "script", "exec") is not None
    True
    """
    return _MEAN_TEMPLATE.format(
        repo_root=str(repo_root), sizes=[int(v) for v in sizes], mu=[float(v) for v in mu],
        sigma=[float(v) for v in sigma], labels=[str(v) for v in labels], epsilon=float(epsilon),
        epsilons=tuple(float(e) for e in (epsilons if epsilons is not None else (epsilon,))), R=float(R),
        gamma=float(gamma), mode=str(mode), reps=int(reps), seed=int(seed), min_frac=float(min_frac),
        small_strata=str(small_strata))
