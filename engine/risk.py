"""ε as risk: posterior-belief bounds, hypothesis-testing trade-off curves and membership advantage.

Pure Python (no streamlit). Spec ``epsilon_calculator.md`` §4.5: the posterior bound follows from the
ε-DP likelihood ratio (``002_802572da4c9a19ad.txt``, Rogers 2017, Def. 2.1.1); the testing region is
Kairouz–Oh–Viswanath 2015 [X-KOVt] and Dong–Roth–Su 2022 trade-off functions [X-DRS].
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from engine.validation import ValidationError, check_delta, check_epsilon, check_positive


#: Largest ε the risk views accept (as the calculator's ``mechanisms.EPSILON_MAX``): e^ε stays a float.
EPSILON_MAX = 1e4


def _epsilon(epsilon) -> float:
    """ε for the risk views: a number in [0, 1e4] (ε = 0 is no leakage; narrower than ``check_epsilon``'s top)."""
    e = check_epsilon(epsilon, allow_zero=True)
    if e > EPSILON_MAX:
        raise ValidationError(f"epsilon must be a finite number in [0, 1e4]; got {e!r}")
    return e


def _fpr(fpr) -> np.ndarray:
    a = np.asarray(fpr, dtype=float)
    if not np.all(np.isfinite(a)) or np.any(a < 0) or np.any(a > 1):
        raise ValidationError("every false-positive rate must be a number in [0, 1]")
    return a


@dataclass(frozen=True)
class PosteriorBound:
    """Range of an attacker's posterior belief after one ε-DP release, from a given prior."""

    prior: float
    lower: float
    upper: float


def posterior_bound(prior, *, epsilon) -> PosteriorBound:
    """Posterior belief bounds [expit(logit p − ε), expit(logit p + ε)] under ε-DP (spec §4.5).

    An ε-DP likelihood ratio lies in [e^{−ε}, e^{ε}] (``002_802572da4c9a19ad.txt`` Def. 2.1.1), so Bayes'
    rule moves the log-odds of any prior by at most ε. With δ > 0 there is no uniform bound.

    >>> b = posterior_bound(0.1, epsilon=math.log(3))
    >>> round(b.lower, 6), round(b.upper, 6)
    (0.035714, 0.25)
    """
    p = check_delta(prior, name="prior", allow_zero=False)
    e = _epsilon(epsilon)
    lp = float(special.logit(p))
    # min/max guard against last-bit rounding at ε = 0 (the bounds must bracket the prior)
    return PosteriorBound(p, min(p, float(special.expit(lp - e))), max(p, float(special.expit(lp + e))))


def max_epsilon_for_posterior(prior, *, posterior) -> float:
    """Largest ε keeping the worst-case posterior ≤ ``posterior``: logit q − logit p."""
    # a prior or posterior is a probability strictly between 0 and 1 (the log-odds must exist)
    p = check_delta(prior, name="prior", allow_zero=False)
    q = check_delta(posterior, name="posterior", allow_zero=False)
    if q <= p:
        raise ValueError(f"the posterior ({q}) must be greater than the prior ({p})")
    return float(special.logit(q) - special.logit(p))


def posterior_table(*, epsilon, priors=(0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9)) -> pd.DataFrame:
    """PSI-style table: prior → worst-case posterior range (columns prior, lower, upper, increase)."""
    rows = [posterior_bound(p, epsilon=epsilon) for p in priors]
    return pd.DataFrame({"prior": [r.prior for r in rows], "lower": [r.lower for r in rows],
                         "upper": [r.upper for r in rows], "increase": [r.upper - r.prior for r in rows]})


def tradeoff_fnr(fpr, *, epsilon, delta=0.0) -> np.ndarray:
    """Least false-negative rate at a false-positive rate α under (ε, δ)-DP [X-KOVt, X-DRS].

    max(0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)), with e^ε α evaluated without overflow.
    """
    a = _fpr(fpr)
    e, d = _epsilon(epsilon), check_delta(delta)
    with np.errstate(over="ignore", invalid="ignore"):
        t1 = np.where(a > 0, 1.0 - d - np.exp(np.minimum(e + np.log(np.where(a > 0, a, 1.0)), 700.0)), 1.0 - d)
    t2 = math.exp(-e) * (1.0 - d - a)
    return np.maximum(0.0, np.maximum(t1, t2))


def tradeoff_gaussian(fpr, *, mu) -> np.ndarray:
    """Gaussian trade-off curve G_μ(α) = Φ(Φ⁻¹(1−α) − μ), μ = Δ/σ [X-DRS]."""
    a = _fpr(fpr)
    m = check_positive(mu, name="mu", allow_zero=True)
    return special.ndtr(special.ndtri(1.0 - a) - m)


def tradeoff_laplace(fpr, *, epsilon) -> np.ndarray:
    """Laplace trade-off curve with μ = ε [X-DRS]: 1 − e^μ α (α < e^{−μ}/2), e^{−μ}/(4α) (α ≤ ½),
    e^{−μ}(1 − α) above."""
    a = _fpr(fpr)
    m = _epsilon(epsilon)
    em = math.exp(-m)
    with np.errstate(divide="ignore", over="ignore"):
        out = np.where(a < em / 2.0, 1.0 - np.exp(np.minimum(m, 700.0)) * a,
                       np.where(a <= 0.5, em / (4.0 * np.where(a > 0, a, 1.0)), em * (1.0 - a)))
    return np.clip(out, 0.0, 1.0)


def tradeoff_from_profile(fpr, *, epsilons, deltas) -> np.ndarray:
    """Trade-off lower boundary of a privacy profile {(εⱼ, δⱼ)}: the pointwise maximum [X-KOVt]."""
    a = _fpr(fpr)
    es, ds = np.asarray(epsilons, dtype=float).ravel(), np.asarray(deltas, dtype=float).ravel()
    if es.size == 0 or es.size != ds.size:
        raise ValueError("epsilons and deltas must be non-empty and of the same length")
    out = np.zeros_like(a)
    for e, d in zip(es, ds):
        out = np.maximum(out, tradeoff_fnr(a, epsilon=e, delta=d))
    return out


def advantage_bound(*, epsilon, delta=0.0) -> float:
    """Largest TPR − FPR of any membership test under (ε, δ)-DP: tanh(ε/2) + 2δ·expit(−ε) [X-KOVt].

    Equal to (e^ε − 1 + 2δ)/(e^ε + 1).

    >>> round(advantage_bound(epsilon=math.log(3)), 12)
    0.5
    """
    e, d = _epsilon(epsilon), check_delta(delta)
    return float(min(1.0, math.tanh(e / 2.0) + 2.0 * d * special.expit(-e)))


def gaussian_advantage(*, mu) -> float:
    """Largest TPR − FPR against the Gaussian mechanism: 2Φ(μ/2) − 1 [X-DRS]."""
    m = check_positive(mu, name="mu", allow_zero=True)
    return float(special.erf(m / (2.0 * math.sqrt(2.0))))


def laplace_advantage(*, epsilon) -> float:
    """Largest TPR − FPR against the Laplace mechanism with Δ/b = ε: 1 − e^{−ε/2} [X-DRS]."""
    return float(-math.expm1(-_epsilon(epsilon) / 2.0))
