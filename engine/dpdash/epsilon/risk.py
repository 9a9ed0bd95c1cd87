"""ε as risk: posterior-belief bounds, hypothesis-testing trade-off curves and membership advantage.

Pure Python (no streamlit). Spec ``epsilon_calculator.md`` §4.5: the posterior bound follows from the
ε-DP likelihood ratio (``002_802572da4c9a19ad.txt``, Rogers 2017, Def. 2.1.1); the testing region is
Kairouz–Oh–Viswanath 2015 [X-KOVt] and Dong–Roth–Su 2022 trade-off functions [X-DRS].
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, special

from dpdash.common.formatting import number_down, percent, power_of_ten
from dpdash.common.validation import EPSILON_MAX, ValidationError, check_delta, check_epsilon, check_positive

# EPSILON_MAX is the one ε cap (dpdash.common.validation); ``dpdash.epsilon.risk.EPSILON_MAX`` is that same object.


def _epsilon(epsilon) -> float:
    """ε for the risk views: a number in [0, EPSILON_MAX] (ε = 0 is no leakage; e^ε must stay a float)."""
    return check_epsilon(epsilon, allow_zero=True, at_most=EPSILON_MAX)


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


# --------------------------------------------------------------------------- risk → ε (the inverse direction)
# Each inverse answers "the largest ε that keeps this risk at or below a target" for one release. Closed forms are
# used where the forward formula can be solved; the posterior after an accusation with δ > 0 is a minimum of
# branches and is solved by Brent's method on the forward function itself. Every inverse returns an EpsilonForRisk:
# ``epsilon`` is math.inf when no ε up to EPSILON_MAX reaches the target, and NaN when even ε = 0 exceeds it
# (δ alone, or the prior, already breaks the target), with a plain-words ``reason``.

MEASURES: dict[str, str] = {
    "posterior": "an attacker's belief that a person is in the data",
    "advantage": "a membership test's advantage (true-positive rate minus false-positive rate)",
    "power": "a membership test's true-positive rate at a fixed false-positive rate",
}


@dataclass(frozen=True)
class EpsilonForRisk:
    """The largest ε keeping a named risk at or below a target, with what was held fixed."""

    measure: str
    target: float
    epsilon: float
    delta: float
    reason: str = ""
    prior: float | None = None
    fpr: float | None = None

    @property
    def reachable(self) -> bool:
        """True when some ε ≥ 0 meets the target (``epsilon`` is a number ≥ 0 or inf)."""
        return not math.isnan(self.epsilon)


def posterior_after_accusation(prior, *, fpr, epsilon, delta=0.0) -> float:
    """Largest posterior P(in the data | accused) of an attacker whose test wrongly accuses a share ``fpr``.

    Bayes' rule with the best true-positive rate 1 − β(α) the (ε, δ) region allows [X-KOVt, X-DRS]
    (β = ``tradeoff_fnr``): q = p·TPR / (p·TPR + (1 − p)·α). With δ = 0 and α ≤ 1/(1 + e^ε) this is the
    pure-ε bound expit(logit p + ε) of :func:`posterior_bound` (``002_802572da4c9a19ad.txt`` Def. 2.1.1); with
    δ > 0 it depends on α (a test that accuses almost nobody can be right almost always), so α is an input.

    >>> round(posterior_after_accusation(0.1, fpr=0.01, epsilon=math.log(3)), 6)
    0.25
    """
    p = check_delta(prior, name="prior", allow_zero=False)
    a = float(_fpr(fpr))
    if a <= 0.0:
        raise ValidationError("the false-positive rate must be > 0 for a posterior after an accusation")
    tpr = 1.0 - float(tradeoff_fnr(a, epsilon=epsilon, delta=delta))
    return p * tpr / (p * tpr + (1.0 - p) * a)


def epsilon_for_posterior(prior, *, posterior, delta=0.0, fpr=None) -> EpsilonForRisk:
    """Largest ε keeping an attacker's posterior ≤ ``posterior`` from ``prior`` (pure ε, or (ε, δ) at a given α).

    δ = 0: the closed form logit q − logit p (:func:`max_epsilon_for_posterior`; Rogers 2017 Def. 2.1.1 via
    Bayes' rule). δ > 0: ``fpr`` is required and ε solves posterior_after_accusation(ε) = q by Brent's method
    (scipy ``brentq``) on that forward function, which is nondecreasing in ε.
    """
    p = check_delta(prior, name="prior", allow_zero=False)
    q = check_delta(posterior, name="posterior", allow_zero=False)
    d = check_delta(delta)
    if d > 0.0 and fpr is None:
        raise ValidationError("with delta > 0 the posterior bound needs the attacker's false-positive rate (fpr)")
    a = None if fpr is None else float(_fpr(fpr))
    out = functools.partial(EpsilonForRisk, "posterior", q, delta=d, prior=p, fpr=a if d > 0.0 else None)
    if q < p:
        why = f"the target ({q:g}) is below the prior ({p:g}): the attacker believes more already"
        return out(math.nan, reason=why)
    if d == 0.0:
        if q == p:
            return out(0.0)  # only ε = 0 leaves the belief where it was
        return out(max_epsilon_for_posterior(p, posterior=q))

    def f(e: float) -> float:
        return posterior_after_accusation(p, fpr=fpr, epsilon=e, delta=d) - q

    if f(0.0) > 0.0:
        why = f"δ = {power_of_ten(d)} alone lets this attacker become more than {percent(q)} sure"
        return out(math.nan, reason=why)
    if f(EPSILON_MAX) <= 0.0:
        return out(math.inf, reason="no ε makes this attacker's belief exceed the target")
    # f is flat where the true-positive rate is capped at 1; brentq returns a point where f crosses 0, and the
    # largest such ε is the left end of any flat top, which f < 0 below it guarantees (f is nondecreasing)
    return out(float(optimize.brentq(f, 0.0, EPSILON_MAX, xtol=1e-13, rtol=1e-13)))


def epsilon_for_advantage(advantage, *, delta=0.0) -> EpsilonForRisk:
    """Largest ε whose membership advantage bound is ≤ ``advantage``: ln((1 + A − 2δ)/(1 − A)).

    Inverse of :func:`advantage_bound` = (e^ε − 1 + 2δ)/(e^ε + 1) [X-KOVt]; at ε = 0 the bound is δ.

    >>> round(epsilon_for_advantage(0.5).epsilon, 12) == round(math.log(3), 12)
    True
    """
    a = check_delta(advantage, name="advantage", allow_one=True)
    d = check_delta(delta)
    if a < d:
        return EpsilonForRisk("advantage", a, math.nan, d, f"δ = {d:g} alone allows an advantage above {a:g}")
    if a >= 1.0:
        return EpsilonForRisk("advantage", a, math.inf, d, "an advantage of 1 is reached only with no privacy")
    # (1 + A − 2δ)/(1 − A) = 1 + 2(A − δ)/(1 − A); at most ln(2/2⁻⁵³) ≈ 37 for a float A < 1, far below the cap
    return EpsilonForRisk("advantage", a, math.log1p(2.0 * (a - d) / (1.0 - a)), d)


def epsilon_for_power(power, *, fpr, delta=0.0) -> EpsilonForRisk:
    """Largest ε keeping a membership test's true-positive rate at false-positive rate α ≤ ``power``.

    The best test has TPR = 1 − β(α) = min(1, e^ε α + δ, 1 − e^{−ε}(1 − δ − α)) [X-KOVt, X-DRS], and TPR ≤ P
    holds when either branch is ≤ P: ε = max(ln((P − δ)/α), ln((1 − δ − α)/(1 − P))). At ε = 0 TPR = α + δ.
    """
    pw = check_delta(power, name="power", allow_one=True)
    a = float(_fpr(fpr))
    d = check_delta(delta)
    if not 0.0 < a < 1.0:
        raise ValidationError(f"the false-positive rate must be a number in (0, 1); got {fpr!r}")
    if pw >= 1.0:
        return EpsilonForRisk("power", pw, math.inf, d, "a true-positive rate of 1 is no limit", fpr=a)
    floor = min(1.0, a + d)
    if pw < floor - 1e-12:  # 1e-12: a TPR computed as 1 − FNR(α) at ε = 0 may fall a few ulp short of α + δ
        return EpsilonForRisk("power", pw, math.nan, d,
                              f"even with ε = 0 such a test finds {percent(floor)} of members", fpr=a)
    cands = [math.log(pw - d) - math.log(a)] if pw > d else []  # two logs: (P − δ)/α overflows for α ~ 1e-320
    if 1.0 - d - a > 0.0:
        cands.append(math.log((1.0 - d - a) / (1.0 - pw)))
    # each log is at most ln(1/5e-324) ≈ 745 for float arguments, far below the cap
    return EpsilonForRisk("power", pw, max(0.0, *cands), d, fpr=a)


def mu_for_advantage(advantage) -> float:
    """Largest Gaussian μ = Δ/σ whose advantage 2Φ(μ/2) − 1 ≤ ``advantage``: 2Φ⁻¹((1 + A)/2) [X-DRS]."""
    a = check_delta(advantage, name="advantage", allow_one=True)
    return math.inf if a >= 1.0 else float(2.0 * special.ndtri((1.0 + a) / 2.0))


def mu_for_power(power, *, fpr) -> float:
    """Largest Gaussian μ keeping the true-positive rate at α ≤ P: Φ⁻¹(P) − Φ⁻¹(α) (from G_μ, [X-DRS]); NaN if
    P < α."""
    pw = check_delta(power, name="power", allow_one=True)
    a = float(_fpr(fpr))
    if not 0.0 < a < 1.0:
        raise ValidationError(f"the false-positive rate must be a number in (0, 1); got {fpr!r}")
    if pw >= 1.0:
        return math.inf
    if pw < a:
        return math.nan
    return float(special.ndtri(pw) - special.ndtri(a))


def risk_at_epsilon(measure: str, *, epsilon, delta=0.0, prior=None, fpr=None) -> float:
    """The forward value of a named risk at (ε, δ): the quantity the inverses above keep below a target."""
    if measure == "posterior":
        if float(delta) == 0.0 and fpr is None:
            return posterior_bound(prior, epsilon=epsilon).upper
        return posterior_after_accusation(prior, fpr=fpr, epsilon=epsilon, delta=delta)
    if measure == "advantage":
        return advantage_bound(epsilon=epsilon, delta=delta)
    if measure == "power":
        return 1.0 - float(tradeoff_fnr(fpr, epsilon=epsilon, delta=delta))
    raise ValidationError(f"measure must be one of {tuple(MEASURES)}; got {measure!r}")


def epsilon_for_risk(measure: str, *, target, delta=0.0, prior=None, fpr=None) -> EpsilonForRisk:
    """Dispatch to the inverse for ``measure`` ("posterior", "advantage" or "power")."""
    if measure == "posterior":
        return epsilon_for_posterior(prior, posterior=target, delta=delta, fpr=fpr)
    if measure == "advantage":
        return epsilon_for_advantage(target, delta=delta)
    if measure == "power":
        return epsilon_for_power(target, fpr=fpr, delta=delta)
    raise ValidationError(f"measure must be one of {tuple(MEASURES)}; got {measure!r}")


def risk_inverse_verdict(res: EpsilonForRisk) -> str:
    """One plain sentence stating the largest ε for the target (issue 14 item 1: verdicts from the engine)."""
    d = f" and δ = {power_of_ten(res.delta)}" if res.delta > 0 else ""
    if res.measure == "posterior":
        what = (f"an attacker who starts {percent(res.prior)} sure a person is in the data ends at most "
                f"{percent(res.target)} sure")
        if res.fpr is not None:
            what += f" when accusing {percent(res.fpr)} of outsiders"
    elif res.measure == "advantage":
        what = f"no membership test beats guessing by more than {percent(res.target)} (true- minus false-positive rate)"
    else:
        what = (f"a test that wrongly accuses {percent(res.fpr)} of outsiders finds at most {percent(res.target)} "
                "of members")
    if math.isnan(res.epsilon):
        return f"No ε can promise that {what}{d}: {res.reason}."
    if math.isinf(res.epsilon):
        return f"Any ε keeps this promise: {what}{d}."
    return f"To promise that {what}, use ε ≤ {number_down(res.epsilon)}{d}."  # cut, not rounded up past the limit
