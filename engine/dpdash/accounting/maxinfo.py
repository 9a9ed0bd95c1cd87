"""Max-information bounds and the demographic-coherence size constraints.

Two groups of functions live here:

* the coherence theorems of "Enforcing Demographic Coherence"
  (``seeds/000_f379639b976c7ffb.txt``: Theorem 3, Lemma 1, Theorems 7-9, 11, 14 and
  Corollary 2), specified in ``specs/coherence_explorer.md`` §3.4-3.6 and §5.1;
* the max-information / p-value-correction results of Rogers' thesis
  (``seeds/002_802572da4c9a19ad.txt``: Theorems 1.4.4, 1.5.1, 1.5.2, Corollary 4.6.3,
  Theorem 4.6.4), specified in ``specs/epsilon_calculator.md`` §4.8 and §5.6.

``ln`` is the natural log everywhere (also where the seeds write ``log``). Erratum decisions
(spec §3.6) are cited where they apply; E8 (Eq. (10) vs (11)) has no API impact, and the informal
Theorem 2 (ε ≤ kα/ln(1/β), E13) is inconsistent with Theorem 7's scaling and is not implemented.  Every function
is pure, fast (< 1 ms, except the optimisers and bisections, < 5 ms) and raises
``ValueError`` naming the parameter, its value and the allowed range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import optimize

from dpdash.common.validation import (EPSILON_MAX, ValidationError, check_delta, check_epsilon, check_finite,
                                      check_positive, check_probability, check_rate, check_size)

__all__ = [
    "SizeConstraint",
    "TERM_LABELS",
    "max_info_pure",
    "max_info_approx",
    "max_info_approx_delta_max",
    "gamma_thm3",
    "gamma_pure",
    "gamma_approx",
    "delta_max_approx",
    "eps_max",
    "alpha_min",
    "gamma_curve",
    "gamma_single_column",
    "w1_bound_single_column",
    "gamma_count",
    "lemma1_min_size",
    "MaxInfoBound",
    "PValueCorrection",
    "maxinfo_pure_dp",
    "maxinfo_description_length",
    "pvalue_correction",
    "pvalue_correction_pure_dp",
    "pvalue_correction_mutual_info",
    "pvalue_correction_russo_zou",
    "max_epsilon_for_correction",
]

#: Labels of the five terms of Eq. (2), in order (T1..T5).
TERM_LABELS = ("33.2(ζ+L)/α²", "144·ln(6/α)/α²", "16.6(ζ+L)", "10.6/α", "80")

#: Largest ε accepted for approximate DP (Theorem 8, Corollary 2 need ε ≤ 1/2).
APPROX_EPSILON_MAX = 0.5

Kind = Literal["pure", "approx"]


# --------------------------------------------------------------------------- validation
# Scalars go through dpdash.common.validation; the helpers below state this module's narrower domains.
def _epsilon(value, *, approx: bool = False) -> float:
    """ε > 0; with ``approx``, ε ∈ (0, 0.5] (Theorem 8 and Corollary 2 need ε ≤ 1/2)."""
    eps = check_epsilon(value)
    if approx and eps > APPROX_EPSILON_MAX:
        raise ValidationError(
            f"epsilon must be a finite number in (0, 0.5] for approximate DP (Theorem 8 / Corollary 2); got {eps!r}"
        )
    return eps


def _at_least(value, name: str, lo: float) -> float:
    """A finite real ≥ lo (sizes that the bounds treat as real numbers)."""
    x = check_finite(value, name=name)
    if x < lo:
        raise ValidationError(f"{name} must be a finite number ≥ {lo:g}; got {x!r}")
    return x


def _n(value, name: str = "n") -> float:
    return _at_least(value, name, 2.0)


def _alpha(value, *, upper: float = 2.0, closed: bool = True) -> float:
    """α ∈ (0, upper] (or (0, upper) when not ``closed``)."""
    a = check_positive(value, name="alpha")
    if a > upper or (a == upper and not closed):
        raise ValidationError(f"alpha must be a number in (0, {upper:g}{']' if closed else ')'}; got {a!r}")
    return a


def _kind(value) -> str:
    if value not in ("pure", "approx"):
        raise ValueError(f"kind must be 'pure' or 'approx', got {value!r}")
    return value


# --------------------------------------------------------------------------- result type
@dataclass(frozen=True)
class SizeConstraint:
    """Size constraint γ of Eq. (2) with its five terms.

    Attributes
    ----------
    gamma : float
        ``max(terms)``: groups with at least γ members are protected.
    terms : tuple of 5 floats
        T1..T5 in the order of Eq. (2) (labels in ``TERM_LABELS``).
    binding_term : int
        Index of the largest term (lowest index on ties).
    zeta : float
        Max-information bound ζ plugged into Theorem 3.
    log_term : float
        L = ln(16|𝒞|/β) (Theorems 3, 7) or ln(32|𝒞|/β) (Theorem 8).
    theorem : str
        "Theorem 3", "Theorem 7" or "Theorem 8".
    n : float or None
        Dataset size (None for Theorem 3, which does not involve n).
    vacuous : bool or None
        True when γ > n (no group can be that large); None for Theorem 3.
    """

    gamma: float
    terms: tuple[float, float, float, float, float]
    binding_term: int
    zeta: float
    log_term: float
    theorem: str
    n: float | None
    vacuous: bool | None


def _terms(zeta: float, log_term: float, alpha: float) -> tuple[float, float, float, float, float]:
    s = zeta + log_term
    return (
        33.2 * s / alpha**2,
        144.0 * math.log(6.0 / alpha) / alpha**2,
        16.6 * s,
        10.6 / alpha,
        80.0,
    )


def _constraint(zeta, log_term, alpha, theorem, n) -> SizeConstraint:
    terms = _terms(zeta, log_term, alpha)
    gamma = max(terms)
    binding = terms.index(gamma)  # list.index returns the lowest index on ties
    vacuous = None if n is None else bool(gamma > n)
    return SizeConstraint(gamma, terms, binding, zeta, log_term, theorem, n, vacuous)


# --------------------------------------------------------------------------- max-information
def max_info_pure(epsilon: float, n: float, eta: float) -> float:
    """Max-information bound of an order-invariant ε-DP algorithm on a half-sample.

    ``I_∞^η(A, n/2) ≤ ε²n/4 + ε·sqrt(n·ln(2/η)/4)`` (in nats).

    Parameters
    ----------
    epsilon : float, > 0
    n : float, >= 2
        Size of the full dataset; the algorithm sees n/2 records drawn without replacement.
    eta : float, in (0, 1]
        Probability parameter η of approximate max-information.

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, Theorem 5 (= Appendix B, Theorem 14).
    Erratum: the seed calls this parameter γ as well; it is ``eta`` here (spec E14).

    Examples
    --------
    >>> round(max_info_pure(0.1, 1e4, 0.01), 5)
    36.50904
    """
    eps = _epsilon(epsilon)
    n = _n(n)
    eta = check_rate(eta, name="eta")
    return eps**2 * n / 4.0 + eps * math.sqrt(n * math.log(2.0 / eta) / 4.0)


def _corollary1_args(epsilon, m, eta) -> tuple[float, float, float]:
    """Corollary 1's domain: ε ∈ (0, 0.5], m > 0 records, η ∈ (0, 1]."""
    return _epsilon(epsilon, approx=True), check_positive(m, name="m"), check_rate(eta, name="eta")


def max_info_approx(epsilon: float, m: float, eta: float) -> float:
    """Max-information bound of an order-invariant (ε, δ)-DP algorithm on m records.

    ``I_∞^η(A, m) ≤ 265ε²m + 12ε·sqrt(m·ln(2/η))`` for ε ∈ (0, 1/2] and
    δ ≤ ``max_info_approx_delta_max(epsilon, m, eta)``.

    Parameters
    ----------
    epsilon : float, in (0, 0.5]
    m : float, > 0
        Number of records the algorithm sees.
    eta : float, in (0, 1]

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, Corollary 1 (= Appendix B, Corollary 2).
    """
    eps, m, eta = _corollary1_args(epsilon, m, eta)
    return 265.0 * eps**2 * m + 12.0 * eps * math.sqrt(m * math.log(2.0 / eta))


def max_info_approx_delta_max(epsilon: float, m: float, eta: float) -> float:
    """Largest δ for which ``max_info_approx`` holds: ``ε²η²/(120m)²``.

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, Corollary 1 (= Appendix B, Corollary 2).
    """
    eps, m, eta = _corollary1_args(epsilon, m, eta)
    return eps**2 * eta**2 / (120.0 * m) ** 2


# --------------------------------------------------------------------------- size constraints
def gamma_thm3(zeta: float, alpha: float, beta: float, n_groups: int) -> SizeConstraint:
    """Size constraint of Theorem 3 for an algorithm with max-information below ζ.

    ``γ = max(33.2(ζ+L)/α², 144·ln(6/α)/α², 16.6(ζ+L), 10.6/α, 80)``, ``L = ln(16|𝒞|/β)``.

    Parameters
    ----------
    zeta : float, >= 0
        Bound on ``I_∞^{β/(2|𝒞|)}(A, n/2)`` (nats).
    alpha : float, in (0, 2]
    beta : float, in (0, 1]
    n_groups : int, >= 1
        |𝒞|, the number of groups protected.

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, Theorem 3, Eq. (2).
    Erratum: the seed allows β ∈ (0, 2); β is a probability, so (0, 1] (spec E2).
    Erratum: the seed requires ζ > 0; ζ = 0 (the ε → 0 limit) is accepted (spec E3).

    Examples
    --------
    >>> round(gamma_thm3(10, 0.5, 0.01, 10).gamma, 5)
    2613.54968
    """
    zeta = check_positive(zeta, name="zeta", allow_zero=True)
    alpha = _alpha(alpha)
    beta = check_rate(beta, name="beta")
    g = check_size(n_groups, name="n_groups")
    return _constraint(zeta, math.log(16.0 * g / beta), alpha, "Theorem 3", None)


def _zeta_pure(eps: float, n: float, beta: float, g: int) -> float:
    # Theorem 5 at η = β/(2|𝒞|): ln(2/η) = ln(4|𝒞|/β) (spec E1).
    return max_info_pure(eps, n, beta / (2.0 * g))


def _zeta_approx(eps: float, n: float, beta: float, g: int) -> float:
    return 133.0 * eps**2 * n + 12.0 * eps * math.sqrt(n * math.log(4.0 * g / beta))


def gamma_pure(epsilon: float, n: float, alpha: float, beta: float, n_groups: int) -> SizeConstraint:
    """Size constraint of Theorem 7 for an order-invariant ε-DP release.

    Theorem 3 with ``ζ = ε²n/4 + (ε/2)·sqrt(n·ln(4|𝒞|/β))`` and ``L = ln(16|𝒞|/β)``.

    Parameters
    ----------
    epsilon : float, > 0
    n : float, >= 2
        Size of the full dataset (the release sees n/2 records).
    alpha : float, in (0, 2]
    beta : float, in (0, 1]
    n_groups : int, >= 1

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, Theorem 7, Eq. (12); Theorem 14.
    Erratum: Eq. (12) has a stray parenthesis and ``ln((6/α)``, and the proof divides the
    square-root term by 4; the bound implemented is Theorem 5 at η = β/(2|𝒞|), which is what
    Theorem 3 needs (spec E1).

    Examples
    --------
    >>> round(gamma_pure(0.01, 1e6, 0.5, 1e-6, 10).gamma, 5)
    8606.74256
    """
    eps = _epsilon(epsilon)
    n = _n(n)
    alpha = _alpha(alpha)
    beta = check_rate(beta, name="beta")
    g = check_size(n_groups, name="n_groups")
    zeta = _zeta_pure(eps, n, beta, g)
    return _constraint(zeta, math.log(16.0 * g / beta), alpha, "Theorem 7", n)


def delta_max_approx(epsilon: float, n: float, beta: float, n_groups: int) -> float:
    """Largest δ allowed by Theorem 8: ``ε²β²/((120n)²|𝒞|²)``.

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, Theorem 8.
    """
    eps = _epsilon(epsilon, approx=True)
    n = _n(n)
    beta = check_rate(beta, name="beta")
    g = check_size(n_groups, name="n_groups")
    # Corollary 1's δ bound on n records at η = β/|𝒞|
    return max_info_approx_delta_max(eps, n, beta / g)


def gamma_approx(
    epsilon: float,
    n: float,
    alpha: float,
    beta: float,
    n_groups: int,
    delta: float | None = None,
) -> SizeConstraint:
    """Size constraint of Theorem 8 for an order-invariant (ε, δ)-DP release.

    Theorem 3 with ``ζ = 133ε²n + 12ε·sqrt(n·ln(4|𝒞|/β))`` and ``L = ln(32|𝒞|/β)``;
    requires ε ∈ (0, 1/2] and δ ≤ ``delta_max_approx(epsilon, n, beta, n_groups)``.

    Parameters
    ----------
    epsilon : float, in (0, 0.5]
    n : float, >= 2
    alpha : float, in (0, 2]
    beta : float, in (0, 1]
    n_groups : int, >= 1
    delta : float, optional
        If given, must lie in (0, δ_max]; the bound does not depend on it otherwise.

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, Theorem 8, Eq. (13); Corollary 2.
    Erratum: the proof writes ``(265/2)ε²n + 12ε·sqrt((n/2)·ln(4|𝒞|/β))`` with
    ``ln(16|𝒞|/β)``; the statement (133, sqrt(n), ln(32|𝒞|/β)) has all constants larger and is
    implemented (spec E5). Erratum: α = 2 is accepted like in Theorems 3 and 7 (spec E4).
    """
    eps = _epsilon(epsilon, approx=True)
    n = _n(n)
    alpha = _alpha(alpha)
    beta = check_rate(beta, name="beta")
    g = check_size(n_groups, name="n_groups")
    if delta is not None:
        d = check_finite(delta, name="delta")
        dmax = eps**2 * beta**2 / ((120.0 * n) ** 2 * g**2)
        if not 0 < d <= dmax:
            raise ValueError(f"delta must be in (0, δ_max] with δ_max = {dmax:.6g}, got {delta!r}")
    zeta = _zeta_approx(eps, n, beta, g)
    return _constraint(zeta, math.log(32.0 * g / beta), alpha, "Theorem 8", n)


def eps_max(
    n: float,
    alpha: float,
    beta: float,
    n_groups: int,
    gamma: float,
    kind: Kind = "pure",
) -> float:
    """Largest ε for which Theorem 7 (pure) or 8 (approx) certifies size constraint ``gamma``.

    T2, T4, T5 do not depend on ε and T1, T3 increase with it, so with
    ``K = min(γα²/33.2, γ/16.6)`` and ``D = K − L`` the answer solves ``aε² + bε = D``:
    ``ε_max = 2D/(b + sqrt(b² + 4aD))`` (cancellation-free root), with ``a = n/4``,
    ``b = sqrt(n·ln(4|𝒞|/β))/2`` (pure) or ``a = 133n``, ``b = 12·sqrt(n·ln(4|𝒞|/β))`` (approx).

    Parameters
    ----------
    n : float, >= 2
    alpha : float, in (0, 2]
    beta : float, in (0, 1]
    n_groups : int, >= 1
    gamma : float, in (0, n]
        Target size constraint.
    kind : {"pure", "approx"}

    Returns
    -------
    float
        ``math.nan`` when no ε > 0 works (``max(T2, T4, T5) > γ`` or ``D ≤ 0``).

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, Theorems 7 and 8 (spec §3.5 "Largest certified ε").

    Examples
    --------
    >>> round(eps_max(27254, 1.0, 0.05, 2, 1521), 10)
    0.0635663984
    """
    n = _n(n)
    alpha = _alpha(alpha)
    beta = check_rate(beta, name="beta")
    g = check_size(n_groups, name="n_groups")
    target = check_finite(gamma, name="gamma")
    if not 0 < target <= n:
        raise ValueError(f"gamma must be in (0, n] = (0, {n:g}], got {gamma!r}")
    kind = _kind(kind)
    fixed = max(144.0 * math.log(6.0 / alpha) / alpha**2, 10.6 / alpha, 80.0)
    if fixed > target:
        return math.nan
    root = math.sqrt(n * math.log(4.0 * g / beta))
    if kind == "pure":
        a, b, log_term = n / 4.0, root / 2.0, math.log(16.0 * g / beta)
    else:
        a, b, log_term = 133.0 * n, 12.0 * root, math.log(32.0 * g / beta)
    k = min(target * alpha**2 / 33.2, target / 16.6)
    d = k - log_term
    if d <= 0:
        return math.nan
    return 2.0 * d / (b + math.sqrt(b * b + 4.0 * a * d))


def _gamma_value(eps: float, n: float, alpha: float, beta: float, g: int, kind: str) -> float:
    if kind == "pure":
        zeta, log_term = _zeta_pure(eps, n, beta, g), math.log(16.0 * g / beta)
    else:
        zeta, log_term = _zeta_approx(eps, n, beta, g), math.log(32.0 * g / beta)
    return max(_terms(zeta, log_term, alpha))


def alpha_min(
    epsilon: float,
    n: float,
    beta: float,
    n_groups: int,
    m: float,
    kind: Kind = "pure",
) -> float:
    """Smallest α ∈ (0, 2] certified by Theorem 7 (or 8) for a group of ``m`` members at ε.

    γ(α) is non-increasing in α, so bisection on (0, 2] to precision 1e-10.

    Parameters
    ----------
    epsilon : float, > 0 (≤ 0.5 for ``kind="approx"``)
    n : float, >= 2
    beta : float, in (0, 1]
    n_groups : int, >= 1
    m : float, > 0
        Group size |C ∩ X|.
    kind : {"pure", "approx"}

    Returns
    -------
    float
        ``math.nan`` if even α = 2 needs more than ``m`` members.

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, Theorems 7 and 8 (spec §3.5 "Smallest certified α").
    """
    kind = _kind(kind)
    eps = _epsilon(epsilon, approx=kind == "approx")
    n = _n(n)
    beta = check_rate(beta, name="beta")
    g = check_size(n_groups, name="n_groups")
    m = check_positive(m, name="m")
    if _gamma_value(eps, n, 2.0, beta, g, kind) > m:
        return math.nan
    lo, hi = 0.0, 2.0  # invariant: γ(hi) ≤ m; γ(α) → ∞ as α → 0
    while hi - lo > 1e-10:
        mid = 0.5 * (lo + hi)
        if _gamma_value(eps, n, mid, beta, g, kind) <= m:
            hi = mid
        else:
            lo = mid
    return hi


def gamma_curve(
    epsilons: np.ndarray,
    n: float,
    alpha: float,
    beta: float,
    n_groups: int,
    kind: Kind = "pure",
) -> np.ndarray:
    """Vectorised γ of Theorem 7 (pure) or 8 (approx) over an array of ε.

    Returns NaN (not an error) where ε ≤ 0, ε is not finite, or ε > 0.5 for ``kind="approx"``.

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, Theorems 7 and 8, Eqs. (12), (13).
    """
    n = _n(n)
    alpha = _alpha(alpha)
    beta = check_rate(beta, name="beta")
    g = check_size(n_groups, name="n_groups")
    kind = _kind(kind)
    eps = np.asarray(epsilons, dtype=float)
    ok = np.isfinite(eps) & (eps > 0)
    if kind == "approx":
        ok &= eps <= APPROX_EPSILON_MAX
    e = np.where(ok, eps, np.nan)
    root = math.sqrt(n * math.log(4.0 * g / beta))
    if kind == "pure":
        zeta = e**2 * n / 4.0 + e / 2.0 * root
        log_term = math.log(16.0 * g / beta)
    else:
        zeta = 133.0 * e**2 * n + 12.0 * e * root
        log_term = math.log(32.0 * g / beta)
    s = zeta + log_term
    fixed = max(144.0 * math.log(6.0 / alpha) / alpha**2, 10.6 / alpha, 80.0)
    out = np.maximum(np.maximum(33.2 * s / alpha**2, 16.6 * s), fixed)
    return np.where(ok, out, np.nan)


# --------------------------------------------------------------------------- Section 7
def gamma_single_column(n: float, alpha: float, beta: float, n_groups: int) -> float:
    """Size constraint of Theorem 9 (one binary column in the clear, lens = that column).

    ``γ = 4·sqrt(n·ln(|𝒞|/β))/α``.

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, Theorem 9. Erratum: ``log`` is the natural log
    (Hoeffding's bound is ``e^{−2mα²}``) (spec E9).

    Examples
    --------
    >>> round(gamma_single_column(27254, 1.0, 0.05, 2), 4)
    1268.301
    """
    n = _n(n)
    alpha = _alpha(alpha)
    beta = check_rate(beta, name="beta")
    g = check_size(n_groups, name="n_groups")
    return 4.0 * math.sqrt(n * math.log(g / beta)) / alpha


def w1_bound_single_column(n: float, beta: float, n_groups: int, group_size: float) -> float:
    """Theorem 9's high-probability bound on a group's W1: ``4·sqrt(n·ln(|𝒞|/β))/|C ∩ X|``.

    Holds for all groups simultaneously with probability ≥ 1 − β over the split. This is the
    bound as printed ("paper's bound"); its proof's W1 formula ignores the random half-group
    sizes (spec E10), the exact W1 is computed in ``dpdash.coherence.core``.

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, Theorem 9 (proof).
    """
    n = _n(n)
    beta = check_rate(beta, name="beta")
    g = check_size(n_groups, name="n_groups")
    size = check_positive(group_size, name="group_size")
    return 4.0 * math.sqrt(n * math.log(g / beta)) / size


def gamma_count(n: float, alpha: float, beta_prime: float, n_groups: int) -> float:
    """Size constraint of Theorem 11 (count of ones of a binary column, lens = everything).

    ``γ = 112·sqrt(n·ln(10n|𝒞|/β′))/α``.

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, Theorem 11. Erratum: "sufficiently large n" is not
    quantified; the value is asymptotic and vacuous whenever it exceeds n (spec E11).
    """
    n = _n(n)
    alpha = _alpha(alpha)
    bp = check_rate(beta_prime, name="beta_prime")
    g = check_size(n_groups, name="n_groups")
    return 112.0 * math.sqrt(n * math.log(10.0 * n * g / bp)) / alpha


def lemma1_min_size(alpha: float, mu: float) -> float:
    """Group size needed by Lemma 1: ``max(4.15·ln(4/μ)/α², (16/3)/α, 8.3·ln(4/μ), 40)``.

    Parameters
    ----------
    alpha : float, in (0, 1)
    mu : float, in (0, 1]

    References
    ----------
    seeds/000_f379639b976c7ffb.txt, Lemma 1. Erratum: Claim 2 states "> α" with 5.3/α while
    Lemma 1 states "> 2α" with (16/3)/α; the proof bounds the CDF gap by α, i.e. W1 ≤ 2α, so
    Lemma 1's form is used (spec E7).
    """
    alpha = _alpha(alpha, upper=1.0, closed=False)
    mu = check_rate(mu, name="mu")
    lg = math.log(4.0 / mu)
    return max(4.15 * lg / alpha**2, (16.0 / 3.0) / alpha, 8.3 * lg, 40.0)


# --------------------------------------------------------------------------- thesis (epsilon calculator)
LOG2E = math.log2(math.e)


@dataclass(frozen=True)
class MaxInfoBound:
    """Max-information bounds of a pure ε-DP algorithm, in bits.

    Attributes
    ----------
    general_bits : float
        ``log₂(e)·εn`` (any data distribution).
    product_bits : float
        ``log₂(e)·(ε²n/2 + ε·sqrt(n·ln(2/β)/2))`` (product distributions, β-approximate).
    """

    general_bits: float
    product_bits: float


@dataclass(frozen=True)
class PValueCorrection:
    """Optimised p-value correction of a pure ε-DP selection procedure.

    Attributes
    ----------
    gamma : float
        Corrected significance threshold γ(α).
    beta_star : float
        The β ∈ (0, α) that maximises γ.
    m_bits : float
        Max-information bound (bits) at ``beta_star``.
    """

    gamma: float
    beta_star: float
    m_bits: float




def _product_bits(eps: float, n: float, beta: float) -> float:
    return LOG2E * (eps**2 * n / 2.0 + eps * math.sqrt(n * math.log(2.0 / beta) / 2.0))


def maxinfo_pure_dp(*, epsilon: float, n: float, beta: float) -> MaxInfoBound:
    """Max-information of an (ε, 0)-DP algorithm on n records, in bits.

    Parameters
    ----------
    epsilon : float, in (0, 1e4]
    n : float, >= 1
    beta : float, in (0, 1]
        Approximation parameter of the product-distribution bound.

    References
    ----------
    seeds/002_802572da4c9a19ad.txt, Theorem 1.5.2.
    """
    eps = check_epsilon(epsilon, at_most=EPSILON_MAX)
    n = _at_least(n, "n", 1.0)
    beta = check_rate(beta, name="beta")
    return MaxInfoBound(LOG2E * eps * n, _product_bits(eps, n, beta))


def maxinfo_description_length(range_size: float, *, beta: float) -> float:
    """Max-information from description length: ``log₂(|Y|/β)`` bits.

    Parameters
    ----------
    range_size : float, >= 1
        Number of possible outputs |Y|.
    beta : float, in (0, 1]

    References
    ----------
    seeds/002_802572da4c9a19ad.txt, Theorem 1.5.1.

    Examples
    --------
    >>> round(maxinfo_description_length(2**20, beta=0.05), 5)
    24.32193
    """
    size = _at_least(range_size, "range_size", 1.0)
    beta = check_rate(beta, name="beta")
    return math.log2(size) - math.log2(beta)


def pvalue_correction(alpha: float, *, beta: float, m_bits: float) -> float:
    """Valid p-value correction from a max-information bound: ``max((α − β)/2^m, 0)``.

    Parameters
    ----------
    alpha : float, in (0, 1)
        Target false-discovery probability.
    beta : float, in [0, 1]
    m_bits : float, >= 0
        β-approximate max-information bound, in bits.

    References
    ----------
    seeds/002_802572da4c9a19ad.txt, Theorem 1.4.4.
    """
    alpha = check_delta(alpha, name="alpha", allow_zero=False)
    beta = check_probability(beta, name="beta")
    m = check_positive(m_bits, name="m_bits", allow_zero=True)
    if alpha <= beta:
        return 0.0
    return (alpha - beta) * 2.0 ** (-m)


def _log2_gamma_pure(log_beta: float, alpha: float, eps: float, n: float) -> float:
    beta = math.exp(log_beta)
    if beta >= alpha:
        return -math.inf
    return math.log2(alpha - beta) - _product_bits(eps, n, beta)


def _optimise_pure(alpha: float, eps: float, n: float) -> tuple[float, float]:
    """Return (log2 γ*, β*) maximising (α − β)/2^{m(β)} over β ∈ (0, α)."""
    # The objective is unimodal in ln β: a log grid finds the basin, a bounded scalar
    # search refines it (spec §4.8).
    grid = np.linspace(math.log(alpha) - 700.0, math.log(alpha) - 1e-12, 2000)
    betas = np.exp(grid)
    with np.errstate(divide="ignore", invalid="ignore"):
        prod = LOG2E * (eps**2 * n / 2.0 + eps * np.sqrt(n * np.log(2.0 / betas) / 2.0))
        vals = np.where(betas < alpha, np.log2(np.maximum(alpha - betas, 0.0)) - prod, -np.inf)
    i = int(np.argmax(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    best_lb, best_val = grid[i], vals[i]
    if hi > lo:
        res = optimize.minimize_scalar(
            lambda lb: -_log2_gamma_pure(lb, alpha, eps, n),
            bounds=(lo, hi),
            method="bounded",
            options={"xatol": 1e-12},
        )
        if res.success and -res.fun >= best_val:
            best_lb, best_val = float(res.x), float(-res.fun)
    return best_val, math.exp(best_lb)


def pvalue_correction_pure_dp(alpha: float, *, epsilon: float, n: float) -> PValueCorrection:
    """Best p-value correction for a pure ε-DP selection procedure, optimised over β.

    ``γ(α) = max_{β ∈ (0, α)} (α − β)/2^{m(β)}`` with ``m(β)`` the product-distribution bound of
    Theorem 1.5.2. A 2,000-point grid in ln β, then bounded ``minimize_scalar``.

    Parameters
    ----------
    alpha : float, in (0, 1)
    epsilon : float, in (0, 1e4]
    n : float, >= 1

    References
    ----------
    seeds/002_802572da4c9a19ad.txt, Theorems 1.4.4 and 1.5.2 (spec epsilon_calculator §4.8).
    """
    alpha = check_delta(alpha, name="alpha", allow_zero=False)
    eps = check_epsilon(epsilon, at_most=EPSILON_MAX)
    n = _at_least(n, "n", 1.0)
    log2g, beta_star = _optimise_pure(alpha, eps, n)
    gamma = 2.0**log2g if math.isfinite(log2g) else 0.0
    return PValueCorrection(gamma, beta_star, _product_bits(eps, n, beta_star))


def pvalue_correction_mutual_info(alpha: float, *, t_bits: float) -> float:
    """p-value correction from a mutual-information bound t: ``(α/2)·2^{−(2/α)(t + 0.54)}``.

    References
    ----------
    seeds/002_802572da4c9a19ad.txt, Corollary 4.6.3, Eq. (4.13).
    """
    alpha = check_delta(alpha, name="alpha", allow_zero=False)
    t = check_positive(t_bits, name="t_bits", allow_zero=True)
    return alpha / 2.0 * 2.0 ** (-(2.0 / alpha) * (t + 0.54))


def pvalue_correction_russo_zou(alpha: float, *, t_bits: float) -> float:
    """Russo–Zou p-value correction: ``min(α/2, ½·2^{−log₂(e)·t/α²})``.

    References
    ----------
    seeds/002_802572da4c9a19ad.txt, Theorem 4.6.4 (Russo and Zou 2016, Proposition 7).
    """
    alpha = check_delta(alpha, name="alpha", allow_zero=False)
    t = check_positive(t_bits, name="t_bits", allow_zero=True)
    return min(alpha / 2.0, 0.5 * 2.0 ** (-LOG2E * t / alpha**2))


def max_epsilon_for_correction(alpha: float, *, gamma: float, n: float) -> float:
    """Largest pure ε whose optimised correction ``pvalue_correction_pure_dp`` is ≥ ``gamma``.

    The optimised γ decreases in ε and tends to α as ε → 0, so the answer exists for every
    ``gamma`` in (0, α); root-finding in ln ε on [1e-12, 1e4].

    Parameters
    ----------
    alpha : float, in (0, 1)
    gamma : float, in (0, alpha)
    n : float, >= 1

    Returns
    -------
    float
        ``math.nan`` if even ε = 1e-12 gives a smaller γ; 1e4 if ε = 1e4 still reaches it.

    References
    ----------
    seeds/002_802572da4c9a19ad.txt, Theorems 1.4.4 and 1.5.2 (inverse; spec epsilon_calculator §4.8).
    """
    alpha = check_delta(alpha, name="alpha", allow_zero=False)
    g = check_finite(gamma, name="gamma")
    if not 0 < g < alpha:
        raise ValueError(f"gamma must be in (0, alpha) = (0, {alpha:g}), got {gamma!r}")
    n = _at_least(n, "n", 1.0)
    target = math.log2(g)

    def f(log_eps: float) -> float:
        return _optimise_pure(alpha, math.exp(log_eps), n)[0] - target

    lo, hi = math.log(1e-12), math.log(EPSILON_MAX)
    if f(lo) < 0:
        return math.nan
    if f(hi) >= 0:
        return EPSILON_MAX
    return math.exp(optimize.brentq(f, lo, hi, xtol=1e-13, rtol=1e-12))


def correction_crossover(alpha: float, *, t_lo: float = 1e-3, t_hi: float = 10.0) -> float | None:
    """The information t (bits) in [``t_lo``, ``t_hi``] where the two p-value corrections are equal, solved by root
    finding on the exact functions (issue 34 item 1: the page read it off its 300-point drawing grid).

    :func:`pvalue_correction_russo_zou` is α/2 while ½·2^{−log₂(e)·t/α²} ≥ α/2, then falls with slope log₂(e)/α² in
    log₂ γ; :func:`pvalue_correction_mutual_info` is always below α/2 and falls with slope 2/α. So the curves cross
    at most once, where the Russo–Zou bound's falling branch meets the mutual-information line; brentq on the
    difference of log₂ γ, on each side of the kink in turn (a line has at most one root, so none is missed between
    two brackets' ends of the same sign). None when they do not cross in the range.

    Erratum (issue 34): at α = 0.05 the page said "crossover t ≈ 0.047" (a grid point); the curves cross at
    t = 25.92/537.1 = 0.04826 bits.

    References
    ----------
    seeds/002_802572da4c9a19ad.txt, Corollary 4.6.3 (Eq. 4.13) and Theorem 4.6.4.
    """
    alpha = check_delta(alpha, name="alpha", allow_zero=False)

    def f(t: float) -> float:
        # log₂ of the two corrections written out (the functions themselves underflow to 0 for t of a few bits)
        log_mi = math.log2(alpha / 2.0) - (2.0 / alpha) * (t + 0.54)
        log_rz = min(math.log2(alpha / 2.0), -1.0 - LOG2E * t / alpha**2)
        return log_mi - log_rz

    # f is linear on either side of the Russo–Zou kink (where its two branches meet), so each piece holds at most one
    # root: the pieces are searched in order and the first root is returned (no sign change can hide inside one)
    kink = alpha**2 * (-1.0 - math.log2(alpha / 2.0)) / LOG2E
    cuts = [float(t_lo)] + ([kink] if t_lo < kink < t_hi else []) + [float(t_hi)]
    for lo, hi in zip(cuts, cuts[1:]):
        a, b = f(lo), f(hi)
        if a == 0:
            return lo
        if a * b < 0:
            return float(optimize.brentq(f, lo, hi, xtol=1e-15, rtol=1e-13, maxiter=200))
    return float(t_hi) if f(t_hi) == 0 else None
